//! The `tokenql` command line: wiring only. See README "Configuration" for every flag and
//! environment variable.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use migration::MigratorTrait;
use tokenql::indexer::cli::IndexerArgs;
use tokenql::telemetry::{self, LogFormat};
use tokenql::types::Chain;

/// mimalloc rather than the system allocator: a page of records is thousands of small
/// allocations, and glibc's malloc (its arenas and consolidation) took a third of the server's
/// CPU time under load (`perf record`, `benches/scale`; see docs/BENCHMARKS.md). Built without
/// transparent huge pages (`no_thp`): its regions advised as huge pages took the server's RSS
/// from 67 to 85 MiB at 64 concurrent requests.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(
    name = "tokenql",
    version,
    about = "Index EVM chains; answer NFT-ownership and ERC20-transfer questions over GraphQL and Moralis-v2 REST."
)]
struct Cli {
    /// Database URL: sqlite://FILE?mode=rwc, postgres://USER@HOST/DB or mysql://USER@HOST/DB.
    #[arg(long, env = "DATABASE_URL", default_value = tokenql::config::DEFAULT_DATABASE_URL, global = true)]
    database_url: String,
    /// Log format on stderr.
    #[arg(
        long,
        env = "TOKENQL_LOG_FORMAT",
        value_enum,
        default_value = "text",
        global = true
    )]
    log_format: LogFormat,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Apply pending database migrations.
    Migrate,
    /// Manage API keys.
    Keys {
        #[command(subcommand)]
        action: KeysAction,
    },
    /// Load recorded logs and block headers (JSON lines) and/or a token list.
    Import {
        /// Chain name or hex id (see README).
        #[arg(long, env = "TOKENQL_IMPORT_CHAIN", value_parser = parse_chain)]
        chain: Chain,
        /// One eth_getLogs log object per line.
        #[arg(long, requires = "blocks")]
        logs: Option<PathBuf>,
        /// One block header {number, hash, parentHash, timestamp} per line.
        #[arg(long, requires = "logs")]
        blocks: Option<PathBuf>,
        /// A token list (tokenlists.org schema): logos, and names, symbols and decimals where
        /// eth_call has given none (the chain's entries; see `tokenql lists tokens`).
        #[arg(long)]
        tokenlist: Option<PathBuf>,
        /// Declare the imported logs the chain's whole history (a sample that stands on its
        /// own): answers about it may say SYNCED without fetching any history. Without it, an
        /// imported segment is complete only from its first block on, like a live index.
        #[arg(long, requires = "logs")]
        complete_history: bool,
    },
    /// Import spam lists, verified allow-lists, address labels and token lists; re-run the
    /// spam heuristics.
    Lists {
        #[command(subcommand)]
        action: tokenql::lists::cli::ListsAction,
    },
    /// Show a contract's metadata and flags, or override its spam / verified flags.
    Contract {
        #[command(subcommand)]
        action: tokenql::lists::cli::ContractAction,
    },
    /// Follow the configured chains (see --rpc) into the database.
    Index {
        #[command(flatten)]
        indexer: Box<IndexerArgs>,
    },
    /// Show each chain's head, indexed block and lag, and every history fetch (scope, state,
    /// progress, ETA).
    Status,
    /// Fetch the history of wallets or contracts ahead of traffic (the indexer of the chain
    /// does the fetching; this queues it).
    Sync {
        /// `wallet` or `contract`.
        #[arg(value_parser = parse_scope_kind)]
        scope: tokenql::types::ScopeKind,
        /// The addresses whose history to fetch.
        #[arg(required = true, value_parser = parse_address)]
        addresses: Vec<tokenql::types::Address>,
        /// Chain name or hex id.
        #[arg(long, default_value = "eth", value_parser = parse_chain)]
        chain: Chain,
        /// Wait until every one is complete (or failed), printing progress.
        #[arg(long)]
        wait: bool,
    },
    /// Serve the REST and GraphQL APIs (and follow chains when --rpc is given).
    Serve {
        /// Address to listen on.
        #[arg(long, env = "TOKENQL_BIND", default_value = "127.0.0.1:8080")]
        bind: SocketAddr,
        /// Serve the bundled mainnet sample from its own SQLite file (TOKENQL_DEMO_DB), migrated
        /// and loaded on start, and print a fresh API key with example URLs.
        #[arg(long)]
        demo: bool,
        /// SQLite file of the demo.
        #[arg(long, env = "TOKENQL_DEMO_DB", default_value = "tokenql-demo.db")]
        demo_db: PathBuf,
        /// Answers say SYNCING while the indexer trails the chain head by more blocks than this.
        #[arg(long, env = "TOKENQL_MAX_LAG_BLOCKS", default_value_t = 16)]
        max_lag_blocks: u64,
        /// Database connection pool size (per database: the primary and each read replica).
        /// Default: 16; 4 on SQLite, where every connection's caches are the server's memory and
        /// one writer at a time needs no more (see README).
        #[arg(long, env = "TOKENQL_DB_POOL", value_parser = clap::value_parser!(u32).range(1..))]
        db_pool: Option<u32>,
        /// A PostgreSQL read replica of --database-url for the APIs' reads; repeatable (env:
        /// comma-separated). Writes still go to --database-url.
        #[arg(
            long = "database-read-url",
            env = "TOKENQL_DATABASE_READ_URLS",
            value_name = "URL",
            value_delimiter = ','
        )]
        database_read_urls: Vec<String>,
        /// Milliseconds a read replica may trail the primary and stay in rotation.
        #[arg(long, env = "TOKENQL_REPLICA_MAX_LAG_MS", default_value_t = 5000)]
        replica_max_lag_ms: u64,
        /// Milliseconds between two checks of each read replica.
        #[arg(long, env = "TOKENQL_REPLICA_CHECK_MS", default_value_t = 500,
              value_parser = clap::value_parser!(u64).range(50..))]
        replica_check_ms: u64,
        /// A browser origin allowed to call the API (CORS), e.g. https://app.example.com, or *
        /// for any; repeatable (env: comma-separated). None: no CORS headers.
        #[arg(
            long = "cors-origin",
            env = "TOKENQL_CORS_ORIGINS",
            value_name = "ORIGIN",
            value_delimiter = ','
        )]
        cors_origins: Vec<String>,
        /// Requests per second per API key, for keys without their own limit; 0: unlimited.
        #[arg(long, env = "TOKENQL_RATE_LIMIT", default_value_t = tokenql::app::RateDefaults::SERVE.per_sec)]
        rate_limit: u32,
        /// Burst (bucket size) per API key, for keys without their own.
        #[arg(long, env = "TOKENQL_RATE_BURST", default_value_t = tokenql::app::RateDefaults::SERVE.burst,
              value_parser = clap::value_parser!(u32).range(1..))]
        rate_burst: u32,
        /// Where rate-limit buckets live: `local` (this process; each process limits on its
        /// own) or `redis://HOST[:PORT][/DB]`, shared by every API process.
        #[arg(long, env = "TOKENQL_RATE_LIMIT_STORE", default_value = "local", value_parser = parse_rate_store)]
        rate_limit_store: RateStore,
        /// Prefix of the shared buckets' Redis keys (`PREFIX:rl:KEY_ID`).
        #[arg(long, env = "TOKENQL_RATE_LIMIT_PREFIX", default_value = "tokenql")]
        rate_limit_prefix: String,
        /// Milliseconds a request waits for the shared rate-limit store before it is limited
        /// by this process's own bucket.
        #[arg(long, env = "TOKENQL_RATE_LIMIT_STORE_TIMEOUT_MS", default_value_t = 250,
              value_parser = clap::value_parser!(u64).range(1..))]
        rate_limit_store_timeout_ms: u64,
        /// Seconds a verified API key is trusted without asking the database; 0: ask every
        /// time. Revoking a key or changing its limit takes effect within this time.
        #[arg(long, env = "TOKENQL_KEY_CACHE_TTL", default_value_t = tokenql::app::DEFAULT_KEY_CACHE_TTL.as_secs())]
        key_cache_ttl: u64,
        #[command(flatten)]
        indexer: Box<IndexerArgs>,
        #[command(flatten)]
        offchain: Box<tokenql::offchain::cli::OffchainArgs>,
    },
}

