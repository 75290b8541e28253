//! What the v2.2 routes must answer on the bundled mainnet sample, computed here from the
//! independent decoder of [`crate::common::truth`] (never from tokenql's answers), and the
//! record-by-record check of what an SDK walked against it.

use std::collections::BTreeMap;

use alloy::primitives::U256;
use serde_json::Value;

use crate::common::text;
use crate::common::truth::{iso8601, Nft, NftMove, Transfer, Truth};

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
    /// A wallet's non-zero ERC20 balances.
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

    /// `wallet`'s ERC20 balances over its whole history in the sample: per token, the sum of
    /// what it received minus the sum of what it sent; zero balances left out; by token address.
    pub fn balances(truth: &Truth, wallet: &str) -> Want {
        let mut sums: BTreeMap<&str, (U256, U256)> = BTreeMap::new();
        for t in &truth.transfers {
            let value: U256 = t.value.parse().expect("a uint256 value");
            if t.to == wallet {
                let e = sums.entry(&t.contract).or_default();
                e.0 = e.0.checked_add(value).expect("received overflows");
            }
            if t.from == wallet {
                let e = sums.entry(&t.contract).or_default();
                e.1 = e.1.checked_add(value).expect("sent overflows");
            }
        }
        let v = sums
            .into_iter()
            .filter(|(_, (received, sent))| received != sent)
            .map(|(token, (received, sent))| {
                assert!(
                    received > sent,
                    "{wallet} sent more {token} than it received in the sample: choose another \
                     wallet"
                );
                Balance {
                    token: token.to_string(),
                    balance: (received - sent).to_string(),
                }
            })
            .collect();
        Want::Balances(v)
    }

    /// How many records.
    pub fn len(&self) -> usize {
        match self {
            Want::Erc20(v) => v.len(),
            Want::Moves { moves, .. } => moves.len(),
            Want::Holdings { nfts, .. } => nfts.len(),
            Want::Collections(v) => v.len(),
            Want::Balances(v) => v.len(),
        }
    }
}

/// A token id as `format=hex` writes it: `0x`, no leading zeros.
pub fn hex_id(id_hex: &str) -> String {
    let digits = id_hex.trim_start_matches('0');
    format!("0x{}", if digits.is_empty() { "0" } else { digits })
}

/// A 64-hex-digit token id in decimal.
fn dec_id(id_hex: &str) -> String {
    crate::common::truth::hex_to_dec(id_hex)
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
                assert_eq!(
                    s("decimals"),
                    meta.decimals.map(|d| d.to_string()),
                    "{ctx}: decimals"
                );
            }
        }
    }
}
