//! The GraphQL adapter: the two questions of the query service as Relay connections.
//!
//! - [`query`]: the `Query` root; arguments are parsed there into [`crate::types`].
//! - [`nft`], [`transfer`], [`connection`]: the object types, built from the query service's
//!   model types (never from database rows).
//! - [`media`]: `Nft.media`, the preview media of an NFT's image.
//! - [`scalars`]: `Address`, `Uint256` (a decimal string: never a float) and `BlockNumber`.
//! - [`loaders`]: DataLoaders for contract metadata, token rows and labels: a page costs a
//!   constant number of statements, whatever its size.
//! - [`error`]: the error policy (`extensions.code`, HTTP statuses).
//! - [`http`]: `POST`/`GET /graphql` behind the API key, and the GraphiQL page `/playground`.
//!
//! The committed `schema.graphql` is [`sdl`]'s output, guarded by the `graphql_schema` test
//! (`UPDATE_SCHEMA=1 cargo test -p tokenql --test graphql_schema` rewrites it).
//!
//! # Limits
//!
//! - Depth: at most [`MAX_DEPTH`] levels of selections. Data queries of this schema are at most
//!   4 deep (`erc20Transfers { edges { node { value } } }`); the limit is set by introspection,
//!   which is recursive: the standard introspection query GraphiQL sends (graphql-js, `ofType`
//!   nested 9 times) is 15 deep.
//! - Complexity: at most [`MAX_COMPLEXITY`]. A field costs 1 plus its selection; a connection
//!   costs 10 plus its selection once per started block of 10 records
//!   ([`connection::page_cost`]), so one full page of 100 transfers with every field costs 230
//!   (290 with `pageInfo` and `status`) and a query may ask for six to eight of them.

pub mod connection;
pub mod error;
pub mod http;
pub mod loaders;
pub mod media;
pub mod metrics;
pub mod nft;
pub mod query;
pub mod scalars;
pub mod transfer;

use async_graphql::{EmptyMutation, EmptySubscription, Schema, SchemaBuilder};
use axum::routing::get;
use axum::Router;

use crate::app::AppState;
use crate::query::QueryService;

pub use query::QueryRoot;

/// The deepest selection accepted (see the module's "Limits").
pub const MAX_DEPTH: usize = 16;
/// The highest query cost accepted (see the module's "Limits").
pub const MAX_COMPLEXITY: usize = 2000;

/// The executable schema.
pub type AppSchema = Schema<QueryRoot, EmptyMutation, EmptySubscription>;

fn builder() -> SchemaBuilder<QueryRoot, EmptyMutation, EmptySubscription> {
    // No schema extension: with one, async-graphql wraps every field it resolves in the
    // extension chain (a registry lookup and boxed futures per field: an eighth of the server's
    // CPU time on a page of 100 NFTs). What extensions would do is done in [`Executor`].
    Schema::build(QueryRoot, EmptyMutation, EmptySubscription)
        .limit_depth(MAX_DEPTH)
        .limit_complexity(MAX_COMPLEXITY)
}

/// The schema answering through `service`, with the error policy and the metrics around it.
pub fn schema(service: QueryService) -> Executor {
    Executor {
        schema: builder().data(service).finish(),
    }
}

/// Runs GraphQL requests: the one entry point of the HTTP handlers and in-process callers.
#[derive(Clone)]
pub struct Executor {
    schema: AppSchema,
}

impl Executor {
    /// Executes `request`: tags async-graphql's own errors ([`error::tag_errors`]) and records
    /// the operation's metrics.
    pub async fn execute(&self, mut request: async_graphql::Request) -> async_graphql::Response {
        let start = std::time::Instant::now();
        // Parsed here, once, to name the operation; the executor uses this document. A
        // document that does not parse is left to the executor, which reports the error.
        let name = request.operation_name.clone();
        let op = request
            .parsed_query()
            .ok()
            .and_then(|doc| metrics::operation(doc, name.as_deref()));
        let mut resp = self.schema.execute(request).await;
        error::tag_errors(&mut resp, MAX_DEPTH, MAX_COMPLEXITY);
        metrics::record(op, &resp, start.elapsed());
        resp
    }
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
