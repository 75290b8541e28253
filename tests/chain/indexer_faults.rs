//! The indexer behind a misbehaving RPC endpoint, on every backend: a fault-injecting proxy
//! (`proxy/`) delays answers past the client's timeout, answers 429 and 503, drops
//! connections, sends malformed JSON and refuses `eth_getLogs` spans wider than a provider
//! limit; later it goes fully down and comes back. The stored data must still equal the
//! chain's own truth, and the retries must stay bounded against a fault-free run.

use crate::support::anvil;
use crate::support::common;
use crate::support::proxy;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use crate::support::indexer::*;
use alloy::primitives::Bytes;
use anvil::*;
use common::Backend;
use proxy::{Fault, Mode, Proxy, Rates};

/// The indexer's per-request timeout; [`DELAY`] is longer.
const TIMEOUT: Duration = Duration::from_millis(500);
const DELAY: Duration = Duration::from_millis(700);
/// The proxy refuses `eth_getLogs` spanning more blocks than this.
const MAX_SPAN: u64 = 50;

/// The contracts and wallets of the scenario, and who holds each ERC721 now.
struct Scene {
    tokens: Vec<String>,
    nft: String,
    multi: String,
    wallets: Vec<String>,
    nft_ids: BTreeSet<u64>,
    multi_ids: BTreeSet<u64>,
    owners: BTreeMap<u64, String>,
    rng: Rng,
}

const WALLETS: usize = 30;
const MULTI_IDS: u64 = 4;

/// Deploys two ERC20s, an ERC721 and an ERC1155, mints to every wallet, and spreads the mints
/// over blocks of about a dozen transactions.
async fn build(chain: &Anvil) -> Scene {
    let owner = chain.accounts[0].clone();
    let tokens = vec![
        chain
            .deploy("TestToken", token_ctor("Alpha", "ALP", 18))
            .await,
        chain
            .deploy("TestToken", token_ctor("Beta", "BET", 6))
            .await,
    ];
    let nft = chain
        .deploy("TestNFT", nft_ctor("Nifty", "NFT", "ipfs://base/"))
        .await;
    let multi = chain
        .deploy("TestMulti", multi_ctor("https://x.test/{id}.json"))
        .await;
    let wallets: Vec<String> = chain.accounts[1..=WALLETS].to_vec();
    chain.set_automine(false).await;
    // Transactions declare 500k gas and use ~50k: about ten fit in a 1M-gas block.
    chain.set_block_gas_limit(1_000_000).await;
    let mut s = Scene {
        tokens,
        nft,
        multi,
        wallets,
        nft_ids: BTreeSet::new(),
        multi_ids: (1..=MULTI_IDS).collect(),
        owners: BTreeMap::new(),
        rng: Rng(0x0fa1_17ed),
    };
    let mut txs = Vec::new();
    for (i, w) in s.wallets.iter().enumerate() {
        for t in &s.tokens {
            txs.push((
                owner.clone(),
                t.clone(),
                calldata(mintCall {
                    to: addr(w),
                    amount: u(1_000_000_000_000),
                }),
            ));
        }
        let start = 100 + 5 * i as u64;
        txs.push((
            owner.clone(),
            s.nft.clone(),
            calldata(mintManyCall {
                to: addr(w),
                start: u(start),
                n: u(5),
            }),
        ));
        for id in start..start + 5 {
            s.nft_ids.insert(id);
            s.owners.insert(id, w.clone());
        }
        txs.push((
            owner.clone(),
            s.multi.clone(),
            calldata(mintBatchCall {
                to: addr(w),
                ids: s.multi_ids.iter().map(|i| u(*i)).collect(),
                amounts: vec![u(1000); MULTI_IDS as usize],
            }),
        ));
    }
    chain.send_batch(&txs).await;
    chain.mine_pool(5).await;
    s
}

