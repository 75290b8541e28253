//! How fast one endpoint may be called: the provider's rate (`--rpc-max-rps`), calls in flight
//! (`--rpc-concurrency`), the pause a refusal for rate (HTTP 429) asks for, and the live
//! follower's precedence over history fetches.
//!
//! Every HTTP request to the endpoint is admitted here first ([`Pacing::admit`]), a JSON-RPC
//! batch counting one call per item, as providers count them:
//!
//! - **Rate.** With a configured rate of N calls a second, at most N − 1 calls start in any
//!   1.02 s, at least `1 / 2N` apart, so neither a provider's sliding window nor its token
//!   bucket of N is exceeded however the requests' travel times vary. (Calls spaced `1 / N`
//!   apart were tried: each wait overshoots by the timer's granularity, a tenth of the rate at
//!   100 calls a second; and bursts of N − 1 were refused now and then.) Without a rate, calls
//!   are not held back; the provider's refusals pause them. (A rate learnt from refusals was tried: a provider that
//!   refuses now and then for other reasons drove it down to one call a second.)
//! - **Refusals for rate.** A 429 pauses every call to the endpoint for its `Retry-After`, or,
//!   when it names none, for a back-off that doubles with each refusal in a row (250 ms up to
//!   8 s). A refused call is asked again after the pause; it does not spend the retry budget
//!   of real failures ([`super::rpc`]).
//! - **Precedence.** A call of the live follower ([`Lane::Live`]) takes the next free slot; a
//!   history call ([`Lane::History`]) waits while a live call is waiting, a contract read
//!   ([`Lane::Background`]) while either is. History calls and contract reads hold one of
//!   `concurrency` permits while in flight, so history fetches share the endpoint fairly
//!   (first come, first served). Precedence is bounded: a history call that has let two live
//!   calls pass takes the next slot (a contract read after sixteen), so a follower polling
//!   faster than the rate allows does not starve history fetches, nor they contract reads.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

/// Who is calling, first first: the live follower, then history fetches, then the rest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Lane {
    /// The live follower (and everything not below).
    Live,
    /// A history fetch: an answer waits for it.
    History,
    /// Contract reads (names, symbols, decimals): nothing waits for them.
    Background,
}

impl Lane {
    fn rank(self) -> usize {
        self as usize
    }
}

/// The pacing of one endpoint, shared by every client of it.
#[derive(Debug, Clone)]
pub struct Pacing {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    /// The calls that may start in any second (the configured rate less one).
    per_second: Option<usize>,
    state: Mutex<State>,
    permits: Arc<Semaphore>,
    concurrency: usize,
}

#[derive(Debug)]
struct State {
    /// When the calls of the last window started, oldest first.
    recent: VecDeque<Instant>,
    /// The earliest time the next call may start (half the rate's spacing after the last).
    next: Instant,
    /// No call starts before this (a refusal for rate asked for a pause).
    paused_until: Instant,
    /// Calls waiting for a slot, per lane: a call lets those of the lanes before its own pass.
    waiting: [u32; 3],
    /// Per lane, calls of other lanes admitted since its last one: after [`PRECEDENCE`] of
    /// them, a waiting call takes the next slot whoever waits, so no lane starves.
    passed: [u32; 3],
    /// Refusals for rate in a row.
    refusals: u32,
}

/// A call in flight; dropping it frees its permit.
#[derive(Debug)]
pub struct Admitted {
    _permit: Option<OwnedSemaphorePermit>,
}

/// The window a rate counts calls over: a second, and a margin for the requests' travel.
const WINDOW: Duration = Duration::from_millis(1_020);

/// The first pause after a refusal for rate that names none; it doubles per refusal in a row.
const FIRST_BACKOFF: Duration = Duration::from_millis(250);
/// Per lane, the calls of the lanes before its own that a waiting call lets pass before it
/// takes a slot anyway: under contention the live follower gets two slots in three and history
/// fetches the third; contract reads one in seventeen.
const PRECEDENCE: [u32; 3] = [0, 2, 16];

