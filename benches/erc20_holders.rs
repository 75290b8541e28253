//! ERC20 holders and balances read from the kept table (`erc20_balances`), against the same
//! questions asked in raw SQL over the transfers (`GROUP BY` holder or token), side by side in
//! one run:
//!
//! - `GET /erc20/{token}/owners`, the first page (100 holders by balance) of a token with
//!   `--holders` holders (100,000 by default) and twice as many transfers;
//! - `GET /{wallet}/erc20` of a busy wallet: balances in `--wallet-tokens` tokens (1,000 by
//!   default, 30 transfers each), and the same answer through the summed path (`to_block` one
//!   block below the head, where the wallet has a transfer: the path every answer took before);
//! - for scale, `GET /{wallet}/nft` (a page of 100 NFTs), the question the table was built to
//!   keep up with.
//!
//! The dataset is written through the indexer's write path (`store::write_batch`, which keeps
//! the table), so its load time is that path's cost too; it is kept between runs. The REST
//! answers are asked in process (`tower::ServiceExt::oneshot` on the real router: the handler,
//! the query service, one snapshot, the JSON). Each round asks every question `--requests`
//! times in turn; the report gives each one's median latency and, per round, the ratio of the
//! raw `GROUP BY` (and of the summed path) to the table's answer.
//!
//! ```text
//! cargo bench --bench erc20_holders -- --backends postgres
//! cargo bench --bench erc20_holders -- --help
//! ```
//!
//! See `docs/BENCHMARKS.md` ("ERC20 holders and balances from the kept table").
#![allow(clippy::print_stdout)] // the report is this program's output

use std::path::PathBuf;
use std::time::Instant;

use alloy::primitives::B256;
use anyhow::{bail, Context};
use axum::body::Body;
use axum::http::Request;
use clap::Parser;
use http_body_util::BodyExt;
use migration::MigratorTrait;
use sea_orm::{ConnectionTrait, DatabaseConnection, DbBackend, Statement, Value};
use tower::ServiceExt;

use tokenql::decode::{Erc20Move, EventMeta, NftMove};
use tokenql::store::{write_batch, Batch, BlockHeader, Checkpoint};
use tokenql::types::{Address, Chain, TokenStandard, Uint256};

#[path = "../tests/support/common/db_url.rs"]
mod db_url;
use db_url::split_server_url;

/// ERC20 holders and balances: the kept table against raw SQL (see docs/BENCHMARKS.md).
#[derive(Parser, Debug)]
#[command(name = "erc20_holders")]
struct Args {
    /// Backends, comma-separated: postgres, mysql, sqlite (raw SQL: PostgreSQL and MySQL only;
    /// SQLite has no hex-to-integer conversion).
    #[arg(long, default_value = "postgres", value_delimiter = ',')]
    backends: Vec<String>,
    /// Holders of the big token (it has twice as many transfers).
    #[arg(long, default_value_t = 100_000)]
    holders: u64,
    /// Tokens the busy wallet holds (30 transfers each).
    #[arg(long, default_value_t = 1_000)]
    wallet_tokens: u64,
    /// Rounds; each asks every question `--requests` times.
    #[arg(long, default_value_t = 5)]
    rounds: usize,
    /// Requests per question and round.
    #[arg(long, default_value_t = 20)]
    requests: usize,
    /// Regenerate the dataset even when a complete one is stored.
    #[arg(long)]
    regenerate: bool,
    /// (passed by `cargo bench`; ignored)
    #[arg(long, hide = true)]
    bench: bool,
}

const ZERO: Address = Address::ZERO;
/// ERC20 transfers per block.
const PER_BLOCK: u64 = 100;
/// Blocks per `write_batch`.
const BLOCKS_PER_BATCH: u64 = 50;
/// NFTs the busy wallet holds.
const NFTS: u64 = 500;

fn address(tag: u64, n: u64) -> Address {
    let mut word = [0u8; 32];
    word[12..20].copy_from_slice(&tag.to_be_bytes());
    word[24..32].copy_from_slice(&n.to_be_bytes());
    Address::from_word(&word)
}

fn big_token() -> Address {
    address(0xa, 1)
}
fn wallet() -> Address {
    address(0xb, 1)
}
fn wallet_token(k: u64) -> Address {
    address(0xc, k)
}
fn holder(i: u64) -> Address {
    address(0xd, i)
}
fn collection() -> Address {
    address(0xe, 1)
}

/// One transfer of the dataset, before it has a place on the chain.
enum Move {
    Erc20(Address, Address, Address, u64),
    Nft(u64),
}

