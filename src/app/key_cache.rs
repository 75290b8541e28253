//! A short-lived cache of verified API keys, so that a busy client does not cost one SQL
//! lookup per request.
//!
//! - Only keys found active are cached, by the SHA-256 of the secret (never the secret), for
//!   `ttl` (`tokenql serve --key-cache-ttl`, default 5 s; 0 turns the cache off, which is what
//!   [`crate::AppState::new`] does).
//! - **Revocation and rate-limit changes take effect within the TTL**: a server may go on
//!   accepting a revoked key, with its old limit, until its cached entry expires. Unknown keys
//!   are never cached, so a new key works at once.
//! - At most [`MAX_ENTRIES`] keys are held; past that, `moka` evicts the least useful ones
//!   (TinyLFU: the rarely used and the least recently used go first).

use std::time::Duration;

use moka::sync::Cache;
use sea_orm::{ConnectionTrait, DbErr};

use crate::keys::{self, KeyInfo};

/// The most keys held at once.
pub const MAX_ENTRIES: u64 = 10_000;

/// See the module documentation.
#[derive(Debug)]
pub struct KeyCache {
    ttl: Duration,
    /// Keyed by the secret's SHA-256; `None` when the TTL is zero.
    entries: Option<Cache<String, KeyInfo>>,
}

impl KeyCache {
    /// A cache keeping verified keys for `ttl` (zero: no caching).
    pub fn new(ttl: Duration) -> Self {
        let entries = (!ttl.is_zero()).then(|| {
            Cache::builder()
                .max_capacity(MAX_ENTRIES)
                .time_to_live(ttl)
                .build()
        });
        Self { ttl, entries }
    }

    /// How long a verified key is trusted (zero: not at all).
    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    /// The active key matching `presented`: from the cache while fresh, else from the database.
    pub async fn verify<C: ConnectionTrait>(
        &self,
        db: &C,
        presented: &str,
    ) -> Result<Option<KeyInfo>, DbErr> {
        let Some(entries) = &self.entries else {
            return keys::verify(db, presented).await;
        };
        let presented = presented.trim();
        if presented.is_empty() || presented.len() > 200 {
            return Ok(None);
        }
        let hash = keys::hash(presented);
        if let Some(info) = entries.get(&hash) {
            return Ok(Some(info));
        }
        let found = keys::verify_hash(db, &hash).await?;
        if let Some(info) = &found {
            entries.insert(hash, info.clone());
        }
        Ok(found)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(id: i32) -> KeyInfo {
        KeyInfo {
            id,
            name: format!("k{id}"),
            prefix: "tq_".into(),
            created_at: 0,
            revoked_at: None,
            rate: Default::default(),
        }
    }

    #[test]
    fn entries_expire_after_the_ttl() {
        let c = KeyCache::new(Duration::from_millis(300));
        let entries = c.entries.as_ref().expect("a cache");
        entries.insert("h".into(), info(1));
        assert_eq!(entries.get("h"), Some(info(1)));
        assert_eq!(entries.get("other"), None);
        std::thread::sleep(Duration::from_millis(400));
        assert_eq!(entries.get("h"), None);
    }

    #[test]
    fn a_zero_ttl_caches_nothing() {
        assert!(KeyCache::new(Duration::ZERO).entries.is_none());
    }

    #[test]
    fn stays_bounded() {
        let c = KeyCache::new(Duration::from_secs(5));
        let entries = c.entries.as_ref().expect("a cache");
        for i in 0..MAX_ENTRIES + 10 {
            entries.insert(format!("h{i}"), info(1));
        }
        entries.run_pending_tasks();
        let n = entries.entry_count();
        assert!(n <= MAX_ENTRIES, "{n} entries");
    }
}
