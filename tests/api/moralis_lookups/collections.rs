//! The collection, NFT and wallet lookups on the bundled mainnet sample, against the truth this
//! test decodes from the sample's logs itself: a collection's counts and distinct holders, its
//! contract metadata (alone and in bulk), one token's counts, NFTs named one by one (`getMultipleNFTs`), a
//! wallet's counts and first and last activity, every collection's moves by block range and
//! by block, and the two triggers, with their errors.

use std::collections::{BTreeMap, BTreeSet};

use reqwest::Method;
use serde_json::{json, Value};

use super::refused;
use crate::support::common::truth::{Nft, Truth, ZERO};
use crate::support::common::{self, enc, text, Backend, TestApp};

/// No contract at all.
const NOBODY: &str = "0x00000000000000000000000000000000000000aa";

/// `method uri` with the app's key and a JSON body: status, `X-Sync-Status`, body.
async fn send(
    app: &TestApp,
    method: Method,
    uri: &str,
    body: Option<Value>,
) -> (u16, String, Value) {
    let mut req = app
        .client
        .request(method, format!("{}{uri}", app.base))
        .header("X-API-Key", &app.key);
    if let Some(b) = body {
        req = req.json(&b);
    }
    let resp = req.send().await.expect("request");
    let status = resp.status().as_u16();
    let sync = resp
        .headers()
        .get("x-sync-status")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let body = resp.json().await.unwrap_or(Value::Null);
    (status, sync, body)
}

/// Every holding of the sample, by collection.
fn holdings_by_collection(truth: &Truth) -> BTreeMap<String, Vec<Nft>> {
    let mut out: BTreeMap<String, Vec<Nft>> = BTreeMap::new();
    for n in truth.nfts.values().flatten() {
        out.entry(n.contract.clone()).or_default().push(n.clone());
    }
    out
}

/// The collections with the most holders, then the first ERC1155 one.
fn chosen(by_collection: &BTreeMap<String, Vec<Nft>>) -> Vec<String> {
    let mut ranked: Vec<(&String, usize)> = by_collection
        .iter()
        .map(|(c, h)| (c, h.iter().map(|n| &n.owner).collect::<BTreeSet<_>>().len()))
        .collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let mut out: Vec<String> = ranked.iter().take(3).map(|(c, _)| (*c).clone()).collect();
    if let Some((c, _)) = by_collection
        .iter()
        .find(|(c, h)| h[0].contract_type == "ERC1155" && !out.contains(c))
    {
        out.push(c.clone());
    }
    out
}

