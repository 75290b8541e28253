//! The one decoder: raw EVM logs (as `eth_getLogs` returns them) to typed transfer events.
//!
//! Used by `import` and by the indexer alike. ERC20 and ERC721 share the `Transfer` signature
//! and are told apart by their topic count (3 vs 4); ERC1155 `TransferBatch` is flattened to one
//! [`NftMove`] per id. Anything else, or anything malformed, is a [`Skip`], counted — never a
//! panic. [`decode_logs`] is the one loop over a run of raw logs that the follower, the history
//! fetches and the import share: events out, skips counted by reason.

use alloy::primitives::{B256, U256};
use alloy::sol;
use alloy::sol_types::SolEvent;
use serde::Deserialize;

use crate::types::{Address, TokenStandard, Uint256};

mod erc20 {
    alloy::sol! {
        event Transfer(address indexed from, address indexed to, uint256 value);
    }
}
use erc20::Transfer as Erc20Transfer;

sol! {
    event TransferSingle(address indexed operator, address indexed from, address indexed to, uint256 id, uint256 value);
    event TransferBatch(address indexed operator, address indexed from, address indexed to, uint256[] ids, uint256[] values);
}

/// `keccak256("Transfer(address,address,uint256)")`, shared by ERC20 and ERC721.
pub const TRANSFER_TOPIC: B256 = Erc20Transfer::SIGNATURE_HASH;
/// ERC1155 `TransferSingle`.
pub const TRANSFER_SINGLE_TOPIC: B256 = TransferSingle::SIGNATURE_HASH;
/// ERC1155 `TransferBatch`.
pub const TRANSFER_BATCH_TOPIC: B256 = TransferBatch::SIGNATURE_HASH;

/// A log as JSON-RPC writes it (hex strings), e.g. one line of `data/demo-mainnet/logs.jsonl`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RpcLog {
    pub address: String,
    pub topics: Vec<String>,
    pub data: String,
    pub block_number: String,
    pub block_hash: String,
    #[serde(default)]
    pub block_timestamp: Option<String>,
    pub transaction_hash: String,
    pub transaction_index: String,
    pub log_index: String,
    #[serde(default)]
    pub removed: Option<bool>,
}

/// A log with its fields parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogRecord {
    pub address: Address,
    pub topics: Vec<B256>,
    pub data: Vec<u8>,
    pub block_number: u64,
    pub block_hash: B256,
    pub block_timestamp: Option<u64>,
    pub transaction_hash: B256,
    pub transaction_index: u32,
    pub log_index: u32,
}

/// Where a transfer happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventMeta {
    pub contract: Address,
    pub block_number: u64,
    pub block_hash: B256,
    pub transaction_hash: B256,
    pub transaction_index: u32,
    pub log_index: u32,
}

/// An ERC20 `Transfer`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Erc20Move {
    pub meta: EventMeta,
    pub from: Address,
    pub to: Address,
    pub value: Uint256,
}

/// One token id moving: an ERC721 `Transfer`, an ERC1155 `TransferSingle`, or one entry of a
/// `TransferBatch` (`batch_index` is its position; 0 otherwise).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NftMove {
    pub meta: EventMeta,
    pub batch_index: u32,
    pub standard: TokenStandard,
    pub operator: Option<Address>,
    pub from: Address,
    pub to: Address,
    pub token_id: Uint256,
    pub amount: Uint256,
}

/// What one log decodes to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decoded {
    Erc20(Erc20Move),
    Nft(Vec<NftMove>),
}

/// Why a log was not decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Skip {
    /// Not one of the transfer events (another event, or a non-standard shape such as a
    /// `Transfer` with every argument in `data`).
    #[error("not a standard transfer event: {0}")]
    NotTransfer(&'static str),
    /// A transfer event whose encoding is broken.
    #[error("malformed log: {0}")]
    Malformed(String),
    /// A log the node marked `removed` (reorged away).
    #[error("removed log")]
    Removed,
}

