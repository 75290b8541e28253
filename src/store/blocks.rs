//! Reads of the stored block headers (`blocks`) by time, for the APIs' block questions
//! (`dateToBlock`): the last stored block at or before a time, and the stored block that
//! follows a block. Headers are written by [`super::write_batch`]; they are sparse (the blocks
//! with transfers, the ends of each range, every block near the head), so callers decide what
//! a gap between two stored blocks means.

use alloy::primitives::B256;
use sea_orm::sea_query::SimpleExpr;
use sea_orm::{
    ColumnTrait, ConnectionTrait, DbErr, EntityTrait, Order, QueryFilter, QueryOrder, QuerySelect,
};

use crate::entity::block;
use crate::types::Chain;

/// A stored block header, as the APIs show it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoredBlock {
    /// Its number.
    pub number: u64,
    /// Its hash.
    pub hash: B256,
    /// Its parent's hash, when the header was stored with one.
    pub parent_hash: Option<B256>,
    /// Unix seconds.
    pub timestamp: u64,
}

/// A row as a header; `None` when a stored value does not parse (never written so).
fn header(b: block::Model) -> Option<StoredBlock> {
    Some(StoredBlock {
        number: u64::try_from(b.number).ok()?,
        hash: B256::from(*b.hash.as_bytes()),
        parent_hash: b.parent_hash.map(|p| B256::from(*p.as_bytes())),
        timestamp: u64::try_from(b.timestamp).ok()?,
    })
}

/// The highest-numbered stored block of `chain` whose timestamp is at or before `secs`.
pub async fn last_at_or_before<C: ConnectionTrait>(
    db: &C,
    chain: Chain,
    secs: u64,
) -> Result<Option<StoredBlock>, DbErr> {
    let at_or_before = block::Column::Timestamp.lte(i64::try_from(secs).unwrap_or(i64::MAX));
    one(db, chain, Some(at_or_before), Order::Desc).await
}

/// The lowest-numbered stored block of `chain` numbered above `number`.
pub async fn next_after<C: ConnectionTrait>(
    db: &C,
    chain: Chain,
    number: u64,
) -> Result<Option<StoredBlock>, DbErr> {
    let after = block::Column::Number.gt(i64::try_from(number).unwrap_or(i64::MAX));
    one(db, chain, Some(after), Order::Asc).await
}

/// The stored block of `chain` with this hash, if its header is stored (a block that was
/// reorganized away is not).
pub async fn by_hash<C: ConnectionTrait>(
    db: &C,
    chain: Chain,
    hash: B256,
) -> Result<Option<StoredBlock>, DbErr> {
    let filter = block::Column::Hash.eq(crate::types::Hash32::from(hash));
    one(db, chain, Some(filter), Order::Asc).await
}

/// The lowest-numbered stored block of `chain`.
pub async fn first<C: ConnectionTrait>(db: &C, chain: Chain) -> Result<Option<StoredBlock>, DbErr> {
    one(db, chain, None, Order::Asc).await
}

/// The first stored block of `chain` matching `filter`, by number in `order`.
async fn one<C: ConnectionTrait>(
    db: &C,
    chain: Chain,
    filter: Option<SimpleExpr>,
    order: Order,
) -> Result<Option<StoredBlock>, DbErr> {
    let mut find = block::Entity::find().filter(block::Column::ChainId.eq(chain.db_id()));
    if let Some(f) = filter {
        find = find.filter(f);
    }
    let row = find
        .order_by(block::Column::Number, order)
        .limit(1)
        .one(db)
        .await?;
    Ok(row.and_then(header))
}
