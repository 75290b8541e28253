//! The black-box harness: every test gets its own fresh database (SQLite file, PostgreSQL or
//! MySQL/MariaDB database), a migrated schema, a server on a free loopback port and an API key,
//! and talks to it over real HTTP only.
//!
//! - [`spawn`] builds a [`TestApp`]; call [`TestApp::cleanup`] at the end of the test (it stops
//!   the server and drops the database). A test that panics leaks its database; `scripts/test`
//!   sweeps leftovers (`tq_test_*`) before each run.
//! - PostgreSQL and MySQL need `TOKENQL_TEST_POSTGRES_URL` / `TOKENQL_TEST_MYSQL_URL` (server
//!   URLs such as `postgres://postgres@127.0.0.1:5432`, `mysql://root@127.0.0.1:3306`). A missing
//!   variable FAILS the test: only `scripts/test` decides to skip a backend.
//! - [`backend_tests!`] generates each scenario once per backend, in modules `sqlite`,
//!   `postgres` and `mysql`.
//! - [`truth`] is an independent decoder of the bundled demo logs (ground truth).
#![allow(dead_code)]

pub mod truth;

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use sea_orm::{ConnectionTrait, DatabaseConnection};
use serde_json::{json, Value};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

pub mod binary;
mod db_url;
use db_url::split_server_url;

/// Generates `async fn name(backend)` scenarios as one `#[tokio::test]` per backend, in modules
/// `sqlite`, `postgres` and `mysql` (test names `sqlite::name`, `postgres::name`, ...).
#[macro_export]
macro_rules! backend_tests {
    ($($name:ident),+ $(,)?) => {
        $crate::backend_tests!(@module sqlite, Sqlite, $($name),+);
        $crate::backend_tests!(@module postgres, Postgres, $($name),+);
        $crate::backend_tests!(@module mysql, Mysql, $($name),+);
    };
    (@module $module:ident, $variant:ident, $($name:ident),+) => {
        mod $module {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    super::$name($crate::support::common::Backend::$variant).await
                }
            )+
        }
    };
}

/// The database a test runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
    Mysql,
}

impl Backend {
    fn env_var(self) -> Option<&'static str> {
        match self {
            Backend::Sqlite => None,
            Backend::Postgres => Some("TOKENQL_TEST_POSTGRES_URL"),
            Backend::Mysql => Some("TOKENQL_TEST_MYSQL_URL"),
        }
    }
}

/// Where a test's database lives, to drop it afterwards.
#[derive(Debug, Clone)]
enum DbHandle {
    Sqlite(std::path::PathBuf),
    Server { admin_url: String, name: String },
}

/// A running server on its own database.
pub struct TestApp {
    /// `http://127.0.0.1:PORT`
    pub base: String,
    /// A valid API key.
    pub key: String,
    /// The key's id (for `tokenql::keys::revoke`).
    pub key_id: i32,
    /// A connection to the test's database (for setup: imports, metadata, keys).
    pub db: DatabaseConnection,
    /// The test database's URL (for processes of the `tokenql` binary on it).
    pub db_url: String,
    pub backend: Backend,
    pub client: reqwest::Client,
    /// The in-process server's live changes (its open subscriptions per key); `None` for a
    /// server started elsewhere.
    pub live: Option<tokenql::app::live::Live>,
    handle: DbHandle,
    shutdown: Option<oneshot::Sender<()>>,
    server: Option<JoinHandle<std::io::Result<()>>>,
}

/// A unique database name: `tq_test_<unix seconds>_<pid>_<counter>_<random>`. The timestamp
/// lets `scripts/test` sweep only leftovers that are old enough not to belong to a live run.
fn unique_name() -> String {
    unique_name_with("tq_test")
}

