//! Current ERC20 balances, derived from `erc20_transfers` by the store: the exact sum of a
//! holder's stored transfers of a token (received minus sent), `wraps * 2^256 + balance`.
use sea_orm::entity::prelude::*;

use crate::types::{Address, Uint256};

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "erc20_balances")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub chain_id: i64,
    /// The holder; never the zero address.
    #[sea_orm(primary_key, auto_increment = false)]
    pub owner_address: Address,
    /// The token contract.
    #[sea_orm(primary_key, auto_increment = false)]
    pub contract_address: Address,
    /// uint256 as 64 lowercase hex digits: the balance when `wraps` is 0.
    pub balance: Uint256,
    /// How many times 2^256 the sum differs from `balance`: 0 for every real balance, -1 when
    /// the stored transfers sum to a negative balance (history not stored yet), 1 or more past
    /// 2^256 (a token whose events do not add up).
    pub wraps: i64,
    /// Block of the last stored transfer between the holder and the token.
    pub block_number: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
