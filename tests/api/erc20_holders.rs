//! `GET /erc20/{token_address}/owners` (`getTokenOwners`) and `GET /erc20/{address}/stats`
//! (`getTokenStats`), black-box on every backend, against the demo's holders as this test
//! computes them from the decoded logs (`support::erc20_holders`):
//!
//! - every holder once, by balance in both orders, walked page by page to the end, with the
//!   supply and each holder's share of it; the transfer count;
//! - the kept balances equal a replay of the stored transfers (the migration's backfill), and
//!   importing the same logs again changes nothing;
//! - an incomplete token: `SYNCING`, only holders whose own wallet history is stored, no supply,
//!   and `SYNCED` with every holder once the contract's history is stored;
//! - errors: 400s that name the parameter, cursors bound to their token and order.

use std::collections::BTreeMap;

use migration::MigratorTrait;
use sea_orm::{EntityTrait, QueryOrder};
use tokenql::entity::{erc20_balance, erc20_token_total};
use tokenql::types::{Address, Chain, Scope};

use crate::support::common::truth::Truth;
use crate::support::common::{self, enc, text, Backend, TestApp};
use crate::support::erc20_holders::{check_token, holders_truth, walk_owners, Move};

crate::backend_tests!(erc20_owners_and_stats, erc20_owners_of_an_incomplete_token);

fn moves(truth: &Truth) -> Vec<Move<'_>> {
    truth
        .transfers
        .iter()
        .map(|t| {
            (
                t.contract.as_str(),
                t.from.as_str(),
                t.to.as_str(),
                t.value.as_str(),
            )
        })
        .collect()
}

/// The demo's tokens by number of transfers, most first (ties by address).
fn busiest_tokens(truth: &Truth) -> Vec<(String, usize)> {
    let mut n: BTreeMap<&str, usize> = BTreeMap::new();
    for t in &truth.transfers {
        *n.entry(&t.contract).or_default() += 1;
    }
    let mut v: Vec<(String, usize)> = n.into_iter().map(|(k, c)| (k.to_string(), c)).collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    v
}

/// Every kept balance and token total, in key order.
async fn kept(app: &TestApp) -> (Vec<erc20_balance::Model>, Vec<erc20_token_total::Model>) {
    let balances = erc20_balance::Entity::find()
        .order_by_asc(erc20_balance::Column::OwnerAddress)
        .order_by_asc(erc20_balance::Column::ContractAddress)
        .all(&app.db)
        .await
        .expect("balances");
    let totals = erc20_token_total::Entity::find()
        .order_by_asc(erc20_token_total::Column::ContractAddress)
        .all(&app.db)
        .await
        .expect("totals");
    (balances, totals)
}

async fn refused(app: &TestApp, uri: &str, name: &str) {
    let (status, _, body) = app.get_rest(uri).await;
    assert_eq!(status, 400, "{uri}: {body}");
    let message = body["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with(&format!("{name}:")),
        "{uri}: the message should name {name}: {body}"
    );
}

