//! Adaptive `eth_getLogs` range sizing.
//!
//! Providers refuse ranges that are too wide or return too many results ("query returned more
//! than 10000 results", "block range too large", timeouts). The sizer halves the range on such
//! a refusal and grows it back (×2) after a run of successes, between `min` and `max` blocks.
//! When the provider names a range it would accept, the sizer uses that directly.
//! [`fetch_shrinking`] is the one loop that asks again with less while a range is refused, for
//! the follower (its `RangePlan`) and the history fetches (a [`RangeSizer`]).

use std::future::Future;

use super::rpc::RpcFailure;

/// The range sizer's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RangeSizer {
    current: u64,
    min: u64,
    max: u64,
    successes: u32,
}

/// Successes in a row before the range grows again.
const GROW_AFTER: u32 = 3;

impl RangeSizer {
    pub fn new(initial: u64, min: u64, max: u64) -> Self {
        let min = min.max(1);
        let max = max.max(min);
        Self {
            current: initial.clamp(min, max),
            min,
            max,
            successes: 0,
        }
    }

    /// Blocks to ask for next.
    pub fn size(&self) -> u64 {
        self.current
    }

    /// A range of `span` blocks was refused as too large. Returns false when the range cannot
    /// shrink any further (a single block is too much: the caller must treat it as an error).
    pub fn too_large(&mut self, span: u64, suggested: Option<u64>) -> bool {
        self.successes = 0;
        if span <= self.min {
            return false;
        }
        let next = match suggested {
            Some(s) if s >= self.min && s < span => s,
            _ => (span / 2).max(self.min),
        };
        self.current = next.min(self.current);
        true
    }

    /// A range succeeded.
    pub fn success(&mut self) {
        self.successes += 1;
        if self.successes >= GROW_AFTER {
            self.successes = 0;
            self.current = self.current.saturating_mul(2).min(self.max);
        }
    }
}

/// A range size that a refusal shrinks: the next span to ask for, and what a refusal does to it.
pub trait Shrinking {
    /// Blocks to ask for next (at least one).
    fn next_span(&self) -> u64;

    /// A range of `span` blocks was refused as too large (the provider may suggest a span).
    /// False when it cannot shrink any further: one block is already too much.
    fn shrink(&mut self, span: u64, suggested: Option<u64>) -> bool;
}

impl Shrinking for RangeSizer {
    fn next_span(&self) -> u64 {
        self.size()
    }

    fn shrink(&mut self, span: u64, suggested: Option<u64>) -> bool {
        self.too_large(span, suggested)
    }
}

/// Fetches `[from, at most last]` in the widest range `sizing` allows, asking again with a
/// smaller range while the provider refuses one as too large (a [`RpcFailure::TooLarge`]).
/// Returns the range's last block and what `fetch` returned. A single block refused is a
/// transient failure; any other failure is returned as it is. Telling `sizing` of the success
/// is the caller's (the follower also weighs the logs it got).
pub async fn fetch_shrinking<S, T, F, Fut>(
    sizing: &mut S,
    from: u64,
    last: u64,
    mut fetch: F,
) -> Result<(u64, T), RpcFailure>
where
    S: Shrinking,
    F: FnMut(u64, u64) -> Fut,
    Fut: Future<Output = Result<T, RpcFailure>>,
{
    loop {
        let to = (from + sizing.next_span().max(1) - 1).min(last);
        match fetch(from, to).await {
            Ok(got) => return Ok((to, got)),
            Err(RpcFailure::TooLarge { message, suggested }) => {
                if !sizing.shrink(to - from + 1, suggested) {
                    return Err(RpcFailure::Transient(format!(
                        "even one block is refused: {message}"
                    )));
                }
            }
            Err(e) => return Err(e),
        }
    }
}

/// Pulls a suggested block span out of common provider messages, e.g. Alchemy's
/// "... this block range should work: [0x10, 0x20]" or "block range is too wide, max 2000".
pub fn suggested_span(message: &str) -> Option<u64> {
    let m = message.to_ascii_lowercase();
    if let Some(i) = m.find("should work: [") {
        let rest = &m[i + "should work: [".len()..];
        let end = rest.find(']')?;
        let mut parts = rest[..end].split(',').map(|p| p.trim());
        let a = parse_num(parts.next()?)?;
        let b = parse_num(parts.next()?)?;
        return b.checked_sub(a).map(|d| d + 1);
    }
    for key in ["max ", "maximum ", "limit of ", "up to "] {
        if let Some(i) = m.find(key) {
            let digits: String = m[i + key.len()..]
                .chars()
                .take_while(|c| c.is_ascii_digit())
                .collect();
            if let Ok(n) = digits.parse::<u64>() {
                if m[i..].contains("block") || m.contains("range") {
                    return Some(n);
                }
            }
        }
    }
    None
}

