//! Ingest throughput: how many Transfer logs per second tokenql's indexer stores, on each
//! database, next to how fast the same anvil delivers those logs over `eth_getLogs`.
//!
//! ```text
//! cargo bench --bench ingest
//! ```
//!
//! 1. Starts anvil (`tools/chain/...` or `$TOKENQL_ANVIL`), deploys `TestToken`, and makes
//!    `$TOKENQL_BENCH_LOGS` (default 1,000,000) real `Transfer` logs with `emitTransfers`, 10k
//!    per transaction, one transaction per 30M-gas block; then mines [`FINALIZED_TAIL`] empty
//!    blocks, so that the logs are history below the reorg depth, as in any backfill.
//! 2. Raw delivery: `eth_getLogs` over the block ranges the indexer asks for, one after the
//!    other, through the indexer's own RPC client (same HTTP client, filter and JSON
//!    deserialization), in logs/s. A raw pass runs before each ingest run, so that each
//!    backend's "% of raw" compares runs made on the same (possibly shared) machine state.
//!    The first pass also times the indexer's `decode_logs` over the logs it fetched, apart
//!    from the delivery: the CPU that decoding adds to ingest.
//! 3. Ingest: the in-process indexer (`tokenql::indexer::run`, start block 0) on a fresh,
//!    migrated database of each backend, timed until `chain_state.indexed_block` reaches the
//!    head; the stored row count is checked against the chain's. SQLite uses a temporary file;
//!    PostgreSQL (`$TOKENQL_TEST_POSTGRES_URL`, default `postgres://postgres@127.0.0.1:5432`) and
//!    MariaDB/MySQL (`$TOKENQL_TEST_MYSQL_URL`, default `mysql://root@127.0.0.1:3306`) get a
//!    `tq_bench_*` database that is dropped afterwards. An unreachable server is skipped, loudly.
//!
//! Each backend is measured in each mode of `TOKENQL_BENCH_MODES` (default `deferred,kept`),
//! alternated within a run: `deferred` is the default indexer (the transfer tables' address
//! indexes and the kept ERC20 balances left out during the backfill, built and summed before
//! the head, `tokenql::store::backfill_indexes` and `backfill_balances`), `kept` the same with
//! `defer_backfill_indexes` off.
//!
//! Other knobs: `TOKENQL_BENCH_HOLDERS` (default 0: each transfer between two new holders;
//! `h`: the same `h` transfers over and over, so that every batch moves the same `h` + 1
//! balances, as a busy token's holders do), `TOKENQL_BENCH_RUNS` (default 3; each figure is the
//! median of the runs),
//! `TOKENQL_BENCH_BACKENDS` (comma list of `sqlite,postgres,mysql`), `RUST_LOG` (indexer logs,
//! default `warn`). See `docs/BENCHMARKS.md` for figures.
//!
//! After the table, the CPU seconds of every raw pass and ingest run ([`cpu`]): this program's,
//! the node's and the database server's, and the cores they kept busy on average.
#![allow(clippy::print_stdout)] // the report is this program's output

/// The allocator the `tokenql` binary runs on (`src/main.rs`): the indexer runs in this process,
/// and is measured as it ships.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[path = "../../tests/support/anvil.rs"]
mod anvil;
mod cpu;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use sea_orm::{ConnectionTrait, DatabaseConnection, EntityTrait, PaginatorTrait};

use tokenql::decode::decode_logs;
use tokenql::indexer::follower::RangePlan;
use tokenql::indexer::rpc::Rpc;
use tokenql::indexer::{ChainConfig, IndexerConfig};
use tokenql::types::Chain;

use anvil::{token_ctor, Anvil};

#[path = "../../tests/support/common/db_url.rs"]
mod db_url;
use db_url::split_server_url;

fn env_u64(name: &str, default: u64) -> anyhow::Result<u64> {
    match std::env::var(name) {
        Ok(v) if !v.trim().is_empty() => v
            .trim()
            .replace('_', "")
            .parse()
            .with_context(|| format!("{name}={v} is not a number")),
        _ => Ok(default),
    }
}

