//! A minimal Redis client: RESP2 over TCP, a few connections reused round-robin, each command
//! under a short time limit. It serves the shared rate limit ([`super::shared_limit`]), which
//! needs one command (`EVAL`) and must fail fast rather than hold a request up.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufStream};
use tokio::net::TcpStream;
use tokio::sync::Mutex;

/// Connections kept open per process.
const CONNECTIONS: usize = 4;

/// Why a command failed.
#[derive(Debug, thiserror::Error)]
pub enum RedisError {
    #[error("redis: {0}")]
    Io(#[from] std::io::Error),
    #[error("redis: no answer within {0:?}")]
    Timeout(Duration),
    #[error("redis answered an error: {0}")]
    Server(String),
    #[error("redis: malformed answer ({0})")]
    Protocol(String),
}

/// A RESP2 reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    Simple(String),
    Int(i64),
    Bulk(Option<Vec<u8>>),
    Array(Vec<Reply>),
}

/// Where the server is: `redis://HOST[:PORT][/DB]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedisUrl {
    pub addr: String,
    pub db: u32,
}

impl RedisUrl {
    /// Parses `redis://HOST[:PORT][/DB]` (port 6379 by default).
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
        let addr = if hostport
            .rsplit_once(':')
            .is_some_and(|(_, p)| p.parse::<u16>().is_ok())
        {
            hostport.to_string()
        } else {
            format!("{hostport}:6379")
        };
        Ok(Self { addr, db })
    }
}

/// A client of one Redis server.
#[derive(Debug)]
pub struct Redis {
    url: RedisUrl,
    timeout: Duration,
    conns: Vec<Mutex<Option<BufStream<TcpStream>>>>,
    next: AtomicUsize,
}

impl Redis {
    /// A client; connections open on first use (and again after a failure).
    pub fn new(url: RedisUrl, timeout: Duration) -> Self {
        Self {
            url,
            timeout,
            conns: (0..CONNECTIONS).map(|_| Mutex::new(None)).collect(),
            next: AtomicUsize::new(0),
        }
    }

    /// Sends one command and reads its reply. A connection that failed is dropped, so the
    /// next command opens a fresh one.
    pub async fn command(&self, args: &[&[u8]]) -> Result<Reply, RedisError> {
        let slot = &self.conns[self.next.fetch_add(1, Ordering::Relaxed) % self.conns.len()];
        let mut guard = slot.lock().await;
        let result = tokio::time::timeout(self.timeout, async {
            if guard.is_none() {
                *guard = Some(self.connect().await?);
            }
            match guard.as_mut() {
                Some(conn) => round_trip(conn, args).await,
                None => Err(RedisError::Protocol("no connection".into())),
            }
        })
        .await
        .unwrap_or(Err(RedisError::Timeout(self.timeout)));
        if matches!(
            result,
            Err(RedisError::Io(_) | RedisError::Timeout(_) | RedisError::Protocol(_))
        ) {
            *guard = None;
        }
        result
    }

    async fn connect(&self) -> Result<BufStream<TcpStream>, RedisError> {
        let stream = TcpStream::connect(&self.url.addr).await?;
        stream.set_nodelay(true)?;
        let mut conn = BufStream::new(stream);
        if self.url.db != 0 {
            let db = self.url.db.to_string();
            round_trip(&mut conn, &[b"SELECT", db.as_bytes()]).await?;
        }
        Ok(conn)
    }
}

async fn round_trip(conn: &mut BufStream<TcpStream>, args: &[&[u8]]) -> Result<Reply, RedisError> {
    conn.write_all(&encode(args)).await?;
    conn.flush().await?;
    match read_reply(conn).await? {
        Err(message) => Err(RedisError::Server(message)),
        Ok(reply) => Ok(reply),
    }
}

/// A command as a RESP array of bulk strings.
fn encode(args: &[&[u8]]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", args.len()).into_bytes();
    for a in args {
        out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        out.extend_from_slice(a);
        out.extend_from_slice(b"\r\n");
    }
    out
}

/// Reads one reply; an error reply is `Ok(Err(message))`.
async fn read_reply(conn: &mut BufStream<TcpStream>) -> Result<Result<Reply, String>, RedisError> {
    let line = read_line(conn).await?;
    let (kind, rest) = line.split_at(1.min(line.len()));
    let number = || {
        rest.parse::<i64>()
            .map_err(|_| RedisError::Protocol(format!("not a number: {rest}")))
    };
    Ok(Ok(match kind {
        "+" => Reply::Simple(rest.to_string()),
        "-" => return Ok(Err(rest.to_string())),
        ":" => Reply::Int(number()?),
        "$" => match number()? {
            n if n < 0 => Reply::Bulk(None),
            n => {
                let mut buf = vec![0; n as usize + 2];
                conn.read_exact(&mut buf).await?;
                buf.truncate(n as usize);
                Reply::Bulk(Some(buf))
            }
        },
        "*" => {
            let n = number()?;
            let mut items = Vec::with_capacity(n.clamp(0, 64) as usize);
            for _ in 0..n.max(0) {
                match Box::pin(read_reply(conn)).await? {
                    Ok(r) => items.push(r),
                    Err(message) => return Ok(Err(message)),
                }
            }
            Reply::Array(items)
        }
        other => {
            return Err(RedisError::Protocol(format!(
                "unknown reply type '{other}'"
            )))
        }
    }))
}

async fn read_line(conn: &mut BufStream<TcpStream>) -> Result<String, RedisError> {
    let mut line = String::new();
    if conn.read_line(&mut line).await? == 0 {
        return Err(RedisError::Io(std::io::ErrorKind::UnexpectedEof.into()));
    }
    Ok(line.trim_end_matches(['\r', '\n']).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        assert_eq!(
            RedisUrl::parse("redis://127.0.0.1:6379/2"),
            Ok(RedisUrl {
                addr: "127.0.0.1:6379".into(),
                db: 2
            })
        );
        assert_eq!(
            RedisUrl::parse("redis://cache").map(|u| u.addr),
            Ok("cache:6379".into())
        );
        assert!(RedisUrl::parse("http://x").is_err());
        assert!(RedisUrl::parse("redis://x/abc").is_err());
        assert!(RedisUrl::parse("redis://user:pw@x").is_err());
        assert!(RedisUrl::parse("redis://").is_err());
    }

    #[test]
    fn commands_are_resp_arrays() {
        assert_eq!(
            encode(&[b"GET", b"k"]),
            b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n".to_vec()
        );
    }
}
