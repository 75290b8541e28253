//! History on demand (issue #11), black-box on every backend against a real anvil chain: the
//! indexer starts with the default start block (the head at first start) on a chain with a
//! long history, and every answer that says `SYNCED` must hold the whole history.
//!
//! A scene of thousands of ERC20 transfers (plain, sprayed, burned) and NFT moves (ERC721 mints,
//! transfers and burns; ERC1155 batch mints, `TransferSingle` and `TransferBatch`) among 50+
//! wallets is built before the indexer starts; live traffic follows. The truth is decoded here
//! from every log of the chain from block 0 (and checked against `ownerOf` / `balanceOf`). For
//! each asked wallet (busy ones, one that only received, one that only sent, one never seen)
//! and each asked ERC20 contract, over REST and GraphQL:
//! - an answer saying `SYNCED` equals the truth;
//! - an answer saying `SYNCING` shows only records of the truth, with the truth's amounts (no
//!   phantom holding, no negative balance, no invented transfer);
//! - the first request answers `SYNCING`, and every answer reaches `SYNCED` within a bound.
//!
//! Then, one scenario each: fifty concurrent first requests (over two API servers) fetch one
//! wallet history in one pass; a `tokenql index` SIGKILLed during a wallet's history fetch
//! resumes from its stored progress and ends exact (and `tokenql sync` warms scopes ahead of
//! traffic); a reorg in the live range while histories are fetched; a faulty RPC endpoint
//! (timeouts, 429, 503, dropped connections, malformed bodies, provider range limits) with
//! bounded retries; a history that fails for good is marked failed with its reason, answers
//! stay `SYNCING`, and a request after the back-off retries it to completion; a provider's block
//! range limit is learnt from its first refusal and kept, a limit on results costs a wallet
//! three calls, and a rate limit the indexer is told is never exceeded.
//!
//! The JSON-RPC proxy (`proxy/`) counts the indexer's requests, records the `eth_getLogs` calls
//! that name a wallet in a topic, and holds or fails chosen ones, so that in-between states are
//! observed, not raced.

use crate::support::anvil;
use crate::support::common;
use crate::support::proxy;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Child;
use std::time::{Duration, Instant};

use crate::support::indexer::process::{tail, tokenql_cmd, FreshDb};
use crate::support::indexer::{chain_721_owners, wait_synced, Indexer};
use alloy::primitives::Bytes;
use anvil::*;
use common::Backend;
use futures_util::future::join_all;
use proxy::{Fault, Hold, Profile, Proxy, Rates};
use serde_json::json;
use tokenql::entity::scope_sync;

use crate::support::history::*;

