//! Ground truth for the bundled demo sample, computed by a decoder written here, independently
//! of `tokenql::decode`: JSON-RPC logs parsed with serde_json and sliced as hex.
//!
//! - ERC20 `Transfer`: topic0 `TRANSFER`, 3 topics, 32-byte data.
//! - ERC721 `Transfer`: topic0 `TRANSFER`, 4 topics (token id in topic 3).
//! - ERC1155 `TransferSingle`: topic0 `TRANSFER_SINGLE`, 4 topics (operator, from, to), data
//!   `id, value`.
//! - Everything else is skipped.

use std::collections::{BTreeMap, HashMap};

use serde_json::Value;

pub const TRANSFER: &str = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef";
pub const TRANSFER_SINGLE: &str =
    "0xc3d58168c5ae7397731d063d5bbf3d657854427343f4c083240f7aacaa2d0f62";
pub const ZERO: &str = "0x0000000000000000000000000000000000000000";

/// One ERC20 transfer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transfer {
    pub contract: String,
    pub from: String,
    pub to: String,
    /// Decimal digits.
    pub value: String,
    pub block_number: u64,
    pub block_hash: String,
    /// ISO 8601 UTC with milliseconds.
    pub block_timestamp: String,
    /// The same time in Unix seconds.
    pub block_time: u64,
    pub transaction_hash: String,
    pub transaction_index: u64,
    pub log_index: u64,
}

/// One NFT currently held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Nft {
    pub contract: String,
    /// 64 lowercase hex digits (orders numerically as a string).
    pub token_id_hex: String,
    /// Decimal digits.
    pub token_id: String,
    pub owner: String,
    /// Decimal digits.
    pub amount: String,
    /// `ERC721` or `ERC1155`.
    pub contract_type: String,
    /// Block of the owner's latest acquisition.
    pub block_number: u64,
    /// Block of the token's first mint (a move from the zero address), if in the sample.
    pub minted: Option<u64>,
}

/// Token-list metadata of a contract.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Meta {
    pub name: Option<String>,
    pub symbol: Option<String>,
    pub decimals: Option<u32>,
}

/// The demo's expected contents.
pub struct Truth {
    /// All ERC20 transfers, block number desc, log index desc.
    pub transfers: Vec<Transfer>,
    /// Current holdings per owner, ordered by (contract, token id) ascending.
    pub nfts: BTreeMap<String, Vec<Nft>>,
    /// Every NFT move, block number desc, log index desc.
    pub nft_moves: Vec<NftMove>,
    /// Chain 1 entries of the bundled token list, by lowercase address.
    pub meta: HashMap<String, Meta>,
}

fn field<'a>(v: &'a Value, k: &str) -> &'a str {
    v[k].as_str()
        .unwrap_or_else(|| panic!("demo log without string field {k}: {v}"))
}

fn quantity(s: &str) -> u64 {
    u64::from_str_radix(s.trim_start_matches("0x"), 16)
        .unwrap_or_else(|e| panic!("bad quantity {s}: {e}"))
}

/// The address in a 32-byte topic or data word (64 hex digits, no prefix).
fn word_address(word: &str) -> String {
    assert_eq!(word.len(), 64, "not a 32-byte word: {word}");
    format!("0x{}", &word[24..]).to_lowercase()
}

/// Arbitrary-length hex (no prefix) to decimal digits, exactly.
pub fn hex_to_dec(hex: &str) -> String {
    const BASE: u64 = 1_000_000_000;
    let mut limbs: Vec<u64> = vec![0]; // little-endian, base 10^9
    for c in hex.chars() {
        let mut carry = u64::from(c.to_digit(16).unwrap_or_else(|| panic!("not hex: {hex}")));
        for l in limbs.iter_mut() {
            let v = *l * 16 + carry;
            *l = v % BASE;
            carry = v / BASE;
        }
        while carry > 0 {
            limbs.push(carry % BASE);
            carry /= BASE;
        }
    }
    let mut out = limbs.last().map(|l| l.to_string()).unwrap_or_default();
    for l in limbs.iter().rev().skip(1) {
        out.push_str(&format!("{l:09}"));
    }
    out
}

/// `digits / 10^decimals` written exactly: no exponent, no trailing zeros, no trailing dot.
pub fn scale(digits: &str, decimals: u32) -> String {
    let d = decimals as usize;
    let digits = digits.trim_start_matches('0');
    let digits = if digits.is_empty() { "0" } else { digits };
    if d == 0 {
        return digits.to_string();
    }
    let padded = format!("{digits:0>width$}", width = d + 1);
    let (int, frac) = padded.split_at(padded.len() - d);
    let frac = frac.trim_end_matches('0');
    if frac.is_empty() {
        int.to_string()
    } else {
        format!("{int}.{frac}")
    }
}

