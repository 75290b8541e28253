//! Live push through reorgs (issue 27), on anvil and every backend: GraphQL subscriptions over
//! WebSocket follow a chain while ERC20 and NFT transfers flow and reorgs of depth 1, 5 and 30
//! replace stored blocks. Afterwards, for every subscriber, the transfers it holds after
//! applying `ADDED` and `REMOVED` in order are exactly the chain's own logs since it
//! subscribed; `CONFIRMED` came once per surviving transfer; a transfer was `REMOVED` after
//! its `CONFIRMED` only in a reorg deeper than the subscription's confirmations. A subscriber
//! that disconnected mid-way and resumed with `after` on another server process (a `tokenql
//! serve` of its own, without the indexer) received exactly the sequence of one that never
//! left. Both protocols (`graphql-transport-ws`, `graphql-ws`) are used; a connection
//! without a key is closed, a key over its open subscriptions is refused, and a position
//! older than the feed keeps is refused.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};

use crate::support::anvil::*;
use crate::support::common::{self, Backend, TestApp};
use crate::support::indexer::process::pinned_binary;
use crate::support::indexer::*;
use crate::support::live::{ws_url, Protocol, Received, Subscription};

crate::backend_tests!(subscriptions_stay_exact_through_reorgs);

const ERC20: &str = "subscription($c: Int!, $after: String, $w: [Address!]) { \
    erc20Transfers(confirmations: $c, after: $after, walletAddresses: $w) { \
    kind position transfer { blockHash blockNumber logIndex contractAddress fromWallet \
    toWallet value transactionHash tokenSymbol } } }";

const NFT: &str = "subscription($c: Int!) { nftTransfers(confirmations: $c) { \
    kind position transfer { blockHash blockNumber logIndex tokenAddress tokenId \
    fromWallet toWallet amount contractType } } }";

/// Confirmations of the confirming subscribers: deeper than the 1-block reorg, shallower
/// than the 5- and 30-block ones.
const CONFIRMATIONS: u64 = 3;

/// A transfer as the chain and the events both name it.
type Key = (String, u64);

/// One event: kind, position, key, block number.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Event {
    kind: String,
    position: String,
    key: Key,
    block: u64,
}

fn events(r: &Received, field: &str) -> Vec<Event> {
    r.data
        .iter()
        .map(|(_, d)| {
            let e = &d[field];
            let t = &e["transfer"];
            Event {
                kind: e["kind"].as_str().expect("kind").to_string(),
                position: e["position"].as_str().expect("position").to_string(),
                key: (
                    t["blockHash"].as_str().expect("blockHash").to_string(),
                    t["logIndex"].as_u64().expect("logIndex"),
                ),
                block: t["blockNumber"]
                    .as_str()
                    .and_then(|b| b.parse().ok())
                    .or_else(|| t["blockNumber"].as_u64())
                    .expect("blockNumber"),
            }
        })
        .collect()
}

/// The transfers held after applying `ADDED` and `REMOVED` in order; panics on an `ADDED` of
/// a transfer already held or a `REMOVED` of one not held.
fn applied(events: &[Event]) -> BTreeSet<Key> {
    let mut held = BTreeSet::new();
    for e in events {
        match e.kind.as_str() {
            "ADDED" => assert!(held.insert(e.key.clone()), "added twice: {e:?}"),
            "REMOVED" => assert!(held.remove(&e.key), "removed but not held: {e:?}"),
            _ => {}
        }
    }
    held
}

/// The chain's own `Transfer` logs of `contract` above block `after`.
async fn truth(chain: &Anvil, contract: &str, after: u64) -> BTreeSet<Key> {
    let logs = chain
        .rpc(
            "eth_getLogs",
            json!([{"fromBlock": format!("{:#x}", after + 1), "toBlock": "latest", "address": contract}]),
        )
        .await;
    logs.as_array()
        .expect("logs")
        .iter()
        .map(|l| {
            (
                l["blockHash"].as_str().expect("hash").to_string(),
                u64::from_str_radix(
                    l["logIndex"]
                        .as_str()
                        .expect("index")
                        .trim_start_matches("0x"),
                    16,
                )
                .expect("hex"),
            )
        })
        .collect()
}

