//! The change feed: one row per block the live indexer stored or a reorg removed, with the
//! block's transfers as compact JSON (see `store::feed`).
use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "change_feed")]
pub struct Model {
    /// The feed's order: increases in commit order within a chain.
    #[sea_orm(primary_key)]
    pub id: i64,
    pub chain_id: i64,
    /// 1: the block was stored; 2: a reorg removed it.
    pub kind: i16,
    pub block_number: i64,
    pub block_hash: String,
    /// Unix seconds.
    pub block_timestamp: i64,
    /// The last block stored once this change was written (the fork point for a removal).
    pub head_block: i64,
    /// The block's transfers (`store::feed::Records`).
    pub records: String,
    /// When the row was written, in Unix milliseconds.
    pub created_ms: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
