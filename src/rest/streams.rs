//! The Moralis Streams management routes, at the server's root (not under `/api/v2`), behind
//! the same API key: streams are visible only to the key that made them.
//!
//! - `PUT /streams/evm`, `GET /streams/evm` (`limit`, `cursor`);
//! - `GET`, `POST` (update), `DELETE /streams/evm/{id}`; `POST /streams/evm/{id}/status`;
//! - `GET`, `POST`, `DELETE /streams/evm/{id}/address` (`address`: one or a list);
//! - `POST /streams/evm/{chainId}/block-to-webhook/{blockNumber}/{streamId}`: a block's
//!   delivery sent again;
//! - `GET`, `POST /settings` (`secretKey`, made on first use).
//!
//! Bodies and parameters are parsed by `webhooks::spec` and `webhooks::manage`; errors follow
//! [`ApiError`]'s policy (400 naming the field, 404 for a stream the key does not hold).

use axum::body::Bytes;
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, RawQuery, State};
use axum::routing::{get, post, put};
use axum::{Extension, Json, Router};
use serde::Serialize;
use serde_json::{Map, Value};

use super::ApiError;
use crate::app::{AppState, Caller};
use crate::types::Chain;
use crate::webhooks::manage::{self, ManageError};
use crate::webhooks::spec::{self, BadInput};
use crate::webhooks::Sender;

/// The routes, to mount at the root behind API-key auth.
pub fn router() -> Router<AppState> {
    Router::new()
        .route(
            "/streams/evm",
            put(create).get(list).fallback(super::method_not_allowed),
        )
        .route(
            "/streams/evm/{id}",
            get(get_one)
                .post(update)
                .delete(delete)
                .fallback(super::method_not_allowed),
        )
        .route(
            "/streams/evm/{id}/status",
            post(set_status).fallback(super::post_only),
        )
        .route(
            "/streams/evm/{id}/address",
            get(addresses)
                .post(add_addresses)
                .delete(remove_addresses)
                .fallback(super::method_not_allowed),
        )
        .route(
            "/streams/evm/{id}/block-to-webhook/{block}/{stream}",
            post(replay).fallback(super::post_only),
        )
        .route(
            "/settings",
            get(settings)
                .post(set_settings)
                .fallback(super::method_not_allowed),
        )
}

type Answer<T> = Result<Json<T>, ApiError>;

fn bad(b: BadInput) -> ApiError {
    ApiError::bad(b.field, b.rule)
}

fn failed(context: &'static str, e: ManageError) -> ApiError {
    match e {
        ManageError::Bad(b) => bad(b),
        ManageError::NotFound => ApiError::NotFound("stream not found"),
        ManageError::NoBlock(m) => ApiError::Missing(m),
        ManageError::Query(q) => ApiError::from_query(context, q),
        ManageError::Db(d) => ApiError::Internal {
            context,
            detail: d.to_string(),
        },
    }
}

fn body(bytes: &Bytes) -> Result<Map<String, Value>, ApiError> {
    spec::object(bytes).map_err(bad)
}

fn stream_id(path: Result<Path<String>, PathRejection>) -> Result<String, ApiError> {
    let Path(raw) = path.map_err(|_| ApiError::bad("id", "not a valid path segment"))?;
    manage::parse_stream_id(&raw, "id").map_err(bad)
}

/// `limit` and `cursor` of a list.
fn page(raw: Option<&str>) -> Result<(u64, Option<String>), ApiError> {
    let mut limit = None;
    let mut cursor = None;
    for (k, v) in form_urlencoded::parse(raw.unwrap_or_default().as_bytes()) {
        match k.as_ref() {
            "limit" => limit = Some(v.into_owned()),
            "cursor" if !v.is_empty() => cursor = Some(v.into_owned()),
            _ => {}
        }
    }
    let limit = manage::page_limit(limit.as_deref()).map_err(bad)?;
    Ok((limit, cursor))
}

fn ok<T: Serialize>(context: &'static str, r: Result<T, ManageError>) -> Answer<T> {
    r.map(Json).map_err(|e| failed(context, e))
}

async fn create(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    bytes: Bytes,
) -> Answer<spec::StreamView> {
    let spec = spec::parse_spec(&body(&bytes)?).map_err(bad)?;
    ok(
        "create_stream",
        manage::create(&state.service, caller.key_id, spec).await,
    )
}

