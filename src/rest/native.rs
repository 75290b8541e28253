//! The native-balance routes, read from the chain's JSON-RPC endpoint
//! ([`crate::query::ChainReads`]):
//!
//! - `GET /{address}/balance` (`getNativeBalance`): `{"balance"}` in wei;
//! - `GET /wallets/balances` (`getNativeBalancesForAddresses`): the balances of up to 25 wallets
//!   at one block, with their total, in Moralis's shape (one record for the chain).
//!
//! `to_block` is honoured (a block after the chain's head is a 400); without it the balances
//! are read at the head. A chain without a configured endpoint is a 400 naming `chain` that
//! says so (as an unknown chain is: this server cannot answer for it); an endpoint that fails is
//! a 503. Native balances do not depend on indexed history, so the
//! answers carry no `status`.

use axum::extract::rejection::PathRejection;
use axum::extract::{Path, RawQuery, State};
use axum::Json;
use serde::Serialize;
use utoipa::ToSchema;

use super::error::ApiError;
use super::nft::path_rejection;
use super::params::NativeBalanceParams;
use crate::app::AppState;
use crate::query::{ChainReadError, NativeAnswer};
use crate::types::{iso8601_secs, Uint256};

/// Decimals of every chain's native coin tokenql knows.
const NATIVE_DECIMALS: u32 = 18;

/// A chain read's failure as an answer.
pub(super) fn chain_read_error(e: ChainReadError) -> ApiError {
    match e {
        ChainReadError::NoEndpoint(chain) => ApiError::bad(
            "chain",
            format!(
                "native balances of {} are read from its JSON-RPC endpoint, and this server has \
                 none; start it with --rpc {}=URL",
                chain.name(),
                chain.name().replace(' ', "_")
            ),
        ),
        ChainReadError::AfterHead { block, head } => ApiError::bad(
            "to_block",
            format!("{block} is after the chain's head {head}"),
        ),
        ChainReadError::Endpoint(detail) => ApiError::ChainUnavailable {
            context: "native balance",
            detail,
        },
    }
}

/// Reads the balances `params` ask for.
async fn read(state: &AppState, params: &NativeBalanceParams) -> Result<NativeAnswer, ApiError> {
    state
        .ops
        .options()
        .chain_reads
        .balances(params.chain, &params.wallets, params.to_block.map(|b| b.0))
        .await
        .map_err(chain_read_error)
}

/// The answer of `GET /{address}/balance` (`nativeBalance`).
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = nativeBalance)]
pub struct NativeBalance {
    /// The balance in wei: exact decimal digits.
    #[schema(pattern = "^[0-9]+$", example = "1234567890")]
    pub balance: String,
}

/// The handler of `GET /{address}/balance`.
#[utoipa::path(
    get,
    path = "/{address}/balance",
    operation_id = "getNativeBalance",
    tag = "Balance",
    summary = "Get native balance by wallet",
    description = "The wallet's balance of the chain's native coin (e.g. ETH) in wei, read from \
the chain's JSON-RPC endpoint at `to_block`, or at the chain's head. A chain without a \
configured endpoint is a 400 naming `chain`; an endpoint that fails, a 503.",
    params(
        ("address" = super::schemas::AddressSchema, Path, description = "The wallet: `0x` and 40 hex digits, in any letter case."),
        super::spec::NativeBalance,
    ),
    responses(
        (status = 200, description = "The wallet's native balance.", body = NativeBalance),
    ),
)]
pub(super) async fn native_balance(
    State(state): State<AppState>,
    address: Result<Path<String>, PathRejection>,
    RawQuery(raw): RawQuery,
) -> Result<Json<NativeBalance>, ApiError> {
    let Path(address) = address.map_err(|r| path_rejection("address", r))?;
    let params = NativeBalanceParams::parse_one(&address, raw.as_deref())?;
    let answer = read(&state, &params).await?;
    let balance = answer
        .balances
        .first()
        .map(|(_, b)| b.to_decimal())
        .unwrap_or_else(|| Uint256::ZERO.to_decimal());
    Ok(Json(NativeBalance { balance }))
}

/// One wallet's balance in a `GET /wallets/balances` record.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = nativeWalletBalance)]
pub struct WalletBalance {
    /// The wallet, lowercase.
    #[schema(pattern = "^0x[0-9a-f]{40}$")]
    pub address: String,
    /// Its balance in wei: exact decimal digits.
    #[schema(pattern = "^[0-9]+$", example = "1234567890")]
    pub balance: String,
    /// Its balance in the coin (wei / 10^18), written exactly.
    #[schema(example = "0.00000000123456789")]
    pub balance_formatted: String,
}

/// The balances of one chain (`nativeBalances`), as `GET /wallets/balances` answers them.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = nativeBalances)]
pub struct ChainBalances {
    /// The chain's hex id.
    #[schema(example = "0x1")]
    pub chain: String,
    /// The block the balances were read at.
    #[schema(pattern = "^[0-9]+$", example = "15320599")]
    pub block_number: String,
    /// That block's timestamp, ISO 8601 UTC with milliseconds.
    #[schema(example = "2022-08-11T19:12:05.000Z")]
    pub block_timestamp: String,
    /// The sum of the balances, in wei.
    #[schema(pattern = "^[0-9]+$")]
    pub total_balance: String,
    /// The sum in the coin (wei / 10^18), written exactly.
    pub total_balance_formatted: String,
    /// Each wallet's balance, in the order asked.
    pub wallet_balances: Vec<WalletBalance>,
}

/// The handler of `GET /wallets/balances`.
#[utoipa::path(
    get,
    path = "/wallets/balances",
    operation_id = "getNativeBalancesForAddresses",
    tag = "Balance",
    summary = "Get native balance for a set of wallets",
    description = "The balances of up to 25 wallets in the chain's native coin, read from the \
chain's JSON-RPC endpoint at one block (`to_block`, or the chain's head): one record for the \
chain, with each wallet's balance in the order asked and their total. A chain without a \
configured endpoint is a 400 naming `chain`; an endpoint that fails, a 503.",
    params(super::spec::NativeBalances),
    responses(
        (status = 200, description = "The wallets' native balances.", body = Vec<ChainBalances>),
    ),
)]
pub(super) async fn native_balances(
    State(state): State<AppState>,
    RawQuery(raw): RawQuery,
) -> Result<Json<Vec<ChainBalances>>, ApiError> {
    let params = NativeBalanceParams::parse_many(raw.as_deref())?;
    let answer = read(&state, &params).await?;
    let header = state
        .ops
        .options()
        .chain_reads
        .header(params.chain, answer.block)
        .await
        .map_err(chain_read_error)?;
    let total = answer
        .balances
        .iter()
        .fold(Uint256::ZERO, |sum, (_, b)| sum.saturating_add(*b));
    let wallet_balances = answer
        .balances
        .iter()
        .map(|(a, b)| WalletBalance {
            address: a.to_string(),
            balance: b.to_decimal(),
            balance_formatted: b.to_decimal_scaled(NATIVE_DECIMALS),
        })
        .collect();
    Ok(Json(vec![ChainBalances {
        chain: params.chain.hex_id(),
        block_number: answer.block.to_string(),
        block_timestamp: iso8601_secs(header.timestamp),
        total_balance: total.to_decimal(),
        total_balance_formatted: total.to_decimal_scaled(NATIVE_DECIMALS),
        wallet_balances,
    }]))
}