/// Stats, distinct holders and contract metadata of a few collections.
async fn collections_answer(app: &TestApp, truth: &Truth) {
    let by_collection = holdings_by_collection(truth);
    let picked = chosen(&by_collection);
    assert!(picked.len() >= 3, "{picked:?}");
    for c in &picked {
        let held = &by_collection[c];
        let tokens: BTreeSet<&String> = held.iter().map(|n| &n.token_id_hex).collect();
        let owners: BTreeSet<&String> = held.iter().map(|n| &n.owner).collect();
        let moves = truth.nft_moves.iter().filter(|m| &m.contract == c).count();
        let (status, sync, body) =
            send(app, Method::GET, &format!("/api/v2.2/nft/{c}/stats"), None).await;
        assert_eq!((status, sync.as_str()), (200, "SYNCED"), "{c}: {body}");
        assert_eq!(
            body,
            json!({
                "total_tokens": tokens.len().to_string(),
                "owners": {"current": owners.len().to_string()},
                "transfers": {"total": moves.to_string()},
            }),
            "{c}"
        );

        let one = &held[0];
        let holders = held.iter().filter(|n| n.token_id == one.token_id).count();
        let moved = truth
            .nft_moves
            .iter()
            .filter(|m| &m.contract == c && m.id_hex == one.token_id_hex)
            .count();
        let uri = format!("/api/v2.2/nft/{c}/{}/stats", one.token_id);
        let (status, sync, body) = send(app, Method::GET, &uri, None).await;
        assert_eq!((status, sync.as_str()), (200, "SYNCED"), "{uri}: {body}");
        assert_eq!(
            body,
            json!({"owners": {"current": holders.to_string()}, "transfers": {"total": moved.to_string()}}),
            "{uri}"
        );

        let walked = walk_unique_owners(app, c, 3).await;
        let want: Vec<String> = owners.iter().map(|o| (*o).clone()).collect();
        assert_eq!(walked, want, "{c}: unique owners");

        let (status, sync, meta) =
            send(app, Method::GET, &format!("/api/v2/nft/{c}/metadata"), None).await;
        assert_eq!((status, sync.as_str()), (200, "SYNCED"), "{c}: {meta}");
        assert_eq!(meta["token_address"], json!(c));
        assert_eq!(meta["contract_type"], json!(held[0].contract_type));
        assert_eq!(meta["floor_price"], Value::Null);
        assert_eq!(meta["last_sale"], Value::Null);
        // The name and symbol the collection's own records show.
        let (_, _, page) = app.get_rest(&format!("/api/v2.2/nft/{c}?limit=1")).await;
        let record = &page["result"][0];
        assert_eq!(
            (&meta["name"], &meta["symbol"]),
            (&record["name"], &record["symbol"])
        );
    }
    let (status, sync, bulk) = send(
        app,
        Method::POST,
        "/api/v2.2/nft/metadata?chain=eth",
        Some(json!({"addresses": [picked[1], NOBODY, picked[0].to_uppercase().replace("0X", "0x"), picked[1]]})),
    )
    .await;
    assert_eq!(status, 200, "{bulk}");
    assert_eq!(sync, "SYNCED");
    let got: Vec<&str> = bulk
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["token_address"].as_str())
        .collect();
    assert_eq!(got, vec![picked[1].as_str(), picked[0].as_str()]);
    refused(
        app,
        &format!("/api/v2.2/nft/{NOBODY}/metadata"),
        404,
        "not found",
    )
    .await;
    refused(
        app,
        &format!("/api/v2.2/nft/{NOBODY}/stats?chain=nochain"),
        400,
        "chain",
    )
    .await;
}

/// `GET /nft/{c}/unique-owners` walked to its end with `limit`.
async fn walk_unique_owners(app: &TestApp, c: &str, limit: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut cursor: Option<String> = None;
    for page in 1.. {
        let mut uri = format!("/api/v2.2/nft/{c}/unique-owners?limit={limit}");
        if let Some(k) = &cursor {
            uri.push_str(&format!("&cursor={}", enc(k)));
        }
        let (status, _, body) = app.get_rest(&uri).await;
        assert_eq!(status, 200, "{uri}: {body}");
        assert_eq!(
            (&body["page"], &body["pageSize"]),
            (&json!(page), &json!(limit))
        );
        assert_eq!(body["status"], "SYNCED", "{body}");
        let owners = body["walletAddresses"].as_array().expect("walletAddresses");
        out.extend(owners.iter().filter_map(|o| o.as_str().map(str::to_string)));
        cursor = text(&body["cursor"]);
        if cursor.is_none() {
            return out;
        }
        assert_eq!(owners.len(), limit, "{body}");
        assert!(page < 500, "no end in sight");
    }
    out
}

