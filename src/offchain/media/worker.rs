//! The media worker: claims due `nft_media` rows, fetches each original, makes its previews and
//! records the outcome (see the statuses in [`super`]).
//!
//! Claiming is a conditional update: a row is ours when we moved its `next_attempt_at` from
//! the value we read to `now + lease`; a row whose worker died is due again once the lease
//! ends. Any number of workers, in any number of processes, can run against one database.

use std::future::Future;
use std::time::Duration;

use futures_util::StreamExt;
use sea_orm::{DatabaseConnection, DbErr};

use super::preview::{self, Decoder};
use super::{content_hash, Dimensions, MediaStatus, MediaStore, PreviewSize, StoredPreviews};
use crate::offchain::fetch::{FetchError, Fetcher};
use crate::offchain::OffchainConfig;
use crate::store::media_queue::{self, FileFacts, MediaJob, MediaRecord};
use crate::store::now_ms;

/// First retry delay after a transient failure; it doubles with each failure.
pub const FIRST_RETRY: Duration = Duration::from_secs(60);
/// The longest retry delay.
pub const MAX_RETRY: Duration = Duration::from_secs(6 * 3600);

/// The delay before the next attempt after `failures` transient failures in a row (≥ 1).
pub fn backoff(failures: i32) -> Duration {
    let doublings = failures.saturating_sub(1).clamp(0, 20) as u32;
    FIRST_RETRY.saturating_mul(1u32 << doublings).min(MAX_RETRY)
}

/// What became of one attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Outcome {
    status: MediaStatus,
    mimetype: Option<String>,
    category: Option<String>,
    parent_hash: Option<String>,
    previews: Option<StoredPreviews>,
    error: Option<String>,
}

impl Outcome {
    fn failed(status: MediaStatus, error: impl ToString) -> Self {
        Self {
            status,
            mimetype: None,
            category: None,
            parent_hash: None,
            previews: None,
            error: Some(error.to_string()),
        }
    }
}

/// The media worker. Cheap to clone.
#[derive(Clone)]
pub struct MediaWorker {
    db: DatabaseConnection,
    fetcher: Fetcher,
    store: MediaStore,
    config: OffchainConfig,
}

impl MediaWorker {
    /// A worker storing previews under `config.media_dir`.
    pub fn new(db: DatabaseConnection, fetcher: Fetcher, config: OffchainConfig) -> Self {
        Self {
            store: MediaStore::new(config.media_dir.clone()),
            db,
            fetcher,
            config,
        }
    }

    /// How long a claim holds: a fetch, then rendering and storing.
    fn lease(&self) -> Duration {
        self.config.timeout.saturating_mul(2) + Duration::from_secs(60)
    }

    fn concurrency(&self) -> usize {
        self.config.concurrency.max(1)
    }

    /// Works until `shutdown` completes: a batch at a time, pausing `poll_interval` when there
    /// is nothing due. A database failure is logged and retried after the pause.
    pub async fn run(self, shutdown: impl Future<Output = ()>) {
        tokio::pin!(shutdown);
        tracing::info!(dir = %self.store.dir().display(), "media worker started");
        loop {
            let busy = tokio::select! {
                _ = &mut shutdown => break,
                r = self.run_once() => match r {
                    Ok(n) => n > 0,
                    Err(e) => {
                        tracing::warn!(error = %e, "media worker: database error; retrying");
                        false
                    }
                },
            };
            if !busy {
                tokio::select! {
                    _ = &mut shutdown => break,
                    _ = tokio::time::sleep(self.config.poll_interval) => {}
                }
            }
        }
        tracing::info!("media worker stopped");
    }

    /// Claims one batch of due rows and processes it; returns how many were processed.
    pub async fn run_once(&self) -> Result<usize, DbErr> {
        let claimed = self.claim().await?;
        let n = claimed.len();
        let mut results =
            futures_util::stream::iter(claimed.into_iter().map(|row| self.process(row)))
                .buffer_unordered(self.concurrency());
        while let Some(r) = results.next().await {
            r?;
        }
        Ok(n)
    }

    /// Claims up to twice the concurrency of due rows, oldest due first.
    async fn claim(&self) -> Result<Vec<MediaJob>, DbErr> {
        let now = now_ms();
        let until = now + self.lease().as_millis() as i64;
        media_queue::claim(&self.db, now, (self.concurrency() * 2) as u64, until).await
    }

