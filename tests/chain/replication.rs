//! Scale-out on PostgreSQL streaming replication, black-box: two real PostgreSQL servers (a
//! primary from `initdb` and a hot standby from `pg_basebackup -R`, on free ports, see
//! `tests/support/pg.rs`), the real `tokenql index` on the primary following anvil, and
//! two real `tokenql serve` processes writing to the primary and reading from the replica
//! (`--database-read-url`, answers `SYNCED` only within 0 blocks of the head).
//!
//! 1. Caught up: every wallet's transfers over REST and GraphQL equal the chain's (decoded
//!    here from `eth_getLogs`), `SYNCED`; a walk in small pages that alternates between the two
//!    processes yields every record once.
//! 2. Replay paused on the replica (`pg_wal_replay_pause()`) while the chain moves on and the
//!    primary's indexer stores it: every answer is `SYNCING` or exact; stale answers from the
//!    replica are seen (`SYNCING`), then the replica leaves rotation (its lag passes
//!    `--replica-max-lag-ms`, as `/readyz` and `/metrics` say) and answers are exact and
//!    `SYNCED` from the primary. Replay resumed: the replica rejoins, answers stay exact.
//! 3. Replica stopped under load: no 5xx (a read that fails on the replica is answered from the
//!    primary); restarted: it rejoins rotation.
//! 4. The replica applies each commit 150 ms late (`recovery_min_apply_delay`), a block lands
//!    every 0.3 s and clients ask both processes without pause: every `SYNCED` answer holds
//!    exactly the chain's records up to the block it says it was read at (`X-Indexed-Block`),
//!    and that block is at or after the one the primary had stored when the request was sent
//!    (the answer's rows and the state it is judged by come from one snapshot of the replica).
//!
//! The leader lease of the indexer (two indexers for one chain, the leader SIGKILLed) is shown
//! on every backend by `tests/chain/indexer_crash.rs`.

use crate::support::anvil;
use crate::support::pg;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Child;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::support::indexer::chain_erc20;
use crate::support::indexer::consistency::{ask_under_load, broken, chain_moves, traffic};
use crate::support::indexer::process::{tail, tokenql_cmd};
use anvil::*;
use sea_orm::EntityTrait;
use serde_json::{json, Value};

/// A replica further behind than this leaves rotation.
const MAX_LAG_MS: u64 = 1_500;
/// Wallets trading the token.
const WALLETS: usize = 8;
/// How long clients ask the late replica while the chain moves (scenario 4).
const LATE_LOAD: Duration = Duration::from_secs(20);

/// A record's identity: (transaction hash, log index).
type Key = (String, u64);
/// Transfers by key: (from, to, value).
type Records = BTreeMap<Key, (String, String, String)>;

