//! `tokenql import`: loads recorded chain data through the same decoder and write path the
//! indexer uses.
//!
//! - logs: one `eth_getLogs` log object per line (JSON-RPC hex encoding);
//! - blocks: one `{number, hash, parentHash, timestamp}` object per line;
//! - token lists (tokenlists.org schema): names, symbols, decimals and logos, through
//!   [`crate::lists::tokenlist`].
//!
//! Malformed lines and logs that are not standard transfers are skipped and counted, never a
//! crash. Importing the same files twice changes nothing.

use std::collections::BTreeMap;
use std::io::BufRead;
use std::path::Path;

use sea_orm::DatabaseConnection;
use serde::Deserialize;

use crate::decode::{self, DecodedLogs, LogBlock, RpcLog};
use crate::store::{self, Batch, BlockHeader, Checkpoint, StoreError};
use crate::types::Chain;

/// Logs per write transaction.
const LOGS_PER_BATCH: usize = 2_000;

/// What an import did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImportReport {
    pub lines: u64,
    pub blocks: u64,
    pub erc20_transfers: u64,
    /// NFT movements (a `TransferBatch` counts once per id).
    pub nft_transfers: u64,
    /// Valid logs of other events or non-standard shapes.
    pub skipped_not_transfer: u64,
    /// Lines that are not valid JSON logs, or broken transfer encodings.
    pub skipped_malformed: u64,
}

/// Errors that stop an import (as opposed to skipped lines).
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("cannot read {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}:{line}: {message}")]
    BadBlock {
        path: String,
        line: usize,
        message: String,
    },
    #[error(transparent)]
    List(#[from] crate::lists::ListError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Db(#[from] sea_orm::DbErr),
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RpcBlock {
    number: String,
    hash: String,
    #[serde(default)]
    parent_hash: Option<String>,
    timestamp: String,
}

fn open_lines(path: &Path) -> Result<impl Iterator<Item = std::io::Result<String>>, ImportError> {
    let f = std::fs::File::open(path).map_err(|source| ImportError::Io {
        path: path.display().to_string(),
        source,
    })?;
    Ok(std::io::BufReader::new(f).lines())
}

/// Reads block headers (JSON lines). A bad header stops the import: transfers need them.
pub fn read_blocks(path: &Path) -> Result<BTreeMap<u64, BlockHeader>, ImportError> {
    let text = std::fs::read_to_string(path).map_err(|source| ImportError::Io {
        path: path.display().to_string(),
        source,
    })?;
    read_blocks_str(&text, &path.display().to_string())
}

/// Parses block headers from JSON lines.
pub fn read_blocks_str(text: &str, name: &str) -> Result<BTreeMap<u64, BlockHeader>, ImportError> {
    let mut out = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let bad = |message: String| ImportError::BadBlock {
            path: name.to_string(),
            line: i + 1,
            message,
        };
        let b: RpcBlock = serde_json::from_str(line).map_err(|e| bad(e.to_string()))?;
        let h = BlockHeader {
            number: decode::parse_quantity(&b.number).map_err(|e| bad(e.to_string()))?,
            hash: decode::parse_b256(&b.hash).map_err(|e| bad(e.to_string()))?,
            parent_hash: b
                .parent_hash
                .as_deref()
                .map(decode::parse_b256)
                .transpose()
                .map_err(|e| bad(e.to_string()))?,
            timestamp: decode::parse_quantity(&b.timestamp).map_err(|e| bad(e.to_string()))?,
        };
        out.insert(h.number, h);
    }
    Ok(out)
}

/// Imports logs from a file; see the module docs.
pub async fn import_logs(
    db: &DatabaseConnection,
    chain: Chain,
    logs: &Path,
    blocks: &Path,
) -> Result<ImportReport, ImportError> {
    let headers = read_blocks(blocks)?;
    let lines = open_lines(logs)?.map(|l| {
        l.map_err(|source| ImportError::Io {
            path: logs.display().to_string(),
            source,
        })
    });
    import_lines(db, chain, lines, headers).await
}

/// Whether a log goes to the decoder. Not when its block has no header (in `headers`, or made
/// from the log's own timestamp) and it is not `removed`: such a log is malformed whether it
/// parses or not. Every other log does, and every one of them that parses has a header; the
/// decoder counts those that do not parse (a `removed` one as not a transfer).
fn to_decoder(log: &RpcLog, headers: &BTreeMap<u64, BlockHeader>) -> bool {
    log.removed == Some(true)
        || log.block_timestamp.is_some()
        || decode::parse_quantity(&log.block_number).map_or(true, |n| headers.contains_key(&n))
}

/// The header of a decoded log's block: from `headers`, else made from the log's timestamp.
fn header_of(headers: &BTreeMap<u64, BlockHeader>, block: &LogBlock) -> Option<BlockHeader> {
    headers.get(&block.number).cloned().or_else(|| {
        block.timestamp.map(|timestamp| BlockHeader {
            number: block.number,
            hash: block.hash,
            parent_hash: None,
            timestamp,
        })
    })
}