/// [`unique_name`] with another prefix (`scripts/test` sweeps only `tq_test_*` leftovers, so a
/// long benchmark run names its database otherwise).
fn unique_name_with(prefix: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let mut r = [0u8; 4];
    getrandom::fill(&mut r).expect("no randomness for a test database name");
    let r: String = r.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{prefix}_{secs}_{}_{}_{r}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

fn server_url(backend: Backend) -> String {
    let var = backend.env_var().expect("sqlite needs no server");
    match std::env::var(var) {
        Ok(v) if !v.trim().is_empty() => v.trim().to_string(),
        _ => panic!(
            "{var} is not set: the {backend:?} tests need a server URL such as {}. \
             Run the suite with scripts/test, which finds local servers and skips (loudly) the \
             backends it cannot find, or run `cargo test -- --skip {}::`.",
            match backend {
                Backend::Postgres => "postgres://postgres@127.0.0.1:5432",
                _ => "mysql://root@127.0.0.1:3306",
            },
            match backend {
                Backend::Postgres => "postgres",
                _ => "mysql",
            }
        ),
    }
}

/// Creates the test's database; returns its URL and how to drop it.
async fn create_database(backend: Backend) -> (String, DbHandle) {
    create_database_named(backend, unique_name()).await
}

async fn create_database_named(backend: Backend, name: String) -> (String, DbHandle) {
    match backend {
        Backend::Sqlite => {
            let path = std::env::temp_dir().join(format!("{name}.db"));
            (
                format!("sqlite://{}?mode=rwc", path.display()),
                DbHandle::Sqlite(path),
            )
        }
        Backend::Postgres | Backend::Mysql => {
            let (server, query) = split_server_url(&server_url(backend));
            let admin_url = match backend {
                Backend::Postgres => format!("{server}/postgres{query}"),
                _ => format!("{server}{query}"),
            };
            let admin = tokenql::store::database::connect(&admin_url, 1)
                .await
                .unwrap_or_else(|e| panic!("cannot connect to {admin_url}: {e}"));
            admin
                .execute_unprepared(&format!("CREATE DATABASE {name}"))
                .await
                .unwrap_or_else(|e| panic!("cannot create database {name}: {e}"));
            let _ = admin.close().await;
            (
                format!("{server}/{name}{query}"),
                DbHandle::Server { admin_url, name },
            )
        }
    }
}

async fn drop_database(backend: Backend, handle: &DbHandle) {
    match handle {
        DbHandle::Sqlite(path) => {
            for suffix in ["", "-wal", "-shm"] {
                let mut p = path.clone().into_os_string();
                p.push(suffix);
                let _ = std::fs::remove_file(p);
            }
        }
        DbHandle::Server { admin_url, name } => {
            let admin = tokenql::store::database::connect(admin_url, 1)
                .await
                .unwrap_or_else(|e| panic!("cannot connect to {admin_url}: {e}"));
            let sql = match backend {
                Backend::Postgres => format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"),
                _ => format!("DROP DATABASE IF EXISTS {name}"),
            };
            admin
                .execute_unprepared(&sql)
                .await
                .unwrap_or_else(|e| panic!("cannot drop database {name}: {e}"));
            let _ = admin.close().await;
        }
    }
}

/// A fresh, migrated database of `backend` that no server uses yet, for harnesses that run the
/// release binary themselves (`benches/soak`); its name starts with `prefix`. Turn it into a
/// [`TestApp`] with [`TestApp::external`] once a server answers on it.
pub struct FreshDb {
    /// The database's URL.
    pub url: String,
    /// A connection to it (setup: keys; reading progress).
    pub db: DatabaseConnection,
    pub backend: Backend,
    handle: DbHandle,
}

impl FreshDb {
    /// Creates and migrates the database.
    pub async fn create(backend: Backend, prefix: &str) -> FreshDb {
        use migration::MigratorTrait;
        tokenql::tls::ensure_crypto_provider();
        let (url, handle) = create_database_named(backend, unique_name_with(prefix)).await;
        let db = tokenql::store::database::connect(&url, 2)
            .await
            .unwrap_or_else(|e| panic!("cannot connect to {url}: {e}"));
        migration::Migrator::up(&db, None)
            .await
            .unwrap_or_else(|e| panic!("migrations failed on {backend:?}: {e}"));
        FreshDb {
            url,
            db,
            backend,
            handle,
        }
    }

    /// Drops the database (when no [`TestApp`] took it over).
    pub async fn drop_database(self) {
        let _ = self.db.close_by_ref().await;
        drop_database(self.backend, &self.handle).await;
    }
}

impl TestApp {
    /// A view of a server started elsewhere on `fresh` (at `base`, accepting `key`), with the
    /// same helpers as a spawned one; [`TestApp::cleanup`] drops the database but leaves the
    /// server to whoever started it.
    pub fn external(fresh: FreshDb, base: String, key: String, key_id: i32) -> TestApp {
        TestApp {
            base,
            key,
            key_id,
            db: fresh.db,
            db_url: fresh.url,
            backend: fresh.backend,
            client: reqwest::Client::builder()
                .timeout(Duration::from_secs(60))
                .build()
                .expect("cannot build an HTTP client"),
            live: None,
            handle: fresh.handle,
            shutdown: None,
            server: None,
        }
    }
}

/// Starts a server on a fresh, migrated database of `backend`, with one API key.
pub async fn spawn(backend: Backend) -> TestApp {
    spawn_with(backend, tokenql::app::ServerOptions::default()).await
}

/// [`spawn`] with these operational settings (e.g. the off-chain `media_dir`).
pub async fn spawn_with(backend: Backend, options: tokenql::app::ServerOptions) -> TestApp {
    spawn_configured(backend, options, tokenql::query::QueryConfig::default()).await
}

/// [`spawn_with`] with these query settings (e.g. `max_lag_blocks`).
pub async fn spawn_configured(
    backend: Backend,
    options: tokenql::app::ServerOptions,
    query: tokenql::query::QueryConfig,
) -> TestApp {
    use migration::MigratorTrait;

    // reqwest is built without a TLS provider of its own (see `tokenql::tls`).
    tokenql::tls::ensure_crypto_provider();

    let (url, handle) = create_database(backend).await;
    let db = tokenql::store::database::connect(&url, 5)
        .await
        .unwrap_or_else(|e| panic!("cannot connect to the test database ({backend:?}): {e}"));
    migration::Migrator::up(&db, None)
        .await
        .unwrap_or_else(|e| panic!("migrations failed on {backend:?}: {e}"));
    let state = tokenql::AppState::new(db.clone(), query)
        .await
        .unwrap_or_else(|e| panic!("AppState::new failed on {backend:?}: {e}"))
        .with_options(options);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("cannot bind a loopback port");
    let addr = listener.local_addr().expect("listener has no address");
    let (tx, rx) = oneshot::channel::<()>();
    let live = state.live.clone();
    let server = tokio::spawn(tokenql::run(listener, state, async move {
        let _ = rx.await;
    }));
    let (info, key) = tokenql::keys::create(&db, "blackbox")
        .await
        .unwrap_or_else(|e| panic!("cannot create an API key: {e}"));
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(60))
        .build()
        .expect("cannot build an HTTP client");
    TestApp {
        base: format!("http://{addr}"),
        key,
        key_id: info.id,
        db,
        db_url: url,
        backend,
        client,
        live: Some(live),
        handle,
        shutdown: Some(tx),
        server: Some(server),
    }
}

