//! What the v2.2 routes must answer on the bundled mainnet sample, computed here from the
//! independent decoder of [`crate::support::common::truth`] (never from tokenql's answers), and the
//! record-by-record check of what an SDK walked against it.

use std::collections::BTreeMap;

use alloy::primitives::U256;
use serde_json::{json, Value};

use crate::support::common::text;
use crate::support::common::truth::{iso8601, Nft, NftMove, Transfer, Truth, ZERO};

/// Newest first (the default) or oldest first (`order=ASC`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    Desc,
    Asc,
}

/// A collection of a wallet as `getWalletNFTCollections` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Collection {
    pub address: String,
    pub contract_type: String,
    /// The wallet's tokens of it, when `token_counts=true`.
    pub count: Option<usize>,
}

/// A wallet's balance of one ERC20 token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Balance {
    pub token: String,
    /// Decimal digits.
    pub balance: String,
}

/// A token of a collection someone holds, as `getContractNFTs` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldToken {
    pub contract: String,
    /// 64 lowercase hex digits.
    pub token_id_hex: String,
    /// The holder when exactly one wallet holds it.
    pub owner: Option<String>,
    /// Decimal digits: the amount over all holders.
    pub amount: String,
    pub contract_type: String,
    /// The latest acquisition over its holders.
    pub block_number: u64,
    pub minted: Option<u64>,
}

/// The records a walk must produce, in order.
#[derive(Debug, Clone)]
pub enum Want {
    /// ERC20 transfers (v2.2 record names).
    Erc20(Vec<Transfer>),
    /// NFT moves; token ids written in hex when `hex`.
    Moves { moves: Vec<NftMove>, hex: bool },
    /// Holdings in the wallet-NFT record shape (the owners routes).
    Holdings { nfts: Vec<Nft>, hex: bool },
    /// A wallet's collections.
    Collections(Vec<Collection>),
    /// A collection's held tokens, one per token id.
    Tokens { tokens: Vec<HeldToken>, hex: bool },
    /// A wallet's positive ERC20 balances.
    Balances(Vec<Balance>),
}

impl Want {
    /// ERC20 transfers matching `keep`, in `order`.
    pub fn erc20(truth: &Truth, order: Order, keep: impl Fn(&Transfer) -> bool) -> Want {
        // `truth.transfers` is newest first.
        let mut v: Vec<Transfer> = truth
            .transfers
            .iter()
            .filter(|t| keep(t))
            .cloned()
            .collect();
        if order == Order::Asc {
            v.reverse();
        }
        Want::Erc20(v)
    }

    /// NFT moves matching `keep`, in `order`.
    pub fn moves(truth: &Truth, order: Order, hex: bool, keep: impl Fn(&NftMove) -> bool) -> Want {
        // `truth.nft_moves` is newest first.
        let mut v: Vec<NftMove> = truth
            .nft_moves
            .iter()
            .filter(|m| keep(m))
            .cloned()
            .collect();
        if order == Order::Asc {
            v.reverse();
        }
        Want::Moves { moves: v, hex }
    }

    /// The current holders of `contract` (of one token id, given as 64 hex digits), by token
    /// id then owner.
    pub fn owners(truth: &Truth, contract: &str, token: Option<&str>, hex: bool) -> Want {
        let mut v: Vec<Nft> = truth
            .nfts
            .values()
            .flatten()
            .filter(|n| n.contract == contract && token.is_none_or(|t| n.token_id_hex == t))
            .cloned()
            .collect();
        v.sort_by(|a, b| (&a.token_id_hex, &a.owner).cmp(&(&b.token_id_hex, &b.owner)));
        Want::Holdings { nfts: v, hex }
    }

    /// The collections `wallet` holds tokens of, by address, without those in `leave_out`.
    pub fn collections(truth: &Truth, wallet: &str, counts: bool, leave_out: &[&str]) -> Want {
        let mut m: BTreeMap<&str, (usize, &str)> = BTreeMap::new();
        for n in truth.nfts.get(wallet).into_iter().flatten() {
            if leave_out.contains(&n.contract.as_str()) {
                continue;
            }
            m.entry(&n.contract).or_insert((0, &n.contract_type)).0 += 1;
        }
        Want::Collections(
            m.into_iter()
                .map(|(a, (n, t))| Collection {
                    address: a.to_string(),
                    contract_type: t.to_string(),
                    count: counts.then_some(n),
                })
                .collect(),
        )
    }

