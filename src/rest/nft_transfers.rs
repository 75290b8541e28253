//! The v2.2 NFT transfer routes:
//!
//! - `GET /{address}/nft/transfers` (`getWalletNFTTransfers`): the NFTs a wallet sent or
//!   received, optionally of some collections only;
//! - `GET /nft/{address}/transfers` (`getNFTContractTransfers`): every move of one collection;
//! - `GET /nft/{address}/{token_id}/transfers` (`getNFTTransfers`): every move of one token;
//! - `GET /nft/transfers` (`getNFTTransfersFromToBlock`): every collection's moves, in a block or
//!   date range;
//! - `GET /block/{block_number_or_hash}/nft/transfers` (`getNFTTransfersByBlock`): the moves of
//!   one block.
//!
//! One record per NFT move: an ERC721 `Transfer`, an ERC1155 `TransferSingle`, or one id of a
//! `TransferBatch` (a batch of n ids is n records, in batch order). Both take block or date
//! bounds (the block wins), `order=ASC|DESC` and `format`. `status` follows API.md: a wallet's
//! route needs the wallet's whole history (or every named collection's), a collection's route
//! the collection's, the routes over every collection the chain's (or, for blocks from the live
//! start block on, none). A page costs three statements: the page, its collections, its labels.

use axum::extract::rejection::PathRejection;
use axum::extract::{Path, RawQuery};
use serde::Serialize;
use utoipa::ToSchema;

use super::envelope::NftTransferCollection;
use super::error::ApiError;
use super::lookup_params::{block_ref, BlockRef};
use super::nft::path_rejection;
use super::params::NftTransferParams;
use super::transfers::TRANSFER_ROWS;
use crate::app::Reader;
use crate::query::{NftTransfer, QueryService, Related};
use crate::types::{iso8601_secs, Address, TokenIdFormat, Uint256};

/// One NFT move in v2.2's shape (`nftTransfer`). Fields tokenql has no data for are `null`.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = nftTransfer)]
pub struct NftTransferRecord {
    /// The collection, lowercase.
    #[schema(pattern = "^0x[0-9a-f]{40}$")]
    pub token_address: String,
    /// The token id in the asked `format` (decimal, or `0x` hex).
    #[schema(pattern = "^([0-9]+|0x[0-9a-f]+)$", example = "15")]
    pub token_id: String,
    /// The entity that owns the sender: tokenql has no such data (always `null`).
    pub from_address_entity: Option<String>,
    /// The logo of that entity (always `null`).
    pub from_address_entity_logo: Option<String>,
    /// The sender, lowercase (the zero address for a mint).
    #[schema(pattern = "^0x[0-9a-f]{40}$")]
    pub from_address: String,
    /// The sender's label, when known.
    pub from_address_label: Option<String>,
    /// The entity that owns the recipient (always `null`).
    pub to_address_entity: Option<String>,
    /// The logo of that entity (always `null`).
    pub to_address_entity_logo: Option<String>,
    /// The recipient, lowercase (the zero address for a burn).
    #[schema(pattern = "^0x[0-9a-f]{40}$")]
    pub to_address: String,
    /// The recipient's label, when known.
    pub to_address_label: Option<String>,
    /// The native value sent with the transaction: tokenql does not store it (always `null`).
    pub value: Option<String>,
    /// How many of the token moved (1 for ERC721), exact.
    #[schema(pattern = "^[0-9]+$", example = "1")]
    pub amount: String,
    /// `ERC721` or `ERC1155`.
    #[schema(example = "ERC721")]
    pub contract_type: String,
    /// The block number.
    #[schema(pattern = "^[0-9]+$", example = "15320500")]
    pub block_number: String,
    /// Time of the block (ISO 8601, ms).
    #[schema(
        pattern = "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z$",
        example = "2022-08-11T02:27:30.000Z"
    )]
    pub block_timestamp: String,
    /// The block hash.
    #[schema(pattern = "^0x[0-9a-f]{64}$")]
    pub block_hash: String,
    /// Hash of the transaction that emitted it.
    #[schema(pattern = "^0x[0-9a-f]{64}$")]
    pub transaction_hash: String,
    /// The transaction type: not stored (always `null`).
    pub transaction_type: Option<String>,
    /// Position of the transaction in its block.
    #[schema(minimum = 0)]
    pub transaction_index: u32,
    /// Position of the log in its block (the batch's log, for an id of a `TransferBatch`).
    #[schema(minimum = 0)]
    pub log_index: u32,
    /// The operator of an ERC1155 move; `null` for ERC721.
    pub operator: Option<String>,
    /// Whether the collection is possibly spam.
    pub possible_spam: bool,
    /// Whether the collection is verified.
    pub verified_collection: bool,
    /// The token's last sale: not tracked (always `null`).
    #[schema(value_type = Option<Object>)]
    pub last_sale: Option<serde_json::Value>,
}

