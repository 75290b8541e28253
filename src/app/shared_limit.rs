//! Rate limits shared by every API process: one token bucket per key in Redis
//! (`serve --rate-limit-store redis://…`), so four processes behind a load balancer give a key
//! its limit once, not four times.
//!
//! The bucket is the same as the in-process one ([`super::rate_limit`]): up to `burst` tokens,
//! refilled at `per_sec` a second, one per request. It is updated by one Lua script, atomically
//! on the Redis server and by the Redis server's clock (`TIME`), so processes on machines whose
//! clocks differ still agree. Tokens are counted in thousandths; an idle bucket expires once it
//! would be full again. Keys are `PREFIX:rl:KEY_ID` (`--rate-limit-prefix`).
//!
//! When Redis does not answer within its time limit (`--rate-limit-store-timeout-ms`), the request is limited by the process's
//! own bucket instead ([`super::Ops::check_rate`]): the server keeps serving, says so once in
//! the log, and counts it in `tokenql_rate_limit_store_fallbacks_total`
//! (`tokenql_rate_limit_store_up` is 0 until Redis answers again).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::rate_limit::RateLimit;
use super::redis::{Redis, RedisError, RedisUrl, Reply};

/// How long a request waits for Redis, by default, before falling back to the local bucket.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_millis(250);

/// KEYS[1] the bucket; ARGV[1] capacity (thousandths), ARGV[2] tokens per second. Returns 0
/// when a token was taken, else the milliseconds until one is back.
const SCRIPT: &str = r#"
local cap = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local b = redis.call('HMGET', KEYS[1], 'u', 't')
local units = tonumber(b[1]) or cap
local ts = tonumber(b[2]) or now
if now > ts then
  units = math.min(cap, units + (now - ts) * rate)
  ts = now
end
if units > cap then units = cap end
local wait = 0
if units >= 1000 then
  units = units - 1000
else
  wait = math.ceil((1000 - units) / rate)
end
redis.call('HSET', KEYS[1], 'u', units, 't', ts)
redis.call('PEXPIRE', KEYS[1], math.ceil(cap / rate) + 1000)
return wait
"#;

/// The shared buckets, and whether Redis answered last time.
#[derive(Debug)]
pub struct SharedLimit {
    redis: Redis,
    prefix: String,
    down: AtomicBool,
}

impl SharedLimit {
    /// Buckets in the Redis server at `url`, under `prefix`; a request waits up to `timeout`
    /// for it.
    pub fn new(url: RedisUrl, prefix: &str, timeout: Duration) -> Self {
        crate::telemetry::metrics::rate_store_up(true);
        Self {
            redis: Redis::new(url, timeout),
            prefix: if prefix.is_empty() { "tokenql" } else { prefix }.to_string(),
            down: AtomicBool::new(false),
        }
    }

    /// Takes a token from the key's shared bucket: `Ok(Ok(()))`, or `Ok(Err(wait))` when it is
    /// empty; `Err` when Redis is unavailable.
    pub async fn check(
        &self,
        key_id: i32,
        limit: RateLimit,
    ) -> Result<Result<(), Duration>, RedisError> {
        let key = format!("{}:rl:{key_id}", self.prefix);
        let cap = (u64::from(limit.burst()) * 1000).to_string();
        let rate = limit.per_sec().to_string();
        let reply = self
            .redis
            .command(&[
                b"EVAL",
                SCRIPT.as_bytes(),
                b"1",
                key.as_bytes(),
                cap.as_bytes(),
                rate.as_bytes(),
            ])
            .await;
        self.note(&reply);
        match reply? {
            Reply::Int(0) => Ok(Ok(())),
            Reply::Int(ms) if ms > 0 => Ok(Err(Duration::from_millis(ms as u64))),
            other => Err(RedisError::Protocol(format!("unexpected reply {other:?}"))),
        }
    }

    /// Logs and records a change between answering and not answering, once per episode.
    fn note(&self, reply: &Result<Reply, RedisError>) {
        match reply {
            Ok(_) => {
                if self.down.swap(false, Ordering::Relaxed) {
                    tracing::info!("the shared rate-limit store answers again");
                    crate::telemetry::metrics::rate_store_up(true);
                }
            }
            Err(e) => {
                crate::telemetry::metrics::rate_store_fallback();
                if !self.down.swap(true, Ordering::Relaxed) {
                    tracing::warn!(error = %e, "the shared rate-limit store is unavailable; limiting with this process's own buckets");
                    crate::telemetry::metrics::rate_store_up(false);
                }
            }
        }
    }
}
