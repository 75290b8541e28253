//! The v2.2 owner routes:
//!
//! - `GET /nft/{address}/owners` (`getNFTOwners`): who holds a collection's tokens;
//! - `GET /nft/{address}/{token_id}/owners` (`getNFTTokenIdOwners`): who holds one token (an
//!   ERC1155 id may have many holders).
//!
//! One record per (token, owner), ordered by token id then owner, in the shape of
//! `GET /{address}/nft` (`nftOwner`), with the same `format`, `normalizeMetadata` and
//! `media_items`. `status` is `SYNCED` once the collection's whole history is indexed; before,
//! the first request schedules it and answers `SYNCING` with only the holdings partial history
//! cannot have made up (ERC721 tokens acquired since the live start block).

use axum::extract::rejection::PathRejection;
use axum::extract::{Path, RawQuery, State};
use axum::http::HeaderMap;

use super::envelope::NftEnvelope;
use super::error::ApiError;
use super::nft::{path_rejection, records, NftRecord};
use super::params::{settle_date, OwnersParams};
use crate::app::{preview_base, AppState, Reader};

/// Reads a page of holders and writes its records.
async fn answer(
    state: &AppState,
    headers: &HeaderMap,
    service: &crate::query::QueryService,
    mut params: OwnersParams,
) -> Result<NftEnvelope<NftRecord>, ApiError> {
    let q = &mut params.query;
    settle_date(service, q.chain, &mut q.at_block, params.to_date).await?;
    let answer = service
        .nft_owners(
            &params.query,
            params.cursor.as_deref(),
            params.shape.include(),
        )
        .await
        .map_err(|e| ApiError::from_query("nft_owners", e))?;
    let base = preview_base(state, headers);
    let result = records(params.query.chain, &answer, &params.shape, &base);
    Ok(NftEnvelope::new(&answer.page, result))
}

/// The handler of `GET /nft/{address}/owners`.
#[utoipa::path(
    get,
    path = "/nft/{address}/owners",
    operation_id = "getNFTOwners",
    tag = "NFT",
    summary = "Get NFT owners by contract",
    description = "Who holds a collection's tokens: one record per (token, owner), ordered by \
token id, then owner; pass `cursor` to get the next page.\n\n\
`status` is `SYNCED` once the collection's whole history is indexed; the first request for a \
collection that is not starts fetching it, and answers `SYNCING` with only the holdings that \
partial history cannot have made up.",
    params(
        ("address" = super::schemas::AddressSchema, Path, description = "The collection: `0x` and 40 hex digits, in any letter case."),
        super::spec::NftOwners,
    ),
    responses(
        (status = 200, description = "A page of the collection's holders.", body = NftEnvelope<NftRecord>),
    ),
)]
pub(super) async fn collection_owners(
    State(state): State<AppState>,
    Reader(service): Reader,
    address: Result<Path<String>, PathRejection>,
    RawQuery(raw): RawQuery,
    headers: HeaderMap,
) -> Result<NftEnvelope<NftRecord>, ApiError> {
    let Path(address) = address.map_err(|r| path_rejection("address", r))?;
    let params = OwnersParams::parse(&address, None, raw.as_deref())?;
    answer(&state, &headers, &service, params).await
}

/// The handler of `GET /nft/{address}/{token_id}/owners`.
#[utoipa::path(
    get,
    path = "/nft/{address}/{token_id}/owners",
    operation_id = "getNFTTokenIdOwners",
    tag = "NFT",
    summary = "Get NFT owners by token ID",
    description = "Who holds one token: one record per owner (an ERC1155 id may have many), \
ordered by owner; pass `cursor` to get the next page.\n\n\
`status` is `SYNCED` once the collection's whole history is indexed (see `getNFTOwners`).",
    params(
        ("address" = super::schemas::AddressSchema, Path, description = "The collection: `0x` and 40 hex digits, in any letter case."),
        ("token_id" = String, Path, description = "The token id: decimal digits, or `0x` and hex digits; at most 2^256-1."),
        super::spec::NftOwners,
    ),
    responses(
        (status = 200, description = "A page of the token's holders.", body = NftEnvelope<NftRecord>),
    ),
)]
pub(super) async fn token_owners(
    State(state): State<AppState>,
    Reader(service): Reader,
    path: Result<Path<(String, String)>, PathRejection>,
    RawQuery(raw): RawQuery,
    headers: HeaderMap,
) -> Result<NftEnvelope<NftRecord>, ApiError> {
    let Path((address, token_id)) = path.map_err(|r| path_rejection("address", r))?;
    let params = OwnersParams::parse(&address, Some(&token_id), raw.as_deref())?;
    answer(&state, &headers, &service, params).await
}
