//! Preview images of one original media URL, shared by every token whose metadata points at it.
use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "nft_media")]
pub struct Model {
    /// Lowercase hex SHA-256 of `original_media_url`.
    #[sea_orm(primary_key, auto_increment = false)]
    pub url_hash: String,
    pub original_media_url: String,
    /// `success`, `processing`, `unsupported_media`, `invalid_url`, `host_unavailable` or
    /// `temporarily_unavailable`.
    pub status: String,
    pub mimetype: Option<String>,
    /// `image`, `audio` or `video`.
    pub category: Option<String>,
    /// `0x` + SHA-256 of the original file's bytes.
    pub parent_hash: Option<String>,
    /// JSON: the low/medium/high previews' sizes and file names.
    pub previews: Option<String>,
    pub attempts: i32,
    /// When the media worker should (re)try it (Unix ms); `None` when nothing is due.
    pub next_attempt_at: Option<i64>,
    pub error: Option<String>,
    /// Unix milliseconds.
    pub updated_at: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
