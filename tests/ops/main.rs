//! Operations, black-box: the probes (`/healthz`, `/readyz`), Prometheus `/metrics` after
//! REST and GraphQL traffic, `x-request-id` in responses and in log lines, CORS on and off, and
//! per-key rate limits (REST 429 with `Retry-After`, GraphQL `RATE_LIMITED`, recovery, per-key
//! settings, server defaults, the key cache).
//!
//! Tests that depend on the database run on every backend; the others (request ids, CORS) on
//! SQLite. A test needing other server options starts a second server on the harness's
//! database ([`Server`]).

#[path = "../support/mod.rs"]
mod support;

use support::common;

use std::io::Write;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use common::{Backend, TestApp};
use migration::MigratorTrait;
use reqwest::header::HeaderMap;
use reqwest::Method;
use serde_json::{json, Value};
use tokenql::app::{CorsOrigins, RateDefaults, ServerOptions};
use tokenql::keys::KeyRate;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

crate::backend_tests!(
    probes,
    metrics_after_traffic,
    rate_limits,
    rate_defaults_and_key_cache,
    outage_answers_agree
);

/// The database becomes unreachable (its pool is closed under the running server): REST and
/// GraphQL answer the outage alike — 503, the same message, GraphQL's code
/// `SERVICE_UNAVAILABLE` — whether the key check or the query meets it, and never a 500.
async fn outage_answers_agree(backend: Backend) {
    let app = common::spawn(backend).await;
    let cached = ServerOptions {
        key_cache_ttl: Duration::from_secs(600),
        ..ServerOptions::default()
    };
    // One server checks keys in the database, one has the key cached.
    let uncached = Server::start(&app, ServerOptions::default()).await;
    let warm = Server::start(&app, cached).await;
    let client = reqwest::Client::new();
    let rest = |base: &str| format!("{base}/api/v2/{W}/nft");
    let gql = json!({ "query": format!("{{ nftsByWallet(address: \"{W}\") {{ status }} }}") });
    let ask = |base: String| {
        let client = client.clone();
        let gql = gql.clone();
        let key = app.key.clone();
        async move {
            let r = client
                .get(rest(&base))
                .header("X-API-Key", &key)
                .send()
                .await;
            let r = r.expect("REST answers");
            let rest = (
                r.status().as_u16(),
                r.json::<Value>().await.expect("REST JSON"),
            );
            let g = client
                .post(format!("{base}/graphql"))
                .header("X-API-Key", &key)
                .json(&gql);
            let g = g.send().await.expect("GraphQL answers");
            let gql = (
                g.status().as_u16(),
                g.json::<Value>().await.expect("GraphQL JSON"),
            );
            (rest, gql)
        }
    };
    let (r, g) = ask(warm.base.clone()).await;
    assert_eq!((r.0, g.0), (200, 200), "before the outage: {r:?} {g:?}");

    app.db.close_by_ref().await.expect("close the pool");
    for (what, base) in [("key check", &uncached.base), ("query", &warm.base)] {
        let ((rs, rb), (gs, gb)) = ask(base.clone()).await;
        assert_eq!(rs, 503, "{backend:?}, outage at the {what}: REST {rb}");
        assert_eq!(gs, 503, "{backend:?}, outage at the {what}: GraphQL {gb}");
        assert_eq!(gb["data"], Value::Null, "{gb}");
        assert_eq!(
            gb["errors"][0]["extensions"]["code"], "SERVICE_UNAVAILABLE",
            "{gb}"
        );
        assert_eq!(
            rb["message"], gb["errors"][0]["message"],
            "{backend:?}, outage at the {what}: one message"
        );
    }
    drop((uncached, warm));
    app.cleanup().await;
}

const W: &str = "0x430d5dde0cd48989737a95b4c46e1801a9a08531";
const ORIGIN: &str = "https://app.example.com";

/// A second server on a harness database, with its own options.
struct Server {
    base: String,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<std::io::Result<()>>>,
}

