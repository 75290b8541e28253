//! A page costs a constant number of SQL statements, whatever its size: related data (contract
//! metadata, token rows, labels, media, and the objects a node links to) comes through
//! DataLoaders, one batch per kind per page. This holds for the two flat connections and for
//! every list of the graph. Statements are counted with sea-orm's metric callback on the
//! connection.

/// The demo's truth, decoded independently (to pick wallets with several records).
use crate::support::common::truth;

use std::sync::atomic::Ordering;

use serde_json::{json, Value};

use crate::support::graphql::*;

/// Executes `query` with `first` and returns (records on the page, statements executed).
async fn measure(env: &Env, query: &str, first: usize) -> (usize, usize) {
    env.statements.store(0, Ordering::SeqCst);
    let data = env.data(query, json!({ "first": first })).await;
    let statements = env.statements.load(Ordering::SeqCst);
    let conn = data
        .as_object()
        .and_then(|o| o.values().next())
        .cloned()
        .unwrap_or(Value::Null);
    let records = conn["edges"].as_array().map(Vec::len).unwrap_or_default();
    (records, statements)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_of_transfers_costs_the_same_statements_at_10_and_100_records() {
    let env = setup().await;
    // Label a few wallets of the newest transfers so that labels are really resolved.
    let newest = env
        .data(
            "{ erc20Transfers(first: 100) { edges { node { fromWallet toWallet } } } }",
            json!({}),
        )
        .await;
    let wallets: Vec<&str> = newest["erc20Transfers"]["edges"]
        .as_array()
        .unwrap()
        .iter()
        .step_by(7)
        .map(|e| e["node"]["toWallet"].as_str().unwrap())
        .collect();
    env.label(&wallets, "labelled").await;

    let query = format!(
        "query($first: Int!) {{ erc20Transfers(first: $first) {{ status
            pageInfo {{ hasNextPage endCursor }} edges {{ cursor node {{ {TRANSFER_FIELDS} }} }} }} }}"
    );
    let (n10, s10) = measure(&env, &query, 10).await;
    let (n100, s100) = measure(&env, &query, 100).await;
    assert_eq!((n10, n100), (10, 100));
    assert!(s10 > 0);
    assert_eq!(s10, s100, "statements for 10 records vs 100 records");
    // The page, the sync status, the hash of the block the walk is pinned to, contract
    // metadata, labels.
    assert!(s100 <= 5, "{s100} statements for one page");

    // Labels really came through.
    let data = env.data(&query, json!({ "first": 100 })).await;
    let labelled = data["erc20Transfers"]["edges"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["node"]["toWalletLabel"] == "labelled")
        .count();
    assert!(labelled >= wallets.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_of_nfts_costs_the_same_statements_at_10_and_38_records() {
    let env = setup().await;
    let query = format!(
        "query($first: Int!) {{ nftsByWallet(address: \"{NFT_WALLET}\", first: $first) {{
            totalCount status pageInfo {{ hasNextPage endCursor }}
            edges {{ cursor node {{ {NFT_FIELDS} }} }} }} }}"
    );
    let (n10, s10) = measure(&env, &query, 10).await;
    let (nall, sall) = measure(&env, &query, 100).await;
    assert_eq!((n10, nall), (10, WALLET_NFTS));
    assert!(s10 > 0);
    assert_eq!(
        s10, sall,
        "statements for 10 records vs {WALLET_NFTS} records"
    );
    // The page, the count, the sync status (2), the hash of the block the walk is pinned to,
    // contract metadata, token rows.
    assert!(sall <= 7, "{sall} statements for one page");
}