/// How a request authenticates.
#[derive(Debug, Clone, Copy)]
pub enum Auth<'a> {
    /// The app's own key.
    Default,
    /// No `X-API-Key` header.
    None,
    /// This key.
    Key(&'a str),
}

impl TestApp {
    fn key_for<'a>(&'a self, auth: Auth<'a>) -> Option<&'a str> {
        match auth {
            Auth::Default => Some(&self.key),
            Auth::None => None,
            Auth::Key(k) => Some(k),
        }
    }

    /// `GET {base}{path_and_query}` with the app's key.
    pub async fn get_rest(&self, path_and_query: &str) -> (u16, reqwest::header::HeaderMap, Value) {
        self.get_rest_with(path_and_query, Auth::Default, &[]).await
    }

    /// `GET {base}{path_and_query}` with a chosen key and extra headers. A body that is not
    /// JSON comes back as a JSON string holding the raw text.
    pub async fn get_rest_with(
        &self,
        path_and_query: &str,
        auth: Auth<'_>,
        headers: &[(&str, &str)],
    ) -> (u16, reqwest::header::HeaderMap, Value) {
        let mut req = self.client.get(format!("{}{}", self.base, path_and_query));
        if let Some(k) = self.key_for(auth) {
            req = req.header("X-API-Key", k);
        }
        for (n, v) in headers {
            req = req.header(*n, *v);
        }
        let resp = req
            .send()
            .await
            .unwrap_or_else(|e| panic!("GET {path_and_query} failed: {e}"));
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let text = resp.text().await.expect("unreadable response body");
        let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
        (status, headers, body)
    }

    /// `POST /graphql` with the app's key.
    pub async fn graphql(&self, query: &str, variables: Value) -> (u16, Value) {
        self.graphql_with(query, variables, Auth::Default).await
    }

