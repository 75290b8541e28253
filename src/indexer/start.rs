//! Where a chain starts: its RPC client and head once the endpoint answers (refusing an
//! endpoint that serves another chain), and its live start block, read from the stored
//! checkpoint or written there on first start.

use std::time::Duration;

use sea_orm::{DatabaseConnection, DbErr};
use tokio::sync::watch;

use super::config::ChainConfig;
use super::retry::pause;
use super::rpc::{Rpc, RpcFailure};
use super::IndexerError;
use crate::store::{self, Checkpoint};

/// The chain's RPC client and head, once the endpoint answers; an endpoint serving another
/// chain is refused, one that is down waited for. `None` when stopped first.
pub(super) async fn connect(
    cfg: &ChainConfig,
    stop: &mut watch::Receiver<bool>,
) -> Result<Option<(Rpc, u64)>, IndexerError> {
    let chain = cfg.chain;
    let failed = |e: &dyn std::fmt::Display| IndexerError::Rpc {
        chain: chain.to_string(),
        message: e.to_string(),
    };
    let rpc = Rpc::new(&cfg.rpc_url, cfg.request_timeout, cfg.retry)
        .map_err(|e| failed(&e))?
        .with_profile(cfg.provider);
    let (id, head) = loop {
        match async { Ok::<_, RpcFailure>((rpc.chain_id().await?, rpc.block_number().await?)) }
            .await
        {
            Ok(v) => break v,
            Err(RpcFailure::Transient(e)) => {
                tracing::warn!(%chain, error = %e, "RPC endpoint unavailable; waiting");
                if pause(stop, Duration::from_secs(2)).await {
                    return Ok(None);
                }
            }
            Err(e) => return Err(failed(&e)),
        }
    };
    if id != chain.id() {
        return Err(IndexerError::WrongChain {
            chain: chain.to_string(),
            expected: chain.id(),
            actual: id,
        });
    }
    Ok(Some((rpc, head)))
}

/// The live start block, waiting for the database while it is unavailable; `None` when
/// stopped first.
pub(super) async fn start_block(
    db: &DatabaseConnection,
    cfg: &ChainConfig,
    head: u64,
    stop: &mut watch::Receiver<bool>,
) -> Option<u64> {
    loop {
        match init_checkpoint(db, cfg, head).await {
            Ok(s) => return Some(s),
            Err(e) => {
                tracing::warn!(chain = %cfg.chain, error = %e, "database unavailable; waiting");
                if pause(stop, Duration::from_secs(2)).await {
                    return None;
                }
            }
        }
    }
}

/// Reads the start block, writing the initial checkpoint on first start.
async fn init_checkpoint(
    db: &DatabaseConnection,
    cfg: &ChainConfig,
    head: u64,
) -> Result<u64, DbErr> {
    if let Some(start) = store::chain::state(db, cfg.chain)
        .await?
        .and_then(|s| s.start_block)
    {
        return Ok(start);
    }
    let start = cfg.start_block.unwrap_or(head);
    store::set_checkpoint(
        db,
        cfg.chain,
        Checkpoint {
            start_block: start,
            indexed_block: None,
            head_block: head,
        },
    )
    .await?;
    Ok(start)
}