/// Unix seconds as `YYYY-MM-DDTHH:MM:SS.000Z` (civil-from-days, proleptic Gregorian).
pub fn iso8601(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.000Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

fn small(hex: &str) -> u128 {
    let t = hex.trim_start_matches('0');
    assert!(
        t.len() <= 32,
        "demo ERC1155 amount too large for the test: {hex}"
    );
    u128::from_str_radix(if t.is_empty() { "0" } else { t }, 16).expect("hex amount")
}

/// Owner -> (amount, block of the latest acquisition, whether ERC1155), for one token.
type Holders = BTreeMap<String, (u128, u64, bool)>;

/// One NFT move (ERC721 `Transfer` or ERC1155 `TransferSingle`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NftMove {
    pub block: u64,
    pub log: u64,
    pub contract: String,
    /// 64 lowercase hex digits.
    pub id_hex: String,
    pub from: String,
    pub to: String,
    pub amount: u128,
    pub erc1155: bool,
    /// Unix seconds.
    pub time: u64,
    pub transaction_hash: String,
}

impl Truth {
    /// Decodes `data/demo-mainnet/*.jsonl` and the bundled token list.
    pub fn demo() -> Truth {
        let root = env!("CARGO_MANIFEST_DIR");
        let read = |p: &str| {
            std::fs::read_to_string(format!("{root}/{p}"))
                .unwrap_or_else(|e| panic!("cannot read {p}: {e}"))
        };
        let mut timestamps: HashMap<u64, u64> = HashMap::new();
        for line in read("data/demo-mainnet/blocks.jsonl").lines() {
            if line.trim().is_empty() {
                continue;
            }
            let b: Value = serde_json::from_str(line).expect("block line");
            timestamps.insert(
                quantity(field(&b, "number")),
                quantity(field(&b, "timestamp")),
            );
        }

        let mut transfers = Vec::new();
        let mut moves = Vec::new();
        for line in read("data/demo-mainnet/logs.jsonl").lines() {
            if line.trim().is_empty() {
                continue;
            }
            let log: Value = serde_json::from_str(line).expect("log line");
            let topics: Vec<String> = log["topics"]
                .as_array()
                .expect("topics")
                .iter()
                .map(|t| {
                    t.as_str()
                        .expect("topic")
                        .trim_start_matches("0x")
                        .to_lowercase()
                })
                .collect();
            let data = field(&log, "data").trim_start_matches("0x").to_lowercase();
            let Some(topic0) = topics.first().map(|t| format!("0x{t}")) else {
                continue;
            };
            let block = quantity(field(&log, "blockNumber"));
            let log_index = quantity(field(&log, "logIndex"));
            let contract = field(&log, "address").to_lowercase();
            if topic0 == TRANSFER && topics.len() == 3 && data.len() == 64 {
                let ts = timestamps
                    .get(&block)
                    .copied()
                    .or_else(|| log["blockTimestamp"].as_str().map(quantity))
                    .unwrap_or_else(|| panic!("no timestamp for block {block}"));
                transfers.push(Transfer {
                    contract,
                    from: word_address(&topics[1]),
                    to: word_address(&topics[2]),
                    value: hex_to_dec(&data),
                    block_number: block,
                    block_hash: field(&log, "blockHash").to_lowercase(),
                    block_timestamp: iso8601(ts),
                    block_time: ts,
                    transaction_hash: field(&log, "transactionHash").to_lowercase(),
                    transaction_index: quantity(field(&log, "transactionIndex")),
                    log_index,
                });
            } else if topic0 == TRANSFER && topics.len() == 4 && data.is_empty() {
                moves.push(NftMove {
                    block,
                    log: log_index,
                    contract,
                    id_hex: topics[3].clone(),
                    from: word_address(&topics[1]),
                    to: word_address(&topics[2]),
                    amount: 1,
                    erc1155: false,
                    time: timestamps[&block],
                    transaction_hash: field(&log, "transactionHash").to_lowercase(),
                });
            } else if topic0 == TRANSFER_SINGLE && topics.len() == 4 && data.len() == 128 {
                moves.push(NftMove {
                    block,
                    log: log_index,
                    contract,
                    id_hex: data[..64].to_string(),
                    from: word_address(&topics[2]),
                    to: word_address(&topics[3]),
                    amount: small(&data[64..]),
                    erc1155: true,
                    time: timestamps[&block],
                    transaction_hash: field(&log, "transactionHash").to_lowercase(),
                });
            }
        }
        transfers.sort_by_key(|t| std::cmp::Reverse((t.block_number, t.log_index)));

        // Replay every token's moves in chain order.
        moves.sort_by_key(|m| (m.block, m.log));
        let mut holders: BTreeMap<(String, String), Holders> = BTreeMap::new();
        let mut minted: HashMap<(String, String), u64> = HashMap::new();
        for m in &moves {
            if m.from == ZERO {
                minted
                    .entry((m.contract.clone(), m.id_hex.clone()))
                    .or_insert(m.block);
            }
            let h = holders
                .entry((m.contract.clone(), m.id_hex.clone()))
                .or_default();
            if !m.erc1155 {
                h.clear();
                if m.to != ZERO {
                    h.insert(m.to.clone(), (1, m.block, false));
                }
                continue;
            }
            if m.from != ZERO {
                if let Some(e) = h.get_mut(&m.from) {
                    e.0 = e.0.saturating_sub(m.amount);
                    if e.0 == 0 {
                        h.remove(&m.from);
                    }
                }
            }
            if m.to != ZERO && m.amount > 0 {
                let e = h.entry(m.to.clone()).or_insert((0, m.block, true));
                e.0 += m.amount;
                e.1 = m.block;
            }
        }
        let mut nfts: BTreeMap<String, Vec<Nft>> = BTreeMap::new();
        for ((contract, id_hex), owners) in holders {
            let mint = minted.get(&(contract.clone(), id_hex.clone())).copied();
            for (owner, (amount, block, erc1155)) in owners {
                nfts.entry(owner.clone()).or_default().push(Nft {
                    contract: contract.clone(),
                    token_id: hex_to_dec(&id_hex),
                    token_id_hex: id_hex.clone(),
                    owner,
                    amount: amount.to_string(),
                    contract_type: if erc1155 { "ERC1155" } else { "ERC721" }.to_string(),
                    block_number: block,
                    minted: mint,
                });
            }
        }
        for v in nfts.values_mut() {
            v.sort_by(|a, b| (&a.contract, &a.token_id_hex).cmp(&(&b.contract, &b.token_id_hex)));
        }

        let list: Value =
            serde_json::from_str(&read("data/tokenlists/superchain.tokenlist.json")).expect("list");
        let mut meta = HashMap::new();
        for t in list["tokens"].as_array().expect("tokens") {
            if t["chainId"].as_u64() != Some(1) {
                continue;
            }
            let s = |k: &str| t[k].as_str().map(str::to_string);
            meta.insert(
                field(t, "address").to_lowercase(),
                Meta {
                    name: s("name"),
                    symbol: s("symbol"),
                    decimals: t["decimals"].as_u64().map(|d| d as u32),
                },
            );
        }
        moves.reverse();
        Truth {
            transfers,
            nfts,
            nft_moves: moves,
            meta,
        }
    }

