//! `GET /{address}/nft`: envelope, record shapes, pages, formats, metadata, array encodings.

use sea_orm::ConnectionTrait;
use serde_json::Value;

use super::support::*;

#[tokio::test]
async fn nft_envelope_and_record_shapes() {
    let app = app().await;
    let envelope = ["status", "total", "page", "page_size", "cursor", "result"];
    let one = app.get(&format!("/api/v2/{WALLET}/nft?limit=1")).await;
    assert_order(&one.raw, &envelope);
    assert_order(&one.raw, NFT_FIELDS);
    let b = app.ok(&format!("/api/v2/{WALLET}/nft")).await;
    assert_eq!(keys(&b), sorted(&envelope));
    // The demo is declared a whole history: its answers are complete.
    assert_eq!(b["status"], "SYNCED");
    assert_eq!(b["total"], Value::Null);
    assert_eq!(b["page"], 1);
    assert_eq!(b["page_size"], 100);
    assert_eq!(b["cursor"], Value::Null);
    let result = b["result"].as_array().unwrap();
    assert_eq!(result.len(), 38);
    for r in result {
        check_record(r, NFT_FIELDS, &[]);
        assert_eq!(r["owner_of"], WALLET);
        assert!(is_lower_address(&r["token_address"]), "{r}");
        assert!(is_digits(&r["token_id"]) && is_digits(&r["block_number"]));
        assert!(is_digits(&r["amount"]));
        assert!(r["contract_type"] == "ERC721" || r["contract_type"] == "ERC1155");
        assert_eq!(r["token_hash"].as_str().unwrap().len(), 32);
        assert_eq!(r["normalized_metadata"], Value::Null);
        assert_eq!(r["media"], Value::Null);
        if let Some(m) = r["metadata"].as_str() {
            assert!(serde_json::from_str::<Value>(m).is_ok());
        }
    }
}

#[tokio::test]
async fn nft_pages_total_format_and_options() {
    let app = app().await;
    let base = format!("/api/v2/{WALLET}/nft?limit=10&disable_total=false");
    let mut uri = base.clone();
    let mut hashes = std::collections::BTreeSet::new();
    for page in 1..=4 {
        let b = app.ok(&uri).await;
        assert_eq!(b["page"], page);
        assert_eq!(b["page_size"], 10);
        assert_eq!(b["total"], 38);
        for r in b["result"].as_array().unwrap() {
            assert!(hashes.insert(r["token_hash"].as_str().unwrap().to_string()));
        }
        match b["cursor"].as_str() {
            Some(c) => uri = format!("{base}&cursor={c}"),
            None => assert_eq!(page, 4),
        }
    }
    assert_eq!(hashes.len(), 38);

    let dec = app.ok(&format!("/api/v2/{WALLET}/nft?limit=3")).await;
    let hex = app
        .ok(&format!(
            "/api/v2/{WALLET}/nft?limit=3&format=hex&normalizeMetadata=true&media_items=true"
        ))
        .await;
    for (d, h) in dec["result"]
        .as_array()
        .unwrap()
        .iter()
        .zip(hex["result"].as_array().unwrap())
    {
        let id = h["token_id"].as_str().unwrap();
        assert!(id.starts_with("0x"), "{id}");
        let n = d["token_id"].as_str().unwrap().parse::<u128>();
        if let Ok(n) = n {
            assert_eq!(format!("{n:#x}"), id);
        }
        check_record(h, NFT_FIELDS, &["normalized_metadata"]);
        let nm = &h["normalized_metadata"];
        assert_eq!(
            keys(nm),
            sorted(&[
                "name",
                "description",
                "image",
                "external_link",
                "animation_url",
                "attributes"
            ])
        );
        assert!(nm["attributes"].is_array());
        assert_eq!(h["media"], Value::Null);
    }
}

#[tokio::test]
async fn nft_metadata_is_a_json_string_and_normalizes() {
    let app = app().await;
    let meta = r#"{"name":"Mug #1","description":"A mug","image":"ipfs://img","external_url":"https://x","attributes":[{"trait_type":"Color","value":"red"}]}"#;
    app.db
        .execute_unprepared(&format!(
            "UPDATE nft_tokens SET metadata = '{meta}', last_metadata_sync = 1679497075980"
        ))
        .await
        .unwrap();
    let plain = app.ok(&format!("/api/v2/{WALLET}/nft?limit=1")).await;
    let r = &plain["result"][0];
    assert_eq!(r["metadata"], meta);
    assert_eq!(r["last_metadata_sync"], "2023-03-22T14:57:55.980Z");
    assert_eq!(r["normalized_metadata"], Value::Null);
    let norm = app
        .ok(&format!(
            "/api/v2/{WALLET}/nft?limit=1&normalizeMetadata=true"
        ))
        .await;
    assert_eq!(
        norm["result"][0]["normalized_metadata"],
        serde_json::json!({
            "name": "Mug #1", "description": "A mug", "image": "ipfs://img",
            "external_link": "https://x", "animation_url": null,
            "attributes": [{"trait_type": "Color", "value": "red", "display_type": null,
                            "max_value": null, "trait_count": null, "order": null}]
        })
    );
    // Stored metadata that is not JSON is written as null, never as a bare string.
    app.db
        .execute_unprepared("UPDATE nft_tokens SET metadata = 'not json'")
        .await
        .unwrap();
    let bad = app.ok(&format!("/api/v2/{WALLET}/nft?limit=1")).await;
    assert_eq!(bad["result"][0]["metadata"], Value::Null);
}

#[tokio::test]
async fn nft_token_addresses_in_every_encoding() {
    let app = app().await;
    let all = app.ok(&format!("/api/v2/{COLLECTOR}/nft")).await;
    let mut contracts: Vec<String> = all["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["token_address"].as_str().unwrap().to_string())
        .collect();
    contracts.dedup();
    let (a, b) = (&contracts[0], &contracts[contracts.len() - 1]);
    assert_ne!(a, b);
    let upper = b.to_uppercase().replace("0X", "0x");
    let encodings = [
        format!("token_addresses={a}&token_addresses={b}"),
        format!("token_addresses[]={a}&token_addresses[]={upper}"),
        format!("token_addresses%5B%5D={a}&token_addresses%5B%5D={b}"),
        format!("token_addresses[0]={a}&token_addresses[1]={b}"),
        format!("token_addresses={a},{b}"),
    ];
    let first = app
        .ok(&format!("/api/v2/{COLLECTOR}/nft?{}", encodings[0]))
        .await;
    let n = first["result"].as_array().unwrap().len();
    assert!((2..15).contains(&n), "{n}");
    for r in first["result"].as_array().unwrap() {
        assert!(r["token_address"] == **a || r["token_address"] == **b);
    }
    for e in &encodings[1..] {
        let b = app.ok(&format!("/api/v2/{COLLECTOR}/nft?{e}")).await;
        assert_eq!(b["result"], first["result"], "{e}");
    }
    let single = app
        .ok(&format!("/api/v2/{COLLECTOR}/nft?token_addresses={a}"))
        .await;
    assert!(single["result"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["token_address"] == **a));
}
