//! Errors, auth, route prefixes and what the official SDKs send.

use axum::body::Body;
use axum::http::{Request, StatusCode};
use sea_orm::ConnectionTrait;

use super::support::*;

#[tokio::test]
async fn bad_parameters_are_400_naming_the_parameter() {
    let app = app().await;
    let nft = format!("/api/v2/{WALLET}/nft");
    let erc = "/api/v2/erc20/transfers";
    let many: Vec<String> = (0..101).map(|i| format!("0x{i:040x}")).collect();
    let erc_cursor = app.ok(&format!("{erc}?limit=1")).await["cursor"]
        .as_str()
        .unwrap()
        .to_string();
    let nft_cursor = app.ok(&format!("{nft}?limit=1")).await["cursor"]
        .as_str()
        .unwrap()
        .to_string();
    let mut tampered = nft_cursor.clone().into_bytes();
    tampered[3] = if tampered[3] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8(tampered).unwrap();
    let cases: Vec<(String, &str)> = vec![
        (
            format!("{nft}?chain=solana"),
            "chain: unknown chain 'solana'",
        ),
        (
            format!("{nft}?limit=0"),
            "limit: 0 is out of range; expected 1 to 100",
        ),
        (format!("{nft}?limit=abc"), "limit: 'abc' is not an integer"),
        (
            "/api/v2/0x1234/nft".into(),
            "address: '0x1234' is not an address",
        ),
        ("/api/v2/%FF%FE/nft".into(), "address: "),
        (
            format!("{nft}?format=octal"),
            "format: 'octal' is not a format",
        ),
        (
            format!("{nft}?exclude_spam=maybe"),
            "exclude_spam: 'maybe' is not a boolean",
        ),
        (
            format!("{nft}?disable_total=0"),
            "disable_total: '0' is not a boolean",
        ),
        (
            format!("{nft}?cursor=garbage"),
            "cursor: is malformed or has been tampered with",
        ),
        (
            format!("{nft}?cursor={tampered}"),
            "cursor: is malformed or has been tampered with",
        ),
        (
            format!("{nft}?cursor={erc_cursor}"),
            "cursor: belongs to another endpoint",
        ),
        (
            format!("{nft}?limit=1&exclude_spam=true&cursor={nft_cursor}"),
            "cursor: was issued for a query with other filters",
        ),
        (
            format!("{nft}?token_addresses={}", many.join(",")),
            "token_addresses: 101 entries given; at most 100",
        ),
        (
            format!("{erc}?from_block=10&to_block=9"),
            "from_block: 10 is greater than to_block 9",
        ),
        (
            format!("{erc}?from_block=-1"),
            "from_block: '-1' is negative",
        ),
        (
            format!("{erc}?to_block=1.5"),
            "to_block: '1.5' is not a block number",
        ),
        (
            format!(
                "{erc}?wallet_addresses[]={}",
                many.join("&wallet_addresses[]=")
            ),
            "wallet_addresses: 101 entries given",
        ),
        (
            format!("{erc}?exclude_contracts=nope"),
            "exclude_contracts: 'nope' is not an address",
        ),
        (format!("{erc}?chain=0x2"), "chain: unknown chain '0x2'"),
        (
            format!("{erc}?limit=101"),
            "limit: 101 is out of range; expected 1 to 100",
        ),
        (
            format!("{erc}?cursor={nft_cursor}"),
            "cursor: belongs to another endpoint",
        ),
    ];
    for (uri, want) in cases {
        let a = app.get(&uri).await;
        assert_eq!(a.status, StatusCode::BAD_REQUEST, "{uri}: {}", a.body);
        assert_eq!(keys(&a.body), ["message"]);
        let m = a.body["message"].as_str().unwrap();
        assert!(m.starts_with(want), "{uri}: {m}");
        if uri.starts_with(erc) {
            assert_eq!(a.headers["deprecation"], "@1693785600", "{uri}");
        }
    }
}

#[tokio::test]
async fn auth_routes_versions_and_sdk_headers() {
    let app = app().await;
    let uri = format!("/api/v2/{WALLET}/nft?limit=1");
    let no_key = app
        .send(Request::get(&uri).body(Body::empty()).unwrap())
        .await;
    assert_eq!(no_key.status, StatusCode::UNAUTHORIZED);
    assert!(no_key.body["message"].is_string());
    let bad_key = Request::get("/api/v2/erc20/transfers")
        .header("x-api-key", "tq_nope")
        .body(Body::empty())
        .unwrap();
    assert_eq!(app.send(bad_key).await.status, StatusCode::UNAUTHORIZED);

    // What the official SDKs send: lowercase header name, Bearer token, a charset in Accept.
    let sdk = |u: &str| {
        Request::get(u)
            .header("x-api-key", &app.key)
            .header("authorization", format!("Bearer {}", app.key))
            .header("accept", "application/json; charset=utf-8")
            .body(Body::empty())
            .unwrap()
    };
    let v2 = app.send(sdk(&uri)).await;
    assert_eq!(v2.status, StatusCode::OK);
    let v22 = app
        .send(sdk(&format!("/api/v2.2/{WALLET}/nft?limit=1")))
        .await;
    assert_eq!(v22.status, StatusCode::OK);
    assert_eq!(v22.body, v2.body);
    let e = app
        .send(sdk("/api/v2.2/erc20/transfers?chain=0x1&limit=1"))
        .await;
    assert_eq!(e.status, StatusCode::OK);
    assert_eq!(e.headers["deprecation"], "@1693785600");

    for unknown in [
        "/api/v2/erc20/nope",
        "/api/v2/",
        "/api/v3/erc20/transfers",
        "/nope",
    ] {
        let a = app.get(unknown).await;
        assert_eq!(a.status, StatusCode::NOT_FOUND, "{unknown}");
        assert!(a.body["message"].is_string(), "{unknown}");
    }
    let post = Request::post("/api/v2/erc20/transfers")
        .header("x-api-key", &app.key)
        .body(Body::empty())
        .unwrap();
    let a = app.send(post).await;
    assert_eq!(a.status, StatusCode::METHOD_NOT_ALLOWED);
    assert!(a.body["message"].is_string());
}

#[tokio::test]
async fn database_failure_is_a_generic_500() {
    let app = app().await;
    app.db
        .execute_unprepared("DROP TABLE nft_holdings")
        .await
        .unwrap();
    let a = app.get(&format!("/api/v2/{WALLET}/nft")).await;
    assert_eq!(a.status, StatusCode::INTERNAL_SERVER_ERROR);
    assert_eq!(keys(&a.body), ["message"]);
    let m = a.body["message"].as_str().unwrap();
    assert!(
        !m.contains("nft_holdings") && !m.to_lowercase().contains("select"),
        "{m}"
    );
}
