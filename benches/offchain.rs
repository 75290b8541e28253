//! Off-chain throughput: metadata documents fetched per second by the metadata worker, and
//! images turned into previews per second by the media worker, against the local test web
//! server of `tests/support/offchain.rs` (in process, on loopback), on SQLite.
//!
//! ```text
//! cargo bench --bench offchain
//! ```
//!
//! 1. Metadata: `$TOKENQL_BENCH_TOKENS` (default 2,000) ERC721 token rows, each with its own
//!    token URI (`/bench/meta/{i}`, a small JSON document), due now; the metadata worker
//!    (`tokenql::offchain::documents::run`) is timed until every token has a fetch outcome, and
//!    every outcome must be `ok`.
//! 2. Previews: the tokens' documents name `$TOKENQL_BENCH_IMAGES` (default 300) distinct image
//!    URLs, half PNG and half JPEG, `$TOKENQL_BENCH_IMAGE_SIDE` px square (default 1,000; the
//!    bytes come from 10 distinct source images, generated once). The API's request path
//!    (`QueryService::media`, pages of 100 tokens) queues them; the media worker
//!    (`MediaWorker::run`) is timed until every one is `success` (three PNG previews each,
//!    written to a temporary directory).
//!
//! Both workers run with `concurrency` = `per_host` = 16 (every URL is on one host here) and
//! the release profile (`cargo bench` builds with it). See `docs/BENCHMARKS.md` for figures.
#![allow(clippy::print_stdout)] // the report is this program's output

#[path = "../tests/support/offchain.rs"]
mod offchain_support;

use std::io::Cursor;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use migration::MigratorTrait;
use sea_orm::{
    ActiveValue::Set, ColumnTrait, DatabaseConnection, EntityTrait, PaginatorTrait, QueryFilter,
};
use serde_json::json;

use offchain_support::OffchainServer;
use tokenql::entity::{nft_media, nft_token};
use tokenql::offchain::fetch::Fetcher;
use tokenql::offchain::media::worker::MediaWorker;
use tokenql::offchain::{documents, OffchainConfig};
use tokenql::query::{MediaSource, QueryConfig, QueryService};
use tokenql::types::{Address, TokenStandard, Uint256};

const CONTRACT: &str = "0x00000000000000000000000000000000000b3e7c";
/// Distinct source images (their bytes are served under many URLs).
const SOURCES: usize = 10;

fn env_usize(name: &str, default: usize) -> anyhow::Result<usize> {
    match std::env::var(name) {
        Ok(v) if !v.trim().is_empty() => v
            .trim()
            .replace('_', "")
            .parse()
            .with_context(|| format!("{name}={v} is not a number")),
        _ => Ok(default),
    }
}

fn temp_path(what: &str) -> PathBuf {
    let mut r = [0u8; 6];
    let _ = getrandom::fill(&mut r);
    let r: String = r.iter().map(|b| format!("{b:02x}")).collect();
    std::env::temp_dir().join(format!(
        "tq-bench-offchain-{what}-{}-{r}",
        std::process::id()
    ))
}

/// A photo-like square image: smooth gradients plus mild per-pixel noise (so PNG does not
/// compress it to nothing), different for each `seed`.
fn source_image(seed: u32, side: u32, format: image::ImageFormat) -> anyhow::Result<Vec<u8>> {
    let img = image::RgbImage::from_fn(side, side, |x, y| {
        let h = (x.wrapping_mul(73_856_093)
            ^ y.wrapping_mul(19_349_663)
            ^ seed.wrapping_mul(83_492_791))
            % 23;
        image::Rgb([
            ((x * 255 / side + seed * 17) % 256) as u8 ^ h as u8,
            ((y * 255 / side + seed * 29) % 256) as u8,
            (((x + y) * 127 / side + h) % 256) as u8,
        ])
    });
    let mut out = Cursor::new(Vec::new());
    image::DynamicImage::ImageRgb8(img).write_to(&mut out, format)?;
    Ok(out.into_inner())
}

async fn count_where(
    db: &DatabaseConnection,
    filter: impl sea_orm::sea_query::IntoCondition,
) -> anyhow::Result<u64> {
    Ok(nft_token::Entity::find().filter(filter).count(db).await?)
}

