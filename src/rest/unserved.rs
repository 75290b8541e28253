//! The Moralis operations tokenql does not serve ([`super::operations`]): each at its real
//! path and method, answering `501` with a `{"message"}` that names the operation and the
//! reason, never a bare 404. Another method on such a path is a 405, as on every route.
//!
//! Path parameters are renamed by position for the router (whose sibling parameters must share
//! a name), so that these routes sit beside the served ones (`/{address}/nft`,
//! `/nft/{address}/{token_id}/owners`) without a conflict; static segments win over
//! parameters, so no served route is shadowed. A route whose first segment is a parameter
//! (`/{address}`, `/{pair_address}/reserves`) answers its `501` only when that segment is an
//! address; anything else there is the usual 404.

use axum::http::Uri;
use axum::routing::{on, MethodFilter};
use axum::Router;

use super::error::ApiError;
use super::operations::{Operation, Support, OPERATIONS};
use crate::app::AppState;
use crate::types::Address;

/// The router's pattern of a Moralis path: the parameter at position `i` is named `address`
/// (positions 0 and 1; `p1` under a leading parameter), `token_id` (position 2) or `p{i}`.
pub fn route_pattern(path: &str) -> String {
    let segments: Vec<&str> = path.split('/').skip(1).collect();
    let param = |s: &str| s.starts_with('{');
    segments
        .iter()
        .enumerate()
        .map(|(i, s)| {
            if !param(s) {
                return format!("/{s}");
            }
            let name = match i {
                0 => "address".to_string(),
                1 if !param(segments[0]) => "address".to_string(),
                2 => "token_id".to_string(),
                _ => format!("p{i}"),
            };
            format!("/{{{name}}}")
        })
        .collect()
}

/// The answer of an operation that is not served: `501`, or `404` when the path's leading
/// parameter is not an address.
fn answer(op: &'static Operation, uri: &Uri) -> ApiError {
    if op.path.starts_with("/{") {
        let first = uri.path().split('/').nth(1).unwrap_or_default();
        if Address::parse(first).is_err() {
            return ApiError::NotFound("no such route");
        }
    }
    ApiError::NotServed(op.not_served_message())
}

/// The method filter of `method`.
fn filter(method: &str) -> MethodFilter {
    match method {
        "POST" => MethodFilter::POST,
        "PUT" => MethodFilter::PUT,
        _ => MethodFilter::GET,
    }
}

/// A `501` route for every operation that is not served.
pub fn router() -> Router<AppState> {
    let mut router = Router::new();
    for op in OPERATIONS.iter().filter(|o| o.support != Support::Served) {
        let handler = move |uri: Uri| async move { answer(op, &uri) };
        router = router.route(
            &route_pattern(op.path),
            on(filter(op.method), handler).fallback(super::method_not_allowed),
        );
    }
    router
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_are_named_by_position() {
        assert_eq!(
            route_pattern("/{pair_address}/reserves"),
            "/{address}/reserves"
        );
        assert_eq!(
            route_pattern("/{token0_address}/{token1_address}/pairAddress"),
            "/{address}/{p1}/pairAddress"
        );
        assert_eq!(route_pattern("/resolve/{domain}"), "/resolve/{address}");
        assert_eq!(
            route_pattern("/wallets/{address}/defi/{protocol}/positions"),
            "/wallets/{address}/defi/{p3}/positions"
        );
        assert_eq!(
            route_pattern("/nft/{address}/{token_id}"),
            "/nft/{address}/{token_id}"
        );
    }
}