/// One round of activity: ERC20 transfers, ERC721 moves and burns, ERC1155 single and batch
/// transfers. Every transaction succeeds whatever its position in the round's blocks: ERC20 and
/// ERC1155 amounts are tiny against the balances, and each ERC721 moves at most once a round.
async fn round(chain: &Anvil, s: &mut Scene, erc20: usize, burns: bool) {
    let n = s.wallets.len() as u64;
    let mut txs = Vec::new();
    for _ in 0..erc20 {
        let t = s.tokens[s.rng.below(2) as usize].clone();
        let from = s.wallets[s.rng.below(n) as usize].clone();
        let to = s.wallets[s.rng.below(n) as usize].clone();
        let v = 1 + s.rng.below(1000);
        txs.push((
            from,
            t,
            calldata(transferCall {
                to: addr(&to),
                amount: u(v),
            }),
        ));
    }
    let ids: Vec<u64> = s.owners.keys().copied().collect();
    let mut moved = BTreeSet::new();
    for _ in 0..20 {
        let id = ids[s.rng.below(ids.len() as u64) as usize];
        if !moved.insert(id) {
            continue;
        }
        let from = s.owners[&id].clone();
        if burns && s.rng.below(5) == 0 {
            txs.push((from, s.nft.clone(), nft_burn_calldata(id)));
            s.owners.remove(&id);
        } else {
            let to = s.wallets[s.rng.below(n) as usize].clone();
            txs.push((
                from.clone(),
                s.nft.clone(),
                calldata(transferFromCall {
                    from: addr(&from),
                    to: addr(&to),
                    id: u(id),
                }),
            ));
            s.owners.insert(id, to);
        }
    }
    for _ in 0..20 {
        let from = s.wallets[s.rng.below(n) as usize].clone();
        let to = s.wallets[s.rng.below(n) as usize].clone();
        let id = 1 + s.rng.below(MULTI_IDS);
        let a = 1 + s.rng.below(3);
        let data = if s.rng.below(3) == 0 {
            calldata(safeBatchTransferFromCall {
                from: addr(&from),
                to: addr(&to),
                ids: vec![u(id)],
                amounts: vec![u(a)],
                data: Bytes::new(),
            })
        } else {
            calldata(safeTransferFromCall {
                from: addr(&from),
                to: addr(&to),
                id: u(id),
                amount: u(a),
                data: Bytes::new(),
            })
        };
        txs.push((from, s.multi.clone(), data));
    }
    chain.send_batch(&txs).await;
    chain.mine_pool(5).await;
}

/// Every wallet's ERC20 transfers and NFTs through the API equal the chain's; returns the
/// number of ERC20 transfers.
async fn check_truth(app: &common::TestApp, chain: &Anvil, s: &Scene, what: &str) -> usize {
    let truth = chain_erc20(chain, &s.tokens).await;
    for w in &s.wallets {
        let want: BTreeMap<_, _> = truth
            .iter()
            .filter(|(_, v)| &v.1 == w || &v.2 == w)
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        assert_eq!(
            api_erc20(app, w).await,
            want,
            "{what}: ERC20 transfers of {w}"
        );
    }
    check_nfts(app, chain, s, what).await;
    truth.len()
}

/// Every wallet's NFTs through the API equal the chain's (`ownerOf`, `balanceOf`).
async fn check_nfts(app: &common::TestApp, chain: &Anvil, s: &Scene, what: &str) {
    let owners = chain_721_owners(chain, &s.nft, &s.nft_ids).await;
    let balances = chain_1155_balances(chain, &s.multi, &s.wallets, &s.multi_ids).await;
    assert_eq!(
        owners, s.owners,
        "{what}: every ERC721 move of the scenario succeeded"
    );
    for w in &s.wallets {
        let mut want: BTreeMap<(String, String), String> = owners
            .iter()
            .filter(|(_, o)| *o == w)
            .map(|(id, _)| ((s.nft.clone(), id.to_string()), "1".to_string()))
            .collect();
        for ((o, id), b) in &balances {
            if o == w {
                want.insert((s.multi.clone(), id.to_string()), b.clone());
            }
        }
        assert_eq!(api_nfts(app, w).await, want, "{what}: NFTs of {w}");
    }
}

