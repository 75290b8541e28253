//! Query performance at scale: a persistent power-law dataset (10M ERC20 transfers, 1M NFT
//! holdings, a whale owning 100k NFTs, a token with 2M transfers) loaded through the indexer's
//! write path, the real release server driven over REST and GraphQL at several
//! concurrencies, next to the same SQL statements replayed directly on the database and a
//! static route as the HTTP ceiling.
//!
//! ```text
//! cargo bench --bench scale -- --backends postgres --size 10m
//! cargo bench --bench scale -- --help
//! ```
//!
//! The load leaves the address and holders indexes out and builds them at the end, as the
//! indexer's backfill of a fresh database does; `TOKENQL_BENCH_KEEP_INDEXES=1` keeps them up
//! row by row instead. See `docs/BENCHMARKS.md` ("Query performance at scale") for what it
//! measures and figures.
#![allow(clippy::print_stdout)] // the report is this program's output

mod dataset;
mod load;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{bail, Context};
use axum::body::Body;
use axum::http::Request;
use clap::Parser;
use http_body_util::BodyExt;
use migration::MigratorTrait;
use sea_orm::{ConnectionTrait, DatabaseConnection, Statement};
use serde_json::{json, Value};
use tower::ServiceExt;

use dataset::Params;
use load::{Measure, Req};

#[path = "../../tests/support/common/db_url.rs"]
mod db_url;
use db_url::split_server_url;

/// Query performance at scale (see docs/BENCHMARKS.md).
#[derive(Parser, Debug)]
#[command(name = "scale")]
struct Args {
    /// Backends, comma-separated: postgres, mysql, sqlite.
    #[arg(long, default_value = "postgres", value_delimiter = ',')]
    backends: Vec<String>,
    /// Dataset sizes, comma-separated: 10m (10M transfers, 1M NFT holdings) and/or 1m (all
    /// counts divided by 10).
    #[arg(long, default_value = "10m", value_delimiter = ',')]
    size: Vec<String>,
    /// Drop and regenerate the datasets even when a complete one is stored.
    #[arg(long)]
    regenerate: bool,
    /// Only make sure the datasets are loaded.
    #[arg(long)]
    load_only: bool,
    /// Measured seconds per run.
    #[arg(long, default_value_t = 10)]
    duration: u64,
    /// Warm-up seconds before each run (not measured).
    #[arg(long, default_value_t = 2)]
    warmup: u64,
    /// Rounds per (API, shape, concurrency): each round measures tokenql, then the raw SQL
    /// replay, right after each other; with several, the ratios' median and range are printed
    /// too (the two measurements of a round share the machine's state of the moment).
    #[arg(long, default_value_t = 1)]
    rounds: usize,
    /// Concurrencies, comma-separated.
    #[arg(long, default_value = "1,16,64", value_delimiter = ',')]
    concurrency: Vec<usize>,
    /// Query shapes to run (default: all), comma-separated; see the report for names.
    #[arg(long, value_delimiter = ',')]
    shapes: Vec<String>,
    /// APIs: rest, graphql.
    #[arg(long, default_value = "rest,graphql", value_delimiter = ',')]
    api: Vec<String>,
    /// The server's database pool (`serve --db-pool`); the raw SQL replay uses the same.
    #[arg(long, default_value_t = 16)]
    db_pool: u32,
    /// Also run pgbench on PostgreSQL with the captured statements.
    #[arg(long)]
    pgbench: bool,
    /// Skip the raw SQL replay.
    #[arg(long)]
    no_raw: bool,
    /// Print the EXPLAIN plan of every captured statement.
    #[arg(long)]
    explain: bool,
    /// The server binary to drive (default: the `tokenql` built with this bench), e.g. a copy
    /// of an older build for before/after figures.
    #[arg(long)]
    server_bin: Option<PathBuf>,
    /// (passed by `cargo bench`; ignored)
    #[arg(long, hide = true)]
    bench: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Backend {
    Sqlite,
    Postgres,
    Mysql,
}

impl Backend {
    fn parse(s: &str) -> anyhow::Result<Self> {
        Ok(match s.trim() {
            "sqlite" => Backend::Sqlite,
            "postgres" | "pg" | "postgresql" => Backend::Postgres,
            "mysql" | "mariadb" => Backend::Mysql,
            o => bail!("unknown backend {o}"),
        })
    }
    fn name(self) -> &'static str {
        match self {
            Backend::Sqlite => "sqlite",
            Backend::Postgres => "postgres",
            Backend::Mysql => "mysql",
        }
    }
    fn server(self) -> Option<String> {
        let env = |n: &str, d: &str| match std::env::var(n) {
            Ok(v) if !v.trim().is_empty() => v.trim().to_string(),
            _ => d.to_string(),
        };
        match self {
            Backend::Sqlite => None,
            Backend::Postgres => Some(env(
                "TOKENQL_TEST_POSTGRES_URL",
                "postgres://postgres@127.0.0.1:5432",
            )),
            Backend::Mysql => Some(env("TOKENQL_TEST_MYSQL_URL", "mysql://root@127.0.0.1:3306")),
        }
    }
}

