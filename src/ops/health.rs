//! Liveness and readiness probes (no API key).
//!
//! - `GET /healthz`: the process answers HTTP — always `ok`.
//! - `GET /readyz`: the process can serve: the database answers and every migration this build
//!   knows is applied. 200 `{"status":"ready"}`, else 503
//!   `{"status":"not ready","reason":"..."}`. The reason is a fixed phrase; the database's own
//!   error text is logged, never sent. The check is read-only (it never creates the migration
//!   table, unlike `migrate`), so a probe never writes, and is bounded by [`TIMEOUT`].
//!   With read replicas (`serve --database-read-url`), the body also lists each one as the
//!   last check saw it: `{"name", "up", "lag_ms", "in_rotation"}`. A replica out of rotation
//!   does not make the process unready: its reads go to the primary.

use std::time::Duration;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use migration::MigratorTrait;
use sea_orm::DatabaseConnection;

use crate::app::AppState;

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
    let (status, mut body) = match outcome {
        Ok(()) => (StatusCode::OK, serde_json::json!({ "status": "ready" })),
        Err(reason) => (
            StatusCode::SERVICE_UNAVAILABLE,
            serde_json::json!({ "status": "not ready", "reason": reason }),
        ),
    };
    if state.reads.has_replicas() {
        let replicas: Vec<serde_json::Value> = state
            .reads
            .statuses()
            .into_iter()
            .map(|r| {
                serde_json::json!({
                    "name": r.name,
                    "up": r.up,
                    "lag_ms": r.lag_ms,
                    "in_rotation": r.in_rotation,
                })
            })
            .collect();
        body["replicas"] = serde_json::Value::Array(replicas);
    }
    (status, Json(body)).into_response()
}

/// `Ok` when ready, else the reason (safe to show).
async fn check(db: &DatabaseConnection) -> Result<(), String> {
    if let Err(e) = db.ping().await {
        tracing::warn!(error = %e, "readiness: the database does not answer");
        return Err("the database does not answer".into());
    }
    if matches!(migration::misrecorded(db).await, Ok(true)) {
        return Err(
            "a migration is recorded under an earlier release's name: run `tokenql migrate`".into(),
        );
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