#[derive(Subcommand)]
enum KeysAction {
    /// Create a key; its secret is printed once, as the last line of stdout.
    Create {
        #[arg(long)]
        name: String,
        #[command(flatten)]
        rate: RateArgs,
    },
    /// List keys (never their secrets).
    List,
    /// Revoke a key by id or name.
    Revoke { id_or_name: String },
    /// Set a key's own rate limit (by id or name); what is left out returns to the server's
    /// defaults (`serve --rate-limit/--rate-burst`). Servers apply it within --key-cache-ttl.
    SetRate {
        id_or_name: String,
        #[command(flatten)]
        rate: RateArgs,
    },
}

/// A key's own rate limit.
#[derive(clap::Args)]
struct RateArgs {
    /// Requests per second for this key; 0: unlimited. Default: the server's --rate-limit.
    #[arg(long)]
    rate: Option<u32>,
    /// Burst (bucket size) for this key, at least 1. Default: the server's --rate-burst.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    burst: Option<u32>,
}

impl RateArgs {
    fn key_rate(&self) -> tokenql::keys::KeyRate {
        tokenql::keys::KeyRate {
            per_sec: self.rate,
            burst: self.burst,
        }
    }
}

/// `--rate-limit-store`: `local`, or the Redis server shared by every API process.
#[derive(Debug, Clone)]
struct RateStore(Option<tokenql::app::redis::RedisUrl>);

