//! History on demand: time from a wallet's or a contract's first request to `SYNCED`, on a chain
//! of 1,000,000 blocks that tokenql joined at the head, next to the time raw `eth_getLogs` takes
//! for the same logs in the same run.
//!
//! ```text
//! cargo bench --bench history                                   # SQLite
//! cargo bench --bench history -- --backends sqlite,postgres     # or TOKENQL_BENCH_BACKENDS
//! ```
//!
//! 1. Starts anvil (`tools/chain/...` or `$TOKENQL_ANVIL`) with `--hardfork cancun
//!    --prune-history`: anvil 1.7.1 under Prague rebuilds the EIP-2935 history contract's whole
//!    storage trie for every block, so mining grows with the chain's length (~2,000 blocks cost
//!    26 s of CPU at height 7,000); before Prague a million empty blocks take seconds.
//! 2. Deploys three `HistoryToken`s (`tests/fixtures/contracts/HistoryToken.json`) and builds the
//!    history in `BURSTS` bursts, one block each, with `anvil_mine` jumps of `GAP` blocks between
//!    them (blocks ~4 .. ~1,000,004): per burst the busy contract emits 1,000 transfers between
//!    fresh addresses (`emitTransfers`), and the three wallets 100, 10 and 1 of their own
//!    (`emitWalletTransfers`, alternately sent and received, on the two other tokens in turn).
//!    Totals: wallets of 100, 1,000 and 10,000 transfers and a contract of 100,000, all real ERC20
//!    `Transfer(address indexed, address indexed, uint256)` logs.
//! 3. Per run and backend: a fresh, migrated database (SQLite: a temporary file; PostgreSQL
//!    `$TOKENQL_TEST_POSTGRES_URL`, default `postgres://postgres@127.0.0.1:5432`, and MariaDB
//!    `$TOKENQL_TEST_MYSQL_URL`: a `tq_hist_*` database dropped afterwards), a key without a rate
//!    limit, and the release binary `tokenql serve --rpc eth=ANVIL` with every other setting at
//!    its default (start block = the head, 4 history workers, 5 s slices, 10,000-block initial
//!    range). Its log goes to `target/history-bench/`.
//! 4. One scope at a time (the 100-, 1k- and 10k-transfer wallets, then the contract):
//!    - **raw, split**: the `eth_getLogs` calls the history fetch makes, over `[0, start)`, in
//!      the ranges it uses (`RangeSizer` from `--max-log-range` up to 100,000 blocks), one after
//!      the other, through the indexer's own RPC client (`Rpc::wallet_logs`: three topic filters
//!      per range, merged; `Rpc::transfer_logs` with the contract's address);
//!    - **tokenql**: `GET /api/v2/erc20/transfers?chain=eth&wallet_addresses=W` (or
//!      `contract_addresses=C`), then the same request every 20 ms until it answers
//!      `"status":"SYNCED"`; the time from the first request to that answer. A side task reads
//!      the scope's `scope_sync` row every 10 ms to split it into: waiting to be claimed, the
//!      fetch, and the answer catching up;
//!    - **raw, one call**: the same filters over `[0, start)` as a single range.
//!
//!    Then every page of the answer is walked and its records counted, and must equal the raw
//!    count, which must equal the number of transfers made.
//!
//! Knobs: `TOKENQL_BENCH_RUNS` (default 3; figures are medians), `TOKENQL_BENCH_BACKENDS` or
//! `--backends` (`sqlite`, `postgres`, `mysql`; default `sqlite`), `TOKENQL_BENCH_SERVER_LOG`
//! (the server's `RUST_LOG`, default `info,sqlx=warn,sea_orm=warn`), `--server-bin PATH` (another
//! build of the server). See `docs/BENCHMARKS.md`.
#![allow(clippy::print_stdout)] // the report is this program's output

#[path = "../tests/support/anvil.rs"]
mod anvil;

#[path = "../tests/support/common/db_url.rs"]
mod db_url;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use alloy::primitives::Address as A;
use alloy::sol;
use alloy::sol_types::SolValue;
use anyhow::{bail, Context};
use sea_orm::{ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, QueryFilter};
use serde_json::{json, Value};

use tokenql::entity::{chain_state, scope_sync};
use tokenql::indexer::range::RangeSizer;
use tokenql::indexer::rpc::Rpc;
use tokenql::indexer::ChainConfig;
use tokenql::types::{Address, Chain};

