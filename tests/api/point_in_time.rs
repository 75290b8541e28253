//! Holdings as of a past block on the bundled mainnet sample: at each of the ten blocks the
//! sample has NFT moves in (and the block before the first), a wallet's NFTs (`GET /{address}/nft?to_block=`, `nftsByWallet(atBlock:)`), a
//! collection's owners and one token's owners (`GET /nft/{address}/owners?to_block=`,
//! `nftCollection { owners(atBlock:) }`) equal the holdings this test replays itself from the
//! sample's moves up to that block; REST and GraphQL agree; a block above the chain's head is
//! a 400, and a cursor walks the same block. At the same blocks, the collection's tokens
//! (`GET /nft/{address}?to_block=`, `nfts(atBlock:)`) and the wallet's collections (`GET
//! /{address}/nft/collections?to_block=`); and a token's holders and supply (`GET
//! /erc20/{address}/owners?to_block=`) at ten blocks of its history.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::support::common::truth::{hex_to_dec, NftMove, Truth, ZERO};
use crate::support::common::{self, text, Backend, TestApp};
use crate::support::erc20_holders::holders_truth;

/// (contract, token id hex) -> owner -> (amount, block of the latest acquisition).
type Held = BTreeMap<(String, String), BTreeMap<String, (u128, u64)>>;

