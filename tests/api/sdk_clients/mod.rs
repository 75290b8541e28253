//! Official client compatibility: the real Moralis JS SDKs from npm (`moralis` 2.27.2, and
//! 2.22.5 with every `@moralisweb3/*` package pinned, in `tests/clients/`) pointed at tokenql
//! with `Moralis.start({ apiKey, evmApiBaseUrl })` and nothing else changed.
//!
//! Each test spawns the app on SQLite (the SDK does not care about the database), loads the
//! bundled mainnet sample plus some metadata, runs one SDK's Node script over a list of calls,
//! and checks every call against tokenql's own REST answers for the same query, written
//! independently here (other array encodings, chain names instead of hex ids):
//!
//! - the SDK walked the same pages (`response.next()` while `hasNext()`), each page's body equal
//!   to ours (cursors compared by presence), and stopped exactly at the last page;
//! - the records of all pages, in order, are those of one walk with `limit=100` (none lost,
//!   none duplicated);
//! - the SDK's typed records (`response.result`, which runs its validation) kept every value;
//! - what the SDK sent: the version prefix, hex chain ids, `name[]=` arrays, `x-api-key`.
//!
//! The SDKs are installed by `scripts/test` (`npm ci` in each `tests/clients/moralis-2.*`).
//!
//! `getWalletTokenBalances` and `getContractNFTs` are checked instead against the independent
//! decoding of the sample ([`want`], built on `common::truth`), record for record. So is every
//! call of the official Python SDK (`moralis` 0.1.49 from PyPI), driven the same way by
//! `tests/clients/moralis-py/run.py` from [`python`]. The Python SDK's traits operations are
//! checked against the test's own aggregation of the served metadata ([`traits`]).

use crate::support::common;
mod collection_lookups;
mod lookups;
mod python;
mod token_holders;
mod traits;
mod want;
use want::Want;

