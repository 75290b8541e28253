//! Read replicas: where the reads of an API request go.
//!
//! [`Reads`] holds the primary (every write, and the reads of a process without replicas) and
//! the PostgreSQL streaming replicas given by `serve --database-read-url`. A monitor
//! ([`Reads::spawn_monitor`]) checks each replica every [`ReplicaConfig::check_every`]: it is
//! *up* when it answers, and its *lag* is how long ago the primary had written no more WAL
//! than the replica has replayed (the primary's `pg_current_wal_lsn()` is sampled at every
//! check; the replica's `pg_last_wal_replay_lsn()` is placed among the samples, rounding
//! towards more lag). A replica is *in rotation* while it is up and its lag is at most
//! [`ReplicaConfig::max_lag`]; [`Reads::pick`] spreads requests over those in rotation, round
//! robin, and falls back to the primary when none is. A request that fails on a replica marks
//! it out of rotation until its next good check ([`Reads::suspect`]).
//!
//! Rotation bounds how stale an answer can be; it does not make one complete. That is the
//! query service's part: an answer read from a replica says `SYNCED` only when the replica has
//! stored what the primary's indexer has (`query::status`).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sea_orm::{ConnectionTrait, DatabaseConnection, DbErr, Statement};

use super::dialect::Dialect;

/// When a replica leaves rotation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplicaConfig {
    /// A replica further behind than this leaves rotation.
    pub max_lag: Duration,
    /// How often each replica is checked.
    pub check_every: Duration,
}

impl Default for ReplicaConfig {
    fn default() -> Self {
        Self {
            max_lag: Duration::from_secs(5),
            check_every: Duration::from_millis(500),
        }
    }
}

/// Where a request's reads go.
#[derive(Debug, Clone)]
pub struct ReadChoice {
    /// The connection to read from.
    pub db: DatabaseConnection,
    /// The replica's index in [`Reads`], or `None`: the primary.
    pub replica: Option<usize>,
}

/// A replica as `/readyz` and `/metrics` show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplicaStatus {
    /// `host:port/database` (no credentials).
    pub name: String,
    pub up: bool,
    /// Milliseconds behind the primary at the last check; `None`: not known yet.
    pub lag_ms: Option<u64>,
    pub in_rotation: bool,
}

struct Replica {
    name: String,
    db: DatabaseConnection,
    up: AtomicBool,
    /// `u64::MAX`: unknown.
    lag_ms: AtomicU64,
    in_rotation: AtomicBool,
}

/// The primary and the replicas (see the module docs).
#[derive(Clone)]
pub struct Reads {
    primary: DatabaseConnection,
    replicas: Arc<[Replica]>,
    next: Arc<AtomicUsize>,
    config: ReplicaConfig,
    /// The primary's WAL positions at the last checks, oldest first.
    samples: Arc<Mutex<VecDeque<(Instant, u64)>>>,
}

impl std::fmt::Debug for Reads {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reads")
            .field("replicas", &self.statuses())
            .field("config", &self.config)
            .finish()
    }
}

/// Samples kept of the primary's WAL position: lags beyond this many checks are all "at least
/// this long", which is far beyond any sensible `max_lag`.
const SAMPLES: usize = 2_400;

/// Errors configuring replicas.
#[derive(Debug, thiserror::Error)]
pub enum ReplicaError {
    #[error("read replicas need PostgreSQL (the primary is {0:?})")]
    NotPostgres(Dialect),
    #[error("read replica {name}: {source}")]
    Connect { name: String, source: DbErr },
}

impl Reads {
    /// Reads that all go to the primary.
    pub fn primary_only(primary: DatabaseConnection) -> Self {
        Self::with_replicas(primary, Vec::new(), ReplicaConfig::default())
    }

    fn with_replicas(
        primary: DatabaseConnection,
        replicas: Vec<Replica>,
        config: ReplicaConfig,
    ) -> Self {
        Self {
            primary,
            replicas: replicas.into(),
            next: Arc::new(AtomicUsize::new(0)),
            config,
            samples: Arc::new(Mutex::new(VecDeque::new())),
        }
    }

