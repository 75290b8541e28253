//! `wallet(...)` on the demo sample: its transfer lists (both orders, date and block bounds,
//! filters, formats, labels) and its holdings (NFTs, collections, token balances), each walked
//! to the end, against the demo's truth and the REST v2.2 routes.

use std::collections::BTreeMap;

use alloy::primitives::U512;
use serde_json::Value;

use crate::common::truth::{hex_to_dec, iso8601, scale, NftMove, Transfer, Truth, ZERO};
use crate::common::{gql_str, Backend, TestApp};
use crate::walk::{s, short_hex, walk, wallet_list, ERC20_FIELDS, HOLDING_FIELDS, MOVE_FIELDS};

/// An ERC20 transfer node against the transfer it stands for.
pub fn check_erc20(truth: &Truth, n: &Value, t: &Transfer) {
    let f = |k: &str| s(&n[k]);
    assert_eq!(
        f("contractAddress").as_deref(),
        Some(t.contract.as_str()),
        "{n}"
    );
    assert_eq!(f("fromWallet").as_deref(), Some(t.from.as_str()), "{n}");
    assert_eq!(f("toWallet").as_deref(), Some(t.to.as_str()), "{n}");
    assert_eq!(f("value").as_deref(), Some(t.value.as_str()), "{n}");
    assert_eq!(f("valueDecimal"), truth.value_decimal(t), "{n}");
    assert_eq!(n["blockNumber"].as_u64(), Some(t.block_number), "{n}");
    assert_eq!(
        f("blockHash").as_deref(),
        Some(t.block_hash.as_str()),
        "{n}"
    );
    assert_eq!(
        f("blockTimestamp").as_deref(),
        Some(t.block_timestamp.as_str()),
        "{n}"
    );
    assert_eq!(
        f("transactionHash").as_deref(),
        Some(t.transaction_hash.as_str()),
        "{n}"
    );
    assert_eq!(
        n["transactionIndex"].as_u64(),
        Some(t.transaction_index),
        "{n}"
    );
    assert_eq!(n["logIndex"].as_u64(), Some(t.log_index), "{n}");
    let meta = truth.meta.get(&t.contract).cloned().unwrap_or_default();
    assert_eq!(f("tokenSymbol"), meta.symbol, "{n}");
    assert_eq!(
        n["tokenDecimals"].as_u64().map(|d| d as u32),
        meta.decimals,
        "{n}"
    );
}

/// An NFT move node against the move it stands for.
pub fn check_move(n: &Value, m: &NftMove) {
    let f = |k: &str| s(&n[k]);
    assert_eq!(
        f("tokenAddress").as_deref(),
        Some(m.contract.as_str()),
        "{n}"
    );
    assert_eq!(f("tokenId"), Some(hex_to_dec(&m.id_hex)), "{n}");
    assert_eq!(f("fromWallet").as_deref(), Some(m.from.as_str()), "{n}");
    assert_eq!(f("toWallet").as_deref(), Some(m.to.as_str()), "{n}");
    assert_eq!(f("amount"), Some(m.amount.to_string()), "{n}");
    let kind = if m.erc1155 { "ERC1155" } else { "ERC721" };
    assert_eq!(f("contractType").as_deref(), Some(kind), "{n}");
    assert_eq!(n["blockNumber"].as_u64(), Some(m.block), "{n}");
    assert_eq!(f("blockTimestamp"), Some(iso8601(m.time)), "{n}");
    assert_eq!(
        f("transactionHash").as_deref(),
        Some(m.transaction_hash.as_str()),
        "{n}"
    );
    assert_eq!(n["logIndex"].as_u64(), Some(m.log), "{n}");
    assert_eq!(
        n["batchIndex"].as_u64(),
        Some(0),
        "the demo has no batches: {n}"
    );
    if !m.erc1155 {
        assert!(n["operator"].is_null(), "ERC721 has no operator: {n}");
    }
}

/// (block, log index) of each node.
pub fn positions(nodes: &[Value]) -> Vec<(u64, u64)> {
    let n = |v: &Value, k: &str| v[k].as_u64().unwrap_or_else(|| panic!("no {k}: {v}"));
    nodes
        .iter()
        .map(|v| (n(v, "blockNumber"), n(v, "logIndex")))
        .collect()
}

