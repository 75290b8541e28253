//! Request ids and the per-request tracing span.
//!
//! Every request gets an `x-request-id`: the client's own when it is usable (1 to
//! [`MAX_LEN`] visible ASCII characters), otherwise a fresh UUID v4. The id is echoed in the
//! response, and every log line written while serving the request carries it, in a `request`
//! span with `request_id`, `method`, `route` (the matched pattern) and, once the API key is
//! checked, `key_id`.

use axum::body::Body;
use axum::extract::{MatchedPath, Request};
use axum::Router;
use tower::ServiceBuilder;
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::trace::TraceLayer;

use crate::app::AppState;

/// The header carrying the id, both ways.
pub use crate::telemetry::REQUEST_ID_HEADER as HEADER;

/// The longest client-supplied id kept.
pub const MAX_LEN: usize = 128;

/// Whether a client-supplied id is kept as it is.
pub fn usable(id: &[u8]) -> bool {
    !id.is_empty() && id.len() <= MAX_LEN && id.iter().all(|b| b.is_ascii_graphic())
}

/// Drops an unusable client id, so that a fresh one replaces it.
async fn drop_unusable(mut req: Request) -> Request {
    let bad = req
        .headers()
        .get_all(&HEADER)
        .iter()
        .enumerate()
        .any(|(i, v)| i > 0 || !usable(v.as_bytes()));
    if bad {
        req.headers_mut().remove(&HEADER);
    }
    req
}

fn span(req: &Request<Body>) -> tracing::Span {
    let id = req
        .headers()
        .get(&HEADER)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("-");
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map_or("unmatched", |p| p.as_str());
    tracing::info_span!(
        "request",
        request_id = %id,
        method = %req.method(),
        route = %route,
        key_id = tracing::field::Empty,
    )
}

/// Wraps every route of `router`: set (or keep) the id, open the span, echo the id.
pub fn apply(router: Router<AppState>) -> Router<AppState> {
    router.layer(
        ServiceBuilder::new()
            .layer(axum::middleware::map_request(drop_unusable))
            .layer(SetRequestIdLayer::new(HEADER, MakeRequestUuid))
            .layer(PropagateRequestIdLayer::new(HEADER))
            // Errors are logged once, where they are mapped to an answer; not again here.
            .layer(
                TraceLayer::new_for_http()
                    .make_span_with(span)
                    .on_failure(()),
            ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usable_ids() {
        assert!(usable(b"abc-123"));
        assert!(usable(&[b'a'; MAX_LEN]));
        assert!(!usable(&[b'a'; MAX_LEN + 1]));
        assert!(!usable(b""));
        assert!(!usable(b"with space"));
        assert!(!usable(b"line\nbreak"));
        assert!(!usable("é".as_bytes()));
    }
}
