//! Rate limits shared across API processes, on every backend: two real `tokenql serve`
//! processes on one database, with their buckets in the local Redis server
//! (`--rate-limit-store redis://127.0.0.1:6379`, a key prefix of the test's own), together
//! accept at most the key's limit plus its burst; the same two processes with local buckets
//! accept about twice that (which shows the check can fail). With the store down, a process
//! keeps serving, limits with its own buckets, and says so in its log and metrics; when it
//! answers again (and when it goes away again), the process follows.

use crate::support::common;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{Backend, TestApp};

const BIN: &str = env!("CARGO_BIN_EXE_tokenql");
const REDIS: &str = "redis://127.0.0.1:6379";
/// The default limit of both processes: requests per second, and the burst.
const RATE: u64 = 10;
const BURST: u64 = 10;

crate::backend_tests!(
    two_processes_share_one_limit,
    an_unavailable_store_falls_back_to_local_buckets
);

/// A `tokenql serve` process on the test's database.
struct Serve {
    child: Child,
    base: String,
    log: Arc<std::sync::Mutex<Vec<String>>>,
}

impl Serve {
    /// Starts the binary on a free port and waits until it listens.
    fn start(app: &TestApp, store: &str, prefix: &str) -> Serve {
        let rate = RATE.to_string();
        let burst = BURST.to_string();
        let mut child = Command::new(BIN)
            .args([
                "serve",
                "--bind",
                "127.0.0.1:0",
                "--rate-limit",
                &rate,
                "--rate-burst",
                &burst,
                "--rate-limit-store",
                store,
                "--rate-limit-prefix",
                prefix,
                // Generous: a loaded test machine must not make Redis look down.
                "--rate-limit-store-timeout-ms",
                "5000",
                "--offchain-workers",
                "false",
            ])
            .env("DATABASE_URL", &app.db_url)
            .env("TOKENQL_LOG_FORMAT", "json")
            .env("RUST_LOG", "info")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start tokenql serve");
        let stderr = child.stderr.take().expect("stderr");
        let log = Arc::new(std::sync::Mutex::new(Vec::new()));
        let (tx, rx) = std::sync::mpsc::channel::<String>();
        let lines = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if line.contains("\"listening\"") {
                    let _ = tx.send(line.clone());
                }
                lines.lock().expect("log").push(line);
            }
        });
        let line = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("tokenql serve listens within 60 s");
        let v: serde_json::Value = serde_json::from_str(&line).expect("a JSON log line");
        let addr = v["fields"]["addr"].as_str().expect("addr").to_string();
        Serve {
            child,
            base: format!("http://{addr}"),
            log,
        }
    }

    fn log_contains(&self, text: &str) -> bool {
        self.log
            .lock()
            .expect("log")
            .iter()
            .any(|l| l.contains(text))
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What a run of requests got.
#[derive(Debug)]
struct Tally {
    accepted: u64,
    refused: u64,
    other: u64,
    elapsed: Duration,
}

/// Sends requests with `key` to every base, four at a time each, for `run`.
async fn hammer(bases: &[String], key: &str, run: Duration) -> Tally {
    let client = reqwest::Client::new();
    let (accepted, refused, other) = (
        Arc::new(AtomicU64::new(0)),
        Arc::new(AtomicU64::new(0)),
        Arc::new(AtomicU64::new(0)),
    );
    let start = Instant::now();
    let deadline = start + run;
    let mut tasks = Vec::new();
    for base in bases {
        for _ in 0..4 {
            let (client, key) = (client.clone(), key.to_string());
            let url = format!("{base}/api/v2/erc20/transfers?chain=eth&limit=1");
            let (a, r, o) = (accepted.clone(), refused.clone(), other.clone());
            tasks.push(tokio::spawn(async move {
                while Instant::now() < deadline {
                    let status = client
                        .get(&url)
                        .header("X-API-Key", &key)
                        .send()
                        .await
                        .map(|r| r.status().as_u16())
                        .unwrap_or(0);
                    match status {
                        200 => a.fetch_add(1, Ordering::Relaxed),
                        429 => r.fetch_add(1, Ordering::Relaxed),
                        _ => o.fetch_add(1, Ordering::Relaxed),
                    };
                }
            }));
        }
    }
    for t in tasks {
        t.await.expect("request task");
    }
    Tally {
        accepted: accepted.load(Ordering::Relaxed),
        refused: refused.load(Ordering::Relaxed),
        other: other.load(Ordering::Relaxed),
        elapsed: start.elapsed(),
    }
}

/// The most a token bucket of `RATE`/`BURST` can grant over `elapsed`.
fn bound(elapsed: Duration) -> u64 {
    (RATE as f64 * elapsed.as_secs_f64()).ceil() as u64 + BURST
}

fn prefix() -> String {
    format!(
        "tq_test_{}_{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0)
    )
}

async fn two_processes_share_one_limit(backend: Backend) {
    let app = common::spawn(backend).await;
    let prefix = prefix();
    let run = Duration::from_secs(5);

    let shared = [
        Serve::start(&app, REDIS, &prefix),
        Serve::start(&app, REDIS, &prefix),
    ];
    let bases: Vec<String> = shared.iter().map(|s| s.base.clone()).collect();
    let t = hammer(&bases, &app.key, run).await;
    assert_eq!(t.other, 0, "only 200 and 429 answers: {t:?}");
    assert!(
        t.accepted <= bound(t.elapsed),
        "two processes sharing one bucket accepted {} requests in {:?}: more than {} (the limit plus the burst): {t:?}",
        t.accepted,
        t.elapsed,
        bound(t.elapsed)
    );
    assert!(
        t.accepted >= RATE * run.as_secs() * 8 / 10,
        "the shared bucket grants its rate: {t:?}"
    );
    assert!(t.refused > 0, "{t:?}");
    for s in &shared {
        assert!(
            !s.log_contains("rate-limit store is unavailable"),
            "Redis answered throughout"
        );
    }
    drop(shared);

    // The same two processes with their own buckets: each grants the whole limit.
    let local = [
        Serve::start(&app, "local", &prefix),
        Serve::start(&app, "local", &prefix),
    ];
    let bases: Vec<String> = local.iter().map(|s| s.base.clone()).collect();
    let l = hammer(&bases, &app.key, run).await;
    assert!(
        l.accepted > bound(l.elapsed),
        "with local buckets the two processes together exceed one limit ({l:?}), which the shared store prevents"
    );
    drop(local);
    app.cleanup().await;
}

async fn an_unavailable_store_falls_back_to_local_buckets(backend: Backend) {
    let app = common::spawn(backend).await;
    // A port with nothing listening on it.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let s = Serve::start(&app, &format!("redis://127.0.0.1:{port}"), &prefix());
    let t = hammer(
        std::slice::from_ref(&s.base),
        &app.key,
        Duration::from_secs(3),
    )
    .await;
    assert_eq!(t.other, 0, "no 5xx while the store is down: {t:?}");
    assert!(t.accepted > 0, "{t:?}");
    assert!(
        t.accepted <= bound(t.elapsed),
        "the process still limits, with its own bucket: {t:?}"
    );
    let metrics = reqwest::get(format!("{}/metrics", s.base))
        .await
        .expect("metrics")
        .text()
        .await
        .expect("metrics body");
    assert!(
        metrics.contains("tokenql_rate_limit_store_up 0"),
        "{metrics}"
    );
    let fallbacks = metrics
        .lines()
        .find(|l| l.starts_with("tokenql_rate_limit_store_fallbacks_total "))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse::<f64>().ok())
        .unwrap_or(0.0);
    assert!(
        fallbacks >= t.accepted as f64,
        "{fallbacks} fallbacks: {t:?}"
    );
    assert!(
        s.log_contains("rate-limit store is unavailable"),
        "the fallback is logged"
    );
    drop(s);
    app.cleanup().await;
}