async fn erc20_owners_and_stats(backend: Backend) {
    let truth = Truth::demo();
    let app = common::spawn(backend).await;
    app.load_demo().await;
    let all = moves(&truth);
    let tokens = busiest_tokens(&truth);
    // The busiest token (several pages of 7), one from the middle and the quietest (pages of
    // 1).
    // And the busiest whose supply (minted minus burned in the sample) is positive, so that
    // shares are checked.
    let supplied = tokens
        .iter()
        .find(|(t, _)| {
            holders_truth(all.iter().copied(), t)
                .supply
                .is_some_and(|s| !s.is_zero())
        })
        .map(|(t, _)| t.clone())
        .expect("a token of the sample with a positive supply");
    let picks = [
        (tokens[0].0.clone(), 100),
        (tokens[0].0.clone(), 7),
        (tokens[tokens.len() / 2].0.clone(), 2),
        (tokens[tokens.len() - 1].0.clone(), 1),
        (supplied, 3),
    ];
    let mut holders = 0;
    for (token, limit) in &picks {
        let want = holders_truth(all.iter().copied(), token);
        holders += want.holders.len();
        let decimals = truth.meta.get(token).and_then(|m| m.decimals);
        check_token(&app, token, &want, decimals, *limit, "demo").await;
    }
    assert!(holders > 20, "the picked tokens have holders: {holders}");

    // The graph's `token { holders stats }` agree with REST.
    let token = &tokens[0].0;
    let (rest, _) = walk_owners(&app, "/api/v2.2", token, "DESC", 100).await;
    let rest: Vec<(String, String)> = rest
        .iter()
        .map(|r| {
            (
                text(&r["owner_address"]).unwrap_or_default(),
                text(&r["balance"]).unwrap_or_default(),
            )
        })
        .collect();
    let mut graph: Vec<(String, String)> = Vec::new();
    let mut after = String::new();
    loop {
        let q = format!(
            r#"{{ token(chain: "eth", address: "{token}") {{ stats {{ transfers status }}
                holders(first: 5{after}) {{ status edges {{ node {{ address balance }} }} pageInfo {{ hasNextPage endCursor }} }} }} }}"#
        );
        let data = app.graphql_ok(&q, serde_json::json!({})).await;
        let h = &data["token"]["holders"];
        assert_eq!(h["status"], "SYNCED", "{data}");
        graph.extend(h["edges"].as_array().into_iter().flatten().map(|e| {
            (
                text(&e["node"]["address"]).unwrap_or_default(),
                text(&e["node"]["balance"]).unwrap_or_default(),
            )
        }));
        let (_, _, stats) = app
            .get_rest(&format!("/api/v2.2/erc20/{token}/stats"))
            .await;
        assert_eq!(
            data["token"]["stats"]["transfers"].to_string(),
            stats["transfers"]["total"].as_str().unwrap_or_default()
        );
        if h["pageInfo"]["hasNextPage"] != serde_json::json!(true) {
            break;
        }
        after = format!(
            ", after: \"{}\"",
            text(&h["pageInfo"]["endCursor"]).unwrap_or_default()
        );
    }
    assert_eq!(graph, rest, "token {{ holders }} walks the REST owners");

    // Every token's holders: a replay of the stored transfers (the migration's backfill) makes
    // the same rows the writes kept; importing the same logs again adds nothing. Rolling back
    // to before the balances' migration also converts the stored rows back to text and again
    // to binary (`m20261128_000012_binary_columns`): nothing changes on the way.
    let before = kept(&app).await;
    assert!(!before.0.is_empty() && !before.1.is_empty());
    let all = migration::Migrator::migrations();
    let balances = all
        .iter()
        .position(|m| m.name() == "m20261126_000009_erc20_balances")
        .expect("the balances migration is listed");
    migration::Migrator::down(&app.db, Some((all.len() - balances) as u32))
        .await
        .expect("down");
    migration::Migrator::up(&app.db, None).await.expect("up");
    assert_eq!(
        kept(&app).await,
        before,
        "the backfill replays the kept rows"
    );
    app.load_demo().await;
    assert_eq!(kept(&app).await, before, "a second import adds nothing");

    // A token nobody transferred: no holder, no supply, no transfer.
    let nobody = "0x00000000000000000000000000000000000000ee";
    let (records, pages) = walk_owners(&app, "/api/v2", nobody, "DESC", 10).await;
    assert!(records.is_empty() && pages[0]["total_supply"].is_null());
    assert_eq!(pages[0]["status"], "SYNCED");
    let (status, _, body) = app.get_rest(&format!("/api/v2/erc20/{nobody}/stats")).await;
    assert_eq!(
        (status, body["transfers"]["total"].clone()),
        (200, "0".into())
    );

    // Errors name their parameter; a cursor is bound to its token and its order.
    let token = &tokens[0].0;
    let base = format!("/api/v2.2/erc20/{token}/owners");
    refused(&app, "/api/v2.2/erc20/0x12/owners", "token_address").await;
    refused(&app, "/api/v2.2/erc20/0x12/stats", "address").await;
    refused(&app, &format!("{base}?order=up"), "order").await;
    refused(&app, &format!("{base}?limit=0"), "limit").await;
    refused(&app, &format!("{base}?limit=101"), "limit").await;
    refused(&app, &format!("{base}?chain=nowhere"), "chain").await;
    refused(&app, &format!("{base}?cursor=abc"), "cursor").await;
    refused(
        &app,
        &format!("/api/v2.2/erc20/{token}/stats?chain=nowhere"),
        "chain",
    )
    .await;
    let (_, _, first) = app.get_rest(&format!("{base}?limit=1")).await;
    let cursor = text(&first["cursor"]).expect("the busiest token has a second holder");
    let other = &tokens[1].0;
    refused(
        &app,
        &format!(
            "/api/v2.2/erc20/{other}/owners?limit=1&cursor={}",
            enc(&cursor)
        ),
        "cursor",
    )
    .await;
    refused(
        &app,
        &format!("{base}?limit=1&order=ASC&cursor={}", enc(&cursor)),
        "cursor",
    )
    .await;
    app.cleanup().await;
}

