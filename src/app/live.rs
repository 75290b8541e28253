//! Live changes for subscribers: one poller per chain per process watches the change feed's
//! last id (woken at once by this process's own commits, else every [`LiveOptions::poll`]),
//! and each subscription reads the rows after its position from the database at its own pace
//! ([`Live::changes`]). A slow subscriber holds at most one read of rows in memory and never
//! slows the indexer or the other subscribers; one that falls behind the feed's retained
//! window is ended with [`LiveError::Gone`]. The sequence of changes is
//! [`crate::query::changes`]'s: the same from every process, so a position resumes anywhere.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::Stream;
use tokio::sync::watch;

use crate::query::changes::{Change, ChangeKind, Changes, Position, Watch, Watched};
use crate::query::feed::FeedRow;
use crate::query::{QueryError, QueryService};
use crate::store::feed::appended_here;
use crate::telemetry::metrics;
use crate::types::Chain;

/// The most recent feed rows a poller keeps for the subscriptions of its process.
const KEPT_ROWS: usize = 256;

/// What a chain's poller last read: every feed row with an id in `(from, last]`, in order (the
/// newest [`KEPT_ROWS`] of them), so that subscriptions at the tail read them from memory: one
/// database read per new block for the whole process, not one per subscription.
#[derive(Debug, Default)]
pub struct Tail {
    /// The id below the first row kept.
    from: i64,
    /// The last id read.
    last: i64,
    rows: VecDeque<Arc<FeedRow>>,
}

impl Tail {
    /// The kept rows after `after`, if the kept rows reach back to it.
    fn after(&self, after: i64, limit: usize) -> Option<Vec<Arc<FeedRow>>> {
        (after >= self.from).then(|| {
            self.rows
                .iter()
                .filter(|r| r.id > after)
                .take(limit)
                .cloned()
                .collect()
        })
    }
}

/// Settings of live changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LiveOptions {
    /// Subscriptions one API key may hold open in this process.
    pub per_key: usize,
    /// How often the feed is polled for rows written by another process.
    pub poll: Duration,
    /// Feed rows a subscription reads at once.
    pub read_rows: u64,
}

impl Default for LiveOptions {
    fn default() -> Self {
        Self {
            per_key: 100,
            poll: Duration::from_millis(250),
            read_rows: 64,
        }
    }
}

/// Why a subscription cannot start or go on.
#[derive(Debug, thiserror::Error)]
pub enum LiveError {
    /// The key holds as many subscriptions as it may.
    #[error("this API key already holds {0} open subscriptions, the most it may; close one first")]
    TooMany(usize),
    /// The position lies before what the feed keeps.
    #[error(
        "position {0} is older than the changes kept (the feed keeps the last blocks \
         the indexer's --feed-retention-blocks sets); start again without `after`"
    )]
    Gone(String),
    /// The position was not given out by this API for this chain.
    #[error("after: {0}")]
    BadPosition(String),
    /// Reading the feed failed.
    #[error(transparent)]
    Query(#[from] QueryError),
}

/// The live changes of a server: its pollers and its open subscriptions per key.
#[derive(Clone)]
pub struct Live {
    inner: Arc<Inner>,
}

struct Inner {
    service: QueryService,
    options: LiveOptions,
    tails: Mutex<HashMap<Chain, watch::Receiver<Arc<Tail>>>>,
    open: Mutex<HashMap<i32, usize>>,
}

/// A subscription's place in its key's count; given back when dropped.
pub struct Admitted {
    live: Live,
    key_id: i32,
}

impl Drop for Admitted {
    fn drop(&mut self) {
        let mut open = self
            .live
            .inner
            .open
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some(n) = open.get_mut(&self.key_id) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                open.remove(&self.key_id);
            }
        }
    }
}

impl Live {
    /// Live changes read through `service` (the primary's).
    pub fn new(service: QueryService, options: LiveOptions) -> Self {
        Self {
            inner: Arc::new(Inner {
                service,
                options,
                tails: Mutex::new(HashMap::new()),
                open: Mutex::new(HashMap::new()),
            }),
        }
    }

    /// The subscriptions of `key_id` open now (admitted and not yet dropped).
    pub fn open_of(&self, key_id: i32) -> usize {
        let open = self.inner.open.lock().unwrap_or_else(|e| e.into_inner());
        open.get(&key_id).copied().unwrap_or(0)
    }

