//! The command line: `tokenql`'s subcommands and their settings (clap), parsed by `main` and
//! run by [`super::run`].

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::indexer::cli::IndexerArgs;
use crate::telemetry::LogFormat;
use crate::types::Chain;

#[derive(Parser)]
#[command(
    name = "tokenql",
    version,
    about = "Index EVM chains; answer NFT-ownership and ERC20-transfer questions over GraphQL and Moralis-v2 REST."
)]
pub struct Cli {
    /// Database URL: sqlite://FILE?mode=rwc, postgres://USER@HOST/DB or mysql://USER@HOST/DB.
    #[arg(long, env = "DATABASE_URL", default_value = crate::store::database::DEFAULT_DATABASE_URL, global = true)]
    pub database_url: String,
    /// Log format on stderr.
    #[arg(
        long,
        env = "TOKENQL_LOG_FORMAT",
        value_enum,
        default_value = "text",
        global = true
    )]
    pub log_format: LogFormat,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
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
        action: crate::lists::cli::ListsAction,
    },
    /// Show a contract's metadata and flags, or override its spam / verified flags.
    Contract {
        #[command(subcommand)]
        action: crate::lists::cli::ContractAction,
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
        scope: crate::types::ScopeKind,
        /// The addresses whose history to fetch.
        #[arg(required = true, value_parser = parse_address)]
        addresses: Vec<crate::types::Address>,
        /// Chain name or hex id.
        #[arg(long, default_value = "eth", value_parser = parse_chain)]
        chain: Chain,
        /// Wait until every one is complete (or failed), printing progress.
        #[arg(long)]
        wait: bool,
    },
    /// Serve the REST and GraphQL APIs (and follow chains when --rpc is given).
    Serve(Box<ServeArgs>),
}

