//! Indexer configuration: which chains, where their RPC endpoints are, from which block.

use std::time::Duration;

use crate::types::Chain;

use super::retry::RetryPolicy;
use super::rpc::ProviderProfile;

/// One chain to follow.
#[derive(Debug, Clone)]
pub struct ChainConfig {
    pub chain: Chain,
    pub rpc_url: String,
    /// First block of the live index; `None`: the chain head when first started (older history
    /// is fetched per wallet and per contract on demand, see [`super::history`]).
    pub start_block: Option<u64>,
    /// Stay this many blocks behind the head.
    pub confirmations: u64,
    /// Deepest reorg handled; a deeper one stops the chain.
    pub max_reorg_depth: u64,
    /// Pause between polls once caught up.
    pub poll_interval: Duration,
    /// The live follower's initial and largest `eth_getLogs` range, in blocks.
    pub initial_range: u64,
    pub max_range: u64,
    /// What is known of the provider: its rate, calls at once, block range limit.
    pub provider: ProviderProfile,
    /// Per-request timeout.
    pub request_timeout: Duration,
    pub retry: RetryPolicy,
    /// History fetches running at once on this chain.
    pub history_workers: usize,
    /// A history fetch gives its worker up after this long and goes to the back of the queue,
    /// so a scope with a long history does not hold up those queued after it.
    pub history_slice: Duration,
    /// Consecutive failed attempts before a history fetch is marked failed.
    pub history_attempts: u32,
    /// Blocks of changes kept in the change feed for subscriptions and webhooks; `None`: the
    /// follower writes no feed.
    pub feed_retention: Option<crate::store::feed::Retention>,
    /// How long a failed history fetch waits before a request may schedule it again.
    pub history_retry_after: Duration,
    /// Leave the transfer tables' address indexes, the holders index and the kept ERC20
    /// balances out while backfilling finalized blocks into a database that holds no other
    /// chain, and build them (sum the balances) once before nearing the head
    /// (`store::backfill_indexes`, `store::backfill_balances`).
    pub defer_backfill_indexes: bool,
}

impl ChainConfig {
    /// Defaults for a chain at `rpc_url`.
    pub fn new(chain: Chain, rpc_url: impl Into<String>) -> Self {
        Self {
            chain,
            rpc_url: rpc_url.into(),
            start_block: None,
            confirmations: 0,
            max_reorg_depth: 64,
            poll_interval: Duration::from_millis(1000),
            initial_range: 500,
            max_range: 10_000,
            provider: ProviderProfile {
                max_rps: None,
                concurrency: 8,
                max_log_range: None,
            },
            request_timeout: Duration::from_secs(30),
            retry: RetryPolicy::default(),
            history_workers: 4,
            history_slice: Duration::from_secs(5),
            history_attempts: 5,
            feed_retention: Some(crate::store::feed::Retention::default()),
            history_retry_after: Duration::from_secs(60),
            defer_backfill_indexes: true,
        }
    }
}

/// All chains to follow.
#[derive(Debug, Clone, Default)]
pub struct IndexerConfig {
    pub chains: Vec<ChainConfig>,
    /// The per-chain leader lease.
    pub lease: LeaseConfig,
}

/// Parses `CHAIN=VALUE` (e.g. `eth=http://127.0.0.1:8545`, `0x1=17000000`).
pub fn parse_chain_value(s: &str) -> Result<(Chain, String), String> {
    let (c, v) = s
        .split_once('=')
        .ok_or_else(|| format!("'{s}' is not CHAIN=VALUE (e.g. eth=http://127.0.0.1:8545)"))?;
    let chain = Chain::parse(c).map_err(|e| e.0)?;
    if v.trim().is_empty() {
        return Err(format!("'{s}' has an empty value"));
    }
    Ok((chain, v.trim().to_string()))
}

/// How long a lease lives without renewal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeaseConfig {
    pub ttl: Duration,
}

impl Default for LeaseConfig {
    fn default() -> Self {
        Self {
            ttl: Duration::from_secs(5),
        }
    }
}

impl LeaseConfig {
    /// How often a leader renews, and a standby tries to take over: a fifth of the time to
    /// live, so that a leader survives four failed renewals in a row.
    pub fn renew_every(&self) -> Duration {
        (self.ttl / 5).max(Duration::from_millis(50))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chain_values() {
        assert_eq!(
            parse_chain_value("eth=http://x").unwrap(),
            (Chain::ETH, "http://x".into())
        );
        assert_eq!(parse_chain_value("0x89=5").unwrap().0.name(), "polygon");
        assert!(parse_chain_value("eth").is_err());
        assert!(parse_chain_value("nope=1").is_err());
        assert!(parse_chain_value("eth=").is_err());
    }
}