/// The block a parsed log names, and whether the log decoded to transfer events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogBlock {
    /// The block's number.
    pub number: u64,
    /// The block's hash, as the log gives it.
    pub hash: B256,
    /// The block's timestamp, when the node puts it in logs (geth ≥ 1.16, anvil, reth).
    pub timestamp: Option<u64>,
    /// Whether the log decoded (false: it is counted in [`Skipped`]).
    pub decoded: bool,
}

/// The logs [`decode_logs`] did not decode, by [`Skip`] reason.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Skipped {
    /// Broken encodings ([`Skip::Malformed`]).
    pub malformed: u64,
    /// Other events and non-standard shapes ([`Skip::NotTransfer`]).
    pub not_transfer: u64,
    /// Logs the node marked `removed` ([`Skip::Removed`]).
    pub removed: u64,
}

impl Skipped {
    /// Every log skipped, whatever the reason.
    pub fn total(&self) -> u64 {
        self.malformed + self.not_transfer + self.removed
    }

    fn count(&mut self, skip: &Skip) {
        match skip {
            Skip::Malformed(why) => {
                tracing::debug!(%why, "skipped a malformed log");
                self.malformed += 1;
            }
            Skip::NotTransfer(_) => self.not_transfer += 1,
            Skip::Removed => self.removed += 1,
        }
    }
}

/// What [`decode_logs`] made of a run of raw logs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DecodedLogs {
    /// The block of every log that parsed, decoded or not, in the logs' order.
    pub blocks: Vec<LogBlock>,
    /// The ERC20 transfers, in the logs' order.
    pub erc20: Vec<Erc20Move>,
    /// The NFT moves (a `TransferBatch` flattened), in the logs' order.
    pub nft: Vec<NftMove>,
    /// The logs not decoded, by reason.
    pub skipped: Skipped,
}

impl DecodedLogs {
    /// How many logs decoded (a `TransferBatch` counts once).
    pub fn decoded(&self) -> usize {
        self.blocks.iter().filter(|b| b.decoded).count()
    }
}

/// Parses and decodes raw logs (the follower's, a history fetch's, an import's): their transfer
/// events, the block of each log that parsed, and the logs skipped, counted by reason. A log
/// that does not parse or decode is counted, never an error.
pub fn decode_logs(logs: &[RpcLog]) -> DecodedLogs {
    let mut out = DecodedLogs::default();
    for log in logs {
        let record = match log.parse() {
            Ok(r) => r,
            Err(skip) => {
                out.skipped.count(&skip);
                continue;
            }
        };
        let decoded = decode(&record);
        out.blocks.push(LogBlock {
            number: record.block_number,
            hash: record.block_hash,
            timestamp: record.block_timestamp,
            decoded: decoded.is_ok(),
        });
        match decoded {
            Ok(Decoded::Erc20(t)) => out.erc20.push(t),
            Ok(Decoded::Nft(v)) => out.nft.extend(v),
            Err(skip) => out.skipped.count(&skip),
        }
    }
    out
}

impl RpcLog {
    /// Parses the hex fields.
    pub fn parse(&self) -> Result<LogRecord, Skip> {
        if self.removed == Some(true) {
            return Err(Skip::Removed);
        }
        let address = Address::parse(&self.address).map_err(|e| Skip::Malformed(e.0))?;
        let topics = self
            .topics
            .iter()
            .map(|t| parse_b256(t))
            .collect::<Result<Vec<_>, _>>()?;
        let data = parse_bytes(&self.data)?;
        Ok(LogRecord {
            address,
            topics,
            data,
            block_number: parse_quantity(&self.block_number)?,
            block_hash: parse_b256(&self.block_hash)?,
            block_timestamp: self
                .block_timestamp
                .as_deref()
                .map(parse_quantity)
                .transpose()?,
            transaction_hash: parse_b256(&self.transaction_hash)?,
            transaction_index: u32::try_from(parse_quantity(&self.transaction_index)?)
                .map_err(|_| Skip::Malformed("transactionIndex too large".into()))?,
            log_index: u32::try_from(parse_quantity(&self.log_index)?)
                .map_err(|_| Skip::Malformed("logIndex too large".into()))?,
        })
    }
}

