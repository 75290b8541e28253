//! `openapi.json` is the OpenAPI 3.1 document of the REST routes (`tokenql::rest::openapi`).
//! These tests fail when the committed file is stale (run with `UPDATE_OPENAPI=1` to rewrite
//! it), check that the document is complete — every parameter the REST parser accepts is
//! documented, every error answer and the deprecation are there — and validate answers of a
//! live server on the demo data against the documented schemas, with a small validator for the
//! subset of JSON Schema the document uses (`openapi_doc/validator.rs`).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use axum::body::Body;
use axum::http::Request;
use http_body_util::BodyExt;
use migration::MigratorTrait;
use serde_json::{json, Value};
use tower::ServiceExt;

use tokenql::rest::operations::{Support, OPERATIONS};

use crate::support::validator;
use validator::{resolve_ref, validate};

const BALANCES: &str = "/{address}/erc20";
const CONTRACT_NFTS: &str = "/nft/{address}";
const WALLET: &str = "0x430d5dde0cd48989737a95b4c46e1801a9a08531";
/// Holds 15 NFTs of 10 collections.
const COLLECTOR: &str = "0x34db35639eafe2712ae1f69dfa298b06a5c25053";
const USDT: &str = "0xdac17f958d2ee523a2206206994597c13d831ec7";
/// A collection of the demo: 4 of COLLECTOR's NFTs.
const NFT_COLLECTION: &str = "0x3acce66cd37518a6d77d9ea3039e00b3a2955460";
const NFT: &str = "/{address}/nft";
const TRANSFERS: &str = "/erc20/transfers";
const WALLET_TRANSFERS: &str = "/{address}/erc20/transfers";
const TOKEN_TRANSFERS: &str = "/erc20/{address}/transfers";
const WALLET_NFT_TRANSFERS: &str = "/{address}/nft/transfers";
const COLLECTION_NFT_TRANSFERS: &str = "/nft/{address}/transfers";
const OWNERS: &str = "/nft/{address}/owners";
const TOKEN_OWNERS: &str = "/nft/{address}/{token_id}/owners";
const TOKEN_NFT_TRANSFERS: &str = "/nft/{address}/{token_id}/transfers";
const COLLECTIONS: &str = "/{address}/nft/collections";
const LATEST_BLOCK: &str = "/latestBlockNumber/{chain}";
const DATE_TO_BLOCK: &str = "/dateToBlock";
const VERSION: &str = "/web3/version";
const WEIGHTS: &str = "/info/endpointWeights";
const NATIVE: &str = "/{address}/balance";
const NATIVE_MANY: &str = "/wallets/balances";
const TOKEN_METADATA: &str = "/erc20/metadata";
const TOKEN_SYMBOLS: &str = "/erc20/metadata/symbols";
const TRAITS: &str = "/nft/{address}/traits";
const TRAITS_PAGE: &str = "/nft/{address}/traits/paginate";
const TRAITS_RESYNC: &str = "/nft/{address}/traits/resync";
/// The one `POST` route.
const NFTS_BY_TRAITS: &str = "/nft/{address}/nfts-by-traits";
const COLLECTION_STATS: &str = "/nft/{address}/stats";
const COLLECTION_METADATA: &str = "/nft/{address}/metadata";
const UNIQUE_OWNERS: &str = "/nft/{address}/unique-owners";
const WALLET_STATS: &str = "/wallets/{address}/stats";
const WALLET_CHAINS: &str = "/wallets/{address}/chains";
const ERC20_OWNERS: &str = "/erc20/{token_address}/owners";
const ERC20_STATS: &str = "/erc20/{address}/stats";
/// The timestamp of a block of the demo (20000010): `dateToBlock` answers it exactly.
const DEMO_BLOCK_TIME: u64 = 1_717_281_527;
/// Every `GET` route, as the document names it.
const ROUTES: [&str; 24] = [
    LATEST_BLOCK,
    DATE_TO_BLOCK,
    VERSION,
    WEIGHTS,
    NATIVE,
    NATIVE_MANY,
    TOKEN_METADATA,
    TOKEN_SYMBOLS,
    BALANCES,
    CONTRACT_NFTS,
    COLLECTIONS,
    OWNERS,
    TOKEN_OWNERS,
    NFT,
    TRANSFERS,
    WALLET_TRANSFERS,
    TOKEN_TRANSFERS,
    WALLET_NFT_TRANSFERS,
    COLLECTION_NFT_TRANSFERS,
    TRAITS,
    TRAITS_PAGE,
    TRAITS_RESYNC,
    ERC20_OWNERS,
    ERC20_STATS,
];