/// The demo imported without declaring its history whole: a token's answer waits for the
/// contract's history, showing meanwhile only holders whose wallet history is stored.
async fn erc20_owners_of_an_incomplete_token(backend: Backend) {
    let truth = Truth::demo();
    let app = common::spawn(backend).await;
    let headers = tokenql::import::read_blocks_str(tokenql::demo::BLOCKS, "demo blocks")
        .expect("demo blocks");
    let lines = tokenql::demo::LOGS.lines().map(|l| Ok(l.to_string()));
    tokenql::import::import_lines(&app.db, Chain::ETH, lines, headers)
        .await
        .expect("import");
    let all = moves(&truth);
    let token = busiest_tokens(&truth)[0].0.clone();
    let want = holders_truth(all.iter().copied(), &token);
    let uri = format!("/api/v2.2/erc20/{token}/owners?limit=100");

    // Nothing is certain yet: no holder, no supply; the stats count what is stored.
    let (status, _, body) = app.get_rest(&uri).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["status"], "SYNCING", "{body}");
    assert!(body["total_supply"].is_null(), "{body}");
    assert_eq!(body["result"], serde_json::json!([]), "{body}");
    let (_, headers, stats) = app
        .get_rest(&format!("/api/v2.2/erc20/{token}/stats"))
        .await;
    assert_eq!(
        headers.get("x-sync-status").and_then(|v| v.to_str().ok()),
        Some("SYNCING")
    );
    assert_eq!(stats["transfers"]["total"], want.transfers.to_string());

    // A holder whose wallet history is stored is certain, and shown alone.
    let (holder, balance) = want.holders[0].clone();
    let wallet = Scope::wallet(Address::parse(&holder).expect("address"));
    tokenql::store::scopes::schedule(&app.db, Chain::ETH, &[wallet])
        .await
        .expect("schedule");
    tokenql::store::scopes::finish(&app.db, Chain::ETH, wallet)
        .await
        .expect("finish");
    let (_, _, body) = app.get_rest(&uri).await;
    assert_eq!(body["status"], "SYNCING", "{body}");
    let got: Vec<(Option<String>, Option<String>)> = body["result"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| (text(&r["owner_address"]), text(&r["balance"])))
        .collect();
    assert_eq!(got, vec![(Some(holder), Some(balance.to_string()))]);
    assert!(body["result"][0]["percentage_relative_to_total_supply"].is_null());

    // The first request scheduled the contract's history; once stored, the whole answer.
    let contract = Scope::contract(Address::parse(&token).expect("address"));
    let rows = tokenql::store::scopes::read(&app.db, Chain::ETH, &[contract])
        .await
        .expect("scopes");
    assert_eq!(
        rows.len(),
        1,
        "the owners request scheduled {token}'s history"
    );
    tokenql::store::scopes::finish(&app.db, Chain::ETH, contract)
        .await
        .expect("finish");
    // (The token list is not imported here: decimals unknown.)
    check_token(&app, &token, &want, None, 100, "complete").await;
    app.cleanup().await;
}
