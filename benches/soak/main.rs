//! Soak: does the release server's memory stay flat over a long run? A real chain with live
//! traffic, `tokenql serve` indexing it, and a steady mixed REST/GraphQL load; or the indexer
//! alone through a long catch-up and then live following.
//!
//! ```text
//! cargo bench --bench soak -- --backend sqlite --minutes 30
//! cargo bench --bench soak -- --mode indexer --backend postgres --minutes 30 --logs 1000000
//! cargo bench --bench soak -- --help
//! ```
//!
//! **Server mode**: anvil (`tools/chain/...` or `$TOKENQL_ANVIL`) with the test contracts and
//! `--wallets` trading wallets; a fresh, migrated database (`tq_soak_*`); the release
//! `tokenql serve --rpc eth=… --start-block eth=0` on it, with its default rate limits and
//! off-chain workers. A round of chain traffic every `--traffic-secs` (`chain.rs`); `--clients`
//! closed-loop clients send the mix of `mix.rs` (valid and invalid REST and GraphQL, unknown
//! keys, a rate-limited key, unknown paths) for `--minutes`. VmRSS of the server is sampled every
//! `--sample-secs`. At the end the traffic stops, the indexer catches up, and every wallet's
//! transfers and NFTs over REST (and a few over GraphQL) are checked against the chain.
//!
//! **Indexer mode**: `--logs` real `Transfer` logs are mined first (`emitTransfers`), then
//! `tokenql index` follows the chain from block 0: the catch-up, then live traffic (a round and
//! 2,000 more logs every `--traffic-secs`) until `--minutes` after the catch-up. RSS is reported
//! against the blocks and logs stored; at the end, the stored transfer counts must equal the
//! chain's.
//!
//! The report (also in `target/soak/`, with the samples as CSV) gives RSS at start, after
//! `--warmup-minutes` and at the end, the least-squares slope after warm-up (limit 0.1
//! MiB/min), and the mean of the last 10 minutes against minutes 5–10 (limit 5%). See
//! docs/BENCHMARKS.md ("Soak").
#![allow(clippy::print_stdout)] // the report is this program's output

#[path = "../../tests/support/anvil.rs"]
mod anvil;
mod chain;
#[path = "../../tests/support/common/mod.rs"]
mod common;
#[path = "../../tests/support/indexer/mod.rs"]
mod indexer_support;
#[allow(dead_code)] // the soak uses the server runner and /proc readers of the scale bench
#[path = "../scale/load.rs"]
mod load;
mod mix;
mod rss;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use clap::Parser;
use sea_orm::{ConnectionTrait, DatabaseConnection, DbBackend, Statement};

use anvil::{token_ctor, Anvil};
use common::{Backend, FreshDb, TestApp};
use rss::Sample;

/// Soak (see docs/BENCHMARKS.md).
#[derive(Parser, Debug, Clone)]
#[command(name = "soak")]
struct Args {
    /// `server` (serve + load) or `indexer` (catch-up, then live following).
    #[arg(long, default_value = "server")]
    mode: String,
    /// sqlite, postgres or mysql (servers: $TOKENQL_TEST_POSTGRES_URL, $TOKENQL_TEST_MYSQL_URL).
    #[arg(long, default_value = "sqlite")]
    backend: String,
    /// Measured minutes (server: under load; indexer: after the catch-up).
    #[arg(long, default_value_t = 30.0)]
    minutes: f64,
    /// Minutes not counted in the slope.
    #[arg(long, default_value_t = 5.0)]
    warmup_minutes: f64,
    /// Concurrent clients (server mode).
    #[arg(long, default_value_t = 8)]
    clients: usize,
    /// Seconds between RSS samples.
    #[arg(long, default_value_t = 5)]
    sample_secs: u64,
    /// Seconds between rounds of chain traffic.
    #[arg(long, default_value_t = 20)]
    traffic_secs: u64,
    /// ERC20 transfers per round.
    #[arg(long, default_value_t = 40)]
    transfers_per_round: usize,
    /// Trading wallets.
    #[arg(long, default_value_t = 40)]
    wallets: usize,
    /// Logs mined before the indexer starts (indexer mode).
    #[arg(long, default_value_t = 1_000_000)]
    logs: u64,
    /// The server's database pool (`serve --db-pool`; default: the server's own, 4 on SQLite
    /// and 16 otherwise).
    #[arg(long)]
    db_pool: Option<u32>,
    /// The tokenql binary (default: the one built with this bench), e.g. a build without
    /// mimalloc for a heap profiler, or an older build for before/after figures.
    #[arg(long)]
    server_bin: Option<PathBuf>,
    /// Run the server under this wrapper (e.g. `heaptrack`); RSS is then the wrapper's child's.
    #[arg(long)]
    wrapper: Option<String>,
    /// (passed by `cargo bench`; ignored)
    #[arg(long, hide = true)]
    bench: bool,
}

