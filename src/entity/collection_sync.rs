//! Per-collection sync state: `pending` (backfill scheduled), `syncing`, `synced`, `failed`.
use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "collection_sync")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub chain_id: i64,
    #[sea_orm(primary_key, auto_increment = false)]
    pub contract_address: String,
    pub state: String,
    /// Unix milliseconds.
    pub requested_at: i64,
    /// Unix milliseconds.
    pub updated_at: i64,
    pub synced_to_block: Option<i64>,
    pub error: Option<String>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