/// Every move of the dataset, in chain order.
fn moves(p: &Args) -> Vec<Move> {
    let h = p.holders;
    let mut out = Vec::new();
    for i in 0..h {
        out.push(Move::Erc20(big_token(), ZERO, holder(i), 1_000_000 + i * 7));
    }
    for j in 0..h {
        let (a, b) = ((j * 7_919) % h, (j * 104_729 + 1) % h);
        out.push(Move::Erc20(
            big_token(),
            holder(a),
            holder(b),
            j % 1_000 + 1,
        ));
    }
    for k in 0..p.wallet_tokens {
        for r in 0..20 {
            out.push(Move::Erc20(
                wallet_token(k),
                holder((k * 20 + r) % h),
                wallet(),
                1_000 + r,
            ));
        }
        for r in 0..10 {
            out.push(Move::Erc20(
                wallet_token(k),
                wallet(),
                holder((k * 10 + r) % h),
                100 + r,
            ));
        }
    }
    for id in 1..=NFTS {
        out.push(Move::Nft(id));
    }
    // The last block holds a transfer of the wallet, so that `to_block` one below the head
    // takes the summed path.
    out.push(Move::Erc20(wallet_token(0), holder(0), wallet(), 1));
    out
}

fn block_hash(n: u64) -> B256 {
    let mut b = [0u8; 32];
    b[..8].copy_from_slice(&n.to_be_bytes());
    b[31] = 0x5a;
    B256::from(b)
}

fn header(n: u64) -> BlockHeader {
    BlockHeader {
        number: n,
        hash: block_hash(n),
        parent_hash: n.checked_sub(1).map(block_hash),
        timestamp: 1_700_000_000 + n * 12,
    }
}

/// Writes the dataset through `write_batch`; returns the last block.
async fn load(db: &DatabaseConnection, p: &Args, label: &str) -> anyhow::Result<u64> {
    let all = moves(p);
    let t = Instant::now();
    let mut batch = Batch::default();
    let mut last = 0;
    for (i, m) in all.iter().enumerate() {
        let i = i as u64;
        let (block, log) = (1 + i / PER_BLOCK, (i % PER_BLOCK) as u32);
        if batch.blocks.last().map(|b| b.number) != Some(block) {
            if batch.blocks.len() as u64 == BLOCKS_PER_BATCH {
                write_batch(db, Chain::ETH, &std::mem::take(&mut batch)).await?;
            }
            batch.blocks.push(header(block));
        }
        last = block;
        let meta = |contract| EventMeta {
            contract,
            block_number: block,
            block_hash: block_hash(block),
            transaction_hash: block_hash(block ^ (u64::from(log) << 40)),
            transaction_index: log,
            log_index: log,
        };
        match *m {
            Move::Erc20(contract, from, to, value) => batch.erc20.push(Erc20Move {
                meta: meta(contract),
                from,
                to,
                value: Uint256::from_u64(value),
            }),
            Move::Nft(id) => batch.nft.push(NftMove {
                meta: meta(collection()),
                batch_index: 0,
                standard: TokenStandard::Erc721,
                operator: None,
                from: ZERO,
                to: wallet(),
                token_id: Uint256::from_u64(id),
                amount: Uint256::from_u64(1),
            }),
        }
    }
    batch.checkpoint = Some(Checkpoint {
        start_block: 0,
        indexed_block: Some(last),
        head_block: last,
    });
    write_batch(db, Chain::ETH, &batch).await?;
    let s = t.elapsed().as_secs_f64();
    println!(
        "[{label}] loaded {} transfers in {s:.1} s ({:.0}/s) through write_batch",
        all.len(),
        all.len() as f64 / s
    );
    Ok(last)
}

