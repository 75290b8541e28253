//! The NFT collection lookups (v2.2):
//!
//! - `POST /nft/getMultipleNFTs` (`getMultipleNFTs`): up to 25 NFTs named in the body, one
//!   entry per requested token, in request order, each the record `GET /nft/{address}/{token_id}`
//!   answers, or `null` for a token nobody holds.
//! - `GET /nft/{address}/metadata` (`getNFTContractMetadata`) and `POST /nft/metadata`
//!   (`getNFTBulkContractMetadata`, up to 25): a collection contract's name, symbol, standard and
//!   marks. Fields tokenql has no data for (banner, category, links, floor prices, last sale)
//!   are `null`; `collection_logo` is the token list's logo, when one is imported.
//! - `GET /nft/{address}/stats` (`getNFTCollectionStats`): its held tokens, current owners and
//!   transfers.
//! - `GET /nft/{address}/{token_id}/stats` (`getNFTTokenStats`): one NFT's current owners and
//!   transfers.
//! - `GET /nft/{address}/unique-owners` (`getUniqueOwnersByCollection`): the distinct wallets
//!   holding it, by address, paged.
//!
//! Each depends on the named collections' whole history: the single-object answers carry
//! their status in the `X-Sync-Status` header, the paged one in its body, and an incomplete
//! answer schedules the history it lacks.

use axum::extract::rejection::{JsonRejection, PathRejection};
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

use super::balances::SYNC_STATUS_HEADER;
use super::envelope::{text, with_block};
use super::error::ApiError;
use super::lookup_params::{
    address_and_chain, chain_only, path_address, ContractsParams, MultipleNftsParams,
    UniqueOwnersParams,
};
use super::nft::{collection_record, path_rejection, NftRecord};
use crate::app::{preview_base, AppState, Reader};
use crate::query::{NftContract, Stated, SyncStatus};
use crate::types::{iso8601_ms, Address, Uint256};

/// `value` as JSON with the status headers of the answer it was read in.
fn stated_response(status: SyncStatus, block: Option<u64>, value: impl Serialize) -> Response {
    let header = (
        SYNC_STATUS_HEADER,
        HeaderValue::from_static(status.as_str()),
    );
    ([header], with_block(block, value)).into_response()
}

/// The handler of `POST /nft/getMultipleNFTs`.
#[utoipa::path(
    post,
    path = "/nft/getMultipleNFTs",
    operation_id = "getMultipleNFTs",
    tag = "NFT",
    summary = "Get metadata for NFTs",
    description = "Up to 25 NFTs named in the body: one entry per requested token, in request \
order, each the record `getNFTMetadata` answers, or `null` for a token nobody holds. The \
`X-Sync-Status` header is `SYNCED` once every named collection's whole history is indexed; \
before, the request starts fetching it, and a token may be `null` only because it is not fetched \
yet.",
    params(super::spec::ChainOnly),
    request_body(content = super::lookup_params::MultipleNftsBody, description = "The NFTs, 1 to 25, and how to write them."),
    responses(
        (status = 200, description = "One entry per requested token.", body = Vec<Option<NftRecord>>,
            headers(("X-Sync-Status" = super::envelope::SyncStatusSchema, description = "`SYNCED` when the answer is complete."))),
    ),
)]
pub(super) async fn multiple_nfts(
    State(state): State<AppState>,
    Reader(service): Reader,
    RawQuery(raw): RawQuery,
    headers: HeaderMap,
    body: Result<Json<Value>, JsonRejection>,
) -> Result<Response, ApiError> {
    let params = MultipleNftsParams::parse(raw.as_deref(), body)?;
    let listing = service
        .nfts_by_ids(params.chain, &params.tokens, params.shape.include())
        .await
        .map_err(|e| ApiError::from_query("nfts_by_ids", e))?;
    let base = preview_base(&state, &headers);
    let result: Vec<Option<NftRecord>> = params
        .tokens
        .iter()
        .map(|&(contract, id)| {
            listing
                .records
                .iter()
                .find(|n| n.contract == contract && n.token_id == id)
                .map(|n| collection_record(n, params.chain, &listing.related, &base, &params.shape))
        })
        .collect();
    Ok(stated_response(listing.status, listing.block, result))
}