async fn every_synced_answer_holds_the_whole_history(backend: Backend) {
    let t0 = Instant::now();
    let chain = Anvil::start(MAIN.traders + 4, &[]).await;
    let mut s = Scene::build(&chain, &MAIN, 0x1157_0e1d).await;
    let head = chain.head().await;
    let t_build = t0.elapsed();

    let app = common::spawn(backend).await;
    let api = Api::of(&app);
    let p = Proxy::start(&chain.url, 17).await;
    let ix = Indexer::start(&app.db, &p.url, |c| {
        configure(c);
        // Four scopes are held at the proxy below; the others share the remaining two.
        c.history_workers = 6;
        // Short slices: long histories yield their worker and go round the queue.
        c.history_slice = Duration::from_millis(300);
    });
    wait_synced(&app.db, &chain, Duration::from_secs(60)).await;
    let start = live_start(&app.db).await;
    assert_eq!(
        start, head,
        "the default live start block is the head at first start"
    );
    assert!(
        scope_rows(&app.db).await.is_empty(),
        "no history is fetched before it is asked for"
    );

    // Live traffic before the first request: history tokens move on, balances from before the
    // start block are spent.
    for _ in 0..2 {
        s.round(&chain, &LIVE, false).await;
    }
    wait_synced(&app.db, &chain, Duration::from_secs(60)).await;
    let truth = Truth::read(&chain).await;

    // The scene has what the scenario claims.
    let [busy0, busy1] = s.busy();
    assert!(
        truth.erc20.len() > 3000,
        "thousands of ERC20 transfers ({})",
        truth.erc20.len()
    );
    let nft_rows: usize = truth.nft_received.values().sum();
    assert!(nft_rows > 700, "hundreds of NFT moves ({nft_rows})");
    assert!(
        truth.erc721_burns > 5 && truth.singles > 50 && truth.batches > 50,
        "ERC721 burns ({}), ERC1155 singles ({}) and batches ({})",
        truth.erc721_burns,
        truth.singles,
        truth.batches
    );
    for w in [&busy0, &busy1] {
        assert!(
            truth.erc20_before(w, start) > 400,
            "{w} is busy before the start block ({})",
            truth.erc20_before(w, start)
        );
    }
    assert_eq!(truth.erc20_sent(&s.receiver), 0, "the receiver never sends");
    assert_eq!(
        truth.nft_sent.get(&s.receiver),
        None,
        "the receiver never sends NFTs"
    );
    assert!(truth.erc20_received(&s.receiver, true) > 50 && truth.nfts.contains_key(&s.receiver));
    assert_eq!(
        truth.erc20_received(&s.sender, false),
        0,
        "the sender receives nothing but its mints"
    );
    assert!(truth.erc20_sent(&s.sender) > 50 && truth.nft_sent.get(&s.sender).copied() > Some(5));
    assert_eq!(truth.want(&Q::WalletTransfers(s.idle.clone())).len(), 0);

    let wallets: Vec<String> = vec![
        busy0.clone(),
        busy1.clone(),
        s.receiver.clone(),
        s.sender.clone(),
        s.idle.clone(),
        s.traders[5].clone(),
        s.traders[13].clone(),
        s.traders[27].clone(),
        s.traders[40].clone(),
        s.traders[53].clone(),
    ];
    let contracts = s.tokens.clone();
    let mut qs = questions(&wallets, &contracts);
    // NFTs of wallets never asked for, in one named collection: exact once the collection is.
    let named = [
        Q::CollectionNfts(s.traders[20].clone(), s.nft.clone()),
        Q::CollectionNfts(s.traders[31].clone(), s.multi.clone()),
    ];
    for via in [Via::Rest, Via::Gql] {
        qs.extend(named.iter().map(|q| (q.clone(), via)));
    }
    // The v2.2 routes over REST: the same scopes decide them.
    for w in &wallets {
        qs.push((Q::V22WalletTransfers(w.clone()), Via::Rest));
        qs.push((Q::Collections(w.clone()), Via::Rest));
        qs.push((Q::Balances(w.clone()), Via::Rest));
    }
    for c in &contracts {
        qs.push((Q::V22TokenTransfers(c.clone()), Via::Rest));
    }
    for c in [&s.nft, &s.multi] {
        qs.push((Q::Owners(c.clone()), Via::Rest));
        qs.push((Q::ContractNfts(c.clone()), Via::Rest));
    }

    // The busiest wallet's history is held at the proxy, with the histories of one ERC20 and
    // of both NFT collections: its in-between state is certain, and partial (the other
    // wallets' histories know some of its moves, not all).
    let held_token = s.tokens[1].clone();
    p.hold(Hold::Any(vec![
        Hold::WalletLogs(busy0.clone()),
        Hold::LogsOf(held_token.clone()),
        Hold::LogsOf(s.nft.clone()),
        Hold::LogsOf(s.multi.clone()),
    ]));

    // First requests: each schedules its scope and answers SYNCING.
    let first = Instant::now();
    let watcher = ScopeErrors::watch(&app.db);
    for w in &wallets {
        assert_eq!(
            first_status(&api, &Q::Nfts(w.clone()), Via::Rest).await,
            "SYNCING",
            "{backend:?}: the first request for {w}'s NFTs"
        );
    }
    for c in &contracts {
        assert_eq!(
            first_status(&api, &Q::ContractTransfers(c.clone()), Via::Rest).await,
            "SYNCING",
            "{backend:?}: the first request for {c}'s transfers"
        );
    }
    for q in &named {
        assert_eq!(
            first_status(&api, q, Via::Rest).await,
            "SYNCING",
            "{backend:?}: the first request naming a collection: {q:?}"
        );
    }
    // Neither wallets nor contracts: the chain, never complete when started late; but from
    // the start block on, no history is needed.
    assert!(
        !ask_check(&api, &Q::AllTransfers, Via::Rest, &truth, "chain").await,
        "{backend:?}: unfiltered transfers of a chain joined late say SYNCING"
    );
    assert!(
        !ask_check(&api, &Q::AllTransfers, Via::Gql, &truth, "chain").await,
        "{backend:?}: unfiltered transfers of a chain joined late say SYNCING (GraphQL)"
    );
    for via in [Via::Rest, Via::Gql] {
        assert!(
            ask_check(&api, &Q::TransfersFrom(start), via, &truth, "live range").await,
            "{backend:?}: transfers from the start block on say SYNCED ({via:?})"
        );
    }
    p.wait_count("held", 1, Duration::from_secs(20)).await;

    // Everything but the held scopes completes, complete wallets exact although contracts
    // their answers show are not; live traffic goes on meanwhile.
    let mut tracker = Tracker::new(qs.clone(), first);
    let ctx = format!("{backend:?}, histories being fetched");
    tracker.poll(&api, &truth, &ctx).await;
    s.round(&chain, &LIVE, false).await;
    wait_synced(&app.db, &chain, Duration::from_secs(60)).await;
    let truth = Truth::read(&chain).await;
    let held_q = |q: &Q| match q {
        Q::Nfts(w)
        | Q::WalletTransfers(w)
        | Q::V22WalletTransfers(w)
        | Q::Collections(w)
        | Q::Balances(w) => *w == busy0,
        Q::ContractTransfers(c) | Q::V22TokenTransfers(c) => *c == held_token,
        Q::CollectionNfts(..) | Q::Owners(_) | Q::ContractNfts(_) => true,
        _ => false,
    };
    tracker
        .until_synced(&api, &truth, &ctx, |q| !held_q(q))
        .await;
    let t_others = first.elapsed();
    // The held scopes are incomplete: SYNCING, with only records of the truth (the wallet's
    // live transfers at least: they are stored and certain).
    let mut partial = Vec::new();
    let held: Vec<(Q, Via)> = qs.iter().filter(|(q, _)| held_q(q)).cloned().collect();
    for (q, via) in &held {
        let a = ask(&api, q, *via).await;
        let what = format!("{backend:?}, held: {}", describe(q, *via));
        assert!(!check(&what, &a, &truth.want(q)), "{what} says SYNCING");
        if matches!(q, Q::WalletTransfers(_) | Q::ContractTransfers(_)) {
            assert!(!a.records.is_empty(), "{what}: shows its stored transfers");
        }
        partial.push(format!("{} of {}", a.records.len(), truth.want(q).len()));
    }
    for (kind, a) in [
        ("wallet", &busy0),
        ("contract", &held_token),
        ("contract", &s.nft),
        ("contract", &s.multi),
    ] {
        let row = scope_row(&app.db, kind, a)
            .await
            .unwrap_or_else(|| panic!("{backend:?}: no scope for the held {kind} {a}"));
        assert_ne!(row.state, "synced", "{row:?}");
    }
    p.release();
    // The held wallet's bound runs from its release.
    tracker.since = Instant::now();
    tracker
        .until_synced(
            &api,
            &truth,
            &format!("{backend:?}, after the release"),
            |_| true,
        )
        .await;
    let t_held = tracker.since.elapsed();

    // Complete scopes stay exact while live traffic moves their history's tokens.
    s.round(&chain, &LIVE, false).await;
    wait_synced(&app.db, &chain, Duration::from_secs(60)).await;
    let truth = Truth::read(&chain).await;
    all_exact(
        &api,
        &qs,
        &truth,
        &format!("{backend:?}, complete, after more live traffic"),
    )
    .await;
    assert!(
        !ask_check(&api, &Q::AllTransfers, Via::Rest, &truth, "chain").await,
        "{backend:?}: the chain scope stays incomplete"
    );

    // The decoded truth agrees with the contracts' own state.
    truth_matches_contracts(&chain, &s, &wallets, &truth).await;

    // The scopes: one per asked wallet (and perhaps the wallets asked about one collection,
    // whose answers the collection completes anyway), complete over [0, start).
    let rows = scope_rows(&app.db).await;
    let wallet_rows: BTreeSet<String> = rows
        .iter()
        .filter(|r| r.scope == "wallet")
        .map(|r| r.address.to_string())
        .collect();
    let asked: BTreeSet<String> = wallets.iter().cloned().collect();
    let extra: BTreeSet<String> = wallet_rows.difference(&asked).cloned().collect();
    assert!(
        wallet_rows.is_superset(&asked)
            && extra.is_subset(&[s.traders[20].clone(), s.traders[31].clone()].into()),
        "{backend:?}: a wallet scope per asked wallet, and no other: {wallet_rows:?}"
    );
    for a in wallets
        .iter()
        .map(|w| ("wallet", w))
        .chain(contracts.iter().map(|c| ("contract", c)))
        .chain([("contract", &s.nft), ("contract", &s.multi)])
    {
        let r = scope_row(&app.db, a.0, a.1)
            .await
            .unwrap_or_else(|| panic!("no scope for {a:?}"));
        assert_eq!(r.chain_id, 1);
        assert_eq!(r.state, "synced", "{r:?}");
        assert_eq!(r.target_block, Some(start as i64), "{r:?}");
        assert_eq!(r.synced_to_block, Some(start as i64 - 1), "{r:?}");
    }
    let busy_row = scope_row(&app.db, "wallet", &busy0).await.expect("row");
    assert!(
        busy_row.logs > 400,
        "the busiest wallet's history is hundreds of logs: {busy_row:?}"
    );

    let calls: Vec<String> = wallets
        .iter()
        .map(|w| format!("{}", p.count(&format!("eth_getLogs~{w}"))))
        .collect();
    let errors = watcher.stop().await;
    eprintln!(
        "history_on_demand {backend:?}: {} blocks of history, {} ERC20 transfers, {nft_rows} NFT \
         rows; built in {:.1}s; {} answers SYNCED within {:.1}s of the first request but the \
         held scopes', which took {:.1}s from their release (held, they showed {partial:?} \
         records of the truth's); {} polls; wallet eth_getLogs calls \
         {calls:?}; failed attempts seen: {errors:?}; total {:.1}s",
        start,
        truth.erc20.len(),
        t_build.as_secs_f64(),
        qs.len(),
        t_others.as_secs_f64(),
        t_held.as_secs_f64(),
        tracker.polls,
        t0.elapsed().as_secs_f64()
    );
    // A fault-free endpoint: no history attempt fails (a failure here, e.g. a duplicate key in
    // the derived holdings, means concurrent writers raced on the same rows).
    assert!(
        errors.is_empty(),
        "{backend:?}: history attempts failed with a fault-free endpoint: {errors:?}"
    );
    ix.stop().await.expect("the indexer ends cleanly");
    app.cleanup().await;
}