/// The hashes of the last `depth` blocks, about to be replaced.
async fn hashes_of_last(chain: &Anvil, depth: u64) -> BTreeSet<String> {
    let head = chain.head().await;
    let mut out = BTreeSet::new();
    for n in head + 1 - depth..=head {
        let b = chain
            .rpc("eth_getBlockByNumber", json!([format!("{n:#x}"), false]))
            .await;
        out.insert(b["hash"].as_str().expect("hash").to_string());
    }
    out
}

/// A `tokenql serve` process without the indexer, on the test's database.
struct Serve {
    child: Child,
    base: String,
}

impl Serve {
    fn start(app: &TestApp) -> Serve {
        let mut child = Command::new(pinned_binary())
            .args([
                "serve",
                "--bind",
                "127.0.0.1:0",
                "--offchain-workers",
                "false",
            ])
            .env("DATABASE_URL", &app.db_url)
            .env("TOKENQL_LOG_FORMAT", "json")
            .env("TOKENQL_FEED_POLL_MS", "50")
            .env("RUST_LOG", "info")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start tokenql serve");
        let stderr = child.stderr.take().expect("stderr");
        let (tx, rx) = std::sync::mpsc::channel::<String>();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if line.contains("\"listening\"") {
                    let _ = tx.send(line);
                }
            }
        });
        let line = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("tokenql serve listens within 60 s");
        let v: Value = serde_json::from_str(&line).expect("a JSON log line");
        let addr = v["fields"]["addr"].as_str().expect("addr").to_string();
        Serve {
            child,
            base: format!("http://{addr}"),
        }
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A token transfer as a reorg's replacement transaction, at `offset` in the new blocks.
fn replacement(from: &str, tok: &str, to: &str, amount: u64, offset: u64) -> Value {
    let data = calldata(transferCall {
        to: addr(to),
        amount: u(amount),
    });
    json!([{"from": from, "to": tok, "gas": "0x100000", "data": hex(&data)}, offset])
}

