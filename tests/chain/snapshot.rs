//! One moment per answer, on every backend: while the follower stores a block every 100 ms and
//! clients ask a wallet's ERC20 transfers and balances without pause (`max_lag_blocks` 0, so
//! an answer is `SYNCED` as soon as the newest block is stored), every `SYNCED` answer holds
//! exactly the chain's records up to the block it says it was read at (`X-Indexed-Block`), and
//! that block is at or after the one stored when the request was sent.
//!
//! Read in separate statements, the page and the chain's state could come from different
//! commits: a page of block N-1 judged by the state of block N said `SYNCED` with block N's
//! records missing, and a balance summed after the state was read counted a block the answer
//! did not claim (API.md; issue 26). The streaming-replica version of this check is in
//! `replication.rs`.

use crate::support::anvil;
use crate::support::common;

use std::time::{Duration, Instant};

use crate::support::indexer::consistency::{ask_under_load, broken, chain_moves, traffic};
use crate::support::indexer::{wait_synced, Indexer};
use anvil::*;
use common::Backend;

/// Wallets trading the token.
const WALLETS: usize = 6;
/// How long clients ask while the chain moves.
const LOAD: Duration = Duration::from_secs(10);
/// Concurrent clients.
const CLIENTS: usize = 6;

async fn synced_answers_hold_exactly_their_block(backend: Backend) {
    let chain = Anvil::start(WALLETS + 1, &[]).await;
    let token = chain
        .deploy("TestToken", token_ctor("Snap", "SNP", 18))
        .await;
    let wallets: Vec<String> = chain.accounts[1..].to_vec();
    for w in &wallets {
        let data = calldata(mintCall {
            to: addr(w),
            amount: u(1_000_000),
        });
        chain.send(&chain.accounts[0], &token, data).await;
    }
    let app = common::spawn_configured(
        backend,
        tokenql::app::ServerOptions::default(),
        tokenql::query::QueryConfig { max_lag_blocks: 0 },
    )
    .await;
    let indexer = Indexer::start(&app.db, &chain.url, |_| {});
    wait_synced(&app.db, &chain, Duration::from_secs(60)).await;

    let until = Instant::now() + LOAD;
    let bases = [app.base.clone()];
    let (sent, seen) = tokio::join!(
        traffic(&chain, &token, &wallets, Duration::from_millis(100), until),
        ask_under_load(&bases, &app.key, &wallets, &token, &app.db, CLIENTS, until),
    );
    let truth = chain_moves(&chain, &token).await;
    let (synced, bad) = broken(&seen, &truth);
    assert!(
        bad.is_empty(),
        "{} of {synced} SYNCED answers are not the chain as of their block:\n{}",
        bad.len(),
        bad.join("\n")
    );
    assert!(
        sent > 20 && synced > 50,
        "too little happened to mean anything: {sent} blocks, {synced} SYNCED answers of {}",
        seen.len()
    );
    eprintln!(
        "snapshot ({backend:?}): {} answers while {sent} blocks landed, {synced} SYNCED, all exact",
        seen.len()
    );
    indexer.stop().await.expect("the indexer stops cleanly");
    app.cleanup().await;
}

crate::backend_tests!(synced_answers_hold_exactly_their_block);
