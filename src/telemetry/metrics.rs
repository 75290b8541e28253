//! The Prometheus series every part of tokenql records: their names, the recorder and its
//! upkeep, and the recording helpers shared by the indexer and the API. `GET /metrics`
//! ([`crate::ops::metrics`]) renders them (no API key).
//!
//! One recorder is installed per process, the first time [`handle`] is called (building an
//! [`crate::AppState`] does), and every app of the process renders through the same handle:
//! several servers in one test process share their series. If the embedding program installed
//! another `metrics` recorder first, `/metrics` stays empty and a warning is logged.
//!
//! Series (names are the constants below; labels in brackets):
//!
//! | series | type | labels |
//! |---|---|---|
//! | [`HTTP_REQUESTS`] | counter | `method`, `route` (the matched pattern, e.g. `/api/v2/{address}/nft`; `unmatched` for 404s), `status` |
//! | [`HTTP_DURATION`] | histogram, seconds to the response head | same |
//! | [`GRAPHQL_OPERATIONS`] | counter | `type` (`query`, …, `unknown` when unparsable), `name` (operation name, `anonymous`, or `other` past [`crate::graphql::metrics::MAX_NAMES`] distinct names), `outcome` (`ok` or the lowercase `extensions.code` of the first error) |
//! | [`GRAPHQL_DURATION`] | histogram, seconds | `type`, `outcome` |
//! | [`RATE_LIMITED`] | counter | `key_id` |
//! | [`INDEXER_HEAD`], [`INDEXER_INDEXED`], [`INDEXER_LAG`] | gauges, blocks | `chain` |
//! | [`INDEXER_BLOCKS`], [`INDEXER_LOGS`], [`INDEXER_SKIPPED`] | counters | `chain` |
//! | [`HISTORY_ACTIVE`] | gauge, fetches running now | `chain` |
//! | [`HISTORY_SCOPES`] | counter, fetches finished | `chain`, `scope` (`wallet`, `contract`), `outcome` (`synced`, `failed`) |
//! | [`HISTORY_LOGS`], [`HISTORY_SKIPPED`] | counters, logs fetched / skipped as not decodable | `chain`, `scope` |
//! | [`RPC_REQUESTS`] | counter | `chain`, `method` |
//! | [`RPC_ERRORS`] | counter, every failed attempt | `chain`, `method`, `class` (`transient`, `too_large`, `permanent`) |
//! | [`DB_POOL_CONNECTIONS`], [`DB_POOL_IDLE`], [`DB_POOL_MAX`] | gauges, refreshed at each scrape | `backend` |
//! | [`INDEXER_LEADER`] | gauge, 1 while this process leads the chain, 0 while it stands by | `chain` |
//! | [`REPLICA_UP`], [`REPLICA_IN_ROTATION`] | gauges, 0/1, refreshed at each scrape | `replica` (`host:port/db`) |
//! | [`REPLICA_LAG`] | gauge, seconds behind the primary at the last check (absent while unknown) | `replica` |
//! | [`LIVE_SUBSCRIPTIONS`] | gauge, subscriptions open in this process | `chain` |
//! | [`LIVE_DELIVERED`] | counter, changes sent to subscribers | `chain`, `kind` (`added`, `confirmed`, `removed`) |
//! | [`LIVE_LATENCY`] | histogram, seconds from the feed row's commit to the change leaving the server | `chain` |
//! | [`LIVE_BEHIND`] | gauge, feed rows the slowest subscriber still has to read | `chain` |
//! | [`LIVE_ENDED`] | counter, subscriptions ended by the server | `chain`, `reason` (`gone`, `failed`) |
//! | [`WEBHOOK_DELIVERED`] | counter, webhook deliveries a receiver accepted | `chain`, `kind` (`added`, `confirmed`, `removed`) |
//! | [`WEBHOOK_LATENCY`] | histogram, seconds from the feed row's commit to the receiver's 2xx | `chain` |
//! | [`WEBHOOK_FAILURES`] | counter, failed delivery attempts | `chain` |
//! | [`WEBHOOK_BEHIND`] | gauge, change feed rows a stream still has to deliver | `stream` |
//! | [`BUILD_INFO`] | gauge, always 1 | `version` |
//!
//! Memory: every series is bounded by its labels (routes, statuses, at most
//! [`crate::graphql::metrics::MAX_NAMES`] operation names, key ids), and histogram values are
//! folded into their buckets every [`UPKEEP_EVERY`] by a thread of their own (see [`handle`]),
//! whether or not anyone scrapes `/metrics`.

