//! Indexer settings from flags and environment variables (shared by `index` and `serve`).

use std::time::Duration;

use super::config::{parse_chain_value, ChainConfig, IndexerConfig};
use super::rpc::ProviderProfile;
use crate::types::Chain;

/// Indexer flags. Per-chain values also come from `TOKENQL_RPC_<CHAIN>` and
/// `TOKENQL_START_BLOCK_<CHAIN>` (chain name upper-cased, spaces as `_`, e.g. `TOKENQL_RPC_ETH`,
/// `TOKENQL_RPC_BSC_TESTNET`).
#[derive(Debug, Clone, clap::Args)]
pub struct IndexerArgs {
    /// A chain to follow and its JSON-RPC endpoint: CHAIN=URL (repeatable).
    #[arg(long = "rpc", value_name = "CHAIN=URL")]
    pub rpc: Vec<String>,
    /// First block of a chain's live index: CHAIN=BLOCK (repeatable; default: its head when first
    /// started — older history is fetched per wallet and per contract on demand).
    #[arg(long = "start-block", value_name = "CHAIN=BLOCK")]
    pub start_block: Vec<String>,
    /// Stay this many blocks behind the chain head.
    #[arg(long, env = "TOKENQL_CONFIRMATIONS", default_value_t = 0)]
    pub confirmations: u64,
    /// Deepest reorg handled; a deeper one stops the chain loudly.
    #[arg(long, env = "TOKENQL_MAX_REORG_DEPTH", default_value_t = 64)]
    pub max_reorg_depth: u64,
    /// Milliseconds between polls once caught up.
    #[arg(long, env = "TOKENQL_POLL_INTERVAL_MS", default_value_t = 1000)]
    pub poll_interval_ms: u64,
    /// The provider's largest eth_getLogs range, in blocks (default: none known; history
    /// fetches ask for whole ranges and keep a limit a refusal names; the live follower stays
    /// at or below 10,000 and adapts below on refusals).
    #[arg(long, env = "TOKENQL_MAX_LOG_RANGE")]
    pub max_log_range: Option<u64>,
    /// The provider's rate limit, in calls per second (default: none known; a refusal for rate
    /// pauses for its Retry-After and slows the calls down). A JSON-RPC batch counts its calls.
    #[arg(long, env = "TOKENQL_RPC_MAX_RPS")]
    pub rpc_max_rps: Option<u32>,
    /// History calls (and contract reads) in flight at once per chain; the live follower's
    /// calls come first and are not counted.
    #[arg(long, env = "TOKENQL_RPC_CONCURRENCY", default_value_t = 8)]
    pub rpc_concurrency: usize,
    /// Seconds before an RPC request times out.
    #[arg(long, env = "TOKENQL_RPC_TIMEOUT_SECS", default_value_t = 30)]
    pub rpc_timeout_secs: u64,
    /// History fetches (wallets, contracts) running at once per chain.
    #[arg(long, env = "TOKENQL_HISTORY_WORKERS", default_value_t = 4)]
    pub history_workers: usize,
    /// Seconds a history fetch keeps its worker before going to the back of the queue.
    #[arg(long, env = "TOKENQL_HISTORY_SLICE_SECS", default_value_t = 5)]
    pub history_slice_secs: u64,
    /// Consecutive failed attempts before a history fetch is marked failed.
    #[arg(long, env = "TOKENQL_HISTORY_ATTEMPTS", default_value_t = 5)]
    pub history_attempts: u32,
    /// Seconds a failed history fetch waits before a request schedules it again.
    #[arg(long, env = "TOKENQL_HISTORY_RETRY_SECS", default_value_t = 60)]
    pub history_retry_secs: u64,
    /// Blocks of changes the change feed keeps behind the stored head, for GraphQL
    /// subscriptions resuming from a position; 0 turns the feed off.
    #[arg(long, env = "TOKENQL_FEED_RETENTION_BLOCKS", default_value_t = 10_000)]
    pub feed_retention_blocks: u64,
    /// Milliseconds a chain's leader lease lives without renewal: one process indexes a chain,
    /// others stand by and take over this long after the leader dies (renewed every fifth).
    #[arg(long, env = "TOKENQL_LEADER_LEASE_MS", default_value_t = 5000,
          value_parser = clap::value_parser!(u64).range(250..))]
    pub leader_lease_ms: u64,
    /// Leave the transfer tables' address indexes, the ERC20 holders index and (PostgreSQL,
    /// MySQL) the kept ERC20 balances out while backfilling finalized blocks into a database
    /// that holds no other chain's transfers, and build them (sum the balances) once before
    /// nearing the head (smaller indexes, no upkeep per batch; reads during the backfill are
    /// slower, wallets' balances are summed from their transfers, and every answer says
    /// SYNCING anyway). false: keep them up row by row.
    #[arg(long, env = "TOKENQL_DEFER_BACKFILL_INDEXES", default_value_t = true, action = clap::ArgAction::Set)]
    pub defer_backfill_indexes: bool,
}

