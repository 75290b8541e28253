//! Current NFT balances, derived from `nft_transfers` by the store.
use sea_orm::entity::prelude::*;

use crate::types::{Address, TokenStandard, Uint256};

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "nft_holdings")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub chain_id: i64,
    #[sea_orm(primary_key, auto_increment = false)]
    pub owner_address: Address,
    #[sea_orm(primary_key, auto_increment = false)]
    pub contract_address: Address,
    #[sea_orm(primary_key, auto_increment = false)]
    /// uint256 as 64 lowercase hex digits.
    pub token_id: Uint256,
    pub contract_type: TokenStandard,
    /// uint256 as 64 lowercase hex digits.
    pub amount: Uint256,
    /// Block of the owner's latest acquisition of this token.
    pub block_number: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
