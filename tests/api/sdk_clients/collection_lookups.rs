//! The collection, NFT and wallet lookups through the official SDKs, base URL only, on every
//! backend: the JS SDK (`moralis` 2.27.2) calls `getMultipleNFTs`, `getNFTContractMetadata`,
//! `getNFTCollectionStats`, `getNFTTokenStats`, `getWalletStats`, `getWalletActiveChains`,
//! `syncNFTContract`, `reSyncMetadata` (the Python SDK also `get_nft_transfers`), `getNFTTransfersFromToBlock` and
//! `getNFTTransfersByBlock` (both walked to their last page); the Python SDK (`moralis` 0.1.49) the same and
//! `get_nft_bulk_contract_metadata` (neither has `getUniqueOwnersByCollection`). Each answer is
//! compared with the sample's truth decoded by the test (`Truth`).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Value};

use super::lookups::{page, run};
use super::python;
use crate::support::common::truth::{hex_to_dec, Nft, Truth};
use crate::support::common::{self, Backend};

/// No contract at all.
const NOBODY: &str = "0x00000000000000000000000000000000000000aa";

/// What the test expects, decoded from the sample.
struct Expected {
    /// Tokens held by one wallet: (collection, token id, owner, amount).
    singles: Vec<(String, String, String, String)>,
    /// A collection and its (contract type, held token ids, owners, transfers).
    collection: (String, String, usize, usize, usize),
    /// One token of it: (token id, holders, transfers).
    token: (String, usize, usize),
    /// A block range and its moves, newest first: `[block, log, collection, token id]`.
    range: (u64, u64, Vec<Value>),
    /// The block with the most moves, and its moves, newest first.
    block: (u64, Vec<Value>),
    /// The busiest NFT wallet and its (nfts, collections, NFT transfers, ERC20 transfers, first
    /// block, last block).
    wallet: (String, [usize; 4], u64, u64),
}

fn expected(truth: &Truth) -> Expected {
    let mut holders: BTreeMap<(&str, &str), Vec<&Nft>> = BTreeMap::new();
    for n in truth.nfts.values().flatten() {
        holders
            .entry((&n.contract, &n.token_id))
            .or_default()
            .push(n);
    }
    let singles: Vec<_> = holders
        .iter()
        .filter(|(_, h)| h.len() == 1)
        .take(4)
        .map(|((c, t), h)| {
            (
                c.to_string(),
                t.to_string(),
                h[0].owner.clone(),
                h[0].amount.clone(),
            )
        })
        .collect();
    let c = singles[0].0.clone();
    let held: Vec<&&Nft> = holders
        .iter()
        .filter(|((hc, _), _)| *hc == c)
        .flat_map(|(_, h)| h)
        .collect();
    let tokens: BTreeSet<&String> = held.iter().map(|n| &n.token_id).collect();
    let owners: BTreeSet<&String> = held.iter().map(|n| &n.owner).collect();
    let moves = |id: Option<&str>| {
        truth
            .nft_moves
            .iter()
            .filter(|m| m.contract == c)
            .filter(|m| {
                id.is_none_or(|id| {
                    Some(&m.id_hex)
                        == held
                            .iter()
                            .find(|n| n.token_id == id)
                            .map(|n| &n.token_id_hex)
                })
            })
            .count()
    };
    let token_id = singles[0].1.clone();
    let token = (token_id.clone(), 1, moves(Some(&token_id)));
    let collection = (
        c.clone(),
        held[0].contract_type.clone(),
        tokens.len(),
        owners.len(),
        moves(None),
    );

    let mut counts: BTreeMap<&String, usize> = BTreeMap::new();
    for m in &truth.nft_moves {
        for w in BTreeSet::from([&m.from, &m.to]) {
            *counts.entry(w).or_default() += 1;
        }
    }
    let (w, nft_moves) = counts
        .into_iter()
        .filter(|(w, _)| truth.nfts.contains_key(*w))
        .max_by_key(|(w, n)| (*n, std::cmp::Reverse((*w).clone())))
        .expect("a wallet with NFTs");
    let held = &truth.nfts[w];
    let collections = held
        .iter()
        .map(|n| &n.contract)
        .collect::<BTreeSet<_>>()
        .len();
    let erc20 = truth.transfers_of(&[w.as_str()]);
    let blocks: Vec<u64> = truth
        .nft_moves
        .iter()
        .filter(|m| &m.from == w || &m.to == w)
        .map(|m| m.block)
        .chain(erc20.iter().map(|t| t.block_number))
        .collect();
    let (first, last) = (blocks.iter().min().copied(), blocks.iter().max().copied());
    let key = |m: &&crate::support::common::truth::NftMove| {
        json!([
            m.block.to_string(),
            m.log,
            m.contract,
            hex_to_dec(&m.id_hex)
        ])
    };
    let all: Vec<u64> = truth.nft_moves.iter().map(|m| m.block).collect();
    let (lo, hi) = (all[all.len() * 2 / 3], all[all.len() / 3]);
    let in_range = truth
        .nft_moves
        .iter()
        .filter(|m| (lo..=hi).contains(&m.block));
    let mut per_block: BTreeMap<u64, usize> = BTreeMap::new();
    for b in &all {
        *per_block.entry(*b).or_default() += 1;
    }
    let busy = per_block
        .iter()
        .max_by_key(|(b, n)| (**n, **b))
        .map(|(b, _)| *b)
        .unwrap_or(0);
    let in_block = truth.nft_moves.iter().filter(|m| m.block == busy);
    Expected {
        range: (lo, hi, in_range.map(|m| key(&m)).collect()),
        block: (busy, in_block.map(|m| key(&m)).collect()),
        singles,
        collection,
        token,
        wallet: (
            w.clone(),
            [held.len(), collections, nft_moves, erc20.len()],
            first.unwrap_or(0),
            last.unwrap_or(0),
        ),
    }
}

