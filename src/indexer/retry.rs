//! Retries with exponential backoff, jitter and a budget.
//!
//! Transient failures (timeouts, HTTP 429 and 5xx, connection resets, malformed responses) are
//! retried after `base × 2^attempt` (capped at `max_delay`) with ±50 % jitter, until the
//! episode's budget of attempts is spent; then the caller gets the error and decides (the
//! follower pauses and starts a new episode later, so an endpoint that returns is picked up
//! again). An episode is logged once when it starts and once when it ends — never per attempt.

use std::time::Duration;

use tokio::sync::watch;

/// Sleeps `d` unless stopped first; returns true when stopped.
pub async fn pause(stop: &mut watch::Receiver<bool>, d: Duration) -> bool {
    if *stop.borrow() {
        return true;
    }
    tokio::select! {
        _ = tokio::time::sleep(d) => *stop.borrow(),
        _ = stop.changed() => true,
    }
}

/// Backoff parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    pub base: Duration,
    pub max_delay: Duration,
    /// Attempts per episode, the first one included.
    pub max_attempts: u32,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            base: Duration::from_millis(100),
            max_delay: Duration::from_secs(10),
            max_attempts: 8,
        }
    }
}

impl RetryPolicy {
    /// Delay before retry number `attempt` (1-based), with jitter from `rand01` in [0, 1).
    pub fn delay(&self, attempt: u32, rand01: f64) -> Duration {
        let exp = self
            .base
            .saturating_mul(1u32 << attempt.saturating_sub(1).min(16));
        let capped = exp.min(self.max_delay);
        let factor = 0.5 + rand01.clamp(0.0, 1.0);
        capped.mul_f64(factor).min(self.max_delay)
    }
}

/// A cheap random number in [0, 1) for jitter.
pub fn jitter() -> f64 {
    let mut b = [0u8; 8];
    if getrandom::fill(&mut b).is_err() {
        return 0.5;
    }
    (u64::from_le_bytes(b) >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exponential_capped_and_jittered() {
        let p = RetryPolicy {
            base: Duration::from_millis(100),
            max_delay: Duration::from_secs(2),
            max_attempts: 5,
        };
        assert_eq!(p.delay(1, 0.5), Duration::from_millis(100));
        assert_eq!(p.delay(2, 0.5), Duration::from_millis(200));
        assert_eq!(p.delay(3, 0.0), Duration::from_millis(200));
        assert_eq!(p.delay(30, 0.99), Duration::from_secs(2));
        let j = jitter();
        assert!((0.0..1.0).contains(&j));
    }
}
