//! The ranges a history fetch asks for: as wide as the provider allows, several at once, handed
//! back in order.
//!
//! The first range is the whole history left when no block range limit is known (a provider
//! that limits only what a call returns answers a wallet's history in one call per filter), or
//! the provider's limit. Up to `ahead` ranges are in flight at once (the endpoint's pacing
//! bounds the calls, [`super::pacing`]); they are handed back in block order, so that the
//! caller stores them in order and its progress only ever covers stored ranges. A range refused
//! for its width (the refusal names a block range limit) cancels the ranges planned after it
//! (they are as wide) and the plan starts again from it in ranges of that limit; a range refused
//! for its results is split where the provider suggests (or in half), the ranges after it
//! standing. When the provider limits results, the next span is sized from the last one's
//! density of logs to hold four fifths of the limit (logs are bursty: a span sized in blocks
//! alone would crawl through quiet stretches in tiny ranges); otherwise it doubles.

use std::collections::VecDeque;
use std::future::Future;

use tokio::task::JoinHandle;

use super::range::Limits;
use super::rpc::RpcFailure;

/// The ranges of `[from, end)` still to hand back.
#[derive(Debug)]
pub struct Plan<T> {
    next_from: u64,
    end: u64,
    /// The span of the next range planned, in blocks.
    span: u64,
    ahead: usize,
    in_flight: VecDeque<InFlight<T>>,
}

/// What a fetched range weighs against a limit on results.
pub trait Weighed {
    /// Its logs.
    fn weight(&self) -> u64;
}

impl<T> Weighed for Vec<T> {
    fn weight(&self) -> u64 {
        self.len() as u64
    }
}

/// One range being fetched.
#[derive(Debug)]
struct InFlight<T> {
    from: u64,
    to: u64,
    task: JoinHandle<Result<T, RpcFailure>>,
}

impl<T: Weighed + Send + 'static> Plan<T> {
    /// A plan of `[from, end)` in ranges within `limits` (none: the whole of it at first),
    /// `ahead` of them in flight at once.
    pub fn new(from: u64, end: u64, limits: Limits, ahead: usize) -> Self {
        let whole = end.saturating_sub(from).max(1);
        Self {
            next_from: from,
            end,
            span: limits.range.unwrap_or(whole).clamp(1, whole),
            ahead: ahead.max(1),
            in_flight: VecDeque::new(),
        }
    }

    /// The next range in block order, fetched by `fetch(from, to)`: `(from, to, what it
    /// returned)`; `None` once `[from, end)` is all handed back. `limits` are the provider's
    /// as known now.
    pub async fn next<F, Fut>(
        &mut self,
        fetch: &F,
        limits: impl Fn() -> Limits,
    ) -> Option<Result<(u64, u64, T), RpcFailure>>
    where
        F: Fn(u64, u64) -> Fut,
        Fut: Future<Output = Result<T, RpcFailure>> + Send + 'static,
    {
        loop {
            self.fill(fetch, limits().range);
            let InFlight { from, to, task } = self.in_flight.pop_front()?;
            let got = task
                .await
                .unwrap_or_else(|e| Err(RpcFailure::Transient(format!("range fetch: {e}"))));
            let span = to - from + 1;
            match got {
                Ok(v) => {
                    self.span = next_span(span, v.weight(), limits().results);
                    return Some(Ok((from, to, v)));
                }
                Err(RpcFailure::TooLarge { message, suggested }) => {
                    if span <= 1 {
                        self.cancel();
                        return Some(Err(RpcFailure::Transient(format!(
                            "even one block is refused: {message}"
                        ))));
                    }
                    let range = limits().range.filter(|l| *l < span);
                    if let Some(limit) = range {
                        // Every range in flight is as wide: plan again from here.
                        self.cancel();
                        self.span = limit;
                        self.next_from = from;
                        continue;
                    }
                    // Too many results: split this range where the provider suggests (or in
                    // half); the ranges after it stand.
                    let cut = suggested.filter(|s| *s < span).unwrap_or(span / 2).max(1);
                    self.span = self.span.min(cut);
                    for (a, b) in [(from + cut, to), (from, from + cut - 1)] {
                        let task = tokio::spawn(fetch(a, b));
                        self.in_flight.push_front(InFlight {
                            from: a,
                            to: b,
                            task,
                        });
                    }
                }
                Err(e) => {
                    self.cancel();
                    return Some(Err(e));
                }
            }
        }
    }

    /// Whether the next range is fetched already (so that the caller may store it with the one
    /// it holds, in one write).
    pub fn next_is_ready(&self) -> bool {
        self.in_flight.front().is_some_and(|f| f.task.is_finished())
    }

    /// Starts ranges until `ahead` are in flight or the plan is all started.
    fn fill<F, Fut>(&mut self, fetch: &F, limit: Option<u64>)
    where
        F: Fn(u64, u64) -> Fut,
        Fut: Future<Output = Result<T, RpcFailure>> + Send + 'static,
    {
        while self.in_flight.len() < self.ahead && self.next_from < self.end {
            let span = self.span.min(limit.unwrap_or(u64::MAX)).max(1);
            let from = self.next_from;
            let to = from.saturating_add(span - 1).min(self.end - 1);
            let task = tokio::spawn(fetch(from, to));
            self.in_flight.push_back(InFlight { from, to, task });
            self.next_from = to + 1;
        }
    }

    /// Cancels every range in flight.
    fn cancel(&mut self) {
        for f in self.in_flight.drain(..) {
            f.task.abort();
        }
    }
}