impl Server {
    async fn start(app: &TestApp, options: ServerOptions) -> Server {
        let state = tokenql::AppState::new(app.db.clone(), Default::default())
            .await
            .expect("AppState::new")
            .with_options(options);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("address");
        let (tx, rx) = oneshot::channel::<()>();
        let task = tokio::spawn(tokenql::run(listener, state, async move {
            let _ = rx.await;
        }));
        Server {
            base: format!("http://{addr}"),
            stop: Some(tx),
            task: Some(task),
        }
    }

    async fn stop(mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        if let Some(task) = self.task.take() {
            let r = tokio::time::timeout(Duration::from_secs(10), task).await;
            assert!(
                matches!(r, Ok(Ok(Ok(())))),
                "second server did not stop cleanly"
            );
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
    }
}

/// One request: status, headers, body (JSON, or a JSON string holding the raw text).
async fn send(
    app: &TestApp,
    method: Method,
    url: &str,
    headers: &[(&str, &str)],
    body: Option<Value>,
) -> (u16, HeaderMap, Value) {
    let mut req = app.client.request(method.clone(), url);
    for (n, v) in headers {
        req = req.header(*n, *v);
    }
    if let Some(b) = body {
        req = req.json(&b);
    }
    let resp = req
        .send()
        .await
        .unwrap_or_else(|e| panic!("{method} {url}: {e}"));
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let text = resp.text().await.expect("body");
    let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
    (status, headers, body)
}

fn header<'a>(h: &'a HeaderMap, name: &str) -> Option<&'a str> {
    h.get(name).and_then(|v| v.to_str().ok())
}

fn nft_path(base: &str) -> String {
    format!("{base}/api/v2/{W}/nft?limit=1")
}

async fn rest(app: &TestApp, base: &str, key: &str) -> (u16, HeaderMap, Value) {
    send(
        app,
        Method::GET,
        &nft_path(base),
        &[("X-API-Key", key)],
        None,
    )
    .await
}

async fn gql(app: &TestApp, base: &str, key: &str) -> (u16, HeaderMap, Value) {
    let q = format!("query Wallet {{ nftsByWallet(address: \"{W}\") {{ totalCount }} }}");
    send(
        app,
        Method::POST,
        &format!("{base}/graphql"),
        &[("X-API-Key", key)],
        Some(json!({ "query": q })),
    )
    .await
}

async fn get_text(app: &TestApp, url: &str) -> (u16, HeaderMap, String) {
    let resp = app.client.get(url).send().await.expect("GET");
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    (status, headers, resp.text().await.expect("body"))
}

async fn probes(backend: Backend) {
    let app = common::spawn(backend).await;
    let base = app.base.clone();

    let (status, _, body) = get_text(&app, &format!("{base}/healthz")).await;
    assert_eq!((status, body.as_str()), (200, "ok"), "healthz needs no key");
    let (status, _, body) = send(&app, Method::GET, &format!("{base}/readyz"), &[], None).await;
    assert_eq!(status, 200, "readyz on a migrated database: {body}");
    assert_eq!(body["status"], "ready");

    // Unmigrated: 503 with a reason naming the fix; healthz is unaffected.
    migration::Migrator::down(&app.db, None)
        .await
        .expect("roll back every migration");
    let (status, _, body) = send(&app, Method::GET, &format!("{base}/readyz"), &[], None).await;
    assert_eq!(status, 503, "readyz on an unmigrated database: {body}");
    assert_eq!(body["status"], "not ready", "{body}");
    let reason = body["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("tokenql migrate"), "{body}");
    let (status, _, _) = get_text(&app, &format!("{base}/healthz")).await;
    assert_eq!(status, 200);

    // One pending migration is enough.
    migration::Migrator::up(&app.db, None)
        .await
        .expect("migrate");
    migration::Migrator::down(&app.db, Some(1))
        .await
        .expect("roll back one");
    let (status, _, body) = send(&app, Method::GET, &format!("{base}/readyz"), &[], None).await;
    assert_eq!(status, 503, "one migration pending: {body}");
    assert!(
        body["reason"]
            .as_str()
            .is_some_and(|r| r.starts_with("1 database migration")),
        "{body}"
    );
    migration::Migrator::up(&app.db, None)
        .await
        .expect("migrate");
    let (status, _, body) = send(&app, Method::GET, &format!("{base}/readyz"), &[], None).await;
    assert_eq!(status, 200, "migrated again: {body}");

    // A database that does not answer: 503 without its error text.
    app.db.close_by_ref().await.expect("close the pool");
    let (status, _, body) = send(&app, Method::GET, &format!("{base}/readyz"), &[], None).await;
    assert_eq!(status, 503, "readyz with the pool closed: {body}");
    assert_eq!(body["reason"], "the database does not answer", "{body}");
    app.cleanup().await;
}

/// The sample lines of `series` (`name{labels} value`) whose labels include all of `labels`.
fn samples<'a>(text: &'a str, series: &str, labels: &[&str]) -> Vec<&'a str> {
    text.lines()
        .filter(|l| l.starts_with(&format!("{series}{{")) || l.starts_with(&format!("{series} ")))
        .filter(|l| labels.iter().all(|want| l.contains(want)))
        .collect()
}

