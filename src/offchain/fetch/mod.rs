//! One fetcher for everything a token URI can name: `http(s)://`, `ipfs://` and gateway-style
//! `…/ipfs/<cid>/…` URLs (through the configured gateways, in order), `ar://`, and `data:` URIs.
//!
//! - [`uri`]: what a URI names and the URLs to read it from (gateway rewriting);
//! - [`data_uri`]: `data:` URIs, decoded in place;
//! - [`http`]: one HTTP read: manual redirects, status classification, the size cap enforced
//!   while streaming (a `Content-Length` over the cap is refused before reading; otherwise
//!   reading stops at the first byte past the cap);
//! - [`hosts`]: at most `per_host` fetches in flight to one host.
//!
//! Gateways are tried in order: a transient failure (timeout, connection error, 408/425/429,
//! 5xx) moves on to the next one, anything else is the answer; when every gateway fails the
//! last error is returned. The time limit applies to each request (redirect hop) from
//! connection to last byte; waiting for a host slot does not count.

mod data_uri;
mod hosts;
mod http;
mod uri;

use std::sync::Arc;

use self::hosts::HostLimits;
use self::uri::Target;
use super::OffchainConfig;

/// What a fetch returned.
#[derive(Debug, Clone)]
pub struct Fetched {
    pub bytes: Vec<u8>,
    /// The `Content-Type` (or the `data:` URI's media type), lowercased, without parameters.
    pub content_type: Option<String>,
    /// The URL finally read (after gateway rewriting and redirects); the URI itself for `data:`.
    pub final_url: String,
}

/// Why a fetch failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FetchError {
    /// Not a URI this fetcher understands, or a malformed one (bad `data:` payload included).
    #[error("invalid URL: {0}")]
    InvalidUrl(String),
    /// The host answered that the file is not there or not for us (404, 410, 401, 403, other
    /// 4xx but 408/425/429).
    #[error("HTTP {0}")]
    NotFound(u16),
    /// Larger than the cap.
    #[error("larger than {0} bytes")]
    TooLarge(u64),
    /// More redirects than allowed, or a redirect cycle.
    #[error("too many redirects")]
    Redirects,
    /// Worth trying again later: timeout, connection failure, DNS failure, 408/425/429, 5xx.
    #[error("unavailable: {0}")]
    Unavailable(String),
}

impl FetchError {
    /// Whether a later attempt may succeed.
    pub fn is_transient(&self) -> bool {
        matches!(self, FetchError::Unavailable(_))
    }
}

/// The shared fetcher; cheap to clone.
#[derive(Clone)]
pub struct Fetcher {
    config: Arc<OffchainConfig>,
    /// `None` when the HTTP client could not be built (logged once; every HTTP fetch is then
    /// `Unavailable`).
    client: Option<reqwest::Client>,
    hosts: Arc<HostLimits>,
}

impl std::fmt::Debug for Fetcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fetcher")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl Fetcher {
    pub fn new(config: OffchainConfig) -> Self {
        crate::tls::ensure_crypto_provider();
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(config.timeout)
            .timeout(config.timeout)
            .user_agent(concat!("tokenql/", env!("CARGO_PKG_VERSION")))
            .build()
            .inspect_err(|e| tracing::error!(error = %e, "cannot build the HTTP client; off-chain HTTP fetches will fail"))
            .ok();
        Self {
            hosts: Arc::new(HostLimits::new(config.per_host)),
            config: Arc::new(config),
            client,
        }
    }

    /// The settings it was built with.
    pub fn config(&self) -> &OffchainConfig {
        &self.config
    }

    /// Reads `uri`, refusing more than `max_bytes`.
    pub async fn get(&self, uri: &str, max_bytes: u64) -> Result<Fetched, FetchError> {
        let urls = match uri::target(uri, &self.config)? {
            Target::Data(d) => return data_uri::decode(&d, max_bytes),
            Target::Http(urls) => urls,
        };
        let Some(client) = &self.client else {
            return Err(FetchError::Unavailable("no HTTP client".into()));
        };
        let limits = http::Limits {
            max_bytes,
            max_redirects: self.config.max_redirects,
            timeout: self.config.timeout,
        };
        let mut last = FetchError::Unavailable("no URL to read".into());
        for url in urls {
            match http::get(client, &self.hosts, url, &limits).await {
                Err(e) if e.is_transient() => last = e,
                done => return done,
            }
        }
        Err(last)
    }
}
