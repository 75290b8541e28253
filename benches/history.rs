//! History on demand: time from a wallet's or a contract's first request to `SYNCED`, on a chain
//! of 1,000,000 blocks that tokenql joined at the head, next to the time raw `eth_getLogs` takes
//! for the same logs in the same run.
//!
//! ```text
//! cargo bench --bench history                                   # SQLite
//! cargo bench --bench history -- --backends sqlite,postgres     # or TOKENQL_BENCH_BACKENDS
//! cargo bench --bench history -- --profiles A,B,C               # history at a provider's floor
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
//! **Provider profiles** (`--profiles A,B,C`, or `all`, or their names, or
//! `TOKENQL_BENCH_PROFILES`; issue 28, "history at the provider's floor"): the time a wallet
//! takes to `SYNCED` through a provider plan, next to the least that plan allows.
//!
//! 1. Starts anvil as above and builds a chain of exactly 200,000 blocks: 91 bursts ~2,200
//!    blocks apart, each one block with 11 transfers of the wallet `0xa1…1001` (1,001 in all,
//!    alternately sent and received) and 300 of a busy contract (27,300). Every scope's logs
//!    are read once straight from anvil, per filter the history fetch uses (a wallet: three
//!    topic filters; a contract: its address), and must match the transfers made.
//! 2. Checks the proxy (`tests/support/proxy.rs`, [`proxy::Profile`]) against anvil: range
//!    and result refusals in the providers' words, the suggested range, 429s with and without
//!    `Retry-After`, batches counted per call, the latency, its counters.
//! 3. Per backend, plan and run: a fresh database, a fresh proxy in front of anvil enforcing
//!    the plan, and `tokenql serve --rpc eth=PROXY` with the plan's server flags. The plans,
//!    each 50 ms away (every answer, refusals too, comes 50 ms after its request):
//!
//!    | plan | proxy | server flags |
//!    |---|---|---|
//!    | A `range10k-25rps` | `eth_getLogs is limited to a 10,000 range`; 25 calls/s, 429 with `Retry-After: 1` | `--max-log-range 10000 --rpc-max-rps 25` |
//!    | B `results10k-50rps` | `query returned more than 10000 results. Try with this block range [0x…, 0x…].`; 50 calls/s, 429 without `Retry-After` | `--rpc-max-rps 50` |
//!    | C `range2k-100rps` | `eth_getLogs is limited to a 2,000 range`; 100 calls/s, 429 with `Retry-After: 1` | `--max-log-range 2000 --rpc-max-rps 100` |
//!
//!    `--server-flags 'A=--max-log-range 10000 --rpc-concurrency 4'` replaces a plan's flags
//!    (repeatable); `--no-new-flags` (or `TOKENQL_BENCH_NO_NEW_FLAGS=1`) drops
//!    `--rpc-max-rps` and `--rpc-concurrency` and their values, for a server without them.
//! 4. Once the live indexer holds the head (and 1.5 s more, so the start-up's calls leave the
//!    rate window; the chain stays idle from here on), one scope at a time (`--scopes
//!    wallet,contract`; default the wallet): the time from the first request to `SYNCED` as
//!    above, the scope's `eth_getLogs` calls the proxy received (refused ones included) and
//!    refused per reason, the server's own count (`/metrics`, every attempt), the proxy's
//!    other calls meanwhile, per method (the fetch's headers and contract reads, the live
//!    follower's `eth_blockNumber`s: the same rate limit, not in the floor), and then every
//!    page of the answer checked against the transfers made.
//! 5. The floor: per filter, the fewest ranges covering the history `[0, start)` that keep
//!    within the plan's range and result limits (cut greedily as late as allowed), summed —
//!    for the 1,001-transfer wallet, A: 3 × 20 = 60 calls, B: 3 × 1 = 3, C: 3 × 100 = 300;
//!    floor seconds = the longer of floor calls ÷ the plan's calls per second plus one round
//!    trip (50 ms): 2.45 s, 0.11 s, 3.05 s; and the time the node itself takes to answer those
//!    calls, measured per run straight from anvil (`node_time`: ~0.26 s for B's three calls
//!    over 200,000 blocks, far below the rate's time for A and C), since the proxy answers no
//!    sooner than the node does. So A 2.45 s, B ~0.26 s, C 3.05 s. The table gives time ÷
//!    floor; the target is ≤ 1.25×. The floor counts RPC only: a contract's 27,300 transfers
//!    also take their time to store.
//!
//! Knobs: `TOKENQL_BENCH_RUNS` (default 3; figures are medians), `TOKENQL_BENCH_BACKENDS` or
//! `--backends` (`sqlite`, `postgres`, `mysql`; default `sqlite`), `TOKENQL_BENCH_SERVER_LOG`
//! (the server's `RUST_LOG`, default `info,sqlx=warn,sea_orm=warn`), `--server-bin PATH` (another
//! build of the server). See `docs/BENCHMARKS.md`.
#![allow(clippy::print_stdout)] // the report is this program's output

#[path = "../tests/support/anvil.rs"]
mod anvil;

#[path = "../tests/support/proxy.rs"]
mod proxy;

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