fn scale_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/scale")
}

/// The URL of the dataset `name` on `backend`; creates (or, with `fresh`, recreates) it.
async fn dataset_url(backend: Backend, name: &str, fresh: bool) -> anyhow::Result<String> {
    match backend.server() {
        None => {
            let dir = scale_dir();
            std::fs::create_dir_all(&dir)?;
            let path = dir.join(format!("{name}.sqlite"));
            if fresh {
                for suffix in ["", "-wal", "-shm"] {
                    let mut p = path.clone().into_os_string();
                    p.push(suffix);
                    let _ = std::fs::remove_file(p);
                }
            }
            Ok(format!("sqlite://{}?mode=rwc", path.display()))
        }
        Some(server) => {
            let (srv, query) = split_server_url(&server);
            let admin_url = match backend {
                Backend::Postgres => format!("{srv}/postgres{query}"),
                _ => format!("{srv}{query}"),
            };
            let admin = tokenql::store::database::connect(&admin_url, 1)
                .await
                .with_context(|| format!("connecting to {srv}"))?;
            if fresh {
                admin
                    .execute_unprepared(&format!("DROP DATABASE IF EXISTS {name}"))
                    .await?;
            }
            let exists = match backend {
                Backend::Postgres => admin
                    .query_one_raw(Statement::from_string(
                        admin.get_database_backend(),
                        format!("SELECT 1 AS x FROM pg_database WHERE datname = '{name}'"),
                    ))
                    .await?
                    .is_some(),
                _ => admin
                    .query_one_raw(Statement::from_string(
                        admin.get_database_backend(),
                        format!("SELECT 1 AS x FROM information_schema.schemata WHERE schema_name = '{name}'"),
                    ))
                    .await?
                    .is_some(),
            };
            if !exists {
                admin
                    .execute_unprepared(&format!("CREATE DATABASE {name}"))
                    .await?;
            }
            let _ = admin.close().await;
            Ok(format!("{srv}/{name}{query}"))
        }
    }
}

/// Makes sure the dataset is stored (loading it if needed); returns its URL.
/// Rows, table and index bytes, and bytes per row of each table (the capacity plan of
/// docs/SCALING.md is made from these).
async fn print_sizes(url: &str, size: &str) -> anyhow::Result<()> {
    let db = tokenql::store::database::connect(url, 2).await?;
    let mib = |b: i64| b as f64 / 1_048_576.0;
    println!(
        "[postgres {size}] storage: table, rows, table MiB, index MiB, bytes/row (table + indexes)"
    );
    for t in dataset::table_sizes(&db).await? {
        let per_row = (t.table_bytes + t.index_bytes) as f64 / t.rows.max(1) as f64;
        println!(
            "[postgres {size}]   {:16} {:>11} {:>9.1} {:>9.1} {:>7.0} ({:.0} + {:.0})",
            t.table,
            t.rows,
            mib(t.table_bytes),
            mib(t.index_bytes),
            per_row,
            t.table_bytes as f64 / t.rows.max(1) as f64,
            t.index_bytes as f64 / t.rows.max(1) as f64,
        );
    }
    let _ = db.close().await;
    Ok(())
}

