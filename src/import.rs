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

use crate::decode::{self, Decoded, RpcLog, Skip};
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

/// One log line decoded, with its block's header (from `headers`, or made from the log's own
/// block timestamp).
fn decode_line(
    line: &str,
    headers: &BTreeMap<u64, BlockHeader>,
) -> Result<(Decoded, BlockHeader), Skip> {
    let r = match serde_json::from_str::<RpcLog>(line) {
        Ok(l) => l.parse()?,
        Err(e) => return Err(Skip::Malformed(e.to_string())),
    };
    let header = headers.get(&r.block_number).cloned().or_else(|| {
        r.block_timestamp.map(|ts| BlockHeader {
            number: r.block_number,
            hash: r.block_hash,
            parent_hash: None,
            timestamp: ts,
        })
    });
    let header = header.ok_or_else(|| {
        Skip::Malformed(format!(
            "no header or timestamp for block {}",
            r.block_number
        ))
    })?;
    decode::decode(&r).map(|d| (d, header))
}

/// Imports logs given as JSON lines, with their block headers.
pub async fn import_lines(
    db: &DatabaseConnection,
    chain: Chain,
    lines: impl Iterator<Item = Result<String, ImportError>>,
    headers: BTreeMap<u64, BlockHeader>,
) -> Result<ImportReport, ImportError> {
    let mut report = ImportReport::default();
    let mut batch = Batch::default();
    let mut in_batch = 0usize;
    let mut range: Option<(u64, u64)> = None;
    for line in lines {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        report.lines += 1;
        let decoded = decode_line(&line, &headers);
        match decoded {
            Ok((d, header)) => {
                let n = header.number;
                range = Some(range.map_or((n, n), |(lo, hi)| (lo.min(n), hi.max(n))));
                if !batch.blocks.iter().any(|b| b.number == n) {
                    batch.blocks.push(header);
                }
                match d {
                    Decoded::Erc20(t) => {
                        report.erc20_transfers += 1;
                        batch.erc20.push(t);
                    }
                    Decoded::Nft(v) => {
                        report.nft_transfers += v.len() as u64;
                        batch.nft.extend(v);
                    }
                }
                in_batch += 1;
            }
            Err(Skip::Malformed(why)) => {
                tracing::debug!(line = report.lines, %why, "skipped malformed log");
                report.skipped_malformed += 1;
            }
            Err(_) => report.skipped_not_transfer += 1,
        }
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
