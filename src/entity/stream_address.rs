//! The addresses a webhook stream watches.
use sea_orm::entity::prelude::*;

use crate::types::Address;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "stream_addresses")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub stream_id: String,
    #[sea_orm(primary_key, auto_increment = false)]
    pub address: Address,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