fn document() -> Value {
    serde_json::to_value(tokenql::rest::openapi::document()).expect("document to JSON")
}

#[test]
fn committed_openapi_json_is_current() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("openapi.json");
    let current = tokenql::rest::openapi::to_json().expect("document to JSON");
    if std::env::var_os("UPDATE_OPENAPI").is_some_and(|v| v == "1") {
        if let Err(e) = std::fs::write(&path, &current) {
            panic!("could not write {}: {e}", path.display());
        }
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed.replace("\r\n", "\n") == current,
        "{} is stale: the REST API's OpenAPI document changed. Review the change, then update \
         the file with\n\n    UPDATE_OPENAPI=1 cargo test -p tokenql --test api openapi_doc::\n\nand \
         commit it.",
        path.display()
    );
}

#[test]
fn finishing_touches_survived() {
    // `document()` falls back to utoipa's raw document if its normalization cannot be read
    // back; that must not happen silently.
    let doc = document();
    let schemas = &doc["components"]["schemas"];
    for name in ["nftOwnerCollection", "erc20TransfersResponse"] {
        assert!(schemas[name].is_object(), "{name} missing");
    }
    assert_eq!(
        schemas["nftOwnerCollection"]["properties"]["result"]["items"]["$ref"],
        "#/components/schemas/nftOwner"
    );
}

