//! Bad requests, table-driven: each answers 400 or 401 (GraphQL: an error with
//! `extensions.code`) with a message that names the problem, never 500. And API keys: a created
//! key works, a revoked one is refused on both APIs.

use crate::support::common;

use common::{gql_str, nfts_query, Auth, Backend, TestApp};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

crate::backend_tests!(bad_requests, api_keys);

const W: &str = "0x430d5dde0cd48989737a95b4c46e1801a9a08531";
const BAD: &str = "0x12345";

/// Which key a case sends.
#[derive(Clone, Copy, Debug)]
enum Key {
    Good,
    Missing,
    Wrong,
    Revoked,
}

enum Req {
    Rest(String),
    Gql(String, Value),
}

struct Case {
    name: String,
    req: Req,
    key: Key,
    /// REST: the expected status. GraphQL: 401 means UNAUTHENTICATED, 400 BAD_USER_INPUT.
    status: u16,
    /// The message must contain one of these (case-insensitive).
    mentions: &'static [&'static str],
}

fn rest(name: &str, path: String, status: u16, mentions: &'static [&'static str]) -> Case {
    Case {
        name: name.to_string(),
        req: Req::Rest(path),
        key: Key::Good,
        status,
        mentions,
    }
}

fn gql(name: &str, query: String, mentions: &'static [&'static str]) -> Case {
    Case {
        name: name.to_string(),
        req: Req::Gql(query, json!({})),
        key: Key::Good,
        status: 400,
        mentions,
    }
}

fn keyed(mut c: Case, key: Key) -> Case {
    c.key = key;
    c
}

/// `n` distinct valid addresses.
fn addresses(n: usize) -> Vec<String> {
    (1..=n).map(|i| format!("0x{i:040x}")).collect()
}

