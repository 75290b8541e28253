//! Liveness and readiness probes (no API key).
//!
//! - `GET /healthz`: the process answers HTTP — always `ok`.
//! - `GET /readyz`: the process can serve: the database answers and every migration this build
//!   knows is applied. 200 `{"status":"ready"}`, else 503
//!   `{"status":"not ready","reason":"..."}`. The reason is a fixed phrase; the database's own
//!   error text is logged, never sent. The check is read-only (it never creates the migration
//!   table, unlike `migrate`), so a probe never writes, and is bounded by [`TIMEOUT`].

use std::time::Duration;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use migration::MigratorTrait;
use sea_orm::DatabaseConnection;

use crate::server::AppState;

/// The longest a readiness check waits for the database.
pub const TIMEOUT: Duration = Duration::from_secs(5);

/// `GET /healthz`.
pub async fn healthz() -> &'static str {
    "ok"
}

/// `GET /readyz`.
pub async fn readyz(State(state): State<AppState>) -> Response {
    let outcome = match tokio::time::timeout(TIMEOUT, check(state.db())).await {
        Ok(r) => r,
        Err(_) => Err(format!(
            "the database did not answer within {} s",
            TIMEOUT.as_secs()
        )),
    };
    match outcome {
        Ok(()) => (
            StatusCode::OK,
            Json(serde_json::json!({ "status": "ready" })),
        )
            .into_response(),
        Err(reason) => (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(serde_json::json!({ "status": "not ready", "reason": reason })),
        )
            .into_response(),
    }
}

/// `Ok` when ready, else the reason (safe to show).
async fn check(db: &DatabaseConnection) -> Result<(), String> {
    if let Err(e) = db.ping().await {
        tracing::warn!(error = %e, "readiness: the database does not answer");
        return Err("the database does not answer".into());
    }
    match migration::Migrator::get_pending_migrations_read_only(db).await {
        Ok(pending) if pending.is_empty() => Ok(()),
        Ok(pending) => Err(format!(
            "{} database migration(s) pending: run `tokenql migrate`",
            pending.len()
        )),
        Err(e) => {
            tracing::warn!(error = %e, "readiness: cannot read the migration state");
            Err("the database's migration state cannot be read".into())
        }
    }
}