/// `getMultipleNFTs`: one entry per requested token, in request order, `null` for unknown ones.
async fn multiple_nfts(app: &TestApp, truth: &Truth) {
    let by_collection = holdings_by_collection(truth);
    let mut asked: Vec<(String, String)> = Vec::new();
    for held in by_collection.values().take(6) {
        asked.push((held[0].contract.clone(), held[0].token_id.clone()));
    }
    asked.insert(2, (NOBODY.to_string(), "1".to_string()));
    let erc1155 = by_collection
        .values()
        .find(|h| h[0].contract_type == "ERC1155")
        .map(|h| (h[0].contract.clone(), h[0].token_id.clone()));
    asked.extend(erc1155);
    asked.push(asked[0].clone());
    let tokens: Vec<Value> = asked
        .iter()
        .map(|(c, t)| json!({"token_address": c, "token_id": t}))
        .collect();
    let (status, sync, body) = send(
        app,
        Method::POST,
        "/api/v2.2/nft/getMultipleNFTs",
        Some(json!({"tokens": tokens, "normalizeMetadata": true})),
    )
    .await;
    assert_eq!((status, sync.as_str()), (200, "SYNCED"), "{body}");
    let entries = body.as_array().expect("an array");
    assert_eq!(entries.len(), asked.len());
    for ((c, t), entry) in asked.iter().zip(entries) {
        let holders: Vec<&Nft> = by_collection
            .get(c)
            .into_iter()
            .flatten()
            .filter(|n| &n.token_id == t)
            .collect();
        if holders.is_empty() {
            assert_eq!(entry, &Value::Null, "{c} #{t}");
            continue;
        }
        assert_eq!(
            (&entry["token_address"], &entry["token_id"]),
            (&json!(c), &json!(t))
        );
        let owner = (holders.len() == 1).then(|| holders[0].owner.clone());
        let amount: u128 = holders
            .iter()
            .map(|n| n.amount.parse::<u128>().unwrap_or(0))
            .sum();
        assert_eq!(entry["owner_of"], json!(owner), "{c} #{t}");
        assert_eq!(entry["amount"], json!(amount.to_string()), "{c} #{t}");
        assert!(entry["normalized_metadata"].is_object(), "{entry}");
        // The same record `getNFTMetadata` answers.
        let (_, _, one) = app
            .get_rest(&format!("/api/v2.2/nft/{c}/{t}?normalizeMetadata=true"))
            .await;
        assert_eq!(entry, &one, "{c} #{t}");
    }
    let one = &asked[0];
    for (body, mention) in [
        (json!({}), "tokens"),
        (json!({"tokens": []}), "tokens"),
        (
            json!({"tokens": [{"token_address": "0x12", "token_id": "1"}]}),
            "token_address",
        ),
        (
            json!({"tokens": [{"token_address": one.0, "token_id": "x"}]}),
            "token_id",
        ),
    ] {
        let (status, _, answer) = send(
            app,
            Method::POST,
            "/api/v2.2/nft/getMultipleNFTs",
            Some(body.clone()),
        )
        .await;
        let message = answer["message"].as_str().unwrap_or_default();
        assert!(
            status == 400 && message.contains(mention),
            "{body}: {status} {answer}"
        );
    }
    let (status, _, answer) = send(app, Method::POST, "/api/v2.2/nft/getMultipleNFTs", None).await;
    assert_eq!(status, 400, "no body: {answer}");
    let (status, _, answer) = send(app, Method::GET, "/api/v2.2/nft/getMultipleNFTs", None).await;
    assert_eq!(status, 405, "{answer}");
    assert!(answer["message"]
        .as_str()
        .unwrap_or_default()
        .contains("POST"));
}