    /// Transfers whose sender or recipient is one of `wallets`, in API order.
    pub fn transfers_of(&self, wallets: &[&str]) -> Vec<&Transfer> {
        self.transfers
            .iter()
            .filter(|t| wallets.iter().any(|w| t.from == *w || t.to == *w))
            .collect()
    }

    /// Wallets by number of transfers they took part in, most first (ties by address).
    pub fn busiest_wallets(&self) -> Vec<(String, usize)> {
        let mut n: BTreeMap<&str, usize> = BTreeMap::new();
        for t in &self.transfers {
            *n.entry(&t.from).or_default() += 1;
            if t.to != t.from {
                *n.entry(&t.to).or_default() += 1;
            }
        }
        let mut v: Vec<(String, usize)> = n.into_iter().map(|(k, c)| (k.to_string(), c)).collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        v
    }

    /// The expected `value_decimal` of a transfer.
    pub fn value_decimal(&self, t: &Transfer) -> Option<String> {
        let d = self.meta.get(&t.contract)?.decimals?;
        Some(scale(&t.value, d))
    }
}

#[test]
fn helpers_are_exact() {
    assert_eq!(hex_to_dec("0"), "0");
    assert_eq!(hex_to_dec("ff"), "255");
    assert_eq!(
        hex_to_dec("00000000000000000000000000000000000000000000000000000000000186a0"),
        "100000"
    );
    assert_eq!(
        hex_to_dec(&"f".repeat(64)),
        "115792089237316195423570985008687907853269984665640564039457584007913129639935"
    );
    assert_eq!(scale("1500000", 6), "1.5");
    assert_eq!(scale("5", 18), "0.000000000000000005");
    assert_eq!(scale("0", 18), "0");
    assert_eq!(scale("1000000", 6), "1");
    assert_eq!(iso8601(0), "1970-01-01T00:00:00.000Z");
    assert_eq!(iso8601(1_679_301_455), "2023-03-20T08:37:35.000Z");
}

/// An Ethereum entry of the bundled token list, read here independently of the importer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedToken {
    pub name: String,
    pub symbol: String,
    pub decimals: u64,
    /// `logoURI`.
    pub logo: String,
}

/// The bundled token list's Ethereum entries (`chainId` 1), by lowercase address.
pub fn token_list() -> BTreeMap<String, ListedToken> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/data/tokenlists/superchain.tokenlist.json"
    );
    let list: Value = serde_json::from_str(&std::fs::read_to_string(path).expect("token list"))
        .expect("token list JSON");
    list["tokens"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|t| t["chainId"] == 1)
        .map(|t| {
            let s = |k: &str| t[k].as_str().unwrap_or_default().to_string();
            let token = ListedToken {
                name: s("name"),
                symbol: s("symbol"),
                decimals: t["decimals"].as_u64().unwrap_or(0),
                logo: s("logoURI"),
            };
            (s("address").to_lowercase(), token)
        })
        .collect()
}
