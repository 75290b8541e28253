//! The wallet lookups (v2.2), from the indexed transfers:
//!
//! - `GET /wallets/{address}/stats` (`getWalletStats`): the NFTs and collections it holds and
//!   the NFT and ERC20 transfers it sent or received; `transactions` is `null` (tokenql indexes
//!   transfer logs, not transactions).
//! - `GET /wallets/{address}/chains` (`getWalletActiveChains`): on each chain asked (default:
//!   every indexed chain), its first and last transfer; a chain without one is left out.
//!
//! Both depend on the wallet's whole history: the `X-Sync-Status` header is `SYNCED` once it is
//! stored on every chain asked (each active chain also carries its own `status`), and an
//! incomplete answer schedules it.

use axum::extract::rejection::PathRejection;
use axum::extract::{Path, RawQuery};
use axum::http::HeaderValue;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Serialize;
use utoipa::ToSchema;

use super::balances::SYNC_STATUS_HEADER;
use super::envelope::with_block;
use super::error::ApiError;
use super::lookup_params::{address_and_chain, path_address, wallet_chains};
use super::nft::path_rejection;
use crate::app::Reader;
use crate::query::{Activity, Stated, SyncStatus};
use crate::types::iso8601_secs;

/// A total that tokenql knows, or `null` where it has no data.
#[derive(Debug, Serialize, ToSchema)]
pub struct MaybeTotal {
    /// How many in all; `null` when not tracked.
    #[schema(pattern = "^[0-9]+$", example = "1000")]
    pub total: Option<String>,
}

/// `getWalletStats`'s answer.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = walletStat)]
pub struct WalletStatsRecord {
    /// NFTs held (token ids; an ERC1155 id counts once).
    #[schema(pattern = "^[0-9]+$", example = "100")]
    pub nfts: String,
    /// Collections held.
    #[schema(pattern = "^[0-9]+$", example = "10")]
    pub collections: String,
    /// Transactions are not indexed: `{"total": null}`.
    pub transactions: MaybeTotal,
    /// NFT transfers sent or received (one to itself counts once).
    pub nft_transfers: MaybeTotal,
    /// ERC20 transfers sent or received (one to itself counts once).
    pub token_transfers: MaybeTotal,
}

/// The handler of `GET /wallets/{address}/stats`.
#[utoipa::path(
    get,
    path = "/wallets/{address}/stats",
    operation_id = "getWalletStats",
    tag = "Wallet",
    summary = "Get summary stats by wallet address",
    description = "The NFTs and collections the wallet holds and the NFT and ERC20 transfers it \
sent or received. `transactions.total` is `null`: tokenql indexes transfer logs, not \
transactions. The `X-Sync-Status` header is `SYNCED` once the wallet's history is indexed.",
    params(
        ("address" = super::schemas::AddressSchema, Path, description = "The wallet: `0x` and 40 hex digits, in any letter case."),
        super::spec::ChainOnly,
    ),
    responses(
        (status = 200, description = "The wallet's counts.", body = WalletStatsRecord,
            headers(("X-Sync-Status" = super::envelope::SyncStatusSchema, description = "`SYNCED` when the counts are complete."))),
    ),
)]
pub(super) async fn wallet_stats(
    Reader(service): Reader,
    address: Result<Path<String>, PathRejection>,
    RawQuery(raw): RawQuery,
) -> Result<Response, ApiError> {
    let (wallet, chain) = address_and_chain("address", address, raw.as_deref())?;
    let Stated {
        value,
        status,
        block,
    } = service
        .wallet_stats(chain, wallet)
        .await
        .map_err(|e| ApiError::from_query("wallet_stats", e))?;
    let total = |n: u64| MaybeTotal {
        total: Some(n.to_string()),
    };
    let record = WalletStatsRecord {
        nfts: value.nfts.to_string(),
        collections: value.collections.to_string(),
        transactions: MaybeTotal { total: None },
        nft_transfers: total(value.nft_transfers),
        token_transfers: total(value.token_transfers),
    };
    let header = (
        SYNC_STATUS_HEADER,
        HeaderValue::from_static(status.as_str()),
    );
    Ok(([header], with_block(block, record)).into_response())
}

