//! A token contract: its standard and metadata, spam and verified flags.
use sea_orm::entity::prelude::*;

use crate::types::{Address, TokenStandard};

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "contracts")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub chain_id: i64,
    #[sea_orm(primary_key, auto_increment = false)]
    pub address: Address,
    /// `ERC20`, `ERC721` or `ERC1155` once known.
    pub standard: Option<TokenStandard>,
    pub name: Option<String>,
    pub symbol: Option<String>,
    pub decimals: Option<i32>,
    pub logo: Option<String>,
    pub possible_spam: bool,
    pub verified: bool,
    /// When the indexer read name/symbol/decimals by `eth_call` (Unix ms).
    pub metadata_fetched_at: Option<i64>,
    /// Where `possible_spam` came from: `list`, `heuristic` or `admin` (an admin's choice is
    /// never overwritten by an import); `None` when never set.
    pub spam_source: Option<String>,
    /// Where `verified` came from: `list` or `admin`.
    pub verified_source: Option<String>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