/// A wallet's counts and its first and last activity.
async fn wallet_lookups(app: &TestApp, truth: &Truth) {
    let mut moves_of: BTreeMap<&String, usize> = BTreeMap::new();
    for m in &truth.nft_moves {
        for w in BTreeSet::from([&m.from, &m.to]) {
            *moves_of.entry(w).or_default() += 1;
        }
    }
    let mut wallets: Vec<(&String, usize)> =
        moves_of.into_iter().filter(|(w, _)| *w != ZERO).collect();
    wallets.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let busiest_erc20 = truth.busiest_wallets()[0].0.clone();
    let mut picked: Vec<String> = wallets.iter().take(2).map(|(w, _)| (*w).clone()).collect();
    picked.push(busiest_erc20);
    for w in &picked {
        let held = truth.nfts.get(w).cloned().unwrap_or_default();
        let collections: BTreeSet<&String> = held.iter().map(|n| &n.contract).collect();
        let nft_moves: Vec<_> = truth
            .nft_moves
            .iter()
            .filter(|m| &m.from == w || &m.to == w)
            .collect();
        let erc20 = truth.transfers_of(&[w.as_str()]);
        let (status, sync, body) = send(
            app,
            Method::GET,
            &format!("/api/v2.2/wallets/{w}/stats"),
            None,
        )
        .await;
        assert_eq!((status, sync.as_str()), (200, "SYNCED"), "{w}: {body}");
        assert_eq!(
            body,
            json!({
                "nfts": held.len().to_string(),
                "collections": collections.len().to_string(),
                "transactions": {"total": null},
                "nft_transfers": {"total": nft_moves.len().to_string()},
                "token_transfers": {"total": erc20.len().to_string()},
            }),
            "{w}"
        );

        // Every activity as (block, log, time, transaction).
        let mut marks: Vec<(u64, u64, u64, String)> = nft_moves
            .iter()
            .map(|m| (m.block, m.log, m.time, m.transaction_hash.clone()))
            .chain(erc20.iter().map(|t| {
                (
                    t.block_number,
                    t.log_index,
                    t.block_time,
                    t.transaction_hash.clone(),
                )
            }))
            .collect();
        marks.sort();
        let mark = |m: &(u64, u64, u64, String)| {
            json!({
                "block_number": m.0.to_string(),
                "block_timestamp": common::truth::iso8601(m.2),
                "transaction_hash": m.3,
            })
        };
        let (status, sync, body) = send(
            app,
            Method::GET,
            &format!("/api/v2.2/wallets/{w}/chains?chains[]=eth"),
            None,
        )
        .await;
        assert_eq!((status, sync.as_str()), (200, "SYNCED"), "{w}: {body}");
        assert_eq!(
            body,
            json!({"address": w, "active_chains": [{
                "chain": "eth", "chain_id": "0x1",
                "first_transaction": mark(&marks[0]),
                "last_transaction": mark(&marks[marks.len() - 1]),
                "status": "SYNCED",
            }]}),
            "{w}"
        );
    }
    // No chain named: every indexed chain (the sample's one).
    let (status, _, body) = send(
        app,
        Method::GET,
        &format!("/api/v2.2/wallets/{}/chains", picked[0]),
        None,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body["active_chains"].as_array().map(Vec::len),
        Some(1),
        "{body}"
    );
    let (status, _, body) = send(
        app,
        Method::GET,
        &format!("/api/v2.2/wallets/{NOBODY}/chains"),
        None,
    )
    .await;
    assert_eq!(
        (status, body),
        (200, json!({"address": NOBODY, "active_chains": []}))
    );
    refused(
        app,
        &format!("/api/v2.2/wallets/{NOBODY}/chains?chains=mars"),
        400,
        "chains",
    )
    .await;
    refused(app, "/api/v2.2/wallets/0x12/stats", 400, "address").await;
}

/// The two triggers: queue a collection's history, refetch a token's metadata.
async fn triggers(app: &TestApp, truth: &Truth) {
    let n = truth
        .nfts
        .values()
        .flatten()
        .next()
        .expect("a holding")
        .clone();
    let (status, _, body) = send(
        app,
        Method::PUT,
        &format!("/api/v2.2/nft/{}/sync", n.contract),
        None,
    )
    .await;
    assert_eq!(
        (status, body),
        (201, json!({"message": "Request Initiated"}))
    );
    let (status, _, body) = send(
        app,
        Method::GET,
        &format!("/api/v2.2/nft/{}/sync", n.contract),
        None,
    )
    .await;
    assert_eq!(status, 405, "{body}");
    for flag in ["uri", "metadata"] {
        let uri = format!(
            "/api/v2.2/nft/{}/{}/metadata/resync?flag={flag}&mode=async",
            n.contract, n.token_id
        );
        let (status, _, body) = send(app, Method::GET, &uri, None).await;
        assert_eq!(status, 202, "{uri}: {body}");
        assert!(body["status"].is_string(), "{body}");
    }
    refused(
        app,
        &format!("/api/v2.2/nft/{NOBODY}/1/metadata/resync"),
        404,
        "not found",
    )
    .await;
    refused(
        app,
        &format!("/api/v2.2/nft/{}/1/metadata/resync?mode=later", n.contract),
        400,
        "mode",
    )
    .await;
}