/// The URL of the dataset on `backend` (created when missing, recreated with `fresh`).
async fn dataset_url(backend: &str, fresh: bool) -> anyhow::Result<String> {
    let name = "tq_bench_erc20_holders";
    let env = |n: &str, d: &str| {
        std::env::var(n)
            .ok()
            .filter(|v| !v.trim().is_empty())
            .unwrap_or(d.to_string())
    };
    let server = match backend {
        "sqlite" => {
            let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/erc20-holders");
            std::fs::create_dir_all(&dir)?;
            let path = dir.join(format!("{name}.sqlite"));
            if fresh {
                for suffix in ["", "-wal", "-shm"] {
                    let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
                }
            }
            return Ok(format!("sqlite://{}?mode=rwc", path.display()));
        }
        "postgres" => env(
            "TOKENQL_TEST_POSTGRES_URL",
            "postgres://postgres@127.0.0.1:5432",
        ),
        "mysql" => env("TOKENQL_TEST_MYSQL_URL", "mysql://root@127.0.0.1:3306"),
        o => bail!("unknown backend {o}"),
    };
    let (srv, query) = split_server_url(&server);
    let admin_url = if backend == "postgres" {
        format!("{srv}/postgres{query}")
    } else {
        format!("{srv}{query}")
    };
    let admin = tokenql::store::database::connect(&admin_url, 1)
        .await
        .with_context(|| format!("connecting to {srv}"))?;
    if fresh {
        admin
            .execute_unprepared(&format!("DROP DATABASE IF EXISTS {name}"))
            .await?;
    }
    let check = if backend == "postgres" {
        format!("SELECT 1 AS x FROM pg_database WHERE datname = '{name}'")
    } else {
        format!("SELECT 1 AS x FROM information_schema.schemata WHERE schema_name = '{name}'")
    };
    let exists = admin
        .query_one_raw(Statement::from_string(admin.get_database_backend(), check))
        .await?
        .is_some();
    if !exists {
        admin
            .execute_unprepared(&format!("CREATE DATABASE {name}"))
            .await?;
    }
    let _ = admin.close().await;
    Ok(format!("{srv}/{name}{query}"))
}

/// A statement with `$n` (PostgreSQL) or `?` placeholders.
fn stmt(db: &DatabaseConnection, sql: &str, values: Vec<Value>) -> Statement {
    let backend = db.get_database_backend();
    let sql = if backend == DbBackend::Postgres {
        let mut n = 0;
        sql.chars()
            .map(|c| {
                if c == '?' {
                    n += 1;
                    format!("${n}")
                } else {
                    c.to_string()
                }
            })
            .collect()
    } else {
        sql.to_string()
    };
    Statement::from_sql_and_values(backend, sql, values)
}

/// A stored uint256's low 64 bits as an exact number, in SQL (the dataset's values are below
/// 2^63: the raw questions get the easy version of the sum).
fn amount(backend: DbBackend) -> &'static str {
    match backend {
        DbBackend::Postgres => {
            "(('x' || encode(substr(value, 25), 'hex'))::bit(64)::bigint)::numeric"
        }
        _ => "CAST(CONV(HEX(SUBSTR(value, 25)), 16, 10) AS DECIMAL(65, 0))",
    }
}

/// The raw questions: (name, statement), asked directly on the database.
fn raw_questions(db: &DatabaseConnection) -> Vec<(&'static str, Statement)> {
    let backend = db.get_database_backend();
    let token = big_token();
    let w = wallet();
    let mut out = vec![
        (
            "owners: table, SQL",
            stmt(
                db,
                "SELECT owner_address, balance FROM erc20_balances WHERE chain_id = 1 AND \
                 contract_address = ? AND wraps = 0 ORDER BY balance DESC, owner_address DESC \
                 LIMIT 101",
                vec![token.into()],
            ),
        ),
        (
            "wallet: table, SQL",
            stmt(
                db,
                "SELECT contract_address, balance FROM erc20_balances WHERE chain_id = 1 AND \
                 owner_address = ? AND wraps = 0 ORDER BY contract_address",
                vec![w.into()],
            ),
        ),
    ];
    if backend == DbBackend::Sqlite {
        return out;
    }
    let a = amount(backend);
    out.push((
        "owners: GROUP BY transfers",
        stmt(
            db,
            &format!(
                "SELECT holder, SUM(amount) AS bal FROM (\
             SELECT to_address AS holder, {a} AS amount FROM erc20_transfers \
             WHERE chain_id = 1 AND contract_address = ? \
             UNION ALL SELECT from_address AS holder, -{a} AS amount FROM erc20_transfers \
             WHERE chain_id = 1 AND contract_address = ?) m \
             WHERE holder <> ? GROUP BY holder HAVING SUM(amount) > 0 \
             ORDER BY bal DESC, holder DESC LIMIT 101"
            ),
            vec![token.into(), token.into(), ZERO.into()],
        ),
    ));
    out.push((
        "wallet: GROUP BY transfers",
        stmt(
            db,
            &format!(
                "SELECT contract_address, SUM(amount) AS bal FROM (\
             SELECT contract_address, {a} AS amount FROM erc20_transfers \
             WHERE chain_id = 1 AND to_address = ? \
             UNION ALL SELECT contract_address, -{a} AS amount FROM erc20_transfers \
             WHERE chain_id = 1 AND from_address = ?) m \
             GROUP BY contract_address HAVING SUM(amount) > 0 ORDER BY contract_address"
            ),
            vec![w.into(), w.into()],
        ),
    ));
    out
}

