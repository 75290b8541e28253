//! `wallet(...)`'s transfer lists on the demo sample: `erc20Transfers` and `nftTransfers` in
//! both orders, with date and block bounds, filters, formats and labels, each walked to the
//! end against the demo's truth and the REST v2.2 routes.

use std::collections::BTreeMap;

use serde_json::Value;

use super::checks::{
    assert_same_as_rest, check_erc20, check_move, positions, REST_ERC20, REST_MOVE,
};
use super::walk::{s, short_hex, walk, wallet_list, ERC20_FIELDS, MOVE_FIELDS};
use crate::support::common::truth::{iso8601, NftMove, Truth, ZERO};
use crate::support::common::{gql_str, Backend, TestApp};

/// `Wallet.erc20Transfers` and `Wallet.nftTransfers`.
pub async fn wallet_transfers(backend: Backend) {
    let truth = Truth::demo();
    let app = crate::support::common::spawn(backend).await;
    app.load_demo().await;
    let busy = truth.busiest_wallets();
    let w = busy[1].0.clone();
    let mine = truth.transfers_of(&[&w]);
    assert!(mine.len() > 14, "a busy wallet spans several pages of 7");
    // A label shows on both sides.
    let label = vec![(
        tokenql::types::Address::parse(&w).expect("address"),
        "Busy".to_string(),
    )];
    tokenql::store::labels::upsert_labels(&app.db, tokenql::types::Chain::ETH, &label)
        .await
        .expect("labels");

    let erc20 = |args: String, first: usize| {
        let w = w.clone();
        move |after: &str| wallet_list(&w, "erc20Transfers", first, after, &args, ERC20_FIELDS)
    };
    let path = ["wallet", "erc20Transfers"];
    let got = walk(&app, &path, 7, erc20(String::new(), 7)).await;
    got.assert_synced("wallet erc20Transfers");
    let want: Vec<(u64, u64)> = mine.iter().map(|t| (t.block_number, t.log_index)).collect();
    assert_eq!(positions(&got.nodes), want, "newest first");
    assert_eq!(got.pages(), want.len().div_ceil(7));
    for (n, t) in got.nodes.iter().zip(&mine) {
        check_erc20(&truth, n, t);
        for (side, who) in [("fromWalletLabel", &t.from), ("toWalletLabel", &t.to)] {
            assert_eq!(n[side].as_str() == Some("Busy"), *who == w, "{side}: {n}");
        }
    }
    assert_same_as_rest(
        &app,
        &format!("/api/v2.2/{w}/erc20/transfers"),
        &got.nodes,
        REST_ERC20,
    )
    .await;

    let asc = walk(&app, &path, 7, erc20("order: ASC".into(), 7)).await;
    let mut reversed = want.clone();
    reversed.reverse();
    assert_eq!(positions(&asc.nodes), reversed, "order: ASC");

    // Dates (ISO 8601 and seconds), inclusive; a block bound wins over a date of its side.
    let (lo, hi) = (mine[mine.len() * 3 / 4], mine[mine.len() / 4]);
    assert!(
        lo.block_time < hi.block_time,
        "the transfers span several blocks"
    );
    let inside: Vec<(u64, u64)> = mine
        .iter()
        .filter(|t| (lo.block_time..=hi.block_time).contains(&t.block_time))
        .map(|t| (t.block_number, t.log_index))
        .collect();
    assert!(inside.len() < mine.len(), "the dates leave some out");
    let args = format!(
        "fromDate: {}, toDate: \"{}\"",
        gql_str(&lo.block_timestamp),
        hi.block_time
    );
    let dated = walk(&app, &path, 5, erc20(args, 5)).await;
    assert_eq!(positions(&dated.nodes), inside, "fromDate/toDate");
    let by_block: Vec<(u64, u64)> = mine
        .iter()
        .filter(|t| t.block_number >= lo.block_number && t.block_time <= hi.block_time)
        .map(|t| (t.block_number, t.log_index))
        .collect();
    let args = format!(
        "fromBlock: {}, fromDate: \"2999-01-01\", toDate: \"{}\"",
        lo.block_number, hi.block_time
    );
    let won = walk(&app, &path, 5, erc20(args, 5)).await;
    assert_eq!(
        positions(&won.nodes),
        by_block,
        "fromBlock wins over fromDate"
    );

    // contractAddresses narrows to those tokens.
    let token = mine[0].contract.clone();
    let of_token: Vec<(u64, u64)> = mine
        .iter()
        .filter(|t| t.contract == token)
        .map(|t| (t.block_number, t.log_index))
        .collect();
    let args = format!(
        "contractAddresses: [{}]",
        gql_str(&token.to_uppercase().replace("0X", "0x"))
    );
    let narrowed = walk(&app, &path, 4, erc20(args, 4)).await;
    assert_eq!(positions(&narrowed.nodes), of_token, "contractAddresses");

    nft_moves_of_a_wallet(&app, &truth).await;
    app.cleanup().await;
}