#[test]
fn is_a_complete_openapi_3_1_document() {
    let doc = document();
    assert!(doc["openapi"]
        .as_str()
        .is_some_and(|v| v.starts_with("3.1.")));
    let servers: Vec<&str> = doc["servers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s["url"].as_str())
        .collect();
    assert_eq!(servers, ["/api/v2", "/api/v2.2"]);
    assert!(doc["info"]["description"]
        .as_str()
        .is_some_and(|d| d.contains("/api/v2.2")));

    let scheme = &doc["components"]["securitySchemes"]["ApiKeyAuth"];
    assert_eq!(
        (&scheme["type"], &scheme["in"], &scheme["name"]),
        (&json!("apiKey"), &json!("header"), &json!("X-API-Key"))
    );
    assert_eq!(doc["security"], json!([{ "ApiKeyAuth": [] }]));

    // Every served operation is documented at its path and method, and nothing else is.
    let mut want: Vec<(String, String, &str)> = OPERATIONS
        .iter()
        .filter(|op| op.support == Support::Served)
        .map(|op| (op.path.to_string(), op.method.to_lowercase(), op.id))
        .chain(
            tokenql::rest::streams::OPERATIONS
                .iter()
                .map(|(path, method, id)| (path.to_string(), method.to_string(), *id)),
        )
        .collect();
    want.sort();
    let mut got: Vec<(String, String, &str)> = doc["paths"]
        .as_object()
        .expect("paths")
        .iter()
        .flat_map(|(path, item)| {
            item.as_object()
                .into_iter()
                .flatten()
                .filter(|(_, op)| op.is_object() && op.get("operationId").is_some())
                .map(|(method, op)| {
                    let id = op["operationId"].as_str().unwrap_or_default();
                    (path.clone(), method.clone(), id)
                })
                .collect::<Vec<_>>()
        })
        .collect();
    got.sort();
    assert_eq!(got, want);
    for (path, method, id) in &want {
        let path = path.as_str();
        let op = &doc["paths"][path][method.as_str()];
        assert_eq!(op["operationId"], *id);
        assert!(op["description"].as_str().is_some_and(|d| !d.is_empty()));
        let success = ["200", "201", "202"]
            .into_iter()
            .find(|s| op["responses"][*s].is_object());
        assert!(success.is_some(), "{path}: no success answer documented");
        for status in ["400", "401", "404", "429", "500", "503"]
            .into_iter()
            .chain(success)
        {
            let r = &op["responses"][status];
            assert!(r.is_object(), "{path}: no {status} answer documented");
            let schema = &r["content"]["application/json"]["schema"];
            if !status.starts_with('2') {
                assert_eq!(
                    schema["$ref"], "#/components/schemas/error",
                    "{path} {status}"
                );
            }
            let deprecation = &r["headers"]["Deprecation"];
            assert_eq!(
                path == TRANSFERS,
                deprecation.is_object(),
                "{path} {status}"
            );
        }
        assert!(op["responses"]["429"]["headers"]["Retry-After"].is_object());
        assert_eq!(op["deprecated"] == json!(true), path == TRANSFERS, "{path}");
        for p in op["parameters"].as_array().into_iter().flatten() {
            let name = p["name"].as_str().unwrap_or_default();
            assert!(
                p["description"].as_str().is_some_and(|d| !d.is_empty()),
                "{path}: {name} has no description"
            );
            if p["schema"]["type"] == "array" {
                assert_eq!((&p["style"], &p["explode"]), (&json!("form"), &json!(true)));
                let d = p["description"].as_str().unwrap_or_default();
                for form in ["[]=", "[0]=", "comma"] {
                    assert!(d.contains(form), "{path}: {name} does not mention {form}");
                }
            }
        }
    }
    let error = &doc["components"]["schemas"]["error"];
    assert_eq!(error["required"], json!(["message"]));
    assert_eq!(error["properties"]["message"]["type"], "string");

    let mut refs = Vec::new();
    collect_refs(&doc, &mut refs);
    assert!(!refs.is_empty());
    for r in refs {
        assert!(resolve_ref(&doc, &r).is_some(), "$ref {r} does not resolve");
    }
}

fn collect_refs(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(o) => {
            for (k, child) in o {
                match (k.as_str(), child) {
                    ("$ref", Value::String(r)) => out.push(r.clone()),
                    _ => collect_refs(child, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|i| collect_refs(i, out)),
        _ => {}
    }
}

#[test]
fn the_validator_catches_what_it_should() {
    let doc = document();
    let record = json!({"$ref": "#/components/schemas/erc20Transfer"});
    let good = json!({
        "token_name": "Tether USD", "token_symbol": "USDT", "token_logo": null,
        "token_decimals": "6", "contract_address": USDT,
        "transaction_hash": format!("0x{}", "ab".repeat(32)), "transaction_index": "1",
        "log_index": "2", "block_timestamp": "2024-01-02T03:04:05.000Z",
        "block_number": "19000000", "block_hash": format!("0x{}", "cd".repeat(32)),
        "from_wallet": WALLET, "from_wallet_label": null, "to_wallet": WALLET,
        "to_wallet_label": "x", "value": "1000000", "value_decimal": "1",
        "possible_spam": false, "verified_collection": false
    });
    let mut errors = Vec::new();
    validate(&doc, &record, &good, "$", &mut errors);
    assert!(errors.is_empty(), "{errors:?}");
    for (field, bad) in [
        ("value", json!(1000000)),
        ("possible_spam", json!("false")),
        ("token_decimals", json!(6)),
        ("contract_address", json!(USDT.to_uppercase())),
        ("block_timestamp", json!("2024-01-02T03:04:05Z")),
        ("value_decimal", json!("1e6")),
        ("surprise", json!("x")),
    ] {
        let mut bad_record = good.clone();
        bad_record[field] = bad;
        let mut errors = Vec::new();
        validate(&doc, &record, &bad_record, "$", &mut errors);
        assert!(!errors.is_empty(), "{field} should be refused");
    }
    let mut missing = good.clone();
    missing.as_object_mut().map(|o| o.remove("token_logo"));
    let mut errors = Vec::new();
    validate(&doc, &record, &missing, "$", &mut errors);
    assert!(
        !errors.is_empty(),
        "a missing nullable field should be refused"
    );
}

// ---------------------------------------------------------------------------------------------
// A live server on the demo data: the whole application on a loopback port, its own SQLite file.

struct Demo {
    /// `http://127.0.0.1:PORT`
    base: String,
    client: reqwest::Client,
    key: String,
    state: tokenql::AppState,
    path: PathBuf,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Drop for Demo {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        for suffix in ["", "-wal", "-shm"] {
            let mut p = self.path.clone().into_os_string();
            p.push(suffix);
            let _ = std::fs::remove_file(p);
        }
    }
}

async fn demo() -> Demo {
    static N: AtomicU32 = AtomicU32::new(0);
    let path = std::env::temp_dir().join(format!(
        "tokenql-openapi-{}-{}.db",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    ));
    let url = format!("sqlite://{}?mode=rwc", path.display());
    let db = tokenql::store::database::connect(&url, 4)
        .await
        .expect("connect");
    migration::Migrator::up(&db, None).await.expect("migrate");
    tokenql::demo::load_into(&db).await.expect("demo data");
    let (_, key) = tokenql::keys::create(&db, "openapi").await.expect("key");
    let state = tokenql::AppState::new(db, Default::default())
        .await
        .expect("state");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("address");
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(tokenql::run(listener, state.clone(), async move {
        let _ = rx.await;
    }));
    Demo {
        base: format!("http://{addr}"),
        client: {
            tokenql::tls::ensure_crypto_provider();
            reqwest::Client::new()
        },
        key,
        state,
        path,
        shutdown: Some(tx),
    }
}

struct Answer {
    status: u16,
    headers: axum::http::HeaderMap,
    body: Value,
}

/// A body as JSON, or as a JSON string holding the text when it is not JSON.
fn parse_body(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(bytes).into_owned()))
}

impl Demo {
    /// `POST {base}{uri}` with `body` and the demo's key: status and JSON body.
    async fn post(&self, uri: &str, body: &str) -> (u16, Value) {
        let res = self
            .client
            .post(format!("{}{uri}", self.base))
            .header("X-API-Key", &self.key)
            .header("Content-Type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .unwrap_or_else(|e| panic!("POST {uri}: {e}"));
        let status = res.status().as_u16();
        let bytes = res.bytes().await.expect("body");
        (status, parse_body(&bytes))
    }

    /// `GET {base}{uri}` over HTTP, with `key` as `X-API-Key` if given.
    async fn get(&self, uri: &str, key: Option<&str>) -> Answer {
        let mut req = self.client.get(format!("{}{uri}", self.base));
        if let Some(k) = key {
            req = req.header("X-API-Key", k);
        }
        let res = req
            .send()
            .await
            .unwrap_or_else(|e| panic!("GET {uri}: {e}"));
        let status = res.status().as_u16();
        let headers = res.headers().clone();
        let bytes = res.bytes().await.expect("body");
        Answer {
            status,
            headers,
            body: parse_body(&bytes),
        }
    }
}

/// `GET uri` on a router, in process.
async fn send(router: &axum::Router, uri: &str) -> Answer {
    let req = Request::get(uri).body(Body::empty()).expect("request");
    let res = router.clone().oneshot(req).await.expect("answer");
    let status = res.status().as_u16();
    let headers = res.headers().clone();
    let bytes = res.into_body().collect().await.expect("body").to_bytes();
    Answer {
        status,
        headers,
        body: parse_body(&bytes),
    }
}

/// The parameter names `src/rest/params.rs` reads: every identifier-like string literal that
/// is a call's first argument (`self.scalar("chain", …)`, `p.boolean("exclude_spam", …)`,
/// `ApiError::parse("address", …)`), string comparisons aside.
fn names_in_the_parser() -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/rest/params.rs");
    let src = std::fs::read_to_string(&path).expect("params.rs");
    // String comparisons are not parameter names.
    let comparisons = [
        "eq_ignore_ascii_case",
        "starts_with",
        "ends_with",
        "strip_prefix",
        "strip_suffix",
        "contains",
        "split",
    ];
    let pieces: Vec<&str> = src.split("(\"").collect();
    let mut names: Vec<String> = pieces
        .windows(2)
        .filter(|w| !comparisons.iter().any(|c| w[0].ends_with(c)))
        .filter_map(|w| w[1].split_once('"').map(|(lit, _)| lit))
        .filter(|lit| {
            !lit.is_empty()
                && lit.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
                && !lit.as_bytes()[0].is_ascii_digit()
        })
        .map(str::to_string)
        .collect();
    names.sort();
    names.dedup();
    names
}

fn documented_params<'a>(doc: &'a Value, path: &str) -> Vec<(&'a str, &'a str)> {
    doc["paths"][path]["get"]["parameters"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| {
            (
                p["name"].as_str().unwrap_or_default(),
                p["in"].as_str().unwrap_or_default(),
            )
        })
        .collect()
}

