//! `GET /nft/{address}` (`getContractNFTs`): the tokens of a collection someone holds, one
//! record per token id, ordered by token id, in the shape of `GET /{address}/nft` with the
//! same `format`, `normalizeMetadata` and `media_items`. `owner_of` is the holder when exactly
//! one wallet holds the token (every ERC721 token) and `null` when several do (an ERC1155 id);
//! `amount` is how many are held over all holders.
//!
//! `status` is `SYNCED` once the collection's whole history is indexed; before, the first
//! request schedules it and answers `SYNCING` with only the tokens partial history cannot have
//! made up (ERC721 tokens acquired since the live start block).

use axum::extract::rejection::PathRejection;
use axum::extract::{Path, RawQuery, State};
use axum::http::HeaderMap;

use super::envelope::CollectionNfts;
use super::error::ApiError;
use super::nft::{path_rejection, records, NftRecord};
use super::params::CollectionNftsParams;
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
        super::spec::NftLists,
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
    let params = CollectionNftsParams::parse(&address, raw.as_deref())?;
    let answer = service
        .collection_nfts(
            &params.query,
            params.cursor.as_deref(),
            params.shape.include(),
        )
        .await
        .map_err(|e| ApiError::from_query("collection_nfts", e))?;
    let base = preview_base(&state, &headers);
    let result = records(params.query.chain, &answer, &params.shape, &base);
    Ok(CollectionNfts::new(&answer.page, result))
}