async fn list(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    RawQuery(raw): RawQuery,
) -> Answer<manage::StreamPage> {
    let (limit, cursor) = page(raw.as_deref())?;
    let r = manage::list(&state.service, caller.key_id, limit, cursor.as_deref()).await;
    ok("list_streams", r)
}

async fn get_one(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    path: Result<Path<String>, PathRejection>,
) -> Answer<spec::StreamView> {
    let id = stream_id(path)?;
    ok(
        "get_stream",
        manage::get(&state.service, caller.key_id, &id).await,
    )
}

async fn update(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    path: Result<Path<String>, PathRejection>,
    bytes: Bytes,
) -> Answer<spec::StreamView> {
    let id = stream_id(path)?;
    let patch = spec::parse_patch(&body(&bytes)?).map_err(bad)?;
    let r = manage::update(&state.service, caller.key_id, &id, patch).await;
    ok("update_stream", r)
}

async fn delete(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    path: Result<Path<String>, PathRejection>,
) -> Answer<spec::StreamView> {
    let id = stream_id(path)?;
    ok(
        "delete_stream",
        manage::delete(&state.service, caller.key_id, &id).await,
    )
}

async fn set_status(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    path: Result<Path<String>, PathRejection>,
    bytes: Bytes,
) -> Answer<spec::StreamView> {
    let id = stream_id(path)?;
    let status = manage::parse_status(&body(&bytes)?).map_err(bad)?;
    let r = manage::set_status(&state.service, caller.key_id, &id, status).await;
    ok("stream_status", r)
}

async fn addresses(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    path: Result<Path<String>, PathRejection>,
    RawQuery(raw): RawQuery,
) -> Answer<manage::AddressPage> {
    let id = stream_id(path)?;
    let (limit, cursor) = page(raw.as_deref())?;
    let r = manage::addresses(&state.service, caller.key_id, &id, limit, cursor.as_deref()).await;
    ok("stream_addresses", r)
}

async fn add_addresses(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    path: Result<Path<String>, PathRejection>,
    bytes: Bytes,
) -> Answer<manage::AddressesChanged> {
    let id = stream_id(path)?;
    let m = body(&bytes)?;
    let r = manage::change_addresses(&state.service, caller.key_id, &id, &m, true).await;
    ok("add_stream_addresses", r)
}

async fn remove_addresses(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    path: Result<Path<String>, PathRejection>,
    bytes: Bytes,
) -> Answer<manage::AddressesChanged> {
    let id = stream_id(path)?;
    let m = body(&bytes)?;
    let r = manage::change_addresses(&state.service, caller.key_id, &id, &m, false).await;
    ok("remove_stream_addresses", r)
}

async fn replay(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    path: Result<Path<(String, String, String)>, PathRejection>,
) -> Answer<crate::webhooks::body::WebhookBody> {
    let Path((chain, block, stream)) =
        path.map_err(|_| ApiError::bad("chainId", "not a valid path segment"))?;
    let chain = Chain::parse(&chain).map_err(|e| ApiError::parse("chainId", e))?;
    let block: u64 = block
        .parse()
        .map_err(|_| ApiError::bad("blockNumber", format!("'{block}' is not a block number")))?;
    let id = manage::parse_stream_id(&stream, "streamId").map_err(bad)?;
    let sender =
        Sender::new(std::time::Duration::from_secs(10)).map_err(|detail| ApiError::Internal {
            context: "replay_block",
            detail,
        })?;
    let confirmations = &state.ops.options().webhook_confirmations;
    let r = manage::replay(
        &state.service,
        caller.key_id,
        (chain, block, &id),
        confirmations,
        &sender,
    )
    .await;
    ok("replay_block", r)
}

async fn settings(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
) -> Answer<manage::Settings> {
    ok(
        "get_settings",
        manage::settings(&state.service, caller.key_id).await,
    )
}

async fn set_settings(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    bytes: Bytes,
) -> Answer<manage::Settings> {
    let m = body(&bytes)?;
    ok(
        "set_settings",
        manage::set_settings(&state.service, caller.key_id, &m).await,
    )
}