/// Polls `done` every 20 ms until it returns `target`, for at most `limit`.
async fn wait_for<F, Fut>(
    what: &str,
    target: u64,
    limit: Duration,
    mut done: F,
) -> anyhow::Result<Duration>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<u64>>,
{
    let start = Instant::now();
    loop {
        let n = done().await?;
        if n >= target {
            return Ok(start.elapsed());
        }
        if start.elapsed() > limit {
            bail!("{what}: only {n} of {target} done after {limit:?}");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    let tokens = env_usize("TOKENQL_BENCH_TOKENS", 2_000)?;
    let images = env_usize("TOKENQL_BENCH_IMAGES", 300)?.clamp(1, tokens);
    let side = env_usize("TOKENQL_BENCH_IMAGE_SIDE", 1_000)? as u32;

    // The web: documents and images.
    let web = OffchainServer::start().await;
    let t = Instant::now();
    let mut sources = Vec::with_capacity(SOURCES);
    for s in 0..SOURCES {
        let format = if s % 2 == 0 {
            image::ImageFormat::Png
        } else {
            image::ImageFormat::Jpeg
        };
        sources.push(source_image(s as u32, side, format)?);
    }
    let mut image_bytes = 0usize;
    for i in 0..images {
        let bytes = &sources[i % SOURCES];
        image_bytes += bytes.len();
        let ct = if i % 2 == 0 {
            "image/png"
        } else {
            "image/jpeg"
        };
        web.put(&format!("/bench/img/{i}"), ct, bytes.clone());
    }
    for i in 0..tokens {
        let doc = json!({
            "name": format!("Bench #{i}"),
            "description": "A token of the off-chain benchmark.",
            "image": web.url(&format!("/bench/img/{}", i % images)),
            "attributes": [{"trait_type": "Index", "value": i}],
        });
        web.put(
            &format!("/bench/meta/{i}"),
            "application/json",
            doc.to_string(),
        );
    }
    println!(
        "setup: {tokens} documents, {images} image URLs ({:.1} MB in all, {side}x{side} px, \
         {SOURCES} distinct sources) in {:.1} s",
        image_bytes as f64 / 1e6,
        t.elapsed().as_secs_f64()
    );

    // The database: SQLite in a temporary file.
    let db_path = temp_path("db");
    let db =
        tokenql::store::database::connect(&format!("sqlite://{}?mode=rwc", db_path.display()), 16)
            .await?;
    migration::Migrator::up(&db, None).await?;
    let now = tokenql::store::now_ms();
    let contract = Address::parse(CONTRACT).map_err(|e| anyhow::anyhow!(e.0))?;
    let rows: Vec<nft_token::ActiveModel> = (0..tokens)
        .map(|i| nft_token::ActiveModel {
            chain_id: Set(1),
            contract_address: Set(contract),
            token_id: Set(Uint256::from_u64(i as u64)),
            contract_type: Set(TokenStandard::Erc721),
            token_uri: Set(Some(web.url(&format!("/bench/meta/{i}")))),
            metadata_next_at: Set(Some(now)),
            ..Default::default()
        })
        .collect();
    for chunk in rows.chunks(500) {
        nft_token::Entity::insert_many(chunk.to_vec())
            .exec_without_returning(&db)
            .await?;
    }

    let media_dir = temp_path("media");
    let config = OffchainConfig {
        timeout: Duration::from_secs(10),
        concurrency: 16,
        per_host: 16,
        max_media_bytes: 20 * 1024 * 1024,
        poll_interval: Duration::from_millis(50),
        media_dir: media_dir.clone(),
        ..OffchainConfig::default()
    };
    let fetcher = Fetcher::new(config.clone());

    // 1. Metadata.
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let worker = tokio::spawn(documents::run(
        db.clone(),
        fetcher.clone(),
        documents::Schedule::default(),
        stop_rx,
    ));
    let meta_time = wait_for("metadata", tokens as u64, Duration::from_secs(600), || {
        count_where(&db, nft_token::Column::MetadataStatus.is_not_null())
    })
    .await?;
    let _ = stop_tx.send(true);
    let _ = worker.await;
    let ok = count_where(&db, nft_token::Column::MetadataStatus.eq("ok")).await?;
    if ok != tokens as u64 {
        bail!("only {ok} of {tokens} metadata fetches succeeded");
    }

    // 2. Previews: queued through the request path, a page of 100 at a time.
    let service = QueryService::new(db.clone(), QueryConfig::default()).await?;
    let stored = nft_token::Entity::find().all(&db).await?;
    let t = Instant::now();
    for page in stored.chunks(100) {
        let sources = page
            .iter()
            .map(|r| {
                let id = r.token_id;
                let source = MediaSource {
                    token_id: id,
                    erc1155: false,
                    metadata: r.metadata.clone(),
                    metadata_synced_at: r.last_metadata_sync,
                };
                Ok((r.token_id, source))
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        service.media(sources).await?;
    }
    let queue_time = t.elapsed();
    let queued = nft_media::Entity::find().count(&db).await?;
    if queued != images as u64 {
        bail!("{queued} media rows queued, expected {images}");
    }
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let worker = MediaWorker::new(db.clone(), fetcher.clone(), config.clone());
    let worker = tokio::spawn(worker.run(async move {
        let _ = stopped.await;
    }));
    let media_time = wait_for(
        "previews",
        images as u64,
        Duration::from_secs(1800),
        || async {
            Ok(nft_media::Entity::find()
                .filter(nft_media::Column::Status.ne("processing"))
                .count(&db)
                .await?)
        },
    )
    .await?;
    let _ = stop.send(());
    let _ = worker.await;
    let success = nft_media::Entity::find()
        .filter(nft_media::Column::Status.eq("success"))
        .count(&db)
        .await?;
    if success != images as u64 {
        bail!("only {success} of {images} images got previews");
    }

    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    println!();
    println!("| stage | items | time | rate |");
    println!("|---|---:|---:|---:|");
    println!(
        "| metadata fetches (SQLite) | {tokens} | {:.2} s | {:.0} documents/s |",
        meta_time.as_secs_f64(),
        tokens as f64 / meta_time.as_secs_f64()
    );
    println!(
        "| request path: queue images (`QueryService::media`, pages of 100) | {tokens} tokens | {:.3} s | {:.0} tokens/s |",
        queue_time.as_secs_f64(),
        tokens as f64 / queue_time.as_secs_f64()
    );
    println!(
        "| previews ({side}x{side} PNG/JPEG → 100/250/500 px PNG) | {images} images | {:.2} s | {:.1} images/s ({:.1} preview files/s) |",
        media_time.as_secs_f64(),
        images as f64 / media_time.as_secs_f64(),
        3.0 * images as f64 / media_time.as_secs_f64()
    );
    println!("({cores} CPU cores available; fetch concurrency 16)");

    let _ = db.close().await;
    for suffix in ["", "-wal", "-shm"] {
        let mut p = db_path.clone().into_os_string();
        p.push(suffix);
        let _ = std::fs::remove_file(p);
    }
    let _ = std::fs::remove_dir_all(&media_dir);
    Ok(())
}
