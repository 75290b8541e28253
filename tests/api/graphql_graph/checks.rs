//! Checks shared by the scenarios: a node against the truth it stands for, a list against the
//! REST route answering the same question, and `token_hash` computed here.

use serde_json::Value;

use super::walk::s;
use crate::support::common::truth::{hex_to_dec, iso8601, Nft, NftMove, Transfer, Truth};
use crate::support::common::TestApp;

/// An ERC20 transfer node against the transfer it stands for.
pub fn check_erc20(truth: &Truth, n: &Value, t: &Transfer) {
    let f = |k: &str| s(&n[k]);
    assert_eq!(
        f("contractAddress").as_deref(),
        Some(t.contract.as_str()),
        "{n}"
    );
    assert_eq!(f("fromWallet").as_deref(), Some(t.from.as_str()), "{n}");
    assert_eq!(f("toWallet").as_deref(), Some(t.to.as_str()), "{n}");
    assert_eq!(f("value").as_deref(), Some(t.value.as_str()), "{n}");
    assert_eq!(f("valueDecimal"), truth.value_decimal(t), "{n}");
    assert_eq!(n["blockNumber"].as_u64(), Some(t.block_number), "{n}");
    assert_eq!(
        f("blockHash").as_deref(),
        Some(t.block_hash.as_str()),
        "{n}"
    );
    assert_eq!(
        f("blockTimestamp").as_deref(),
        Some(t.block_timestamp.as_str()),
        "{n}"
    );
    assert_eq!(
        f("transactionHash").as_deref(),
        Some(t.transaction_hash.as_str()),
        "{n}"
    );
    assert_eq!(
        n["transactionIndex"].as_u64(),
        Some(t.transaction_index),
        "{n}"
    );
    assert_eq!(n["logIndex"].as_u64(), Some(t.log_index), "{n}");
    let meta = truth.meta.get(&t.contract).cloned().unwrap_or_default();
    assert_eq!(f("tokenSymbol"), meta.symbol, "{n}");
    assert_eq!(
        n["tokenDecimals"].as_u64().map(|d| d as u32),
        meta.decimals,
        "{n}"
    );
}

/// An NFT move node against the move it stands for.
pub fn check_move(n: &Value, m: &NftMove) {
    let f = |k: &str| s(&n[k]);
    assert_eq!(
        f("tokenAddress").as_deref(),
        Some(m.contract.as_str()),
        "{n}"
    );
    assert_eq!(f("tokenId"), Some(hex_to_dec(&m.id_hex)), "{n}");
    assert_eq!(f("fromWallet").as_deref(), Some(m.from.as_str()), "{n}");
    assert_eq!(f("toWallet").as_deref(), Some(m.to.as_str()), "{n}");
    assert_eq!(f("amount"), Some(m.amount.to_string()), "{n}");
    let kind = if m.erc1155 { "ERC1155" } else { "ERC721" };
    assert_eq!(f("contractType").as_deref(), Some(kind), "{n}");
    assert_eq!(n["blockNumber"].as_u64(), Some(m.block), "{n}");
    assert_eq!(f("blockTimestamp"), Some(iso8601(m.time)), "{n}");
    assert_eq!(
        f("transactionHash").as_deref(),
        Some(m.transaction_hash.as_str()),
        "{n}"
    );
    assert_eq!(n["logIndex"].as_u64(), Some(m.log), "{n}");
    assert_eq!(
        n["batchIndex"].as_u64(),
        Some(0),
        "the demo has no batches: {n}"
    );
    if !m.erc1155 {
        assert!(n["operator"].is_null(), "ERC721 has no operator: {n}");
    }
}

/// (block, log index) of each node.
pub fn positions(nodes: &[Value]) -> Vec<(u64, u64)> {
    let n = |v: &Value, k: &str| v[k].as_u64().unwrap_or_else(|| panic!("no {k}: {v}"));
    nodes
        .iter()
        .map(|v| (n(v, "blockNumber"), n(v, "logIndex")))
        .collect()
}

