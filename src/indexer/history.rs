//! History on demand: the transfers of one wallet or one contract before the live start block.
//!
//! The query service (or `tokenql sync`) schedules a scope by inserting a `pending` row in
//! `scope_sync` ([`store::scopes`]), once, through the database, so the API and the indexer
//! may run in different processes. Per chain, `history_workers` slots claim scopes oldest
//! first. A slot fetches `[from, start)` in the widest `eth_getLogs` ranges the provider takes,
//! several at once ([`super::plan`]) — a contract's logs by `address`, a wallet's by topic
//! ([`Rpc::wallet_logs`]) — and writes each range, in order, with the
//! scope's progress in one transaction through the one write path, so a crash resumes from the
//! last stored range and a transfer fetched by several scopes and the live follower is stored
//! once. After `history_slice` a slot puts its scope back at the end of the queue (fairness: a
//! token with millions of transfers does not hold up the wallets queued after it). Failures
//! retry with back-off; after `history_attempts` consecutive ones (or at once for a permanent
//! RPC error) the scope is `failed` with its reason until a request re-schedules it.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use sea_orm::DatabaseConnection;
use tokio::sync::watch;

use super::config::ChainConfig;
use super::plan::Plan;
use super::retry::jitter;
use super::retry::pause;
use super::rpc::{Rpc, RpcFailure};
use super::StepError;
use crate::decode::{self, RpcLog, Skipped};
use crate::store::scopes::{self, Failure, Job, Progress};
use crate::store::{self, Batch, BlockHeader};
use crate::telemetry::metrics::{HISTORY_ACTIVE, HISTORY_LOGS, HISTORY_SCOPES, HISTORY_SKIPPED};
use crate::types::{Address, Chain, Scope, ScopeKind, ScopeState};

pub use crate::store::scopes::schedule;

/// How a slot's turn with a scope ended.
enum Turn {
    /// The whole history is stored.
    Done,
    /// The slice is used up: back to the queue.
    Yield,
    /// The indexer is stopping.
    Stopped,
}

/// Runs the history slots of one chain until stopped. `start` is the live start block.
pub async fn run(
    db: DatabaseConnection,
    cfg: ChainConfig,
    rpc: Rpc,
    start: u64,
    stop: watch::Receiver<bool>,
) {
    let chain = cfg.chain;
    // Scopes a crash left claimed are queued again.
    match scopes::release_all(&db, chain).await {
        Ok(0) => {}
        Ok(n) => tracing::info!(%chain, scopes = n, "resuming interrupted history fetches"),
        Err(e) => {
            tracing::warn!(%chain, error = %e, "could not resume interrupted history fetches")
        }
    }
    // A `JoinSet`: when the chain stops on its own and aborts this task, dropping the set
    // aborts the slots with it (spawned tasks would outlive it and go on fetching).
    let mut slots = tokio::task::JoinSet::new();
    for _ in 0..cfg.history_workers.max(1) {
        let (db, cfg, rpc, stop) = (db.clone(), cfg.clone(), rpc.clone(), stop.clone());
        slots.spawn(async move { slot(db, cfg, rpc, start, stop).await });
    }
    while slots.join_next().await.is_some() {}
}

/// One slot: claims scopes and fetches them, one at a time.
async fn slot(
    db: DatabaseConnection,
    cfg: ChainConfig,
    rpc: Rpc,
    start: u64,
    mut stop: watch::Receiver<bool>,
) {
    let chain = cfg.chain;
    let idle = cfg.poll_interval.min(Duration::from_millis(250));
    loop {
        if *stop.borrow() {
            return;
        }
        match scopes::claim(&db, chain, start, scopes::LEASE).await {
            Ok(Some(job)) => {
                let _active = Active::enter(chain);
                turn(&db, &cfg, &rpc, job, start, &mut stop).await;
            }
            Ok(None) => {
                if wait_for_work(&mut stop, idle).await {
                    return;
                }
            }
            Err(e) => {
                tracing::warn!(%chain, error = %e, "database unavailable for history fetches; waiting");
                if pause(&mut stop, Duration::from_secs(2)).await {
                    return;
                }
            }
        }
    }
}

/// Waits until this process queues a scope or `idle` passes (another process may have queued
/// one); returns true when stopped.
async fn wait_for_work(stop: &mut watch::Receiver<bool>, idle: Duration) -> bool {
    let queued = scopes::queued_here().notified();
    tokio::select! {
        stopped = pause(stop, idle) => stopped,
        _ = queued => *stop.borrow(),
    }
}

