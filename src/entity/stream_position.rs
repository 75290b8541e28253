//! Per webhook stream and chain, the last change of the change feed delivered: after change
//! `feed_index` of feed row `feed_row` (`feed_index` = `u32::MAX`: after the whole row).
use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "stream_positions")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub stream_id: String,
    #[sea_orm(primary_key, auto_increment = false)]
    pub chain_id: i64,
    pub feed_row: i64,
    pub feed_index: i64,
    /// The last row written when the stream began on the chain: blocks stored before it are
    /// not the stream's (never confirmed to it).
    pub start_row: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
