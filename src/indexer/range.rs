//! Adaptive `eth_getLogs` range sizing.
//!
//! Providers refuse ranges that are too wide or return too many results ("query returned more
//! than 10000 results", "block range too large", timeouts). The sizer halves the range on such
//! a refusal and grows it back (×2) after a run of successes, between `min` and `max` blocks.
//! When the provider names a range it would accept, the sizer uses that directly.
//! Both the follower's `RangePlan` and the history fetches' [`RangeSizer`] are [`Shrinking`], so
//! that [`super::shrink::fetch_shrinking`] is the one loop asking again with less while a range
//! is refused.

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
}