fn env_or(name: &str, default: &str) -> String {
    match std::env::var(name) {
        Ok(v) if !v.trim().is_empty() => v.trim().to_string(),
        _ => default.to_string(),
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        0.0
    } else if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Empty blocks mined after the logs: twice the default reorg depth.
const FINALIZED_TAIL: u64 = 128;

/// The indexer's configuration in this benchmark: defaults, start block 0, short polls.
fn chain_config(rpc_url: &str) -> ChainConfig {
    let mut cfg = ChainConfig::new(Chain::ETH, rpc_url);
    cfg.start_block = Some(0);
    cfg.poll_interval = Duration::from_millis(20);
    cfg
}

/// How the indexer treats the transfer tables' address indexes during the backfill.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// The default: left out, built before the head.
    Deferred,
    /// Kept up row by row (`defer_backfill_indexes` off).
    Kept,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::Deferred => "deferred",
            Mode::Kept => "kept",
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The chain

/// Deploys TestToken and mines `n` Transfer logs between `holders` wallets (0: `n` + 1, each
/// transfer moving two balances no other transfer moves; else the same `holders` transfers
/// over and over, so that every batch moves the same balances); returns (token, head).
async fn build_chain(anvil: &Anvil, n: u64, holders: u64) -> anyhow::Result<(String, u64)> {
    let token = anvil
        .deploy("TestToken", token_ctor("Bench", "BNCH", 18))
        .await;
    let per_pass = if holders == 0 { n } else { holders.min(n) };
    let mut left = n;
    while left > 0 {
        let k = per_pass.min(left);
        anvil.emit_transfer_logs(&token, 0, k).await;
        left -= k;
    }
    anvil.mine(FINALIZED_TAIL).await;
    Ok((token, anvil.head().await))
}

// ---------------------------------------------------------------------------------------------
// Raw delivery

/// One raw pass: how many logs, how long their delivery took, in how many ranges, and how
/// long decoding them took (the indexer's own `decode_logs`, timed apart from the delivery).
struct RawPass {
    logs: u64,
    seconds: f64,
    ranges: usize,
    decode_seconds: f64,
}

/// `eth_getLogs` over `[0, head]`, one range after the other, in the ranges the indexer asks
/// for (its [`RangePlan`]), deserialized by the indexer's RPC client.
async fn raw_delivery(rpc_url: &str, head: u64) -> anyhow::Result<RawPass> {
    let cfg = chain_config(rpc_url);
    let rpc = Rpc::new(rpc_url, cfg.request_timeout, cfg.retry)?;
    let mut plan = RangePlan::new(&cfg);
    let (mut fetching, mut decoding) = (Duration::ZERO, Duration::ZERO);
    let (mut next, mut logs, mut ranges) = (0u64, 0u64, 0usize);
    while next <= head {
        let to = (next + plan.span() - 1).min(head);
        let t = Instant::now();
        let got = rpc.transfer_logs(next, to, None).await?;
        fetching += t.elapsed();
        let t = Instant::now();
        std::hint::black_box(decode_logs(&got));
        decoding += t.elapsed();
        plan.fetched(to - next + 1, got.len());
        logs += got.len() as u64;
        ranges += 1;
        next = to + 1;
    }
    Ok(RawPass {
        logs,
        seconds: fetching.as_secs_f64(),
        ranges,
        decode_seconds: decoding.as_secs_f64(),
    })
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

fn unique_name(run: usize) -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    format!("tq_bench_{secs}_{}_{run}", std::process::id())
}

fn admin_url(backend: Backend, server: &str) -> String {
    let (server, query) = split_server_url(server);
    match backend {
        Backend::Postgres => format!("{server}/postgres{query}"),
        _ => format!("{server}{query}"),
    }
}

/// Whether the backend's server answers; `Err` says why not.
async fn reachable(backend: Backend) -> Result<(), String> {
    let Some(server) = backend.server() else {
        return Ok(());
    };
    let admin = admin_url(backend, &server);
    match tokio::time::timeout(
        Duration::from_secs(5),
        tokenql::store::database::connect(&admin, 1),
    )
    .await
    {
        Ok(Ok(db)) => {
            let _ = db.close().await;
            Ok(())
        }
        Ok(Err(e)) => Err(format!("{server}: {e}")),
        Err(_) => Err(format!("{server}: no answer within 5 s")),
    }
}

impl BenchDb {
    /// Creates a fresh database; returns it and its URL.
    async fn create(backend: Backend, run: usize) -> anyhow::Result<(BenchDb, String)> {
        let name = unique_name(run);
        match backend.server() {
            None => {
                let path = std::env::temp_dir().join(format!("{name}.db"));
                let url = format!("sqlite://{}?mode=rwc", path.display());
                Ok((BenchDb::Sqlite(path), url))
            }
            Some(server) => {
                let admin_url = admin_url(backend, &server);
                let admin = tokenql::store::database::connect(&admin_url, 1).await?;
                admin
                    .execute_unprepared(&format!("CREATE DATABASE {name}"))
                    .await?;
                let _ = admin.close().await;
                let (server, query) = split_server_url(&server);
                Ok((
                    BenchDb::Server {
                        backend,
                        admin_url,
                        name: name.clone(),
                    },
                    format!("{server}/{name}{query}"),
                ))
            }
        }
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
// Ingest

/// Runs the indexer on a fresh database until it has stored `[0, head]`; returns seconds.
async fn ingest_once(
    backend: Backend,
    mode: Mode,
    run: usize,
    rpc_url: &str,
    head: u64,
    expect_logs: u64,
) -> anyhow::Result<(f64, cpu::Spent)> {
    let (handle, url) = BenchDb::create(backend, run).await?;
    let result = async {
        let db = tokenql::store::database::connect(&url, 16).await?;
        {
            use migration::MigratorTrait;
            migration::Migrator::up(&db, None).await?;
        }
        let (secs, spent) = timed_ingest(&db, rpc_url, head, mode).await?;
        let missing = tokenql::store::backfill_indexes::missing(&db).await?;
        if !missing.is_empty() {
            bail!("at the head, the indexes {missing:?} are still missing");
        }
        let state = tokenql::entity::chain_state::Entity::find_by_id(Chain::ETH.db_id())
            .one(&db)
            .await?;
        if state.is_some_and(|s| s.balances_pending) {
            bail!("at the head, the balances are still left out");
        }
        let stored = tokenql::entity::erc20_transfer::Entity::find()
            .count(&db)
            .await?;
        let _ = db.close().await;
        if stored != expect_logs {
            bail!("stored {stored} transfers, the chain has {expect_logs}");
        }
        Ok((secs, spent))
    }
    .await;
    let dropped = handle.drop_db().await;
    let measured = result?;
    dropped?;
    Ok(measured)
}

async fn timed_ingest(
    db: &DatabaseConnection,
    rpc_url: &str,
    head: u64,
    mode: Mode,
) -> anyhow::Result<(f64, cpu::Spent)> {
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let mut cfg = chain_config(rpc_url);
    cfg.defer_backfill_indexes = mode == Mode::Deferred;
    let meter = cpu::Meter::start();
    let t = Instant::now();
    let task = tokio::spawn(tokenql::indexer::run(
        db.clone(),
        IndexerConfig {
            chains: vec![cfg],
            ..Default::default()
        },
        async move {
            let _ = stop_rx.await;
        },
    ));
    let secs = loop {
        let state = tokenql::entity::chain_state::Entity::find_by_id(Chain::ETH.db_id())
            .one(db)
            .await?;
        if state.and_then(|s| s.indexed_block) == Some(head as i64) {
            break t.elapsed().as_secs_f64();
        }
        if task.is_finished() {
            bail!(
                "the indexer stopped before reaching the head: {:?}",
                task.await
            );
        }
        if t.elapsed() > Duration::from_secs(3600) {
            bail!("the indexer did not reach the head within an hour");
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    let spent = meter.stop().await;
    let _ = stop_tx.send(());
    match tokio::time::timeout(Duration::from_secs(60), task).await {
        Ok(Ok(Ok(()))) => Ok((secs, spent)),
        Ok(Ok(Err(e))) => bail!("indexer: {e}"),
        Ok(Err(e)) => bail!("indexer task: {e}"),
        Err(_) => bail!("the indexer did not stop within 60 s"),
    }
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

async fn bench() -> anyhow::Result<()> {
    let n = env_u64("TOKENQL_BENCH_LOGS", 1_000_000)?;
    let runs = env_u64("TOKENQL_BENCH_RUNS", 3)?.max(1) as usize;
    let wanted = env_or("TOKENQL_BENCH_BACKENDS", "sqlite,postgres,mysql");
    let mut backends = Vec::new();
    for w in wanted.split(',').map(str::trim).filter(|w| !w.is_empty()) {
        backends.push(match w {
            "sqlite" => Backend::Sqlite,
            "postgres" | "postgresql" | "pg" => Backend::Postgres,
            "mysql" | "mariadb" => Backend::Mysql,
            other => bail!("TOKENQL_BENCH_BACKENDS: unknown backend '{other}'"),
        });
    }
    let mut modes = Vec::new();
    for w in env_or("TOKENQL_BENCH_MODES", "deferred,kept")
        .split(',')
        .map(str::trim)
        .filter(|w| !w.is_empty())
    {
        modes.push(match w {
            "deferred" => Mode::Deferred,
            "kept" => Mode::Kept,
            other => bail!("TOKENQL_BENCH_MODES: unknown mode '{other}'"),
        });
    }

    let anvil = Anvil::start(2, &["--no-mining", "--base-fee", "0"]).await;
    let t = Instant::now();
    let holders = env_u64("TOKENQL_BENCH_HOLDERS", 0)?;
    let (_token, head) = build_chain(&anvil, n, holders).await?;
    let between = match holders {
        0 => "each between new holders".to_string(),
        h => format!("the same {} over and over", h.min(n)),
    };
    println!(
        "chain: {n} Transfer logs ({between}) in blocks 0..={head}, built in {:.1} s; {runs} run(s) per figure, median",
        t.elapsed().as_secs_f64()
    );

    // A warm-up pass; then raw passes alternate with the ingest runs, so that both see the
    // same (shared, noisy) machine.
    let warm = raw_pass(&anvil.url, head, n).await?;
    println!(
        "the indexer's ranges: {} eth_getLogs calls; decoding their logs (the indexer's \
         decode_logs, not part of raw): {:.2} s",
        warm.ranges, warm.decode_seconds
    );
    let mut raw_all = Vec::new();
    let mut rows = Vec::new();
    let mut cpu_rows = Vec::new();
    for backend in backends {
        if let Err(why) = reachable(backend).await {
            rows.push(format!(
                "{:<34} skipped: server unreachable ({why})",
                backend.name()
            ));
            continue;
        }
        let mut raw = Vec::new();
        let mut ingest = vec![Vec::new(); modes.len()];
        for run in 0..runs {
            for (i, &mode) in modes.iter().enumerate() {
                let meter = cpu::Meter::start();
                let secs = raw_pass(&anvil.url, head, n).await?.seconds;
                cpu_rows.push(cpu_row("raw eth_getLogs", secs, meter.stop().await));
                raw.push(secs);
                let (secs, spent) = ingest_once(backend, mode, run, &anvil.url, head, n).await?;
                ingest[i].push(secs);
                let what = format!("ingest {} ({})", backend.name(), mode.name());
                cpu_rows.push(cpu_row(&what, secs, spent));
            }
        }
        raw_all.extend(&raw);
        let raw_rate = n as f64 / median(raw);
        for (mode, secs) in modes.iter().zip(ingest) {
            let secs = median(secs);
            let rate = n as f64 / secs;
            rows.push(format!(
                "{:<34} {:>10} {:>9.2} {:>11.0} {:>7.0}%",
                format!("tokenql ingest {} ({})", backend.name(), mode.name()),
                n,
                secs,
                rate,
                100.0 * rate / raw_rate
            ));
        }
    }
    if raw_all.is_empty() {
        for _ in 0..runs {
            raw_all.push(raw_pass(&anvil.url, head, n).await?.seconds);
        }
    }
    let raw_secs = median(raw_all);

    println!();
    println!(
        "{:<34} {:>10} {:>9} {:>11} {:>8}",
        "backend", "logs", "seconds", "logs/s", "% of raw"
    );
    println!(
        "{:<34} {:>10} {:>9.2} {:>11.0} {:>8}",
        "raw eth_getLogs",
        n,
        raw_secs,
        n as f64 / raw_secs,
        "100%"
    );
    for r in rows {
        println!("{r}");
    }
    println!("(% of raw: against the raw passes run between that backend's ingest runs)");
    println!();
    println!(
        "CPU seconds of each run, user + system (cpu.rs; {} cores here):",
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    println!(
        "{:<34} {:>9} {:>9} {:>9} {:>9} {:>9} {:>7}",
        "run", "wall s", "tokenql", "node", "db server", "total", "cores"
    );
    for r in cpu_rows {
        println!("{r}");
    }
    Ok(())
}

/// A row of the CPU table: what a run of `secs` cost each side, and how many cores they kept
/// busy on average.
fn cpu_row(what: &str, secs: f64, spent: cpu::Spent) -> String {
    format!(
        "{:<34} {:>9.2} {:>9.2} {:>9.2} {:>9.2} {:>9.2} {:>7.2}",
        what,
        secs,
        spent.tokenql,
        spent.node,
        spent.server,
        spent.total(),
        spent.total() / secs
    )
}

/// One raw pass that must deliver all `n` logs.
async fn raw_pass(rpc_url: &str, head: u64, n: u64) -> anyhow::Result<RawPass> {
    let r = raw_delivery(rpc_url, head).await?;
    if r.logs != n {
        bail!("eth_getLogs returned {} logs, expected {n}", r.logs);
    }
    Ok(r)
}
