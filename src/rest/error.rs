//! The one error type of the REST boundary.
//!
//! # Error policy
//!
//! Every REST answer that is not a success is `{"message": "..."}` with `application/json`:
//!
//! - **400 — the user's fault.** A parameter broke a rule. The message is
//!   `"<param>: <rule>"`, naming the parameter as the client spelled it in the API (`limit`,
//!   `token_addresses`, `cursor`, `address`, …) and the rule it broke, e.g.
//!   `limit: 0 is out of range; expected 1 to 100`. A refused cursor
//!   ([`QueryError::BadCursor`]) is the user's fault too and names `cursor`.
//! - **401** — missing or unknown API key (issued by the auth middleware in `server.rs`).
//! - **404** — unknown route, or a resource the data does not hold (a chain with nothing
//!   indexed, a date no stored block settles): the message says which; **405** — a known route
//!   with another method than `GET`.
//! - **501** — a Moralis operation tokenql does not serve (prices, swaps, transactions, …), or
//!   one that needs something this server is not configured with (a chain's JSON-RPC endpoint
//!   for native balances); the message names the operation and the reason.
//! - **429** — rate limited, with a `Retry-After` header in seconds.
//! - **500 / 503 — our fault.** The client gets a fixed, generic message; the detail (database
//!   error text, corrupt stored value) is logged once, here, with `tracing::error!` and
//!   structured fields — never sent. 503 is for a database that cannot be reached right now,
//!   or a chain's JSON-RPC endpoint that failed (native balances), 500 for everything else.
//!
//! Handlers return `Result<_, ApiError>` and use `?`; they never panic, never `unwrap`, and never
//! format an internal error into a client message. axum's own rejections (a path segment that
//! does not decode, a method the route does not serve) are converted to this type too, so no
//! plain-text body ever leaves the REST routes.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Serialize;
use utoipa::ToSchema;

use crate::app::NotAReadFailure;
use crate::query::{Fault, QueryError, UNAVAILABLE_MESSAGE};
use crate::types::ParseError;

/// Message of every 503 answer for a chain's JSON-RPC endpoint.
const CHAIN_UNAVAILABLE_MESSAGE: &str =
    "the chain's JSON-RPC endpoint is temporarily unavailable; retry later";

/// Message of every 500 answer.
const INTERNAL_MESSAGE: &str = "internal server error; the failure has been logged";

/// Why a REST request failed. See the module documentation for the policy.
#[derive(Debug)]
pub enum ApiError {
    /// 400: parameter `param` broke `rule`.
    BadParam {
        /// The parameter's name as the API spells it.
        param: &'static str,
        /// The rule it broke, safe to show (it may quote the user's own input).
        rule: String,
    },
    /// 401: missing or unknown API key.
    Unauthorized(&'static str),
    /// 404: no such route, or no such resource (the message says which).
    NotFound(&'static str),
    /// 404: the data holds no answer; the message says why (it may quote the user's input).
    Missing(String),
    /// 501: the operation is not served here; the message says why.
    NotServed(String),
    /// 405: the route exists but answers only this method (`GET`, `POST`, `PUT`).
    MethodNotAllowed(&'static str),
    /// 429: too many requests; retry after this many seconds.
    RateLimited {
        /// Sent as `Retry-After`.
        retry_after_secs: u64,
    },
    /// 500: our fault. `detail` is logged, never sent.
    Internal {
        /// What was being done, for the log (`"nfts_by_wallet"`, …).
        context: &'static str,
        /// The internal error text.
        detail: String,
    },
    /// 503: a chain's JSON-RPC endpoint failed. `detail` is logged, never sent.
    ChainUnavailable {
        /// What was being done, for the log.
        context: &'static str,
        /// The internal error text.
        detail: String,
    },
    /// 503: a dependency (the database) is unavailable. `detail` is logged, never sent.
    Unavailable {
        /// What was being done, for the log.
        context: &'static str,
        /// The internal error text.
        detail: String,
    },
}

/// The body of every error answer: `{"message": "..."}`.
#[derive(Serialize, ToSchema)]
#[schema(as = error)]
pub struct ErrorBody<'a> {
    /// What went wrong. A 400 names the parameter and the rule it broke
    /// (`limit: 0 is out of range; expected 1 to 100`); a 500 or 503 is a fixed, generic text.
    #[schema(example = "limit: 0 is out of range; expected 1 to 100")]
    pub message: &'a str,
}

impl ApiError {
    /// A 400 naming `param` and the `rule` it broke.
    pub fn bad(param: &'static str, rule: impl Into<String>) -> Self {
        ApiError::BadParam {
            param,
            rule: rule.into(),
        }
    }

    /// A 400 from a boundary type's [`ParseError`].
    pub fn parse(param: &'static str, e: ParseError) -> Self {
        Self::bad(param, e.0)
    }

    /// Maps a query-service error by its [`Fault`]: a bad cursor is the user's fault (400), an
    /// unreachable database 503, the rest ours (500).
    pub fn from_query(context: &'static str, e: QueryError) -> Self {
        let detail = e.to_string();
        match (e.fault(), e) {
            (_, QueryError::BadCursor(c)) => Self::bad("cursor", c.to_string()),
            (_, e @ QueryError::AboveHead { .. }) => Self::bad("to_block", e.to_string()),
            (Fault::Unavailable, _) => ApiError::Unavailable { context, detail },
            _ => ApiError::Internal { context, detail },
        }
    }

    /// The HTTP status of this error.
    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::BadParam { .. } => StatusCode::BAD_REQUEST,
            ApiError::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            ApiError::NotFound(_) | ApiError::Missing(_) => StatusCode::NOT_FOUND,
            ApiError::NotServed(_) => StatusCode::NOT_IMPLEMENTED,
            ApiError::MethodNotAllowed(_) => StatusCode::METHOD_NOT_ALLOWED,
            ApiError::RateLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
            ApiError::Internal { .. } => StatusCode::INTERNAL_SERVER_ERROR,
            ApiError::Unavailable { .. } | ApiError::ChainUnavailable { .. } => {
                StatusCode::SERVICE_UNAVAILABLE
            }
        }
    }

