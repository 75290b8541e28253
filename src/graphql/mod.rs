//! The GraphQL adapter: the query service's questions as one graph of Relay connections.
//!
//! - [`objects`]: the schema's objects, one module each, built from the query service's model
//!   types (never from database rows): the `Query` root ([`objects::query`]) and `Wallet`,
//!   `Token`, `TokenBalance`, `NftCollection`, `WalletCollection`, `CollectionNft`, `NftToken`,
//!   `Nft`, `Erc20Transfer`, `NftTransfer`, `NftMedia`. They import one another one way only
//!   (the `architecture` test): a list's node never leads back to the object that lists it.
//! - [`connection`]: the generic `Connection`/`Edge` every list uses, `PageInfo`, `SyncStatus`.
//! - [`fast_path`]: what bypasses async-graphql's per-field resolution: a page of plain nodes
//!   written in one pass ([`fast_path::plain`]), over HTTP as JSON text
//!   ([`fast_path::written`]); parsed documents kept by their text
//!   ([`fast_path::documents`]); and the answer's fields put back in the document's order
//!   ([`fast_path::order`]: async-graphql keeps them in the order they finish).
//! - [`args`]: argument parsing into [`crate::types`]; [`enums`]; [`scalars`]: `Address`,
//!   `Uint256` (a decimal string: never a float) and `BlockNumber`.
//! - [`loaders`]: the rows a page's answer carries, shared by its nodes, and a DataLoader for
//!   rows reached past the page: a page costs a constant number of statements, whatever its
//!   size (a list nested in each node of a page costs its own statements per node, which the
//!   complexity limit bounds).
//! - [`error`]: the error policy (`extensions.code`, HTTP statuses).
//! - [`http`]: `POST`/`GET /graphql` behind the API key, and the GraphiQL page `/playground`.
//!
//! The committed `schema.graphql` is [`sdl`]'s output, guarded by the `graphql_schema` test
//! (`UPDATE_SCHEMA=1 cargo test -p tokenql --test api graphql_schema::` rewrites it).
//!
//! # Limits
//!
//! - Depth: at most [`MAX_DEPTH`] levels of selections. The deepest walk of the graph,
//!   `wallet { nftCollections { edges { node { collection { nfts { edges { node { tokenId } } }
//!   } } } } } }`, is 9 deep; the limit is set by introspection, which is recursive: the
//!   standard introspection query GraphiQL sends (graphql-js, `ofType` nested 9 times) is 15
//!   deep.
//! - Complexity: at most [`MAX_COMPLEXITY`]. A field costs 1 plus its selection; a list
//!   costs 10 plus its selection once per started block of 10 records
//!   ([`connection::page_cost`]), so one full page of 100 transfers with every field costs 230
//!   (290 with `pageInfo` and `status`): a query may ask for six to eight of them, or for all
//!   five lists of a wallet at once. A list that can sit in the nodes of another list
//!   (`Token.transfers`, `NftCollection.*`) costs 200 instead of 10
//!   ([`connection::nested_page_cost`]): nested, its statements run once per outer record,
//!   so an outer page of 100 records cannot nest a list, and one of 50 can. The limit is
//!   unchanged by the graph.

pub mod args;
pub mod connection;
pub mod enums;
pub mod error;
pub mod fast_path;
pub mod http;
pub mod live;
pub mod loaders;
pub mod metrics;
pub mod objects;
pub mod scalars;

use std::sync::Arc;

use async_graphql::parser::types::ExecutableDocument;
use async_graphql::{EmptyMutation, Schema, SchemaBuilder};
use axum::routing::get;
use axum::Router;

use crate::app::AppState;
use crate::query::QueryService;

pub use objects::query::QueryRoot;
pub use objects::subscription::SubscriptionRoot;

/// The deepest selection accepted (see the module's "Limits").
pub const MAX_DEPTH: usize = 16;
/// The highest query cost accepted (see the module's "Limits").
pub const MAX_COMPLEXITY: usize = 2000;

