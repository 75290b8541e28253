//! What the lists suites share: the bundled files and independent readings of them, temporary
//! files, and REST/GraphQL walks that check both APIs agree.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use tokenql::lists::cli::{run_contract, run_lists, ContractAction, ListsAction, Setting};
use tokenql::types::{Address, Chain};

use crate::support::common::truth::Truth;
use crate::support::common::{assert_same_records, gql_str, TestApp};

pub const USDT: &str = "0xdac17f958d2ee523a2206206994597c13d831ec7";
pub const BINANCE_8: &str = "0xf977814e90da44bfa03b6295a0616a897441acec";
pub const BINANCE_16: &str = "0xdfd5293d8e347dfe59e90efd55b2956a1343963d";

pub fn bundled(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data").join(p)
}

pub fn spam_csv(chain: &str) -> PathBuf {
    bundled(&format!(
        "spam/covalent_{chain}_mainnet_token_spam_contracts_maybe.csv"
    ))
}

pub fn labels_json() -> PathBuf {
    bundled("labels/etherscan-labels-eth.json")
}

/// The contracts the bundled Ethereum spam list names (its rows `1,<address>,<score>`).
pub fn listed_eth() -> BTreeSet<String> {
    let text = std::fs::read_to_string(spam_csv("eth")).expect("spam list");
    text.lines()
        .skip(1)
        .filter_map(|l| {
            let mut f = l.split(',');
            (f.next() == Some("1")).then(|| f.next().map(str::to_lowercase))?
        })
        .collect()
}

/// The bundled etherscan labels: non-empty names, keys in sorted order (so a lowercase key
/// comes after its checksummed twin and wins).
pub fn etherscan_labels() -> BTreeMap<String, String> {
    let v: BTreeMap<String, Value> =
        serde_json::from_str(&std::fs::read_to_string(labels_json()).expect("labels"))
            .expect("labels json");
    let mut out = BTreeMap::new();
    for (k, e) in v {
        let name = e["name"].as_str().unwrap_or("").trim().to_string();
        if !name.is_empty() {
            out.insert(k.to_lowercase(), name);
        }
    }
    out
}

pub fn address(s: &str) -> Address {
    Address::parse(s).expect("address")
}

/// A temporary file with `text`, removed when dropped.
pub struct TempFile(pub PathBuf);

impl TempFile {
    pub fn new(tag: &str, ext: &str, text: &str) -> TempFile {
        let mut r = [0u8; 6];
        getrandom::fill(&mut r).expect("randomness");
        let name: String = r.iter().map(|b| format!("{b:02x}")).collect();
        let p = std::env::temp_dir().join(format!("tq-lists-{tag}-{name}.{ext}"));
        std::fs::write(&p, text).expect("write temp file");
        TempFile(p)
    }
}

impl Drop for TempFile {
    /// Removes the file (and a SQLite database's `-wal` and `-shm` files).
    fn drop(&mut self) {
        for suffix in ["", "-wal", "-shm"] {
            let mut p = self.0.clone().into_os_string();
            p.push(suffix);
            let _ = std::fs::remove_file(p);
        }
    }
}

/// REST field -> GraphQL field of a transfer, with its labels, flags and token metadata.
pub const TRANSFER_FIELDS: &[(&str, &str)] = &[
    ("contract_address", "contractAddress"),
    ("from_wallet", "fromWallet"),
    ("to_wallet", "toWallet"),
    ("block_number", "blockNumber"),
    ("log_index", "logIndex"),
    ("from_wallet_label", "fromWalletLabel"),
    ("to_wallet_label", "toWalletLabel"),
    ("possible_spam", "possibleSpam"),
    ("verified_collection", "verifiedCollection"),
    ("token_name", "tokenName"),
    ("token_symbol", "tokenSymbol"),
    ("token_decimals", "tokenDecimals"),
    ("token_logo", "tokenLogo"),
];

/// REST field -> GraphQL field of an NFT.
pub const NFT_FIELDS: &[(&str, &str)] = &[
    ("token_address", "tokenAddress"),
    ("token_id", "tokenId"),
    ("possible_spam", "possibleSpam"),
    ("verified_collection", "verifiedCollection"),
];