use anvil::{calldata, emitTransfersCall, u, Anvil};
use db_url::split_server_url;

sol! {
    function emitWalletTransfers(address wallet, uint256 seed, uint256 n);
}

/// Bursts of transactions, one block each.
const BURSTS: u64 = 100;
/// Blocks from one burst to the next.
const GAP: u64 = 10_000;
/// The busy contract's transfers per burst.
const CONTRACT_PER_BURST: u64 = 1_000;
/// The wallets (label, address, transfers per burst).
const WALLETS: [(&str, &str, u64); 3] = [
    (
        "wallet 100",
        "0xa100000000000000000000000000000000000100",
        1,
    ),
    (
        "wallet 1k",
        "0xa100000000000000000000000000000000001000",
        10,
    ),
    (
        "wallet 10k",
        "0xa100000000000000000000000000000000010000",
        100,
    ),
];
/// First address of the busy contract's counterparties (`emitTransfers`).
const CONTRACT_BASE: u64 = 1 << 40;
/// First address of the wallets' counterparties (`emitWalletTransfers`).
const COUNTERPARTY_BASE: u64 = 1 << 48;
/// How often the client asks again while the answer says `SYNCING`.
const POLL: Duration = Duration::from_millis(20);

fn env_or(name: &str, default: &str) -> String {
    match std::env::var(name) {
        Ok(v) if !v.trim().is_empty() => v.trim().to_string(),
        _ => default.to_string(),
    }
}

