//! The fixture: a fresh SQLite file per test with the bundled mainnet sample, an API key, and
//! the whole application router; plus helpers to check answers.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};

use axum::body::Body;
use axum::http::{HeaderMap, Request, StatusCode};
use axum::Router;
use http_body_util::BodyExt;
use migration::MigratorTrait;
use sea_orm::DatabaseConnection;
use serde_json::Value;
use tower::ServiceExt;

pub const WALLET: &str = "0x430d5dde0cd48989737a95b4c46e1801a9a08531";
/// Holds 15 NFTs of 10 collections.
pub const COLLECTOR: &str = "0x34db35639eafe2712ae1f69dfa298b06a5c25053";
pub const USDT: &str = "0xdac17f958d2ee523a2206206994597c13d831ec7";

/// A fresh database with the sample, a key, and the router over it. Removes its files on drop.
pub struct App {
    router: Router,
    /// A valid API key.
    pub key: String,
    /// The database, to arrange special cases.
    pub db: DatabaseConnection,
    path: PathBuf,
}

impl Drop for App {
    fn drop(&mut self) {
        for suffix in ["", "-wal", "-shm"] {
            let mut p = self.path.clone().into_os_string();
            p.push(suffix);
            let _ = std::fs::remove_file(p);
        }
    }
}

pub async fn app() -> App {
    static N: AtomicU32 = AtomicU32::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let path = std::env::temp_dir().join(format!(
        "tokenql-rest-{}-{}-{nanos}.db",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    ));
    let url = format!("sqlite://{}?mode=rwc", path.display());
    let db = tokenql::store::database::connect(&url, 4).await.unwrap();
    migration::Migrator::up(&db, None).await.unwrap();
    tokenql::demo::load_into(&db).await.unwrap();
    let (_, key) = tokenql::keys::create(&db, "t").await.unwrap();
    let state = tokenql::AppState::new(db.clone(), Default::default())
        .await
        .unwrap();
    App {
        router: tokenql::server::router(state),
        key,
        db,
        path,
    }
}

/// An answer: status, headers, parsed JSON body.
pub struct Answer {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Value,
    /// The body as sent, to check key order.
    pub raw: String,
}

impl App {
    pub async fn send(&self, req: Request<Body>) -> Answer {
        let res = self.router.clone().oneshot(req).await.unwrap();
        let status = res.status();
        let headers = res.headers().clone();
        let bytes = res.into_body().collect().await.unwrap().to_bytes();
        let body = serde_json::from_slice(&bytes)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&bytes)));
        Answer {
            status,
            headers,
            body,
            raw: String::from_utf8_lossy(&bytes).into_owned(),
        }
    }

    pub async fn get(&self, uri: &str) -> Answer {
        let req = Request::get(uri)
            .header("X-API-Key", &self.key)
            .body(Body::empty())
            .unwrap();
        self.send(req).await
    }

    /// GET, expecting 200.
    pub async fn ok(&self, uri: &str) -> Value {
        let a = self.get(uri).await;
        assert_eq!(a.status, StatusCode::OK, "{uri}: {}", a.body);
        a.body
    }
}

/// The keys of an object, sorted (serde_json's map is ordered by key).
pub fn keys(v: &Value) -> Vec<&str> {
    v.as_object().unwrap().keys().map(String::as_str).collect()
}

pub fn sorted<'a>(k: &[&'a str]) -> Vec<&'a str> {
    let mut v = k.to_vec();
    v.sort_unstable();
    v
}

/// The first occurrences of `"key":` in the raw body come in this order.
pub fn assert_order(raw: &str, keys: &[&str]) {
    let pos: Vec<usize> = keys
        .iter()
        .map(|k| {
            raw.find(&format!("\"{k}\":"))
                .unwrap_or_else(|| panic!("{k} in {raw}"))
        })
        .collect();
    assert!(pos.windows(2).all(|w| w[0] < w[1]), "{keys:?} in {raw}");
}

pub const NFT_FIELDS: &[&str] = &[
    "token_address",
    "token_id",
    "contract_type",
    "owner_of",
    "block_number",
    "block_number_minted",
    "token_uri",
    "metadata",
    "normalized_metadata",
    "media",
    "amount",
    "name",
    "symbol",
    "token_hash",
    "last_token_uri_sync",
    "last_metadata_sync",
    "minter_address",
    "possible_spam",
    "verified_collection",
];

pub const TRANSFER_FIELDS: &[&str] = &[
    "token_name",
    "token_symbol",
    "token_logo",
    "token_decimals",
    "contract_address",
    "transaction_hash",
    "transaction_index",
    "log_index",
    "block_timestamp",
    "block_number",
    "block_hash",
    "from_wallet",
    "from_wallet_label",
    "to_wallet",
    "to_wallet_label",
    "value",
    "value_decimal",
    "possible_spam",
    "verified_collection",
];

/// Every field is present; booleans are booleans, objects only where allowed, the rest a
/// non-empty string or null.
pub fn check_record(r: &Value, fields: &[&str], objects: &[&str]) {
    assert_eq!(keys(r), sorted(fields));
    for f in fields {
        let v = &r[*f];
        match *f {
            "possible_spam" | "verified_collection" => assert!(v.is_boolean(), "{f}: {v}"),
            _ if objects.contains(f) => assert!(v.is_object() || v.is_null(), "{f}: {v}"),
            _ => assert!(
                v.is_null() || v.as_str().is_some_and(|s| !s.is_empty()),
                "{f}: {v}"
            ),
        }
    }
}

pub fn is_digits(v: &Value) -> bool {
    v.as_str()
        .is_some_and(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
}

pub fn is_lower_address(v: &Value) -> bool {
    v.as_str().is_some_and(|s| {
        s.len() == 42 && s.starts_with("0x") && s[2..].bytes().all(|b| b.is_ascii_hexdigit())
    }) && v.as_str() == v.as_str().map(str::to_ascii_lowercase).as_deref()
}