impl NftTransferRecord {
    /// Builds a record from a move and its related rows.
    fn new(t: &NftTransfer, format: TokenIdFormat, related: &Related) -> Self {
        let contract = related.contract(t.contract);
        let label = |a: &Address| super::envelope::label(related, *a);
        Self {
            token_address: t.contract.to_string(),
            token_id: match format {
                TokenIdFormat::Decimal => t.token_id.to_decimal(),
                TokenIdFormat::Hex => t.token_id.to_hex(),
            },
            from_address_entity: None,
            from_address_entity_logo: None,
            from_address: t.from.to_string(),
            from_address_label: label(&t.from),
            to_address_entity: None,
            to_address_entity_logo: None,
            to_address: t.to.to_string(),
            to_address_label: label(&t.to),
            value: None,
            amount: t.amount.to_decimal(),
            contract_type: t.contract_type.as_str().to_string(),
            block_number: t.block_number.to_string(),
            block_timestamp: iso8601_secs(t.block_timestamp),
            block_hash: t.block_hash.to_ascii_lowercase(),
            transaction_hash: t.transaction_hash.to_ascii_lowercase(),
            transaction_type: None,
            transaction_index: t.transaction_index,
            log_index: t.log_index,
            operator: t.operator.map(|o| o.to_string()),
            possible_spam: contract.is_some_and(|c| c.possible_spam),
            verified_collection: contract.is_some_and(|c| c.verified),
            last_sale: None,
        }
    }
}

/// Reads a page and its related data, and shapes it.
async fn answer(
    service: &QueryService,
    params: &NftTransferParams,
    token: Option<Uint256>,
) -> Result<NftTransferCollection<NftTransferRecord>, ApiError> {
    let (q, after) = (&params.query, params.cursor.as_deref());
    let answer = match token {
        None => service.nft_transfers(q, after, TRANSFER_ROWS).await,
        Some(t) => {
            service
                .token_nft_transfers(q, t, after, TRANSFER_ROWS)
                .await
        }
    }
    .map_err(|e| ApiError::from_query("nft_transfers", e))?;
    let result = answer
        .page
        .edges
        .iter()
        .map(|e| NftTransferRecord::new(&e.node, params.format, &answer.related))
        .collect();
    Ok(NftTransferCollection::new(&answer.page, result))
}

/// What both operations' descriptions share.
macro_rules! moves_and_order {
    () => {
        "One record per NFT move (an ERC721 `Transfer`, an ERC1155 `TransferSingle`, or one id of \
a `TransferBatch`, in batch order). Newest first by default (`order=DESC`): by `block_number`, \
then `log_index`, then position in a batch (a total, stable order); `order=ASC` is oldest first. \
Bound the blocks with `from_block` / `to_block` (inclusive) or the block time with `from_date` / \
`to_date` (inclusive; Unix seconds or ISO 8601; where both bound the same side, the block wins). \
Pass `cursor` to get the next page."
    };
}

/// The handler of `GET /{address}/nft/transfers`.
#[utoipa::path(
    get,
    path = "/{address}/nft/transfers",
    operation_id = "getWalletNFTTransfers",
    tag = "NFT",
    summary = "Get NFT transfers by wallet",
    description = concat!("The NFTs a wallet sent or received, optionally of the collections \
in `contract_addresses` only.\n\n", moves_and_order!(), "\n\n\
`status` is `SYNCED` once the wallet's whole history is indexed (or every named collection's); \
the first request for a wallet that is not starts fetching it, and answers `SYNCING`."),
    params(
        ("address" = super::schemas::AddressSchema, Path, description = "The wallet: `0x` and 40 hex digits, in any letter case."),
        super::spec::WalletNftTransfers,
    ),
    responses(
        (status = 200, description = "A page of the wallet's NFT moves.", body = NftTransferCollection<NftTransferRecord>),
    ),
)]
pub(super) async fn wallet_nft_transfers(
    Reader(service): Reader,
    address: Result<Path<String>, PathRejection>,
    RawQuery(raw): RawQuery,
) -> Result<NftTransferCollection<NftTransferRecord>, ApiError> {
    let Path(address) = address.map_err(|r| path_rejection("address", r))?;
    let params = NftTransferParams::parse_wallet(&address, raw.as_deref())?;
    answer(&service, &params, None).await
}

/// The handler of `GET /nft/{address}/transfers`.
#[utoipa::path(
    get,
    path = "/nft/{address}/transfers",
    operation_id = "getNFTContractTransfers",
    tag = "NFT",
    summary = "Get NFT transfers by contract",
    description = concat!("Every move of one NFT collection.\n\n", moves_and_order!(), "\n\n\
`status` is `SYNCED` once the collection's whole history is indexed; the first request for a \
collection that is not starts fetching it, and answers `SYNCING`."),
    params(
        ("address" = super::schemas::AddressSchema, Path, description = "The collection: `0x` and 40 hex digits, in any letter case."),
        super::spec::CollectionNftTransfers,
    ),
    responses(
        (status = 200, description = "A page of the collection's NFT moves.", body = NftTransferCollection<NftTransferRecord>),
    ),
)]
pub(super) async fn collection_nft_transfers(
    Reader(service): Reader,
    address: Result<Path<String>, PathRejection>,
    RawQuery(raw): RawQuery,
) -> Result<NftTransferCollection<NftTransferRecord>, ApiError> {
    let Path(address) = address.map_err(|r| path_rejection("address", r))?;
    let params = NftTransferParams::parse_collection(&address, raw.as_deref())?;
    answer(&service, &params, None).await
}

