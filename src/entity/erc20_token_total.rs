//! Per ERC20 token totals, derived from `erc20_transfers` by the store: the net supply
//! (minted minus burned, `supply_wraps * 2^256 + supply`) and the number of stored transfers.
use sea_orm::entity::prelude::*;

use crate::types::{Address, Uint256};

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "erc20_token_totals")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub chain_id: i64,
    /// The token contract.
    #[sea_orm(primary_key, auto_increment = false)]
    pub contract_address: Address,
    /// uint256 as 64 lowercase hex digits: transfers from the zero address minus transfers to
    /// it, when `supply_wraps` is 0.
    pub supply: Uint256,
    /// As `erc20_balance::Model::wraps`, for the supply.
    pub supply_wraps: i64,
    /// Stored transfers of the token.
    pub transfers: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
