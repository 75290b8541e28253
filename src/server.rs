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
use crate::store::replicas::{ReadChoice, Reads};

/// Shared state of every handler.
#[derive(Clone)]
pub struct AppState {
    /// The query service on the primary; a request's reads go through [`Reader`].
    pub service: QueryService,
    pub graphql: crate::graphql::Executor,
    /// Rate-limit buckets, the key cache and the operational settings.
    pub ops: Ops,
    /// The primary and the read replicas.
    pub reads: Reads,
}

impl AppState {
    /// Builds the state: the query service and the GraphQL schema, with the default
    /// [`ServerOptions`] (no CORS, no default rate limit, no key cache). Does not migrate.
    pub async fn new(
        db: DatabaseConnection,
        config: crate::query::QueryConfig,
    ) -> Result<Self, sea_orm::DbErr> {
        let reads = Reads::primary_only(db.clone());
        let service = QueryService::new(db, config).await?;
        let graphql = crate::graphql::schema(service.clone());
        Ok(Self {
            service,
            graphql,
            ops: Ops::default(),
            reads,
        })
    }

    /// The same state reading through `reads` (whose primary must be this state's database).
    pub fn with_reads(mut self, reads: Reads) -> Self {
        self.reads = reads;
        self
    }

    /// The same state with other operational settings (and fresh buckets and key cache).
    pub fn with_options(mut self, options: ServerOptions) -> Self {
        self.ops = Ops::new(options);
        self
    }

    /// The primary database.
    pub fn db(&self) -> &DatabaseConnection {
        self.service.db()
    }
}

/// The query service reading where this request's reads go ([`route_reads`]).
pub struct Reader(pub QueryService);

impl axum::extract::FromRequestParts<AppState> for Reader {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        Ok(Reader(reader(state, &parts.extensions)))
    }
}

/// The query service for a request with these extensions.
pub fn reader(state: &AppState, extensions: &axum::http::Extensions) -> QueryService {
    match extensions.get::<ReadChoice>() {
        Some(choice) => state.service.reading_from(choice),
        None => state.service.clone(),
    }
}

/// Set on a response whose answer failed on our side (a GraphQL response carries its errors in
/// a 200): with [`route_reads`], a request that failed on a replica is retried on the primary.
#[derive(Debug, Clone, Copy)]
pub struct ReadFailed;

/// The largest request body [`route_reads`] keeps for a retry; larger ones are not retried.
const RETRY_BODY_BYTES: usize = 1 << 20;

/// Sends the request's reads to a replica in rotation ([`Reads::pick`]); when the answer
/// fails there, takes the replica out of rotation and answers from the primary instead, so a
/// replica that goes down costs no failed request beyond those it had in flight.
async fn route_reads(State(state): State<AppState>, req: Request, next: Next) -> Response {
    if !state.reads.has_replicas() {
        return next.run(req).await;
    }
    let choice = state.reads.pick();
    let Some(replica) = choice.replica else {
        return next.run(req).await;
    };
    let (parts, body) = req.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, RETRY_BODY_BYTES).await else {
        let mut req = Request::from_parts(parts, axum::body::Body::empty());
        req.extensions_mut().insert(choice);
        return next.run(req).await;
    };
    let mut first = Request::from_parts(parts.clone(), axum::body::Body::from(bytes.clone()));
    first.extensions_mut().insert(choice);
    let resp = next.clone().run(first).await;
    if !resp.status().is_server_error() && resp.extensions().get::<ReadFailed>().is_none() {
        return resp;
    }
    state.reads.suspect(replica);
    let retry = Request::from_parts(parts, axum::body::Body::from(bytes));
    next.run(retry).await
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
    let api = Router::new()
        .nest("/api/v2", rest.clone())
        .nest("/api/v2.2", rest)
        .merge(crate::graphql::router())
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            route_reads,
        ));
    let app = Router::new()
        .merge(api)
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
