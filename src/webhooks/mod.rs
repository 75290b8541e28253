//! Webhooks compatible with Moralis Streams: streams (a webhook URL, chains, addresses,
//! transfer events) made through the management routes (`rest::streams` over [`manage`]),
//! and the delivery worker ([`worker`]) that `tokenql serve` runs, which reads the change feed
//! after each stream's stored position and posts signed Moralis bodies ([`body`]).
//!
//! - [`spec`]: the management bodies parsed into typed values, and the stream as shown;
//! - [`plan`]: a feed row's changes turned into deliveries (one per kind and block), filtered
//!   to the stream's addresses and events;
//! - [`body`]: the Moralis body and its `x-signature`; [`send`]: the HTTP post;
//! - [`worker`]: per stream, one delivery in flight, at least once, in order, with retries,
//!   the `error` state after too many failures, and a lease so one process delivers a stream.

pub mod body;
pub mod manage;
pub mod plan;
pub mod send;
pub mod spec;
pub mod worker;

use std::time::Duration;

pub use crate::query::changes::{Confirmations, DEFAULT_CONFIRMATIONS};
pub use send::Sender;
pub use worker::spawn;

use crate::query::{QueryError, QueryService};
use crate::types::Chain;

/// Settings of the delivery worker.
#[derive(Debug, Clone)]
pub struct WebhookConfig {
    /// Confirmations per chain.
    pub confirmations: Confirmations,
    /// Consecutive failed attempts before a stream goes to `error`.
    pub max_failures: u32,
    /// How long a process's lease on delivering a stream lives without renewal.
    pub lease: Duration,
    /// How often the feed and the stream list are read when nothing wakes the worker.
    pub poll: Duration,
    /// The first retry's delay; each next one doubles, up to [`WebhookConfig::retry_cap`].
    pub retry_base: Duration,
    /// The longest delay between two attempts.
    pub retry_cap: Duration,
    /// A delivery's HTTP timeout.
    pub timeout: Duration,
    /// Feed rows read at once.
    pub read_rows: u64,
}

impl Default for WebhookConfig {
    fn default() -> Self {
        Self {
            confirmations: Confirmations::default(),
            max_failures: 10,
            lease: Duration::from_secs(10),
            poll: Duration::from_millis(250),
            retry_base: Duration::from_millis(500),
            retry_cap: Duration::from_secs(30),
            timeout: Duration::from_secs(10),
            read_rows: 64,
        }
    }
}

/// The metadata of the contracts of delivery `d`.
pub(crate) async fn metadata(
    service: &QueryService,
    chain: Chain,
    d: &plan::Delivery,
) -> Result<body::Metadata, QueryError> {
    let mut contracts: Vec<_> = d
        .erc20
        .iter()
        .map(|t| t.contract)
        .chain(d.nft.iter().map(|t| t.contract))
        .collect();
    contracts.sort();
    contracts.dedup();
    if contracts.is_empty() {
        return Ok(body::Metadata::new());
    }
    service.contracts(chain, &contracts).await
}
