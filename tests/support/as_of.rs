//! Holdings as of a block as the test replays them from moves it decoded itself (the demo's
//! logs, anvil's `eth_getLogs`), and the checks of every holdings question as of a block against
//! them, on REST and GraphQL: a wallet's NFTs and collections, a collection's tokens and owners,
//! one token id's owners, a token's holders and supply. Used by the API suite (the mainnet
//! sample) and the chain suite (anvil, with ERC1155 batches, burns and reorgs).

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::anvil::Anvil;
use super::common::truth::{hex_to_dec, NftMove, TRANSFER, TRANSFER_SINGLE, ZERO};
use super::common::{text, TestApp};
use super::erc20_holders::holders_truth;

/// ERC1155 `TransferBatch(address,address,address,uint256[],uint256[])`.
pub const TRANSFER_BATCH: &str =
    "0x4a39dc06d4c0dbc64b70af90fd698a233a518aa5d07e595d983b8c0526c8f7fb";

/// (contract, token id hex) -> owner -> (amount, block of the latest acquisition).
pub type Held = BTreeMap<(String, String), BTreeMap<String, (u128, u64)>>;

/// One ERC20 transfer with its block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Erc20Move {
    pub block: u64,
    pub contract: String,
    pub from: String,
    pub to: String,
    /// Decimal digits.
    pub value: String,
}

/// What one block's checks ask about.
#[derive(Debug, Clone, Default)]
pub struct Subjects {
    /// Wallets: their NFTs (REST and GraphQL) and their collections with counts.
    pub wallets: Vec<String>,
    /// Collections: their tokens (REST and GraphQL), owners (REST and GraphQL) and the owners of
    /// their first held token id.
    pub collections: Vec<String>,
    /// ERC20 tokens: their holders and supply (REST), holders (GraphQL).
    pub tokens: Vec<String>,
}

/// The holdings after `block`, replayed from the moves (ERC721: the last move's recipient;
/// ERC1155: balances, the acquisition block being that of the latest incoming move).
pub fn replay(moves: &[NftMove], block: u64) -> Held {
    let mut chronological: Vec<&NftMove> = moves.iter().filter(|m| m.block <= block).collect();
    chronological.sort_by_key(|m| (m.block, m.log));
    let mut held: Held = BTreeMap::new();
    for m in chronological {
        let holders = held
            .entry((m.contract.clone(), m.id_hex.clone()))
            .or_default();
        if !m.erc1155 {
            holders.clear();
            if m.to != ZERO {
                holders.insert(m.to.clone(), (1, m.block));
            }
            continue;
        }
        if m.from != ZERO {
            if let Some(h) = holders.get_mut(&m.from) {
                h.0 = h.0.saturating_sub(m.amount);
                if h.0 == 0 {
                    holders.remove(&m.from);
                }
            }
        }
        if m.to != ZERO && m.amount > 0 {
            let h = holders.entry(m.to.clone()).or_insert((0, m.block));
            h.0 += m.amount;
            h.1 = m.block;
        }
    }
    held
}

/// `[token_address, token_id, owner_of, amount, block_number]` of a REST record.
pub fn rest_key(r: &Value) -> Value {
    json!([
        r["token_address"],
        r["token_id"],
        r["owner_of"],
        r["amount"],
        r["block_number"]
    ])
}

/// The same of a GraphQL `Nft` node.
fn gql_key(n: &Value) -> Value {
    json!([
        n["tokenAddress"],
        n["tokenId"],
        n["ownerOf"],
        n["amount"],
        n["blockNumber"].to_string()
    ])
}

/// A wallet's holdings after `block`, as REST keys in (contract, token id) order.
pub fn wallet_want(held: &Held, wallet: &str) -> Vec<Value> {
    held.iter()
        .filter_map(|((c, id), owners)| {
            owners.get(wallet).map(|(amount, acquired)| {
                json!([
                    c,
                    hex_to_dec(id),
                    wallet,
                    amount.to_string(),
                    acquired.to_string()
                ])
            })
        })
        .collect()
}

/// A collection's holders after `block`, as REST keys in (token id, owner) order.
pub fn owners_want(held: &Held, collection: &str, token: Option<&str>) -> Vec<Value> {
    held.iter()
        .filter(|((c, id), _)| c == collection && token.is_none_or(|t| t == id))
        .flat_map(|((c, id), owners)| {
            owners.iter().map(move |(o, (amount, acquired))| {
                json!([
                    c,
                    hex_to_dec(id),
                    o,
                    amount.to_string(),
                    acquired.to_string()
                ])
            })
        })
        .collect()
}

