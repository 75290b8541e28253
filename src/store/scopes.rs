//! The state of every history fetch (table `scope_sync`), kept in the database so that any
//! number of API and indexer processes agree on it.
//!
//! A scope's life: a request (or `tokenql sync`) [`schedule`]s it `pending`, once — the row is
//! inserted with `ON CONFLICT DO NOTHING`, so concurrent first requests in one process or many
//! schedule one fetch. A history worker [`claim`]s it (`syncing`, with a lease) by a conditional
//! update, so two workers never fetch the same scope. Each stored range advances
//! `synced_to_block` in the transaction that stores its transfers ([`record_progress`], called
//! by the write path). A worker that used its time slice puts the scope back at the end of the
//! queue ([`release`]); one that is done marks it `synced` ([`finish`]); one that failed
//! [`fail`]s it: back to the queue after a delay, or `failed` for good with its reason, which a
//! later request re-schedules once `retry_at` has passed.

use std::time::Duration;

use sea_orm::sea_query::{Expr, ExprTrait};
use sea_orm::{
    ColumnTrait, Condition, ConnectionTrait, DbErr, EntityTrait, QueryFilter, QueryOrder,
    QuerySelect,
};

use super::now_ms;
use crate::entity::scope_sync::{self, Column as S};
use crate::types::{Chain, Scope, ScopeKind, ScopeState};

/// How long a claimed scope stays claimed without progress before another worker may take it
/// (each stored range renews it).
pub const LEASE: Duration = Duration::from_secs(120);

/// A scope's stored state, as the query service and `tokenql status` read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScopeRow {
    pub scope: Scope,
    pub state: ScopeState,
    /// Unix milliseconds.
    pub requested_at: i64,
    /// Unix milliseconds.
    pub updated_at: i64,
    /// History is fetched over `[0, target_block)`; `None` until a worker first claims it.
    pub target_block: Option<u64>,
    /// History stored through this block.
    pub synced_to_block: Option<u64>,
    /// Logs fetched so far.
    pub logs: u64,
    /// Consecutive failed attempts.
    pub attempts: u32,
    pub error: Option<String>,
    /// Unix milliseconds: a `failed` scope may be scheduled again from then on.
    pub retry_at: Option<i64>,
}

/// A scope claimed by a worker: fetch `[from, target)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Job {
    pub scope: Scope,
    /// First block still to fetch.
    pub from: u64,
}

/// What a write batch records about a history fetch: its scope's history is stored through
/// `through`, and the batch held `logs` of its logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    pub scope: Scope,
    pub through: u64,
    pub logs: u64,
}

fn key(chain: Chain, scope: Scope) -> Condition {
    Condition::all()
        .add(S::ChainId.eq(chain.db_id()))
        .add(S::Scope.eq(scope.kind.as_str()))
        .add(S::Address.eq(scope.address))
}

fn row(m: scope_sync::Model) -> Option<ScopeRow> {
    let block = |b: Option<i64>| b.and_then(|b| u64::try_from(b).ok());
    Some(ScopeRow {
        scope: Scope {
            kind: ScopeKind::parse(&m.scope).ok()?,
            address: m.address,
        },
        state: ScopeState::from_db(&m.state),
        requested_at: m.requested_at,
        updated_at: m.updated_at,
        target_block: block(m.target_block),
        synced_to_block: block(m.synced_to_block),
        logs: u64::try_from(m.logs).unwrap_or(0),
        attempts: u32::try_from(m.attempts).unwrap_or(0),
        error: m.error,
        retry_at: m.retry_at,
    })
}

/// The stored rows of these scopes (scopes never asked for have none).
pub async fn read<C: ConnectionTrait>(
    db: &C,
    chain: Chain,
    scopes: &[Scope],
) -> Result<Vec<ScopeRow>, DbErr> {
    if scopes.is_empty() {
        return Ok(Vec::new());
    }
    let addresses: Vec<crate::types::Address> = scopes.iter().map(|s| s.address).collect();
    let rows = scope_sync::Entity::find()
        .filter(S::ChainId.eq(chain.db_id()))
        .filter(S::Address.is_in(super::lists::padded(addresses)))
        .all(db)
        .await?;
    Ok(rows
        .into_iter()
        .filter_map(row)
        .filter(|r| scopes.contains(&r.scope))
        .collect())
}

/// Every scope of every chain, oldest request first (for `tokenql status`).
pub async fn list<C: ConnectionTrait>(db: &C) -> Result<Vec<(Chain, ScopeRow)>, DbErr> {
    let rows = scope_sync::Entity::find()
        .order_by_asc(S::ChainId)
        .order_by_asc(S::RequestedAt)
        .order_by_asc(S::Address)
        .all(db)
        .await?;
    Ok(rows
        .into_iter()
        .filter_map(|m| Some((Chain::from_id(u64::try_from(m.chain_id).ok()?)?, row(m)?)))
        .collect())
}

