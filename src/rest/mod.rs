//! REST v2 adapter (placeholder until filled in).
use axum::Router;

use crate::server::AppState;

pub fn router() -> Router<AppState> {
    Router::new()
}
