//! Black-box indexer suite against a real anvil chain with real compiled OpenZeppelin
//! contracts, on every backend: a generated scenario checked against a model of it, and reorgs
//! checked against the chain's own post-reorg state (transfers, NFTs, and the token's holders
//! and transfer count from the kept ERC20 balances).

use crate::support::anvil;
use crate::support::common;
use crate::support::erc20_holders::{check_token, holders_truth};

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use crate::support::indexer::*;
use alloy::primitives::Bytes;
use anvil::*;
use common::Backend;
use serde_json::json;

const ZERO: &str = "0x0000000000000000000000000000000000000000";

/// The scenario's own account of what it did.
#[derive(Default)]
struct Model {
    /// (tx hash) -> (contract, from, to, value) for every ERC20 transfer sent.
    erc20: Vec<(String, String, String, String, String)>,
    owners721: BTreeMap<u64, String>,
    balances1155: BTreeMap<(String, u64), u64>,
}

async fn scenario_matches_ground_truth(backend: Backend) {
    let chain = Anvil::start(60, &[]).await;
    let app = common::spawn(backend).await;
    let wallets: Vec<String> = chain.accounts[..55].to_vec();
    let owner = chain.accounts[0].clone();
    let tok_a = chain
        .deploy("TestToken", token_ctor("Alpha", "ALP", 18))
        .await;
    let tok_b = chain
        .deploy("TestToken", token_ctor("Beta", "BET", 6))
        .await;
    let nft = chain
        .deploy("TestNFT", nft_ctor("Nifty", "NFT", "ipfs://base/"))
        .await;
    let multi = chain
        .deploy("TestMulti", multi_ctor("https://x.test/{id}.json"))
        .await;

    let mut rng = Rng(0x5eed_cafe);
    let mut m = Model::default();
    let mut bal: BTreeMap<(String, String), u64> = BTreeMap::new();
    chain.set_automine(false).await;

    // Mints.
    let mut txs = Vec::new();
    let mut metas = Vec::new();
    for w in &wallets {
        for t in [&tok_a, &tok_b] {
            let v = 1_000_000 + rng.below(1_000_000);
            txs.push((
                owner.clone(),
                t.clone(),
                calldata(mintCall {
                    to: addr(w),
                    amount: u(v),
                }),
            ));
            metas.push((t.clone(), ZERO.to_string(), w.clone(), v));
            *bal.entry((t.clone(), w.clone())).or_default() += v;
        }
        let start = 1000 + m.owners721.len() as u64;
        txs.push((
            owner.clone(),
            nft.clone(),
            calldata(mintManyCall {
                to: addr(w),
                start: u(start),
                n: u(5),
            }),
        ));
        for id in start..start + 5 {
            m.owners721.insert(id, w.clone());
        }
        let ids = vec![u(1), u(2), u(3 + rng.below(5))];
        let amts = vec![u(10), u(20), u(5)];
        for (i, a) in [(1u64, 10u64), (2, 20)] {
            *m.balances1155.entry((w.clone(), i)).or_default() += a;
        }
        let third = ids[2].to::<u64>();
        *m.balances1155.entry((w.clone(), third)).or_default() += 5;
        txs.push((
            owner.clone(),
            multi.clone(),
            calldata(mintBatchCall {
                to: addr(w),
                ids,
                amounts: amts,
            }),
        ));
    }
    let hashes = chain.send_batch(&txs).await;
    chain.mine_all(&hashes).await;
    chain.assert_success(&hashes).await;
    let mut meta_iter = metas.into_iter();
    for (h, (_, to, _)) in hashes.iter().zip(&txs) {
        let _ = to;
        // Only ERC20 mints are recorded as transfers here; NFT moves are checked by holdings.
        let _ = h;
    }
    // ERC20 mint transfers: one per mint tx, in order.
    let mint_hashes: Vec<&String> = hashes
        .iter()
        .zip(&txs)
        .filter(|(_, (_, to, _))| *to == tok_a || *to == tok_b)
        .map(|(h, _)| h)
        .collect();
    for h in mint_hashes {
        let (c, f, t, v) = meta_iter.next().expect("meta");
        m.erc20.push((h.clone(), c, f, t, v.to_string()));
    }

    // Rounds of transfers; each round only spends what the sender had before it, and moves
    // each NFT at most once, so every transaction succeeds whatever order the block gets.
    for round in 0..8 {
        let mut txs = Vec::new();
        let mut recs = Vec::new();
        let mut spent: BTreeMap<(String, String), u64> = BTreeMap::new();
        for _ in 0..300 {
            let t = if rng.below(2) == 0 { &tok_a } else { &tok_b };
            let from = &wallets[rng.below(wallets.len() as u64) as usize];
            let to = &wallets[rng.below(wallets.len() as u64) as usize];
            let have = bal.get(&(t.clone(), from.clone())).copied().unwrap_or(0)
                - spent.get(&(t.clone(), from.clone())).copied().unwrap_or(0);
            if have < 10 {
                continue;
            }
            let v = 1 + rng.below(have / 4);
            *spent.entry((t.clone(), from.clone())).or_default() += v;
            txs.push((
                from.clone(),
                t.clone(),
                calldata(transferCall {
                    to: addr(to),
                    amount: u(v),
                }),
            ));
            recs.push(Some((t.clone(), from.clone(), to.clone(), v)));
        }
        let mut moved: BTreeSet<u64> = BTreeSet::new();
        let ids: Vec<u64> = m.owners721.keys().copied().collect();
        for _ in 0..25 {
            let id = ids[rng.below(ids.len() as u64) as usize];
            if !moved.insert(id) {
                continue;
            }
            let from = m.owners721[&id].clone();
            if round % 3 == 2 && rng.below(4) == 0 {
                txs.push((from.clone(), nft.clone(), nft_burn_calldata(id)));
                m.owners721.remove(&id);
            } else {
                let to = wallets[rng.below(wallets.len() as u64) as usize].clone();
                txs.push((
                    from.clone(),
                    nft.clone(),
                    calldata(transferFromCall {
                        from: addr(&from),
                        to: addr(&to),
                        id: u(id),
                    }),
                ));
                m.owners721.insert(id, to);
            }
            recs.push(None);
        }
        let mut spent1155: BTreeMap<(String, u64), u64> = BTreeMap::new();
        let keys: Vec<(String, u64)> = m.balances1155.keys().cloned().collect();
        for _ in 0..25 {
            let (from, id) = keys[rng.below(keys.len() as u64) as usize].clone();
            let have = m
                .balances1155
                .get(&(from.clone(), id))
                .copied()
                .unwrap_or(0)
                - spent1155.get(&(from.clone(), id)).copied().unwrap_or(0);
            if have < 2 {
                continue;
            }
            let a = 1 + rng.below(have / 2);
            *spent1155.entry((from.clone(), id)).or_default() += a;
            let to = wallets[rng.below(wallets.len() as u64) as usize].clone();
            if rng.below(3) == 0 {
                txs.push((
                    from.clone(),
                    multi.clone(),
                    calldata(safeBatchTransferFromCall {
                        from: addr(&from),
                        to: addr(&to),
                        ids: vec![u(id)],
                        amounts: vec![u(a)],
                        data: Bytes::new(),
                    }),
                ));
            } else {
                txs.push((
                    from.clone(),
                    multi.clone(),
                    calldata(safeTransferFromCall {
                        from: addr(&from),
                        to: addr(&to),
                        id: u(id),
                        amount: u(a),
                        data: Bytes::new(),
                    }),
                ));
            }
            *m.balances1155
                .get_mut(&(from.clone(), id))
                .expect("balance") -= a;
            *m.balances1155.entry((to, id)).or_default() += a;
            recs.push(None);
        }
        let hashes = chain.send_batch(&txs).await;
        chain.mine_all(&hashes).await;
        chain.assert_success(&hashes).await;
        for (h, r) in hashes.iter().zip(recs) {
            if let Some((t, f, to, v)) = r {
                *bal.get_mut(&(t.clone(), f.clone())).expect("balance") -= v;
                *bal.entry((t.clone(), to.clone())).or_default() += v;
                m.erc20.push((h.clone(), t, f, to, v.to_string()));
            }
        }
    }
    m.balances1155.retain(|_, v| *v > 0);
    assert!(
        m.erc20.len() > 2000,
        "the scenario makes thousands of ERC20 transfers ({})",
        m.erc20.len()
    );

    let indexer = Indexer::start(&app.db, &chain.url, |_| {});
    wait_synced(&app.db, &chain, Duration::from_secs(120)).await;

    for w in &wallets {
        let mut want: Vec<(String, String, String, String, String)> = m
            .erc20
            .iter()
            .filter(|r| &r.2 == w || &r.3 == w)
            .cloned()
            .collect();
        want.sort();
        let got = api_erc20(&app, w).await;
        let mut got: Vec<(String, String, String, String, String)> = got
            .into_iter()
            .map(|((h, _), (c, f, t, v))| (h, c, f, t, v))
            .collect();
        got.sort();
        assert_eq!(got, want, "ERC20 transfers of {w} ({backend:?})");

        let mut want_nfts: BTreeMap<(String, String), String> = BTreeMap::new();
        for (id, o) in &m.owners721 {
            if o == w {
                want_nfts.insert((nft.clone(), id.to_string()), "1".into());
            }
        }
        for ((o, id), a) in &m.balances1155 {
            if o == w {
                want_nfts.insert((multi.clone(), id.to_string()), a.to_string());
            }
        }
        assert_eq!(
            api_nfts(&app, w).await,
            want_nfts,
            "NFTs of {w} ({backend:?})"
        );
    }

    // Contract metadata read by eth_call shows up in the records.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let (status, _, body) = app
            .get_rest(&format!(
                "/api/v2/erc20/transfers?chain=eth&contract_addresses%5B%5D={tok_b}&limit=1"
            ))
            .await;
        assert_eq!(status, 200, "{body}");
        let r = &body["result"][0];
        if r["token_symbol"] == "BET" {
            assert_eq!(r["token_decimals"], "6");
            assert_eq!(r["token_name"], "Beta");
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "metadata never arrived: {r}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    indexer.stop().await.expect("indexer ran cleanly");
    app.cleanup().await;
}

/// Mines exactly `n` blocks of activity above the head (automine on): an NFT transfer of `id`
/// from `from` to `to` first, then `n - 1` ERC20 transfers, then empty blocks for any sends that
/// automine packed together, so that a reorg of depth `n` replaces exactly these blocks and none
/// below them.
async fn activity(chain: &Anvil, tok: &str, nft: &str, id: u64, from: &str, to: &str, n: usize) {
    let head = chain.head().await;
    chain
        .send(
            from,
            nft,
            calldata(transferFromCall {
                from: addr(from),
                to: addr(to),
                id: u(id),
            }),
        )
        .await;
    for i in 0..n.saturating_sub(1) {
        let a = &chain.accounts[1 + i % 10];
        let b = &chain.accounts[11 + i % 10];
        chain
            .send(
                a,
                tok,
                calldata(transferCall {
                    to: addr(b),
                    amount: u(1 + i as u64),
                }),
            )
            .await;
    }
    // Automine produces each block just after eth_sendTransaction answers: wait until the pool
    // is empty, so that the blocks a reorg replaces are exactly these.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let st = chain.rpc("txpool_status", json!([])).await;
        let zero = |k: &str| {
            st[k].as_str().is_none_or(|v| v == "0x0") && st[k].as_u64().is_none_or(|v| v == 0)
        };
        if zero("pending") && zero("queued") {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "transactions not mined: {st}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // Under load automine may put several of those sends in one block.
    let made = chain.head().await - head;
    assert!(made <= n as u64, "{n} transactions made {made} blocks");
    if made < n as u64 {
        chain.mine(n as u64 - made).await;
    }
}

async fn check_against_chain(
    app: &common::TestApp,
    chain: &Anvil,
    tok: &str,
    nft: &str,
    ids: &BTreeSet<u64>,
    what: &str,
) {
    let truth = chain_erc20(chain, &[tok.to_string()]).await;
    // The token's holders and transfer count, from the kept balances, against the chain's logs.
    let token = tok.to_lowercase();
    let moves = truth
        .values()
        .map(|(c, f, t, v)| (c.as_str(), f.as_str(), t.as_str(), v.as_str()));
    let holders = holders_truth(moves, &token);
    check_token(app, &token, &holders, None, 7, what).await;
    for w in &chain.accounts[..22] {
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
    let owners = chain_721_owners(chain, nft, ids).await;
    for w in &chain.accounts[..22] {
        let want: BTreeMap<(String, String), String> = owners
            .iter()
            .filter(|(_, o)| *o == w)
            .map(|(id, _)| ((nft.to_string(), id.to_string()), "1".to_string()))
            .collect();
        assert_eq!(api_nfts(app, w).await, want, "{what}: NFTs of {w}");
    }
}

/// The first page (3 records, oldest first) of the token's transfers: its cursor and the
/// records' (transaction hash, log index).
async fn first_page(app: &common::TestApp, tok: &str) -> (String, Vec<(String, u64)>) {
    let (status, _, body) = app
        .get_rest(&format!(
            "/api/v2.2/erc20/{tok}/transfers?order=ASC&limit=3"
        ))
        .await;
    assert_eq!(status, 200, "{body}");
    let cursor = common::text(&body["cursor"]).expect("more than one page");
    (cursor, page_keys(&body))
}

fn page_keys(body: &serde_json::Value) -> Vec<(String, u64)> {
    body["result"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            let tx = r["transaction_hash"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            (tx, r["log_index"].as_u64().unwrap_or(u64::MAX))
        })
        .collect()
}

/// The rest of a walk of the token's transfers from `cursor`: its records, or the refusal.
async fn rest_of_walk(
    app: &common::TestApp,
    tok: &str,
    mut cursor: String,
) -> Result<Vec<(String, u64)>, (u16, serde_json::Value)> {
    let mut out = Vec::new();
    loop {
        let uri = format!(
            "/api/v2.2/erc20/{tok}/transfers?order=ASC&limit=3&cursor={}",
            common::enc(&cursor)
        );
        let (status, _, body) = app.get_rest(&uri).await;
        if status != 200 {
            return Err((status, body));
        }
        out.extend(page_keys(&body));
        match common::text(&body["cursor"]) {
            Some(c) => cursor = c,
            None => return Ok(out),
        }
    }
}

async fn reorgs_are_followed(backend: Backend) {
    let chain = Anvil::start(30, &[]).await;
    let app = common::spawn(backend).await;
    let tok = chain
        .deploy("TestToken", token_ctor("Alpha", "ALP", 18))
        .await;
    let nft = chain
        .deploy("TestNFT", nft_ctor("Nifty", "NFT", "ipfs://base/"))
        .await;
    let a0 = chain.accounts[0].clone();
    for w in &chain.accounts[..22] {
        chain
            .send(
                &a0,
                &tok,
                calldata(mintCall {
                    to: addr(w),
                    amount: u(1_000_000),
                }),
            )
            .await;
    }
    chain
        .send(
            &a0,
            &nft,
            calldata(mintManyCall {
                to: addr(&chain.accounts[1]),
                start: u(1),
                n: u(10),
            }),
        )
        .await;
    let ids: BTreeSet<u64> = (1..=10).collect();
    let indexer = Indexer::start(&app.db, &chain.url, |_| {});
    wait_synced(&app.db, &chain, Duration::from_secs(60)).await;
    check_against_chain(&app, &chain, &tok, &nft, &ids, "before reorgs").await;

    for (depth, id) in [(1u64, 1u64), (5, 2), (30, 3)] {
        // A walk begun now is pinned below the blocks the reorg will replace: it ends on exactly
        // the transfers of now. One begun after them is pinned to a block the reorg replaces.
        let before = chain_erc20(&chain, std::slice::from_ref(&tok)).await;
        let (above, mut walked) = first_page(&app, &tok).await;
        // Blocks that will be orphaned: NFT `id` goes to account 2, and ERC20 transfers.
        activity(
            &chain,
            &tok,
            &nft,
            id,
            &chain.accounts[1],
            &chain.accounts[2],
            depth as usize,
        )
        .await;
        wait_synced(&app.db, &chain, Duration::from_secs(60)).await;
        let (below, _) = first_page(&app, &tok).await;
        // The replacement chain moves the same NFT to account 3 instead and drops the rest.
        let tx = json!({"from": chain.accounts[1], "to": nft, "gas": "0x100000",
                        "data": hex(&calldata(transferFromCall { from: addr(&chain.accounts[1]), to: addr(&chain.accounts[3]), id: u(id) }))});
        chain.reorg(depth, json!([[tx, 0]])).await;
        wait_synced(&app.db, &chain, Duration::from_secs(60)).await;
        let owners = chain_721_owners(&chain, &nft, &ids).await;
        assert_eq!(
            owners[&id], chain.accounts[3],
            "the reorg moved NFT {id} to account 3"
        );
        walked.extend(
            rest_of_walk(&app, &tok, above)
                .await
                .unwrap_or_else(|(s, b)| {
                    panic!("a walk pinned above a reorg of depth {depth}: {s} {b}")
                }),
        );
        let want: BTreeSet<(String, u64)> = before.keys().cloned().collect();
        assert_eq!(
            walked.len(),
            want.len(),
            "the pinned walk repeats no record"
        );
        assert_eq!(
            walked.into_iter().collect::<BTreeSet<_>>(),
            want,
            "the pinned walk, depth {depth}"
        );
        let (status, body) = rest_of_walk(&app, &tok, below)
            .await
            .expect_err("a walk pinned to a replaced block");
        assert_eq!(status, 400, "{body}");
        assert!(
            body["message"]
                .as_str()
                .unwrap_or_default()
                .contains("reorganized"),
            "{body}"
        );
        check_against_chain(
            &app,
            &chain,
            &tok,
            &nft,
            &ids,
            &format!("after a reorg of depth {depth} ({backend:?})"),
        )
        .await;
    }
    indexer.stop().await.expect("indexer ran cleanly");
    app.cleanup().await;
}

async fn too_deep_a_reorg_stops_the_chain(backend: Backend) {
    let chain = Anvil::start(10, &[]).await;
    let app = common::spawn(backend).await;
    let tok = chain
        .deploy("TestToken", token_ctor("Alpha", "ALP", 18))
        .await;
    let a0 = chain.accounts[0].clone();
    for i in 0..10u64 {
        chain
            .send(
                &a0,
                &tok,
                calldata(mintCall {
                    to: addr(&chain.accounts[1]),
                    amount: u(i + 1),
                }),
            )
            .await;
    }
    // Automine may put several of those sends in one block under load: make the chain tall
    // enough for a reorg of six whatever the packing was.
    chain.mine(8).await;
    let indexer = Indexer::start(&app.db, &chain.url, |c| c.max_reorg_depth = 3);
    wait_synced(&app.db, &chain, Duration::from_secs(60)).await;
    let before = api_erc20(&app, &chain.accounts[1]).await;
    // The new blocks carry a transfer: six empty blocks mined in the same second as the old
    // ones could come out identical, and then there is no reorg to see.
    let moved = calldata(transferCall {
        to: addr(&chain.accounts[2]),
        amount: u(1),
    });
    let tx = json!({"from": chain.accounts[1], "to": tok, "gas": "0x100000", "data": hex(&moved)});
    chain.reorg(6, json!([[tx, 0]])).await;
    let r = tokio::time::timeout(Duration::from_secs(30), indexer.task)
        .await
        .expect("the chain stops")
        .expect("task");
    let e = r.expect_err("a reorg deeper than the maximum stops the chain");
    assert!(e.to_string().contains("reorg deeper than 3"), "{e}");
    assert_eq!(
        api_erc20(&app, &chain.accounts[1]).await,
        before,
        "nothing was rolled back or corrupted"
    );
    app.cleanup().await;
}

async fn contract_metadata_by_eth_call(backend: Backend) {
    use sea_orm::EntityTrait;
    let chain = Anvil::start(5, &[]).await;
    let app = common::spawn(backend).await;
    let a0 = chain.accounts[0].clone();
    let mkr = chain.deploy("Bytes32Token", vec![]).await;
    chain
        .send(
            &a0,
            &mkr,
            calldata(mintCall {
                to: addr(&a0),
                amount: u(5),
            }),
        )
        .await;
    let usd = chain
        .deploy("TestToken", token_ctor("Dollar", "USD", 6))
        .await;
    chain
        .send(
            &a0,
            &usd,
            calldata(mintCall {
                to: addr(&a0),
                amount: u(5),
            }),
        )
        .await;
    // Contracts with no transfers yet, known only by address: their standard comes from ERC165.
    let quiet_nft = chain
        .deploy("TestNFT", nft_ctor("Quiet", "QNFT", "ipfs://q/"))
        .await;
    let quiet_multi = chain
        .deploy("TestMulti", multi_ctor("https://q.test/{id}"))
        .await;
    for c in [&quiet_nft, &quiet_multi] {
        let a = tokenql::types::Address::parse(c).expect("address");
        tokenql::store::flags::set_flags(&app.db, tokenql::types::Chain::ETH, a, false, false)
            .await
            .expect("register contract");
    }
    let indexer = Indexer::start(&app.db, &chain.url, |_| {});
    wait_synced(&app.db, &chain, Duration::from_secs(60)).await;
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let mut rows = Vec::new();
        for a in [&mkr, &usd, &quiet_nft, &quiet_multi] {
            let r = tokenql::entity::contract::Entity::find_by_id((
                1i64,
                tokenql::types::Address::parse(a).expect("address"),
            ))
            .one(&app.db)
            .await
            .expect("select")
            .expect("contract row");
            rows.push(r);
        }
        if rows.iter().all(|r| r.metadata_fetched_at.is_some()) {
            let (m, d, n, x) = (&rows[0], &rows[1], &rows[2], &rows[3]);
            assert_eq!(
                (
                    m.name.as_deref(),
                    m.symbol.as_deref(),
                    m.decimals,
                    m.standard.map(|s| s.as_str())
                ),
                (Some("Maker"), Some("MKR"), None, Some("ERC20")),
                "bytes32 name and symbol, no decimals()"
            );
            assert_eq!(
                (d.name.as_deref(), d.symbol.as_deref(), d.decimals),
                (Some("Dollar"), Some("USD"), Some(6))
            );
            assert_eq!(
                (
                    n.standard.map(|s| s.as_str()),
                    n.name.as_deref(),
                    n.decimals
                ),
                (Some("ERC721"), Some("Quiet"), None)
            );
            assert_eq!(
                (
                    x.standard.map(|s| s.as_str()),
                    x.name.as_deref(),
                    x.decimals
                ),
                (Some("ERC1155"), None, None)
            );
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "metadata not read within 30 s: {rows:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    indexer.stop().await.expect("indexer ran cleanly");
    app.cleanup().await;
}

crate::backend_tests!(
    scenario_matches_ground_truth,
    reorgs_are_followed,
    too_deep_a_reorg_stops_the_chain,
    contract_metadata_by_eth_call
);