    /// The message sent to the client.
    pub fn message(&self) -> String {
        match self {
            ApiError::BadParam { param, rule } => format!("{param}: {rule}"),
            ApiError::Unauthorized(m) => (*m).to_string(),
            ApiError::NotFound(m) => (*m).to_string(),
            ApiError::Missing(m) | ApiError::NotServed(m) => m.clone(),
            ApiError::MethodNotAllowed(method) => {
                format!("method not allowed; this route answers {method}")
            }
            ApiError::RateLimited { retry_after_secs } => {
                format!("rate limit exceeded; retry in {retry_after_secs} s")
            }
            ApiError::Internal { .. } => INTERNAL_MESSAGE.to_string(),
            ApiError::Unavailable { .. } => UNAVAILABLE_MESSAGE.to_string(),
            ApiError::ChainUnavailable { .. } => CHAIN_UNAVAILABLE_MESSAGE.to_string(),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        // The one place our-fault errors are logged: once, with structured fields.
        match &self {
            ApiError::Internal { context, detail } => {
                tracing::error!(context = *context, error = %detail, status = 500, "REST request failed");
            }
            ApiError::Unavailable { context, detail }
            | ApiError::ChainUnavailable { context, detail } => {
                tracing::error!(context = *context, error = %detail, status = 503, "REST request failed");
            }
            _ => {}
        }
        let message = self.message();
        let mut response = (self.status(), Json(ErrorBody { message: &message })).into_response();
        if let ApiError::RateLimited { retry_after_secs } = self {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(retry_after_secs));
        } else if matches!(
            self,
            ApiError::NotServed(_) | ApiError::ChainUnavailable { .. }
        ) {
            response.extensions_mut().insert(NotAReadFailure);
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::CursorError;

    #[test]
    fn statuses_and_messages() {
        let e = ApiError::bad("limit", "0 is out of range; expected 1 to 100");
        assert_eq!(e.status(), StatusCode::BAD_REQUEST);
        assert_eq!(e.message(), "limit: 0 is out of range; expected 1 to 100");

        let e = ApiError::from_query("t", QueryError::BadCursor(CursorError::Invalid));
        assert_eq!(e.status(), StatusCode::BAD_REQUEST);
        assert_eq!(
            e.message(),
            "cursor: is malformed or has been tampered with"
        );
    }

    #[test]
    fn internal_details_stay_out_of_the_message() {
        let e = ApiError::from_query(
            "t",
            QueryError::Db(sea_orm::DbErr::Custom("SELECT secret FROM t".into())),
        );
        assert_eq!(e.status(), StatusCode::INTERNAL_SERVER_ERROR);
        assert!(!e.message().contains("SELECT"));
        let e = ApiError::from_query("t", QueryError::Corrupt("bad row".into()));
        assert!(!e.message().contains("bad row"));
    }

    #[test]
    fn only_failures_of_the_read_count_against_a_replica() {
        let marked = |e: ApiError| {
            let r = e.into_response();
            (
                r.status(),
                r.extensions().get::<NotAReadFailure>().is_some(),
            )
        };
        assert_eq!(
            marked(ApiError::NotServed("getBlock".into())),
            (StatusCode::NOT_IMPLEMENTED, true)
        );
        let chain = ApiError::ChainUnavailable {
            context: "t",
            detail: "connection refused".into(),
        };
        assert_eq!(marked(chain), (StatusCode::SERVICE_UNAVAILABLE, true));
        let db = ApiError::Unavailable {
            context: "t",
            detail: "pool timed out".into(),
        };
        assert_eq!(marked(db), (StatusCode::SERVICE_UNAVAILABLE, false));
        let chain = ApiError::ChainUnavailable {
            context: "t",
            detail: "connection refused".into(),
        };
        assert!(!chain.message().contains("refused"));
    }

    #[test]
    fn rate_limited_sets_retry_after() {
        let r = ApiError::RateLimited {
            retry_after_secs: 7,
        }
        .into_response();
        assert_eq!(r.status(), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(
            r.headers().get(header::RETRY_AFTER).map(|v| v.as_bytes()),
            Some(&b"7"[..])
        );
    }
}