/// A collection contract's metadata (`getNFTContractMetadata`'s record).
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = nftContractMetadata)]
pub struct ContractMetadataRecord {
    /// The contract, lowercase.
    #[schema(pattern = "^0x[0-9a-f]{40}$")]
    pub token_address: String,
    /// Its name, when known.
    pub name: Option<String>,
    /// When its name and symbol were read from the chain (ISO 8601, ms); `null` until then.
    pub synced_at: Option<String>,
    /// Its symbol, when known.
    pub symbol: Option<String>,
    /// `ERC721` or `ERC1155`.
    #[schema(value_type = super::nft::ContractTypeSchema)]
    pub contract_type: String,
    /// Whether it is possibly spam.
    pub possible_spam: bool,
    /// Whether it is verified.
    pub verified_collection: bool,
    /// The token list's logo, when one is imported.
    pub collection_logo: Option<String>,
    /// Not tracked (always `null`).
    pub collection_banner_image: Option<String>,
    /// Not tracked (always `null`).
    pub collection_category: Option<String>,
    /// Not tracked (always `null`).
    pub project_url: Option<String>,
    /// Not tracked (always `null`).
    pub wiki_url: Option<String>,
    /// Not tracked (always `null`).
    pub discord_url: Option<String>,
    /// Not tracked (always `null`).
    pub telegram_url: Option<String>,
    /// Not tracked (always `null`).
    pub twitter_username: Option<String>,
    /// Not tracked (always `null`).
    pub instagram_username: Option<String>,
    /// Prices are not indexed (always `null`).
    pub floor_price: Option<String>,
    /// Prices are not indexed (always `null`).
    pub floor_price_usd: Option<String>,
    /// Prices are not indexed (always `null`).
    pub floor_price_currency: Option<String>,
    /// Sales are not indexed (always `null`).
    #[schema(value_type = Option<Object>)]
    pub last_sale: Option<Value>,
}

impl From<&NftContract> for ContractMetadataRecord {
    fn from(c: &NftContract) -> Self {
        Self {
            token_address: c.address.to_string(),
            name: text(c.info.name.as_ref()),
            synced_at: c.synced_at.map(iso8601_ms),
            symbol: text(c.info.symbol.as_ref()),
            contract_type: c.standard.as_str().to_string(),
            possible_spam: c.info.possible_spam,
            verified_collection: c.info.verified,
            collection_logo: text(c.info.logo.as_ref()),
            collection_banner_image: None,
            collection_category: None,
            project_url: None,
            wiki_url: None,
            discord_url: None,
            telegram_url: None,
            twitter_username: None,
            instagram_username: None,
            floor_price: None,
            floor_price_usd: None,
            floor_price_currency: None,
            last_sale: None,
        }
    }
}

/// The 404 of a collection tokenql does not know, saying whether it may yet.
fn unknown_collection(address: Address, status: SyncStatus) -> ApiError {
    let why = match status {
        SyncStatus::Synced => "no NFT transfer of it is indexed",
        SyncStatus::Syncing => {
            "no NFT transfer of it is indexed yet: its history is being fetched (SYNCING); ask \
             again"
        }
    };
    ApiError::Missing(format!("NFT collection {address} not found: {why}"))
}

/// The handler of `GET /nft/{address}/metadata`.
#[utoipa::path(
    get,
    path = "/nft/{address}/metadata",
    operation_id = "getNFTContractMetadata",
    tag = "NFT",
    summary = "Get NFT collection metadata",
    description = "A collection contract's name, symbol, standard and marks, as read from the \
chain. A contract with no indexed NFT transfer is a 404; while its history is being fetched the \
404 says so (`SYNCING`): ask again.",
    params(
        ("address" = super::schemas::AddressSchema, Path, description = "The collection: `0x` and 40 hex digits, in any letter case."),
        super::spec::ChainOnly,
    ),
    responses(
        (status = 200, description = "The collection's metadata.", body = ContractMetadataRecord,
            headers(("X-Sync-Status" = super::envelope::SyncStatusSchema, description = "`SYNCED` once the collection's history is indexed."))),
    ),
)]
pub(super) async fn contract_metadata(
    Reader(service): Reader,
    address: Result<Path<String>, PathRejection>,
    RawQuery(raw): RawQuery,
) -> Result<Response, ApiError> {
    let (address, chain) = address_and_chain("address", address, raw.as_deref())?;
    let found = service
        .nft_contracts(chain, &[address])
        .await
        .map_err(|e| ApiError::from_query("nft_contracts", e))?;
    let Some(contract) = found.value.first() else {
        return Err(unknown_collection(address, found.status));
    };
    let record = ContractMetadataRecord::from(contract);
    Ok(stated_response(found.status, found.block, record))
}

