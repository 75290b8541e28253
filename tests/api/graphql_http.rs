//! The GraphQL endpoint over HTTP, in process (`router.oneshot`): auth, statuses, GET, the
//! playground.

use axum::body::Body;
use axum::http::{Request, StatusCode};
use serde_json::{json, Value};

use crate::support::graphql::*;

const SMALL: &str = "{ erc20Transfers(first: 2) { edges { node { value } } } }";

fn encode(s: &str) -> String {
    form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_valid_key_the_answer_is_401_unauthenticated() {
    let env = setup().await;
    let (status, body) = env.post(None, SMALL, json!({})).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(body["data"], Value::Null);
    let (code, message) = only_error(&body);
    assert_eq!(code, "UNAUTHENTICATED");
    assert!(message.contains("X-API-Key"), "{message}");
    assert_eq!(
        body.as_object()
            .map(|o| o.keys().cloned().collect::<Vec<_>>()),
        Some(vec!["data".to_string(), "errors".to_string()])
    );

    let (status, body) = env.post(Some("tq_not_a_key"), SMALL, json!({})).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(only_error(&body).0, "UNAUTHENTICATED");

    // A revoked key.
    let (_, revoked) = tokenql::keys::create(&env.db, "revoked").await.unwrap();
    tokenql::keys::revoke(&env.db, "revoked").await.unwrap();
    let (status, body) = env.post(Some(&revoked), SMALL, json!({})).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(only_error(&body).0, "UNAUTHENTICATED");

    // GET needs the key too.
    let req = Request::get(format!("/graphql?query={}", encode(SMALL)))
        .body(Body::empty())
        .unwrap();
    let (status, text) = env.http(req).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{text}");
    assert!(text.contains("\"UNAUTHENTICATED\""));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn post_and_get_execute_queries() {
    let env = setup().await;
    let (status, body) = env.post(Some(&env.key), SMALL, json!({})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body["data"]["erc20Transfers"]["edges"]
            .as_array()
            .map(Vec::len),
        Some(2)
    );

    // The header name is case-insensitive; variables work.
    let req = Request::post("/graphql")
        .header("content-type", "application/json")
        .header("x-api-key", &env.key)
        .body(Body::from(
            json!({
                "query": "query($a: Address!) { nftsByWallet(address: $a) { totalCount } }",
                "variables": { "a": NFT_WALLET }
            })
            .to_string(),
        ))
        .unwrap();
    let (status, text) = env.http(req).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["data"]["nftsByWallet"]["totalCount"], WALLET_NFTS);

    let req = Request::get(format!(
        "/graphql?query={}&variables={}",
        encode("query($n: Int!) { erc20Transfers(first: $n) { edges { cursor } } }"),
        encode(r#"{"n": 3}"#)
    ))
    .header("X-API-Key", &env.key)
    .header("accept", "application/json")
    .body(Body::empty())
    .unwrap();
    let (status, text) = env.http(req).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        v["data"]["erc20Transfers"]["edges"]
            .as_array()
            .map(Vec::len),
        Some(3)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn user_errors_are_400_with_bad_user_input() {
    let env = setup().await;
    for query in [
        "{ erc20Transfers(first: 0) { status } }",
        "{ erc20Transfers(first: \"x\") { status } }",
        "{ erc20Transfers { nope } }",
        "{ erc20Transfers(",
    ] {
        let (status, body) = env.post(Some(&env.key), query, json!({})).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{query}: {body}");
        assert_eq!(body["data"], Value::Null);
        let errors = body["errors"].as_array().cloned().unwrap_or_default();
        assert!(!errors.is_empty());
        for e in errors {
            assert_eq!(e["extensions"]["code"], "BAD_USER_INPUT", "{body}");
        }
    }

    // A body that is not a GraphQL request.
    let req = Request::post("/graphql")
        .header("content-type", "application/json")
        .header("X-API-Key", &env.key)
        .body(Body::from("{not json"))
        .unwrap();
    let (status, text) = env.http(req).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["data"], Value::Null);
    assert_eq!(only_error(&v).0, "BAD_USER_INPUT");

    // Too large a body.
    let huge = format!("{{\"query\": \"{}\"}}", " ".repeat(300 * 1024));
    let req = Request::post("/graphql")
        .header("content-type", "application/json")
        .header("X-API-Key", &env.key)
        .body(Body::from(huge))
        .unwrap();
    let (status, _) = env.http(req).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn browsers_get_the_playground() {
    let env = setup().await;
    for (uri, accept) in [
        ("/playground", "*/*"),
        ("/graphql", "text/html,application/xhtml+xml"),
    ] {
        let req = Request::get(uri)
            .header("accept", accept)
            .body(Body::empty())
            .unwrap();
        let (status, text) = env.http(req).await;
        assert_eq!(status, StatusCode::OK, "{uri}");
        assert!(text.contains("graphiql"), "{uri}");
        assert!(text.contains("X-API-Key"), "{uri}");
        assert!(
            text.contains("nftsByWallet") && text.contains("erc20Transfers"),
            "{uri}"
        );
    }
}

/// An object's path in a response, and the keys it must have, in order.
type KeysAt<'a> = (&'a str, &'a [&'a str]);

/// The keys of the object at `path` (`/`-separated, list items by index) of a response written
/// as JSON text, in the order the text has them.
fn keys(text: &str, path: &str) -> Vec<String> {
    let mut v: async_graphql::Value = serde_json::from_str(text).expect("a JSON response");
    for part in path.split('/').filter(|p| !p.is_empty()) {
        v = match v {
            async_graphql::Value::Object(mut o) => o.shift_remove(part).unwrap_or_default(),
            async_graphql::Value::List(mut l) => {
                let i: usize = part.parse().expect("an index");
                l.swap_remove(i)
            }
            other => panic!("{path}: {part} of {other}"),
        };
    }
    match v {
        async_graphql::Value::Object(o) => o.keys().map(|k| k.to_string()).collect(),
        other => panic!("{path} is not an object: {other}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_keep_the_documents_field_order() {
    let env = setup().await;
    let cases: &[(&str, &[KeysAt])] = &[
        (
            "{ token(address: \"USDT\") { transfers(first: 2) { edges { node { value logIndex } } } symbol address } }",
            &[
                ("data/token", &["transfers", "symbol", "address"]),
                ("data/token/transfers/edges/1/node", &["value", "logIndex"]),
            ],
        ),
        (
            "{ token(address: \"USDT\") { address symbol transfers(first: 2) { status edges { node { logIndex value } cursor } } } }",
            &[
                ("data/token", &["address", "symbol", "transfers"]),
                ("data/token/transfers", &["status", "edges"]),
                ("data/token/transfers/edges/0", &["node", "cursor"]),
            ],
        ),
        (
            "{ w: wallet(address: \"WALLET\") { n: nfts(first: 2) { edges { node { tokenId a: tokenAddress } } } t: erc20Transfers(first: 1) { status } } tk: token(address: \"USDT\") { s: symbol } }",
            &[
                ("data", &["w", "tk"]),
                ("data/w", &["n", "t"]),
                ("data/w/n/edges/0/node", &["tokenId", "a"]),
            ],
        ),
        (
            "query { token(address: \"USDT\") { ...T name } } fragment T on Token { transfers(first: 2) { edges { node { ... on Erc20Transfer { blockNumber } value } } } decimals }",
            &[
                ("data/token", &["transfers", "decimals", "name"]),
                ("data/token/transfers/edges/0/node", &["blockNumber", "value"]),
            ],
        ),
    ];
    for (query, expected) in cases {
        let query = query.replace("USDT", USDT).replace("WALLET", NFT_WALLET);
        let body = json!({ "query": query }).to_string();
        let req = Request::post("/graphql")
            .header("content-type", "application/json")
            .header("X-API-Key", &env.key)
            .body(Body::from(body))
            .unwrap();
        let (status, text) = env.http(req).await;
        assert_eq!(status, StatusCode::OK, "{text}");
        for (path, want) in *expected {
            assert_eq!(keys(&text, path), *want, "{path} of {query}:\n{text}");
        }
        // The same values as async-graphql's own executor gives (whose order is that of the
        // fields' completion) and as the in-process path.
        let http: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(http, env.exec_plain(&query).await, "{query}");
        assert_eq!(http, env.exec(&query, json!({})).await, "{query}");
    }
}