/// Sends `txs` (to, calldata, gas) from `from` as one JSON-RPC batch with explicit nonces.
async fn send_txs(
    client: &reqwest::Client,
    anvil: &Anvil,
    from: &str,
    nonce: &mut u64,
    txs: &[(String, Vec<u8>, u64)],
) -> anyhow::Result<()> {
    let body: Vec<Value> = txs
        .iter()
        .enumerate()
        .map(|(i, (to, data, gas))| {
            let n = *nonce + i as u64;
            json!({"jsonrpc": "2.0", "id": i, "method": "eth_sendTransaction",
                   "params": [{"from": from, "to": to, "data": anvil::hex(data),
                               "gas": format!("{gas:#x}"), "nonce": format!("{n:#x}")}]})
        })
        .collect();
    *nonce += txs.len() as u64;
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
    Ok(())
}

/// The `HistoryToken`s a history is built with, and what sends their transactions.
struct Tokens {
    /// The busy contract's.
    busy: String,
    /// The two the wallets' transfers alternate between.
    tokens: [String; 2],
    /// The sender, its HTTP client and its next nonce.
    from: String,
    client: reqwest::Client,
    nonce: u64,
}

impl Tokens {
    async fn deploy(anvil: &Anvil) -> anyhow::Result<Tokens> {
        let ctor = |name: &str| ("History".to_string(), name.to_string()).abi_encode_params();
        let busy = anvil.deploy("HistoryToken", ctor("BUSY")).await;
        let tokens = [
            anvil.deploy("HistoryToken", ctor("HISA")).await,
            anvil.deploy("HistoryToken", ctor("HISB")).await,
        ];
        let from = anvil.accounts[0].clone();
        tokenql::tls::ensure_crypto_provider();
        let nonce = quantity(
            &anvil
                .rpc("eth_getTransactionCount", json!([from, "pending"]))
                .await,
        )?;
        Ok(Tokens {
            busy,
            tokens,
            from,
            client: reqwest::Client::new(),
            nonce,
        })
    }
}

/// Gas for a transaction emitting `logs` logs: ~2,100 a log, and room to spare.
fn gas(logs: u64) -> u64 {
    60_000 + 3_000 * logs
}

