//! Which Moralis operations tokenql serves, seen from outside: `endpointWeights` lists exactly
//! the operations the OpenAPI document describes (every served route is documented), each of
//! them answers (no 404, no 501), every other Moralis operation answers a 501 naming itself at
//! its real path and method, and the README's compatibility table lists every operation with
//! the same verdict.

use reqwest::Method;
use serde_json::{json, Value};
use tokenql::rest::operations::{Support, OPERATIONS};

use crate::support::common::{self, Backend, TestApp};

const WALLET: &str = "0x430d5dde0cd48989737a95b4c46e1801a9a08531";

/// `path` with its parameters filled in: an address, a token id, a chain, a protocol.
fn concrete(path: &str) -> String {
    path.split('/')
        .map(|s| match s {
            "{token_id}" => "1".to_string(),
            "{chain}" => "eth".to_string(),
            s if s.starts_with('{') && s.contains("address") => WALLET.to_string(),
            s if s.starts_with('{') => "x1".to_string(),
            s => s.to_string(),
        })
        .collect::<Vec<_>>()
        .join("/")
}

async fn send(app: &TestApp, method: &str, uri: &str) -> (u16, Value) {
    let method = Method::from_bytes(method.as_bytes()).expect("method");
    let resp = app
        .client
        .request(method, format!("{}{uri}", app.base))
        .header("X-API-Key", &app.key)
        .send()
        .await
        .expect("request");
    let status = resp.status().as_u16();
    let body = resp.json().await.unwrap_or(Value::Null);
    (status, body)
}

/// The served Data API operations of the OpenAPI document (the Streams routes are another
/// API's): (operation id, path with `:name`).
fn documented() -> Vec<(String, String)> {
    let doc = serde_json::to_value(tokenql::rest::openapi::document()).expect("document");
    let mut ops: Vec<(String, String)> = doc["paths"]
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(path, _)| !tokenql::rest::streams::at_root(path))
        .flat_map(|(path, item)| {
            item.as_object()
                .into_iter()
                .flatten()
                .filter_map(|(_, op)| op["operationId"].as_str())
                .map(|id| {
                    let colon = path.replace('{', ":").replace('}', "");
                    (id.to_string(), colon)
                })
                .collect::<Vec<_>>()
        })
        .collect();
    ops.sort();
    ops
}

/// The utilities, the served routes and the 501s.
pub(super) async fn moralis_routes(backend: Backend) {
    let app = common::spawn(backend).await;
    app.load_demo().await;
    for prefix in ["/api/v2", "/api/v2.2"] {
        let (status, body) = send(&app, "GET", &format!("{prefix}/web3/version")).await;
        assert_eq!(
            (status, body),
            (200, json!({"version": env!("CARGO_PKG_VERSION")}))
        );
    }
    let (status, weights) = send(&app, "GET", "/api/v2.2/info/endpointWeights").await;
    assert_eq!(status, 200, "{weights}");
    let mut listed: Vec<(String, String)> = weights
        .as_array()
        .into_iter()
        .flatten()
        .map(|w| {
            assert_eq!(
                (&w["rateLimitCost"], &w["price"]),
                (&json!("1"), &json!("0"))
            );
            let s = |k: &str| w[k].as_str().unwrap_or_default().to_string();
            (s("endpoint"), s("path"))
        })
        .collect();
    listed.sort();
    assert_eq!(
        listed,
        documented(),
        "endpointWeights lists what the document describes"
    );
    assert!(listed.len() >= 19, "{listed:?}");

    for (op, prefix) in OPERATIONS
        .iter()
        .flat_map(|op| [(op, "/api/v2"), (op, "/api/v2.2")])
    {
        let uri = format!("{prefix}{}", concrete(op.path));
        let (status, body) = send(&app, op.method, &uri).await;
        let message = body["message"].as_str().unwrap_or_default();
        match op.support {
            // Served: answered, or refused for a missing parameter (`dateToBlock` needs a
            // `date`, the `POST` routes a body), or, for native balances, a chain endpoint this
            // server has not; an NFT or a collection tokenql does not know is the route's own
            // 404, which says so.
            Support::Served => assert!(
                ![404, 405, 501].contains(&status)
                    || (status == 404 && message.contains(" not found: ")),
                "{} {uri}: {status} {body}",
                op.id
            ),
            _ => {
                assert_eq!(status, 501, "{} {uri}: {body}", op.id);
                assert!(
                    message.starts_with(op.id) && message.contains("not served"),
                    "{message}"
                );
            }
        }
    }
    // A 501 route's path with something else than an address first is no route; another
    // method is a 405; the served routes beside the 501s still answer.
    let (status, _) = send(&app, "GET", "/api/v2/not-an-address/reserves").await;
    assert_eq!(status, 404);
    let (status, _) = send(&app, "GET", "/api/v2/erc20/prices").await;
    assert_eq!(status, 405);
    let (status, _) = send(&app, "GET", "/api/v2/nope").await;
    assert_eq!(status, 404);
    let (status, body) = send(&app, "GET", &format!("/api/v2/{WALLET}")).await;
    assert_eq!(status, 501, "{body}");
    app.cleanup().await;
}

/// The README's table: one row per operation, `served` or the reason it is not.
#[test]
fn readme_lists_every_operation() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("README.md");
    let section = readme
        .split("\n## Moralis compatibility")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .expect("README.md has a section \"## Moralis compatibility\"");
    let rows: Vec<Vec<String>> = section
        .lines()
        .filter(|l| l.starts_with("| `") && l.contains("` | `"))
        .map(|l| l.split('|').map(|c| c.trim().to_string()).collect())
        .collect();
    for op in OPERATIONS {
        let row = rows
            .iter()
            .find(|r| r.get(1).is_some_and(|c| c == &format!("`{}`", op.id)))
            .unwrap_or_else(|| panic!("README.md has no row for {}", op.id));
        assert_eq!(row[2], format!("`{} {}`", op.method, op.path), "{}", op.id);
        let verdict = &row[3];
        match op.support {
            Support::Served => assert!(verdict.starts_with("served"), "{}: {verdict}", op.id),
            Support::Planned => assert!(verdict.starts_with("planned"), "{}: {verdict}", op.id),
            Support::Unserved(_) => assert!(verdict.starts_with("501"), "{}: {verdict}", op.id),
        }
    }
    let listed = rows.iter().filter(|r| r.len() > 4).count();
    assert_eq!(
        listed,
        OPERATIONS.len(),
        "README.md lists operations tokenql does not know"
    );
}
