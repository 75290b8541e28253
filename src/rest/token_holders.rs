//! The ERC20 token routes over the balances tokenql keeps:
//!
//! - `GET /erc20/{token_address}/owners` (`getTokenOwners`): a token's holders by balance,
//!   largest first (`order=ASC`: smallest first), with each holder's share of the supply where
//!   the supply is known;
//! - `GET /erc20/{address}/stats` (`getTokenStats`): how many transfers the token has.
//!
//! Both depend on the token contract's whole history. `status` (the owners envelope) and the
//! `X-Sync-Status` header (stats, a bare object as Moralis answers it) are `SYNCED` once it is
//! stored; before, the first request schedules it and the answer is `SYNCING`: the owners are
//! then only holders whose own wallet history is stored, `total_supply` and every share are
//! `null`, and the count is of the transfers stored so far.
//!
//! The supply is the token's minted minus burned amount as its `Transfer` events say (from and
//! to the zero address), which is the sum of all balances: known only with the whole history.
//! Fields tokenql has no data for (`usd_value`, `entity`, `entity_logo`) are `null`;
//! `is_contract` is `true` for a holder tokenql knows as a contract and `null` otherwise
//! (a wallet is not told from an unknown contract).

use alloy::primitives::U512;
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, RawQuery};
use axum::http::HeaderValue;
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use utoipa::ToSchema;

use super::balances::SYNC_STATUS_HEADER;
use super::envelope::{label, with_block, SyncStatusSchema};
use super::error::ApiError;
use super::nft::path_rejection;
use super::params::{settle_date, TokenOwnersParams, TokenStatsParams};
use crate::app::Reader;
use crate::query::{Related, TokenHolder, TokenHolders};
use crate::types::Uint256;

/// One holder of a token, in Moralis's shape (`erc20TokenOwner`).
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = erc20TokenOwner)]
pub struct TokenOwnerRecord {
    /// The holder, lowercase.
    #[schema(
        pattern = "^0x[0-9a-f]{40}$",
        example = "0x5a52e96bacdabb82fd05763e25335261b270efcb"
    )]
    pub owner_address: String,
    /// The holder's label from the imported address labels; `null` when it has none.
    #[schema(example = "Binance 28")]
    pub owner_address_label: Option<String>,
    /// The balance in the token's smallest unit: exact decimal digits.
    #[schema(pattern = "^[0-9]+$", example = "57888888888888888888880")]
    pub balance: String,
    /// The balance divided by 10^decimals, written exactly; `null` when the decimals are
    /// unknown.
    #[schema(example = "57888.88888888888888888")]
    pub balance_formatted: Option<String>,
    /// Always `null`: tokenql has no prices.
    pub usd_value: Option<String>,
    /// `true` when tokenql knows the holder as a contract; `null` otherwise (unknown).
    pub is_contract: Option<bool>,
    /// The holder's share of the total supply, in percent (`10` is a tenth); `null` while the
    /// supply is not known (see `total_supply`).
    #[schema(example = 10.5)]
    pub percentage_relative_to_total_supply: Option<f64>,
    /// Always `null`: entities are not part of tokenql's data.
    pub entity: Option<String>,
    /// Always `null`: entities are not part of tokenql's data.
    pub entity_logo: Option<String>,
}

impl TokenOwnerRecord {
    fn new(h: &TokenHolder, related: &Related, supply: Option<Uint256>) -> Self {
        let decimals = related.contract(h.contract).and_then(|c| c.decimals);
        Self {
            owner_address: h.owner.to_string(),
            owner_address_label: label(related, h.owner),
            balance: h.balance.to_decimal(),
            balance_formatted: decimals.map(|d| h.balance.to_decimal_scaled(d)),
            usd_value: None,
            is_contract: related.contract(h.owner).map(|_| true),
            percentage_relative_to_total_supply: supply.and_then(|s| percent(h.balance, s)),
            entity: None,
            entity_logo: None,
        }
    }
}

/// `part` as a percentage of `whole` (18 decimals exact before the float); `None` for a zero
/// whole.
fn percent(part: Uint256, whole: Uint256) -> Option<f64> {
    if whole.is_zero() {
        return None;
    }
    let scale = U512::from(10u8).pow(U512::from(20u8));
    let q = U512::from(part.0) * scale / U512::from(whole.0);
    let q: u128 = q.try_into().ok()?;
    Some(q as f64 / 1e18)
}

/// `GET /erc20/{token_address}/owners`: `{"status","page","page_size","cursor","total_supply",
/// "result"}` (`status` is tokenql's addition; clients that do not know it ignore it).
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = erc20TokenOwnerCollection)]
pub struct TokenOwnersEnvelope {
    /// `SYNCED` or `SYNCING`.
    #[schema(value_type = SyncStatusSchema)]
    pub status: &'static str,
    /// 1-based page number.
    #[schema(minimum = 1, example = 1)]
    pub page: u64,
    /// The page size asked for (`limit`).
    #[schema(minimum = 1, maximum = 100, example = 100)]
    pub page_size: u64,
    /// Opens the next page; `null` on the last page.
    pub cursor: Option<String>,
    /// The token's total supply (minted minus burned), exact decimal digits; `null` until the
    /// token's whole history is indexed.
    #[schema(pattern = "^[0-9]+$", example = "420690000000000000000000000000000")]
    pub total_supply: Option<String>,
    /// The holders of this page.
    pub result: Vec<TokenOwnerRecord>,
    /// The block the page was read as of: sent as `X-Indexed-Block`.
    #[serde(skip)]
    pub block: Option<u64>,
}