/// Every collection's moves in a block range, and one block's moves by number and by hash.
async fn moves_by_block(app: &TestApp, truth: &Truth) {
    let key = |r: &Value| {
        json!([
            r["block_number"],
            r["log_index"],
            r["token_address"],
            r["token_id"],
            r["from_address"],
            r["to_address"]
        ])
    };
    let want_key = |m: &crate::support::common::truth::NftMove| {
        json!([
            m.block.to_string(),
            m.log,
            m.contract,
            common::truth::hex_to_dec(&m.id_hex),
            m.from,
            m.to
        ])
    };
    let blocks: Vec<u64> = truth.nft_moves.iter().map(|m| m.block).collect();
    let (lo, hi) = (blocks[blocks.len() * 3 / 4], blocks[blocks.len() / 4]);
    let pages = app
        .walk_rest(
            &format!("/api/v2.2/nft/transfers?from_block={lo}&to_block={hi}&limit=9"),
            9,
        )
        .await;
    let got: Vec<Value> = pages.iter().flat_map(|p| &p.records).map(key).collect();
    let want: Vec<Value> = truth
        .nft_moves
        .iter()
        .filter(|m| (lo..=hi).contains(&m.block))
        .map(want_key)
        .collect();
    assert!(want.len() > 9, "too few moves in {lo}..={hi}");
    assert_eq!(got, want, "moves in {lo}..={hi}");
    assert!(pages.iter().all(|p| p.body["status"] == "SYNCED"));

    // The block with the most moves, by number (oldest first) and by hash.
    let mut per_block: BTreeMap<u64, usize> = BTreeMap::new();
    for b in &blocks {
        *per_block.entry(*b).or_default() += 1;
    }
    let (busy, n) = per_block
        .iter()
        .max_by_key(|(b, n)| (**n, **b))
        .expect("a block");
    let by_number = app
        .walk_rest(
            &format!("/api/v2.2/block/{busy}/nft/transfers?order=ASC&limit=2"),
            2,
        )
        .await;
    let got: Vec<Value> = by_number.iter().flat_map(|p| &p.records).cloned().collect();
    let mut want: Vec<Value> = truth
        .nft_moves
        .iter()
        .filter(|m| m.block == *busy)
        .map(want_key)
        .collect();
    want.reverse();
    assert_eq!(
        (got.len(), got.iter().map(key).collect::<Vec<_>>()),
        (*n, want)
    );
    let hash = got[0]["block_hash"]
        .as_str()
        .expect("block_hash")
        .to_uppercase()
        .replacen("0X", "0x", 1);
    let by_hash = app
        .walk_rest(
            &format!("/api/v2.2/block/{hash}/nft/transfers?order=ASC&limit=2"),
            2,
        )
        .await;
    let again: Vec<Value> = by_hash.iter().flat_map(|p| &p.records).cloned().collect();
    assert_eq!(again, got, "by hash");
    let unknown = format!("0x{}", "ab".repeat(32));
    refused(
        app,
        &format!("/api/v2.2/block/{unknown}/nft/transfers"),
        404,
        "not found",
    )
    .await;
    refused(
        app,
        "/api/v2.2/block/0x12/nft/transfers",
        400,
        "block_number_or_hash",
    )
    .await;
    refused(
        app,
        "/api/v2.2/nft/transfers?from_block=9&to_block=2",
        400,
        "from_block",
    )
    .await;
}

