//! One NFT token: its mint and its metadata.
use sea_orm::entity::prelude::*;

use crate::types::{Address, TokenStandard, Uint256};

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "nft_tokens")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub chain_id: i64,
    #[sea_orm(primary_key, auto_increment = false)]
    pub contract_address: Address,
    #[sea_orm(primary_key, auto_increment = false)]
    pub token_id: Uint256,
    pub contract_type: TokenStandard,
    pub token_uri: Option<String>,
    pub metadata: Option<String>,
    pub block_number_minted: Option<i64>,
    pub minter_address: Option<String>,
    /// Unix milliseconds.
    pub last_token_uri_sync: Option<i64>,
    /// Unix milliseconds.
    pub last_metadata_sync: Option<i64>,
    /// Outcome of the last metadata fetch (`ok`, or why it failed; see `metadata::FetchStatus`);
    /// `None` until tried.
    pub metadata_status: Option<String>,
    /// Failed fetches since the last success.
    pub metadata_attempts: i32,
    /// When the metadata worker should (re)fetch it (Unix ms); `None` when nothing is due.
    pub metadata_next_at: Option<i64>,
    /// The last failure, for operators.
    pub metadata_error: Option<String>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