/// Anvil for a long history: mined on demand, under Cancun (see the header), without a base fee.
async fn start_anvil() -> Anvil {
    Anvil::start(
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
    .await
}

/// Builds the 1M-block history; returns the scopes to ask about.
async fn build_chain(anvil: &Anvil) -> anyhow::Result<Vec<Target>> {
    let Tokens {
        busy,
        tokens,
        from,
        client,
        mut nonce,
    } = Tokens::deploy(anvil).await?;
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
        send_txs(&client, anvil, &from, &mut nonce, &txs).await?;
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

/// Starts `bin serve` on a free port with every indexer setting at its default but `extra`.
async fn start_server(
    bin: &Path,
    db_url: &str,
    rpc_url: &str,
    log: &Path,
    extra: &[String],
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
        .args(extra)
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
        .filter(
            scope_sync::Column::Address
                .eq(tokenql::types::Address::parse(&t.address).expect("an address")),
        )
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
/// A server started for one run: its database, API key, process, live start block, and an
/// HTTP client to ask it with.
struct Served {
    db: DatabaseConnection,
    key: String,
    server: Server,
    start: u64,
    client: reqwest::Client,
}

/// Starts `bin` on the database at `url` following `rpc_url` (with `flags`), its log in
/// `target/history-bench/<log>`, and waits until its live index holds `head`.
async fn serve(
    bin: &Path,
    url: &str,
    rpc_url: &str,
    log: &str,
    flags: &[String],
    head: u64,
) -> anyhow::Result<Served> {
    let db = tokenql::store::database::connect(url, 2).await?;
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
    let server = start_server(bin, url, rpc_url, &dir.join(log), flags).await?;
    let start = live_start(&db, head).await?;
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(60))
        .build()?;
    Ok(Served {
        db,
        key,
        server,
        start,
        client,
    })
}

/// Walks the SYNCED answer of `t`: it must hold every transfer made, each once. Returns its
/// record count.
async fn check_answer(
    client: &reqwest::Client,
    base: &str,
    key: &str,
    t: &Target,
) -> anyhow::Result<u64> {
    let (records, distinct) = count_pages(client, base, key, t).await?;
    if records != t.transfers || distinct != t.transfers {
        bail!(
            "{}: the SYNCED answer has {records} records ({distinct} distinct), the chain {}",
            t.label,
            t.transfers
        );
    }
    Ok(records)
}

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
        let log = format!("server-{}-{run}.log", backend.name());
        let Served {
            db,
            key,
            server,
            start,
            client,
        } = serve(bin, &url, rpc_url, &log, &[], head).await?;
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
            let records = check_answer(&client, &server.base, &key, t).await?;
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
// Provider profiles (`--profiles`)

/// Profile mode: the chain is blocks `0..=P_HEAD`, so a server joining at the head fetches the
/// history `[0, P_HEAD)`: exactly `P_HEAD` blocks.
const P_HEAD: u64 = 200_000;
/// Profile mode: bursts, one block each, spread evenly over the chain.
const P_BURSTS: u64 = 91;
/// Profile mode: the wallet's transfers per burst (91 × 11 = 1,001).
const P_WALLET_PER_BURST: u64 = 11;
/// Profile mode: the contract's transfers per burst (91 × 300 = 27,300: more than two result
/// limits of 10,000).
const P_CONTRACT_PER_BURST: u64 = 300;
/// Profile mode: the wallet.
const P_WALLET: &str = "0xa100000000000000000000000000000000001001";
/// The server flags a binary without the provider-pacing flags refuses (`--no-new-flags`
/// drops them and their values).
const NEW_FLAGS: [&str; 2] = ["--rpc-max-rps", "--rpc-concurrency"];
/// The target: time to `SYNCED` at most this many times the floor.
const TARGET: f64 = 1.25;

/// A provider plan: what the proxy enforces, and the flags the server is told.
#[derive(Debug, Clone)]
struct ProviderProfile {
    name: &'static str,
    alias: &'static str,
    proxy: proxy::Profile,
    server_flags: Vec<String>,
}

fn words(s: &str) -> Vec<String> {
    s.split_whitespace().map(str::to_string).collect()
}

/// The three plans of issue 28: (A) 10,000-block ranges at 25 calls/s, (B) 10,000-log results
/// at 50 calls/s, (C) 2,000-block ranges at 100 calls/s; each 50 ms away. A and C send
/// `Retry-After` with their 429s, B does not.
fn provider_profiles() -> Vec<ProviderProfile> {
    let latency = Duration::from_millis(50);
    vec![
        ProviderProfile {
            name: "A",
            alias: "range10k-25rps",
            proxy: proxy::Profile {
                latency,
                max_block_range: Some(10_000),
                max_results: None,
                max_rps: Some(25),
                retry_after: true,
            },
            server_flags: words("--max-log-range 10000 --rpc-max-rps 25"),
        },
        ProviderProfile {
            name: "B",
            alias: "results10k-50rps",
            proxy: proxy::Profile {
                latency,
                max_block_range: None,
                max_results: Some(10_000),
                max_rps: Some(50),
                retry_after: false,
            },
            server_flags: words("--rpc-max-rps 50"),
        },
        ProviderProfile {
            name: "C",
            alias: "range2k-100rps",
            proxy: proxy::Profile {
                latency,
                max_block_range: Some(2_000),
                max_results: None,
                max_rps: Some(100),
                retry_after: true,
            },
            server_flags: words("--max-log-range 2000 --rpc-max-rps 100"),
        },
    ]
}

/// `flags` without the [`NEW_FLAGS`] (`--flag VALUE` or `--flag=VALUE`).
fn without_new_flags(flags: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut it = flags.iter();
    while let Some(f) = it.next() {
        if NEW_FLAGS.contains(&f.as_str()) {
            it.next();
        } else if !NEW_FLAGS.iter().any(|n| f.starts_with(&format!("{n}="))) {
            out.push(f.clone());
        }
    }
    out
}

/// A scope of the profile chain, with the blocks of its logs per `eth_getLogs` filter the
/// history fetch uses (the floor's input).
#[derive(Debug, Clone)]
struct ProfileScope {
    target: Target,
    /// Per filter: the block of each matching log, ascending.
    filters: Vec<Vec<u64>>,
}

/// The `eth_getLogs` filters (without a range) the history fetch uses for a scope: a wallet's
/// three topic filters (`Rpc::wallet_logs`), a contract's one address filter
/// (`Rpc::transfer_logs`).
fn scope_filters(t: &Target) -> Vec<Value> {
    use tokenql::decode::{TRANSFER_BATCH_TOPIC, TRANSFER_SINGLE_TOPIC, TRANSFER_TOPIC};
    let (tr, single, batch) = (
        format!("{TRANSFER_TOPIC:#x}"),
        format!("{TRANSFER_SINGLE_TOPIC:#x}"),
        format!("{TRANSFER_BATCH_TOPIC:#x}"),
    );
    if t.kind == "contract" {
        return vec![json!({"address": t.address, "topics": [[tr, single, batch]]})];
    }
    let w = format!(
        "0x{:0>64}",
        t.address.trim_start_matches("0x").to_ascii_lowercase()
    );
    vec![
        json!({"topics": [[tr, single, batch], [w]]}),
        json!({"topics": [[tr, single, batch], null, [w]]}),
        json!({"topics": [[single, batch], null, null, [w]]}),
    ]
}

/// `filter` over `[from, to]`.
fn ranged(filter: &Value, from: u64, to: u64) -> Value {
    let mut f = filter.clone();
    f["fromBlock"] = json!(format!("{from:#x}"));
    f["toBlock"] = json!(format!("{to:#x}"));
    f
}

/// The fewest ranges covering `[0, start)` such that none spans more than `max_range` blocks
/// and none holds more than `max_results` of the logs at `blocks` (ascending): cut greedily as
/// late as allowed, which no other cut beats. A block alone over the result limit counts once.
fn min_pieces(
    blocks: &[u64],
    start: u64,
    max_range: Option<u64>,
    max_results: Option<usize>,
) -> Vec<(u64, u64)> {
    let (mut from, mut i, mut pieces) = (0u64, 0usize, Vec::new());
    while from < start {
        let mut to = max_range.map_or(start - 1, |r| (from + r.max(1) - 1).min(start - 1));
        if let Some(m) = max_results {
            let inside = blocks[i..].partition_point(|&b| b <= to);
            if inside > m {
                to = blocks[i + m].saturating_sub(1).max(from);
            }
        }
        i += blocks[i..].partition_point(|&b| b <= to);
        pieces.push((from, to));
        from = to + 1;
    }
    pieces
}

/// Per filter, the fewest ranges of a scope's history under a plan ([`min_pieces`]).
fn floor_ranges(scope: &ProfileScope, start: u64, p: &proxy::Profile) -> Vec<Vec<(u64, u64)>> {
    scope
        .filters
        .iter()
        .map(|b| min_pieces(b, start, p.max_block_range, p.max_results))
        .collect()
}

/// The floor of a scope's history under a plan: (eth_getLogs calls, seconds) — every filter's
/// fewest ranges ([`floor_ranges`]) over `[0, start)` at the plan's calls per second plus one
/// round trip of its latency, or the time the node itself takes to answer those calls
/// (`node_secs`, [`node_time`]), whichever is longer: the proxy answers no sooner than its
/// latency after a request, and no sooner than the node does.
fn floor(scope: &ProfileScope, start: u64, p: &proxy::Profile, node_secs: f64) -> (u64, f64) {
    let calls: u64 = floor_ranges(scope, start, p)
        .iter()
        .map(|r| r.len() as u64)
        .sum();
    let paced = p
        .max_rps
        .map_or(0.0, |r| calls as f64 / f64::from(r.max(1)));
    (calls, (paced + p.latency.as_secs_f64()).max(node_secs))
}

/// How long the node itself (anvil, no proxy) takes to answer the floor's `eth_getLogs` calls:
/// the filters' calls for the same piece at once, as the history fetch sends them, the pieces
/// one after the other; the fastest of three passes. A provider's round trip includes this
/// time, so no plan can beat it: on the 200,000-block chain one call over the whole range
/// takes anvil ~0.12 s, and a wallet's three at once ~0.26 s on two cores.
async fn node_time(
    client: &reqwest::Client,
    anvil_url: &str,
    scope: &ProfileScope,
    start: u64,
    p: &proxy::Profile,
) -> anyhow::Result<f64> {
    let ranges = floor_ranges(scope, start, p);
    let filters = scope_filters(&scope.target);
    let most = ranges.iter().map(Vec::len).max().unwrap_or(0);
    let mut best = f64::INFINITY;
    for _ in 0..3 {
        let t0 = Instant::now();
        for k in 0..most {
            let calls = filters.iter().zip(&ranges).filter_map(|(f, r)| {
                let (from, to) = *r.get(k)?;
                let body = json!({"jsonrpc": "2.0", "id": 1, "method": "eth_getLogs",
                    "params": [ranged(f, from, to)]});
                Some(async move {
                    let v: Value = client
                        .post(anvil_url)
                        .json(&body)
                        .send()
                        .await?
                        .json()
                        .await?;
                    if v.get("result").is_none() {
                        bail!("eth_getLogs straight to the node: {v}");
                    }
                    Ok(())
                })
            });
            futures_util::future::try_join_all(calls).await?;
        }
        best = best.min(t0.elapsed().as_secs_f64());
    }
    Ok(best)
}

/// Builds the 200,000-block chain of profile mode: one wallet of 1,001 transfers and a contract
/// of 27,300, in 91 bursts evenly spread; the head is exactly [`P_HEAD`].
async fn build_profile_chain(anvil: &Anvil) -> anyhow::Result<Vec<ProfileScope>> {
    let Tokens {
        busy,
        tokens,
        from,
        client,
        mut nonce,
    } = Tokens::deploy(anvil).await?;
    let gap = (P_HEAD - anvil.head().await - 1) / P_BURSTS;
    for b in 0..P_BURSTS {
        let txs = vec![
            (
                busy.clone(),
                calldata(emitTransfersCall {
                    start: u(CONTRACT_BASE + b * P_CONTRACT_PER_BURST),
                    n: u(P_CONTRACT_PER_BURST),
                }),
                gas(P_CONTRACT_PER_BURST),
            ),
            (
                tokens[(b % 2) as usize].clone(),
                calldata(emitWalletTransfersCall {
                    wallet: P_WALLET.parse::<A>()?,
                    seed: u(COUNTERPARTY_BASE + (3 << 32) + b * 1_000),
                    n: u(P_WALLET_PER_BURST),
                }),
                gas(P_WALLET_PER_BURST),
            ),
        ];
        send_txs(&client, anvil, &from, &mut nonce, &txs).await?;
        anvil.mine(1).await;
        anvil.mine(gap - 1).await;
    }
    let head = anvil.head().await;
    if head < P_HEAD {
        anvil.mine(P_HEAD - head).await;
    }
    let head = anvil.head().await;
    if head != P_HEAD {
        bail!("the profile chain's head is {head}, not {P_HEAD}");
    }
    let targets = [
        Target {
            label: format!("wallet {}", P_WALLET_PER_BURST * P_BURSTS),
            kind: "wallet",
            address: P_WALLET.to_string(),
            transfers: P_WALLET_PER_BURST * P_BURSTS,
        },
        Target {
            label: format!("contract {}", P_CONTRACT_PER_BURST * P_BURSTS),
            kind: "contract",
            address: busy,
            transfers: P_CONTRACT_PER_BURST * P_BURSTS,
        },
    ];
    let mut out = Vec::new();
    for target in targets {
        let mut filters = Vec::new();
        let mut distinct = std::collections::BTreeSet::new();
        for f in scope_filters(&target) {
            let logs = anvil.rpc("eth_getLogs", json!([ranged(&f, 0, head)])).await;
            let logs = logs.as_array().context("eth_getLogs: not a list")?;
            let mut blocks = Vec::new();
            for l in logs {
                let (b, i) = (quantity(&l["blockNumber"])?, quantity(&l["logIndex"])?);
                blocks.push(b);
                distinct.insert((b, i));
            }
            blocks.sort_unstable();
            filters.push(blocks);
        }
        if distinct.len() as u64 != target.transfers {
            bail!(
                "{}: its filters match {} logs, {} transfers were made",
                target.label,
                distinct.len(),
                target.transfers
            );
        }
        out.push(ProfileScope { target, filters });
    }
    println!(
        "chain: blocks 0..={head}; {P_BURSTS} bursts {gap} blocks apart; {}",
        out.iter()
            .map(|s| format!(
                "{} (logs per filter: {})",
                s.target.label,
                s.filters
                    .iter()
                    .map(|f| f.len().to_string())
                    .collect::<Vec<_>>()
                    .join("/")
            ))
            .collect::<Vec<_>>()
            .join(", ")
    );
    Ok(out)
}

/// POSTs a JSON-RPC body to the proxy: (HTTP status, `Retry-After`, body).
async fn post_rpc(
    client: &reqwest::Client,
    url: &str,
    body: Value,
) -> anyhow::Result<(u16, Option<String>, Value)> {
    let r = client.post(url).json(&body).send().await?;
    let status = r.status().as_u16();
    let retry = r
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    Ok((status, retry, r.json().await?))
}

fn call(id: u64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// Checks the proxy's provider profile against anvil before measuring with it: the range and
/// result refusals (wording, suggested range), the rate limit (429, `Retry-After`, batches
/// counted per item, refused calls not forwarded), the latency and the counters.
async fn proxy_self_check(anvil: &Anvil, wallet: &ProfileScope) -> anyhow::Result<()> {
    let p = proxy::Proxy::start(&anvil.url, 7).await;
    let client = reqwest::Client::new();
    let head = anvil.head().await;
    let sent = scope_filters(&wallet.target).remove(0);
    let check = |ok: bool, what: String| {
        if ok {
            Ok(())
        } else {
            Err(anyhow::anyhow!("proxy self-check: {what}"))
        }
    };

    // Range, and latency.
    p.set_profile(proxy::Profile {
        latency: Duration::from_millis(50),
        max_block_range: Some(1_000),
        ..Default::default()
    });
    let t = Instant::now();
    let (s, _, v) = post_rpc(
        &client,
        &p.url,
        call(1, "eth_getLogs", json!([ranged(&sent, 0, 1_000)])),
    )
    .await?;
    let took = t.elapsed();
    check(
        s == 200
            && v["id"] == 1
            && v["error"]["code"] == -32005
            && v["error"]["message"] == "eth_getLogs is limited to a 1,000 range",
        format!("range refusal: HTTP {s} {v}"),
    )?;
    check(
        took >= Duration::from_millis(50),
        format!("answered after {took:?}, before the 50 ms latency"),
    )?;
    let (s, _, v) = post_rpc(
        &client,
        &p.url,
        call(2, "eth_getLogs", json!([ranged(&sent, 0, 999)])),
    )
    .await?;
    check(
        s == 200 && v["result"].is_array(),
        format!("1,000 blocks: HTTP {s} {v}"),
    )?;

    // Results: the suggested range holds at most the limit, one block more holds more.
    let max = 20usize;
    p.set_profile(proxy::Profile {
        max_results: Some(max),
        ..Default::default()
    });
    let (s, _, v) = post_rpc(
        &client,
        &p.url,
        call(3, "eth_getLogs", json!([ranged(&sent, 0, head)])),
    )
    .await?;
    let m = v["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let prefix = format!("query returned more than {max} results. Try with this block range [");
    check(
        s == 200 && v["error"]["code"] == -32005 && m.starts_with(&prefix) && m.ends_with("]."),
        format!("result refusal: HTTP {s} {v}"),
    )?;
    let inner = &m[prefix.len()..m.len() - 2];
    let (a, b) = inner.split_once(", ").context("the suggested range")?;
    let hexnum = |x: &str| u64::from_str_radix(x.trim_start_matches("0x"), 16);
    let (a, b) = (hexnum(a)?, hexnum(b)?);
    let count = |from: u64, to: u64| {
        let f = ranged(&sent, from, to);
        async move {
            anvil
                .rpc("eth_getLogs", json!([f]))
                .await
                .as_array()
                .map_or(0, Vec::len)
        }
    };
    let (within, beyond) = (count(a, b).await, count(a, b + 1).await);
    check(
        a == 0 && within <= max && beyond > max,
        format!("suggested [{a}, {b}]: {within} logs, one block more {beyond}"),
    )?;

    // Rate: 4 calls a second; refused calls not forwarded; a batch counts per item.
    p.set_profile(proxy::Profile {
        max_rps: Some(4),
        retry_after: true,
        ..Default::default()
    });
    let forwarded_before = p.count("eth_blockNumber");
    let mut statuses = Vec::new();
    for id in 0..6 {
        let (s, retry, v) =
            post_rpc(&client, &p.url, call(id, "eth_blockNumber", json!([]))).await?;
        if s == 429 {
            check(
                retry.as_deref() == Some("1")
                    && v["id"] == id
                    && v["error"]["code"] == 429
                    && v["error"]["message"] == "Too Many Requests",
                format!("429: Retry-After {retry:?}, {v}"),
            )?;
        }
        statuses.push(s);
    }
    check(
        statuses == [200, 200, 200, 200, 429, 429],
        format!("4 per second: {statuses:?}"),
    )?;
    tokio::time::sleep(Duration::from_millis(1_050)).await;
    let batch: Vec<Value> = (10..13)
        .map(|id| call(id, "eth_blockNumber", json!([])))
        .collect();
    let (s, _, v) = post_rpc(&client, &p.url, Value::Array(batch)).await?;
    check(
        s == 200 && v.as_array().is_some_and(|a| a.len() == 3),
        format!("a batch of 3: HTTP {s} {v}"),
    )?;
    p.set_profile(proxy::Profile {
        max_rps: Some(4),
        retry_after: false,
        ..Default::default()
    });
    // set_profile empties the window: 4 admitted, then a batch of 2 refused as a whole.
    for id in 20..24 {
        let (s, _, _) = post_rpc(&client, &p.url, call(id, "eth_blockNumber", json!([]))).await?;
        check(s == 200, format!("after set_profile: HTTP {s}"))?;
    }
    let batch: Vec<Value> = (30..32)
        .map(|id| call(id, "eth_blockNumber", json!([])))
        .collect();
    let (s, retry, v) = post_rpc(&client, &p.url, Value::Array(batch)).await?;
    check(
        s == 429
            && retry.is_none()
            && v.as_array()
                .is_some_and(|a| a.len() == 2 && a[1]["id"] == 31),
        format!("a refused batch: HTTP {s}, Retry-After {retry:?}, {v}"),
    )?;

    let refused = p.refused();
    let want: std::collections::BTreeMap<String, u64> = [("range", 1), ("results", 1), ("rate", 4)]
        .iter()
        .map(|(k, v)| (k.to_string(), *v))
        .collect();
    check(
        refused == want,
        format!("refused {refused:?}, expected {want:?}"),
    )?;
    let w = wallet.target.address.to_ascii_lowercase();
    check(
        p.count(&format!("refused:range~{w}")) == 1
            && p.count(&format!("refused:results~{w}")) == 1,
        format!("per-wallet refusals: {:?}", p.counts()),
    )?;
    // Received: 6 + 3 + 4 + 2 calls, refused or not.
    check(
        p.count("eth_blockNumber") - forwarded_before == 15 && p.wallet_calls(&w).len() == 3,
        format!("counters: {:?}", p.counts()),
    )?;
    println!("proxy self-check: range, results, rate, latency and counters as specified");
    Ok(())
}

/// What one scope's run under a plan measured.
#[derive(Debug, Clone)]
struct ProfileMeasure {
    synced: f64,
    start: u64,
    /// The scope's `eth_getLogs` calls the proxy received (refused or not).
    scope_calls: u64,
    /// The scope's calls refused: range, results, rate.
    scope_refused: [u64; 3],
    /// Every call refused meanwhile (any method, any caller): range, results, rate.
    all_refused: [u64; 3],
    /// Other `eth_getLogs` calls (the live follower) and other methods, meanwhile.
    other_logs: u64,
    other_calls: u64,
    /// `other_calls` per method.
    other_detail: String,
    /// The server's `eth_getLogs` requests meanwhile (its `/metrics`: every attempt).
    server_calls: u64,
    floor_calls: u64,
    floor_secs: f64,
    /// The node's own time for the floor's calls ([`node_time`]).
    node_secs: f64,
}

/// The JSON-RPC calls the proxy has received, of every method (its method-name counters).
fn rpc_calls(counts: &std::collections::BTreeMap<String, u64>) -> u64 {
    counts
        .iter()
        .filter(|(k, _)| {
            k.contains('_')
                && !k.contains([':', '@', '~'])
                && !["failed_logs", "span_refused"].contains(&k.as_str())
        })
        .map(|(_, v)| v)
        .sum()
}

/// The calls per method (but `eth_getLogs`) received between two snapshots of the counters:
/// `method n, ...`.
fn other_methods(
    before: &std::collections::BTreeMap<String, u64>,
    after: &std::collections::BTreeMap<String, u64>,
) -> String {
    let mut out = Vec::new();
    for (k, v) in after {
        let d = v - before.get(k).copied().unwrap_or(0);
        let one = std::collections::BTreeMap::from([(k.clone(), d)]);
        if d > 0 && k != "eth_getLogs" && rpc_calls(&one) == d {
            out.push(format!("{k} {d}"));
        }
    }
    if out.is_empty() {
        "none".to_string()
    } else {
        out.join(", ")
    }
}

/// A scope's calls and refusals so far at the proxy.
fn scope_counts(p: &proxy::Proxy, t: &Target) -> (u64, [u64; 3]) {
    let a = t.address.to_ascii_lowercase();
    let (calls, tag) = if t.kind == "wallet" {
        (p.wallet_calls(&a).len() as u64, format!("~{a}"))
    } else {
        (p.count(&format!("eth_getLogs@{a}")), format!("@{a}"))
    };
    let refused = proxy::REFUSALS.map(|r| p.count(&format!("refused:{r}{tag}")));
    (calls, refused)
}

fn all_refused(p: &proxy::Proxy) -> [u64; 3] {
    let r = p.refused();
    proxy::REFUSALS.map(|k| r.get(k).copied().unwrap_or(0))
}

fn minus(a: [u64; 3], b: [u64; 3]) -> [u64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

/// One run of one plan on a fresh database, proxy and server: every scope, one at a time.
#[allow(clippy::too_many_arguments)]
async fn run_profile_once(
    backend: Backend,
    run: usize,
    bin: &Path,
    anvil_url: &str,
    head: u64,
    profile: &ProviderProfile,
    flags: &[String],
    scopes: &[ProfileScope],
) -> anyhow::Result<Vec<ProfileMeasure>> {
    let (handle, url) = BenchDb::create(backend, run).await?;
    let result = async {
        let p = proxy::Proxy::start(anvil_url, 1 + run as u64).await;
        p.set_profile(profile.proxy.clone());
        let log = format!("server-{}-{}-{run}.log", backend.name(), profile.alias);
        let Served {
            db,
            key,
            server,
            start,
            client,
        } = serve(bin, &url, &p.url, &log, flags, head).await?;
        // The start-up's calls leave the proxy's rate window.
        tokio::time::sleep(Duration::from_millis(1_500)).await;
        let mut out = Vec::new();
        for s in scopes {
            let t = &s.target;
            let (calls0, refused0) = scope_counts(&p, t);
            let (counts0, all0) = (p.counts(), all_refused(&p));
            let server0 = server_get_logs(&client, &server.base).await?;
            let (synced, requests, claimed, stored) =
                time_scope(&client, &server.base, &key, &db, t).await?;
            let server_calls = server_get_logs(&client, &server.base).await? - server0;
            let (calls1, refused1) = scope_counts(&p, t);
            let (counts1, all1) = (p.counts(), all_refused(&p));
            let records = check_answer(&client, &server.base, &key, t).await?;
            let get_logs = |c: &std::collections::BTreeMap<String, u64>| {
                c.get("eth_getLogs").copied().unwrap_or(0)
            };
            let scope_calls = calls1 - calls0;
            let logs = get_logs(&counts1) - get_logs(&counts0);
            let node_secs = node_time(&client, anvil_url, s, start, &profile.proxy).await?;
            let (floor_calls, floor_secs) = floor(s, start, &profile.proxy, node_secs);
            let m = ProfileMeasure {
                synced,
                start,
                scope_calls,
                scope_refused: minus(refused1, refused0),
                all_refused: minus(all1, all0),
                other_logs: logs.saturating_sub(scope_calls),
                other_calls: (rpc_calls(&counts1) - rpc_calls(&counts0)).saturating_sub(logs),
                other_detail: other_methods(&counts0, &counts1),
                server_calls,
                floor_calls,
                floor_secs,
                node_secs,
            };
            println!(
                "  {} {} run {run} {:<16} SYNCED after {synced:>7.3} s, floor {floor_secs:.3} s ({:.2}×; the node's own time {:.3} s) | eth_getLogs: {scope_calls} received (refused range/results/rate {}), floor {floor_calls}; server /metrics {server_calls}; meanwhile other eth_getLogs {}, other calls {} ({}), all refused {} | {requests} requests, claimed {}, stored {}; history [0, {start}) | {records} records checked",
                backend.name(),
                profile.alias,
                t.label,
                synced / floor_secs,
                m.node_secs,
                fmt3(m.scope_refused),
                m.other_logs,
                m.other_calls,
                m.other_detail,
                fmt3(m.all_refused),
                fmt_opt(claimed),
                fmt_opt(stored),
            );
            out.push(m);
        }
        drop(server);
        drop(p);
        let _ = db.close().await;
        Ok::<_, anyhow::Error>(out)
    }
    .await;
    let dropped = handle.drop_db().await;
    let out = result?;
    dropped?;
    Ok(out)
}

fn fmt3(v: [u64; 3]) -> String {
    format!("{}/{}/{}", v[0], v[1], v[2])
}

fn parse_profiles(list: &str) -> anyhow::Result<Vec<ProviderProfile>> {
    let all = provider_profiles();
    let mut out = Vec::new();
    for w in list.split(',').map(str::trim).filter(|w| !w.is_empty()) {
        if w == "all" {
            out.extend(all.iter().cloned());
            continue;
        }
        match all
            .iter()
            .find(|p| p.name.eq_ignore_ascii_case(w) || p.alias == w)
        {
            Some(p) => out.push(p.clone()),
            None => bail!(
                "unknown profile '{w}' ({})",
                all.iter()
                    .map(|p| format!("{} = {}", p.name, p.alias))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }
    Ok(out)
}

/// Profile mode: the 200,000-block chain, the proxy's self-check, then per backend, plan and
/// run a fresh proxy, database and server, and the table.
#[allow(clippy::too_many_arguments)]
async fn bench_profiles(
    profiles: Vec<ProviderProfile>,
    overrides: &[(String, Vec<String>)],
    no_new_flags: bool,
    scope_kinds: &[String],
    backends: Vec<Backend>,
    runs: usize,
    bin: &Path,
) -> anyhow::Result<()> {
    let anvil = start_anvil().await;
    let t = Instant::now();
    let all = build_profile_chain(&anvil).await?;
    let head = anvil.head().await;
    proxy_self_check(&anvil, &all[0]).await?;
    let scopes: Vec<ProfileScope> = all
        .into_iter()
        .filter(|s| scope_kinds.iter().any(|k| k == s.target.kind))
        .collect();
    println!(
        "built in {:.1} s; server {}; {runs} run(s) per backend and profile, medians",
        t.elapsed().as_secs_f64(),
        bin.display()
    );
    let mut rows = Vec::new();
    for backend in backends {
        for profile in &profiles {
            let mut flags = overrides
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(profile.name) || *n == profile.alias)
                .map_or_else(|| profile.server_flags.clone(), |(_, f)| f.clone());
            if no_new_flags {
                flags = without_new_flags(&flags);
            }
            let p = &profile.proxy;
            println!(
                "profile {} ({}): range {}, results {}, {} calls/s ({} Retry-After), latency {} ms; server flags: {}",
                profile.name,
                profile.alias,
                p.max_block_range.map_or("-".into(), proxy::thousands),
                p.max_results.map_or("-".into(), |r| proxy::thousands(r as u64)),
                p.max_rps.map_or("-".into(), |r| r.to_string()),
                if p.retry_after { "with" } else { "no" },
                p.latency.as_millis(),
                if flags.is_empty() { "(none)".to_string() } else { flags.join(" ") },
            );
            let mut per_run = Vec::new();
            for run in 0..runs {
                per_run.push(
                    run_profile_once(
                        backend, run, bin, &anvil.url, head, profile, &flags, &scopes,
                    )
                    .await?,
                );
            }
            for (i, s) in scopes.iter().enumerate() {
                let m: Vec<&ProfileMeasure> = per_run.iter().map(|r| &r[i]).collect();
                let med =
                    |f: &dyn Fn(&ProfileMeasure) -> f64| median(m.iter().map(|x| f(x)).collect());
                let med3 = |f: &dyn Fn(&ProfileMeasure) -> [u64; 3]| {
                    format!(
                        "{}/{}/{}",
                        med(&|x| f(x)[0] as f64),
                        med(&|x| f(x)[1] as f64),
                        med(&|x| f(x)[2] as f64)
                    )
                };
                let synced = med(&|x| x.synced);
                let floor_secs = med(&|x| x.floor_secs);
                let ratio = med(&|x| x.synced / x.floor_secs);
                rows.push(format!(
                    "| {} | {} {} | {} | {} | {} | {} | {} | {} | {} | {:.3} | {:.3} | {:.3} | {:.2}× | {} | {} / {} |",
                    backend.name(),
                    profile.name,
                    profile.alias,
                    s.target.label,
                    med(&|x| x.scope_calls as f64),
                    med3(&|x| x.scope_refused),
                    med(&|x| x.floor_calls as f64),
                    med(&|x| x.server_calls as f64),
                    med3(&|x| x.all_refused),
                    med(&|x| x.start as f64),
                    synced,
                    med(&|x| x.node_secs),
                    floor_secs,
                    ratio,
                    if ratio <= TARGET { "yes" } else { "no" },
                    med(&|x| x.other_logs as f64),
                    med(&|x| x.other_calls as f64),
                ));
            }
        }
    }
    println!();
    println!("| db | profile | scope | eth_getLogs made (proxy) | refused range/results/rate | floor calls | server eth_getLogs (/metrics) | all refused meanwhile | history blocks | to SYNCED s | node's own s | floor s | ÷ floor | ≤ {TARGET}× | meanwhile: other eth_getLogs / other calls |");
    println!("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|:---:|---:|");
    for r in rows {
        println!("{r}");
    }
    println!("(medians; 'made' = the scope's eth_getLogs the proxy received, refused ones included; floor calls = per filter the fewest ranges within the plan's range and result limits over [0, start), summed (wallet: 3 filters, contract: 1); node's own s = the time anvil itself takes to answer the floor's calls, straight (the filters' calls of a piece at once, pieces in turn; fastest of three); floor s = the longer of floor calls ÷ calls per second + one round trip of the plan's latency, and the node's own time (the proxy answers no sooner than the node); 'meanwhile' = the proxy's other calls from the first request to SYNCED: the history fetch's headers (eth_getBlockByNumber, a batch counted per call) and contract reads (eth_call), the live follower's eth_blockNumber; they use the same rate limit but are not in the floor)");
    Ok(())
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
    let mut profiles = env_or("TOKENQL_BENCH_PROFILES", "");
    let mut scope_kinds = "wallet".to_string();
    let mut no_new_flags = !matches!(
        env_or("TOKENQL_BENCH_NO_NEW_FLAGS", "").as_str(),
        "" | "0" | "false" | "no"
    );
    let mut overrides: Vec<(String, Vec<String>)> = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--backends" => backends = args.next().context("--backends LIST")?,
            "--server-bin" => bin = PathBuf::from(args.next().context("--server-bin PATH")?),
            "--profiles" => profiles = args.next().context("--profiles LIST")?,
            "--scopes" => scope_kinds = args.next().context("--scopes wallet,contract")?,
            "--no-new-flags" => no_new_flags = true,
            "--server-flags" => {
                let v = args.next().context("--server-flags PROFILE=FLAGS")?;
                let (name, flags) = v
                    .split_once('=')
                    .context("--server-flags PROFILE=FLAGS, e.g. 'A=--max-log-range 10000'")?;
                overrides.push((name.trim().to_string(), words(flags)));
            }
            "--bench" => {} // cargo bench passes it
            "--help" | "-h" => {
                println!("cargo bench --bench history -- [--backends sqlite,postgres,mysql] [--server-bin PATH]");
                println!("cargo bench --bench history -- --profiles A,B,C|all [--scopes wallet,contract] [--no-new-flags] [--server-flags 'A=--max-log-range 10000 ...'] [--backends ...] [--server-bin PATH]");
                println!("profiles: A = range10k-25rps, B = results10k-50rps, C = range2k-100rps");
                println!("env: TOKENQL_BENCH_RUNS (3), TOKENQL_BENCH_BACKENDS (sqlite), TOKENQL_BENCH_SERVER_LOG, TOKENQL_BENCH_PROFILES, TOKENQL_BENCH_NO_NEW_FLAGS");
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
    if !profiles.is_empty() {
        let profiles = parse_profiles(&profiles)?;
        let kinds: Vec<String> = scope_kinds
            .split(',')
            .map(|k| k.trim().to_string())
            .filter(|k| !k.is_empty())
            .collect();
        if let Some(k) = kinds.iter().find(|k| *k != "wallet" && *k != "contract") {
            bail!("unknown scope '{k}' (wallet, contract)");
        }
        for (name, _) in &overrides {
            parse_profiles(name).context("--server-flags")?;
        }
        return bench_profiles(
            profiles,
            &overrides,
            no_new_flags,
            &kinds,
            backends,
            runs,
            &bin,
        )
        .await;
    }

    let anvil = start_anvil().await;
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
