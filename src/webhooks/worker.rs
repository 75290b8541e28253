//! The delivery worker: one task per process ([`spawn`]) that leases each active stream it can
//! and runs one task per leased stream. A stream's task reads, per chain, the change feed after
//! the stream's stored position ([`ChainCursor`]), turns each row into deliveries
//! ([`super::plan`]) and posts them one at a time, in order; the position is saved after the
//! receiver's 2xx (at least once: a crash between the two sends the delivery again). A refused
//! delivery is retried with exponential backoff; after `max_failures` consecutive failures the
//! stream goes to `error` and its task ends (`POST /streams/evm/{id}/status` resumes it where
//! it stopped).
//!
//! One process delivers a stream at a time: the task holds the stream's lease
//! (`store::streams::lease`), renewed well within its time to live, and stops when it loses it.
//! A process that dies holds it until it expires; another then takes over from the saved
//! position.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use sea_orm::DbErr;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::body::{body, Addressee};
use super::plan::{plan, watch_all, Delivery, Filter, Moved};
use super::spec::Topics;
use super::{Sender, WebhookConfig};
use crate::query::changes::{ChangeKind, Changes, Position};
use crate::query::{QueryError, QueryService};
use crate::store::feed::appended_here;
use crate::store::now_ms;
use crate::store::streams::{self as stored, Stream, StreamPosition, StreamStatus};
use crate::telemetry::metrics;
use crate::types::Chain;

/// Why a stream's task stops reading.
#[derive(Debug, thiserror::Error)]
enum StepError {
    /// The stream must stop here: it went to `error`, the lease is lost, or the server stops.
    #[error("halted")]
    Halt,
    /// A read or write failed; the chain's cursor is rebuilt from the database.
    #[error("{0}")]
    Failed(String),
}

impl From<QueryError> for StepError {
    fn from(e: QueryError) -> Self {
        StepError::Failed(e.to_string())
    }
}

impl From<DbErr> for StepError {
    fn from(e: DbErr) -> Self {
        StepError::Failed(e.to_string())
    }
}

struct Ctx {
    service: QueryService,
    config: WebhookConfig,
    sender: Sender,
    holder: String,
    stop: watch::Receiver<bool>,
    /// When this process last renewed its lease on each stream it delivers.
    renewed: std::sync::Mutex<HashMap<String, Instant>>,
}

impl Ctx {
    fn stopping(&self) -> bool {
        *self.stop.borrow()
    }

    /// Waits for new rows (this process's commits), the poll interval or the stop; `true` when
    /// stopping.
    async fn wait(&self, delay: Duration) -> bool {
        let mut stop = self.stop.clone();
        tokio::select! {
            _ = tokio::time::sleep(delay) => {}
            _ = appended_here().notified() => {}
            _ = stop.wait_for(|s| *s) => {}
        }
        self.stopping()
    }

    async fn lease(&self, id: &str) -> Result<bool, DbErr> {
        let ttl = self.config.lease.as_millis() as i64;
        let held = stored::lease(self.service.db(), id, &self.holder, ttl).await?;
        let mut renewed = self.renewed.lock().unwrap_or_else(|e| e.into_inner());
        if held {
            renewed.insert(id.to_string(), Instant::now());
        } else {
            renewed.remove(id);
        }
        Ok(held)
    }

    /// Renews the lease on stream `id` once a third of its life has passed since the last
    /// renewal; `Halt` when it is lost (another process delivers the stream now).
    async fn keep(&self, id: &str) -> Result<(), StepError> {
        let due = self
            .renewed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(id)
            .is_none_or(|t| t.elapsed() > self.config.lease / 3);
        if due && !self.lease(id).await? {
            return Err(StepError::Halt);
        }
        Ok(())
    }
}

