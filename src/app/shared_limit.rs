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
//! The client is the `redis` crate's [`ConnectionManager`]: one multiplexed connection, opened
//! on first use and reopened in the background after it fails (one attempt at a time, no
//! retry loop, so a refused connection fails at once); the script is sent by its SHA-1
//! (`EVALSHA`, loaded once per server).
//!
//! When Redis does not answer within its time limit (`--rate-limit-store-timeout-ms`), the
//! request is limited by the process's own bucket instead ([`super::Ops::check_rate`]): the
//! server keeps serving, says so once in the log, and counts it in
//! `tokenql_rate_limit_store_fallbacks_total` (`tokenql_rate_limit_store_up` is 0 until Redis
//! answers again).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{ConnectionAddr, IntoConnectionInfo, RedisConnectionInfo};
use tokio::sync::OnceCell;

use super::rate_limit::RateLimit;

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

/// Where the server is: `redis://HOST[:PORT][/DB]` (`--rate-limit-store`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedisUrl {
    /// The host name or IP address (an IPv6 address without its brackets).
    pub host: String,
    /// The TCP port (6379 unless given).
    pub port: u16,
    /// The database number (0 unless given).
    pub db: u32,
}

impl RedisUrl {
    /// Parses `redis://HOST[:PORT][/DB]` (port 6379 by default). Credentials, TLS and Unix
    /// sockets are refused.
    pub fn parse(s: &str) -> Result<Self, String> {
        let rest = s
            .strip_prefix("redis://")
            .ok_or_else(|| format!("'{s}' is not a redis:// URL"))?;
        let (hostport, db) = match rest.split_once('/') {
            Some((h, "")) => (h, 0),
            Some((h, d)) => (
                h,
                d.parse()
                    .map_err(|_| format!("'{s}': the database '{d}' is not a number"))?,
            ),
            None => (rest, 0),
        };
        if hostport.is_empty() || hostport.contains('@') {
            return Err(format!(
                "'{s}': give redis://HOST[:PORT][/DB] (credentials are not supported)"
            ));
        }
        let (host, port) = match hostport.rsplit_once(':') {
            Some((h, p)) if !h.is_empty() && p.parse::<u16>().is_ok() => (h, p.parse().ok()),
            _ => (hostport, None),
        };
        Ok(Self {
            host: host
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_string(),
            port: port.unwrap_or(6379),
            db,
        })
    }

    /// The `redis` crate's client for this server (nothing is connected yet).
    fn client(&self) -> redis::RedisResult<redis::Client> {
        let info = ConnectionAddr::Tcp(self.host.clone(), self.port)
            .into_connection_info()?
            .set_redis_settings(
                RedisConnectionInfo::default()
                    .set_db(i64::from(self.db))
                    .set_skip_set_lib_name(),
            );
        redis::Client::open(info)
    }
}

/// Why the shared store gave no verdict (the request is then limited locally).
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// Connecting, sending or the server's answer failed.
    #[error("redis: {0}")]
    Redis(#[from] redis::RedisError),
    /// No answer within the time limit.
    #[error("redis: no answer within {0:?}")]
    Timeout(Duration),
    /// The script answered something it never returns.
    #[error("redis: unexpected reply {0}")]
    Reply(i64),
}

/// The shared buckets, and whether Redis answered last time.
#[derive(Debug)]
pub struct SharedLimit {
    url: RedisUrl,
    /// Created on first use (it needs the runtime), then shared by every request.
    conn: OnceCell<ConnectionManager>,
    script: redis::Script,
    timeout: Duration,
    prefix: String,
    down: AtomicBool,
}

impl SharedLimit {
    /// Buckets in the Redis server at `url`, under `prefix`; a request waits up to `timeout`
    /// for it. Nothing is connected until the first request.
    pub fn new(url: RedisUrl, prefix: &str, timeout: Duration) -> Self {
        crate::telemetry::metrics::rate_store_up(true);
        Self {
            url,
            conn: OnceCell::new(),
            script: redis::Script::new(SCRIPT),
            timeout,
            prefix: if prefix.is_empty() { "tokenql" } else { prefix }.to_string(),
            down: AtomicBool::new(false),
        }
    }

