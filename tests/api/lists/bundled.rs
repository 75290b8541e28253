//! The bundled spam list and labels, imported as `tokenql lists` does, in both APIs.

use std::collections::BTreeSet;

use alloy::primitives::B256;
use serde_json::{json, Value};
use tokenql::decode::{Erc20Move, EventMeta};
use tokenql::lists::cli::{run_lists, ListsAction};
use tokenql::store::{write_batch, Batch, BlockHeader};
use tokenql::types::{Chain, Uint256};

use super::support::*;
use crate::support::common::truth::Truth;
use crate::support::common::{gql_list, Backend, TestApp};

crate::backend_tests!(bundled_lists_flag_and_label);

/// Writes one USDT transfer from Binance 8 to Binance 16 through the write path (the demo
/// sample has none touching Binance 8).
async fn binance_8_transfer(app: &TestApp) {
    let block = 20_000_500;
    let hash = B256::repeat_byte(0xb8);
    let batch = Batch {
        blocks: vec![BlockHeader {
            number: block,
            hash,
            parent_hash: None,
            timestamp: 1_718_000_000,
        }],
        erc20: vec![Erc20Move {
            meta: EventMeta {
                contract: address(USDT),
                block_number: block,
                block_hash: hash,
                transaction_hash: B256::repeat_byte(0x88),
                transaction_index: 0,
                log_index: 0,
            },
            from: address(BINANCE_8),
            to: address(BINANCE_16),
            value: Uint256::parse("1000000").expect("value"),
        }],
        ..Batch::default()
    };
    write_batch(&app.db, Chain::ETH, &batch)
        .await
        .expect("write the Binance 8 transfer");
}

async fn bundled_lists_flag_and_label(backend: Backend) {
    let truth = Truth::demo();
    let listed = listed_eth();
    let labels = etherscan_labels();
    let app = crate::support::common::spawn(backend).await;
    app.load_demo().await;
    binance_8_transfer(&app).await;

    let (eth, base, pol) = (spam_csv("eth"), spam_csv("base"), spam_csv("pol"));
    let lines = import_spam(&app, vec![eth.clone(), base.clone(), pol.clone()]).await;
    assert_eq!(
        lines,
        [
            format!(
                "spam list {}: 4378 imported, 3 skipped (3 duplicate rows), 0 malformed",
                eth.display()
            ),
            format!(
                "spam list {}: 0 imported, 2997 skipped (2997 for chains tokenql does not know: 8453), 0 malformed",
                base.display()
            ),
            format!(
                "spam list {}: 2497 imported, 2 skipped (2 duplicate rows), 0 malformed",
                pol.display()
            ),
        ]
    );
    let lines = run_lists(
        &app.db,
        ListsAction::Labels {
            file: labels_json(),
            chain: Chain::ETH,
        },
    )
    .await
    .expect("labels import");
    assert_eq!(
        lines,
        [format!(
            "labels {}: 26509 imported, 3436 skipped (172 repeated addresses; 3264 without a name), 0 malformed",
            labels_json().display()
        )]
    );

    // Binance 8, in both APIs.
    let t = transfers(
        &app,
        &format!("wallet_addresses[]={BINANCE_8}"),
        &format!("walletAddresses: {}", gql_list(&[BINANCE_8])),
    )
    .await;
    assert_eq!(t.len(), 1, "{t:?}");
    assert_eq!(t[0]["from_wallet_label"], json!("Binance 8"), "{}", t[0]);
    assert_eq!(t[0]["to_wallet_label"], json!("Binance 16"), "{}", t[0]);

    // Every labelled wallet of the demo's transfers: each record carries exactly the labels the
    // file gives its two wallets.
    let labelled: BTreeSet<&str> = truth
        .transfers
        .iter()
        .flat_map(|t| [t.from.as_str(), t.to.as_str()])
        .filter(|w| labels.contains_key(*w))
        .collect();
    assert!(
        labelled.contains(BINANCE_16),
        "Binance 16 trades in the demo"
    );
    // Binance 16 first: the transfer from Binance 8 is one of its records.
    let wallets: Vec<&str> = std::iter::once(BINANCE_16)
        .chain(labelled.iter().copied().filter(|w| *w != BINANCE_16))
        .take(100)
        .collect();
    let filter: Vec<String> = wallets
        .iter()
        .map(|w| format!("wallet_addresses[]={w}"))
        .collect();
    let t = transfers(
        &app,
        &filter.join("&"),
        &format!("walletAddresses: {}", gql_list(&wallets)),
    )
    .await;
    assert_eq!(t.len(), truth.transfers_of(&wallets).len() + 1);
    let mut seen = 0;
    for r in &t {
        for side in ["from", "to"] {
            let w = r[format!("{side}_wallet")].as_str().expect("wallet");
            let want = labels.get(w).map_or(Value::Null, |l| json!(l));
            assert_eq!(r[format!("{side}_wallet_label")], want, "{side}: {r}");
            seen += usize::from(!want.is_null());
        }
    }
    assert!(seen >= wallets.len(), "{seen} labels shown");

    // Listed ERC20 contracts of the demo are possible spam, the others not.
    let erc20: BTreeSet<&str> = truth
        .transfers
        .iter()
        .map(|t| t.contract.as_str())
        .collect();
    let spam20: Vec<&str> = erc20
        .iter()
        .filter(|c| listed.contains(**c))
        .copied()
        .collect();
    assert!(
        spam20.len() >= 10,
        "the demo trades listed tokens: {spam20:?}"
    );
    let mut contracts = spam20.clone();
    contracts.push(USDT);
    let filter: Vec<String> = contracts
        .iter()
        .map(|c| format!("contract_addresses[]={c}"))
        .collect();
    let t = transfers(
        &app,
        &filter.join("&"),
        &format!("contractAddresses: {}", gql_list(&contracts)),
    )
    .await;
    let flagged = t
        .iter()
        .filter(|r| r["possible_spam"] == json!(true))
        .count();
    for r in &t {
        let c = r["contract_address"].as_str().expect("contract");
        assert_eq!(r["possible_spam"], json!(listed.contains(c)), "{r}");
    }
    assert!(flagged > 0 && flagged < t.len(), "{flagged} of {}", t.len());

    // NFTs of listed collections are flagged, and left out with exclude_spam.
    let mut excluded = 0;
    for (owner, held) in &truth.nfts {
        if !held.iter().any(|n| listed.contains(&n.contract)) {
            continue;
        }
        let all = nfts(&app, owner, false).await;
        assert_eq!(all.len(), held.len(), "NFTs of {owner}");
        for r in &all {
            let c = r["token_address"].as_str().expect("token_address");
            assert_eq!(r["possible_spam"], json!(listed.contains(c)), "{r}");
        }
        let kept = nfts(&app, owner, true).await;
        let want: Vec<(&str, &str)> = held
            .iter()
            .filter(|n| !listed.contains(&n.contract))
            .map(|n| (n.contract.as_str(), n.token_id.as_str()))
            .collect();
        let got: Vec<(&str, &str)> = kept
            .iter()
            .map(|r| {
                (
                    r["token_address"].as_str().unwrap_or(""),
                    r["token_id"].as_str().unwrap_or(""),
                )
            })
            .collect();
        assert_eq!(got, want, "NFTs of {owner} without spam");
        excluded += held.len() - kept.len();
    }
    assert!(excluded > 0, "some demo NFTs are in listed collections");
    app.cleanup().await;
}
