//! A short-lived cache of verified API keys, so that a busy client does not cost one SQL
//! lookup per request.
//!
//! - Only keys found active are cached, by the SHA-256 of the secret (never the secret), for
//!   `ttl` (`tokenql serve --key-cache-ttl`, default 5 s; 0 turns the cache off, which is what
//!   [`crate::AppState::new`] does).
//! - **Revocation and rate-limit changes take effect within the TTL**: a server may go on
//!   accepting a revoked key, with its old limit, until its cached entry expires. Unknown keys
//!   are never cached, so a new key works at once.
//! - At most [`MAX_ENTRIES`] keys are held; past that, expired entries are dropped, and if none
//!   are, the whole cache.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use sea_orm::{ConnectionTrait, DbErr};

use crate::keys::{self, KeyInfo};

/// The most keys held at once.
pub const MAX_ENTRIES: usize = 10_000;

/// See the module documentation.
#[derive(Debug)]
pub struct KeyCache {
    ttl: Duration,
    entries: Mutex<HashMap<String, (Instant, KeyInfo)>>,
}

impl KeyCache {
    /// A cache keeping verified keys for `ttl` (zero: no caching).
    pub fn new(ttl: Duration) -> Self {
        Self {
            ttl,
            entries: Mutex::new(HashMap::new()),
        }
    }

    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    /// The active key matching `presented`: from the cache while fresh, else from the database.
    pub async fn verify<C: ConnectionTrait>(
        &self,
        db: &C,
        presented: &str,
    ) -> Result<Option<KeyInfo>, DbErr> {
        if self.ttl.is_zero() {
            return keys::verify(db, presented).await;
        }
        let presented = presented.trim();
        if presented.is_empty() || presented.len() > 200 {
            return Ok(None);
        }
        let hash = keys::hash(presented);
        if let Some(info) = self.get(&hash, Instant::now()) {
            return Ok(Some(info));
        }
        let found = keys::verify_hash(db, &hash).await?;
        if let Some(info) = &found {
            self.insert(hash, info.clone(), Instant::now());
        }
        Ok(found)
    }

    fn get(&self, hash: &str, now: Instant) -> Option<KeyInfo> {
        let entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        entries
            .get(hash)
            .filter(|(at, _)| now.saturating_duration_since(*at) < self.ttl)
            .map(|(_, info)| info.clone())
    }

    fn insert(&self, hash: String, info: KeyInfo, now: Instant) {
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        if entries.len() >= MAX_ENTRIES && !entries.contains_key(&hash) {
            entries.retain(|_, (at, _)| now.saturating_duration_since(*at) < self.ttl);
            if entries.len() >= MAX_ENTRIES {
                entries.clear();
            }
        }
        entries.insert(hash, (now, info));
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
        let c = KeyCache::new(Duration::from_secs(5));
        let t0 = Instant::now();
        c.insert("h".into(), info(1), t0);
        assert_eq!(c.get("h", t0 + Duration::from_secs(4)), Some(info(1)));
        assert_eq!(c.get("h", t0 + Duration::from_secs(5)), None);
        assert_eq!(c.get("other", t0), None);
    }

    #[test]
    fn stays_bounded() {
        let c = KeyCache::new(Duration::from_secs(5));
        let t0 = Instant::now();
        for i in 0..MAX_ENTRIES + 10 {
            c.insert(format!("h{i}"), info(1), t0);
        }
        let n = c.entries.lock().map(|e| e.len()).unwrap_or(0);
        assert!(n <= MAX_ENTRIES, "{n} entries");
    }
}