async fn ensure_dataset(
    backend: Backend,
    size: &str,
    p: Params,
    regenerate: bool,
) -> anyhow::Result<String> {
    let name = format!("tq_scale_{size}");
    let label = format!("{} {size}", backend.name());
    let url = dataset_url(backend, &name, regenerate).await?;
    let db = tokenql::store::database::connect(&url, 2).await?;
    let stored = dataset::stored_marker(&db).await;
    if stored.as_deref() == Some(p.marker().as_str()) {
        println!("[{label}] dataset present ({url})");
        // Indexes added by later migrations.
        migration::Migrator::up(&db, None).await?;
        let _ = db.close().await;
        return Ok(url);
    }
    let _ = db.close().await;
    if stored.is_some() {
        println!("[{label}] stored dataset has other parameters: regenerating");
    }
    let url = dataset_url(backend, &name, true).await?;
    let db = tokenql::store::database::connect(&url, 2).await?;
    migration::Migrator::up(&db, None).await?;
    println!("[{label}] loading {:?}", p);
    dataset::load(&db, p, &label).await?;
    let _ = db.close().await;
    Ok(url)
}

// ---------------------------------------------------------------------------------------------
// Query shapes

const NFT_FIELDS: &str = "tokenAddress tokenId contractType ownerOf amount blockNumber \
    blockNumberMinted tokenUri metadata name symbol tokenHash minterAddress possibleSpam \
    verifiedCollection lastTokenUriSync lastMetadataSync";
const TRANSFER_FIELDS: &str = "contractAddress fromWallet toWallet fromWalletLabel \
    toWalletLabel value valueDecimal blockNumber blockHash blockTimestamp transactionHash \
    transactionIndex logIndex tokenName tokenSymbol tokenLogo tokenDecimals possibleSpam \
    verifiedCollection";

/// What a request asks, independent of the API.
#[derive(Debug, Clone)]
enum Ask {
    Nfts {
        wallet: String,
        after: Option<String>,
        /// Ask for the total (`disable_total=false`, `totalCount`).
        total: bool,
    },
    Transfers {
        wallets: Vec<String>,
        contracts: Vec<String>,
        after: Option<String>,
    },
}

impl Ask {
    fn rest(&self) -> String {
        match self {
            Ask::Nfts {
                wallet,
                after,
                total,
            } => {
                let mut s = format!("/api/v2/{wallet}/nft?chain=eth&limit=100");
                if *total {
                    s.push_str("&disable_total=false");
                }
                if let Some(c) = after {
                    s.push_str(&format!("&cursor={c}"));
                }
                s
            }
            Ask::Transfers {
                wallets,
                contracts,
                after,
            } => {
                let mut s = "/api/v2/erc20/transfers?chain=eth&limit=100".to_string();
                for w in wallets {
                    s.push_str(&format!("&wallet_addresses={w}"));
                }
                for c in contracts {
                    s.push_str(&format!("&contract_addresses={c}"));
                }
                if let Some(c) = after {
                    s.push_str(&format!("&cursor={c}"));
                }
                s
            }
        }
    }

    fn graphql(&self) -> String {
        let body = match self {
            Ask::Nfts {
                wallet,
                after,
                total,
            } => json!({
                "query": format!("query($a: Address!, $c: String) {{ nftsByWallet(address: $a, first: 100, after: $c) {{ status {} pageInfo {{ hasNextPage endCursor }} edges {{ node {{ {NFT_FIELDS} }} }} }} }}", if *total { "totalCount" } else { "" }),
                "variables": {"a": wallet, "c": after},
            }),
            Ask::Transfers {
                wallets,
                contracts,
                after,
            } => json!({
                "query": format!("query($w: [Address!], $k: [Address!], $c: String) {{ erc20Transfers(walletAddresses: $w, contractAddresses: $k, first: 100, after: $c) {{ status pageInfo {{ hasNextPage endCursor }} edges {{ node {{ {TRANSFER_FIELDS} }} }} }} }}"),
                "variables": {
                    "w": if wallets.is_empty() { Value::Null } else { json!(wallets) },
                    "k": if contracts.is_empty() { Value::Null } else { json!(contracts) },
                    "c": after,
                },
            }),
        };
        body.to_string()
    }