/// Parses a JSON-RPC quantity (`0x1a`).
pub fn parse_quantity(s: &str) -> Result<u64, Skip> {
    let hex = s
        .strip_prefix("0x")
        .ok_or_else(|| Skip::Malformed(format!("quantity '{s}' lacks 0x")))?;
    u64::from_str_radix(hex, 16).map_err(|_| Skip::Malformed(format!("quantity '{s}' is not hex")))
}

/// Parses a 32-byte hex value.
pub fn parse_b256(s: &str) -> Result<B256, Skip> {
    let hex = strip_0x(s)?;
    if hex.len() != 64 {
        return Err(Skip::Malformed(format!("'{s}' is not 32 bytes")));
    }
    let mut out = B256::ZERO;
    if !crate::types::hex::decode_into(hex, &mut out.0) {
        return Err(Skip::Malformed("invalid hex".into()));
    }
    Ok(out)
}

fn parse_bytes(s: &str) -> Result<Vec<u8>, Skip> {
    let hex = strip_0x(s)?;
    if hex.len() % 2 != 0 {
        return Err(Skip::Malformed("odd-length hex".into()));
    }
    crate::types::hex::decode(hex).ok_or_else(|| Skip::Malformed("invalid hex".into()))
}

fn strip_0x(s: &str) -> Result<&str, Skip> {
    s.strip_prefix("0x")
        .ok_or_else(|| Skip::Malformed(format!("bytes '{s}' lack 0x")))
}

/// An address topic must have 12 zero bytes before the address.
fn topic_address(t: &B256) -> Result<Address, Skip> {
    if t.0[..12].iter().any(|b| *b != 0) {
        return Err(Skip::Malformed(
            "address topic has non-zero high bytes".into(),
        ));
    }
    Ok(Address::from_word(&t.0))
}

fn addr(a: alloy::primitives::Address) -> Address {
    let mut w = [0u8; 32];
    w[12..].copy_from_slice(a.as_slice());
    Address::from_word(&w)
}

fn u(v: U256) -> Uint256 {
    Uint256(v)
}

/// Decodes one log.
pub fn decode(log: &LogRecord) -> Result<Decoded, Skip> {
    let Some(topic0) = log.topics.first() else {
        return Err(Skip::NotTransfer("no topics"));
    };
    let meta = EventMeta {
        contract: log.address,
        block_number: log.block_number,
        block_hash: log.block_hash,
        transaction_hash: log.transaction_hash,
        transaction_index: log.transaction_index,
        log_index: log.log_index,
    };
    if *topic0 == TRANSFER_TOPIC {
        match log.topics.len() {
            3 => erc20_transfer(log, meta),
            4 => erc721_transfer(log, meta),
            _ => Err(Skip::NotTransfer(
                "Transfer with a non-standard topic count",
            )),
        }
    } else if *topic0 == TRANSFER_SINGLE_TOPIC {
        transfer_single(log, meta)
    } else if *topic0 == TRANSFER_BATCH_TOPIC {
        transfer_batch(log, meta)
    } else {
        Err(Skip::NotTransfer("another event"))
    }
}

fn malformed(e: alloy::sol_types::Error) -> Skip {
    Skip::Malformed(e.to_string())
}

/// An ERC20 `Transfer`: two indexed addresses, the value in 32 bytes of data.
fn erc20_transfer(log: &LogRecord, meta: EventMeta) -> Result<Decoded, Skip> {
    for t in &log.topics[1..3] {
        topic_address(t)?;
    }
    if log.data.len() != 32 {
        return Err(Skip::Malformed(format!(
            "ERC20 Transfer data is {} bytes, expected 32",
            log.data.len()
        )));
    }
    let ev =
        Erc20Transfer::decode_raw_log(log.topics.iter().copied(), &log.data).map_err(malformed)?;
    Ok(Decoded::Erc20(Erc20Move {
        meta,
        from: addr(ev.from),
        to: addr(ev.to),
        value: u(ev.value),
    }))
}

