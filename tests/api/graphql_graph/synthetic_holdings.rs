//! What the hand-written logs of [`super::synthetic`] leave held: owners after ERC1155 batch
//! moves and burns, a collection's tokens with their holder and total amount, a wallet's
//! collections, and exact token balances (2^256-1 among them).

use serde_json::Value;

use super::synthetic::{A, B, C1155, C721, MAX_HEX, SENDER, T18, TM};
use super::walk::{call, conn, s, walk, MAX};
use crate::support::common::{gql_str, TestApp};

/// Owners, a collection's tokens, a wallet's collections and its balances once the moves of
/// [`super::synthetic`] are imported.
pub async fn holdings_after_burns(app: &TestApp) {
    // Owners, by token id then owner: A 3 and B 1 of id 1 (B burned one), B 1 of id 7, A 1 and
    // B 1 of 2^256-1; the ERC721 id 5 was burned.
    let owners = format!(
        "{{ nftCollection(address: {}) {{ owners(first: 100) {} }} }}",
        gql_str(C1155),
        conn("tokenId ownerOf amount contractType")
    );
    let data = app.graphql_ok(&owners, Value::Null).await;
    let got: Vec<(String, String, String)> = data["nftCollection"]["owners"]["edges"]
        .as_array()
        .expect("edges")
        .iter()
        .map(|e| {
            (
                s(&e["node"]["tokenId"]).unwrap_or_default(),
                s(&e["node"]["ownerOf"]).unwrap_or_default(),
                s(&e["node"]["amount"]).unwrap_or_default(),
            )
        })
        .collect();
    let want = [
        ("1", A, "3"),
        ("1", B, "1"),
        ("7", B, "1"),
        (MAX, A, "1"),
        (MAX, B, "1"),
    ];
    let want: Vec<(String, String, String)> = want
        .iter()
        .map(|(i, o, a)| (i.to_string(), o.to_string(), a.to_string()))
        .collect();
    assert_eq!(got, want, "owners of {C1155}");
    for (c, id, holders) in [
        (C721, "5", vec![]),
        (C721, MAX, vec![B]),
        (C1155, MAX, vec![A, B]),
    ] {
        let q = format!(
            "{{ nft(address: {}, tokenId: {}) {{ tokenId owners(first: 1) {} }} }}",
            gql_str(c),
            gql_str(id),
            conn("ownerOf")
        );
        let got = walk(app, &["nft", "owners"], 1, |after| {
            q.replace("owners(first: 1)", &call("owners", 1, after, ""))
        })
        .await;
        got.assert_synced("nft owners");
        let owners: Vec<String> = got
            .nodes
            .iter()
            .map(|n| s(&n["ownerOf"]).unwrap_or_default())
            .collect();
        assert_eq!(owners, holders, "owners of {c} #{id}");
    }
    // The collection's tokens: the holder only when there is one; the amount over all.
    let nfts = |c: &str| {
        format!(
            "{{ nftCollection(address: {}) {{ nfts(first: 100, tokenIdFormat: HEX) {} }} }}",
            gql_str(c),
            conn("ownerOf amount tokenId")
        )
    };
    for (c, want) in [
        (
            C1155,
            vec![
                ("0x1", None, "4"),
                ("0x7", Some(B), "1"),
                (MAX_HEX, None, "2"),
            ],
        ),
        (C721, vec![(MAX_HEX, Some(B), "1")]),
    ] {
        let data = app.graphql_ok(&nfts(c), Value::Null).await;
        let mut got: Vec<(String, Option<String>, String)> = data["nftCollection"]["nfts"]["edges"]
            .as_array()
            .expect("edges")
            .iter()
            .map(|e| {
                (
                    s(&e["node"]["tokenId"]).unwrap_or_default(),
                    s(&e["node"]["ownerOf"]),
                    s(&e["node"]["amount"]).unwrap_or_default(),
                )
            })
            .collect();
        let ids: Vec<String> = got.iter().map(|g| g.0.clone()).collect();
        got.sort_by(|a, b| a.0.cmp(&b.0));
        let want: Vec<(String, Option<String>, String)> = want
            .iter()
            .map(|(i, o, a)| (i.to_string(), o.map(str::to_string), a.to_string()))
            .collect();
        assert_eq!(got, want, "tokens of {c}");
        let by_number: Vec<String> = want_numeric_order(&ids);
        assert_eq!(ids, by_number, "tokens of {c} by token id");
    }
    // Collections: A holds two tokens of the ERC1155, B three of it and one ERC721.
    for (wlt, want) in [(A, vec![(C1155, 2)]), (B, vec![(C1155, 3), (C721, 1)])] {
        let q = format!(
            "{{ wallet(address: {}) {{ nftCollections {} }} }}",
            gql_str(wlt),
            conn("count collection { address contractType }")
        );
        let data = app.graphql_ok(&q, Value::Null).await;
        let got: Vec<(String, u64)> = data["wallet"]["nftCollections"]["edges"]
            .as_array()
            .expect("edges")
            .iter()
            .map(|e| {
                (
                    s(&e["node"]["collection"]["address"]).unwrap_or_default(),
                    e["node"]["count"].as_u64().unwrap_or(0),
                )
            })
            .collect();
        let want: Vec<(String, u64)> = want.iter().map(|(c, n)| (c.to_string(), *n)).collect();
        assert_eq!(got, want, "collections of {wlt}");
    }
    // Balances, exact: 7 of the 18-decimal token, 2^256-1 of the other; B 3; the sender none.
    let balances = |wlt: &str| {
        format!(
            "{{ wallet(address: {}) {{ tokenBalances {} }} }}",
            gql_str(wlt),
            conn("balance balanceDecimal token { address symbol decimals }")
        )
    };
    for (wlt, want) in [
        (
            A,
            vec![(T18, "7", Some("0.000000000000000007")), (TM, MAX, None)],
        ),
        (B, vec![(T18, "3", Some("0.000000000000000003"))]),
        (SENDER, vec![]),
    ] {
        let data = app.graphql_ok(&balances(wlt), Value::Null).await;
        let got: Vec<(String, String, Option<String>)> = data["wallet"]["tokenBalances"]["edges"]
            .as_array()
            .expect("edges")
            .iter()
            .map(|e| {
                (
                    s(&e["node"]["token"]["address"]).unwrap_or_default(),
                    s(&e["node"]["balance"]).unwrap_or_default(),
                    s(&e["node"]["balanceDecimal"]),
                )
            })
            .collect();
        let want: Vec<(String, String, Option<String>)> = want
            .iter()
            .map(|(t, b, d)| (t.to_string(), b.to_string(), d.map(str::to_string)))
            .collect();
        assert_eq!(got, want, "balances of {wlt}");
    }
}

/// `ids` (hex) sorted by their numeric value.
fn want_numeric_order(ids: &[String]) -> Vec<String> {
    let mut v = ids.to_vec();
    v.sort_by_key(|i| (i.len(), i.clone()));
    v
}