    /// Connects to the replicas at `urls` (pools of `pool` connections each). A replica that
    /// does not answer yet is kept, out of rotation, for the monitor to bring in.
    pub async fn connect(
        primary: DatabaseConnection,
        urls: &[String],
        pool: u32,
        config: ReplicaConfig,
    ) -> Result<Self, ReplicaError> {
        if !urls.is_empty() && !Dialect::of(&primary).has_replicas() {
            return Err(ReplicaError::NotPostgres(Dialect::of(&primary)));
        }
        let mut replicas = Vec::with_capacity(urls.len());
        for url in urls {
            let name = redact(url);
            let db = crate::store::database::connect_lazy(url, pool).map_err(|source| {
                ReplicaError::Connect {
                    name: name.clone(),
                    source,
                }
            })?;
            replicas.push(Replica {
                name,
                db,
                up: AtomicBool::new(false),
                lag_ms: AtomicU64::new(u64::MAX),
                in_rotation: AtomicBool::new(false),
            });
        }
        Ok(Self::with_replicas(primary, replicas, config))
    }

    /// The primary: every write goes here.
    pub fn primary(&self) -> &DatabaseConnection {
        &self.primary
    }

    /// Whether any replica is configured.
    pub fn has_replicas(&self) -> bool {
        !self.replicas.is_empty()
    }

    /// Where the next request's reads go: a replica in rotation (round robin), else the
    /// primary.
    pub fn pick(&self) -> ReadChoice {
        let n = self.replicas.len();
        let first = self.next.fetch_add(1, Ordering::Relaxed);
        for i in 0..n {
            let idx = (first + i) % n;
            let r = &self.replicas[idx];
            if r.in_rotation.load(Ordering::Relaxed) {
                return ReadChoice {
                    db: r.db.clone(),
                    replica: Some(idx),
                };
            }
        }
        ReadChoice {
            db: self.primary.clone(),
            replica: None,
        }
    }

    /// A request failed on replica `idx`: out of rotation until its next good check.
    pub fn suspect(&self, idx: usize) {
        if let Some(r) = self.replicas.get(idx) {
            if r.in_rotation.swap(false, Ordering::Relaxed) {
                tracing::warn!(replica = %r.name, "a read failed on the replica; out of rotation until it checks out");
            }
            r.up.store(false, Ordering::Relaxed);
        }
    }

    /// Every replica's state.
    pub fn statuses(&self) -> Vec<ReplicaStatus> {
        self.replicas
            .iter()
            .map(|r| ReplicaStatus {
                name: r.name.clone(),
                up: r.up.load(Ordering::Relaxed),
                lag_ms: Some(r.lag_ms.load(Ordering::Relaxed)).filter(|l| *l != u64::MAX),
                in_rotation: r.in_rotation.load(Ordering::Relaxed),
            })
            .collect()
    }

    /// Checks the replicas every `check_every` until `stop`.
    pub fn spawn_monitor(
        &self,
        mut stop: tokio::sync::watch::Receiver<bool>,
    ) -> Option<tokio::task::JoinHandle<()>> {
        if !self.has_replicas() {
            return None;
        }
        let reads = self.clone();
        Some(tokio::spawn(async move {
            loop {
                reads.check().await;
                tokio::select! {
                    _ = tokio::time::sleep(reads.config.check_every) => {}
                    _ = stop.wait_for(|s| *s) => return,
                }
            }
        }))
    }

    /// One round of checks: the primary's WAL position, then every replica's.
    pub async fn check(&self) {
        let timeout = self.config.check_every.max(Duration::from_secs(1));
        match tokio::time::timeout(timeout, lsn(&self.primary, PRIMARY_LSN)).await {
            Ok(Ok(Some(at))) => self.sample(at),
            Ok(Ok(None)) => {}
            Ok(Err(e)) => tracing::debug!(error = %e, "replica check: the primary does not answer"),
            Err(_) => tracing::debug!("replica check: the primary did not answer in time"),
        }
        for r in self.replicas.iter() {
            let replayed = tokio::time::timeout(timeout, lsn(&r.db, REPLAY_LSN)).await;
            let lag = match replayed {
                Ok(Ok(Some(at))) => Some(self.lag_of(at)),
                // Not in recovery: a primary of its own, never behind.
                Ok(Ok(None)) => Some(Duration::ZERO),
                Ok(Err(_)) | Err(_) => None,
            };
            self.record(r, lag);
        }
    }