fn out_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/soak")
}

fn backend(name: &str) -> anyhow::Result<Backend> {
    let (b, var, default) = match name {
        "sqlite" => return Ok(Backend::Sqlite),
        "postgres" | "pg" => (
            Backend::Postgres,
            "TOKENQL_TEST_POSTGRES_URL",
            "postgres://postgres@127.0.0.1:5432",
        ),
        "mysql" | "mariadb" => (
            Backend::Mysql,
            "TOKENQL_TEST_MYSQL_URL",
            "mysql://root@127.0.0.1:3306",
        ),
        o => bail!("unknown backend {o}"),
    };
    if std::env::var(var).map_or(true, |v| v.trim().is_empty()) {
        // Read by tests/support/common when it creates the database; set before any thread starts.
        std::env::set_var(var, default);
    }
    Ok(b)
}

/// An address (`0x…` text) as a binary literal of the backend's SQL.
fn bytes_literal(backend: DbBackend, address: &str) -> String {
    let hex = address.trim_start_matches("0x").to_lowercase();
    match backend {
        DbBackend::Postgres => format!("'\\x{hex}'::bytea"),
        _ => format!("X'{hex}'"),
    }
}

async fn scalar(db: &DatabaseConnection, sql: &str) -> Option<i64> {
    let row = db
        .query_one_raw(Statement::from_string(db.get_database_backend(), sql))
        .await
        .ok()??;
    row.try_get_by_index::<Option<i64>>(0).ok().flatten()
}

async fn indexed_block(db: &DatabaseConnection) -> Option<i64> {
    scalar(
        db,
        "SELECT indexed_block FROM chain_state WHERE chain_id = 1",
    )
    .await
}

/// Samples VmRSS of `pid` (and progress from `db`) every `every` until `stop`.
fn sampler(
    pid: u32,
    db: DatabaseConnection,
    t0: Arc<Mutex<Instant>>,
    every: Duration,
    counts: Option<Arc<mix::Counts>>,
    count_logs: bool,
    stop: Arc<AtomicBool>,
) -> tokio::task::JoinHandle<Vec<Sample>> {
    tokio::spawn(async move {
        let mut samples = Vec::new();
        let mut tick = tokio::time::interval(every);
        while !stop.load(Ordering::Relaxed) {
            tick.tick().await;
            let Some(rss) = load::vm_mib(pid, "VmRSS:") else {
                break;
            };
            let origin = *t0.lock().unwrap_or_else(|p| p.into_inner());
            let now = Instant::now();
            let t = if now >= origin {
                now.duration_since(origin).as_secs_f64()
            } else {
                -origin.duration_since(now).as_secs_f64()
            };
            let logs = if count_logs {
                scalar(&db, "SELECT COUNT(*) FROM erc20_transfers").await
            } else {
                None
            };
            samples.push(Sample {
                t,
                rss,
                requests: counts
                    .as_ref()
                    .map_or(0, |c| c.requests.load(Ordering::Relaxed)),
                block: indexed_block(&db).await,
                logs,
            });
        }
        samples
    })
}

/// Chain traffic so far: the world, bulk logs emitted, rounds that failed.
type Traffic = Arc<tokio::sync::Mutex<(chain::World, u64, u64)>>;

