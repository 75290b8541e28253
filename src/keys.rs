//! API keys. A key is `tq_` followed by 43 base64url characters (32 random bytes); only its
//! SHA-256 is stored, with an 8-character prefix for listing. `tokenql keys create` prints it once.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use sea_orm::{
    ActiveModelTrait, ActiveValue::Set, ColumnTrait, ConnectionTrait, DbErr, EntityTrait,
    QueryFilter, QueryOrder,
};
use sha2::{Digest, Sha256};

use crate::entity::api_key;
use crate::store::now_ms;

/// A stored key, without its secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyInfo {
    pub id: i32,
    pub name: String,
    pub prefix: String,
    /// Unix milliseconds.
    pub created_at: i64,
    pub revoked_at: Option<i64>,
}

impl From<api_key::Model> for KeyInfo {
    fn from(m: api_key::Model) -> Self {
        KeyInfo {
            id: m.id,
            name: m.name,
            prefix: m.key_prefix,
            created_at: m.created_at,
            revoked_at: m.revoked_at,
        }
    }
}

fn hash(secret: &str) -> String {
    Sha256::digest(secret.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Creates a key; returns it with its secret, which is not stored and cannot be shown again.
pub async fn create<C: ConnectionTrait>(db: &C, name: &str) -> Result<(KeyInfo, String), DbErr> {
    let name = name.trim();
    if name.is_empty() || name.len() > 255 {
        return Err(DbErr::Custom(
            "a key name must have 1 to 255 characters".into(),
        ));
    }
    let mut raw = [0u8; 32];
    getrandom::fill(&mut raw).map_err(|e| DbErr::Custom(format!("no randomness: {e}")))?;
    let secret = format!("tq_{}", URL_SAFE_NO_PAD.encode(raw));
    let model = api_key::ActiveModel {
        name: Set(name.to_string()),
        key_hash: Set(hash(&secret)),
        key_prefix: Set(secret[..11].to_string()),
        created_at: Set(now_ms()),
        revoked_at: Set(None),
        ..Default::default()
    }
    .insert(db)
    .await?;
    Ok((model.into(), secret))
}

/// All keys, oldest first.
pub async fn list<C: ConnectionTrait>(db: &C) -> Result<Vec<KeyInfo>, DbErr> {
    Ok(api_key::Entity::find()
        .order_by_asc(api_key::Column::Id)
        .all(db)
        .await?
        .into_iter()
        .map(KeyInfo::from)
        .collect())
}

/// Revokes the key with this id or name. Returns how many keys were revoked.
pub async fn revoke<C: ConnectionTrait>(db: &C, id_or_name: &str) -> Result<u64, DbErr> {
    let target = match id_or_name.parse::<i32>() {
        Ok(id) => api_key::Column::Id.eq(id),
        Err(_) => api_key::Column::Name.eq(id_or_name),
    };
    let r = api_key::Entity::update_many()
        .col_expr(
            api_key::Column::RevokedAt,
            sea_orm::sea_query::Expr::value(now_ms()),
        )
        .filter(target)
        .filter(api_key::Column::RevokedAt.is_null())
        .exec(db)
        .await?;
    Ok(r.rows_affected)
}

/// The active key matching a presented secret, if any.
pub async fn verify<C: ConnectionTrait>(db: &C, presented: &str) -> Result<Option<KeyInfo>, DbErr> {
    let presented = presented.trim();
    if presented.is_empty() || presented.len() > 200 {
        return Ok(None);
    }
    Ok(api_key::Entity::find()
        .filter(api_key::Column::KeyHash.eq(hash(presented)))
        .filter(api_key::Column::RevokedAt.is_null())
        .one(db)
        .await?
        .map(KeyInfo::from))
}