/// REST record fields and the GraphQL node fields that answer them.
pub const REST_ERC20: &[(&str, &str)] = &[
    ("address", "contractAddress"),
    ("from_address", "fromWallet"),
    ("from_address_label", "fromWalletLabel"),
    ("to_address", "toWallet"),
    ("to_address_label", "toWalletLabel"),
    ("value", "value"),
    ("value_decimal", "valueDecimal"),
    ("block_number", "blockNumber"),
    ("block_hash", "blockHash"),
    ("block_timestamp", "blockTimestamp"),
    ("transaction_hash", "transactionHash"),
    ("transaction_index", "transactionIndex"),
    ("log_index", "logIndex"),
    ("token_name", "tokenName"),
    ("token_symbol", "tokenSymbol"),
    ("token_logo", "tokenLogo"),
    ("token_decimals", "tokenDecimals"),
    ("possible_spam", "possibleSpam"),
    ("verified_contract", "verifiedCollection"),
];

/// REST record fields of an NFT move and their GraphQL node fields.
pub const REST_MOVE: &[(&str, &str)] = &[
    ("token_address", "tokenAddress"),
    ("token_id", "tokenId"),
    ("from_address", "fromWallet"),
    ("from_address_label", "fromWalletLabel"),
    ("to_address", "toWallet"),
    ("to_address_label", "toWalletLabel"),
    ("amount", "amount"),
    ("contract_type", "contractType"),
    ("block_number", "blockNumber"),
    ("block_hash", "blockHash"),
    ("block_timestamp", "blockTimestamp"),
    ("transaction_hash", "transactionHash"),
    ("transaction_index", "transactionIndex"),
    ("log_index", "logIndex"),
    ("operator", "operator"),
    ("possible_spam", "possibleSpam"),
    ("verified_collection", "verifiedCollection"),
];

/// Every record of a REST route (walked with `limit`) equals the GraphQL node at its place.
pub async fn assert_same_as_rest(
    app: &TestApp,
    uri: &str,
    nodes: &[Value],
    fields: &[(&str, &str)],
) {
    let pages = app
        .walk_rest(
            &format!(
                "{uri}{}limit=100",
                if uri.contains('?') { "&" } else { "?" }
            ),
            100,
        )
        .await;
    let records: Vec<Value> = pages.into_iter().flat_map(|p| p.records).collect();
    assert_eq!(
        records.len(),
        nodes.len(),
        "{uri}: REST and GraphQL list as many records"
    );
    for (r, n) in records.iter().zip(nodes) {
        for (rf, gf) in fields {
            assert_eq!(
                s(&r[*rf]),
                s(&n[*gf]),
                "{uri}: REST {rf} vs GraphQL {gf}\n{r}\n{n}"
            );
        }
    }
}

/// REST owner record fields and the `Nft` node fields that answer them.
pub const REST_OWNER: &[(&str, &str)] = &[
    ("token_address", "tokenAddress"),
    ("token_id", "tokenId"),
    ("contract_type", "contractType"),
    ("owner_of", "ownerOf"),
    ("amount", "amount"),
    ("block_number", "blockNumber"),
    ("block_number_minted", "blockNumberMinted"),
    ("token_hash", "tokenHash"),
    ("name", "name"),
    ("symbol", "symbol"),
    ("possible_spam", "possibleSpam"),
    ("verified_collection", "verifiedCollection"),
];

/// A holding node against the truth.
pub fn check_holding(n: &Value, h: &Nft) {
    let f = |k: &str| s(&n[k]);
    assert_eq!(
        f("tokenAddress").as_deref(),
        Some(h.contract.as_str()),
        "{n}"
    );
    assert_eq!(f("tokenId").as_deref(), Some(h.token_id.as_str()), "{n}");
    assert_eq!(f("ownerOf").as_deref(), Some(h.owner.as_str()), "{n}");
    assert_eq!(f("amount").as_deref(), Some(h.amount.as_str()), "{n}");
    assert_eq!(
        f("contractType").as_deref(),
        Some(h.contract_type.as_str()),
        "{n}"
    );
    assert_eq!(n["blockNumber"].as_u64(), Some(h.block_number), "{n}");
    assert_eq!(
        f("tokenHash"),
        Some(token_hash(&h.contract, &h.token_id)),
        "{n}"
    );
}

/// `token_hash` computed here: the first 16 bytes of SHA-256("1:{contract}:{decimal id}").
pub fn token_hash(contract: &str, id: &str) -> String {
    use sha2::{Digest, Sha256};
    let d = Sha256::digest(format!("1:{contract}:{id}").as_bytes());
    d[..16].iter().map(|b| format!("{b:02x}")).collect()
}