/// The wallet in the most NFT moves (besides the zero address).
pub fn busiest_nft_wallet(truth: &Truth) -> String {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for m in &truth.nft_moves {
        for w in [&m.from, &m.to] {
            if w != ZERO {
                *counts.entry(w).or_default() += 1;
            }
        }
    }
    counts
        .iter()
        .max_by_key(|(a, n)| (**n, std::cmp::Reverse(**a)))
        .map(|(a, _)| a.to_string())
        .expect("NFT moves in the demo")
}

async fn nft_moves_of_a_wallet(app: &TestApp, truth: &Truth) {
    let w = busiest_nft_wallet(truth);
    let mine: Vec<&NftMove> = truth
        .nft_moves
        .iter()
        .filter(|m| m.from == w || m.to == w)
        .collect();
    assert!(mine.len() > 14, "the busiest NFT wallet spans pages of 7");
    let moves = |args: String, first: usize| {
        let w = w.clone();
        move |after: &str| wallet_list(&w, "nftTransfers", first, after, &args, MOVE_FIELDS)
    };
    let path = ["wallet", "nftTransfers"];
    let got = walk(app, &path, 7, moves(String::new(), 7)).await;
    got.assert_synced("wallet nftTransfers");
    let want: Vec<(u64, u64)> = mine.iter().map(|m| (m.block, m.log)).collect();
    assert_eq!(positions(&got.nodes), want, "newest first");
    for (n, m) in got.nodes.iter().zip(&mine) {
        check_move(n, m);
    }
    assert_same_as_rest(
        app,
        &format!("/api/v2.2/{w}/nft/transfers"),
        &got.nodes,
        REST_MOVE,
    )
    .await;

    let asc = walk(app, &path, 5, moves("order: ASC".into(), 5)).await;
    let mut reversed = want.clone();
    reversed.reverse();
    assert_eq!(positions(&asc.nodes), reversed, "order: ASC");

    let (lo, hi) = (mine[mine.len() * 3 / 4], mine[mine.len() / 4]);
    let inside: Vec<(u64, u64)> = mine
        .iter()
        .filter(|m| (lo.time..=hi.time).contains(&m.time))
        .map(|m| (m.block, m.log))
        .collect();
    let args = format!(
        "fromDate: {}, toDate: \"{}\"",
        gql_str(&iso8601(lo.time)),
        hi.time
    );
    assert_eq!(
        positions(&walk(app, &path, 4, moves(args, 4)).await.nodes),
        inside,
        "dates"
    );
    let by_block: Vec<(u64, u64)> = mine
        .iter()
        .filter(|m| m.block <= hi.block && m.time >= lo.time)
        .map(|m| (m.block, m.log))
        .collect();
    let args = format!(
        "toBlock: {}, toDate: \"1000\", fromDate: \"{}\"",
        hi.block, lo.time
    );
    assert_eq!(
        positions(&walk(app, &path, 4, moves(args, 4)).await.nodes),
        by_block,
        "toBlock wins"
    );
    let one = mine[0].contract.clone();
    let of_one: Vec<(u64, u64)> = mine
        .iter()
        .filter(|m| m.contract == one)
        .map(|m| (m.block, m.log))
        .collect();
    let args = format!("contractAddresses: [{}]", gql_str(&one));
    assert_eq!(
        positions(&walk(app, &path, 3, moves(args, 3)).await.nodes),
        of_one,
        "contractAddresses"
    );

    // Hex ids.
    let q = wallet_list(
        &w,
        "nftTransfers",
        10,
        "",
        "tokenIdFormat: HEX",
        "tokenAddress tokenId",
    );
    let data = app.graphql_ok(&q, Value::Null).await;
    let edges = data["wallet"]["nftTransfers"]["edges"]
        .as_array()
        .expect("edges")
        .clone();
    for (e, m) in edges.iter().zip(&mine) {
        let n = &e["node"];
        assert_eq!(s(&n["tokenId"]), Some(short_hex(&m.id_hex)), "{n}");
        let contract = s(&n["tokenAddress"]);
        assert_eq!(contract.as_deref(), Some(m.contract.as_str()), "{n}");
    }
}
