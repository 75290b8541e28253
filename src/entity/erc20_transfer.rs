//! One ERC20 `Transfer` log.
use sea_orm::entity::prelude::*;

use crate::types::{Address, Hash32, Uint256};

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "erc20_transfers")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub chain_id: i64,
    #[sea_orm(primary_key, auto_increment = false)]
    pub block_number: i64,
    #[sea_orm(primary_key, auto_increment = false)]
    pub log_index: i32,
    pub block_hash: Hash32,
    pub block_timestamp: i64,
    pub transaction_hash: Hash32,
    pub transaction_index: i32,
    pub contract_address: Address,
    pub from_address: Address,
    pub to_address: Address,
    /// uint256 as 64 lowercase hex digits.
    pub value: Uint256,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