use std::sync::OnceLock;
use std::time::Duration;

use metrics::{counter, describe_counter, describe_gauge, describe_histogram, gauge};
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};

pub const HTTP_REQUESTS: &str = "tokenql_http_requests_total";
pub const HTTP_DURATION: &str = "tokenql_http_request_duration_seconds";
pub const GRAPHQL_OPERATIONS: &str = "tokenql_graphql_operations_total";
pub const GRAPHQL_DURATION: &str = "tokenql_graphql_operation_duration_seconds";
pub const RATE_LIMITED: &str = "tokenql_rate_limited_requests_total";
pub const RATE_STORE_UP: &str = "tokenql_rate_limit_store_up";
pub const RATE_STORE_FALLBACKS: &str = "tokenql_rate_limit_store_fallbacks_total";
pub const INDEXER_HEAD: &str = "tokenql_indexer_head_block";
pub const INDEXER_INDEXED: &str = "tokenql_indexer_indexed_block";
pub const INDEXER_LAG: &str = "tokenql_indexer_lag_blocks";
pub const INDEXER_BLOCKS: &str = "tokenql_indexer_blocks_ingested_total";
pub const INDEXER_LOGS: &str = "tokenql_indexer_logs_ingested_total";
pub const INDEXER_SKIPPED: &str = "tokenql_indexer_logs_skipped_total";
pub const HISTORY_ACTIVE: &str = "tokenql_history_fetches_active";
pub const HISTORY_SCOPES: &str = "tokenql_history_scopes_total";
pub const HISTORY_LOGS: &str = "tokenql_history_logs_total";
/// Logs a history fetch skipped as not decodable (the follower's are [`INDEXER_SKIPPED`]).
pub const HISTORY_SKIPPED: &str = "tokenql_history_logs_skipped_total";
pub const RPC_REQUESTS: &str = "tokenql_rpc_requests_total";
pub const RPC_ERRORS: &str = "tokenql_rpc_errors_total";
pub const DB_POOL_CONNECTIONS: &str = "tokenql_db_pool_connections";
pub const DB_POOL_IDLE: &str = "tokenql_db_pool_idle_connections";
pub const DB_POOL_MAX: &str = "tokenql_db_pool_max_connections";
pub const INDEXER_LEADER: &str = "tokenql_indexer_leader";
pub const REPLICA_UP: &str = "tokenql_replica_up";
pub const REPLICA_IN_ROTATION: &str = "tokenql_replica_in_rotation";
pub const REPLICA_LAG: &str = "tokenql_replica_lag_seconds";
pub const LIVE_SUBSCRIPTIONS: &str = "tokenql_live_subscriptions";
pub const LIVE_DELIVERED: &str = "tokenql_live_changes_delivered_total";
pub const LIVE_LATENCY: &str = "tokenql_live_delivery_latency_seconds";
pub const LIVE_BEHIND: &str = "tokenql_live_rows_behind";
pub const LIVE_ENDED: &str = "tokenql_live_subscriptions_ended_total";
pub const WEBHOOK_DELIVERED: &str = "tokenql_webhook_deliveries_total";
pub const WEBHOOK_LATENCY: &str = "tokenql_webhook_delivery_latency_seconds";
pub const WEBHOOK_FAILURES: &str = "tokenql_webhook_failures_total";
pub const WEBHOOK_BEHIND: &str = "tokenql_webhook_rows_behind";
pub const BUILD_INFO: &str = "tokenql_build_info";

/// Histogram buckets, in seconds: 1 ms to 30 s.
const BUCKETS: [f64; 14] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
];

/// How often the histograms' recorded values are folded into their buckets (see
/// [`handle`]).
pub const UPKEEP_EVERY: Duration = Duration::from_secs(5);