fn parse_rate_store(s: &str) -> Result<RateStore, String> {
    match s.trim() {
        "local" => Ok(RateStore(None)),
        url => tokenql::app::redis::RedisUrl::parse(url)
            .map(|u| RateStore(Some(u)))
            .map_err(|e| format!("{e}; or `local`")),
    }
}

fn parse_scope_kind(s: &str) -> Result<tokenql::types::ScopeKind, String> {
    tokenql::types::ScopeKind::parse(s).map_err(|e| e.0)
}

fn parse_address(s: &str) -> Result<tokenql::types::Address, String> {
    tokenql::types::Address::parse(s).map_err(|e| e.0)
}

fn parse_chain(s: &str) -> Result<Chain, String> {
    Chain::parse(s).map_err(|e| e.0)
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    telemetry::init(cli.log_format);
    match run(cli).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Writes a line to stdout (command output, as opposed to logs).
fn out(line: impl std::fmt::Display) {
    use std::io::Write;
    let _ = writeln!(std::io::stdout(), "{line}");
}

async fn run(cli: Cli) -> anyhow::Result<()> {
    use anyhow::Context;
    match cli.command {
        Command::Migrate => {
            let db = tokenql::config::connect(&cli.database_url, 2)
                .await
                .context("connecting to the database")?;
            migration::Migrator::up(&db, None)
                .await
                .context("applying migrations")?;
            tracing::info!("migrations applied");
        }
        Command::Keys { action } => {
            let db = open_migrated(&cli.database_url, 2).await?;
            match action {
                KeysAction::Create { name, rate } => {
                    let (info, secret) =
                        tokenql::keys::create_with_rate(&db, &name, rate.key_rate())
                            .await
                            .context("creating the key")?;
                    out(format_args!(
                        "created key {} ({}, rate limit {}); store it now, it is not shown again:",
                        info.id,
                        info.name,
                        info.rate.describe()
                    ));
                    out(secret);
                }
                KeysAction::List => {
                    out("id\tname\tprefix\tcreated_ms\trevoked_ms\trate_limit");
                    for k in tokenql::keys::list(&db).await? {
                        out(format_args!(
                            "{}\t{}\t{}…\t{}\t{}\t{}",
                            k.id,
                            k.name,
                            k.prefix,
                            k.created_at,
                            k.revoked_at.map_or("-".to_string(), |r| r.to_string()),
                            k.rate.describe()
                        ));
                    }
                }
                KeysAction::SetRate { id_or_name, rate } => {
                    let rate = rate.key_rate();
                    let n = tokenql::keys::set_rate(&db, &id_or_name, rate).await?;
                    anyhow::ensure!(n > 0, "no active key with id or name '{id_or_name}'");
                    out(format_args!(
                        "rate limit of {n} key(s) set to {}",
                        rate.describe()
                    ));
                }
                KeysAction::Revoke { id_or_name } => {
                    let n = tokenql::keys::revoke(&db, &id_or_name).await?;
                    anyhow::ensure!(n > 0, "no active key with id or name '{id_or_name}'");
                    out(format_args!("revoked {n} key(s)"));
                }
            }
        }
        Command::Import {
            chain,
            logs,
            blocks,
            tokenlist,
            complete_history,
        } => {
            anyhow::ensure!(
                logs.is_some() || tokenlist.is_some(),
                "nothing to import: give --logs and --blocks, and/or --tokenlist"
            );
            let db = open_migrated(&cli.database_url, 2).await?;
            if let (Some(logs), Some(blocks)) = (logs, blocks) {
                let r = tokenql::import::import_logs(&db, chain, &logs, &blocks).await?;
                out(format_args!(
                    "imported {} lines: {} ERC20 transfers, {} NFT transfers, {} blocks; skipped {} non-transfer and {} malformed",
                    r.lines, r.erc20_transfers, r.nft_transfers, r.blocks, r.skipped_not_transfer, r.skipped_malformed
                ));
                if complete_history {
                    tokenql::store::mark_history_complete(&db, chain).await?;
                    out(format_args!(
                        "{chain}: the stored history is declared complete"
                    ));
                }
            }
            if let Some(list) = tokenlist {
                let r = tokenql::lists::tokenlist::import_file(&db, &list, Some(chain)).await?;
                out(r);
            }
        }
        Command::Lists { action } => {
            let db = open_migrated(&cli.database_url, 2).await?;
            for line in tokenql::lists::cli::run_lists(&db, action).await? {
                out(line);
            }
        }
        Command::Contract { action } => {
            let db = open_migrated(&cli.database_url, 2).await?;
            for line in tokenql::lists::cli::run_contract(&db, action).await? {
                out(line);
            }
        }
        Command::Index { indexer } => {
            let config = indexer.config().map_err(anyhow::Error::msg)?;
            anyhow::ensure!(
                !config.chains.is_empty(),
                "no chain to follow: give --rpc CHAIN=URL or set TOKENQL_RPC_<CHAIN>"
            );
            let db = open_migrated(&cli.database_url, 8).await?;
            tokenql::indexer::run(db, config, tokenql::server::shutdown_signal()).await?;
        }
        Command::Sync {
            scope,
            addresses,
            chain,
            wait,
        } => {
            let db = open_migrated(&cli.database_url, 2).await?;
            let n = tokenql::indexer::history::schedule_addresses(&db, chain, scope, &addresses)
                .await?;
            out(format_args!(
                "{chain}: {n} {scope} history fetch(es) queued, {} already known",
                addresses.len() as u64 - n.min(addresses.len() as u64)
            ));
            if wait {
                tokenql::indexer::history::wait(&db, chain, scope, &addresses, out).await?;
            }
        }
        Command::Status => {
            let db = open_migrated(&cli.database_url, 2).await?;
            for line in tokenql::indexer::status::report(&db).await? {
                out(line);
            }
        }
        Command::Serve {
            bind,
            demo,
            demo_db,
            max_lag_blocks,
            db_pool,
            database_read_urls,
            replica_max_lag_ms,
            replica_check_ms,
            cors_origins,
            rate_limit,
            rate_burst,
            rate_limit_store,
            rate_limit_prefix,
            rate_limit_store_timeout_ms,
            key_cache_ttl,
            indexer,
            offchain,
        } => {
            let indexer_config = indexer.config().map_err(anyhow::Error::msg)?;
            let offchain_config = offchain.config().map_err(anyhow::Error::msg)?;
            let options = tokenql::app::ServerOptions {
                cors: tokenql::app::CorsOrigins::parse(&cors_origins)
                    .map_err(anyhow::Error::msg)?,
                rate_defaults: tokenql::app::RateDefaults {
                    per_sec: rate_limit,
                    burst: rate_burst,
                },
                key_cache_ttl: std::time::Duration::from_secs(key_cache_ttl),
                rate_limit_store: rate_limit_store.0,
                rate_limit_prefix,
                rate_limit_store_timeout: std::time::Duration::from_millis(
                    rate_limit_store_timeout_ms,
                ),
                offchain: offchain_config.clone(),
            };
            let url = if demo {
                format!("sqlite://{}?mode=rwc", demo_db.display())
            } else {
                cli.database_url.clone()
            };
            let db_pool = db_pool.unwrap_or_else(|| tokenql::config::default_pool(&url));
            let db = tokenql::config::connect(&url, db_pool)
                .await
                .context("connecting to the database")?;
            let mut demo_key = None;
            if demo {
                migration::Migrator::up(&db, None)
                    .await
                    .context("migrating the demo database")?;
                if let Some(r) = tokenql::demo::load(&db).await? {
                    tracing::info!(
                        erc20 = r.erc20_transfers,
                        nft = r.nft_transfers,
                        "demo data loaded"
                    );
                }
                let (_, secret) = tokenql::keys::create(&db, "demo").await?;
                demo_key = Some(secret);
            } else {
                anyhow::ensure!(
                    tokenql::config::migrations_current(&db).await?,
                    "the database has pending migrations: run `tokenql migrate` first"
                );
            }
            let reads = tokenql::store::replicas::Reads::connect(
                db.clone(),
                &database_read_urls,
                db_pool,
                tokenql::store::replicas::ReplicaConfig {
                    max_lag: std::time::Duration::from_millis(replica_max_lag_ms),
                    check_every: std::time::Duration::from_millis(replica_check_ms),
                },
            )
            .await?;
            let state = tokenql::AppState::new(db, tokenql::query::QueryConfig { max_lag_blocks })
                .await?
                .with_options(options)
                .with_reads(reads);
            let listener = tokio::net::TcpListener::bind(bind)
                .await
                .with_context(|| format!("binding {bind}"))?;
            let addr = listener.local_addr()?;
            tracing::info!(%addr, "listening");
            if let Some(key) = demo_key {
                print_demo(addr, &key);
            }
            let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
            tokio::spawn(async move {
                tokenql::server::shutdown_signal().await;
                let _ = stop_tx.send(true);
            });
            let stopped = |mut rx: tokio::sync::watch::Receiver<bool>| async move {
                let _ = rx.wait_for(|s| *s).await;
            };
            let indexer = (!indexer_config.chains.is_empty()).then(|| {
                tokio::spawn(tokenql::indexer::run(
                    state.db().clone(),
                    indexer_config,
                    stopped(stop_rx.clone()),
                ))
            });
            let workers =
                tokenql::offchain::spawn(state.db().clone(), offchain_config, stop_rx.clone());
            let monitor = state.reads.spawn_monitor(stop_rx.clone());
            tokenql::run(listener, state, stopped(stop_rx)).await?;
            if let Some(m) = monitor {
                let _ = m.await;
            }
            for worker in workers {
                worker.await?;
            }
            if let Some(task) = indexer {
                task.await??;
            }
        }
    }
    Ok(())
}

async fn open_migrated(url: &str, pool: u32) -> anyhow::Result<sea_orm::DatabaseConnection> {
    use anyhow::Context;
    let db = tokenql::config::connect(url, pool)
        .await
        .context("connecting to the database")?;
    anyhow::ensure!(
        tokenql::config::migrations_current(&db).await?,
        "the database has pending migrations: run `tokenql migrate` first"
    );
    Ok(db)
}

fn print_demo(addr: SocketAddr, key: &str) {
    let base = format!("http://{addr}");
    let w = tokenql::demo::EXAMPLE_NFT_WALLET;
    out(format_args!(
        "\ntokenql demo is up on {base} with real mainnet data.\n"
    ));
    out(format_args!("API key (send as X-API-Key): {key}\n"));
    out("Try:");
    out(format_args!(
        "  curl -H 'X-API-Key: {key}' '{base}/api/v2/{w}/nft?chain=eth&limit=5'"
    ));
    out(format_args!(
        "  curl -H 'X-API-Key: {key}' '{base}/api/v2/erc20/transfers?chain=eth&contract_addresses[]=0xdac17f958d2ee523a2206206994597c13d831ec7&limit=5'"
    ));
    out(format_args!(
        "  curl -H 'X-API-Key: {key}' '{base}/api/v2.2/erc20/0xdac17f958d2ee523a2206206994597c13d831ec7/transfers?order=ASC&limit=5'"
    ));
    out(format_args!(
        "  GraphQL playground, with the key filled in: {base}/playground#key={key}"
    ));
    out("\nPress Ctrl-C to stop.");
}