/// Checks what both SDKs received, raw.
fn check(sdk: &str, calls: &[Value], e: &Expected) {
    let multiple = &page(calls, "multiple")["raw"];
    let got: Vec<Value> = multiple
        .as_array()
        .unwrap_or_else(|| panic!("{sdk}: {multiple}"))
        .iter()
        .map(|r| match r {
            Value::Null => Value::Null,
            r => json!([
                r["token_address"],
                r["token_id"],
                r["owner_of"],
                r["amount"]
            ]),
        })
        .collect();
    let mut want: Vec<Value> = e
        .singles
        .iter()
        .map(|s| json!([s.0, s.1, s.2, s.3]))
        .collect();
    want.insert(1, Value::Null);
    assert_eq!(got, want, "{sdk} getMultipleNFTs");

    let (c, kind, tokens, owners, transfers) = &e.collection;
    let meta = &page(calls, "metadata")["raw"];
    assert_eq!(
        (&meta["token_address"], &meta["contract_type"]),
        (&json!(c), &json!(kind)),
        "{sdk}: {meta}"
    );
    assert_eq!(
        page(calls, "stats")["raw"],
        json!({"total_tokens": tokens.to_string(), "owners": {"current": owners.to_string()},
            "transfers": {"total": transfers.to_string()}}),
        "{sdk} getNFTCollectionStats"
    );
    let (_, holders, moves) = &e.token;
    assert_eq!(
        page(calls, "token_stats")["raw"],
        json!({"owners": {"current": holders.to_string()}, "transfers": {"total": moves.to_string()}}),
        "{sdk} getNFTTokenStats"
    );
    let (w, [nfts, collections, nft_transfers, token_transfers], first, last) = &e.wallet;
    assert_eq!(
        page(calls, "wallet_stats")["raw"],
        json!({"nfts": nfts.to_string(), "collections": collections.to_string(),
            "transactions": {"total": null}, "nft_transfers": {"total": nft_transfers.to_string()},
            "token_transfers": {"total": token_transfers.to_string()}}),
        "{sdk} getWalletStats"
    );
    let chains = &page(calls, "chains")["raw"];
    let active = &chains["active_chains"][0];
    assert_eq!(chains["address"], json!(w), "{sdk}: {chains}");
    assert_eq!(
        (
            &active["chain_id"],
            &active["first_transaction"]["block_number"],
            &active["last_transaction"]["block_number"]
        ),
        (
            &json!("0x1"),
            &json!(first.to_string()),
            &json!(last.to_string())
        ),
        "{sdk}: {chains}"
    );
    // The triggers: each reached the server at its method and path, and its answer came back.
    let c = &e.collection.0;
    for (name, method, path) in [
        ("sync", "PUT", format!("/nft/{c}/sync")),
        (
            "resync",
            "GET",
            format!("/nft/{c}/{}/metadata/resync", e.token.0),
        ),
    ] {
        let call = calls.iter().find(|x| x["name"] == name).expect("call");
        assert!(call["error"].is_null(), "{sdk} {name}: {}", call["error"]);
        let sent = call["requests"].as_array().into_iter().flatten().any(|r| {
            r["method"] == method && r["path"].as_str().is_some_and(|p| p.contains(&path))
        });
        assert!(
            sent,
            "{sdk} {name}: no {method} {path} in {}",
            call["requests"]
        );
    }
    assert_eq!(
        page(calls, "sync")["raw"],
        json!({"message": "Request Initiated"}),
        "{sdk}: syncNFTContract"
    );
    let queued = "Request received: the metadata will be fetched again";
    assert_eq!(
        page(calls, "resync")["raw"],
        json!({"status": queued, "message": queued}),
        "{sdk}: reSyncMetadata (async)"
    );
}