/// One turn with a claimed scope, and its bookkeeping.
async fn turn(
    db: &DatabaseConnection,
    cfg: &ChainConfig,
    rpc: &Rpc,
    job: Job,
    start: u64,
    stop: &mut watch::Receiver<bool>,
) {
    let chain = cfg.chain;
    let scope = job.scope;
    let deadline = Instant::now() + cfg.history_slice;
    let result = fetch(db, cfg, rpc, job, start, deadline, stop).await;
    let written = match result {
        Ok(Turn::Done) => {
            tracing::info!(%chain, %scope, "history complete");
            outcome(chain, scope.kind, "synced");
            scopes::finish(db, chain, scope).await
        }
        Ok(Turn::Yield) | Ok(Turn::Stopped) => scopes::release(db, chain, scope).await,
        Err(e) => {
            let attempts = attempts_after_failure(db, chain, scope).await;
            let permanent = matches!(e, StepError::Rpc(RpcFailure::Permanent(_)));
            let failure = if permanent || attempts >= cfg.history_attempts {
                tracing::warn!(%chain, %scope, error = %e, attempts, "history fetch failed");
                outcome(chain, scope.kind, "failed");
                Failure::Give {
                    retry_after: cfg.history_retry_after,
                }
            } else {
                tracing::warn!(%chain, %scope, error = %e, attempts, "history fetch interrupted; will resume");
                Failure::Retry {
                    after: cfg.retry.delay(attempts.clamp(1, 10), jitter()),
                }
            };
            scopes::fail(db, chain, scope, &e.to_string(), failure).await
        }
    };
    if let Err(e) = written {
        // The lease runs out and another turn takes the scope up from its stored progress.
        tracing::warn!(%chain, %scope, error = %e, "could not record a history fetch's state");
    }
}

/// The scope's failed attempts, this one included.
async fn attempts_after_failure(db: &DatabaseConnection, chain: Chain, scope: Scope) -> u32 {
    scopes::read(db, chain, &[scope])
        .await
        .ok()
        .and_then(|r| r.first().map(|r| r.attempts))
        .unwrap_or(0)
        + 1
}

/// Fetches and stores `[job.from, start)` until done, the deadline, or a stop: the ranges of
/// the provider's profile ([`Plan`]), several in flight while the earlier ones are written,
/// written in order (progress only ever covers stored ranges), the ranges fetched meanwhile
/// with them. At the deadline the turn ends
/// only if another scope is waiting.
async fn fetch(
    db: &DatabaseConnection,
    cfg: &ChainConfig,
    rpc: &Rpc,
    job: Job,
    start: u64,
    mut deadline: Instant,
    stop: &mut watch::Receiver<bool>,
) -> Result<Turn, StepError> {
    if job.from >= start {
        return Ok(Turn::Done);
    }
    let scope = job.scope;
    let logs_of = |from: u64, to: u64| {
        let rpc = rpc.clone();
        async move {
            match scope.kind {
                ScopeKind::Contract => rpc.transfer_logs(from, to, Some(scope.address)).await,
                ScopeKind::Wallet => rpc.wallet_logs(from, to, scope.address).await,
            }
        }
    };
    let ahead = rpc.pacing().concurrency().clamp(1, MAX_RANGES_AHEAD);
    let mut plan = Plan::new(job.from, start, rpc.limits(), ahead);
    let mut waiting = Instant::now();
    while let Some(got) = plan.next(&logs_of, || rpc.limits()).await {
        let (_, mut to, mut logs) = got?;
        // The ranges fetched meanwhile go into the same write: one commit for many small ranges.
        while logs.len() < MAX_LOGS_PER_WRITE && plan.next_is_ready() {
            let Some(more) = plan.next(&logs_of, || rpc.limits()).await else {
                break;
            };
            let (_, through, more) = more?;
            to = through;
            logs.extend(more);
        }
        let writing = Instant::now();
        let (batch, skipped) = batch_of(rpc, scope, to, &logs).await?;
        store::write_batch(db, cfg.chain, &batch).await?;
        tracing::debug!(
            chain = %cfg.chain,
            %scope,
            through = to,
            logs = logs.len(),
            fetch_wait_ms = (writing - waiting).as_millis() as u64,
            write_ms = writing.elapsed().as_millis() as u64,
            "history range stored"
        );
        waiting = Instant::now();
        Stored {
            chain: cfg.chain,
            scope,
            through: to,
            logs: logs.len() as u64,
            skipped,
        }
        .report();
        if to + 1 >= start {
            return Ok(Turn::Done);
        }
        if *stop.borrow() {
            return Ok(Turn::Stopped);
        }
        if Instant::now() >= deadline {
            if scopes::any_waiting(db, cfg.chain).await? {
                return Ok(Turn::Yield);
            }
            deadline = Instant::now() + cfg.history_slice;
        }
    }
    Ok(Turn::Done)
}

