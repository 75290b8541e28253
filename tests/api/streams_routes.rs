//! The Moralis Streams management routes, black-box on every backend: input parsed at the
//! boundary (a 400 naming the field, never a 500), streams visible to their own key only (404
//! otherwise), pages by cursor, addresses one or many, the per-key secret made once, and the
//! JSON 401 / 405 answers. Deliveries are `tests/chain/webhooks.rs`'s.

use serde_json::{json, Value};

use crate::support::common::{self, Backend, TestApp};

crate::backend_tests!(management_routes_parse_at_the_boundary_and_keep_keys_apart);

/// `METHOD path` with `key` and a raw body; status and JSON answer.
async fn send(
    app: &TestApp,
    key: Option<&str>,
    method: &str,
    path: &str,
    body: &str,
) -> (u16, Value) {
    let url = format!("{}{path}", app.base);
    let method = reqwest::Method::from_bytes(method.as_bytes()).expect("method");
    let mut req = app.client.request(method, &url);
    if let Some(k) = key {
        req = req.header("X-API-Key", k);
    }
    if !body.is_empty() {
        req = req
            .header("content-type", "application/json")
            .body(body.to_string());
    }
    let resp = req.send().await.expect("request");
    let status = resp.status().as_u16();
    let text = resp.text().await.expect("body");
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// A 400 whose message names `field`.
fn names(answer: &(u16, Value), field: &str) -> bool {
    answer.0 == 400
        && answer.1["message"]
            .as_str()
            .is_some_and(|m| m.starts_with(&format!("{field}:")))
}

const HOOK: &str = r#""webhookUrl": "http://127.0.0.1:9/hook""#;

async fn refusals(app: &TestApp) {
    let k = Some(app.key.as_str());
    let put = |body: String| async move { send(app, k, "PUT", "/streams/evm", &body).await };
    assert_eq!(send(app, None, "GET", "/streams/evm", "").await.0, 401);
    assert!(names(&put("{nope".into()).await, "body"));
    assert!(names(&put("[]".into()).await, "body"));
    assert!(names(
        &put(r#"{"chainIds": ["0x1"]}"#.into()).await,
        "webhookUrl"
    ));
    assert!(names(&put(format!(r#"{{{HOOK}}}"#)).await, "chainIds"));
    assert!(names(
        &put(format!(r#"{{{HOOK}, "chainIds": ["0xnope"]}}"#)).await,
        "chainIds"
    ));
    assert!(names(
        &put(r#"{"webhookUrl": "ftp://x", "chainIds": ["0x1"]}"#.into()).await,
        "webhookUrl"
    ));
    let other_event = put(format!(
        r#"{{{HOOK}, "chainIds": ["0x1"], "topic0": ["Approval(address,address,uint256)"]}}"#
    ))
    .await;
    assert!(names(&other_event, "topic0"), "{other_event:?}");
    assert!(other_event.1["message"]
        .as_str()
        .is_some_and(|m| m.contains("token transfer events only")));
    for field in ["includeNativeTxs", "includeInternalTxs", "includeAllTxLogs"] {
        let a = put(format!(
            r#"{{{HOOK}, "chainIds": ["0x1"], "{field}": true}}"#
        ))
        .await;
        assert!(names(&a, field), "{a:?}");
    }
    let abi = r#"[{"type": "event", "name": "Approval", "inputs": []}]"#;
    assert!(names(
        &put(format!(r#"{{{HOOK}, "chainIds": ["0x1"], "abi": {abi}}}"#)).await,
        "abi"
    ));
    assert!(names(
        &send(app, k, "GET", "/streams/evm?limit=0", "").await,
        "limit"
    ));
    assert!(names(
        &send(app, k, "GET", "/streams/evm/not-a-stream", "").await,
        "id"
    ));
    let unknown = "/streams/evm/00000000-0000-4000-8000-000000000000";
    let a = send(app, k, "GET", unknown, "").await;
    assert_eq!(a.0, 404, "{a:?}");
    assert_eq!(send(app, k, "PATCH", "/streams/evm", "").await.0, 405);
    assert!(names(
        &send(app, k, "POST", "/settings", r#"{"secretKey": "short"}"#).await,
        "secretKey"
    ));
}

async fn create(app: &TestApp, tag: &str) -> Value {
    let body = format!(
        r#"{{{HOOK}, "chainIds": ["eth"], "tag": "{tag}", "topic0": ["Transfer(address,address,uint256)"]}}"#
    );
    let (s, v) = send(app, Some(&app.key), "PUT", "/streams/evm", &body).await;
    assert_eq!(s, 200, "{v}");
    v
}

async fn management_routes_parse_at_the_boundary_and_keep_keys_apart(backend: Backend) {
    let app = common::spawn(backend).await;
    let k = Some(app.key.as_str());
    refusals(&app).await;

    let first = create(&app, "one").await;
    let second = create(&app, "two").await;
    assert_eq!(first["status"], "active");
    assert_eq!(first["chainIds"], json!(["0x1"]));
    assert_eq!(
        first["topic0"],
        json!(["Transfer(address,address,uint256)"])
    );
    let id = first["id"].as_str().expect("id").to_string();
    assert_eq!(id.len(), 36);

    // Pages by cursor.
    let (_, page) = send(&app, k, "GET", "/streams/evm?limit=1", "").await;
    assert_eq!(
        (
            page["total"].clone(),
            page["result"].as_array().map(Vec::len)
        ),
        (json!(2), Some(1))
    );
    let cursor = page["cursor"].as_str().expect("a cursor").to_string();
    let (_, next) = send(
        &app,
        k,
        "GET",
        &format!("/streams/evm?limit=1&cursor={cursor}"),
        "",
    )
    .await;
    assert_ne!(next["result"][0]["id"], page["result"][0]["id"]);
    assert!(names(
        &send(&app, k, "GET", "/streams/evm?cursor=zz", "").await,
        "cursor"
    ));

    // Another key sees nothing.
    let (_, other) = tokenql::keys::create(&app.db, "other").await.expect("key");
    let o = Some(other.as_str());
    let path = format!("/streams/evm/{id}");
    assert_eq!(send(&app, o, "GET", &path, "").await.0, 404);
    assert_eq!(send(&app, o, "DELETE", &path, "").await.0, 404);
    let (_, theirs) = send(&app, o, "GET", "/streams/evm", "").await;
    assert_eq!(theirs["total"], json!(0));

    // Update and status.
    let (s, v) = send(
        &app,
        k,
        "POST",
        &path,
        r#"{"tag": "renamed", "allAddresses": true}"#,
    )
    .await;
    assert_eq!(
        (s, &v["tag"], &v["allAddresses"]),
        (200, &json!("renamed"), &json!(true)),
        "{v}"
    );
    assert!(names(
        &send(
            &app,
            k,
            "POST",
            &format!("{path}/status"),
            r#"{"status": "on"}"#
        )
        .await,
        "status"
    ));
    let (_, v) = send(
        &app,
        k,
        "POST",
        &format!("{path}/status"),
        r#"{"status": "paused"}"#,
    )
    .await;
    assert_eq!(v["status"], "paused");

    // Addresses: one, a list, pages, removal.
    let addresses = format!("{path}/address");
    let a1 = "0x00000000000000000000000000000000000000A1";
    let (s, v) = send(
        &app,
        k,
        "POST",
        &addresses,
        &format!(r#"{{"address": "{a1}"}}"#),
    )
    .await;
    assert_eq!((s, &v["address"]), (200, &json!(a1.to_lowercase())), "{v}");
    let list = r#"{"address": ["0x00000000000000000000000000000000000000b2", "0x00000000000000000000000000000000000000c3"]}"#;
    assert_eq!(send(&app, k, "POST", &addresses, list).await.0, 200);
    assert!(names(
        &send(&app, k, "POST", &addresses, r#"{"address": "0x12"}"#).await,
        "address"
    ));
    let (_, page) = send(&app, k, "GET", &format!("{addresses}?limit=2"), "").await;
    assert_eq!(
        (
            page["total"].clone(),
            page["result"].as_array().map(Vec::len)
        ),
        (json!(3), Some(2))
    );
    let cursor = page["cursor"].as_str().expect("a cursor");
    let (_, rest) = send(
        &app,
        k,
        "GET",
        &format!("{addresses}?limit=2&cursor={cursor}"),
        "",
    )
    .await;
    assert_eq!(
        rest["result"],
        json!([{"address": "0x00000000000000000000000000000000000000c3"}])
    );
    assert_eq!(
        send(
            &app,
            k,
            "DELETE",
            &addresses,
            &format!(r#"{{"address": ["{a1}"]}}"#)
        )
        .await
        .0,
        200
    );
    let (_, v) = send(&app, k, "GET", &path, "").await;
    assert_eq!(v["amountOfAddresses"], json!(2));

    // The key's secret: made once, replaced on demand, never another key's.
    let (_, s1) = send(&app, k, "GET", "/settings", "").await;
    let (_, s2) = send(&app, k, "GET", "/settings", "").await;
    assert_eq!(s1["secretKey"], s2["secretKey"]);
    let (_, s3) = send(&app, o, "GET", "/settings", "").await;
    assert_ne!(s1["secretKey"], s3["secretKey"]);
    let (_, set) = send(
        &app,
        k,
        "POST",
        "/settings",
        r#"{"secretKey": "a-new-secret"}"#,
    )
    .await;
    assert_eq!(set["secretKey"], "a-new-secret");

    // Replaying a block the feed does not keep; deleting.
    let replay = format!("/streams/evm/0x1/block-to-webhook/5/{id}");
    let (s, v) = send(&app, k, "POST", &replay, "").await;
    assert_eq!(s, 404, "{v}");
    assert!(names(
        &send(
            &app,
            k,
            "POST",
            &format!("/streams/evm/0x1/block-to-webhook/x/{id}"),
            ""
        )
        .await,
        "blockNumber"
    ));
    assert_eq!(send(&app, k, "DELETE", &path, "").await.0, 200);
    assert_eq!(send(&app, k, "GET", &path, "").await.0, 404);
    let second_path = format!("/streams/evm/{}", second["id"].as_str().expect("id"));
    assert_eq!(send(&app, k, "GET", &second_path, "").await.0, 200);
    app.cleanup().await;
}