/// Every lookup through both SDKs, on one loaded sample.
pub(super) async fn sdk_collection_lookups(backend: Backend) {
    let app = common::spawn(backend).await;
    app.load_demo().await;
    let e = expected(&Truth::demo());
    let (c, _, _, _, _) = &e.collection;
    let (token, _, _) = &e.token;
    let w = &e.wallet.0;

    let mut js_tokens: Vec<Value> = e
        .singles
        .iter()
        .map(|s| json!({"tokenAddress": s.0, "tokenId": s.1}))
        .collect();
    js_tokens.insert(1, json!({"tokenAddress": NOBODY, "tokenId": "1"}));
    let js = run(&app, "moralis-2.27", json!([
        {"name": "multiple", "op": "nft.getMultipleNFTs", "params": {"chain": "0x1", "tokens": js_tokens}},
        {"name": "metadata", "op": "nft.getNFTContractMetadata", "params": {"chain": "0x1", "address": c}},
        {"name": "stats", "op": "nft.getNFTCollectionStats", "params": {"chain": "0x1", "address": c}},
        {"name": "token_stats", "op": "nft.getNFTTokenStats", "params": {"chain": "0x1", "address": c, "tokenId": token}},
        {"name": "wallet_stats", "op": "wallets.getWalletStats", "params": {"chain": "0x1", "address": w}},
        {"name": "chains", "op": "wallets.getWalletActiveChains", "params": {"address": w, "chains": ["0x1"]}},
        {"name": "sync", "op": "nft.syncNFTContract", "params": {"chain": "0x1", "address": c}},
        {"name": "resync", "op": "nft.reSyncMetadata", "params": {"chain": "0x1", "address": c, "tokenId": token, "flag": "metadata", "mode": "async"}},
        {"name": "range", "op": "nft.getNFTTransfersFromToBlock", "params": {"chain": "0x1", "fromBlock": e.range.0, "toBlock": e.range.1, "limit": 7}},
        {"name": "block", "op": "nft.getNFTTransfersByBlock", "params": {"chain": "0x1", "blockNumberOrHash": e.block.0.to_string(), "limit": 3}},
        {"name": "unknown", "op": "nft.getNFTContractMetadata", "params": {"chain": "0x1", "address": NOBODY}},
    ]))
    .await;
    check("JS", &js, &e);
    // The typed results the JS SDK made of the answers.
    let typed = &page(&js, "multiple")["result"];
    assert_eq!(typed[1], Value::Null, "{typed}");
    assert_eq!(
        typed[0]["tokenId"].as_str().map(str::to_string),
        Some(e.singles[0].1.clone()),
        "{typed}"
    );
    // `getNFTContractMetadata` of an unknown contract: the SDK's nullable answer.
    let unknown = js.iter().find(|c| c["name"] == "unknown").expect("unknown");
    assert!(
        unknown["error"].is_null() && unknown["pages"][0]["raw"].is_null(),
        "{unknown}"
    );

    let mut py_tokens: Vec<Value> = e
        .singles
        .iter()
        .map(|s| json!({"token_address": s.0, "token_id": s.1}))
        .collect();
    py_tokens.insert(1, json!({"token_address": NOBODY, "token_id": "1"}));
    let py = run(&app, python::CLIENT, json!([
        {"name": "multiple", "op": "nft.get_multiple_nfts", "params": {"chain": "eth"}, "body": {"tokens": py_tokens}},
        {"name": "metadata", "op": "nft.get_nft_contract_metadata", "params": {"chain": "eth", "address": c}},
        {"name": "bulk", "op": "nft.get_nft_bulk_contract_metadata", "params": {"chain": "eth"}, "body": {"addresses": [NOBODY, c]}},
        {"name": "stats", "op": "nft.get_nft_collection_stats", "params": {"chain": "eth", "address": c}},
        {"name": "token_stats", "op": "nft.get_nft_token_stats", "params": {"chain": "eth", "address": c, "token_id": token}},
        {"name": "wallet_stats", "op": "wallets.get_wallet_stats", "params": {"chain": "eth", "address": w}},
        {"name": "chains", "op": "wallets.get_wallet_active_chains", "params": {"address": w, "chains": ["eth"]}},
        {"name": "sync", "op": "nft.sync_nft_contract", "params": {"chain": "eth", "address": c}},
        {"name": "range", "op": "nft.get_nft_transfers_from_to_block", "params": {"chain": "eth", "from_block": e.range.0, "to_block": e.range.1, "limit": 7}},
        {"name": "block", "op": "nft.get_nft_transfers_by_block", "params": {"chain": "eth", "block_number_or_hash": e.block.0.to_string(), "limit": 3}},
        {"name": "token_moves", "op": "nft.get_nft_transfers", "params": {"chain": "eth", "address": c, "token_id": token}},
        {"name": "resync", "op": "nft.re_sync_metadata", "params": {"chain": "eth", "address": c, "token_id": token, "flag": "uri", "mode": "async"}},
    ]))
    .await;
    check("Python", &py, &e);
    // One token's moves (`get_nft_transfers`), newest first, walked to the end.
    let want: Vec<Value> = {
        let truth = Truth::demo();
        let mut moves: Vec<(u64, u64)> = truth
            .nft_moves
            .iter()
            .filter(|m| &m.contract == c && hex_to_dec(&m.id_hex) == *token)
            .map(|m| (m.block, m.log))
            .collect();
        moves.sort_unstable_by(|a, b| b.cmp(a));
        moves
            .into_iter()
            .map(|(b, l)| json!([b.to_string(), l]))
            .collect()
    };
    let got: Vec<Value> = page(&py, "token_moves")["raw"]["result"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| json!([r["block_number"], r["log_index"]]))
        .collect();
    assert_eq!(got, want, "Python get_nft_transfers");
    let bulk = &page(&py, "bulk")["raw"];
    assert_eq!(
        bulk.as_array().map(|b| b
            .iter()
            .map(|r| r["token_address"].clone())
            .collect::<Vec<_>>()),
        Some(vec![json!(c)]),
        "{bulk}"
    );
    app.cleanup().await;
}

crate::backend_tests!(sdk_collection_lookups);
