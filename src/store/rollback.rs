//! Reorg rollback: removes everything derived from blocks above a fork point, in one
//! transaction with the checkpoint.

use std::collections::BTreeSet;

use sea_orm::{
    ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter, QuerySelect, TransactionTrait,
};

use super::lease::{self, Fence};
use super::{derive, erc20_balances, feed, set_checkpoint, Checkpoint, StoreError};
use crate::entity::{block, erc20_transfer, nft_transfer};
use crate::types::{Address, Chain, Uint256};

/// What a rollback removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RollbackReport {
    pub blocks: u64,
    pub erc20_transfers: u64,
    pub nft_transfers: u64,
    pub tokens_recomputed: usize,
}

/// Deletes blocks, transfers and derived rows above `keep_through` (everything when `None`)
/// and writes `checkpoint`, atomically. Holdings and token rows of every affected token are recomputed from the
/// transfers that remain; ERC20 balances and token totals lose what the removed transfers
/// added. With a `fence`, only while the writer holds the chain's lease
/// ([`lease::check`]). With `fed`, the removed transfers are appended to the change feed
/// first ([`feed::append_removed`]), in the same transaction; without, the feed's rows written
/// while it was on still get their copy of them ([`feed::keep_stored_rows`]).
pub async fn rollback_to(
    db: &DatabaseConnection,
    chain: Chain,
    keep_through: Option<u64>,
    checkpoint: Checkpoint,
    fence: Option<&Fence>,
    fed: bool,
) -> Result<RollbackReport, StoreError> {
    let cid = chain.db_id();
    let fork = keep_through.map_or(-1, |b| b as i64);
    let txn = db.begin().await?;
    super::write::lock_chain(&txn, chain).await?;
    if let Some(fence) = fence {
        lease::check(&txn, chain, fence)
            .await?
            .map_err(|holder| StoreError::LeaseLost { holder })?;
    }
    let touched: BTreeSet<(Address, Uint256)> = nft_transfer::Entity::find()
        .select_only()
        .column(nft_transfer::Column::ContractAddress)
        .column(nft_transfer::Column::TokenId)
        .filter(nft_transfer::Column::ChainId.eq(cid))
        .filter(nft_transfer::Column::BlockNumber.gt(fork))
        .into_tuple::<(Address, Uint256)>()
        .all(&txn)
        .await?
        .into_iter()
        .collect();
    if fed {
        feed::append_removed(&txn, cid, fork).await?;
    } else {
        feed::keep_stored_rows(&txn, cid, fork).await?;
    }
    erc20_balances::remove_above(&txn, cid, fork).await?;
    let nft = nft_transfer::Entity::delete_many()
        .filter(nft_transfer::Column::ChainId.eq(cid))
        .filter(nft_transfer::Column::BlockNumber.gt(fork))
        .exec(&txn)
        .await?
        .rows_affected;
    let erc20 = erc20_transfer::Entity::delete_many()
        .filter(erc20_transfer::Column::ChainId.eq(cid))
        .filter(erc20_transfer::Column::BlockNumber.gt(fork))
        .exec(&txn)
        .await?
        .rows_affected;
    let blocks = block::Entity::delete_many()
        .filter(block::Column::ChainId.eq(cid))
        .filter(block::Column::Number.gt(fork))
        .exec(&txn)
        .await?
        .rows_affected;
    derive::recompute_tokens(&txn, cid, &touched).await?;
    set_checkpoint(&txn, chain, checkpoint).await?;
    txn.commit().await?;
    if fed {
        feed::appended_here().notify_waiters();
    }
    Ok(RollbackReport {
        blocks,
        erc20_transfers: erc20,
        nft_transfers: nft,
        tokens_recomputed: touched.len(),
    })
}