/// The process's recorder handle, installing the recorder on first use.
///
/// The exporter keeps every value a histogram records (with its `Instant`: 24 bytes) until an
/// upkeep folds them into the buckets; only a scrape of `/metrics` did that, so a server nobody
/// scraped grew by ~30 bytes per request without end (1.8 MiB a minute at 1,000 requests/s;
/// docs/BENCHMARKS.md, "Soak"). A thread of its own now runs the upkeep every
/// [`UPKEEP_EVERY`], so what is kept is bounded by the requests of those few seconds.
pub fn handle() -> &'static PrometheusHandle {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    HANDLE.get_or_init(|| {
        let builder = PrometheusBuilder::new()
            .set_buckets(&BUCKETS)
            .unwrap_or_else(|_| PrometheusBuilder::new());
        match builder.install_recorder() {
            Ok(handle) => {
                describe();
                let upkeep = handle.clone();
                let spawned = std::thread::Builder::new()
                    .name("metrics-upkeep".into())
                    .spawn(move || loop {
                        std::thread::sleep(UPKEEP_EVERY);
                        upkeep.run_upkeep();
                    });
                if let Err(e) = spawned {
                    tracing::warn!(error = %e, "no metrics upkeep thread: histograms are folded only when /metrics is scraped");
                }
                handle
            }
            Err(e) => {
                tracing::warn!(error = %e, "another metrics recorder is installed; /metrics will be empty");
                PrometheusBuilder::new().build_recorder().handle()
            }
        }
    })
}

fn describe() {
    describe_counter!(
        HTTP_REQUESTS,
        "HTTP requests answered, by route pattern and status."
    );
    describe_histogram!(
        HTTP_DURATION,
        metrics::Unit::Seconds,
        "Time to the response head, by route pattern and status."
    );
    describe_counter!(
        GRAPHQL_OPERATIONS,
        "GraphQL operations executed, by type, name and outcome."
    );
    describe_histogram!(
        GRAPHQL_DURATION,
        metrics::Unit::Seconds,
        "GraphQL execution time, by type and outcome."
    );
    describe_counter!(RATE_LIMITED, "Requests refused by the per-key rate limit.");
    describe_gauge!(
        RATE_STORE_UP,
        "1 while the shared rate-limit store (Redis) answers, 0 while requests fall back to local buckets."
    );
    describe_counter!(
        RATE_STORE_FALLBACKS,
        "Requests limited by the process's own bucket because the shared store did not answer."
    );
    describe_gauge!(INDEXER_HEAD, "The chain head last seen by the indexer.");
    describe_gauge!(INDEXER_INDEXED, "The last block indexed.");
    describe_gauge!(
        INDEXER_LAG,
        "Blocks between the chain head and the last indexed block."
    );
    describe_counter!(INDEXER_BLOCKS, "Blocks ingested by the follower.");
    describe_counter!(INDEXER_LOGS, "Transfer logs ingested by the follower.");
    describe_counter!(INDEXER_SKIPPED, "Logs skipped as not decodable.");
    describe_gauge!(
        HISTORY_ACTIVE,
        "History fetches (wallet or contract scopes) running now."
    );
    describe_counter!(
        HISTORY_SCOPES,
        "History fetches finished, by scope kind and outcome (synced, failed)."
    );
    describe_counter!(
        HISTORY_LOGS,
        "Logs fetched by history fetches, by scope kind."
    );
    describe_counter!(
        HISTORY_SKIPPED,
        "Logs fetched by history fetches and skipped as not decodable, by scope kind."
    );
    describe_counter!(
        RPC_REQUESTS,
        "JSON-RPC requests sent (a batch counts once)."
    );
    describe_counter!(RPC_ERRORS, "Failed JSON-RPC attempts, by failure class.");
    describe_gauge!(DB_POOL_CONNECTIONS, "Open database connections.");
    describe_gauge!(DB_POOL_IDLE, "Idle database connections.");
    describe_gauge!(DB_POOL_MAX, "The database pool's maximum size.");
    describe_gauge!(
        INDEXER_LEADER,
        "1 while this process leads the chain's indexing, 0 while it stands by."
    );
    describe_gauge!(REPLICA_UP, "1 while the read replica answers.");
    describe_gauge!(
        REPLICA_IN_ROTATION,
        "1 while API reads may go to the replica (up, and within the allowed lag)."
    );
    describe_gauge!(
        REPLICA_LAG,
        "Seconds the read replica was behind the primary at the last check."
    );
    describe_live();
    describe_gauge!(BUILD_INFO, "Always 1; the version is a label.");
    gauge!(BUILD_INFO, "version" => env!("CARGO_PKG_VERSION")).set(1.0);
}