/// The longest pause without a `Retry-After`.
const MAX_BACKOFF: Duration = Duration::from_secs(8);

impl Pacing {
    /// Pacing at `max_rps` calls per second (`None`: unspaced) with at most
    /// `concurrency` history calls in flight.
    pub fn new(max_rps: Option<u32>, concurrency: usize) -> Self {
        let concurrency = concurrency.max(1);
        let now = Instant::now();
        Self {
            inner: Arc::new(Inner {
                per_second: max_rps
                    .filter(|r| *r > 0)
                    .map(|r| (r as usize).saturating_sub(1).max(1)),
                state: Mutex::new(State {
                    recent: VecDeque::new(),
                    next: now,
                    paused_until: now,
                    waiting: [0; 3],
                    passed: [0; 3],
                    refusals: 0,
                }),
                permits: Arc::new(Semaphore::new(concurrency)),
                concurrency,
            }),
        }
    }

    /// No limit: every call is admitted at once (tests, tools).
    pub fn unlimited() -> Self {
        Self::new(None, usize::MAX >> 4)
    }

    /// History calls allowed in flight at once.
    pub fn concurrency(&self) -> usize {
        self.inner.concurrency
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.inner.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits until `calls` calls of `lane` may start; the permit is held while they run.
    pub async fn admit(&self, lane: Lane, calls: u32) -> Admitted {
        let permit = match lane {
            Lane::Live => None,
            Lane::History | Lane::Background => {
                self.inner.permits.clone().acquire_owned().await.ok()
            }
        };
        let mut waiting = Waiting::new(self, lane);
        loop {
            let wait = self.try_slot(lane, calls.max(1), &mut waiting);
            match wait {
                None => break,
                Some(d) => tokio::time::sleep(d).await,
            }
        }
        Admitted { _permit: permit }
    }

    /// Takes a slot now, or says how long to wait before trying again.
    fn try_slot(&self, lane: Lane, calls: u32, waiting: &mut Waiting<'_>) -> Option<Duration> {
        let mut s = self.lock();
        let now = Instant::now();
        let second = WINDOW;
        while s
            .recent
            .front()
            .is_some_and(|t| now.duration_since(*t) >= second)
        {
            s.recent.pop_front();
        }
        // The window has room for `calls` once enough of its calls are a second old (a batch
        // wider than the window waits for an empty one).
        let window_free = match self.inner.per_second {
            Some(cap) if s.recent.len() + calls as usize > cap => {
                let expire = (s.recent.len() + calls as usize - cap).min(s.recent.len());
                s.recent[expire - 1] + second
            }
            _ => now,
        };
        let free = window_free.max(s.paused_until).max(s.next);
        let before_it = s.waiting[..lane.rank()].iter().any(|n| *n > 0);
        if before_it && s.passed[lane.rank()] < PRECEDENCE[lane.rank()] {
            waiting.register(&mut s);
            return Some((free.max(now) - now).max(Duration::from_millis(1)));
        }
        if free > now {
            waiting.register(&mut s);
            return Some(free - now);
        }
        waiting.unregister(&mut s);
        for (k, passed) in s.passed.iter_mut().enumerate() {
            *passed = if k == lane.rank() {
                0
            } else {
                passed.saturating_add(1)
            };
        }
        if let Some(cap) = self.inner.per_second {
            for _ in 0..calls {
                s.recent.push_back(now);
            }
            s.next = now + WINDOW / (2 * cap as u32 + 2) * calls;
        }
        None
    }

    /// The provider refused a call for rate; `retry_after` is the pause it asked for.
    pub fn refused_for_rate(&self, retry_after: Option<Duration>) {
        let mut s = self.lock();
        let now = Instant::now();
        s.refusals += 1;
        let pause = retry_after.unwrap_or_else(|| {
            FIRST_BACKOFF
                .saturating_mul(1 << (s.refusals - 1).min(8))
                .min(MAX_BACKOFF)
        });
        s.paused_until = s.paused_until.max(now + pause);
    }

    /// The provider accepted a call.
    pub fn accepted(&self) {
        self.lock().refusals = 0;
    }
}

/// Counts a call among the waiting of its lane while it waits for a slot.
struct Waiting<'a> {
    pacing: &'a Pacing,
    lane: Lane,
    registered: bool,
}