/// The handler of `POST /nft/metadata`.
#[utoipa::path(
    post,
    path = "/nft/metadata",
    operation_id = "getNFTBulkContractMetadata",
    tag = "NFT",
    summary = "Get metadata for multiple NFT contracts",
    description = "The metadata of up to 25 collection contracts named in the body, in request \
order (repeats once); a contract with no indexed NFT transfer is left out. The `X-Sync-Status` \
header is `SYNCED` once every named collection's history is indexed.",
    params(super::spec::ChainOnly),
    request_body(content = super::lookup_params::ContractsBody, description = "The collections, 1 to 25."),
    responses(
        (status = 200, description = "The known collections' metadata.", body = Vec<ContractMetadataRecord>,
            headers(("X-Sync-Status" = super::envelope::SyncStatusSchema, description = "`SYNCED` when the answer is complete."))),
    ),
)]
pub(super) async fn bulk_contract_metadata(
    Reader(service): Reader,
    RawQuery(raw): RawQuery,
    body: Result<Json<Value>, JsonRejection>,
) -> Result<Response, ApiError> {
    let params = ContractsParams::parse(raw.as_deref(), body)?;
    let found = service
        .nft_contracts(params.chain, &params.addresses)
        .await
        .map_err(|e| ApiError::from_query("nft_contracts", e))?;
    let records: Vec<ContractMetadataRecord> = params
        .addresses
        .iter()
        .filter_map(|a| found.value.iter().find(|c| c.address == *a))
        .map(ContractMetadataRecord::from)
        .collect();
    Ok(stated_response(found.status, found.block, records))
}

/// A count, written as Moralis writes it (`{"current": "N"}`, `{"total": "N"}`).
#[derive(Debug, Serialize, ToSchema)]
pub struct Current {
    /// How many now.
    #[schema(pattern = "^[0-9]+$", example = "1000")]
    pub current: String,
}

/// A total, written as Moralis writes it.
#[derive(Debug, Serialize, ToSchema)]
pub struct Total {
    /// How many in all.
    #[schema(pattern = "^[0-9]+$", example = "1000")]
    pub total: String,
}

/// `getNFTCollectionStats`'s answer.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = nftCollectionStat)]
pub struct CollectionStatsRecord {
    /// Token ids someone holds.
    #[schema(pattern = "^[0-9]+$", example = "100")]
    pub total_tokens: String,
    /// Distinct wallets holding at least one token.
    pub owners: Current,
    /// Transfers of the collection (an ERC1155 batch counts once per id).
    pub transfers: Total,
}

/// The handler of `GET /nft/{address}/stats`.
#[utoipa::path(
    get,
    path = "/nft/{address}/stats",
    operation_id = "getNFTCollectionStats",
    tag = "NFT",
    summary = "Get summary stats by NFT collection",
    description = "How many of the collection's token ids someone holds, how many wallets hold \
them, and how many transfers it has had. The `X-Sync-Status` header is `SYNCED` once the \
collection's history is indexed; before, the counts are of what is stored so far.",
    params(
        ("address" = super::schemas::AddressSchema, Path, description = "The collection: `0x` and 40 hex digits, in any letter case."),
        super::spec::ChainOnly,
    ),
    responses(
        (status = 200, description = "The collection's counts.", body = CollectionStatsRecord,
            headers(("X-Sync-Status" = super::envelope::SyncStatusSchema, description = "`SYNCED` when the counts are complete."))),
    ),
)]
pub(super) async fn collection_stats(
    Reader(service): Reader,
    address: Result<Path<String>, PathRejection>,
    RawQuery(raw): RawQuery,
) -> Result<Response, ApiError> {
    let (address, chain) = address_and_chain("address", address, raw.as_deref())?;
    let Stated {
        value,
        status,
        block,
    } = service
        .collection_stats(chain, address)
        .await
        .map_err(|e| ApiError::from_query("collection_stats", e))?;
    let record = CollectionStatsRecord {
        total_tokens: value.tokens.to_string(),
        owners: Current {
            current: value.owners.to_string(),
        },
        transfers: Total {
            total: value.transfers.to_string(),
        },
    };
    Ok(stated_response(status, block, record))
}

/// `getNFTTokenStats`'s answer.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = nftTokenStat)]
pub struct TokenStatsRecord {
    /// Wallets holding the token.
    pub owners: Current,
    /// Its transfers, mints and burns included.
    pub transfers: Total,
}