    /// `POST /graphql` with a chosen key.
    pub async fn graphql_with(
        &self,
        query: &str,
        variables: Value,
        auth: Auth<'_>,
    ) -> (u16, Value) {
        let mut req = self
            .client
            .post(format!("{}/graphql", self.base))
            .json(&json!({ "query": query, "variables": variables }));
        if let Some(k) = self.key_for(auth) {
            req = req.header("X-API-Key", k);
        }
        let resp = req
            .send()
            .await
            .unwrap_or_else(|e| panic!("POST /graphql failed: {e}"));
        let status = resp.status().as_u16();
        let text = resp.text().await.expect("unreadable response body");
        let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
        (status, body)
    }

    /// `POST /graphql` that must succeed: returns `data`, panicking with the errors otherwise.
    pub async fn graphql_ok(&self, query: &str, variables: Value) -> Value {
        let (status, body) = self.graphql(query, variables.clone()).await;
        assert!(
            status == 200 && body.get("errors").is_none_or(|e| e.is_null()),
            "GraphQL query failed ({status}): {body}\nquery: {query}\nvariables: {variables}"
        );
        body["data"].clone()
    }

    /// Loads the bundled mainnet sample (`tokenql::demo::load_into`).
    pub async fn load_demo(&self) {
        tokenql::demo::load_into(&self.db)
            .await
            .unwrap_or_else(|e| panic!("demo load failed on {:?}: {e}", self.backend));
    }

    /// Stops the server and drops the database.
    pub async fn cleanup(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(server) = self.server.take() {
            match tokio::time::timeout(Duration::from_secs(10), server).await {
                Ok(Ok(Ok(()))) => {}
                Ok(Ok(Err(e))) => panic!("server failed: {e}"),
                Ok(Err(e)) => panic!("server task panicked: {e}"),
                Err(_) => panic!("server did not stop within 10 s of shutdown"),
            }
        }
        let _ = self.db.close_by_ref().await;
        drop_database(self.backend, &self.handle).await;
    }
}

impl Drop for TestApp {
    /// A test that panicked before `cleanup` still stops its server (and removes its SQLite
    /// file); server databases are swept by `scripts/test`.
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let DbHandle::Sqlite(path) = &self.handle {
            if self.server.is_some() {
                for suffix in ["", "-wal", "-shm"] {
                    let mut p = path.clone().into_os_string();
                    p.push(suffix);
                    let _ = std::fs::remove_file(p);
                }
            }
        }
    }
}