/// `totalCount` is counted once per walk: deeper pages take it from their cursor, so a deep
/// walk through a whale's NFTs costs no count per page, and every page reports the same total.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_walk_counts_its_total_once() {
    let env = setup().await;
    let query = |with_total: bool| {
        format!(
            "query($first: Int!, $after: String) {{ nftsByWallet(address: \"{NFT_WALLET}\",
                first: $first, after: $after) {{ {} pageInfo {{ endCursor }} }} }}",
            if with_total { "totalCount" } else { "" }
        )
    };
    let run = |q: String, after: Value| {
        let env = &env;
        async move {
            env.statements.store(0, Ordering::SeqCst);
            let data = env.data(&q, json!({ "first": 5, "after": after })).await;
            let conn = data["nftsByWallet"].clone();
            (conn, env.statements.load(Ordering::SeqCst))
        }
    };
    let (p1, with_count) = run(query(true), Value::Null).await;
    let (_, without_count) = run(query(false), Value::Null).await;
    assert_eq!(with_count, without_count + 1, "page 1 counts");
    assert_eq!(p1["totalCount"], json!(WALLET_NFTS));
    let mut after = p1["pageInfo"]["endCursor"].clone();
    for page in 2..=4 {
        let (p, statements) = run(query(true), after.clone()).await;
        assert_eq!(
            statements, without_count,
            "page {page} does not count again"
        );
        assert_eq!(p["totalCount"], json!(WALLET_NFTS), "page {page}");
        after = p["pageInfo"]["endCursor"].clone();
    }
    // A walk that did not ask on page 1 counts on the first page that asks.
    let (p1, _) = run(query(false), Value::Null).await;
    let (p2, statements) = run(query(true), p1["pageInfo"]["endCursor"].clone()).await;
    assert_eq!(statements, without_count + 1);
    assert_eq!(p2["totalCount"], json!(WALLET_NFTS));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unselected_related_data_costs_nothing() {
    let env = setup().await;
    let (_, bare) = measure(
        &env,
        "query($first: Int!) { erc20Transfers(first: $first) { edges { node { value } } } }",
        100,
    )
    .await;
    let (_, with_meta) = measure(
        &env,
        "query($first: Int!) { erc20Transfers(first: $first) { edges { node { value tokenSymbol } } } }",
        100,
    )
    .await;
    assert_eq!(with_meta, bare + 1);
}

/// Runs `query` once with `first: 100` (so that first-time side effects, such as queueing
/// media, are done), then measures it with `small` and with 100: (records, statements) each.
async fn measure_pair(env: &Env, query: &str, path: &[&str], small: usize) -> [(usize, usize); 2] {
    let run = |first: usize| async move {
        env.statements.store(0, Ordering::SeqCst);
        let data = env.data(query, json!({ "first": first })).await;
        let statements = env.statements.load(Ordering::SeqCst);
        let conn = path.iter().fold(&data, |v, k| &v[*k]);
        let records = conn["edges"].as_array().map(Vec::len).unwrap_or_default();
        (records, statements)
    };
    run(100).await;
    [run(small).await, run(100).await]
}

/// The address that appears most often in `field` of the nodes of `data`'s connection.
fn most_frequent(conn: &Value, field: &str) -> String {
    let mut counts = std::collections::BTreeMap::<String, usize>::new();
    for e in conn["edges"].as_array().into_iter().flatten() {
        if let Some(a) = e["node"][field].as_str() {
            *counts.entry(a.to_string()).or_default() += 1;
        }
    }
    counts
        .into_iter()
        .filter(|(a, _)| a != "0x0000000000000000000000000000000000000000")
        .max_by_key(|(a, n)| (*n, std::cmp::Reverse(a.clone())))
        .map(|(a, _)| a)
        .expect("an address")
}

/// Of the addresses in `field` of the nodes of `conn`, the one whose `list` has the most
/// records.
async fn richest(env: &Env, conn: &Value, field: &str, list: &str) -> String {
    let mut best = (0, String::new());
    let mut seen = std::collections::BTreeSet::new();
    for e in conn["edges"].as_array().into_iter().flatten() {
        let Some(a) = e["node"][field].as_str() else {
            continue;
        };
        if !seen.insert(a.to_string()) {
            continue;
        }
        let q = format!(
            "{{ wallet(address: \"{a}\") {{ {list}(first: 100) {{ edges {{ cursor }} }} }} }}"
        );
        let data = env.data(&q, json!({})).await;
        let n = data["wallet"][list]["edges"]
            .as_array()
            .map(Vec::len)
            .unwrap_or(0);
        if n > best.0 {
            best = (n, a.to_string());
        }
    }
    best.1
}

/// The addresses whose lists the graph test measures, each with several records.
struct Subjects {
    /// The most frequent USDT sender (labelled).
    busy: String,
    /// A wallet with several token balances.
    holder: String,
    /// The wallet holding the most collections.
    collector: String,
    /// The collection of most of [`NFT_WALLET`]'s moves.
    collection: String,
}