    fn with_after(&self, c: Option<String>) -> Ask {
        let mut a = self.clone();
        match &mut a {
            Ask::Nfts { after, .. } | Ask::Transfers { after, .. } => *after = c,
        }
        a
    }
}

fn req(api: &str, ask: &Ask) -> Req {
    if api == "rest" {
        Req::Get(ask.rest())
    } else {
        Req::Post("/graphql".into(), Arc::new(ask.graphql()))
    }
}

/// The next-page cursor of an answer.
fn next_cursor(api: &str, body: &Value) -> Option<String> {
    if api == "rest" {
        body["cursor"].as_str().map(str::to_string)
    } else {
        let data = body["data"].as_object()?.values().next()?;
        if data["pageInfo"]["hasNextPage"].as_bool() == Some(true) {
            data["pageInfo"]["endCursor"].as_str().map(str::to_string)
        } else {
            None
        }
    }
}

/// Follows the cursor chain of `ask` to page `page` (or the last one); returns that page's ask
/// and its number. Cursors are cached per dataset (they stay valid: the signing secret is
/// stored in the database).
async fn page_ask(
    client: &reqwest::Client,
    base: &str,
    key: &str,
    api: &str,
    ask: &Ask,
    page: usize,
    cache: &mut BTreeMap<String, String>,
) -> anyhow::Result<(Ask, usize)> {
    let id = format!("{api}|{}|{page}", ask.rest());
    if let Some(c) = cache.get(&id) {
        let (n, cur) = c.split_once(' ').context("cursor cache")?;
        return Ok((ask.with_after(Some(cur.to_string())), n.parse()?));
    }
    let mut cur = ask.clone();
    let mut n = 1;
    while n < page {
        let r = match req(api, &cur) {
            Req::Get(p) => client.get(format!("{base}{p}")),
            Req::Post(p, b) => client
                .post(format!("{base}{p}"))
                .header("content-type", "application/json")
                .body(b.as_str().to_owned()),
        };
        let body: Value = r.header("x-api-key", key).send().await?.json().await?;
        match next_cursor(api, &body) {
            Some(c) => {
                cur = ask.with_after(Some(c));
                n += 1;
            }
            None => break,
        }
    }
    if let Ask::Nfts { after: Some(c), .. } | Ask::Transfers { after: Some(c), .. } = &cur {
        cache.insert(id, format!("{n} {c}"));
    }
    Ok((cur, n))
}

struct Shape {
    name: String,
    asks: Vec<Ask>,
}

fn wallets(ranks: std::ops::Range<u64>) -> Vec<String> {
    ranks.map(|r| dataset::wallet(r).to_string()).collect()
}

/// The query shapes (API-independent; deep pages are resolved per API).
fn base_shapes() -> Vec<(String, Vec<Ask>, usize)> {
    let nft = |w: String| Ask::Nfts {
        wallet: w,
        after: None,
        total: false,
    };
    let xfer = |w: Vec<String>, c: Vec<String>| Ask::Transfers {
        wallets: w,
        contracts: c,
        after: None,
    };
    let whale = dataset::whale().to_string();
    let big = dataset::token(0).to_string();
    vec![
        (
            "nft_wallet_p1".into(),
            wallets(100..150).into_iter().map(nft).collect(),
            1,
        ),
        ("nft_whale_p1".into(), vec![nft(whale.clone())], 1),
        ("nft_whale_deep".into(), vec![nft(whale.clone())], 1000),
        (
            "nft_whale_total".into(),
            vec![Ask::Nfts {
                wallet: whale,
                after: None,
                total: true,
            }],
            1,
        ),
        (
            "xfer_wallet_p1".into(),
            wallets(100..150)
                .into_iter()
                .map(|w| xfer(vec![w], vec![]))
                .collect(),
            1,
        ),
        (
            "xfer_token_p1".into(),
            vec![xfer(vec![], vec![big.clone()])],
            1,
        ),
        (
            "xfer_token_deep".into(),
            vec![xfer(vec![], vec![big])],
            1000,
        ),
        (
            "xfer_multi10".into(),
            (0..20)
                .map(|j| xfer(wallets(1000 + 10 * j..1010 + 10 * j), vec![]))
                .collect(),
            1,
        ),
    ]
}

