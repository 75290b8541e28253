//! GraphQL adapter (placeholder until filled in).
use async_graphql::{EmptyMutation, EmptySubscription, Object, Schema};
use axum::Router;

use crate::query::QueryService;
use crate::server::AppState;

pub struct QueryRoot;

#[Object]
impl QueryRoot {
    /// Placeholder.
    async fn ping(&self) -> bool {
        true
    }
}

pub type AppSchema = Schema<QueryRoot, EmptyMutation, EmptySubscription>;

pub fn schema(service: QueryService) -> AppSchema {
    Schema::build(QueryRoot, EmptyMutation, EmptySubscription)
        .data(service)
        .finish()
}

pub fn router() -> Router<AppState> {
    Router::new()
}