fn parse_num(s: &str) -> Option<u64> {
    match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

/// Whether an RPC error message means "ask for less".
pub fn is_range_error(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    [
        "more than",
        "too many",
        "range too large",
        "range is too large",
        "too wide",
        "exceed",
        "limit",
        "response size",
        "block range",
        "timeout",
        "timed out",
    ]
    .iter()
    .any(|k| m.contains(k))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shrinks_on_refusal_and_grows_back() {
        let mut r = RangeSizer::new(1000, 1, 10_000);
        assert!(r.too_large(1000, None));
        assert_eq!(r.size(), 500);
        assert!(r.too_large(500, Some(100)));
        assert_eq!(r.size(), 100);
        for _ in 0..3 {
            r.success();
        }
        assert_eq!(r.size(), 200);
        for _ in 0..100 {
            r.success();
        }
        assert_eq!(r.size(), 10_000);
    }

    #[test]
    fn one_block_cannot_shrink() {
        let mut r = RangeSizer::new(1, 1, 100);
        assert!(!r.too_large(1, None));
    }

    #[test]
    fn provider_messages() {
        assert!(is_range_error("query returned more than 10000 results"));
        assert!(is_range_error(
            "Log response size exceeded. this block range should work: [0x1, 0x64]"
        ));
        assert!(!is_range_error(
            "invalid argument 0: hex string without 0x prefix"
        ));
        assert_eq!(
            suggested_span("this block range should work: [0x1, 0x64]"),
            Some(100)
        );
        assert_eq!(
            suggested_span("block range is too wide, max 2000 blocks"),
            Some(2000)
        );
        assert_eq!(
            suggested_span("query returned more than 10000 results"),
            None
        );
    }

    /// A provider that refuses any range wider than `max` blocks, suggesting `suggest`; it
    /// records the ranges asked for and answers with the range's width.
    fn provider(
        max: u64,
        suggest: Option<u64>,
        asked: &mut Vec<(u64, u64)>,
    ) -> impl FnMut(u64, u64) -> std::future::Ready<Result<u64, RpcFailure>> + '_ {
        move |from, to| {
            asked.push((from, to));
            std::future::ready(if to - from + 1 > max {
                Err(RpcFailure::TooLarge {
                    message: "block range too large".into(),
                    suggested: suggest,
                })
            } else {
                Ok(to - from + 1)
            })
        }
    }

    #[tokio::test]
    async fn a_refused_range_is_asked_again_smaller() {
        let mut sizer = RangeSizer::new(1000, 1, 10_000);
        let mut asked = vec![];
        let got = fetch_shrinking(&mut sizer, 100, 5_000, provider(300, None, &mut asked)).await;
        assert_eq!(got.expect("fetched"), (349, 250));
        assert_eq!(asked, [(100, 1099), (100, 599), (100, 349)]);
        assert_eq!(
            sizer.size(),
            250,
            "the next range starts from the size accepted"
        );

        // A suggested span is taken as it is; the range never passes `last`.
        let mut sizer = RangeSizer::new(1000, 1, 10_000);
        let mut asked = vec![];
        let got = fetch_shrinking(&mut sizer, 0, 49, provider(30, Some(20), &mut asked)).await;
        assert_eq!(got.expect("fetched"), (19, 20));
        assert_eq!(asked, [(0, 49), (0, 19)]);
    }

    #[tokio::test]
    async fn a_single_block_refused_is_an_error() {
        let mut sizer = RangeSizer::new(8, 1, 8);
        let mut asked = vec![];
        let got = fetch_shrinking(&mut sizer, 10, 100, provider(0, None, &mut asked)).await;
        match got {
            Err(RpcFailure::Transient(m)) => {
                assert_eq!(m, "even one block is refused: block range too large")
            }
            other => panic!("expected a transient failure, got {other:?}"),
        }
        assert_eq!(asked, [(10, 17), (10, 13), (10, 11), (10, 10)]);
    }

    #[tokio::test]
    async fn other_failures_are_returned_at_once() {
        let mut sizer = RangeSizer::new(8, 1, 8);
        let mut calls = 0;
        let got: Result<(u64, ()), _> = fetch_shrinking(&mut sizer, 0, 100, |_, _| {
            calls += 1;
            std::future::ready(Err(RpcFailure::Permanent("no".into())))
        })
        .await;
        assert!(matches!(got, Err(RpcFailure::Permanent(_))));
        assert_eq!((calls, sizer.size()), (1, 8));
    }
}
