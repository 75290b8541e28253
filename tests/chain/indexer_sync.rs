//! On-demand collection sync, on every backend, against a real anvil chain: the history of a
//! collection from before the live start block is fetched when a request first names it; the
//! answer says `SYNCING` until then and `SYNCED` with the full history after; concurrent first
//! requests schedule one backfill; and answers say `SYNCING` while the indexer trails the head
//! by more than `max_lag_blocks`. The JSON-RPC proxy (`proxy/`) counts the indexer's requests
//! and holds chosen `eth_getLogs` calls, so each in-between state is observed, not raced.

use crate::support::anvil;
use crate::support::common;
use crate::support::proxy;

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use crate::support::indexer::*;
use alloy::primitives::Bytes;
use anvil::*;
use common::{gql_list, gql_str, Backend, TestApp};
use futures_util::future::join_all;
use proxy::{Hold, Proxy};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
use serde_json::Value;

fn nft_path(owner: &str, collection: &str) -> String {
    format!("/api/v2/{owner}/nft?chain=eth&token_addresses%5B%5D={collection}")
}

/// `status` of the REST answer for `owner`'s NFTs of `collection`.
async fn rest_status(app: &TestApp, owner: &str, collection: &str) -> String {
    let (code, _, body) = app.get_rest(&nft_path(owner, collection)).await;
    assert_eq!(code, 200, "{body}");
    body["status"].as_str().unwrap_or_default().to_string()
}

fn gql_nfts_status(owner: &str, collection: &str) -> String {
    format!(
        "{{ nftsByWallet(address: {}, chain: \"eth\", tokenAddresses: {}) {{ status }} }}",
        gql_str(owner),
        gql_list(&[collection])
    )
}