/// Signalled each time this process queues a scope, so that the history fetches of the same
/// process start at once instead of at their next look at the queue (other processes see the
/// row at theirs).
pub fn queued_here() -> &'static tokio::sync::Notify {
    static QUEUED: std::sync::OnceLock<tokio::sync::Notify> = std::sync::OnceLock::new();
    QUEUED.get_or_init(tokio::sync::Notify::new)
}

/// Schedules the history fetch of these scopes: new ones become `pending` (once, however many
/// callers race), and `failed` ones whose back-off has passed are queued again. Returns how
/// many were newly queued or re-queued.
pub async fn schedule<C: ConnectionTrait>(
    db: &C,
    chain: Chain,
    scopes: &[Scope],
) -> Result<u64, DbErr> {
    if scopes.is_empty() {
        return Ok(0);
    }
    let now = now_ms();
    let rows = scopes.iter().map(|s| {
        scope_sync::ActiveModel::from(scope_sync::Model {
            chain_id: chain.db_id(),
            scope: s.kind.as_str().into(),
            address: s.address,
            state: ScopeState::Pending.as_str().into(),
            requested_at: now,
            updated_at: now,
            queued_at: now,
            target_block: None,
            synced_to_block: None,
            logs: 0,
            attempts: 0,
            error: None,
            retry_at: None,
            lease_until: None,
        })
    });
    let inserted = scope_sync::Entity::insert_many(rows)
        .on_conflict(super::skip_existing([S::ChainId, S::Scope, S::Address]))
        .exec_without_returning(db)
        .await?;
    let mut retried = 0;
    for s in scopes {
        retried += scope_sync::Entity::update_many()
            .col_expr(S::State, Expr::value(ScopeState::Pending.as_str()))
            .col_expr(S::QueuedAt, Expr::value(now))
            .col_expr(S::UpdatedAt, Expr::value(now))
            .col_expr(S::Attempts, Expr::value(0))
            .filter(key(chain, *s))
            .filter(S::State.eq(ScopeState::Failed.as_str()))
            .filter(S::RetryAt.lte(now))
            .exec(db)
            .await?
            .rows_affected;
    }
    // MySQL counts a skipped duplicate as 0 rows, SQLite and PostgreSQL likewise.
    if inserted + retried > 0 {
        queued_here().notify_waiters();
    }
    Ok(inserted + retried)
}

/// Claims the scope that has waited longest (a `pending` one whose turn has come, or a
/// `syncing` one whose lease ran out), marking it `syncing` with a lease of `lease` and its
/// target block.
pub async fn claim<C: ConnectionTrait>(
    db: &C,
    chain: Chain,
    target: u64,
    lease: Duration,
) -> Result<Option<Job>, DbErr> {
    let now = now_ms();
    let claimable = || claimable(now);
    let candidates = scope_sync::Entity::find()
        .filter(S::ChainId.eq(chain.db_id()))
        .filter(claimable())
        .order_by_asc(S::QueuedAt)
        .limit(16)
        .all(db)
        .await?;
    for m in candidates {
        let Some(r) = row(m) else { continue };
        let won = scope_sync::Entity::update_many()
            .col_expr(S::State, Expr::value(ScopeState::Syncing.as_str()))
            .col_expr(S::LeaseUntil, Expr::value(now + lease.as_millis() as i64))
            .col_expr(S::TargetBlock, Expr::value(target as i64))
            .col_expr(S::UpdatedAt, Expr::value(now))
            .filter(key(chain, r.scope))
            .filter(claimable())
            .exec(db)
            .await?
            .rows_affected;
        if won == 1 {
            return Ok(Some(Job {
                scope: r.scope,
                from: r.synced_to_block.map_or(0, |b| b + 1),
            }));
        }
    }
    Ok(None)
}

/// Whether a scope of the chain is waiting for a worker (queued and due, or its lease ran
/// out): a worker whose slice is used up yields only then.
pub async fn any_waiting<C: ConnectionTrait>(db: &C, chain: Chain) -> Result<bool, DbErr> {
    let now = now_ms();
    Ok(scope_sync::Entity::find()
        .filter(S::ChainId.eq(chain.db_id()))
        .filter(claimable(now))
        .one(db)
        .await?
        .is_some())
}

/// Scopes a worker may claim at `now`.
fn claimable(now: i64) -> Condition {
    Condition::any()
        .add(
            Condition::all()
                .add(S::State.eq(ScopeState::Pending.as_str()))
                .add(S::QueuedAt.lte(now)),
        )
        .add(
            Condition::all()
                .add(S::State.eq(ScopeState::Syncing.as_str()))
                .add(S::LeaseUntil.lt(now)),
        )
}