    /// Fetches, renders and records one row.
    async fn process(&self, row: MediaJob) -> Result<(), DbErr> {
        let outcome = self.attempt(&row).await;
        metrics::counter!("tokenql_media_processed_total", "status" => outcome.status.as_str())
            .increment(1);
        let now = now_ms();
        let attempts = row.attempts.saturating_add(1);
        let next = (outcome.status == MediaStatus::TemporarilyUnavailable)
            .then(|| now + backoff(attempts).as_millis() as i64);
        match &outcome.error {
            Some(e) if outcome.status == MediaStatus::TemporarilyUnavailable => {
                tracing::info!(url = %row.url, error = %e, attempts, "media fetch failed; will retry")
            }
            Some(e) => {
                tracing::debug!(url = %row.url, status = outcome.status.as_str(), error = %e, "no media previews")
            }
            None => {}
        }
        let previews = outcome
            .previews
            .map(|p| serde_json::to_string(&p))
            .transpose()
            .map_err(|e| DbErr::Custom(format!("previews JSON: {e}")))?;
        // A transient failure keeps what an earlier attempt learnt about the file.
        let file = (outcome.status != MediaStatus::TemporarilyUnavailable).then_some(FileFacts {
            mimetype: outcome.mimetype,
            category: outcome.category,
            parent_hash: outcome.parent_hash,
            previews,
        });
        let record = MediaRecord {
            status: outcome.status.as_str(),
            attempts,
            next_attempt_at: next,
            error: outcome.error,
            updated_at: now,
            file,
        };
        media_queue::record(&self.db, &row.url_hash, record).await
    }

    async fn attempt(&self, row: &MediaJob) -> Outcome {
        let fetched = match self
            .fetcher
            .get(&row.url, self.config.max_media_bytes)
            .await
        {
            Ok(f) => f,
            Err(e) => {
                let status = match &e {
                    FetchError::InvalidUrl(_) => MediaStatus::InvalidUrl,
                    FetchError::NotFound(_) | FetchError::Redirects => MediaStatus::HostUnavailable,
                    FetchError::TooLarge(_) => MediaStatus::UnsupportedMedia,
                    FetchError::Unavailable(_) => MediaStatus::TemporarilyUnavailable,
                };
                return Outcome::failed(status, e);
            }
        };
        let sniffed = preview::sniff(&fetched.bytes, fetched.content_type.as_deref());
        let mut outcome = Outcome {
            status: MediaStatus::UnsupportedMedia,
            mimetype: sniffed.mimetype.clone(),
            category: sniffed.category.map(str::to_string),
            parent_hash: Some(content_hash(&fetched.bytes)),
            previews: None,
            error: None,
        };
        if sniffed.decoder == Decoder::None {
            outcome.error = Some(format!(
                "not a supported image ({})",
                sniffed.mimetype.as_deref().unwrap_or("unknown type")
            ));
            return outcome;
        }
        let decoder = sniffed.decoder;
        let bytes = fetched.bytes;
        let rendered = tokio::task::spawn_blocking(move || preview::render(&bytes, decoder)).await;
        let previews = match rendered {
            Ok(Ok(p)) => p,
            Ok(Err(e)) => {
                outcome.error = Some(e.to_string());
                return outcome;
            }
            Err(e) => {
                tracing::error!(url = %row.url, error = %e, "preview rendering panicked");
                outcome.error = Some("rendering failed".into());
                return outcome;
            }
        };
        let mut dims = [Dimensions {
            width: 0,
            height: 0,
        }; 3];
        for p in &previews {
            if let Err(e) = self.store.put(&row.url_hash, p.size, &p.png).await {
                // Our fault (disk full, permissions): try again later.
                tracing::error!(error = %e, dir = %self.store.dir().display(), "cannot store a preview");
                return Outcome::failed(MediaStatus::TemporarilyUnavailable, format!("store: {e}"));
            }
            dims[p.size as usize] = p.dimensions;
        }
        outcome.status = MediaStatus::Success;
        outcome.previews = Some(StoredPreviews {
            low: dims[PreviewSize::Low as usize],
            medium: dims[PreviewSize::Medium as usize],
            high: dims[PreviewSize::High as usize],
        });
        outcome
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_from_a_minute_to_six_hours() {
        assert_eq!(backoff(1), Duration::from_secs(60));
        assert_eq!(backoff(2), Duration::from_secs(120));
        assert_eq!(backoff(4), Duration::from_secs(480));
        assert_eq!(backoff(9), Duration::from_secs(256 * 60));
        assert_eq!(backoff(10), Duration::from_secs(6 * 3600));
        assert_eq!(backoff(i32::MAX), Duration::from_secs(6 * 3600));
        assert_eq!(backoff(0), Duration::from_secs(60));
    }
}