    /// The tokens of `contract` someone holds now, by token id: one record per id, with its
    /// holder when there is one, the amount summed over holders.
    pub fn collection_nfts(truth: &Truth, contract: &str, hex: bool) -> Want {
        let mut ids: BTreeMap<&str, Vec<&Nft>> = BTreeMap::new();
        for n in truth
            .nfts
            .values()
            .flatten()
            .filter(|n| n.contract == contract)
        {
            ids.entry(&n.token_id_hex).or_default().push(n);
        }
        let tokens = ids
            .into_iter()
            .map(|(id, holders)| {
                let amount = holders.iter().fold(U256::ZERO, |sum, n| {
                    sum + n.amount.parse::<U256>().expect("an amount")
                });
                HeldToken {
                    contract: contract.to_string(),
                    token_id_hex: id.to_string(),
                    owner: (holders.len() == 1).then(|| holders[0].owner.clone()),
                    amount: amount.to_string(),
                    contract_type: holders[0].contract_type.clone(),
                    block_number: holders.iter().map(|n| n.block_number).max().unwrap_or(0),
                    minted: holders[0].minted,
                }
            })
            .collect();
        Want::Tokens { tokens, hex }
    }

    /// `wallet`'s ERC20 balances from its whole history in the sample (up to `to_block`):
    /// per token, what it received minus what it sent; only positive sums (API.md leaves out
    /// zero and negative ones: the sample holds only part of a wallet's history); by token
    /// address; only the tokens `keep` keeps.
    pub fn balances(
        truth: &Truth,
        wallet: &str,
        to_block: Option<u64>,
        keep: impl Fn(&str) -> bool,
    ) -> Want {
        Want::Balances(
            sums(truth, wallet, to_block)
                .into_iter()
                .filter(|(token, (received, sent))| received > sent && keep(token))
                .map(|(token, (received, sent))| Balance {
                    token,
                    balance: (received - sent).to_string(),
                })
                .collect(),
        )
    }

    /// How many records.
    pub fn len(&self) -> usize {
        match self {
            Want::Erc20(v) => v.len(),
            Want::Moves { moves, .. } => moves.len(),
            Want::Holdings { nfts, .. } => nfts.len(),
            Want::Collections(v) => v.len(),
            Want::Tokens { tokens, .. } => tokens.len(),
            Want::Balances(v) => v.len(),
        }
    }
}

/// The wallet whose balances the SDK tests ask for: one (not the zero address) with a
/// positive balance of a token of the token list, and the most tokens whose sum is not zero
/// (positive or negative), ties to the smallest address. Also its positive token that is not
/// in the list, with the smallest address (to be flagged as spam), and its positive token of
/// the list, with the smallest address.
pub fn balance_wallet(truth: &Truth) -> (String, String, String) {
    let mut wallets: Vec<&str> = truth
        .transfers
        .iter()
        .flat_map(|t| [t.from.as_str(), t.to.as_str()])
        .filter(|w| *w != ZERO)
        .collect();
    wallets.sort_unstable();
    wallets.dedup();
    let mut best: Option<(usize, String, String, String)> = None;
    for w in wallets {
        let sums = sums(truth, w, None);
        let positive = |listed: bool| {
            sums.iter()
                .find(|(t, (r, s))| r > s && truth.meta.contains_key(*t) == listed)
                .map(|(t, _)| t.clone())
        };
        let (Some(listed), Some(unlisted)) = (positive(true), positive(false)) else {
            continue;
        };
        let n = sums.values().filter(|(r, s)| r != s).count();
        if best.as_ref().is_none_or(|b| n > b.0) {
            best = Some((n, w.to_string(), unlisted, listed));
        }
    }
    let (_, w, unlisted, listed) =
        best.expect("a wallet with balances of listed and unlisted tokens");
    (w, unlisted, listed)
}

