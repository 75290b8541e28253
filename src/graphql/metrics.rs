//! A schema extension counting and timing GraphQL operations (see
//! [`crate::ops::metrics`] for the series).
//!
//! Labels: `type` (`query`, `mutation`, `subscription`; `unknown` when the document does not
//! parse or names no runnable operation), `name` (the operation's name, `anonymous`, or `other`
//! once [`MAX_NAMES`] distinct names have been seen: names come from clients, and series must
//! stay bounded) and `outcome` (`ok`, or the lowercase `extensions.code` of the first error).
//!
//! It is registered first, so it sees the response after [`super::error::ErrorCodes`] has
//! tagged async-graphql's own errors. Requests refused before execution (a missing key, the
//! rate limit) never reach the schema; the HTTP series count them.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use async_graphql::extensions::{
    Extension, ExtensionContext, ExtensionFactory, NextParseQuery, NextPrepareRequest, NextRequest,
};
use async_graphql::parser::types::{DocumentOperations, ExecutableDocument, OperationType};
use async_graphql::{Request, Response, ServerResult, Variables};

use super::error::code_of;
use crate::ops::metrics::{GRAPHQL_DURATION, GRAPHQL_OPERATIONS};

/// The most distinct operation names given their own series, per process.
pub const MAX_NAMES: usize = 200;

/// The extension factory, registered in [`super::schema`].
pub struct OperationMetrics;

impl ExtensionFactory for OperationMetrics {
    fn create(&self) -> Arc<dyn Extension> {
        Arc::new(OperationMetricsExtension::default())
    }
}

/// What is learnt about one request on its way through the hooks.
#[derive(Default)]
struct Seen {
    requested_name: Option<String>,
    operation: Option<(&'static str, String)>,
}

#[derive(Default)]
struct OperationMetricsExtension {
    seen: Mutex<Seen>,
}

impl OperationMetricsExtension {
    fn seen(&self) -> std::sync::MutexGuard<'_, Seen> {
        self.seen.lock().unwrap_or_else(|p| p.into_inner())
    }
}

fn type_label(ty: OperationType) -> &'static str {
    match ty {
        OperationType::Query => "query",
        OperationType::Mutation => "mutation",
        OperationType::Subscription => "subscription",
    }
}

/// The type and name of the operation `requested` selects in `doc`, as async-graphql picks it.
fn operation(doc: &ExecutableDocument, requested: Option<&str>) -> Option<(&'static str, String)> {
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

#[async_graphql::async_trait::async_trait]
impl Extension for OperationMetricsExtension {
    async fn request(&self, ctx: &ExtensionContext<'_>, next: NextRequest<'_>) -> Response {
        let start = Instant::now();
        let resp = next.run(ctx).await;
        let elapsed = start.elapsed().as_secs_f64();
        let (ty, name) = self
            .seen()
            .operation
            .take()
            .unwrap_or(("unknown", "anonymous".to_string()));
        let outcome = outcome(&resp);
        metrics::counter!(
            GRAPHQL_OPERATIONS,
            "type" => ty,
            "name" => bounded_name(name),
            "outcome" => outcome.clone()
        )
        .increment(1);
        metrics::histogram!(GRAPHQL_DURATION, "type" => ty, "outcome" => outcome).record(elapsed);
        resp
    }

    async fn prepare_request(
        &self,
        ctx: &ExtensionContext<'_>,
        request: Request,
        next: NextPrepareRequest<'_>,
    ) -> ServerResult<Request> {
        self.seen().requested_name = request.operation_name.clone();
        next.run(ctx, request).await
    }

    async fn parse_query(
        &self,
        ctx: &ExtensionContext<'_>,
        query: &str,
        variables: &Variables,
        next: NextParseQuery<'_>,
    ) -> ServerResult<ExecutableDocument> {
        let doc = next.run(ctx, query, variables).await?;
        let mut seen = self.seen();
        seen.operation = operation(&doc, seen.requested_name.as_deref());
        drop(seen);
        Ok(doc)
    }
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
