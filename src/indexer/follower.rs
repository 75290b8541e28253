//! Follows one chain from its start block to the head. See the module docs of
//! [`crate::indexer`] and the state machine in [`super::reorg`].

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use alloy::primitives::B256;
use sea_orm::{DatabaseConnection, DbErr};
use tokio::sync::watch;

use super::config::ChainConfig;
use super::progress::Progress;
use super::range::{RangeSizer, Shrinking};
use super::reorg::{find_fork, Fork};
use super::retry::{jitter, pause};
use super::rpc::{Rpc, RpcFailure};
use super::shrink::fetch_shrinking;
use super::{IndexerError, StepError};
use crate::decode::{self, Erc20Move, NftMove};
use crate::store::lease::Fence;
use crate::store::{
    self, backfill_balances, backfill_indexes, rollback, Batch, BlockHeader, Checkpoint,
};
use crate::types::Chain;

/// What one step did.
enum Step {
    /// Caught up: wait for new blocks.
    Idle,
    /// Stored a range or rolled back: go on.
    Advanced,
}

/// The stored tip against the chain.
enum Tip {
    /// The tip (or the block at it) is no longer on the chain.
    Reorged(u64),
    /// Still on the chain; its stored hash, when there is one.
    Stored(Option<B256>),
}

/// Whether a range starting at `next` continues the stored tip (`tip_hash`), by its first
/// block's parent hash.
fn continues(f: &Fetched, next: u64, tip_hash: Option<B256>) -> bool {
    match (tip_hash, f.headers.get(&next)) {
        (Some(stored), Some(first)) => first.parent_hash == Some(stored),
        _ => true,
    }
}

/// State shared by the steps of one chain.
pub(crate) struct Follower {
    pub db: DatabaseConnection,
    pub cfg: ChainConfig,
    pub rpc: Rpc,
    pub start: u64,
    plan: RangePlan,
    /// The next range, fetched while the current one is written.
    ahead: Option<Ahead>,
    progress: Progress,
    /// The chain's lease every batch must hold (see [`super::leader`]).
    fence: Option<Fence>,
    /// Whether the deferrable indexes (the transfer tables' address indexes, the holders index)
    /// are left out now (`None`: not read yet).
    deferred: Option<bool>,
    /// The balances a backfill left out, summed as its batches are written (PostgreSQL, MySQL).
    sums: Option<backfill_balances::Sums>,
}

/// What the follower does with the deferrable indexes (the transfer tables' address indexes,
/// the holders index) before it writes a range ([`backfill_indexes`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Indexes {
    /// Leave them as they are.
    Keep,
    /// Drop them: a backfill begins.
    Defer,
    /// Build them: the backfill nears the head (or deferring is turned off).
    Restore,
}

/// `enabled`: the chain may defer them; `deep`: every block of the range is more than the
/// reorg depth below the target, so no rollback reaches it; `deferred`: they are left out now;
/// `fresh`: nothing of this chain is stored yet and no other chain's transfers are (read only
/// when it decides).
fn plan_indexes(enabled: bool, deep: bool, deferred: bool, fresh: bool) -> Indexes {
    match (deferred, enabled && deep) {
        (true, true) => Indexes::Keep,
        (true, false) => Indexes::Restore,
        (false, true) if fresh => Indexes::Defer,
        (false, _) => Indexes::Keep,
    }
}

/// Logs a range aims to hold. Ranges shrink to this at the density seen last (and their cap
/// grows at most ×2 a range), which bounds a batch's memory and transaction, and keeps ranges small enough
/// for the next one to be fetched while this one is written. (Providers cap a response at
/// about 10k logs anyway.)
pub const LOG_BUDGET: u64 = 20_000;

/// How many blocks the next `eth_getLogs` asks for: the provider-driven [`RangeSizer`], capped
/// by [`LOG_BUDGET`] at the log density of the last range. A session starts with one block,
/// to learn the density before asking for a wide range.
///
/// Public so that the ingest benchmark walks exactly the ranges the follower fetches.
#[derive(Debug, Clone, Copy)]
pub struct RangePlan {
    sizer: RangeSizer,
    /// Blocks the next range may span at the density seen last.
    fit: u64,
}

