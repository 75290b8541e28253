//! `GET /{address}/nft/collections` (`getWalletNFTCollections`): the collections a wallet holds
//! tokens of, by address, with their names and flags and, with `token_counts=true`, how many of
//! each collection's tokens the wallet holds. Two statements a page: the groups, the contracts.

use axum::extract::rejection::PathRejection;
use axum::extract::{Path, RawQuery};
use serde::Serialize;
use utoipa::ToSchema;

use super::envelope::{text, WalletCollections};
use super::error::ApiError;
use super::nft::{path_rejection, ContractTypeSchema};
use super::params::{settle_date, CollectionsParams};
use crate::app::Reader;
use crate::query::{ContractInfo, Include, SyncStatus, WalletCollection};

/// One collection, in v2.2's shape (`nftCollections`). Market data tokenql does not have
/// (logos, banners, floor prices, sales) is `null`.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = nftCollections)]
pub struct CollectionRecord {
    /// The collection, lowercase.
    #[schema(pattern = "^0x[0-9a-f]{40}$")]
    pub token_address: String,
    /// `ERC721` or `ERC1155`.
    #[schema(value_type = ContractTypeSchema)]
    pub contract_type: String,
    /// The collection's name, when known.
    pub name: Option<String>,
    /// The collection's symbol, when known.
    pub symbol: Option<String>,
    /// Whether the collection is possibly spam.
    pub possible_spam: bool,
    /// Whether the collection is verified.
    pub verified_collection: bool,
    /// How many of its tokens the wallet holds; `null` unless `token_counts=true`, and `null`
    /// while the answer is `SYNCING` (a count from partial history could be short).
    #[schema(minimum = 1)]
    pub count: Option<u64>,
    /// Not tracked (always `null`).
    pub collection_logo: Option<String>,
    /// Not tracked (always `null`).
    pub collection_banner_image: Option<String>,
    /// Not tracked (always `null`).
    pub floor_price: Option<String>,
    /// Not tracked (always `null`).
    pub floor_price_usd: Option<String>,
    /// Not tracked (always `null`).
    pub floor_price_currency: Option<String>,
    /// Not tracked (always `null`).
    #[schema(value_type = Option<Object>)]
    pub last_sale: Option<serde_json::Value>,
}

impl CollectionRecord {
    fn new(c: &WalletCollection, info: Option<&ContractInfo>, token_counts: bool) -> Self {
        Self {
            token_address: c.contract.to_string(),
            contract_type: c.contract_type.as_str().to_string(),
            name: text(info.and_then(|i| i.name.as_ref())),
            symbol: text(info.and_then(|i| i.symbol.as_ref())),
            possible_spam: info.is_some_and(|i| i.possible_spam),
            verified_collection: info.is_some_and(|i| i.verified),
            count: token_counts.then_some(c.count),
            collection_logo: None,
            collection_banner_image: None,
            floor_price: None,
            floor_price_usd: None,
            floor_price_currency: None,
            last_sale: None,
        }
    }
}

/// The handler of `GET /{address}/nft/collections`.
#[utoipa::path(
    get,
    path = "/{address}/nft/collections",
    operation_id = "getWalletNFTCollections",
    tag = "NFT",
    summary = "Get NFT collections by wallet",
    description = "The collections a wallet holds at least one token of, ordered by address; \
pass `cursor` to get the next page. `token_counts=true` adds how many of each collection's \
tokens the wallet holds (while `SYNCING`, `null`: a count from partial history could be short); \
`exclude_spam=true` leaves out collections marked possible spam.\n\n\
`status` is `SYNCED` once the wallet's whole history is indexed; the first request for a wallet \
that is not starts fetching it, and answers `SYNCING` with only the holdings partial history \
cannot have made up.",
    params(
        ("address" = super::schemas::AddressSchema, Path, description = "The wallet: `0x` and 40 hex digits, in any letter case."),
        super::spec::WalletCollections,
    ),
    responses(
        (status = 200, description = "A page of the wallet's collections.", body = WalletCollections<CollectionRecord>),
    ),
)]
pub(super) async fn wallet_collections(
    Reader(service): Reader,
    address: Result<Path<String>, PathRejection>,
    RawQuery(raw): RawQuery,
) -> Result<WalletCollections<CollectionRecord>, ApiError> {
    let Path(address) = address.map_err(|r| path_rejection("address", r))?;
    let mut params = CollectionsParams::parse(&address, raw.as_deref())?;
    let q = &mut params.query;
    settle_date(&service, q.chain, &mut q.at_block, params.to_date).await?;
    let answer = service
        .wallet_collections(&params.query, params.cursor.as_deref(), Include::CONTRACTS)
        .await
        .map_err(|e| ApiError::from_query("wallet_collections", e))?;
    let counts = params.token_counts && answer.page.status == SyncStatus::Synced;
    let result = answer
        .page
        .edges
        .iter()
        .map(|e| CollectionRecord::new(&e.node, answer.related.contract(e.node.contract), counts))
        .collect();
    Ok(WalletCollections::new(&answer.page, result))
}
