//! Holdings as of a past block on the bundled mainnet sample: at each of the ten blocks the
//! sample has NFT moves in (and the block before the first), every holdings question of the
//! busiest wallet and collection (`crate::support::as_of::check_block`: a wallet's NFTs and
//! collections, a collection's tokens and owners, one token id's owners, on REST and GraphQL)
//! equals the holdings this test replays itself from the sample's moves; `to_date` gives the
//! same as the block it names; a token's holders and supply at ten blocks of its history; a
//! block above the chain's head is a 400, and a cursor walks the same block.

use std::collections::BTreeMap;

use serde_json::json;

use crate::support::as_of::{
    check_block, owners_want, replay, rest_walk, wallet_want, Erc20Move, Subjects,
};
use crate::support::common::truth::{Truth, ZERO};
use crate::support::common::{self, text, Backend};

/// The sample's ERC20 transfers with their blocks.
fn erc20_moves(truth: &Truth) -> Vec<Erc20Move> {
    truth
        .transfers
        .iter()
        .map(|t| Erc20Move {
            block: t.block_number,
            contract: t.contract.clone(),
            from: t.from.clone(),
            to: t.to.clone(),
            value: t.value.clone(),
        })
        .collect()
}

/// The time of the next block with moves after `block`.
fn next_time(times: &BTreeMap<u64, u64>, block: u64) -> Option<u64> {
    times.range(block + 1..).next().map(|(_, t)| *t)
}

/// The blocks the sample has NFT moves in (ten), and the block before the first, oldest first.
fn blocks(truth: &Truth) -> Vec<u64> {
    let mut all: Vec<u64> = truth.nft_moves.iter().map(|m| m.block).collect();
    all.sort_unstable();
    all.dedup();
    all.insert(0, all[0] - 1);
    all
}

pub(super) async fn holdings_as_of_blocks(backend: Backend) {
    let app = common::spawn(backend).await;
    app.load_demo().await;
    let truth = Truth::demo();
    // The wallet with the most moves, and the collection moved in the most blocks.
    let mut by_wallet: BTreeMap<&str, usize> = BTreeMap::new();
    let mut blocks_of: BTreeMap<&str, std::collections::BTreeSet<u64>> = BTreeMap::new();
    for m in &truth.nft_moves {
        for w in [&m.from, &m.to] {
            if w != ZERO {
                *by_wallet.entry(w).or_default() += 1;
            }
        }
        blocks_of.entry(&m.contract).or_default().insert(m.block);
    }
    let by_collection: BTreeMap<&str, usize> =
        blocks_of.into_iter().map(|(c, b)| (c, b.len())).collect();
    let busiest = |m: BTreeMap<&str, usize>| {
        m.into_iter()
            .max_by_key(|(k, n)| (*n, std::cmp::Reverse(k.to_string())))
            .map(|(k, _)| k.to_string())
    };
    let wallet = busiest(by_wallet).expect("a wallet");
    let times: BTreeMap<u64, u64> = truth.nft_moves.iter().map(|m| (m.block, m.time)).collect();
    let collection = busiest(by_collection).expect("a collection");
    let erc20 = erc20_moves(&truth);
    let subjects = Subjects {
        wallets: vec![wallet.clone()],
        collections: vec![collection.clone()],
        tokens: Vec::new(),
    };
    let mut changed = 0;
    let mut previous = None;
    for block in blocks(&truth) {
        check_block(&app, &truth.nft_moves, &erc20, &subjects, block).await;
        let held = replay(&truth.nft_moves, block);
        let want = wallet_want(&held, &wallet);
        // The same as of the block's time, and of any time before the next block with moves.
        if let Some(time) = times.get(&block) {
            for t in [*time, next_time(&times, block).map_or(*time, |n| n - 1)] {
                let uri = format!("/api/v2.2/{wallet}/nft?to_date={t}");
                assert_eq!(
                    rest_walk(&app, &uri, 4).await,
                    want,
                    "{uri} (block {block})"
                );
            }
        }
        let both = Some((want, owners_want(&held, &collection, None)));
        changed += usize::from(previous != both);
        previous = both;
    }
    assert!(
        changed >= 3,
        "the holdings change at only {changed} of the ten blocks"
    );
    token_holders_as_of_blocks(&app, &truth, &erc20).await;

    // As of the indexed head, the answer is the current one.
    let (_, headers, _) = app.get_rest(&format!("/api/v2.2/{wallet}/nft")).await;
    let head = headers
        .get("x-indexed-block")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
        .expect("X-Indexed-Block");
    let now = rest_walk(&app, &format!("/api/v2.2/{wallet}/nft?chain=eth"), 100).await;
    let at_head = rest_walk(
        &app,
        &format!("/api/v2.2/{wallet}/nft?to_block={head}"),
        100,
    )
    .await;
    assert_eq!(at_head, now);

    // A block above the head is refused, on both APIs; a cursor is bound to its block.
    let (status, _, body) = app
        .get_rest(&format!(
            "/api/v2.2/{wallet}/nft?to_block={}",
            head + 1_000_000
        ))
        .await;
    assert_eq!(status, 400, "{body}");
    assert!(
        body["message"]
            .as_str()
            .unwrap_or_default()
            .contains("above the chain's head"),
        "{body}"
    );
    let q = format!(
        r#"{{ nftsByWallet(chain: "eth", address: "{wallet}", atBlock: {}) {{ status }} }}"#,
        head + 1_000_000
    );
    let (_, answer) = app.graphql(&q, json!({})).await;
    assert_eq!(
        answer["errors"][0]["extensions"]["code"], "BAD_USER_INPUT",
        "{answer}"
    );
    let early = blocks(&truth)[3];
    let (_, _, first) = app
        .get_rest(&format!("/api/v2.2/{wallet}/nft?to_block={early}&limit=1"))
        .await;
    if let Some(cursor) = text(&first["cursor"]) {
        let (status, _, body) = app
            .get_rest(&format!(
                "/api/v2.2/{wallet}/nft?limit=1&cursor={}",
                common::enc(&cursor)
            ))
            .await;
        assert_eq!(
            status, 400,
            "a cursor of block {early} used without it: {body}"
        );
    }
    app.cleanup().await;
}

/// A token's holders and supply at ten blocks spread over its history, and the block before
/// its first transfer.
async fn token_holders_as_of_blocks(app: &common::TestApp, truth: &Truth, erc20: &[Erc20Move]) {
    let mut busiest: BTreeMap<&str, usize> = BTreeMap::new();
    for t in &truth.transfers {
        *busiest.entry(&t.contract).or_default() += 1;
    }
    let token = busiest
        .into_iter()
        .max_by_key(|(k, n)| (*n, std::cmp::Reverse(k.to_string())))
        .map(|(k, _)| k.to_string())
        .expect("a token");
    let mut erc20_blocks: Vec<u64> = erc20
        .iter()
        .filter(|t| t.contract == token)
        .map(|t| t.block)
        .collect();
    erc20_blocks.sort_unstable();
    erc20_blocks.dedup();
    let step = (erc20_blocks.len() / 10).max(1);
    let mut picks: Vec<u64> = erc20_blocks.iter().step_by(step).copied().collect();
    picks.insert(0, erc20_blocks[0] - 1);
    let subjects = Subjects {
        tokens: vec![token],
        ..Subjects::default()
    };
    for block in picks {
        check_block(app, &[], erc20, &subjects, block).await;
    }
}

crate::backend_tests!(holdings_as_of_blocks);
