//! `wallet(...)`'s holdings on the demo sample: `nfts`, `nftCollections` and `tokenBalances`,
//! each walked to the end against the demo's truth and the REST v2.2 routes.

use std::collections::BTreeMap;

use alloy::primitives::U512;
use serde_json::Value;

use super::walk::{s, walk, wallet_list, HOLDING_FIELDS};
use crate::support::common::truth::{scale, Transfer, Truth, ZERO};
use crate::support::common::{gql_str, Backend, TestApp};

/// `Wallet.nfts`, `Wallet.nftCollections` and `Wallet.tokenBalances`.
pub async fn wallet_holdings_and_balances(backend: Backend) {
    let truth = Truth::demo();
    let app = crate::support::common::spawn(backend).await;
    app.load_demo().await;

    // The biggest holder's NFTs: the same as nftsByWallet, and as the truth.
    let (top, held) = truth
        .nfts
        .iter()
        .max_by_key(|(_, v)| v.len())
        .expect("a holder");
    let list = |first: usize| {
        let top = top.clone();
        move |after: &str| wallet_list(&top, "nfts", first, after, "", HOLDING_FIELDS)
    };
    let got = walk(&app, &["wallet", "nfts"], 7, list(7)).await;
    got.assert_synced("wallet nfts");
    let keys: Vec<(String, String, String, String)> = got
        .nodes
        .iter()
        .map(|n| {
            (
                s(&n["tokenAddress"]).unwrap_or_default(),
                s(&n["tokenId"]).unwrap_or_default(),
                s(&n["ownerOf"]).unwrap_or_default(),
                s(&n["amount"]).unwrap_or_default(),
            )
        })
        .collect();
    let want: Vec<_> = held
        .iter()
        .map(|n| {
            (
                n.contract.clone(),
                n.token_id.clone(),
                n.owner.clone(),
                n.amount.clone(),
            )
        })
        .collect();
    assert_eq!(keys, want, "wallet nfts of {top}");
    let flat = app.gql_nfts(top, 100).await;
    for (g, f) in got.nodes.iter().zip(&flat) {
        for k in [
            "tokenAddress",
            "tokenId",
            "blockNumber",
            "tokenHash",
            "name",
            "symbol",
            "possibleSpam",
        ] {
            assert_eq!(g[k], f[k], "wallet.nfts vs nftsByWallet: {k}");
        }
    }

    collections_of_a_wallet(&app, &truth).await;
    balances_of_a_wallet(&app, &truth).await;
    app.cleanup().await;
}

async fn collections_of_a_wallet(app: &TestApp, truth: &Truth) {
    // The wallet holding the most collections, and its count of tokens in each.
    let mut per_wallet: BTreeMap<&str, BTreeMap<&str, (u64, &str)>> = BTreeMap::new();
    for (w, nfts) in &truth.nfts {
        for n in nfts {
            let e = per_wallet
                .entry(w)
                .or_default()
                .entry(&n.contract)
                .or_insert((0, &n.contract_type));
            e.0 += 1;
        }
    }
    let (w, want) = per_wallet
        .iter()
        .max_by_key(|(w, m)| (m.len(), std::cmp::Reverse(**w)))
        .expect("holders");
    assert!(want.len() > 3, "the wallet holds several collections");
    let fields =
        "count collection { address contractType name symbol possibleSpam verifiedCollection }";
    let list = |args: &'static str| {
        let w = w.to_string();
        move |after: &str| wallet_list(&w, "nftCollections", 3, after, args, fields)
    };
    let got = walk(app, &["wallet", "nftCollections"], 3, list("")).await;
    got.assert_synced("wallet nftCollections");
    let keys: Vec<(String, u64, String)> = got
        .nodes
        .iter()
        .map(|n| {
            (
                s(&n["collection"]["address"]).unwrap_or_default(),
                n["count"].as_u64().unwrap_or(0),
                s(&n["collection"]["contractType"]).unwrap_or_default(),
            )
        })
        .collect();
    let expected: Vec<(String, u64, String)> = want
        .iter()
        .map(|(c, (n, t))| (c.to_string(), *n, t.to_string()))
        .collect();
    assert_eq!(keys, expected, "{w}'s collections");
    // The same as REST's, field by field.
    let pages = app
        .walk_rest(
            &format!("/api/v2.2/{w}/nft/collections?limit=100&token_counts=true"),
            100,
        )
        .await;
    let records: Vec<Value> = pages.into_iter().flat_map(|p| p.records).collect();
    assert_eq!(records.len(), got.nodes.len());
    for (r, n) in records.iter().zip(&got.nodes) {
        let c = &n["collection"];
        for (rf, gv) in [
            ("token_address", &c["address"]),
            ("contract_type", &c["contractType"]),
            ("name", &c["name"]),
            ("symbol", &c["symbol"]),
            ("possible_spam", &c["possibleSpam"]),
            ("verified_collection", &c["verifiedCollection"]),
            ("count", &n["count"]),
        ] {
            assert_eq!(s(&r[rf]), s(gv), "collections: {rf}\n{r}\n{n}");
        }
    }
    let kept: Vec<&Value> = got
        .nodes
        .iter()
        .filter(|n| n["collection"]["possibleSpam"] != true)
        .collect();
    let no_spam = walk(
        app,
        &["wallet", "nftCollections"],
        3,
        list("excludeSpam: true"),
    )
    .await;
    assert_eq!(
        no_spam.nodes.iter().collect::<Vec<_>>(),
        kept,
        "excludeSpam"
    );

    // Walking on: from the wallet's first collection to its owners; the wallet is one of them.
    let first = &expected[0].0;
    let q = format!(
        "{{ wallet(address: {}) {{ nftCollections(first: 1) {{ edges {{ node {{ collection {{
            owners(first: 100) {{ edges {{ node {{ tokenAddress ownerOf }} }} }} }} }} }} }} }} }}",
        gql_str(w)
    );
    let data = app.graphql_ok(&q, Value::Null).await;
    let owners =
        &data["wallet"]["nftCollections"]["edges"][0]["node"]["collection"]["owners"]["edges"];
    let owners = owners.as_array().expect("owners");
    assert!(
        owners
            .iter()
            .all(|o| o["node"]["tokenAddress"] == first.as_str()),
        "{owners:?}"
    );
    assert!(
        owners.iter().any(|o| o["node"]["ownerOf"] == *w),
        "{w} among the owners of {first}"
    );
}

