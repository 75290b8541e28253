//! A page costs a constant number of SQL statements, whatever its size: related data (contract
//! metadata, token rows, labels) comes through DataLoaders, one batch per kind per page.
//! Statements are counted with sea-orm's metric callback on the connection.

mod graphql_support;

use std::sync::atomic::Ordering;

use serde_json::{json, Value};

use graphql_support::*;

/// Executes `query` with `first` and returns (records on the page, statements executed).
async fn measure(env: &Env, query: &str, first: usize) -> (usize, usize) {
    env.statements.store(0, Ordering::SeqCst);
    let data = env.data(query, json!({ "first": first })).await;
    let statements = env.statements.load(Ordering::SeqCst);
    let conn = data
        .as_object()
        .and_then(|o| o.values().next())
        .cloned()
        .unwrap_or(Value::Null);
    let records = conn["edges"].as_array().map(Vec::len).unwrap_or_default();
    (records, statements)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_of_transfers_costs_the_same_statements_at_10_and_100_records() {
    let env = setup().await;
    // Label a few wallets of the newest transfers so that labels are really resolved.
    let newest = env
        .data(
            "{ erc20Transfers(first: 100) { edges { node { fromWallet toWallet } } } }",
            json!({}),
        )
        .await;
    let labels: Vec<_> = newest["erc20Transfers"]["edges"]
        .as_array()
        .unwrap()
        .iter()
        .step_by(7)
        .map(|e| {
            let a = tokenql::types::Address::parse(e["node"]["toWallet"].as_str().unwrap());
            (a.unwrap(), "labelled".to_string())
        })
        .collect();
    tokenql::store::meta::upsert_labels(&env.db, tokenql::types::Chain::ETH, &labels)
        .await
        .unwrap();

    let query = format!(
        "query($first: Int!) {{ erc20Transfers(first: $first) {{ status
            pageInfo {{ hasNextPage endCursor }} edges {{ cursor node {{ {TRANSFER_FIELDS} }} }} }} }}"
    );
    let (n10, s10) = measure(&env, &query, 10).await;
    let (n100, s100) = measure(&env, &query, 100).await;
    assert_eq!((n10, n100), (10, 100));
    assert!(s10 > 0);
    assert_eq!(s10, s100, "statements for 10 records vs 100 records");
    // The page, the sync status, contract metadata, labels.
    assert!(s100 <= 4, "{s100} statements for one page");

    // Labels really came through.
    let data = env.data(&query, json!({ "first": 100 })).await;
    let labelled = data["erc20Transfers"]["edges"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["node"]["toWalletLabel"] == "labelled")
        .count();
    assert!(labelled >= labels.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_of_nfts_costs_the_same_statements_at_10_and_38_records() {
    let env = setup().await;
    let query = format!(
        "query($first: Int!) {{ nftsByWallet(address: \"{NFT_WALLET}\", first: $first) {{
            totalCount status pageInfo {{ hasNextPage endCursor }}
            edges {{ cursor node {{ {NFT_FIELDS} }} }} }} }}"
    );
    let (n10, s10) = measure(&env, &query, 10).await;
    let (nall, sall) = measure(&env, &query, 100).await;
    assert_eq!((n10, nall), (10, WALLET_NFTS));
    assert!(s10 > 0);
    assert_eq!(
        s10, sall,
        "statements for 10 records vs {WALLET_NFTS} records"
    );
    // The page, the count, the sync status (2), contract metadata, token rows.
    assert!(sall <= 6, "{sall} statements for one page");
}

/// `totalCount` is counted once per walk: deeper pages take it from their cursor, so a deep
/// walk through a whale's NFTs costs no count per page, and every page reports the same total.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_walk_counts_its_total_once() {
    let env = setup().await;
    let query = |with_total: bool| {
        format!(
            "query($first: Int!, $after: String) {{ nftsByWallet(address: \"{NFT_WALLET}\",
                first: $first, after: $after) {{ {} pageInfo {{ endCursor }} }} }}",
            if with_total { "totalCount" } else { "" }
        )
    };
    let run = |q: String, after: Value| {
        let env = &env;
        async move {
            env.statements.store(0, Ordering::SeqCst);
            let data = env.data(&q, json!({ "first": 5, "after": after })).await;
            let conn = data["nftsByWallet"].clone();
            (conn, env.statements.load(Ordering::SeqCst))
        }
    };
    let (p1, with_count) = run(query(true), Value::Null).await;
    let (_, without_count) = run(query(false), Value::Null).await;
    assert_eq!(with_count, without_count + 1, "page 1 counts");
    assert_eq!(p1["totalCount"], json!(WALLET_NFTS));
    let mut after = p1["pageInfo"]["endCursor"].clone();
    for page in 2..=4 {
        let (p, statements) = run(query(true), after.clone()).await;
        assert_eq!(
            statements, without_count,
            "page {page} does not count again"
        );
        assert_eq!(p["totalCount"], json!(WALLET_NFTS), "page {page}");
        after = p["pageInfo"]["endCursor"].clone();
    }
    // A walk that did not ask on page 1 counts on the first page that asks.
    let (p1, _) = run(query(false), Value::Null).await;
    let (p2, statements) = run(query(true), p1["pageInfo"]["endCursor"].clone()).await;
    assert_eq!(statements, without_count + 1);
    assert_eq!(p2["totalCount"], json!(WALLET_NFTS));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unselected_related_data_costs_nothing() {
    let env = setup().await;
    let (_, bare) = measure(
        &env,
        "query($first: Int!) { erc20Transfers(first: $first) { edges { node { value } } } }",
        100,
    )
    .await;
    let (_, with_meta) = measure(
        &env,
        "query($first: Int!) { erc20Transfers(first: $first) { edges { node { value tokenSymbol } } } }",
        100,
    )
    .await;
    assert_eq!(with_meta, bare + 1);
}
