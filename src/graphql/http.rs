//! The HTTP face of the schema: `POST /graphql`, `GET /graphql?query=...`, and the GraphiQL page
//! (`GET /playground`, and `GET /graphql` from a browser) with its assets
//! (`GET /playground/assets/...`), all compiled into the binary: the page loads nothing from
//! another host.
//!
//! Every execution needs a valid `X-API-Key` ([`crate::app::authenticate`]); the check comes
//! before the body is read. Statuses follow [`super::error::http_status`].

use std::sync::Arc;

use async_graphql::Response as GqlResponse;
use axum::body::Body;
use axum::extract::{Path, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use axum::Extension;

use super::error::{error_response, http_status, Code};
use super::Executor;
use crate::app::{authenticate, AppState, AuthFailure, Caller, ReadFailed};
use crate::graphql::fast_path::written::Written;

/// The largest request body read, in bytes. GraphQL documents are small.
pub const MAX_BODY_BYTES: usize = 256 * 1024;

/// The GraphiQL page (see `playground/README.md`). It links its assets with a `?v=` hash of
/// their content (stamped by `playground/build.mjs`), so they can be cached for good.
const PLAYGROUND_HTML: &str = include_str!("../../playground/index.html");

/// The playground's assets, built by `playground/build.mjs` into `playground/dist/` (committed):
/// name under `/playground/assets/`, content type, content.
const PLAYGROUND_ASSETS: [(&str, &str, &[u8]); 2] = [
    (
        "playground.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../../playground/dist/playground.js"),
    ),
    (
        "playground.css",
        "text/css; charset=utf-8",
        include_bytes!("../../playground/dist/playground.css"),
    ),
];

/// `GET /playground`: revalidated on every load, so a new binary's page (and with it the new
/// asset versions) is picked up at once.
pub async fn playground() -> Response {
    (
        [
            (header::CACHE_CONTROL, "no-cache"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        Html(PLAYGROUND_HTML),
    )
        .into_response()
}

/// `GET /playground/assets/{file}`: immutable, since the page asks for each file with a hash of
/// its content; 404 for any other name.
pub async fn playground_asset(Path(file): Path<String>) -> Response {
    match PLAYGROUND_ASSETS.iter().find(|(name, _, _)| *name == file) {
        Some((_, content_type, body)) => (
            [
                (header::CONTENT_TYPE, *content_type),
                (header::CACHE_CONTROL, "public, max-age=31536000, immutable"),
                (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            ],
            *body,
        )
            .into_response(),
        None => (
            StatusCode::NOT_FOUND,
            axum::Json(serde_json::json!({ "message": "no such playground asset" })),
        )
            .into_response(),
    }
}

/// `POST /graphql`: a JSON body `{"query", "variables", "operationName"}`.
pub async fn post(
    State(state): State<AppState>,
    Extension(executor): Extension<Executor>,
    req: Request,
) -> Response {
    let (parts, body) = req.into_parts();
    let caller = match check_key(&state, &parts.headers).await {
        Ok(c) => c,
        Err(resp) => return resp,
    };
    let declared = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    if declared.is_some_and(|n| n > MAX_BODY_BYTES) {
        return too_large();
    }
    let bytes = match axum::body::to_bytes(body, MAX_BODY_BYTES).await {
        Ok(b) => b,
        Err(_) => return too_large(),
    };
    match serde_json::from_slice::<async_graphql::Request>(&bytes) {
        Ok(request) => {
            let service = crate::app::reader(&state, &parts.extensions);
            let request = with_data(request, &state, &parts.headers, caller, service);
            execute(&executor, request).await
        }
        Err(e) => respond(
            StatusCode::BAD_REQUEST,
            &error_response(
                Code::BadUserInput,
                format!(
                    "the body is not a GraphQL request: expected JSON \
                     {{\"query\": ..., \"variables\": ..., \"operationName\": ...}} ({e})"
                ),
            ),
        ),
    }
}

/// `GET /graphql`: a WebSocket for subscriptions when the request asks to upgrade
/// ([`super::live::serve`]), the GraphiQL page for a browser, otherwise a query in the query
/// string (`query`, `variables` as JSON, `operationName`).
pub async fn get(
    State(state): State<AppState>,
    Extension(executor): Extension<Executor>,
    req: Request,
) -> Response {
    let (mut parts, _) = req.into_parts();
    if super::live::asks_upgrade(&parts.headers) {
        return super::live::serve(state, executor, &mut parts).await;
    }
    let service = crate::app::reader(&state, &parts.extensions);
    let raw = parts.uri.query().map(str::to_owned);
    query_string(state, executor, service, parts.headers, raw).await
}

/// `GET /graphql` with a query in the query string, or the playground for a browser.
async fn query_string(
    state: AppState,
    executor: Executor,
    service: crate::query::QueryService,
    headers: HeaderMap,
    raw: Option<String>,
) -> Response {
    let raw = raw.unwrap_or_default();
    let has_query = form_urlencoded::parse(raw.as_bytes()).any(|(k, _)| k == "query");
    if !has_query && accepts_html(&headers) {
        return playground().await.into_response();
    }
    let caller = match check_key(&state, &headers).await {
        Ok(c) => c,
        Err(resp) => return resp,
    };
    match async_graphql::http::parse_query_string(&raw) {
        Ok(request) => {
            let request = with_data(request, &state, &headers, caller, service);
            execute(&executor, request).await
        }
        Err(e) => respond(
            StatusCode::BAD_REQUEST,
            &error_response(
                Code::BadUserInput,
                format!("the query string is not a GraphQL request: {e}"),
            ),
        ),
    }
}

/// The base URL of preview links (`Nft.media`) for this request.
/// `request` with what its resolvers read: the caller, the base of preview URLs, the query
/// service and the chains' JSON-RPC readers.
fn with_data(
    request: async_graphql::Request,
    state: &AppState,
    headers: &HeaderMap,
    caller: impl std::any::Any + Send + Sync,
    service: crate::query::QueryService,
) -> async_graphql::Request {
    request
        .data(caller)
        .data(media_base(state, headers))
        .data(service)
        .data(state.ops.options().chain_reads.clone())
}

fn media_base(state: &AppState, headers: &HeaderMap) -> crate::graphql::objects::media::MediaBase {
    crate::graphql::objects::media::MediaBase(crate::app::preview_base(state, headers))
}

fn accepts_html(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|v| v.contains("text/html"))
}

/// The caller (made available to resolvers as request data), or the answer to send instead:
/// 401 `UNAUTHENTICATED` for a missing, unknown or revoked key; 429 `RATE_LIMITED` with
/// `Retry-After` over the key's rate limit; 503 when keys cannot be checked.
async fn check_key(state: &AppState, headers: &HeaderMap) -> Result<Caller, Response> {
    match authenticate(state, headers).await {
        Ok(caller) => Ok(caller),
        Err(f @ AuthFailure::RateLimited { retry_after_secs }) => {
            let mut resp = respond(
                StatusCode::TOO_MANY_REQUESTS,
                &error_response(Code::RateLimited, f.message()),
            );
            resp.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(retry_after_secs));
            Err(resp)
        }
        Err(f @ AuthFailure::Unavailable) => Err(respond(
            StatusCode::SERVICE_UNAVAILABLE,
            &error_response(Code::ServiceUnavailable, f.message()),
        )),
        Err(f) => {
            let mut resp = respond(
                StatusCode::UNAUTHORIZED,
                &error_response(Code::Unauthenticated, f.message()),
            );
            resp.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("ApiKey header=\"X-API-Key\""),
            );
            Err(resp)
        }
    }
}