/// The series of live changes.
fn describe_live() {
    describe_gauge!(LIVE_SUBSCRIPTIONS, "Subscriptions open in this process.");
    describe_counter!(LIVE_DELIVERED, "Changes sent to subscribers.");
    describe_histogram!(
        LIVE_LATENCY,
        "Seconds from a change feed row's commit to its change leaving the server."
    );
    describe_gauge!(
        LIVE_BEHIND,
        "Change feed rows a subscriber still had to read when it last read."
    );
    describe_counter!(LIVE_ENDED, "Subscriptions the server ended, by reason.");
    describe_counter!(
        WEBHOOK_DELIVERED,
        "Webhook deliveries a receiver accepted, by kind."
    );
    describe_histogram!(
        WEBHOOK_LATENCY,
        "Seconds from the change feed row's commit to the receiver's 2xx."
    );
    describe_counter!(WEBHOOK_FAILURES, "Failed webhook delivery attempts.");
    describe_gauge!(
        WEBHOOK_BEHIND,
        "Change feed rows a webhook stream still had to deliver when it last read."
    );
}

/// Whether this process leads `chain`'s indexing.
pub fn set_leader(chain: crate::types::Chain, leading: bool) {
    gauge!(INDEXER_LEADER, "chain" => chain.name()).set(f64::from(u8::from(leading)));
}

/// A subscription of `chain` opened (`+1.0`) or closed (`-1.0`).
pub fn live_open(chain: crate::types::Chain, delta: f64) {
    gauge!(LIVE_SUBSCRIPTIONS, "chain" => chain.name()).increment(delta);
}

/// A change of `kind` left the server, `latency` after its feed row was written.
pub fn live_delivered(chain: crate::types::Chain, kind: &'static str, latency: Duration) {
    counter!(LIVE_DELIVERED, "chain" => chain.name(), "kind" => kind).increment(1);
    metrics::histogram!(LIVE_LATENCY, "chain" => chain.name()).record(latency.as_secs_f64());
}

/// How many feed rows a subscriber of `chain` had yet to read when it last read.
pub fn live_behind(chain: crate::types::Chain, rows: i64) {
    gauge!(LIVE_BEHIND, "chain" => chain.name()).set(rows as f64);
}

/// A subscription the server ended, and why.
pub fn live_ended(chain: crate::types::Chain, reason: &'static str) {
    counter!(LIVE_ENDED, "chain" => chain.name(), "reason" => reason).increment(1);
}

/// A webhook delivery of `kind` was accepted, `latency` after its feed row was written.
pub fn webhook_delivered(chain: crate::types::Chain, kind: &'static str, latency: Duration) {
    counter!(WEBHOOK_DELIVERED, "chain" => chain.name(), "kind" => kind).increment(1);
    metrics::histogram!(WEBHOOK_LATENCY, "chain" => chain.name()).record(latency.as_secs_f64());
}

/// A webhook delivery attempt failed.
pub fn webhook_failed(chain: crate::types::Chain) {
    counter!(WEBHOOK_FAILURES, "chain" => chain.name()).increment(1);
}

/// How many feed rows stream `stream` had yet to deliver when it last read.
pub fn webhook_behind(stream: &str, rows: i64) {
    gauge!(WEBHOOK_BEHIND, "stream" => stream.to_string()).set(rows as f64);
}

/// Counts a request refused by the rate limiter.
pub fn rate_limited(key_id: i32) {
    counter!(RATE_LIMITED, "key_id" => key_id.to_string()).increment(1);
}

/// Whether the shared rate-limit store answers.
pub fn rate_store_up(up: bool) {
    gauge!(RATE_STORE_UP).set(if up { 1.0 } else { 0.0 });
}

/// Counts a request limited locally because the shared store did not answer.
pub fn rate_store_fallback() {
    counter!(RATE_STORE_FALLBACKS).increment(1);
}
