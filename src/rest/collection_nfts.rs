//! `GET /nft/{address}` (`getContractNFTs`): the tokens of a collection someone holds, one
//! record per token id, ordered by token id, in the shape of `GET /{address}/nft` with the
//! same `format`, `normalizeMetadata` and `media_items`. `owner_of` is the holder when exactly
//! one wallet holds the token (every ERC721 token) and `null` when several do (an ERC1155 id);
//! `amount` is how many are held over all holders.
//!
//! `status` is `SYNCED` once the collection's whole history is indexed; before, the first
//! request schedules it and answers `SYNCING` with only the tokens partial history cannot have
//! made up (ERC721 tokens acquired since the live start block).
//!
//! `GET /nft/{address}/{token_id}` (`getNFTMetadata`) is the same record for one token, alone
//! (a bare object, as Moralis answers it), its status in the `X-Sync-Status` header; a token
//! nobody holds is a 404.

use axum::extract::rejection::PathRejection;
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};

use super::balances::SYNC_STATUS_HEADER;
use super::envelope::{with_block, CollectionNfts};
use super::error::ApiError;
use super::nft::{path_rejection, records, NftRecord};
use super::params::{settle_date, CollectionNftsParams};
use crate::app::{preview_base, AppState, Reader};

/// The handler of `GET /nft/{address}`.
#[utoipa::path(
    get,
    path = "/nft/{address}",
    operation_id = "getContractNFTs",
    tag = "NFT",
    summary = "Get NFTs by contract",
    description = "The tokens of a collection that some wallet holds, one record per token id, \
ordered by token id; pass `cursor` to get the next page. `owner_of` is the holder when exactly \
one wallet holds the token, `null` when several do (an ERC1155 id); `amount` is how many are \
held over all holders.\n\n\
`status` is `SYNCED` once the collection's whole history is indexed; the first request for a \
collection that is not starts fetching it, and answers `SYNCING` with only the tokens partial \
history cannot have made up.",
    params(
        ("address" = super::schemas::AddressSchema, Path, description = "The collection: `0x` and 40 hex digits, in any letter case."),
        super::spec::CollectionNfts,
    ),
    responses(
        (status = 200, description = "A page of the collection's tokens.", body = CollectionNfts<NftRecord>),
    ),
)]
pub(super) async fn collection_nfts(
    State(state): State<AppState>,
    Reader(service): Reader,
    address: Result<Path<String>, PathRejection>,
    RawQuery(raw): RawQuery,
    headers: HeaderMap,
) -> Result<CollectionNfts<NftRecord>, ApiError> {
    let Path(address) = address.map_err(|r| path_rejection("address", r))?;
    let mut params = CollectionNftsParams::parse(&address, None, raw.as_deref())?;
    let q = &mut params.query;
    settle_date(&service, q.chain, &mut q.at_block, params.to_date).await?;
    answer(&state, &headers, &service, &params).await
}

/// Reads a page of the collection's tokens and writes its records.
async fn answer(
    state: &AppState,
    headers: &HeaderMap,
    service: &crate::query::QueryService,
    params: &CollectionNftsParams,
) -> Result<CollectionNfts<NftRecord>, ApiError> {
    let answer = service
        .collection_nfts(
            &params.query,
            params.cursor.as_deref(),
            params.shape.include(),
        )
        .await
        .map_err(|e| ApiError::from_query("collection_nfts", e))?;
    let base = preview_base(state, headers);
    let result = records(params.query.chain, &answer, &params.shape, &base);
    Ok(CollectionNfts::new(&answer.page, result))
}

/// The handler of `GET /nft/{address}/{token_id}`.
#[utoipa::path(
    get,
    path = "/nft/{address}/{token_id}",
    operation_id = "getNFTMetadata",
    tag = "NFT",
    summary = "Get NFT metadata",
    description = "One NFT: its collection, id, holder (`owner_of`, when exactly one wallet \
holds it; `null` when several do, an ERC1155 id), the amount held, its URI, metadata and, with \
`media_items=true`, its preview media. A bare record, as the record of `getContractNFTs`.\n\n\
The `X-Sync-Status` header is `SYNCED` once the collection's whole history is indexed. A token \
nobody holds is a 404; while the collection's history is being fetched, the 404 says so \
(`SYNCING`): ask again.",
    params(
        ("address" = super::schemas::AddressSchema, Path, description = "The collection: `0x` and 40 hex digits, in any letter case."),
        ("token_id" = String, Path, description = "The token id: decimal digits, or `0x` and hex digits; at most 2^256-1."),
        super::spec::NftLists,
    ),
    responses(
        (status = 200, description = "The NFT.", body = NftRecord,
            headers(("X-Sync-Status" = super::envelope::SyncStatusSchema, description = "`SYNCED` when the answer is complete, `SYNCING` while the collection's history is being fetched."))),
    ),
)]
pub(super) async fn nft_metadata(
    State(state): State<AppState>,
    Reader(service): Reader,
    path: Result<Path<(String, String)>, PathRejection>,
    RawQuery(raw): RawQuery,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let Path((address, token_id)) = path.map_err(|r| path_rejection("address", r))?;
    let params = CollectionNftsParams::parse(&address, Some(&token_id), raw.as_deref())?;
    let page = answer(&state, &headers, &service, &params).await?;
    let status = page.status;
    let Some(record) = page.result.into_iter().next() else {
        let why = if status == "SYNCED" {
            "nobody holds it".to_string()
        } else {
            "nobody is known to hold it yet: the collection's history is being fetched \
             (SYNCING); ask again"
                .to_string()
        };
        return Err(ApiError::Missing(format!(
            "NFT {address} #{token_id} not found: {why}"
        )));
    };
    let header = (SYNC_STATUS_HEADER, HeaderValue::from_static(status));
    Ok(([header], with_block(page.block, record)).into_response())
}