/// A REST answer's body, asked of the router in process.
async fn ask(app: &axum::Router, key: &str, path: &str) -> anyhow::Result<axum::body::Bytes> {
    let r = Request::get(path)
        .header("x-api-key", key)
        .body(Body::empty())?;
    let resp = app.clone().oneshot(r).await?;
    let status = resp.status();
    let body = resp.into_body().collect().await?.to_bytes();
    if !status.is_success() {
        bail!("{path}: {status}: {}", String::from_utf8_lossy(&body));
    }
    Ok(body)
}

/// How long `f` takes, `n` times, as milliseconds (sorted).
async fn time<F, Fut>(n: usize, mut f: F) -> anyhow::Result<Vec<f64>>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<usize>>,
{
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        f().await?;
        out.push(t.elapsed().as_secs_f64() * 1e3);
    }
    out.sort_by(f64::total_cmp);
    Ok(out)
}

fn median(v: &[f64]) -> f64 {
    v[v.len() / 2]
}

async fn run(backend: &str, args: &Args) -> anyhow::Result<()> {
    let label = backend;
    let url = dataset_url(backend, args.regenerate).await?;
    let db = tokenql::store::database::connect(&url, 8).await?;
    migration::Migrator::up(&db, None).await?;
    let want_transfers = (2 * args.holders) as i64;
    let stored = db
        .query_one_raw(stmt(
            &db,
            "SELECT transfers FROM erc20_token_totals WHERE chain_id = 1 AND contract_address = ?",
            vec![big_token().into()],
        ))
        .await?
        .and_then(|r| r.try_get::<i64>("", "transfers").ok());
    let head = if stored == Some(want_transfers) {
        let r = db
            .query_one_raw(stmt(
                &db,
                "SELECT indexed_block FROM chain_state WHERE chain_id = 1",
                vec![],
            ))
            .await?
            .context("no checkpoint")?;
        let head: i64 = r.try_get("", "indexed_block")?;
        println!("[{label}] dataset present ({url})");
        head as u64
    } else {
        drop(db);
        let url = dataset_url(backend, true).await?;
        let db = tokenql::store::database::connect(&url, 8).await?;
        migration::Migrator::up(&db, None).await?;
        let head = load(&db, args, label).await?;
        tokenql::store::mark_history_complete(&db, Chain::ETH).await?;
        let analyze = match backend {
            "postgres" => "VACUUM ANALYZE",
            "mysql" => "ANALYZE TABLE erc20_transfers, erc20_balances, nft_holdings",
            _ => "ANALYZE",
        };
        db.execute_unprepared(analyze).await?;
        head
    };
    let db = tokenql::store::database::connect(&url, 8).await?;
    let (_, key) = tokenql::keys::create_with_rate(
        &db,
        "erc20-holders-bench",
        tokenql::keys::KeyRate {
            per_sec: Some(0),
            burst: None,
        },
    )
    .await?;
    let state = tokenql::AppState::new(db.clone(), Default::default()).await?;
    let app = tokenql::server::router(state);
    let (t, w) = (big_token(), wallet());
    let api: Vec<(&str, String)> = vec![
        (
            "owners: API (table)",
            format!("/api/v2.2/erc20/{t}/owners?chain=eth&limit=100"),
        ),
        (
            "wallet: API (table)",
            format!("/api/v2.2/{w}/erc20?chain=eth&exclude_spam=false"),
        ),
        (
            "wallet: API (summed path)",
            format!(
                "/api/v2.2/{w}/erc20?chain=eth&exclude_spam=false&to_block={}",
                head - 1
            ),
        ),
        (
            "wallet NFTs: API (page of 100)",
            format!("/api/v2.2/{w}/nft?chain=eth&limit=100"),
        ),
    ];
    // Sanity: the owners page is full and SYNCED; the wallet's answer holds every token.
    let owners: serde_json::Value = serde_json::from_slice(&ask(&app, &key, &api[0].1).await?)?;
    if owners["result"].as_array().map(Vec::len) != Some(100) || owners["status"] != "SYNCED" {
        bail!(
            "owners page: {}",
            owners.to_string().chars().take(300).collect::<String>()
        );
    }
    let balances: serde_json::Value = serde_json::from_slice(&ask(&app, &key, &api[1].1).await?)?;
    if balances.as_array().map(Vec::len) != Some(args.wallet_tokens as usize) {
        bail!(
            "wallet balances: {} records",
            balances.as_array().map_or(0, Vec::len)
        );
    }
    // The wallet's question asked of the query service itself, without the related contract
    // rows the REST answer shows: the table's read, and the summed path's.
    let service = tokenql::query::QueryService::new(db.clone(), Default::default()).await?;
    let balances_query = |to_block| tokenql::query::TokenBalanceQuery {
        chain: Chain::ETH,
        owner: w,
        to_block,
        token_addresses: Default::default(),
        exclude_spam: false,
        page_size: tokenql::types::PageSize::default(),
    };
    let summed_block = tokenql::types::BlockNumber::parse(&(head - 1).to_string())?;
    let in_service = [
        ("wallet: service (table)", balances_query(None)),
        (
            "wallet: service (summed path)",
            balances_query(Some(summed_block)),
        ),
    ];
    let raw = raw_questions(&db);
    let names: Vec<&str> = api
        .iter()
        .map(|(n, _)| *n)
        .chain(in_service.iter().map(|(n, _)| *n))
        .chain(raw.iter().map(|(n, _)| *n))
        .collect();
    let mut medians: Vec<Vec<f64>> = vec![Vec::new(); names.len()];
    for round in 0..args.rounds {
        for (i, (_, path)) in api.iter().enumerate() {
            let v = time(args.requests, || async {
                Ok(ask(&app, &key, path).await?.len())
            })
            .await?;
            medians[i].push(median(&v));
        }
        for (j, (_, q)) in in_service.iter().enumerate() {
            let none = tokenql::query::Include::NONE;
            let v = time(args.requests, || async {
                Ok(service.all_token_balances(q, none).await?.records.len())
            })
            .await?;
            medians[api.len() + j].push(median(&v));
        }
        let first_raw = api.len() + in_service.len();
        for (j, (_, s)) in raw.iter().enumerate() {
            let db = db.clone();
            let v = time(args.requests, || {
                let db = db.clone();
                let s = s.clone();
                async move { Ok(db.query_all_raw(s).await?.len()) }
            })
            .await?;
            medians[first_raw + j].push(median(&v));
        }
        println!("[{label}] round {} of {} done", round + 1, args.rounds);
    }
    println!("[{label}] median latency per request, ms (median over {} rounds of {} requests; range of the round medians)", args.rounds, args.requests);
    for (name, m) in names.iter().zip(&medians) {
        let mut s = m.clone();
        s.sort_by(f64::total_cmp);
        println!(
            "[{label}]   {name:34} {:>9.2}  ({:.2} .. {:.2})",
            median(&s),
            s[0],
            s[s.len() - 1]
        );
    }
    let at = |n: &str| names.iter().position(|x| *x == n);
    let ratio = |a: &str, b: &str| -> Option<(f64, f64, f64)> {
        let (a, b) = (at(a)?, at(b)?);
        let mut r: Vec<f64> = medians[a]
            .iter()
            .zip(&medians[b])
            .map(|(x, y)| x / y)
            .collect();
        r.sort_by(f64::total_cmp);
        Some((median(&r), r[0], r[r.len() - 1]))
    };
    println!("[{label}] ratios (per round, median and range): how many times slower than the table's answer");
    for (a, b) in [
        ("owners: GROUP BY transfers", "owners: API (table)"),
        ("owners: GROUP BY transfers", "owners: table, SQL"),
        ("wallet: GROUP BY transfers", "wallet: API (table)"),
        ("wallet: GROUP BY transfers", "wallet: table, SQL"),
        ("wallet: API (summed path)", "wallet: API (table)"),
        ("wallet: service (summed path)", "wallet: service (table)"),
        ("wallet: GROUP BY transfers", "wallet: service (table)"),
        ("owners: API (table)", "wallet NFTs: API (page of 100)"),
        ("wallet: API (table)", "wallet NFTs: API (page of 100)"),
    ] {
        if let Some((m, lo, hi)) = ratio(a, b) {
            println!("[{label}]   {a} / {b}: {m:.1}x ({lo:.1} .. {hi:.1})");
        }
    }
    Ok(())
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    tokenql::tls::ensure_crypto_provider();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    rt.block_on(async {
        for b in &args.backends {
            run(b.trim(), &args).await?;
        }
        Ok::<_, anyhow::Error>(())
    })?;
    Ok(())
}