fn quantity(v: &Value) -> anyhow::Result<u64> {
    let s = v.as_str().context("expected a hex quantity")?;
    Ok(u64::from_str_radix(s.trim_start_matches("0x"), 16)?)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

// ---------------------------------------------------------------------------------------------
// The chain

/// What to ask about: a wallet or a contract, and how many transfers it has.
#[derive(Debug, Clone)]
struct Target {
    label: String,
    kind: &'static str,
    address: String,
    transfers: u64,
}

/// Builds the 1M-block history; returns the scopes to ask about.
async fn build_chain(anvil: &Anvil) -> anyhow::Result<Vec<Target>> {
    let ctor = |name: &str| ("History".to_string(), name.to_string()).abi_encode_params();
    let busy = anvil.deploy("HistoryToken", ctor("BUSY")).await;
    let tokens = [
        anvil.deploy("HistoryToken", ctor("HISA")).await,
        anvil.deploy("HistoryToken", ctor("HISB")).await,
    ];
    let from = anvil.accounts[0].clone();
    let client = {
        tokenql::tls::ensure_crypto_provider();
        reqwest::Client::new()
    };
    let mut nonce = quantity(
        &anvil
            .rpc("eth_getTransactionCount", json!([from, "pending"]))
            .await,
    )?;
    // ~2,100 gas per log, and room to spare.
    let gas = |logs: u64| 60_000 + 3_000 * logs;
    for b in 0..BURSTS {
        let mut txs: Vec<(String, Vec<u8>, u64)> = vec![(
            busy.clone(),
            calldata(emitTransfersCall {
                start: u(CONTRACT_BASE + b * CONTRACT_PER_BURST),
                n: u(CONTRACT_PER_BURST),
            }),
            gas(CONTRACT_PER_BURST),
        )];
        for (i, (_, wallet, per_burst)) in WALLETS.iter().enumerate() {
            let seed = COUNTERPARTY_BASE + ((i as u64) << 32) + b * 1_000;
            txs.push((
                tokens[(b % 2) as usize].clone(),
                calldata(emitWalletTransfersCall {
                    wallet: wallet.parse::<A>()?,
                    seed: u(seed),
                    n: u(*per_burst),
                }),
                gas(*per_burst),
            ));
        }
        let body: Vec<Value> = txs
            .iter()
            .enumerate()
            .map(|(i, (to, data, gas))| {
                let n = nonce + i as u64;
                json!({"jsonrpc": "2.0", "id": i, "method": "eth_sendTransaction",
                       "params": [{"from": from, "to": to, "data": anvil::hex(data),
                                   "gas": format!("{gas:#x}"), "nonce": format!("{n:#x}")}]})
            })
            .collect();
        nonce += txs.len() as u64;
        let replies: Vec<Value> = client
            .post(&anvil.url)
            .json(&body)
            .send()
            .await?
            .json()
            .await?;
        for r in &replies {
            if let Some(e) = r.get("error") {
                bail!("eth_sendTransaction: {e}");
            }
        }
        // The burst's block, then the jump to the next burst.
        anvil.mine(1).await;
        anvil.mine(GAP - 1).await;
    }
    let head = anvil.head().await;
    let mut targets: Vec<Target> = WALLETS
        .iter()
        .map(|(label, address, per_burst)| Target {
            label: (*label).to_string(),
            kind: "wallet",
            address: (*address).to_string(),
            transfers: per_burst * BURSTS,
        })
        .collect();
    targets.push(Target {
        label: "contract 100k".to_string(),
        kind: "contract",
        address: busy,
        transfers: CONTRACT_PER_BURST * BURSTS,
    });
    println!(
        "chain: blocks 0..={head}; {BURSTS} bursts {GAP} blocks apart; {} transfers",
        targets.iter().map(|t| t.transfers).sum::<u64>()
    );
    Ok(targets)
}

// ---------------------------------------------------------------------------------------------
// Raw eth_getLogs

/// The chain's configuration as the server runs it: every default.
fn chain_config(rpc_url: &str) -> ChainConfig {
    ChainConfig::new(Chain::ETH, rpc_url)
}

/// A raw pass over `[0, start)`: (logs, seconds, eth_getLogs calls). `split`: the ranges of
/// the history fetch; otherwise one range.
async fn raw_pass(
    rpc_url: &str,
    target: &Target,
    start: u64,
    split: bool,
) -> anyhow::Result<(u64, f64, u64)> {
    let cfg = chain_config(rpc_url);
    let rpc = Rpc::new(rpc_url, cfg.request_timeout, cfg.retry)?;
    let address = Address::parse(&target.address).map_err(|e| anyhow::anyhow!("{e:?}"))?;
    let mut sizer = RangeSizer::new(cfg.max_range, 1, cfg.max_range.max(100_000));
    let per_range = if target.kind == "wallet" { 3 } else { 1 };
    let t = Instant::now();
    let (mut from, mut logs, mut calls) = (0u64, 0u64, 0u64);
    while from < start {
        let to = if split {
            (from + sizer.size() - 1).min(start - 1)
        } else {
            start - 1
        };
        let got = if target.kind == "wallet" {
            rpc.wallet_logs(from, to, address).await
        } else {
            rpc.transfer_logs(from, to, Some(address)).await
        }
        .map_err(|e| anyhow::anyhow!("eth_getLogs: {e}"))?;
        sizer.success();
        logs += got.len() as u64;
        calls += per_range;
        from = to + 1;
    }
    Ok((logs, t.elapsed().as_secs_f64(), calls))
}

// ---------------------------------------------------------------------------------------------
// Databases

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Backend {
    Sqlite,
    Postgres,
    Mysql,
}

impl Backend {
    fn name(self) -> &'static str {
        match self {
            Backend::Sqlite => "sqlite",
            Backend::Postgres => "postgres",
            Backend::Mysql => "mysql",
        }
    }

    fn server(self) -> Option<String> {
        match self {
            Backend::Sqlite => None,
            Backend::Postgres => Some(env_or(
                "TOKENQL_TEST_POSTGRES_URL",
                "postgres://postgres@127.0.0.1:5432",
            )),
            Backend::Mysql => Some(env_or(
                "TOKENQL_TEST_MYSQL_URL",
                "mysql://root@127.0.0.1:3306",
            )),
        }
    }

    fn admin_url(self, server: &str) -> String {
        let (server, query) = split_server_url(server);
        match self {
            Backend::Postgres => format!("{server}/postgres{query}"),
            _ => format!("{server}{query}"),
        }
    }
}

/// A database made for one run; [`BenchDb::drop_db`] removes it.
enum BenchDb {
    Sqlite(PathBuf),
    Server {
        backend: Backend,
        admin_url: String,
        name: String,
    },
}

