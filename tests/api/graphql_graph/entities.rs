//! `token(...)` and `nftCollection(...)` on the demo sample: metadata, and every list walked to
//! the end against the demo's truth and the REST v2.2 routes.

use std::collections::BTreeMap;

use serde_json::Value;

use super::checks::{
    assert_same_as_rest, check_erc20, check_holding, check_move, positions, REST_ERC20, REST_MOVE,
    REST_OWNER,
};
use super::walk::{call, conn, s, walk, ERC20_FIELDS, HOLDING_FIELDS, MOVE_FIELDS};
use crate::support::common::truth::{hex_to_dec, Nft, NftMove, Transfer, Truth, ZERO};
use crate::support::common::{gql_str, Backend, TestApp};

/// `<entry>(address: .., <more>)`: an entry point of the graph.
pub fn entry(name: &str, address: &str, more: &str) -> String {
    format!("{name}(address: {}{more})", gql_str(address))
}

/// `{ <entry> { <list>(..) <selection> } }`.
pub fn list_of(
    entry: &str,
    list: &str,
    first: usize,
    after: &str,
    args: &str,
    fields: &str,
) -> String {
    format!(
        "{{ {entry} {{ {} {} }} }}",
        call(list, first, after, args),
        conn(fields)
    )
}

/// Every holding of the demo, by (token id, owner) within each collection.
fn holdings(truth: &Truth) -> BTreeMap<&str, Vec<&Nft>> {
    let mut by: BTreeMap<&str, Vec<&Nft>> = BTreeMap::new();
    for n in truth.nfts.values().flatten() {
        by.entry(&n.contract).or_default().push(n);
    }
    for v in by.values_mut() {
        v.sort_by(|a, b| (&a.token_id_hex, &a.owner).cmp(&(&b.token_id_hex, &b.owner)));
    }
    by
}

/// `token(...)` and `nftCollection(...)`.
pub async fn token_and_collection_entry_points(backend: Backend) {
    let truth = Truth::demo();
    let app = crate::support::common::spawn(backend).await;
    app.load_demo().await;

    // The token of the busiest wallet's newest transfer: metadata and transfers.
    let w = truth.busiest_wallets()[1].0.clone();
    let token = truth.transfers_of(&[&w])[0].contract.clone();
    let meta = truth.meta.get(&token).cloned().unwrap_or_default();
    let q = format!("{{ token(address: {}) {{ address name symbol decimals logo possibleSpam verifiedContract }} }}", gql_str(&token.to_uppercase().replace("0X", "0x")));
    let t = app.graphql_ok(&q, Value::Null).await["token"].clone();
    assert_eq!(s(&t["address"]).as_deref(), Some(token.as_str()), "{t}");
    assert_eq!(
        (s(&t["name"]), s(&t["symbol"])),
        (meta.name, meta.symbol),
        "{t}"
    );
    assert_eq!(
        t["decimals"].as_u64().map(|d| d as u32),
        meta.decimals,
        "{t}"
    );
    let of_token: Vec<&Transfer> = truth
        .transfers
        .iter()
        .filter(|t| t.contract == token)
        .collect();
    let want: Vec<(u64, u64)> = of_token
        .iter()
        .map(|t| (t.block_number, t.log_index))
        .collect();
    let transfers = |first: usize, args: &'static str| {
        let token = token.clone();
        move |after: &str| {
            list_of(
                &entry("token", &token, ""),
                "transfers",
                first,
                after,
                args,
                ERC20_FIELDS,
            )
        }
    };
    let got = walk(&app, &["token", "transfers"], 9, transfers(9, "")).await;
    got.assert_synced("token transfers");
    assert_eq!(
        positions(&got.nodes),
        want,
        "{token}'s transfers, newest first"
    );
    for (n, t) in got.nodes.iter().zip(&of_token) {
        check_erc20(&truth, n, t);
    }
    let asc = walk(
        &app,
        &["token", "transfers"],
        100,
        transfers(100, "order: ASC"),
    )
    .await;
    let mut reversed = want.clone();
    reversed.reverse();
    assert_eq!(positions(&asc.nodes), reversed, "order: ASC");
    let rest = REST_ERC20;
    assert_same_as_rest(
        &app,
        &format!("/api/v2.2/erc20/{token}/transfers"),
        &got.nodes,
        rest,
    )
    .await;
    // A token tokenql knows nothing of: no metadata, no transfers, a complete answer.
    let nobody = "0x00000000000000000000000000000000000000ff";
    let q = list_of(&entry("token", nobody, ""), "transfers", 5, "", "", "value");
    let t = app
        .graphql_ok(
            &q.replacen("{ transfers", "{ name transfers", 1),
            Value::Null,
        )
        .await;
    assert!(t["token"]["name"].is_null(), "{t}");
    assert_eq!(
        t["token"]["transfers"]["edges"],
        serde_json::json!([]),
        "{t}"
    );
    assert_eq!(t["token"]["transfers"]["status"], "SYNCED", "{t}");

    collection_lists(&app, &truth).await;
    app.cleanup().await;
}