/// Every statement the in-process server runs for `ask` (after one warm-up request, so that
/// the API key is cached as in steady state).
async fn capture(
    app: &axum::Router,
    log: &Arc<Mutex<Vec<Statement>>>,
    key: &str,
    api: &str,
    ask: &Ask,
) -> anyhow::Result<Vec<Statement>> {
    let call = || async {
        let r = match req(api, ask) {
            Req::Get(p) => Request::get(p).header("x-api-key", key).body(Body::empty()),
            Req::Post(p, b) => Request::post(p)
                .header("x-api-key", key)
                .header("content-type", "application/json")
                .body(Body::from(b.as_str().to_owned())),
        }?;
        let resp = app.clone().oneshot(r).await?;
        let status = resp.status();
        let body = resp.into_body().collect().await?.to_bytes();
        if !status.is_success() {
            bail!("{status}: {}", String::from_utf8_lossy(&body));
        }
        Ok(())
    };
    call().await?;
    log.lock().map_err(|_| anyhow::anyhow!("poisoned"))?.clear();
    call().await?;
    let mut got = std::mem::take(&mut *log.lock().map_err(|_| anyhow::anyhow!("poisoned"))?);
    got.retain(|s| !s.sql.contains("api_keys"));
    Ok(got)
}

async fn explain(db: &DatabaseConnection, s: &Statement) -> String {
    let backend = db.get_database_backend();
    let prefix = match backend {
        sea_orm::DbBackend::Postgres => "EXPLAIN (ANALYZE, BUFFERS) ",
        sea_orm::DbBackend::MySql => "EXPLAIN ",
        _ => "EXPLAIN QUERY PLAN ",
    };
    let st = Statement::from_string(backend, format!("{prefix}{s}"));
    match db.query_all_raw(st).await {
        Ok(rows) => rows
            .iter()
            .map(|r| {
                let cols = r.column_names();
                cols.iter()
                    .map(|c| {
                        r.try_get::<String>("", c)
                            .or_else(|_| r.try_get::<i64>("", c).map(|v| v.to_string()))
                            .or_else(|_| r.try_get::<f64>("", c).map(|v| v.to_string()))
                            .unwrap_or_else(|_| "NULL".into())
                    })
                    .collect::<Vec<_>>()
                    .join(" | ")
            })
            .collect::<Vec<_>>()
            .join("\n"),
        Err(e) => format!("EXPLAIN failed: {e}"),
    }
}

// ---------------------------------------------------------------------------------------------
// One backend and size

