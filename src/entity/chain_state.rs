//! Per-chain indexer progress: where it started, what it has stored, the chain head it saw.
use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "chain_state")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub chain_id: i64,
    pub start_block: Option<i64>,
    pub indexed_block: Option<i64>,
    pub head_block: Option<i64>,
    /// Unix milliseconds.
    pub updated_at: i64,
    /// The stored history is whole although `start_block` is not 0 (an imported sample
    /// declared complete).
    pub history_complete: bool,
    /// The kept ERC20 balances (`erc20_balances`) are not maintained: a backfill of a fresh
    /// database left them out, to sum them once when it nears the head
    /// (`store::erc20_balances::rebuild`).
    pub balances_pending: bool,
    /// How many transactions have added or removed the chain's ERC20 transfers since the
    /// balances were left out (`store::backfill_balances::Sums`).
    pub balances_writes: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
