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

/// The documented operations: path, method, operation id (`tests/api/openapi_doc.rs` checks
/// the document against them).
pub const OPERATIONS: &[(&str, &str, &str)] = &[
    ("/streams/evm", "put", "CreateStream"),
    ("/streams/evm", "get", "GetStreams"),
    ("/streams/evm/{id}", "get", "GetStream"),
    ("/streams/evm/{id}", "post", "UpdateStream"),
    ("/streams/evm/{id}", "delete", "DeleteStream"),
    ("/streams/evm/{id}/status", "post", "UpdateStreamStatus"),
    ("/streams/evm/{id}/address", "get", "GetAddresses"),
    ("/streams/evm/{id}/address", "post", "AddAddressToStream"),
    (
        "/streams/evm/{id}/address",
        "delete",
        "DeleteAddressFromStream",
    ),
    (
        "/streams/evm/{id}/block-to-webhook/{block}/{stream}",
        "post",
        "GetStreamBlockDataToWebhookByNumber",
    ),
    ("/settings", "get", "GetSettings"),
    ("/settings", "post", "SetSettings"),
];

/// Whether a documented path is one of these routes (served at the root).
pub fn at_root(path: &str) -> bool {
    path.starts_with("/streams/") || path == "/settings"
}

/// The routes, to mount at the root behind API-key auth.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/streams/evm", put(create).get(list).fallback(get_or_put))
        .route(
            "/streams/evm/{id}",
            get(get_one)
                .post(update)
                .delete(delete)
                .fallback(get_post_or_delete),
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
                .fallback(get_post_or_delete),
        )
        .route(
            "/streams/evm/{id}/block-to-webhook/{block}/{stream}",
            post(replay).fallback(super::post_only),
        )
        .route(
            "/settings",
            get(settings).post(set_settings).fallback(get_or_post),
        )
}

/// Any other method on `/streams/evm`: a JSON 405.
async fn get_or_put() -> ApiError {
    ApiError::MethodNotAllowed("GET or PUT")
}

/// Any other method on a stream or its addresses: a JSON 405.
async fn get_post_or_delete() -> ApiError {
    ApiError::MethodNotAllowed("GET, POST or DELETE")
}

/// Any other method on `/settings`: a JSON 405.
async fn get_or_post() -> ApiError {
    ApiError::MethodNotAllowed("GET or POST")
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

/// `limit` and `cursor` of a list, read through the route's table.
fn page(raw: Option<&str>) -> Result<(u64, Option<String>), ApiError> {
    let p = super::params::RawParams::read(super::spec::STREAMS_PAGE, raw);
    Ok((p.page_size()?.get(), p.cursor()?))
}

fn ok<T: Serialize>(context: &'static str, r: Result<T, ManageError>) -> Answer<T> {
    r.map(Json).map_err(|e| failed(context, e))
}

#[utoipa::path(
    put,
    path = "/streams/evm",
    operation_id = "CreateStream",
    tag = "Streams",
    summary = "Create stream",
    description = "Creates a stream of the caller's key: a webhook URL, chains, the transfer events delivered. It delivers the chains' transfers of the stream's addresses from now on (add them with `AddAddressToStream`), signed with the key's secret (`GetSettings`). tokenql indexes token transfer events only: other events, native or internal transactions and balances are a 400.",
    request_body = crate::webhooks::spec::StreamInput,
    responses(
        (status = 200, description = "The stream made.", body = crate::webhooks::spec::StreamView),
    ),
)]
pub(super) async fn create(
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

#[utoipa::path(
    get,
    path = "/streams/evm",
    operation_id = "GetStreams",
    tag = "Streams",
    summary = "Get streams",
    description = "The caller's streams, by id; pass `cursor` to get the next page.",
    params(
        super::spec::StreamsPage,
    ),
    responses(
        (status = 200, description = "A page of streams.", body = crate::webhooks::manage::StreamPage),
    ),
)]
pub(super) async fn list(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    RawQuery(raw): RawQuery,
) -> Answer<manage::StreamPage> {
    let (limit, cursor) = page(raw.as_deref())?;
    let r = manage::list(&state.service, caller.key_id, limit, cursor.as_deref()).await;
    ok("list_streams", r)
}