    fn record(&self, r: &Replica, lag: Option<Duration>) {
        let up = lag.is_some();
        let lag_ms = lag.map_or(u64::MAX, |l| l.as_millis() as u64);
        let fit = up && lag.is_some_and(|l| l <= self.config.max_lag);
        let was = r.in_rotation.swap(fit, Ordering::Relaxed);
        r.up.store(up, Ordering::Relaxed);
        r.lag_ms.store(lag_ms, Ordering::Relaxed);
        match (was, fit) {
            (false, true) => tracing::info!(replica = %r.name, lag_ms, "replica in rotation"),
            (true, false) if up => {
                tracing::warn!(replica = %r.name, lag_ms, "replica behind; out of rotation")
            }
            (true, false) => tracing::warn!(replica = %r.name, "replica down; out of rotation"),
            _ => {}
        }
    }

    fn sample(&self, at: u64) {
        let mut s = self.samples.lock().unwrap_or_else(|p| p.into_inner());
        s.push_back((Instant::now(), at));
        while s.len() > SAMPLES {
            s.pop_front();
        }
    }

    /// How far behind a replica that has replayed up to `replayed` is.
    fn lag_of(&self, replayed: u64) -> Duration {
        let s = self.samples.lock().unwrap_or_else(|p| p.into_inner());
        lag_among(&s, replayed, Instant::now())
    }
}

/// The time since the last sample the replica had fully replayed; when it is behind every
/// sample, the time since the oldest (at least that long). No sample yet: zero is not known,
/// so "behind by the whole check interval" is not claimed either: the replica is taken as
/// current only when it has replayed the latest sample.
fn lag_among(samples: &VecDeque<(Instant, u64)>, replayed: u64, now: Instant) -> Duration {
    match samples.back() {
        None => Duration::ZERO,
        Some(&(_, latest)) if replayed >= latest => Duration::ZERO,
        Some(_) => {
            let caught = samples.iter().rev().find(|(_, at)| *at <= replayed);
            let since = caught.or(samples.front()).map_or(now, |(t, _)| *t);
            now.saturating_duration_since(since)
        }
    }
}

const PRIMARY_LSN: &str = "SELECT pg_current_wal_lsn()::text AS lsn";
const REPLAY_LSN: &str = "SELECT pg_last_wal_replay_lsn()::text AS lsn";

/// A WAL position (`X/Y`) read with `sql`; `None` when the server returns none.
async fn lsn(db: &DatabaseConnection, sql: &str) -> Result<Option<u64>, DbErr> {
    let row = db
        .query_one_raw(Statement::from_string(Dialect::Postgres.backend(), sql))
        .await?;
    let text: Option<String> = match row {
        Some(r) => r.try_get("", "lsn")?,
        None => None,
    };
    Ok(text.as_deref().and_then(parse_lsn))
}

/// `16/B374D848` → its 64-bit position.
fn parse_lsn(s: &str) -> Option<u64> {
    let (hi, lo) = s.split_once('/')?;
    Some((u64::from_str_radix(hi, 16).ok()? << 32) | u64::from_str_radix(lo, 16).ok()?)
}

/// `scheme://user:secret@host:port/db?opts` → `host:port/db`.
fn redact(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let rest = rest.rsplit_once('@').map_or(rest, |(_, r)| r);
    rest.split('?').next().unwrap_or(rest).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lsns_parse() {
        assert_eq!(parse_lsn("0/0"), Some(0));
        assert_eq!(parse_lsn("16/B374D848"), Some((0x16 << 32) | 0xB374_D848));
        assert_eq!(parse_lsn("nope"), None);
    }

    #[test]
    fn urls_lose_their_credentials() {
        assert_eq!(
            redact("postgres://u:pw@db.example:5433/tq?sslmode=require"),
            "db.example:5433/tq"
        );
        assert_eq!(redact("postgres://db/tq"), "db/tq");
    }

    #[test]
    fn lag_rounds_towards_more() {
        let t0 = Instant::now();
        let s: VecDeque<(Instant, u64)> = [
            (t0, 100),
            (t0 + Duration::from_secs(1), 200),
            (t0 + Duration::from_secs(2), 300),
        ]
        .into();
        let now = t0 + Duration::from_secs(3);
        assert_eq!(lag_among(&s, 300, now), Duration::ZERO);
        assert_eq!(lag_among(&s, 400, now), Duration::ZERO);
        // Replayed past 200 but not 300: missing what was written after the 200 sample.
        assert_eq!(lag_among(&s, 250, now), Duration::from_secs(2));
        assert_eq!(lag_among(&s, 200, now), Duration::from_secs(2));
        // Behind every sample: at least since the oldest.
        assert_eq!(lag_among(&s, 50, now), Duration::from_secs(3));
    }
}