/// The median of sorted, non-empty `v`.
fn median(v: &[f64]) -> f64 {
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

#[derive(serde::Serialize)]
struct Row {
    backend: String,
    size: String,
    shape: String,
    api: String,
    concurrency: usize,
    round: usize,
    page: usize,
    http: Measure,
    raw: Option<Measure>,
    pgbench_tps: Option<f64>,
    statements: usize,
}

async fn run_dataset(args: &Args, backend: Backend, size: &str, url: &str) -> anyhow::Result<()> {
    let label = format!("{} {size}", backend.name());
    let dir = scale_dir();
    let server = load::start_server(
        args.server_bin.as_deref(),
        url,
        &[
            "--rate-limit".into(),
            "0".into(),
            "--db-pool".into(),
            args.db_pool.to_string(),
        ],
        &dir.join(format!("server-{}-{size}.log", backend.name())),
    )
    .await?;
    let pid = server.pid();

    // A key without a rate limit, and the in-process twin that captures statements.
    let mut db = tokenql::store::database::connect(url, args.db_pool).await?;
    let (_, key) = tokenql::keys::create_with_rate(
        &db,
        "scale-bench",
        tokenql::keys::KeyRate {
            per_sec: Some(0),
            burst: None,
        },
    )
    .await?;
    let log: Arc<Mutex<Vec<Statement>>> = Arc::default();
    let sink = log.clone();
    let mut cap_db = tokenql::store::database::connect(url, 4).await?;
    cap_db.set_metric_callback(move |info| {
        if let Ok(mut v) = sink.lock() {
            v.push(info.statement.clone());
        }
    });
    let state = tokenql::AppState::new(cap_db.clone(), Default::default()).await?;
    let app = tokenql::server::router(state);
    db.set_metric_callback(|_| {});

    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(256)
        .timeout(Duration::from_secs(60))
        .build()?;
    let cache_path = dir.join(format!("cursors-{}-{size}.json", backend.name()));
    let mut cache: BTreeMap<String, String> = std::fs::read(&cache_path)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();

    let warmup = Duration::from_secs(args.warmup);
    let duration = Duration::from_secs(args.duration);
    let mut rows: Vec<Row> = Vec::new();
    let results_path = dir.join("results.jsonl");

    let target = load::Target {
        client: &client,
        base: &server.base,
        key: &key,
        pid,
    };
    // The HTTP ceiling: a static route.
    let mut ceiling = BTreeMap::new();
    for &c in &args.concurrency {
        let m = load::http(&target, &[Req::Get("/healthz".into())], c, warmup, duration).await;
        println!(
            "[{label}] ceiling /healthz c={c}: {:.0} req/s p50 {:.2} ms p99 {:.2} ms",
            m.rps, m.p50_ms, m.p99_ms
        );
        ceiling.insert(c, m);
    }

    for api in &args.api {
        let mut shapes: Vec<(Shape, usize)> = Vec::new();
        for (name, asks, page) in base_shapes() {
            if !args.shapes.is_empty() && !args.shapes.contains(&name) {
                continue;
            }
            let mut resolved = Vec::new();
            let mut got_page = 1;
            for a in &asks {
                let (a, n) =
                    page_ask(&client, &server.base, &key, api, a, page, &mut cache).await?;
                got_page = n;
                resolved.push(a);
            }
            shapes.push((
                Shape {
                    name,
                    asks: resolved,
                },
                got_page,
            ));
        }
        std::fs::write(&cache_path, serde_json::to_vec_pretty(&cache)?)?;
        if args.shapes.is_empty() || args.shapes.iter().any(|s| s == "mix") {
            let mut asks = Vec::new();
            let longest = shapes.iter().map(|(s, _)| s.asks.len()).max().unwrap_or(0);
            for i in 0..longest {
                for (s, _) in &shapes {
                    asks.push(s.asks[i % s.asks.len()].clone());
                }
            }
            shapes.push((
                Shape {
                    name: "mix".into(),
                    asks,
                },
                0,
            ));
        }

        for (shape, page) in &shapes {
            let reqs: Vec<Req> = shape.asks.iter().map(|a| req(api, a)).collect();
            let mut sets = Vec::new();
            if !args.no_raw {
                for a in &shape.asks {
                    sets.push(capture(&app, &log, &key, api, a).await?);
                }
            }
            let statements = sets.first().map_or(0, Vec::len);
            if args.explain && shape.name != "mix" {
                println!("[{label}] {api} {} ({statements} statements)", shape.name);
                if let Some(set) = sets.first() {
                    for s in set {
                        println!("  SQL: {s}");
                        for l in explain(&db, s).await.lines() {
                            println!("    {l}");
                        }
                    }
                }
            }
            for &c in &args.concurrency {
                let mut ratios = Vec::new();
                for round in 1..=args.rounds.max(1) {
                    let http = load::http(&target, &reqs, c, warmup, duration).await;
                    let raw = if args.no_raw {
                        None
                    } else {
                        Some(load::raw_sql(&db, &sets, c, warmup, duration).await)
                    };
                    let pgbench_tps =
                        if args.pgbench && backend == Backend::Postgres && !args.no_raw {
                            match load::pgbench(
                                url,
                                &dir.join("pgbench"),
                                &format!("{api}-{}", shape.name),
                                &sets,
                                c,
                                duration,
                            ) {
                                Ok(t) => Some(t),
                                Err(e) => {
                                    println!("  pgbench failed: {e:#}");
                                    None
                                }
                            }
                        } else {
                            None
                        };
                    let ratio_pct = raw.as_ref().map(|r| 100.0 * http.rps / r.rps.max(1e-9));
                    ratios.extend(ratio_pct);
                    let ratio = ratio_pct.map_or(String::new(), |p| format!("{p:.0}%"));
                    println!(
                    "[{label}] {api:7} {:16} page {page:>4} c={c:<3} {:>7.0} req/s p50 {:>7.2} p95 {:>7.2} p99 {:>7.2} ms err {} rss {:.0} MiB | raw {} ({} stmts) {} p50 {} | pgbench {} | ceiling {:.0}",
                    shape.name,
                    http.rps,
                    http.p50_ms,
                    http.p95_ms,
                    http.p99_ms,
                    http.errors,
                    http.rss_mib.unwrap_or(0.0),
                    raw.as_ref().map_or("-".into(), |r| format!("{:.0}/s", r.rps)),
                    statements,
                    ratio,
                    raw.as_ref().map_or("-".into(), |r| format!("{:.2} ms", r.p50_ms)),
                    pgbench_tps.map_or("-".into(), |t| format!("{t:.0}/s")),
                    ceiling.get(&c).map_or(0.0, |m| m.rps),
                );
                    let cpu = |m: &load::Measure| {
                        m.cpu.map_or("-".to_string(), |s| {
                            format!(
                                "server {} driver {:.2} rest {:.2} ms/req, machine {:.0}% busy",
                                s.server_ms_per_req
                                    .map_or("-".to_string(), |v| format!("{v:.2}")),
                                s.driver_ms_per_req,
                                s.other_ms_per_req,
                                s.machine_busy_pct
                            )
                        })
                    };
                    println!(
                        "    cpu: tokenql run {} | raw run {}",
                        cpu(&http),
                        raw.as_ref().map_or("-".to_string(), cpu)
                    );
                    let row = Row {
                        backend: backend.name().into(),
                        size: size.into(),
                        shape: shape.name.clone(),
                        api: api.clone(),
                        concurrency: c,
                        round,
                        page: *page,
                        http,
                        raw,
                        pgbench_tps,
                        statements,
                    };
                    use std::io::Write;
                    let mut f = std::fs::OpenOptions::new()
                        .create(true)
                        .append(true)
                        .open(&results_path)?;
                    writeln!(f, "{}", serde_json::to_string(&row)?)?;
                    rows.push(row);
                }
                if ratios.len() > 1 {
                    ratios.sort_by(f64::total_cmp);
                    println!(
                        "[{label}] {api:7} {:16} c={c:<3} tokenql / raw over {} rounds: median {:.0}%, range {:.0}–{:.0}%",
                        shape.name,
                        ratios.len(),
                        median(&ratios),
                        ratios[0],
                        ratios[ratios.len() - 1],
                    );
                }
            }
        }
    }
    println!(
        "[{label}] server VmHWM {:.0} MiB",
        load::vm_mib(pid, "VmHWM:").unwrap_or(0.0)
    );
    drop(server);
    let _ = db.close().await;
    Ok(())
}

#[tokio::main(flavor = "multi_thread")]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    tokenql::tls::ensure_crypto_provider();
    println!(
        "scale bench: backends {:?}, sizes {:?}, concurrency {:?}, {} s (+{} s warm-up) per run, pool {}",
        args.backends, args.size, args.concurrency, args.duration, args.warmup, args.db_pool
    );
    std::fs::create_dir_all(scale_dir())?;
    for b in &args.backends {
        let backend = Backend::parse(b)?;
        for size in &args.size {
            let p = match size.as_str() {
                "10m" => Params::scaled(1),
                "1m" => Params::scaled(10),
                o => bail!("unknown size {o} (10m or 1m)"),
            };
            let url = ensure_dataset(backend, size, p, args.regenerate).await?;
            if backend == Backend::Postgres {
                print_sizes(&url, size).await?;
            }
            if !args.load_only {
                run_dataset(&args, backend, size, &url).await?;
            }
        }
    }
    Ok(())
}