use std::collections::{BTreeMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::truth::{hex_to_dec, scale, Truth};
use common::{text, Backend, TestApp};
use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
use serde_json::{json, Value};
use tokenql::entity::{address_label, contract, nft_token, scope_sync};
use tokenql::types::Chain;

/// 38 NFTs of one contract.
const WALLET_38: &str = "0x430d5dde0cd48989737a95b4c46e1801a9a08531";
/// 15 NFTs across 10 contracts.
const WALLET_15: &str = "0x34db35639eafe2712ae1f69dfa298b06a5c25053";
const USDT: &str = "0xdac17f958d2ee523a2206206994597c13d831ec7";
/// Holds 4 of WALLET_15's NFTs; given a name, symbol, verified flag and token metadata here.
const RICH: &str = "0x3acce66cd37518a6d77d9ea3039e00b3a2955460";
/// Holds 1 of WALLET_15's NFTs; marked possible spam here.
const SPAM: &str = "0x3b84502df3d36ef2e5318bce5a988460cf349304";
/// Each hold 2 of WALLET_15's NFTs.
const PAIR_A: &str = "0x0aa7420c43b8c1a7b165d216948870c8ecfe1ee1";
const PAIR_B: &str = "0x33825285eb66c11237cc68cc182c1e9bf01ba00b";

/// The address labels `spawn_enriched` gives.
const LABELS: &[(&str, &str)] = &[(LABELED, LABEL)];
/// Sends the newest USDT transfer of the demo; given a label here.
const LABELED: &str = "0x9696f59e4d72e237be84ffd425dcad154bf96976";
const LABEL: &str = "Hot Wallet ✓ (ünïcødé)";
/// The `name` inside the metadata given to RICH's tokens.
const META_NAME: &str = "Enriched #1 — ünïcødé ✓";

/// How long one SDK run may take.
const NODE_TIMEOUT: Duration = Duration::from_secs(300);

/// What a call must produce.
enum Expect {
    /// The SDK pages through what this REST query (path and query, no `limit`) answers.
    Pages { rest: String, limit: usize },
    /// Our 400 reaches the caller as an SDK error carrying our message.
    BadRequest { contains: &'static str },
    /// The SDK itself refuses the call before sending anything.
    RejectedBySdk { contains: &'static str },
    /// The SDK walks pages of `limit` (or, with `None`, reads one bare array) holding exactly the
    /// records of `want`, computed from the sample's independent decoding.
    Truth { limit: Option<usize>, want: Want },
}

/// One call of `Moralis.EvmApi.<op>(params)` and what it must produce.
struct Call {
    name: String,
    op: &'static str,
    params: Value,
    expect: Expect,
}

impl Call {
    fn pages(name: &str, op: &'static str, params: Value, rest: String, limit: usize) -> Self {
        Self {
            name: name.to_string(),
            op,
            params,
            expect: Expect::Pages { rest, limit },
        }
    }
}

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The start of a long text, for failure messages.
fn clip(s: &str) -> &str {
    s.char_indices().nth(4000).map_or(s, |(i, _)| &s[..i])
}

/// Runs `tests/clients/<client>/run.js` (or `run.py` for the Python SDK, `moralis-py`) against
/// `base_url` with `input` (`{"apiKey", "calls"}`) on its stdin and returns its JSON report.
fn run_sdk(client: &str, base_url: &str, input: &Value) -> Value {
    let root = repo_root();
    let dir = root.join("tests/clients").join(client);
    let mut command = if client == python::CLIENT {
        let mut c = Command::new(python::interpreter());
        c.arg(dir.join("run.py"));
        c
    } else {
        let installed = dir.join("node_modules/moralis/package.json");
        assert!(
            installed.is_file(),
            "{} is missing: the SDK tests need the real npm packages. Run scripts/test, which \
             installs them (or: npm ci --prefix tests/clients/{client}).",
            installed.display()
        );
        let mut c = Command::new("node");
        c.arg(dir.join("run.js"));
        c
    };
    let program = command.get_program().to_string_lossy().into_owned();
    let mut child = match command
        .arg(base_url)
        .current_dir(&root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => panic!(
            "`{program}` not found: the SDK tests run the real Moralis SDKs (Node.js for the npm \
             packages, the virtualenv of the Python SDK); run scripts/test, which installs them"
        ),
        Err(e) => panic!("cannot start {program}: {e}"),
    };
    child
        .stdin
        .take()
        .expect("piped stdin")
        .write_all(input.to_string().as_bytes())
        .expect("cannot write the calls to the SDK runner");
    // The pipes are read on their own threads so a chatty child never blocks on a full pipe.
    let read = |mut r: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = r.read_to_string(&mut s);
            s
        })
    };
    let out = read(Box::new(child.stdout.take().expect("piped stdout")));
    let err = read(Box::new(child.stderr.take().expect("piped stderr")));
    let deadline = Instant::now() + NODE_TIMEOUT;
    let status = loop {
        if let Some(s) = child.try_wait().expect("cannot wait for node") {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{client}: the SDK runner did not finish within {NODE_TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let (out, err) = (
        out.join().expect("stdout reader"),
        err.join().expect("stderr reader"),
    );
    assert!(
        status.success(),
        "{client}: the SDK runner failed ({status}):\n{err}"
    );
    serde_json::from_str(&out).unwrap_or_else(|e| {
        panic!(
            "{client}: output is not JSON ({e}):\n{}\nstderr:\n{err}",
            clip(&out)
        )
    })
}

/// Runs `calls` through the SDK of `client` at `{app.base}{prefix}` and checks every call.
/// Returns what the SDK made of each call (`pages[].result` are its typed records), by name.
async fn check_client(
    app: &TestApp,
    client: &str,
    prefix: &str,
    calls: &[Call],
) -> BTreeMap<String, Value> {
    let base_url = format!("{}{prefix}", app.base);
    let input = json!({
        "apiKey": app.key,
        "calls": calls
            .iter()
            .map(|c| json!({"name": c.name, "op": c.op, "params": c.params}))
            .collect::<Vec<_>>(),
    });
    let report = tokio::task::spawn_blocking({
        let client = client.to_string();
        move || run_sdk(&client, &base_url, &input)
    })
    .await
    .expect("SDK runner panicked");
    eprintln!("{client} at {prefix}: {}", report["sdk"]);
    if let Some(r) = results_first_request(&report) {
        eprintln!("{client}: request headers {}", r["headers"]);
    }
    let results = report["calls"].as_array().expect("calls").clone();
    assert_eq!(results.len(), calls.len(), "{report}");
    for (call, got) in calls.iter().zip(&results) {
        let what = format!("{client} {prefix} {} ({})", call.name, call.op);
        check_requests(&what, client, prefix, call, got);
        match &call.expect {
            Expect::Pages { rest, limit } => check_pages(app, &what, call, got, rest, *limit).await,
            Expect::BadRequest { contains } => {
                let e = &got["error"];
                assert_eq!(e["status"], json!(400), "{what}: expected our 400: {got}");
                let message = e["body"]["message"].as_str().unwrap_or_default();
                assert!(
                    message.contains(contains) && e["message"].to_string().contains(contains),
                    "{what}: the SDK error should carry our message about {contains}: {e}"
                );
            }
            Expect::Truth { limit, want } => {
                let truth = Truth::demo();
                let records = match limit {
                    Some(limit) => want::check_walk(&what, &truth, got, *limit, want, LABELS),
                    None => want::check_array(&what, &truth, got, want, LABELS),
                };
                let typed: Vec<Value> = got["pages"]
                    .as_array()
                    .expect("pages")
                    .iter()
                    .flat_map(|p| p["result"].as_array().cloned().unwrap_or_default())
                    .collect();
                assert_eq!(typed.len(), records.len(), "{what}: typed records");
                for (j, (t, r)) in typed.iter().zip(&records).enumerate() {
                    let ctx = format!("{what}: record {j}");
                    match call.op {
                        "token.getWalletTokenBalances" => check_typed_balance(&ctx, t, r),
                        _ => check_typed_nft(&ctx, t, r),
                    }
                }
            }
            Expect::RejectedBySdk { contains } => {
                assert!(
                    got["requests"].as_array().is_some_and(|r| r.is_empty()),
                    "{what}: the SDK should not send anything: {got}"
                );
                let message = got["error"]["message"].as_str().unwrap_or_default();
                assert!(
                    message.contains(contains),
                    "{what}: expected the SDK to reject {contains}: {got}"
                );
            }
        }
    }
    calls.iter().map(|c| c.name.clone()).zip(results).collect()
}

fn results_first_request(report: &Value) -> Option<&Value> {
    report["calls"]
        .as_array()?
        .iter()
        .find_map(|c| c["requests"].as_array()?.first())
}

/// The SDK's typed records of every page of a call.
fn typed(results: &BTreeMap<String, Value>, name: &str) -> Vec<Value> {
    results[name]["pages"]
        .as_array()
        .expect("pages")
        .iter()
        .flat_map(|p| p["result"].as_array().cloned().unwrap_or_default())
        .collect()
}

/// What the SDK sent: our prefix, hex chain, `name[]=` arrays, lowercase addresses, the key.
fn check_requests(what: &str, client: &str, prefix: &str, call: &Call, got: &Value) {
    let requests = got["requests"].as_array().expect("requests");
    if let Expect::Pages { .. } = call.expect {
        assert_eq!(
            requests.len(),
            got["pages"].as_array().map_or(0, Vec::len),
            "{what}: one request per page: {got}"
        );
    }
    if let Some(r) = requests.first() {
        eprintln!("{what}: GET {} (+{} more)", r["path"], requests.len() - 1);
    }
    for r in requests {
        let path = r["path"].as_str().expect("path");
        assert!(
            path.starts_with(&format!("{prefix}/")),
            "{what}: {path} is not under {prefix}"
        );
        assert!(
            path.contains("chain=0x1"),
            "{what}: chain as hex id: {path}"
        );
        assert!(
            !path.contains('['),
            "{what}: brackets are percent-encoded: {path}"
        );
        let (_, query) = path.split_once('?').unwrap_or((path, ""));
        for (key, value) in form_urlencoded::parse(query.as_bytes()) {
            if key.ends_with("addresses") || key.ends_with("_contracts") {
                panic!("{what}: the SDK was seen to send arrays as `{key}[]=`: {path}");
            }
            if key.ends_with("[]") {
                assert_eq!(value, value.to_lowercase(), "{what}: {path}");
            }
        }
        let headers = &r["headers"];
        assert_eq!(headers["x-api-key"], json!("<api key>"), "{what}: {r}");
        // 2.22.5's newer (v3) resolver, used by getErc20Transfers, also sends the key as a
        // bearer token; the server must accept and ignore it.
        if client == "moralis-2.22" && call.op == "token.getErc20Transfers" {
            assert_eq!(
                headers["authorization"],
                json!("Bearer <api key>"),
                "{what}: {r}"
            );
        }
    }
}

/// `body` with `cursor` reduced to whether there is one.
fn without_cursor(body: &Value) -> Value {
    let mut b = body.clone();
    if let Some(o) = b.as_object_mut() {
        let has = o.get("cursor").is_some_and(|c| !c.is_null());
        o.insert("cursor".into(), json!(has));
    }
    b
}

async fn check_pages(
    app: &TestApp,
    what: &str,
    call: &Call,
    got: &Value,
    rest: &str,
    limit: usize,
) {
    assert!(
        got["error"].is_null(),
        "{what}: the SDK failed: {}",
        got["error"]
    );
    let sdk_pages = got["pages"].as_array().expect("pages");
    let sep = if rest.contains('?') { '&' } else { '?' };
    let ours = app
        .walk_rest(&format!("{rest}{sep}limit={limit}"), limit)
        .await;
    assert_eq!(
        sdk_pages.len(),
        ours.len(),
        "{what}: the SDK read {} pages, REST has {}",
        sdk_pages.len(),
        ours.len()
    );
    for (i, (sdk, ours)) in sdk_pages.iter().zip(&ours).enumerate() {
        let ctx = format!("{what}: page {}", i + 1);
        assert_eq!(
            without_cursor(&sdk["raw"]),
            without_cursor(&ours.body),
            "{ctx}: the SDK's body differs from REST's"
        );
        assert_eq!(
            sdk["hasNext"].as_bool(),
            Some(ours.cursor.is_some()),
            "{ctx}: hasNext() must be true exactly when a next page exists"
        );
        let typed = sdk["result"].as_array().expect("typed result");
        assert_eq!(typed.len(), ours.records.len(), "{ctx}: typed records");
        for (j, (t, r)) in typed.iter().zip(&ours.records).enumerate() {
            let ctx = format!("{ctx}, record {j}");
            match call.op {
                "nft.getWalletNFTs" | "nft.getNFTOwners" | "nft.getNFTTokenIdOwners" => {
                    check_typed_nft(&ctx, t, r)
                }
                "token.getErc20Transfers" => check_typed_transfer(&ctx, t, r),
                "nft.getNFTContractTransfers" | "nft.getNFTTransfers" => {
                    // moralis 2.27.2 builds this call's typed `tokenAddress` from the record's
                    // `to_address` (its deserializer's own mistake; `raw` above holds ours).
                    assert_eq!(lower(&t["tokenAddress"]), lower(&r["to_address"]), "{ctx}");
                    check_typed_fields(&ctx, t, r, &NFT_MOVE_FIELDS[1..]);
                }
                "nft.getWalletNFTCollections" => check_typed_fields(&ctx, t, r, COLLECTION_FIELDS),
                op if op.starts_with("nft.") => check_typed_fields(&ctx, t, r, NFT_MOVE_FIELDS),
                _ => check_typed_fields(&ctx, t, r, TRANSACTION_FIELDS),
            }
        }
    }
    // Paging lost or repeated nothing: the same records as one walk with the largest pages.
    let all: Vec<Value> = sdk_pages
        .iter()
        .flat_map(|p| p["raw"]["result"].as_array().cloned().unwrap_or_default())
        .collect();
    let big: Vec<Value> = app
        .walk_rest(&format!("{rest}{sep}limit=100"), 100)
        .await
        .into_iter()
        .flat_map(|p| p.records)
        .collect();
    assert_eq!(
        all, big,
        "{what}: records across pages differ from limit=100"
    );
    let key = |r: &Value| -> String {
        if call.op == "nft.getWalletNFTCollections" {
            r["token_address"].to_string()
        } else if call.op == "nft.getWalletNFTs" || call.op.ends_with("Owners") {
            format!("{}/{}/{}", r["token_address"], r["token_id"], r["owner_of"])
        } else {
            format!("{}/{}/{}", r["block_number"], r["log_index"], r["token_id"])
        }
    };
    let distinct: HashSet<String> = all.iter().map(key).collect();
    assert_eq!(distinct.len(), all.len(), "{what}: duplicated records");
    if let Some(total) = sdk_pages.first().and_then(|p| p["raw"]["total"].as_u64()) {
        assert_eq!(total as usize, all.len(), "{what}: total");
    }
}

/// An address with its hex digits in upper case (valid for the SDK, which lowercases it).
fn upper(a: &str) -> String {
    format!("0x{}", a.trim_start_matches("0x").to_uppercase())
}

fn lower(v: &Value) -> Option<String> {
    text(v).map(|s| s.to_ascii_lowercase())
}

/// `EvmNft.toJSON()` against our record.
fn check_typed_nft(ctx: &str, t: &Value, r: &Value) {
    let pairs = [
        ("tokenAddress", "token_address"),
        ("ownerOf", "owner_of"),
        ("tokenId", "token_id"),
        ("contractType", "contract_type"),
        ("blockNumber", "block_number"),
        ("blockNumberMinted", "block_number_minted"),
        ("tokenHash", "token_hash"),
        ("tokenUri", "token_uri"),
        ("name", "name"),
        ("symbol", "symbol"),
        ("possibleSpam", "possible_spam"),
        ("amount", "amount"),
        ("lastMetadataSync", "last_metadata_sync"),
        ("lastTokenUriSync", "last_token_uri_sync"),
    ];
    for (tf, rf) in pairs {
        assert_eq!(
            lower(&t[tf]),
            lower(&r[rf]),
            "{ctx}: {tf} vs {rf}\nSDK: {t}\nREST: {r}"
        );
    }
    assert_eq!(t["chain"], json!("0x1"), "{ctx}: {t}");
    let metadata = r["metadata"]
        .as_str()
        .map(|m| serde_json::from_str::<Value>(m).expect("metadata is JSON"));
    assert_eq!(
        t["metadata"],
        metadata.unwrap_or(Value::Null),
        "{ctx}: metadata"
    );
}

/// `EvmErc20Transfer.toJSON()` against our record.
fn check_typed_transfer(ctx: &str, t: &Value, r: &Value) {
    for f in [
        "token_name",
        "token_symbol",
        "token_logo",
        "contract_address",
        "transaction_hash",
        "transaction_index",
        "log_index",
        "block_timestamp",
        "block_hash",
        "from_wallet",
        "from_wallet_label",
        "to_wallet",
        "to_wallet_label",
        "value",
        "value_decimal",
        "possible_spam",
    ] {
        assert_eq!(
            lower(&t[f]),
            lower(&r[f]),
            "{ctx}: {f}\nSDK: {t}\nREST: {r}"
        );
    }
    if !r["token_decimals"].is_null() {
        assert_eq!(t["token_decimals"], r["token_decimals"], "{ctx}: {t}");
    }
    // The SDK writes block numbers back as hex.
    let number = |v: &Value| -> Option<u64> {
        let s = v.as_str()?;
        match s.strip_prefix("0x") {
            Some(h) => u64::from_str_radix(h, 16).ok(),
            None => s.parse().ok(),
        }
    };
    assert_eq!(
        number(&t["block_number"]),
        number(&r["block_number"]),
        "{ctx}: block_number\nSDK: {t}\nREST: {r}"
    );
}

/// `Erc20Value.toJSON()` (getWalletTokenBalances) against our balance record. moralis 2.27.2
/// writes `value` in whole tokens, with 18 decimals when the token's are unknown (and then
/// `token.decimals` 0).
fn check_typed_balance(ctx: &str, t: &Value, r: &Value) {
    let token = &t["token"];
    assert_eq!(
        lower(&token["contractAddress"]),
        lower(&r["token_address"]),
        "{ctx}\nSDK: {t}\nREST: {r}"
    );
    for (tf, rf) in [
        ("name", "name"),
        ("symbol", "symbol"),
        ("possibleSpam", "possible_spam"),
    ] {
        assert_eq!(token[tf], r[rf], "{ctx}: {tf}\nSDK: {t}\nREST: {r}");
    }
    let decimals = r["decimals"].as_u64().map(|d| d as u32);
    assert_eq!(
        token["decimals"].as_u64(),
        Some(decimals.unwrap_or(0).into()),
        "{ctx}: {t}"
    );
    let balance = r["balance"].as_str().expect("balance");
    assert_eq!(
        t["value"].as_str(),
        Some(scale(balance, decimals.unwrap_or(18)).as_str()),
        "{ctx}: value\nSDK: {t}\nREST: {r}"
    );
}

/// The fields of a v2.2 ERC20 transfer record the SDK must carry.
const TRANSACTION_FIELDS: &[&str] = &[
    "address",
    "from_address",
    "to_address",
    "transaction_hash",
    "block_hash",
    "value",
    "log_index",
    "transaction_index",
    "from_address_label",
    "to_address_label",
    "token_symbol",
    "possible_spam",
    "verified_contract",
];

/// The fields of a v2.2 NFT transfer record the SDK must carry (`token_address` first).
const NFT_MOVE_FIELDS: &[&str] = &[
    "token_address",
    "token_id",
    "from_address",
    "to_address",
    "amount",
    "contract_type",
    "transaction_hash",
    "block_hash",
    "log_index",
    "transaction_index",
    "possible_spam",
    "verified_collection",
];

/// The fields of a v2.2 collection record the SDK must carry.
const COLLECTION_FIELDS: &[&str] = &[
    "token_address",
    "contract_type",
    "name",
    "symbol",
    "possible_spam",
    "verified_collection",
    "count",
];

/// A v2.2 record as the SDK types it (camelCase or snake_case, numbers as strings or numbers,
/// addresses in any case) against the record REST answered, field by field.
fn check_typed_fields(ctx: &str, t: &Value, r: &Value, fields: &[&str]) {
    let field = |snake: &str| -> Option<String> {
        let camel: String = snake
            .split('_')
            .enumerate()
            .map(|(i, w)| {
                if i == 0 {
                    w.to_string()
                } else {
                    w[..1].to_uppercase() + &w[1..]
                }
            })
            .collect();
        let v = if t[snake].is_null() {
            &t[camel]
        } else {
            &t[snake]
        };
        lower(v)
    };
    for &f in fields {
        assert_eq!(field(f), lower(&r[f]), "{ctx}: {f}\nSDK: {t}\nREST: {r}");
    }
}

/// The demo on `backend`, plus what it lacks and the SDKs must carry: token metadata (a JSON string with
/// non-ASCII text and nested values), token URIs, sync times, a named verified collection and
/// a possible-spam one, an address label, and the sync state of the collections the calls name.
async fn spawn_enriched(backend: Backend) -> TestApp {
    let app = common::spawn(backend).await;
    app.load_demo().await;
    let metadata = json!({
        "name": META_NAME,
        "description": "line one\nline \"two\"",
        "image": "ipfs://QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG/1.png",
        "external_url": "https://example.org/1",
        "attributes": [
            {"trait_type": "Level", "value": 7, "display_type": "number"},
            {"trait_type": "Big", "value": "115792089237316195423570985008687907853269984665640564039457584007913129639935"}
        ]
    })
    .to_string();
    nft_token::Entity::update_many()
        .col_expr(nft_token::Column::Metadata, Expr::value(metadata))
        .col_expr(
            nft_token::Column::TokenUri,
            Expr::value("ipfs://QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG/1"),
        )
        .col_expr(
            nft_token::Column::LastMetadataSync,
            Expr::value(1_700_000_123_456_i64),
        )
        .col_expr(
            nft_token::Column::LastTokenUriSync,
            Expr::value(1_700_000_000_000_i64),
        )
        .filter(
            nft_token::Column::ContractAddress
                .eq(tokenql::types::Address::parse(RICH).expect("an address")),
        )
        .exec(&app.db)
        .await
        .expect("token metadata");
    contract::Entity::update_many()
        .col_expr(contract::Column::Name, Expr::value("Enriched Collection"))
        .col_expr(contract::Column::Symbol, Expr::value("ENR"))
        .col_expr(contract::Column::Verified, Expr::value(true))
        .filter(
            contract::Column::Address.eq(tokenql::types::Address::parse(RICH).expect("an address")),
        )
        .exec(&app.db)
        .await
        .expect("contract name");
    // The collections the calls name in `token_addresses` are fully indexed; otherwise naming
    // them schedules a backfill and every later answer showing them says SYNCING.
    let now = tokenql::store::now_ms();
    let synced = [PAIR_A, PAIR_B, RICH, SPAM].map(|a| {
        scope_sync::ActiveModel::from(scope_sync::Model {
            chain_id: Chain::ETH.db_id(),
            scope: "contract".into(),
            address: tokenql::types::Address::parse(a).expect("address"),
            state: "synced".into(),
            requested_at: now,
            updated_at: now,
            queued_at: now,
            target_block: Some(20_000_000),
            synced_to_block: Some(19_999_999),
            logs: 0,
            attempts: 0,
            error: None,
            retry_at: None,
            lease_until: None,
        })
    });
    scope_sync::Entity::insert_many(synced)
        .exec_without_returning(&app.db)
        .await
        .expect("synced collections");
    address_label::Entity::insert(address_label::ActiveModel::from(address_label::Model {
        chain_id: Chain::ETH.db_id(),
        address: tokenql::types::Address::parse(LABELED).expect("address"),
        label: LABEL.to_string(),
    }))
    .exec_without_returning(&app.db)
    .await
    .expect("address label");
    contract::Entity::update_many()
        .col_expr(contract::Column::PossibleSpam, Expr::value(true))
        .filter(
            contract::Column::Address.eq(tokenql::types::Address::parse(SPAM).expect("an address")),
        )
        .exec(&app.db)
        .await
        .expect("spam flag");
    app
}

/// Flags the ERC20 `token` as possible spam (the bundled sample has no spam list loaded).
async fn mark_spam(app: &TestApp, token: &str) {
    let done = contract::Entity::update_many()
        .col_expr(contract::Column::PossibleSpam, Expr::value(true))
        .filter(
            contract::Column::Address
                .eq(tokenql::types::Address::parse(token).expect("an address")),
        )
        .exec(&app.db)
        .await
        .expect("spam flag");
    assert_eq!(done.rows_affected, 1, "{token} is a contract of the sample");
}

/// `getWalletNFTs` calls both SDKs support.
fn common_nft_calls() -> Vec<Call> {
    vec![
        // 38 records in pages of 7: five full pages and a partial last one.
        Call::pages(
            "38 NFTs, limit 7",
            "nft.getWalletNFTs",
            json!({"address": WALLET_38, "chain": "0x1", "limit": 7}),
            format!("/api/v2/{WALLET_38}/nft?chain=eth"),
            7,
        ),
        // 15 records in pages of 5: the last page is full and still the last.
        Call::pages(
            "15 NFTs, limit 5",
            "nft.getWalletNFTs",
            json!({"address": upper(WALLET_15), "chain": "0x1", "limit": 5}),
            format!("/api/v2/{WALLET_15}/nft?chain=0x1"),
            5,
        ),
        // No limit: the server's default page of 100.
        Call::pages(
            "15 NFTs, default limit",
            "nft.getWalletNFTs",
            json!({"address": WALLET_15, "chain": "0x1", "normalizeMetadata": true}),
            format!("/api/v2/{WALLET_15}/nft?normalizeMetadata=true"),
            100,
        ),
    ]
}

/// moralis 2.27.2, whose default base URL ends in `/api/v2.2`: `getWalletNFTs` with every
/// parameter it has, at `/api/v2.2` and at `/api/v2`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn moralis_2_27_get_wallet_nfts() {
    let app = spawn_enriched(Backend::Sqlite).await;
    for prefix in ["/api/v2.2", "/api/v2"] {
        let mut calls = common_nft_calls();
        calls.extend([
            // Every parameter of 2.27's getWalletNFTs; addresses in upper case, which the SDK
            // lowercases. The spam collection is filtered out: 2 + 2 + 4 records left.
            Call::pages(
                "every parameter",
                "nft.getWalletNFTs",
                json!({
                    "address": WALLET_15,
                    "chain": "0x1",
                    "format": "hex",
                    "limit": 3,
                    "tokenAddresses": [upper(PAIR_A), upper(PAIR_B), upper(RICH), upper(SPAM)],
                    "excludeSpam": true,
                    "normalizeMetadata": true,
                    "mediaItems": true,
                }),
                format!(
                    "/api/v2/{WALLET_15}/nft?format=hex&token_addresses={PAIR_A},{PAIR_B}\
                     &token_addresses={RICH}&token_addresses={SPAM}&exclude_spam=true\
                     &normalizeMetadata=true&media_items=true"
                ),
                3,
            ),
            Call::pages(
                "spam kept, decimal, media off",
                "nft.getWalletNFTs",
                json!({
                    "address": WALLET_15, "chain": "0x1", "format": "decimal", "limit": 4,
                    "excludeSpam": false, "normalizeMetadata": false, "mediaItems": false,
                }),
                format!("/api/v2/{WALLET_15}/nft?exclude_spam=false"),
                4,
            ),
            Call {
                name: "limit out of range".into(),
                op: "nft.getWalletNFTs",
                params: json!({"address": WALLET_15, "chain": "0x1", "limit": 101}),
                expect: Expect::BadRequest { contains: "limit" },
            },
            // 2.27's getWalletNFTs has no disableTotal: the SDK refuses it before sending.
            Call {
                name: "disableTotal".into(),
                op: "nft.getWalletNFTs",
                params: json!({"address": WALLET_15, "chain": "0x1", "disableTotal": false}),
                expect: Expect::RejectedBySdk {
                    contains: "unknown parameter: disableTotal",
                },
            },
            // ... and no getErc20Transfers (removed in 2.23.0).
            Call {
                name: "getErc20Transfers".into(),
                op: "token.getErc20Transfers",
                params: json!({"chain": "0x1", "contractAddresses": [USDT]}),
                expect: Expect::RejectedBySdk {
                    contains: "does not exist",
                },
            },
        ]);
        let results = check_client(&app, "moralis-2.27", prefix, &calls).await;
        // What the enrichment put in reached the SDK's typed records.
        let every = typed(&results, "every parameter");
        assert_eq!(every.len(), 8, "{prefix}: 2 + 2 + 4 records, spam left out");
        assert!(every.iter().all(|t| t["possibleSpam"] == json!(false)));
        assert!(every
            .iter()
            .all(|t| lower(&t["tokenId"]).is_some_and(|i| i.starts_with("0x"))));
        let rich: Vec<&Value> = every
            .iter()
            .filter(|t| t["tokenAddress"] == json!(RICH))
            .collect();
        assert_eq!(rich.len(), 4, "{prefix}: {every:?}");
        for t in rich {
            assert_eq!(t["metadata"]["name"], json!(META_NAME), "{t}");
            assert_eq!(t["name"], json!("Enriched Collection"), "{t}");
        }
        let spam = typed(&results, "spam kept, decimal, media off");
        assert_eq!(
            spam.iter()
                .filter(|t| t["possibleSpam"] == json!(true))
                .count(),
            1,
            "{prefix}: {spam:?}"
        );
    }
    app.cleanup().await;
}

/// moralis 2.22.5: `getWalletNFTs` with `disableTotal=false`, where the SDK also pages by
/// `total > page_size × page`, so `total`, `page` and `page_size` must be exact.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn moralis_2_22_get_wallet_nfts() {
    let app = spawn_enriched(Backend::Sqlite).await;
    let mut calls = common_nft_calls();
    calls.extend([
        Call::pages(
            "38 NFTs with total, limit 7",
            "nft.getWalletNFTs",
            json!({"address": WALLET_38, "chain": "0x1", "limit": 7, "disableTotal": false}),
            format!("/api/v2/{WALLET_38}/nft?disable_total=false"),
            7,
        ),
        // 8 records in pages of 4: total = page_size × page on the last page.
        Call::pages(
            "every parameter, total on a full last page",
            "nft.getWalletNFTs",
            json!({
                "address": WALLET_15,
                "chain": "0x1",
                "format": "decimal",
                "limit": 4,
                "tokenAddresses": [RICH, PAIR_A, PAIR_B],
                "normalizeMetadata": true,
                "disableTotal": false,
                "mediaItems": false,
            }),
            format!(
                "/api/v2/{WALLET_15}/nft?token_addresses[0]={PAIR_B}&token_addresses[1]={RICH}\
                 &token_addresses[2]={PAIR_A}&disable_total=false&normalizeMetadata=true"
            ),
            4,
        ),
        Call::pages(
            "hex ids with total",
            "nft.getWalletNFTs",
            json!({"address": WALLET_15, "chain": "0x1", "format": "hex", "limit": 6,
                   "disableTotal": false}),
            format!("/api/v2/{WALLET_15}/nft?format=hex&disable_total=false"),
            6,
        ),
    ]);
    check_client(&app, "moralis-2.22", "/api/v2", &calls).await;
    app.cleanup().await;
}

/// moralis 2.22.5 (the last with `getErc20Transfers`): contract and wallet filters, block
/// bounds, limits, paging with `next()`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn moralis_2_22_get_erc20_transfers() {
    let app = spawn_enriched(Backend::Sqlite).await;
    // Choose filters that select something from the data itself.
    let all = app.rest_transfers("", 100).await;
    let mut contracts: BTreeMap<String, usize> = BTreeMap::new();
    let mut wallets: BTreeMap<String, usize> = BTreeMap::new();
    for t in &all {
        *contracts
            .entry(lower(&t["contract_address"]).expect("contract"))
            .or_default() += 1;
        for k in ["from_wallet", "to_wallet"] {
            *wallets.entry(lower(&t[k]).expect("wallet")).or_default() += 1;
        }
    }
    let top = |m: &BTreeMap<String, usize>, skip: &[&str]| -> String {
        m.iter()
            .filter(|(a, _)| !skip.contains(&a.as_str()))
            .max_by_key(|(a, n)| (**n, std::cmp::Reverse((*a).clone())))
            .map(|(a, _)| a.clone())
            .expect("some transfers")
    };
    let zero = "0x0000000000000000000000000000000000000000";
    let wallet = top(&wallets, &[zero]);
    let other = top(&contracts, &[USDT]);
    let mut blocks: Vec<u64> = all
        .iter()
        .filter_map(|t| text(&t["block_number"])?.parse().ok())
        .collect();
    blocks.sort_unstable();
    let (from, to) = (blocks[blocks.len() / 4], blocks[blocks.len() * 3 / 4]);
    eprintln!("busiest wallet {wallet}, second contract {other}, blocks {from}..={to}");

    let checksummed_usdt = "0xdAC17F958D2ee523a2206206994597C13D831ec7";
    let calls = vec![
        Call::pages(
            "USDT, limit 100",
            "token.getErc20Transfers",
            json!({"chain": "0x1", "contractAddresses": [checksummed_usdt], "limit": 100}),
            format!("/api/v2/erc20/transfers?chain=eth&contract_addresses={USDT}"),
            100,
        ),
        Call::pages(
            "busiest wallet in a block range, limit 3",
            "token.getErc20Transfers",
            json!({"chain": "0x1", "walletAddresses": [wallet], "fromBlock": from,
                   "toBlock": to, "limit": 3}),
            format!(
                "/api/v2/erc20/transfers?wallet_addresses[]={wallet}&from_block={from}\
                 &to_block={to}"
            ),
            3,
        ),
        Call::pages(
            "two contracts from a block, limit 25",
            "token.getErc20Transfers",
            json!({"chain": "0x1", "contractAddresses": [USDT, other], "fromBlock": from,
                   "limit": 25}),
            format!("/api/v2/erc20/transfers?contract_addresses={other},{USDT}&from_block={from}"),
            25,
        ),
        Call::pages(
            "block range only, default limit",
            "token.getErc20Transfers",
            json!({"chain": "0x1", "fromBlock": from, "toBlock": to}),
            format!("/api/v2/erc20/transfers?from_block={from}&to_block={to}"),
            100,
        ),
        Call::pages(
            "a block range with nothing in it",
            "token.getErc20Transfers",
            json!({"chain": "0x1", "fromBlock": 1, "toBlock": 2, "limit": 10}),
            "/api/v2/erc20/transfers?from_block=1&to_block=2".to_string(),
            10,
        ),
        Call {
            name: "from_block after to_block".into(),
            op: "token.getErc20Transfers",
            params: json!({"chain": "0x1", "fromBlock": to, "toBlock": from}),
            expect: Expect::BadRequest {
                contains: "from_block",
            },
        },
    ];
    let results = check_client(&app, "moralis-2.22", "/api/v2", &calls).await;
    let usdt = typed(&results, "USDT, limit 100");
    assert_eq!(
        usdt.len(),
        all.iter()
            .filter(|t| t["contract_address"] == json!(USDT))
            .count()
    );
    assert!(
        usdt.iter().any(|t| t["from_wallet_label"] == json!(LABEL)),
        "the label reached the SDK"
    );
    app.cleanup().await;
}

