//! Cross-origin access for browser clients, off by default.
//!
//! `tokenql serve --cors-origin ORIGIN` (repeatable; or `TOKENQL_CORS_ORIGINS`, comma-separated)
//! lets pages of those origins call the API; `*` lets any origin. Without it, no CORS header is
//! ever sent and browsers keep cross-origin pages out.
//!
//! Allowed: `GET`, `POST`, `OPTIONS`; request headers `X-API-Key`, `Authorization`,
//! `Content-Type`, `X-Request-Id`. Exposed to scripts: `Deprecation`, `Retry-After`,
//! `X-Request-Id`. No credentials (cookies) are involved: the key travels in a header.

use std::time::Duration;

use axum::http::{header, HeaderName, HeaderValue, Method};
use axum::Router;
use tower_http::cors::{AllowOrigin, CorsLayer};

use crate::app::AppState;

/// Which origins may call the API from a browser.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum CorsOrigins {
    /// No CORS headers (the default).
    #[default]
    Off,
    /// Any origin (`*`).
    Any,
    /// These origins, exactly.
    List(Vec<HeaderValue>),
}

impl CorsOrigins {
    /// Parses configured origins: `*`, or `scheme://host[:port]` without a path. Empty entries
    /// are ignored; nothing at all means [`CorsOrigins::Off`].
    pub fn parse<S: AsRef<str>>(origins: &[S]) -> Result<Self, String> {
        let mut list = Vec::new();
        let mut any = false;
        for o in origins.iter().map(|o| o.as_ref().trim()) {
            if o.is_empty() {
                continue;
            }
            if o == "*" {
                any = true;
                continue;
            }
            list.push(parse_origin(o)?);
        }
        Ok(if any {
            CorsOrigins::Any
        } else if list.is_empty() {
            CorsOrigins::Off
        } else {
            CorsOrigins::List(list)
        })
    }

    /// The layer, if CORS is on.
    pub fn layer(&self) -> Option<CorsLayer> {
        let origin = match self {
            CorsOrigins::Off => return None,
            CorsOrigins::Any => AllowOrigin::any(),
            CorsOrigins::List(l) => AllowOrigin::list(l.iter().cloned()),
        };
        Some(
            CorsLayer::new()
                .allow_origin(origin)
                .allow_methods([Method::GET, Method::POST, Method::OPTIONS])
                .allow_headers([
                    HeaderName::from_static("x-api-key"),
                    header::AUTHORIZATION,
                    header::CONTENT_TYPE,
                    crate::telemetry::REQUEST_ID_HEADER,
                ])
                .expose_headers([
                    HeaderName::from_static("deprecation"),
                    header::RETRY_AFTER,
                    crate::telemetry::REQUEST_ID_HEADER,
                ])
                .max_age(Duration::from_secs(3600)),
        )
    }
}

fn parse_origin(o: &str) -> Result<HeaderValue, String> {
    let bad = |why: &str| {
        format!("CORS origin '{o}': {why}; expected `*` or scheme://host[:port], e.g. https://app.example.com")
    };
    let (scheme, rest) = o.split_once("://").ok_or_else(|| bad("no scheme"))?;
    if scheme.is_empty()
        || !scheme
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b))
    {
        return Err(bad("bad scheme"));
    }
    if rest.is_empty() {
        return Err(bad("no host"));
    }
    if rest.contains('/') {
        return Err(bad("an origin has no path, not even a trailing slash"));
    }
    if !o.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(bad("unexpected characters"));
    }
    HeaderValue::from_str(o).map_err(|_| bad("unexpected characters"))
}

/// Adds the CORS layer to every route of `router` when CORS is on.
pub fn apply(router: Router<AppState>, origins: &CorsOrigins) -> Router<AppState> {
    match origins.layer() {
        Some(layer) => router.layer(layer),
        None => router,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_origins() {
        assert_eq!(CorsOrigins::parse::<&str>(&[]), Ok(CorsOrigins::Off));
        assert_eq!(CorsOrigins::parse(&["", " "]), Ok(CorsOrigins::Off));
        assert_eq!(
            CorsOrigins::parse(&["https://a.example", "*"]),
            Ok(CorsOrigins::Any)
        );
        assert_eq!(
            CorsOrigins::parse(&["https://a.example", "http://localhost:3000"]),
            Ok(CorsOrigins::List(vec![
                HeaderValue::from_static("https://a.example"),
                HeaderValue::from_static("http://localhost:3000"),
            ]))
        );
        for bad in [
            "a.example",
            "https://a.example/",
            "https://",
            "https://a b",
            "://x",
        ] {
            let e = CorsOrigins::parse(&[bad]).expect_err(bad);
            assert!(e.contains(bad), "{e}");
        }
    }
}
