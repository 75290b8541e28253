//! `tokenql serve`: the API server, with the chains' indexer, the off-chain workers and the
//! read-replica monitor when configured, all under one stop signal.

use std::future::Future;
use std::net::SocketAddr;
use std::time::Duration;

use anyhow::Context;
use migration::MigratorTrait;
use sea_orm::DatabaseConnection;
use tokio::sync::watch;

use super::cli::ServeArgs;
use crate::app::{AppState, CorsOrigins, RateDefaults, ServerOptions};
use crate::indexer::IndexerConfig;
use crate::offchain::OffchainConfig;
use crate::store::replicas::{Reads, ReplicaConfig};
use crate::webhooks::WebhookConfig;

/// The server's settings, from its arguments; the chains it indexes are also read (native
/// balances, block headers) from their endpoints.
fn options(
    args: &ServeArgs,
    offchain: &OffchainConfig,
    indexer: &IndexerConfig,
) -> anyhow::Result<ServerOptions> {
    let endpoints: Vec<_> = indexer
        .chains
        .iter()
        .map(|c| (c.chain, c.rpc_url.clone()))
        .collect();
    let (timeout, retry) = indexer
        .chains
        .first()
        .map(|c| (c.request_timeout, c.retry))
        .unwrap_or_default();
    Ok(ServerOptions {
        chain_reads: super::chain_reads::chain_reads(&endpoints, timeout, retry)?,
        cors: CorsOrigins::parse(&args.cors_origins).map_err(anyhow::Error::msg)?,
        rate_defaults: RateDefaults {
            per_sec: args.rate_limit,
            burst: args.rate_burst,
        },
        key_cache_ttl: Duration::from_secs(args.key_cache_ttl),
        rate_limit_store: args.rate_limit_store.0.clone(),
        rate_limit_prefix: args.rate_limit_prefix.clone(),
        rate_limit_store_timeout: Duration::from_millis(args.rate_limit_store_timeout_ms),
        offchain: offchain.clone(),
        live: crate::app::live::LiveOptions {
            per_key: args.subscriptions_per_key as usize,
            poll: Duration::from_millis(args.feed_poll_ms),
            ..Default::default()
        },
        webhook_confirmations: args.webhook_confirmations.clone(),
    })
}

/// The delivery worker's settings, when it runs in this process.
fn webhooks(args: &ServeArgs) -> Option<WebhookConfig> {
    args.webhooks.then(|| WebhookConfig {
        confirmations: args.webhook_confirmations.clone(),
        max_failures: args.webhook_max_failures,
        lease: Duration::from_millis(args.webhook_lease_ms),
        poll: Duration::from_millis(args.feed_poll_ms),
        retry_base: Duration::from_millis(args.webhook_retry_ms),
        ..Default::default()
    })
}

/// The primary database: the demo's SQLite file (migrated, loaded, with a fresh key, returned)
/// or `database_url` (whose migrations must be current).
async fn primary(
    args: &ServeArgs,
    database_url: &str,
) -> anyhow::Result<(DatabaseConnection, u32, Option<String>)> {
    let url = if args.demo {
        format!("sqlite://{}?mode=rwc", args.demo_db.display())
    } else {
        database_url.to_string()
    };
    let pool = args
        .db_pool
        .unwrap_or_else(|| crate::store::database::default_pool(&url));
    let db = crate::store::database::connect(&url, pool)
        .await
        .context("connecting to the database")?;
    if !args.demo {
        anyhow::ensure!(
            crate::store::database::migrations_current(&db).await?,
            "the database has pending migrations: run `tokenql migrate` first"
        );
        return Ok((db, pool, None));
    }
    migration::repair_recorded_names(&db)
        .await
        .context("renaming misrecorded migrations")?;
    migration::Migrator::up(&db, None)
        .await
        .context("migrating the demo database")?;
    if let Some(r) = crate::demo::load(&db).await? {
        tracing::info!(
            erc20 = r.erc20_transfers,
            nft = r.nft_transfers,
            "demo data loaded"
        );
    }
    let (_, secret) = crate::keys::create(&db, "demo").await?;
    Ok((db, pool, Some(secret)))
}

