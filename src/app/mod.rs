//! The application below its adapters: the state every handler shares ([`AppState`]), who is
//! calling ([`authenticate`]: the API key, its cache and its rate limit), where a request's
//! reads go ([`Reader`]), and the settings of a server ([`ServerOptions`]). REST, GraphQL and
//! the operational routes build on it; it knows none of them.
//!
//! - [`rate_limit`]: per-key token buckets; [`shared_limit`]: the same buckets in Redis (the
//!   `redis` crate), shared by every API process; [`key_cache`]: a short-TTL cache of verified
//!   keys (a `moka` cache); [`cors`]: cross-origin access, off unless origins are configured.
//!
//! [`AppState::new`] uses [`ServerOptions::default`] — no CORS, no default rate limit (keys
//! with their own limit are still limited), no key cache — and [`AppState::with_options`] sets
//! others.

pub mod cors;
pub mod key_cache;
pub mod live;
pub mod rate_limit;
pub mod shared_limit;

use std::sync::Arc;
use std::time::Duration;

use axum::http::{header, HeaderMap};
use sea_orm::DatabaseConnection;

use crate::query::QueryService;
use crate::store::replicas::{ReadChoice, Reads};
use crate::telemetry::metrics;

pub use cors::CorsOrigins;
pub use key_cache::KeyCache;
pub use rate_limit::{RateDefaults, RateLimit, RateLimiter};

/// Shared state of every handler.
#[derive(Clone)]
pub struct AppState {
    /// The query service on the primary; a request's reads go through [`Reader`].
    pub service: QueryService,
    /// Rate-limit buckets, the key cache and the operational settings.
    pub ops: Ops,
    /// The primary and the read replicas.
    pub reads: Reads,
    /// Live changes for subscriptions (read from the primary).
    pub live: live::Live,
}

impl AppState {
    /// Builds the state: the query service and the GraphQL schema, with the default
    /// [`ServerOptions`] (no CORS, no default rate limit, no key cache). Does not migrate.
    pub async fn new(
        db: DatabaseConnection,
        config: crate::query::QueryConfig,
    ) -> Result<Self, sea_orm::DbErr> {
        let reads = Reads::primary_only(db.clone());
        let service = QueryService::new(db, config).await?;
        let live = live::Live::new(service.clone(), live::LiveOptions::default());
        Ok(Self {
            service,
            ops: Ops::default(),
            reads,
            live,
        })
    }

    /// The same state reading through `reads` (whose primary must be this state's database).
    pub fn with_reads(mut self, reads: Reads) -> Self {
        self.reads = reads;
        self
    }

    /// The same state with other operational settings (and fresh buckets and key cache).
    pub fn with_options(mut self, options: ServerOptions) -> Self {
        self.live = live::Live::new(self.service.clone(), options.live);
        self.ops = Ops::new(options);
        self
    }

    /// The primary database.
    pub fn db(&self) -> &DatabaseConnection {
        self.service.db()
    }
}

/// The query service reading where this request's reads go (the server's read routing puts
/// a [`ReadChoice`] in the request's extensions).
pub struct Reader(pub QueryService);

impl axum::extract::FromRequestParts<AppState> for Reader {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        Ok(Reader(reader(state, &parts.extensions)))
    }
}

/// The query service for a request with these extensions.
pub fn reader(state: &AppState, extensions: &axum::http::Extensions) -> QueryService {
    match extensions.get::<ReadChoice>() {
        Some(choice) => state.service.reading_from(choice),
        None => state.service.clone(),
    }
}

/// Set on a response whose answer failed on our side (a GraphQL response carries its errors in
/// a 200): the server's read routing then retries a request that failed on a replica on the
/// primary.
#[derive(Debug, Clone, Copy)]
pub struct ReadFailed;

/// Set on a server-error response that is no failure of the database it read from (a `501` for
/// an operation not served, a chain's JSON-RPC endpoint that failed): the server's read routing
/// keeps the replica in rotation and does not ask the primary again.
#[derive(Debug, Clone, Copy)]
pub struct NotAReadFailure;