/// The holdings after `block`, replayed from the moves (ERC721: the last move's recipient;
/// ERC1155: balances, the acquisition block being that of the latest incoming move).
fn replay(moves: &[NftMove], block: u64) -> Held {
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
fn rest_key(r: &Value) -> Value {
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
fn wallet_want(held: &Held, wallet: &str) -> Vec<Value> {
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
fn owners_want(held: &Held, collection: &str, token: Option<&str>) -> Vec<Value> {
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
fn tokens_want(held: &Held, collection: &str) -> Vec<Value> {
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
fn collections_want(held: &Held, wallet: &str) -> Vec<Value> {
    let mut counts: BTreeMap<&str, u64> = BTreeMap::new();
    for ((c, _), owners) in held {
        if owners.contains_key(wallet) {
            *counts.entry(c).or_default() += 1;
        }
    }
    counts.into_iter().map(|(c, n)| json!([c, n])).collect()
}

/// A token's (holder, balance) after `block`, largest first, from the sample's transfers.
fn holders_want(truth: &Truth, token: &str, block: u64) -> (Vec<Value>, Option<String>) {
    let moves = truth
        .transfers
        .iter()
        .filter(|t| t.block_number <= block)
        .map(|t| {
            (
                t.contract.as_str(),
                t.from.as_str(),
                t.to.as_str(),
                t.value.as_str(),
            )
        });
    let want = holders_truth(moves, token);
    let holders = want
        .holders
        .iter()
        .map(|(h, b)| json!([h, b.to_string()]))
        .collect();
    (holders, want.supply.map(|s| s.to_string()))
}

/// Walks a token's holders as of `block` (pages of 7, `SYNCED`): (holder, balance) and supply.
async fn holders_got(app: &TestApp, token: &str, block: u64) -> (Vec<Value>, Option<String>) {
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

/// Walks a REST list with `limit`, every page `SYNCED`: its records' keys.
async fn rest_walk(app: &TestApp, uri: &str, limit: usize) -> Vec<Value> {
    let pages = app.walk_rest(&format!("{uri}&limit={limit}"), limit).await;
    for p in &pages {
        assert_eq!(p.body["status"], "SYNCED", "{uri}: {}", p.body["status"]);
    }
    pages
        .iter()
        .flat_map(|p| &p.records)
        .map(rest_key)
        .collect()
}

/// Walks `nftsByWallet(atBlock:)`: its nodes' keys.
async fn gql_wallet(app: &TestApp, wallet: &str, block: u64) -> Vec<Value> {
    let mut out = Vec::new();
    let mut after = String::new();
    loop {
        let q = format!(
            r#"{{ nftsByWallet(chain: "eth", address: "{wallet}", first: 7, atBlock: {block}{after}) {{
                status edges {{ node {{ tokenAddress tokenId ownerOf amount blockNumber }} }}
                pageInfo {{ hasNextPage endCursor }} }} }}"#
        );
        let data = app.graphql_ok(&q, json!({})).await;
        let c = &data["nftsByWallet"];
        assert_eq!(c["status"], "SYNCED", "{c}");
        out.extend(
            c["edges"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|e| gql_key(&e["node"])),
        );
        if c["pageInfo"]["hasNextPage"] != json!(true) {
            return out;
        }
        after = format!(
            ", after: \"{}\"",
            text(&c["pageInfo"]["endCursor"]).unwrap_or_default()
        );
    }
}

/// The time of the next block with moves after `block`.
fn next_time(times: &BTreeMap<u64, u64>, block: u64) -> Option<u64> {
    times.range(block + 1..).next().map(|(_, t)| *t)
}

/// The blocks the sample has NFT moves in (ten), and the block before the first, oldest first.
fn blocks(truth: &Truth) -> Vec<u64> {
    let mut all: Vec<u64> = truth.nft_moves.iter().map(|m| m.block).collect();
    all.sort_unstable();
    all.dedup();
    all.insert(0, all[0] - 1);
    all
}

pub(super) async fn holdings_as_of_blocks(backend: Backend) {
    let app = common::spawn(backend).await;
    app.load_demo().await;
    let truth = Truth::demo();
    // The wallet with the most moves, and the collection moved in the most blocks.
    let mut by_wallet: BTreeMap<&str, usize> = BTreeMap::new();
    let mut blocks_of: BTreeMap<&str, std::collections::BTreeSet<u64>> = BTreeMap::new();
    for m in &truth.nft_moves {
        for w in [&m.from, &m.to] {
            if w != ZERO {
                *by_wallet.entry(w).or_default() += 1;
            }
        }
        blocks_of.entry(&m.contract).or_default().insert(m.block);
    }
    let by_collection: BTreeMap<&str, usize> =
        blocks_of.into_iter().map(|(c, b)| (c, b.len())).collect();
    let busiest = |m: BTreeMap<&str, usize>| {
        m.into_iter()
            .max_by_key(|(k, n)| (*n, std::cmp::Reverse(k.to_string())))
            .map(|(k, _)| k.to_string())
    };
    let wallet = busiest(by_wallet).expect("a wallet");
    let times: BTreeMap<u64, u64> = truth.nft_moves.iter().map(|m| (m.block, m.time)).collect();
    let collection = busiest(by_collection).expect("a collection");
    let mut changed = 0;
    let mut previous: Option<(Vec<Value>, Vec<Value>)> = None;
    for block in blocks(&truth) {
        let held = replay(&truth.nft_moves, block);
        let want = wallet_want(&held, &wallet);
        let got = rest_walk(&app, &format!("/api/v2.2/{wallet}/nft?to_block={block}"), 4).await;
        assert_eq!(got, want, "{wallet}'s NFTs after block {block}");
        // The same as of the block's time, and of any time before the next block with moves.
        if let Some(time) = times.get(&block) {
            for t in [*time, next_time(&times, block).map_or(*time, |n| n - 1)] {
                let uri = format!("/api/v2.2/{wallet}/nft?to_date={t}");
                assert_eq!(
                    rest_walk(&app, &uri, 4).await,
                    want,
                    "{uri} (block {block})"
                );
            }
        }
        let graph: Vec<Value> = gql_wallet(&app, &wallet, block)
            .await
            .into_iter()
            .map(|k| json!([k[0], k[1], k[2], k[3], k[4]]))
            .collect();
        assert_eq!(graph, want, "nftsByWallet(atBlock: {block})");
        let wallet_want = want;

        let want = owners_want(&held, &collection, None);
        let both = (wallet_want, want.clone());
        changed += usize::from(previous.as_ref() != Some(&both));
        previous = Some(both);
        let got = rest_walk(
            &app,
            &format!("/api/v2.2/nft/{collection}/owners?to_block={block}"),
            5,
        )
        .await;
        assert_eq!(got, want, "{collection}'s owners after block {block}");
        if let Some(token) = held
            .keys()
            .find(|(c, _)| *c == collection)
            .map(|(_, t)| t.clone())
        {
            let want = owners_want(&held, &collection, Some(&token));
            let uri = format!(
                "/api/v2.2/nft/{collection}/{}/owners?to_block={block}",
                hex_to_dec(&token)
            );
            assert_eq!(rest_walk(&app, &uri, 2).await, want, "{uri}");
        }
    }
    assert!(
        changed >= 3,
        "the holdings change at only {changed} of the ten blocks"
    );
    other_holdings_as_of_blocks(&app, &truth, &wallet, &collection).await;

    // As of the indexed head, the answer is the current one.
    let (_, headers, _) = app.get_rest(&format!("/api/v2.2/{wallet}/nft")).await;
    let head = headers
        .get("x-indexed-block")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
        .expect("X-Indexed-Block");
    let now = rest_walk(&app, &format!("/api/v2.2/{wallet}/nft?chain=eth"), 100).await;
    let at_head = rest_walk(
        &app,
        &format!("/api/v2.2/{wallet}/nft?to_block={head}"),
        100,
    )
    .await;
    assert_eq!(at_head, now);

    // A block above the head is refused, on both APIs; a cursor is bound to its block.
    let (status, _, body) = app
        .get_rest(&format!(
            "/api/v2.2/{wallet}/nft?to_block={}",
            head + 1_000_000
        ))
        .await;
    assert_eq!(status, 400, "{body}");
    assert!(
        body["message"]
            .as_str()
            .unwrap_or_default()
            .contains("above the chain's head"),
        "{body}"
    );
    let q = format!(
        r#"{{ nftsByWallet(chain: "eth", address: "{wallet}", atBlock: {}) {{ status }} }}"#,
        head + 1_000_000
    );
    let (_, answer) = app.graphql(&q, json!({})).await;
    assert_eq!(
        answer["errors"][0]["extensions"]["code"], "BAD_USER_INPUT",
        "{answer}"
    );
    let early = blocks(&truth)[3];
    let (_, _, first) = app
        .get_rest(&format!("/api/v2.2/{wallet}/nft?to_block={early}&limit=1"))
        .await;
    if let Some(cursor) = text(&first["cursor"]) {
        let (status, _, body) = app
            .get_rest(&format!(
                "/api/v2.2/{wallet}/nft?limit=1&cursor={}",
                common::enc(&cursor)
            ))
            .await;
        assert_eq!(
            status, 400,
            "a cursor of block {early} used without it: {body}"
        );
    }
    app.cleanup().await;
}

/// A collection's tokens, a wallet's collections and a token's holders as of each block.
async fn other_holdings_as_of_blocks(app: &TestApp, truth: &Truth, wallet: &str, collection: &str) {
    let mut busiest: BTreeMap<&str, usize> = BTreeMap::new();
    for t in &truth.transfers {
        *busiest.entry(&t.contract).or_default() += 1;
    }
    let token = busiest
        .into_iter()
        .max_by_key(|(k, n)| (*n, std::cmp::Reverse(k.to_string())))
        .map(|(k, _)| k.to_string())
        .expect("a token");
    let mut erc20_blocks: Vec<u64> = truth
        .transfers
        .iter()
        .filter(|t| t.contract == token)
        .map(|t| t.block_number)
        .collect();
    erc20_blocks.sort_unstable();
    erc20_blocks.dedup();
    for block in blocks(truth) {
        let held = replay(&truth.nft_moves, block);
        let uri = format!("/api/v2.2/nft/{collection}?to_block={block}");
        let got: Vec<Value> = rest_walk(app, &uri, 3).await;
        assert_eq!(got, tokens_want(&held, collection), "{uri}");
        let graph = gql_collection_nfts(app, collection, block).await;
        assert_eq!(
            graph,
            tokens_want(&held, collection),
            "nfts(atBlock: {block})"
        );

        let uri = format!("/api/v2.2/{wallet}/nft/collections?to_block={block}&token_counts=true");
        let pages = app.walk_rest(&format!("{uri}&limit=1"), 1).await;
        let got: Vec<Value> = pages
            .iter()
            .inspect(|p| assert_eq!(p.body["status"], "SYNCED", "{uri}"))
            .flat_map(|p| &p.records)
            .map(|r| json!([r["token_address"], r["count"]]))
            .collect();
        assert_eq!(got, collections_want(&held, wallet), "{uri}");
    }
    // Ten blocks spread over the token's history, and the block before its first transfer.
    let step = (erc20_blocks.len() / 10).max(1);
    let mut picks: Vec<u64> = erc20_blocks.iter().step_by(step).copied().collect();
    picks.insert(0, erc20_blocks[0] - 1);
    for block in picks {
        let got = holders_got(app, &token, block).await;
        assert_eq!(
            got,
            holders_want(truth, &token, block),
            "{token}'s holders after {block}"
        );
    }
}

/// Walks `nftCollection { nfts(atBlock:) }`: its nodes' keys, as `getContractNFTs`'s.
async fn gql_collection_nfts(app: &TestApp, collection: &str, block: u64) -> Vec<Value> {
    let mut out = Vec::new();
    let mut after = String::new();
    loop {
        let q = format!(
            r#"{{ nftCollection(chain: "eth", address: "{collection}") {{
                nfts(first: 4, atBlock: {block}{after}) {{
                status edges {{ node {{ tokenId ownerOf amount blockNumber }} }}
                pageInfo {{ hasNextPage endCursor }} }} }} }}"#
        );
        let data = app.graphql_ok(&q, json!({})).await;
        let c = &data["nftCollection"]["nfts"];
        assert_eq!(c["status"], "SYNCED", "{c}");
        out.extend(c["edges"].as_array().into_iter().flatten().map(|e| {
            let n = &e["node"];
            json!([
                collection,
                n["tokenId"],
                n["ownerOf"],
                n["amount"],
                n["blockNumber"].to_string()
            ])
        }));
        if c["pageInfo"]["hasNextPage"] != json!(true) {
            return out;
        }
        after = format!(
            ", after: \"{}\"",
            text(&c["pageInfo"]["endCursor"]).unwrap_or_default()
        );
    }
}

crate::backend_tests!(holdings_as_of_blocks);
