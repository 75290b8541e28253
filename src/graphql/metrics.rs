//! Counting and timing GraphQL operations (see [`crate::ops::metrics`] for the series).
//!
//! Labels: `type` (`query`, `mutation`, `subscription`; `unknown` when the document does not
//! parse or names no runnable operation), `name` (the operation's name, `anonymous`, or `other`
//! once [`MAX_NAMES`] distinct names have been seen: names come from clients, and series must
//! stay bounded) and `outcome` (`ok`, or the lowercase `extensions.code` of the first error).
//!
//! [`super::Executor::execute`] records each operation after [`super::error::tag_errors`], so the
//! outcome is the code the client sees. It is not a schema extension: any extension makes
//! async-graphql run an extension chain around every field it resolves (thousands per page).
//! Requests refused before execution (a missing key, the rate limit) never reach the executor;
//! the HTTP series count them.

use std::collections::HashSet;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use async_graphql::parser::types::{DocumentOperations, ExecutableDocument, OperationType};
use async_graphql::Response;

use super::error::code_of;
use crate::telemetry::metrics::{GRAPHQL_DURATION, GRAPHQL_OPERATIONS};

/// The most distinct operation names given their own series, per process.
pub const MAX_NAMES: usize = 200;

fn type_label(ty: OperationType) -> &'static str {
    match ty {
        OperationType::Query => "query",
        OperationType::Mutation => "mutation",
        OperationType::Subscription => "subscription",
    }
}

/// The type and name of the operation `requested` selects in `doc`, as async-graphql picks it.
pub(super) fn operation(
    doc: &ExecutableDocument,
    requested: Option<&str>,
) -> Option<(&'static str, String)> {
    match (&doc.operations, requested) {
        (DocumentOperations::Single(op), None) => {
            Some((type_label(op.node.ty), "anonymous".to_string()))
        }
        (DocumentOperations::Multiple(ops), Some(name)) => ops
            .get(name)
            .map(|op| (type_label(op.node.ty), name.to_string())),
        (DocumentOperations::Multiple(ops), None) if ops.len() == 1 => ops
            .iter()
            .next()
            .map(|(name, op)| (type_label(op.node.ty), name.to_string())),
        _ => None,
    }
}

/// `name` if it already has a series or there is room for one more, else `other`.
fn bounded_name(name: String) -> String {
    static NAMES: OnceLock<Mutex<HashSet<String>>> = OnceLock::new();
    let mut names = NAMES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    if names.contains(&name) {
        return name;
    }
    if names.len() < MAX_NAMES {
        names.insert(name.clone());
        return name;
    }
    "other".to_string()
}

fn outcome(resp: &Response) -> String {
    match resp.errors.first() {
        None => "ok".to_string(),
        Some(e) => code_of(e).map_or_else(|| "error".to_string(), |c| c.as_str().to_lowercase()),
    }
}

/// Records one operation: `op` is its type and name ([`operation`]), `None` when the document
/// did not parse or names no runnable operation.
pub(super) fn record(op: Option<(&'static str, String)>, resp: &Response, elapsed: Duration) {
    let (ty, name) = op.unwrap_or(("unknown", "anonymous".to_string()));
    let outcome = outcome(resp);
    metrics::counter!(
        GRAPHQL_OPERATIONS,
        "type" => ty,
        "name" => bounded_name(name),
        "outcome" => outcome.clone()
    )
    .increment(1);
    metrics::histogram!(GRAPHQL_DURATION, "type" => ty, "outcome" => outcome)
        .record(elapsed.as_secs_f64());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(query: &str, name: Option<&str>) -> Option<(&'static str, String)> {
        let doc = async_graphql::parser::parse_query(query).expect("parses");
        operation(&doc, name)
    }

    #[test]
    fn picks_the_operation_like_async_graphql() {
        assert_eq!(op("{ a }", None), Some(("query", "anonymous".into())));
        assert_eq!(op("query Q { a }", None), Some(("query", "Q".into())));
        assert_eq!(
            op("query Q { a } query R { b }", Some("R")),
            Some(("query", "R".into()))
        );
        assert_eq!(op("query Q { a } query R { b }", None), None);
        assert_eq!(op("query Q { a }", Some("X")), None);
    }

    #[test]
    fn names_stay_bounded() {
        for i in 0..MAX_NAMES + 5 {
            let _ = bounded_name(format!("Op{i}"));
        }
        assert_eq!(bounded_name("NeverSeenBefore".into()), "other");
        assert_eq!(bounded_name("Op0".into()), "Op0");
    }
}
