//! `GET /{address}/erc20` (`getWalletTokenBalances`): a wallet's ERC20 balances, summed from its
//! whole transfer history (received minus sent, per token), ordered by token address.
//!
//! v2.2 answers a bare JSON array, so the completeness promise of API.md travels in the
//! `X-Sync-Status` response header: `SYNCED` once the wallet's whole history (or, with
//! `token_addresses`, every named token's) is indexed. Before, the first request schedules it
//! and the answer is `SYNCING` with only the balances of tokens whose own history is complete
//! (a balance summed from part of a history would be made up).

use axum::extract::rejection::PathRejection;
use axum::extract::{Path, RawQuery};
use axum::http::{HeaderName, HeaderValue};
use serde::Serialize;
use utoipa::ToSchema;

use super::envelope::text;
use super::envelope::with_block;
use super::error::ApiError;
use super::nft::path_rejection;
use super::params::BalanceParams;
use crate::app::Reader;
use crate::query::{ContractInfo, Include, TokenBalance};

/// The response header carrying the answer's `SYNCED` / `SYNCING` status.
pub const SYNC_STATUS_HEADER: HeaderName = HeaderName::from_static("x-sync-status");

/// One token balance, in v2.2's shape (`erc20TokenBalance`).
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = erc20TokenBalance)]
pub struct BalanceRecord {
    /// The token contract, lowercase.
    #[schema(
        pattern = "^0x[0-9a-f]{40}$",
        example = "0xdac17f958d2ee523a2206206994597c13d831ec7"
    )]
    pub token_address: String,
    /// The token's symbol, when known.
    #[schema(example = "USDT")]
    pub symbol: Option<String>,
    /// The token's name, when known.
    #[schema(example = "Tether USD")]
    pub name: Option<String>,
    /// The token's logo, from the imported token list; `null` when the list has none.
    pub logo: Option<String>,
    /// The same logo (no smaller image is kept); `null` when the list has none.
    pub thumbnail: Option<String>,
    /// The token's decimals, when known (a JSON number, as v2.2 has it).
    #[schema(minimum = 0, example = 6)]
    pub decimals: Option<u32>,
    /// The balance in the token's smallest unit: exact decimal digits.
    #[schema(pattern = "^[0-9]+$", example = "1250000")]
    pub balance: String,
    /// Whether the token is possibly spam.
    pub possible_spam: bool,
    /// Whether the token is verified.
    pub verified_contract: bool,
}

impl BalanceRecord {
    fn new(b: &TokenBalance, info: Option<&ContractInfo>) -> Self {
        Self {
            token_address: b.contract.to_string(),
            symbol: text(info.and_then(|i| i.symbol.as_ref())),
            name: text(info.and_then(|i| i.name.as_ref())),
            logo: text(info.and_then(|i| i.logo.as_ref())),
            thumbnail: text(info.and_then(|i| i.logo.as_ref())),
            decimals: info.and_then(|i| i.decimals),
            balance: b.balance.to_decimal(),
            possible_spam: info.is_some_and(|i| i.possible_spam),
            verified_contract: info.is_some_and(|i| i.verified),
        }
    }
}

/// The handler of `GET /{address}/erc20`.
#[utoipa::path(
    get,
    path = "/{address}/erc20",
    operation_id = "getWalletTokenBalances",
    tag = "Token",
    summary = "Get ERC20 token balance by wallet",
    description = "A wallet's non-zero ERC20 balances, ordered by token address: for each \
token, everything the wallet received minus everything it sent, over its whole transfer \
history (up to `to_block` when given). A token whose balances do not follow from its `Transfer` \
events (a rebasing token, a mint without an event) is counted as its events say.\n\n\
The `X-Sync-Status` header is `SYNCED` once the wallet's whole history (or, with \
`token_addresses`, every named token's) is indexed. The first request for a wallet that is not \
starts fetching it and answers `SYNCING` with only the balances of tokens whose own history is \
complete.",
    params(
        ("address" = super::schemas::AddressSchema, Path, description = "The wallet: `0x` and 40 hex digits, in any letter case."),
        super::spec::WalletBalances,
    ),
    responses(
        (status = 200, description = "The wallet's balances.", body = Vec<BalanceRecord>,
            headers(("X-Sync-Status" = super::envelope::SyncStatusSchema, description = "`SYNCED` when the answer is complete, `SYNCING` while a history it depends on is being fetched."))),
    ),
)]
pub(super) async fn wallet_balances(
    Reader(service): Reader,
    address: Result<Path<String>, PathRejection>,
    RawQuery(raw): RawQuery,
) -> Result<([(HeaderName, HeaderValue); 1], axum::response::Response), ApiError> {
    let Path(address) = address.map_err(|r| path_rejection("address", r))?;
    let params = BalanceParams::parse(&address, raw.as_deref())?;
    let q = &params.query;
    let listing = service
        .all_token_balances(q, Include::CONTRACTS)
        .await
        .map_err(|e| ApiError::from_query("token_balances", e))?;
    let result: Vec<BalanceRecord> = listing
        .records
        .iter()
        .map(|b| BalanceRecord::new(b, listing.related.contract(b.contract)))
        .collect();
    let header = (
        SYNC_STATUS_HEADER,
        HeaderValue::from_static(listing.status.as_str()),
    );
    Ok(([header], with_block(listing.block, result)))
}
