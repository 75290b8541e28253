//! Which process indexes a chain (see `store::lease`): one row per chain that an indexer has
//! ever led. `holder` is `None` once the last leader stopped cleanly.
use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "indexer_lease")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub chain_id: i64,
    /// The leading process (`host:pid:nonce`), or `None`: free.
    pub holder: Option<String>,
    /// Unix milliseconds: a standby may take the lease over after this.
    pub expires_at: i64,
    /// Unix milliseconds: when the holder took it.
    pub acquired_at: i64,
    /// How many times the lease changed hands.
    pub takeovers: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
