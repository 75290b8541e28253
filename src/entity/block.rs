//! Block headers seen per chain, kept for timestamps and reorg detection.
use sea_orm::entity::prelude::*;

use crate::types::Hash32;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "blocks")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub chain_id: i64,
    #[sea_orm(primary_key, auto_increment = false)]
    pub number: i64,
    pub hash: Hash32,
    pub parent_hash: Option<Hash32>,
    /// Unix seconds.
    pub timestamp: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