/// REST record fields and the GraphQL node fields that answer them.
pub const REST_ERC20: &[(&str, &str)] = &[
    ("address", "contractAddress"),
    ("from_address", "fromWallet"),
    ("from_address_label", "fromWalletLabel"),
    ("to_address", "toWallet"),
    ("to_address_label", "toWalletLabel"),
    ("value", "value"),
    ("value_decimal", "valueDecimal"),
    ("block_number", "blockNumber"),
    ("block_hash", "blockHash"),
    ("block_timestamp", "blockTimestamp"),
    ("transaction_hash", "transactionHash"),
    ("transaction_index", "transactionIndex"),
    ("log_index", "logIndex"),
    ("token_name", "tokenName"),
    ("token_symbol", "tokenSymbol"),
    ("token_logo", "tokenLogo"),
    ("token_decimals", "tokenDecimals"),
    ("possible_spam", "possibleSpam"),
    ("verified_contract", "verifiedCollection"),
];

/// REST record fields of an NFT move and their GraphQL node fields.
pub const REST_MOVE: &[(&str, &str)] = &[
    ("token_address", "tokenAddress"),
    ("token_id", "tokenId"),
    ("from_address", "fromWallet"),
    ("from_address_label", "fromWalletLabel"),
    ("to_address", "toWallet"),
    ("to_address_label", "toWalletLabel"),
    ("amount", "amount"),
    ("contract_type", "contractType"),
    ("block_number", "blockNumber"),
    ("block_hash", "blockHash"),
    ("block_timestamp", "blockTimestamp"),
    ("transaction_hash", "transactionHash"),
    ("transaction_index", "transactionIndex"),
    ("log_index", "logIndex"),
    ("operator", "operator"),
    ("possible_spam", "possibleSpam"),
    ("verified_collection", "verifiedCollection"),
];

/// Every record of a REST route (walked with `limit`) equals the GraphQL node at its place.
pub async fn assert_same_as_rest(
    app: &TestApp,
    uri: &str,
    nodes: &[Value],
    fields: &[(&str, &str)],
) {
    let pages = app
        .walk_rest(
            &format!(
                "{uri}{}limit=100",
                if uri.contains('?') { "&" } else { "?" }
            ),
            100,
        )
        .await;
    let records: Vec<Value> = pages.into_iter().flat_map(|p| p.records).collect();
    assert_eq!(
        records.len(),
        nodes.len(),
        "{uri}: REST and GraphQL list as many records"
    );
    for (r, n) in records.iter().zip(nodes) {
        for (rf, gf) in fields {
            assert_eq!(
                s(&r[*rf]),
                s(&n[*gf]),
                "{uri}: REST {rf} vs GraphQL {gf}\n{r}\n{n}"
            );
        }
    }
}