async fn subjects(env: &Env) -> Subjects {
    let q = format!(
        "{{ token(address: \"{USDT}\") {{ transfers(first: 100) {{ edges {{ node {{ fromWallet }} }} }} }} }}"
    );
    let usdt = env.data(&q, json!({})).await;
    let busy = most_frequent(&usdt["token"]["transfers"], "fromWallet");
    env.label(&[&busy], "busy").await;
    let q = format!(
        "{{ wallet(address: \"{NFT_WALLET}\") {{ nftTransfers(first: 100) {{ edges {{ node {{ tokenAddress }} }} }} }} }}"
    );
    let moves = env.data(&q, json!({})).await;
    let collection = most_frequent(&moves["wallet"]["nftTransfers"], "tokenAddress");
    let q = "{ erc20Transfers(first: 100) { edges { node { toWallet } } } }";
    let all = env.data(q, json!({})).await;
    let holder = richest(env, &all["erc20Transfers"], "toWallet", "tokenBalances").await;
    let collector = truth::Truth::demo()
        .nfts
        .iter()
        .max_by_key(|(w, nfts)| {
            let collections: std::collections::BTreeSet<&str> =
                nfts.iter().map(|n| n.contract.as_str()).collect();
            (collections.len(), std::cmp::Reverse(w.to_string()))
        })
        .map(|(w, _)| w.clone())
        .expect("a holder");
    Subjects {
        busy,
        holder,
        collector,
        collection,
    }
}

/// Every field of an NFT's own data (`CollectionNft` has them).
const NFT_OWN: &str = "tokenAddress tokenId contractType tokenHash tokenUri metadata \
    media { status } blockNumberMinted minterAddress lastTokenUriSync lastMetadataSync name \
    symbol possibleSpam verifiedCollection";

/// Every field of `NftTransfer`.
const MOVE: &str = "tokenAddress tokenId contractType fromWallet toWallet fromWalletLabel \
    toWalletLabel operator amount blockNumber blockHash blockTimestamp transactionHash \
    transactionIndex logIndex batchIndex name symbol possibleSpam verifiedCollection";

/// (query with `$first`, path to the list, what it is) for every list of the graph.
fn graph_lists(x: &Subjects) -> Vec<(String, [&'static str; 2], &'static str)> {
    let q = |root: &'static str, address: &str, list: &'static str, fields: &str| {
        let query = format!(
            "query($first: Int!) {{ {root}(address: \"{address}\") {{ {list}(first: $first) {{
                status pageInfo {{ hasNextPage endCursor }} edges {{ cursor node {{ {fields} }} }}
            }} }} }}"
        );
        (query, [root, list])
    };
    let holding = format!("{NFT_FIELDS} media {{ status }}");
    let balance = "balance balanceDecimal token { address name symbol decimals logo possibleSpam }";
    let held = "count collection { address contractType name symbol possibleSpam }";
    let tokens = format!("ownerOf amount blockNumber {NFT_OWN}");
    let c = x.collection.as_str();
    let lists = [
        (
            q("wallet", &x.busy, "erc20Transfers", TRANSFER_FIELDS),
            "a wallet's ERC20 transfers",
        ),
        (
            q("token", USDT, "transfers", TRANSFER_FIELDS),
            "a token's transfers",
        ),
        (
            q("wallet", &x.holder, "tokenBalances", balance),
            "a wallet's balances",
        ),
        (q("wallet", NFT_WALLET, "nfts", &holding), "a wallet's NFTs"),
        (
            q("wallet", NFT_WALLET, "nftTransfers", MOVE),
            "a wallet's NFT moves",
        ),
        (
            q("wallet", &x.collector, "nftCollections", held),
            "a wallet's collections",
        ),
        (
            q("nftCollection", c, "owners", &holding),
            "a collection's owners",
        ),
        (
            q("nftCollection", c, "transfers", MOVE),
            "a collection's moves",
        ),
        (
            q("nftCollection", c, "nfts", &tokens),
            "a collection's tokens",
        ),
    ];
    lists
        .into_iter()
        .map(|((query, path), what)| (query, path, what))
        .collect()
}

/// Every list of the graph, with every field of its nodes and of the objects they link to,
/// costs the same statements for a page of 2 as for a page of up to 100.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_list_of_the_graph_costs_the_same_statements_at_any_page_size() {
    let env = setup().await;
    let cases = graph_lists(&subjects(&env).await);
    let mut grew = 0;
    for (query, path, what) in &cases {
        let [(n_small, s_small), (n_big, s_big)] = measure_pair(&env, query, path, 2).await;
        assert!(n_small > 0, "{what}: no records");
        assert_eq!(
            s_small, s_big,
            "{what}: statements for {n_small} vs {n_big} records"
        );
        // The page, its status (up to 3), and one batch per kind of related data.
        assert!(s_big <= 8, "{what}: {s_big} statements for one page");
        grew += usize::from(n_big > n_small);
    }
    assert_eq!(
        grew,
        cases.len(),
        "every list has more than 2 records (or the test proves little)"
    );
}