fn too_large() -> Response {
    respond(
        StatusCode::PAYLOAD_TOO_LARGE,
        &error_response(
            Code::BadUserInput,
            format!("the request body is unreadable or larger than {MAX_BODY_BYTES} bytes"),
        ),
    )
}

/// Runs `request`; a response with an error of ours is marked [`ReadFailed`], so that one
/// read from a replica is retried on the primary. Pages of plain nodes are written as JSON
/// while the request runs ([`Written`]).
async fn execute(executor: &Executor, request: async_graphql::Request) -> Response {
    let written = Arc::new(Written::default());
    let resp = executor.execute(request.data(written.clone())).await;
    let ours = resp.errors.iter().any(|e| {
        matches!(
            super::error::code_of(e),
            Some(Code::InternalServerError | Code::ServiceUnavailable)
        )
    });
    let mut out = json_response(http_status(&resp), written.response_json(&resp));
    if ours {
        out.extensions_mut().insert(ReadFailed);
    }
    out
}

/// Serializes a GraphQL response as `application/json` with `status`.
fn respond(status: StatusCode, resp: &GqlResponse) -> Response {
    json_response(status, serde_json::to_string(resp))
}

/// `body` as `application/json` with `status`; a body that could not be written is logged and
/// answered with a 500.
fn json_response(status: StatusCode, body: Result<String, serde_json::Error>) -> Response {
    match body {
        Ok(body) => (
            status,
            [(header::CONTENT_TYPE, "application/json")],
            Body::from(body),
        )
            .into_response(),
        Err(e) => {
            tracing::error!(error = %e, "could not serialize a GraphQL response");
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                [(header::CONTENT_TYPE, "application/json")],
                r#"{"data":null,"errors":[{"message":"internal error; the details have been logged","extensions":{"code":"INTERNAL_SERVER_ERROR"}}]}"#,
            )
                .into_response()
        }
    }
}