    /// Counts a subscription of `key_id`, or refuses it over [`LiveOptions::per_key`].
    pub fn admit(&self, key_id: i32) -> Result<Admitted, LiveError> {
        let mut open = self.inner.open.lock().unwrap_or_else(|e| e.into_inner());
        let n = open.entry(key_id).or_insert(0);
        if *n >= self.inner.options.per_key {
            return Err(LiveError::TooMany(self.inner.options.per_key));
        }
        *n += 1;
        Ok(Admitted {
            live: self.clone(),
            key_id,
        })
    }

    /// The changes `watch` sees, from just after `after` (a position this API gave out) or
    /// from now on.
    pub async fn changes<T: Watched>(
        &self,
        watch: Watch,
        after: Option<&str>,
        admitted: Admitted,
    ) -> Result<impl Stream<Item = Result<Change<T>, LiveError>> + Send + 'static, LiveError> {
        let chain = watch.chain;
        let service = &self.inner.service;
        let after = after
            .map(|a| Position::parse(a, chain).map_err(LiveError::BadPosition))
            .transpose()?;
        let bounds = service.feed_bounds(chain).await?;
        let (last_id, skip) = match after {
            Some(p) if p.row <= bounds.pruned_through => return Err(LiveError::Gone(p.encode())),
            Some(p) if p.row > bounds.last => {
                return Err(LiveError::BadPosition(format!(
                    "'{}' is not a position this API gave out",
                    p.encode()
                )))
            }
            Some(p) => (p.row - 1, Some((p.row, p.index as usize + 1))),
            None => (bounds.last, None),
        };
        let confirmations = watch.confirmations;
        let mut changes = Changes::<T>::new(watch);
        if confirmations > 0 {
            let marks = service.feed_marks_before(chain, last_id + 1).await?;
            let waiting = Changes::<T>::waiting_rows(&marks, confirmations);
            changes.restore(&service.feed_rows(chain, &waiting).await?);
        }
        metrics::live_open(chain, 1.0);
        let state = Reading {
            live: self.clone(),
            chain,
            tail: self.tail(chain),
            changes,
            last_id,
            skip,
            ready: VecDeque::new(),
            ended: false,
            _admitted: admitted,
        };
        Ok(futures_util::stream::unfold(state, Reading::next))
    }

    /// The chain's last feed id as this process last saw it, starting the chain's poller on
    /// first use.
    fn tail(&self, chain: Chain) -> watch::Receiver<Arc<Tail>> {
        let mut tails = self.inner.tails.lock().unwrap_or_else(|e| e.into_inner());
        tails
            .entry(chain)
            .or_insert_with(|| {
                let (tx, rx) = watch::channel(Arc::new(Tail::default()));
                tokio::spawn(poll(
                    self.inner.service.clone(),
                    chain,
                    tx,
                    self.inner.options.poll,
                ));
                rx
            })
            .clone()
    }
}

/// Keeps `tx` at the chain's feed tail: the last id, and the newest rows read once for every
/// subscription of the process.
async fn poll(service: QueryService, chain: Chain, tx: watch::Sender<Arc<Tail>>, every: Duration) {
    let mut tail = Tail::default();
    match service.feed_bounds(chain).await {
        Ok(b) => {
            (tail.from, tail.last) = (b.last, b.last);
            tx.send_replace(Arc::new(Tail {
                from: b.last,
                last: b.last,
                rows: VecDeque::new(),
            }));
        }
        Err(e) => tracing::warn!(%chain, error = %e, "reading the change feed's tail failed"),
    }
    loop {
        let woken = appended_here().notified();
        tokio::pin!(woken);
        woken.as_mut().enable();
        match service.feed_after(chain, tail.last, KEPT_ROWS as u64).await {
            Ok(rows) if !rows.is_empty() => {
                keep(&mut tail, rows);
                tx.send_replace(Arc::new(Tail {
                    from: tail.from,
                    last: tail.last,
                    rows: tail.rows.clone(),
                }));
                continue;
            }
            Ok(_) => {}
            Err(e) => tracing::warn!(%chain, error = %e, "reading the change feed's tail failed"),
        }
        tokio::select! {
            _ = woken => {}
            _ = tokio::time::sleep(every) => {}
        }
    }
}