/// Starts the worker; it stops, and gives its leases back, once `stop` turns true.
pub fn spawn(
    service: QueryService,
    config: WebhookConfig,
    stop: watch::Receiver<bool>,
) -> Result<JoinHandle<()>, String> {
    // A post never outlives the lease it was sent under.
    let ctx = Arc::new(Ctx {
        sender: Sender::new(config.timeout.min(config.lease / 2))?,
        renewed: std::sync::Mutex::new(HashMap::new()),
        service,
        config,
        holder: crate::store::lease::process_holder(),
        stop,
    });
    Ok(tokio::spawn(supervise(ctx)))
}

async fn supervise(ctx: Arc<Ctx>) {
    let mut running: HashMap<String, JoinHandle<()>> = HashMap::new();
    loop {
        running.retain(|_, h| !h.is_finished());
        match stored::active_ids(ctx.service.db()).await {
            Ok(ids) => {
                for id in ids {
                    if running.contains_key(&id) {
                        continue;
                    }
                    match ctx.lease(&id).await {
                        Ok(true) => {
                            let task = tokio::spawn(run_stream(ctx.clone(), id.clone()));
                            running.insert(id, task);
                        }
                        Ok(false) => {}
                        Err(e) => tracing::warn!(stream = %id, error = %e, "stream lease failed"),
                    }
                }
            }
            Err(e) => tracing::warn!(error = %e, "reading the active streams failed"),
        }
        if ctx
            .wait(ctx.config.poll.max(Duration::from_millis(500)))
            .await
        {
            break;
        }
    }
    for task in running.into_values() {
        let _ = task.await;
    }
}

/// Where a stream stands on one chain: the sequence's state and the last row read.
struct ChainCursor {
    chain: Chain,
    changes: Changes<Moved>,
    after: i64,
    skip: Option<Position>,
}

impl ChainCursor {
    /// The cursor at the stream's saved position: what waits for confirmations is rebuilt from
    /// the feed before it (since the stream began).
    async fn open(ctx: &Ctx, s: &Stream, chain: Chain) -> Result<Self, StepError> {
        let service = &ctx.service;
        let start = stored::starts(service.db(), &s.id)
            .await?
            .into_iter()
            .find(|p| p.position.chain_id == chain.db_id())
            .ok_or(StepError::Halt)?;
        let saved = start.position;
        let whole = saved.index == u32::MAX;
        let bounds = service.feed_bounds(chain).await?;
        let needed = if whole { saved.row + 1 } else { saved.row };
        if needed <= bounds.pruned_through {
            let message = format!(
                "the stream fell behind the change feed kept for {} (rows up to {} were \
                 pruned); recreate it",
                chain.name(),
                bounds.pruned_through
            );
            stored::set_status(service.db(), &s.id, StreamStatus::Error, &message).await?;
            return Err(StepError::Halt);
        }
        let c = ctx.config.confirmations.of(chain);
        let marks = service.feed_marks_before(chain, needed).await?;
        // Blocks stored before the stream began are not its own: never confirmed to it.
        let mut waiting = Changes::<Moved>::waiting_rows(&marks, c);
        waiting.retain(|row| *row > start.start_row);
        let mut changes = Changes::new(watch_all(chain, c));
        changes.restore(&service.feed_rows(chain, &waiting).await?);
        Ok(Self {
            chain,
            changes,
            after: needed - 1,
            skip: (!whole).then_some(Position {
                chain_id: chain.db_id(),
                row: saved.row,
                index: saved.index,
            }),
        })
    }
}

/// What a stream delivers now.
async fn filter_of(ctx: &Ctx, s: &Stream) -> Result<Filter, StepError> {
    let addresses = if s.all_addresses {
        Vec::new()
    } else {
        stored::addresses(ctx.service.db(), &s.id, None, u64::MAX)
            .await?
            .0
    };
    Ok(Filter {
        all: s.all_addresses,
        addresses: addresses.into_iter().collect(),
        topics: Topics(s.topics),
    })
}

