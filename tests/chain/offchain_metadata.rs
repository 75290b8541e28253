//! Off-chain metadata, black-box, on every backend: a real chain (anvil with the compiled
//! OpenZeppelin contracts), the indexer and the off-chain workers in process, and the local web
//! server of `tests/support/offchain.rs` standing in for the web, IPFS and Arweave. Also the fetcher
//! against that server (backend-independent).

use crate::support::anvil;
use crate::support::common;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use crate::support::indexer::Indexer;
use crate::support::offchain::*;
use anvil::*;
use base64::Engine;
use common::{Backend, TestApp};
use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter};
use serde_json::{json, Value};
use tokenql::entity::nft_token;
use tokenql::offchain::fetch::{FetchError, Fetcher};
use tokenql::offchain::OffchainConfig;
use tokio::sync::watch;
use tokio::task::JoinHandle;

// ---------------------------------------------------------------------------------------------
// The rig: server, chain, app, indexer, workers.

/// The fetch timeout of these tests; the server's slow routes sleep longer.
const TIMEOUT: Duration = Duration::from_secs(1);
/// `--max-metadata-bytes` of these tests.
const MAX_METADATA: u64 = 64 * 1024;

fn config(server: &OffchainServer, media_dir: &std::path::Path) -> OffchainConfig {
    OffchainConfig {
        // A dead gateway first: transient failures move on to the next one.
        ipfs_gateways: vec!["http://127.0.0.1:9".into(), server.base_url().to_string()],
        arweave_gateway: format!("{}/ar", server.base_url()),
        timeout: TIMEOUT,
        max_metadata_bytes: MAX_METADATA,
        concurrency: 8,
        per_host: 4,
        poll_interval: Duration::from_millis(50),
        media_dir: media_dir.to_path_buf(),
        ..OffchainConfig::default()
    }
}

pub(crate) struct Rig {
    pub(crate) server: OffchainServer,
    pub(crate) chain: Anvil,
    pub(crate) app: TestApp,
    media_dir: std::path::PathBuf,
    indexer: Option<Indexer>,
    stop: watch::Sender<bool>,
    workers: Vec<JoinHandle<()>>,
}

impl Rig {
    pub(crate) async fn new(backend: Backend) -> Rig {
        let server = OffchainServer::start().await;
        server.set_slow(Duration::from_secs(3));
        let chain = Anvil::start(5, &[]).await;
        let app = common::spawn(backend).await;
        let mut r = [0u8; 8];
        getrandom::fill(&mut r).expect("random");
        let media_dir = std::env::temp_dir().join(format!("tq_media_{}", u64::from_le_bytes(r)));
        let (stop, _) = watch::channel(false);
        Rig {
            server,
            chain,
            app,
            media_dir,
            indexer: None,
            stop,
            workers: Vec::new(),
        }
    }

    /// Starts the indexer and the off-chain workers (after the contracts are deployed).
    pub(crate) fn start(&mut self) {
        self.indexer = Some(Indexer::start(&self.app.db, &self.chain.url, |_| {}));
        self.workers = tokenql::offchain::spawn(
            self.app.db.clone(),
            config(&self.server, &self.media_dir),
            self.stop.subscribe(),
        );
        assert!(
            !self.workers.is_empty(),
            "the workers are enabled by default"
        );
    }

    pub(crate) async fn finish(mut self) {
        if let Some(i) = self.indexer.take() {
            i.stop().await.expect("indexer");
        }
        self.stop.send_replace(true);
        for w in self.workers.drain(..) {
            tokio::time::timeout(Duration::from_secs(10), w)
                .await
                .expect("workers stop within 10 s")
                .expect("worker task");
        }
        let _ = std::fs::remove_dir_all(&self.media_dir);
        self.app.cleanup().await;
    }
}

/// A test's contract address, parsed.
fn address(a: &str) -> tokenql::types::Address {
    tokenql::types::Address::parse(a).expect("a valid address")
}

fn db_id(id: u64) -> String {
    format!("{id:064x}")
}