/// The executable schema.
pub type AppSchema = Schema<QueryRoot, EmptyMutation, SubscriptionRoot>;

fn builder() -> SchemaBuilder<QueryRoot, EmptyMutation, SubscriptionRoot> {
    // No schema extension: with one, async-graphql wraps every field it resolves in the
    // extension chain (a registry lookup and boxed futures per field: an eighth of the server's
    // CPU time on a page of 100 NFTs). What extensions would do is done in [`Executor`].
    Schema::build(QueryRoot, EmptyMutation, SubscriptionRoot)
        .limit_depth(MAX_DEPTH)
        .limit_complexity(MAX_COMPLEXITY)
}

/// The schema answering through `service`, with the error policy and the metrics around it.
pub fn schema(service: QueryService) -> Executor {
    Executor {
        schema: builder().data(service).finish(),
        documents: std::sync::Arc::default(),
    }
}

/// Runs GraphQL requests: the one entry point of the HTTP handlers and in-process callers.
#[derive(Clone)]
pub struct Executor {
    schema: AppSchema,
    documents: std::sync::Arc<fast_path::documents::Documents>,
}

impl Executor {
    /// async-graphql's own executor of the schema, without what [`Executor::execute`] adds
    /// (tests compare the two).
    pub fn inner(&self) -> &AppSchema {
        &self.schema
    }

    /// Executes `request`: puts the answer's fields in the document's order
    /// ([`fast_path::order::in_document_order`]), tags async-graphql's own errors ([`error::tag_errors`]),
    /// nulls the answer of a request with a bad argument ([`error::null_on_bad_input`]) and
    /// records the operation's metrics.
    pub async fn execute(&self, mut request: async_graphql::Request) -> async_graphql::Response {
        let start = std::time::Instant::now();
        // Parsed here, once, to name the operation (or copied from an earlier request with
        // the same text); the executor uses this document. A document that does not parse is
        // left to the executor, which reports the error.
        // The kept form is shared with the field ordering after execution, so a request costs
        // one copy of its document, as before the ordering.
        let name = request.operation_name.clone();
        let doc = match self.documents.get(&request.query) {
            Some(doc) => {
                request.set_parsed_query(ExecutableDocument::clone(&doc));
                Some(doc)
            }
            None => {
                let text = request.query.clone();
                let doc = request.parsed_query().ok().cloned().map(Arc::new);
                if let Some(doc) = &doc {
                    self.documents.put(&text, doc);
                }
                doc
            }
        };
        let op = doc
            .as_ref()
            .and_then(|doc| metrics::operation(doc, name.as_deref()));
        let mut resp = self.schema.execute(request).await;
        if let Some(doc) = &doc {
            fast_path::order::in_document_order(&mut resp.data, doc, name.as_deref());
        }
        error::tag_errors(&mut resp, MAX_DEPTH, MAX_COMPLEXITY);
        error::null_on_bad_input(&mut resp);
        metrics::record(op, &resp, start.elapsed());
        resp
    }
}

/// The query service of the request (a replica's, when the HTTP layer chose one).
fn service<'a>(ctx: &async_graphql::Context<'a>) -> Result<&'a QueryService, error::GqlError> {
    ctx.data_opt::<QueryService>().ok_or_else(|| {
        tracing::error!("the GraphQL schema was built without a QueryService");
        error::GqlError::internal()
    })
}

/// The schema in SDL, as committed in `schema.graphql`.
pub fn sdl() -> String {
    builder().finish().sdl()
}

/// `POST /graphql`, `GET /graphql`, `GET /playground` and its assets, answering through
/// `executor`.
pub fn router(executor: Executor) -> Router<AppState> {
    Router::new()
        .route("/graphql", get(http::get).post(http::post))
        .layer(axum::Extension(executor))
        .route("/playground", get(http::playground))
        .route("/playground/assets/{file}", get(http::playground_asset))
}