/// An ERC721 `Transfer`: the token id is the third indexed topic, and there is no data.
fn erc721_transfer(log: &LogRecord, meta: EventMeta) -> Result<Decoded, Skip> {
    if !log.data.is_empty() {
        return Err(Skip::Malformed("ERC721 Transfer carries data".into()));
    }
    let from = topic_address(&log.topics[1])?;
    let to = topic_address(&log.topics[2])?;
    Ok(Decoded::Nft(vec![NftMove {
        meta,
        batch_index: 0,
        standard: TokenStandard::Erc721,
        operator: None,
        from,
        to,
        token_id: Uint256::from_be_bytes(&log.topics[3].0),
        amount: Uint256::from_u64(1),
    }]))
}

/// The topics of an ERC1155 event: operator, from and to, each a padded address.
fn erc1155_topics(log: &LogRecord, what: &'static str) -> Result<(), Skip> {
    if log.topics.len() != 4 {
        return Err(Skip::NotTransfer(what));
    }
    for t in &log.topics[1..4] {
        topic_address(t)?;
    }
    Ok(())
}

/// An ERC1155 `TransferSingle`.
fn transfer_single(log: &LogRecord, meta: EventMeta) -> Result<Decoded, Skip> {
    erc1155_topics(log, "TransferSingle with a non-standard topic count")?;
    let ev =
        TransferSingle::decode_raw_log(log.topics.iter().copied(), &log.data).map_err(malformed)?;
    Ok(Decoded::Nft(vec![NftMove {
        meta,
        batch_index: 0,
        standard: TokenStandard::Erc1155,
        operator: Some(addr(ev.operator)),
        from: addr(ev.from),
        to: addr(ev.to),
        token_id: u(ev.id),
        amount: u(ev.value),
    }]))
}

