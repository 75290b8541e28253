//! On a real chain: a token list is a fallback to what the indexer reads by `eth_call`, and the
//! heuristics judge the names the indexer reads.

use std::time::Duration;

use serde_json::{json, Value};
use tokenql::lists::cli::{run_lists, ListsAction, Setting};

use super::support::*;
use crate::support::common::{gql_list, Backend};

crate::backend_tests!(token_list_fallback_and_heuristics_on_a_chain);

/// One token of a token list, as JSON.
fn token_entry(address: &str, name: &str, symbol: &str, decimals: u8, logo: &str) -> Value {
    json!({"chainId": 1, "address": address, "name": name, "symbol": symbol,
           "decimals": decimals, "logoURI": logo})
}

async fn token_list_fallback_and_heuristics_on_a_chain(backend: Backend) {
    use crate::support::anvil::*;
    use crate::support::indexer::*;
    use sea_orm::EntityTrait;

    let chain = Anvil::start(3, &[]).await;
    let app = crate::support::common::spawn(backend).await;
    let a0 = chain.accounts[0].clone();
    let usd = chain
        .deploy("TestToken", token_ctor("Dollar", "USD", 6))
        .await;
    let gift = chain
        .deploy("TestToken", token_ctor("Visit usdt-gift.com", "GIFT", 18))
        .await;
    let mkr = chain.deploy("Bytes32Token", vec![]).await;
    for t in [&usd, &gift, &mkr] {
        chain
            .send(
                &a0,
                t,
                calldata(mintCall {
                    to: addr(&a0),
                    amount: u(5),
                }),
            )
            .await;
    }
    let import_tokens = |tokens: Vec<Value>| {
        let file = TempFile::new("tokens", "json", &json!({ "tokens": tokens }).to_string());
        let db = app.db.clone();
        async move {
            let lines = run_lists(
                &db,
                ListsAction::Tokens {
                    file: file.0.clone(),
                    chain: None,
                },
            )
            .await
            .expect("token list import");
            drop(file);
            lines
        }
    };

    // A token list before the indexer has read the contract: its values are fallbacks.
    let lines = import_tokens(vec![token_entry(
        &usd,
        "Listed Dollar",
        "LUSD",
        2,
        "https://logos.test/usd-1.png",
    )])
    .await;
    assert!(
        lines[0].ends_with(": 1 imported, 0 skipped, 0 malformed"),
        "{lines:?}"
    );

    let indexer = Indexer::start(&app.db, &chain.url, |_| {});
    wait_synced(&app.db, &chain, Duration::from_secs(60)).await;
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let rows = loop {
        let mut rows = Vec::new();
        for a in [&usd, &gift, &mkr] {
            rows.push(
                tokenql::entity::contract::Entity::find_by_id((
                    1i64,
                    tokenql::types::Address::parse(a).expect("address"),
                ))
                .one(&app.db)
                .await
                .expect("select")
                .expect("contract row"),
            );
        }
        // The heuristics run right after the names are written, in the same round.
        if rows.iter().all(|r| r.metadata_fetched_at.is_some()) {
            let again = tokenql::entity::contract::Entity::find_by_id((
                1i64,
                tokenql::types::Address::parse(&gift).expect("address"),
            ))
            .one(&app.db)
            .await
            .expect("select")
            .expect("contract row");
            if again.spam_source.is_some() {
                break rows;
            }
        }
        assert!(
            std::time::Instant::now() < deadline,
            "metadata not read within 60 s: {rows:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let u = &rows[0];
    assert_eq!(
        (
            u.name.as_deref(),
            u.symbol.as_deref(),
            u.decimals,
            u.logo.as_deref()
        ),
        (
            Some("Dollar"),
            Some("USD"),
            Some(6),
            Some("https://logos.test/usd-1.png")
        ),
        "eth_call wins over the earlier token list; its logo stays"
    );

    // A token list after: it fills only what eth_call could not tell (MKR has no decimals()),
    // and sets logos.
    import_tokens(vec![
        token_entry(&usd, "Other", "OTH", 9, "https://logos.test/usd-2.png"),
        token_entry(
            &mkr,
            "Other Maker",
            "OMKR",
            18,
            "https://logos.test/mkr.png",
        ),
    ])
    .await;
    let usd_t = transfers(
        &app,
        &format!("contract_addresses[]={usd}"),
        &format!("contractAddresses: {}", gql_list(&[&usd])),
    )
    .await;
    let mkr_t = transfers(
        &app,
        &format!("contract_addresses[]={mkr}"),
        &format!("contractAddresses: {}", gql_list(&[&mkr])),
    )
    .await;
    let meta = |r: &Value| {
        (
            r["token_name"].clone(),
            r["token_symbol"].clone(),
            r["token_decimals"].clone(),
            r["token_logo"].clone(),
        )
    };
    assert_eq!(
        meta(&usd_t[0]),
        (
            json!("Dollar"),
            json!("USD"),
            json!("6"),
            json!("https://logos.test/usd-2.png")
        )
    );
    assert_eq!(
        meta(&mkr_t[0]),
        (
            json!("Maker"),
            json!("MKR"),
            json!("18"),
            json!("https://logos.test/mkr.png")
        )
    );
    assert!(usd_t
        .iter()
        .chain(&mkr_t)
        .all(|r| r["possible_spam"] == json!(false)));

    // The token whose name lures to a site was flagged by the heuristics as it was read.
    let gift_filter = format!("contract_addresses[]={gift}");
    let gift_args = format!("contractAddresses: {}", gql_list(&[&gift]));
    let spam_of = |t: Vec<Value>| {
        t.iter()
            .map(|r| r["possible_spam"].clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        spam_of(transfers(&app, &gift_filter, &gift_args).await),
        [json!(true)]
    );
    assert_eq!(
        line(&show(&app, &gift).await, "possible_spam"),
        "possible_spam  true (heuristic: domain)"
    );
    // An admin's "no" survives a re-run of the heuristics; `auto` lets them flag it again.
    set(&app, &gift, Some(Setting::No), None).await;
    let lines = run_lists(&app.db, ListsAction::Heuristics)
        .await
        .expect("heuristics");
    assert_eq!(
        lines,
        ["spam heuristics: 3 contracts checked, 1 match a rule, 0 newly flagged, 0 flags cleared"]
    );
    assert_eq!(
        spam_of(transfers(&app, &gift_filter, &gift_args).await),
        [json!(false)]
    );
    set(&app, &gift, Some(Setting::Auto), None).await;
    assert_eq!(
        spam_of(transfers(&app, &gift_filter, &gift_args).await),
        [json!(true)]
    );
    indexer.stop().await.expect("indexer ran cleanly");
    app.cleanup().await;
}