/// A transfer marking the wallet's activity.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = walletActivity)]
pub struct ActivityRecord {
    /// Its block.
    #[schema(pattern = "^[0-9]+$", example = "12526958")]
    pub block_number: String,
    /// Its block's time (ISO 8601, ms).
    #[schema(example = "2021-05-28T07:46:44.000Z")]
    pub block_timestamp: String,
    /// Its transaction.
    #[schema(pattern = "^0x[0-9a-f]{64}$")]
    pub transaction_hash: String,
}

impl From<&Activity> for ActivityRecord {
    fn from(a: &Activity) -> Self {
        Self {
            block_number: a.block_number.to_string(),
            block_timestamp: iso8601_secs(a.block_timestamp),
            transaction_hash: a.transaction_hash.clone(),
        }
    }
}

/// One chain the wallet is active on.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = walletActiveChain)]
pub struct ActiveChainRecord {
    /// The chain's name.
    #[schema(example = "eth")]
    pub chain: String,
    /// The chain's id, `0x` hex.
    #[schema(example = "0x1")]
    pub chain_id: String,
    /// Its first transfer (ERC20 or NFT) on the chain.
    pub first_transaction: ActivityRecord,
    /// Its last transfer on the chain.
    pub last_transaction: ActivityRecord,
    /// `SYNCED` once the wallet's history on this chain is indexed (tokenql's addition).
    #[schema(value_type = super::envelope::SyncStatusSchema)]
    pub status: &'static str,
}

/// `getWalletActiveChains`'s answer.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = walletActiveChains)]
pub struct ActiveChainsRecord {
    /// The wallet, lowercase.
    #[schema(pattern = "^0x[0-9a-f]{40}$")]
    pub address: String,
    /// The chains with at least one transfer of the wallet.
    pub active_chains: Vec<ActiveChainRecord>,
}

/// The handler of `GET /wallets/{address}/chains`.
#[utoipa::path(
    get,
    path = "/wallets/{address}/chains",
    operation_id = "getWalletActiveChains",
    tag = "Wallet",
    summary = "Get active chains by wallet address",
    description = "On each chain asked (default: every chain this server indexes), the wallet's \
first and last transfer (ERC20 or NFT, sent or received); a chain without one is left out. The \
`X-Sync-Status` header is `SYNCED` once the wallet's history is indexed on every chain asked.",
    params(
        ("address" = super::schemas::AddressSchema, Path, description = "The wallet: `0x` and 40 hex digits, in any letter case."),
        super::spec::WalletChains,
    ),
    responses(
        (status = 200, description = "The chains the wallet is active on.", body = ActiveChainsRecord,
            headers(("X-Sync-Status" = super::envelope::SyncStatusSchema, description = "`SYNCED` when the answer is complete."))),
    ),
)]
pub(super) async fn wallet_active_chains(
    Reader(service): Reader,
    address: Result<Path<String>, PathRejection>,
    RawQuery(raw): RawQuery,
) -> Result<Response, ApiError> {
    let Path(address) = address.map_err(|r| path_rejection("address", r))?;
    let wallet = path_address("address", &address)?;
    let mut chains = wallet_chains(raw.as_deref())?;
    if chains.is_empty() {
        chains = service
            .indexed_chains()
            .await
            .map_err(|e| ApiError::from_query("indexed_chains", e))?;
    }
    let mut overall = SyncStatus::Synced;
    let mut active_chains = Vec::new();
    for chain in chains {
        let found = service
            .wallet_activity(chain, wallet)
            .await
            .map_err(|e| ApiError::from_query("wallet_activity", e))?;
        if found.status == SyncStatus::Syncing {
            overall = SyncStatus::Syncing;
        }
        if let (Some(first), Some(last)) = (&found.value.first, &found.value.last) {
            active_chains.push(ActiveChainRecord {
                chain: chain.name().to_string(),
                chain_id: chain.hex_id(),
                first_transaction: first.into(),
                last_transaction: last.into(),
                status: found.status.as_str(),
            });
        }
    }
    let record = ActiveChainsRecord {
        address: wallet.to_string(),
        active_chains,
    };
    let header = (
        SYNC_STATUS_HEADER,
        HeaderValue::from_static(overall.as_str()),
    );
    Ok(([header], Json(record)).into_response())
}