/// `Wallet.erc20Transfers` and `Wallet.nftTransfers`.
pub async fn wallet_transfers(backend: Backend) {
    let truth = Truth::demo();
    let app = crate::common::spawn(backend).await;
    app.load_demo().await;
    let busy = truth.busiest_wallets();
    let w = busy[1].0.clone();
    let mine = truth.transfers_of(&[&w]);
    assert!(mine.len() > 14, "a busy wallet spans several pages of 7");
    // A label shows on both sides.
    let label = vec![(
        tokenql::types::Address::parse(&w).expect("address"),
        "Busy".to_string(),
    )];
    tokenql::store::meta::upsert_labels(&app.db, tokenql::types::Chain::ETH, &label)
        .await
        .expect("labels");

    let erc20 = |args: String, first: usize| {
        let w = w.clone();
        move |after: &str| wallet_list(&w, "erc20Transfers", first, after, &args, ERC20_FIELDS)
    };
    let path = ["wallet", "erc20Transfers"];
    let got = walk(&app, &path, 7, erc20(String::new(), 7)).await;
    got.assert_synced("wallet erc20Transfers");
    let want: Vec<(u64, u64)> = mine.iter().map(|t| (t.block_number, t.log_index)).collect();
    assert_eq!(positions(&got.nodes), want, "newest first");
    assert_eq!(got.pages(), want.len().div_ceil(7));
    for (n, t) in got.nodes.iter().zip(&mine) {
        check_erc20(&truth, n, t);
        for (side, who) in [("fromWalletLabel", &t.from), ("toWalletLabel", &t.to)] {
            assert_eq!(n[side].as_str() == Some("Busy"), *who == w, "{side}: {n}");
        }
    }
    assert_same_as_rest(
        &app,
        &format!("/api/v2.2/{w}/erc20/transfers"),
        &got.nodes,
        REST_ERC20,
    )
    .await;

    let asc = walk(&app, &path, 7, erc20("order: ASC".into(), 7)).await;
    let mut reversed = want.clone();
    reversed.reverse();
    assert_eq!(positions(&asc.nodes), reversed, "order: ASC");

    // Dates (ISO 8601 and seconds), inclusive; a block bound wins over a date of its side.
    let (lo, hi) = (mine[mine.len() * 3 / 4], mine[mine.len() / 4]);
    assert!(
        lo.block_time < hi.block_time,
        "the transfers span several blocks"
    );
    let inside: Vec<(u64, u64)> = mine
        .iter()
        .filter(|t| (lo.block_time..=hi.block_time).contains(&t.block_time))
        .map(|t| (t.block_number, t.log_index))
        .collect();
    assert!(inside.len() < mine.len(), "the dates leave some out");
    let args = format!(
        "fromDate: {}, toDate: \"{}\"",
        gql_str(&lo.block_timestamp),
        hi.block_time
    );
    let dated = walk(&app, &path, 5, erc20(args, 5)).await;
    assert_eq!(positions(&dated.nodes), inside, "fromDate/toDate");
    let by_block: Vec<(u64, u64)> = mine
        .iter()
        .filter(|t| t.block_number >= lo.block_number && t.block_time <= hi.block_time)
        .map(|t| (t.block_number, t.log_index))
        .collect();
    let args = format!(
        "fromBlock: {}, fromDate: \"2999-01-01\", toDate: \"{}\"",
        lo.block_number, hi.block_time
    );
    let won = walk(&app, &path, 5, erc20(args, 5)).await;
    assert_eq!(
        positions(&won.nodes),
        by_block,
        "fromBlock wins over fromDate"
    );

    // contractAddresses narrows to those tokens.
    let token = mine[0].contract.clone();
    let of_token: Vec<(u64, u64)> = mine
        .iter()
        .filter(|t| t.contract == token)
        .map(|t| (t.block_number, t.log_index))
        .collect();
    let args = format!(
        "contractAddresses: [{}]",
        gql_str(&token.to_uppercase().replace("0X", "0x"))
    );
    let narrowed = walk(&app, &path, 4, erc20(args, 4)).await;
    assert_eq!(positions(&narrowed.nodes), of_token, "contractAddresses");

    nft_moves_of_a_wallet(&app, &truth).await;
    app.cleanup().await;
}

/// The wallet in the most NFT moves (besides the zero address).
pub fn busiest_nft_wallet(truth: &Truth) -> String {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for m in &truth.nft_moves {
        for w in [&m.from, &m.to] {
            if w != ZERO {
                *counts.entry(w).or_default() += 1;
            }
        }
    }
    counts
        .iter()
        .max_by_key(|(a, n)| (**n, std::cmp::Reverse(**a)))
        .map(|(a, _)| a.to_string())
        .expect("NFT moves in the demo")
}

