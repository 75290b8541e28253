//! Live push: the latency from a block's indexing to its changes reaching GraphQL
//! subscribers over WebSocket, for 1, 100 and 1,000 open subscriptions, and the memory each
//! subscription costs.
//!
//! The server runs in this process on a fresh database; blocks of ERC20 transfers are written
//! through the indexer's write path (`store::write_batch` with the change feed, as the live
//! follower writes them), `--spacing-ms` apart; every subscriber (`erc20Transfers`, no filter,
//! `graphql-transport-ws`, a client in this process) receives every transfer. A block's
//! latency for one subscriber is from `write_batch` returning (the commit is visible) to the
//! arrival of the block's first change at that subscriber; the report gives the median, the
//! 99th percentile and the worst over all (subscriber, block) pairs, and the resident memory
//! the process grew by while the subscriptions opened, per subscription (client and server
//! sides together: an upper bound of the server's share).
//!
//! ```text
//! cargo bench --bench live -- --backends sqlite,postgres
//! cargo bench --bench live -- --help
//! ```
//!
//! See `docs/BENCHMARKS.md` ("Live push").
#![allow(clippy::print_stdout)] // the report is this program's output

use std::time::{Duration, Instant};

use alloy::primitives::B256;
use clap::Parser;
use migration::MigratorTrait;
use sea_orm::{ConnectionTrait, DatabaseConnection};
use serde_json::json;

use tokenql::decode::{Erc20Move, EventMeta};
use tokenql::store::{write_batch, Batch, BlockHeader, Checkpoint};
use tokenql::types::{Address, Chain, Uint256};

#[path = "../tests/support/live.rs"]
#[allow(dead_code)] // the bench uses part of the tests' client
mod live;
use live::{ws_url, Protocol, Subscription};

/// Live push latency and memory (see docs/BENCHMARKS.md).
#[derive(Parser, Debug)]
#[command(name = "live")]
struct Args {
    /// Backends, comma-separated: sqlite, postgres.
    #[arg(long, default_value = "sqlite,postgres", value_delimiter = ',')]
    backends: Vec<String>,
    /// Numbers of open subscriptions, comma-separated.
    #[arg(long, default_value = "1,100,1000", value_delimiter = ',')]
    subscriptions: Vec<usize>,
    /// Blocks written per measurement.
    #[arg(long, default_value_t = 20)]
    blocks: u64,
    /// ERC20 transfers per block.
    #[arg(long, default_value_t = 10)]
    transfers: u64,
    /// Milliseconds between blocks.
    #[arg(long, default_value_t = 200)]
    spacing_ms: u64,
    /// (passed by `cargo bench`; ignored)
    #[arg(long, hide = true)]
    bench: bool,
}

const QUERY: &str =
    "subscription { erc20Transfers { kind position transfer { blockNumber logIndex value } } }";

fn hash(tag: u8, n: u64) -> B256 {
    let mut b = [tag; 32];
    b[24..].copy_from_slice(&n.to_be_bytes());
    B256::from(b)
}

fn address(n: u64) -> Address {
    let mut w = [0u8; 32];
    w[24..].copy_from_slice(&(n + 1).to_be_bytes());
    Address::from_word(&w)
}

/// A block of `k` transfers, as the follower writes it.
fn block(n: u64, k: u64) -> Batch {
    let header = BlockHeader {
        number: n,
        hash: hash(0xb1, n),
        parent_hash: n.checked_sub(1).map(|p| hash(0xb1, p)),
        timestamp: 1_700_000_000 + n * 12,
    };
    let erc20 = (0..k)
        .map(|i| Erc20Move {
            meta: EventMeta {
                contract: address(7),
                block_number: n,
                block_hash: header.hash,
                transaction_hash: hash(0x7a, n * 1_000 + i),
                transaction_index: i as u32,
                log_index: i as u32,
            },
            from: address(100 + i),
            to: address(200 + i),
            value: Uint256::from_u64(1 + i),
        })
        .collect();
    Batch {
        blocks: vec![header],
        erc20,
        checkpoint: Some(Checkpoint {
            start_block: 0,
            indexed_block: Some(n),
            head_block: n,
        }),
        feed: Some(Default::default()),
        ..Default::default()
    }
}

/// This process's resident memory, in KiB.
fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