/// moralis 2.27.2's v2.2 transfer calls, `getWalletTokenTransfers`, `getTokenTransfers`,
/// `getWalletNFTTransfers`, `getNFTContractTransfers`, `getNFTTransfers`, `getNFTOwners`,
/// `getNFTTokenIdOwners`
/// and `getWalletNFTCollections`, at
/// its default base path: both orders, block and date bounds, a contract filter, paging with
/// `next()`; a date the SDK refuses itself, and dates in the wrong order answered with our 400.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn moralis_2_27_wallet_and_token_transfers() {
    let app = spawn_enriched(Backend::Sqlite).await;
    let all = app.rest_transfers("", 100).await;
    let mut wallets: BTreeMap<String, usize> = BTreeMap::new();
    for t in &all {
        for k in ["from_wallet", "to_wallet"] {
            *wallets.entry(lower(&t[k]).expect("wallet")).or_default() += 1;
        }
    }
    wallets.remove("0x0000000000000000000000000000000000000000");
    let wallet = wallets
        .iter()
        .max_by_key(|(a, n)| (**n, std::cmp::Reverse((*a).clone())))
        .map(|(a, _)| a.clone())
        .expect("some transfers");
    let mut blocks: Vec<u64> = all
        .iter()
        .filter_map(|t| text(&t["block_number"])?.parse().ok())
        .collect();
    blocks.sort_unstable();
    let (from, to) = (blocks[blocks.len() / 4], blocks[blocks.len() * 3 / 4]);
    let since = all
        .iter()
        .find(|t| text(&t["block_number"]) == Some(from.to_string()))
        .and_then(|t| t["block_timestamp"].as_str())
        .expect("a timestamp")
        .to_string();
    let w = format!("/api/v2.2/{wallet}/erc20/transfers?chain=0x1");
    let u = format!("/api/v2.2/erc20/{USDT}/transfers?chain=0x1");
    // The sample's token that moved most, for `getNFTTransfers`.
    let truth = Truth::demo();
    let mut moved: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    for m in &truth.nft_moves {
        *moved.entry((&m.contract, &m.id_hex)).or_default() += 1;
    }
    let ((collection, token), _) = moved
        .iter()
        .max_by_key(|(k, n)| (**n, std::cmp::Reverse(**k)))
        .map(|((c, t), n)| ((c.to_string(), hex_to_dec(t)), *n))
        .filter(|(_, n)| *n > 1)
        .expect("a token that moved twice");
    let calls = vec![
        Call::pages(
            "a wallet's transfers, limit 4",
            "token.getWalletTokenTransfers",
            json!({"chain": "0x1", "address": upper(&wallet), "limit": 4}),
            w.clone(),
            4,
        ),
        Call::pages(
            "a wallet's transfers, oldest first, USDT only",
            "token.getWalletTokenTransfers",
            json!({"chain": "0x1", "address": wallet, "order": "ASC", "limit": 3,
                   "contractAddresses": [USDT]}),
            format!("{w}&order=ASC&contract_addresses={USDT}"),
            3,
        ),
        Call::pages(
            "USDT in a block range, limit 7",
            "token.getTokenTransfers",
            json!({"chain": "0x1", "address": USDT, "fromBlock": from, "toBlock": to,
                   "limit": 7}),
            format!("{u}&from_block={from}&to_block={to}"),
            7,
        ),
        Call::pages(
            "USDT since a date, oldest first",
            "token.getTokenTransfers",
            json!({"chain": "0x1", "address": USDT, "fromDate": since, "order": "ASC",
                   "limit": 50}),
            format!("{u}&from_date={}&order=ASC", common::enc(&since)),
            50,
        ),
        Call::pages(
            "a wallet's NFT moves, limit 5",
            "nft.getWalletNFTTransfers",
            json!({"chain": "0x1", "address": WALLET_15, "limit": 5}),
            format!("/api/v2.2/{WALLET_15}/nft/transfers?chain=0x1"),
            5,
        ),
        Call::pages(
            "one token's NFT moves, limit 1",
            "nft.getNFTTransfers",
            json!({"chain": "0x1", "address": upper(&collection), "tokenId": token, "limit": 1}),
            format!("/api/v2.2/nft/{collection}/{token}/transfers?chain=0x1"),
            1,
        ),
        Call::pages(
            "a collection's NFT moves, oldest first, hex ids",
            "nft.getNFTContractTransfers",
            json!({"chain": "0x1", "address": upper(RICH), "order": "ASC", "format": "hex",
                   "limit": 2}),
            format!("/api/v2.2/nft/{RICH}/transfers?chain=0x1&order=ASC&format=hex"),
            2,
        ),
        Call::pages(
            "a collection's owners, limit 2",
            "nft.getNFTOwners",
            json!({"chain": "0x1", "address": RICH, "limit": 2, "normalizeMetadata": true}),
            format!("/api/v2.2/nft/{RICH}/owners?chain=0x1&normalizeMetadata=true"),
            2,
        ),
        Call::pages(
            "a token's owners",
            "nft.getNFTTokenIdOwners",
            json!({"chain": "0x1", "address": upper(RICH), "tokenId": "3903", "format": "decimal"}),
            format!("/api/v2.2/nft/{RICH}/3903/owners?chain=0x1&format=decimal"),
            100,
        ),
        Call::pages(
            "a wallet's collections with counts, limit 3",
            "nft.getWalletNFTCollections",
            json!({"chain": "0x1", "address": WALLET_15, "limit": 3, "tokenCounts": true}),
            format!("/api/v2.2/{WALLET_15}/nft/collections?chain=0x1&token_counts=true"),
            3,
        ),
        Call {
            name: "a date that is not one".into(),
            op: "token.getTokenTransfers",
            params: json!({"chain": "0x1", "address": USDT, "toDate": "not a date"}),
            expect: Expect::RejectedBySdk {
                contains: "Invalid time value",
            },
        },
        Call {
            name: "from_date after to_date".into(),
            op: "token.getTokenTransfers",
            params: json!({"chain": "0x1", "address": USDT, "fromDate": "2023-03-02",
                           "toDate": "2023-03-01"}),
            expect: Expect::BadRequest {
                contains: "from_date",
            },
        },
    ];
    let results = check_client(&app, "moralis-2.27", "/api/v2.2", &calls).await;
    assert!(
        !typed(&results, "a token's owners").is_empty(),
        "the token has an owner"
    );
    assert_eq!(typed(&results, "a collection's owners, limit 2").len(), 4);
    // WALLET_15 holds 15 NFTs of 10 collections.
    assert_eq!(
        typed(&results, "a wallet's collections with counts, limit 3").len(),
        10
    );
    let usdt = typed(&results, "USDT since a date, oldest first");
    assert!(!usdt.is_empty(), "the date bound selects some transfers");
    let mine = typed(&results, "a wallet's transfers, limit 4");
    assert_eq!(
        mine.len(),
        all.iter()
            .filter(|t| lower(&t["from_wallet"]) == Some(wallet.clone())
                || lower(&t["to_wallet"]) == Some(wallet.clone()))
            .count(),
        "every transfer of the wallet reached the SDK"
    );
    app.cleanup().await;
}