impl BenchDb {
    /// Creates a fresh, migrated database; returns it and its URL.
    async fn create(backend: Backend, run: usize) -> anyhow::Result<(BenchDb, String)> {
        let secs = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let name = format!("tq_hist_{secs}_{}_{run}", std::process::id());
        let (handle, url) = match backend.server() {
            None => {
                let path = std::env::temp_dir().join(format!("{name}.db"));
                let url = format!("sqlite://{}?mode=rwc", path.display());
                (BenchDb::Sqlite(path), url)
            }
            Some(server) => {
                let admin_url = backend.admin_url(&server);
                let admin = tokio::time::timeout(
                    Duration::from_secs(5),
                    tokenql::store::database::connect(&admin_url, 1),
                )
                .await
                .with_context(|| format!("{server}: no answer within 5 s"))?
                .with_context(|| format!("connecting to {server}"))?;
                admin
                    .execute_unprepared(&format!("CREATE DATABASE {name}"))
                    .await?;
                let _ = admin.close().await;
                let (server, query) = split_server_url(&server);
                (
                    BenchDb::Server {
                        backend,
                        admin_url,
                        name: name.clone(),
                    },
                    format!("{server}/{name}{query}"),
                )
            }
        };
        let db = tokenql::store::database::connect(&url, 2).await?;
        {
            use migration::MigratorTrait;
            migration::Migrator::up(&db, None).await?;
        }
        let _ = db.close().await;
        Ok((handle, url))
    }