/// A `tokenql` process, SIGKILLed when dropped.
struct Proc {
    child: Child,
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An API process and its base URL.
struct Api {
    _proc: Proc,
    base: String,
}

/// `tokenql serve` on the primary, reading from the replica; waits until it answers.
async fn serve(primary: &str, replica: &str, log: &Path) -> Api {
    let port = pg::free_port();
    let bind = format!("127.0.0.1:{port}");
    let lag = MAX_LAG_MS.to_string();
    let args = [
        "serve",
        "--bind",
        &bind,
        "--database-read-url",
        replica,
        "--replica-max-lag-ms",
        &lag,
        "--replica-check-ms",
        "100",
        "--max-lag-blocks",
        "0",
        "--rate-limit",
        "0",
        "--offchain-workers",
        "false",
    ];
    let child = tokenql_cmd(primary, log, &args)
        .spawn()
        .expect("start tokenql serve");
    let api = Api {
        _proc: Proc { child },
        base: format!("http://{bind}"),
    };
    let client = reqwest::Client::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while client
        .get(format!("{}/healthz", api.base))
        .send()
        .await
        .is_err()
    {
        assert!(
            Instant::now() < deadline,
            "tokenql serve never answered:\n{}",
            tail(log)
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    api
}

/// The shared pieces of the scenarios.
struct World {
    cluster: pg::Cluster,
    chain: Anvil,
    token: String,
    wallets: Vec<String>,
    apis: Vec<Api>,
    key: String,
    primary: sea_orm::DatabaseConnection,
    client: reqwest::Client,
    _indexer: Proc,
    log: PathBuf,
}

/// The test database's name on both servers.
const DB: &str = "tq_repl";

impl World {
    async fn start() -> World {
        tokenql::tls::ensure_crypto_provider();
        let cluster = pg::Cluster::start();
        let admin = pg::connect(&cluster.primary.url("postgres")).await;
        pg::exec(&admin, &format!("CREATE DATABASE {DB}")).await;
        let url = cluster.primary.url(DB);
        let log = std::env::temp_dir().join(format!("tq_repl_{}.log", std::process::id()));
        let _ = std::fs::remove_file(&log);
        run(&url, &log, &["migrate"]);
        let out = run(&url, &log, &["keys", "create", "--name", "replication"]);
        let key = out.lines().last().expect("the key").trim().to_string();

        let chain = Anvil::start(WALLETS + 1, &[]).await;
        let token = chain
            .deploy("TestToken", token_ctor("Repl", "REP", 18))
            .await;
        let wallets: Vec<String> = chain.accounts[1..].to_vec();
        let owner = chain.accounts[0].clone();
        let mints: Vec<(String, String, Vec<u8>)> = wallets
            .iter()
            .map(|w| {
                let data = calldata(mintCall {
                    to: addr(w),
                    amount: u(1_000_000),
                });
                (owner.clone(), token.clone(), data)
            })
            .collect();
        let hashes = chain.send_batch(&mints).await;
        chain.wait_mined(&hashes).await;

        let rpc = format!("eth={}", chain.url);
        let indexer = tokenql_cmd(
            &url,
            &log,
            &[
                "index",
                "--rpc",
                &rpc,
                "--start-block",
                "eth=0",
                "--poll-interval-ms",
                "100",
            ],
        )
        .spawn()
        .expect("start tokenql index");
        let replica = cluster.replica.url(DB);
        let apis = vec![
            serve(&url, &replica, &log).await,
            serve(&url, &replica, &log).await,
        ];
        let primary = pg::connect(&url).await;
        World {
            cluster,
            chain,
            token,
            wallets,
            apis,
            key,
            primary,
            client: reqwest::Client::builder()
                .timeout(Duration::from_secs(30))
                .build()
                .expect("client"),
            _indexer: Proc { child: indexer },
            log,
        }
    }

    /// `n` transfers between pseudo-random wallets, each mined in its own block.
    async fn traffic(&self, rng: &mut Rng, n: usize) {
        let txs: Vec<(String, String, Vec<u8>)> = (0..n)
            .map(|_| {
                let from = self.wallets[rng.index(WALLETS)].clone();
                let mut to = self.wallets[rng.index(WALLETS)].clone();
                if to == from {
                    to = self.wallets
                        [(self.wallets.iter().position(|w| *w == from).unwrap_or(0) + 1) % WALLETS]
                        .clone();
                }
                let data = calldata(transferCall {
                    to: addr(&to),
                    amount: u(1 + rng.below(1_000)),
                });
                (from, self.token.clone(), data)
            })
            .collect();
        // One at a time: a batch with two transactions of one sender can leave one stuck
        // behind a nonce gap.
        let mut hashes = Vec::new();
        for (from, to, data) in txs {
            hashes.push(self.chain.send(&from, &to, data).await);
        }
        self.chain.wait_mined(&hashes).await;
    }

    /// Waits until the primary's indexer has stored the chain's head.
    async fn wait_indexed(&self) {
        let head = self.chain.head().await;
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let indexed = tokenql::entity::chain_state::Entity::find_by_id(1i64)
                .one(&self.primary)
                .await
                .expect("chain_state")
                .and_then(|s| s.indexed_block);
            if indexed == Some(head as i64) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "the indexer did not store head {head} (at {indexed:?}):\n{}",
                tail(&self.log)
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Every replica entry of every API process's `/readyz`.
    async fn replicas(&self) -> Vec<Value> {
        let mut out = Vec::new();
        for api in &self.apis {
            let v: Value = self
                .client
                .get(format!("{}/readyz", api.base))
                .send()
                .await
                .expect("readyz")
                .json()
                .await
                .expect("readyz json");
            out.extend(v["replicas"].as_array().cloned().unwrap_or_default());
        }
        out
    }

    /// Waits until every API process has the replica `in_rotation` (or not).
    async fn wait_rotation(&self, wanted: bool) {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let r = self.replicas().await;
            if r.len() == self.apis.len() && r.iter().all(|e| e["in_rotation"] == wanted) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "the replica's rotation never became {wanted}: {r:?}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// One REST page of `wallet`'s transfers from `api`: (HTTP status, body).
    async fn page(
        &self,
        api: usize,
        wallet: &str,
        limit: u64,
        cursor: Option<&str>,
    ) -> (u16, Value) {
        let mut url = format!(
            "{}/api/v2.2/erc20/transfers?chain=eth&wallet_addresses%5B%5D={wallet}&limit={limit}",
            self.apis[api].base
        );
        if let Some(c) = cursor {
            url.push_str(&format!("&cursor={c}"));
        }
        let resp = self
            .client
            .get(&url)
            .header("X-API-Key", &self.key)
            .send()
            .await
            .expect("request");
        let status = resp.status().as_u16();
        (status, resp.json().await.unwrap_or(Value::Null))
    }

    /// Walks `wallet`'s transfers in pages of `limit`, alternating between the API processes;
    /// every record must come once. Returns the records and each page's status.
    async fn walk(&self, wallet: &str, limit: u64) -> (Records, Vec<String>) {
        let (mut records, mut statuses) = (Records::new(), Vec::new());
        let mut cursor: Option<String> = None;
        for page in 0.. {
            let (code, body) = self
                .page(page % self.apis.len(), wallet, limit, cursor.as_deref())
                .await;
            assert_eq!(code, 200, "page {page} of {wallet}: {body}");
            statuses.push(body["status"].as_str().unwrap_or_default().to_string());
            for r in body["result"].as_array().expect("result") {
                let (key, rec) = record(r);
                assert!(
                    records.insert(key.clone(), rec).is_none(),
                    "{key:?} returned twice in a walk of {wallet}"
                );
            }
            cursor = body["cursor"]
                .as_str()
                .filter(|c| !c.is_empty())
                .map(String::from);
            if cursor.is_none() {
                break;
            }
        }
        (records, statuses)
    }

    /// `wallet`'s transfers over GraphQL from `api`, with the connection's status.
    async fn graphql(&self, api: usize, wallet: &str) -> (Records, String) {
        let query = "query($w: [Address!]) { erc20Transfers(chain: \"eth\", walletAddresses: $w, first: 100) \
                     { status pageInfo { hasNextPage } edges { node { fromWallet toWallet value transactionHash logIndex } } } }";
        let v: Value = self
            .client
            .post(format!("{}/graphql", self.apis[api].base))
            .header("X-API-Key", &self.key)
            .json(&json!({"query": query, "variables": {"w": [wallet]}}))
            .send()
            .await
            .expect("graphql")
            .json()
            .await
            .expect("graphql json");
        let conn = &v["data"]["erc20Transfers"];
        assert_eq!(conn["pageInfo"]["hasNextPage"], false, "one page: {v}");
        let mut out = Records::new();
        for e in conn["edges"]
            .as_array()
            .unwrap_or_else(|| panic!("edges: {v}"))
        {
            let n = &e["node"];
            let s = |k: &str| n[k].as_str().unwrap_or_default().to_lowercase();
            out.insert(
                (
                    s("transactionHash"),
                    n["logIndex"].as_u64().expect("logIndex"),
                ),
                (s("fromWallet"), s("toWallet"), s("value")),
            );
        }
        (out, conn["status"].as_str().unwrap_or_default().to_string())
    }

    /// The chain's transfers of `wallet` now.
    async fn truth(&self, wallet: &str) -> Records {
        chain_erc20(&self.chain, std::slice::from_ref(&self.token))
            .await
            .into_iter()
            .filter(|(_, (_, f, t, _))| f == wallet || t == wallet)
            .map(|(k, (_, f, t, v))| (k, (f, t, v)))
            .collect()
    }
}

/// A REST record's key and fields.
fn record(r: &Value) -> (Key, (String, String, String)) {
    let s = |k: &str| r[k].as_str().unwrap_or_default().to_lowercase();
    let li = s("log_index").parse().expect("log_index");
    (
        (s("transaction_hash"), li),
        (s("from_wallet"), s("to_wallet"), s("value")),
    )
}

/// Runs `tokenql ARGS` on `url` to completion; its stdout.
fn run(url: &str, log: &Path, args: &[&str]) -> String {
    let out = tokenql_cmd(url, log, args)
        .stdout(std::process::Stdio::piped())
        .output()
        .expect("run tokenql");
    assert!(
        out.status.success(),
        "tokenql {args:?}: {}\n{}",
        out.status,
        tail(log)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[tokio::test]
async fn replicas_serve_exact_answers_and_never_claim_synced_when_behind() {
    let mut rng = Rng(0x5ca1_e0a5_u64);
    let w = World::start().await;
    w.traffic(&mut rng, 40).await;
    w.wait_indexed().await;
    w.cluster.wait_replayed(Duration::from_secs(30)).await;
    w.wait_rotation(true).await;

    caught_up_answers_are_exact(&w).await;
    paused_replay_never_claims_synced(&w, &mut rng).await;
    a_stopped_replica_costs_no_answer(&w).await;
    late_replica_answers_are_exact_as_of_their_block(&w).await;
    let _ = std::fs::remove_file(&w.log);
}

/// 1: exact answers from the replica, and walks across the two processes.
async fn caught_up_answers_are_exact(w: &World) {
    for wallet in w.wallets.iter().take(4) {
        let truth = w.truth(wallet).await;
        assert!(truth.len() > 5, "{wallet} has transfers to page through");
        let (walked, statuses) = w.walk(wallet, 3).await;
        assert_eq!(walked, truth, "REST walk of {wallet} across both processes");
        assert!(
            statuses.iter().all(|s| s == "SYNCED"),
            "{wallet}: {statuses:?}"
        );
        for api in 0..w.apis.len() {
            let (records, status) = w.graphql(api, wallet).await;
            assert_eq!(records, truth, "GraphQL of {wallet} from process {api}");
            assert_eq!(status, "SYNCED", "GraphQL of {wallet}");
        }
    }
}

/// 2: replay paused while the chain moves on.
async fn paused_replay_never_claims_synced(w: &World, rng: &mut Rng) {
    let replica = pg::connect(&w.cluster.replica.url("postgres")).await;
    pg::exec(&replica, "SELECT pg_wal_replay_pause()").await;
    w.traffic(rng, 12).await;
    w.wait_indexed().await;
    let truths: Vec<(String, Records)> = {
        let mut t = Vec::new();
        for wallet in w.wallets.iter().take(3) {
            t.push((wallet.clone(), w.truth(wallet).await));
        }
        t
    };
    // Ask until well past the moment the replica leaves rotation.
    let (mut stale, mut exact) = (0u32, 0u32);
    let until = Instant::now() + Duration::from_millis(MAX_LAG_MS * 2 + 1_000);
    let mut i = 0usize;
    while Instant::now() < until {
        let (wallet, truth) = &truths[i % truths.len()];
        let (code, body) = w.page(i % w.apis.len(), wallet, 100, None).await;
        assert_eq!(code, 200, "{body}");
        let got: Records = body["result"]
            .as_array()
            .expect("result")
            .iter()
            .map(record)
            .collect();
        match body["status"].as_str() {
            Some("SYNCED") => {
                assert_eq!(
                    &got, truth,
                    "a SYNCED answer with records missing ({wallet})"
                );
                exact += 1;
            }
            Some("SYNCING") => {
                assert!(
                    got.keys().all(|k| truth.contains_key(k)),
                    "{wallet}: invented records"
                );
                if got != *truth {
                    stale += 1;
                }
            }
            other => panic!("status {other:?}: {body}"),
        }
        i += 1;
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        stale > 0,
        "no stale answer was seen: were reads on the replica? ({exact} exact)"
    );
    let r = w.replicas().await;
    assert!(
        r.iter()
            .all(|e| e["in_rotation"] == false && e["lag_ms"].as_u64() > Some(MAX_LAG_MS)),
        "a replica {MAX_LAG_MS} ms behind must leave rotation: {r:?}"
    );
    let metrics = w
        .client
        .get(format!("{}/metrics", w.apis[0].base))
        .send()
        .await
        .expect("metrics")
        .text()
        .await
        .expect("metrics text");
    assert!(
        metrics
            .lines()
            .any(|l| l.starts_with("tokenql_replica_in_rotation{") && l.ends_with(" 0")),
        "/metrics shows the replica out of rotation"
    );
    // Out of rotation: every answer exact and SYNCED, from the primary.
    for (wallet, truth) in &truths {
        for api in 0..w.apis.len() {
            let (_, body) = w.page(api, wallet, 100, None).await;
            let got: Records = body["result"]
                .as_array()
                .expect("result")
                .iter()
                .map(record)
                .collect();
            assert_eq!((&got, body["status"].as_str()), (truth, Some("SYNCED")));
        }
    }
    pg::exec(&replica, "SELECT pg_wal_replay_resume()").await;
    w.cluster.wait_replayed(Duration::from_secs(30)).await;
    w.wait_rotation(true).await;
    for (wallet, truth) in &truths {
        let (walked, statuses) = w.walk(wallet, 4).await;
        assert_eq!(&walked, truth, "after resuming, {wallet}");
        assert!(statuses.iter().all(|s| s == "SYNCED"), "{statuses:?}");
    }
    eprintln!(
        "replication: paused replay: {stale} stale answers said SYNCING, {exact} exact SYNCED"
    );
}

/// 3: the replica stopped under load, then restarted.
async fn a_stopped_replica_costs_no_answer(w: &World) {
    let wallet = w.wallets[0].clone();
    let truth = w.truth(&wallet).await;
    let (ok, server_errors, other) = (
        Arc::new(AtomicU64::new(0)),
        Arc::new(AtomicU64::new(0)),
        Arc::new(AtomicU64::new(0)),
    );
    let until = Instant::now() + Duration::from_secs(5);
    let mut tasks = Vec::new();
    for api in &w.apis {
        for _ in 0..3 {
            let url = format!(
                "{}/api/v2.2/erc20/transfers?chain=eth&wallet_addresses%5B%5D={wallet}&limit=100",
                api.base
            );
            let (client, key) = (w.client.clone(), w.key.clone());
            let (ok, errs, other, truth) = (
                ok.clone(),
                server_errors.clone(),
                other.clone(),
                truth.clone(),
            );
            tasks.push(tokio::spawn(async move {
                while Instant::now() < until {
                    let resp = client.get(&url).header("X-API-Key", &key).send().await;
                    let Ok(resp) = resp else {
                        other.fetch_add(1, Ordering::Relaxed);
                        continue;
                    };
                    let code = resp.status().as_u16();
                    let body: Value = resp.json().await.unwrap_or(Value::Null);
                    if code >= 500 {
                        errs.fetch_add(1, Ordering::Relaxed);
                    } else if code == 200 {
                        let got: Records = body["result"]
                            .as_array()
                            .map_or_else(Records::new, |a| a.iter().map(record).collect());
                        assert_eq!(got, truth, "answers stay exact while the replica stops");
                        ok.fetch_add(1, Ordering::Relaxed);
                    } else {
                        other.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }));
        }
    }
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    w.cluster.replica.stop();
    for t in tasks {
        t.await.expect("client task");
    }
    let (ok, errs, other) = (
        ok.load(Ordering::Relaxed),
        server_errors.load(Ordering::Relaxed),
        other.load(Ordering::Relaxed),
    );
    assert_eq!(
        (errs, other),
        (0, 0),
        "while the replica stopped: {ok} answers, {errs} 5xx, {other} other"
    );
    assert!(ok > 50, "answers kept coming: {ok}");
    let r = w.replicas().await;
    assert!(
        r.iter()
            .all(|e| e["up"] == false && e["in_rotation"] == false),
        "{r:?}"
    );
    w.cluster.replica.start();
    w.wait_rotation(true).await;
    let (walked, _) = w.walk(&wallet, 10).await;
    assert_eq!(walked, truth, "after the replica's restart");
    let names: BTreeSet<String> = r
        .iter()
        .filter_map(|e| e["name"].as_str().map(String::from))
        .collect();
    eprintln!("replication: replica stopped under load: {ok} answers, 0 5xx; rejoined ({names:?})");
}

/// 4: a replica applying commits late, under load while the chain moves.
async fn late_replica_answers_are_exact_as_of_their_block(w: &World) {
    w.cluster
        .replica
        .configure("recovery_min_apply_delay = '150ms'\n");
    w.wait_rotation(true).await;
    let until = Instant::now() + LATE_LOAD;
    let bases: Vec<String> = w.apis.iter().map(|a| a.base.clone()).collect();
    let (sent, seen) = tokio::join!(
        traffic(
            &w.chain,
            &w.token,
            &w.wallets,
            Duration::from_millis(300),
            until
        ),
        ask_under_load(&bases, &w.key, &w.wallets, &w.token, &w.primary, 8, until),
    );
    let truth = chain_moves(&w.chain, &w.token).await;
    let (synced, bad) = broken(&seen, &truth);
    assert!(
        bad.is_empty(),
        "{} of {synced} SYNCED answers are not the chain as of their block:\n{}",
        bad.len(),
        bad.join("\n")
    );
    let syncing = seen.len() - synced;
    assert!(
        sent > 20 && synced > 100 && syncing > 0,
        "too little happened to mean anything: {sent} blocks, {synced} SYNCED and {syncing} \
         SYNCING answers (none SYNCING: were reads on the late replica?)"
    );
    eprintln!(
        "replication: late replica: {} answers while {sent} blocks landed, {synced} SYNCED (all \
         exact as of their block), {syncing} SYNCING",
        seen.len()
    );
}