#[utoipa::path(
    get,
    path = "/streams/evm/{id}",
    operation_id = "GetStream",
    tag = "Streams",
    summary = "Get stream",
    description = "One stream of the caller's key (another key's is a 404).",
    params(
        ("id" = String, Path, description = "The stream id (36 characters)."),
    ),
    responses(
        (status = 200, description = "The stream.", body = crate::webhooks::spec::StreamView),
    ),
)]
pub(super) async fn get_one(
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

#[utoipa::path(
    post,
    path = "/streams/evm/{id}",
    operation_id = "UpdateStream",
    tag = "Streams",
    summary = "Update stream",
    description = "Changes the fields given; a chain added starts from now, a chain kept keeps its place.",
    params(
        ("id" = String, Path, description = "The stream id (36 characters)."),
    ),
    request_body = crate::webhooks::spec::StreamInput,
    responses(
        (status = 200, description = "The stream updated.", body = crate::webhooks::spec::StreamView),
    ),
)]
pub(super) async fn update(
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

#[utoipa::path(
    delete,
    path = "/streams/evm/{id}",
    operation_id = "DeleteStream",
    tag = "Streams",
    summary = "Delete stream",
    description = "Deletes the stream, its addresses and its place in the change feed.",
    params(
        ("id" = String, Path, description = "The stream id (36 characters)."),
    ),
    responses(
        (status = 200, description = "The stream as it was.", body = crate::webhooks::spec::StreamView),
    ),
)]
pub(super) async fn delete(
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

#[utoipa::path(
    post,
    path = "/streams/evm/{id}/status",
    operation_id = "UpdateStreamStatus",
    tag = "Streams",
    summary = "Update stream status",
    description = "`active` or `paused`; `active` resumes a stream in `error` from the last delivery its receiver accepted.",
    params(
        ("id" = String, Path, description = "The stream id (36 characters)."),
    ),
    request_body = crate::webhooks::spec::StatusInput,
    responses(
        (status = 200, description = "The stream.", body = crate::webhooks::spec::StreamView),
    ),
)]
pub(super) async fn set_status(
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

#[utoipa::path(
    get,
    path = "/streams/evm/{id}/address",
    operation_id = "GetAddresses",
    tag = "Streams",
    summary = "Get addresses by stream",
    description = "The addresses the stream watches, in order; pass `cursor` to get the next page.",
    params(
        ("id" = String, Path, description = "The stream id (36 characters)."),
        super::spec::StreamsPage,
    ),
    responses(
        (status = 200, description = "A page of addresses.", body = crate::webhooks::manage::AddressPage),
    ),
)]
pub(super) async fn addresses(
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

#[utoipa::path(
    post,
    path = "/streams/evm/{id}/address",
    operation_id = "AddAddressToStream",
    tag = "Streams",
    summary = "Add address to stream",
    description = "Adds one address or a list: the stream delivers transfers from, to or of them.",
    params(
        ("id" = String, Path, description = "The stream id (36 characters)."),
    ),
    request_body = crate::webhooks::spec::AddressInput,
    responses(
        (status = 200, description = "The stream and the addresses added.", body = crate::webhooks::manage::AddressesChanged),
    ),
)]
pub(super) async fn add_addresses(
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

#[utoipa::path(
    delete,
    path = "/streams/evm/{id}/address",
    operation_id = "DeleteAddressFromStream",
    tag = "Streams",
    summary = "Delete address from stream",
    description = "Removes one address or a list.",
    params(
        ("id" = String, Path, description = "The stream id (36 characters)."),
    ),
    request_body = crate::webhooks::spec::AddressInput,
    responses(
        (status = 200, description = "The stream and the addresses removed.", body = crate::webhooks::manage::AddressesChanged),
    ),
)]
pub(super) async fn remove_addresses(
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

#[utoipa::path(
    post,
    path = "/streams/evm/{id}/block-to-webhook/{block}/{stream}",
    operation_id = "GetStreamBlockDataToWebhookByNumber",
    tag = "Streams",
    summary = "Send a block to the webhook",
    description = "Sends the stream's delivery of one block again, from the transfers the change feed keeps of it (`confirmed` when the block is buried under the chain's confirmations), and answers the body sent. The receiver's refusal is not an error of this call. The path's segments are, in order, the chain id, the block number and the stream id.",
    params(
        ("id" = String, Path, description = "The chain: a `0x` hex id or a name."),
        ("block" = u64, Path, description = "The block number."),
        ("stream" = String, Path, description = "The stream id."),
    ),
    responses(
        (status = 200, description = "The body sent.", body = crate::webhooks::body::WebhookBody),
    ),
)]
pub(super) async fn replay(
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

#[utoipa::path(
    get,
    path = "/settings",
    operation_id = "GetSettings",
    tag = "Streams",
    summary = "Get project settings",
    description = "The key's webhook signing secret (made on first use) and region.",
    responses(
        (status = 200, description = "The settings.", body = crate::webhooks::manage::Settings),
    ),
)]
pub(super) async fn settings(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
) -> Answer<manage::Settings> {
    ok(
        "get_settings",
        manage::settings(&state.service, caller.key_id).await,
    )
}

#[utoipa::path(
    post,
    path = "/settings",
    operation_id = "SetSettings",
    tag = "Streams",
    summary = "Set project settings",
    description = "Replaces the key's webhook signing secret (`secretKey`, 8 to 256 characters).",
    request_body = crate::webhooks::spec::SettingsInput,
    responses(
        (status = 200, description = "The settings.", body = crate::webhooks::manage::Settings),
    ),
)]
pub(super) async fn set_settings(
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
