//! The indexer: follows each configured chain over JSON-RPC into the store.
//!
//! Per chain, three tasks share one endpoint ([`rpc::Rpc`], paced by [`pacing`] over
//! [`transport`]: the provider's rate, calls in flight, pauses it asks for, and what its
//! refusals name of its limits), started and stopped together by [`run_chain`] once the
//! chain's endpoint answers and its start block is known ([`start`]):
//! - the [`follower`] walks blocks from the start block to the head (minus the confirmation
//!   depth) with adaptive `eth_getLogs` ranges, writes each range through [`crate::store`] in one
//!   transaction with the checkpoint, and detects reorgs by block hashes ([`reorg`]);
//! - the [`history`] workers fetch, per wallet and per contract and on demand, the history
//!   before the start block, in the widest ranges the provider takes, several at once
//!   ([`plan`]); the follower asks for ranges sized by [`range`], and again with less while the
//!   provider refuses one ([`shrink`]); both decode with [`crate::decode::decode_logs`];
//! - the [`contract_reads`] worker reads contract names, symbols, decimals and standards by
//!   `eth_call`, off the ingest path.
//!
//! The follower's calls go first, then the history fetches', then the contract reads'.
//!
//! One process leads each chain: the [`leader`] holds the chain's lease in the database and runs
//! the three tasks only while it does; other processes for the chain stand by and take over
//! when the lease expires.
//!
//! Failures are explicit: transient RPC errors retry with backoff under a budget and the chain
//! pauses and resumes; a database outage pauses ingest until it returns; a chain-id mismatch or
//! a reorg deeper than the configured maximum stops that chain loudly.

pub mod cli;
pub mod config;
pub mod contract_reads;
pub mod follower;
pub mod history;
pub mod leader;
pub mod pacing;
pub mod plan;
pub mod progress;
pub mod range;
pub mod reorg;
pub mod retry;
pub mod rpc;
pub mod shrink;
mod start;
pub mod status;
pub mod transport;

pub use config::{ChainConfig, IndexerConfig};

use std::future::Future;

use sea_orm::{DatabaseConnection, DbErr};
use tokio::sync::watch;

use crate::store::lease::Fence;
use crate::store::StoreError;
use rpc::RpcFailure;

/// Why a chain stopped.
#[derive(Debug, thiserror::Error)]
pub enum IndexerError {
    #[error("chain {chain}: the RPC endpoint serves chain id {actual}, not {expected}")]
    WrongChain {
        chain: String,
        expected: u64,
        actual: u64,
    },
    #[error("chain {chain}: reorg deeper than {max} blocks below block {at}; stopping rather than corrupting data")]
    DeepReorg { chain: String, max: u64, at: u64 },
    #[error("chain {chain}: {message}")]
    Rpc { chain: String, message: String },
    /// Another process took the chain's lease over: this one stands by again.
    #[error("the chain's lease is held by {holder}")]
    LeaseLost { holder: String },
}

/// Why a step failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum StepError {
    #[error(transparent)]
    Rpc(#[from] RpcFailure),
    #[error("database: {0}")]
    Db(#[from] DbErr),
    #[error(transparent)]
    Fatal(IndexerError),
}

impl From<StoreError> for StepError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Db(d) => StepError::Db(d),
            StoreError::LeaseLost { holder } => StepError::Fatal(IndexerError::LeaseLost {
                holder: holder.unwrap_or_else(|| "nobody".to_string()),
            }),
            other => StepError::Rpc(RpcFailure::Transient(other.to_string())),
        }
    }
}

/// Runs every configured chain until `shutdown` completes or a chain fails permanently. Each
/// chain is followed only while this process holds its lease ([`leader`]); otherwise the
/// process stands by for it.
pub async fn run(
    db: DatabaseConnection,
    config: IndexerConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), IndexerError> {
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    tokio::spawn(async move {
        shutdown.await;
        let _ = stop_tx.send(true);
    });
    let fence = crate::store::lease::Fence::new(&crate::store::lease::process_holder());
    let mut tasks = tokio::task::JoinSet::new();
    for chain in config.chains {
        let (db, stop, fence) = (db.clone(), stop_rx.clone(), fence.clone());
        tasks.spawn(leader::lead(db, chain, config.lease, fence, stop));
    }
    let mut first_error = None;
    while let Some(r) = tasks.join_next().await {
        match r {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                tracing::error!(error = %e, "chain stopped");
                first_error.get_or_insert(e);
            }
            Err(e) => {
                tracing::error!(error = %e, "chain task panicked");
            }
        }
    }
    first_error.map_or(Ok(()), Err)
}

/// Runs one chain until stopped or failed. With a `fence`, every batch is written only while
/// this process holds the chain's lease. The chain's history and eth_call workers run beside
/// the follower and stop with it.
pub async fn run_chain(
    db: DatabaseConnection,
    cfg: ChainConfig,
    mut stop: watch::Receiver<bool>,
    fence: Option<Fence>,
) -> Result<(), IndexerError> {
    let chain = cfg.chain;
    let Some((rpc, head)) = start::connect(&cfg, &mut stop).await? else {
        return Ok(());
    };
    let Some(start) = start::start_block(&db, &cfg, head, &mut stop).await else {
        return Ok(());
    };
    tracing::info!(%chain, start, head, endpoint = %cfg.rpc_url, "following chain");

    // History fetches give way to the live follower, contract reads to both.
    let history = tokio::spawn(history::run(
        db.clone(),
        cfg.clone(),
        rpc.for_history(),
        start,
        stop.clone(),
    ));
    let metadata = tokio::spawn(contract_reads::run(
        db.clone(),
        chain,
        rpc.for_background(),
        stop.clone(),
    ));
    let f = follower::Follower::new(db, cfg, rpc, start, fence);
    let result = follower::follow(f, stop).await;
    if result.is_err() {
        // The chain stopped on its own: its workers stop with it (their writes are
        // transactional, so aborting them loses nothing).
        history.abort();
        metadata.abort();
    }
    let _ = history.await;
    let _ = metadata.await;
    result
}
