//! Demo agreement: with the bundled real mainnet sample loaded, REST and GraphQL answer record
//! for record the same, and both equal the ground truth of an independent decoder
//! (`common::truth`).

use crate::support::common;

use common::truth::{Nft, Transfer, Truth};
use common::{
    assert_same_records, enc, gql_list, text, Backend, TestApp, NFT_FIELDS, TRANSFER_FIELDS,
};
use serde_json::Value;

crate::backend_tests!(demo_agreement, nothing_indexed_yet_says_syncing);

fn assert_nft(what: &str, i: usize, got: &Value, want: &Nft) {
    let s = |k: &str| text(&got[k]);
    let ctx = || format!("{what}: record {i}: {got}\nexpected {want:?}");
    assert_eq!(s("token_address"), Some(want.contract.clone()), "{}", ctx());
    assert_eq!(s("token_id"), Some(want.token_id.clone()), "{}", ctx());
    assert_eq!(s("owner_of"), Some(want.owner.clone()), "{}", ctx());
    assert_eq!(s("amount"), Some(want.amount.clone()), "{}", ctx());
    assert_eq!(
        s("contract_type"),
        Some(want.contract_type.clone()),
        "{}",
        ctx()
    );
    assert_eq!(
        s("block_number"),
        Some(want.block_number.to_string()),
        "{}",
        ctx()
    );
    assert_eq!(
        s("block_number_minted"),
        want.minted.map(|b| b.to_string()),
        "{}",
        ctx()
    );
}

fn assert_transfer(truth: &Truth, what: &str, i: usize, got: &Value, want: &Transfer) {
    let s = |k: &str| text(&got[k]);
    let ctx = || format!("{what}: record {i}: {got}\nexpected {want:?}");
    assert_eq!(
        s("contract_address"),
        Some(want.contract.clone()),
        "{}",
        ctx()
    );
    assert_eq!(s("from_wallet"), Some(want.from.clone()), "{}", ctx());
    assert_eq!(s("to_wallet"), Some(want.to.clone()), "{}", ctx());
    assert_eq!(s("value"), Some(want.value.clone()), "{}", ctx());
    assert_eq!(
        s("block_number"),
        Some(want.block_number.to_string()),
        "{}",
        ctx()
    );
    assert_eq!(s("block_hash"), Some(want.block_hash.clone()), "{}", ctx());
    assert_eq!(
        s("block_timestamp"),
        Some(want.block_timestamp.clone()),
        "{}",
        ctx()
    );
    assert_eq!(
        s("transaction_hash"),
        Some(want.transaction_hash.clone()),
        "{}",
        ctx()
    );
    assert_eq!(
        s("transaction_index"),
        Some(want.transaction_index.to_string()),
        "{}",
        ctx()
    );
    assert_eq!(
        s("log_index"),
        Some(want.log_index.to_string()),
        "{}",
        ctx()
    );
    let meta = truth.meta.get(&want.contract).cloned().unwrap_or_default();
    assert_eq!(s("value_decimal"), truth.value_decimal(want), "{}", ctx());
    assert_eq!(
        s("token_decimals"),
        meta.decimals.map(|d| d.to_string()),
        "{}",
        ctx()
    );
    assert_eq!(s("token_symbol"), meta.symbol, "{}", ctx());
    assert_eq!(s("token_name"), meta.name, "{}", ctx());
}

async fn check_nfts(app: &TestApp, owner: &str, want: &[Nft]) {
    let rest = app.rest_nfts(owner, 100).await;
    let gql = app.gql_nfts(owner, 100).await;
    let what = format!("NFTs of {owner}");
    assert_eq!(
        rest.len(),
        want.len(),
        "{what}: REST has {} records, expected {}: {rest:?}",
        rest.len(),
        want.len()
    );
    for (i, (got, w)) in rest.iter().zip(want).enumerate() {
        assert_nft(&what, i, got, w);
    }
    assert_same_records(&what, &rest, &gql, NFT_FIELDS);
}

async fn check_transfers(app: &TestApp, truth: &Truth, wallets: &[&str]) {
    let want = truth.transfers_of(wallets);
    let what = format!("ERC20 transfers of {wallets:?}");
    let rest_filter = wallets
        .iter()
        .map(|w| format!("wallet_addresses[]={}", enc(w)))
        .collect::<Vec<_>>()
        .join("&");
    let rest = app.rest_transfers(&rest_filter, 100).await;
    let gql = app
        .gql_transfers(&format!("walletAddresses: {}", gql_list(wallets)), 100)
        .await;
    assert_eq!(
        rest.len(),
        want.len(),
        "{what}: REST has {} records, expected {}",
        rest.len(),
        want.len()
    );
    for (i, (got, w)) in rest.iter().zip(&want).enumerate() {
        assert_transfer(truth, &what, i, got, w);
    }
    assert_same_records(&what, &rest, &gql, TRANSFER_FIELDS);
}

