//! One NFT token: its mint and its metadata.
use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "nft_tokens")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub chain_id: i64,
    #[sea_orm(primary_key, auto_increment = false)]
    pub contract_address: String,
    #[sea_orm(primary_key, auto_increment = false)]
    pub token_id: String,
    pub contract_type: String,
    pub token_uri: Option<String>,
    pub metadata: Option<String>,
    pub block_number_minted: Option<i64>,
    pub minter_address: Option<String>,
    /// Unix milliseconds.
    pub last_token_uri_sync: Option<i64>,
    /// Unix milliseconds.
    pub last_metadata_sync: Option<i64>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