fn route(path: &str) -> String {
    format!(
        "/api/v2{}",
        path.replace("{address}", WALLET)
            .replace("{token_address}", USDT)
            .replace("{token_id}", "1")
            .replace("{chain}", "eth")
    )
}

/// The query parameters `path` requires, each followed by `&` (empty for most routes).
fn required(path: &str) -> String {
    match path {
        DATE_TO_BLOCK => format!("date={DEMO_BLOCK_TIME}&"),
        TOKEN_METADATA => format!("addresses={USDT}&"),
        TOKEN_SYMBOLS => "symbols=USDT&".to_string(),
        NATIVE_MANY => format!("wallet_addresses={WALLET}&"),
        _ => String::new(),
    }
}

/// A value parameter `name` refuses: `symbols` takes any printable text.
fn junk(name: &str) -> &'static str {
    if name == "symbols" {
        "%01"
    } else {
        "%21junk%21"
    }
}

/// What a route answers when the demo server is asked with its required parameters and
/// others it does not read: native balances need a chain endpoint the demo has not (400).
fn plain_status(path: &str) -> u16 {
    match path {
        NATIVE | NATIVE_MANY => 400,
        TRAITS_RESYNC => 202,
        _ => 200,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_parameter_the_parser_accepts_is_documented() {
    let app = demo().await;
    let doc = document();
    let names = names_in_the_parser();
    assert!(
        names.len() >= 15,
        "the scan of params.rs found too little: {names:?}"
    );

    // A value no parameter accepts: a route that reads the parameter answers 400 naming it.
    let reads = |status: u16, body: &Value, name: &str| {
        status == 400
            && body["message"]
                .as_str()
                .is_some_and(|m| m.starts_with(&format!("{name}:")))
    };
    for name in &names {
        let mut read_by = Vec::new();
        for path in ROUTES {
            let uri = format!("{}?{}{name}={}", route(path), required(path), junk(name));
            let a = app.get(&uri, Some(&app.key)).await;
            if reads(a.status, &a.body, name) {
                read_by.push(path);
                assert!(
                    documented_params(&doc, path).contains(&(name.as_str(), "query")),
                    "{path} reads the query parameter {name}, but the document does not list it"
                );
            }
        }
        if read_by.is_empty() {
            // Not a query parameter: a path segment of some route.
            assert!(
                ROUTES
                    .iter()
                    .any(|r| documented_params(&doc, r).contains(&(name.as_str(), "path"))),
                "params.rs reads {name}, which no route documents"
            );
        }
    }

    // And the other way: every documented query parameter is read by its route.
    for path in ROUTES {
        for (name, location) in documented_params(&doc, path) {
            let uri = match location {
                "query" => format!("{}?{}{name}={}", route(path), required(path), junk(name)),
                _ => format!(
                    "/api/v2{}",
                    path.replace(&format!("{{{name}}}"), "%21junk%21")
                        .replace("{address}", WALLET)
                        .replace("{token_id}", "1")
                ),
            };
            let a = app.get(&uri, Some(&app.key)).await;
            assert!(
                reads(a.status, &a.body, name),
                "{path} documents {name} but ignores it: {} {}",
                a.status,
                a.body
            );
        }
    }
}

/// Checks one answer of `path` against the document: its status is documented, it is JSON,
/// its body validates, and the documented headers are there.
fn check_answer(doc: &Value, path: &str, uri: &str, a: &Answer) {
    let status = a.status.to_string();
    let documented = &doc["paths"][path]["get"]["responses"][&status];
    assert!(
        documented.is_object(),
        "{uri}: status {status} is not documented"
    );
    let content_type = a
        .headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    assert!(
        content_type.starts_with("application/json"),
        "{uri}: content type {content_type}"
    );
    let schema = &documented["content"]["application/json"]["schema"];
    let mut errors = Vec::new();
    validate(doc, schema, &a.body, "$", &mut errors);
    assert!(
        errors.is_empty(),
        "{uri} ({status}):\n{}",
        errors.join("\n")
    );
    for name in documented["headers"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(n, _)| n)
    {
        assert!(
            a.headers.contains_key(name.as_str()),
            "{uri}: documented header {name} missing"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_answers_validate_against_the_documented_schemas() {
    let app = demo().await;
    let doc = document();
    let mut nft_records = 0;
    let mut transfer_records = 0;
    let mut normalized = 0;

    let nft_queries = [
        format!("/{WALLET}/nft"),
        format!("/{COLLECTOR}/nft?normalizeMetadata=true&disable_total=false&limit=4"),
        format!("/{COLLECTOR}/nft?format=hex&exclude_spam=true&media_items=true"),
        format!(
            "/{}/nft?chain=0x1&limit=1",
            WALLET.to_uppercase().replace("0X", "0x")
        ),
        format!("/{COLLECTOR}/nft?token_addresses[]={USDT}"),
    ];
    for q in &nft_queries {
        let mut uri = format!("/api/v2{q}");
        for _page in 0..10 {
            let a = app.get(&uri, Some(&app.key)).await;
            assert_eq!(a.status, 200, "{uri}: {}", a.body);
            check_answer(&doc, NFT, &uri, &a);
            let records = a.body["result"].as_array().cloned().unwrap_or_default();
            nft_records += records.len();
            normalized += records
                .iter()
                .filter(|r| r["normalized_metadata"].is_object())
                .count();
            let Some(cursor) = a.body["cursor"].as_str() else {
                break;
            };
            let sep = if q.contains('?') { '&' } else { '?' };
            uri = format!("/api/v2{q}{sep}cursor={}", enc(cursor));
        }
    }

    let transfer_queries = [
        "?limit=25".to_string(),
        format!("?contract_addresses={USDT}&limit=50"),
        format!("?wallet_addresses[0]={WALLET}&exclude_contracts[]={USDT}"),
        "?from_block=0&to_block=99999999&chain=eth&limit=7".to_string(),
    ];
    for q in &transfer_queries {
        let mut uri = format!("/api/v2/erc20/transfers{q}");
        for _page in 0..4 {
            let a = app.get(&uri, Some(&app.key)).await;
            assert_eq!(a.status, 200, "{uri}: {}", a.body);
            check_answer(&doc, TRANSFERS, &uri, &a);
            transfer_records += a.body["result"].as_array().map_or(0, Vec::len);
            let Some(cursor) = a.body["cursor"].as_str() else {
                break;
            };
            uri = format!("/api/v2/erc20/transfers{q}&cursor={}", enc(cursor));
        }
    }
    let v2_2_queries = [
        (WALLET_TRANSFERS, format!("/{WALLET}/erc20/transfers?limit=30")),
        (
            WALLET_TRANSFERS,
            format!("/{WALLET}/erc20/transfers?order=ASC&contract_addresses={USDT}&from_date=2022-08-01"),
        ),
        (TOKEN_TRANSFERS, format!("/erc20/{USDT}/transfers?limit=40&order=desc")),
        (TOKEN_TRANSFERS, format!("/erc20/{USDT}/transfers?from_block=0&to_date=1900000000")),
        (WALLET_NFT_TRANSFERS, format!("/{WALLET}/nft/transfers?limit=20")),
        (WALLET_NFT_TRANSFERS, format!("/{COLLECTOR}/nft/transfers?format=hex&order=ASC")),
        (
            COLLECTION_NFT_TRANSFERS,
            format!("/nft/{NFT_COLLECTION}/transfers?limit=30&from_date=2022-01-01"),
        ),
        (OWNERS, format!("/nft/{NFT_COLLECTION}/owners?limit=3&normalizeMetadata=true")),
        (OWNERS, format!("/nft/{NFT_COLLECTION}/owners?format=hex&media_items=true")),
        (TOKEN_OWNERS, format!("/nft/{NFT_COLLECTION}/1/owners")),
        (COLLECTIONS, format!("/{COLLECTOR}/nft/collections?limit=4&token_counts=true")),
        (COLLECTIONS, format!("/{COLLECTOR}/nft/collections?exclude_spam=true")),
        (BALANCES, format!("/{WALLET}/erc20")),
        (BALANCES, format!("/{WALLET}/erc20?exclude_spam=false&to_block=20000010")),
        (CONTRACT_NFTS, format!("/nft/{NFT_COLLECTION}?limit=2&normalizeMetadata=true")),
        (CONTRACT_NFTS, format!("/nft/{NFT_COLLECTION}?format=hex&media_items=true")),
        (LATEST_BLOCK, "/latestBlockNumber/0x1".to_string()),
        (DATE_TO_BLOCK, format!("/dateToBlock?chain=eth&date={DEMO_BLOCK_TIME}")),
        (VERSION, "/web3/version".to_string()),
        (WEIGHTS, "/info/endpointWeights".to_string()),
        (TOKEN_METADATA, format!("/erc20/metadata?addresses[]={USDT}&addresses[]={WALLET}")),
        (TOKEN_SYMBOLS, "/erc20/metadata/symbols?symbols[]=USDT&symbols[]=DAI".to_string()),
        (TRAITS, format!("/nft/{NFT_COLLECTION}/traits")),
        (TRAITS_PAGE, format!("/nft/{NFT_COLLECTION}/traits/paginate?limit=2&order=ASC")),
        (TOKEN_NFT_TRANSFERS, format!("/nft/{NFT_COLLECTION}/1/transfers")),
        (COLLECTION_STATS, format!("/nft/{NFT_COLLECTION}/stats")),
        ("/nft/{address}/{token_id}/stats", format!("/nft/{NFT_COLLECTION}/1/stats")),
        (COLLECTION_METADATA, format!("/nft/{NFT_COLLECTION}/metadata?chain=0x1")),
        (UNIQUE_OWNERS, format!("/nft/{NFT_COLLECTION}/unique-owners?limit=2")),
        (WALLET_STATS, format!("/wallets/{COLLECTOR}/stats")),
        (WALLET_CHAINS, format!("/wallets/{COLLECTOR}/chains?chains=eth")),
        (ERC20_OWNERS, format!("/erc20/{USDT}/owners?limit=3")),
        (ERC20_OWNERS, format!("/erc20/{USDT}/owners?order=ASC&limit=50")),
        (ERC20_STATS, format!("/erc20/{USDT}/stats")),
    ];
    for (path, q) in &v2_2_queries {
        let mut uri = format!("/api/v2.2{q}");
        for _page in 0..3 {
            let a = app.get(&uri, Some(&app.key)).await;
            assert_eq!(a.status, 200, "{uri}: {}", a.body);
            check_answer(&doc, path, &uri, &a);
            transfer_records += a.body["result"].as_array().map_or(0, Vec::len);
            let Some(cursor) = a.body["cursor"].as_str() else {
                break;
            };
            let sep = if q.contains('?') { '&' } else { '?' };
            uri = format!("/api/v2.2{q}{sep}cursor={}", enc(cursor));
        }
    }
    assert!(
        nft_records >= 15,
        "too few NFT records checked: {nft_records}"
    );
    assert!(normalized > 0, "no normalized_metadata object was checked");
    assert!(
        transfer_records >= 100,
        "too few transfers checked: {transfer_records}"
    );

    // Error answers, on every route.
    for path in ROUTES {
        let base = route(path);
        // The balances route and the lookups are not paged: they have no `limit` nor `cursor`,
        // and ignore them as they ignore every parameter they do not read.
        let unpaged = [BALANCES, TRAITS, TRAITS_RESYNC, ERC20_STATS].contains(&path)
            || ROUTES[..8].contains(&path);
        let paged = if unpaged { plain_status(path) } else { 400 };
        let query = required(path);
        for (uri, key, status) in [
            (
                format!("{base}?{query}limit=0"),
                Some(app.key.as_str()),
                paged,
            ),
            (
                format!("{base}?{query}cursor=nope"),
                Some(app.key.as_str()),
                paged,
            ),
            (base.clone(), None, 401),
            (base.clone(), Some("not-a-key"), 401),
        ] {
            let a = app.get(&uri, key).await;
            assert_eq!(a.status, status, "{uri}: {}", a.body);
            check_answer(&doc, path, &uri, &a);
        }
    }
    let uri = "/api/v2/0x%2F/nft";
    let a = app.get(uri, Some(&app.key)).await;
    check_answer(&doc, NFT, uri, &a);

    // The one POST route: its pages and a refused body.
    let post = &doc["paths"][NFTS_BY_TRAITS]["post"]["responses"];
    let by_traits =
        format!("/api/v2.2/nft/{NFT_COLLECTION}/nfts-by-traits?normalizeMetadata=true&limit=2");
    let mut uri = by_traits.clone();
    let mut by_traits_records = 0;
    for _page in 0..3 {
        let (status, body) = app.post(&uri, "{}").await;
        assert_eq!(status, 200, "{uri}: {body}");
        let schema = &post["200"]["content"]["application/json"]["schema"];
        let mut errors = Vec::new();
        validate(&doc, schema, &body, "$", &mut errors);
        assert!(errors.is_empty(), "{uri}: {errors:?}");
        by_traits_records += body["result"].as_array().map_or(0, Vec::len);
        let Some(cursor) = body["cursor"].as_str() else {
            break;
        };
        uri = format!("{by_traits}&cursor={}", enc(cursor));
    }
    assert!(
        by_traits_records > 0,
        "no nfts-by-traits record was checked"
    );
    let (status, body) = app.post(&by_traits, "{\"traits\": 1}").await;
    assert_eq!(status, 400, "{body}");
    let mut errors = Vec::new();
    validate(
        &doc,
        &post["400"]["content"]["application/json"]["schema"],
        &body,
        "$",
        &mut errors,
    );
    assert!(errors.is_empty(), "{errors:?}");

    // `/api/v2.2` serves the same.
    for path in ROUTES {
        let v2 = app.get(&route(path), Some(&app.key)).await;
        let v22 = app
            .get(
                &route(path).replace("/api/v2/", "/api/v2.2/"),
                Some(&app.key),
            )
            .await;
        assert_eq!((v2.status, &v2.body), (v22.status, &v22.body), "{path}");
    }
}

fn enc(s: &str) -> String {
    form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openapi_json_and_docs_are_served_without_a_key() {
    let app = demo().await;
    let routes = tokenql::rest::openapi::routes().with_state(app.state.clone());
    let a = send(&routes, "/openapi.json").await;
    assert_eq!(a.status, 200);
    assert!(a
        .headers
        .get("content-type")
        .is_some_and(|v| v == "application/json"));
    assert_eq!(a.body, document());

    let a = send(&routes, "/docs").await;
    assert_eq!(a.status, 200);
    assert!(a
        .headers
        .get("content-type")
        .is_some_and(|v| v.to_str().is_ok_and(|t| t.starts_with("text/html"))));
    let html = a.body.as_str().unwrap_or_default();
    assert!(
        html.contains("openapi.json"),
        "the page does not load the document"
    );
    // Offline: no external script, style, font or image.
    for external in ["http://", "https://", "//cdn", "src=\"//", "@import"] {
        assert!(!html.contains(external), "the page refers to {external}");
    }
    assert!(!html.contains("<script src"));
    assert!(html
        .match_indices("<link")
        .all(|(i, _)| html[i..].starts_with("<link rel=\"icon\" href=\"data:")));

    // The application serves them too, without a key.
    let a = app.get("/openapi.json", None).await;
    assert_eq!(
        a.status, 200,
        "the application does not serve /openapi.json"
    );
    assert_eq!(a.body, document());
    assert_eq!(app.get("/docs", None).await.status, 200);
}