/// Waits until `cond` holds for the token, returning it.
pub(crate) async fn wait_token(
    db: &DatabaseConnection,
    contract: &str,
    id: u64,
    what: &str,
    cond: impl Fn(&nft_token::Model) -> bool,
) -> nft_token::Model {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let t = nft_token::Entity::find_by_id((
            1i64,
            address(contract),
            tokenql::types::Uint256::from_u64(id),
        ))
        .one(db)
        .await
        .expect("nft_tokens");
        if let Some(t) = t {
            if cond(&t) {
                return t;
            }
            assert!(Instant::now() < deadline, "{what}: token #{id}: {t:?}");
        }
        assert!(
            Instant::now() < deadline,
            "{what}: token #{id} never stored"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Makes a scheduled retry due now (time travel: the schedule itself is checked separately).
async fn due_now(db: &DatabaseConnection, contract: &str, id: u64) {
    nft_token::Entity::update_many()
        .col_expr(
            nft_token::Column::MetadataNextAt,
            Expr::value(tokenql::store::now_ms()),
        )
        .filter(nft_token::Column::ChainId.eq(1i64))
        .filter(
            nft_token::Column::ContractAddress
                .eq(tokenql::types::Address::parse(contract).expect("an address")),
        )
        .filter(nft_token::Column::TokenId.eq(tokenql::types::Uint256::from_u64(id)))
        .exec(db)
        .await
        .expect("update");
}

fn parsed(t: &nft_token::Model) -> Option<Value> {
    t.metadata
        .as_deref()
        .map(|m| serde_json::from_str(m).expect("stored metadata is JSON"))
}

/// REST records of `owner` with `normalizeMetadata=true`, keyed by (contract, decimal id).
async fn rest_records(app: &TestApp, owner: &str) -> (Duration, BTreeMap<(String, String), Value>) {
    let t = Instant::now();
    let (status, _, body) = app
        .get_rest(&format!(
            "/api/v2/{owner}/nft?chain=0x1&normalizeMetadata=true&limit=100"
        ))
        .await;
    let took = t.elapsed();
    assert_eq!(status, 200, "{body}");
    let recs = body["result"]
        .as_array()
        .expect("result")
        .iter()
        .map(|r| {
            let k = (
                r["token_address"].as_str().expect("address").to_string(),
                r["token_id"].as_str().expect("id").to_string(),
            );
            (k, r.clone())
        })
        .collect();
    (took, recs)
}

/// GraphQL nodes of `owner` (tokenAddress, tokenId, tokenUri, metadata), keyed likewise.
async fn gql_records(app: &TestApp, owner: &str) -> (Duration, BTreeMap<(String, String), Value>) {
    let q = format!(
        "{{ nftsByWallet(address: \"{owner}\", chain: \"0x1\", first: 100) {{ edges {{ node {{ \
         tokenAddress tokenId tokenUri metadata }} }} }} }}"
    );
    let t = Instant::now();
    let data = app.graphql_ok(&q, Value::Null).await;
    let took = t.elapsed();
    let recs = data["nftsByWallet"]["edges"]
        .as_array()
        .expect("edges")
        .iter()
        .map(|e| {
            let n = &e["node"];
            let k = (
                n["tokenAddress"].as_str().expect("address").to_string(),
                n["tokenId"].as_str().expect("id").to_string(),
            );
            (k, n.clone())
        })
        .collect();
    (took, recs)
}

// ---------------------------------------------------------------------------------------------
// Scenarios on every backend.

crate::backend_tests!(
    every_outcome_is_stored_and_rescheduled,
    transports_normalize_identically,
    two_processes_never_fetch_a_token_twice,
    the_api_answers_without_fetching
);

/// The APIs never wait on a fetch, shown without a clock: with no off-chain worker running at
/// all, tokens whose documents were never fetched are answered (metadata `null`, media
/// `processing`) and the document server is never asked. An API that fetched, or waited for a
/// fetch, would ask it or hang (the test client gives up after 60 s).
async fn the_api_answers_without_fetching(backend: Backend) {
    let mut rig = Rig::new(backend).await;
    let base = rig.server.base_url().to_string();
    let owner = rig.chain.accounts[0].clone();
    let wallet = rig.chain.accounts[3].clone();
    let nft = rig
        .chain
        .deploy("TestNFT", nft_ctor("Docs", "DOC", &format!("{base}/doc/")))
        .await;
    let tx = rig
        .chain
        .send(
            &owner,
            &nft,
            calldata(mintManyCall {
                to: addr(&wallet),
                start: u(1),
                n: u(5),
            }),
        )
        .await;
    rig.chain.wait_mined(std::slice::from_ref(&tx)).await;
    // The indexer only: no worker in this process, nor in any other.
    rig.indexer = Some(Indexer::start(&rig.app.db, &rig.chain.url, |_| {}));
    for id in 1..=5 {
        wait_token(&rig.app.db, &nft, id, "indexed", |_| true).await;
    }
    let (status, _, body) = rig
        .app
        .get_rest(&format!(
            "/api/v2/{wallet}/nft?chain=0x1&normalizeMetadata=true&media_items=true"
        ))
        .await;
    assert_eq!(status, 200, "{body}");
    let records = body["result"].as_array().cloned().unwrap_or_default();
    assert_eq!(records.len(), 5, "{body}");
    assert!(records.iter().all(|r| r["metadata"].is_null()), "{body}");
    let (took, nodes) = gql_records(&rig.app, &wallet).await;
    assert_eq!(nodes.len(), 5, "GraphQL answered in {took:?}");
    assert!(nodes.values().all(|n| n["metadata"].is_null()), "{nodes:?}");
    assert_eq!(
        rig.server.total_hits(),
        0,
        "{backend:?}: an API request fetched from the document server"
    );
    for id in 1..=5 {
        let t = wait_token(&rig.app.db, &nft, id, "unfetched", |_| true).await;
        assert_eq!(
            t.metadata_status, None,
            "{backend:?}: token #{id} was fetched: {t:?}"
        );
    }
    rig.finish().await;
}

/// One TestNFT serving every case of the test server by token id (plus a document over the
/// size cap as #19) and one ERC1155 with a URI we cannot read: each ends in its documented
/// status; failures are rescheduled; the API answers at once while fetches hang; a fixed
/// failure is fetched on retry; a failed refresh keeps the good metadata.
async fn every_outcome_is_stored_and_rescheduled(backend: Backend) {
    let mut rig = Rig::new(backend).await;
    let base = rig.server.base_url().to_string();
    let owner = rig.chain.accounts[0].clone();
    let wallet = rig.chain.accounts[1].clone();
    let huge_id = CASES.len() as u64 + 1;
    let huge = json!({"name": "huge", "description": "x".repeat(MAX_METADATA as usize + 10)});
    rig.server.put(
        &format!("/meta/{huge_id}"),
        "application/json",
        huge.to_string(),
    );

    let nft = rig
        .chain
        .deploy(
            "TestNFT",
            nft_ctor("Cases", "CASE", &format!("{base}/meta/")),
        )
        .await;
    let bad = rig
        .chain
        .deploy("TestMulti", multi_ctor("javascript:alert(1)"))
        .await;
    // Five per transaction: `send` gives each 500k gas.
    for start in (1..=huge_id).step_by(5) {
        let tx = rig
            .chain
            .send(
                &owner,
                &nft,
                calldata(mintManyCall {
                    to: addr(&wallet),
                    start: u(start),
                    n: u(5.min(huge_id + 1 - start)),
                }),
            )
            .await;
        rig.chain.wait_mined(std::slice::from_ref(&tx)).await;
    }
    let tx = rig
        .chain
        .send(
            &owner,
            &bad,
            calldata(mintBatchCall {
                to: addr(&wallet),
                ids: vec![u(1)],
                amounts: vec![u(1)],
            }),
        )
        .await;
    rig.chain.wait_mined(std::slice::from_ref(&tx)).await;
    rig.start();

    // While the slow document hangs (up to the 1 s timeout), both APIs answer.
    let slowdoc = format!("/meta/{}", token_id("slowdoc"));
    let deadline = Instant::now() + Duration::from_secs(60);
    while rig.server.hits(&slowdoc) == 0 {
        if Instant::now() >= deadline {
            let rows = nft_token::Entity::find()
                .all(&rig.app.db)
                .await
                .expect("rows");
            panic!("the slow document was never requested: {rows:#?}");
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // (That the APIs never wait on a fetch is shown without a clock by
    // `the_api_answers_without_fetching`; their latency is measured in benches/.)
    let (_, recs) = rest_records(&rig.app, &wallet).await;
    assert_eq!(recs.len(), huge_id as usize + 1);
    let (_, nodes) = gql_records(&rig.app, &wallet).await;
    assert_eq!(nodes.len(), huge_id as usize + 1);

    // Every token ends in its documented status.
    let expected: Vec<(u64, &str, &str)> = CASES
        .iter()
        .map(|c| {
            let status = match *c {
                "invalid" | "array" => "invalid_json",
                "notfound" => "not_found",
                "slowdoc" | "flaky" => "unavailable",
                "loopdoc" => "redirects",
                _ => "ok",
            };
            (token_id(c), *c, status)
        })
        .chain([(huge_id, "huge", "too_large")])
        .collect();
    let now = tokenql::store::now_ms();
    for (id, case, status) in &expected {
        let t = wait_token(&rig.app.db, &nft, *id, case, |t| {
            t.metadata_status.is_some()
        })
        .await;
        assert_eq!(t.metadata_status.as_deref(), Some(*status), "{case}: {t:?}");
        if *status == "ok" {
            assert_eq!(parsed(&t), Some(document(&base, case)), "{case}");
            assert_eq!(t.metadata_attempts, 0, "{case}");
            assert_eq!(t.metadata_next_at, None, "{case}");
            assert_eq!(t.metadata_error, None, "{case}");
            assert!(
                t.last_metadata_sync.is_some_and(|s| s >= now - 120_000),
                "{case}"
            );
        } else {
            assert_eq!(t.metadata, None, "{case}");
            assert_eq!(t.metadata_attempts, 1, "{case}");
            assert!(
                t.metadata_error.as_deref().is_some_and(|e| !e.is_empty()),
                "{case}"
            );
            let next = t.metadata_next_at.expect("rescheduled");
            if *status == "unavailable" {
                // 1 min (+ up to 10 % jitter) after the failure, which happened around `now`.
                assert!(
                    next >= now + 45_000 && next <= now + 100_000,
                    "{case}: {next} vs {now}"
                );
            } else {
                assert!(next >= now + 23 * 3_600_000, "{case}: {next} vs {now}");
            }
        }
    }
    let t = wait_token(&rig.app.db, &bad, 1, "javascript:", |t| {
        t.metadata_status.is_some()
    })
    .await;
    assert_eq!(t.metadata_status.as_deref(), Some("invalid_uri"), "{t:?}");
    assert!(t
        .metadata_next_at
        .is_some_and(|n| n >= now + 23 * 3_600_000));

    // The APIs show what is stored.
    let (_, recs) = rest_records(&rig.app, &wallet).await;
    let (_, nodes) = gql_records(&rig.app, &wallet).await;
    for (id, case, status) in &expected {
        let key = (nft.clone(), id.to_string());
        let r = &recs[&key];
        let n = &nodes[&key];
        assert_eq!(r["token_uri"], json!(format!("{base}/meta/{id}")), "{case}");
        assert_eq!(n["tokenUri"], r["token_uri"], "{case}");
        if *status == "ok" {
            let m: Value =
                serde_json::from_str(r["metadata"].as_str().expect("metadata")).expect("JSON");
            assert_eq!(m, document(&base, case), "{case}");
            assert_eq!(n["metadata"], r["metadata"], "{case}");
            let norm = &r["normalized_metadata"];
            assert_eq!(norm["name"], json!(m["name"]), "{case}");
            assert_eq!(norm["external_link"], m["external_url"], "{case}");
            assert_eq!(
                norm["attributes"].as_array().map(Vec::len),
                Some(3),
                "{case}"
            );
        } else {
            assert_eq!(r["metadata"], Value::Null, "{case}");
            assert_eq!(n["metadata"], Value::Null, "{case}");
            assert_eq!(r["normalized_metadata"]["name"], Value::Null, "{case}");
        }
    }

    // Fixed upstream: the retry (made due now) succeeds and resets the failure state.
    let flaky = token_id("flaky");
    rig.server.set_flaky(false);
    due_now(&rig.app.db, &nft, flaky).await;
    let t = wait_token(&rig.app.db, &nft, flaky, "flaky retry", |t| {
        t.metadata_status.as_deref() == Some("ok")
    })
    .await;
    assert_eq!(parsed(&t), Some(document(&base, "flaky")));
    assert_eq!(
        (t.metadata_attempts, t.metadata_error, t.metadata_next_at),
        (0, None, None)
    );
    assert_eq!(rig.server.hits(&format!("/meta/{flaky}")), 2);

    // A refresh that fails keeps the metadata fetched before.
    let png = token_id("png");
    rig.server.put_status(&format!("/meta/{png}"), 503);
    due_now(&rig.app.db, &nft, png).await;
    let t = wait_token(&rig.app.db, &nft, png, "failed refresh", |t| {
        t.metadata_status.as_deref() == Some("unavailable")
    })
    .await;
    assert_eq!(t.metadata_attempts, 1);
    assert_eq!(parsed(&t), Some(document(&base, "png")));
    let (_, recs) = rest_records(&rig.app, &wallet).await;
    assert!(recs[&(nft.clone(), png.to_string())]["metadata"].is_string());

    rig.finish().await;
}

/// The same document through `http://`, `ipfs://` (a dead gateway first), `ar://`, `data:`
/// base64, plain and `;utf8` normalizes identically; ERC1155 `{id}` is the 64-hex id.
async fn transports_normalize_identically(backend: Backend) {
    let mut rig = Rig::new(backend).await;
    let base = rig.server.base_url().to_string();
    let owner = rig.chain.accounts[0].clone();
    let wallet = rig.chain.accounts[2].clone();
    let doc = document(&base, "png").to_string();
    let b64 = base64::engine::general_purpose::STANDARD.encode(&doc);
    let pct: String = form_urlencoded::byte_serialize(doc.as_bytes())
        .collect::<String>()
        .replace('+', "%20");
    let uris = [
        format!("{base}/meta/png"),
        "ipfs://QmTestCid/meta/png".to_string(),
        "ipfs://ipfs/QmTestCid/meta/png".to_string(),
        "ar://png".to_string(),
        format!("data:application/json;base64,{b64}"),
        format!("data:application/json,{pct}"),
        format!("data:application/json;utf8,{doc}"),
    ];
    let mut contracts = Vec::new();
    for uri in &uris {
        let c = rig.chain.deploy("TestMulti", multi_ctor(uri)).await;
        contracts.push(c);
    }
    let multi = rig
        .chain
        .deploy(
            "TestMulti",
            multi_ctor(&format!("{base}/meta1155/{{id}}.json")),
        )
        .await;
    let ids_1155 = [7u64, 0xabcdef];
    for c in &contracts {
        let tx = rig
            .chain
            .send(
                &owner,
                c,
                calldata(mintBatchCall {
                    to: addr(&wallet),
                    ids: vec![u(1)],
                    amounts: vec![u(2)],
                }),
            )
            .await;
        rig.chain.wait_mined(std::slice::from_ref(&tx)).await;
    }
    let tx = rig
        .chain
        .send(
            &owner,
            &multi,
            calldata(mintBatchCall {
                to: addr(&wallet),
                ids: ids_1155.iter().map(|i| u(*i)).collect(),
                amounts: vec![u(1), u(1)],
            }),
        )
        .await;
    rig.chain.wait_mined(std::slice::from_ref(&tx)).await;
    rig.start();

    for (c, uri) in contracts.iter().zip(&uris) {
        let t = wait_token(&rig.app.db, c, 1, uri, |t| t.metadata_status.is_some()).await;
        assert_eq!(t.metadata_status.as_deref(), Some("ok"), "{uri}: {t:?}");
        assert_eq!(parsed(&t), Some(document(&base, "png")), "{uri}");
    }
    for id in ids_1155 {
        let t = wait_token(&rig.app.db, &multi, id, "erc1155", |t| {
            t.metadata_status.is_some()
        })
        .await;
        assert_eq!(t.metadata_status.as_deref(), Some("ok"), "{t:?}");
        assert_eq!(parsed(&t), Some(document_1155(&base, &db_id(id))));
    }
    assert_eq!(rig.server.hits(&format!("/meta1155/{}.json", db_id(7))), 1);

    let (_, recs) = rest_records(&rig.app, &wallet).await;
    let norms: Vec<&Value> = contracts
        .iter()
        .map(|c| &recs[&(c.clone(), "1".to_string())]["normalized_metadata"])
        .collect();
    assert_eq!(norms[0]["name"], json!("Case png"));
    assert_eq!(norms[0]["image"], json!(format!("{base}/img/png")));
    for (n, uri) in norms.iter().zip(&uris) {
        assert_eq!(*n, norms[0], "{uri}");
    }
    let r = &recs[&(multi.clone(), "7".to_string())];
    assert_eq!(
        r["normalized_metadata"]["name"],
        json!(format!("Multi {}", db_id(7)))
    );
    // ERC1155 `properties` become attributes.
    assert!(r["normalized_metadata"]["attributes"]
        .as_array()
        .is_some_and(|a| !a.is_empty()));

    rig.finish().await;
}

/// Two sets of workers (as two processes would run) on one database: every token is fetched
/// exactly once.
async fn two_processes_never_fetch_a_token_twice(backend: Backend) {
    let mut rig = Rig::new(backend).await;
    let base = rig.server.base_url().to_string();
    // Each document takes a while: both processes' fetches overlap.
    rig.server.set_doc_delay(Duration::from_millis(150));
    let owner = rig.chain.accounts[0].clone();
    let wallet = rig.chain.accounts[3].clone();
    // The second process: the `tokenql` binary serving on the same database, with its own
    // off-chain workers (at most 3 fetches to one host), started before there is work.
    let media = rig.media_dir.join("second");
    let mut second = Killed(
        std::process::Command::new(common::binary::BIN)
            .args(["serve", "--bind", "127.0.0.1:0", "--fetch-concurrency", "3"])
            .args(["--fetch-per-host", "3", "--fetch-timeout-secs", "5"])
            .arg("--media-dir")
            .arg(&media)
            .env("DATABASE_URL", &rig.app.db_url)
            .env("RUST_LOG", "warn")
            .spawn()
            .expect("start a second tokenql process"),
    );
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(
        second
            .0
            .try_wait()
            .expect("poll the second process")
            .is_none(),
        "the second process exited early"
    );
    let nft = rig
        .chain
        .deploy("TestNFT", nft_ctor("Docs", "DOC", &format!("{base}/doc/")))
        .await;
    const N: u64 = 60;
    for start in (1..=N).step_by(5) {
        let tx = rig
            .chain
            .send(
                &owner,
                &nft,
                calldata(mintManyCall {
                    to: addr(&wallet),
                    start: u(start),
                    n: u(5),
                }),
            )
            .await;
        rig.chain.wait_mined(std::slice::from_ref(&tx)).await;
    }
    // This process: its indexer and workers (at most 4 fetches to one host).
    rig.start();
    for id in 1..=N {
        let t = wait_token(&rig.app.db, &nft, id, "doc", |t| {
            t.metadata_status.is_some()
        })
        .await;
        assert_eq!(t.metadata_status.as_deref(), Some("ok"), "{t:?}");
        assert_eq!(parsed(&t), Some(json!({"name": format!("doc {id}")})));
    }
    for id in 1..=N {
        assert_eq!(rig.server.hits(&format!("/doc/{id}")), 1, "token #{id}");
    }
    // More fetches were in flight at once than either process may make to one host: both
    // processes fetched, and still none twice.
    assert!(
        rig.server.max_in_flight() > 4,
        "{backend:?}: at most {} documents in flight at once: the second process did not fetch",
        rig.server.max_in_flight()
    );
    drop(second);
    rig.finish().await;
}

/// A child process, killed when dropped (a failing assertion included).
struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

// ---------------------------------------------------------------------------------------------
// The fetcher against the test server (no database).

fn fetcher(server: &OffchainServer, tweak: impl FnOnce(&mut OffchainConfig)) -> Fetcher {
    let mut c = config(server, &std::env::temp_dir());
    tweak(&mut c);
    Fetcher::new(c)
}

#[tokio::test]
async fn fetcher_reads_http_and_follows_redirects() {
    let s = OffchainServer::start().await;
    let f = fetcher(&s, |_| {});
    let got = f
        .get(&s.url("/meta/png"), MAX_METADATA)
        .await
        .expect("png doc");
    assert_eq!(got.content_type.as_deref(), Some("application/json"));
    assert_eq!(got.final_url, s.url("/meta/png"));
    let v: Value = serde_json::from_slice(&got.bytes).expect("json");
    assert_eq!(v, document(s.base_url(), "png"));
    // One relative 302.
    let got = f
        .get(&s.url("/meta/redirect"), MAX_METADATA)
        .await
        .expect("redirect");
    assert_eq!(got.final_url, s.url("/meta/png"));
    // Loops and chains.
    assert_eq!(
        f.get(&s.url("/meta/loopdoc"), MAX_METADATA).await.err(),
        Some(FetchError::Redirects)
    );
    assert_eq!(
        f.get(&s.url("/img/loop"), 1 << 20).await.err(),
        Some(FetchError::Redirects)
    );
    let f0 = fetcher(&s, |c| c.max_redirects = 0);
    assert_eq!(
        f0.get(&s.url("/meta/redirect"), MAX_METADATA).await.err(),
        Some(FetchError::Redirects)
    );
    // Statuses.
    assert_eq!(
        f.get(&s.url("/img/missing"), 1 << 20).await.err(),
        Some(FetchError::NotFound(404))
    );
    s.put_status("/gone", 410);
    assert_eq!(
        f.get(&s.url("/gone"), 1 << 20).await.err(),
        Some(FetchError::NotFound(410))
    );
    for code in [429u16, 500, 503] {
        s.put_status("/busy", code);
        let e = f.get(&s.url("/busy"), 1 << 20).await.err();
        assert!(
            e.as_ref().is_some_and(FetchError::is_transient),
            "{code}: {e:?}"
        );
    }
    let img = f.get(&s.url("/img/png"), 1 << 20).await.expect("png");
    assert_eq!(img.bytes, png_bytes());
    assert_eq!(img.content_type.as_deref(), Some("image/png"));
    // Nothing listens there: transient.
    let e = f.get("http://127.0.0.1:9/x", 1 << 20).await.err();
    assert!(e.as_ref().is_some_and(FetchError::is_transient), "{e:?}");
    // Not ours to read.
    for uri in [
        "",
        "not a url",
        "javascript:alert(1)",
        "file:///etc/passwd",
        "/meta/png",
    ] {
        assert!(
            matches!(f.get(uri, 1 << 20).await, Err(FetchError::InvalidUrl(_))),
            "{uri}"
        );
    }
}

#[tokio::test]
async fn fetcher_caps_size_and_time() {
    let s = OffchainServer::start().await;
    s.set_slow(Duration::from_secs(5));
    let f = fetcher(&s, |_| {});
    // Far less than the 50 MB is ever produced: the server stops at the socket buffers once
    // the client stops reading.
    let little = 20 * 1024 * 1024;
    // Content-Length over the cap: refused before reading.
    assert_eq!(
        f.get(&s.url("/img/big"), 1 << 20).await.err(),
        Some(FetchError::TooLarge(1 << 20))
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    let after_first = s.streamed_bytes();
    assert!(after_first < little, "{after_first} bytes streamed");
    // No Content-Length: reading stops past the cap.
    assert_eq!(
        f.get(&s.url("/img/big-chunked"), 1 << 20).await.err(),
        Some(FetchError::TooLarge(1 << 20))
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    let second = s.streamed_bytes() - after_first;
    assert!(
        (1 << 20..little).contains(&second),
        "{second} bytes streamed"
    );
    // Exactly at the cap is fine.
    let n = png_bytes().len() as u64;
    assert!(f.get(&s.url("/img/png"), n).await.is_ok());
    assert_eq!(
        f.get(&s.url("/img/png"), n - 1).await.err(),
        Some(FetchError::TooLarge(n - 1))
    );
    // The timeout (1 s; the server would answer after 5).
    let t = Instant::now();
    let e = f.get(&s.url("/img/slow"), 1 << 20).await.err();
    assert!(e.as_ref().is_some_and(FetchError::is_transient), "{e:?}");
    assert!(t.elapsed() < Duration::from_secs(4), "{:?}", t.elapsed());
}

#[tokio::test]
async fn fetcher_uses_gateways_and_data_uris() {
    let s = OffchainServer::start().await;
    let f = fetcher(&s, |_| {});
    let png = document(s.base_url(), "png");
    let json = |b: &[u8]| serde_json::from_slice::<Value>(b).expect("json");
    // ipfs:// through the gateways in order: the dead one is skipped.
    let got = f
        .get("ipfs://QmAnything/meta/png", MAX_METADATA)
        .await
        .expect("ipfs");
    assert_eq!(got.final_url, s.url("/ipfs/QmAnything/meta/png"));
    assert_eq!(json(&got.bytes), png);
    // A gateway URL of another host is read through ours.
    let cid = "QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG";
    let got = f
        .get(
            &format!("https://gateway.pinata.cloud/ipfs/{cid}/meta/jpeg"),
            MAX_METADATA,
        )
        .await
        .expect("gateway URL");
    assert_eq!(got.final_url, s.url(&format!("/ipfs/{cid}/meta/jpeg")));
    assert_eq!(json(&got.bytes), document(s.base_url(), "jpeg"));
    // A 404 from a gateway is the answer: the next one is not asked.
    let other = OffchainServer::start().await;
    let f2 = fetcher(&s, |c| {
        c.ipfs_gateways = vec![s.base_url().into(), other.base_url().into()]
    });
    assert_eq!(
        f2.get("ipfs://QmX/nothing", MAX_METADATA).await.err(),
        Some(FetchError::NotFound(404))
    );
    assert_eq!(other.total_hits(), 0);
    // A 5xx is not: the next gateway answers.
    s.put_status("/ipfs/QmX/meta/gif", 502);
    let got = f2
        .get("ipfs://QmX/meta/gif", MAX_METADATA)
        .await
        .expect("second gateway");
    assert_eq!(got.final_url, other.url("/ipfs/QmX/meta/gif"));
    // Every gateway failing: the last error.
    other.put_status("/ipfs/QmX/meta/gif", 504);
    assert_eq!(
        f2.get("ipfs://QmX/meta/gif", MAX_METADATA).await.err(),
        Some(FetchError::Unavailable("HTTP 504".into()))
    );
    // ar://
    let got = f.get("ar://svg", MAX_METADATA).await.expect("arweave");
    assert_eq!(got.final_url, s.url("/ar/svg"));
    assert_eq!(json(&got.bytes), document(s.base_url(), "svg"));
    // data:
    let b64 = base64::engine::general_purpose::STANDARD.encode(png.to_string());
    let got = f
        .get(&format!("data:application/json;base64,{b64}"), MAX_METADATA)
        .await
        .expect("data");
    assert_eq!(json(&got.bytes), png);
    assert_eq!(got.content_type.as_deref(), Some("application/json"));
    assert!(matches!(
        f.get("data:application/json;base64,@@@", MAX_METADATA)
            .await,
        Err(FetchError::InvalidUrl(_))
    ));
    assert_eq!(
        f.get(&format!("data:application/json;base64,{b64}"), 10)
            .await
            .err(),
        Some(FetchError::TooLarge(10))
    );
    let svg = std::str::from_utf8(svg_bytes()).expect("utf8");
    let got = f
        .get(&format!("data:image/svg+xml;utf8,{svg}"), 1 << 20)
        .await
        .expect("svg");
    assert_eq!(
        (got.bytes.as_slice(), got.content_type.as_deref()),
        (svg_bytes(), Some("image/svg+xml"))
    );
}

#[tokio::test]
async fn fetcher_limits_fetches_per_host() {
    let s = OffchainServer::start().await;
    s.set_slow(Duration::from_millis(300));
    let f = fetcher(&s, |c| {
        c.per_host = 2;
        c.timeout = Duration::from_secs(10);
    });
    let slow = s.url("/img/slow");
    let t = Instant::now();
    let all = futures_util::future::join_all((0..6).map(|_| f.get(&slow, 1 << 20))).await;
    assert!(all.iter().all(Result::is_ok), "{all:?}");
    assert_eq!(s.max_in_flight(), 2);
    // Three waves of two.
    assert!(
        t.elapsed() >= Duration::from_millis(850),
        "{:?}",
        t.elapsed()
    );
}