/// A collection's held tokens after `block`, as `getContractNFTs` keys in token id order:
/// the holder when there is one, the amount over all holders, the latest acquisition.
pub fn tokens_want(held: &Held, collection: &str) -> Vec<Value> {
    held.iter()
        .filter(|((c, _), owners)| c == collection && !owners.is_empty())
        .map(|((c, id), owners)| {
            let owner = match owners.len() {
                1 => json!(owners.keys().next()),
                _ => Value::Null,
            };
            let amount: u128 = owners.values().map(|(a, _)| a).sum();
            let acquired = owners.values().map(|(_, b)| *b).max().unwrap_or(0);
            json!([
                c,
                hex_to_dec(id),
                owner,
                amount.to_string(),
                acquired.to_string()
            ])
        })
        .collect()
}

/// The collections a wallet holds after `block`, with how many tokens of each, by address.
pub fn collections_want(held: &Held, wallet: &str) -> Vec<Value> {
    let mut counts: BTreeMap<&str, u64> = BTreeMap::new();
    for ((c, _), owners) in held {
        if owners.contains_key(wallet) {
            *counts.entry(c).or_default() += 1;
        }
    }
    counts.into_iter().map(|(c, n)| json!([c, n])).collect()
}

/// A token's (holder, balance) after `block`, largest first, and its supply.
pub fn holders_want(moves: &[Erc20Move], token: &str, block: u64) -> (Vec<Value>, Option<String>) {
    let upto = moves.iter().filter(|t| t.block <= block).map(|t| {
        (
            t.contract.as_str(),
            t.from.as_str(),
            t.to.as_str(),
            t.value.as_str(),
        )
    });
    let want = holders_truth(upto, token);
    let holders = want
        .holders
        .iter()
        .map(|(h, b)| json!([h, b.to_string()]))
        .collect();
    (holders, want.supply.map(|s| s.to_string()))
}

/// Walks a REST list with `limit` (`uri` has a `?`), every page `SYNCED`: its records.
pub async fn rest_records(app: &TestApp, uri: &str, limit: usize) -> Vec<Value> {
    let pages = app.walk_rest(&format!("{uri}&limit={limit}"), limit).await;
    for p in &pages {
        assert_eq!(p.body["status"], "SYNCED", "{uri}: {}", p.body["status"]);
    }
    pages.into_iter().flat_map(|p| p.records).collect()
}

/// Walks a REST NFT list with `limit`, every page `SYNCED`: its records' keys.
pub async fn rest_walk(app: &TestApp, uri: &str, limit: usize) -> Vec<Value> {
    let records = rest_records(app, uri, limit).await;
    records.iter().map(rest_key).collect()
}

/// Walks a token's holders as of `block` (pages of 7, `SYNCED`): (holder, balance) and supply.
pub async fn holders_got(app: &TestApp, token: &str, block: u64) -> (Vec<Value>, Option<String>) {
    let uri = format!("/api/v2.2/erc20/{token}/owners?to_block={block}&limit=7");
    let pages = app.walk_rest(&uri, 7).await;
    let mut supply = None;
    for p in &pages {
        assert_eq!(p.body["status"], "SYNCED", "{uri}: {}", p.body);
        supply = text(&p.body["total_supply"]);
    }
    let holders = pages
        .iter()
        .flat_map(|p| &p.records)
        .map(|r| json!([r["owner_address"], r["balance"]]))
        .collect();
    (holders, supply)
}

/// Walks the GraphQL connection at `path` of the query `query(after)` (`after` is `""` or
/// `, after: "…"`), every page `SYNCED`: its nodes.
pub async fn gql_nodes(
    app: &TestApp,
    path: &str,
    first: usize,
    query: impl Fn(&str) -> String,
) -> Vec<Value> {
    let pages = app
        .walk_gql(path, first, |after| {
            query(&if after.is_empty() {
                String::new()
            } else {
                format!(", {after}")
            })
        })
        .await;
    for p in &pages {
        assert_eq!(p.connection["status"], "SYNCED", "{path}: {}", p.connection);
    }
    pages.into_iter().flat_map(|p| p.nodes).collect()
}

