//! GraphQL errors: every error a client sees carries `extensions.code`.
//!
//! # Policy
//!
//! | code | whose fault | when | HTTP status (if `data` is `null`) |
//! |---|---|---|---|
//! | `BAD_USER_INPUT` | the client's | an argument breaks a rule (the message names the argument and the rule, e.g. `first: 0 is out of range; expected 1 to 100`); a tampered, foreign or malformed `after` cursor; and every error async-graphql raises itself before or while reading arguments: syntax errors, validation errors (unknown fields, wrong argument types), the depth and complexity limits, unknown operation names | 400 |
//! | `UNAUTHENTICATED` | the client's | the `X-API-Key` header is missing, unknown or revoked (raised by the HTTP layer, before execution) | 401 |
//! | `RATE_LIMITED` | the client's | reserved for the rate limiter: too many requests for the key | 429 |
//! | `SERVICE_UNAVAILABLE` | nobody's: an outage | the database cannot be reached ([`Fault::Unavailable`]: the key store or a query; REST answers the same with 503) | 503 |
//! | `INTERNAL_SERVER_ERROR` | ours | any other database failure, or corrupt stored data ([`Fault::Ours`]) | 500 |
//!
//! - Our faults get the generic message [`INTERNAL_MESSAGE`]; the detail is logged once, with
//!   `tracing::error!`, where the [`QueryError`] becomes a [`GqlError`]. SQL text, database
//!   messages and panics never reach a client.
//! - Errors the resolvers raise always carry a code. An error without one can only come from
//!   async-graphql itself (parser, validation, limits, argument coercion): [`tag_errors`] tags
//!   those `BAD_USER_INPUT` and rewrites the limit messages to state the limit. It runs in
//!   [`super::Executor::execute`], the one entry point of HTTP and in-process callers alike, so
//!   both see the same errors.
//! - An argument error nulls the whole answer ([`null_on_bad_input`]): every field taking
//!   arguments is non-null and reached through non-null fields (the `graphql_schema` test
//!   checks it), so the spec's null propagation, which async-graphql leaves out, ends at
//!   `data: null`. A bad argument of a nested list (`wallet { nftTransfers(first: 0) }`) is
//!   therefore a 400 like a bad argument of a root field.
//! - A response with data (even partial) is HTTP 200; see [`http_status`].

use async_graphql::{ErrorExtensions, Response, ServerError};
use axum::http::StatusCode;

use crate::query::{Fault, QueryError};

pub use crate::query::UNAVAILABLE_MESSAGE;

/// The message of every `INTERNAL_SERVER_ERROR`.
pub const INTERNAL_MESSAGE: &str = "internal error; the details have been logged";

/// The stable error codes of `extensions.code`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Code {
    BadUserInput,
    Unauthenticated,
    RateLimited,
    ServiceUnavailable,
    InternalServerError,
}

impl Code {
    pub fn as_str(&self) -> &'static str {
        match self {
            Code::BadUserInput => "BAD_USER_INPUT",
            Code::Unauthenticated => "UNAUTHENTICATED",
            Code::RateLimited => "RATE_LIMITED",
            Code::ServiceUnavailable => "SERVICE_UNAVAILABLE",
            Code::InternalServerError => "INTERNAL_SERVER_ERROR",
        }
    }

    fn parse(s: &str) -> Option<Code> {
        [
            Code::BadUserInput,
            Code::Unauthenticated,
            Code::RateLimited,
            Code::ServiceUnavailable,
            Code::InternalServerError,
        ]
        .into_iter()
        .find(|c| c.as_str() == s)
    }
}

/// An error of a resolver: a code and a message safe to show.
///
/// It deliberately does not implement `Display`: async-graphql turns any `Display` error into a
/// client-visible message, and this type must be the only way out of a resolver.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GqlError {
    code: Code,
    message: String,
}

impl GqlError {
    /// The argument `arg` broke `rule` (a message naming the rule, safe to show).
    pub fn bad_input(arg: &str, rule: impl std::fmt::Display) -> Self {
        Self {
            code: Code::BadUserInput,
            message: format!("{arg}: {rule}"),
        }
    }

    /// Our fault. Log the detail before calling this.
    pub fn internal() -> Self {
        Self {
            code: Code::InternalServerError,
            message: INTERNAL_MESSAGE.to_string(),
        }
    }

    /// An outage: the database cannot be reached. Log the detail before calling this.
    pub fn unavailable() -> Self {
        Self {
            code: Code::ServiceUnavailable,
            message: UNAVAILABLE_MESSAGE.to_string(),
        }
    }

    /// The caller holds too much of something (open subscriptions): `RATE_LIMITED`.
    pub fn limited(message: impl Into<String>) -> Self {
        Self {
            code: Code::RateLimited,
            message: message.into(),
        }
    }

    pub fn code(&self) -> Code {
        self.code
    }

    pub fn message(&self) -> &str {
        &self.message
    }
}

/// Maps a query-service error: a bad cursor is the `after` argument's fault; anything else is
/// ours, logged here (once) and answered with the generic message.
impl From<QueryError> for GqlError {
    fn from(e: QueryError) -> Self {
        match e {
            QueryError::BadCursor(c) => GqlError::bad_input("after", format!("cursor {c}")),
            e @ QueryError::AboveHead { .. } => GqlError::bad_input("toBlock", e.to_string()),
            _ if e.fault() == Fault::Unavailable => {
                tracing::error!(error = %e, "GraphQL query failed: the database is unavailable");
                GqlError::unavailable()
            }
            _ => {
                tracing::error!(error = %e, "GraphQL query failed");
                GqlError::internal()
            }
        }
    }
}

