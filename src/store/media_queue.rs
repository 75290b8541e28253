//! The media queue, `nft_media`: one row per original image URL, queued by the query service
//! ([`enqueue_missing`]), worked by the media worker ([`claim`], [`record`]).
//!
//! Claiming is a conditional update: a row is the worker's when it moved its
//! `next_attempt_at` from the value it read to the lease's end; a row whose worker died is due
//! again once the lease ends. Statuses are the stored texts of
//! [`crate::offchain::media::MediaStatus`].

use sea_orm::sea_query::Expr;
use sea_orm::{
    ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter, QueryOrder, QuerySelect,
};

use crate::entity::nft_media::{self, Column as M};

/// A media row claimed by a worker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MediaJob {
    /// Lowercase hex SHA-256 of `url`: the row's key.
    pub url_hash: String,
    /// The original media URL.
    pub url: String,
    /// Attempts so far.
    pub attempts: i32,
}

/// Claims up to `limit` due rows (due at `now`), oldest due first, until `lease_until` (Unix
/// ms).
pub async fn claim<C: ConnectionTrait>(
    db: &C,
    now: i64,
    limit: u64,
    lease_until: i64,
) -> Result<Vec<MediaJob>, DbErr> {
    let due = nft_media::Entity::find()
        .filter(M::NextAttemptAt.lte(now))
        .order_by_asc(M::NextAttemptAt)
        .limit(limit)
        .all(db)
        .await?;
    let mut claimed = Vec::with_capacity(due.len());
    for row in due {
        let r = nft_media::Entity::update_many()
            .col_expr(M::NextAttemptAt, Expr::value(lease_until))
            .filter(M::UrlHash.eq(row.url_hash.clone()))
            .filter(M::NextAttemptAt.eq(row.next_attempt_at))
            .exec(db)
            .await?;
        if r.rows_affected == 1 {
            claimed.push(MediaJob {
                url_hash: row.url_hash,
                url: row.original_media_url,
                attempts: row.attempts,
            });
        }
    }
    Ok(claimed)
}

/// What an attempt learnt about the file itself.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileFacts {
    /// The sniffed MIME type.
    pub mimetype: Option<String>,
    /// `image`, `audio` or `video`.
    pub category: Option<String>,
    /// `0x` + SHA-256 of the original file.
    pub parent_hash: Option<String>,
    /// The previews' JSON, when made.
    pub previews: Option<String>,
}

/// The outcome of one attempt, as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MediaRecord<'a> {
    /// The stored status text.
    pub status: &'a str,
    /// Attempts so far, this one included.
    pub attempts: i32,
    /// When to try again (Unix ms); `None`: never.
    pub next_attempt_at: Option<i64>,
    /// Why it failed, for operators.
    pub error: Option<String>,
    /// Unix ms.
    pub updated_at: i64,
    /// What was learnt about the file; `None` keeps what an earlier attempt learnt.
    pub file: Option<FileFacts>,
}

/// Records an attempt's outcome on the row of `url_hash`.
pub async fn record<C: ConnectionTrait>(
    db: &C,
    url_hash: &str,
    record: MediaRecord<'_>,
) -> Result<(), DbErr> {
    let mut update = nft_media::Entity::update_many()
        .col_expr(M::Status, Expr::value(record.status))
        .col_expr(M::Attempts, Expr::value(record.attempts))
        .col_expr(M::NextAttemptAt, Expr::value(record.next_attempt_at))
        .col_expr(M::Error, Expr::value(record.error))
        .col_expr(M::UpdatedAt, Expr::value(record.updated_at));
    if let Some(file) = record.file {
        update = update
            .col_expr(M::Mimetype, Expr::value(file.mimetype))
            .col_expr(M::Category, Expr::value(file.category))
            .col_expr(M::ParentHash, Expr::value(file.parent_hash))
            .col_expr(M::Previews, Expr::value(file.previews));
    }
    update.filter(M::UrlHash.eq(url_hash)).exec(db).await?;
    Ok(())
}

/// Queues these `(url_hash, url)`s, due at `now`, with the status `status` (`processing`),
/// unless queued already: concurrent first requests queue a URL once (the first insert wins).
pub async fn enqueue_missing<C: ConnectionTrait>(
    db: &C,
    urls: Vec<(String, String)>,
    status: &str,
    now: i64,
) -> Result<(), DbErr> {
    if urls.is_empty() {
        return Ok(());
    }
    let rows = urls.into_iter().map(|(url_hash, url)| {
        nft_media::ActiveModel::from(nft_media::Model {
            url_hash,
            original_media_url: url,
            status: status.to_string(),
            mimetype: None,
            category: None,
            parent_hash: None,
            previews: None,
            attempts: 0,
            next_attempt_at: Some(now),
            error: None,
            updated_at: now,
        })
    });
    nft_media::Entity::insert_many(rows)
        .on_conflict(super::skip_existing([M::UrlHash]))
        .exec_without_returning(db)
        .await?;
    Ok(())
}