/// The handler of `GET /nft/{address}/{token_id}/transfers`.
#[utoipa::path(
    get,
    path = "/nft/{address}/{token_id}/transfers",
    operation_id = "getNFTTransfers",
    tag = "NFT",
    summary = "Get NFT transfers by token ID",
    description = concat!("Every move of one NFT.\n\n", moves_and_order!(), "\n\n\
`status` is `SYNCED` once the collection's whole history is indexed; the first request for a \
collection that is not starts fetching it, and answers `SYNCING`."),
    params(
        ("address" = super::schemas::AddressSchema, Path, description = "The collection: `0x` and 40 hex digits, in any letter case."),
        ("token_id" = String, Path, description = "The token id: decimal digits, or `0x` and hex digits; at most 2^256-1."),
        super::spec::CollectionNftTransfers,
    ),
    responses(
        (status = 200, description = "A page of the token's moves.", body = NftTransferCollection<NftTransferRecord>),
    ),
)]
pub(super) async fn token_nft_transfers(
    Reader(service): Reader,
    path: Result<Path<(String, String)>, PathRejection>,
    RawQuery(raw): RawQuery,
) -> Result<NftTransferCollection<NftTransferRecord>, ApiError> {
    let Path((address, token_id)) = path.map_err(|r| path_rejection("address", r))?;
    let (params, token) = NftTransferParams::parse_token(&address, &token_id, raw.as_deref())?;
    answer(&service, &params, Some(token)).await
}

/// The handler of `GET /nft/transfers`.
#[utoipa::path(
    get,
    path = "/nft/transfers",
    operation_id = "getNFTTransfersFromToBlock",
    tag = "NFT",
    summary = "Get NFT transfers by block range",
    description = concat!("Every collection's moves, within the block or date bounds.\n\n", moves_and_order!(), "\n\n\
`status` is `SYNCED` when the whole range is indexed: from the live start block on, once the \
indexer has stored the range's last block; before it, only once the chain's whole history is \
stored (`SYNCING` otherwise)."),
    params(super::spec::CollectionNftTransfers),
    responses(
        (status = 200, description = "A page of NFT moves.", body = NftTransferCollection<NftTransferRecord>),
    ),
)]
pub(super) async fn all_nft_transfers(
    Reader(service): Reader,
    RawQuery(raw): RawQuery,
) -> Result<NftTransferCollection<NftTransferRecord>, ApiError> {
    let params = NftTransferParams::parse_all(raw.as_deref())?;
    answer(&service, &params, None).await
}

/// The handler of `GET /block/{block_number_or_hash}/nft/transfers`.
#[utoipa::path(
    get,
    path = "/block/{block_number_or_hash}/nft/transfers",
    operation_id = "getNFTTransfersByBlock",
    tag = "NFT",
    summary = "Get NFT transfers by block",
    description = concat!("The moves of one block, named by number or hash.\n\n", moves_and_order!(), "\n\n\
A hash must be of a stored block: tokenql stores the header of every block with a transfer, so \
a hash it does not know is a 404. `status` is `SYNCED` once the indexer has stored the block \
(and, before the live start block, once the chain's whole history is stored)."),
    params(
        ("block_number_or_hash" = String, Path, description = "The block: its number (decimal digits) or its hash (`0x` and 64 hex digits)."),
        super::spec::BlockNftTransfers,
    ),
    responses(
        (status = 200, description = "A page of the block's NFT moves.", body = NftTransferCollection<NftTransferRecord>),
    ),
)]
pub(super) async fn block_nft_transfers(
    Reader(service): Reader,
    block: Result<Path<String>, PathRejection>,
    RawQuery(raw): RawQuery,
) -> Result<NftTransferCollection<NftTransferRecord>, ApiError> {
    let Path(block) = block.map_err(|r| path_rejection("block_number_or_hash", r))?;
    let named = block_ref(&block)?;
    let params = NftTransferParams::parse_block(raw.as_deref())?;
    let number = match named {
        BlockRef::Number(n) => n,
        BlockRef::Hash(h) => service
            .block_number_of(params.query.chain, h)
            .await
            .map_err(|e| ApiError::from_query("block_number_of", e))?
            .ok_or_else(|| {
                ApiError::Missing(format!(
                    "block {block} not found: no stored block has this hash (tokenql stores the \
                     blocks with transfers, up to the indexed head)"
                ))
            })?,
    };
    answer(&service, &params.in_block(number), None).await
}