    async fn drop_db(self) -> anyhow::Result<()> {
        match self {
            BenchDb::Sqlite(path) => {
                for suffix in ["", "-wal", "-shm"] {
                    let mut p = path.clone().into_os_string();
                    p.push(suffix);
                    let _ = std::fs::remove_file(p);
                }
            }
            BenchDb::Server {
                backend,
                admin_url,
                name,
            } => {
                let admin = tokenql::store::database::connect(&admin_url, 1).await?;
                let sql = match backend {
                    Backend::Postgres => format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"),
                    _ => format!("DROP DATABASE IF EXISTS {name}"),
                };
                admin.execute_unprepared(&sql).await?;
                let _ = admin.close().await;
            }
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// The server

struct Server {
    child: Child,
    base: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn start_server(
    bin: &Path,
    db_url: &str,
    rpc_url: &str,
    log: &Path,
) -> anyhow::Result<Server> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let log_file = std::fs::File::create(log)?;
    let child = Command::new(bin)
        .args([
            "--database-url",
            db_url,
            "serve",
            "--bind",
            &format!("127.0.0.1:{port}"),
            "--rpc",
            &format!("eth={rpc_url}"),
        ])
        .env(
            "RUST_LOG",
            env_or("TOKENQL_BENCH_SERVER_LOG", "info,sqlx=warn,sea_orm=warn"),
        )
        .stdout(Stdio::null())
        .stderr(log_file)
        .spawn()
        .with_context(|| format!("starting {}", bin.display()))?;
    let server = Server {
        child,
        base: format!("http://127.0.0.1:{port}"),
    };
    let client = reqwest::Client::new();
    for _ in 0..300 {
        if let Ok(r) = client.get(format!("{}/healthz", server.base)).send().await {
            if r.status().is_success() {
                return Ok(server);
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    bail!(
        "the server did not answer /healthz within 30 s (log: {})",
        log.display()
    )
}

/// Waits until the live indexer has stored the head; returns the live start block.
async fn live_start(db: &DatabaseConnection, head: u64) -> anyhow::Result<u64> {
    let t = Instant::now();
    loop {
        let s = chain_state::Entity::find_by_id(Chain::ETH.db_id())
            .one(db)
            .await?;
        if let Some(s) = s {
            if let (Some(start), Some(indexed)) = (s.start_block, s.indexed_block) {
                if indexed >= head as i64 {
                    return Ok(start as u64);
                }
            }
        }
        if t.elapsed() > Duration::from_secs(120) {
            bail!("the live indexer did not reach the head within 120 s");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

// ---------------------------------------------------------------------------------------------
// One scope, one run

/// What one scope's run measured.
#[derive(Debug, Clone)]
struct Measure {
    /// First request to the first `SYNCED` answer.
    synced: f64,
    /// First request to the scope seen `syncing` (claimed by a worker).
    claimed: Option<f64>,
    /// First request to the scope seen `synced` in the database.
    stored: Option<f64>,
    raw_split: f64,
    raw_split_calls: u64,
    raw_one: f64,
    /// The server's `eth_getLogs` requests for the scope.
    server_calls: u64,
    /// CPU seconds of anvil, of the server: raw split pass, tokenql.
    cpu: [(f64, f64); 2],
}

fn transfers_path(t: &Target, cursor: Option<&str>) -> String {
    let param = if t.kind == "wallet" {
        "wallet_addresses"
    } else {
        "contract_addresses"
    };
    let mut p = format!(
        "/api/v2/erc20/transfers?chain=eth&{param}={}&limit=100",
        t.address
    );
    if let Some(c) = cursor {
        p.push_str("&cursor=");
        p.push_str(&form_urlencoded::byte_serialize(c.as_bytes()).collect::<String>());
    }
    p
}

async fn get(client: &reqwest::Client, base: &str, key: &str, path: &str) -> anyhow::Result<Value> {
    let r = client
        .get(format!("{base}{path}"))
        .header("X-API-Key", key)
        .send()
        .await?;
    let status = r.status();
    let body = r.text().await?;
    if !status.is_success() {
        bail!("GET {path}: {status}: {body}");
    }
    Ok(serde_json::from_str(&body)?)
}

/// CPU seconds used so far by process `pid` (user + system, from `/proc`).
fn cpu_secs(pid: u32) -> f64 {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return 0.0;
    };
    // Fields after the command name, which is in parentheses: utime and stime are 14 and 15.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = [11, 12]
        .iter()
        .filter_map(|&i| f.get(i)?.parse::<f64>().ok())
        .sum();
    ticks / 100.0
}

/// This program's child named `anvil`.
fn anvil_pid() -> Option<u32> {
    let me = std::process::id().to_string();
    std::fs::read_dir("/proc").ok()?.find_map(|e| {
        let pid: u32 = e.ok()?.file_name().to_str()?.parse().ok()?;
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let (head, rest) = stat.rsplit_once(')')?;
        let ppid = rest.split_whitespace().nth(1)?;
        (head.ends_with("(anvil") && ppid == me).then_some(pid)
    })
}

/// The server's `eth_getLogs` requests so far (`/metrics`).
async fn server_get_logs(client: &reqwest::Client, base: &str) -> anyhow::Result<u64> {
    let text = client
        .get(format!("{base}/metrics"))
        .send()
        .await?
        .text()
        .await?;
    Ok(text
        .lines()
        .filter(|l| l.starts_with("tokenql_rpc_requests_total{") && l.contains("\"eth_getLogs\""))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum::<f64>() as u64)
}

/// The scope's row, if any.
async fn scope_state(db: &DatabaseConnection, t: &Target) -> Option<String> {
    scope_sync::Entity::find()
        .filter(scope_sync::Column::ChainId.eq(Chain::ETH.db_id()))
        .filter(scope_sync::Column::Scope.eq(t.kind))
        .filter(scope_sync::Column::Address.eq(t.address.as_str()))
        .one(db)
        .await
        .ok()
        .flatten()
        .map(|m| m.state)
}

/// First request to `SYNCED`, with the side task's split; then checks every page.
async fn time_scope(
    client: &reqwest::Client,
    base: &str,
    key: &str,
    db: &DatabaseConnection,
    t: &Target,
) -> anyhow::Result<(f64, u64, Option<f64>, Option<f64>)> {
    let path = transfers_path(t, None);
    let (stop_tx, mut stop_rx) = tokio::sync::watch::channel(false);
    let t0 = Instant::now();
    let watcher = {
        let (db, t) = (db.clone(), t.clone());
        tokio::spawn(async move {
            let (mut claimed, mut stored) = (None, None);
            loop {
                match scope_state(&db, &t).await.as_deref() {
                    Some("syncing") if claimed.is_none() => {
                        claimed = Some(t0.elapsed().as_secs_f64())
                    }
                    Some("synced") => {
                        stored = Some(t0.elapsed().as_secs_f64());
                        break;
                    }
                    _ => {}
                }
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_millis(10)) => {}
                    _ = stop_rx.changed() => break,
                }
            }
            (claimed, stored)
        })
    };
    let mut requests = 0u64;
    let synced = loop {
        let v = get(client, base, key, &path).await?;
        requests += 1;
        if v["status"] == "SYNCED" {
            break t0.elapsed().as_secs_f64();
        }
        if t0.elapsed() > Duration::from_secs(1800) {
            bail!("{}: not SYNCED within 30 min", t.label);
        }
        tokio::time::sleep(POLL).await;
    };
    let _ = stop_tx.send(true);
    let (claimed, stored) = watcher.await?;
    Ok((synced, requests, claimed, stored))
}

/// Walks every page of the scope's answer: (records, distinct (tx, log index)).
async fn count_pages(
    client: &reqwest::Client,
    base: &str,
    key: &str,
    t: &Target,
) -> anyhow::Result<(u64, u64)> {
    let mut seen = std::collections::HashSet::new();
    let mut records = 0u64;
    let mut cursor: Option<String> = None;
    loop {
        let v = get(client, base, key, &transfers_path(t, cursor.as_deref())).await?;
        if v["status"] != "SYNCED" {
            bail!("{}: a page said {}", t.label, v["status"]);
        }
        let page = v["result"].as_array().context("result")?;
        for r in page {
            records += 1;
            seen.insert(format!("{}:{}", r["transaction_hash"], r["log_index"]));
        }
        match v["cursor"].as_str() {
            Some(c) if !c.is_empty() && !page.is_empty() => cursor = Some(c.to_string()),
            _ => break,
        }
    }
    Ok((records, seen.len() as u64))
}

/// One run on a fresh database and server: every scope, one at a time.
async fn run_once(
    backend: Backend,
    run: usize,
    bin: &Path,
    rpc_url: &str,
    head: u64,
    targets: &[Target],
) -> anyhow::Result<Vec<Measure>> {
    let (handle, url) = BenchDb::create(backend, run).await?;
    let result = async {
        let db = tokenql::store::database::connect(&url, 2).await?;
        let (_, key) = tokenql::keys::create_with_rate(
            &db,
            "history-bench",
            tokenql::keys::KeyRate {
                per_sec: Some(0),
                burst: None,
            },
        )
        .await?;
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/history-bench");
        std::fs::create_dir_all(&dir)?;
        let log = dir.join(format!("server-{}-{run}.log", backend.name()));
        let server = start_server(bin, &url, rpc_url, &log).await?;
        let start = live_start(&db, head).await?;
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(60))
            .build()?;
        let anvil = anvil_pid().context("anvil's pid")?;
        let cpu = || (cpu_secs(anvil), cpu_secs(server.child.id()));
        let mut out = Vec::new();
        for t in targets {
            let c0 = cpu();
            let (n, raw_split, raw_split_calls) = raw_pass(rpc_url, t, start, true).await?;
            let c1 = cpu();
            if n != t.transfers {
                bail!("{}: eth_getLogs found {n} logs, {} were made", t.label, t.transfers);
            }
            let calls_before = server_get_logs(&client, &server.base).await?;
            let (synced, requests, claimed, stored) =
                time_scope(&client, &server.base, &key, &db, t).await?;
            let server_calls = server_get_logs(&client, &server.base).await? - calls_before;
            let c2 = cpu();
            let (n1, raw_one, _) = raw_pass(rpc_url, t, start, false).await?;
            if n1 != t.transfers {
                bail!("{}: one eth_getLogs found {n1} logs", t.label);
            }
            let (records, distinct) = count_pages(&client, &server.base, &key, t).await?;
            if records != t.transfers || distinct != t.transfers {
                bail!(
                    "{}: the SYNCED answer has {records} records ({distinct} distinct), the chain {}",
                    t.label,
                    t.transfers
                );
            }
            let cpu = [(c1.0 - c0.0, c1.1 - c0.1), (c2.0 - c1.0, c2.1 - c1.1)];
            println!(
                "  {} run {run} {:<14} CPU s anvil/server: raw split {:.1}/{:.1}, tokenql {:.1}/{:.1}",
                backend.name(),
                t.label,
                cpu[0].0,
                cpu[0].1,
                cpu[1].0,
                cpu[1].1
            );
            println!(
                "  {} run {run} {:<14} SYNCED after {synced:>7.3} s ({requests} requests, {server_calls} eth_getLogs; claimed {}, stored {}) | raw split {raw_split:.3} s ({raw_split_calls} calls), one call {raw_one:.3} s | {records} records checked",
                backend.name(),
                t.label,
                fmt_opt(claimed),
                fmt_opt(stored),
            );
            out.push(Measure {
                synced,
                claimed,
                stored,
                raw_split,
                raw_split_calls,
                raw_one,
                server_calls,
                cpu,
            });
        }
        drop(server);
        let _ = db.close().await;
        Ok(out)
    }
    .await;
    let dropped = handle.drop_db().await;
    let out = result?;
    dropped?;
    Ok(out)
}

fn fmt_opt(v: Option<f64>) -> String {
    v.map_or("-".to_string(), |s| format!("{s:.3} s"))
}

// ---------------------------------------------------------------------------------------------

fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(bench())
}

fn parse_backends(list: &str) -> anyhow::Result<Vec<Backend>> {
    let mut out = Vec::new();
    for w in list.split(',').map(str::trim).filter(|w| !w.is_empty()) {
        out.push(match w {
            "sqlite" => Backend::Sqlite,
            "postgres" | "postgresql" | "pg" => Backend::Postgres,
            "mysql" | "mariadb" => Backend::Mysql,
            other => bail!("unknown backend '{other}' (sqlite, postgres, mysql)"),
        });
    }
    Ok(out)
}

async fn bench() -> anyhow::Result<()> {
    let mut backends = env_or("TOKENQL_BENCH_BACKENDS", "sqlite");
    let mut bin = PathBuf::from(env!("CARGO_BIN_EXE_tokenql"));
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--backends" => backends = args.next().context("--backends LIST")?,
            "--server-bin" => bin = PathBuf::from(args.next().context("--server-bin PATH")?),
            "--bench" => {} // cargo bench passes it
            "--help" | "-h" => {
                println!("cargo bench --bench history -- [--backends sqlite,postgres,mysql] [--server-bin PATH]");
                println!("env: TOKENQL_BENCH_RUNS (3), TOKENQL_BENCH_BACKENDS (sqlite), TOKENQL_BENCH_SERVER_LOG");
                return Ok(());
            }
            other => bail!("unknown argument '{other}' (try --help)"),
        }
    }
    let backends = parse_backends(&backends)?;
    let runs = env_or("TOKENQL_BENCH_RUNS", "3")
        .parse::<usize>()
        .context("TOKENQL_BENCH_RUNS")?
        .max(1);

    let anvil = Anvil::start(
        2,
        &[
            "--no-mining",
            "--base-fee",
            "0",
            "--hardfork",
            "cancun",
            "--prune-history",
        ],
    )
    .await;
    let t = Instant::now();
    let targets = build_chain(&anvil).await?;
    let head = anvil.head().await;
    println!(
        "built in {:.1} s; server {}; {runs} run(s) per backend, medians",
        t.elapsed().as_secs_f64(),
        bin.display()
    );

    let mut rows = Vec::new();
    for backend in backends {
        let mut per_run = Vec::new();
        for run in 0..runs {
            per_run.push(run_once(backend, run, &bin, &anvil.url, head, &targets).await?);
        }
        for (i, t) in targets.iter().enumerate() {
            let m: Vec<&Measure> = per_run.iter().map(|r| &r[i]).collect();
            let med = |f: &dyn Fn(&Measure) -> Option<f64>| {
                let v: Vec<f64> = m.iter().copied().filter_map(f).collect();
                if v.is_empty() {
                    None
                } else {
                    Some(median(v))
                }
            };
            let synced = med(&|x| Some(x.synced)).unwrap_or(f64::NAN);
            let split = med(&|x| Some(x.raw_split)).unwrap_or(f64::NAN);
            let one = med(&|x| Some(x.raw_one)).unwrap_or(f64::NAN);
            rows.push(format!(
                "| {} | {} | {} | {:.2} | {:.2} | {:.2} | {:.2}× | {:.2}× | {} / {} | {:.1} / {:.1} / {:.1} | {} | {} |",
                backend.name(),
                t.label,
                t.transfers,
                synced,
                split,
                one,
                synced / split,
                synced / one,
                m[0].raw_split_calls,
                median(m.iter().map(|x| x.server_calls as f64).collect()),
                median(m.iter().map(|x| x.cpu[0].0).collect()),
                median(m.iter().map(|x| x.cpu[1].0).collect()),
                median(m.iter().map(|x| x.cpu[1].1).collect()),
                fmt_opt(med(&|x| x.claimed)),
                fmt_opt(med(&|x| x.stored)),
            ));
        }
    }
    println!();
    println!("| db | scope | transfers | tokenql to SYNCED s | raw split s | raw one call s | ÷ split | ÷ one call | eth_getLogs raw split / tokenql | CPU s: anvil raw split / anvil tokenql / server | seen claimed | seen stored |");
    println!("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for r in rows {
        println!("{r}");
    }
    println!("(medians; tokenql's eth_getLogs from its /metrics; 'seen claimed/stored': first request to the scope_sync row seen syncing / synced, read every 10 ms)");
    Ok(())
}