async fn collection_lists(app: &TestApp, truth: &Truth) {
    let by = holdings(truth);
    let (c, held) = by
        .iter()
        .max_by_key(|(a, v)| (v.len(), std::cmp::Reverse(**a)))
        .expect("holdings");
    let c = c.to_string();
    assert!(held.len() > 7, "the biggest collection spans pages of 7");
    let list = |name: &'static str, first: usize, args: &'static str, fields: &'static str| {
        let c = c.clone();
        move |after: &str| {
            list_of(
                &entry("nftCollection", &c, ""),
                name,
                first,
                after,
                args,
                fields,
            )
        }
    };

    // Owners: one record per (token, owner), by token id then owner.
    let got = walk(
        app,
        &["nftCollection", "owners"],
        7,
        list("owners", 7, "", HOLDING_FIELDS),
    )
    .await;
    got.assert_synced("collection owners");
    assert_eq!(got.nodes.len(), held.len(), "owners of {c}");
    for (n, h) in got.nodes.iter().zip(held) {
        check_holding(n, h);
    }
    assert_same_as_rest(
        app,
        &format!("/api/v2.2/nft/{c}/owners"),
        &got.nodes,
        REST_OWNER,
    )
    .await;

    // Its tokens: one record per held token id, with its holder when there is one.
    let mut tokens: BTreeMap<&str, Vec<&Nft>> = BTreeMap::new();
    for h in held {
        tokens.entry(&h.token_id_hex).or_default().push(h);
    }
    let fields = "ownerOf amount blockNumber tokenAddress tokenId contractType tokenHash";
    let got = walk(
        app,
        &["nftCollection", "nfts"],
        5,
        list("nfts", 5, "", fields),
    )
    .await;
    got.assert_synced("collection nfts");
    assert_eq!(got.nodes.len(), tokens.len(), "{c}'s held tokens");
    for (n, (id_hex, holders)) in got.nodes.iter().zip(&tokens) {
        assert_eq!(s(&n["tokenId"]), Some(hex_to_dec(id_hex)), "{n}");
        assert_eq!(s(&n["tokenAddress"]).as_deref(), Some(c.as_str()), "{n}");
        let owner = (holders.len() == 1).then(|| holders[0].owner.clone());
        assert_eq!(s(&n["ownerOf"]), owner, "{n}");
        let amount: u128 = holders
            .iter()
            .map(|h| h.amount.parse::<u128>().expect("amount"))
            .sum();
        assert_eq!(s(&n["amount"]), Some(amount.to_string()), "{n}");
        let latest = holders.iter().map(|h| h.block_number).max();
        assert_eq!(n["blockNumber"].as_u64(), latest, "{n}");
        assert_eq!(
            s(&n["contractType"]).as_deref(),
            Some(holders[0].contract_type.as_str())
        );
    }
    let pages = app
        .walk_rest(&format!("/api/v2.2/nft/{c}?limit=100"), 100)
        .await;
    let records: Vec<Value> = pages.into_iter().flat_map(|p| p.records).collect();
    assert_eq!(
        records.len(),
        got.nodes.len(),
        "REST's and GraphQL's tokens of {c}"
    );
    for (r, n) in records.iter().zip(&got.nodes) {
        assert_eq!(s(&r["token_id"]), s(&n["tokenId"]), "{r}\n{n}");
        assert_eq!(s(&r["token_hash"]), s(&n["tokenHash"]), "{r}\n{n}");
        assert_eq!(s(&r["amount"]), s(&n["amount"]), "{r}\n{n}");
    }

    // Its moves, mints and burns included, both orders; and a collection with a burn.
    let burned = &truth
        .nft_moves
        .iter()
        .find(|m| m.to == ZERO && m.from != ZERO)
        .expect("a burn")
        .contract;
    let minted = &truth
        .nft_moves
        .iter()
        .find(|m| m.from == ZERO)
        .expect("a mint")
        .contract;
    for coll in [c.as_str(), burned.as_str(), minted.as_str()] {
        let of: Vec<&NftMove> = truth
            .nft_moves
            .iter()
            .filter(|m| m.contract == coll)
            .collect();
        let want: Vec<(u64, u64)> = of.iter().map(|m| (m.block, m.log)).collect();
        let moves = |first: usize, args: &'static str| {
            let coll = coll.to_string();
            move |after: &str| {
                list_of(
                    &entry("nftCollection", &coll, ""),
                    "transfers",
                    first,
                    after,
                    args,
                    MOVE_FIELDS,
                )
            }
        };
        let got = walk(app, &["nftCollection", "transfers"], 9, moves(9, "")).await;
        got.assert_synced("collection transfers");
        assert_eq!(positions(&got.nodes), want, "{coll}'s moves");
        for (n, m) in got.nodes.iter().zip(&of) {
            check_move(n, m);
        }
        let asc = walk(
            app,
            &["nftCollection", "transfers"],
            100,
            moves(100, "order: ASC"),
        )
        .await;
        let mut reversed = want.clone();
        reversed.reverse();
        assert_eq!(positions(&asc.nodes), reversed, "{coll}: order: ASC");
        let rest = format!("/api/v2.2/nft/{coll}/transfers");
        assert_same_as_rest(app, &rest, &got.nodes, REST_MOVE).await;
    }

    // Metadata: the names the owners route shows.
    let q = format!("{{ nftCollection(address: {}) {{ address contractType name symbol possibleSpam verifiedCollection }} }}", gql_str(&c));
    let meta = app.graphql_ok(&q, Value::Null).await["nftCollection"].clone();
    let (_, _, body) = app
        .get_rest(&format!("/api/v2.2/nft/{c}/owners?limit=1"))
        .await;
    let r = &body["result"][0];
    assert_eq!(s(&meta["contractType"]), s(&r["contract_type"]), "{meta}");
    assert_eq!(
        (s(&meta["name"]), s(&meta["symbol"])),
        (s(&r["name"]), s(&r["symbol"])),
        "{meta}"
    );
    assert_eq!(s(&meta["possibleSpam"]), s(&r["possible_spam"]), "{meta}");
}