/// The wallet's balances (after `to_block`) computed here from its transfers: received minus
/// sent, per token; negative sums (history before the sample) and zeros left out; by token
/// address.
fn balances(truth: &Truth, w: &str, to_block: Option<u64>) -> Vec<(String, String)> {
    let mut sums: BTreeMap<&str, (U512, U512)> = BTreeMap::new();
    let upto = |t: &&Transfer| to_block.is_none_or(|b| t.block_number <= b);
    for t in truth.transfers_of(&[w]).into_iter().filter(upto) {
        let v: U512 = t.value.parse().expect("decimal value");
        let e = sums.entry(&t.contract).or_default();
        if t.to == w {
            e.0 += v;
        }
        if t.from == w {
            e.1 += v;
        }
    }
    sums.into_iter()
        .filter(|(_, (i, o))| i > o)
        .map(|(c, (i, o))| (c.to_string(), (i - o).to_string()))
        .collect()
}

async fn balances_of_a_wallet(app: &TestApp, truth: &Truth) {
    // The busiest wallets, until one has balances on several pages of 2.
    let w = truth
        .busiest_wallets()
        .into_iter()
        .map(|(w, _)| w)
        .find(|w| w != ZERO && balances(truth, w, None).len() > 2)
        .expect("a wallet with several balances");
    let want = balances(truth, &w, None);
    let fields = "balance balanceDecimal token { address name symbol decimals possibleSpam }";
    let list = |first: usize, args: String| {
        let w = w.clone();
        move |after: &str| wallet_list(&w, "tokenBalances", first, after, &args, fields)
    };
    let got = walk(app, &["wallet", "tokenBalances"], 2, list(2, String::new())).await;
    got.assert_synced("wallet tokenBalances");
    let keys: Vec<(String, String)> = got
        .nodes
        .iter()
        .map(|n| {
            (
                s(&n["token"]["address"]).unwrap_or_default(),
                s(&n["balance"]).unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(keys, want, "balances of {w}");
    for n in &got.nodes {
        let token = s(&n["token"]["address"]).unwrap_or_default();
        let meta = truth.meta.get(&token).cloned().unwrap_or_default();
        assert_eq!(s(&n["token"]["symbol"]), meta.symbol, "{n}");
        let dec = meta
            .decimals
            .map(|d| scale(&s(&n["balance"]).unwrap_or_default(), d));
        assert_eq!(s(&n["balanceDecimal"]), dec, "{n}");
    }
    let (status, _, body) = app
        .get_rest(&format!("/api/v2.2/{w}/erc20?chain=eth"))
        .await;
    assert_eq!(status, 200, "{body}");
    let rest: Vec<(String, String)> = body
        .as_array()
        .or_else(|| body["result"].as_array())
        .expect("REST balances")
        .iter()
        .map(|r| {
            (
                s(&r["token_address"]).unwrap_or_default(),
                s(&r["balance"]).unwrap_or_default(),
            )
        })
        .collect();
    let mut sorted = rest.clone();
    sorted.sort();
    assert_eq!(sorted, want, "REST and GraphQL balances");

    // tokenAddresses narrows; toBlock takes the balances of an earlier block.
    let one = &want[want.len() - 1].0;
    let args = format!("tokenAddresses: [{}]", gql_str(one));
    let narrowed = walk(app, &["wallet", "tokenBalances"], 2, list(2, args)).await;
    assert_eq!(narrowed.nodes.len(), 1, "tokenAddresses");
    let mine = truth.transfers_of(&[&w]);
    let block = mine[mine.len() / 2].block_number;
    let earlier = walk(
        app,
        &["wallet", "tokenBalances"],
        2,
        list(2, format!("toBlock: {block}")),
    )
    .await;
    let keys: Vec<(String, String)> = earlier
        .nodes
        .iter()
        .map(|n| {
            (
                s(&n["token"]["address"]).unwrap_or_default(),
                s(&n["balance"]).unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(keys, balances(truth, &w, Some(block)), "toBlock: {block}");
}
