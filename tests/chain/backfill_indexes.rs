//! A fresh backfill of finalized blocks leaves the transfer tables' address indexes and (on
//! PostgreSQL and MySQL) the kept balances out and builds them before it nears the head
//! (`store::backfill_indexes`, `store::backfill_balances`), on every backend, against a real
//! anvil chain. The proxy holds the follower's `eth_getLogs` in the finalized tail, so the
//! state in between is observed, not raced: the indexes are out and no balance is kept,
//! answers are exact (and `SYNCING`; a wallet's balances are summed from its transfers); a new
//! indexer started there (a restart, another leader) goes on deferring and builds them; at the
//! head every index is back, defined as the migrations define it, the balances are summed, and
//! every answer (transfers by wallet and by token, wallets' balances, the token's holders in
//! both orders) equals the chain's logs.

use crate::support::anvil;
use crate::support::common;
use crate::support::erc20_holders::{check_token, holders_truth, HoldersTruth};
use crate::support::proxy;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use crate::support::indexer::*;
use anvil::*;
use common::{text, Backend, TestApp};
use proxy::{Hold, Proxy};
use sea_orm::{EntityTrait, PaginatorTrait};
use tokenql::store::backfill_indexes::{self, DEFERRABLE};

/// Transfer logs in the backfill, in blocks of [`PER_BLOCK`].
const LOGS: u64 = 1_200;
const PER_BLOCK: u64 = 300;
/// Empty blocks after them: more than the reorg depth (64), so the logs are finalized.
const TAIL: u64 = 150;

type Transfers = BTreeMap<(String, u64), (String, String, String, String)>;