/// moralis 2.27.2's `getWalletTokenBalances` and `getContractNFTs` at `/api/v2.2`, against
/// truth computed here from the sample: a wallet's balances (received minus sent per token,
/// only positive sums, by token address; spam left out by default, a token filter, at a
/// block) and a collection's held tokens (one per token id, by id; hex ids, id 0, metadata).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn moralis_2_27_balances_and_collection_nfts() {
    let truth = Truth::demo();
    let app = spawn_enriched(Backend::Sqlite).await;
    let (holder, spam, listed) = want::balance_wallet(&truth);
    mark_spam(&app, &spam).await;
    let mut blocks: Vec<u64> = truth
        .transfers_of(&[&holder])
        .iter()
        .map(|t| t.block_number)
        .collect();
    blocks.sort_unstable();
    let mid = blocks[blocks.len() / 2];
    let mut held: BTreeMap<&str, usize> = BTreeMap::new();
    for n in truth.nfts.values().flatten() {
        *held.entry(&n.contract).or_default() += 1;
    }
    let (big, _) = held
        .iter()
        .max_by_key(|(a, n)| (**n, std::cmp::Reverse(**a)))
        .map(|(a, n)| (a.to_string(), *n))
        .expect("holdings");
    let zero_id = truth
        .nfts
        .values()
        .flatten()
        .find(|n| n.token_id == "0")
        .map(|n| n.contract.clone())
        .expect("the sample holds a token id 0");
    let truth_call = |name: &str, op: &'static str, params: Value, limit, want| Call {
        name: name.to_string(),
        op,
        params,
        expect: Expect::Truth { limit, want },
    };
    let calls = vec![
        truth_call(
            "a wallet's balances, spam left out by default",
            "token.getWalletTokenBalances",
            json!({"chain": "0x1", "address": upper(&holder)}),
            None,
            Want::balances(&truth, &holder, None, |t| t != spam),
        ),
        truth_call(
            "a wallet's balances with spam",
            "token.getWalletTokenBalances",
            json!({"chain": "0x1", "address": holder, "excludeSpam": false}),
            None,
            Want::balances(&truth, &holder, None, |_| true),
        ),
        truth_call(
            "a wallet's balances of two tokens",
            "token.getWalletTokenBalances",
            json!({"chain": "0x1", "address": holder, "excludeSpam": false,
                   "tokenAddresses": [upper(&spam), listed]}),
            None,
            Want::balances(&truth, &holder, None, |t| t == spam || t == listed),
        ),
        truth_call(
            "a wallet's balances at a block",
            "token.getWalletTokenBalances",
            json!({"chain": "0x1", "address": holder, "toBlock": mid, "excludeSpam": false}),
            None,
            Want::balances(&truth, &holder, Some(mid), |_| true),
        ),
        truth_call(
            "a collection's NFTs, limit 7",
            "nft.getContractNFTs",
            json!({"chain": "0x1", "address": big, "limit": 7}),
            Some(7),
            Want::collection_nfts(&truth, &big, false),
        ),
        truth_call(
            "a collection's NFTs with token id 0, hex ids",
            "nft.getContractNFTs",
            json!({"chain": "0x1", "address": upper(&zero_id), "format": "hex", "limit": 1,
                   "normalizeMetadata": true, "mediaItems": false}),
            Some(1),
            Want::collection_nfts(&truth, &zero_id, true),
        ),
        truth_call(
            "a collection's NFTs with metadata",
            "nft.getContractNFTs",
            json!({"chain": "0x1", "address": RICH, "limit": 3, "normalizeMetadata": true}),
            Some(3),
            Want::collection_nfts(&truth, RICH, false),
        ),
        Call {
            name: "a collection's NFTs, limit out of range".into(),
            op: "nft.getContractNFTs",
            params: json!({"chain": "0x1", "address": big, "limit": 101}),
            expect: Expect::BadRequest { contains: "limit" },
        },
    ];
    for c in &calls {
        if let Expect::Truth { want, .. } = &c.expect {
            assert!(want.len() > 0, "{}: the sample answers something", c.name);
        }
    }
    let results = check_client(&app, "moralis-2.27", "/api/v2.2", &calls).await;
    // The metadata given to RICH's tokens reached the SDK's typed records.
    for t in typed(&results, "a collection's NFTs with metadata") {
        assert_eq!(t["metadata"]["name"], json!(META_NAME), "{t}");
    }
    app.cleanup().await;
}

