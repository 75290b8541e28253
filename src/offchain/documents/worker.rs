//! The metadata worker's loop: claim due tokens, fetch, write back.

use std::time::{Duration, Instant};

use sea_orm::DatabaseConnection;
use tokio::sync::watch;
use tokio::task::JoinSet;

use super::schedule::{FetchStatus, Schedule};
use crate::offchain::fetch::{FetchError, Fetcher};
use crate::store::now_ms;
use crate::store::token_meta::{self, ClaimedToken as Job, FetchRecord};
use crate::types::{TokenStandard, Uint256};

/// Longest `metadata_error` stored.
const ERROR_CHARS: usize = 200;
/// Progress is logged this often while busy.
const PROGRESS_EVERY: Duration = Duration::from_secs(10);

/// How one job ended.
enum Outcome {
    Fetched,
    Failed,
    /// The write-back failed (logged); the lease expires and the token is fetched again.
    Db,
}

/// The URI to fetch for a token: ERC1155 URIs have `{id}` replaced by the token id as 64
/// lowercase hex digits without `0x`, as the ERC1155 metadata spec says (the decimal
/// substitution a few contracts expect is not the standard and is not attempted). ERC721
/// URIs are used as they are.
pub fn uri_for(contract_type: TokenStandard, token_uri: &str, token_id: Uint256) -> String {
    if contract_type.is_multi_token() {
        token_uri.replace("{id}", &token_id.to_hex64())
    } else {
        token_uri.to_string()
    }
}

/// The document as stored: text that parses as a JSON object (a UTF-8 BOM and surrounding
/// whitespace dropped), or `None`.
pub fn json_object(bytes: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(bytes).ok()?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text).trim();
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(serde_json::Value::Object(_)) => Some(text.to_string()),
        _ => None,
    }
}

/// Runs the metadata worker until `stop` turns true (or its sender is dropped). Fetches in
/// flight when it stops are abandoned: their leases expire and the tokens are fetched again.
pub async fn run(
    db: DatabaseConnection,
    fetcher: Fetcher,
    schedule: Schedule,
    mut stop: watch::Receiver<bool>,
) {
    let concurrency = fetcher.config().concurrency.max(1);
    let max_bytes = fetcher.config().max_metadata_bytes;
    let poll = fetcher.config().poll_interval;
    let mut tasks: JoinSet<Outcome> = JoinSet::new();
    let mut db_failures = 0u32;
    let mut progress = Progress::new();

    tracing::info!(concurrency, max_bytes, "metadata worker started");
    loop {
        if *stop.borrow() {
            break;
        }
        // Claim more when half the slots are free (or nothing runs).
        let free = concurrency - tasks.len();
        let mut wait = poll;
        if tasks.is_empty() || free * 2 >= concurrency {
            match token_meta::claim_for_fetch(&db, free as u64, schedule.lease).await {
                Ok(jobs) => {
                    if db_failures > 0 {
                        tracing::info!("metadata worker: database reachable again");
                    }
                    db_failures = 0;
                    if jobs.len() == free {
                        wait = Duration::ZERO;
                    }
                    for job in jobs {
                        let (db, fetcher) = (db.clone(), fetcher.clone());
                        tasks.spawn(async move {
                            process(&db, &fetcher, schedule, max_bytes, job).await
                        });
                    }
                }
                Err(e) => {
                    db_failures += 1;
                    wait = Duration::from_secs(1 << db_failures.min(6));
                    if db_failures == 1 {
                        tracing::warn!(error = %e, "metadata worker: cannot claim tokens; retrying with backoff");
                    } else {
                        tracing::debug!(error = %e, attempt = db_failures, "metadata worker: still cannot claim tokens");
                    }
                }
            }
        }
        progress.maybe_log();
        if tasks.is_empty() {
            if pause(&mut stop, wait).await {
                break;
            }
            continue;
        }
        tokio::select! {
            done = tasks.join_next() => {
                if let Some(r) = done {
                    progress.count(r.ok());
                }
                // Collect whatever else finished meanwhile.
                while let Some(r) = tasks.try_join_next() {
                    progress.count(r.ok());
                }
            }
            _ = tokio::time::sleep(wait.max(Duration::from_millis(10))), if db_failures == 0 => {}
            changed = stop.changed() => {
                // A dropped sender stops the worker too.
                if changed.is_err() {
                    break;
                }
            }
        }
    }
    tasks.abort_all();
    tracing::info!("metadata worker stopped");
}

/// `true` when stopped (or the stop sender is gone) during the pause.
async fn pause(stop: &mut watch::Receiver<bool>, d: Duration) -> bool {
    if *stop.borrow() {
        return true;
    }
    tokio::select! {
        _ = tokio::time::sleep(d) => *stop.borrow(),
        changed = stop.changed() => changed.is_err() || *stop.borrow(),
    }
}