    /// Takes a token from the key's shared bucket: `Ok(Ok(()))`, or `Ok(Err(wait))` when it is
    /// empty; `Err` when Redis is unavailable (or does not answer within the time limit).
    pub async fn check(
        &self,
        key_id: i32,
        limit: RateLimit,
    ) -> Result<Result<(), Duration>, StoreError> {
        let reply = tokio::time::timeout(self.timeout, self.take(key_id, limit))
            .await
            .unwrap_or(Err(StoreError::Timeout(self.timeout)));
        self.note(&reply);
        match reply? {
            0 => Ok(Ok(())),
            ms if ms > 0 => Ok(Err(Duration::from_millis(ms.unsigned_abs()))),
            other => Err(StoreError::Reply(other)),
        }
    }

    /// Runs the bucket script on the key's bucket: 0, or the milliseconds to wait.
    async fn take(&self, key_id: i32, limit: RateLimit) -> Result<i64, StoreError> {
        let mut conn = self
            .conn
            .get_or_try_init(|| async {
                let config = ConnectionManagerConfig::new()
                    .set_number_of_retries(0)
                    .set_connection_timeout(Some(self.timeout))
                    .set_response_timeout(Some(self.timeout));
                ConnectionManager::new_lazy_with_config(self.url.client()?, config)
            })
            .await?
            .clone();
        let wait = self
            .script
            .key(format!("{}:rl:{key_id}", self.prefix))
            .arg(u64::from(limit.burst()) * 1000)
            .arg(limit.per_sec())
            .invoke_async(&mut conn)
            .await?;
        Ok(wait)
    }

    /// Logs and records a change between answering and not answering, once per episode.
    fn note<T>(&self, reply: &Result<T, StoreError>) {
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

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;

    fn url(port: u16) -> RedisUrl {
        RedisUrl {
            host: "127.0.0.1".into(),
            port,
            db: 0,
        }
    }

    fn limit() -> RateLimit {
        RateLimit::new(1, 2).expect("a limit")
    }

    /// A port on which nothing listens (bound, then released).
    fn closed_port() -> u16 {
        std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port()
    }

    #[test]
    fn urls() {
        assert_eq!(
            RedisUrl::parse("redis://127.0.0.1:6380/2"),
            Ok(RedisUrl {
                host: "127.0.0.1".into(),
                port: 6380,
                db: 2
            })
        );
        assert_eq!(
            RedisUrl::parse("redis://cache/"),
            Ok(url(6379)).map(|u| RedisUrl {
                host: "cache".into(),
                ..u
            })
        );
        assert_eq!(
            RedisUrl::parse("redis://[::1]:7000").map(|u| (u.host, u.port)),
            Ok(("::1".into(), 7000))
        );
        assert!(RedisUrl::parse("http://x").is_err());
        assert!(RedisUrl::parse("rediss://x").is_err());
        assert!(RedisUrl::parse("redis://x/abc").is_err());
        assert!(RedisUrl::parse("redis://user:pw@x").is_err());
        assert!(RedisUrl::parse("redis://").is_err());
    }

    /// A refused connection is an error at once, every time, not after the time limit.
    #[tokio::test]
    async fn a_closed_port_fails_at_once() {
        let limit_of_patience = Duration::from_secs(10);
        let store = SharedLimit::new(url(closed_port()), "t", limit_of_patience);
        for _ in 0..3 {
            let started = Instant::now();
            let verdict = store.check(1, limit()).await;
            assert!(matches!(verdict, Err(StoreError::Redis(_))), "{verdict:?}");
            assert!(started.elapsed() < limit_of_patience / 2);
        }
        assert!(store.down.load(Ordering::Relaxed));
    }

    /// A server that accepts the connection but never answers costs the time limit, no more.
    #[tokio::test]
    async fn a_silent_server_times_out() {
        // Never accepted: the kernel completes the handshake, nobody reads.
        let silent = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
        let port = silent.local_addr().expect("its address").port();
        let store = SharedLimit::new(url(port), "t", Duration::from_millis(200));
        let started = Instant::now();
        let verdict = store.check(1, limit()).await;
        assert!(verdict.is_err(), "{verdict:?}");
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "{:?}",
            started.elapsed()
        );
    }

    /// With the store down, a key is still limited, by this process's own bucket.
    #[tokio::test]
    async fn requests_fall_back_to_the_local_bucket() {
        let ops = crate::app::Ops::new(crate::app::ServerOptions {
            rate_limit_store: Some(url(closed_port())),
            rate_limit_store_timeout: Duration::from_secs(10),
            ..Default::default()
        });
        assert_eq!(ops.check_rate(7, Some(limit())).await, Ok(()));
        assert_eq!(ops.check_rate(7, Some(limit())).await, Ok(()));
        assert!(
            ops.check_rate(7, Some(limit())).await.is_err(),
            "the burst of 2 is spent"
        );
    }
}