/// Runs a round of chain traffic every `every` until `stop`; 2,000 more logs per round on
/// `bulk` (indexer mode). A round that fails (the node refuses a transaction) is counted and
/// the next one goes on.
fn traffic(
    chain: Arc<Anvil>,
    world: chain::World,
    per_round: usize,
    every: Duration,
    bulk: Option<(String, u64)>,
    stop: Arc<AtomicBool>,
) -> (Traffic, tokio::task::JoinHandle<()>) {
    let state: Traffic = Arc::new(tokio::sync::Mutex::new((world, 0, 0)));
    let shared = state.clone();
    let task = tokio::spawn(async move {
        while !stop.load(Ordering::Relaxed) {
            let (chain, round_state, bulk) = (chain.clone(), state.clone(), bulk.clone());
            let round = tokio::spawn(async move {
                let mut s = round_state.lock().await;
                s.0.round(&chain, per_round).await;
                if let Some((token, first)) = &bulk {
                    chain.emit_transfer_logs(token, first + s.1, 2_000).await;
                    s.1 += 2_000;
                }
            });
            if let Err(e) = round.await {
                println!("soak: a round of chain traffic failed: {e}");
                state.lock().await.2 += 1;
            }
            let until = Instant::now() + every;
            while Instant::now() < until && !stop.load(Ordering::Relaxed) {
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    });
    (shared, task)
}

/// Waits `minutes`, printing once a minute the RSS of `pid` and `progress`.
async fn every_minute_for<F, Fut>(minutes: f64, pid: u32, progress: F)
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = String>,
{
    let total = Duration::from_secs_f64(minutes * 60.0);
    let start = Instant::now();
    while start.elapsed() < total {
        tokio::time::sleep(Duration::from_secs(60).min(total.saturating_sub(start.elapsed())))
            .await;
        println!(
            "  {:>5.1} min  RSS {:>6.1} MiB  {}",
            start.elapsed().as_secs_f64() / 60.0,
            load::vm_mib(pid, "VmRSS:").unwrap_or(0.0),
            progress().await
        );
    }
}

/// The pid whose RSS counts: the server itself, or the wrapper's child.
fn measured_pid(pid: u32, wrapped: bool) -> u32 {
    if !wrapped {
        return pid;
    }
    for _ in 0..100 {
        if let Ok(c) = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")) {
            if let Some(child) = c.split_whitespace().next().and_then(|c| c.parse().ok()) {
                return child;
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    pid
}

/// `MODE-BACKEND-SECONDS-PID`: runs started together get files of their own.
fn run_name(mode: &str, backend: &str) -> anyhow::Result<String> {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)?
        .as_secs();
    Ok(format!("{mode}-{backend}-{secs}-{}", std::process::id()))
}

fn save(name: &str, report: &str, samples: &[Sample]) -> anyhow::Result<()> {
    let dir = out_dir();
    std::fs::create_dir_all(&dir)?;
    std::fs::write(dir.join(format!("{name}.txt")), report)?;
    std::fs::write(dir.join(format!("{name}.csv")), rss::csv(samples))?;
    println!(
        "report: {}  samples: {}",
        dir.join(format!("{name}.txt")).display(),
        dir.join(format!("{name}.csv")).display()
    );
    Ok(())
}

async fn server_soak(args: &Args, backend: Backend) -> anyhow::Result<bool> {
    let name = run_name("server", &args.backend)?;
    let chain = Arc::new(Anvil::start(args.wallets + 5, &[]).await);
    let world = chain::World::deploy(&chain, args.wallets, 0x50a7).await;
    let fresh = FreshDb::create(backend, "tq_soak").await;
    let (check, check_key) =
        tokenql::keys::create_with_rate(&fresh.db, "soak-check", unlimited()).await?;
    let mut keys = Vec::new();
    for i in 0..20 {
        keys.push(
            tokenql::keys::create_with_rate(&fresh.db, &format!("soak-{i}"), unlimited())
                .await?
                .1,
        );
    }
    let (_, limited_key) = tokenql::keys::create_with_rate(
        &fresh.db,
        "soak-limited",
        tokenql::keys::KeyRate {
            per_sec: Some(2),
            burst: Some(2),
        },
    )
    .await?;

    std::fs::create_dir_all(out_dir())?;
    let media = out_dir().join(format!("{name}-media"));
    let mut extra: Vec<String> = vec![
        "--rpc".into(),
        format!("eth={}", chain.url),
        "--start-block".into(),
        "eth=0".into(),
        "--media-dir".into(),
        media.display().to_string(),
    ];
    if let Some(pool) = args.db_pool {
        extra.extend(["--db-pool".into(), pool.to_string()]);
    }
    let bin = args.server_bin.clone();
    let log = out_dir().join(format!("{name}.log"));
    let server = match &args.wrapper {
        None => load::start_server(bin.as_deref(), &fresh.url, &extra, &log).await?,
        Some(w) => {
            // `wrapper tokenql ...`: the wrapper takes the binary as its first argument.
            let real = bin.unwrap_or(PathBuf::from(env!("CARGO_BIN_EXE_tokenql")));
            let prefix = [real.display().to_string()];
            load::start_server_under(std::path::Path::new(w), &prefix, &fresh.url, &extra, &log)
                .await?
        }
    };
    let pid = measured_pid(server.pid(), args.wrapper.is_some());
    println!(
        "soak: {} server pid {pid} on {}, anvil {}, log {}",
        args.backend,
        server.base,
        chain.url,
        log.display()
    );
    indexer_support::wait_synced(&fresh.db, &chain, Duration::from_secs(300)).await;

    let stop_all = Arc::new(AtomicBool::new(false));
    let t0 = Arc::new(Mutex::new(Instant::now() + Duration::from_secs(3_600)));
    let counts = Arc::new(mix::Counts::default());
    let samples = sampler(
        pid,
        fresh.db.clone(),
        t0.clone(),
        Duration::from_secs(args.sample_secs),
        Some(counts.clone()),
        false,
        stop_all.clone(),
    );
    // Two samples of the idle, synced server before the load.
    tokio::time::sleep(Duration::from_secs(args.sample_secs * 2)).await;
    let head = chain.head().await;
    let target = Arc::new(mix::Target {
        base: server.base.clone(),
        keys,
        limited_key,
        wallets: world.wallets.clone(),
        tokens: world.tokens.clone(),
        collections: vec![world.nft.clone(), world.multi.clone()],
        head,
    });
    let stop_chain = Arc::new(AtomicBool::new(false));
    let (traffic, traffic_task) = traffic(
        chain.clone(),
        world,
        args.transfers_per_round,
        Duration::from_secs(args.traffic_secs),
        None,
        stop_chain.clone(),
    );
    *t0.lock().unwrap_or_else(|p| p.into_inner()) = Instant::now();
    let stop_load = Arc::new(AtomicBool::new(false));
    let clients: Vec<_> = (0..args.clients)
        .map(|i| {
            tokio::spawn(mix::client(
                i,
                target.clone(),
                counts.clone(),
                stop_load.clone(),
            ))
        })
        .collect();
    let started = Instant::now();
    every_minute_for(args.minutes, pid, || async { counts.summary() }).await;
    stop_load.store(true, Ordering::Relaxed);
    for c in clients {
        let _ = c.await;
    }
    let elapsed = started.elapsed().as_secs_f64();
    stop_chain.store(true, Ordering::Relaxed);
    let _ = traffic_task.await;
    let traffic = traffic.lock().await;
    let (world, failed_rounds) = (&traffic.0, traffic.2);
    // One more sample at the end of the load, then stop sampling.
    tokio::time::sleep(Duration::from_secs(args.sample_secs)).await;
    stop_all.store(true, Ordering::Relaxed);
    let samples: Vec<Sample> = samples
        .await?
        .into_iter()
        .filter(|s| s.t <= elapsed + 1.0)
        .collect();

    let mut report = format!(
        "soak (server) on {} for {:.1} min, {} clients, chain traffic every {} s ({} transactions, {} reverted, {failed_rounds} rounds failed)\n",
        args.backend,
        elapsed / 60.0,
        args.clients,
        args.traffic_secs,
        world.sent,
        world.reverted
    );
    report.push_str(&format!(
        "{}\n{:.0} requests/s\n",
        counts.summary(),
        counts.requests.load(Ordering::Relaxed) as f64 / elapsed
    ));
    for e in counts
        .examples
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .iter()
    {
        report.push_str(&format!("  unexpected: {e}\n"));
    }
    let flat = rss::flatness(&samples, 0.0, args.warmup_minutes * 60.0);
    for l in &flat.lines {
        report.push_str(l);
        report.push('\n');
    }
    report.push_str(&rss::per_minute(&samples, 0.0));
    let no_5xx = counts.server_errors.load(Ordering::Relaxed) == 0;
    let expected = counts.unexpected.load(Ordering::Relaxed) == 0;
    report.push_str(&format!(
        "5xx: {}\nevery answer as expected: {}\n",
        if no_5xx { "none: PASS" } else { "FAIL" },
        if expected { "PASS" } else { "FAIL" }
    ));
    println!("{report}");

    // The truth: with the traffic stopped and the indexer caught up, every wallet's answers
    // against the chain.
    indexer_support::wait_synced(&fresh.db, &chain, Duration::from_secs(300)).await;
    let app = TestApp::external(fresh, server.base.clone(), check_key, check.id);
    let truth = truth_check(&app, &chain, world).await;
    report.push_str(&truth);
    println!("{truth}");
    save(&name, &report, &samples)?;
    drop(server);
    app.cleanup().await;
    Ok(flat.slope_ok && flat.windows_ok && no_5xx && expected)
}

fn unlimited() -> tokenql::keys::KeyRate {
    tokenql::keys::KeyRate {
        per_sec: Some(0),
        burst: None,
    }
}

/// Every wallet's ERC20 transfers and NFTs over REST against the chain's logs, `ownerOf` and
/// `balanceOf`; the first five wallets' NFTs also over GraphQL against REST. Panics on a
/// difference (the test helpers' assertions).
async fn truth_check(app: &TestApp, chain: &Anvil, world: &chain::World) -> String {
    let erc20 = indexer_support::chain_erc20(chain, &world.tokens).await;
    let owners = indexer_support::chain_721_owners(chain, &world.nft, &world.nft_ids).await;
    let ids: std::collections::BTreeSet<u64> = [1, 2, 3].into_iter().collect();
    let balances =
        indexer_support::chain_1155_balances(chain, &world.multi, &world.wallets, &ids).await;
    let (mut transfers, mut nfts) = (0, 0);
    for (i, w) in world.wallets.iter().enumerate() {
        let want: BTreeMap<_, _> = erc20
            .iter()
            .filter(|(_, (_, f, t, _))| f == w || t == w)
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let got = indexer_support::api_erc20(app, w).await;
        assert_eq!(
            got, want,
            "ERC20 transfers of {w}: the API differs from the chain"
        );
        transfers += got.len();
        let mut want: BTreeMap<(String, String), String> = owners
            .iter()
            .filter(|(_, o)| *o == w)
            .map(|(id, _)| ((world.nft.clone(), id.to_string()), "1".to_string()))
            .collect();
        for ((o, id), b) in &balances {
            if o == w {
                want.insert((world.multi.clone(), id.to_string()), b.clone());
            }
        }
        let got = indexer_support::api_nfts(app, w).await;
        assert_eq!(got, want, "NFTs of {w}: the API differs from the chain");
        nfts += got.len();
        if i < 5 {
            let rest = app.rest_nfts(w, 100).await;
            let gql = app.gql_nfts(w, 100).await;
            common::assert_same_records(&format!("NFTs of {w}"), &rest, &gql, common::NFT_FIELDS);
        }
    }
    format!(
        "truth: {} wallets, {transfers} transfer records and {nfts} NFT holdings over REST equal the chain's; 5 wallets' NFTs over GraphQL equal REST's: PASS\n",
        world.wallets.len()
    )
}

async fn indexer_soak(args: &Args, backend: Backend) -> anyhow::Result<bool> {
    let name = run_name("indexer", &args.backend)?;
    // As the ingest bench: blocks mined on demand, and no base fee (a batch of full blocks
    // would otherwise price the later transactions of the batch out).
    let chain = Arc::new(Anvil::start(args.wallets + 5, &["--no-mining", "--base-fee", "0"]).await);
    let bulk = chain
        .deploy("TestToken", token_ctor("Bulk", "BLK", 18))
        .await;
    let t = Instant::now();
    // Before the world turns automine off (see `traffic`).
    chain.emit_transfer_logs(&bulk, 0, args.logs).await;
    let world = chain::World::deploy(&chain, args.wallets, 0x1d3).await;
    let head = chain.head().await;
    println!(
        "soak: {} logs mined in {:.0} s, head {head}",
        args.logs,
        t.elapsed().as_secs_f64()
    );
    let fresh = FreshDb::create(backend, "tq_soak").await;
    std::fs::create_dir_all(out_dir())?;
    let log = out_dir().join(format!("{name}.log"));
    let bin = args
        .server_bin
        .clone()
        .unwrap_or(PathBuf::from(env!("CARGO_BIN_EXE_tokenql")));
    let log_file = std::fs::File::create(&log)?;
    let mut child = std::process::Command::new(&bin)
        .args(["--database-url", &fresh.url, "index", "--rpc"])
        .arg(format!("eth={}", chain.url))
        .args(["--start-block", "eth=0"])
        .env("RUST_LOG", "warn")
        .stdout(log_file.try_clone()?)
        .stderr(log_file)
        .spawn()
        .with_context(|| format!("starting {}", bin.display()))?;
    let pid = child.id();
    println!(
        "soak: indexer pid {pid}, anvil {}, log {}",
        chain.url,
        log.display()
    );

    let stop_all = Arc::new(AtomicBool::new(false));
    let t0 = Arc::new(Mutex::new(Instant::now() + Duration::from_secs(36_000)));
    let samples = sampler(
        pid,
        fresh.db.clone(),
        t0.clone(),
        Duration::from_secs(args.sample_secs),
        None,
        true,
        stop_all.clone(),
    );
    let started = Instant::now();
    loop {
        if indexed_block(&fresh.db).await.unwrap_or(-1) >= head as i64 {
            break;
        }
        if started.elapsed() > Duration::from_secs(3_600) {
            bail!(
                "the indexer did not catch up within an hour (log: {})",
                log.display()
            );
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let catch_up = started.elapsed().as_secs_f64();
    println!("soak: caught up with {head} blocks in {catch_up:.0} s");
    *t0.lock().unwrap_or_else(|p| p.into_inner()) = Instant::now();
    let stop_chain = Arc::new(AtomicBool::new(false));
    let (traffic, traffic_task) = traffic(
        chain.clone(),
        world,
        args.transfers_per_round,
        Duration::from_secs(args.traffic_secs),
        Some((bulk.clone(), args.logs)),
        stop_chain.clone(),
    );
    let live = Instant::now();
    every_minute_for(args.minutes, pid, || async {
        format!("indexed block {:?}", indexed_block(&fresh.db).await)
    })
    .await;
    let elapsed = live.elapsed().as_secs_f64();
    stop_chain.store(true, Ordering::Relaxed);
    let _ = traffic_task.await;
    let traffic = traffic.lock().await;
    let (world, emitted, failed_rounds) = (&traffic.0, traffic.1, traffic.2);
    indexer_support::wait_synced(&fresh.db, &chain, Duration::from_secs(300)).await;
    tokio::time::sleep(Duration::from_secs(args.sample_secs)).await;
    stop_all.store(true, Ordering::Relaxed);
    let samples = samples.await?;

    let mut report = format!(
        "soak (indexer) on {}: {} logs of catch-up in {catch_up:.0} s ({} blocks), then {:.1} min live ({} transactions, {} reverted, {failed_rounds} rounds failed, {emitted} more bulk logs)\n",
        args.backend,
        args.logs,
        head,
        elapsed / 60.0,
        world.sent,
        world.reverted
    );
    report.push_str("RSS during the catch-up, against transfers stored:\n");
    let mut next = 0i64;
    for s in samples.iter().filter(|s| s.t <= 0.0) {
        if let Some(l) = s.logs {
            if l >= next {
                report.push_str(&format!(
                    "  {:>9} transfers, block {:>6}: {:>6.1} MiB\n",
                    l,
                    s.block.unwrap_or(0),
                    s.rss
                ));
                next = l + 100_000;
            }
        }
    }
    let live_samples: Vec<Sample> = samples
        .iter()
        .copied()
        .filter(|s| s.t <= elapsed + 1.0)
        .collect();
    let flat = rss::flatness(&live_samples, 0.0, args.warmup_minutes * 60.0);
    for l in &flat.lines {
        report.push_str(l);
        report.push('\n');
    }
    report.push_str(&rss::per_minute(&live_samples, 0.0));

    // The truth: every transfer of the chain stored, no more.
    let bulk_want = (args.logs + emitted) as i64;
    let bulk_got = scalar(
        &fresh.db,
        &format!(
            "SELECT COUNT(*) FROM erc20_transfers WHERE contract_address = {}",
            bytes_literal(fresh.db.get_database_backend(), &bulk)
        ),
    )
    .await;
    let live_want = indexer_support::chain_erc20(&chain, &world.tokens)
        .await
        .len() as i64;
    let all = scalar(&fresh.db, "SELECT COUNT(*) FROM erc20_transfers").await;
    let truth_ok = bulk_got == Some(bulk_want) && all == Some(bulk_want + live_want);
    report.push_str(&format!(
        "truth: bulk transfers stored {bulk_got:?} (chain {bulk_want}), all stored {all:?} (chain {}): {}\n",
        bulk_want + live_want,
        if truth_ok { "PASS" } else { "FAIL" }
    ));
    println!("{report}");
    save(&name, &report, &samples)?;
    let _ = child.kill();
    let _ = child.wait();
    fresh.drop_database().await;
    Ok(flat.slope_ok && flat.windows_ok && truth_ok)
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let backend = backend(&args.backend)?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let ok = rt.block_on(async {
        match args.mode.as_str() {
            "server" => server_soak(&args, backend).await,
            "indexer" => indexer_soak(&args, backend).await,
            m => bail!("unknown mode {m}: server or indexer"),
        }
    })?;
    println!("soak: {}", if ok { "PASS" } else { "FAIL" });
    if !ok {
        std::process::exit(1);
    }
    Ok(())
}
