//! The traits operations the official Python SDK (`moralis` 0.1.49) has:
//! `get_nft_traits_by_collection`, `get_nft_traits_by_collection_paginate` (walked page by page,
//! as its callers page) and `resync_nft_rarity`, on the enriched sample's collection, against
//! the test's own aggregation of the metadata tokenql serves for it (`GET /nft/{address}` with
//! `normalizeMetadata=true`). moralis 2.27 (JS) has none of the four traits operations, and the
//! Python SDK has no `getNFTByContractTraits` (both checked in their packages).

use std::collections::BTreeMap;

use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
use serde_json::{json, Value};
use tokenql::entity::nft_token;

use super::{python, run_sdk, spawn_enriched, RICH};
use crate::support::common::{Backend, TestApp};

/// A trait value as text, as the API writes it.
fn text(v: &Value) -> Option<String> {
    match v {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

/// The test's own count of each (trait type, value) over the collection's served records, and
/// how many tokens it has.
async fn truth(app: &TestApp) -> (BTreeMap<(String, String), u64>, u64) {
    let mut counts = BTreeMap::new();
    let mut tokens = 0;
    let mut uri = format!("/api/v2.2/nft/{RICH}?normalizeMetadata=true&limit=3");
    loop {
        let (status, _, body) = app.get_rest(&uri).await;
        assert_eq!(status, 200, "{uri}: {body}");
        for r in body["result"].as_array().expect("result") {
            tokens += 1;
            let mut seen = std::collections::BTreeSet::new();
            for a in r["normalized_metadata"]["attributes"]
                .as_array()
                .into_iter()
                .flatten()
            {
                if let (Some(t), Some(v)) = (a["trait_type"].as_str(), text(&a["value"])) {
                    seen.insert((t.to_string(), v));
                }
            }
            for t in seen {
                *counts.entry(t).or_insert(0) += 1;
            }
        }
        let Some(c) = body["cursor"].as_str() else {
            break;
        };
        let c: String = form_urlencoded::byte_serialize(c.as_bytes()).collect();
        uri = format!("/api/v2.2/nft/{RICH}?normalizeMetadata=true&limit=3&cursor={c}");
    }
    (counts, tokens)
}

async fn python_sdk_traits(backend: Backend) {
    let app = spawn_enriched(backend).await;
    // Every token's metadata of the collection fetched: the answers are complete, with rarity.
    nft_token::Entity::update_many()
        .col_expr(nft_token::Column::MetadataStatus, Expr::value("ok"))
        .filter(
            nft_token::Column::ContractAddress
                .eq(tokenql::types::Address::parse(RICH).expect("an address")),
        )
        .exec(&app.db)
        .await
        .expect("metadata status");
    let (counts, tokens) = truth(&app).await;
    assert!(tokens >= 2 && counts.len() >= 2, "{tokens} {counts:?}");
    let want: Vec<Value> = counts
        .iter()
        .map(|((t, v), &c)| {
            let percentage = (c as f64 * 10_000.0 / tokens as f64).round() / 100.0;
            let label = format!("Top {}% trait", (c * 100).div_ceil(tokens));
            json!({"trait_type": t, "trait_value": v, "count": c, "percentage": percentage,
                   "rarity_label": label})
        })
        .collect();

    let input = json!({"apiKey": app.key, "calls": [
        {"name": "traits", "op": "nft.get_nft_traits_by_collection",
         "params": {"chain": "eth", "address": RICH}},
        {"name": "paged", "op": "nft.get_nft_traits_by_collection_paginate",
         "params": {"chain": "eth", "address": RICH, "limit": 1, "order": "ASC"}},
        {"name": "resync", "op": "nft.resync_nft_rarity",
         "params": {"chain": "eth", "address": RICH}},
    ]});
    let base = format!("{}/api/v2.2", app.base);
    let report = tokio::task::spawn_blocking(move || run_sdk(python::CLIENT, &base, &input))
        .await
        .expect("SDK runner");
    let calls = report["calls"].as_array().expect("calls");
    let call = |name: &str| {
        let c = calls
            .iter()
            .find(|c| c["name"] == name)
            .unwrap_or_else(|| panic!("no call {name}"));
        assert!(c["error"].is_null(), "{name}: {}", c["error"]);
        c
    };

    // The whole list: the body REST answers, and the test's aggregation, grouped by type.
    let raw = &call("traits")["pages"][0]["raw"];
    assert_eq!(raw["status"], "SYNCED", "{raw}");
    let (_, _, rest) = app.get_rest(&format!("/api/v2.2/nft/{RICH}/traits")).await;
    assert_eq!(raw, &rest);
    let flat: Vec<Value> = raw["traits"]
        .as_array()
        .expect("traits")
        .iter()
        .flat_map(|t| {
            t["values"].as_array().into_iter().flatten().map(|v| {
                json!({"trait_type": t["trait_type"], "trait_value": v["trait_value"],
                       "count": v["count"], "percentage": v["percentage"],
                       "rarity_label": v["rarity_label"]})
            })
        })
        .collect();
    assert_eq!(flat, want);

    // The paged walk: one trait a page, every page SYNCED, the list in order, nothing more.
    let pages = call("paged")["pages"].as_array().expect("pages");
    assert_eq!(pages.len(), want.len(), "{pages:?}");
    let walked: Vec<Value> = pages
        .iter()
        .flat_map(|p| {
            assert_eq!(p["raw"]["status"], "SYNCED", "{p}");
            p["result"].as_array().cloned().unwrap_or_default()
        })
        .collect();
    assert_eq!(walked, want);
    assert!(pages.last().is_some_and(|p| p["raw"]["cursor"].is_null()));

    // The resync is accepted and queues the collection's tokens that have a URI.
    let raw = &call("resync")["pages"][0]["raw"];
    let status = raw["status"].as_str().unwrap_or_default();
    assert!(status.contains(&format!("{tokens} tokens queued")), "{raw}");
    let requests = call("resync")["requests"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(
        requests.iter().any(|r| r["path"]
            .as_str()
            .is_some_and(|p| p.starts_with(&format!("/api/v2.2/nft/{RICH}/traits/resync")))),
        "{requests:?}"
    );
}

crate::backend_tests!(python_sdk_traits);