async fn metrics_after_traffic(backend: Backend) {
    let app = common::spawn(backend).await;
    let base = app.base.clone();
    let (status, _, body) = rest(&app, &base, &app.key).await;
    assert_eq!(status, 200, "{body}");
    let (status, _, body) = send(
        &app,
        Method::GET,
        &format!("{base}/api/v2/erc20/transfers?limit=1"),
        &[("X-API-Key", &app.key)],
        None,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let (status, _, body) = gql(&app, &base, &app.key).await;
    assert_eq!(status, 200, "{body}");
    let (status, _, body) = send(
        &app,
        Method::POST,
        &format!("{base}/graphql"),
        &[("X-API-Key", &app.key)],
        Some(json!({ "query": "query Broken { nosuchfield }" })),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    let (status, _, _) = get_text(&app, &format!("{base}/no/such/route/{W}")).await;
    assert_eq!(status, 404);

    let (status, headers, text) = get_text(&app, &format!("{base}/metrics")).await;
    assert_eq!(status, 200, "/metrics needs no key: {text}");
    assert!(
        header(&headers, "content-type").is_some_and(|c| c.starts_with("text/plain")),
        "{headers:?}"
    );
    for (series, labels) in [
        (
            "tokenql_http_requests_total",
            &[
                "method=\"GET\"",
                "route=\"/api/v2/{address}/nft\"",
                "status=\"200\"",
            ][..],
        ),
        (
            "tokenql_http_requests_total",
            &["route=\"/api/v2/erc20/transfers\"", "status=\"200\""][..],
        ),
        (
            "tokenql_http_requests_total",
            &["method=\"POST\"", "route=\"/graphql\"", "status=\"400\""][..],
        ),
        (
            "tokenql_http_requests_total",
            &["route=\"unmatched\"", "status=\"404\""][..],
        ),
        (
            "tokenql_http_request_duration_seconds_bucket",
            &["route=\"/api/v2/{address}/nft\"", "le=\"0.005\""][..],
        ),
        (
            "tokenql_http_request_duration_seconds_count",
            &["route=\"/graphql\""][..],
        ),
        (
            "tokenql_graphql_operations_total",
            &["type=\"query\"", "name=\"Wallet\"", "outcome=\"ok\""][..],
        ),
        (
            "tokenql_graphql_operations_total",
            &["name=\"Broken\"", "outcome=\"bad_user_input\""][..],
        ),
        (
            "tokenql_graphql_operation_duration_seconds_bucket",
            &["type=\"query\"", "outcome=\"ok\""][..],
        ),
        ("tokenql_build_info", &["version=\""][..]),
    ] {
        assert!(
            !samples(&text, series, labels).is_empty(),
            "/metrics has no {series} with {labels:?}:\n{text}"
        );
    }
    let backend_label = match backend {
        Backend::Sqlite => "backend=\"sqlite\"",
        Backend::Postgres => "backend=\"postgres\"",
        Backend::Mysql => "backend=\"mysql\"",
    };
    for series in [
        "tokenql_db_pool_connections",
        "tokenql_db_pool_idle_connections",
        "tokenql_db_pool_max_connections",
    ] {
        assert!(
            !samples(&text, series, &[backend_label]).is_empty(),
            "/metrics has no {series} with {backend_label}:\n{text}"
        );
    }
    assert!(
        text.contains("# TYPE tokenql_http_request_duration_seconds histogram"),
        "latency is a histogram:\n{text}"
    );
    assert!(
        !text.contains(W),
        "raw URLs (addresses) must never become labels:\n{text}"
    );
    app.cleanup().await;
}

async fn rate_limits(backend: Backend) {
    let app = common::spawn(backend).await;
    let base = app.base.clone();
    let (info, key) = tokenql::keys::create_with_rate(
        &app.db,
        "limited",
        KeyRate {
            per_sec: Some(1),
            burst: Some(3),
        },
    )
    .await
    .expect("key");
    assert_eq!(info.rate.per_sec, Some(1));
    assert_eq!(info.rate.burst, Some(3));

    // A burst of 3, then 429 with Retry-After on REST ...
    for i in 0..3 {
        let (status, _, body) = rest(&app, &base, &key).await;
        assert_eq!(status, 200, "request {} of the burst: {body}", i + 1);
    }
    let (status, headers, body) = rest(&app, &base, &key).await;
    assert_eq!(status, 429, "over the limit: {body}");
    assert_eq!(header(&headers, "retry-after"), Some("1"), "{headers:?}");
    assert!(
        body["message"]
            .as_str()
            .is_some_and(|m| m.contains("rate limit")),
        "{body}"
    );
    // ... and RATE_LIMITED on GraphQL (the key shares one bucket across both APIs).
    let (status, headers, body) = gql(&app, &base, &key).await;
    assert_eq!(status, 429, "GraphQL over the limit: {body}");
    assert_eq!(
        body["errors"][0]["extensions"]["code"], "RATE_LIMITED",
        "{body}"
    );
    assert!(header(&headers, "retry-after").is_some(), "{headers:?}");

    // Other keys are not affected (the harness's key has no limit of its own here).
    for _ in 0..10 {
        let (status, _, body) = rest(&app, &base, &app.key).await;
        assert_eq!(status, 200, "another key: {body}");
    }

    // After the wait, the key is served again, on both APIs.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let (status, _, body) = rest(&app, &base, &key).await;
    assert_eq!(status, 200, "after Retry-After: {body}");
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let (status, _, body) = gql(&app, &base, &key).await;
    assert_eq!(status, 200, "GraphQL after Retry-After: {body}");

    // Per-key settings: 0 means unlimited; this server has no key cache, so it applies at once.
    let unlimited = KeyRate {
        per_sec: Some(0),
        burst: None,
    };
    let n = tokenql::keys::set_rate(&app.db, "limited", unlimited)
        .await
        .expect("set_rate");
    assert_eq!(n, 1);
    for _ in 0..10 {
        let (status, _, body) = rest(&app, &base, &key).await;
        assert_eq!(status, 200, "unlimited key: {body}");
    }
    let one = KeyRate {
        per_sec: Some(1),
        burst: Some(1),
    };
    let n = tokenql::keys::set_rate(&app.db, &info.id.to_string(), one)
        .await
        .expect("set_rate by id");
    assert_eq!(n, 1);
    let listed = tokenql::keys::list(&app.db).await.expect("list");
    assert!(
        listed.iter().any(|k| k.id == info.id && k.rate == one),
        "{listed:?}"
    );
    let (status, _, body) = rest(&app, &base, &key).await;
    assert_eq!(status, 200, "{body}");
    let (status, _, body) = rest(&app, &base, &key).await;
    assert_eq!(status, 429, "burst of 1: {body}");
    assert!(
        tokenql::keys::set_rate(
            &app.db,
            "limited",
            KeyRate {
                per_sec: Some(1),
                burst: Some(0),
            }
        )
        .await
        .is_err(),
        "a burst of 0 is refused"
    );

    let (_, _, text) = get_text(&app, &format!("{base}/metrics")).await;
    let key_label = format!("key_id=\"{}\"", info.id);
    assert!(
        !samples(&text, "tokenql_rate_limited_requests_total", &[&key_label]).is_empty(),
        "rate-limited requests are counted:\n{text}"
    );
    assert!(
        !samples(&text, "tokenql_http_requests_total", &["status=\"429\""]).is_empty(),
        "{text}"
    );
    app.cleanup().await;
}

async fn rate_defaults_and_key_cache(backend: Backend) {
    let app = common::spawn(backend).await;
    let server = Server::start(
        &app,
        ServerOptions {
            rate_defaults: RateDefaults {
                per_sec: 1,
                burst: 2,
            },
            key_cache_ttl: Duration::from_secs(3600),
            ..Default::default()
        },
    )
    .await;
    // The harness's key has no limit of its own: the server's default applies.
    for _ in 0..2 {
        let (status, _, body) = rest(&app, &server.base, &app.key).await;
        assert_eq!(status, 200, "{body}");
    }
    let (status, headers, body) = rest(&app, &server.base, &app.key).await;
    assert_eq!(status, 429, "default limit: {body}");
    assert_eq!(header(&headers, "retry-after"), Some("1"));

    // A key's own limit overrides the default.
    let (_, key) = tokenql::keys::create_with_rate(
        &app.db,
        "big",
        KeyRate {
            per_sec: Some(100),
            burst: Some(20),
        },
    )
    .await
    .expect("key");
    for _ in 0..10 {
        let (status, _, body) = rest(&app, &server.base, &key).await;
        assert_eq!(status, 200, "own limit: {body}");
    }

    // The key cache: a revoked key is refused at once by a server without a cache, and still
    // accepted, within the TTL, by one with a cache (documented in `ops::key_cache`).
    let n = tokenql::keys::revoke(&app.db, "big").await.expect("revoke");
    assert_eq!(n, 1);
    let (status, _, body) = rest(&app, &app.base, &key).await;
    assert_eq!(status, 401, "no cache: {body}");
    let (status, _, body) = rest(&app, &server.base, &key).await;
    assert_eq!(status, 200, "cached within the TTL: {body}");
    // A key never seen is looked up, even with a cache.
    let (_, fresh) = tokenql::keys::create(&app.db, "fresh").await.expect("key");
    let (status, _, body) = rest(&app, &server.base, &fresh).await;
    assert_eq!(status, 200, "a new key works at once: {body}");
    server.stop().await;
    app.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn request_ids_round_trip() {
    let app = common::spawn(Backend::Sqlite).await;
    let base = app.base.clone();
    // Kept when usable, on every kind of answer.
    for (method, url, body) in [
        (Method::GET, format!("{base}/healthz"), None),
        (Method::GET, nft_path(&base), None),
        (Method::GET, format!("{base}/no/such/route"), None),
        (
            Method::POST,
            format!("{base}/graphql"),
            Some(json!({ "query": "{ __typename }" })),
        ),
    ] {
        let (_, headers, _) = send(
            &app,
            method.clone(),
            &url,
            &[("X-Request-Id", "client-id-42")],
            body,
        )
        .await;
        assert_eq!(
            header(&headers, "x-request-id"),
            Some("client-id-42"),
            "{method} {url}"
        );
    }
    // Generated when missing or unusable: a fresh UUID each time.
    let (_, h1, _) = send(&app, Method::GET, &format!("{base}/healthz"), &[], None).await;
    let (_, h2, _) = send(&app, Method::GET, &format!("{base}/healthz"), &[], None).await;
    let (a, b) = (header(&h1, "x-request-id"), header(&h2, "x-request-id"));
    assert!(a.is_some_and(|id| id.len() == 36), "{h1:?}");
    assert_ne!(a, b);
    let long = "x".repeat(200);
    let (_, h, _) = send(
        &app,
        Method::GET,
        &format!("{base}/healthz"),
        &[("X-Request-Id", &long)],
        None,
    )
    .await;
    let id = header(&h, "x-request-id").unwrap_or_default();
    assert!(
        id.len() == 36 && id != long,
        "an overlong id is replaced: {id}"
    );
    app.cleanup().await;
}

/// Collects every log line of the process (the subscriber is global, installed once).
fn captured_logs() -> &'static Arc<Mutex<Vec<u8>>> {
    static LOGS: OnceLock<Arc<Mutex<Vec<u8>>>> = OnceLock::new();
    LOGS.get_or_init(|| {
        let buf = Arc::new(Mutex::new(Vec::new()));
        let writer = Capture(buf.clone());
        let subscriber = tracing_subscriber::fmt()
            .with_env_filter("info")
            .with_ansi(false)
            .with_writer(move || writer.clone())
            .finish();
        tracing::subscriber::set_global_default(subscriber).expect("no other subscriber");
        buf
    })
}

#[derive(Clone)]
struct Capture(Arc<Mutex<Vec<u8>>>);

impl Write for Capture {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        if let Ok(mut v) = self.0.lock() {
            v.extend_from_slice(b);
        }
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn log_lines_carry_the_request_id() {
    let logs = captured_logs();
    let app = common::spawn(Backend::Sqlite).await;
    // With the pool closed the key lookup fails, which is logged inside the request.
    app.db.close_by_ref().await.expect("close");
    let (status, headers, _) = send(
        &app,
        Method::GET,
        &nft_path(&app.base),
        &[("X-API-Key", &app.key), ("X-Request-Id", "trace-me-7b1e")],
        None,
    )
    .await;
    assert_eq!(status, 503);
    assert_eq!(header(&headers, "x-request-id"), Some("trace-me-7b1e"));
    let text = String::from_utf8_lossy(&logs.lock().expect("logs")).into_owned();
    let line = text
        .lines()
        .find(|l| l.contains("API key lookup failed") && l.contains("trace-me-7b1e"));
    assert!(
        line.is_some_and(
            |l| l.contains("request_id=trace-me-7b1e") && l.contains("route=/api/v2/{address}/nft")
        ),
        "no log line of the request carries its id:\n{text}"
    );
    app.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cors_is_off_unless_configured() {
    let app = common::spawn(Backend::Sqlite).await;
    let preflight = [
        ("Origin", ORIGIN),
        ("Access-Control-Request-Method", "GET"),
        ("Access-Control-Request-Headers", "x-api-key"),
    ];
    // Off by default: no CORS header on any answer.
    let (_, headers, _) = send(
        &app,
        Method::OPTIONS,
        &nft_path(&app.base),
        &preflight,
        None,
    )
    .await;
    assert!(
        header(&headers, "access-control-allow-origin").is_none(),
        "{headers:?}"
    );
    let (status, headers, _) = send(
        &app,
        Method::GET,
        &nft_path(&app.base),
        &[("Origin", ORIGIN), ("X-API-Key", &app.key)],
        None,
    )
    .await;
    assert_eq!(status, 200);
    assert!(
        headers
            .keys()
            .all(|k| !k.as_str().starts_with("access-control-")),
        "{headers:?}"
    );

    // Configured origins: preflight answered without a key, headers exposed.
    let origins = CorsOrigins::parse(&[ORIGIN, "http://localhost:3000"]).expect("origins");
    let server = Server::start(
        &app,
        ServerOptions {
            cors: origins,
            ..Default::default()
        },
    )
    .await;
    for path in [nft_path(&server.base), format!("{}/graphql", server.base)] {
        let (status, headers, body) = send(&app, Method::OPTIONS, &path, &preflight, None).await;
        assert!(
            (200..300).contains(&status),
            "preflight {path}: {status} {body}"
        );
        assert_eq!(
            header(&headers, "access-control-allow-origin"),
            Some(ORIGIN)
        );
        let allowed = header(&headers, "access-control-allow-headers")
            .unwrap_or_default()
            .to_ascii_lowercase();
        for h in ["x-api-key", "authorization", "content-type"] {
            assert!(allowed.contains(h), "{h} not allowed: {allowed}");
        }
        let methods = header(&headers, "access-control-allow-methods").unwrap_or_default();
        assert!(
            methods.contains("GET") && methods.contains("POST"),
            "{methods}"
        );
    }
    let (status, headers, _) = send(
        &app,
        Method::GET,
        &format!("{}/api/v2/erc20/transfers?limit=1", server.base),
        &[("Origin", ORIGIN), ("X-API-Key", &app.key)],
        None,
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(
        header(&headers, "access-control-allow-origin"),
        Some(ORIGIN)
    );
    let exposed = header(&headers, "access-control-expose-headers")
        .unwrap_or_default()
        .to_ascii_lowercase();
    for h in ["deprecation", "retry-after", "x-request-id"] {
        assert!(exposed.contains(h), "{h} not exposed: {exposed}");
    }
    // An origin not on the list gets no CORS header.
    let (_, headers, _) = send(
        &app,
        Method::GET,
        &nft_path(&server.base),
        &[("Origin", "https://evil.example"), ("X-API-Key", &app.key)],
        None,
    )
    .await;
    assert!(
        header(&headers, "access-control-allow-origin").is_none(),
        "{headers:?}"
    );
    server.stop().await;

    // `*`: any origin.
    let server = Server::start(
        &app,
        ServerOptions {
            cors: CorsOrigins::parse(&["*"]).expect("origins"),
            ..Default::default()
        },
    )
    .await;
    let (_, headers, _) = send(
        &app,
        Method::GET,
        &format!("{}/healthz", server.base),
        &[("Origin", "https://anything.example")],
        None,
    )
    .await;
    assert_eq!(header(&headers, "access-control-allow-origin"), Some("*"));
    server.stop().await;
    app.cleanup().await;
}

/// The `tokenql` binary on a SQLite file: `keys create --rate/--burst`, `keys set-rate`, and a
/// bad `--cors-origin` failing fast.
#[test]
fn rate_and_cors_flags() {
    use std::process::Command;
    let mut raw = [0u8; 8];
    getrandom::fill(&mut raw).expect("randomness");
    let name: String = raw.iter().map(|b| format!("{b:02x}")).collect();
    let path = std::env::temp_dir().join(format!("tq-ops-cli-{name}.db"));
    let url = format!("sqlite://{}?mode=rwc", path.display());
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_tokenql"))
            .args(args)
            .env("DATABASE_URL", &url)
            .env("RUST_LOG", "warn")
            .env_remove("TOKENQL_CORS_ORIGINS")
            .output()
            .expect("run tokenql");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    assert!(run(&["migrate"]).0);
    let (ok, out, err) = run(&[
        "keys", "create", "--name", "a", "--rate", "1", "--burst", "3",
    ]);
    assert!(ok && out.contains("rate limit 1/s burst 3"), "{out}{err}");
    let (ok, out, err) = run(&["keys", "create", "--name", "b"]);
    assert!(
        ok && out.contains("rate limit default burst default"),
        "{out}{err}"
    );
    let (ok, _, err) = run(&["keys", "create", "--name", "c", "--burst", "0"]);
    assert!(!ok && err.contains("--burst"), "{err}");

    let (ok, out, err) = run(&["keys", "set-rate", "b", "--rate", "0"]);
    assert!(
        ok && out.contains("1 key(s) set to unlimited burst default"),
        "{out}{err}"
    );
    let (ok, out, err) = run(&["keys", "set-rate", "a"]);
    assert!(ok && out.contains("default burst default"), "{out}{err}");
    let (ok, _, err) = run(&["keys", "set-rate", "nobody", "--rate", "5"]);
    assert!(!ok && err.contains("no active key"), "{err}");
    let (ok, list, _) = run(&["keys", "list"]);
    assert!(ok, "{list}");
    let line = |n: &str| {
        list.lines()
            .find(|l| l.split('\t').nth(1) == Some(n))
            .unwrap_or_default()
            .to_string()
    };
    assert!(line("a").ends_with("default burst default"), "{list}");
    assert!(line("b").ends_with("unlimited burst default"), "{list}");

    // On an unmigrated database, so that a regression fails instead of serving forever.
    let empty = std::env::temp_dir().join(format!("tq-ops-cli-{name}-empty.db"));
    let (ok, _, err) = run(&[
        "serve",
        "--database-url",
        &format!("sqlite://{}?mode=rwc", empty.display()),
        "--bind",
        "127.0.0.1:0",
        "--cors-origin",
        "https://app.example.com/",
    ]);
    assert!(!ok && err.contains("CORS origin"), "{err}");
    for file in [&path, &empty] {
        for suffix in ["", "-wal", "-shm"] {
            let mut p = file.clone().into_os_string();
            p.push(suffix);
            let _ = std::fs::remove_file(p);
        }
    }
}