async fn nft_moves_of_a_wallet(app: &TestApp, truth: &Truth) {
    let w = busiest_nft_wallet(truth);
    let mine: Vec<&NftMove> = truth
        .nft_moves
        .iter()
        .filter(|m| m.from == w || m.to == w)
        .collect();
    assert!(mine.len() > 14, "the busiest NFT wallet spans pages of 7");
    let moves = |args: String, first: usize| {
        let w = w.clone();
        move |after: &str| wallet_list(&w, "nftTransfers", first, after, &args, MOVE_FIELDS)
    };
    let path = ["wallet", "nftTransfers"];
    let got = walk(app, &path, 7, moves(String::new(), 7)).await;
    got.assert_synced("wallet nftTransfers");
    let want: Vec<(u64, u64)> = mine.iter().map(|m| (m.block, m.log)).collect();
    assert_eq!(positions(&got.nodes), want, "newest first");
    for (n, m) in got.nodes.iter().zip(&mine) {
        check_move(n, m);
    }
    assert_same_as_rest(
        app,
        &format!("/api/v2.2/{w}/nft/transfers"),
        &got.nodes,
        REST_MOVE,
    )
    .await;

    let asc = walk(app, &path, 5, moves("order: ASC".into(), 5)).await;
    let mut reversed = want.clone();
    reversed.reverse();
    assert_eq!(positions(&asc.nodes), reversed, "order: ASC");

    let (lo, hi) = (mine[mine.len() * 3 / 4], mine[mine.len() / 4]);
    let inside: Vec<(u64, u64)> = mine
        .iter()
        .filter(|m| (lo.time..=hi.time).contains(&m.time))
        .map(|m| (m.block, m.log))
        .collect();
    let args = format!(
        "fromDate: {}, toDate: \"{}\"",
        gql_str(&iso8601(lo.time)),
        hi.time
    );
    assert_eq!(
        positions(&walk(app, &path, 4, moves(args, 4)).await.nodes),
        inside,
        "dates"
    );
    let by_block: Vec<(u64, u64)> = mine
        .iter()
        .filter(|m| m.block <= hi.block && m.time >= lo.time)
        .map(|m| (m.block, m.log))
        .collect();
    let args = format!(
        "toBlock: {}, toDate: \"1000\", fromDate: \"{}\"",
        hi.block, lo.time
    );
    assert_eq!(
        positions(&walk(app, &path, 4, moves(args, 4)).await.nodes),
        by_block,
        "toBlock wins"
    );
    let one = mine[0].contract.clone();
    let of_one: Vec<(u64, u64)> = mine
        .iter()
        .filter(|m| m.contract == one)
        .map(|m| (m.block, m.log))
        .collect();
    let args = format!("contractAddresses: [{}]", gql_str(&one));
    assert_eq!(
        positions(&walk(app, &path, 3, moves(args, 3)).await.nodes),
        of_one,
        "contractAddresses"
    );

    // Hex ids, and the moved token reached from each move.
    let q = wallet_list(
        &w,
        "nftTransfers",
        10,
        "",
        "tokenIdFormat: HEX",
        "tokenId nft { tokenAddress tokenId tokenHash }",
    );
    let data = app.graphql_ok(&q, Value::Null).await;
    let edges = data["wallet"]["nftTransfers"]["edges"]
        .as_array()
        .expect("edges")
        .clone();
    for (e, m) in edges.iter().zip(&mine) {
        let n = &e["node"];
        assert_eq!(s(&n["tokenId"]), Some(short_hex(&m.id_hex)), "{n}");
        assert_eq!(n["nft"]["tokenId"], n["tokenId"], "{n}");
        assert_eq!(
            s(&n["nft"]["tokenAddress"]).as_deref(),
            Some(m.contract.as_str()),
            "{n}"
        );
        assert_eq!(
            s(&n["nft"]["tokenHash"]),
            Some(token_hash(&m.contract, &hex_to_dec(&m.id_hex)))
        );
    }
}

/// `token_hash` computed here: the first 16 bytes of SHA-256("1:{contract}:{decimal id}").
pub fn token_hash(contract: &str, id: &str) -> String {
    use sha2::{Digest, Sha256};
    let d = Sha256::digest(format!("1:{contract}:{id}").as_bytes());
    d[..16].iter().map(|b| format!("{b:02x}")).collect()
}

/// `Wallet.nfts`, `Wallet.nftCollections` and `Wallet.tokenBalances`.
pub async fn wallet_holdings_and_balances(backend: Backend) {
    let truth = Truth::demo();
    let app = crate::common::spawn(backend).await;
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