/// Per token, what `wallet` received and sent in the sample (up to `to_block`), by token.
pub fn sums(truth: &Truth, wallet: &str, to_block: Option<u64>) -> BTreeMap<String, (U256, U256)> {
    let mut sums: BTreeMap<String, (U256, U256)> = BTreeMap::new();
    for t in &truth.transfers {
        if to_block.is_some_and(|b| t.block_number > b) || (t.to != wallet && t.from != wallet) {
            continue;
        }
        let value: U256 = t.value.parse().expect("a uint256 value");
        let e = sums.entry(t.contract.clone()).or_default();
        if t.to == wallet {
            e.0 = e.0.checked_add(value).expect("received overflows");
        }
        if t.from == wallet {
            e.1 = e.1.checked_add(value).expect("sent overflows");
        }
    }
    sums
}

/// A token id as `format=hex` writes it: `0x`, no leading zeros.
pub fn hex_id(id_hex: &str) -> String {
    let digits = id_hex.trim_start_matches('0');
    format!("0x{}", if digits.is_empty() { "0" } else { digits })
}

/// A 64-hex-digit token id in decimal.
fn dec_id(id_hex: &str) -> String {
    crate::support::common::truth::hex_to_dec(id_hex)
}

/// The one-line identity of a record, for the order check and its message.
fn got_key(want: &Want, r: &Value) -> String {
    let s = |k: &str| text(&r[k]).unwrap_or_else(|| "null".into());
    match want {
        Want::Erc20(_) => format!("{}/{}", s("block_number"), s("log_index")),
        Want::Moves { .. } => format!("{}/{}/{}", s("block_number"), s("log_index"), s("token_id")),
        Want::Holdings { .. } => {
            format!("{}/{}/{}", s("token_address"), s("token_id"), s("owner_of"))
        }
        Want::Tokens { .. } => format!("{}/{}", s("token_address"), s("token_id")),
        Want::Collections(_) => s("token_address"),
        Want::Balances(_) => s("token_address"),
    }
}

fn want_keys(want: &Want) -> Vec<String> {
    let id = |h: &str, hex: bool| if hex { hex_id(h) } else { dec_id(h) };
    match want {
        Want::Erc20(v) => v
            .iter()
            .map(|t| format!("{}/{}", t.block_number, t.log_index))
            .collect(),
        Want::Moves { moves, hex } => moves
            .iter()
            .map(|m| format!("{}/{}/{}", m.block, m.log, id(&m.id_hex, *hex)))
            .collect(),
        Want::Holdings { nfts, hex } => nfts
            .iter()
            .map(|n| format!("{}/{}/{}", n.contract, id(&n.token_id_hex, *hex), n.owner))
            .collect(),
        Want::Tokens { tokens, hex } => tokens
            .iter()
            .map(|t| format!("{}/{}", t.contract, id(&t.token_id_hex, *hex)))
            .collect(),
        Want::Collections(v) => v.iter().map(|c| c.address.clone()).collect(),
        Want::Balances(v) => v.iter().map(|b| b.token.clone()).collect(),
    }
}

