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

/// What is known of a provider's `eth_getLogs` limits: configured, or named by its refusals.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Limits {
    /// Its largest block range.
    pub range: Option<u64>,
    /// The most logs one answer holds.
    pub results: Option<u64>,
}

/// Pulls a suggested block span out of common provider messages: a range it would accept
/// (Alchemy's "... this block range should work: [0x10, 0x20]", Infura's "Try with this block
/// range [0x10, 0x20]") or its block range limit ([`range_limit_of`]).
pub fn suggested_span(message: &str) -> Option<u64> {
    let m = message.to_ascii_lowercase();
    for key in ["should work: [", "range ["] {
        if let Some(i) = m.find(key) {
            let rest = &m[i + key.len()..];
            let end = rest.find(']')?;
            let mut parts = rest[..end].split(',').map(|p| p.trim());
            let a = parse_num(parts.next()?)?;
            let b = parse_num(parts.next()?)?;
            return b.checked_sub(a).map(|d| d + 1);
        }
    }
    range_limit_of(message)
}

/// The block range limit a refusal names, in the common providers' words: "eth_getLogs is
/// limited to a 10,000 range" (QuickNode), "block range is too wide, max 2000", "exceed maximum
/// block range: 5000", "query exceeds max block range 100000" (geth, reth), "block range
/// limit of 1000". `None` for a limit on results (Alchemy's "up to a 2K block range ... or any
/// block range with a cap of 10K logs" is one: [`results_limit_of`]).
pub fn range_limit_of(message: &str) -> Option<u64> {
    let m = message.to_ascii_lowercase();
    // A limit on what a call returns (results, response size) is not one on its range, even
    // when the refusal also suggests a range (Alchemy's "up to a 2K block range ... or any
    // block range with a cap of 10K logs in the response").
    if m.contains("result") || m.contains("response") {
        return None;
    }
    let keys = [
        "limited to a ",
        "limited to ",
        "block range: ",
        "block range ",
        "max ",
        "maximum ",
        "limit of ",
        "up to a ",
        "up to ",
    ];
    count_after(&m, &keys, |key, at, len| {
        let near = &m[at.saturating_sub(key.len() + 24)..(at + len + 16).min(m.len())];
        near.contains("block") || m[at + len..].trim_start().starts_with("range")
    })
}

/// The limit on results a refusal names: "query returned more than 10000 results" (Infura),
/// "query exceeds max results 20000" (reth), "a cap of 10K logs in the response" (Alchemy).
pub fn results_limit_of(message: &str) -> Option<u64> {
    let m = message.to_ascii_lowercase();
    let keys = ["more than ", "max results ", "cap of ", "limit of "];
    count_after(&m, &keys, |key, at, len| {
        let after = m[at + len..].trim_start();
        key == "max results " || after.starts_with("result") || after.starts_with("log")
    })
}

/// The first count in `m` that follows one of `keys` (in their order) and that `fits(key, at,
/// len)` says is the one (`at`, `len`: where the count is in `m`).
fn count_after(m: &str, keys: &[&str], fits: impl Fn(&str, usize, usize) -> bool) -> Option<u64> {
    for key in keys {
        let mut from = 0;
        while let Some(i) = m[from..].find(key) {
            let at = from + i + key.len();
            from = at;
            if let Some((n, len)) = leading_count(&m[at..]) {
                if fits(key, at, len) {
                    return Some(n);
                }
            }
        }
    }
    None
}

/// A count at the start of `s`: digits with thousands commas, or a `K` suffix ("2K"); with
/// the characters it took.
fn leading_count(s: &str) -> Option<(u64, usize)> {
    let len = s
        .char_indices()
        .take_while(|(i, c)| {
            c.is_ascii_digit()
                || (*c == ',' && s[i + 1..].starts_with(|d: char| d.is_ascii_digit()))
        })
        .map(|(i, c)| i + c.len_utf8())
        .last()?;
    let n: u64 = s[..len].replace(',', "").parse().ok()?;
    match s[len..].chars().next() {
        Some('k') => Some((n.checked_mul(1_000)?, len + 1)),
        _ => Some((n, len)),
    }
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

    #[test]
    fn block_range_limits_in_the_providers_words() {
        for (message, limit) in [
            ("eth_getLogs is limited to a 10,000 range", Some(10_000)),
            ("block range is too wide, max 2000 blocks", Some(2_000)),
            ("exceed maximum block range: 5000", Some(5_000)),
            ("query exceeds max block range 100000", Some(100_000)),
            ("block range limit of 1000 exceeded", Some(1_000)),
            ("query returned more than 10000 results", None),
            (
                "query returned more than 10000 results. Try with this block range [0x10, 0x1f].",
                None,
            ),
            (
                "Log response size exceeded. You can make eth_getLogs requests with up to a 2K \
                 block range and no limit on the response size, or you can request any block \
                 range with a cap of 10K logs in the response. Based on your parameters, this \
                 block range should work: [0x0, 0x7cf]",
                None,
            ),
        ] {
            assert_eq!(range_limit_of(message), limit, "{message}");
        }
        // A range the provider suggests is a span to ask for, not a limit.
        assert_eq!(
            suggested_span(
                "query returned more than 10000 results. Try with this block range [0x10, 0x1f]."
            ),
            Some(16)
        );
        assert_eq!(
            suggested_span("eth_getLogs is limited to a 10,000 range"),
            Some(10_000)
        );
        for (message, limit) in [
            ("query returned more than 10000 results", Some(10_000)),
            (
                "query exceeds max results 20000, retry with the range 1-2",
                Some(20_000),
            ),
            (
                "... or any block range with a cap of 10K logs in the response",
                Some(10_000),
            ),
            ("eth_getLogs is limited to a 10,000 range", None),
        ] {
            assert_eq!(results_limit_of(message), limit, "{message}");
        }
        assert_eq!(leading_count("2k block"), Some((2_000, 2)));
        assert_eq!(leading_count("10,000 range"), Some((10_000, 6)));
        assert_eq!(leading_count("1,2"), Some((12, 3)));
        assert_eq!(leading_count("x"), None);
    }
}
