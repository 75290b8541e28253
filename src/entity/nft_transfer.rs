//! One NFT movement: an ERC721 `Transfer`, an ERC1155 `TransferSingle`, or one id of a `TransferBatch` (`batch_index` is its position in the batch).
use sea_orm::entity::prelude::*;

use crate::types::{Address, Hash32, TokenStandard, Uint256};

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "nft_transfers")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub chain_id: i64,
    #[sea_orm(primary_key, auto_increment = false)]
    pub block_number: i64,
    #[sea_orm(primary_key, auto_increment = false)]
    pub log_index: i32,
    #[sea_orm(primary_key, auto_increment = false)]
    pub batch_index: i32,
    pub block_hash: Hash32,
    pub block_timestamp: i64,
    pub transaction_hash: Hash32,
    pub transaction_index: i32,
    pub contract_address: Address,
    /// `ERC721` or `ERC1155`.
    pub contract_type: TokenStandard,
    pub operator: Option<Address>,
    pub from_address: Address,
    pub to_address: Address,
    /// uint256 as 64 lowercase hex digits.
    pub token_id: Uint256,
    /// uint256 as 64 lowercase hex digits.
    pub amount: Uint256,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