fn cases() -> Vec<Case> {
    let nft = format!("/api/v2/{W}/nft");
    let tr = "/api/v2/erc20/transfers".to_string();
    let many = addresses(101);
    let repeated = |k: &str| {
        many.iter()
            .map(|a| format!("{k}={a}"))
            .collect::<Vec<_>>()
            .join("&")
    };
    let bracketed = |k: &str| {
        many.iter()
            .map(|a| format!("{k}[]={a}"))
            .collect::<Vec<_>>()
            .join("&")
    };
    let ok = "0x00000000000000000000000000000000000000aa";
    let mut v = vec![
        // The NFT route.
        rest("short address", format!("/api/v2/{BAD}/nft"), 400, &["address"]),
        rest(
            "non-hex address",
            "/api/v2/0xzz0d5dde0cd48989737a95b4c46e1801a9a08531/nft".into(),
            400,
            &["address"],
        ),
        rest(
            "address without 0x",
            "/api/v2/430d5dde0cd48989737a95b4c46e1801a9a08531aa/nft".into(),
            400,
            &["address"],
        ),
        rest("unknown chain name", format!("{nft}?chain=dogechain"), 400, &["chain"]),
        rest("unknown chain id", format!("{nft}?chain=0x9999"), 400, &["chain"]),
        rest("limit 0", format!("{nft}?limit=0"), 400, &["limit"]),
        rest("limit 101", format!("{nft}?limit=101"), 400, &["limit"]),
        rest("limit -1", format!("{nft}?limit=-1"), 400, &["limit"]),
        rest("limit abc", format!("{nft}?limit=abc"), 400, &["limit"]),
        rest("limit 1.5", format!("{nft}?limit=1.5"), 400, &["limit"]),
        rest("unknown format", format!("{nft}?format=octal"), 400, &["format"]),
        rest("bad exclude_spam", format!("{nft}?exclude_spam=maybe"), 400, &["exclude_spam"]),
        rest("bad disable_total", format!("{nft}?disable_total=maybe"), 400, &["disable_total"]),
        rest(
            "bad normalizeMetadata",
            format!("{nft}?normalizeMetadata=maybe"),
            400,
            &["normalizemetadata"],
        ),
        rest("bad media_items", format!("{nft}?media_items=maybe"), 400, &["media_items"]),
        rest("garbage NFT cursor", format!("{nft}?cursor=garbage"), 400, &["cursor"]),
        rest(
            "101 token_addresses (repeated keys)",
            format!("{nft}?{}", repeated("token_addresses")),
            400,
            &["token_addresses"],
        ),
        rest(
            "bad token_addresses (repeated keys)",
            format!("{nft}?token_addresses={ok}&token_addresses={BAD}"),
            400,
            &["token_addresses"],
        ),
        rest(
            "bad token_addresses (brackets)",
            format!("{nft}?token_addresses[]={ok}&token_addresses[]={BAD}"),
            400,
            &["token_addresses"],
        ),
        rest(
            "bad token_addresses (percent-encoded brackets)",
            format!("{nft}?token_addresses%5B%5D={BAD}"),
            400,
            &["token_addresses"],
        ),
        rest(
            "bad token_addresses (indexed)",
            format!("{nft}?token_addresses[0]={ok}&token_addresses[1]={BAD}"),
            400,
            &["token_addresses"],
        ),
        rest(
            "bad token_addresses (comma-separated)",
            format!("{nft}?token_addresses={ok},{BAD}"),
            400,
            &["token_addresses"],
        ),
        // The transfers route.
        rest(
            "from_block > to_block",
            format!("{tr}?from_block=10&to_block=5"),
            400,
            &["from_block", "to_block"],
        ),
        rest("negative from_block", format!("{tr}?from_block=-1"), 400, &["from_block"]),
        rest("non-integer to_block", format!("{tr}?to_block=abc"), 400, &["to_block"]),
        rest("huge from_block", format!("{tr}?from_block=99999999999999999999999"), 400, &["from_block"]),
        rest("transfers limit 0", format!("{tr}?limit=0"), 400, &["limit"]),
        rest("transfers limit 101", format!("{tr}?limit=101"), 400, &["limit"]),
        rest("transfers unknown chain", format!("{tr}?chain=nope"), 400, &["chain"]),
        rest("garbage transfer cursor", format!("{tr}?cursor=abc.def"), 400, &["cursor"]),
        rest(
            "101 wallet_addresses (brackets)",
            format!("{tr}?{}", bracketed("wallet_addresses")),
            400,
            &["wallet_addresses"],
        ),
        rest(
            "bad wallet_addresses (repeated keys)",
            format!("{tr}?wallet_addresses={BAD}"),
            400,
            &["wallet_addresses"],
        ),
        rest(
            "bad wallet_addresses (brackets)",
            format!("{tr}?wallet_addresses[]={ok}&wallet_addresses[]={BAD}"),
            400,
            &["wallet_addresses"],
        ),
        rest(
            "bad wallet_addresses (indexed)",
            format!("{tr}?wallet_addresses[0]={BAD}"),
            400,
            &["wallet_addresses"],
        ),
        rest(
            "bad wallet_addresses (comma-separated)",
            format!("{tr}?wallet_addresses={ok},{BAD}"),
            400,
            &["wallet_addresses"],
        ),
        rest(
            "bad contract_addresses",
            format!("{tr}?contract_addresses[]={BAD}"),
            400,
            &["contract_addresses"],
        ),
        rest(
            "101 contract_addresses",
            format!("{tr}?{}", repeated("contract_addresses")),
            400,
            &["contract_addresses"],
        ),
        rest("bad exclude_wallets", format!("{tr}?exclude_wallets={BAD}"), 400, &["exclude_wallets"]),
        rest(
            "bad exclude_contracts",
            format!("{tr}?exclude_contracts[0]={BAD}"),
            400,
            &["exclude_contracts"],
        ),
        // Auth on REST.
        keyed(rest("NFT route without key", nft.clone(), 401, &["key"]), Key::Missing),
        keyed(rest("NFT route with a wrong key", nft.clone(), 401, &["key"]), Key::Wrong),
        keyed(rest("NFT route with a revoked key", nft.clone(), 401, &["key"]), Key::Revoked),
        keyed(rest("transfers without key", tr.clone(), 401, &["key"]), Key::Missing),
        keyed(rest("transfers with a revoked key", tr.clone(), 401, &["key"]), Key::Revoked),
        // GraphQL.
        gql(
            "GraphQL first: \"abc\"",
            nfts_query(W, "first: \"abc\""),
            &["first"],
        ),
        gql("GraphQL first: 0", nfts_query(W, "first: 0"), &["first"]),
        gql("GraphQL first: 101", nfts_query(W, "first: 101"), &["first"]),
        gql("GraphQL first: -1", nfts_query(W, "first: -1"), &["first"]),
        gql("GraphQL bad address", nfts_query(BAD, ""), &["address"]),
        gql("GraphQL address: 42", nfts_query(W, "").replace(&gql_str(W), "42"), &["address"]),
        gql(
            "GraphQL unknown chain",
            nfts_query(W, "chain: \"dogechain\""),
            &["chain"],
        ),
        gql(
            "GraphQL garbage cursor",
            nfts_query(W, "after: \"garbage\""),
            &["after", "cursor"],
        ),
        gql(
            "GraphQL bad tokenAddresses",
            nfts_query(W, &format!("tokenAddresses: [{}]", gql_str(BAD))),
            &["tokenaddresses", "token_addresses"],
        ),
        gql(
            "GraphQL bad walletAddresses",
            common::transfers_query(&format!("walletAddresses: [{}]", gql_str(BAD))),
            &["walletaddresses", "wallet_addresses"],
        ),
        gql(
            "GraphQL 101 walletAddresses",
            common::transfers_query(&format!(
                "walletAddresses: [{}]",
                many.iter().map(|a| gql_str(a)).collect::<Vec<_>>().join(", ")
            )),
            &["walletaddresses", "wallet_addresses"],
        ),
        gql(
            "GraphQL fromBlock > toBlock",
            common::transfers_query("fromBlock: 10, toBlock: 5"),
            &["fromblock", "from_block", "toblock", "to_block"],
        ),
        gql(
            "GraphQL negative fromBlock",
            common::transfers_query("fromBlock: -1"),
            &["fromblock", "from_block"],
        ),
        gql(
            "GraphQL transfers first: 0",
            common::transfers_query("first: 0"),
            &["first"],
        ),
        Case {
            name: "GraphQL first as a string variable".into(),
            req: Req::Gql(
                format!(
                    "query($n: Int) {{ nftsByWallet(address: {}, first: $n) {{ edges {{ cursor }} }} }}",
                    gql_str(W)
                ),
                json!({ "n": "abc" }),
            ),
            key: Key::Good,
            status: 400,
            mentions: &["first", "$n", "\"n\""],
        },
        gql(
            "GraphQL over-deep query (past the depth limit)",
            format!(
                "{{ __schema {{ types {{ {}name{} }} }} }}",
                "fields { type { ".to_string() + &"ofType { ".repeat(20),
                " }".repeat(22)
            ),
            &["deep", "depth"],
        ),
        gql(
            "GraphQL over-deep query (past the parser's nesting limit)",
            format!(
                "{{ __schema {{ types {{ {}name{} }} }} }}",
                "fields { type { ".to_string() + &"ofType { ".repeat(40),
                " }".repeat(42)
            ),
            &["deep", "depth", "recursion"],
        ),
        gql(
            "GraphQL over-complex query",
            format!(
                "{{ {} }}",
                (0..20)
                    .map(|i| format!(
                        "a{i}: erc20Transfers(first: 100) {{ edges {{ cursor node {{ \
                         contractAddress fromWallet toWallet value valueDecimal blockNumber \
                         tokenName tokenSymbol tokenDecimals }} }} }}"
                    ))
                    .collect::<Vec<_>>()
                    .join(" ")
            ),
            &["complex"],
        ),
        keyed(
            gql("GraphQL without key", nfts_query(W, ""), &["key"]),
            Key::Missing,
        ),
        keyed(
            gql("GraphQL with a wrong key", nfts_query(W, ""), &["key"]),
            Key::Wrong,
        ),
        keyed(
            gql("GraphQL with a revoked key", nfts_query(W, ""), &["key"]),
            Key::Revoked,
        ),
    ];
    for c in &mut v {
        if matches!(c.key, Key::Missing | Key::Wrong | Key::Revoked) {
            c.status = 401;
        }
    }
    v
}