impl RangePlan {
    pub fn new(cfg: &ChainConfig) -> Self {
        Self {
            sizer: RangeSizer::new(cfg.initial_range, 1, cfg.max_range),
            fit: 1,
        }
    }

    /// Blocks to ask for next.
    pub fn span(&self) -> u64 {
        self.sizer.size().min(self.fit).max(1)
    }

    /// A range of `span` blocks returned `logs` logs. (A range cut short by the head says as
    /// much about the density as a full one: the cap grows from itself, not from `span`.)
    pub fn fetched(&mut self, span: u64, logs: usize) {
        self.sizer.success();
        let grow = self.fit.saturating_mul(2);
        self.fit = match logs as u64 {
            0 => grow,
            n => grow.min(LOG_BUDGET.saturating_mul(span) / n).max(1),
        };
    }
}

impl Shrinking for RangePlan {
    fn next_span(&self) -> u64 {
        self.span()
    }

    /// A refusal shrinks the provider-driven size; the density cap stays.
    fn shrink(&mut self, span: u64, suggested: Option<u64>) -> bool {
        self.sizer.too_large(span, suggested)
    }
}

/// A range fetched, checked against itself and decoded, not yet checked against the store.
struct Fetched {
    to: u64,
    /// The plan after this range.
    plan: RangePlan,
    headers: BTreeMap<u64, BlockHeader>,
    erc20: Vec<Erc20Move>,
    nft: Vec<NftMove>,
    /// A block whose logs and header disagree: the chain changed while we read it.
    changed: Option<u64>,
    logs: u64,
    skipped: u64,
}

/// A fetch running ahead of the writes (at most one); aborted when dropped.
struct Ahead {
    from: u64,
    task: tokio::task::JoinHandle<Result<Fetched, RpcFailure>>,
}