/// Delivers stream `id` while this process holds its lease and it stays active.
async fn run_stream(ctx: Arc<Ctx>, id: String) {
    let mut cursors: HashMap<i64, ChainCursor> = HashMap::new();
    while !ctx.stopping() {
        if ctx.keep(&id).await.is_err() {
            return;
        }
        let stream = match stored::find(ctx.service.db(), None, &id).await {
            Ok(Some(s)) if s.status == StreamStatus::Active => s,
            Ok(_) => break,
            Err(e) => {
                tracing::warn!(stream = %id, error = %e, "reading the stream failed");
                if ctx.wait(ctx.config.poll).await {
                    break;
                }
                continue;
            }
        };
        cursors.retain(|c, _| stream.chains.contains(c));
        match round(&ctx, &stream, &mut cursors).await {
            Ok(true) => {}
            Ok(false) => {
                if ctx.wait(ctx.config.poll).await {
                    break;
                }
            }
            Err(()) => return,
        }
    }
    let _ = stored::release(ctx.service.db(), &id, &ctx.holder).await;
    ctx.renewed
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&id);
}

/// One read of every chain of the stream; `Ok(true)` when some row was read, `Err` when the
/// stream's task must end.
async fn round(
    ctx: &Ctx,
    stream: &Stream,
    cursors: &mut HashMap<i64, ChainCursor>,
) -> Result<bool, ()> {
    let filter = match filter_of(ctx, stream).await {
        Ok(f) => f,
        Err(e) => {
            tracing::warn!(stream = %stream.id, error = %e, "reading the stream's addresses failed");
            return Ok(false);
        }
    };
    let mut progressed = false;
    for &chain_id in &stream.chains {
        let Some(chain) = u64::try_from(chain_id).ok().and_then(Chain::from_id) else {
            continue;
        };
        match step(ctx, stream, &filter, chain, cursors).await {
            Ok(p) => progressed |= p,
            Err(StepError::Halt) => return Err(()),
            Err(StepError::Failed(e)) => {
                tracing::warn!(stream = %stream.id, chain = %chain.name(), error = %e, "webhook delivery step failed");
                cursors.remove(&chain_id);
            }
        }
    }
    Ok(progressed)
}

/// Reads the rows after the cursor of `chain` and delivers them; `true` when there were some.
async fn step(
    ctx: &Ctx,
    stream: &Stream,
    filter: &Filter,
    chain: Chain,
    cursors: &mut HashMap<i64, ChainCursor>,
) -> Result<bool, StepError> {
    let cursor = match cursors.entry(chain.db_id()) {
        std::collections::hash_map::Entry::Occupied(o) => o.into_mut(),
        std::collections::hash_map::Entry::Vacant(v) => {
            v.insert(ChainCursor::open(ctx, stream, chain).await?)
        }
    };
    let rows = ctx
        .service
        .feed_after(chain, cursor.after, ctx.config.read_rows)
        .await?;
    let Some(last) = rows.last().map(|r| r.id) else {
        metrics::webhook_behind(&stream.id, 0);
        return Ok(false);
    };
    let bounds = ctx.service.feed_bounds(chain).await?;
    metrics::webhook_behind(&stream.id, bounds.last - cursor.after);
    if let Err(e) = deliver_rows(ctx, stream, filter, cursor, &rows).await {
        cursors.remove(&chain.db_id());
        return Err(e);
    }
    let end = StreamPosition {
        chain_id: chain.db_id(),
        row: last,
        index: u32::MAX,
    };
    stored::save_position(ctx.service.db(), &stream.id, end).await?;
    Ok(true)
}

async fn deliver_rows(
    ctx: &Ctx,
    stream: &Stream,
    filter: &Filter,
    cursor: &mut ChainCursor,
    rows: &[crate::query::feed::FeedRow],
) -> Result<(), StepError> {
    for row in rows {
        let changes = cursor.changes.apply(row);
        for d in plan(changes, cursor.skip.take(), filter) {
            if d.is_empty() {
                continue;
            }
            deliver(ctx, stream, cursor.chain, &d).await?;
            let p = StreamPosition {
                chain_id: d.position.chain_id,
                row: d.position.row,
                index: d.position.index,
            };
            stored::save_position(ctx.service.db(), &stream.id, p).await?;
        }
        cursor.after = row.id;
    }
    Ok(())
}