/// Fetched ranges are written together up to this many logs.
const MAX_LOGS_PER_WRITE: usize = 20_000;

/// Ranges of one scope in flight at once, at most (the endpoint's `--rpc-concurrency` bounds
/// the calls of all of them).
const MAX_RANGES_AHEAD: usize = 4;

/// The write batch of one fetched range (decoded transfers, their blocks' headers, and the
/// scope's progress through `to`), and the logs skipped as not decodable.
async fn batch_of(
    rpc: &Rpc,
    scope: Scope,
    to: u64,
    logs: &[RpcLog],
) -> Result<(Batch, Skipped), StepError> {
    let decoded = decode::decode_logs(logs);
    // Nodes that put `blockTimestamp` in logs (geth ≥ 1.16, anvil, reth) spare the header
    // calls: a block below the start block needs no parent hash (reorgs are handled above it).
    let mut headers: BTreeMap<u64, BlockHeader> = BTreeMap::new();
    for b in &decoded.blocks {
        if let Some(ts) = b.timestamp {
            headers.entry(b.number).or_insert(BlockHeader {
                number: b.number,
                hash: b.hash,
                parent_hash: None,
                timestamp: ts,
            });
        }
    }
    let need: Vec<u64> = decoded
        .blocks
        .iter()
        .map(|b| b.number)
        .filter(|b| !headers.contains_key(b))
        .collect::<BTreeSet<u64>>()
        .into_iter()
        .collect();
    headers.extend(rpc.headers(&need).await?);
    let batch = Batch {
        blocks: headers.into_values().collect(),
        erc20: decoded.erc20,
        nft: decoded.nft,
        history: Some(Progress {
            scope,
            through: to,
            logs: logs.len() as u64,
        }),
        ..Default::default()
    };
    Ok((batch, decoded.skipped))
}

/// Schedules the history of `addresses` as `kind` scopes (for `tokenql sync`).
pub async fn schedule_addresses(
    db: &DatabaseConnection,
    chain: Chain,
    kind: ScopeKind,
    addresses: &[Address],
) -> Result<u64, sea_orm::DbErr> {
    let scopes: Vec<Scope> = addresses
        .iter()
        .map(|&address| Scope { kind, address })
        .collect();
    schedule(db, chain, &scopes).await
}

/// Counts a running history fetch in the `tokenql_history_fetches_active` gauge while alive.
struct Active(Chain);

impl Active {
    fn enter(chain: Chain) -> Self {
        metrics::gauge!(HISTORY_ACTIVE, "chain" => chain.name()).increment(1.0);
        Self(chain)
    }
}

impl Drop for Active {
    fn drop(&mut self) {
        metrics::gauge!(HISTORY_ACTIVE, "chain" => self.0.name()).decrement(1.0);
    }
}

fn outcome(chain: Chain, kind: ScopeKind, outcome: &'static str) {
    metrics::counter!(HISTORY_SCOPES, "chain" => chain.name(), "scope" => kind.as_str(), "outcome" => outcome)
        .increment(1);
}

/// A range a history fetch stored: its logs, and those skipped as not decodable.
struct Stored {
    chain: Chain,
    scope: Scope,
    through: u64,
    logs: u64,
    skipped: Skipped,
}

impl Stored {
    /// Counts the range's logs and skipped logs (`tokenql_history_logs_total`,
    /// `tokenql_history_logs_skipped_total`, as the follower counts its own), and says what was
    /// skipped at debug level (as `tokenql import` does).
    fn report(&self) {
        let (chain, kind) = (self.chain.name(), self.scope.kind.as_str());
        metrics::counter!(HISTORY_LOGS, "chain" => chain, "scope" => kind).increment(self.logs);
        metrics::counter!(HISTORY_SKIPPED, "chain" => chain, "scope" => kind)
            .increment(self.skipped.total());
        if self.skipped.total() > 0 {
            tracing::debug!(
                chain = %self.chain,
                scope = %self.scope,
                through = self.through,
                logs = self.logs,
                skipped_malformed = self.skipped.malformed,
                skipped_not_transfer = self.skipped.not_transfer + self.skipped.removed,
                "history range stored; logs skipped as not decodable"
            );
        }
    }
}

