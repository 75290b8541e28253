//! Scopes of completeness (API.md): one row per contract or wallet whose history before the
//! live start block was asked for. `state` is `pending` (queued), `syncing` (a worker holds
//! its lease), `synced` (complete) or `failed` (with `error`, retried by a later request after
//! `retry_at`). Progress is `synced_to_block` of `[0, target_block)`.
use sea_orm::entity::prelude::*;

use crate::types::Address;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "scope_sync")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub chain_id: i64,
    /// `contract` or `wallet`.
    #[sea_orm(primary_key, auto_increment = false)]
    pub scope: String,
    #[sea_orm(primary_key, auto_increment = false)]
    pub address: Address,
    pub state: String,
    /// Unix milliseconds: first asked for.
    pub requested_at: i64,
    /// Unix milliseconds.
    pub updated_at: i64,
    /// Unix milliseconds: place in the queue (moved to the back when a worker yields it).
    pub queued_at: i64,
    /// The live start block: the history covers `[0, target_block)`.
    pub target_block: Option<i64>,
    /// History stored through this block.
    pub synced_to_block: Option<i64>,
    /// Logs fetched so far.
    pub logs: i64,
    /// Consecutive failed attempts.
    pub attempts: i32,
    pub error: Option<String>,
    /// Unix milliseconds: a `failed` scope may be retried from then on.
    pub retry_at: Option<i64>,
    /// Unix milliseconds: a `syncing` scope whose lease ran out is claimed again.
    pub lease_until: Option<i64>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