/// Waits until the ERC20 records carry their token's symbol and decimals, and every NFT record
/// of a few wallets its token URI (as the contracts answer them).
async fn wait_metadata(app: &common::TestApp, s: &Scene) {
    let limit = Duration::from_secs(60);
    let deadline = std::time::Instant::now() + limit;
    let want = [(&s.tokens[0], "ALP", "18"), (&s.tokens[1], "BET", "6")];
    loop {
        let mut missing = Vec::new();
        for (t, symbol, decimals) in want {
            let (code, _, body) = app
                .get_rest(&format!(
                    "/api/v2/erc20/transfers?chain=eth&contract_addresses%5B%5D={t}&limit=1"
                ))
                .await;
            assert_eq!(code, 200, "{body}");
            let r = &body["result"][0];
            if r["token_symbol"] != symbol || r["token_decimals"] != decimals {
                missing.push(format!("{t}: {r}"));
            }
        }
        for w in &s.wallets[..5] {
            for r in app.rest_nfts(w, 100).await {
                let id = r["token_id"].as_str().unwrap_or_default();
                let uri = if r["token_address"] == s.nft.as_str() {
                    format!("ipfs://base/{id}")
                } else {
                    "https://x.test/{id}.json".to_string()
                };
                if r["token_uri"] != uri.as_str() {
                    missing.push(format!("{w}: {r}"));
                }
            }
        }
        if missing.is_empty() {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "metadata incomplete after {limit:?}: {}",
            missing[0]
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn configure(c: &mut tokenql::indexer::ChainConfig) {
    c.request_timeout = TIMEOUT;
}

async fn faults_leave_the_data_exact(backend: Backend) {
    let chain = Anvil::start(WALLETS + 1, &[]).await;
    let mut s = build(&chain).await;
    for r in 0..10 {
        round(&chain, &mut s, 300, r >= 5).await;
    }
    let head = chain.head().await;

    // A fault-free run behind the same provider limit: the reference request count.
    let clean = common::spawn(backend).await;
    let p0 = Proxy::start(&chain.url, 1).await;
    p0.set_max_log_span(Some(MAX_SPAN));
    let ix = Indexer::start(&clean.db, &p0.url, configure);
    wait_synced(&clean.db, &chain, Duration::from_secs(60)).await;
    let clean_counts = p0.counts();
    ix.stop().await.expect("the fault-free run ends cleanly");
    clean.cleanup().await;
    drop(p0);

    // The same chain through faults.
    let app = common::spawn(backend).await;
    let p = Proxy::start(&chain.url, 0xdead_beef).await;
    p.set_max_log_span(Some(MAX_SPAN));
    p.set_delay(DELAY);
    // Every kind at least once, from the first request on; then at random.
    p.script([
        Fault::Drop,
        Fault::Unavailable,
        Fault::Malformed,
        Fault::TooManyRequests,
        Fault::Delay(DELAY),
        Fault::Malformed,
    ]);
    p.set_rates(Rates {
        delay: 20,
        too_many_requests: 50,
        unavailable: 50,
        drop: 50,
        malformed: 50,
    });
    let ix = Indexer::start(&app.db, &p.url, configure);
    wait_synced(&app.db, &chain, Duration::from_secs(90)).await;
    let faulty_counts = p.counts();
    for k in [
        "fault:delay",
        "fault:429",
        "fault:503",
        "fault:drop",
        "fault:malformed",
        "span_refused",
    ] {
        assert!(
            faulty_counts.get(k).copied().unwrap_or(0) > 0,
            "the proxy injected {k}: {faulty_counts:?}"
        );
    }
    // Ingest requests (the metadata worker's eth_calls run beside it, at their own pace).
    let ingest = |c: &BTreeMap<String, u64>| -> u64 {
        [
            "http:eth_chainId",
            "http:eth_blockNumber",
            "http:eth_getLogs",
            "http:eth_getBlockByNumber",
        ]
        .iter()
        .map(|k| c.get(*k).copied().unwrap_or(0))
        .sum()
    };
    let (clean_ingest, faulty_ingest) = (ingest(&clean_counts), ingest(&faulty_counts));
    let (clean_http, faulty_http) = (clean_counts["http"], faulty_counts["http"]);
    let faults: Vec<String> = faulty_counts
        .iter()
        .filter(|(k, _)| k.starts_with("fault:") || *k == "span_refused")
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    eprintln!(
        "{backend:?}: {head} blocks; ingest requests {clean_ingest} fault-free, {faulty_ingest} \
         with faults; all requests {clean_http} / {faulty_http}; injected: {}",
        faults.join(" ")
    );
    assert!(
        faulty_ingest <= 3 * clean_ingest + 20,
        "ingest retries are bounded: {faulty_ingest} ingest requests with faults vs \
         {clean_ingest} without"
    );
    assert!(
        faulty_http <= 3 * clean_http + 100,
        "retries are bounded: {faulty_http} requests with faults vs {clean_http} without"
    );
    let n = check_truth(&app, &chain, &s, &format!("through faults ({backend:?})")).await;
    assert!(
        n > 2500,
        "the scenario has thousands of ERC20 transfers ({n})"
    );

    // The endpoint goes fully down (connections dropped, then refused) while the chain moves
    // on, and comes back.
    let dropped = p.count("dropped");
    p.set_mode(Mode::Drop);
    round(&chain, &mut s, 200, true).await;
    p.wait_count("dropped", dropped + 3, Duration::from_secs(20))
        .await;
    p.set_mode(Mode::Refuse);
    // The outage lasts a while: not an assertion, the duration of the fault.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(
        !ix.task.is_finished(),
        "the indexer keeps waiting for the endpoint"
    );
    let before_up = p.count("http");
    p.set_mode(Mode::Up);
    wait_synced(&app.db, &chain, Duration::from_secs(60)).await;
    assert!(
        p.count("http") > before_up,
        "ingest went through the proxy again"
    );
    check_truth(&app, &chain, &s, &format!("after the outage ({backend:?})")).await;
    eprintln!(
        "{backend:?}: outage: {} connections dropped; {} requests after it came back",
        p.count("dropped") - dropped,
        p.count("http") - before_up
    );

    // Contract and token metadata, read by eth_call through the same faults, arrive whole.
    wait_metadata(&app, &s).await;

    ix.stop().await.expect("the indexer ends cleanly");
    app.cleanup().await;
}

/// The faulty proxy in front of an on-demand collection backfill: the history before the live
/// start arrives whole, in ranges the provider accepts.
async fn backfills_survive_faults(backend: Backend) {
    let chain = Anvil::start(WALLETS + 1, &[]).await;
    let mut s = build(&chain).await;
    for r in 0..4 {
        round(&chain, &mut s, 100, r >= 2).await;
        chain.mine(15).await;
    }
    let start = chain.head().await - 5;
    assert!(
        start > 2 * MAX_SPAN,
        "the history spans several provider ranges"
    );

    let app = common::spawn(backend).await;
    let p = Proxy::start(&chain.url, 0x5eed).await;
    p.set_max_log_span(Some(MAX_SPAN));
    p.set_delay(DELAY);
    p.set_rates(Rates {
        delay: 20,
        too_many_requests: 50,
        unavailable: 50,
        drop: 50,
        malformed: 50,
    });
    let ix = Indexer::start(&app.db, &p.url, |c| {
        configure(c);
        c.start_block = Some(start);
    });
    wait_synced(&app.db, &chain, Duration::from_secs(60)).await;
    let path = format!(
        "/api/v2/{}/nft?chain=eth&token_addresses%5B%5D={}&token_addresses%5B%5D={}",
        s.wallets[0], s.nft, s.multi
    );
    let limit = Duration::from_secs(60);
    let deadline = std::time::Instant::now() + limit;
    let mut first = true;
    loop {
        let (code, _, body) = app.get_rest(&path).await;
        assert_eq!(code, 200, "{body}");
        if first {
            assert_eq!(body["status"], "SYNCING", "first request: {body}");
            first = false;
        } else if body["status"] == "SYNCED" {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the backfills did not finish within {limit:?}: {:?}",
            p.counts()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    check_nfts(
        &app,
        &chain,
        &s,
        &format!("backfilled through faults ({backend:?})"),
    )
    .await;
    let (a, b) = (
        p.count(&format!("eth_getLogs@{}", s.nft)),
        p.count(&format!("eth_getLogs@{}", s.multi)),
    );
    eprintln!("{backend:?}: backfill of {start} blocks: {a} + {b} eth_getLogs");
    // The faults reached the backfills themselves: log requests naming a collection (only the
    // backfills name one; the follower asks for every contract's logs) met errors, drops and
    // garbage, and still the history arrived whole.
    let counts = p.counts();
    let hit = |c: &str| -> u64 {
        ["fault:429", "fault:503", "fault:drop", "fault:malformed"]
            .iter()
            .map(|f| counts.get(&format!("{f}@{c}")).copied().unwrap_or(0))
            .sum()
    };
    let (fa, fb) = (
        hit(&s.nft.to_ascii_lowercase()),
        hit(&s.multi.to_ascii_lowercase()),
    );
    assert!(
        fa + fb >= 2,
        "{backend:?}: only {fa} + {fb} faults met the backfills' requests: {counts:?}"
    );
    // Per collection: the refusals halving 10000 blocks down to the limit, the ranges, and
    // the retries of the faults.
    let ranges = start.div_ceil(MAX_SPAN / 2);
    for (c, n) in [(&s.nft, a), (&s.multi, b)] {
        assert!(
            n <= 3 * (ranges + 9) + 10,
            "bounded eth_getLogs for the backfill of {c}: {n}"
        );
    }
    ix.stop().await.expect("the indexer ends cleanly");
    app.cleanup().await;
}

crate::backend_tests!(faults_leave_the_data_exact, backfills_survive_faults);