/// Things that must never reach a client.
fn assert_no_internals(what: &str, msg: &str) {
    let m = msg.to_lowercase();
    for leak in [
        "panicked",
        "sqlx",
        "select ",
        "syntax error at",
        "stack backtrace",
        "sea_orm",
    ] {
        assert!(
            !m.contains(leak),
            "{what}: message leaks internals ({leak}): {msg}"
        );
    }
}

async fn run_case(app: &TestApp, revoked: &str, c: &Case) -> Result<(), String> {
    let key = match c.key {
        Key::Good => Auth::Default,
        Key::Missing => Auth::None,
        Key::Wrong => Auth::Key("tq_not_a_real_key_at_all_0000000000000000000000"),
        Key::Revoked => Auth::Key(revoked),
    };
    let mention = |msg: &str| {
        let m = msg.to_lowercase();
        c.mentions.iter().any(|x| m.contains(&x.to_lowercase()))
    };
    match &c.req {
        Req::Rest(path) => {
            let (status, _, body) = app.get_rest_with(path, key, &[]).await;
            let msg = body["message"].as_str().unwrap_or_default();
            if status != c.status {
                return Err(format!(
                    "{}: expected {}, got {status}: {body}",
                    c.name, c.status
                ));
            }
            if !mention(msg) {
                return Err(format!(
                    "{}: message should mention one of {:?}: {body}",
                    c.name, c.mentions
                ));
            }
            assert_no_internals(&c.name, msg);
        }
        Req::Gql(query, vars) => {
            let (status, body) = app.graphql_with(query, vars.clone(), key).await;
            let (want_code, statuses) = if c.status == 401 {
                ("UNAUTHENTICATED", [200, 401])
            } else {
                ("BAD_USER_INPUT", [200, 400])
            };
            if !statuses.contains(&status) {
                return Err(format!("{}: GraphQL status {status}: {body}", c.name));
            }
            let err = &body["errors"][0];
            let msg = err["message"].as_str().unwrap_or_default();
            if err["extensions"]["code"].as_str() != Some(want_code) {
                return Err(format!(
                    "{}: expected errors[0].extensions.code {want_code}: {body}",
                    c.name
                ));
            }
            if !mention(msg) {
                return Err(format!(
                    "{}: errors[0].message should mention one of {:?}: {body}",
                    c.name, c.mentions
                ));
            }
            if !body["data"].is_null() {
                let d = &body["data"];
                let leaked = d
                    .as_object()
                    .is_some_and(|o| o.values().any(|v| !v.is_null()));
                if leaked {
                    return Err(format!("{}: data alongside the error: {body}", c.name));
                }
            }
            assert_no_internals(&c.name, msg);
        }
    }
    Ok(())
}

