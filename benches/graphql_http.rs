//! GraphQL over HTTP: tokenql's own handler (`graphql::http`: kept documents, pages written as
//! JSON while the request runs, fields in the document's order) against the stock
//! `async-graphql-axum` handler (`GraphQLRequest` → `Schema::execute` → `GraphQLResponse`) on the
//! same schema, the same auth and the same data, side by side in one run.
//!
//! Both servers run in this process on the demo data (SQLite); `--concurrency` clients (16)
//! send the same query for `--seconds` each, the two handlers alternating for `--rounds`
//! rounds. The report gives each handler's requests per second per round and the ratio
//! (stock ÷ own): the decision rule of issue 24 is to switch to the stock handler unless it
//! costs more than 5% at c=16.
//!
//! ```text
//! cargo bench --bench graphql_http
//! cargo bench --bench graphql_http -- --help
//! ```
//!
//! See `docs/BENCHMARKS.md` ("GraphQL over HTTP: the own handler and async-graphql-axum").
#![allow(clippy::print_stdout)] // the report is this program's output

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_graphql_axum::{GraphQLRequest, GraphQLResponse};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Extension, Router};
use clap::Parser;
use migration::MigratorTrait;
use serde_json::json;

use tokenql::graphql::objects::media::MediaBase;
use tokenql::graphql::AppSchema;
use tokenql::AppState;

/// GraphQL over HTTP: the own handler against async-graphql-axum (see docs/BENCHMARKS.md).
#[derive(Parser, Debug)]
#[command(name = "graphql_http")]
struct Args {
    /// Clients sending at once.
    #[arg(long, default_value_t = 16)]
    concurrency: usize,
    /// Seconds per handler per round.
    #[arg(long, default_value_t = 5)]
    seconds: u64,
    /// Rounds (each handler once per round, alternating which goes first).
    #[arg(long, default_value_t = 4)]
    rounds: usize,
    /// (passed by `cargo bench`; ignored)
    #[arg(long, hide = true)]
    bench: bool,
}

const WALLET: &str = "0x430d5dde0cd48989737a95b4c46e1801a9a08531";
const USDT: &str = "0xdac17f958d2ee523a2206206994597c13d831ec7";

/// The questions asked: a wallet's NFTs and a token's transfers, a page of each.
fn queries() -> Vec<(&'static str, serde_json::Value)> {
    vec![
        (
            "nfts_wallet_p1",
            json!({"query": "query($a: Address!) { nftsByWallet(address: $a, first: 100) { status edges { cursor node { tokenAddress tokenId contractType amount name symbol tokenUri blockNumber possibleSpam } } } }", "variables": {"a": WALLET}}),
        ),
        (
            "xfer_token_p1",
            json!({"query": "query($c: [Address!]) { erc20Transfers(contractAddresses: $c, first: 100) { status edges { cursor node { contractAddress fromWallet toWallet value valueDecimal blockNumber blockTimestamp transactionHash logIndex tokenSymbol tokenDecimals } } } }", "variables": {"c": [USDT]}}),
        ),
    ]
}

/// `POST /graphql` by async-graphql-axum's extractor and response, with tokenql's auth and
/// request data.
async fn stock(
    State(state): State<AppState>,
    Extension(schema): Extension<AppSchema>,
    headers: HeaderMap,
    req: GraphQLRequest,
) -> Response {
    let Ok(caller) = tokenql::app::authenticate(&state, &headers).await else {
        return StatusCode::UNAUTHORIZED.into_response();
    };
    let request = req
        .into_inner()
        .data(caller)
        .data(state.service.clone())
        .data(MediaBase(tokenql::app::preview_base(&state, &headers)))
        .data(state.ops.options().chain_reads.clone());
    GraphQLResponse::from(schema.execute(request).await).into_response()
}

async fn serve(router: Router) -> anyhow::Result<String> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move { axum::serve(listener, router).await });
    Ok(format!("http://{addr}/graphql"))
}

/// Requests per second `concurrency` clients get from `url` with `body` in `seconds`.
async fn load(url: &str, key: &str, body: &serde_json::Value, args: &Args) -> anyhow::Result<f64> {
    let client = reqwest::Client::new();
    let done = Arc::new(AtomicU64::new(0));
    let until = Instant::now() + Duration::from_secs(args.seconds);
    let mut tasks = Vec::new();
    for _ in 0..args.concurrency {
        let (client, done, url, key, body) = (
            client.clone(),
            done.clone(),
            url.to_string(),
            key.to_string(),
            body.to_string(),
        );
        tasks.push(tokio::spawn(async move {
            while Instant::now() < until {
                let r = client
                    .post(&url)
                    .header("x-api-key", &key)
                    .header("content-type", "application/json")
                    .body(body.clone())
                    .send()
                    .await?;
                let status = r.status();
                let text = r.bytes().await?;
                anyhow::ensure!(
                    status.is_success() && !text.windows(9).any(|w| w == b"\"errors\"".as_slice()),
                    "{status}: {}",
                    String::from_utf8_lossy(&text)
                );
                done.fetch_add(1, Ordering::Relaxed);
            }
            anyhow::Ok(())
        }));
    }
    for t in tasks {
        t.await??;
    }
    Ok(done.load(Ordering::Relaxed) as f64 / args.seconds as f64)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tokenql::tls::ensure_crypto_provider();
    let args = Args::parse();
    let path =
        std::env::temp_dir().join(format!("tq_bench_graphql_http_{}.db", std::process::id()));
    let url = format!("sqlite://{}?mode=rwc", path.display());
    let db = tokenql::store::database::connect(&url, 4).await?;
    migration::Migrator::up(&db, None).await?;
    tokenql::demo::load_into(&db).await?;
    let rate = tokenql::keys::KeyRate {
        per_sec: Some(0),
        burst: None,
    };
    let (_, key) = tokenql::keys::create_with_rate(&db, "graphql-http-bench", rate).await?;
    let state = AppState::new(db.clone(), Default::default()).await?;
    let schema = tokenql::graphql::schema(state.service.clone())
        .inner()
        .clone();
    let own = serve(tokenql::server::router(state.clone())).await?;
    let stock_router = Router::new()
        .route("/graphql", post(stock))
        .layer(Extension(schema))
        .with_state(state);
    let stock = serve(stock_router).await?;
    for (name, body) in queries() {
        let (mut ratios, mut own_rps, mut stock_rps) = (Vec::new(), Vec::new(), Vec::new());
        for round in 0..args.rounds {
            let (a, b) = if round % 2 == 0 {
                let a = load(&own, &key, &body, &args).await?;
                (a, load(&stock, &key, &body, &args).await?)
            } else {
                let b = load(&stock, &key, &body, &args).await?;
                (load(&own, &key, &body, &args).await?, b)
            };
            println!("{name} round {round}: own {a:.0} req/s, async-graphql-axum {b:.0} req/s, ratio {:.2}", b / a);
            ratios.push(b / a);
            own_rps.push(a);
            stock_rps.push(b);
        }
        ratios.sort_by(f64::total_cmp);
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        println!(
            "{name}: c={} own {:.0} req/s, async-graphql-axum {:.0} req/s; ratio median {:.2} \
             (range {:.2}-{:.2})",
            args.concurrency,
            mean(&own_rps),
            mean(&stock_rps),
            ratios[ratios.len() / 2],
            ratios[0],
            ratios[ratios.len() - 1]
        );
    }
    db.close().await?;
    let _ = std::fs::remove_file(&path);
    Ok(())
}