fn env_key(chain: Chain) -> String {
    chain.name().to_ascii_uppercase().replace(' ', "_")
}

impl IndexerArgs {
    /// One chain's settings from these flags.
    fn chain_config(&self, chain: Chain, url: String, start: Option<u64>) -> ChainConfig {
        let mut cfg = ChainConfig::new(chain, url);
        cfg.start_block = start;
        cfg.confirmations = self.confirmations;
        cfg.max_reorg_depth = self.max_reorg_depth;
        cfg.poll_interval = Duration::from_millis(self.poll_interval_ms.max(10));
        if let Some(limit) = self.max_log_range {
            cfg.max_range = limit;
            cfg.initial_range = cfg.initial_range.min(limit);
        }
        cfg.provider = ProviderProfile {
            max_rps: self.rpc_max_rps,
            concurrency: self.rpc_concurrency,
            max_log_range: self.max_log_range,
        };
        cfg.request_timeout = Duration::from_secs(self.rpc_timeout_secs.max(1));
        cfg.history_workers = self.history_workers;
        cfg.history_slice = Duration::from_secs(self.history_slice_secs.max(1));
        cfg.history_attempts = self.history_attempts;
        cfg.feed_retention =
            (self.feed_retention_blocks > 0).then_some(crate::store::feed::Retention {
                blocks: self.feed_retention_blocks,
            });
        cfg.history_retry_after = Duration::from_secs(self.history_retry_secs);
        cfg.defer_backfill_indexes = self.defer_backfill_indexes;
        cfg
    }

    /// The configuration, or a message naming the bad value.
    pub fn config(&self) -> Result<IndexerConfig, String> {
        let mut rpcs: Vec<(Chain, String)> = Vec::new();
        for c in Chain::all() {
            if let Ok(url) = std::env::var(format!("TOKENQL_RPC_{}", env_key(c))) {
                if !url.trim().is_empty() {
                    rpcs.push((c, url.trim().to_string()));
                }
            }
        }
        for s in &self.rpc {
            let (c, url) = parse_chain_value(s).map_err(|e| format!("--rpc: {e}"))?;
            rpcs.retain(|(x, _)| *x != c);
            rpcs.push((c, url));
        }
        let mut starts: Vec<(Chain, u64)> = Vec::new();
        for c in Chain::all() {
            if let Ok(v) = std::env::var(format!("TOKENQL_START_BLOCK_{}", env_key(c))) {
                let n = v.trim().parse().map_err(|_| {
                    format!(
                        "TOKENQL_START_BLOCK_{}: '{v}' is not a block number",
                        env_key(c)
                    )
                })?;
                starts.push((c, n));
            }
        }
        for s in &self.start_block {
            let (c, v) = parse_chain_value(s).map_err(|e| format!("--start-block: {e}"))?;
            let n = v
                .parse()
                .map_err(|_| format!("--start-block: '{v}' is not a block number"))?;
            starts.retain(|(x, _)| *x != c);
            starts.push((c, n));
        }
        if self.max_log_range == Some(0) {
            return Err("--max-log-range must be at least 1".into());
        }
        if self.rpc_max_rps == Some(0) {
            return Err("--rpc-max-rps must be at least 1".into());
        }
        if self.rpc_concurrency == 0 {
            return Err("--rpc-concurrency must be at least 1".into());
        }
        if self.history_workers == 0 {
            return Err("--history-workers must be at least 1".into());
        }
        if self.history_attempts == 0 {
            return Err("--history-attempts must be at least 1".into());
        }
        let chains = rpcs
            .into_iter()
            .map(|(chain, url)| {
                let start = starts.iter().find(|(c, _)| *c == chain).map(|(_, n)| *n);
                self.chain_config(chain, url, start)
            })
            .collect();
        Ok(IndexerConfig {
            chains,
            lease: super::config::LeaseConfig {
                ttl: Duration::from_millis(self.leader_lease_ms),
            },
        })
    }
}