/// Every transfer matching the REST `filters` and the GraphQL `args`, checked to be the
/// same records in both APIs; the REST records are returned.
pub async fn transfers(app: &TestApp, filters: &str, args: &str) -> Vec<Value> {
    let rest = app.rest_transfers(filters, 100).await;
    let fields: Vec<&str> = TRANSFER_FIELDS.iter().map(|(_, g)| *g).collect();
    let gql: Vec<Value> = app
                .walk_gql("erc20Transfers", 100, |after| {
                    let sep = if after.is_empty() { "" } else { ", " };
                    format!(
                        "{{ erc20Transfers(first: 100, {args}{sep}{after}) {{ pageInfo {{ hasNextPage endCursor }} edges {{ cursor node {{ {} }} }} }} }}",
                        fields.join(" ")
                    )
                })
                .await
                .into_iter()
                .flat_map(|p| p.nodes)
                .collect();
    assert_same_records(
        &format!("transfers {filters}"),
        &rest,
        &gql,
        TRANSFER_FIELDS,
    );
    rest
}

/// The NFTs of `owner` (with `exclude_spam` as given), the same in both APIs.
pub async fn nfts(app: &TestApp, owner: &str, exclude_spam: bool) -> Vec<Value> {
    let rest: Vec<Value> = app
        .walk_rest(
            &format!("/api/v2/{owner}/nft?limit=100&exclude_spam={exclude_spam}"),
            100,
        )
        .await
        .into_iter()
        .flat_map(|p| p.records)
        .collect();
    let fields: Vec<&str> = NFT_FIELDS.iter().map(|(_, g)| *g).collect();
    let gql: Vec<Value> = app
                .walk_gql("nftsByWallet", 100, |after| {
                    let sep = if after.is_empty() { "" } else { ", " };
                    format!(
                        "{{ nftsByWallet(address: {}, first: 100, excludeSpam: {exclude_spam}{sep}{after}) {{ status pageInfo {{ hasNextPage endCursor }} edges {{ cursor node {{ {} }} }} }} }}",
                        gql_str(owner),
                        fields.join(" ")
                    )
                })
                .await
                .into_iter()
                .flat_map(|p| p.nodes)
                .collect();
    assert_same_records(
        &format!("NFTs of {owner}, exclude_spam={exclude_spam}"),
        &rest,
        &gql,
        NFT_FIELDS,
    );
    rest
}

pub async fn import_spam(app: &TestApp, files: Vec<PathBuf>) -> Vec<String> {
    run_lists(&app.db, ListsAction::Spam { files })
        .await
        .expect("spam list import")
}

pub async fn show(app: &TestApp, contract: &str) -> Vec<String> {
    run_contract(
        &app.db,
        ContractAction::Show {
            chain: Chain::ETH,
            address: address(contract),
        },
    )
    .await
    .expect("contract show")
}

pub async fn set(app: &TestApp, contract: &str, spam: Option<Setting>, verified: Option<Setting>) {
    run_contract(
        &app.db,
        ContractAction::Set {
            chain: Chain::ETH,
            address: address(contract),
            spam,
            verified,
        },
    )
    .await
    .expect("contract set");
}

pub fn line<'a>(lines: &'a [String], key: &str) -> &'a str {
    lines
        .iter()
        .find(|l| l.starts_with(key))
        .unwrap_or_else(|| panic!("no {key} line in {lines:?}"))
}

/// The flags of `contract` as REST shows them on `owner`'s NFTs (both APIs agreeing).
pub async fn nft_flags(app: &TestApp, owner: &str, contract: &str) -> (Value, Value) {
    let all = nfts(app, owner, false).await;
    let r = all
        .iter()
        .find(|r| r["token_address"] == json!(contract))
        .unwrap_or_else(|| panic!("{owner} holds no {contract}"));
    (r["possible_spam"].clone(), r["verified_collection"].clone())
}

/// A holder of an NFT of a collection the bundled spam list names, and that collection.
pub fn spam_nft_holder(truth: &Truth) -> (String, String) {
    let listed = listed_eth();
    truth
        .nfts
        .iter()
        .find_map(|(o, held)| {
            held.iter()
                .find(|n| listed.contains(&n.contract))
                .map(|n| (o.clone(), n.contract.clone()))
        })
        .expect("a holder of a listed collection")
}
