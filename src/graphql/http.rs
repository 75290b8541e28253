//! The HTTP face of the schema: `POST /graphql`, `GET /graphql?query=...`, and the GraphiQL page
//! (`GET /playground`, and `GET /graphql` from a browser).
//!
//! Every execution needs a valid `X-API-Key` ([`crate::server::authenticate`]); the check comes
//! before the body is read. Statuses follow [`super::error::http_status`].

use async_graphql::Response as GqlResponse;
use axum::body::Body;
use axum::extract::{RawQuery, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{Html, IntoResponse, Response};

use super::error::{error_response, http_status, Code};
use crate::server::{authenticate, AppState, AuthFailure, Caller};

/// The largest request body read, in bytes. GraphQL documents are small.
pub const MAX_BODY_BYTES: usize = 256 * 1024;

/// The GraphiQL page (see `playground/README.md`).
const PLAYGROUND_HTML: &str = include_str!("../../playground/index.html");

/// `GET /playground`.
pub async fn playground() -> Html<&'static str> {
    Html(PLAYGROUND_HTML)
}

/// `POST /graphql`: a JSON body `{"query", "variables", "operationName"}`.
pub async fn post(State(state): State<AppState>, req: Request) -> Response {
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
        Ok(request) => execute(&state, request.data(caller)).await,
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

/// `GET /graphql`: the GraphiQL page for a browser, otherwise a query in the query string
/// (`query`, `variables` as JSON, `operationName`).
pub async fn get(
    State(state): State<AppState>,
    headers: HeaderMap,
    RawQuery(raw): RawQuery,
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
        Ok(request) => execute(&state, request.data(caller)).await,
        Err(e) => respond(
            StatusCode::BAD_REQUEST,
            &error_response(
                Code::BadUserInput,
                format!("the query string is not a GraphQL request: {e}"),
            ),
        ),
    }
}

fn accepts_html(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|v| v.contains("text/html"))
}

/// The caller (made available to resolvers as request data), or the answer to send instead:
/// 401 `UNAUTHENTICATED` for a missing, unknown or revoked key; 503 when keys cannot be checked.
async fn check_key(state: &AppState, headers: &HeaderMap) -> Result<Caller, Response> {
    match authenticate(state, headers).await {
        Ok(caller) => Ok(caller),
        Err(f @ AuthFailure::Unavailable) => Err(respond(
            StatusCode::SERVICE_UNAVAILABLE,
            &error_response(Code::InternalServerError, f.message()),
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

async fn execute(state: &AppState, request: async_graphql::Request) -> Response {
    let resp = state.graphql.execute(request).await;
    respond(http_status(&resp), &resp)
}

/// Serializes a GraphQL response as `application/json` with `status`.
fn respond(status: StatusCode, resp: &GqlResponse) -> Response {
    match serde_json::to_vec(resp) {
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