/// Percent-encodes a query-string value.
pub fn enc(s: &str) -> String {
    form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

/// A JSON value as the string it stands for: strings as they are, numbers and booleans
/// written out, null as `None`.
pub fn text(v: &Value) -> Option<String> {
    match v {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

/// A GraphQL string literal.
pub fn gql_str(s: &str) -> String {
    serde_json::to_string(s).expect("string to JSON")
}

/// A GraphQL list of string literals.
pub fn gql_list(items: &[&str]) -> String {
    format!(
        "[{}]",
        items
            .iter()
            .map(|s| gql_str(s))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// REST field -> GraphQL node field (a dotted path), for the NFT records.
pub const NFT_FIELDS: &[(&str, &str)] = &[
    ("token_address", "tokenAddress"),
    ("token_id", "tokenId"),
    ("contract_type", "contractType"),
    ("owner_of", "ownerOf"),
    ("amount", "amount"),
    ("block_number", "blockNumber"),
    ("block_number_minted", "blockNumberMinted"),
    ("token_hash", "tokenHash"),
    ("name", "name"),
    ("symbol", "symbol"),
    ("possible_spam", "possibleSpam"),
];

/// REST field -> GraphQL node field (a dotted path), for the ERC20 transfer records.
pub const TRANSFER_FIELDS: &[(&str, &str)] = &[
    ("contract_address", "contractAddress"),
    ("from_wallet", "fromWallet"),
    ("to_wallet", "toWallet"),
    ("value", "value"),
    ("value_decimal", "valueDecimal"),
    ("block_number", "blockNumber"),
    ("block_hash", "blockHash"),
    ("block_timestamp", "blockTimestamp"),
    ("transaction_hash", "transactionHash"),
    ("transaction_index", "transactionIndex"),
    ("log_index", "logIndex"),
    ("token_name", "tokenName"),
    ("token_symbol", "tokenSymbol"),
    ("token_decimals", "tokenDecimals"),
    ("possible_spam", "possibleSpam"),
];

/// A GraphQL selection set for the dotted paths of `fields`.
fn selection(fields: &[(&str, &str)]) -> String {
    // Group dotted paths into nested selections (one level of nesting is enough here).
    let mut flat: Vec<String> = Vec::new();
    let mut nested: Vec<(String, Vec<String>)> = Vec::new();
    for (_, path) in fields {
        match path.split_once('.') {
            None => flat.push(path.to_string()),
            Some((head, rest)) => match nested.iter_mut().find(|(h, _)| h == head) {
                Some((_, v)) => v.push(rest.to_string()),
                None => nested.push((head.to_string(), vec![rest.to_string()])),
            },
        }
    }
    for (h, v) in nested {
        flat.push(format!("{h} {{ {} }}", v.join(" ")));
    }
    flat.join(" ")
}

/// The value at a dotted path.
pub fn at<'a>(v: &'a Value, path: &str) -> &'a Value {
    path.split('.').fold(v, |v, k| &v[k])
}

/// `nftsByWallet(address: ..., <args>)` selecting the whole connection.
pub fn nfts_query(address: &str, args: &str) -> String {
    let args = if args.is_empty() {
        String::new()
    } else {
        format!(", {args}")
    };
    format!(
        "{{ nftsByWallet(address: {}{args}) {{ status totalCount pageInfo {{ hasNextPage endCursor }} \
         edges {{ cursor node {{ {} }} }} }} }}",
        gql_str(address),
        selection(NFT_FIELDS)
    )
}

/// `erc20Transfers(<args>)` selecting the whole connection.
pub fn transfers_query(args: &str) -> String {
    let args = if args.is_empty() {
        String::new()
    } else {
        format!("({args})")
    };
    format!(
        "{{ erc20Transfers{args} {{ pageInfo {{ hasNextPage endCursor }} \
         edges {{ cursor node {{ {} }} }} }} }}",
        selection(TRANSFER_FIELDS)
    )
}

/// One REST page, as checked by [`TestApp::walk_rest`].
#[derive(Debug, Clone)]
pub struct RestPage {
    pub body: Value,
    pub records: Vec<Value>,
    pub cursor: Option<String>,
}

/// One GraphQL connection page.
#[derive(Debug, Clone)]
pub struct GqlPage {
    pub connection: Value,
    pub nodes: Vec<Value>,
    pub has_next: bool,
    pub end_cursor: Option<String>,
}

/// At most this many pages in one walk: a loop guard.
const MAX_PAGES: usize = 500;

impl TestApp {
    /// Follows `cursor` from `path_and_query` (which must contain `?`) to the last page,
    /// checking on every page: 200, `page` = 1, 2, 3..., `page_size` = `limit`, a cursor on
    /// every page but the last, and never more than `limit` records.
    pub async fn walk_rest(&self, path_and_query: &str, limit: usize) -> Vec<RestPage> {
        let mut pages = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let url = match &cursor {
                None => path_and_query.to_string(),
                Some(c) => format!("{path_and_query}&cursor={}", enc(c)),
            };
            let (status, _, body) = self.get_rest(&url).await;
            assert_eq!(status, 200, "GET {url}: {body}");
            let n = pages.len() + 1;
            let page = text(&body["page"]).and_then(|p| p.parse::<usize>().ok());
            assert_eq!(page, Some(n), "GET {url}: page should be {n}: {body}");
            let size = text(&body["page_size"]).and_then(|p| p.parse::<usize>().ok());
            assert_eq!(size, Some(limit), "GET {url}: page_size: {body}");
            let records = body["result"]
                .as_array()
                .unwrap_or_else(|| panic!("GET {url}: result is not an array: {body}"))
                .clone();
            assert!(
                records.len() <= limit,
                "GET {url}: more than {limit} records"
            );
            let next = match &body["cursor"] {
                Value::Null => None,
                Value::String(s) if !s.is_empty() => Some(s.clone()),
                other => panic!("GET {url}: cursor must be a non-empty string or null: {other}"),
            };
            if next.is_some() {
                assert_eq!(
                    records.len(),
                    limit,
                    "GET {url}: a page before the last is full"
                );
            }
            pages.push(RestPage {
                body: body.clone(),
                records,
                cursor: next.clone(),
            });
            match next {
                None => return pages,
                Some(c) => cursor = Some(c),
            }
            assert!(
                pages.len() < MAX_PAGES,
                "GET {path_and_query}: no end in sight"
            );
        }
    }

    /// Follows `pageInfo.endCursor` of the connection at `field` (a dotted path) built by `query(after_arg)` to the
    /// last page, checking `hasNextPage` and page sizes. `query` receives `""` for the first
    /// page and `after: "..."` for the others.
    pub async fn walk_gql(
        &self,
        field: &str,
        first: usize,
        query: impl Fn(&str) -> String,
    ) -> Vec<GqlPage> {
        let mut pages = Vec::new();
        let mut after: Option<String> = None;
        loop {
            let arg = after
                .as_ref()
                .map(|c| format!("after: {}", gql_str(c)))
                .unwrap_or_default();
            let q = query(&arg);
            let data = self.graphql_ok(&q, Value::Null).await;
            let conn = at(&data, field).clone();
            let edges = conn["edges"]
                .as_array()
                .unwrap_or_else(|| panic!("{field}: edges is not an array: {conn}\nquery: {q}"))
                .clone();
            assert!(edges.len() <= first, "{field}: more than {first} edges");
            for e in &edges {
                assert!(
                    e["cursor"].as_str().is_some_and(|c| !c.is_empty()),
                    "{field}: edge without cursor: {e}"
                );
            }
            let has_next = conn["pageInfo"]["hasNextPage"]
                .as_bool()
                .unwrap_or_else(|| panic!("{field}: pageInfo.hasNextPage: {conn}"));
            let end_cursor = conn["pageInfo"]["endCursor"].as_str().map(str::to_string);
            if has_next {
                assert_eq!(
                    edges.len(),
                    first,
                    "{field}: a page before the last is full"
                );
                assert!(
                    end_cursor.is_some(),
                    "{field}: hasNextPage without endCursor"
                );
            }
            pages.push(GqlPage {
                connection: conn.clone(),
                nodes: edges.iter().map(|e| e["node"].clone()).collect(),
                has_next,
                end_cursor: end_cursor.clone(),
            });
            if !has_next {
                return pages;
            }
            after = end_cursor;
            assert!(pages.len() < MAX_PAGES, "{field}: no end in sight");
        }
    }

    /// Every NFT of `owner` through REST (`limit` per page).
    pub async fn rest_nfts(&self, owner: &str, limit: usize) -> Vec<Value> {
        self.walk_rest(&format!("/api/v2/{owner}/nft?limit={limit}"), limit)
            .await
            .into_iter()
            .flat_map(|p| p.records)
            .collect()
    }

    /// Every NFT of `owner` through GraphQL (`first` per page).
    pub async fn gql_nfts(&self, owner: &str, first: usize) -> Vec<Value> {
        self.walk_gql("nftsByWallet", first, |after| {
            let sep = if after.is_empty() { "" } else { ", " };
            nfts_query(owner, &format!("first: {first}{sep}{after}"))
        })
        .await
        .into_iter()
        .flat_map(|p| p.nodes)
        .collect()
    }

    /// Every ERC20 transfer matching REST `filters` (a query string without `limit`).
    pub async fn rest_transfers(&self, filters: &str, limit: usize) -> Vec<Value> {
        let sep = if filters.is_empty() { "" } else { "&" };
        self.walk_rest(
            &format!("/api/v2/erc20/transfers?{filters}{sep}limit={limit}"),
            limit,
        )
        .await
        .into_iter()
        .flat_map(|p| p.records)
        .collect()
    }

    /// Every ERC20 transfer matching GraphQL `args` (without `first` / `after`).
    pub async fn gql_transfers(&self, args: &str, first: usize) -> Vec<Value> {
        self.walk_gql("erc20Transfers", first, |after| {
            let mut a = vec![format!("first: {first}")];
            if !args.is_empty() {
                a.push(args.to_string());
            }
            if !after.is_empty() {
                a.push(after.to_string());
            }
            transfers_query(&a.join(", "))
        })
        .await
        .into_iter()
        .flat_map(|p| p.nodes)
        .collect()
    }
}

/// Asserts REST records and GraphQL nodes are the same records, field by field.
pub fn assert_same_records(what: &str, rest: &[Value], gql: &[Value], fields: &[(&str, &str)]) {
    assert_eq!(
        rest.len(),
        gql.len(),
        "{what}: REST has {} records, GraphQL {}",
        rest.len(),
        gql.len()
    );
    for (i, (r, g)) in rest.iter().zip(gql).enumerate() {
        for (rf, gf) in fields {
            assert_eq!(
                text(&r[*rf]),
                text(at(g, gf)),
                "{what}: record {i}: REST {rf} vs GraphQL {gf}\nREST: {r}\nGraphQL: {g}"
            );
        }
    }
}