impl<'a> Waiting<'a> {
    fn new(pacing: &'a Pacing, lane: Lane) -> Self {
        Self {
            pacing,
            lane,
            registered: false,
        }
    }

    fn register(&mut self, s: &mut State) {
        if !self.registered {
            s.waiting[self.lane.rank()] += 1;
            self.registered = true;
        }
    }

    fn unregister(&mut self, s: &mut State) {
        if self.registered {
            s.waiting[self.lane.rank()] -= 1;
            self.registered = false;
        }
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        if self.registered {
            let mut s = self.pacing.lock();
            self.unregister(&mut s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether `d` is at least `ms` milliseconds, and not much more (a loaded machine).
    fn about(d: Duration, ms: u64) -> bool {
        d >= Duration::from_millis(ms) && d < Duration::from_millis(ms + 400)
    }

    #[tokio::test]
    async fn at_most_the_rate_less_one_start_in_any_second() {
        let p = Pacing::new(Some(5), 4);
        let start = Instant::now();
        let mut at = Vec::new();
        for _ in 0..10 {
            let _a = p.admit(Lane::History, 1).await;
            at.push(start.elapsed());
        }
        // Four in the first window (102 ms apart), four in the next, two in the third.
        for (i, t) in at.iter().enumerate() {
            let ms = (i / 4) as u64 * 1_020 + (i % 4) as u64 * 102;
            assert!(about(*t, ms), "call {i} at {t:?}");
        }
        // A batch takes as many places as it has calls.
        let _b = p.admit(Lane::Live, 3).await;
        assert!(about(start.elapsed(), 3_060), "{:?}", start.elapsed());
    }

    #[tokio::test]
    async fn a_refusal_pauses_every_call_for_its_retry_after() {
        let p = Pacing::new(Some(1_000), 4);
        let start = Instant::now();
        let _a = p.admit(Lane::History, 1).await;
        p.refused_for_rate(Some(Duration::from_millis(300)));
        let _b = p.admit(Lane::Live, 1).await;
        assert!(about(start.elapsed(), 300), "{:?}", start.elapsed());
        p.accepted();
        // Without a Retry-After: a back-off that doubles per refusal in a row (250, 500 ms).
        let again = Instant::now();
        p.refused_for_rate(None);
        p.refused_for_rate(None);
        let _c = p.admit(Lane::Live, 1).await;
        assert!(about(again.elapsed(), 500), "{:?}", again.elapsed());
    }

    #[tokio::test]
    async fn history_calls_hold_a_permit_and_let_live_calls_pass() {
        let p = Pacing::new(Some(20), 1);
        let held = p.admit(Lane::History, 1).await;
        // The one permit is held: a second history call waits; a live call needs none.
        let second = tokio::spawn({
            let p = p.clone();
            async move {
                let _a = p.admit(Lane::History, 1).await;
                Instant::now()
            }
        });
        tokio::time::sleep(Duration::from_millis(10)).await;
        let live_at = {
            let _l = p.admit(Lane::Live, 1).await;
            Instant::now()
        };
        drop(held);
        let history_at = second.await.expect("joined");
        assert!(live_at < history_at, "the live call went first");
    }

    #[tokio::test]
    async fn precedence_is_bounded() {
        let p = Pacing::new(Some(5), 4);
        // A follower that always waits for the next place (20 calls: five seconds).
        let live = tokio::spawn({
            let p = p.clone();
            async move {
                for _ in 0..20 {
                    let _a = p.admit(Lane::Live, 1).await;
                }
            }
        });
        tokio::time::sleep(Duration::from_millis(10)).await;
        let start = Instant::now();
        let _h = p.admit(Lane::History, 1).await;
        assert!(
            start.elapsed() < Duration::from_millis(1_500),
            "a history call lets two live calls pass, not all: {:?}",
            start.elapsed()
        );
        live.abort();
    }
}
