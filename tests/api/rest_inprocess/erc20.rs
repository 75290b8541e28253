//! `GET /erc20/transfers`: envelope, record shapes, order, array encodings, labels.

use axum::http::StatusCode;
use sea_orm::EntityTrait;
use serde_json::Value;

use super::support::*;

#[tokio::test]
async fn erc20_envelope_record_shapes_and_deprecation() {
    let app = app().await;
    let a = app
        .get(&format!(
            "/api/v2/erc20/transfers?contract_addresses={USDT}&limit=5"
        ))
        .await;
    assert_eq!(a.status, StatusCode::OK);
    assert_eq!(a.headers["deprecation"], "@1693785600");
    assert!(a.headers["content-type"]
        .to_str()
        .unwrap()
        .starts_with("application/json"));
    let envelope = ["status", "page", "page_size", "cursor", "result"];
    assert_order(&a.raw, &envelope);
    assert_order(&a.raw, TRANSFER_FIELDS);
    let b = a.body;
    assert_eq!(keys(&b), sorted(&envelope));
    assert_eq!(
        (b["page"].as_u64(), b["page_size"].as_u64()),
        (Some(1), Some(5))
    );
    assert!(b["cursor"].is_string());
    assert_eq!(
        b["status"], "SYNCED",
        "the demo sample is declared complete"
    );
    let result = b["result"].as_array().unwrap();
    assert_eq!(result.len(), 5);
    let mut prev: Option<(u64, u64)> = None;
    for r in result {
        check_record(r, TRANSFER_FIELDS, &[]);
        assert_eq!(r["contract_address"], USDT);
        assert_eq!(r["token_decimals"], "6");
        assert_eq!(r["token_symbol"], "USDT");
        for f in ["from_wallet", "to_wallet", "contract_address"] {
            assert!(is_lower_address(&r[f]), "{f}: {r}");
        }
        for f in ["transaction_index", "log_index", "block_number", "value"] {
            assert!(is_digits(&r[f]), "{f}: {r}");
        }
        let ts = r["block_timestamp"].as_str().unwrap();
        assert!(ts.len() == 24 && ts.ends_with(".000Z"), "{ts}");
        // value_decimal is value / 10^6, exact.
        let v: u128 = r["value"].as_str().unwrap().parse().unwrap();
        let (int, frac) = (v / 1_000_000, v % 1_000_000);
        let want = if frac == 0 {
            int.to_string()
        } else {
            format!("{int}.{}", format!("{frac:06}").trim_end_matches('0'))
        };
        assert_eq!(r["value_decimal"], want);
        let key = (
            r["block_number"].as_str().unwrap().parse().unwrap(),
            r["log_index"].as_str().unwrap().parse().unwrap(),
        );
        assert!(
            prev.is_none_or(|p| p > key),
            "not descending: {prev:?} {key:?}"
        );
        prev = Some(key);
    }
}

#[tokio::test]
async fn erc20_array_encodings_agree_and_pages_are_stable() {
    let app = app().await;
    let any = app.ok("/api/v2/erc20/transfers?limit=100").await;
    let mut others: Vec<&str> = any["result"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["contract_address"].as_str())
        .filter(|c| *c != USDT)
        .collect();
    others.sort_unstable();
    let other = others[0];
    let encodings = [
        format!("contract_addresses={USDT}&contract_addresses={other}"),
        format!("contract_addresses[]={USDT}&contract_addresses[]={other}"),
        format!("contract_addresses%5B%5D={other}&contract_addresses%5B%5D={USDT}"),
        format!("contract_addresses[0]={USDT}&contract_addresses[1]={other}"),
        format!("contract_addresses={other},{USDT}"),
    ];
    let first = app
        .ok(&format!("/api/v2/erc20/transfers?limit=7&{}", encodings[0]))
        .await;
    for e in &encodings[1..] {
        let b = app
            .ok(&format!("/api/v2/erc20/transfers?limit=7&{e}"))
            .await;
        assert_eq!(b, first, "{e}");
    }
    // Walking the pages yields every transfer once, in one descending order.
    let base = format!("/api/v2/erc20/transfers?limit=50&{}", encodings[1]);
    let (mut uri, mut seen, mut page) = (base.clone(), Vec::new(), 1);
    loop {
        let b = app.ok(&uri).await;
        assert_eq!(b["page"], page);
        for r in b["result"].as_array().unwrap() {
            let bn: u64 = r["block_number"].as_str().unwrap().parse().unwrap();
            let li: u64 = r["log_index"].as_str().unwrap().parse().unwrap();
            seen.push((bn, li));
        }
        match b["cursor"].as_str() {
            Some(c) => uri = format!("{base}&cursor={c}"),
            None => break,
        }
        page += 1;
    }
    assert!(seen.len() > 50, "{}", seen.len());
    assert!(seen.windows(2).all(|w| w[0] > w[1]));
}

#[tokio::test]
async fn erc20_labels_come_from_the_batch() {
    use sea_orm::ActiveValue::Set;
    use tokenql::entity::address_label;
    let app = app().await;
    let b = app
        .ok(&format!(
            "/api/v2/erc20/transfers?contract_addresses={USDT}&limit=1"
        ))
        .await;
    let r = &b["result"][0];
    let from = r["from_wallet"].as_str().unwrap().to_string();
    assert_eq!(r["from_wallet_label"], Value::Null);
    address_label::Entity::insert(address_label::ActiveModel {
        chain_id: Set(1),
        address: Set(tokenql::types::Address::parse(&from).expect("address")),
        label: Set("Binance 1".into()),
    })
    .exec(&app.db)
    .await
    .unwrap();
    let b = app
        .ok(&format!(
            "/api/v2/erc20/transfers?wallet_addresses={from}&limit=100"
        ))
        .await;
    for r in b["result"].as_array().unwrap() {
        for side in ["from", "to"] {
            let label = &r[format!("{side}_wallet_label")];
            if r[format!("{side}_wallet")] == *from {
                assert_eq!(*label, "Binance 1");
            } else {
                assert_eq!(*label, Value::Null);
            }
        }
    }
}
