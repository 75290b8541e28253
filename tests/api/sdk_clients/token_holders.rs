//! `getTokenOwners` and `getTokenStats` through the official SDKs, base URL only: the JS SDK
//! (`moralis` 2.27.2, `token.getTokenOwners` paged with `next()` to the last page, and
//! `token.getTokenStats`) and the Python SDK (`moralis` 0.1.49, `token.get_token_owners` paged
//! by its cursor, and `token.get_token_stats`), on the bundled sample. Every holder, in order,
//! with its balance and share, and the transfer count are compared with the test's own
//! decoding of the sample's logs (`support::erc20_holders`).

use serde_json::{json, Value};

use super::{python, run_sdk};
use crate::support::common::truth::Truth;
use crate::support::common::{self, Backend, TestApp};
use crate::support::erc20_holders::{holders_truth, HoldersTruth};

/// The sample's token with the most transfers.
fn busiest_token(truth: &Truth) -> String {
    let mut n: std::collections::BTreeMap<&str, usize> = Default::default();
    for t in &truth.transfers {
        *n.entry(&t.contract).or_default() += 1;
    }
    n.into_iter()
        .max_by_key(|(a, c)| (*c, std::cmp::Reverse(*a)))
        .map(|(a, _)| a.to_string())
        .expect("transfers")
}

async fn run(app: &TestApp, client: &str, calls: Value) -> Vec<Value> {
    let input = json!({"apiKey": app.key, "calls": calls});
    let base = format!("{}/api/v2.2", app.base);
    let client = client.to_string();
    let report = tokio::task::spawn_blocking(move || run_sdk(&client, &base, &input))
        .await
        .expect("SDK runner");
    report["calls"].as_array().expect("calls").clone()
}

fn call<'a>(calls: &'a [Value], name: &str) -> &'a Value {
    let c = calls
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no call {name}"));
    assert!(c["error"].is_null(), "{name}: {}", c["error"]);
    c
}

/// The holders an SDK read over all pages of `name`, as (owner, balance), after checking each
/// page's envelope, the shares and that paging stopped at the last page.
fn holders(
    calls: &[Value],
    name: &str,
    truth: &HoldersTruth,
    limit: usize,
) -> Vec<(String, String)> {
    let c = call(calls, name);
    let pages = c["pages"].as_array().expect("pages");
    let want_pages = truth.holders.len().div_ceil(limit).max(1);
    assert_eq!(pages.len(), want_pages, "{name}: pages walked");
    let mut out = Vec::new();
    for (i, p) in pages.iter().enumerate() {
        let raw = &p["raw"];
        assert_eq!(raw["page"], json!(i + 1), "{name}: {raw}");
        assert_eq!(raw["page_size"], json!(limit), "{name}: {raw}");
        for r in raw["result"].as_array().expect("result") {
            let share = &r["percentage_relative_to_total_supply"];
            let known = truth.supply.is_some_and(|s| !s.is_zero());
            assert_eq!(share.is_null(), !known, "{name}: {r}");
            out.push((
                r["owner_address"].as_str().unwrap_or_default().to_string(),
                r["balance"].as_str().unwrap_or_default().to_string(),
            ));
        }
    }
    out
}

async fn sdk_token_owners_and_stats(backend: Backend) {
    let truth = Truth::demo();
    let app = common::spawn(backend).await;
    app.load_demo().await;
    let token = busiest_token(&truth);
    let moves = truth.transfers.iter().map(|t| {
        (
            t.contract.as_str(),
            t.from.as_str(),
            t.to.as_str(),
            t.value.as_str(),
        )
    });
    let want = holders_truth(moves, &token);
    assert!(want.holders.len() > 7, "several pages of 7");
    let desc: Vec<(String, String)> = want
        .holders
        .iter()
        .map(|(h, b)| (h.clone(), b.to_string()))
        .collect();
    let asc: Vec<(String, String)> = desc.iter().rev().cloned().collect();
    let stats = json!({"transfers": {"total": want.transfers.to_string()}});

    let js = run(&app, "moralis-2.27", json!([
        {"name": "owners", "op": "token.getTokenOwners", "params": {"chain": "0x1", "tokenAddress": token, "limit": 7}},
        {"name": "owners asc", "op": "token.getTokenOwners", "params": {"chain": "0x1", "tokenAddress": token, "limit": 50, "order": "ASC"}},
        {"name": "stats", "op": "token.getTokenStats", "params": {"chain": "0x1", "address": token}},
    ])).await;
    assert_eq!(holders(&js, "owners", &want, 7), desc, "JS owners");
    assert_eq!(holders(&js, "owners asc", &want, 50), asc, "JS owners, ASC");
    // The SDK's typed records kept every holder and balance.
    let typed: Vec<(String, String)> = call(&js, "owners")["pages"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|p| p["result"].as_array().cloned().unwrap_or_default())
        .map(|r| {
            (
                r["owner_address"]
                    .as_str()
                    .unwrap_or_default()
                    .to_lowercase(),
                r["balance"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    assert_eq!(typed, desc, "JS typed owners");
    assert_eq!(call(&js, "stats")["pages"][0]["raw"], stats, "JS stats");

    let py = run(&app, python::CLIENT, json!([
        {"name": "owners", "op": "token.get_token_owners", "params": {"chain": "eth", "token_address": token, "limit": 7}},
        {"name": "owners asc", "op": "token.get_token_owners", "params": {"chain": "eth", "token_address": token, "limit": 50, "order": "ASC"}},
        {"name": "stats", "op": "token.get_token_stats", "params": {"chain": "eth", "address": token}},
    ])).await;
    assert_eq!(holders(&py, "owners", &want, 7), desc, "Python owners");
    assert_eq!(
        holders(&py, "owners asc", &want, 50),
        asc,
        "Python owners, ASC"
    );
    assert_eq!(call(&py, "stats")["pages"][0]["raw"], stats, "Python stats");
    app.cleanup().await;
}

crate::backend_tests!(sdk_token_owners_and_stats);
