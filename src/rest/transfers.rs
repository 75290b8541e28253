//! `GET /erc20/transfers`: ERC20 transfers, in the Moralis v2 shape.
//!
//! Deprecated upstream since 2023-09-04 and still served fully; the router adds the
//! [`DEPRECATION`] header to every answer of this route. One page costs a constant number of
//! statements: the page from the query service, one batch for the token contracts and one for
//! the labels of the senders and recipients.

use std::collections::{BTreeSet, HashMap};

use axum::extract::{RawQuery, State};
use axum::http::{HeaderName, HeaderValue};
use axum::response::Response;
use axum::Json;
use serde::Serialize;

use super::envelope::{text, TransferEnvelope};
use super::error::ApiError;
use super::params::TransferParams;
use crate::query::{ContractInfo, Erc20Transfer};
use crate::server::AppState;
use crate::types::{iso8601_secs, Address};

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
#[derive(Debug, Serialize)]
pub struct TransferRecord {
    /// Token name, when known.
    pub token_name: Option<String>,
    /// Token symbol, when known.
    pub token_symbol: Option<String>,
    /// Token logo URL, when known.
    pub token_logo: Option<String>,
    /// Token decimals, when known.
    pub token_decimals: Option<String>,
    /// The token contract, lowercase.
    pub contract_address: String,
    /// Hash of the transaction that emitted it.
    pub transaction_hash: String,
    /// Position of the transaction in its block.
    pub transaction_index: String,
    /// Position of the log in its block.
    pub log_index: String,
    /// Time of the block (ISO 8601, ms).
    pub block_timestamp: String,
    /// The block number.
    pub block_number: String,
    /// The block hash.
    pub block_hash: String,
    /// The sender, lowercase.
    pub from_wallet: String,
    /// The sender's label, when known.
    pub from_wallet_label: Option<String>,
    /// The recipient, lowercase.
    pub to_wallet: String,
    /// The recipient's label, when known.
    pub to_wallet_label: Option<String>,
    /// The amount in base units, exact.
    pub value: String,
    /// `value / 10^decimals`, exact; `null` when the decimals are unknown.
    pub value_decimal: Option<String>,
    /// Whether the token is possibly spam.
    pub possible_spam: bool,
    /// Whether the token contract is verified.
    pub verified_collection: bool,
}

impl TransferRecord {
    /// Builds a record from a transfer and its related rows.
    fn new(
        t: &Erc20Transfer,
        contract: Option<&ContractInfo>,
        labels: &HashMap<Address, String>,
    ) -> Self {
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
            from_wallet_label: text(labels.get(&t.from)),
            to_wallet: t.to.to_string(),
            to_wallet_label: text(labels.get(&t.to)),
            value: t.value.to_decimal(),
            value_decimal: decimals.map(|d| t.value.to_decimal_scaled(d)),
            possible_spam: contract.is_some_and(|c| c.possible_spam),
            verified_collection: contract.is_some_and(|c| c.verified),
        }
    }
}

/// The handler of `GET /erc20/transfers`.
pub(super) async fn erc20_transfers(
    State(state): State<AppState>,
    RawQuery(raw): RawQuery,
) -> Result<Json<TransferEnvelope<TransferRecord>>, ApiError> {
    let params = TransferParams::parse(raw.as_deref())?;
    let service = &state.service;
    let chain = params.query.chain;
    let page = service
        .erc20_transfers(&params.query, params.cursor.as_deref())
        .await
        .map_err(|e| ApiError::from_query("erc20_transfers", e))?;

    let contract_addrs: Vec<Address> = page
        .edges
        .iter()
        .map(|e| e.node.contract)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let wallet_addrs: Vec<Address> = page
        .edges
        .iter()
        .flat_map(|e| [e.node.from, e.node.to])
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let (contracts, labels) = tokio::try_join!(
        service.contracts(chain, &contract_addrs),
        service.labels(chain, &wallet_addrs)
    )
    .map_err(|e| ApiError::from_query("erc20 related data", e))?;

    let result = page
        .edges
        .iter()
        .map(|e| TransferRecord::new(&e.node, contracts.get(&e.node.contract), &labels))
        .collect();
    Ok(Json(TransferEnvelope::new(&page, result)))
}
