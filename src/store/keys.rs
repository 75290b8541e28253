//! The `api_keys` table: keys are stored by the SHA-256 of their secret, with a short prefix
//! for listing. Generating secrets, hashing them and checking rate ranges is
//! [`crate::keys`]'s work; this module only reads and writes the rows.

use sea_orm::sea_query::{Expr, SimpleExpr};
use sea_orm::{
    ActiveModelTrait, ActiveValue::Set, ColumnTrait, ConnectionTrait, DbErr, EntityTrait,
    QueryFilter, QueryOrder,
};

use super::now_ms;
use crate::entity::api_key;

/// A stored key, without its secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredKey {
    /// The key's id (what `tokenql keys` commands may name it by).
    pub id: i32,
    /// The name given when it was created.
    pub name: String,
    /// The first characters of the secret, for listing.
    pub prefix: String,
    /// Unix milliseconds.
    pub created_at: i64,
    /// Unix milliseconds; `None` while the key is active.
    pub revoked_at: Option<i64>,
    /// Requests per second; `Some(0)`: unlimited; `None`: the server's default.
    pub rate_per_sec: Option<u32>,
    /// The bucket's size; `None`: the server's default.
    pub rate_burst: Option<u32>,
}

impl From<api_key::Model> for StoredKey {
    fn from(m: api_key::Model) -> Self {
        StoredKey {
            id: m.id,
            name: m.name,
            prefix: m.key_prefix,
            created_at: m.created_at,
            revoked_at: m.revoked_at,
            rate_per_sec: from_column(m.rate_limit_per_sec),
            rate_burst: from_column(m.rate_limit_burst),
        }
    }
}

/// A key to store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewKey<'a> {
    /// A name, already checked (1 to 255 characters).
    pub name: &'a str,
    /// The SHA-256 of the secret, lowercase hex.
    pub hash: &'a str,
    /// The first characters of the secret, for listing.
    pub prefix: &'a str,
    /// See [`StoredKey::rate_per_sec`].
    pub rate_per_sec: Option<u32>,
    /// See [`StoredKey::rate_burst`].
    pub rate_burst: Option<u32>,
}

/// Which keys a command names: one id, or every key of a name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyTarget<'a> {
    /// The key with this id.
    Id(i32),
    /// Every key with this name.
    Name(&'a str),
}

impl KeyTarget<'_> {
    fn condition(self) -> SimpleExpr {
        match self {
            KeyTarget::Id(id) => api_key::Column::Id.eq(id),
            KeyTarget::Name(name) => api_key::Column::Name.eq(name),
        }
    }
}

/// A stored column (never negative: callers check the ranges before writing).
fn from_column(v: Option<i32>) -> Option<u32> {
    v.and_then(|v| u32::try_from(v).ok())
}

fn to_column(v: Option<u32>) -> Option<i32> {
    v.and_then(|v| i32::try_from(v).ok())
}

/// Stores a new, active key created now.
pub async fn insert<C: ConnectionTrait>(db: &C, key: NewKey<'_>) -> Result<StoredKey, DbErr> {
    let model = api_key::ActiveModel {
        name: Set(key.name.to_string()),
        key_hash: Set(key.hash.to_string()),
        key_prefix: Set(key.prefix.to_string()),
        created_at: Set(now_ms()),
        revoked_at: Set(None),
        rate_limit_per_sec: Set(to_column(key.rate_per_sec)),
        rate_limit_burst: Set(to_column(key.rate_burst)),
        ..Default::default()
    }
    .insert(db)
    .await?;
    Ok(model.into())
}

/// All keys, oldest first.
pub async fn list<C: ConnectionTrait>(db: &C) -> Result<Vec<StoredKey>, DbErr> {
    Ok(api_key::Entity::find()
        .order_by_asc(api_key::Column::Id)
        .all(db)
        .await?
        .into_iter()
        .map(StoredKey::from)
        .collect())
}

/// Revokes the active keys `target` names, now. Returns how many were revoked.
pub async fn revoke<C: ConnectionTrait>(db: &C, target: KeyTarget<'_>) -> Result<u64, DbErr> {
    let r = api_key::Entity::update_many()
        .col_expr(api_key::Column::RevokedAt, Expr::value(now_ms()))
        .filter(target.condition())
        .filter(api_key::Column::RevokedAt.is_null())
        .exec(db)
        .await?;
    Ok(r.rows_affected)
}

/// Sets the rate limit of the active keys `target` names. Returns how many changed.
pub async fn set_rate<C: ConnectionTrait>(
    db: &C,
    target: KeyTarget<'_>,
    per_sec: Option<u32>,
    burst: Option<u32>,
) -> Result<u64, DbErr> {
    let r = api_key::Entity::update_many()
        .col_expr(
            api_key::Column::RateLimitPerSec,
            Expr::value(to_column(per_sec)),
        )
        .col_expr(
            api_key::Column::RateLimitBurst,
            Expr::value(to_column(burst)),
        )
        .filter(target.condition())
        .filter(api_key::Column::RevokedAt.is_null())
        .exec(db)
        .await?;
    Ok(r.rows_affected)
}

/// The active key whose secret has this SHA-256 (lowercase hex), if any.
pub async fn active_by_hash<C: ConnectionTrait>(
    db: &C,
    hash: &str,
) -> Result<Option<StoredKey>, DbErr> {
    Ok(api_key::Entity::find()
        .filter(api_key::Column::KeyHash.eq(hash))
        .filter(api_key::Column::RevokedAt.is_null())
        .one(db)
        .await?
        .map(StoredKey::from))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_columns_round_trip_and_refuse_negatives() {
        assert_eq!(from_column(to_column(Some(25))), Some(25));
        assert_eq!(to_column(None), None);
        assert_eq!(from_column(Some(-1)), None);
        assert_eq!(to_column(Some(u32::MAX)), None);
    }
}