/// Polls until every `kind` scope of `addresses` is complete or failed, reporting progress
/// through `report` every few seconds. An error names the scopes that failed.
pub async fn wait(
    db: &DatabaseConnection,
    chain: Chain,
    kind: ScopeKind,
    addresses: &[Address],
    mut report: impl FnMut(String),
) -> anyhow::Result<()> {
    let scopes: Vec<Scope> = addresses
        .iter()
        .map(|&address| Scope { kind, address })
        .collect();
    let mut last = Instant::now();
    loop {
        let rows = scopes::read(db, chain, &scopes).await?;
        let done = rows
            .iter()
            .filter(|r| r.state == ScopeState::Synced)
            .count();
        let failed: Vec<String> = rows
            .iter()
            .filter(|r| r.state == ScopeState::Failed)
            .map(|r| {
                format!(
                    "{} ({})",
                    r.scope,
                    r.error.as_deref().unwrap_or("no reason")
                )
            })
            .collect();
        if done + failed.len() >= scopes.len() {
            report(format!("{chain}: {done} of {} complete", scopes.len()));
            anyhow::ensure!(failed.is_empty(), "failed: {}", failed.join(", "));
            return Ok(());
        }
        if last.elapsed() >= Duration::from_secs(5) {
            let logs: u64 = rows.iter().map(|r| r.logs).sum();
            report(format!(
                "{chain}: {done} of {} complete, {logs} logs fetched",
                scopes.len()
            ));
            last = Instant::now();
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::TRANSFER_TOPIC;
    use crate::indexer::retry::RetryPolicy;

    fn word(n: u64) -> String {
        format!("0x{n:064x}")
    }

    /// A timestamped log of block 7 (so no header is asked for) with these topics and data.
    fn log(topics: Vec<String>, data: &str) -> RpcLog {
        serde_json::from_value(serde_json::json!({
            "address": "0x00000000000000000000000000000000000000aa",
            "topics": topics,
            "data": data,
            "blockNumber": "0x7",
            "blockHash": word(0xb7),
            "blockTimestamp": "0x64",
            "transactionHash": word(0x7a),
            "transactionIndex": "0x0",
            "logIndex": "0x1",
        }))
        .expect("log")
    }

    #[tokio::test]
    async fn a_range_counts_the_logs_it_skips() {
        // Nothing answers there: every log is timestamped, so no header is fetched.
        let rpc = Rpc::new(
            "http://127.0.0.1:9",
            Duration::from_secs(1),
            RetryPolicy::default(),
        )
        .expect("rpc");
        let wallet = Address::parse("0x0000000000000000000000000000000000000002").expect("a");
        let scope = Scope {
            kind: ScopeKind::Wallet,
            address: wallet,
        };
        let transfer = vec![format!("{TRANSFER_TOPIC}"), word(1), word(2)];
        let all_in_data = format!("0x{}", [1u64, 2, 5].map(|n| format!("{n:064x}")).concat());
        let mut removed = log(transfer.clone(), &word(5));
        removed.removed = Some(true);
        let logs = [
            log(transfer.clone(), &word(5)),
            // Every argument in `data`: not a standard transfer.
            log(vec![format!("{TRANSFER_TOPIC}")], &all_in_data),
            log(transfer, "0x01"),
            removed,
        ];

        let (batch, skipped) = batch_of(&rpc, scope, 9, &logs).await.expect("batch");

        assert_eq!((batch.erc20.len(), batch.nft.len()), (1, 0));
        assert_eq!(batch.erc20[0].to, wallet);
        assert_eq!(batch.blocks.len(), 1);
        let progress = batch.history.expect("progress");
        assert_eq!((progress.through, progress.logs), (9, 4));
        let want = Skipped {
            malformed: 1,
            not_transfer: 1,
            removed: 1,
        };
        assert_eq!(skipped, want);

        let recorder = metrics_exporter_prometheus::PrometheusBuilder::new().build_recorder();
        let handle = recorder.handle();
        let stored = Stored {
            chain: Chain::ETH,
            scope,
            through: 9,
            logs: 4,
            skipped,
        };
        metrics::with_local_recorder(&recorder, || stored.report());
        let text = handle.render();
        for want in [
            "tokenql_history_logs_total{chain=\"eth\",scope=\"wallet\"} 4",
            "tokenql_history_logs_skipped_total{chain=\"eth\",scope=\"wallet\"} 3",
        ] {
            assert!(text.contains(want), "no `{want}` in:\n{text}");
        }
    }
}