impl IntoResponse for TokenOwnersEnvelope {
    fn into_response(self) -> Response {
        with_block(self.block, &self)
    }
}

impl From<TokenHolders> for TokenOwnersEnvelope {
    fn from(h: TokenHolders) -> Self {
        let page = &h.answer.page;
        let related = &h.answer.related;
        Self {
            status: page.status.as_str(),
            page: page.page,
            page_size: page.page_size,
            cursor: page.next_cursor.clone(),
            total_supply: h.total_supply.map(|s| s.to_decimal()),
            result: page
                .edges
                .iter()
                .map(|e| TokenOwnerRecord::new(&e.node, related, h.total_supply))
                .collect(),
            block: page.block,
        }
    }
}

/// The handler of `GET /erc20/{token_address}/owners`.
#[utoipa::path(
    get,
    path = "/erc20/{token_address}/owners",
    operation_id = "getTokenOwners",
    tag = "Token",
    summary = "Get ERC20 token owners by contract",
    description = "A token's holders by balance, largest first (`order=ASC`: smallest first; \
equal balances by holder address); pass `cursor` to get the next page. Balances are sums of the \
token's `Transfer` events (received minus sent); the zero address is never a holder.\n\n\
`status` is `SYNCED` once the token contract's whole history is indexed; the first request for \
a token that is not starts fetching it, and answers `SYNCING` with only the holders whose own \
wallet history is indexed. `total_supply` (minted minus burned) and each holder's \
`percentage_relative_to_total_supply` are known, and given, only with the whole history; \
`null` otherwise.",
    params(
        ("token_address" = super::schemas::AddressSchema, Path, description = "The token contract: `0x` and 40 hex digits, in any letter case."),
        super::spec::TokenOwners,
    ),
    responses(
        (status = 200, description = "A page of the token's holders.", body = TokenOwnersEnvelope),
    ),
)]
pub(super) async fn token_owners(
    Reader(service): Reader,
    address: Result<Path<String>, PathRejection>,
    RawQuery(raw): RawQuery,
) -> Result<TokenOwnersEnvelope, ApiError> {
    let Path(address) = address.map_err(|r| path_rejection("token_address", r))?;
    let mut params = TokenOwnersParams::parse(&address, raw.as_deref())?;
    let q = &mut params.query;
    settle_date(&service, q.chain, &mut q.at_block, params.to_date).await?;
    let holders = service
        .token_holders(&params.query, params.cursor.as_deref())
        .await
        .map_err(|e| ApiError::from_query("token_owners", e))?;
    Ok(holders.into())
}

/// `GET /erc20/{address}/stats`: `{"transfers":{"total":"N"}}`.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = erc20TokenStat)]
pub struct TokenStatsRecord {
    /// The token's transfers.
    pub transfers: TransferCount,
}

/// The `transfers` of [`TokenStatsRecord`].
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = erc20TokenStatTransfers)]
pub struct TransferCount {
    /// How many `Transfer` events the token emitted (as a JSON string): all of them when
    /// `X-Sync-Status` is `SYNCED`, those indexed so far when `SYNCING`.
    #[schema(pattern = "^[0-9]+$", example = "1000")]
    pub total: String,
}

/// The handler of `GET /erc20/{address}/stats`.
#[utoipa::path(
    get,
    path = "/erc20/{address}/stats",
    operation_id = "getTokenStats",
    tag = "Token",
    summary = "Get ERC20 token stats",
    description = "How many transfers a token has: `{\"transfers\":{\"total\":\"N\"}}`, a bare \
object as Moralis answers it. A token with no indexed transfer counts 0.\n\n\
The `X-Sync-Status` header is `SYNCED` once the token contract's whole history is indexed; the \
first request for a token that is not starts fetching it, and answers `SYNCING` with the count \
of the transfers indexed so far.",
    params(
        ("address" = super::schemas::AddressSchema, Path, description = "The token contract: `0x` and 40 hex digits, in any letter case."),
        super::spec::TokenStats,
    ),
    responses(
        (status = 200, description = "The token's stats.", body = TokenStatsRecord,
            headers(("X-Sync-Status" = super::envelope::SyncStatusSchema, description = "`SYNCED` when the count is complete, `SYNCING` while the token's history is being fetched."))),
    ),
)]
pub(super) async fn token_stats(
    Reader(service): Reader,
    address: Result<Path<String>, PathRejection>,
    RawQuery(raw): RawQuery,
) -> Result<Response, ApiError> {
    let Path(address) = address.map_err(|r| path_rejection("address", r))?;
    let params = TokenStatsParams::parse(&address, raw.as_deref())?;
    let stats = service
        .token_stats(&params.query)
        .await
        .map_err(|e| ApiError::from_query("token_stats", e))?;
    let body = TokenStatsRecord {
        transfers: TransferCount {
            total: stats.transfers.to_string(),
        },
    };
    let header = (
        SYNC_STATUS_HEADER,
        HeaderValue::from_static(stats.status.as_str()),
    );
    Ok(([header], with_block(stats.block, body)).into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_are_percentages_of_the_supply() {
        let u = Uint256::from_u64;
        assert_eq!(percent(u(1), u(10)), Some(10.0));
        assert_eq!(percent(u(10), u(10)), Some(100.0));
        assert_eq!(
            percent(u(1), u(3)).map(|p| (p * 1e6).round()),
            Some(33_333_333.0)
        );
        assert_eq!(percent(u(1), Uint256::ZERO), None);
        assert_eq!(percent(Uint256::MAX, Uint256::MAX), Some(100.0));
    }
}
