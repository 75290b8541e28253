//! Follows one chain from its start block to the head. See the module docs of
//! [`crate::indexer`] and the state machine in [`super::reorg`].

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use alloy::primitives::B256;
use sea_orm::{
    ColumnTrait, DatabaseConnection, DbErr, EntityTrait, QueryFilter, QueryOrder, QuerySelect,
};
use tokio::sync::watch;

use super::config::ChainConfig;
use super::progress::Progress;
use super::range::RangeSizer;
use super::reorg::{find_fork, Fork};
use super::retry::jitter;
use super::rpc::{Rpc, RpcFailure};
use super::IndexerError;
use crate::decode::{self, Decoded};
use crate::entity::{block, chain_state};
use crate::store::{self, rollback, Batch, Checkpoint, StoreError};
use crate::types::Chain;

/// What one step did.
enum Step {
    /// Caught up: wait for new blocks.
    Idle,
    /// Stored a range or rolled back: go on.
    Advanced,
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
            other => StepError::Rpc(RpcFailure::Transient(other.to_string())),
        }
    }
}

/// Sleeps `d` unless stopped first; returns true when stopped.
pub(crate) async fn pause(stop: &mut watch::Receiver<bool>, d: Duration) -> bool {
    if *stop.borrow() {
        return true;
    }
    tokio::select! {
        _ = tokio::time::sleep(d) => *stop.borrow(),
        _ = stop.changed() => true,
    }
}

/// State shared by the steps of one chain.
pub(crate) struct Follower {
    pub db: DatabaseConnection,
    pub cfg: ChainConfig,
    pub rpc: Rpc,
    pub start: u64,
    sizer: RangeSizer,
    progress: Progress,
}

/// Runs one chain until stopped or failed.
pub async fn run_chain(
    db: DatabaseConnection,
    cfg: ChainConfig,
    mut stop: watch::Receiver<bool>,
) -> Result<(), IndexerError> {
    let chain = cfg.chain;
    let rpc =
        Rpc::new(&cfg.rpc_url, cfg.request_timeout, cfg.retry).map_err(|e| IndexerError::Rpc {
            chain: chain.to_string(),
            message: e.to_string(),
        })?;

    // Refuse an endpoint that serves another chain; wait for one that is down.
    let (id, head) = loop {
        match async { Ok::<_, RpcFailure>((rpc.chain_id().await?, rpc.block_number().await?)) }
            .await
        {
            Ok(v) => break v,
            Err(RpcFailure::Transient(e)) => {
                tracing::warn!(%chain, error = %e, "RPC endpoint unavailable; waiting");
                if pause(&mut stop, Duration::from_secs(2)).await {
                    return Ok(());
                }
            }
            Err(e) => {
                return Err(IndexerError::Rpc {
                    chain: chain.to_string(),
                    message: e.to_string(),
                })
            }
        }
    };
    if id != chain.id() {
        return Err(IndexerError::WrongChain {
            chain: chain.to_string(),
            expected: chain.id(),
            actual: id,
        });
    }

    let start = loop {
        match init_checkpoint(&db, &cfg, head).await {
            Ok(s) => break s,
            Err(e) => {
                tracing::warn!(%chain, error = %e, "database unavailable; waiting");
                if pause(&mut stop, Duration::from_secs(2)).await {
                    return Ok(());
                }
            }
        }
    };
    tracing::info!(%chain, start, head, endpoint = %cfg.rpc_url, "following chain");

    let backfill = tokio::spawn(super::backfill::run(
        db.clone(),
        cfg.clone(),
        rpc.clone(),
        start,
        stop.clone(),
    ));
    let metadata = tokio::spawn(super::metadata::run(
        db.clone(),
        chain,
        rpc.clone(),
        stop.clone(),
    ));

    let mut f = Follower {
        sizer: RangeSizer::new(cfg.initial_range, 1, cfg.max_range),
        progress: Progress::new(chain),
        db,
        cfg,
        rpc,
        start,
    };
    let mut failures = 0u32;
    let result = loop {
        if *stop.borrow() {
            break Ok(());
        }
        match f.step().await {
            Ok(Step::Advanced) => {
                if failures > 0 {
                    tracing::info!(%chain, "ingest resumed");
                }
                failures = 0;
            }
            Ok(Step::Idle) => {
                failures = 0;
                if pause(&mut stop, f.cfg.poll_interval).await {
                    break Ok(());
                }
            }
            Err(StepError::Fatal(e)) => break Err(e),
            Err(e) => {
                failures += 1;
                if failures == 1 {
                    tracing::warn!(%chain, error = %e, "ingest paused; retrying with backoff");
                }
                let d = f.cfg.retry.delay(failures.min(10), jitter());
                if pause(&mut stop, d).await {
                    break Ok(());
                }
            }
        }
    };
    if result.is_err() {
        // The chain stopped on its own: its workers stop with it (their writes are
        // transactional, so aborting them loses nothing).
        backfill.abort();
        metadata.abort();
    }
    let _ = backfill.await;
    let _ = metadata.await;
    result
}