impl Drop for Ahead {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Fetches the logs of `[from, at most target]` (a span of `plan`, shrunk while the provider
/// refuses), the headers the batch needs (every block from `dense_from` on, for exact reorg
/// detection near the head), and decodes them.
async fn fetch_range(
    rpc: Rpc,
    mut plan: RangePlan,
    from: u64,
    target: u64,
    dense_from: u64,
) -> Result<Fetched, RpcFailure> {
    let (to, logs) = fetch_shrinking(&mut plan, from, target, |from, to| {
        rpc.transfer_logs(from, to, None)
    })
    .await?;
    plan.fetched(to - from + 1, logs.len());

    let n_logs = logs.len() as u64;
    let decoded = decode::decode_logs(&logs);
    drop(logs);
    let mut need: BTreeSet<u64> = decoded.blocks.iter().map(|b| b.number).collect();
    need.insert(from);
    need.insert(to);
    // Keep every header near the head so that a reorg finds its fork exactly.
    if dense_from.max(from) <= to {
        need.extend(dense_from.max(from)..=to);
    }
    let headers = rpc.headers(&need.into_iter().collect::<Vec<_>>()).await?;
    let changed = decoded
        .blocks
        .iter()
        .find(|b| headers.get(&b.number).map(|h| h.hash) != Some(b.hash))
        .map(|b| b.number);
    Ok(Fetched {
        to,
        plan,
        headers,
        erc20: decoded.erc20,
        nft: decoded.nft,
        changed,
        logs: n_logs,
        skipped: decoded.skipped.total(),
    })
}

/// Steps until stopped, backing off after failures; a fatal failure ends the chain.
pub(crate) async fn follow(
    mut f: Follower,
    mut stop: watch::Receiver<bool>,
) -> Result<(), IndexerError> {
    let chain = f.cfg.chain;
    let mut failures = 0u32;
    loop {
        if *stop.borrow() {
            return Ok(());
        }
        let wait = match f.step().await {
            Ok(Step::Advanced) => {
                if failures > 0 {
                    tracing::info!(%chain, "ingest resumed");
                }
                failures = 0;
                continue;
            }
            Ok(Step::Idle) => {
                failures = 0;
                f.cfg.poll_interval
            }
            Err(StepError::Fatal(e)) => return Err(e),
            Err(e) => {
                failures += 1;
                if failures == 1 {
                    tracing::warn!(%chain, error = %e, "ingest paused; retrying with backoff");
                }
                f.cfg.retry.delay(failures.min(10), jitter())
            }
        };
        if pause(&mut stop, wait).await {
            return Ok(());
        }
    }
}

impl Follower {
    /// The follower of `cfg`'s chain from `start`, writing under `fence` when given.
    pub(crate) fn new(
        db: DatabaseConnection,
        cfg: ChainConfig,
        rpc: Rpc,
        start: u64,
        fence: Option<Fence>,
    ) -> Self {
        Self {
            plan: RangePlan::new(&cfg),
            ahead: None,
            progress: Progress::new(cfg.chain),
            db,
            cfg,
            rpc,
            start,
            fence,
            deferred: None,
            sums: None,
        }
    }

    fn chain(&self) -> Chain {
        self.cfg.chain
    }

    async fn indexed(&self) -> Result<Option<u64>, DbErr> {
        Ok(store::chain::state(&self.db, self.chain())
            .await?
            .and_then(|s| s.indexed_block))
    }

    /// One step: check the stored tip, fetch the next range, verify it continues the stored
    /// chain, write it. A tip or range that no longer matches the chain starts a reorg.
    async fn step(&mut self) -> Result<Step, StepError> {
        let head = self.rpc.block_number().await?;
        let target = head.saturating_sub(self.cfg.confirmations);
        let indexed = self.indexed().await?;
        let tip_hash = match self.check_tip(indexed, head).await? {
            Tip::Reorged(tip) => return self.handle_reorg(tip, head).await,
            Tip::Stored(hash) => hash,
        };
        let next = indexed.map_or(self.start, |i| i + 1);
        if next > target {
            if self.deferred_now().await? {
                self.set_indexes(Indexes::Restore).await?;
            }
            self.progress.caught_up(indexed, head);
            store::set_head(&self.db, self.chain(), head).await?;
            return Ok(Step::Idle);
        }
        // Record the head before fetching: answers say SYNCING while we trail it, even when
        // the fetch below stalls or fails.
        store::set_head(&self.db, self.chain(), head).await?;

        let dense_from = head.saturating_sub(self.cfg.max_reorg_depth);
        let waited = Instant::now();
        let mut f = self.fetch(next, target, dense_from).await?;
        let waited = waited.elapsed();
        if let (Some(tip), false) = (indexed, continues(&f, next, tip_hash)) {
            return self.handle_reorg(tip, head).await;
        }
        self.complete(&mut f, next, dense_from).await?;
        // Fetch the next range while this one is written.
        if f.to < target {
            self.fetch_ahead(f.to + 1, target, dense_from);
        }
        self.prepare_indexes(indexed, f.to, target).await?;
        self.write(f, next, head, waited).await
    }

    /// Leaves the deferrable indexes out, or builds them, as [`plan_indexes`] says for a range
    /// ending at `to` while following up to `target`.
    async fn prepare_indexes(
        &mut self,
        indexed: Option<u64>,
        to: u64,
        target: u64,
    ) -> Result<(), StepError> {
        let deferred = self.deferred_now().await?;
        let enabled = self.cfg.defer_backfill_indexes;
        let deep = to.saturating_add(self.cfg.max_reorg_depth) < target;
        let may_begin = enabled && deep && !deferred && indexed.is_none();
        let fresh =
            may_begin && backfill_indexes::only_chain(&self.db, self.chain().db_id()).await?;
        let plan = plan_indexes(enabled, deep, deferred, fresh);
        self.set_indexes(plan).await
    }

    /// Whether the deferrable indexes are left out now: read from the catalog once per
    /// follower (a restart, a new leader), then kept as this follower changes it.
    async fn deferred_now(&mut self) -> Result<bool, DbErr> {
        if let Some(d) = self.deferred {
            return Ok(d);
        }
        let d = !backfill_indexes::missing(&self.db).await?.is_empty()
            || backfill_balances::pending(&self.db, self.chain().db_id()).await?;
        self.deferred = Some(d);
        Ok(d)
    }

    /// Carries out `plan`.
    async fn set_indexes(&mut self, plan: Indexes) -> Result<(), StepError> {
        let chain = self.chain();
        match plan {
            Indexes::Keep => {}
            Indexes::Defer => {
                let deferral = backfill_balances::defer(&self.db, chain).await?;
                let balances = deferral.left_out;
                self.sums = deferral.sums;
                let dropped = backfill_indexes::defer(&self.db).await?;
                tracing::info!(
                    %chain,
                    dropped,
                    balances,
                    "backfill: address and holders indexes (and kept balances) left out until near the head"
                );
                self.deferred = Some(true);
            }
            Indexes::Restore => {
                let started = Instant::now();
                let (mut built, sums) =
                    backfill_balances::rebuild_beside_indexes(&self.db, chain, self.sums.take())
                        .await?;
                if let Some(sums) = sums {
                    tracing::info!(
                        %chain,
                        transfers = sums.transfers,
                        pairs = sums.pairs,
                        seconds = started.elapsed().as_secs_f64(),
                        "backfill: balances summed"
                    );
                }
                built += backfill_indexes::restore(&self.db).await?;
                tracing::info!(
                    %chain,
                    built,
                    seconds = started.elapsed().as_secs_f64(),
                    "backfill: address and holders indexes built"
                );
                self.deferred = Some(false);
            }
        }
        Ok(())
    }

    /// Whether the stored tip is still on the chain (and its hash, when stored).
    async fn check_tip(&self, indexed: Option<u64>, head: u64) -> Result<Tip, StepError> {
        let Some(tip) = indexed else {
            return Ok(Tip::Stored(None));
        };
        if tip > head {
            return Ok(Tip::Reorged(tip));
        }
        let stored = store::chain::block_hash(&self.db, self.chain(), tip).await?;
        if let Some(stored) = stored {
            let now = self.rpc.headers(&[tip]).await?;
            if now.get(&tip).map(|h| h.hash) != Some(stored) {
                return Ok(Tip::Reorged(tip));
            }
        }
        Ok(Tip::Stored(stored))
    }

    /// The range from `next`: the one fetched ahead if it starts there (and the head has not
    /// moved back below it), else fetched now.
    async fn fetch(
        &mut self,
        next: u64,
        target: u64,
        dense_from: u64,
    ) -> Result<Fetched, StepError> {
        let ahead = match self.ahead.take() {
            Some(mut a) if a.from == next => {
                let r = (&mut a.task)
                    .await
                    .map_err(|e| RpcFailure::Transient(format!("fetch task: {e}")))?;
                Some(r?).filter(|f| f.to <= target)
            }
            _ => None,
        };
        let f = match ahead {
            Some(f) => f,
            None => fetch_range(self.rpc.clone(), self.plan, next, target, dense_from).await?,
        };
        self.plan = f.plan;
        Ok(f)
    }

    /// Refuses a range the chain changed under while it was read, and adds the headers a range
    /// fetched ahead (with an older head) lacks near the head.
    async fn complete(&self, f: &mut Fetched, next: u64, dense_from: u64) -> Result<(), StepError> {
        if let Some(b) = f.changed {
            return Err(RpcFailure::Transient(format!(
                "block {b} changed while reading; retrying"
            ))
            .into());
        }
        let missing: Vec<u64> = (dense_from.max(next)..=f.to)
            .filter(|n| !f.headers.contains_key(n))
            .collect();
        if !missing.is_empty() {
            f.headers.extend(self.rpc.headers(&missing).await?);
        }
        Ok(())
    }

    /// Starts fetching the range from `from` in the background.
    fn fetch_ahead(&mut self, from: u64, target: u64, dense_from: u64) {
        self.ahead = Some(Ahead {
            from,
            task: tokio::spawn(fetch_range(
                self.rpc.clone(),
                self.plan,
                from,
                target,
                dense_from,
            )),
        });
    }

    /// Writes the range with its checkpoint, in one batch.
    async fn write(
        &mut self,
        f: Fetched,
        next: u64,
        head: u64,
        waited: Duration,
    ) -> Result<Step, StepError> {
        let to = f.to;
        let batch = Batch {
            blocks: f.headers.into_values().collect(),
            erc20: f.erc20,
            nft: f.nft,
            checkpoint: Some(Checkpoint {
                start_block: self.start,
                indexed_block: Some(to),
                head_block: head,
            }),
            fence: self.fence.clone(),
            feed: self.cfg.feed_retention,
            map_file: self.deferred == Some(true),
            ..Default::default()
        };
        let writing = Instant::now();
        store::write_batch_summing(&self.db, self.chain(), &batch, &mut self.sums).await?;
        // Which side is the bottleneck: waiting for the fetch, or writing?
        tracing::debug!(
            chain = %self.chain(),
            from = next,
            to,
            logs = f.logs,
            fetch_wait_ms = waited.as_millis() as u64,
            write_ms = writing.elapsed().as_millis() as u64,
            "range stored"
        );
        self.progress.advanced(next, to, head, f.logs, f.skipped);
        Ok(Step::Advanced)
    }

    /// Searching → RollingBack (or Stopped). See [`super::reorg`].
    async fn handle_reorg(&mut self, tip: u64, head: u64) -> Result<Step, StepError> {
        self.ahead = None;
        // A rollback looks balances' last blocks up by address.
        if self.deferred_now().await? {
            self.set_indexes(Indexes::Restore).await?;
        }
        let chain = self.chain();
        let lowest = tip.saturating_sub(self.cfg.max_reorg_depth);
        let mut stored =
            store::chain::block_hashes(&self.db, chain, lowest.max(self.start), tip).await?;
        if let Some(below) =
            store::chain::last_block_below(&self.db, chain, self.start, lowest).await?
        {
            stored.push(below);
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
                let r = rollback::rollback_to(
                    &self.db,
                    chain,
                    keep,
                    cp,
                    self.fence.as_ref(),
                    self.cfg.feed_retention.is_some(),
                )
                .await?;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(initial: u64, max: u64) -> RangePlan {
        let mut cfg = ChainConfig::new(Chain::ETH, "http://x");
        cfg.initial_range = initial;
        cfg.max_range = max;
        RangePlan::new(&cfg)
    }

    #[test]
    fn indexes_are_deferred_only_for_a_fresh_deep_backfill_and_built_before_the_head() {
        use Indexes::*;
        // (enabled, deep, deferred, fresh) -> plan
        let cases = [
            ((true, true, false, true), Defer),
            ((true, true, false, false), Keep), // other rows stored: keep them up
            ((true, false, false, true), Keep), // near the head from the start
            ((false, true, false, true), Keep), // turned off
            ((true, true, true, false), Keep),  // a deferred backfill goes on (a restart)
            ((true, false, true, false), Restore), // it nears the head
            ((false, true, true, false), Restore), // turned off meanwhile
        ];
        for ((enabled, deep, deferred, fresh), want) in cases {
            assert_eq!(
                plan_indexes(enabled, deep, deferred, fresh),
                want,
                "enabled {enabled}, deep {deep}, deferred {deferred}, fresh {fresh}"
            );
        }
    }

    #[test]
    fn starts_with_one_block_and_doubles_over_empty_ranges() {
        let mut p = plan(500, 500);
        let mut spans = vec![];
        for _ in 0..11 {
            spans.push(p.span());
            p.fetched(p.span(), 0);
        }
        assert_eq!(spans, [1, 2, 4, 8, 16, 32, 64, 128, 256, 500, 500]);
    }

    #[test]
    fn dense_ranges_hold_about_the_budget() {
        let mut p = plan(500, 10_000);
        p.fetched(1, 10_000); // 10k logs a block
        assert_eq!(p.span(), 2);
        p.fetched(2, 20_000);
        assert_eq!(p.span(), 2);
        p.fetched(2, 100_000); // denser still: one block at least
        assert_eq!(p.span(), 1);
        for _ in 0..3 {
            p.fetched(1, 100); // sparse again: the cap doubles a range
        }
        assert_eq!(p.span(), 8);
    }

    #[test]
    fn a_range_cut_short_by_the_head_does_not_shrink_the_next() {
        let mut p = plan(5, 5);
        for _ in 0..5 {
            p.fetched(p.span(), 0);
        }
        assert_eq!(p.span(), 5);
        for _ in 0..10 {
            p.fetched(1, 0); // following the head block by block
        }
        assert_eq!(p.span(), 5);
    }

    #[test]
    fn provider_refusals_still_shrink_the_range() {
        let mut p = plan(500, 500);
        for _ in 0..12 {
            p.fetched(p.span(), 0);
        }
        assert_eq!(p.span(), 500);
        assert!(p.shrink(500, Some(50)));
        assert_eq!(p.span(), 50);
        let mut one = plan(1, 1);
        assert!(!one.shrink(1, None));
    }
}
