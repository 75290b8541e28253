//! The change feed's read side (written by `store::feed`): rows after a position, the light
//! marks a reader replays to learn which blocks still wait for their confirmations, and the
//! feed's bounds. Rows and the stored ERC20 transfers they point at are read in one snapshot.

use std::collections::{BTreeMap, BTreeSet};

use sea_orm::sea_query::{Expr, ExprTrait};
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect};

use super::{Erc20Transfer, NftTransfer, QueryError, QueryService};
use crate::entity::{change_feed, erc20_transfer};
use crate::store::feed::{self as written, Erc20Record, Records};
use crate::types::Chain;

/// What happened to a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockChange {
    /// The indexer stored it.
    Stored,
    /// A reorg removed it (with the transfers the row lists).
    Removed,
}

/// One row of the feed, with its transfers as the query service's records.
#[derive(Debug, Clone)]
pub struct FeedRow {
    /// The feed's order within the chain.
    pub id: i64,
    pub change: BlockChange,
    pub block_number: u64,
    pub block_hash: String,
    /// The last block stored once this change was written (the fork point for a removal).
    pub head: i64,
    pub erc20: Vec<Erc20Transfer>,
    pub nft: Vec<NftTransfer>,
    /// When the row was written, in Unix milliseconds.
    pub created_ms: i64,
}

/// The part of a row a reader replays to rebuild what waits for confirmations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FeedMark {
    pub id: i64,
    pub change: BlockChange,
    pub block_number: u64,
    pub head: i64,
}

/// Where a chain's feed stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FeedBounds {
    /// The highest id pruned (0: none).
    pub pruned_through: i64,
    /// The highest id written (0: none).
    pub last: i64,
}

fn change_of(kind: i16) -> BlockChange {
    if kind == written::REMOVED {
        BlockChange::Removed
    } else {
        BlockChange::Stored
    }
}

impl QueryService {
    /// Up to `limit` rows of `chain` after `after_id`, in order.
    pub async fn feed_after(
        &self,
        chain: Chain,
        after_id: i64,
        limit: u64,
    ) -> Result<Vec<FeedRow>, QueryError> {
        let snap = self.snapshot().await?;
        let rows = change_feed::Entity::find()
            .filter(change_feed::Column::ChainId.eq(chain.db_id()))
            .filter(change_feed::Column::Id.gt(after_id))
            .order_by_asc(change_feed::Column::Id)
            .limit(limit)
            .all(snap.db())
            .await?;
        let rows = with_records(snap.db(), chain.db_id(), rows).await?;
        snap.close().await?;
        Ok(rows)
    }

    /// The rows with these ids, in order.
    pub async fn feed_rows(&self, chain: Chain, ids: &[i64]) -> Result<Vec<FeedRow>, QueryError> {
        let snap = self.snapshot().await?;
        let mut out = Vec::with_capacity(ids.len());
        for chunk in ids.chunks(400) {
            let rows = change_feed::Entity::find()
                .filter(change_feed::Column::ChainId.eq(chain.db_id()))
                .filter(change_feed::Column::Id.is_in(chunk.to_vec()))
                .order_by_asc(change_feed::Column::Id)
                .all(snap.db())
                .await?;
            out.extend(with_records(snap.db(), chain.db_id(), rows).await?);
        }
        snap.close().await?;
        Ok(out)
    }

    /// The marks of every retained row of `chain` before `before_id`, in order.
    pub async fn feed_marks_before(
        &self,
        chain: Chain,
        before_id: i64,
    ) -> Result<Vec<FeedMark>, QueryError> {
        let rows: Vec<(i64, i16, i64, i64)> = change_feed::Entity::find()
            .select_only()
            .column(change_feed::Column::Id)
            .column(change_feed::Column::Kind)
            .column(change_feed::Column::BlockNumber)
            .column(change_feed::Column::HeadBlock)
            .filter(change_feed::Column::ChainId.eq(chain.db_id()))
            .filter(change_feed::Column::Id.lt(before_id))
            .order_by_asc(change_feed::Column::Id)
            .into_tuple()
            .all(self.db())
            .await?;
        Ok(rows
            .into_iter()
            .map(|(id, kind, block, head)| FeedMark {
                id,
                change: change_of(kind),
                block_number: u64::try_from(block).unwrap_or(0),
                head,
            })
            .collect())
    }

    /// The chain's feed bounds: what was pruned, what was written last.
    pub async fn feed_bounds(&self, chain: Chain) -> Result<FeedBounds, QueryError> {
        let cid = chain.db_id();
        let last: Option<i64> = change_feed::Entity::find()
            .select_only()
            .column_as(Expr::col(change_feed::Column::Id).max(), "m")
            .filter(change_feed::Column::ChainId.eq(cid))
            .into_tuple::<Option<i64>>()
            .one(self.db())
            .await?
            .flatten();
        let pruned_through = written::pruned_through(self.db(), cid).await?;
        Ok(FeedBounds {
            pruned_through,
            last: Ord::max(last.unwrap_or(0), pruned_through),
        })
    }
}

