//! Webhook streams (see `store::streams`): what a stream delivers, where, its status and the
//! lease of the process delivering it.
use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "streams")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: String,
    /// The API key that made the stream (and alone sees it).
    pub key_id: i32,
    pub webhook_url: String,
    pub description: String,
    pub tag: String,
    /// The transfer events delivered, a bit per event (`store::streams::Topics`).
    pub topics: i16,
    pub include_contract_logs: bool,
    pub all_addresses: bool,
    /// `active`, `paused` or `error`.
    pub status: String,
    pub status_message: String,
    /// Consecutive failed deliveries.
    pub failures: i32,
    /// The process delivering the stream (`host:pid:nonce`).
    pub lease_holder: Option<String>,
    /// Unix milliseconds: another process may take the stream over after this.
    pub lease_until_ms: i64,
    pub created_ms: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
