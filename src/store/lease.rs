//! One active indexer per chain: a lease in the `indexer_lease` table.
//!
//! A process that means to index a chain [`acquire`]s the chain's lease, [`renew`]s it well
//! within its time to live while it runs, and [`release`]s it when it stops cleanly. Another
//! process for the same chain waits as a standby, trying [`acquire`] now and then: it succeeds
//! once the lease is free or has expired (its leader died without releasing it).
//!
//! Expiry alone cannot stop a leader that is merely slow (a long pause, a network partition)
//! from writing after a standby took over, so every batch of the leader carries a [`Fence`]:
//! the write path locks the lease row inside the batch's transaction and refuses the batch when
//! another process holds it ([`check`]). A takeover's `UPDATE` waits for that lock, so the new
//! leader reads the checkpoint only after the old leader's last batch has committed or rolled
//! back: nothing is written twice from two places, and nothing is lost.
//!
//! Times are the processes' clocks (Unix milliseconds): hosts that share a chain should keep
//! their clocks synchronised (NTP) to well under the lease's time to live.

use std::sync::Arc;
use std::time::Duration;

use sea_orm::sea_query::{Expr, ExprTrait};
use sea_orm::{
    ColumnTrait, Condition, ConnectionTrait, DbErr, EntityTrait, QueryFilter, QueryOrder,
    QuerySelect,
};

use super::{now_ms, skip_existing};
use crate::entity::indexer_lease::{self, Column};
use crate::types::Chain;

/// The identity a write must hold the chain's lease under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fence {
    holder: Arc<str>,
}

impl Fence {
    /// A fence for `holder` (see [`process_holder`]).
    pub fn new(holder: &str) -> Self {
        Self {
            holder: holder.into(),
        }
    }

    /// The holder's name.
    pub fn holder(&self) -> &str {
        &self.holder
    }
}

/// A name for this process, unique across hosts and restarts: `host:pid:nonce`.
pub fn process_holder() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".to_string());
    let nonce = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let mut name = format!("{host}:{}:{nonce:08x}", std::process::id());
    name.truncate(128);
    name
}

/// A chain's lease, as `tokenql status` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseInfo {
    pub chain_id: i64,
    /// `None`: free (the last leader stopped cleanly).
    pub holder: Option<String>,
    /// Unix milliseconds.
    pub expires_at: i64,
    /// Unix milliseconds.
    pub acquired_at: i64,
    /// How many times the lease changed hands.
    pub takeovers: i64,
}

fn ms(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// Takes the chain's lease for `holder` when it is free or expired; true when `holder` now
/// holds it.
pub async fn acquire<C: ConnectionTrait>(
    db: &C,
    chain: Chain,
    holder: &Fence,
    ttl: Duration,
) -> Result<bool, DbErr> {
    let cid = chain.db_id();
    let free = indexer_lease::ActiveModel {
        chain_id: sea_orm::Set(cid),
        holder: sea_orm::Set(None),
        expires_at: sea_orm::Set(0),
        acquired_at: sea_orm::Set(0),
        takeovers: sea_orm::Set(0),
    };
    indexer_lease::Entity::insert_many([free])
        .on_conflict(skip_existing([Column::ChainId]))
        .exec_without_returning(db)
        .await?;
    let now = now_ms();
    indexer_lease::Entity::update_many()
        .col_expr(Column::Holder, Expr::value(holder.holder()))
        .col_expr(Column::ExpiresAt, Expr::value(now.saturating_add(ms(ttl))))
        .col_expr(Column::AcquiredAt, Expr::value(now))
        .col_expr(Column::Takeovers, Expr::col(Column::Takeovers).add(1))
        .filter(Column::ChainId.eq(cid))
        .filter(
            Condition::any()
                .add(Column::Holder.is_null())
                .add(Column::ExpiresAt.lt(now))
                .add(Column::Holder.eq(holder.holder())),
        )
        .exec(db)
        .await?;
    holds(db, chain, holder).await
}

/// Extends `holder`'s lease by `ttl` from now; false when it no longer holds it.
pub async fn renew<C: ConnectionTrait>(
    db: &C,
    chain: Chain,
    holder: &Fence,
    ttl: Duration,
) -> Result<bool, DbErr> {
    indexer_lease::Entity::update_many()
        .col_expr(
            Column::ExpiresAt,
            Expr::value(now_ms().saturating_add(ms(ttl))),
        )
        .filter(Column::ChainId.eq(chain.db_id()))
        .filter(Column::Holder.eq(holder.holder()))
        .exec(db)
        .await?;
    // Read back rather than trust the affected-row count (MySQL counts only changed rows).
    holds(db, chain, holder).await
}

/// Frees `holder`'s lease (a clean stop), so that a standby takes over at once.
pub async fn release<C: ConnectionTrait>(
    db: &C,
    chain: Chain,
    holder: &Fence,
) -> Result<(), DbErr> {
    indexer_lease::Entity::update_many()
        .col_expr(Column::Holder, Expr::value(Option::<String>::None))
        .col_expr(Column::ExpiresAt, Expr::value(0i64))
        .filter(Column::ChainId.eq(chain.db_id()))
        .filter(Column::Holder.eq(holder.holder()))
        .exec(db)
        .await?;
    Ok(())
}

/// Whether `holder` holds the chain's lease (expired or not: nobody took it over yet).
async fn holds<C: ConnectionTrait>(db: &C, chain: Chain, holder: &Fence) -> Result<bool, DbErr> {
    let row = indexer_lease::Entity::find_by_id(chain.db_id())
        .one(db)
        .await?;
    Ok(row.and_then(|r| r.holder).as_deref() == Some(holder.holder()))
}

/// Inside a write transaction: locks the chain's lease row and returns its holder when that is
/// not `fence` (the batch must not be written). A chain without a lease row has never been
/// led: nothing to check.
pub(crate) async fn check<C: ConnectionTrait>(
    txn: &C,
    chain: Chain,
    fence: &Fence,
) -> Result<Result<(), Option<String>>, DbErr> {
    let row = indexer_lease::Entity::find_by_id(chain.db_id())
        .lock_exclusive()
        .one(txn)
        .await?;
    Ok(match row {
        None => Ok(()),
        Some(r) if r.holder.as_deref() == Some(fence.holder()) => Ok(()),
        Some(r) => Err(r.holder),
    })
}

/// Every chain's lease.
pub async fn list<C: ConnectionTrait>(db: &C) -> Result<Vec<LeaseInfo>, DbErr> {
    let rows = indexer_lease::Entity::find()
        .order_by_asc(Column::ChainId)
        .all(db)
        .await?;
    Ok(rows
        .into_iter()
        .map(|r| LeaseInfo {
            chain_id: r.chain_id,
            holder: r.holder,
            expires_at: r.expires_at,
            acquired_at: r.acquired_at,
            takeovers: r.takeovers,
        })
        .collect())
}