/// Rows read from the feed, with their records. The ERC20 transfers of a row that points at
/// the stored ones ([`Records::erc20_stored`]) are read from `erc20_transfers` through `db`,
/// which must be the snapshot the rows were read in: there they are the block's rows of the
/// row's block hash (a rollback copies them into the row before it deletes them).
async fn with_records<C: ConnectionTrait>(
    db: &C,
    cid: i64,
    rows: Vec<change_feed::Model>,
) -> Result<Vec<FeedRow>, QueryError> {
    let mut parsed = Vec::with_capacity(rows.len());
    for r in rows {
        let records = written::parse(&r).map_err(|e| QueryError::Corrupt(e.to_string()))?;
        parsed.push((r, records));
    }
    let blocks: BTreeSet<i64> = parsed
        .iter()
        .filter(|(_, records)| records.erc20_stored)
        .map(|(r, _)| r.block_number)
        .collect();
    let blocks: Vec<i64> = blocks.into_iter().collect();
    let mut stored: BTreeMap<(i64, String), Vec<Erc20Record>> = BTreeMap::new();
    for chunk in blocks.chunks(400) {
        let transfers = erc20_transfer::Entity::find()
            .filter(erc20_transfer::Column::ChainId.eq(cid))
            .filter(erc20_transfer::Column::BlockNumber.is_in(chunk.to_vec()))
            .order_by_asc(erc20_transfer::Column::BlockNumber)
            .order_by_asc(erc20_transfer::Column::LogIndex)
            .all(db)
            .await?;
        for t in transfers {
            stored
                .entry((t.block_number, t.block_hash.to_string()))
                .or_default()
                .push(written::stored_erc20_record(&t));
        }
    }
    Ok(parsed
        .into_iter()
        .map(|(r, mut records)| {
            if records.erc20_stored {
                let key = (r.block_number, r.block_hash.clone());
                records.erc20 = stored.get(&key).cloned().unwrap_or_default();
            }
            feed_row(r, records)
        })
        .collect())
}

fn feed_row(r: change_feed::Model, records: Records) -> FeedRow {
    let number = u64::try_from(r.block_number).unwrap_or(0);
    let timestamp = u64::try_from(r.block_timestamp).unwrap_or(0);
    let erc20 = records
        .erc20
        .into_iter()
        .map(|t| Erc20Transfer {
            contract: t.contract,
            from: t.from,
            to: t.to,
            value: t.value,
            block_number: number,
            block_hash: r.block_hash.clone(),
            block_timestamp: timestamp,
            transaction_hash: t.transaction_hash,
            transaction_index: t.transaction_index,
            log_index: t.log_index,
        })
        .collect();
    let nft = records
        .nft
        .into_iter()
        .map(|t| NftTransfer {
            contract: t.contract,
            token_id: t.token_id,
            contract_type: t.standard,
            operator: t.operator,
            from: t.from,
            to: t.to,
            amount: t.amount,
            block_number: number,
            block_hash: r.block_hash.clone(),
            block_timestamp: timestamp,
            transaction_hash: t.transaction_hash,
            transaction_index: t.transaction_index,
            log_index: t.log_index,
            batch_index: t.batch_index,
        })
        .collect();
    FeedRow {
        id: r.id,
        change: change_of(r.kind),
        block_number: number,
        block_hash: r.block_hash,
        head: r.head_block,
        erc20,
        nft,
        created_ms: r.created_ms,
    }
}

impl QueryService {
    /// The last row that stored block `number` of `chain` (a block a reorg replaced has a later
    /// row), with the highest head the feed has reached; `None` when the feed keeps no such row.
    pub async fn feed_stored_block(
        &self,
        chain: Chain,
        number: u64,
    ) -> Result<Option<(FeedRow, i64)>, QueryError> {
        let cid = chain.db_id();
        let snap = self.snapshot().await?;
        let Some(row) = change_feed::Entity::find()
            .filter(change_feed::Column::ChainId.eq(cid))
            .filter(change_feed::Column::BlockNumber.eq(number as i64))
            .order_by_desc(change_feed::Column::Id)
            .one(snap.db())
            .await?
        else {
            snap.close().await?;
            return Ok(None);
        };
        if row.kind == written::REMOVED {
            snap.close().await?;
            return Ok(None);
        }
        let head: Option<i64> = change_feed::Entity::find()
            .select_only()
            .column_as(Expr::col(change_feed::Column::HeadBlock).max(), "m")
            .filter(change_feed::Column::ChainId.eq(cid))
            .into_tuple::<Option<i64>>()
            .one(snap.db())
            .await?
            .flatten();
        let head = head.unwrap_or(row.head_block);
        let rows = with_records(snap.db(), cid, vec![row]).await?;
        snap.close().await?;
        Ok(rows.into_iter().next().map(|row| (row, head)))
    }
}