async fn bad_requests(backend: Backend) {
    let app = common::spawn(backend).await;
    app.load_demo().await;
    let (info, revoked) = tokenql::keys::create(&app.db, "to-revoke")
        .await
        .expect("create a key");
    assert_eq!(
        tokenql::keys::revoke(&app.db, &info.id.to_string())
            .await
            .expect("revoke"),
        1
    );

    let cases = cases();
    assert!(cases.len() >= 30, "at least 30 cases");
    let mut failures = Vec::new();
    for c in &cases {
        if let Err(e) = run_case(&app, &revoked, c).await {
            failures.push(e);
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} bad requests were not refused as they should be:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
    uri_too_long(&app).await;
    app.cleanup().await;
}

/// A URI longer than the HTTP layer reads is refused with 414 and an empty body, before any
/// route runs, and the OpenAPI document says so (and 431, a head too large) for every
/// operation: clients and fuzzers check the status against it.
async fn uri_too_long(app: &TestApp) {
    // Sent by hand: HTTP clients refuse to build such a URI, but fuzzers and raw sockets do not.
    let addr = app.base.trim_start_matches("http://");
    let mut conn = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let uri = format!(
        "/api/v2/erc20/transfers?chain=eth&wallet_addresses={}",
        "a".repeat(70_000)
    );
    let request = format!("GET {uri} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    conn.write_all(request.as_bytes()).await.expect("send");
    let mut answer = String::new();
    conn.read_to_string(&mut answer)
        .await
        .expect("read the answer");
    assert!(
        answer.starts_with("HTTP/1.1 414 "),
        "a 70,000-byte URI: {answer}"
    );
    assert!(
        answer.to_lowercase().contains("content-length: 0"),
        "414 has an empty body: {answer}"
    );
    let doc = tokenql::rest::openapi::document();
    let doc = serde_json::to_value(doc).expect("the document serialises");
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for (method, op) in item.as_object().expect("a path item") {
            if op.get("responses").is_none() {
                continue;
            }
            for status in ["414", "431"] {
                let r = &op["responses"][status];
                assert!(r.is_object(), "{method} {path} documents no {status}");
                assert!(
                    r.get("content").is_none(),
                    "{method} {path}: {status} has a body"
                );
            }
        }
    }
}

async fn expect_ok(app: &TestApp, key: &str) {
    let auth = Auth::Key(key);
    for path in [
        format!("/api/v2/{W}/nft?limit=1"),
        "/api/v2/erc20/transfers?limit=1".to_string(),
    ] {
        let (status, _, body) = app.get_rest_with(&path, auth, &[]).await;
        assert_eq!(status, 200, "GET {path} with a valid key: {body}");
    }
    let (status, body) = app
        .graphql_with(&nfts_query(W, "first: 1"), Value::Null, auth)
        .await;
    assert!(
        status == 200 && body["errors"].is_null() && body["data"]["nftsByWallet"].is_object(),
        "GraphQL with a valid key ({status}): {body}"
    );
}

async fn expect_refused(app: &TestApp, key: &str, what: &str) {
    let auth = Auth::Key(key);
    for path in [
        format!("/api/v2/{W}/nft?limit=1"),
        "/api/v2/erc20/transfers?limit=1".to_string(),
        format!("/api/v2.2/{W}/nft?limit=1"),
    ] {
        let (status, _, body) = app.get_rest_with(&path, auth, &[]).await;
        assert_eq!(status, 401, "GET {path} with {what}: {body}");
        let msg = body["message"].as_str().unwrap_or_default().to_lowercase();
        assert!(
            msg.contains("key"),
            "GET {path} with {what}: message {body}"
        );
    }
    let (status, body) = app
        .graphql_with(&nfts_query(W, "first: 1"), Value::Null, auth)
        .await;
    assert!(
        status == 200 || status == 401,
        "GraphQL with {what} ({status}): {body}"
    );
    assert_eq!(
        body["errors"][0]["extensions"]["code"].as_str(),
        Some("UNAUTHENTICATED"),
        "GraphQL with {what}: {body}"
    );
    assert!(
        body["data"].is_null() || body["data"]["nftsByWallet"].is_null(),
        "GraphQL with {what} returned data: {body}"
    );
}

async fn api_keys(backend: Backend) {
    let app = common::spawn(backend).await;
    app.load_demo().await;

    // The harness's key, and a second one, both work.
    expect_ok(&app, &app.key).await;
    let (second, secret) = tokenql::keys::create(&app.db, "second").await.expect("key");
    assert_ne!(secret, app.key);
    expect_ok(&app, &secret).await;

    // SDK habits: the JS SDK also sends `Authorization: Bearer`, the Python SDK an Accept
    // with a charset; the newest JS SDK uses /api/v2.2.
    let path = format!("/api/v2/{W}/nft?limit=1");
    let bearer = format!("Bearer {secret}");
    let (status, _, body) = app
        .get_rest_with(&path, Auth::Key(&secret), &[("Authorization", &bearer)])
        .await;
    assert_eq!(status, 200, "X-API-Key with Authorization: Bearer: {body}");
    let (status, _, body) = app
        .get_rest_with(&path, Auth::None, &[("Authorization", &bearer)])
        .await;
    assert_eq!(
        status, 401,
        "Authorization: Bearer alone is not a key: {body}"
    );
    let (status, _, body) = app
        .get_rest_with(
            &path,
            Auth::Key(&secret),
            &[("Accept", "application/json; charset=utf-8")],
        )
        .await;
    assert_eq!(status, 200, "Python SDK Accept header: {body}");
    let (status, _, body) = app
        .get_rest_with(
            &format!("/api/v2.2/{W}/nft?limit=1"),
            Auth::Key(&secret),
            &[],
        )
        .await;
    assert_eq!(status, 200, "/api/v2.2: {body}");

    // Revoking one key (by id) refuses it everywhere and leaves the other working.
    let n = tokenql::keys::revoke(&app.db, &second.id.to_string())
        .await
        .expect("revoke");
    assert_eq!(n, 1, "one key revoked");
    expect_refused(&app, &secret, "a revoked key").await;
    expect_ok(&app, &app.key).await;

    // Revoking by name works too.
    let n = tokenql::keys::revoke(&app.db, "blackbox")
        .await
        .expect("revoke");
    assert_eq!(n, 1, "one key revoked by name");
    expect_refused(&app, &app.key, "a key revoked by name").await;

    // A fresh key works again.
    let (_, third) = tokenql::keys::create(&app.db, "third").await.expect("key");
    expect_ok(&app, &third).await;

    app.cleanup().await;
}
