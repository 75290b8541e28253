//! Operations: what an operator needs around the API, wired in by [`crate::server`].
//!
//! - [`health`]: `GET /healthz` (liveness) and `GET /readyz` (database answers, migrations
//!   current).
//! - [`metrics`]: Prometheus series at `GET /metrics`; the names and labels are listed there.
//! - [`request_id`]: `x-request-id` in and out, and the per-request tracing span.
//! - [`cors`]: cross-origin access, off unless origins are configured.
//! - [`rate_limit`]: per-key token buckets; [`shared_limit`]: the same buckets in Redis, shared
//!   by every API process ([`redis`]: its client); [`key_cache`]: a short-TTL cache of verified
//!   keys.
//!
//! The probes and `/metrics` need no API key. [`ServerOptions`] gathers the settings
//! (`tokenql serve` flags); [`crate::AppState::new`] uses [`ServerOptions::default`] — no
//! CORS, no default rate limit (keys with their own limit are still limited), no key cache —
//! and [`crate::AppState::with_options`] sets others.

pub mod cors;
pub mod health;
pub mod key_cache;
pub mod metrics;
pub mod rate_limit;
pub mod redis;
pub mod request_id;
pub mod shared_limit;

use std::sync::Arc;
use std::time::Duration;

pub use cors::CorsOrigins;
pub use key_cache::KeyCache;
pub use rate_limit::{RateDefaults, RateLimit, RateLimiter};

/// `tokenql serve`'s default key cache TTL.
pub const DEFAULT_KEY_CACHE_TTL: Duration = Duration::from_secs(5);

/// The operational settings of a server.
#[derive(Debug, Clone, Default)]
pub struct ServerOptions {
    /// Origins allowed to call the API from a browser.
    pub cors: CorsOrigins,
    /// The rate limit of keys that do not set their own.
    pub rate_defaults: RateDefaults,
    /// How long a verified key is trusted without asking the database; zero: every request
    /// asks. Revocations and limit changes take effect within this time.
    pub key_cache_ttl: Duration,
    /// Where the rate-limit buckets live: `None`, in this process (the default); or a Redis
    /// server shared by every API process.
    pub rate_limit_store: Option<redis::RedisUrl>,
    /// The prefix of the shared buckets' Redis keys (`PREFIX:rl:KEY_ID`).
    pub rate_limit_prefix: String,
    /// How long a request waits for the shared store before using this process's bucket;
    /// zero means [`shared_limit::DEFAULT_TIMEOUT`].
    pub rate_limit_store_timeout: Duration,
    /// Off-chain settings the API needs: where previews live and the public base URL of their
    /// links.
    pub offchain: crate::offchain::OffchainConfig,
}

/// The operational state shared by every clone of an [`crate::AppState`].
#[derive(Debug, Clone)]
pub struct Ops {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    options: ServerOptions,
    limiter: RateLimiter,
    shared: Option<shared_limit::SharedLimit>,
    keys: KeyCache,
}

impl Ops {
    /// Fresh buckets and an empty key cache; installs the metrics recorder on first use.
    pub fn new(options: ServerOptions) -> Self {
        metrics::handle();
        Self {
            inner: Arc::new(Inner {
                keys: KeyCache::new(options.key_cache_ttl),
                limiter: RateLimiter::new(),
                shared: options.rate_limit_store.clone().map(|url| {
                    let timeout = match options.rate_limit_store_timeout {
                        Duration::ZERO => shared_limit::DEFAULT_TIMEOUT,
                        t => t,
                    };
                    shared_limit::SharedLimit::new(url, &options.rate_limit_prefix, timeout)
                }),
                options,
            }),
        }
    }

    pub fn options(&self) -> &ServerOptions {
        &self.inner.options
    }

    pub fn limiter(&self) -> &RateLimiter {
        &self.inner.limiter
    }

    /// Takes a request from the key's bucket (`limit`; `None` = unlimited): the shared one
    /// when a store is configured and answers, else this process's own. `Err` is the time
    /// until a request would be accepted.
    pub async fn check_rate(&self, key_id: i32, limit: Option<RateLimit>) -> Result<(), Duration> {
        if let (Some(shared), Some(l)) = (&self.inner.shared, limit) {
            if let Ok(verdict) = shared.check(key_id, l).await {
                return verdict;
            }
        }
        self.inner.limiter.check(key_id, limit)
    }

    pub fn keys(&self) -> &KeyCache {
        &self.inner.keys
    }
}

impl Default for Ops {
    fn default() -> Self {
        Self::new(ServerOptions::default())
    }
}