/// The client folders install what they say: moralis 2.27.x, and 2.22.5 with every
/// `@moralisweb3/*` package pinned (npm would otherwise pull 2.27.x through `^` ranges).
#[test]
fn client_folders_pin_their_sdk() {
    let read = |p: &Path| -> Value {
        let s = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        serde_json::from_str(&s).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    };
    let clients = repo_root().join("tests/clients");
    let p27 = read(&clients.join("moralis-2.27/package.json"));
    let v27 = p27["dependencies"]["moralis"].clone();
    assert!(
        v27.as_str().is_some_and(|v| v.starts_with("2.27.")),
        "{p27}"
    );
    let p22 = read(&clients.join("moralis-2.22/package.json"));
    assert_eq!(p22["dependencies"]["moralis"], json!("2.22.5"), "{p22}");
    let overrides = p22["overrides"].as_object().expect("overrides");
    assert!(overrides.len() >= 12, "{p22}");
    assert!(overrides.values().all(|v| v == "2.22.5"), "{p22}");
    for (client, want) in [("moralis-2.27", v27), ("moralis-2.22", json!("2.22.5"))] {
        let lock = read(&clients.join(client).join("package-lock.json"));
        let packages = lock["packages"].as_object().expect("packages");
        assert_eq!(
            packages["node_modules/moralis"]["version"], want,
            "{client}: package-lock.json"
        );
        for (path, pkg) in packages {
            if path.starts_with("node_modules/@moralisweb3/") && !path.ends_with("streams-typings")
            {
                assert_eq!(pkg["version"], want, "{client}: {path}");
            }
        }
    }
}