/// `nftsByWallet(atBlock:)`: its nodes' keys.
pub async fn gql_wallet(app: &TestApp, wallet: &str, block: u64) -> Vec<Value> {
    let nodes = gql_nodes(app, "nftsByWallet", 3, |after| {
        format!(
            r#"{{ nftsByWallet(chain: "eth", address: "{wallet}", first: 3, atBlock: {block}{after}) {{
                status edges {{ cursor node {{ tokenAddress tokenId ownerOf amount blockNumber }} }}
                pageInfo {{ hasNextPage endCursor }} }} }}"#
        )
    })
    .await;
    nodes.iter().map(gql_key).collect()
}

/// `nftCollection { <field>(atBlock:) }` (`nfts` or `owners`): its nodes' keys, with the
/// collection's address for `tokenAddress`.
pub async fn gql_collection(
    app: &TestApp,
    collection: &str,
    field: &str,
    block: u64,
) -> Vec<Value> {
    let nodes = gql_nodes(app, &format!("nftCollection.{field}"), 3, |after| {
        format!(
            r#"{{ nftCollection(chain: "eth", address: "{collection}") {{
                {field}(first: 3, atBlock: {block}{after}) {{
                status edges {{ cursor node {{ tokenId ownerOf amount blockNumber }} }}
                pageInfo {{ hasNextPage endCursor }} }} }} }}"#
        )
    })
    .await;
    nodes
        .iter()
        .map(|n| {
            json!([
                collection,
                n["tokenId"],
                n["ownerOf"],
                n["amount"],
                n["blockNumber"].to_string()
            ])
        })
        .collect()
}

/// `token { holders(atBlock:) }`: (holder, balance).
pub async fn gql_holders(app: &TestApp, token: &str, block: u64) -> Vec<Value> {
    let nodes = gql_nodes(app, "token.holders", 7, |after| {
        format!(
            r#"{{ token(chain: "eth", address: "{token}") {{
                holders(first: 7, atBlock: {block}{after}) {{
                status edges {{ cursor node {{ address balance }} }}
                pageInfo {{ hasNextPage endCursor }} }} }} }}"#
        )
    })
    .await;
    nodes
        .iter()
        .map(|n| json!([n["address"], n["balance"]]))
        .collect()
}

/// Every holdings question of `subjects` as of `block`, on REST and GraphQL, against the
/// holdings replayed from `nft` and `erc20` up to that block.
pub async fn check_block(
    app: &TestApp,
    nft: &[NftMove],
    erc20: &[Erc20Move],
    subjects: &Subjects,
    block: u64,
) {
    let held = replay(nft, block);
    for wallet in &subjects.wallets {
        let want = wallet_want(&held, wallet);
        let uri = format!("/api/v2.2/{wallet}/nft?to_block={block}");
        assert_eq!(rest_walk(app, &uri, 4).await, want, "{uri}");
        let graph = gql_wallet(app, wallet, block).await;
        assert_eq!(graph, want, "nftsByWallet({wallet}, atBlock: {block})");
        let uri = format!("/api/v2.2/{wallet}/nft/collections?to_block={block}&token_counts=true");
        let got: Vec<Value> = rest_records(app, &uri, 1)
            .await
            .iter()
            .map(|r| json!([r["token_address"], r["count"]]))
            .collect();
        assert_eq!(got, collections_want(&held, wallet), "{uri}");
    }
    for collection in &subjects.collections {
        check_collection(app, &held, collection, block).await;
    }
    for token in &subjects.tokens {
        let want = holders_want(erc20, token, block);
        let got = holders_got(app, token, block).await;
        assert_eq!(got, want, "{token}'s holders and supply after {block}");
        let graph = gql_holders(app, token, block).await;
        assert_eq!(graph, want.0, "token.holders({token}, atBlock: {block})");
    }
}

/// A collection's tokens and owners as of `block`, and those of its first held token id.
async fn check_collection(app: &TestApp, held: &Held, collection: &str, block: u64) {
    let want = tokens_want(held, collection);
    let uri = format!("/api/v2.2/nft/{collection}?to_block={block}");
    assert_eq!(rest_walk(app, &uri, 3).await, want, "{uri}");
    let graph = gql_collection(app, collection, "nfts", block).await;
    assert_eq!(graph, want, "nfts({collection}, atBlock: {block})");

    let want = owners_want(held, collection, None);
    let uri = format!("/api/v2.2/nft/{collection}/owners?to_block={block}");
    assert_eq!(rest_walk(app, &uri, 5).await, want, "{uri}");
    let graph = gql_collection(app, collection, "owners", block).await;
    assert_eq!(graph, want, "owners({collection}, atBlock: {block})");

    let first = held
        .iter()
        .find(|((c, _), owners)| c == collection && !owners.is_empty())
        .map(|((_, t), _)| t.clone());
    if let Some(token) = first {
        let want = owners_want(held, collection, Some(&token));
        let uri = format!(
            "/api/v2.2/nft/{collection}/{}/owners?to_block={block}",
            hex_to_dec(&token)
        );
        assert_eq!(rest_walk(app, &uri, 2).await, want, "{uri}");
    }
}