/// Reads the start block, writing the initial checkpoint on first start.
async fn init_checkpoint(
    db: &DatabaseConnection,
    cfg: &ChainConfig,
    head: u64,
) -> Result<u64, DbErr> {
    if let Some(s) = chain_state::Entity::find_by_id(cfg.chain.db_id())
        .one(db)
        .await?
    {
        if let Some(start) = s.start_block {
            return Ok(start.max(0) as u64);
        }
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

impl Follower {
    fn chain(&self) -> Chain {
        self.cfg.chain
    }

    async fn indexed(&self) -> Result<Option<u64>, DbErr> {
        Ok(chain_state::Entity::find_by_id(self.chain().db_id())
            .one(&self.db)
            .await?
            .and_then(|s| s.indexed_block)
            .filter(|b| *b >= 0)
            .map(|b| b as u64))
    }

    async fn stored_hash(&self, n: u64) -> Result<Option<B256>, DbErr> {
        let row = block::Entity::find_by_id((self.chain().db_id(), n as i64))
            .one(&self.db)
            .await?;
        Ok(row.and_then(|b| decode::parse_b256(&b.hash).ok()))
    }

    async fn step(&mut self) -> Result<Step, StepError> {
        let head = self.rpc.block_number().await?;
        let target = head.saturating_sub(self.cfg.confirmations);
        let indexed = self.indexed().await?;

        // Is our tip still on the chain?
        if let Some(tip) = indexed {
            if tip > head {
                return self.handle_reorg(tip, head).await;
            }
            if let Some(stored) = self.stored_hash(tip).await? {
                let now = self.rpc.headers(&[tip]).await?;
                if now.get(&tip).map(|h| h.hash) != Some(stored) {
                    return self.handle_reorg(tip, head).await;
                }
            }
        }

        let next = indexed.map_or(self.start, |i| i + 1);
        if next > target {
            self.progress.caught_up(indexed, head);
            store::set_head(&self.db, self.chain(), head).await?;
            return Ok(Step::Idle);
        }
        // Record the head before fetching: answers say SYNCING while we trail it, even when
        // the fetch below stalls or fails.
        store::set_head(&self.db, self.chain(), head).await?;

        let mut to = (next + self.sizer.size() - 1).min(target);
        let logs = loop {
            match self.rpc.transfer_logs(next, to, None).await {
                Ok(l) => break l,
                Err(RpcFailure::TooLarge { message, suggested }) => {
                    if !self.sizer.too_large(to - next + 1, suggested) {
                        return Err(RpcFailure::Transient(format!(
                            "even one block is refused: {message}"
                        ))
                        .into());
                    }
                    to = (next + self.sizer.size() - 1).min(target);
                }
                Err(e) => return Err(e.into()),
            }
        };
        self.sizer.success();

        let parsed: Vec<decode::LogRecord> = logs.iter().filter_map(|l| l.parse().ok()).collect();
        let mut need: BTreeSet<u64> = parsed.iter().map(|l| l.block_number).collect();
        need.insert(next);
        need.insert(to);
        // Keep every header near the head so that a reorg finds its fork exactly.
        let dense_from = head.saturating_sub(self.cfg.max_reorg_depth).max(next);
        if dense_from <= to {
            need.extend(dense_from..=to);
        }
        let headers = self
            .rpc
            .headers(&need.into_iter().collect::<Vec<_>>())
            .await?;

        // Does the new range continue what we stored?
        if let Some(tip) = indexed {
            if let (Some(stored), Some(first)) = (self.stored_hash(tip).await?, headers.get(&next))
            {
                if first.parent_hash != Some(stored) {
                    return self.handle_reorg(tip, head).await;
                }
            }
        }
        // Did the chain change between reading logs and headers?
        for l in &parsed {
            if headers.get(&l.block_number).map(|h| h.hash) != Some(l.block_hash) {
                return Err(RpcFailure::Transient(format!(
                    "block {} changed while reading; retrying",
                    l.block_number
                ))
                .into());
            }
        }

        let mut batch = Batch {
            blocks: headers.into_values().collect(),
            ..Default::default()
        };
        let (mut skipped, mut n_logs) = (0u64, 0u64);
        for log in logs {
            n_logs += 1;
            match log.parse().and_then(|r| decode::decode(&r)) {
                Ok(Decoded::Erc20(t)) => batch.erc20.push(t),
                Ok(Decoded::Nft(v)) => batch.nft.extend(v),
                Err(_) => skipped += 1,
            }
        }
        batch.checkpoint = Some(Checkpoint {
            start_block: self.start,
            indexed_block: Some(to),
            head_block: head,
        });
        store::write_batch(&self.db, self.chain(), &batch).await?;
        self.progress.advanced(next, to, head, n_logs, skipped);
        Ok(Step::Advanced)
    }

    /// Searching → RollingBack (or Stopped). See [`super::reorg`].
    async fn handle_reorg(&mut self, tip: u64, head: u64) -> Result<Step, StepError> {
        let chain = self.chain();
        let lowest = tip.saturating_sub(self.cfg.max_reorg_depth);
        let cid = chain.db_id();
        let mut stored: Vec<(u64, B256)> = block::Entity::find()
            .filter(block::Column::ChainId.eq(cid))
            .filter(block::Column::Number.gte(lowest.max(self.start) as i64))
            .filter(block::Column::Number.lte(tip as i64))
            .order_by_desc(block::Column::Number)
            .all(&self.db)
            .await?
            .into_iter()
            .filter_map(|b| Some((b.number as u64, decode::parse_b256(&b.hash).ok()?)))
            .collect();
        if let Some(below) = block::Entity::find()
            .filter(block::Column::ChainId.eq(cid))
            .filter(block::Column::Number.gte(self.start as i64))
            .filter(block::Column::Number.lt(lowest as i64))
            .order_by_desc(block::Column::Number)
            .limit(1)
            .one(&self.db)
            .await?
        {
            if let Ok(h) = decode::parse_b256(&below.hash) {
                stored.push((below.number as u64, h));
            }
        }
        let numbers: Vec<u64> = stored
            .iter()
            .map(|(n, _)| *n)
            .filter(|n| *n <= head)
            .collect();
        let chain_hashes: BTreeMap<u64, B256> = self
            .rpc
            .headers(&numbers)
            .await?
            .into_iter()
            .map(|(n, h)| (n, h.hash))
            .collect();
        match find_fork(&stored, &chain_hashes, lowest) {
            Fork::TooDeep => Err(StepError::Fatal(IndexerError::DeepReorg {
                chain: chain.to_string(),
                max: self.cfg.max_reorg_depth,
                at: tip,
            })),
            Fork::KeepThrough(keep) => {
                let cp = Checkpoint {
                    start_block: self.start,
                    indexed_block: keep,
                    head_block: head,
                };
                let r = rollback::rollback_to(&self.db, chain, keep, cp).await?;
                tracing::warn!(
                    %chain,
                    tip,
                    fork = keep.map_or(-1, |k| k as i64),
                    depth = tip - keep.unwrap_or(self.start.saturating_sub(1)),
                    erc20_removed = r.erc20_transfers,
                    nft_removed = r.nft_transfers,
                    "reorg: rolled back; re-ingesting"
                );
                Ok(Step::Advanced)
            }
        }
    }
}