async fn subscriptions_stay_exact_through_reorgs(backend: Backend) {
    let options = tokenql::app::ServerOptions {
        live: tokenql::app::live::LiveOptions {
            per_key: 5,
            poll: Duration::from_millis(50),
            ..Default::default()
        },
        ..Default::default()
    };
    let chain = Anvil::start(30, &[]).await;
    let app = common::spawn_with(backend, options).await;
    let a = chain.accounts.clone();
    let tok = chain
        .deploy("TestToken", token_ctor("Alpha", "ALP", 18))
        .await;
    let nft = chain
        .deploy("TestNFT", nft_ctor("Nifty", "NFT", "ipfs://base/"))
        .await;
    let indexer = Indexer::start(&app.db, &chain.url, |_| {});
    wait_synced(&app.db, &chain, Duration::from_secs(60)).await;
    let start = chain.head().await;
    let ws = ws_url(&app.base);
    let key = Some(app.key.as_str());

    // No key: the connection is closed.
    let refused = Subscription::open(&ws, None, Protocol::TransportWs, ERC20, json!({"c": 0}))
        .await
        .err()
        .expect("a connection without a key is refused");
    assert_eq!(refused.close_code, Some(4403), "{refused:?}");

    let vars = |c: u64| json!({"c": c});
    let plain = Subscription::open(&ws, key, Protocol::TransportWs, ERC20, vars(0))
        .await
        .expect("plain");
    let confirming =
        Subscription::open(&ws, key, Protocol::TransportWs, ERC20, vars(CONFIRMATIONS))
            .await
            .expect("confirming");
    let nfts = Subscription::open(&ws, key, Protocol::LegacyWs, NFT, vars(CONFIRMATIONS))
        .await
        .expect("nfts");
    let leaving = Subscription::open(&ws, key, Protocol::TransportWs, ERC20, vars(CONFIRMATIONS))
        .await
        .expect("leaving");
    let w1 = a[1].clone();
    let one_wallet = Subscription::open(
        &ws,
        key,
        Protocol::TransportWs,
        ERC20,
        json!({"c": 0, "w": [w1]}),
    )
    .await
    .expect("one wallet");
    // A sixth subscription of the key is over its limit of five. A client's `subscribe` is not
    // acknowledged, so the five are first seen admitted by the server: the six connections'
    // resolvers run in any order.
    let live = app.live.as_ref().expect("an in-process server");
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while live.open_of(app.key_id) < 5 {
        assert!(
            std::time::Instant::now() < deadline,
            "{backend:?}: {} of 5 subscriptions admitted after 20 s",
            live.open_of(app.key_id)
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let sixth = Subscription::open(&ws, key, Protocol::TransportWs, ERC20, vars(0))
        .await
        .expect("the connection itself is accepted");
    let sixth = sixth
        .until(Duration::from_secs(10), |r| !r.errors.is_empty())
        .await;
    assert_eq!(
        sixth.errors[0]["extensions"]["code"], "RATE_LIMITED",
        "{sixth:?}"
    );

    // Transfers flow: mints, transfers, a spray of many in one transaction, NFT mints.
    let mut removed_by: Vec<(u64, BTreeSet<String>)> = Vec::new();
    for step in 0..12u64 {
        let r = step + 1;
        chain
            .send(
                &a[0],
                &tok,
                calldata(mintCall {
                    to: addr(&a[(r % 20 + 1) as usize]),
                    amount: u(1_000 + r),
                }),
            )
            .await;
        chain
            .send(
                &a[(r % 20 + 1) as usize],
                &tok,
                calldata(transferCall {
                    to: addr(&a[1]),
                    amount: u(r),
                }),
            )
            .await;
        let to: Vec<_> = (0..4)
            .map(|i| addr(&a[(i + r) as usize % 25 + 2]))
            .collect();
        chain
            .send(
                &a[(r % 20 + 1) as usize],
                &tok,
                calldata(sprayCall { to, amount: u(3) }),
            )
            .await;
        chain
            .send(
                &a[0],
                &nft,
                calldata(mintManyCall {
                    to: addr(&a[(r % 5 + 1) as usize]),
                    start: u(r * 10),
                    n: u(2),
                }),
            )
            .await;
        chain.mine(1).await;
        if step == 3 {
            wait_synced(&app.db, &chain, Duration::from_secs(60)).await;
            removed_by.push((1, hashes_of_last(&chain, 1).await));
            chain
                .reorg(1, json!([replacement(&a[2], &tok, &a[9], 7, 0)]))
                .await;
        }
        if step == 7 {
            wait_synced(&app.db, &chain, Duration::from_secs(60)).await;
            removed_by.push((5, hashes_of_last(&chain, 5).await));
            chain
                .reorg(
                    5,
                    json!([
                        replacement(&a[3], &tok, &a[8], 5, 1),
                        replacement(&a[4], &tok, &a[1], 6, 3)
                    ]),
                )
                .await;
            wait_synced(&app.db, &chain, Duration::from_secs(60)).await;
        }
    }
    wait_synced(&app.db, &chain, Duration::from_secs(60)).await;
    // The leaving subscriber goes away mid-stream.
    let left = leaving.disconnect();
    let left_events = events(&left, "erc20Transfers");
    assert!(
        !left_events.is_empty(),
        "the leaving subscriber saw changes before it left"
    );
    let resume_after = left_events.last().expect("an event").position.clone();
    // A 30-block reorg: every block since the 5-block reorg's is replaced.
    let depth = chain.head().await - start - 2;
    let depth = depth.min(30);
    assert!(
        depth >= 30,
        "the chain holds 30 blocks of transfers to reorg (has {depth})"
    );
    removed_by.push((30, hashes_of_last(&chain, 30).await));
    let new_txs: Vec<Value> = (0..6)
        .map(|i| {
            replacement(
                &a[(i + 1) as usize],
                &tok,
                &a[(i + 10) as usize],
                11 + i,
                i * 4,
            )
        })
        .collect();
    chain.reorg(30, Value::Array(new_txs)).await;
    chain.mine(CONFIRMATIONS + 2).await;
    wait_synced(&app.db, &chain, Duration::from_secs(60)).await;

    let erc20_truth = truth(&chain, &tok, start).await;
    let nft_truth = truth(&chain, &nft, start).await;
    assert!(
        erc20_truth.len() > 15 && nft_truth.len() > 5,
        "{} {}",
        erc20_truth.len(),
        nft_truth.len()
    );
    let settled = |want: usize| {
        move |r: &Received| {
            let ev = events(r, "erc20Transfers");
            ev.iter().filter(|e| e.kind == "CONFIRMED").count() >= want || !r.errors.is_empty()
        }
    };
    let limit = Duration::from_secs(60);
    let got_plain = plain
        .until(limit, |r| {
            applied_or_empty(r, "erc20Transfers") == erc20_truth
        })
        .await;
    confirming.until(limit, settled(erc20_truth.len())).await;
    nfts.until(limit, |r| {
        events(r, "nftTransfers")
            .iter()
            .filter(|e| e.kind == "CONFIRMED")
            .count()
            >= nft_truth.len()
    })
    .await;
    // Nothing more arrives once settled.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        plain.snapshot().data.len(),
        got_plain.data.len(),
        "nothing arrives once the chain settled"
    );
    let got_conf = confirming.snapshot();
    let got_nft = nfts.snapshot();

    for (name, r, field, want) in [
        ("plain", &got_plain, "erc20Transfers", &erc20_truth),
        ("confirming", &got_conf, "erc20Transfers", &erc20_truth),
        ("nfts", &got_nft, "nftTransfers", &nft_truth),
    ] {
        assert!(r.errors.is_empty(), "{name}: {:?}", r.errors);
        let ev = events(r, field);
        let positions: Vec<&String> = ev.iter().map(|e| &e.position).collect();
        assert!(
            positions.windows(2).all(|w| w[0] < w[1]),
            "{name}: positions increase"
        );
        assert_eq!(
            &applied(&ev),
            want,
            "{name}: applied changes equal the chain's logs"
        );
        check_confirmations(
            name,
            &ev,
            want,
            if name == "plain" { 0 } else { CONFIRMATIONS },
            &removed_by,
        );
    }
    let plain_ev = events(&got_plain, "erc20Transfers");
    assert!(
        plain_ev.iter().any(|e| e.kind == "REMOVED"),
        "the reorgs removed stored transfers"
    );

    // One wallet: exactly the chain's transfers from or to it.
    let got_one = one_wallet.snapshot();
    let one: BTreeSet<Key> = plain_ev
        .iter()
        .zip(got_plain.data.iter())
        .filter(|(_, (_, d))| {
            let t = &d["erc20Transfers"]["transfer"];
            t["fromWallet"] == json!(w1) || t["toWallet"] == json!(w1)
        })
        .map(|(e, _)| e.key.clone())
        .filter(|k| erc20_truth.contains(k))
        .collect();
    assert_eq!(
        applied(&events(&got_one, "erc20Transfers")),
        one,
        "one wallet"
    );

    // Resumed with `after` on another server process: exactly the sequence of one that stayed.
    let other = Serve::start(&app);
    let resumed = Subscription::open(
        &ws_url(&other.base),
        key,
        Protocol::TransportWs,
        ERC20,
        json!({"c": CONFIRMATIONS, "after": resume_after}),
    )
    .await
    .expect("resumed");
    let stayed = events(&got_conf, "erc20Transfers");
    let got_resumed = resumed
        .until(limit, |r| {
            left_events.len() + r.data.len() >= stayed.len() || !r.errors.is_empty()
        })
        .await;
    let mut whole = left_events.clone();
    whole.extend(events(&got_resumed, "erc20Transfers"));
    assert_eq!(
        whole, stayed,
        "a resumed subscriber's sequence is the one of a subscriber that stayed"
    );

    // A position older than the feed keeps is refused.
    // (The feed's pruning records the last id it deleted; the test records one as if rows
    // 1 to 5 had been pruned.)
    let old = format!("{:016x}{:016x}{:08x}", 1, 1, 0);
    mark_pruned(&app, 5).await;
    let gone = Subscription::open(
        &ws,
        key,
        Protocol::TransportWs,
        ERC20,
        json!({"c": 0, "after": old}),
    )
    .await
    .expect("connection");
    let gone = gone
        .until(Duration::from_secs(10), |r| !r.errors.is_empty())
        .await;
    assert_eq!(
        gone.errors[0]["extensions"]["code"], "BAD_USER_INPUT",
        "{gone:?}"
    );

    indexer.stop().await.expect("indexer");
}

async fn mark_pruned(app: &TestApp, through: i64) {
    use sea_orm::{EntityTrait, Set};
    use tokenql::entity::setting;
    setting::Entity::insert(setting::ActiveModel {
        name: Set("change_feed_pruned:1".into()),
        value: Set(through.to_string()),
    })
    .exec_without_returning(&app.db)
    .await
    .expect("record the pruned id");
}

fn applied_or_empty(r: &Received, field: &str) -> BTreeSet<Key> {
    let ev = events(r, field);
    let mut held = BTreeSet::new();
    for e in &ev {
        match e.kind.as_str() {
            "ADDED" => {
                held.insert(e.key.clone());
            }
            "REMOVED" => {
                held.remove(&e.key);
            }
            _ => {}
        }
    }
    held
}

/// `CONFIRMED` once per surviving transfer (none with 0 confirmations), never for a transfer
/// not added before, and a `REMOVED` after a `CONFIRMED` only in a reorg deeper than `c`.
fn check_confirmations(
    name: &str,
    ev: &[Event],
    survivors: &BTreeSet<Key>,
    c: u64,
    removed_by: &[(u64, BTreeSet<String>)],
) {
    let mut confirmed: BTreeMap<Key, usize> = BTreeMap::new();
    let mut added = BTreeSet::new();
    let mut removed_after_confirmed = 0;
    for e in ev {
        match e.kind.as_str() {
            "ADDED" => {
                added.insert(e.key.clone());
            }
            "CONFIRMED" => {
                assert!(
                    added.contains(&e.key),
                    "{name}: confirmed before added: {e:?}"
                );
                *confirmed.entry(e.key.clone()).or_default() += 1;
            }
            "REMOVED" => {
                added.remove(&e.key);
                if confirmed.remove(&e.key).is_some() {
                    removed_after_confirmed += 1;
                    let depth = removed_by
                        .iter()
                        .find(|(_, hashes)| hashes.contains(&e.key.0))
                        .map(|(d, _)| *d)
                        .unwrap_or_else(|| panic!("{name}: removed from no reorg's blocks: {e:?}"));
                    assert!(
                        depth > c,
                        "{name}: removed after confirmed in a reorg of {depth} <= {c}"
                    );
                }
            }
            other => panic!("{name}: unknown kind {other}"),
        }
    }
    if c == 0 {
        assert!(
            confirmed.is_empty(),
            "{name}: no CONFIRMED with 0 confirmations"
        );
        return;
    }
    let once: BTreeSet<Key> = confirmed
        .iter()
        .filter(|(_, n)| **n == 1)
        .map(|(k, _)| k.clone())
        .collect();
    assert!(
        confirmed.values().all(|n| *n == 1),
        "{name}: confirmed once each"
    );
    assert_eq!(
        &once, survivors,
        "{name}: every surviving transfer confirmed"
    );
    assert!(
        removed_after_confirmed > 0,
        "{name}: the 30-block reorg removed confirmed transfers"
    );
}