/// Asserts that `records` (every page of a walk, in order) are exactly the records of `want`,
/// in its order, field by field. `labels` are the address labels the app was given.
pub fn check(what: &str, truth: &Truth, records: &[Value], want: &Want, labels: &[(&str, &str)]) {
    let got: Vec<String> = records.iter().map(|r| got_key(want, r)).collect();
    assert_eq!(
        got,
        want_keys(want),
        "{what}: the records (or their order) differ from the sample's decoded truth"
    );
    let label = |a: &str| {
        labels
            .iter()
            .find(|(l, _)| *l == a)
            .map(|(_, name)| name.to_string())
    };
    for (i, r) in records.iter().enumerate() {
        let ctx = format!("{what}: record {i}: {r}");
        let s = |k: &str| text(&r[k]);
        match want {
            Want::Erc20(v) => {
                let t = &v[i];
                let meta = truth.meta.get(&t.contract).cloned().unwrap_or_default();
                let fields = [
                    ("address", Some(t.contract.clone())),
                    ("from_address", Some(t.from.clone())),
                    ("to_address", Some(t.to.clone())),
                    ("from_address_label", label(&t.from)),
                    ("to_address_label", label(&t.to)),
                    ("value", Some(t.value.clone())),
                    ("value_decimal", truth.value_decimal(t)),
                    ("block_number", Some(t.block_number.to_string())),
                    ("block_hash", Some(t.block_hash.clone())),
                    ("block_timestamp", Some(t.block_timestamp.clone())),
                    ("transaction_hash", Some(t.transaction_hash.clone())),
                    ("token_name", meta.name),
                    ("token_symbol", meta.symbol),
                    ("token_decimals", meta.decimals.map(|d| d.to_string())),
                ];
                for (k, v) in fields {
                    assert_eq!(s(k), v, "{ctx}: {k}");
                }
                // v2.2 writes the two indexes as JSON integers.
                assert_eq!(r["log_index"].as_u64(), Some(t.log_index), "{ctx}");
                assert_eq!(
                    r["transaction_index"].as_u64(),
                    Some(t.transaction_index),
                    "{ctx}"
                );
            }
            Want::Moves { moves, hex } => {
                let m = &moves[i];
                let id = if *hex {
                    hex_id(&m.id_hex)
                } else {
                    dec_id(&m.id_hex)
                };
                let kind = if m.erc1155 { "ERC1155" } else { "ERC721" };
                let fields = [
                    ("token_address", Some(m.contract.clone())),
                    ("token_id", Some(id)),
                    ("from_address", Some(m.from.clone())),
                    ("to_address", Some(m.to.clone())),
                    ("from_address_label", label(&m.from)),
                    ("to_address_label", label(&m.to)),
                    ("amount", Some(m.amount.to_string())),
                    ("contract_type", Some(kind.to_string())),
                    ("block_number", Some(m.block.to_string())),
                    ("block_timestamp", Some(iso8601(m.time))),
                    ("transaction_hash", Some(m.transaction_hash.clone())),
                    // tokenql has no data for these: null, never invented.
                    ("value", None),
                    ("from_address_entity", None),
                    ("to_address_entity", None),
                ];
                for (k, v) in fields {
                    assert_eq!(s(k), v, "{ctx}: {k}");
                }
                assert_eq!(r["log_index"].as_u64(), Some(m.log), "{ctx}");
            }
            Want::Holdings { nfts, hex } => {
                let n = &nfts[i];
                let id = if *hex {
                    hex_id(&n.token_id_hex)
                } else {
                    n.token_id.clone()
                };
                let fields = [
                    ("token_address", Some(n.contract.clone())),
                    ("token_id", Some(id)),
                    ("owner_of", Some(n.owner.clone())),
                    ("amount", Some(n.amount.clone())),
                    ("contract_type", Some(n.contract_type.clone())),
                    ("block_number", Some(n.block_number.to_string())),
                    ("block_number_minted", n.minted.map(|b| b.to_string())),
                ];
                for (k, v) in fields {
                    assert_eq!(s(k), v, "{ctx}: {k}");
                }
            }
            Want::Tokens { tokens, hex } => {
                let t = &tokens[i];
                let id = if *hex {
                    hex_id(&t.token_id_hex)
                } else {
                    dec_id(&t.token_id_hex)
                };
                let fields = [
                    ("token_address", Some(t.contract.clone())),
                    ("token_id", Some(id)),
                    ("owner_of", t.owner.clone()),
                    ("amount", Some(t.amount.clone())),
                    ("contract_type", Some(t.contract_type.clone())),
                    ("block_number", Some(t.block_number.to_string())),
                    ("block_number_minted", t.minted.map(|b| b.to_string())),
                ];
                for (k, v) in fields {
                    assert_eq!(s(k), v, "{ctx}: {k}");
                }
            }
            Want::Collections(v) => {
                let c = &v[i];
                assert_eq!(s("contract_type"), Some(c.contract_type.clone()), "{ctx}");
                assert_eq!(r["count"].as_u64(), c.count.map(|n| n as u64), "{ctx}");
            }
            Want::Balances(v) => {
                let b = &v[i];
                let meta = truth.meta.get(&b.token).cloned().unwrap_or_default();
                assert_eq!(s("balance"), Some(b.balance.clone()), "{ctx}: balance");
                assert_eq!(s("symbol"), meta.symbol, "{ctx}: symbol");
                assert_eq!(s("name"), meta.name, "{ctx}: name");
                assert_eq!(
                    s("decimals"),
                    meta.decimals.map(|d| d.to_string()),
                    "{ctx}: decimals"
                );
            }
        }
    }
}

