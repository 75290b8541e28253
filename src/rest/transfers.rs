//! `GET /erc20/transfers`: ERC20 transfers, in the Moralis v2 shape.
//!
//! Deprecated upstream since 2023-09-04 and still served fully; the router adds the
//! [`DEPRECATION`] header to every answer of this route. One page costs a constant number of
//! statements: the query service answers the page with one batch for the token contracts and one
//! for the labels of the senders and recipients.

use axum::extract::RawQuery;
use axum::http::{HeaderName, HeaderValue};
use axum::response::Response;
use serde::Serialize;
use utoipa::ToSchema;

use super::envelope::{label, text, TransferEnvelope};
use super::error::ApiError;
use super::params::TransferParams;
use crate::app::Reader;
use crate::query::{Answer, Erc20Transfer, Include, QueryService, Related};
use crate::types::iso8601_secs;

/// The `Deprecation` header of RFC 9745.
pub const DEPRECATION: HeaderName = HeaderName::from_static("deprecation");
/// Deprecated since 2023-09-04T00:00:00Z, as an RFC 9651 date (`@` Unix seconds).
pub const DEPRECATED_SINCE: HeaderValue = HeaderValue::from_static("@1693785600");

/// Adds the `Deprecation` header to an answer of this route (errors included).
pub(super) async fn mark_deprecated(mut response: Response) -> Response {
    response.headers_mut().insert(DEPRECATION, DEPRECATED_SINCE);
    response
}

/// One ERC20 transfer, as Moralis writes it: numbers as strings, missing values `null`.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = erc20Transfer)]
pub struct TransferRecord {
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
    /// The token contract, lowercase.
    #[schema(
        pattern = "^0x[0-9a-f]{40}$",
        example = "0xdac17f958d2ee523a2206206994597c13d831ec7"
    )]
    pub contract_address: String,
    /// Hash of the transaction that emitted it.
    #[schema(pattern = "^0x[0-9a-f]{64}$")]
    pub transaction_hash: String,
    /// Position of the transaction in its block.
    #[schema(pattern = "^[0-9]+$", example = "12")]
    pub transaction_index: String,
    /// Position of the log in its block.
    #[schema(pattern = "^[0-9]+$", example = "204")]
    pub log_index: String,
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
    /// The sender, lowercase.
    #[schema(pattern = "^0x[0-9a-f]{40}$")]
    pub from_wallet: String,
    /// The sender's label, when known.
    pub from_wallet_label: Option<String>,
    /// The recipient, lowercase.
    #[schema(pattern = "^0x[0-9a-f]{40}$")]
    pub to_wallet: String,
    /// The recipient's label, when known.
    pub to_wallet_label: Option<String>,
    /// The amount in base units, exact.
    #[schema(pattern = "^[0-9]+$", example = "57732989482831651")]
    pub value: String,
    /// `value / 10^decimals`, exact; `null` when the decimals are unknown.
    #[schema(pattern = "^[0-9]+(\\.[0-9]+)?$", example = "57732989482.831651")]
    pub value_decimal: Option<String>,
    /// Whether the token is possibly spam.
    pub possible_spam: bool,
    /// Whether the token contract is verified.
    pub verified_collection: bool,
}

impl TransferRecord {
    /// Builds a record from a transfer and its related rows.
    fn new(t: &Erc20Transfer, related: &Related) -> Self {
        let contract = related.contract(t.contract);
        let decimals = contract.and_then(|c| c.decimals);
        Self {
            token_name: text(contract.and_then(|c| c.name.as_ref())),
            token_symbol: text(contract.and_then(|c| c.symbol.as_ref())),
            token_logo: text(contract.and_then(|c| c.logo.as_ref())),
            token_decimals: decimals.map(|d| d.to_string()),
            contract_address: t.contract.to_string(),
            transaction_hash: t.transaction_hash.to_ascii_lowercase(),
            transaction_index: t.transaction_index.to_string(),
            log_index: t.log_index.to_string(),
            block_timestamp: iso8601_secs(t.block_timestamp),
            block_number: t.block_number.to_string(),
            block_hash: t.block_hash.to_ascii_lowercase(),
            from_wallet: t.from.to_string(),
            from_wallet_label: label(related, t.from),
            to_wallet: t.to.to_string(),
            to_wallet_label: label(related, t.to),
            value: t.value.to_decimal(),
            value_decimal: decimals.map(|d| t.value.to_decimal_scaled(d)),
            possible_spam: contract.is_some_and(|c| c.possible_spam),
            verified_collection: contract.is_some_and(|c| c.verified),
        }
    }
}

/// The handler of `GET /erc20/transfers`.
#[utoipa::path(
    get,
    path = "/erc20/transfers",
    operation_id = "getErc20Transfers",
    tag = "Token",
    summary = "Get ERC20 token transfers",
    description = "ERC20 transfers that match the filters, newest first: ordered by \
`block_number` descending, ties broken by `log_index` descending (a total, stable order).\n\n\
Include or exclude token contracts (`contract_addresses`, `exclude_contracts`) and wallets \
(`wallet_addresses`, `exclude_wallets`: the sender or the recipient), bound the blocks \
(`from_block`, `to_block`, inclusive), and pass `cursor` to get the next page.\n\n\
Deprecated upstream since 2023-09-04, and still served fully: every answer carries a \
`Deprecation` header (RFC 9745).",
    params(super::spec::Erc20Transfers),
    responses(
        (status = 200, description = "A page of transfers.", body = TransferEnvelope<TransferRecord>),
    ),
)]
pub(super) async fn erc20_transfers(
    Reader(service): Reader,
    RawQuery(raw): RawQuery,
) -> Result<TransferEnvelope<TransferRecord>, ApiError> {
    let params = TransferParams::parse(raw.as_deref())?;
    let answer = transfer_page(&service, &params).await?;
    let result = answer
        .page
        .edges
        .iter()
        .map(|e| TransferRecord::new(&e.node, &answer.related))
        .collect();
    Ok(TransferEnvelope::new(&answer.page, result))
}

/// The related rows a transfer record shows: its token contract, its wallets' labels.
pub(super) const TRANSFER_ROWS: Include = Include {
    contracts: true,
    tokens: false,
    labels: true,
    media: false,
};

/// Reads one page of transfers with what its records show of their tokens and wallets: three
/// statements, whatever the page.
pub(super) async fn transfer_page(
    service: &QueryService,
    params: &TransferParams,
) -> Result<Answer<Erc20Transfer>, ApiError> {
    service
        .erc20_transfers(&params.query, params.cursor.as_deref(), TRANSFER_ROWS)
        .await
        .map_err(|e| ApiError::from_query("erc20_transfers", e))
}
