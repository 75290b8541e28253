//! The HTTP server: one router for REST v2, GraphQL and the playground, behind API-key auth.
//!
//! [`run`] takes a bound listener and a shutdown future, so tests start it on port 0 and stop
//! it when they are done; `main` passes SIGINT/SIGTERM.

use std::future::Future;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use sea_orm::DatabaseConnection;
use tokio::net::TcpListener;

use crate::query::QueryService;

/// Shared state of every handler.
#[derive(Clone)]
pub struct AppState {
    pub service: QueryService,
    pub graphql: crate::graphql::AppSchema,
}

impl AppState {
    /// Builds the state: the query service and the GraphQL schema. Does not migrate.
    pub async fn new(
        db: DatabaseConnection,
        config: crate::query::QueryConfig,
    ) -> Result<Self, sea_orm::DbErr> {
        let service = QueryService::new(db, config).await?;
        let graphql = crate::graphql::schema(service.clone());
        Ok(Self { service, graphql })
    }

    pub fn db(&self) -> &DatabaseConnection {
        self.service.db()
    }
}

/// Who made the request: the authenticated key.
#[derive(Debug, Clone)]
pub struct Caller {
    pub key_id: i32,
}

/// Why a request was refused before reaching a handler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthFailure {
    Missing,
    Unknown,
    Unavailable,
}

impl AuthFailure {
    pub fn message(&self) -> &'static str {
        match self {
            AuthFailure::Missing => "missing API key: send it in the X-API-Key header",
            AuthFailure::Unknown => "invalid API key: unknown or revoked",
            AuthFailure::Unavailable => "the service is temporarily unavailable",
        }
    }
}

/// Checks `X-API-Key` (header names are case-insensitive). An `Authorization: Bearer` header,
/// as the JS SDK also sends, is ignored.
pub async fn authenticate(state: &AppState, headers: &HeaderMap) -> Result<Caller, AuthFailure> {
    let key = headers
        .get("x-api-key")
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|k| !k.is_empty())
        .ok_or(AuthFailure::Missing)?;
    match crate::keys::verify(state.db(), key).await {
        Ok(Some(k)) => Ok(Caller { key_id: k.id }),
        Ok(None) => Err(AuthFailure::Unknown),
        Err(e) => {
            tracing::error!(error = %e, "API key lookup failed");
            Err(AuthFailure::Unavailable)
        }
    }
}

/// REST auth middleware: 401 `{"message"}` on a missing or bad key.
async fn rest_auth(State(state): State<AppState>, mut req: Request, next: Next) -> Response {
    match authenticate(&state, req.headers()).await {
        Ok(caller) => {
            req.extensions_mut().insert(caller);
            next.run(req).await
        }
        Err(f) => {
            let status = match f {
                AuthFailure::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
                _ => StatusCode::UNAUTHORIZED,
            };
            (status, Json(serde_json::json!({ "message": f.message() }))).into_response()
        }
    }
}

/// The deprecated v2 transfers route says so on every answer, auth failures included
/// (RFC 9745; deprecated upstream on 2023-09-04).
async fn deprecation(req: Request, next: Next) -> Response {
    let deprecated = req.uri().path().ends_with("/erc20/transfers");
    let mut resp = next.run(req).await;
    if deprecated {
        resp.headers_mut()
            .insert("deprecation", crate::rest::transfers::DEPRECATED_SINCE);
    }
    resp
}

async fn not_found() -> Response {
    (
        StatusCode::NOT_FOUND,
        Json(serde_json::json!({ "message": "no such route" })),
    )
        .into_response()
}

async fn healthz() -> &'static str {
    "ok"
}

/// The whole application router.
pub fn router(state: AppState) -> Router {
    let rest = crate::rest::router()
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            rest_auth,
        ))
        .layer(axum::middleware::from_fn(deprecation));
    Router::new()
        .nest("/api/v2", rest.clone())
        .nest("/api/v2.2", rest)
        .merge(crate::graphql::router())
        .route("/healthz", get(healthz))
        .fallback(not_found)
        .with_state(state)
}

/// Serves until `shutdown` completes, then drains in-flight requests.
pub async fn run(
    listener: TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(listener, router(state))
        .with_graceful_shutdown(shutdown)
        .await
}

/// Completes on SIGINT or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
    tracing::info!("shutdown signal received");
}