/// The query of a recorded request path, decoded, in order.
pub fn query(path: &str) -> Vec<(String, String)> {
    let q = path.split_once('?').map_or("", |(_, q)| q);
    form_urlencoded::parse(q.as_bytes())
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

/// One call of an SDK runner's report (`{"pages": [{"raw", "result", "hasNext"}], "requests",
/// "error"}`, tests/clients/harness.js and run.py) walked to its end: no error, one request per
/// page, pages of `limit` (`page`, `page_size`, `status` SYNCED), a cursor on every page but the
/// last and handed back exactly by the next request; then the records of all pages (`raw`)
/// against `want`. Returns those records.
pub fn check_walk(
    what: &str,
    truth: &Truth,
    got: &Value,
    limit: usize,
    want: &Want,
    labels: &[(&str, &str)],
) -> Vec<Value> {
    assert!(
        got["error"].is_null(),
        "{what}: the SDK failed: {}",
        got["error"]
    );
    let pages = got["pages"].as_array().expect("pages");
    let requests = got["requests"].as_array().expect("requests");
    assert_eq!(requests.len(), pages.len(), "{what}: one request per page");
    assert_eq!(
        pages.len(),
        want.len().div_ceil(limit).max(1),
        "{what}: pages of {limit} for {} records",
        want.len()
    );
    let mut records = Vec::new();
    for (i, p) in pages.iter().enumerate() {
        let ctx = format!("{what}: page {}", i + 1);
        let body = &p["raw"];
        assert_eq!(body["status"], json!("SYNCED"), "{ctx}: {body}");
        assert_eq!(
            text(&body["page"]),
            Some((i + 1).to_string()),
            "{ctx}: {body}"
        );
        assert_eq!(
            text(&body["page_size"]),
            Some(limit.to_string()),
            "{ctx}: {body}"
        );
        let result = body["result"].as_array().expect("result is an array");
        let last = i + 1 == pages.len();
        assert_eq!(
            p["hasNext"],
            json!(!last),
            "{ctx}: a cursor on every page but the last"
        );
        if last {
            assert!(
                body["cursor"].is_null(),
                "{ctx}: the last page's cursor: {body}"
            );
            assert!(result.len() <= limit, "{ctx}");
        } else {
            assert_eq!(result.len(), limit, "{ctx}: a page before the last is full");
            // The next request carried this page's cursor, exactly.
            let next = query(requests[i + 1]["path"].as_str().expect("path"));
            let cursor = body["cursor"].as_str().expect("a cursor");
            assert!(
                next.contains(&("cursor".into(), cursor.into())),
                "{ctx}: the next request should carry the cursor: {next:?}"
            );
        }
        if body.get("total").is_some() {
            assert!(
                body["total"].is_null(),
                "{ctx}: owners' total is null: {body}"
            );
        }
        records.extend(result.iter().cloned());
    }
    assert!(
        query(requests[0]["path"].as_str().expect("path"))
            .iter()
            .all(|(k, _)| k != "cursor"),
        "{what}: the first request has no cursor"
    );
    check(what, truth, &records, want, labels);
    records
}

/// One call answered with a bare JSON array (no envelope, not paged): no error, one request,
/// and its records against `want`. Returns them.
pub fn check_array(
    what: &str,
    truth: &Truth,
    got: &Value,
    want: &Want,
    labels: &[(&str, &str)],
) -> Vec<Value> {
    assert!(
        got["error"].is_null(),
        "{what}: the SDK failed: {}",
        got["error"]
    );
    let pages = got["pages"].as_array().expect("pages");
    assert_eq!(pages.len(), 1, "{what}: one answer");
    assert_eq!(got["requests"].as_array().map(Vec::len), Some(1), "{what}");
    assert_eq!(pages[0]["hasNext"], json!(false), "{what}");
    let records = pages[0]["raw"].as_array().expect("a bare array").clone();
    check(what, truth, &records, want, labels);
    records
}