// ---------------------------------------------------------------------------------------------
// (a) Fifty concurrent first requests, over two API servers: one history fetch

async fn fifty_first_requests_fetch_one_history(backend: Backend) {
    let chain = Anvil::start(SMALL.traders + 4, &[]).await;
    let s = Scene::build(&chain, &SMALL, 0x50_f1_57).await;
    let app = common::spawn(backend).await;
    let p = Proxy::start(&chain.url, 23).await;
    let ix = Indexer::start(&app.db, &p.url, configure);
    wait_synced(&app.db, &chain, Duration::from_secs(60)).await;
    let start = live_start(&app.db).await;
    let truth = Truth::read(&chain).await;
    let other = serve(&app.db, &app.key).await;
    let apis = [Api::of(&app), other.api.clone()];
    let w = s.busy()[0].clone();
    p.hold(Hold::WalletLogs(w.clone()));

    let kinds = [
        (Q::Nfts(w.clone()), Via::Rest),
        (Q::Nfts(w.clone()), Via::Gql),
        (Q::WalletTransfers(w.clone()), Via::Rest),
        (Q::WalletTransfers(w.clone()), Via::Gql),
    ];
    let answers = join_all((0..50).map(|i| {
        let (api, (q, via)) = (&apis[i % 2], &kinds[(i / 2) % 4]);
        async move { first_status(api, q, *via).await }
    }))
    .await;
    assert!(
        answers.iter().all(|a| a == "SYNCING"),
        "{backend:?}: fifty first requests answer SYNCING: {answers:?}"
    );
    let rows = scope_rows(&app.db).await;
    assert_eq!(rows.len(), 1, "{backend:?}: one scope row: {rows:?}");
    assert_eq!(
        (rows[0].scope.as_str(), rows[0].address.to_string().as_str()),
        ("wallet", w.as_str())
    );
    p.wait_count("held", 1, Duration::from_secs(20)).await;
    // Whatever else the fifty requests started would be waiting at the proxy by now too.
    tokio::time::sleep(Duration::from_millis(500)).await;
    p.release();
    let q = Q::Nfts(w.clone());
    wait_synced_answer(
        &apis[0],
        &q,
        Via::Rest,
        &truth,
        SYNC_BOUND,
        &format!("{backend:?}"),
    )
    .await;
    let calls = p.wallet_calls(&w);
    // More requests for a complete wallet fetch nothing.
    join_all((0..10).map(|i| {
        let (api, (q, via)) = (&apis[i % 2], &kinds[i % 4]);
        async move { first_status(api, q, *via).await }
    }))
    .await;
    all_exact(
        &apis[1],
        &kinds,
        &truth,
        &format!("{backend:?}, after one fetch"),
    )
    .await;
    assert_eq!(
        p.wallet_calls(&w),
        calls,
        "a complete wallet is not fetched again"
    );
    let row = scope_row(&app.db, "wallet", &w).await.expect("row");
    assert_eq!(row.target_block, Some(start as i64), "{row:?}");
    assert_one_pass(&format!("{backend:?}: fifty first requests"), &calls, start);
    eprintln!(
        "history_on_demand {backend:?}: fifty first requests, one fetch: {} eth_getLogs naming \
         the wallet over [0, {start})",
        calls.len()
    );
    other.stop().await;
    ix.stop().await.expect("the indexer ends cleanly");
    app.cleanup().await;
}

// ---------------------------------------------------------------------------------------------
// (b) SIGKILL during a wallet's history fetch; restart; `tokenql sync`

/// A running `tokenql index`, SIGKILLed when dropped.
struct IndexProcess(Child);

impl IndexProcess {
    fn start(db: &FreshDb, rpc: &str, log: &Path) -> IndexProcess {
        let rpc = format!("eth={rpc}");
        let child = tokenql_cmd(
            &db.url,
            log,
            &["index", "--rpc", &rpc, "--max-log-range", "40"],
        )
        .spawn()
        .expect("start tokenql index");
        IndexProcess(child)
    }

    fn assert_running(&mut self, log: &Path) {
        if let Ok(Some(status)) = self.0.try_wait() {
            panic!("tokenql index exited ({status}):\n{}", tail(log));
        }
    }

