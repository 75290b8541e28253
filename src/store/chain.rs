//! Reads of a chain's indexing state: its checkpoint (`chain_state`) and the hashes of the
//! blocks stored for it (`blocks`), as the follower, `tokenql status`, an import and the demo
//! need them. The checkpoint is written by [`super::write_batch`], [`super::set_checkpoint`],
//! [`super::set_head`] and [`super::mark_history_complete`].

use alloy::primitives::B256;
use sea_orm::{
    ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter, QueryOrder, QuerySelect,
};

use crate::entity::{block, chain_state};
use crate::types::Chain;

/// A chain's stored checkpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChainState {
    /// The chain's id as stored (a row of a chain tokenql no longer knows keeps its id).
    pub chain_id: i64,
    /// First block the live indexer covers; `None` before it started.
    pub start_block: Option<u64>,
    /// Last block fully stored; `None` before the first one.
    pub indexed_block: Option<u64>,
    /// Chain head last seen.
    pub head_block: Option<u64>,
    /// The stored history is whole although `start_block` is not 0 (an imported sample).
    pub history_complete: bool,
}

/// A stored block number (never negative: written from `u64`s).
fn number(v: Option<i64>) -> Option<u64> {
    v.and_then(|v| u64::try_from(v).ok())
}

impl From<chain_state::Model> for ChainState {
    fn from(m: chain_state::Model) -> Self {
        ChainState {
            chain_id: m.chain_id,
            start_block: number(m.start_block),
            indexed_block: number(m.indexed_block),
            head_block: number(m.head_block),
            history_complete: m.history_complete,
        }
    }
}

/// The chain's checkpoint, if it has one.
pub async fn state<C: ConnectionTrait>(db: &C, chain: Chain) -> Result<Option<ChainState>, DbErr> {
    Ok(chain_state::Entity::find_by_id(chain.db_id())
        .one(db)
        .await?
        .map(ChainState::from))
}

/// Every stored checkpoint, by chain id.
pub async fn states<C: ConnectionTrait>(db: &C) -> Result<Vec<ChainState>, DbErr> {
    Ok(chain_state::Entity::find()
        .order_by_asc(chain_state::Column::ChainId)
        .all(db)
        .await?
        .into_iter()
        .map(ChainState::from)
        .collect())
}

/// The stored hash of block `n`, if the block is stored (and its hash readable).
pub async fn block_hash<C: ConnectionTrait>(
    db: &C,
    chain: Chain,
    n: u64,
) -> Result<Option<B256>, DbErr> {
    let row = block::Entity::find_by_id((chain.db_id(), n as i64))
        .one(db)
        .await?;
    Ok(row.map(|b| B256::from(*b.hash.as_bytes())))
}

/// The stored blocks numbered `from..=to`, newest first, with their hashes.
pub async fn block_hashes<C: ConnectionTrait>(
    db: &C,
    chain: Chain,
    from: u64,
    to: u64,
) -> Result<Vec<(u64, B256)>, DbErr> {
    Ok(block::Entity::find()
        .filter(block::Column::ChainId.eq(chain.db_id()))
        .filter(block::Column::Number.gte(from as i64))
        .filter(block::Column::Number.lte(to as i64))
        .order_by_desc(block::Column::Number)
        .all(db)
        .await?
        .into_iter()
        .map(|b| (b.number as u64, B256::from(*b.hash.as_bytes())))
        .collect())
}

/// The highest stored block numbered from `from` up to (not including) `below`, with its
/// hash.
pub async fn last_block_below<C: ConnectionTrait>(
    db: &C,
    chain: Chain,
    from: u64,
    below: u64,
) -> Result<Option<(u64, B256)>, DbErr> {
    let row = block::Entity::find()
        .filter(block::Column::ChainId.eq(chain.db_id()))
        .filter(block::Column::Number.gte(from as i64))
        .filter(block::Column::Number.lt(below as i64))
        .order_by_desc(block::Column::Number)
        .limit(1)
        .one(db)
        .await?;
    Ok(row.map(|b| (b.number as u64, B256::from(*b.hash.as_bytes()))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_numbers_become_block_numbers() {
        assert_eq!(number(Some(7)), Some(7));
        assert_eq!(number(None), None);
        assert_eq!(number(Some(-1)), None);
    }
}