/// A fresh, migrated database of `backend`, and how to drop it.
async fn fresh(backend: &str) -> anyhow::Result<(String, Option<(String, String)>)> {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)?
        .as_secs();
    Ok(match backend {
        "sqlite" => {
            let path = std::env::temp_dir().join(format!("tq_bench_live_{stamp}.db"));
            (format!("sqlite://{}?mode=rwc", path.display()), None)
        }
        "postgres" => {
            let server = std::env::var("TOKENQL_TEST_POSTGRES_URL")
                .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432".to_string());
            let name = format!("tq_bench_live_{stamp}");
            let admin = sea_orm::Database::connect(format!("{server}/postgres")).await?;
            admin
                .execute_unprepared(&format!("CREATE DATABASE {name}"))
                .await?;
            (
                format!("{server}/{name}"),
                Some((format!("{server}/postgres"), name)),
            )
        }
        other => anyhow::bail!("unknown backend {other}: expected sqlite or postgres"),
    })
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// One measurement: `n` subscriptions, `args.blocks` blocks.
async fn measure(
    db: &DatabaseConnection,
    ws: &str,
    key: &str,
    n: usize,
    next_block: &mut u64,
    args: &Args,
    label: &str,
) -> anyhow::Result<()> {
    let before = rss_kib();
    let mut subs = Vec::with_capacity(n);
    for _ in 0..n {
        let s = Subscription::open(ws, Some(key), Protocol::TransportWs, QUERY, json!({}))
            .await
            .map_err(|r| anyhow::anyhow!("subscription refused: {r:?}"))?;
        subs.push(s);
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let per_sub = rss_kib().saturating_sub(before) as f64 / n as f64;
    let first = *next_block;
    let mut committed = Vec::new();
    for _ in 0..args.blocks {
        let b = *next_block;
        *next_block += 1;
        write_batch(db, Chain::ETH, &block(b, args.transfers)).await?;
        committed.push((b, Instant::now()));
        tokio::time::sleep(Duration::from_millis(args.spacing_ms)).await;
    }
    let want = (args.blocks * args.transfers) as usize;
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline && subs.iter().any(|s| s.snapshot().data.len() < want) {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let mut latencies = Vec::new();
    let mut complete = 0;
    for s in &subs {
        let got = s.snapshot();
        if got.data.len() >= want {
            complete += 1;
        }
        for (b, at) in &committed {
            let arrived = got.data.iter().find(|(_, d)| {
                let n = &d["erc20Transfers"]["transfer"]["blockNumber"];
                n.as_str()
                    .and_then(|v| v.parse::<u64>().ok())
                    .or_else(|| n.as_u64())
                    == Some(*b)
            });
            if let Some((t, _)) = arrived {
                latencies.push(t.saturating_duration_since(*at).as_secs_f64() * 1e3);
            }
        }
    }
    latencies.sort_by(f64::total_cmp);
    println!(
        "[{label}] {n:>5} subscriptions, blocks {first}..{}: latency p50 {:.1} ms, p99 {:.1} ms, \
         max {:.1} ms; {complete}/{n} received all {want} changes; {:.0} KiB resident per \
         subscription",
        *next_block - 1,
        percentile(&latencies, 0.5),
        percentile(&latencies, 0.99),
        latencies.last().copied().unwrap_or(f64::NAN),
        per_sub,
    );
    for s in subs {
        s.disconnect();
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    Ok(())
}

async fn run(backend: &str, args: &Args) -> anyhow::Result<()> {
    let (url, drop) = fresh(backend).await?;
    let db = tokenql::store::database::connect(&url, 8).await?;
    migration::Migrator::up(&db, None).await?;
    let (_, key) = tokenql::keys::create_with_rate(
        &db,
        "live-bench",
        tokenql::keys::KeyRate {
            per_sec: Some(0),
            burst: None,
        },
    )
    .await?;
    let options = tokenql::app::ServerOptions {
        live: tokenql::app::live::LiveOptions {
            per_key: 100_000,
            ..Default::default()
        },
        ..Default::default()
    };
    let state = tokenql::AppState::new(db.clone(), Default::default())
        .await?
        .with_options(options);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let ws = ws_url(&format!("http://{}", listener.local_addr()?));
    tokio::spawn(tokenql::server::run(
        listener,
        state,
        std::future::pending(),
    ));
    let mut next_block = 1;
    write_batch(&db, Chain::ETH, &block(0, 0)).await?;
    for &n in &args.subscriptions {
        measure(&db, &ws, &key, n, &mut next_block, args, backend).await?;
    }
    db.close().await?;
    if let Some((admin, name)) = drop {
        let admin = sea_orm::Database::connect(admin).await?;
        admin
            .execute_unprepared(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
            .await?;
    }
    Ok(())
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tokenql::tls::ensure_crypto_provider();
    let args = Args::parse();
    for backend in &args.backends {
        run(backend, &args).await?;
    }
    Ok(())
}
