//! `GET /metrics` (no API key): renders the series of [`crate::telemetry::metrics`] (names,
//! labels and the recorder are documented there), refreshing the database-pool and replica
//! gauges at each scrape; and [`track_http`], the middleware counting and timing every answer.

use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::http::{header, Method};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use metrics::{counter, gauge, histogram};
use sea_orm::{DatabaseConnection, DatabaseConnectionType};

use crate::app::AppState;
pub use crate::telemetry::metrics::*;

/// `GET /metrics`: the Prometheus text format.
pub async fn render(State(state): State<AppState>) -> Response {
    record_pool(state.db());
    record_replicas(&state.reads.statuses());
    let handle = handle();
    handle.run_upkeep();
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        handle.render(),
    )
        .into_response()
}

/// Sets the pool gauges from the sqlx pool behind `db`.
fn record_pool(db: &DatabaseConnection) {
    let (backend, size, idle, max) = match &db.inner {
        DatabaseConnectionType::SqlxSqlitePoolConnection(_) => {
            let p = db.get_sqlite_connection_pool();
            (
                "sqlite",
                p.size(),
                p.num_idle(),
                p.options().get_max_connections(),
            )
        }
        DatabaseConnectionType::SqlxPostgresPoolConnection(_) => {
            let p = db.get_postgres_connection_pool();
            (
                "postgres",
                p.size(),
                p.num_idle(),
                p.options().get_max_connections(),
            )
        }
        DatabaseConnectionType::SqlxMySqlPoolConnection(_) => {
            let p = db.get_mysql_connection_pool();
            (
                "mysql",
                p.size(),
                p.num_idle(),
                p.options().get_max_connections(),
            )
        }
        _ => return,
    };
    gauge!(DB_POOL_CONNECTIONS, "backend" => backend).set(f64::from(size));
    gauge!(DB_POOL_IDLE, "backend" => backend).set(idle as f64);
    gauge!(DB_POOL_MAX, "backend" => backend).set(f64::from(max));
}

/// Sets the replica gauges.
fn record_replicas(replicas: &[crate::store::replicas::ReplicaStatus]) {
    for r in replicas {
        let name = r.name.clone();
        gauge!(REPLICA_UP, "replica" => name.clone()).set(f64::from(u8::from(r.up)));
        gauge!(REPLICA_IN_ROTATION, "replica" => name.clone())
            .set(f64::from(u8::from(r.in_rotation)));
        if let Some(lag) = r.lag_ms {
            gauge!(REPLICA_LAG, "replica" => name).set(lag as f64 / 1000.0);
        }
    }
}

/// The method as a label: the standard ones by name, anything else `other`.
fn method_label(m: &Method) -> &'static str {
    match *m {
        Method::GET => "GET",
        Method::POST => "POST",
        Method::HEAD => "HEAD",
        Method::OPTIONS => "OPTIONS",
        Method::PUT => "PUT",
        Method::DELETE => "DELETE",
        Method::PATCH => "PATCH",
        _ => "other",
    }
}

/// Middleware counting and timing every answer by matched route and status. It runs after
/// routing (it is added with `Router::layer`), so [`MatchedPath`] is known: raw URLs, which
/// carry addresses, never become labels.
pub async fn track_http(req: Request, next: Next) -> Response {
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_string(), |p| p.as_str().to_string());
    let method = method_label(req.method());
    let start = Instant::now();
    let resp = next.run(req).await;
    let elapsed = start.elapsed().as_secs_f64();
    let status = resp.status().as_u16().to_string();
    counter!(HTTP_REQUESTS, "method" => method, "route" => route.clone(), "status" => status.clone())
        .increment(1);
    histogram!(HTTP_DURATION, "method" => method, "route" => route, "status" => status)
        .record(elapsed);
    resp
}