/// An ERC1155 `TransferBatch`: one move per id, in order.
fn transfer_batch(log: &LogRecord, meta: EventMeta) -> Result<Decoded, Skip> {
    erc1155_topics(log, "TransferBatch with a non-standard topic count")?;
    let ev =
        TransferBatch::decode_raw_log(log.topics.iter().copied(), &log.data).map_err(malformed)?;
    if ev.ids.len() != ev.values.len() {
        return Err(Skip::Malformed(format!(
            "TransferBatch has {} ids but {} values",
            ev.ids.len(),
            ev.values.len()
        )));
    }
    let (operator, from, to) = (addr(ev.operator), addr(ev.from), addr(ev.to));
    Ok(Decoded::Nft(
        ev.ids
            .iter()
            .zip(ev.values.iter())
            .enumerate()
            .map(|(i, (id, v))| NftMove {
                meta: meta.clone(),
                batch_index: i as u32,
                standard: TokenStandard::Erc1155,
                operator: Some(operator),
                from,
                to,
                token_id: u(*id),
                amount: u(*v),
            })
            .collect(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rpc(line: &str) -> RpcLog {
        serde_json::from_str(line).unwrap()
    }

    #[test]
    fn decodes_a_real_erc20_transfer() {
        let l = rpc(
            r#"{"address": "0xb07bedf6a70de5947380e1804a9929cee51a3e80", "topics": ["0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef", "0x0000000000000000000000009e311238b7dd21eadaac8b9f28996845139eda3f", "0x0000000000000000000000007f9a2defda72f490c4398205113de204d46a4b39"], "data": "0x00000000000000000000000000000000000000000000000000000000000186a0", "blockNumber": "0x41b582", "blockHash": "0x8005807a47b6cc9c1870ded2bf68f57db7dd14b9130bf4ecc88d08df4eda544e", "blockTimestamp": "0x59c71c75", "transactionHash": "0x7da08489574d2a91c8834b00e78b5b3cfaa0eb8e9e1b43302c15b57b96424079", "transactionIndex": "0x1", "logIndex": "0x0", "removed": false}"#,
        );
        let rec = l.parse().unwrap();
        let Decoded::Erc20(t) = decode(&rec).unwrap() else {
            panic!()
        };
        assert_eq!(
            t.from.to_string(),
            "0x9e311238b7dd21eadaac8b9f28996845139eda3f"
        );
        assert_eq!(t.value, Uint256::from_u64(100_000));
        assert_eq!(t.meta.block_number, 0x41b582);
    }

    #[test]
    fn hex_fields_parse_exactly_and_refuse_what_is_not_hex() {
        let h = format!("0x{}", "aB".repeat(32));
        assert_eq!(parse_b256(&h).unwrap(), B256::repeat_byte(0xab));
        assert_eq!(parse_bytes("0x").unwrap(), Vec::<u8>::new());
        assert_eq!(parse_bytes("0x00ff10").unwrap(), vec![0, 0xff, 0x10]);
        for bad in ["00ff", "0x0x00", "0x0", "0xzz", "0x 0"] {
            assert!(parse_bytes(bad).is_err(), "{bad}");
        }
        for bad in [
            "0x00",
            &format!("0x{}", "0".repeat(66)),
            &format!("0x{}g", "0".repeat(63)),
        ] {
            assert!(parse_b256(bad).is_err(), "{bad}");
        }
    }

    fn word(n: u64) -> String {
        format!("{n:064x}")
    }

    fn rpc_with(topics: Vec<String>, data: String) -> RpcLog {
        RpcLog {
            address: "0x00000000000000000000000000000000000000aa".into(),
            topics,
            data,
            block_number: "0x10".into(),
            block_hash: format!("0x{}", word(1)),
            block_timestamp: None,
            transaction_hash: format!("0x{}", word(2)),
            transaction_index: "0x0".into(),
            log_index: "0x3".into(),
            removed: None,
        }
    }

    fn log_with(topics: Vec<String>, data: String) -> LogRecord {
        rpc_with(topics, data).parse().unwrap()
    }

    #[test]
    fn erc721_by_topic_count_and_max_token_id() {
        let t0 = format!("{TRANSFER_TOPIC}");
        let l = log_with(
            vec![
                t0,
                format!("0x{}", word(0)),
                format!("0x{}", word(5)),
                format!("0x{}", "f".repeat(64)),
            ],
            "0x".into(),
        );
        let Decoded::Nft(v) = decode(&l).unwrap() else {
            panic!()
        };
        assert_eq!(v[0].standard, TokenStandard::Erc721);
        assert_eq!(v[0].token_id, Uint256::MAX);
        assert!(v[0].from.is_zero());
    }

    #[test]
    fn transfer_batch_is_flattened() {
        let topics = vec![
            format!("{TRANSFER_BATCH_TOPIC}"),
            format!("0x{}", word(1)),
            format!("0x{}", word(2)),
            format!("0x{}", word(3)),
        ];
        // (uint256[] ids, uint256[] values) = ([7, 8], [1, 2])
        let data = format!(
            "0x{}{}{}{}{}{}{}{}",
            word(0x40),
            word(0xa0),
            word(2),
            word(7),
            word(8),
            word(2),
            word(1),
            word(2)
        );
        let Decoded::Nft(v) = decode(&log_with(topics, data)).unwrap() else {
            panic!()
        };
        assert_eq!(v.len(), 2);
        assert_eq!(
            (v[1].batch_index, v[1].token_id, v[1].amount),
            (1, Uint256::from_u64(8), Uint256::from_u64(2))
        );
    }

    #[test]
    fn skips_non_standard_and_malformed() {
        let t0 = format!("{TRANSFER_TOPIC}");
        // 1-topic Transfer (all args in data): non-standard.
        let l = log_with(
            vec![t0.clone()],
            format!("0x{}{}{}", word(1), word(2), word(3)),
        );
        assert!(matches!(decode(&l), Err(Skip::NotTransfer(_))));
        // ERC20 with short data.
        let l = log_with(
            vec![
                t0.clone(),
                format!("0x{}", word(1)),
                format!("0x{}", word(2)),
            ],
            "0x01".into(),
        );
        assert!(matches!(decode(&l), Err(Skip::Malformed(_))));
        // Dirty address topic.
        let l = log_with(
            vec![
                t0,
                format!("0x{}", "1".repeat(64)),
                format!("0x{}", word(2)),
            ],
            format!("0x{}", word(1)),
        );
        assert!(matches!(decode(&l), Err(Skip::Malformed(_))));
        // Truncated batch.
        let l = log_with(
            vec![
                format!("{TRANSFER_BATCH_TOPIC}"),
                format!("0x{}", word(1)),
                format!("0x{}", word(2)),
                format!("0x{}", word(3)),
            ],
            format!("0x{}{}", word(0x40), word(0xa0)),
        );
        assert!(matches!(decode(&l), Err(Skip::Malformed(_))));
        // Unknown event.
        let l = log_with(vec![format!("0x{}", word(9))], "0x".into());
        assert!(matches!(decode(&l), Err(Skip::NotTransfer(_))));
    }

    /// A transfer-type event's topics: the signature, then `n` padded addresses 1, 2, 3.
    fn topics(signature: B256, n: u64) -> Vec<String> {
        let mut t = vec![format!("{signature}")];
        t.extend((1..=n).map(|a| format!("0x{}", word(a))));
        t
    }

    #[test]
    fn decode_logs_returns_the_events_and_counts_each_skip() {
        let mut erc20 = rpc_with(topics(TRANSFER_TOPIC, 2), format!("0x{}", word(5)));
        erc20.block_number = "0x11".into();
        erc20.block_timestamp = Some("0x64".into());
        let mut erc721 = rpc_with(topics(TRANSFER_TOPIC, 2), "0x".into());
        erc721.topics.push(format!("0x{}", word(9)));
        // (uint256[] ids, uint256[] values) = ([7, 8], [1, 2])
        let ids = [0x40, 0xa0, 2, 7, 8, 2, 1, 2].map(word).concat();
        let batch = rpc_with(topics(TRANSFER_BATCH_TOPIC, 3), format!("0x{ids}"));
        let all_in_data = rpc_with(
            topics(TRANSFER_TOPIC, 0),
            format!("0x{}", word(1).repeat(3)),
        );
        let other_event = rpc_with(vec![format!("0x{}", word(9))], "0x".into());
        let short_data = rpc_with(topics(TRANSFER_TOPIC, 2), "0x01".into());
        let mut bad_address = rpc_with(topics(TRANSFER_TOPIC, 2), format!("0x{}", word(5)));
        bad_address.address = "0xnot-an-address".into();
        let mut removed = erc20.clone();
        removed.removed = Some(true);
        let logs = [
            erc20,
            all_in_data,
            erc721,
            short_data,
            batch,
            bad_address,
            other_event,
            removed,
        ];

        let d = decode_logs(&logs);

        assert_eq!(d.erc20.len(), 1);
        assert_eq!(d.erc20[0].value, Uint256::from_u64(5));
        let ids: Vec<_> = d.nft.iter().map(|m| (m.standard, m.token_id)).collect();
        assert_eq!(
            ids,
            [
                (TokenStandard::Erc721, Uint256::from_u64(9)),
                (TokenStandard::Erc1155, Uint256::from_u64(7)),
                (TokenStandard::Erc1155, Uint256::from_u64(8)),
            ]
        );
        let want = Skipped {
            malformed: 2,
            not_transfer: 2,
            removed: 1,
        };
        assert_eq!(d.skipped, want);
        assert_eq!(d.skipped.total(), 5);
        // Every log that parsed names its block, decoded or not, in order.
        let seen: Vec<_> = d
            .blocks
            .iter()
            .map(|b| (b.number, b.timestamp, b.decoded))
            .collect();
        assert_eq!(
            seen,
            [
                (0x11, Some(0x64), true),
                (0x10, None, false),
                (0x10, None, true),
                (0x10, None, false),
                (0x10, None, true),
                (0x10, None, false),
            ]
        );
        assert_eq!(d.decoded(), 3);
        assert_eq!(decode_logs(&[]), DecodedLogs::default());
    }
}