/// Fetches one token's metadata and records the outcome.
async fn process(
    db: &DatabaseConnection,
    fetcher: &Fetcher,
    schedule: Schedule,
    max_bytes: u64,
    job: Job,
) -> Outcome {
    let result = match job.token_uri.as_deref() {
        None => Err((FetchStatus::InvalidUri, "no token URI".to_string())),
        Some(uri) => {
            let uri = uri_for(job.contract_type, uri, job.token_id);
            match fetcher.get(&uri, max_bytes).await {
                Ok(f) => json_object(&f.bytes).ok_or_else(|| {
                    (
                        FetchStatus::InvalidJson,
                        "the document is not a JSON object".to_string(),
                    )
                }),
                Err(e) => Err((FetchStatus::from(&e), short(&e))),
            }
        }
    };
    let now = now_ms();
    let (record, outcome) = match result {
        Ok(document) => (
            FetchRecord::Fetched {
                status: FetchStatus::Ok.as_str(),
                document,
                at: now,
            },
            Outcome::Fetched,
        ),
        Err((status, error)) => {
            let attempts = job.attempts.saturating_add(1);
            let random = getrandom::u64().unwrap_or(0);
            let delay = schedule.next_delay(status, attempts.max(1) as u32, random);
            tracing::debug!(
                chain_id = job.chain_id, contract = %job.contract, token_id = %job.token_id,
                status = status.as_str(), %error, attempts, retry_in = ?delay,
                "metadata fetch failed"
            );
            (
                FetchRecord::Failed {
                    status: status.as_str(),
                    error,
                    attempts,
                    retry_at: now + delay.as_millis() as i64,
                },
                Outcome::Failed,
            )
        }
    };
    match token_meta::record_fetch(db, &job, record).await {
        Ok(_) => outcome,
        Err(e) => {
            tracing::warn!(chain_id = job.chain_id, contract = %job.contract, token_id = %job.token_id, error = %e, "metadata worker: cannot store a fetch result; the token will be fetched again");
            Outcome::Db
        }
    }
}

/// A failure for `metadata_error`: short, one line.
fn short(e: &FetchError) -> String {
    e.to_string()
        .replace(['\n', '\r'], " ")
        .chars()
        .take(ERROR_CHARS)
        .collect()
}

/// Counts for the progress line.
struct Progress {
    since: Instant,
    fetched: u64,
    failed: u64,
}

impl Progress {
    fn new() -> Self {
        Self {
            since: Instant::now(),
            fetched: 0,
            failed: 0,
        }
    }

    fn count(&mut self, o: Option<Outcome>) {
        match o {
            Some(Outcome::Fetched) => self.fetched += 1,
            Some(Outcome::Failed) => self.failed += 1,
            Some(Outcome::Db) | None => {}
        }
    }

    /// Logs and resets every [`PROGRESS_EVERY`], when anything happened.
    fn maybe_log(&mut self) {
        let secs = self.since.elapsed().as_secs_f64();
        if secs < PROGRESS_EVERY.as_secs_f64() {
            return;
        }
        if self.fetched + self.failed > 0 {
            let per_sec = (self.fetched + self.failed) as f64 / secs;
            tracing::info!(
                fetched = self.fetched,
                failed = self.failed,
                per_sec = format_args!("{per_sec:.1}"),
                "metadata worker progress"
            );
        }
        *self = Self::new();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erc1155_id_substitution_is_the_spec_one() {
        let token = Uint256::from_u64(314_592);
        let id = format!("{:064x}", 314_592u64);
        assert_eq!(
            uri_for(TokenStandard::Erc1155, "https://x.test/{id}.json", token),
            format!("https://x.test/{id}.json")
        );
        assert_eq!(
            uri_for(TokenStandard::Erc1155, "ipfs://Qm/{id}/{id}", token),
            format!("ipfs://Qm/{id}/{id}")
        );
        assert_eq!(
            uri_for(TokenStandard::Erc721, "https://x.test/{id}.json", token),
            "https://x.test/{id}.json"
        );
        assert_eq!(
            uri_for(TokenStandard::Erc1155, "https://x.test/7", token),
            "https://x.test/7"
        );
    }

    #[test]
    fn only_json_objects_are_stored() {
        assert_eq!(json_object(br#" {"a":1} "#).as_deref(), Some(r#"{"a":1}"#));
        assert_eq!(
            json_object("\u{feff}{\"a\":1}".as_bytes()).as_deref(),
            Some(r#"{"a":1}"#)
        );
        for bad in [
            &b"[1,2]"[..],
            b"\"text\"",
            b"null",
            b"3",
            b"{\"a\":",
            b"",
            b"\xff\xfe{}",
            b"<html></html>",
        ] {
            assert_eq!(json_object(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn errors_are_short_single_lines() {
        let e = FetchError::Unavailable(format!("a\nb{}", "x".repeat(500)));
        let s = short(&e);
        assert!(s.chars().count() == ERROR_CHARS && !s.contains('\n'));
    }
}