/// Who made the request: the authenticated key.
#[derive(Debug, Clone)]
pub struct Caller {
    pub key_id: i32,
}

/// Why a request was refused before reaching a handler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthFailure {
    Missing,
    Unknown,
    Unavailable,
    /// The key's bucket is empty; retry after this many seconds (sent as `Retry-After`).
    RateLimited {
        retry_after_secs: u64,
    },
}

impl AuthFailure {
    pub fn message(&self) -> &'static str {
        match self {
            AuthFailure::Missing => "missing API key: send it in the X-API-Key header",
            AuthFailure::Unknown => "invalid API key: unknown or revoked",
            AuthFailure::Unavailable => crate::query::UNAVAILABLE_MESSAGE,
            AuthFailure::RateLimited { .. } => {
                "rate limit exceeded for this API key; retry after the Retry-After delay"
            }
        }
    }
}

/// Checks `X-API-Key` (header names are case-insensitive) and takes a token from the key's
/// rate-limit bucket. An `Authorization: Bearer` header, as the JS SDK also sends, is ignored.
pub async fn authenticate(state: &AppState, headers: &HeaderMap) -> Result<Caller, AuthFailure> {
    let key = headers
        .get("x-api-key")
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|k| !k.is_empty())
        .ok_or(AuthFailure::Missing)?;
    let info = match state.ops.keys().verify(state.db(), key).await {
        Ok(Some(k)) => k,
        Ok(None) => return Err(AuthFailure::Unknown),
        Err(e) => {
            tracing::error!(error = %e, "API key lookup failed");
            return Err(AuthFailure::Unavailable);
        }
    };
    tracing::Span::current().record("key_id", info.id);
    let limit = state.ops.options().rate_defaults.effective(info.rate);
    if let Err(wait) = state.ops.check_rate(info.id, limit).await {
        metrics::rate_limited(info.id);
        return Err(AuthFailure::RateLimited {
            retry_after_secs: rate_limit::retry_after_secs(wait),
        });
    }
    Ok(Caller { key_id: info.id })
}

/// The base URL of preview links for a request: `--public-url`, else `http://{Host}`.
pub fn preview_base(state: &AppState, headers: &HeaderMap) -> String {
    crate::types::media::public_base(
        state.ops.options().offchain.public_url.as_deref(),
        headers.get(header::HOST).and_then(|h| h.to_str().ok()),
    )
}

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
    pub rate_limit_store: Option<shared_limit::RedisUrl>,
    /// The prefix of the shared buckets' Redis keys (`PREFIX:rl:KEY_ID`).
    pub rate_limit_prefix: String,
    /// How long a request waits for the shared store before using this process's bucket;
    /// zero means [`shared_limit::DEFAULT_TIMEOUT`].
    pub rate_limit_store_timeout: Duration,
    /// Off-chain settings the API needs: where previews live and the public base URL of their
    /// links.
    pub offchain: crate::offchain::OffchainConfig,
    /// What the server reads from chains' JSON-RPC endpoints (native balances, block headers),
    /// and for which chains.
    pub chain_reads: crate::query::ChainReads,
    /// Live changes: subscriptions per key, how often the change feed is polled.
    pub live: live::LiveOptions,
    /// Blocks above a transfer's before a webhook delivers it `confirmed` (the replay route
    /// reads it; the delivery worker has its own copy).
    pub webhook_confirmations: crate::query::changes::Confirmations,
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

    /// The settings this server was started with.
    pub fn options(&self) -> &ServerOptions {
        &self.inner.options
    }

    /// This process's own rate-limit buckets.
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

    /// The cache of verified API keys.
    pub fn keys(&self) -> &KeyCache {
        &self.inner.keys
    }
}

impl Default for Ops {
    fn default() -> Self {
        Self::new(ServerOptions::default())
    }
}