    /// SIGKILL, and reap.
    fn kill(mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Drop for IndexProcess {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

async fn killed_during_a_wallet_history_resumes_exactly(backend: Backend) {
    let chain = Anvil::start(SMALL.traders + 4, &[]).await;
    let s = Scene::build(&chain, &SMALL, 0x0c_4a_5e).await;
    let fresh = FreshDb::create(backend).await;
    let log = std::env::temp_dir().join(format!("{}.log", fresh.name));
    let status = tokenql_cmd(&fresh.url, &log, &["migrate"])
        .status()
        .expect("tokenql migrate");
    assert!(
        status.success(),
        "tokenql migrate: {status}\n{}",
        tail(&log)
    );
    let db = tokenql::store::database::connect(&fresh.url, 3)
        .await
        .expect("connect");
    let (_, key) = tokenql::keys::create(&db, "history").await.expect("key");
    let server = serve(&db, &key).await;
    let api = server.api.clone();
    let p = Proxy::start(&chain.url, 29).await;
    p.set_max_log_span(Some(40));
    let mut ixp = IndexProcess::start(&fresh, &p.url, &log);
    wait_synced(&db, &chain, Duration::from_secs(60)).await;
    ixp.assert_running(&log);
    let start = live_start(&db).await;
    assert!(start > 300, "a history of many ranges ({start} blocks)");
    let truth = Truth::read(&chain).await;

    // The wallet's history is fetched up to the middle, then held there.
    let w = s.busy()[0].clone();
    let cut = start / 2;
    p.hold(Hold::WalletLogsFrom(w.clone(), cut));
    let q = Q::Nfts(w.clone());
    assert_eq!(
        first_status(&api, &q, Via::Rest).await,
        "SYNCING",
        "first request"
    );
    p.wait_count("held", 1, Duration::from_secs(30)).await;
    let row = wait_scope(&db, "wallet", &w, Duration::from_secs(20), |r| {
        r.synced_to_block.is_some_and(|b| b + 1 >= cut as i64)
    })
    .await;
    assert_eq!(
        row.state, "syncing",
        "{backend:?}: the fetch is under way: {row:?}"
    );
    let progress = row.synced_to_block.expect("progress") as u64;
    // Partial: SYNCING, true records only.
    for via in [Via::Rest, Via::Gql] {
        for q in [Q::Nfts(w.clone()), Q::WalletTransfers(w.clone())] {
            assert!(
                !ask_check(&api, &q, via, &truth, &format!("{backend:?}, half fetched")).await,
                "{backend:?}: half a history says SYNCING"
            );
        }
    }
    let before = p.wallet_calls(&w).len();
    ixp.assert_running(&log);
    ixp.kill();
    p.release();
    let row = scope_row(&db, "wallet", &w).await.expect("row");
    assert_ne!(
        row.state, "synced",
        "{backend:?}: killed mid-fetch: {row:?}"
    );
    assert!(
        !ask_check(&api, &q, Via::Rest, &truth, &format!("{backend:?}, killed")).await,
        "{backend:?}: an interrupted history says SYNCING"
    );

    // Restarted: the fetch resumes from its stored progress and completes.
    let restarted = Instant::now();
    let mut ixp = IndexProcess::start(&fresh, &p.url, &log);
    for via in [Via::Rest, Via::Gql] {
        for q in [Q::Nfts(w.clone()), Q::WalletTransfers(w.clone())] {
            wait_synced_answer(
                &api,
                &q,
                via,
                &truth,
                SYNC_BOUND,
                &format!("{backend:?}, restarted"),
            )
            .await;
        }
    }
    let t_resume = restarted.elapsed();
    ixp.assert_running(&log);
    let calls = p.wallet_calls(&w);
    let after = &calls[before..];
    assert!(!after.is_empty(), "the restarted indexer fetched the rest");
    assert!(
        after.iter().all(|c| c.from.is_some_and(|f| f > progress)),
        "{backend:?}: the restarted fetch resumes after its stored progress (block {progress}), \
         it asked for {after:?}"
    );
    let row = scope_row(&db, "wallet", &w).await.expect("row");
    assert_eq!(
        (row.state.as_str(), row.synced_to_block),
        ("synced", Some(start as i64 - 1))
    );

    // `tokenql sync` warms scopes ahead of traffic: complete before any request.
    let (w2, c2) = (s.traders[7].clone(), s.tokens[1].clone());
    for (kind, a) in [("wallet", &w2), ("contract", &c2)] {
        let mut cmd = tokenql_cmd(&fresh.url, &log, &["sync", kind, "--chain", "eth", a]);
        let out = tokio::task::spawn_blocking(move || cmd.status().expect("tokenql sync"))
            .await
            .expect("tokenql sync");
        assert!(
            out.success(),
            "tokenql sync {kind} {a}: {out}\n{}",
            tail(&log)
        );
        wait_scope(&db, kind, a, SYNC_BOUND, |r| r.state == "synced").await;
    }
    for via in [Via::Rest, Via::Gql] {
        for q in [
            Q::Nfts(w2.clone()),
            Q::WalletTransfers(w2.clone()),
            Q::ContractTransfers(c2.clone()),
        ] {
            assert!(
                ask_check(&api, &q, via, &truth, &format!("{backend:?}, warmed")).await,
                "{backend:?}: a scope warmed by `tokenql sync` answers SYNCED on its first \
                 request: {}",
                describe(&q, via)
            );
        }
    }
    eprintln!(
        "history_on_demand {backend:?}: killed with the wallet's history stored to block \
         {progress} of {start}; SYNCED {:.1}s after the restart, {} calls after it",
        t_resume.as_secs_f64(),
        after.len()
    );
    ixp.kill();
    server.stop().await;
    let _ = db.close().await;
    fresh.drop_db().await;
    let _ = std::fs::remove_file(&log);
}

// ---------------------------------------------------------------------------------------------
// (c) A reorg in the live range while histories are fetched

async fn a_reorg_while_histories_are_fetched(backend: Backend) {
    let chain = Anvil::start(SMALL.traders + 4, &[]).await;
    let s = Scene::build(&chain, &SMALL, 0x0004_e0e9).await;
    let app = common::spawn(backend).await;
    let api = Api::of(&app);
    let p = Proxy::start(&chain.url, 31).await;
    let ix = Indexer::start(&app.db, &p.url, configure);
    wait_synced(&app.db, &chain, Duration::from_secs(60)).await;
    let start = live_start(&app.db).await;

    // Live blocks of one transaction each, among wallets a, b and c.
    let (a, b, c) = (
        s.traders[2].clone(),
        s.traders[3].clone(),
        s.traders[4].clone(),
    );
    let (tok, nft, multi) = (s.tokens[0].clone(), s.nft.clone(), s.multi.clone());
    let id = s.held_by(&a);
    let erc20 = |to: &str, v: u64| {
        calldata(transferCall {
            to: addr(to),
            amount: u(v),
        })
    };
    let single = |from: &str, to: &str, id: u64, v: u64| {
        calldata(safeTransferFromCall {
            from: addr(from),
            to: addr(to),
            id: u(id),
            amount: u(v),
            data: Bytes::new(),
        })
    };
    s.block_with(&chain, &a, &tok, erc20(&b, 11)).await;
    s.block_with(&chain, &b, &multi, single(&b, &a, 2, 3)).await;
    // The six blocks the reorg replaces.
    s.block_with(&chain, &a, &tok, erc20(&b, 12)).await;
    let move_721 = calldata(transferFromCall {
        from: addr(&a),
        to: addr(&b),
        id: u(id),
    });
    s.block_with(&chain, &a, &nft, move_721).await;
    s.block_with(&chain, &a, &multi, single(&a, &b, 1, 4)).await;
    s.block_with(&chain, &b, &tok, erc20(&a, 13)).await;
    s.block_with(&chain, &c, &tok, erc20(&a, 14)).await;
    s.block_with(&chain, &a, &multi, single(&a, &c, 3, 5)).await;
    wait_synced(&app.db, &chain, Duration::from_secs(60)).await;
    assert!(chain.head().await >= start + 8, "eight live blocks");

    // Histories are asked for and held at the proxy (the live follower is not).
    p.hold(Hold::History);
    let wallets = vec![a.clone(), b.clone(), c.clone()];
    let contracts = vec![tok.clone()];
    let qs = questions(&wallets, &contracts);
    let first = Instant::now();
    for (q, via) in &qs {
        if *via == Via::Rest && !matches!(q, Q::WalletTransfers(_)) {
            assert_eq!(
                first_status(&api, q, *via).await,
                "SYNCING",
                "first request {q:?}"
            );
        }
    }
    p.wait_count("held", 1, Duration::from_secs(20)).await;

    // The reorg: the last six blocks are replaced; the ERC721 goes to c instead of b.
    let tx = |from: &str, to: &str, data: Vec<u8>| json!({"from": from, "to": to, "gas": "0x100000", "data": hex(&data)});
    let to_c = calldata(transferFromCall {
        from: addr(&a),
        to: addr(&c),
        id: u(id),
    });
    chain
        .reorg(
            6,
            json!([[tx(&a, &nft, to_c), 0], [tx(&a, &tok, erc20(&c, 15)), 2]]),
        )
        .await;
    wait_synced(&app.db, &chain, Duration::from_secs(60)).await;
    let truth = Truth::read(&chain).await;
    assert_eq!(
        chain_721_owners(&chain, &nft, &[id].into()).await.get(&id),
        Some(&c),
        "the reorg gave ERC721 {id} to c"
    );
    assert!(truth
        .want(&Q::Nfts(c.clone()))
        .contains_key(&format!("{nft}/{id}")));
    // While held: SYNCING, true records only (of the chain after the reorg).
    let mut tracker = Tracker::new(qs.clone(), first);
    let still = tracker
        .poll(&api, &truth, &format!("{backend:?}, held, after the reorg"))
        .await;
    assert_eq!(
        still.len(),
        qs.len(),
        "{backend:?}: held histories say SYNCING: {still:?}"
    );
    p.release();
    tracker
        .until_synced(
            &api,
            &truth,
            &format!("{backend:?}, after the reorg"),
            |_| true,
        )
        .await;

    // A second reorg, of complete scopes.
    s.block_with(&chain, &a, &tok, erc20(&b, 16)).await;
    s.block_with(&chain, &b, &multi, single(&b, &a, 4, 2)).await;
    s.block_with(
        &chain,
        &c,
        &nft,
        calldata(transferFromCall {
            from: addr(&c),
            to: addr(&b),
            id: u(id),
        }),
    )
    .await;
    wait_synced(&app.db, &chain, Duration::from_secs(60)).await;
    chain
        .reorg(3, json!([[tx(&a, &tok, erc20(&c, 17)), 1]]))
        .await;
    wait_synced(&app.db, &chain, Duration::from_secs(60)).await;
    let truth = Truth::read(&chain).await;
    assert!(truth
        .want(&Q::Nfts(c.clone()))
        .contains_key(&format!("{nft}/{id}")));
    all_exact(
        &api,
        &qs,
        &truth,
        &format!("{backend:?}, after a reorg of complete scopes"),
    )
    .await;
    ix.stop().await.expect("the indexer ends cleanly");
    app.cleanup().await;
}

// ---------------------------------------------------------------------------------------------
// (d) A faulty endpoint: exact, retries bounded

async fn faults_leave_histories_exact(backend: Backend) {
    const SPAN: u64 = 50;
    let chain = Anvil::start(SMALL.traders + 4, &[]).await;
    let mut s = Scene::build(&chain, &SMALL, 0xfa_17).await;
    let app = common::spawn(backend).await;
    let api = Api::of(&app);
    let p = Proxy::start(&chain.url, 0xbad_5eed).await;
    p.set_max_log_span(Some(SPAN));
    let ix = Indexer::start(&app.db, &p.url, |c| {
        configure(c);
        c.request_timeout = Duration::from_millis(500);
        c.history_attempts = 50;
        c.history_retry_after = Duration::from_millis(300);
    });
    wait_synced(&app.db, &chain, Duration::from_secs(60)).await;
    let start = live_start(&app.db).await;
    assert!(
        start > 4 * SPAN,
        "the history spans several provider ranges ({start})"
    );
    let truth = Truth::read(&chain).await;

    // References without faults (behind the same range limit): one wallet, one contract.
    let (w0, c0) = (s.traders[9].clone(), s.tokens[2].clone());
    let refs = [
        (Q::Nfts(w0.clone()), Via::Rest),
        (Q::ContractTransfers(c0.clone()), Via::Rest),
    ];
    for (q, via) in &refs {
        wait_synced_answer(
            &api,
            q,
            *via,
            &truth,
            SYNC_BOUND,
            &format!("{backend:?}, fault-free"),
        )
        .await;
    }
    let ref_wallet = p.count(&format!("eth_getLogs~{w0}"));
    let ref_contract = p.count(&format!("eth_getLogs@{c0}"));
    assert!(ref_wallet > 0 && ref_contract > 0, "{:?}", p.counts());

    // Now every kind of fault, then at random.
    p.set_delay(Duration::from_millis(700));
    p.script([
        Fault::Drop,
        Fault::Unavailable,
        Fault::Malformed,
        Fault::TooManyRequests,
        Fault::Delay(Duration::from_millis(700)),
        Fault::Malformed,
    ]);
    p.set_rates(Rates {
        delay: 20,
        too_many_requests: 50,
        unavailable: 50,
        drop: 50,
        malformed: 50,
    });
    let mut wallets = vec![
        s.traders[0].clone(),
        s.traders[1].clone(),
        s.receiver.clone(),
        s.sender.clone(),
    ];
    wallets.push(s.traders[11].clone());
    let contracts = vec![s.tokens[0].clone(), s.tokens[1].clone()];
    let qs = questions(&wallets, &contracts);
    truth_matches_contracts(&chain, &s, &wallets, &truth).await;
    let first = Instant::now();
    let mut tracker = Tracker::new(qs.clone(), first);
    let ctx = format!("{backend:?}, through faults");
    tracker.until_synced(&api, &truth, &ctx, |_| true).await;
    let t_synced = first.elapsed();
    // Live traffic through the faults, then everything again.
    s.round(&chain, &LIVE, false).await;
    wait_synced(&app.db, &chain, Duration::from_secs(60)).await;
    let truth = Truth::read(&chain).await;
    all_exact(&api, &qs, &truth, &format!("{ctx}, after live traffic")).await;

    let counts = p.counts();
    for k in [
        "fault:delay",
        "fault:429",
        "fault:503",
        "fault:drop",
        "fault:malformed",
        "span_refused",
    ] {
        assert!(
            counts.get(k).copied().unwrap_or(0) > 0,
            "the proxy injected {k}: {counts:?}"
        );
    }
    let mut seen = Vec::new();
    for w in &wallets {
        let n = p.count(&format!("eth_getLogs~{w}"));
        seen.push(n);
        assert!(
            n <= 3 * ref_wallet + 20,
            "{backend:?}: bounded retries for {w}'s history: {n} eth_getLogs, {ref_wallet} \
             without faults"
        );
    }
    for c in &contracts {
        let n = p.count(&format!("eth_getLogs@{c}"));
        seen.push(n);
        assert!(
            n <= 3 * ref_contract + 20,
            "{backend:?}: bounded retries for {c}'s history: {n} eth_getLogs, {ref_contract} \
             without faults"
        );
    }
    let failed: Vec<scope_sync::Model> = scope_rows(&app.db)
        .await
        .into_iter()
        .filter(|r| r.state != "synced")
        .collect();
    assert!(
        failed.is_empty(),
        "{backend:?}: every scope complete: {failed:?}"
    );
    eprintln!(
        "history_on_demand {backend:?}: through faults, SYNCED {:.1}s after the first request; \
         eth_getLogs per scope {seen:?} (fault-free: wallet {ref_wallet}, contract \
         {ref_contract}); {} span refusals",
        t_synced.as_secs_f64(),
        counts.get("span_refused").copied().unwrap_or(0)
    );
    ix.stop().await.expect("the indexer ends cleanly");
    app.cleanup().await;
}

// ---------------------------------------------------------------------------------------------
// (e) A history that fails for good: marked failed, SYNCING, retried after the back-off

async fn a_failed_history_is_retried_after_the_backoff(backend: Backend) {
    const ATTEMPTS: u32 = 3;
    const BACKOFF: Duration = Duration::from_secs(6);
    const RPC_TRIES: u32 = 4;
    let chain = Anvil::start(SMALL.traders + 4, &[]).await;
    let s = Scene::build(&chain, &SMALL, 0xe_0e_0e).await;
    let app = common::spawn(backend).await;
    let api = Api::of(&app);
    let p = Proxy::start(&chain.url, 37).await;
    let ix = Indexer::start(&app.db, &p.url, |c| {
        configure(c);
        c.request_timeout = Duration::from_secs(2);
        c.history_attempts = ATTEMPTS;
        c.history_retry_after = BACKOFF;
        // A short RPC retry budget: the transient failure exhausts its attempts quickly.
        c.retry.max_attempts = RPC_TRIES;
    });
    wait_synced(&app.db, &chain, Duration::from_secs(60)).await;
    let truth = Truth::read(&chain).await;

    // w1: the endpoint answers its history with a JSON-RPC error (permanent); w2: with HTTP 503
    // (transient, but without end); w3: healthy.
    let (w1, w2, w3) = (
        s.traders[0].clone(),
        s.traders[1].clone(),
        s.traders[2].clone(),
    );
    p.fail(Hold::WalletLogs(w1.clone()));
    p.fail_unavailable(Hold::WalletLogs(w2.clone()));
    let first = Instant::now();
    for w in [&w1, &w2, &w3] {
        assert_eq!(
            first_status(&api, &Q::Nfts(w.clone()), Via::Rest).await,
            "SYNCING",
            "first request for {w}"
        );
    }
    let mut failed = Vec::new();
    for (w, reason) in [(&w1, "history unavailable"), (&w2, "503")] {
        let r = wait_scope(&app.db, "wallet", w, SYNC_BOUND, |r| r.state == "failed").await;
        assert!(
            r.error.as_deref().is_some_and(|e| e.contains(reason)),
            "{backend:?}: a failed scope keeps its reason ({reason}): {r:?}"
        );
        assert!(
            r.retry_at
                .is_some_and(|t| t >= r.updated_at + BACKOFF.as_millis() as i64 - 1000),
            "{backend:?}: a retry time after the back-off: {r:?}"
        );
        assert!(
            (1..=ATTEMPTS as i32).contains(&r.attempts),
            "{backend:?}: at most {ATTEMPTS} attempts recorded: {r:?}"
        );
        failed.push(r);
    }
    let t_failed = first.elapsed();
    // Bounded: a permanent error is not retried; HTTP 503 is, under the RPC client's budget,
    // for each of the scope's attempts.
    let (n1, n2) = (
        p.count(&format!("eth_getLogs~{w1}")),
        p.count(&format!("eth_getLogs~{w2}")),
    );
    assert!(
        n1 <= ATTEMPTS as u64 * 4,
        "{backend:?}: {n1} eth_getLogs for a history answered by a JSON-RPC error ({ATTEMPTS} \
         attempts)"
    );
    assert!(
        n2 <= (ATTEMPTS * RPC_TRIES) as u64 * 4,
        "{backend:?}: {n2} eth_getLogs for a history answered by HTTP 503 ({ATTEMPTS} attempts \
         of {RPC_TRIES} tries)"
    );

    // The endpoint heals. During the back-off, every answer depending on a failed scope says
    // SYNCING with true records only, and requests do not retry it.
    p.heal();
    let before = (
        p.count(&format!("eth_getLogs~{w1}")),
        p.count(&format!("eth_getLogs~{w2}")),
    );
    let first_retry = failed
        .iter()
        .filter_map(|r| r.retry_at)
        .min()
        .expect("retry_at");
    let last_retry = failed
        .iter()
        .filter_map(|r| r.retry_at)
        .max()
        .expect("retry_at");
    let mut rounds = 0;
    while now_ms() < first_retry - 2000 {
        for w in [&w1, &w2] {
            for via in [Via::Rest, Via::Gql] {
                for q in [Q::Nfts(w.clone()), Q::WalletTransfers(w.clone())] {
                    assert!(
                        !ask_check(&api, &q, via, &truth, &format!("{backend:?}, failed")).await,
                        "{backend:?}: a failed scope answers SYNCING: {}",
                        describe(&q, via)
                    );
                }
            }
        }
        assert!(
            now_ms() < first_retry,
            "the checks of the back-off ran past it: make BACKOFF longer"
        );
        for w in [&w1, &w2] {
            let r = scope_row(&app.db, "wallet", w).await.expect("row");
            assert_eq!(
                r.state, "failed",
                "{backend:?}: no retry before the back-off ends: {r:?}"
            );
        }
        rounds += 1;
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(
        rounds > 0,
        "requests were made during the back-off ({t_failed:?} to fail)"
    );
    assert_eq!(
        (
            p.count(&format!("eth_getLogs~{w1}")),
            p.count(&format!("eth_getLogs~{w2}"))
        ),
        before,
        "{backend:?}: no history call for a failed scope before its back-off ends"
    );
    // A healthy wallet completed meanwhile.
    wait_synced_answer(
        &api,
        &Q::Nfts(w3.clone()),
        Via::Rest,
        &truth,
        SYNC_BOUND,
        "healthy",
    )
    .await;

    // After the back-off, a request retries each, and it completes.
    while now_ms() <= last_retry + 50 {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let retried = Instant::now();
    for w in [&w1, &w2] {
        for via in [Via::Rest, Via::Gql] {
            for q in [Q::Nfts(w.clone()), Q::WalletTransfers(w.clone())] {
                wait_synced_answer(
                    &api,
                    &q,
                    via,
                    &truth,
                    SYNC_BOUND,
                    &format!("{backend:?}, retried"),
                )
                .await;
            }
        }
        let r = scope_row(&app.db, "wallet", w).await.expect("row");
        assert_eq!(r.state, "synced", "{r:?}");
    }
    assert!(
        p.count(&format!("eth_getLogs~{w1}")) > before.0
            && p.count(&format!("eth_getLogs~{w2}")) > before.1,
        "the retries fetched"
    );
    eprintln!(
        "history_on_demand {backend:?}: failed ({:?} / {:?}) after {n1} / {n2} calls, in \
         {:.1}s; {rounds} rounds of requests during the back-off; retried after it, SYNCED in \
         {:.1}s",
        failed[0].error,
        failed[1].error,
        t_failed.as_secs_f64(),
        retried.elapsed().as_secs_f64()
    );
    ix.stop().await.expect("the indexer ends cleanly");
    app.cleanup().await;
}

// ---------------------------------------------------------------------------------------------
// (f) Many histories at once, writing the same tokens' holdings, beside the live follower

async fn concurrent_histories_of_shared_tokens_stay_exact(backend: Backend) {
    let chain = Anvil::start(SMALL.traders + 4, &[]).await;
    let mut s = Scene::build(&chain, &SMALL, 0xc0_cc_0e).await;
    let app = common::spawn(backend).await;
    let api = Api::of(&app);
    let p = Proxy::start(&chain.url, 41).await;
    // Small ranges: every history is many write transactions, each recomputing the holdings
    // of ERC1155 ids that every wallet moves.
    p.set_max_log_span(Some(20));
    let ix = Indexer::start(&app.db, &p.url, |c| {
        configure(c);
        c.history_workers = 8;
    });
    wait_synced(&app.db, &chain, Duration::from_secs(60)).await;
    let mut wallets: Vec<String> = s.traders[..10].to_vec();
    wallets.push(s.receiver.clone());
    wallets.push(s.sender.clone());
    let first = Instant::now();
    let watcher = ScopeErrors::watch(&app.db);
    for w in &wallets {
        assert_eq!(
            first_status(&api, &Q::Nfts(w.clone()), Via::Rest).await,
            "SYNCING",
            "{backend:?}: first request for {w}"
        );
    }
    // Live traffic while they are fetched.
    s.round(&chain, &LIVE, false).await;
    wait_synced(&app.db, &chain, Duration::from_secs(60)).await;
    let truth = Truth::read(&chain).await;
    let mut qs = Vec::new();
    for via in [Via::Rest, Via::Gql] {
        qs.extend(wallets.iter().map(|w| (Q::Nfts(w.clone()), via)));
    }
    let mut tracker = Tracker::new(qs.clone(), first);
    tracker
        .until_synced(
            &api,
            &truth,
            &format!("{backend:?}, concurrent histories"),
            |_| true,
        )
        .await;
    let t_synced = first.elapsed();
    s.round(&chain, &LIVE, false).await;
    wait_synced(&app.db, &chain, Duration::from_secs(60)).await;
    let truth = Truth::read(&chain).await;
    truth_matches_contracts(&chain, &s, &wallets, &truth).await;
    all_exact(
        &api,
        &qs,
        &truth,
        &format!("{backend:?}, concurrent histories, after live traffic"),
    )
    .await;
    let writes: u64 = wallets
        .iter()
        .map(|w| p.count(&format!("eth_getLogs~{w}")))
        .sum();
    let errors = watcher.stop().await;
    eprintln!(
        "history_on_demand {backend:?}: {} concurrent wallet histories ({writes} eth_getLogs) \
         SYNCED in {:.1}s",
        wallets.len(),
        t_synced.as_secs_f64()
    );
    assert!(
        errors.is_empty(),
        "{backend:?}: history attempts failed with a fault-free endpoint (concurrent writers \
         raced on the same rows?): {errors:?}"
    );
    ix.stop().await.expect("the indexer ends cleanly");
    app.cleanup().await;
}

// ---------------------------------------------------------------------------------------------
// (h) A provider's limits: learnt from its refusals, kept, and met with the fewest calls

/// The `eth_getLogs` calls naming `wallet` (in a topic), and those refused for `reason`.
fn wallet_calls(p: &Proxy, wallet: &str, reason: &str) -> (u64, u64) {
    (
        p.count(&format!("eth_getLogs~{wallet}")),
        p.count(&format!("refused:{reason}~{wallet}")),
    )
}

/// The transfer logs of `contract` in `[0, start)`, as anvil has them.
async fn contract_logs(chain: &Anvil, contract: &str, start: u64) -> u64 {
    let logs = chain
        .rpc(
            "eth_getLogs",
            json!([{"fromBlock": "0x0", "toBlock": format!("{:#x}", start - 1),
                    "address": contract}]),
        )
        .await;
    logs.as_array().map_or(0, |l| l.len() as u64)
}

async fn provider_limits_are_learnt_and_met(backend: Backend) {
    let chain = Anvil::start(SMALL.traders + 4, &[]).await;
    let s = Scene::build(&chain, &SMALL, 0x9_0f11e).await;
    let app = common::spawn(backend).await;
    let api = Api::of(&app);
    let p = Proxy::start(&chain.url, 0x9_0f11e).await;
    const RANGE: u64 = 40;
    p.set_profile(Profile {
        max_block_range: Some(RANGE),
        ..Profile::default()
    });
    let ix = Indexer::start(&app.db, &p.url, configure);
    wait_synced(&app.db, &chain, Duration::from_secs(60)).await;
    let start = live_start(&app.db).await;
    let truth = Truth::read(&chain).await;
    let ctx = |what: &str| format!("{backend:?}, {what}");
    let synced = |q: Q, what: &'static str| {
        let (api, truth) = (&api, &truth);
        async move { wait_synced_answer(api, &q, Via::Rest, truth, SYNC_BOUND, &ctx(what)).await }
    };

    // A block range limit the indexer is not told: the first call (the whole history) is
    // refused with the limit named, and every later range is of that limit.
    let w = s.traders[0].clone();
    synced(
        Q::WalletTransfers(w.clone()),
        "range limit named by a refusal",
    )
    .await;
    let (calls, refused) = wallet_calls(&p, &w, "range");
    assert!(
        (1..=3).contains(&refused),
        "{calls} calls, {refused} refused"
    );
    assert_eq!(
        calls - refused,
        3 * start.div_ceil(RANGE),
        "three filters per {RANGE}-block range over [0, {start})"
    );

    // A provider that limits only results: a wallet's whole history in one call per filter;
    // a contract with more logs than one answer holds, in ranges the provider suggests.
    const RESULTS: usize = 50;
    p.set_profile(Profile {
        max_results: Some(RESULTS),
        ..Profile::default()
    });
    ix.stop().await.expect("the indexer ends cleanly");
    let ix = Indexer::start(&app.db, &p.url, configure);
    wait_synced(&app.db, &chain, Duration::from_secs(60)).await;
    let w = s.receiver.clone();
    synced(Q::Nfts(w.clone()), "results limit, a wallet").await;
    assert_eq!(
        wallet_calls(&p, &w, "results"),
        (3, 0),
        "the whole history at once"
    );
    let c = s.tokens[0].clone();
    let logs = contract_logs(&chain, &c, start).await;
    assert!(
        logs > 2 * RESULTS as u64,
        "{c} has {logs} logs before {start}"
    );
    synced(Q::ContractTransfers(c.clone()), "results limit, a contract").await;
    let calls = p.count(&format!("eth_getLogs@{c}"));
    let refused = p.count(&format!("refused:results@{c}"));
    eprintln!("history_on_demand {backend:?}: {c}: {logs} logs, {calls} calls, {refused} refused");
    let fewest = logs.div_ceil(RESULTS as u64);
    assert!(refused > 0, "{c}: the whole history was refused first");
    assert!(
        calls - refused <= 3 * fewest + 1 && refused <= calls - refused + 1,
        "{c}: {calls} calls, {refused} refused, for {logs} logs ({fewest} calls at the fewest)"
    );

    // A rate limit of 20 calls a second (and 20-block ranges: many calls). Not told, the
    // indexer is refused and pauses as `Retry-After` says; told 18, it is never refused.
    let rate = |retry_after| Profile {
        max_block_range: Some(20),
        max_rps: Some(20),
        retry_after,
        ..Profile::default()
    };
    p.set_profile(rate(true));
    let w = s.traders[2].clone();
    synced(Q::WalletTransfers(w.clone()), "rate limit, not told").await;
    ix.stop().await.expect("the indexer ends cleanly");
    p.set_profile(rate(false));
    let ix = Indexer::start(&app.db, &p.url, |c| {
        configure(c);
        c.provider.max_rps = Some(18);
        c.provider.max_log_range = Some(20);
    });
    wait_synced(&app.db, &chain, Duration::from_secs(60)).await;
    let before = p.count("refused:rate");
    let w = s.traders[3].clone();
    synced(Q::WalletTransfers(w.clone()), "rate limit, told").await;
    let (calls, _) = wallet_calls(&p, &w, "rate");
    assert_eq!(
        calls,
        3 * start.div_ceil(20),
        "{w}: no call refused or repeated"
    );
    assert_eq!(
        p.count("refused:rate"),
        before,
        "paced under the provider's rate: {:?}",
        p.counts()
    );
    ix.stop().await.expect("the indexer ends cleanly");
    app.cleanup().await;
}

crate::backend_tests!(
    provider_limits_are_learnt_and_met,
    every_synced_answer_holds_the_whole_history,
    fifty_first_requests_fetch_one_history,
    killed_during_a_wallet_history_resumes_exactly,
    a_reorg_while_histories_are_fetched,
    faults_leave_histories_exact,
    a_failed_history_is_retried_after_the_backoff,
    concurrent_histories_of_shared_tokens_stay_exact
);
