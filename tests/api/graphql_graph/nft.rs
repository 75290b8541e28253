//! `nft(...)` on the demo sample: the token with the most holders, entered by decimal and hex
//! id; its owners and moves walked to the end against the demo's truth and the REST v2.2
//! routes; and the largest token id, which nobody holds.

use std::collections::BTreeMap;

use serde_json::Value;

use super::checks::{
    assert_same_as_rest, check_holding, check_move, positions, token_hash, REST_OWNER,
};
use super::entities::{entry, list_of};
use super::walk::{conn, s, short_hex, walk, HOLDING_FIELDS, MAX, MOVE_FIELDS};
use crate::support::common::truth::{hex_to_dec, Nft, NftMove, Truth};
use crate::support::common::{gql_str, Backend};

/// `nft(...)`: the token with the most holders (an ERC1155 id if the demo has one).
pub async fn nft_entry_point(backend: Backend) {
    let truth = Truth::demo();
    let app = crate::support::common::spawn(backend).await;
    app.load_demo().await;
    let mut by_token: BTreeMap<(&str, &str), Vec<&Nft>> = BTreeMap::new();
    for n in truth.nfts.values().flatten() {
        by_token
            .entry((&n.contract, &n.token_id_hex))
            .or_default()
            .push(n);
    }
    let ((c, id_hex), holders) = by_token
        .iter()
        .max_by_key(|(k, v)| (v.len(), std::cmp::Reverse(**k)))
        .expect("a token");
    let (c, id) = (c.to_string(), hex_to_dec(id_hex));
    let mut holders = holders.clone();
    holders.sort_by(|a, b| a.owner.cmp(&b.owner));

    // Entry by decimal id and by hex id: the same token.
    let fields = "tokenAddress tokenId contractType tokenHash tokenUri metadata blockNumberMinted \
                  name symbol possibleSpam verifiedCollection media { status } collection { address contractType }";
    for (given, format, shown) in [
        (id.clone(), "DECIMAL", id.clone()),
        (short_hex(id_hex), "HEX", short_hex(id_hex)),
    ] {
        let q = format!(
            "{{ nft(address: {}, tokenId: {}, tokenIdFormat: {format}) {{ {fields} }} }}",
            gql_str(&c),
            gql_str(&given)
        );
        let n = app.graphql_ok(&q, Value::Null).await["nft"].clone();
        assert_eq!(s(&n["tokenId"]), Some(shown), "{n}");
        assert_eq!(s(&n["tokenAddress"]).as_deref(), Some(c.as_str()), "{n}");
        assert_eq!(s(&n["tokenHash"]), Some(token_hash(&c, &id)), "{n}");
        assert_eq!(
            s(&n["collection"]["address"]).as_deref(),
            Some(c.as_str()),
            "{n}"
        );
        assert!(
            n["media"].is_null() || n["media"]["status"].is_string(),
            "{n}"
        );
        // The same token data as REST's owner records.
        let (_, _, body) = app
            .get_rest(&format!("/api/v2.2/nft/{c}/{id}/owners?limit=1"))
            .await;
        let r = &body["result"][0];
        for (rf, gf) in [
            ("contract_type", "contractType"),
            ("token_uri", "tokenUri"),
            ("metadata", "metadata"),
            ("block_number_minted", "blockNumberMinted"),
            ("name", "name"),
            ("symbol", "symbol"),
            ("possible_spam", "possibleSpam"),
        ] {
            assert_eq!(s(&r[rf]), s(&n[gf]), "nft vs REST: {rf}\n{r}\n{n}");
        }
    }

    // Its owners, by owner, in pages of 1; the same as REST's.
    let list = |name: &'static str, first: usize, args: &'static str, fields: &'static str| {
        let (c, id) = (c.clone(), id.clone());
        move |after: &str| {
            list_of(
                &entry("nft", &c, &format!(", tokenId: \"{id}\"")),
                name,
                first,
                after,
                args,
                fields,
            )
        }
    };
    let got = walk(
        &app,
        &["nft", "owners"],
        1,
        list("owners", 1, "", HOLDING_FIELDS),
    )
    .await;
    got.assert_synced("nft owners");
    assert_eq!(got.nodes.len(), holders.len());
    for (n, h) in got.nodes.iter().zip(&holders) {
        check_holding(n, h);
    }
    assert_same_as_rest(
        &app,
        &format!("/api/v2.2/nft/{c}/{id}/owners"),
        &got.nodes,
        REST_OWNER,
    )
    .await;

    // Its moves: only this token's, both orders.
    let of: Vec<&NftMove> = truth
        .nft_moves
        .iter()
        .filter(|m| m.contract == c && m.id_hex == *id_hex)
        .collect();
    let want: Vec<(u64, u64)> = of.iter().map(|m| (m.block, m.log)).collect();
    let got = walk(
        &app,
        &["nft", "transfers"],
        2,
        list("transfers", 2, "", MOVE_FIELDS),
    )
    .await;
    got.assert_synced("nft transfers");
    assert_eq!(positions(&got.nodes), want, "moves of {c} #{id}");
    for (n, m) in got.nodes.iter().zip(&of) {
        check_move(n, m);
    }
    let asc = walk(
        &app,
        &["nft", "transfers"],
        100,
        list("transfers", 100, "order: ASC", "blockNumber logIndex"),
    )
    .await;
    let mut reversed = want.clone();
    reversed.reverse();
    assert_eq!(positions(&asc.nodes), reversed, "order: ASC");

    // The largest token id there is: nobody holds it, nothing moved it; a complete answer.
    let q = format!(
        "{{ nft(address: {}, tokenId: \"0x{}\") {{ tokenId metadata owners {} transfers {} }} }}",
        gql_str(&c),
        "f".repeat(64),
        conn("ownerOf"),
        conn("blockNumber")
    );
    let n = app.graphql_ok(&q, Value::Null).await["nft"].clone();
    assert_eq!(s(&n["tokenId"]).as_deref(), Some(MAX), "{n}");
    assert!(n["metadata"].is_null(), "{n}");
    for list in ["owners", "transfers"] {
        assert_eq!(n[list]["edges"], serde_json::json!([]), "{n}");
        assert_eq!(n[list]["status"], "SYNCED", "{n}");
        assert_eq!(n[list]["pageInfo"]["hasNextPage"], false, "{n}");
    }
    app.cleanup().await;
}
