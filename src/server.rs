//! The HTTP server: one router for REST v2, GraphQL and the playground, behind API-key auth,
//! plus the operational routes (`/healthz`, `/readyz`, `/metrics`) and the preview images
//! (`/media/{url_hash}/{size}.png`, [`crate::rest::media`]) that need no key.
//!
//! Every request passes, outermost first: the request id and its tracing span
//! ([`crate::ops::request_id`]), the HTTP metrics ([`crate::ops::metrics::track_http`]), CORS
//! when configured ([`crate::app::cors`]), then the route. [`authenticate`] checks the key
//! (through the key cache) and takes a token from the key's rate-limit bucket.
//!
//! [`run`] takes a bound listener and a shutdown future, so tests start it on port 0 and stop
//! it when they are done; `main` passes SIGINT/SIGTERM.

use std::future::Future;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use tokio::net::TcpListener;

use crate::app::{authenticate, AppState, AuthFailure, NotAReadFailure, ReadFailed};
use crate::ops::metrics;

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
    let read_ok =
        !resp.status().is_server_error() || resp.extensions().get::<NotAReadFailure>().is_some();
    if read_ok && resp.extensions().get::<ReadFailed>().is_none() {
        return resp;
    }
    state.reads.suspect(replica);
    let retry = Request::from_parts(parts, axum::body::Body::from(bytes));
    next.run(retry).await
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
        Err(AuthFailure::Unavailable) => crate::rest::ApiError::Unavailable {
            context: "api key check",
            detail: "the database is unavailable".to_string(),
        }
        .into_response(),
        Err(f) => crate::rest::ApiError::Unauthorized(f.message()).into_response(),
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
    crate::rest::ApiError::NotFound("no such route").into_response()
}

/// The whole application router.
pub fn router(state: AppState) -> Router {
    use crate::app::cors;
    use crate::ops::{health, request_id};

    let rest = crate::rest::router()
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            rest_auth,
        ))
        .layer(axum::middleware::from_fn(deprecation));
    let api = Router::new()
        .nest("/api/v2", rest.clone())
        .nest("/api/v2.2", rest)
        .merge(crate::graphql::router(crate::graphql::schema(
            state.service.clone(),
        )))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            route_reads,
        ));
    let streams = crate::rest::streams::router().layer(axum::middleware::from_fn_with_state(
        state.clone(),
        rest_auth,
    ));
    // At the root, as Moralis's streams host serves them; also under the Data API's prefixes,
    // for a client configured with one base URL (and the document's global server).
    let app = Router::new()
        .merge(api)
        .nest("/api/v2", streams.clone())
        .nest("/api/v2.2", streams.clone())
        .merge(streams)
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