impl From<GqlError> for async_graphql::Error {
    fn from(e: GqlError) -> Self {
        let code = e.code.as_str();
        async_graphql::Error::new(e.message).extend_with(|_, ext| ext.set("code", code))
    }
}

/// The code of a response error, if it has one.
pub fn code_of(e: &ServerError) -> Option<Code> {
    match e.extensions.as_ref()?.get("code")? {
        async_graphql::Value::String(s) => Code::parse(s),
        _ => None,
    }
}

/// A complete response carrying one error, for failures outside execution (auth, unreadable
/// request bodies).
pub fn error_response(code: Code, message: impl Into<String>) -> Response {
    let mut e = ServerError::new(message, None);
    e.extensions
        .get_or_insert_with(Default::default)
        .set("code", code.as_str());
    Response::from_errors(vec![e])
}

/// The HTTP status of a response: 200 whenever there is data; otherwise the status of its
/// most serious error (`UNAUTHENTICATED` 401, `RATE_LIMITED` 429, `INTERNAL_SERVER_ERROR` 500,
/// `BAD_USER_INPUT` 400).
pub fn http_status(resp: &Response) -> StatusCode {
    if !matches!(resp.data, async_graphql::Value::Null) || resp.errors.is_empty() {
        return StatusCode::OK;
    }
    let codes: Vec<Option<Code>> = resp.errors.iter().map(code_of).collect();
    let has = |c: Code| codes.contains(&Some(c));
    if has(Code::Unauthenticated) {
        StatusCode::UNAUTHORIZED
    } else if has(Code::RateLimited) {
        StatusCode::TOO_MANY_REQUESTS
    } else if has(Code::InternalServerError) {
        StatusCode::INTERNAL_SERVER_ERROR
    } else if has(Code::ServiceUnavailable) {
        StatusCode::SERVICE_UNAVAILABLE
    } else {
        StatusCode::BAD_REQUEST
    }
}

/// Tags async-graphql's own errors (those without a code) `BAD_USER_INPUT`, and rewrites the
/// depth and complexity messages to state the limits (see the module policy).
pub(super) fn tag_errors(resp: &mut Response, max_depth: usize, max_complexity: usize) {
    for e in &mut resp.errors {
        if code_of(e).is_some() {
            continue;
        }
        match e.message.as_str() {
            "Query is nested too deep." => {
                e.message = format!(
                    "query is nested too deep: at most {max_depth} levels of selections are allowed"
                )
            }
            "Query is too complex." => {
                e.message = format!(
                    "query is too complex: its cost exceeds {max_complexity} (a list costs 10, or \
                     200 when it can be nested in another list's records, plus its selection \
                     times first/10; ask for fewer or smaller pages)"
                )
            }
            _ => {}
        }
        e.extensions
            .get_or_insert_with(Default::default)
            .set("code", Code::BadUserInput.as_str());
    }
}

/// Null propagation for argument errors (see the module policy): async-graphql nulls only the
/// field that failed, so a bad argument of a nested list would leave the rest of the answer,
/// and HTTP 200. Every field taking arguments is non-null, as are the fields above it: the
/// GraphQL spec's answer is `data: null`.
pub(super) fn null_on_bad_input(resp: &mut Response) {
    if resp
        .errors
        .iter()
        .any(|e| code_of(e) == Some(Code::BadUserInput))
    {
        resp.data = async_graphql::Value::Null;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursor_errors_name_the_after_argument() {
        let e = GqlError::from(QueryError::BadCursor(crate::query::CursorError::Invalid));
        assert_eq!(e.code(), Code::BadUserInput);
        assert_eq!(
            e.message(),
            "after: cursor is malformed or has been tampered with"
        );
    }

    #[test]
    fn internal_errors_hide_the_detail() {
        let e = GqlError::from(QueryError::Db(sea_orm::DbErr::Custom(
            "SELECT secret FROM t".into(),
        )));
        assert_eq!(e.code(), Code::InternalServerError);
        assert_eq!(e.message(), INTERNAL_MESSAGE);
        let e = GqlError::from(QueryError::Corrupt("bad row".into()));
        assert_eq!(e.message(), INTERNAL_MESSAGE);
    }

    #[test]
    fn statuses() {
        assert_eq!(
            http_status(&Response::new(async_graphql::Value::Null)),
            StatusCode::OK
        );
        for (code, status) in [
            (Code::BadUserInput, StatusCode::BAD_REQUEST),
            (Code::Unauthenticated, StatusCode::UNAUTHORIZED),
            (Code::RateLimited, StatusCode::TOO_MANY_REQUESTS),
            (Code::InternalServerError, StatusCode::INTERNAL_SERVER_ERROR),
        ] {
            assert_eq!(http_status(&error_response(code, "x")), status);
        }
        let mut partial = Response::new(async_graphql::value!({ "a": 1 }));
        partial.errors = error_response(Code::InternalServerError, "x").errors;
        assert_eq!(http_status(&partial), StatusCode::OK);
    }

    #[test]
    fn a_bad_argument_anywhere_nulls_the_answer() {
        let mut partial = Response::new(async_graphql::value!({ "wallet": null }));
        partial.errors = error_response(Code::BadUserInput, "first: 0").errors;
        null_on_bad_input(&mut partial);
        assert_eq!(partial.data, async_graphql::Value::Null);
        assert_eq!(http_status(&partial), StatusCode::BAD_REQUEST);
        let mut ours = Response::new(async_graphql::value!({ "a": 1 }));
        ours.errors = error_response(Code::InternalServerError, "x").errors;
        null_on_bad_input(&mut ours);
        assert_eq!(ours.data, async_graphql::value!({ "a": 1 }));
    }
}