/// The span after a range of `span` blocks that held `weight` logs: sized to four fifths of
/// the provider's limit on results by the range's density (at most four times as wide), or
/// twice as wide when it limits none.
fn next_span(span: u64, weight: u64, results: Option<u64>) -> u64 {
    let Some(limit) = results else {
        return span.saturating_mul(2);
    };
    let widest = span.saturating_mul(4);
    let target = u128::from(limit) * 4 / 5;
    match weight {
        0 => widest,
        w => (u128::from(span) * target / u128::from(w)).clamp(1, u128::from(widest)) as u64,
    }
}

impl<T> Drop for Plan<T> {
    fn drop(&mut self) {
        for f in &self.in_flight {
            f.task.abort();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// The blocks of a test chain that hold a log (one each).
    type Logs = Arc<Vec<u64>>;

    /// A provider over `logs` that refuses ranges wider than `max_range` blocks (naming its
    /// limit when `named`) or holding more than `max_results` logs (suggesting the widest range
    /// from `from` that holds at most that many); it records the ranges asked for and answers
    /// with the blocks of the logs in the range.
    fn provider(
        logs: Logs,
        max_range: u64,
        named: bool,
        max_results: usize,
        asked: Arc<Mutex<Vec<(u64, u64)>>>,
    ) -> impl Fn(u64, u64) -> std::future::Ready<Result<Vec<u64>, RpcFailure>> {
        move |from, to| {
            asked.lock().unwrap().push((from, to));
            let inside: Vec<u64> = logs
                .iter()
                .copied()
                .filter(|b| (from..=to).contains(b))
                .collect();
            std::future::ready(if to - from + 1 > max_range {
                Err(RpcFailure::TooLarge {
                    message: "too large".into(),
                    suggested: named.then_some(max_range),
                })
            } else if inside.len() > max_results {
                Err(RpcFailure::TooLarge {
                    message: format!("query returned more than {max_results} results"),
                    suggested: Some(inside[max_results] - from),
                })
            } else {
                Ok(inside)
            })
        }
    }

    /// Every range of the plan: the ranges handed back (each checked to follow the last).
    async fn drain(
        plan: &mut Plan<Vec<u64>>,
        fetch: &impl Fn(u64, u64) -> std::future::Ready<Result<Vec<u64>, RpcFailure>>,
        limits: Limits,
        from: u64,
    ) -> Vec<(u64, u64)> {
        let mut out: Vec<(u64, u64)> = Vec::new();
        let mut next = from;
        while let Some(r) = plan.next(fetch, || limits).await {
            let (from, to, _) = r.expect("fetched");
            assert_eq!(from, next, "in order, no gap");
            next = to + 1;
            out.push((from, to));
        }
        out
    }

    fn chain(blocks: impl IntoIterator<Item = u64>) -> Logs {
        Arc::new(blocks.into_iter().collect())
    }

    #[tokio::test]
    async fn without_a_limit_the_whole_history_is_one_range() {
        let asked = Arc::default();
        let fetch = provider(
            chain([7, 9]),
            u64::MAX,
            false,
            usize::MAX,
            Arc::clone(&asked),
        );
        let mut plan = Plan::new(5, 200_000, Limits::default(), 4);
        let got = drain(&mut plan, &fetch, Limits::default(), 5).await;
        assert_eq!(got, [(5, 199_999)]);
        assert_eq!(asked.lock().unwrap().len(), 1);
    }

    #[tokio::test]
    async fn a_known_limit_plans_ranges_of_it_in_order() {
        let asked = Arc::default();
        let fetch = provider(chain([]), 2_000, true, usize::MAX, Arc::clone(&asked));
        let limits = Limits {
            range: Some(2_000),
            results: None,
        };
        let mut plan = Plan::new(0, 9_000, limits, 3);
        let got = drain(&mut plan, &fetch, limits, 0).await;
        assert_eq!(got.len(), 5);
        assert_eq!(got[4], (8_000, 8_999));
        assert_eq!(asked.lock().unwrap().len(), 5, "no call refused");
    }

    #[tokio::test]
    async fn a_refusal_starts_again_from_the_refused_range_smaller() {
        let asked: Arc<Mutex<Vec<(u64, u64)>>> = Arc::default();
        let fetch = provider(chain([]), 1_000, false, usize::MAX, Arc::clone(&asked));
        let mut plan = Plan::new(0, 3_000, Limits::default(), 2);
        let got = drain(&mut plan, &fetch, Limits::default(), 0).await;
        assert!(got.iter().all(|(f, t)| t - f < 1_000), "{got:?}");
        assert_eq!(got.last().map(|r| r.1), Some(2_999));
        assert_eq!(
            asked.lock().unwrap()[0],
            (0, 2_999),
            "the whole range first"
        );
    }

    #[tokio::test]
    async fn under_a_limit_on_results_spans_follow_the_density_of_logs() {
        // Bursts of 30 logs in one block each, 10,000 blocks apart: 300 logs in all.
        let logs = chain((0..10).flat_map(|i| std::iter::repeat_n(i * 10_000 + 5, 30)));
        let asked: Arc<Mutex<Vec<(u64, u64)>>> = Arc::default();
        let fetch = provider(logs, u64::MAX, false, 100, Arc::clone(&asked));
        let limits = Limits {
            range: None,
            results: Some(100),
        };
        let mut plan = Plan::new(0, 100_000, Limits::default(), 4);
        drain(&mut plan, &fetch, limits, 0).await;
        let calls = asked.lock().unwrap().len();
        // At the fewest: four ranges of at most 100 logs (three bursts each).
        assert!(calls <= 12, "{calls} calls: {:?}", asked.lock().unwrap());
    }

    #[tokio::test]
    async fn one_block_refused_is_a_failure() {
        let fetch = provider(chain([]), 0, false, usize::MAX, Arc::default());
        let mut plan = Plan::new(0, 10, Limits::default(), 1);
        let r = plan.next(&fetch, Limits::default).await.expect("an answer");
        assert!(matches!(r, Err(RpcFailure::Transient(_))), "{r:?}");
    }

    #[tokio::test]
    async fn a_fetched_range_is_ready() {
        let fetch = provider(chain([]), u64::MAX, false, usize::MAX, Arc::default());
        let limits = Limits {
            range: Some(10),
            results: None,
        };
        let mut plan = Plan::new(0, 100, limits, 3);
        assert!(!plan.next_is_ready(), "nothing started");
        let first = plan.next(&fetch, || limits).await.expect("a range");
        assert_eq!(first.expect("fetched").1, 9);
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        assert!(
            plan.next_is_ready(),
            "the ranges after it were fetched meanwhile"
        );
    }
}