/// The same lookups in the GraphQL graph agree with REST (checked against the truth above).
async fn graph_agrees(app: &TestApp, truth: &Truth) {
    let by_collection = holdings_by_collection(truth);
    let c = &chosen(&by_collection)[0];
    let t = &by_collection[c][0].token_id;
    let (_, _, rest) = send(app, Method::GET, &format!("/api/v2.2/nft/{c}/stats"), None).await;
    let q = format!(
        r#"{{ nftCollection(chain: "eth", address: "{c}") {{
            stats {{ totalTokens owners transfers status }}
            uniqueOwners(first: 2) {{ status edges {{ node {{ address }} }} pageInfo {{ hasNextPage endCursor }} }} }}
          nft(chain: "eth", address: "{c}", tokenId: "{t}") {{ stats {{ owners transfers status }} }} }}"#
    );
    let data = app.graphql_ok(&q, json!({})).await;
    let stats = &data["nftCollection"]["stats"];
    assert_eq!(
        json!([
            stats["totalTokens"].to_string(),
            stats["owners"].to_string(),
            stats["transfers"].to_string(),
            stats["status"]
        ]),
        json!([
            rest["total_tokens"],
            rest["owners"]["current"],
            rest["transfers"]["total"],
            "SYNCED"
        ]),
        "{data}"
    );
    // Walk the holders to the end: the REST walk's list.
    let mut owners: Vec<String> = Vec::new();
    let mut page = data["nftCollection"]["uniqueOwners"].clone();
    loop {
        assert_eq!(page["status"], "SYNCED", "{page}");
        owners.extend(
            page["edges"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|e| text(&e["node"]["address"])),
        );
        if page["pageInfo"]["hasNextPage"] != json!(true) {
            break;
        }
        let after = text(&page["pageInfo"]["endCursor"]).expect("endCursor");
        let q = format!(
            r#"{{ nftCollection(chain: "eth", address: "{c}") {{ uniqueOwners(first: 2, after: "{after}") {{
                status edges {{ node {{ address }} }} pageInfo {{ hasNextPage endCursor }} }} }} }}"#
        );
        page = app.graphql_ok(&q, json!({})).await["nftCollection"]["uniqueOwners"].clone();
    }
    assert_eq!(owners, walk_unique_owners(app, c, 50).await);
    let (_, _, rest) = send(
        app,
        Method::GET,
        &format!("/api/v2.2/nft/{c}/{t}/stats"),
        None,
    )
    .await;
    let stats = &data["nft"]["stats"];
    assert_eq!(
        json!([stats["owners"].to_string(), stats["transfers"].to_string()]),
        json!([rest["owners"]["current"], rest["transfers"]["total"]])
    );

    let w = truth.busiest_wallets()[0].0.clone();
    let (_, _, rest) = send(
        app,
        Method::GET,
        &format!("/api/v2.2/wallets/{w}/stats"),
        None,
    )
    .await;
    let (_, _, chains) = send(
        app,
        Method::GET,
        &format!("/api/v2.2/wallets/{w}/chains"),
        None,
    )
    .await;
    let q = format!(
        r#"{{ wallet(chain: "eth", address: "{w}") {{
            stats {{ nfts collections nftTransfers tokenTransfers status }}
            activity {{ status firstTransfer {{ blockNumber blockTimestamp transactionHash }}
                lastTransfer {{ blockNumber blockTimestamp transactionHash }} }} }} }}"#
    );
    let data = app.graphql_ok(&q, json!({})).await;
    let s = &data["wallet"]["stats"];
    assert_eq!(
        json!([
            s["nfts"].to_string(),
            s["collections"].to_string(),
            s["nftTransfers"].to_string(),
            s["tokenTransfers"].to_string(),
            s["status"]
        ]),
        json!([
            rest["nfts"],
            rest["collections"],
            rest["nft_transfers"]["total"],
            rest["token_transfers"]["total"],
            "SYNCED"
        ]),
        "{data}"
    );
    let a = &data["wallet"]["activity"];
    let active = &chains["active_chains"][0];
    for (gql, rest) in [
        ("firstTransfer", "first_transaction"),
        ("lastTransfer", "last_transaction"),
    ] {
        assert_eq!(
            json!([
                a[gql]["blockNumber"].to_string(),
                a[gql]["blockTimestamp"],
                a[gql]["transactionHash"]
            ]),
            json!([
                active[rest]["block_number"],
                active[rest]["block_timestamp"],
                active[rest]["transaction_hash"]
            ]),
            "{data}"
        );
    }
}

/// Every collection, NFT and wallet lookup on one loaded sample.
pub(super) async fn nft_and_wallet_lookups(backend: Backend) {
    let app = common::spawn(backend).await;
    app.load_demo().await;
    let truth = Truth::demo();
    collections_answer(&app, &truth).await;
    multiple_nfts(&app, &truth).await;
    wallet_lookups(&app, &truth).await;
    triggers(&app, &truth).await;
    moves_by_block(&app, &truth).await;
    graph_agrees(&app, &truth).await;
    app.cleanup().await;
}