/// Adds `rows` (the next after `tail.last`) to the kept rows, dropping the oldest.
fn keep(tail: &mut Tail, rows: Vec<FeedRow>) {
    for row in rows {
        tail.last = row.id;
        tail.rows.push_back(Arc::new(row));
    }
    while tail.rows.len() > KEPT_ROWS {
        if let Some(old) = tail.rows.pop_front() {
            tail.from = old.id;
        }
    }
}

/// One subscription's reading state.
struct Reading<T: Watched> {
    live: Live,
    chain: Chain,
    tail: watch::Receiver<Arc<Tail>>,
    changes: Changes<T>,
    /// The last feed row read.
    last_id: i64,
    /// Changes of this row already delivered before a resume: (row, how many).
    skip: Option<(i64, usize)>,
    ready: VecDeque<Change<T>>,
    ended: bool,
    _admitted: Admitted,
}

impl<T: Watched> Drop for Reading<T> {
    fn drop(&mut self) {
        metrics::live_open(self.chain, -1.0);
    }
}

impl<T: Watched> Reading<T> {
    async fn next(mut self) -> Option<(Result<Change<T>, LiveError>, Self)> {
        loop {
            if let Some(change) = self.ready.pop_front() {
                let latency = crate::store::now_ms().saturating_sub(change.written_ms);
                metrics::live_delivered(
                    self.chain,
                    kind_label(change.kind),
                    Duration::from_millis(latency.max(0) as u64),
                );
                return Some((Ok(change), self));
            }
            if self.ended {
                return None;
            }
            if let Err(e) = self.read().await {
                self.ended = true;
                let reason = if matches!(e, LiveError::Gone(_)) {
                    "gone"
                } else {
                    "failed"
                };
                metrics::live_ended(self.chain, reason);
                return Some((Err(e), self));
            }
        }
    }

    /// Reads the next rows into `ready` (from the poller's kept rows when they reach back to
    /// this subscription's place, else from the database), waiting for the tail to move when
    /// there are none.
    async fn read(&mut self) -> Result<(), LiveError> {
        let n = self.live.inner.options.read_rows;
        let tail = self.tail.borrow_and_update().clone();
        if tail.last <= self.last_id {
            // Nothing new: wait for the poller (or a while, should it have stopped).
            let poll = self.live.inner.options.poll;
            let _ = tokio::time::timeout(poll * 4, self.tail.changed()).await;
            return Ok(());
        }
        let rows = match tail.after(self.last_id, n as usize) {
            Some(rows) => rows,
            None => self.read_stored(n).await?,
        };
        for row in &rows {
            self.apply(row);
        }
        metrics::live_behind(self.chain, (tail.last - self.last_id).max(0));
        Ok(())
    }

    /// Reads up to `n` rows after this subscription's place from the database; a gap that
    /// pruning made ends the subscription.
    async fn read_stored(&mut self, n: u64) -> Result<Vec<Arc<FeedRow>>, LiveError> {
        let service = &self.live.inner.service;
        let rows = service.feed_after(self.chain, self.last_id, n).await?;
        if rows
            .first()
            .is_some_and(|first| first.id > self.last_id + 1)
        {
            let bounds = service.feed_bounds(self.chain).await?;
            if bounds.pruned_through > self.last_id {
                let gone = Position {
                    chain_id: self.chain.db_id(),
                    row: self.last_id,
                    index: 0,
                };
                return Err(LiveError::Gone(gone.encode()));
            }
        }
        Ok(rows.into_iter().map(Arc::new).collect())
    }

    /// The changes of `row`, less those delivered before a resume.
    fn apply(&mut self, row: &FeedRow) {
        let mut made = self.changes.apply(row);
        if let Some((skip_row, count)) = self.skip {
            if skip_row == row.id {
                made.drain(..count.min(made.len()));
                self.skip = None;
            }
        }
        self.ready.extend(made);
        self.last_id = row.id;
    }
}

fn kind_label(kind: ChangeKind) -> &'static str {
    match kind {
        ChangeKind::Added => "added",
        ChangeKind::Confirmed => "confirmed",
        ChangeKind::Removed => "removed",
    }
}