async fn demo_agreement(backend: Backend) {
    let truth = Truth::demo();
    assert!(
        truth.transfers.len() > 1000 && truth.nfts.len() > 50,
        "demo sample shrank"
    );
    let app = common::spawn(backend).await;
    app.load_demo().await;

    // Every current NFT holder, and a wallet that holds none.
    for (owner, want) in &truth.nfts {
        check_nfts(&app, owner, want).await;
    }
    check_nfts(&app, "0x00000000000000000000000000000000000000a1", &[]).await;

    // The same wallet written in upper case answers the same.
    let (top, _) = truth
        .nfts
        .iter()
        .max_by_key(|(_, v)| v.len())
        .expect("some NFT holder");
    let upper = format!("0x{}", top[2..].to_uppercase());
    let (status, _, body) = app.get_rest(&format!("/api/v2/{upper}/nft")).await;
    assert_eq!(status, 200, "upper-case address: {body}");
    assert_eq!(
        body["result"].as_array().map(Vec::len),
        Some(truth.nfts[top].len()),
        "upper-case address"
    );

    // Transfers of the busiest wallets, a quiet one, and several wallets at once.
    let busy = truth.busiest_wallets();
    let quiet = busy
        .iter()
        .rev()
        .find(|(_, n)| *n == 1)
        .expect("a wallet with one transfer");
    for (w, _) in busy.iter().take(4).chain([quiet]) {
        check_transfers(&app, &truth, &[w]).await;
    }
    check_transfers(&app, &truth, &[&busy[1].0, &busy[5].0, &quiet.0]).await;
    check_transfers(
        &app,
        &truth,
        &["0x00000000000000000000000000000000000000a1"],
    )
    .await;

    app.cleanup().await;
}

/// A database with nothing indexed (no chain state, no history): no answer may say `SYNCED`,
/// on any route or field, though every one is empty.
async fn nothing_indexed_yet_says_syncing(backend: Backend) {
    let app = common::spawn(backend).await;
    let w = "0x430d5dde0cd48989737a95b4c46e1801a9a08531";
    let c = "0xdac17f958d2ee523a2206206994597c13d831ec7";
    for uri in [
        format!("/api/v2/{w}/nft"),
        format!("/api/v2/erc20/transfers?wallet_addresses={w}"),
        format!("/api/v2/erc20/transfers?contract_addresses={c}"),
        "/api/v2/erc20/transfers".to_string(),
        format!("/api/v2.2/{w}/erc20/transfers"),
        format!("/api/v2.2/erc20/{c}/transfers"),
        format!("/api/v2.2/{w}/nft/transfers"),
        format!("/api/v2.2/nft/{c}/transfers"),
        format!("/api/v2.2/nft/{c}/owners"),
        format!("/api/v2.2/nft/{c}/1/owners"),
        format!("/api/v2.2/nft/{c}"),
        format!("/api/v2.2/{w}/nft/collections"),
    ] {
        let (status, _, body) = app.get_rest(&uri).await;
        assert_eq!(status, 200, "{uri}: {body}");
        assert_eq!(body["status"], "SYNCING", "{backend:?} {uri}: {body}");
        assert_eq!(body["result"], serde_json::json!([]), "{uri}: {body}");
    }
    let (status, headers, body) = app.get_rest(&format!("/api/v2.2/{w}/erc20")).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        headers.get("x-sync-status").and_then(|v| v.to_str().ok()),
        Some("SYNCING"),
        "{backend:?}: balances with nothing indexed"
    );
    for query in [
        format!("{{ c: nftsByWallet(address: \"{w}\") {{ status }} }}"),
        format!("{{ c: erc20Transfers(walletAddresses: [\"{w}\"]) {{ status }} }}"),
        "{ c: erc20Transfers { status } }".to_string(),
    ] {
        let (status, body) = app.graphql(&query, serde_json::json!({})).await;
        assert_eq!(status, 200, "{query}: {body}");
        assert_eq!(
            body["data"]["c"]["status"], "SYNCING",
            "{backend:?} {query}: {body}"
        );
    }
    app.cleanup().await;
}