/// Records a stored range of a history fetch, in the transaction that stored it; renews the
/// lease and clears the count of consecutive failures. Progress only moves forward.
pub async fn record_progress<C: ConnectionTrait>(
    db: &C,
    chain: Chain,
    p: Progress,
) -> Result<(), DbErr> {
    let lease = LEASE;
    let now = now_ms();
    scope_sync::Entity::update_many()
        .col_expr(S::SyncedToBlock, Expr::value(p.through as i64))
        .col_expr(S::Logs, Expr::col(S::Logs).add(p.logs as i64))
        .col_expr(S::Attempts, Expr::value(0))
        .col_expr(S::LeaseUntil, Expr::value(now + lease.as_millis() as i64))
        .col_expr(S::UpdatedAt, Expr::value(now))
        .filter(key(chain, p.scope))
        .filter(
            Condition::any()
                .add(S::SyncedToBlock.is_null())
                .add(S::SyncedToBlock.lt(p.through as i64)),
        )
        .exec(db)
        .await?;
    Ok(())
}

/// Marks a claimed scope complete.
pub async fn finish<C: ConnectionTrait>(db: &C, chain: Chain, scope: Scope) -> Result<(), DbErr> {
    scope_sync::Entity::update_many()
        .col_expr(S::State, Expr::value(ScopeState::Synced.as_str()))
        .col_expr(S::Error, Expr::value(Option::<String>::None))
        .col_expr(S::Attempts, Expr::value(0))
        .col_expr(S::LeaseUntil, Expr::value(Option::<i64>::None))
        .col_expr(S::UpdatedAt, Expr::value(now_ms()))
        .filter(key(chain, scope))
        .exec(db)
        .await?;
    Ok(())
}

/// Puts a claimed scope back at the end of the queue (its slice is used up, or the worker
/// stops).
pub async fn release<C: ConnectionTrait>(db: &C, chain: Chain, scope: Scope) -> Result<(), DbErr> {
    let now = now_ms();
    scope_sync::Entity::update_many()
        .col_expr(S::State, Expr::value(ScopeState::Pending.as_str()))
        .col_expr(S::QueuedAt, Expr::value(now))
        .col_expr(S::UpdatedAt, Expr::value(now))
        .col_expr(S::LeaseUntil, Expr::value(Option::<i64>::None))
        .filter(key(chain, scope))
        .filter(S::State.eq(ScopeState::Syncing.as_str()))
        .exec(db)
        .await?;
    Ok(())
}

/// Every `syncing` scope of the chain back to `pending` (at a worker's start: a crash left
/// them claimed).
pub async fn release_all<C: ConnectionTrait>(db: &C, chain: Chain) -> Result<u64, DbErr> {
    Ok(scope_sync::Entity::update_many()
        .col_expr(S::State, Expr::value(ScopeState::Pending.as_str()))
        .col_expr(S::UpdatedAt, Expr::value(now_ms()))
        .col_expr(S::LeaseUntil, Expr::value(Option::<i64>::None))
        .filter(S::ChainId.eq(chain.db_id()))
        .filter(S::State.eq(ScopeState::Syncing.as_str()))
        .exec(db)
        .await?
        .rows_affected)
}

/// How a failed attempt is recorded.
#[derive(Debug, Clone, Copy)]
pub enum Failure {
    /// Queue it again, not before `after`.
    Retry { after: Duration },
    /// Failed for good; a request may re-schedule it after `retry_after`.
    Give { retry_after: Duration },
}

/// Records a failed attempt of a claimed scope, with its reason.
pub async fn fail<C: ConnectionTrait>(
    db: &C,
    chain: Chain,
    scope: Scope,
    error: &str,
    failure: Failure,
) -> Result<(), DbErr> {
    let now = now_ms();
    let error: String = error.chars().take(500).collect();
    let q = scope_sync::Entity::update_many()
        .col_expr(S::Attempts, Expr::col(S::Attempts).add(1))
        .col_expr(S::Error, Expr::value(error))
        .col_expr(S::UpdatedAt, Expr::value(now))
        .col_expr(S::LeaseUntil, Expr::value(Option::<i64>::None))
        .filter(key(chain, scope))
        .filter(S::State.eq(ScopeState::Syncing.as_str()));
    let q = match failure {
        Failure::Retry { after } => q
            .col_expr(S::State, Expr::value(ScopeState::Pending.as_str()))
            .col_expr(S::QueuedAt, Expr::value(now + after.as_millis() as i64)),
        Failure::Give { retry_after } => q
            .col_expr(S::State, Expr::value(ScopeState::Failed.as_str()))
            .col_expr(
                S::RetryAt,
                Expr::value(now + retry_after.as_millis() as i64),
            ),
    };
    q.exec(db).await?;
    Ok(())
}