/// A 32-byte word of `data` (hex without `0x`) as a number.
fn word(data: &str, i: usize) -> u128 {
    let w = &data[i * 64..(i + 1) * 64];
    let t = w.trim_start_matches('0');
    u128::from_str_radix(if t.is_empty() { "0" } else { t }, 16).expect("hex word")
}

/// An address topic as `0x` + 40 lowercase hex digits.
fn topic_address(t: &Value) -> String {
    let s = t.as_str().expect("topic");
    format!("0x{}", &s[s.len() - 40..]).to_lowercase()
}

/// A hex quantity.
fn quantity(v: &Value) -> u64 {
    u64::from_str_radix(v.as_str().expect("quantity").trim_start_matches("0x"), 16)
        .expect("quantity")
}

/// The NFT moves of one log (ERC721 `Transfer`, ERC1155 `TransferSingle` or `TransferBatch`).
fn moves_of(l: &Value) -> Vec<NftMove> {
    let topics = l["topics"].as_array().expect("topics");
    let data = l["data"].as_str().expect("data").trim_start_matches("0x");
    let at = |id: u128, from: &Value, to: &Value, amount: u128, erc1155: bool| NftMove {
        block: quantity(&l["blockNumber"]),
        log: quantity(&l["logIndex"]),
        contract: l["address"].as_str().expect("address").to_lowercase(),
        id_hex: format!("{id:064x}"),
        from: topic_address(from),
        to: topic_address(to),
        amount,
        erc1155,
        time: 0,
        transaction_hash: l["transactionHash"].as_str().expect("tx").to_lowercase(),
    };
    let topic0 = topics[0].as_str().expect("topic0");
    match (topic0, topics.len()) {
        (TRANSFER, 4) => {
            let id =
                u128::from_str_radix(topics[3].as_str().expect("id").trim_start_matches("0x"), 16)
                    .expect("token id");
            vec![at(id, &topics[1], &topics[2], 1, false)]
        }
        (TRANSFER_SINGLE, 4) => vec![at(
            word(data, 0),
            &topics[2],
            &topics[3],
            word(data, 1),
            true,
        )],
        (TRANSFER_BATCH, 4) => {
            let (ids, amounts) = (word(data, 0) as usize / 32, word(data, 1) as usize / 32);
            (0..word(data, ids) as usize)
                .map(|i| {
                    let (id, amount) = (word(data, ids + 1 + i), word(data, amounts + 1 + i));
                    at(id, &topics[2], &topics[3], amount, true)
                })
                .collect()
        }
        _ => Vec::new(),
    }
}

/// Every NFT move of `contracts` on the chain now, in chain order.
pub async fn chain_nft_moves(anvil: &Anvil, contracts: &[String]) -> Vec<NftMove> {
    let logs = anvil
        .rpc(
            "eth_getLogs",
            json!([{"fromBlock": "0x0", "toBlock": "latest", "address": contracts,
                    "topics": [[TRANSFER, TRANSFER_SINGLE, TRANSFER_BATCH]]}]),
        )
        .await;
    logs.as_array()
        .expect("logs")
        .iter()
        .flat_map(moves_of)
        .collect()
}

/// Every ERC20 transfer of `tokens` on the chain now.
pub async fn chain_erc20_moves(anvil: &Anvil, tokens: &[String]) -> Vec<Erc20Move> {
    let logs = anvil
        .rpc(
            "eth_getLogs",
            json!([{"fromBlock": "0x0", "toBlock": "latest", "address": tokens,
                    "topics": [[TRANSFER]]}]),
        )
        .await;
    logs.as_array()
        .expect("logs")
        .iter()
        .filter(|l| l["topics"].as_array().is_some_and(|t| t.len() == 3))
        .map(|l| {
            let topics = l["topics"].as_array().expect("topics");
            let data = l["data"].as_str().expect("data").trim_start_matches("0x");
            Erc20Move {
                block: quantity(&l["blockNumber"]),
                contract: l["address"].as_str().expect("address").to_lowercase(),
                from: topic_address(&topics[1]),
                to: topic_address(&topics[2]),
                value: hex_to_dec(data),
            }
        })
        .collect()
}