/// `status` of `nftsByWallet(address: owner, tokenAddresses: [collection])`.
async fn gql_status(app: &TestApp, owner: &str, collection: &str) -> String {
    let data = app
        .graphql_ok(&gql_nfts_status(owner, collection), Value::Null)
        .await;
    data["nftsByWallet"]["status"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// Polls the REST answer until its status is `want`.
async fn wait_rest_status(app: &TestApp, owner: &str, collection: &str, want: &str) {
    let limit = Duration::from_secs(30);
    let deadline = Instant::now() + limit;
    loop {
        let got = rest_status(app, owner, collection).await;
        if got == want {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{} still answers {got}, not {want}, after {limit:?}",
            nft_path(owner, collection)
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// `owner`'s holdings of `collection` through REST: token id -> (amount, block_number_minted).
async fn holdings(
    app: &TestApp,
    owner: &str,
    collection: &str,
) -> BTreeMap<String, (String, Option<String>)> {
    let pages = app
        .walk_rest(&format!("{}&limit=100", nft_path(owner, collection)), 100)
        .await;
    let mut out = BTreeMap::new();
    for p in pages {
        assert_eq!(p.body["status"], "SYNCED", "{}", p.body);
        for r in p.records {
            assert_eq!(r["token_address"], collection.to_string(), "{r}");
            let s = |k: &str| common::text(&r[k]);
            out.insert(
                s("token_id").unwrap_or_default(),
                (s("amount").unwrap_or_default(), s("block_number_minted")),
            );
        }
    }
    out
}

fn transfer_721(from: &str, to: &str, id: u64) -> Vec<u8> {
    calldata(transferFromCall {
        from: addr(from),
        to: addr(to),
        id: u(id),
    })
}

async fn collection_rows(app: &TestApp, collection: &str) -> usize {
    use tokenql::entity::scope_sync;
    scope_sync::Entity::find()
        .filter(scope_sync::Column::Scope.eq("contract"))
        .filter(
            scope_sync::Column::Address
                .eq(tokenql::types::Address::parse(collection).expect("an address")),
        )
        .all(&app.db)
        .await
        .expect("scope_sync rows")
        .len()
}

async fn history_is_fetched_on_first_request(backend: Backend) {
    let chain = Anvil::start(8, &[]).await;
    let a0 = chain.accounts[0].clone();
    let wallets: Vec<String> = chain.accounts[1..=6].to_vec();
    let nft = chain
        .deploy("TestNFT", nft_ctor("Early", "EARLY", "ipfs://early/"))
        .await;
    let multi = chain
        .deploy("TestMulti", multi_ctor("https://x.test/{id}.json"))
        .await;

    // History before the live start: ERC721 mints, moves and burns (each its own block).
    let mut owners: BTreeMap<u64, String> = BTreeMap::new();
    for (i, w) in wallets.iter().enumerate() {
        let start = 1 + 4 * i as u64;
        chain
            .send(
                &a0,
                &nft,
                calldata(mintManyCall {
                    to: addr(w),
                    start: u(start),
                    n: u(4),
                }),
            )
            .await;
        for id in start..start + 4 {
            owners.insert(id, w.clone());
        }
    }
    for k in 0..18u64 {
        let id = 1 + (k * 7) % 24;
        let from = owners[&id].clone();
        let mut to = wallets[(k as usize + 1) % wallets.len()].clone();
        if to == from {
            to = wallets[(k as usize + 2) % wallets.len()].clone();
        }
        chain.send(&from, &nft, transfer_721(&from, &to, id)).await;
        owners.insert(id, to);
    }
    for id in [5u64, 17] {
        let from = owners.remove(&id).expect("owner");
        chain.send(&from, &nft, nft_burn_calldata(id)).await;
    }
    // ERC1155 history.
    let multi_ids: BTreeSet<u64> = [1, 2, 3].into();
    for w in &wallets[..4] {
        chain
            .send(
                &a0,
                &multi,
                calldata(mintBatchCall {
                    to: addr(w),
                    ids: vec![u(1), u(2), u(3)],
                    amounts: vec![u(10), u(20), u(30)],
                }),
            )
            .await;
    }
    for k in 0..8usize {
        let from = wallets[k % 4].clone();
        chain
            .send(
                &from,
                &multi,
                calldata(safeTransferFromCall {
                    from: addr(&from),
                    to: addr(&wallets[(k + 2) % 6]),
                    id: u(1 + (k as u64) % 3),
                    amount: u(1 + (k as u64) % 3),
                    data: Bytes::new(),
                }),
            )
            .await;
    }
    chain.mine(20).await;
    let start = chain.head().await - 5;

    let app = common::spawn(backend).await;
    let p = Proxy::start(&chain.url, 7).await;
    let ix = Indexer::start(&app.db, &p.url, |c| {
        c.start_block = Some(start);
        c.request_timeout = Duration::from_secs(10);
    });
    wait_synced(&app.db, &chain, Duration::from_secs(30)).await;
    // Live activity of the early collection, after the start block.
    let recipient = wallets[5].clone();
    let mut sent = Vec::new();
    for id in [2u64, 9, 14] {
        let from = owners[&id].clone();
        sent.push(
            chain
                .send(&from, &nft, transfer_721(&from, &recipient, id))
                .await,
        );
        owners.insert(id, recipient.clone());
    }
    // Automine produces the block just after eth_sendTransaction answers: wait for the
    // receipts, so that the head wait_synced reads includes these transfers.
    chain.wait_mined(&sent).await;
    wait_synced(&app.db, &chain, Duration::from_secs(30)).await;
    assert_eq!(
        chain_721_owners(&chain, &nft, &(1..=24).collect()).await,
        owners,
        "the scenario's ERC721 moves all succeeded"
    );
    assert_eq!(p.count(&format!("eth_getLogs@{nft}")), 0, "no backfill yet");

    // The first request naming the collection schedules its backfill and answers SYNCING;
    // the backfill is held at the proxy, so the in-between state is certain.
    p.hold(Hold::LogsOf(nft.clone()));
    let owner = wallets[0].clone();
    assert_eq!(
        rest_status(&app, &owner, &nft).await,
        "SYNCING",
        "first request"
    );
    p.wait_count("held", 1, Duration::from_secs(20)).await;
    assert_eq!(
        gql_status(&app, &owner, &nft).await,
        "SYNCING",
        "GraphQL while the backfill runs"
    );
    let (code, _, body) = app
        .get_rest(&format!("/api/v2/{recipient}/nft?chain=eth"))
        .await;
    assert_eq!(code, 200, "{body}");
    assert!(
        body["result"].as_array().is_some_and(|r| !r.is_empty()),
        "the live transfers are stored: {body}"
    );
    assert_eq!(
        body["status"], "SYNCING",
        "an answer showing a collection being backfilled: {body}"
    );
    p.release();
    wait_rest_status(&app, &owner, &nft, "SYNCED").await;
    assert_eq!(gql_status(&app, &owner, &nft).await, "SYNCED");
    assert_eq!(
        p.count(&format!("eth_getLogs@{nft}")),
        1,
        "one backfill request: {:?}",
        p.counts()
    );
    // The full history: holdings equal ownerOf, minted before the live start.
    for w in &wallets {
        let got = holdings(&app, w, &nft).await;
        let want: BTreeSet<String> = owners
            .iter()
            .filter(|(_, o)| *o == w)
            .map(|(id, _)| id.to_string())
            .collect();
        assert_eq!(
            got.keys().cloned().collect::<BTreeSet<_>>(),
            want,
            "{backend:?}: ERC721 holdings of {w} after the backfill"
        );
        for (id, (amount, minted)) in &got {
            assert_eq!(amount, "1", "token {id}");
            let m: u64 = minted
                .as_deref()
                .and_then(|m| m.parse().ok())
                .unwrap_or_else(|| panic!("token {id}: block_number_minted {minted:?}"));
            assert!(m < start, "token {id} was minted at {m}, before {start}");
        }
    }

    // Fifty concurrent first requests (REST and GraphQL) naming another collection schedule
    // one backfill.
    p.hold(Hold::LogsOf(multi.clone()));
    let owner = wallets[0].clone();
    let q = gql_nfts_status(&owner, &multi);
    let answers = join_all((0..50).map(|i| {
        let (app, owner, multi, q) = (&app, &owner, &multi, &q);
        async move {
            if i % 2 == 0 {
                rest_status(app, owner, multi).await
            } else {
                let data = app.graphql_ok(q, Value::Null).await;
                data["nftsByWallet"]["status"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string()
            }
        }
    }))
    .await;
    assert!(
        answers.iter().all(|s| s == "SYNCING"),
        "every first request answers SYNCING: {answers:?}"
    );
    assert_eq!(collection_rows(&app, &multi).await, 1, "one scope_sync row");
    p.wait_count("held", 2, Duration::from_secs(20)).await;
    p.release();
    wait_rest_status(&app, &owner, &multi, "SYNCED").await;
    assert_eq!(
        p.count(&format!("eth_getLogs@{multi}")),
        1,
        "fifty first requests, one backfill request: {:?}",
        p.counts()
    );
    let balances = chain_1155_balances(&chain, &multi, &wallets, &multi_ids).await;
    for w in &wallets {
        let got: BTreeMap<String, String> = holdings(&app, w, &multi)
            .await
            .into_iter()
            .map(|(id, (a, _))| (id, a))
            .collect();
        let want: BTreeMap<String, String> = balances
            .iter()
            .filter(|((o, _), _)| o == w)
            .map(|((_, id), b)| (id.to_string(), b.clone()))
            .collect();
        assert_eq!(got, want, "{backend:?}: ERC1155 holdings of {w}");
    }
    assert_eq!(collection_rows(&app, &nft).await, 1);
    assert_eq!(collection_rows(&app, &multi).await, 1);

    ix.stop().await.expect("the indexer ends cleanly");
    app.cleanup().await;
}

/// The chain checkpoint as stored: (indexed block, head block).
async fn checkpoint(app: &TestApp) -> (Option<i64>, Option<i64>) {
    tokenql::entity::chain_state::Entity::find_by_id(1i64)
        .one(&app.db)
        .await
        .expect("chain_state")
        .map_or((None, None), |s| (s.indexed_block, s.head_block))
}

/// Statuses of a wallet's NFTs (REST and GraphQL) and of the ERC20 transfers (GraphQL).
async fn statuses(app: &TestApp, owner: &str) -> [String; 3] {
    let (code, _, body) = app
        .get_rest(&format!("/api/v2/{owner}/nft?chain=eth"))
        .await;
    assert_eq!(code, 200, "{body}");
    let data = app
        .graphql_ok(
            &format!(
                "{{ nftsByWallet(address: {}) {{ status }} erc20Transfers(first: 1) {{ status }} }}",
                gql_str(owner)
            ),
            Value::Null,
        )
        .await;
    let s = |v: &Value| v.as_str().unwrap_or_default().to_string();
    [
        s(&body["status"]),
        s(&data["nftsByWallet"]["status"]),
        s(&data["erc20Transfers"]["status"]),
    ]
}

/// Mines `head` blocks while the proxy holds the follower's `eth_getLogs` past `indexed` blocks
/// above the current head (so the indexer stalls `head - indexed` blocks behind the head);
/// returns the statuses seen there, then lets the follower catch up.
async fn stalled_statuses(
    app: &TestApp,
    chain: &Anvil,
    p: &Proxy,
    owner: &str,
    indexed: u64,
    head: u64,
) -> [String; 3] {
    let now = chain.head().await;
    let held = p.count("held");
    p.hold(Hold::LiveLogsFrom(now + indexed + 1));
    chain.mine(head).await;
    p.wait_count("held", held + 1, Duration::from_secs(20))
        .await;
    // The follower writes the range it already holds (the held fetch of the next one may
    // start before that write lands: it runs one range ahead), then stalls.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let (stored, _) = checkpoint(app).await;
        if stored == Some((now + indexed) as i64) {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline && stored < Some((now + indexed) as i64),
            "the follower should stall at the held range: stored {stored:?}, expected {}",
            now + indexed
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let s = statuses(app, owner).await;
    p.release();
    wait_synced(&app.db, chain, Duration::from_secs(30)).await;
    s
}

async fn syncing_while_the_indexer_trails_the_head(backend: Backend) {
    let chain = Anvil::start(3, &[]).await;
    let nft = chain
        .deploy("TestNFT", nft_ctor("Live", "LIVE", "ipfs://live/"))
        .await;
    let owner = chain.accounts[1].clone();
    chain
        .send(
            &chain.accounts[0],
            &nft,
            calldata(mintManyCall {
                to: addr(&owner),
                start: u(1),
                n: u(3),
            }),
        )
        .await;
    let app = common::spawn(backend).await;
    let p = Proxy::start(&chain.url, 11).await;
    // Five blocks per eth_getLogs, so that the checkpoint advances in known steps.
    let ix = Indexer::start(&app.db, &p.url, |c| {
        c.initial_range = 5;
        c.max_range = 5;
        c.request_timeout = Duration::from_secs(10);
    });
    wait_synced(&app.db, &chain, Duration::from_secs(30)).await;
    let synced = ["SYNCED", "SYNCED", "SYNCED"].map(String::from);
    let syncing = ["SYNCING", "SYNCING", "SYNCING"].map(String::from);
    assert_eq!(statuses(&app, &owner).await, synced, "caught up");
    let max_lag = tokenql::query::QueryConfig::default().max_lag_blocks;
    assert_eq!(max_lag, 16);

    // Stalled on the first range after the head moved 42 blocks on: the indexer has seen the
    // new head, so answers must not claim SYNCED while the fetch is stuck.
    assert_eq!(
        stalled_statuses(&app, &chain, &p, &owner, 0, 42).await,
        syncing,
        "{backend:?}: 42 blocks behind the head, nothing of them fetched yet"
    );
    assert_eq!(statuses(&app, &owner).await, synced, "caught up again");
    // 17 blocks behind: more than max_lag_blocks.
    assert_eq!(
        stalled_statuses(&app, &chain, &p, &owner, 25, 42).await,
        syncing,
        "{backend:?}: 17 blocks behind the head"
    );
    assert_eq!(statuses(&app, &owner).await, synced, "caught up again");
    // Exactly max_lag_blocks behind: still SYNCED.
    assert_eq!(
        stalled_statuses(&app, &chain, &p, &owner, 25, 41).await,
        synced,
        "{backend:?}: 16 blocks behind the head"
    );
    assert_eq!(statuses(&app, &owner).await, synced, "caught up again");

    ix.stop().await.expect("the indexer ends cleanly");
    app.cleanup().await;
}

crate::backend_tests!(
    history_is_fetched_on_first_request,
    syncing_while_the_indexer_trails_the_head
);
