//! One active indexer per chain: the chain's follower runs only while this process holds the
//! chain's lease ([`crate::store::lease`]); otherwise the process waits as a standby.
//!
//! A standby tries to take the lease every [`LeaseConfig::renew_every`]; a leader renews it as
//! often, and stops following (its batches would be refused anyway) when it finds the lease
//! lost or cannot renew it before it expires. A leader that stops cleanly releases the lease,
//! so a standby takes over at once; one that dies leaves it to expire (`--leader-lease-ms`).

use std::time::Instant;

use sea_orm::DatabaseConnection;
use tokio::sync::watch;

use super::config::{ChainConfig, LeaseConfig};
use super::retry::pause;
use super::run_chain;
use super::IndexerError;
use crate::store::lease::{self, Fence};
use crate::telemetry::metrics as m;
use crate::types::Chain;

/// Leads `cfg.chain` whenever this process holds its lease, until `stop`.
pub async fn lead(
    db: DatabaseConnection,
    cfg: ChainConfig,
    lease_cfg: LeaseConfig,
    fence: Fence,
    mut stop: watch::Receiver<bool>,
) -> Result<(), IndexerError> {
    let chain = cfg.chain;
    loop {
        if !standby(&db, chain, lease_cfg, &fence, &mut stop).await {
            return Ok(());
        }
        tracing::info!(%chain, holder = fence.holder(), "leading the chain");
        m::set_leader(chain, true);
        let (term_tx, term_rx) = watch::channel(false);
        let keeper = tokio::spawn(keep(
            db.clone(),
            chain,
            lease_cfg,
            fence.clone(),
            stop.clone(),
            term_tx,
        ));
        let result = run_chain(db.clone(), cfg.clone(), term_rx, Some(fence.clone())).await;
        keeper.abort();
        m::set_leader(chain, false);
        let stopping = *stop.borrow();
        match result {
            Err(IndexerError::LeaseLost { .. }) => {}
            Ok(()) if !stopping => {}
            other => {
                if let Err(e) = lease::release(&db, chain, &fence).await {
                    tracing::warn!(%chain, error = %e, "could not release the chain's lease; it expires on its own");
                }
                return other;
            }
        }
        tracing::warn!(%chain, "lost the chain's lease; standing by");
    }
}

/// Waits until this process holds the lease (true) or `stop` (false).
async fn standby(
    db: &DatabaseConnection,
    chain: Chain,
    lease_cfg: LeaseConfig,
    fence: &Fence,
    stop: &mut watch::Receiver<bool>,
) -> bool {
    let mut announced = false;
    loop {
        if *stop.borrow() {
            return false;
        }
        match lease::acquire(db, chain, fence, lease_cfg.ttl).await {
            Ok(true) => return true,
            Ok(false) if !announced => {
                tracing::info!(%chain, "another process leads the chain; standing by");
                announced = true;
            }
            Ok(false) => {}
            Err(e) => {
                tracing::warn!(%chain, error = %e, "database unavailable for the lease; waiting")
            }
        }
        if pause(stop, lease_cfg.renew_every()).await {
            return false;
        }
    }
}

/// Renews the lease while leading; ends the term (`term`) on `stop`, when the lease is found
/// taken, or when it could not be renewed before it would expire.
async fn keep(
    db: DatabaseConnection,
    chain: Chain,
    lease_cfg: LeaseConfig,
    fence: Fence,
    mut stop: watch::Receiver<bool>,
    term: watch::Sender<bool>,
) {
    let mut renewed = Instant::now();
    loop {
        if pause(&mut stop, lease_cfg.renew_every()).await {
            break;
        }
        match lease::renew(&db, chain, &fence, lease_cfg.ttl).await {
            Ok(true) => renewed = Instant::now(),
            Ok(false) => {
                tracing::warn!(%chain, "the chain's lease was taken over");
                break;
            }
            Err(e) if renewed.elapsed() + lease_cfg.renew_every() >= lease_cfg.ttl => {
                tracing::warn!(%chain, error = %e, "could not renew the chain's lease in time");
                break;
            }
            Err(e) => {
                tracing::warn!(%chain, error = %e, "could not renew the chain's lease; retrying")
            }
        }
    }
    let _ = term.send(true);
}
