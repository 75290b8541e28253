//! The HTTP server: one router for REST v2, GraphQL and the playground, behind API-key auth,
//! plus the operational routes (`/healthz`, `/readyz`, `/metrics`) and the preview images
//! (`/media/{url_hash}/{size}.png`, [`crate::rest::media`]) that need no key.
//!
//! Every request passes, outermost first: the request id and its tracing span
//! ([`crate::ops::request_id`]), the HTTP metrics ([`crate::ops::metrics::track_http`]), CORS
//! when configured ([`crate::ops::cors`]), then the route. [`authenticate`] checks the key
//! (through the key cache) and takes a token from the key's rate-limit bucket.
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

use crate::ops::{metrics, Ops, ServerOptions};
use crate::query::QueryService;

/// Shared state of every handler.
#[derive(Clone)]
pub struct AppState {
    pub service: QueryService,
    pub graphql: crate::graphql::Executor,
    /// Rate-limit buckets, the key cache and the operational settings.
    pub ops: Ops,
}

impl AppState {
    /// Builds the state: the query service and the GraphQL schema, with the default
    /// [`ServerOptions`] (no CORS, no default rate limit, no key cache). Does not migrate.
    pub async fn new(
        db: DatabaseConnection,
        config: crate::query::QueryConfig,
    ) -> Result<Self, sea_orm::DbErr> {
        let service = QueryService::new(db, config).await?;
        let graphql = crate::graphql::schema(service.clone());
        Ok(Self {
            service,
            graphql,
            ops: Ops::default(),
        })
    }

    /// The same state with other operational settings (and fresh buckets and key cache).
    pub fn with_options(mut self, options: ServerOptions) -> Self {
        self.ops = Ops::new(options);
        self
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
    /// The key's bucket is empty; retry after this many seconds (sent as `Retry-After`).
    RateLimited {
        retry_after_secs: u64,
    },
}

impl AuthFailure {
    pub fn message(&self) -> &'static str {
        match self {
            AuthFailure::Missing => "missing API key: send it in the X-API-Key header",
            AuthFailure::Unknown => "invalid API key: unknown or revoked",
            AuthFailure::Unavailable => "the service is temporarily unavailable",
            AuthFailure::RateLimited { .. } => {
                "rate limit exceeded for this API key; retry after the Retry-After delay"
            }
        }
    }
}

/// Checks `X-API-Key` (header names are case-insensitive) and takes a token from the key's
/// rate-limit bucket. An `Authorization: Bearer` header, as the JS SDK also sends, is ignored.
pub async fn authenticate(state: &AppState, headers: &HeaderMap) -> Result<Caller, AuthFailure> {
    let key = headers
        .get("x-api-key")
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|k| !k.is_empty())
        .ok_or(AuthFailure::Missing)?;
    let info = match state.ops.keys().verify(state.db(), key).await {
        Ok(Some(k)) => k,
        Ok(None) => return Err(AuthFailure::Unknown),
        Err(e) => {
            tracing::error!(error = %e, "API key lookup failed");
            return Err(AuthFailure::Unavailable);
        }
    };
    tracing::Span::current().record("key_id", info.id);
    let limit = state.ops.options().rate_defaults.effective(info.rate);
    if let Err(wait) = state.ops.check_rate(info.id, limit).await {
        metrics::rate_limited(info.id);
        return Err(AuthFailure::RateLimited {
            retry_after_secs: crate::ops::rate_limit::retry_after_secs(wait),
        });
    }
    Ok(Caller { key_id: info.id })
}

/// REST auth middleware: 401 `{"message"}` on a missing or bad key, 429 with `Retry-After`
/// over the key's rate limit.
async fn rest_auth(State(state): State<AppState>, mut req: Request, next: Next) -> Response {
    match authenticate(&state, req.headers()).await {
        Ok(caller) => {
            req.extensions_mut().insert(caller);
            next.run(req).await
        }
        Err(AuthFailure::RateLimited { retry_after_secs }) => {
            crate::rest::ApiError::RateLimited { retry_after_secs }.into_response()
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

/// The whole application router.
pub fn router(state: AppState) -> Router {
    use crate::ops::{cors, health, request_id};

    let rest = crate::rest::router()
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            rest_auth,
        ))
        .layer(axum::middleware::from_fn(deprecation));
    let app = Router::new()
        .nest("/api/v2", rest.clone())
        .nest("/api/v2.2", rest)
        .merge(crate::graphql::router())
        .merge(crate::rest::openapi::routes())
        .route("/healthz", get(health::healthz))
        .route("/readyz", get(health::readyz))
        .route("/metrics", get(metrics::render))
        .route(
            "/media/{hash}/{file}",
            get(crate::rest::media::preview_file),
        )
        .fallback(not_found);
    // `Router::layer` wraps each route (after routing, so the matched pattern is known);
    // the last layer added runs first.
    let app = cors::apply(app, &state.ops.options().cors)
        .layer(axum::middleware::from_fn(metrics::track_http));
    request_id::apply(app).with_state(state)
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