#[derive(Subcommand)]
pub enum KeysAction {
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
pub struct RateArgs {
    /// Requests per second for this key; 0: unlimited. Default: the server's --rate-limit.
    #[arg(long)]
    pub rate: Option<u32>,
    /// Burst (bucket size) for this key, at least 1. Default: the server's --rate-burst.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub burst: Option<u32>,
}

impl RateArgs {
    /// The key's own limit.
    pub fn key_rate(&self) -> crate::keys::KeyRate {
        crate::keys::KeyRate {
            per_sec: self.rate,
            burst: self.burst,
        }
    }
}

/// `--rate-limit-store`: `local`, or the Redis server shared by every API process.
#[derive(Debug, Clone)]
pub struct RateStore(pub Option<crate::app::shared_limit::RedisUrl>);

fn parse_rate_store(s: &str) -> Result<RateStore, String> {
    match s.trim() {
        "local" => Ok(RateStore(None)),
        url => crate::app::shared_limit::RedisUrl::parse(url)
            .map(|u| RateStore(Some(u)))
            .map_err(|e| format!("{e}; or `local`")),
    }
}

fn parse_scope_kind(s: &str) -> Result<crate::types::ScopeKind, String> {
    crate::types::ScopeKind::parse(s).map_err(|e| e.0)
}

fn parse_address(s: &str) -> Result<crate::types::Address, String> {
    crate::types::Address::parse(s).map_err(|e| e.0)
}

fn parse_chain(s: &str) -> Result<Chain, String> {
    Chain::parse(s).map_err(|e| e.0)
}

/// The settings of `tokenql serve`.
#[derive(clap::Args)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, env = "TOKENQL_BIND", default_value = "127.0.0.1:8080")]
    pub bind: SocketAddr,
    /// Serve the bundled mainnet sample from its own SQLite file (TOKENQL_DEMO_DB), migrated
    /// and loaded on start, and print a fresh API key with example URLs.
    #[arg(long)]
    pub demo: bool,
    /// SQLite file of the demo.
    #[arg(long, env = "TOKENQL_DEMO_DB", default_value = "tokenql-demo.db")]
    pub demo_db: PathBuf,
    /// Answers say SYNCING while the indexer trails the chain head by more blocks than this.
    #[arg(long, env = "TOKENQL_MAX_LAG_BLOCKS", default_value_t = 16)]
    pub max_lag_blocks: u64,
    /// Database connection pool size (per database: the primary and each read replica).
    /// Default: 16; 4 on SQLite, where every connection's caches are the server's memory and
    /// one writer at a time needs no more (see README).
    #[arg(long, env = "TOKENQL_DB_POOL", value_parser = clap::value_parser!(u32).range(1..))]
    pub db_pool: Option<u32>,
    /// A PostgreSQL read replica of --database-url for the APIs' reads; repeatable (env:
    /// comma-separated). Writes still go to --database-url.
    #[arg(
        long = "database-read-url",
        env = "TOKENQL_DATABASE_READ_URLS",
        value_name = "URL",
        value_delimiter = ','
    )]
    pub database_read_urls: Vec<String>,
    /// Milliseconds a read replica may trail the primary and stay in rotation.
    #[arg(long, env = "TOKENQL_REPLICA_MAX_LAG_MS", default_value_t = 5000)]
    pub replica_max_lag_ms: u64,
    /// Milliseconds between two checks of each read replica.
    #[arg(long, env = "TOKENQL_REPLICA_CHECK_MS", default_value_t = 500,
          value_parser = clap::value_parser!(u64).range(50..))]
    pub replica_check_ms: u64,
    /// A browser origin allowed to call the API (CORS), e.g. https://app.example.com, or *
    /// for any; repeatable (env: comma-separated). None: no CORS headers.
    #[arg(
        long = "cors-origin",
        env = "TOKENQL_CORS_ORIGINS",
        value_name = "ORIGIN",
        value_delimiter = ','
    )]
    pub cors_origins: Vec<String>,
    /// Requests per second per API key, for keys without their own limit; 0: unlimited.
    #[arg(long, env = "TOKENQL_RATE_LIMIT", default_value_t = crate::app::RateDefaults::SERVE.per_sec)]
    pub rate_limit: u32,
    /// Burst (bucket size) per API key, for keys without their own.
    #[arg(long, env = "TOKENQL_RATE_BURST", default_value_t = crate::app::RateDefaults::SERVE.burst,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub rate_burst: u32,
    /// Where rate-limit buckets live: `local` (this process; each process limits on its
    /// own) or `redis://HOST[:PORT][/DB]`, shared by every API process.
    #[arg(long, env = "TOKENQL_RATE_LIMIT_STORE", default_value = "local", value_parser = parse_rate_store)]
    pub rate_limit_store: RateStore,
    /// Prefix of the shared buckets' Redis keys (`PREFIX:rl:KEY_ID`).
    #[arg(long, env = "TOKENQL_RATE_LIMIT_PREFIX", default_value = "tokenql")]
    pub rate_limit_prefix: String,
    /// Milliseconds a request waits for the shared rate-limit store before it is limited
    /// by this process's own bucket.
    #[arg(long, env = "TOKENQL_RATE_LIMIT_STORE_TIMEOUT_MS", default_value_t = 250,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub rate_limit_store_timeout_ms: u64,
    /// Seconds a verified API key is trusted without asking the database; 0: ask every
    /// time. Revoking a key or changing its limit takes effect within this time.
    #[arg(long, env = "TOKENQL_KEY_CACHE_TTL", default_value_t = crate::app::DEFAULT_KEY_CACHE_TTL.as_secs())]
    pub key_cache_ttl: u64,
    /// GraphQL subscriptions one API key may hold open at once in this process.
    #[arg(long, env = "TOKENQL_SUBSCRIPTIONS_PER_KEY", default_value_t = 100,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub subscriptions_per_key: u64,
    /// Milliseconds between reads of the change feed's tail, for changes another process
    /// indexed (this process's own are seen at once).
    #[arg(long, env = "TOKENQL_FEED_POLL_MS", default_value_t = 250,
          value_parser = clap::value_parser!(u64).range(10..))]
    pub feed_poll_ms: u64,
    /// Run the webhook delivery worker (Moralis-compatible streams) in this process.
    #[arg(long, env = "TOKENQL_WEBHOOKS", default_value_t = true, action = clap::ArgAction::Set)]
    pub webhooks: bool,
    /// Blocks above a transfer's before its `confirmed: true` webhook delivery: a number for
    /// every chain and/or `chain=N` pairs (`12`, `eth=12,polygon=64`).
    #[arg(long, env = "TOKENQL_WEBHOOK_CONFIRMATIONS", default_value = "12",
          value_parser = parse_confirmations)]
    pub webhook_confirmations: crate::query::changes::Confirmations,
    /// Consecutive failed attempts of a delivery before its stream goes to `error`.
    #[arg(long, env = "TOKENQL_WEBHOOK_MAX_FAILURES", default_value_t = 10,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub webhook_max_failures: u32,
    /// Milliseconds before the first retry of a failed delivery; each next one waits twice as
    /// long, up to 30 s.
    #[arg(long, env = "TOKENQL_WEBHOOK_RETRY_MS", default_value_t = 500,
          value_parser = clap::value_parser!(u64).range(10..))]
    pub webhook_retry_ms: u64,
    /// Milliseconds a process's lease on delivering a stream lives without renewal (another
    /// process takes a stream over this long after its deliverer died).
    #[arg(long, env = "TOKENQL_WEBHOOK_LEASE_MS", default_value_t = 10_000,
          value_parser = clap::value_parser!(u64).range(300..))]
    pub webhook_lease_ms: u64,
    #[command(flatten)]
    pub indexer: Box<IndexerArgs>,
    #[command(flatten)]
    pub offchain: Box<crate::offchain::cli::OffchainArgs>,
}

/// Parses `--webhook-confirmations`.
fn parse_confirmations(s: &str) -> Result<crate::query::changes::Confirmations, String> {
    crate::query::changes::Confirmations::parse(s)
}