/// The chain's transfers that touch `wallet`.
fn touching(all: &Transfers, wallet: &str) -> Transfers {
    all.iter()
        .filter(|(_, (_, from, to, _))| from == wallet || to == wallet)
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// `0x` + the 20-byte address of `n` (the wallets `emitTransfers` moves between).
fn wallet(n: u64) -> String {
    format!("0x{n:040x}")
}

/// Every answer checked here equals the chain's: three wallets' transfers and the token's.
async fn answers_equal_the_chain(app: &TestApp, token: &str, chain: &Transfers, when: &str) {
    for w in [wallet(1), wallet(LOGS / 2), wallet(LOGS + 1)] {
        assert_eq!(
            api_erc20(app, &w).await,
            touching(chain, &w),
            "{when}: transfers of {w}"
        );
    }
    let all = app
        .rest_transfers(&format!("chain=eth&contract_addresses%5B%5D={token}"), 100)
        .await;
    assert_eq!(all.len() as u64, LOGS, "{when}: the token's transfers");
}

/// Three wallets' balances of `token` (`GET /{wallet}/erc20`) equal the chain's: summed from
/// their transfers while the kept balances are left out, read from them after.
async fn balances_equal_the_chain(app: &TestApp, token: &str, chain: &HoldersTruth, when: &str) {
    for w in [wallet(1), wallet(LOGS / 2), wallet(LOGS + 1)] {
        let (status, _, body) = app
            .get_rest(&format!("/api/v2.2/{w}/erc20?chain=eth"))
            .await;
        assert_eq!(status, 200, "{when}: {body}");
        let got: Vec<(String, String)> = body
            .as_array()
            .expect("balances")
            .iter()
            .map(|r| {
                (
                    text(&r["token_address"]).unwrap_or_default(),
                    text(&r["balance"]).unwrap_or_default(),
                )
            })
            .collect();
        let want: Vec<(String, String)> = chain
            .holders
            .iter()
            .filter(|(h, _)| *h == w)
            .map(|(_, b)| (token.to_lowercase(), b.to_string()))
            .collect();
        assert_eq!(got, want, "{when}: balances of {w}");
    }
}

/// Whether the chain's kept balances are left out now (`chain_state.balances_pending`).
async fn balances_pending(app: &TestApp) -> bool {
    tokenql::entity::chain_state::Entity::find_by_id(1i64)
        .one(&app.db)
        .await
        .expect("chain_state")
        .is_some_and(|s| s.balances_pending)
}

/// The deferrable indexes the database lacks now.
async fn missing(app: &TestApp) -> Vec<backfill_indexes::Deferrable> {
    backfill_indexes::missing(&app.db).await.expect("catalog")
}

/// Waits until the follower has stored `block`.
async fn wait_stored(app: &TestApp, block: u64) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let indexed = tokenql::entity::chain_state::Entity::find_by_id(1i64)
            .one(&app.db)
            .await
            .expect("chain_state")
            .and_then(|s| s.indexed_block);
        if indexed >= Some(block as i64) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the follower did not store block {block} (at {indexed:?})"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn a_fresh_backfill_defers_the_address_indexes_and_builds_them_before_the_head(
    backend: Backend,
) {
    let chain = Anvil::start(2, &[]).await;
    let token = chain
        .deploy("TestToken", token_ctor("Backfill", "BKF", 18))
        .await;
    for first in (0..LOGS).step_by(PER_BLOCK as usize) {
        chain.emit_transfer_logs(&token, first, PER_BLOCK).await;
    }
    let last_log = chain.head().await;
    chain.mine(TAIL).await;
    let truth = chain_erc20(&chain, std::slice::from_ref(&token)).await;
    assert_eq!(truth.len() as u64, LOGS);
    let moves = truth
        .values()
        .map(|(c, f, t, v)| (c.as_str(), f.as_str(), t.as_str(), v.as_str()));
    let holders = holders_truth(moves, &token.to_lowercase());

    let app = common::spawn(backend).await;
    assert_eq!(missing(&app).await, [], "{backend:?}: a migrated database");
    let migrated = backfill_indexes::definitions(&app.db)
        .await
        .expect("catalog");
    let p = Proxy::start(&chain.url, 5).await;
    // The follower stops in the finalized tail, past every log.
    let stall = last_log + 10;
    p.hold(Hold::LiveLogsFrom(stall));
    // A held call times out soon and is not retried, so that the stop below is seen soon.
    let ix = Indexer::start(&app.db, &p.url, |c| {
        c.request_timeout = Duration::from_secs(2);
        c.retry.max_attempts = 1;
    });
    p.wait_count("held", 1, Duration::from_secs(30)).await;
    wait_stored(&app, last_log).await;
    assert_eq!(
        missing(&app).await,
        DEFERRABLE,
        "{backend:?}: during the backfill the address indexes are left out"
    );
    answers_equal_the_chain(&app, &token, &truth, "during the backfill").await;
    // Left out on PostgreSQL and MySQL; SQLite keeps them (`store::backfill_balances::defer`).
    let left_out = backend != Backend::Sqlite;
    assert_eq!(
        balances_pending(&app).await,
        left_out,
        "{backend:?}: during the backfill the kept balances are left out"
    );
    let kept = tokenql::entity::erc20_balance::Entity::find()
        .count(&app.db)
        .await
        .expect("balances");
    assert_eq!(
        kept == 0,
        left_out,
        "{backend:?}: {kept} balances kept during the backfill"
    );
    balances_equal_the_chain(&app, &token, &holders, "during the backfill").await;
    let (_, _, body) = app
        .get_rest(&format!(
            "/api/v2/erc20/transfers?chain=eth&wallet_addresses%5B%5D={}",
            wallet(1)
        ))
        .await;
    assert_eq!(body["status"], "SYNCING", "{backend:?}: {body}");

    // A restart there: the new follower reads the state from the catalog and goes on.
    ix.stop().await.expect("the indexer ends cleanly");
    p.release();
    let ix = Indexer::start(&app.db, &p.url, |c| {
        c.request_timeout = Duration::from_secs(10);
    });
    wait_synced(&app.db, &chain, Duration::from_secs(60)).await;
    assert_eq!(missing(&app).await, [], "{backend:?}: at the head");
    assert_eq!(
        backfill_indexes::definitions(&app.db)
            .await
            .expect("catalog"),
        migrated,
        "{backend:?}: the rebuilt indexes are the migrations' own"
    );
    answers_equal_the_chain(&app, &token, &truth, "at the head").await;
    assert!(
        !balances_pending(&app).await,
        "{backend:?}: at the head the balances are summed"
    );
    balances_equal_the_chain(&app, &token, &holders, "at the head").await;
    check_token(&app, &token, &holders, Some(18), 100, "at the head").await;

    ix.stop().await.expect("the indexer ends cleanly");
    app.cleanup().await;
}

crate::backend_tests!(a_fresh_backfill_defers_the_address_indexes_and_builds_them_before_the_head);