fn kind_name(kind: ChangeKind) -> &'static str {
    match kind {
        ChangeKind::Added => "added",
        ChangeKind::Confirmed => "confirmed",
        ChangeKind::Removed => "removed",
    }
}

/// The delay before retry `attempt` (from 0): `retry_base` doubled each time, capped.
fn backoff(config: &WebhookConfig, attempt: u32) -> Duration {
    let factor = 1u32 << attempt.min(16);
    config
        .retry_base
        .saturating_mul(factor)
        .min(config.retry_cap)
}

/// Posts `d` until the receiver accepts it; `Halt` when the stream went to `error`, the lease
/// was lost or the server stops.
async fn deliver(ctx: &Ctx, s: &Stream, chain: Chain, d: &Delivery) -> Result<(), StepError> {
    let meta = super::metadata(&ctx.service, chain, d).await?;
    let secret = stored::secret(ctx.service.db(), s.key_id).await?;
    let to = Addressee {
        stream_id: &s.id,
        tag: &s.tag,
        chain,
    };
    // A delivery that failed before a restart is the same one (its position was not saved):
    // its attempts go on counting from the stored failures.
    let mut attempt = u32::try_from(s.failures).unwrap_or(0);
    loop {
        ctx.keep(&s.id).await?;
        let b = body(to, d, &meta, attempt);
        let Err(e) = ctx.sender.post(&s.webhook_url, &b, &secret).await else {
            let latency = Duration::from_millis((now_ms() - d.written_ms).max(0) as u64);
            metrics::webhook_delivered(chain, kind_name(d.kind), latency);
            if attempt > 0 || s.failures > 0 {
                stored::clear_failures(ctx.service.db(), &s.id).await?;
            }
            return Ok(());
        };
        metrics::webhook_failed(chain);
        let failures = stored::record_failure(ctx.service.db(), &s.id).await?;
        tracing::warn!(stream = %s.id, chain = %chain.name(), block = d.block_number, attempt, error = %e, "webhook delivery failed");
        if failures >= ctx.config.max_failures as i32 {
            let message = format!("{failures} consecutive deliveries failed; the last: {e}");
            stored::set_status(ctx.service.db(), &s.id, StreamStatus::Error, &message).await?;
            tracing::error!(stream = %s.id, error = %e, "webhook stream stopped in error");
            return Err(StepError::Halt);
        }
        pause(ctx, &s.id, backoff(&ctx.config, attempt)).await?;
        attempt += 1;
    }
}

/// Sleeps `delay`, keeping the lease meanwhile; `Halt` on stop or a lost lease.
async fn pause(ctx: &Ctx, id: &str, delay: Duration) -> Result<(), StepError> {
    let until = Instant::now() + delay;
    let slice = ctx.config.lease / 3;
    loop {
        let left = until.saturating_duration_since(Instant::now());
        let mut stop = ctx.stop.clone();
        tokio::select! {
            _ = tokio::time::sleep(left.min(slice)) => {}
            _ = stop.wait_for(|s| *s) => {}
        }
        if ctx.stopping() {
            return Err(StepError::Halt);
        }
        ctx.keep(id).await?;
        if Instant::now() >= until {
            return Ok(());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        let c = WebhookConfig {
            retry_base: Duration::from_millis(100),
            retry_cap: Duration::from_secs(1),
            ..Default::default()
        };
        assert_eq!(backoff(&c, 0), Duration::from_millis(100));
        assert_eq!(backoff(&c, 2), Duration::from_millis(400));
        assert_eq!(backoff(&c, 9), Duration::from_secs(1));
        assert_eq!(backoff(&c, 40), Duration::from_secs(1));
    }
}