/// The state every handler shares: the primary, the read replicas, the settings.
async fn state(
    args: &ServeArgs,
    db: DatabaseConnection,
    pool: u32,
    options: ServerOptions,
) -> anyhow::Result<AppState> {
    let replicas = ReplicaConfig {
        max_lag: Duration::from_millis(args.replica_max_lag_ms),
        check_every: Duration::from_millis(args.replica_check_ms),
    };
    let reads = Reads::connect(db.clone(), &args.database_read_urls, pool, replicas).await?;
    let config = crate::query::QueryConfig {
        max_lag_blocks: args.max_lag_blocks,
    };
    Ok(AppState::new(db, config)
        .await?
        .with_options(options)
        .with_reads(reads))
}

/// Runs `tokenql serve` until `shutdown` completes; `ready` is told the bound address and, for
/// the demo, its key. Then stops the indexer, the workers and the monitor, and waits for them.
pub async fn serve(
    args: ServeArgs,
    database_url: &str,
    shutdown: impl Future<Output = ()> + Send + 'static,
    ready: impl FnOnce(SocketAddr, Option<&str>),
) -> anyhow::Result<()> {
    let indexer_config = args.indexer.config().map_err(anyhow::Error::msg)?;
    let offchain_config = args.offchain.config().map_err(anyhow::Error::msg)?;
    let options = options(&args, &offchain_config, &indexer_config)?;
    let webhooks = webhooks(&args);
    let (db, pool, demo_key) = primary(&args, database_url).await?;
    let state = state(&args, db, pool, options).await?;
    let listener = tokio::net::TcpListener::bind(args.bind)
        .await
        .with_context(|| format!("binding {}", args.bind))?;
    let addr = listener.local_addr()?;
    tracing::info!(%addr, "listening");
    ready(addr, demo_key.as_deref());

    let (stop_tx, stop_rx) = watch::channel(false);
    tokio::spawn(async move {
        shutdown.await;
        let _ = stop_tx.send(true);
    });
    let companions = Companions {
        indexer: indexer_config,
        offchain: offchain_config,
        webhooks,
    };
    supervise(listener, state, companions, stop_rx).await
}

/// Completes once `stop` turns true.
async fn stopped(mut stop: watch::Receiver<bool>) {
    let _ = stop.wait_for(|s| *s).await;
}

/// What runs beside the server.
struct Companions {
    indexer: IndexerConfig,
    offchain: OffchainConfig,
    webhooks: Option<WebhookConfig>,
}

/// The server and its companions under one stop signal.
async fn supervise(
    listener: tokio::net::TcpListener,
    state: AppState,
    companions: Companions,
    stop: watch::Receiver<bool>,
) -> anyhow::Result<()> {
    let Companions {
        indexer,
        offchain,
        webhooks,
    } = companions;
    let indexer = (!indexer.chains.is_empty()).then(|| {
        tokio::spawn(crate::indexer::run(
            state.db().clone(),
            indexer,
            stopped(stop.clone()),
        ))
    });
    let workers = crate::offchain::spawn(state.db().clone(), offchain, stop.clone());
    let monitor = state.reads.spawn_monitor(stop.clone());
    let deliveries = webhooks
        .map(|config| crate::webhooks::spawn(state.service.clone(), config, stop.clone()))
        .transpose()
        .map_err(anyhow::Error::msg)?;
    crate::server::run(listener, state, stopped(stop)).await?;
    if let Some(m) = monitor {
        let _ = m.await;
    }
    for worker in workers {
        worker.await?;
    }
    if let Some(d) = deliveries {
        d.await?;
    }
    if let Some(task) = indexer {
        task.await??;
    }
    Ok(())
}

/// The demo's welcome: its key and URLs to try.
pub fn demo_banner(addr: SocketAddr, key: &str) -> Vec<String> {
    let base = format!("http://{addr}");
    let w = crate::demo::EXAMPLE_NFT_WALLET;
    let usdt = "0xdac17f958d2ee523a2206206994597c13d831ec7";
    vec![
        format!("\ntokenql demo is up on {base} with real mainnet data.\n"),
        format!("API key (send as X-API-Key): {key}\n"),
        "Try:".into(),
        format!("  curl -H 'X-API-Key: {key}' '{base}/api/v2/{w}/nft?chain=eth&limit=5'"),
        format!(
            "  curl -H 'X-API-Key: {key}' '{base}/api/v2/erc20/transfers?chain=eth&contract_addresses[]={usdt}&limit=5'"
        ),
        format!(
            "  curl -H 'X-API-Key: {key}' '{base}/api/v2.2/erc20/{usdt}/transfers?order=ASC&limit=5'"
        ),
        format!("  GraphQL playground, with the key filled in: {base}/playground#key={key}"),
        "\nPress Ctrl-C to stop.".into(),
    ]
}
