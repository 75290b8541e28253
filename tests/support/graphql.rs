//! In-process harness of the GraphQL tests: a fresh SQLite file per test with the bundled demo
//! sample, an API key, and a counter of executed SQL statements.
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use migration::MigratorTrait;
use sea_orm::DatabaseConnection;
use serde_json::{json, Value};
use tower::ServiceExt;

use tokenql::AppState;

/// The demo wallet holding 38 NFTs.
pub const NFT_WALLET: &str = "0x430d5dde0cd48989737a95b4c46e1801a9a08531";
/// USDT on mainnet.
pub const USDT: &str = "0xdac17f958d2ee523a2206206994597c13d831ec7";
/// Transfers in the demo sample.
pub const DEMO_TRANSFERS: usize = 1205;
/// NFTs held by [`NFT_WALLET`].
pub const WALLET_NFTS: usize = 38;

pub struct Env {
    pub state: AppState,
    pub db: DatabaseConnection,
    /// A valid API key.
    pub key: String,
    /// SQL statements executed on `db` so far (reset it before measuring).
    pub statements: Arc<AtomicUsize>,
    /// The one executor every request of the test goes through (as in a server: documents
    /// it has parsed are kept).
    executor: tokenql::graphql::Executor,
    path: PathBuf,
}

impl Drop for Env {
    fn drop(&mut self) {
        for suffix in ["", "-wal", "-shm"] {
            let mut p = self.path.clone().into_os_string();
            p.push(suffix);
            let _ = std::fs::remove_file(p);
        }
    }
}

/// A migrated database with the demo sample, and the application state over it.
pub async fn setup() -> Env {
    static N: AtomicU64 = AtomicU64::new(0);
    let path = std::env::temp_dir().join(format!(
        "tokenql-graphql-{}-{}-{}.sqlite",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default()
    ));
    let url = format!("sqlite://{}?mode=rwc", path.display());
    let mut db = tokenql::store::database::connect(&url, 4)
        .await
        .expect("connect");
    let statements = Arc::new(AtomicUsize::new(0));
    let counter = statements.clone();
    db.set_metric_callback(move |_| {
        counter.fetch_add(1, Ordering::SeqCst);
    });
    migration::Migrator::up(&db, None).await.expect("migrate");
    tokenql::demo::load_into(&db).await.expect("demo data");
    let (_, key) = tokenql::keys::create(&db, "t").await.expect("key");
    let state = AppState::new(db.clone(), Default::default())
        .await
        .expect("state");
    let executor = tokenql::graphql::schema(state.service.clone());
    Env {
        state,
        executor,
        db,
        key,
        statements,
        path,
    }
}

impl Env {
    /// Executes in process (no HTTP, no key) and returns the response as JSON.
    pub async fn exec(&self, query: &str, variables: Value) -> Value {
        let req = async_graphql::Request::new(query)
            .variables(async_graphql::Variables::from_json(variables));
        let resp = self.executor.execute(req).await;
        serde_json::to_value(&resp).expect("response serializes")
    }

    /// Executes on async-graphql's own executor of the same schema (none of tokenql's finishing)
    /// and returns the response as JSON.
    pub async fn exec_plain(&self, query: &str) -> Value {
        let resp = self.executor.inner().execute(query).await;
        serde_json::to_value(&resp).expect("response serializes")
    }

    /// Labels `wallets` (addresses as the API writes them) on Ethereum, as an import would.
    pub async fn label(&self, wallets: &[&str], label: &str) {
        let labels: Vec<_> = wallets
            .iter()
            .map(|w| {
                let a = tokenql::types::Address::parse(w).expect("an address");
                (a, label.to_string())
            })
            .collect();
        tokenql::store::labels::upsert_labels(&self.db, tokenql::types::Chain::ETH, &labels)
            .await
            .expect("labels written");
    }

    /// Executes and returns `data`, failing on any error.
    pub async fn data(&self, query: &str, variables: Value) -> Value {
        let v = self.exec(query, variables).await;
        assert!(v.get("errors").is_none(), "unexpected errors: {v:#}");
        v["data"].clone()
    }

    /// Sends a request through the whole router.
    pub async fn http(&self, req: Request<Body>) -> (StatusCode, String) {
        let resp = tokenql::server::router(self.state.clone())
            .oneshot(req)
            .await
            .expect("router is infallible");
        let status = resp.status();
        let bytes = resp.into_body().collect().await.expect("body").to_bytes();
        (status, String::from_utf8_lossy(&bytes).into_owned())
    }

    /// `POST /graphql` with `key` (if any).
    pub async fn post(
        &self,
        key: Option<&str>,
        query: &str,
        variables: Value,
    ) -> (StatusCode, Value) {
        let mut b = Request::post("/graphql").header("content-type", "application/json");
        if let Some(k) = key {
            b = b.header("X-API-Key", k);
        }
        let body = json!({ "query": query, "variables": variables }).to_string();
        let (status, text) = self.http(b.body(Body::from(body)).expect("request")).await;
        let v = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
        (status, v)
    }
}

/// The single error of a response: (code, message).
pub fn only_error(v: &Value) -> (String, String) {
    let errors = v["errors"]
        .as_array()
        .unwrap_or_else(|| panic!("no errors: {v:#}"));
    assert_eq!(errors.len(), 1, "{v:#}");
    (
        errors[0]["extensions"]["code"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        errors[0]["message"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
    )
}

/// Every field of `Erc20Transfer`.
pub const TRANSFER_FIELDS: &str = "contractAddress fromWallet toWallet fromWalletLabel \
    toWalletLabel value valueDecimal blockNumber blockHash blockTimestamp transactionHash \
    transactionIndex logIndex tokenName tokenSymbol tokenLogo tokenDecimals possibleSpam \
    verifiedCollection";

/// Every field of `Nft`.
pub const NFT_FIELDS: &str = "tokenAddress tokenId contractType ownerOf amount blockNumber \
    blockNumberMinted tokenUri metadata name symbol tokenHash minterAddress possibleSpam \
    verifiedCollection lastTokenUriSync lastMetadataSync";
