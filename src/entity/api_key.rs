//! An API key, stored only as the SHA-256 of the secret.
use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "api_keys")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i32,
    pub name: String,
    #[sea_orm(unique)]
    pub key_hash: String,
    pub key_prefix: String,
    /// Unix milliseconds.
    pub created_at: i64,
    pub revoked_at: Option<i64>,
    /// Requests per second; `0` = unlimited; `NULL` = the server's default.
    pub rate_limit_per_sec: Option<i32>,
    /// Bucket size (requests in a burst); `NULL` = the server's default.
    pub rate_limit_burst: Option<i32>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
