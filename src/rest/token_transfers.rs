//! The v2.2 ERC20 transfer routes that today's official SDKs call:
//!
//! - `GET /{address}/erc20/transfers` (`getWalletTokenTransfers`): the transfers a wallet sent
//!   or received, optionally of some token contracts only;
//! - `GET /erc20/{address}/transfers` (`getTokenTransfers`): the transfers of one token.
//!
//! Both take block or date bounds (a block bound wins over the date of the same side) and
//! `order=ASC|DESC`, and answer v2.2's record shape (`address`, `from_address`, `to_address`,
//! `*_label`, `verified_contract`). They ask the query service the same question as
//! `GET /erc20/transfers` ([`super::transfers`]), so `status` follows the same rule: a wallet's
//! route needs the wallet's whole history, a token's route the token's.

use axum::extract::rejection::PathRejection;
use axum::extract::{Path, RawQuery};
use serde::Serialize;
use utoipa::ToSchema;

use super::envelope::{label, text, TransactionCollection};
use super::error::ApiError;
use super::nft::path_rejection;
use super::params::TransferParams;
use super::transfers::transfer_page;
use crate::app::Reader;
use crate::query::{Answer, Erc20Transfer, Related};
use crate::types::iso8601_secs;

/// One ERC20 transfer in v2.2's shape (`erc20Transaction`): numbers as strings but for the two
/// indexes, missing values `null`.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = erc20Transaction)]
pub struct TransactionRecord {
    /// Token name, when known.
    #[schema(example = "Tether USD")]
    pub token_name: Option<String>,
    /// Token symbol, when known.
    #[schema(example = "USDT")]
    pub token_symbol: Option<String>,
    /// Token logo URL, when known.
    pub token_logo: Option<String>,
    /// Token decimals, when known.
    #[schema(pattern = "^[0-9]+$", example = "6")]
    pub token_decimals: Option<String>,
    /// Hash of the transaction that emitted it.
    #[schema(pattern = "^0x[0-9a-f]{64}$")]
    pub transaction_hash: String,
    /// The token contract, lowercase.
    #[schema(
        pattern = "^0x[0-9a-f]{40}$",
        example = "0xdac17f958d2ee523a2206206994597c13d831ec7"
    )]
    pub address: String,
    /// Time of the block (ISO 8601, ms).
    #[schema(
        pattern = "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z$",
        example = "2024-01-02T03:04:05.000Z"
    )]
    pub block_timestamp: String,
    /// The block number.
    #[schema(pattern = "^[0-9]+$", example = "19000000")]
    pub block_number: String,
    /// The block hash.
    #[schema(pattern = "^0x[0-9a-f]{64}$")]
    pub block_hash: String,
    /// The entity that owns the recipient: tokenql has no such data (always `null`).
    pub to_address_entity: Option<String>,
    /// The logo of that entity (always `null`).
    pub to_address_entity_logo: Option<String>,
    /// The recipient, lowercase.
    #[schema(pattern = "^0x[0-9a-f]{40}$")]
    pub to_address: String,
    /// The recipient's label, when known.
    pub to_address_label: Option<String>,
    /// The entity that owns the sender (always `null`).
    pub from_address_entity: Option<String>,
    /// The logo of that entity (always `null`).
    pub from_address_entity_logo: Option<String>,
    /// The sender, lowercase.
    #[schema(pattern = "^0x[0-9a-f]{40}$")]
    pub from_address: String,
    /// The sender's label, when known.
    pub from_address_label: Option<String>,
    /// The amount in base units, exact.
    #[schema(pattern = "^[0-9]+$", example = "57732989482831651")]
    pub value: String,
    /// `value / 10^decimals`, exact; `null` when the decimals are unknown.
    #[schema(pattern = "^[0-9]+(\\.[0-9]+)?$", example = "57732989482.831651")]
    pub value_decimal: Option<String>,
    /// Position of the transaction in its block.
    #[schema(minimum = 0, example = 12)]
    pub transaction_index: u32,
    /// Position of the log in its block.
    #[schema(minimum = 0, example = 204)]
    pub log_index: u32,
    /// Whether the token is possibly spam.
    pub possible_spam: bool,
    /// Whether the token contract is verified.
    pub verified_contract: bool,
}