/// The handler of `GET /nft/{address}/{token_id}/stats`.
#[utoipa::path(
    get,
    path = "/nft/{address}/{token_id}/stats",
    operation_id = "getNFTTokenStats",
    tag = "NFT",
    summary = "Get summary stats by NFT token",
    description = "How many wallets hold the token now and how many transfers it has had (mints \
and burns included). The `X-Sync-Status` header is `SYNCED` once the collection's history is \
indexed; before, the counts are of what is stored so far.",
    params(
        ("address" = super::schemas::AddressSchema, Path, description = "The collection: `0x` and 40 hex digits, in any letter case."),
        ("token_id" = String, Path, description = "The token id: decimal digits, or `0x` and hex digits; at most 2^256-1."),
        super::spec::ChainOnly,
    ),
    responses(
        (status = 200, description = "The token's counts.", body = TokenStatsRecord,
            headers(("X-Sync-Status" = super::envelope::SyncStatusSchema, description = "`SYNCED` when the counts are complete."))),
    ),
)]
pub(super) async fn token_stats(
    Reader(service): Reader,
    path: Result<Path<(String, String)>, PathRejection>,
    RawQuery(raw): RawQuery,
) -> Result<Response, ApiError> {
    let Path((address, token_id)) = path.map_err(|r| path_rejection("address", r))?;
    let address = path_address("address", &address)?;
    let token_id = Uint256::parse(&token_id).map_err(|e| ApiError::parse("token_id", e))?;
    let chain = chain_only(raw.as_deref())?;
    let Stated {
        value,
        status,
        block,
    } = service
        .nft_token_stats(chain, address, token_id)
        .await
        .map_err(|e| ApiError::from_query("token_stats", e))?;
    let record = TokenStatsRecord {
        owners: Current {
            current: value.owners.to_string(),
        },
        transfers: Total {
            total: value.transfers.to_string(),
        },
    };
    Ok(stated_response(status, block, record))
}

/// `getUniqueOwnersByCollection`'s answer.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = nftUniqueOwners)]
pub struct UniqueOwnersPage {
    /// `SYNCED` or `SYNCING` (tokenql's addition).
    #[schema(value_type = super::envelope::SyncStatusSchema)]
    pub status: &'static str,
    /// 1-based page number.
    #[schema(minimum = 1, example = 1)]
    pub page: u64,
    /// The page size asked for (`limit`).
    #[serde(rename = "pageSize")]
    #[schema(minimum = 1, maximum = 100, example = 100)]
    pub page_size: u64,
    /// Opens the next page; `null` on the last page.
    pub cursor: Option<String>,
    /// The holders of this page, lowercase, by address.
    #[serde(rename = "walletAddresses")]
    pub wallet_addresses: Vec<String>,
}

/// The handler of `GET /nft/{address}/unique-owners`.
#[utoipa::path(
    get,
    path = "/nft/{address}/unique-owners",
    operation_id = "getUniqueOwnersByCollection",
    tag = "NFT",
    summary = "Get unique wallet addresses owning NFTs from a contract",
    description = "The distinct wallets holding at least one of the collection's tokens, by \
address; pass `cursor` to get the next page. `status` is `SYNCED` once the collection's whole \
history is indexed; the first request for a collection that is not starts fetching it.",
    params(
        ("address" = super::schemas::AddressSchema, Path, description = "The collection: `0x` and 40 hex digits, in any letter case."),
        super::spec::UniqueOwners,
    ),
    responses(
        (status = 200, description = "A page of holders.", body = UniqueOwnersPage),
    ),
)]
pub(super) async fn unique_owners(
    Reader(service): Reader,
    address: Result<Path<String>, PathRejection>,
    RawQuery(raw): RawQuery,
) -> Result<Response, ApiError> {
    let Path(address) = address.map_err(|r| path_rejection("address", r))?;
    let params = UniqueOwnersParams::parse(&address, raw.as_deref())?;
    let page = service
        .unique_owners(&params.query, params.cursor.as_deref())
        .await
        .map_err(|e| ApiError::from_query("unique_owners", e))?;
    let body = UniqueOwnersPage {
        status: page.status.as_str(),
        page: page.page,
        page_size: page.page_size,
        cursor: page.next_cursor.clone(),
        wallet_addresses: page.edges.iter().map(|e| e.node.to_string()).collect(),
    };
    Ok(with_block(page.block, body))
}
