//! On-demand collection backfill: the history of one contract before the live start block.
//!
//! The query service schedules a backfill by inserting a `pending` `collection_sync` row (once,
//! through the database, so the API and the indexer may run in different processes). This
//! worker claims pending rows one at a time with a conditional update (`pending` → `syncing`),
//! fetches the contract's transfer logs over `[0, start)` with adaptive ranges, writes them with
//! the row's progress (`synced_to_block`) in the same transaction, and marks it `synced`. A
//! crash resumes from the recorded progress.

use std::collections::BTreeSet;
use std::time::Duration;

use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, DatabaseConnection, DbErr, EntityTrait, QueryFilter, QueryOrder};
use tokio::sync::watch;

use super::config::ChainConfig;
use super::follower::{pause, StepError};
use super::range::RangeSizer;
use super::retry::jitter;
use super::rpc::{Rpc, RpcFailure};
use crate::decode::{self, Decoded};
use crate::entity::collection_sync;
use crate::query::status::state;
use crate::store::{self, now_ms, Batch};
use crate::types::{Address, Chain};

/// Runs the backfill worker of one chain until stopped.
pub async fn run(
    db: DatabaseConnection,
    cfg: ChainConfig,
    rpc: Rpc,
    start: u64,
    mut stop: watch::Receiver<bool>,
) {
    let chain = cfg.chain;
    // Rows left `syncing` by a crash are resumed.
    if let Err(e) = set_state(&db, chain, None, state::SYNCING, state::PENDING).await {
        tracing::warn!(%chain, error = %e, "could not reset interrupted backfills");
    }
    let mut failures = 0u32;
    loop {
        if *stop.borrow() {
            return;
        }
        match next_job(&db, chain).await {
            Ok(Some((address, from))) => {
                match backfill(&db, &cfg, &rpc, address, from, start, &mut stop).await {
                    Ok(true) => {
                        failures = 0;
                        let _ = set_state(&db, chain, Some(address), state::SYNCING, state::SYNCED)
                            .await;
                        tracing::info!(%chain, collection = %address, "collection synced");
                    }
                    Ok(false) => return,
                    Err(e) => {
                        failures += 1;
                        tracing::warn!(%chain, collection = %address, error = %e, "backfill interrupted; will resume");
                        let _ =
                            set_state(&db, chain, Some(address), state::SYNCING, state::PENDING)
                                .await;
                        if pause(&mut stop, cfg.retry.delay(failures.min(10), jitter())).await {
                            return;
                        }
                    }
                }
            }
            Ok(None) => {
                if pause(&mut stop, cfg.poll_interval.min(Duration::from_millis(500))).await {
                    return;
                }
            }
            Err(e) => {
                tracing::warn!(%chain, error = %e, "database unavailable for backfills; waiting");
                if pause(&mut stop, Duration::from_secs(2)).await {
                    return;
                }
            }
        }
    }
}

/// Moves rows from one state to another (one collection, or all of the chain's).
async fn set_state(
    db: &DatabaseConnection,
    chain: Chain,
    address: Option<Address>,
    from: &str,
    to: &str,
) -> Result<u64, DbErr> {
    let mut q = collection_sync::Entity::update_many()
        .col_expr(collection_sync::Column::State, Expr::value(to))
        .col_expr(collection_sync::Column::UpdatedAt, Expr::value(now_ms()))
        .filter(collection_sync::Column::ChainId.eq(chain.db_id()))
        .filter(collection_sync::Column::State.eq(from));
    if let Some(a) = address {
        q = q.filter(collection_sync::Column::ContractAddress.eq(a.to_string()));
    }
    Ok(q.exec(db).await?.rows_affected)
}

/// Claims the oldest pending collection: (address, first block still to fetch).
async fn next_job(db: &DatabaseConnection, chain: Chain) -> Result<Option<(Address, u64)>, DbErr> {
    let rows = collection_sync::Entity::find()
        .filter(collection_sync::Column::ChainId.eq(chain.db_id()))
        .filter(collection_sync::Column::State.eq(state::PENDING))
        .order_by_asc(collection_sync::Column::RequestedAt)
        .all(db)
        .await?;
    for row in rows {
        let Ok(address) = Address::parse(&row.contract_address) else {
            continue;
        };
        if set_state(db, chain, Some(address), state::PENDING, state::SYNCING).await? == 1 {
            let from = row.synced_to_block.map_or(0, |b| (b + 1).max(0) as u64);
            return Ok(Some((address, from)));
        }
    }
    Ok(None)
}

/// Fetches `[from, start)` for one contract. Ok(false) when stopped.
async fn backfill(
    db: &DatabaseConnection,
    cfg: &ChainConfig,
    rpc: &Rpc,
    address: Address,
    mut from: u64,
    start: u64,
    stop: &mut watch::Receiver<bool>,
) -> Result<bool, StepError> {
    let mut sizer = RangeSizer::new(cfg.max_range, 1, cfg.max_range.max(100_000));
    while from < start {
        if *stop.borrow() {
            return Ok(false);
        }
        let mut to = (from + sizer.size() - 1).min(start - 1);
        let logs = loop {
            match rpc.transfer_logs(from, to, Some(address)).await {
                Ok(l) => break l,
                Err(RpcFailure::TooLarge { message, suggested }) => {
                    if !sizer.too_large(to - from + 1, suggested) {
                        return Err(RpcFailure::Transient(format!(
                            "even one block is refused: {message}"
                        ))
                        .into());
                    }
                    to = (from + sizer.size() - 1).min(start - 1);
                }
                Err(e) => return Err(e.into()),
            }
        };
        sizer.success();
        let parsed: Vec<decode::LogRecord> = logs.iter().filter_map(|l| l.parse().ok()).collect();
        let need: BTreeSet<u64> = parsed.iter().map(|l| l.block_number).collect();
        let headers = rpc.headers(&need.into_iter().collect::<Vec<_>>()).await?;
        let mut batch = Batch {
            blocks: headers.into_values().collect(),
            ..Default::default()
        };
        for r in &parsed {
            match decode::decode(r) {
                Ok(Decoded::Erc20(t)) => batch.erc20.push(t),
                Ok(Decoded::Nft(v)) => batch.nft.extend(v),
                Err(_) => {}
            }
        }
        batch.collection_progress = Some((address, to));
        store::write_batch(db, cfg.chain, &batch).await?;
        from = to + 1;
    }
    Ok(true)
}