/// Forwards connections on a port of its own to the local Redis server while it lives;
/// dropping it closes the port and every forwarded connection, as if Redis went away.
struct Gate {
    tasks: tokio::task::JoinSet<()>,
}

impl Gate {
    async fn open(port: u16) -> Gate {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
            .await
            .expect("the gate's port");
        let mut tasks = tokio::task::JoinSet::new();
        tasks.spawn(async move {
            let mut conns = tokio::task::JoinSet::new();
            while let Ok((mut inbound, _)) = listener.accept().await {
                conns.spawn(async move {
                    if let Ok(mut outbound) = tokio::net::TcpStream::connect("127.0.0.1:6379").await
                    {
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                    }
                });
            }
        });
        Gate { tasks }
    }

    fn close(mut self) {
        self.tasks.abort_all();
    }
}

/// The store's fallback count and whether it is up, from the process's metrics.
async fn store_metrics(s: &Serve) -> (f64, bool) {
    let text = reqwest::get(format!("{}/metrics", s.base))
        .await
        .expect("metrics")
        .text()
        .await
        .expect("metrics body");
    let value = |name: &str| {
        text.lines()
            .find(|l| l.strip_prefix(name).is_some_and(|v| v.starts_with(' ')))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (
        value("tokenql_rate_limit_store_fallbacks_total"),
        value("tokenql_rate_limit_store_up") == 1.0,
    )
}

/// Sends requests until `done` holds (at most 20 s).
async fn until(s: &Serve, key: &str, what: &str, done: impl Fn(&Serve) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !done(s) {
        assert!(Instant::now() < deadline, "{what} within 20 s");
        hammer(
            std::slice::from_ref(&s.base),
            key,
            Duration::from_millis(200),
        )
        .await;
    }
}

/// Down at start, then up, then down again: the process uses the store whenever it answers
/// (the connection is reopened after each failure) and its own buckets otherwise. The database
/// plays no part, so this runs on SQLite only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_process_follows_the_store_going_and_coming_back() {
    let app = common::spawn(Backend::Sqlite).await;
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let s = Serve::start(&app, &format!("redis://127.0.0.1:{port}"), &prefix());
    until(&s, &app.key, "the store is reported down", |s| {
        s.log_contains("rate-limit store is unavailable")
    })
    .await;

    let gate = Gate::open(port).await;
    until(&s, &app.key, "the store is used again", |s| {
        s.log_contains("rate-limit store answers again")
    })
    .await;
    let (before, up) = store_metrics(&s).await;
    assert!(up, "tokenql_rate_limit_store_up is 1 again");
    let t = hammer(
        std::slice::from_ref(&s.base),
        &app.key,
        Duration::from_secs(1),
    )
    .await;
    assert_eq!(t.other, 0, "{t:?}");
    let (after, _) = store_metrics(&s).await;
    assert_eq!(before, after, "no fallback while the store answers: {t:?}");

    gate.close();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let t = hammer(
            std::slice::from_ref(&s.base),
            &app.key,
            Duration::from_millis(200),
        )
        .await;
        assert_eq!(t.other, 0, "no 5xx when the store goes away: {t:?}");
        let (fallbacks, up) = store_metrics(&s).await;
        if !up && fallbacks > after {
            break;
        }

        assert!(
            Instant::now() < deadline,
            "the store is reported down again within 20 s"
        );
    }
    drop(s);
    app.cleanup().await;
}
