//! The two requests that start work (v2.2):
//!
//! - `PUT /nft/{address}/sync` (`syncNFTContract`): queues the collection's whole history (the
//!   same fetch the first question about it starts); `201 {"message": "Request Initiated"}`.
//! - `GET /nft/{address}/{token_id}/metadata/resync` (`reSyncMetadata`): the token's metadata
//!   is fetched again by the off-chain worker, after its token URI is read again from the chain
//!   (`flag=uri`, the default) or from the URI already known (`flag=metadata`). `mode=async`
//!   (the default) answers 202 at once; `mode=sync` waits up to 15 s for the outcome: 200 when
//!   the document was fetched, 404 when it could not be, 202 when it is still under way. A
//!   token tokenql does not store is a 404 `{"message"}`.

use axum::extract::rejection::PathRejection;
use axum::extract::{Path, RawQuery};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Serialize;
use utoipa::ToSchema;

use super::error::ApiError;
use super::lookup_params::{address_and_chain, ResyncParams};
use super::nft::path_rejection;
use crate::app::Reader;
use crate::query::RefetchOutcome;

/// `syncNFTContract`'s answer.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = nftSyncRequest)]
pub struct SyncAnswer {
    /// `Request Initiated`.
    #[schema(example = "Request Initiated")]
    pub message: &'static str,
}

/// The handler of `PUT /nft/{address}/sync`.
#[utoipa::path(
    put,
    path = "/nft/{address}/sync",
    operation_id = "syncNFTContract",
    tag = "NFT",
    summary = "Resync NFT contract",
    description = "Queues the collection's whole history for indexing (nothing to do when it is \
indexed or under way already). Its answers say `SYNCED` once it is done.",
    params(
        ("address" = super::schemas::AddressSchema, Path, description = "The collection: `0x` and 40 hex digits, in any letter case."),
        super::spec::ChainOnly,
    ),
    responses(
        (status = 201, description = "The history is queued.", body = SyncAnswer),
    ),
)]
pub(super) async fn sync_collection(
    Reader(service): Reader,
    address: Result<Path<String>, PathRejection>,
    RawQuery(raw): RawQuery,
) -> Result<Response, ApiError> {
    let (address, chain) = address_and_chain("address", address, raw.as_deref())?;
    service
        .sync_collection(chain, address)
        .await
        .map_err(|e| ApiError::from_query("sync_collection", e))?;
    let body = SyncAnswer {
        message: "Request Initiated",
    };
    Ok((StatusCode::CREATED, Json(body)).into_response())
}

/// `reSyncMetadata`'s answer.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = metadataResync)]
pub struct ResyncAnswer {
    /// What became of the request.
    pub status: String,
    /// The same text: a 404 answers `{"message"}` as every error does.
    pub message: String,
}

/// The handler of `GET /nft/{address}/{token_id}/metadata/resync`.
#[utoipa::path(
    get,
    path = "/nft/{address}/{token_id}/metadata/resync",
    operation_id = "reSyncMetadata",
    tag = "NFT",
    summary = "Resync NFT metadata",
    description = "Fetches the token's metadata again: its token URI is read again from the chain \
first (`flag=uri`, the default), or the document is read from the URI already known \
(`flag=metadata`). `mode=async` (the default) answers 202 at once; `mode=sync` waits up to 15 s: \
200 when the document was fetched, 404 when it could not be (the worker retries on its usual \
schedule), 202 when it is still under way. A token nobody has held is a 404 with a \
`{\"message\"}`.",
    params(
        ("address" = super::schemas::AddressSchema, Path, description = "The collection: `0x` and 40 hex digits, in any letter case."),
        ("token_id" = String, Path, description = "The token id: decimal digits, or `0x` and hex digits; at most 2^256-1."),
        super::spec::ResyncMetadata,
    ),
    responses(
        (status = 200, description = "(`mode=sync`) The metadata was fetched again.", body = ResyncAnswer),
        (status = 202, description = "The fetch is queued (or, with `mode=sync`, still under way).", body = ResyncAnswer),
    ),
)]
pub(super) async fn resync_metadata(
    Reader(service): Reader,
    path: Result<Path<(String, String)>, PathRejection>,
    RawQuery(raw): RawQuery,
) -> Result<Response, ApiError> {
    let Path((address, token_id)) = path.map_err(|r| path_rejection("address", r))?;
    let p = ResyncParams::parse(&address, &token_id, raw.as_deref())?;
    let outcome = service
        .refetch_metadata(p.chain, p.contract, p.token_id, p.from, p.wait)
        .await
        .map_err(|e| ApiError::from_query("refetch_metadata", e))?;
    let (code, status) = match outcome {
        RefetchOutcome::Unknown => {
            return Err(ApiError::Missing(format!(
                "NFT {address} #{token_id} not found: no transfer of it is indexed"
            )))
        }
        RefetchOutcome::Queued => (
            StatusCode::ACCEPTED,
            "Request received: the metadata will be fetched again",
        ),
        RefetchOutcome::Fetched => (StatusCode::OK, "The metadata was fetched again"),
        RefetchOutcome::Failed => (
            StatusCode::NOT_FOUND,
            "The metadata could not be fetched; it is retried later",
        ),
        RefetchOutcome::NoUri => (
            StatusCode::NOT_FOUND,
            "The token has no token URI: there is no metadata to fetch",
        ),
    };
    let body = ResyncAnswer {
        status: status.to_string(),
        message: status.to_string(),
    };
    Ok((code, Json(body)).into_response())
}