impl TransactionRecord {
    /// Builds a record from a transfer and its related rows.
    fn new(t: &Erc20Transfer, related: &Related) -> Self {
        let contract = related.contract(t.contract);
        let decimals = contract.and_then(|c| c.decimals);
        Self {
            token_name: text(contract.and_then(|c| c.name.as_ref())),
            token_symbol: text(contract.and_then(|c| c.symbol.as_ref())),
            token_logo: text(contract.and_then(|c| c.logo.as_ref())),
            token_decimals: decimals.map(|d| d.to_string()),
            transaction_hash: t.transaction_hash.to_ascii_lowercase(),
            address: t.contract.to_string(),
            block_timestamp: iso8601_secs(t.block_timestamp),
            block_number: t.block_number.to_string(),
            block_hash: t.block_hash.to_ascii_lowercase(),
            to_address_entity: None,
            to_address_entity_logo: None,
            to_address: t.to.to_string(),
            to_address_label: label(related, t.to),
            from_address_entity: None,
            from_address_entity_logo: None,
            from_address: t.from.to_string(),
            from_address_label: label(related, t.from),
            value: t.value.to_decimal(),
            value_decimal: decimals.map(|d| t.value.to_decimal_scaled(d)),
            transaction_index: t.transaction_index,
            log_index: t.log_index,
            possible_spam: contract.is_some_and(|c| c.possible_spam),
            verified_contract: contract.is_some_and(|c| c.verified),
        }
    }
}

/// The v2.2 envelope around a page.
fn collection(answer: &Answer<Erc20Transfer>) -> TransactionCollection<TransactionRecord> {
    let result = answer
        .page
        .edges
        .iter()
        .map(|e| TransactionRecord::new(&e.node, &answer.related))
        .collect();
    TransactionCollection::new(&answer.page, result)
}

/// What both operations' descriptions share.
macro_rules! bounds_and_order {
    () => {
        "Newest first by default (`order=DESC`): by `block_number`, ties broken by `log_index` \
(a total, stable order); `order=ASC` is oldest first. Bound the blocks with `from_block` / \
`to_block` (inclusive) or the block time with `from_date` / `to_date` (inclusive; Unix \
seconds or ISO 8601; where both bound the same side, the block wins). Pass `cursor` to get \
the next page."
    };
}

/// The handler of `GET /{address}/erc20/transfers`.
#[utoipa::path(
    get,
    path = "/{address}/erc20/transfers",
    operation_id = "getWalletTokenTransfers",
    tag = "Token",
    summary = "Get ERC20 token transfers by wallet",
    description = concat!("The ERC20 transfers a wallet sent or received, optionally of the \
token contracts in `contract_addresses` only.\n\n", bounds_and_order!(), "\n\n\
`status` is `SYNCED` once the wallet's whole history is indexed (or every named contract's); \
the first request for a wallet that is not starts fetching it, and answers `SYNCING`."),
    params(
        ("address" = super::schemas::AddressSchema, Path, description = "The wallet: `0x` and 40 hex digits, in any letter case."),
        super::spec::WalletTransfers,
    ),
    responses(
        (status = 200, description = "A page of the wallet's transfers.", body = TransactionCollection<TransactionRecord>),
    ),
)]
pub(super) async fn wallet_token_transfers(
    Reader(service): Reader,
    address: Result<Path<String>, PathRejection>,
    RawQuery(raw): RawQuery,
) -> Result<TransactionCollection<TransactionRecord>, ApiError> {
    let Path(address) = address.map_err(|r| path_rejection("address", r))?;
    let params = TransferParams::parse_wallet(&address, raw.as_deref())?;
    let answer = transfer_page(&service, &params).await?;
    Ok(collection(&answer))
}

/// The handler of `GET /erc20/{address}/transfers`.
#[utoipa::path(
    get,
    path = "/erc20/{address}/transfers",
    operation_id = "getTokenTransfers",
    tag = "Token",
    summary = "Get ERC20 token transfers by contract",
    description = concat!("The transfers of one ERC20 token.\n\n", bounds_and_order!(), "\n\n\
`status` is `SYNCED` once the token's whole history is indexed; the first request for a token \
that is not starts fetching it, and answers `SYNCING`."),
    params(
        ("address" = super::schemas::AddressSchema, Path, description = "The token contract: `0x` and 40 hex digits, in any letter case."),
        super::spec::TokenTransfers,
    ),
    responses(
        (status = 200, description = "A page of the token's transfers.", body = TransactionCollection<TransactionRecord>),
    ),
)]
pub(super) async fn token_transfers(
    Reader(service): Reader,
    address: Result<Path<String>, PathRejection>,
    RawQuery(raw): RawQuery,
) -> Result<TransactionCollection<TransactionRecord>, ApiError> {
    let Path(address) = address.map_err(|r| path_rejection("address", r))?;
    let params = TransferParams::parse_token(&address, raw.as_deref())?;
    let answer = transfer_page(&service, &params).await?;
    Ok(collection(&answer))
}
