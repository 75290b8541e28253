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

use crate::query::QueryService;
use crate::server::AppState;

pub use query::QueryRoot;

/// The deepest selection accepted (see the module's "Limits").
pub const MAX_DEPTH: usize = 16;
/// The highest query cost accepted (see the module's "Limits").
pub const MAX_COMPLEXITY: usize = 2000;

/// The executable schema.
pub type AppSchema = Schema<QueryRoot, EmptyMutation, EmptySubscription>;

fn builder() -> SchemaBuilder<QueryRoot, EmptyMutation, EmptySubscription> {
    Schema::build(QueryRoot, EmptyMutation, EmptySubscription)
        .extension(metrics::OperationMetrics) // first: sees the final, tagged errors
        .limit_depth(MAX_DEPTH)
        .limit_complexity(MAX_COMPLEXITY)
        .extension(error::ErrorCodes {
            max_depth: MAX_DEPTH,
            max_complexity: MAX_COMPLEXITY,
        })
}

/// The schema answering through `service`.
pub fn schema(service: QueryService) -> AppSchema {
    builder().data(service).finish()
}

/// The schema in SDL, as committed in `schema.graphql`.
pub fn sdl() -> String {
    builder().finish().sdl()
}

/// `POST /graphql`, `GET /graphql`, `GET /playground` and its assets.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/graphql", get(http::get).post(http::post))
        .route("/playground", get(http::playground))
        .route("/playground/assets/{file}", get(http::playground_asset))
}