/// The next `room` non-empty lines as logs (`None` once the input is used up), counting each
/// line, and as malformed those that are not JSON logs or whose block has no header.
fn read_logs(
    lines: &mut impl Iterator<Item = Result<String, ImportError>>,
    room: usize,
    headers: &BTreeMap<u64, BlockHeader>,
    report: &mut ImportReport,
) -> Result<Option<Vec<RpcLog>>, ImportError> {
    let mut logs = Vec::new();
    let mut read = 0;
    while read < room {
        let Some(line) = lines.next() else { break };
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        read += 1;
        report.lines += 1;
        match serde_json::from_str::<RpcLog>(&line) {
            Ok(log) if to_decoder(&log, headers) => logs.push(log),
            Ok(log) => {
                let block = &log.block_number;
                tracing::debug!(line = report.lines, %block, "skipped a log with no block header");
                report.skipped_malformed += 1;
            }
            Err(why) => {
                tracing::debug!(line = report.lines, %why, "skipped a malformed log line");
                report.skipped_malformed += 1;
            }
        }
    }
    Ok((read > 0).then_some(logs))
}

/// Adds decoded logs to the batch (each decoded log's block header once) and the report, and
/// widens `range` to their blocks. Returns the number of logs decoded.
fn add_decoded(
    batch: &mut Batch,
    report: &mut ImportReport,
    headers: &BTreeMap<u64, BlockHeader>,
    decoded: DecodedLogs,
    range: &mut Option<(u64, u64)>,
) -> usize {
    let mut added = 0;
    for block in decoded.blocks.iter().filter(|b| b.decoded) {
        let n = block.number;
        *range = Some(range.map_or((n, n), |(lo, hi)| (lo.min(n), hi.max(n))));
        if !batch.blocks.iter().any(|b| b.number == n) {
            batch.blocks.extend(header_of(headers, block));
        }
        added += 1;
    }
    report.erc20_transfers += decoded.erc20.len() as u64;
    report.nft_transfers += decoded.nft.len() as u64;
    report.skipped_malformed += decoded.skipped.malformed;
    report.skipped_not_transfer += decoded.skipped.not_transfer + decoded.skipped.removed;
    batch.erc20.extend(decoded.erc20);
    batch.nft.extend(decoded.nft);
    added
}

/// Imports logs given as JSON lines, with their block headers, in write batches of
/// [`LOGS_PER_BATCH`] decoded logs.
pub async fn import_lines(
    db: &DatabaseConnection,
    chain: Chain,
    mut lines: impl Iterator<Item = Result<String, ImportError>>,
    headers: BTreeMap<u64, BlockHeader>,
) -> Result<ImportReport, ImportError> {
    let mut report = ImportReport::default();
    let mut batch = Batch::default();
    let mut in_batch = 0usize;
    let mut range: Option<(u64, u64)> = None;
    // A line decodes to one log at most, so reading as many lines as the batch has room for
    // fills it on the very line that filled it when lines were decoded one by one.
    while let Some(logs) = read_logs(&mut lines, LOGS_PER_BATCH - in_batch, &headers, &mut report)?
    {
        let decoded = decode::decode_logs(&logs);
        in_batch += add_decoded(&mut batch, &mut report, &headers, decoded, &mut range);
        if in_batch >= LOGS_PER_BATCH {
            report.blocks += batch.blocks.len() as u64;
            store::write_batch(db, chain, &std::mem::take(&mut batch)).await?;
            in_batch = 0;
            tracing::info!(
                lines = report.lines,
                erc20 = report.erc20_transfers,
                nft = report.nft_transfers,
                "import progress"
            );
        }
    }
    if let Some((lo, hi)) = range {
        batch.checkpoint = widened_checkpoint(db, chain, lo, hi).await?;
    }
    report.blocks += batch.blocks.len() as u64;
    store::write_batch(db, chain, &batch).await?;
    Ok(report)
}

/// The chain's checkpoint widened to cover the imported blocks `lo..=hi` (the imported range
/// becomes part of the chain's indexed range); `None` when the stored one already covers them,
/// so that re-importing changes nothing.
async fn widened_checkpoint(
    db: &DatabaseConnection,
    chain: Chain,
    lo: u64,
    hi: u64,
) -> Result<Option<Checkpoint>, ImportError> {
    let existing = store::chain::state(db, chain).await?;
    let cp = match &existing {
        Some(s) => Checkpoint {
            start_block: s.start_block.map_or(lo, |v| v.min(lo)),
            indexed_block: Some(s.indexed_block.map_or(hi, |v| v.max(hi))),
            head_block: s.head_block.map_or(hi, |v| v.max(hi)),
        },
        None => Checkpoint {
            start_block: lo,
            indexed_block: Some(hi),
            head_block: hi,
        },
    };
    let unchanged = existing.is_some_and(|s| {
        (s.start_block, s.indexed_block, s.head_block)
            == (Some(cp.start_block), cp.indexed_block, Some(cp.head_block))
    });
    Ok((!unchanged).then_some(cp))
}
