//! API keys. A key is `tq_` followed by 43 base64url characters (32 random bytes); only its
//! SHA-256 is stored, with an 8-character prefix for listing. `tokenql keys create` prints it once.
//!
//! A key may carry its own rate limit ([`KeyRate`]); what it leaves unset falls back to the
//! server's defaults (`tokenql serve --rate-limit/--rate-burst`). The limiter itself lives in
//! [`crate::app::rate_limit`].

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use sea_orm::{ConnectionTrait, DbErr};
use sha2::{Digest, Sha256};

use crate::store::keys::{self as stored, KeyTarget, NewKey, StoredKey};

/// A stored key, without its secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyInfo {
    pub id: i32,
    pub name: String,
    pub prefix: String,
    /// Unix milliseconds.
    pub created_at: i64,
    pub revoked_at: Option<i64>,
    /// The key's own rate limit; unset parts use the server's defaults.
    pub rate: KeyRate,
}

/// A key's own rate limit. `None` in a field means "the server's default".
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KeyRate {
    /// Requests per second, refilled continuously; `Some(0)` means unlimited.
    pub per_sec: Option<u32>,
    /// The most requests accepted at once (the bucket's size); at least 1.
    pub burst: Option<u32>,
}

impl KeyRate {
    /// Checks the ranges: a rate up to 1,000,000 per second, a burst from 1 to 1,000,000.
    pub fn validate(&self) -> Result<(), DbErr> {
        const MAX: u32 = 1_000_000;
        if self.per_sec.is_some_and(|r| r > MAX) {
            return Err(DbErr::Custom(format!(
                "a rate limit must be 0 (unlimited) to {MAX} requests per second"
            )));
        }
        if self.burst.is_some_and(|b| b == 0 || b > MAX) {
            return Err(DbErr::Custom(format!(
                "a burst must be 1 to {MAX} requests"
            )));
        }
        Ok(())
    }

    /// `"25/s burst 50"`, with `default` for what falls back to the server's default.
    pub fn describe(&self) -> String {
        let rate = match self.per_sec {
            None => "default".to_string(),
            Some(0) => "unlimited".to_string(),
            Some(r) => format!("{r}/s"),
        };
        let burst = self.burst.map_or("default".to_string(), |b| b.to_string());
        format!("{rate} burst {burst}")
    }
}

impl From<StoredKey> for KeyInfo {
    fn from(k: StoredKey) -> Self {
        KeyInfo {
            id: k.id,
            name: k.name,
            prefix: k.prefix,
            created_at: k.created_at,
            revoked_at: k.revoked_at,
            rate: KeyRate {
                per_sec: k.rate_per_sec,
                burst: k.rate_burst,
            },
        }
    }
}

/// The SHA-256 of a secret, lowercase hex: what is stored, and what caches may key on.
pub fn hash(secret: &str) -> String {
    crate::types::hex::lower(&Sha256::digest(secret.as_bytes()))
}

/// Creates a key with the server's default rate limit; returns it with its secret, which is
/// not stored and cannot be shown again.
pub async fn create<C: ConnectionTrait>(db: &C, name: &str) -> Result<(KeyInfo, String), DbErr> {
    create_with_rate(db, name, KeyRate::default()).await
}

/// Creates a key with its own rate limit (see [`create`]).
pub async fn create_with_rate<C: ConnectionTrait>(
    db: &C,
    name: &str,
    rate: KeyRate,
) -> Result<(KeyInfo, String), DbErr> {
    rate.validate()?;
    let name = name.trim();
    if name.is_empty() || name.len() > 255 {
        return Err(DbErr::Custom(
            "a key name must have 1 to 255 characters".into(),
        ));
    }
    let mut raw = [0u8; 32];
    getrandom::fill(&mut raw).map_err(|e| DbErr::Custom(format!("no randomness: {e}")))?;
    let secret = format!("tq_{}", URL_SAFE_NO_PAD.encode(raw));
    let key = stored::insert(
        db,
        NewKey {
            name,
            hash: &hash(&secret),
            prefix: &secret[..11],
            rate_per_sec: rate.per_sec,
            rate_burst: rate.burst,
        },
    )
    .await?;
    Ok((key.into(), secret))
}

/// All keys, oldest first.
pub async fn list<C: ConnectionTrait>(db: &C) -> Result<Vec<KeyInfo>, DbErr> {
    Ok(stored::list(db)
        .await?
        .into_iter()
        .map(KeyInfo::from)
        .collect())
}

/// Keys named `id_or_name`: by id when it is a number, by name otherwise.
fn target(id_or_name: &str) -> KeyTarget<'_> {
    match id_or_name.parse::<i32>() {
        Ok(id) => KeyTarget::Id(id),
        Err(_) => KeyTarget::Name(id_or_name),
    }
}

/// Revokes the key with this id or name. Returns how many keys were revoked.
///
/// A server with a key cache (`--key-cache-ttl`) may accept the key until its cached entry
/// expires.
pub async fn revoke<C: ConnectionTrait>(db: &C, id_or_name: &str) -> Result<u64, DbErr> {
    stored::revoke(db, target(id_or_name)).await
}

/// Sets the rate limit of the active key(s) with this id or name; `None` fields return to the
/// server's defaults. Returns how many keys changed. Servers apply it when their cached entry
/// of the key expires (`--key-cache-ttl`).
pub async fn set_rate<C: ConnectionTrait>(
    db: &C,
    id_or_name: &str,
    rate: KeyRate,
) -> Result<u64, DbErr> {
    rate.validate()?;
    stored::set_rate(db, target(id_or_name), rate.per_sec, rate.burst).await
}

/// The active key matching a presented secret, if any.
pub async fn verify<C: ConnectionTrait>(db: &C, presented: &str) -> Result<Option<KeyInfo>, DbErr> {
    let presented = presented.trim();
    if presented.is_empty() || presented.len() > 200 {
        return Ok(None);
    }
    verify_hash(db, &hash(presented)).await
}

/// The active key whose secret has this [`hash`], if any.
pub async fn verify_hash<C: ConnectionTrait>(db: &C, hash: &str) -> Result<Option<KeyInfo>, DbErr> {
    Ok(stored::active_by_hash(db, hash).await?.map(KeyInfo::from))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_ranges() {
        assert!(KeyRate::default().validate().is_ok());
        let ok = KeyRate {
            per_sec: Some(0),
            burst: Some(1),
        };
        assert!(ok.validate().is_ok());
        assert_eq!(ok.describe(), "unlimited burst 1");
        let zero_burst = KeyRate {
            per_sec: Some(1),
            burst: Some(0),
        };
        assert!(zero_burst.validate().is_err());
        let huge = KeyRate {
            per_sec: Some(2_000_000),
            burst: None,
        };
        assert!(huge.validate().is_err());
        assert_eq!(
            KeyRate {
                per_sec: Some(5),
                burst: None
            }
            .describe(),
            "5/s burst default"
        );
    }
}
