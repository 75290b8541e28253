//! Per-key rate limiting: one token bucket per API key, in memory.
//!
//! A bucket holds up to `burst` tokens and refills continuously at `per_sec` tokens per second;
//! each request takes one. An empty bucket answers "retry after" the time until one token is
//! back, which the adapters send as `Retry-After` in whole seconds, rounded up (REST: 429
//! `{"message"}`; GraphQL: 429 `RATE_LIMITED`).
//!
//! The arithmetic is exact: tokens are counted in billionths (one token is 10^9 units) and time
//! in nanoseconds, so a bucket refilling at `r` per second gains `r` units per nanosecond and
//! never drifts the way a float would.
//!
//! The state lives in the process: each server instance limits on its own, and a restart
//! refills every bucket. A key's limit is [`crate::keys::KeyRate`] over the server's default
//! ([`RateDefaults`]); a change is picked up when the key is next looked up (see
//! [`super::key_cache`]).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::keys::KeyRate;

/// Units of one token.
const TOKEN: u128 = 1_000_000_000;
/// Past this many buckets, full ones (indistinguishable from new ones) are dropped.
const PRUNE_ABOVE: usize = 10_000;

/// An effective limit: `per_sec` > 0 requests per second, bursts of up to `burst` >= 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimit {
    per_sec: u32,
    burst: u32,
}

impl RateLimit {
    /// `None` when `per_sec` is 0 (unlimited); a `burst` of 0 is taken as 1.
    pub fn new(per_sec: u32, burst: u32) -> Option<Self> {
        (per_sec > 0).then_some(Self {
            per_sec,
            burst: burst.max(1),
        })
    }

    pub fn per_sec(&self) -> u32 {
        self.per_sec
    }

    pub fn burst(&self) -> u32 {
        self.burst
    }

    fn capacity(&self) -> u128 {
        u128::from(self.burst) * TOKEN
    }
}

/// The server's defaults for keys that do not set their own limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateDefaults {
    /// Requests per second; 0 = unlimited.
    pub per_sec: u32,
    /// Bucket size; 0 is taken as 1.
    pub burst: u32,
}

impl RateDefaults {
    /// `tokenql serve`'s defaults: 25 requests per second, bursts of 50.
    pub const SERVE: RateDefaults = RateDefaults {
        per_sec: 25,
        burst: 50,
    };
    /// No limit for keys without their own (what [`crate::AppState::new`] uses).
    pub const UNLIMITED: RateDefaults = RateDefaults {
        per_sec: 0,
        burst: 0,
    };

    /// The limit of a key: its own settings, the defaults for what it leaves unset.
    pub fn effective(&self, key: KeyRate) -> Option<RateLimit> {
        RateLimit::new(
            key.per_sec.unwrap_or(self.per_sec),
            key.burst.unwrap_or(self.burst),
        )
    }
}

impl Default for RateDefaults {
    fn default() -> Self {
        Self::UNLIMITED
    }
}

/// One token bucket.
#[derive(Debug, Clone)]
pub struct TokenBucket {
    limit: RateLimit,
    /// Tokens, in units of 1/10^9.
    units: u128,
    updated: Instant,
}

impl TokenBucket {
    /// A full bucket.
    pub fn new(limit: RateLimit, now: Instant) -> Self {
        Self {
            limit,
            units: limit.capacity(),
            updated: now,
        }
    }

    fn refill(&mut self, now: Instant) {
        let elapsed = now.saturating_duration_since(self.updated).as_nanos();
        self.units = self
            .units
            .saturating_add(elapsed.saturating_mul(u128::from(self.limit.per_sec)))
            .min(self.limit.capacity());
        // A clock that stands still or goes back adds nothing and does not move `updated` back.
        if now > self.updated {
            self.updated = now;
        }
    }

    /// Adopts a changed limit, keeping the tokens (up to the new size).
    pub fn set_limit(&mut self, limit: RateLimit, now: Instant) {
        if limit != self.limit {
            self.refill(now);
            self.limit = limit;
            self.units = self.units.min(limit.capacity());
        }
    }

    /// Takes a token, or tells how long until one is available.
    pub fn try_take(&mut self, now: Instant) -> Result<(), Duration> {
        self.refill(now);
        if self.units >= TOKEN {
            self.units -= TOKEN;
            return Ok(());
        }
        let missing = TOKEN - self.units;
        let per_sec = u128::from(self.limit.per_sec);
        let nanos = missing.div_ceil(per_sec);
        Err(Duration::from_nanos(
            u64::try_from(nanos).unwrap_or(u64::MAX),
        ))
    }

    fn is_full(&mut self, now: Instant) -> bool {
        self.refill(now);
        self.units >= self.limit.capacity()
    }
}

/// `Retry-After` for a wait: whole seconds, rounded up, at least 1.
pub fn retry_after_secs(wait: Duration) -> u64 {
    let secs = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
    secs.max(1)
}

/// The buckets of every key seen, by key id.
#[derive(Debug, Default)]
pub struct RateLimiter {
    buckets: Mutex<HashMap<i32, TokenBucket>>,
}

impl RateLimiter {
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes a token from the key's bucket (`None`: unlimited, always `Ok`), or tells how long
    /// until the next request would be accepted.
    pub fn check(&self, key_id: i32, limit: Option<RateLimit>) -> Result<(), Duration> {
        self.check_at(key_id, limit, Instant::now())
    }

