//! Outcomes of a metadata fetch and when to try again.

use std::time::Duration;

use crate::offchain::fetch::FetchError;

/// The outcome of the last metadata fetch, stored in `nft_tokens.metadata_status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FetchStatus {
    /// Fetched and stored.
    Ok,
    /// The token URI is not one we can read (empty, relative, unknown scheme, bad `data:`).
    InvalidUri,
    /// The host answered 404, 410, 401, 403 or another 4xx (but 408/425/429).
    NotFound,
    /// Larger than `--max-metadata-bytes`.
    TooLarge,
    /// A redirect loop, or more redirects than allowed.
    Redirects,
    /// Read, but not a JSON object.
    InvalidJson,
    /// Timeout, connection or DNS failure, 408/425/429, 5xx: transient.
    Unavailable,
}

impl FetchStatus {
    /// The stored text.
    pub fn as_str(self) -> &'static str {
        match self {
            FetchStatus::Ok => "ok",
            FetchStatus::InvalidUri => "invalid_uri",
            FetchStatus::NotFound => "not_found",
            FetchStatus::TooLarge => "too_large",
            FetchStatus::Redirects => "redirects",
            FetchStatus::InvalidJson => "invalid_json",
            FetchStatus::Unavailable => "unavailable",
        }
    }

    /// Whether a retry soon may succeed (backoff), or the failure is likely to stay (a day).
    pub fn is_transient(self) -> bool {
        self == FetchStatus::Unavailable
    }
}

impl From<&FetchError> for FetchStatus {
    fn from(e: &FetchError) -> Self {
        match e {
            FetchError::InvalidUrl(_) => FetchStatus::InvalidUri,
            FetchError::NotFound(_) => FetchStatus::NotFound,
            FetchError::TooLarge(_) => FetchStatus::TooLarge,
            FetchError::Redirects => FetchStatus::Redirects,
            FetchError::Unavailable(_) => FetchStatus::Unavailable,
        }
    }
}

/// Retry timing of the metadata worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Schedule {
    /// First delay after a transient failure; doubles with each further failure.
    pub retry_base: Duration,
    /// Longest delay after transient failures.
    pub retry_cap: Duration,
    /// Delay after a permanent failure (the file may still appear, or the URI be fixed).
    pub permanent_retry: Duration,
    /// How long a claimed token is reserved for the process that claimed it; past it, another
    /// process may take it (the first one died).
    pub lease: Duration,
}

impl Default for Schedule {
    fn default() -> Self {
        Self {
            retry_base: Duration::from_secs(60),
            retry_cap: Duration::from_secs(6 * 3600),
            permanent_retry: Duration::from_secs(24 * 3600),
            lease: Duration::from_secs(300),
        }
    }
}

impl Schedule {
    /// The delay before the next attempt after `attempts` failures in a row (at least 1) ending
    /// in `status`, before jitter.
    pub fn delay(&self, status: FetchStatus, attempts: u32) -> Duration {
        if !status.is_transient() {
            return self.permanent_retry;
        }
        let doublings = attempts.saturating_sub(1).min(30);
        self.retry_base
            .saturating_mul(1u32 << doublings)
            .min(self.retry_cap)
    }

    /// [`Self::delay`] plus up to 10 % random jitter (`random` in `0..u64::MAX`), so tokens that
    /// failed together are not retried together.
    pub fn next_delay(&self, status: FetchStatus, attempts: u32, random: u64) -> Duration {
        let d = self.delay(status, attempts);
        let span = (d.as_millis() as u64 / 10).max(1);
        d + Duration::from_millis(random % span)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_map_to_statuses() {
        let cases = [
            (FetchError::InvalidUrl("x".into()), "invalid_uri", false),
            (FetchError::NotFound(404), "not_found", false),
            (FetchError::TooLarge(10), "too_large", false),
            (FetchError::Redirects, "redirects", false),
            (FetchError::Unavailable("x".into()), "unavailable", true),
        ];
        for (e, s, transient) in cases {
            let st = FetchStatus::from(&e);
            assert_eq!(st.as_str(), s);
            assert_eq!(st.is_transient(), transient);
            assert_eq!(e.is_transient(), transient);
        }
        assert_eq!(FetchStatus::InvalidJson.as_str(), "invalid_json");
        assert!(!FetchStatus::InvalidJson.is_transient());
    }

    #[test]
    fn transient_backoff_doubles_to_the_cap() {
        let s = Schedule::default();
        let u = FetchStatus::Unavailable;
        let mins: Vec<u64> = (1..=12).map(|a| s.delay(u, a).as_secs() / 60).collect();
        assert_eq!(mins, [1, 2, 4, 8, 16, 32, 64, 128, 256, 360, 360, 360]);
        assert_eq!(s.delay(u, 0), Duration::from_secs(60));
        assert_eq!(s.delay(u, u32::MAX), Duration::from_secs(6 * 3600));
    }

    #[test]
    fn permanent_failures_wait_a_day() {
        let s = Schedule::default();
        for st in [
            FetchStatus::InvalidUri,
            FetchStatus::NotFound,
            FetchStatus::TooLarge,
            FetchStatus::Redirects,
            FetchStatus::InvalidJson,
        ] {
            assert_eq!(s.delay(st, 1), Duration::from_secs(86_400));
            assert_eq!(s.delay(st, 9), Duration::from_secs(86_400));
        }
    }

    #[test]
    fn jitter_is_at_most_a_tenth() {
        let s = Schedule::default();
        for r in [0, 1, 5_999, 6_000, u64::MAX] {
            let d = s.next_delay(FetchStatus::Unavailable, 1, r);
            assert!(
                d >= Duration::from_secs(60) && d < Duration::from_secs(66),
                "{d:?}"
            );
        }
    }
}