    fn check_at(
        &self,
        key_id: i32,
        limit: Option<RateLimit>,
        now: Instant,
    ) -> Result<(), Duration> {
        // The map is only ever left consistent, so a panic elsewhere does not make it unusable.
        let mut buckets = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        let Some(limit) = limit else {
            buckets.remove(&key_id);
            return Ok(());
        };
        if buckets.len() > PRUNE_ABOVE && !buckets.contains_key(&key_id) {
            buckets.retain(|_, b| !b.is_full(now));
        }
        let bucket = buckets
            .entry(key_id)
            .or_insert_with(|| TokenBucket::new(limit, now));
        bucket.set_limit(limit, now);
        bucket.try_take(now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limit(per_sec: u32, burst: u32) -> RateLimit {
        RateLimit::new(per_sec, burst).expect("a limit")
    }

    #[test]
    fn a_full_bucket_serves_its_burst_then_refuses() {
        let t0 = Instant::now();
        let mut b = TokenBucket::new(limit(1, 3), t0);
        for _ in 0..3 {
            assert_eq!(b.try_take(t0), Ok(()));
        }
        assert_eq!(b.try_take(t0), Err(Duration::from_secs(1)));
    }

    #[test]
    fn refills_continuously_and_exactly() {
        let t0 = Instant::now();
        let mut b = TokenBucket::new(limit(4, 1), t0);
        assert_eq!(b.try_take(t0), Ok(()));
        // A quarter second later one token is back, exactly.
        assert_eq!(
            b.try_take(t0 + Duration::from_millis(100)),
            Err(Duration::from_millis(150))
        );
        assert_eq!(b.try_take(t0 + Duration::from_millis(250)), Ok(()));
        // Three refills of a third of a second each, with no float drift.
        let mut b = TokenBucket::new(limit(3, 1), t0);
        let mut t = t0;
        for _ in 0..3000 {
            assert_eq!(b.try_take(t), Ok(()));
            t += Duration::from_nanos(333_333_334);
        }
    }

    #[test]
    fn never_holds_more_than_the_burst() {
        let t0 = Instant::now();
        let mut b = TokenBucket::new(limit(10, 2), t0);
        let later = t0 + Duration::from_secs(3600);
        assert_eq!(b.try_take(later), Ok(()));
        assert_eq!(b.try_take(later), Ok(()));
        assert!(b.try_take(later).is_err());
    }

    #[test]
    fn a_clock_going_back_adds_nothing() {
        let t0 = Instant::now() + Duration::from_secs(10);
        let mut b = TokenBucket::new(limit(1, 1), t0);
        assert_eq!(b.try_take(t0), Ok(()));
        assert!(b.try_take(t0 - Duration::from_secs(5)).is_err());
        assert_eq!(b.try_take(t0 + Duration::from_secs(1)), Ok(()));
    }

    #[test]
    fn a_changed_limit_keeps_tokens_up_to_the_new_size() {
        let t0 = Instant::now();
        let mut b = TokenBucket::new(limit(1, 10), t0);
        b.set_limit(limit(1, 2), t0);
        assert_eq!(b.try_take(t0), Ok(()));
        assert_eq!(b.try_take(t0), Ok(()));
        assert!(b.try_take(t0).is_err());
        b.set_limit(limit(100, 2), t0);
        assert_eq!(b.try_take(t0 + Duration::from_millis(10)), Ok(()));
    }

    #[test]
    fn retry_after_rounds_up() {
        assert_eq!(retry_after_secs(Duration::ZERO), 1);
        assert_eq!(retry_after_secs(Duration::from_millis(1)), 1);
        assert_eq!(retry_after_secs(Duration::from_secs(1)), 1);
        assert_eq!(retry_after_secs(Duration::from_millis(1001)), 2);
        assert_eq!(retry_after_secs(Duration::from_secs(7)), 7);
    }

    #[test]
    fn limits_and_defaults() {
        assert_eq!(RateLimit::new(0, 5), None);
        assert_eq!(RateLimit::new(5, 0).map(|l| l.burst()), Some(1));
        let d = RateDefaults::SERVE;
        assert_eq!(d.effective(KeyRate::default()), Some(limit(25, 50)));
        let own = KeyRate {
            per_sec: Some(1),
            burst: Some(3),
        };
        assert_eq!(d.effective(own), Some(limit(1, 3)));
        let half = KeyRate {
            per_sec: Some(2),
            burst: None,
        };
        assert_eq!(d.effective(half), Some(limit(2, 50)));
        let unlimited = KeyRate {
            per_sec: Some(0),
            burst: None,
        };
        assert_eq!(d.effective(unlimited), None);
        assert_eq!(RateDefaults::UNLIMITED.effective(KeyRate::default()), None);
    }

    #[test]
    fn the_limiter_keeps_one_bucket_per_key() {
        let l = RateLimiter::new();
        let t0 = Instant::now();
        let one = Some(limit(1, 1));
        assert_eq!(l.check_at(1, one, t0), Ok(()));
        assert!(l.check_at(1, one, t0).is_err());
        assert_eq!(
            l.check_at(2, one, t0),
            Ok(()),
            "another key has its own bucket"
        );
        for _ in 0..100 {
            assert_eq!(l.check_at(1, None, t0), Ok(()), "unlimited");
        }
    }
}
