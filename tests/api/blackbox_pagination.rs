//! Keyset pagination over the demo sample: every record exactly once, in the documented order,
//! with a cursor on every page but the last; and cursors refused when misused.

use crate::support::common;

use std::collections::HashSet;

use common::truth::{hex_to_dec, iso8601, Nft, NftMove, Transfer, Truth, ZERO};
use common::{enc, gql_str, nfts_query, text, transfers_query, Backend, TestApp};
use serde_json::{json, Value};

crate::backend_tests!(
    pagination_walk,
    cursor_misuse,
    v2_2_transfer_routes,
    v2_2_nft_transfer_routes,
    v2_2_owner_routes,
    v2_2_collections_route,
    v2_2_balances_route,
    v2_2_collection_nfts_route
);

/// The identity of an NFT record: (contract, token id).
fn nft_key(r: &Value, contract: &str, id: &str) -> (String, String) {
    (
        text(common::at(r, contract)).unwrap_or_default(),
        text(common::at(r, id)).unwrap_or_default(),
    )
}

/// The identity of a transfer record: (block number, log index).
fn transfer_key(r: &Value, block: &str, log: &str) -> (u64, u64) {
    let n = |p: &str| {
        text(common::at(r, p))
            .and_then(|s| s.parse::<u64>().ok())
            .unwrap_or_else(|| panic!("record without numeric {p}: {r}"))
    };
    (n(block), n(log))
}

fn assert_once<T: std::hash::Hash + Eq + std::fmt::Debug>(what: &str, keys: &[T]) {
    let mut seen = HashSet::new();
    for k in keys {
        assert!(seen.insert(k), "{what}: {k:?} appears twice");
    }
}

/// Where the pages of a walk break: (between two contracts, inside one contract).
fn breaks(pages: &[common::RestPage]) -> (usize, usize) {
    let mut between = 0;
    let mut inside = 0;
    for pair in pages.windows(2) {
        let (Some(last), Some(next)) = (pair[0].records.last(), pair[1].records.first()) else {
            continue;
        };
        if last["token_address"] == next["token_address"] {
            inside += 1;
        } else {
            between += 1;
        }
    }
    (between, inside)
}

async fn walk_nfts(app: &TestApp, truth: &Truth, owner: &str, limit: usize) -> (usize, usize) {
    let want: Vec<(String, String)> = truth.nfts[owner]
        .iter()
        .map(|n| (n.contract.clone(), n.token_id.clone()))
        .collect();
    let expected_pages = want.len().div_ceil(limit).max(1);

    let pages = app
        .walk_rest(
            &format!("/api/v2/{owner}/nft?limit={limit}&disable_total=false"),
            limit,
        )
        .await;
    assert_eq!(
        pages.len(),
        expected_pages,
        "REST NFT pages of {owner}, limit {limit}"
    );
    for p in &pages {
        assert_eq!(
            text(&p.body["total"]).and_then(|t| t.parse::<usize>().ok()),
            Some(want.len()),
            "REST NFT total: {}",
            p.body
        );
    }
    let got: Vec<_> = pages
        .iter()
        .flat_map(|p| &p.records)
        .map(|r| nft_key(r, "token_address", "token_id"))
        .collect();
    assert_once("REST NFTs", &got);
    assert_eq!(
        got, want,
        "REST NFTs of {owner}, limit {limit}: order or content"
    );

    let gql = app
        .walk_gql("nftsByWallet", limit, |after| {
            let sep = if after.is_empty() { "" } else { ", " };
            nfts_query(owner, &format!("first: {limit}{sep}{after}"))
        })
        .await;
    assert_eq!(
        gql.len(),
        expected_pages,
        "GraphQL NFT pages of {owner}, first {limit}"
    );
    for p in &gql {
        assert_eq!(
            text(&p.connection["totalCount"]).and_then(|t| t.parse::<usize>().ok()),
            Some(want.len()),
            "GraphQL totalCount: {}",
            p.connection
        );
    }
    let got: Vec<_> = gql
        .iter()
        .flat_map(|p| &p.nodes)
        .map(|r| nft_key(r, "tokenAddress", "tokenId"))
        .collect();
    assert_once("GraphQL NFTs", &got);
    assert_eq!(
        got, want,
        "GraphQL NFTs of {owner}, first {limit}: order or content"
    );
    breaks(&pages)
}

async fn walk_transfers(app: &TestApp, truth: &Truth, wallet: Option<&str>, limit: usize) {
    let want: Vec<(u64, u64)> = match wallet {
        Some(w) => truth.transfers_of(&[w]),
        None => truth.transfers.iter().collect(),
    }
    .iter()
    .map(|t| (t.block_number, t.log_index))
    .collect();
    let expected_pages = want.len().div_ceil(limit).max(1);

    let filter = wallet.map_or(String::new(), |w| format!("wallet_addresses={w}&"));
    let pages = app
        .walk_rest(
            &format!("/api/v2/erc20/transfers?{filter}limit={limit}"),
            limit,
        )
        .await;
    assert_eq!(
        pages.len(),
        expected_pages,
        "REST transfer pages of {wallet:?}, limit {limit}"
    );
    let got: Vec<_> = pages
        .iter()
        .flat_map(|p| &p.records)
        .map(|r| transfer_key(r, "block_number", "log_index"))
        .collect();
    assert_once("REST transfers", &got);
    assert_eq!(
        got, want,
        "REST transfers of {wallet:?}, limit {limit}: order or content"
    );

    let args = wallet.map_or(String::new(), |w| {
        format!("walletAddresses: [{}], ", gql_str(w))
    });
    let gql = app
        .walk_gql("erc20Transfers", limit, |after| {
            transfers_query(&format!(
                "{args}first: {limit}{}{after}",
                if after.is_empty() { "" } else { ", " }
            ))
        })
        .await;
    assert_eq!(
        gql.len(),
        expected_pages,
        "GraphQL transfer pages of {wallet:?}, first {limit}"
    );
    let got: Vec<_> = gql
        .iter()
        .flat_map(|p| &p.nodes)
        .map(|r| transfer_key(r, "blockNumber", "logIndex"))
        .collect();
    assert_once("GraphQL transfers", &got);
    assert_eq!(
        got, want,
        "GraphQL transfers of {wallet:?}, first {limit}: order or content"
    );
}

async fn pagination_walk(backend: Backend) {
    let truth = Truth::demo();
    let app = common::spawn(backend).await;
    app.load_demo().await;

    // The biggest NFT holder, in pages of 7, and in pages that divide its count exactly (the
    // last page is full and must still say there is no next one).
    let (top, nfts) = truth
        .nfts
        .iter()
        .max_by_key(|(_, v)| v.len())
        .expect("an NFT holder");
    assert!(
        nfts.len() > 14,
        "the top holder should span several pages of 7"
    );
    walk_nfts(&app, &truth, top, 7).await;
    if nfts.len() % 2 == 0 {
        walk_nfts(&app, &truth, top, nfts.len() / 2).await;
    }
    walk_nfts(&app, &truth, top, 1).await;
    // Every backend pages across contract boundaries (PostgreSQL's keyset is a row
    // comparison, the others' an OR form): the wallet holding the most collections, in pages
    // of 2 and 3, must break between two contracts and inside one.
    let (many, _) = truth
        .nfts
        .iter()
        .max_by_key(|(w, v)| {
            let contracts: HashSet<&str> = v.iter().map(|n| n.contract.as_str()).collect();
            (contracts.len(), v.len(), std::cmp::Reverse((*w).clone()))
        })
        .expect("an NFT holder");
    let (mut between, mut inside) = (0, 0);
    for limit in [2, 3] {
        let (b, i) = walk_nfts(&app, &truth, many, limit).await;
        between += b;
        inside += i;
    }
    assert!(
        between > 0 && inside > 0,
        "{backend:?}: the walks of {many} broke {between} times between contracts and {inside} \
         inside one; both must happen"
    );

    // A busy wallet's transfers in pages of 7 and of an exact divisor; all transfers in
    // pages of 100 (the total order across every block).
    let busy = truth.busiest_wallets();
    let (w, n) = &busy[1];
    assert!(*n > 14, "a busy wallet spans several pages of 7");
    walk_transfers(&app, &truth, Some(w), 7).await;
    let exact = busy
        .iter()
        .find(|(_, n)| *n > 10 && *n % 5 == 0 && *n / 5 <= 100)
        .expect("a wallet whose transfer count divides by 5");
    walk_transfers(&app, &truth, Some(&exact.0), exact.1 / 5).await;
    walk_transfers(&app, &truth, None, 100).await;

    // The transfers route is marked deprecated (RFC 9745).
    let (status, headers, body) = app.get_rest("/api/v2/erc20/transfers?limit=1").await;
    assert_eq!(status, 200, "{body}");
    assert!(
        headers.contains_key("deprecation"),
        "GET /api/v2/erc20/transfers has no Deprecation header: {headers:?}"
    );

    app.cleanup().await;
}

fn assert_cursor_refused(what: &str, status: u16, body: &Value) {
    assert_eq!(status, 400, "{what}: expected 400, got {status}: {body}");
    let msg = body["message"].as_str().unwrap_or_default().to_lowercase();
    assert!(
        msg.contains("cursor"),
        "{what}: message should name the cursor: {body}"
    );
}

fn assert_gql_refused(what: &str, status: u16, body: &Value) {
    assert!(
        status == 200 || status == 400,
        "{what}: GraphQL status {status}: {body}"
    );
    let err = &body["errors"][0];
    assert_eq!(
        err["extensions"]["code"].as_str(),
        Some("BAD_USER_INPUT"),
        "{what}: {body}"
    );
    let msg = err["message"].as_str().unwrap_or_default().to_lowercase();
    assert!(
        msg.contains("after") || msg.contains("cursor"),
        "{what}: message should name the cursor: {body}"
    );
}

/// The same string with one character changed (to another base64url character).
fn edit(c: &str, at: usize) -> String {
    let mut b = c.as_bytes().to_vec();
    b[at] = if b[at] == b'A' { b'B' } else { b'A' };
    String::from_utf8(b).expect("ascii")
}

async fn cursor_misuse(backend: Backend) {
    let truth = Truth::demo();
    let app = common::spawn(backend).await;
    app.load_demo().await;

    let (top, _) = truth
        .nfts
        .iter()
        .max_by_key(|(_, v)| v.len())
        .expect("an NFT holder");
    let other_holder = truth.nfts.keys().find(|k| *k != top).expect("two holders");
    let busy = truth.busiest_wallets();
    let (w1, w2) = (&busy[1].0, &busy[2].0);

    let (s, _, first) = app.get_rest(&format!("/api/v2/{top}/nft?limit=7")).await;
    assert_eq!(s, 200, "{first}");
    let nft_cursor = first["cursor"].as_str().expect("an NFT cursor").to_string();
    let (s, _, first_t) = app
        .get_rest(&format!(
            "/api/v2/erc20/transfers?wallet_addresses={w1}&limit=7"
        ))
        .await;
    assert_eq!(s, 200, "{first_t}");
    let tr_cursor = first_t["cursor"]
        .as_str()
        .expect("a transfer cursor")
        .to_string();

    // The same cursor with the same filters gives the same page twice (and another limit is
    // not another filter).
    let again = format!("/api/v2/{top}/nft?limit=7&cursor={}", enc(&nft_cursor));
    let (s1, _, p1) = app.get_rest(&again).await;
    let (s2, _, p2) = app.get_rest(&again).await;
    assert_eq!((s1, s2), (200, 200), "{p1} {p2}");
    assert_eq!(p1["result"], p2["result"], "a cursor replays the same page");
    assert_eq!(text(&p1["page"]).as_deref(), Some("2"), "{p1}");

    let token = truth.nfts[top][0].contract.clone();
    let cases: Vec<(String, String)> = vec![
        (
            "NFT cursor with token_addresses added".into(),
            format!(
                "/api/v2/{top}/nft?limit=7&token_addresses={token}&cursor={}",
                enc(&nft_cursor)
            ),
        ),
        (
            "NFT cursor with exclude_spam changed".into(),
            format!(
                "/api/v2/{top}/nft?limit=7&exclude_spam=true&cursor={}",
                enc(&nft_cursor)
            ),
        ),
        (
            "NFT cursor on another wallet".into(),
            format!(
                "/api/v2/{other_holder}/nft?limit=7&cursor={}",
                enc(&nft_cursor)
            ),
        ),
        (
            "NFT cursor on another chain".into(),
            format!(
                "/api/v2/{top}/nft?chain=polygon&limit=7&cursor={}",
                enc(&nft_cursor)
            ),
        ),
        (
            "transfer cursor with another wallet".into(),
            format!(
                "/api/v2/erc20/transfers?wallet_addresses={w2}&limit=7&cursor={}",
                enc(&tr_cursor)
            ),
        ),
        (
            "transfer cursor with from_block added".into(),
            format!(
                "/api/v2/erc20/transfers?wallet_addresses={w1}&from_block=1&limit=7&cursor={}",
                enc(&tr_cursor)
            ),
        ),
        (
            "transfer cursor without its filter".into(),
            format!("/api/v2/erc20/transfers?limit=7&cursor={}", enc(&tr_cursor)),
        ),
        (
            "NFT cursor on the transfers route".into(),
            format!(
                "/api/v2/erc20/transfers?limit=7&cursor={}",
                enc(&nft_cursor)
            ),
        ),
        (
            "transfer cursor on the NFT route".into(),
            format!("/api/v2/{top}/nft?limit=7&cursor={}", enc(&tr_cursor)),
        ),
    ];
    let mut cases = cases;
    for (name, c, path) in [
        ("NFT", &nft_cursor, format!("/api/v2/{top}/nft?limit=7")),
        (
            "transfer",
            &tr_cursor,
            format!("/api/v2/erc20/transfers?wallet_addresses={w1}&limit=7"),
        ),
    ] {
        for at in [0, c.len() / 3, c.len() / 2, c.len() - 2, c.len() - 1] {
            cases.push((
                format!("{name} cursor edited at {at}"),
                format!("{path}&cursor={}", enc(&edit(c, at))),
            ));
        }
        cases.push((
            format!("{name} cursor truncated"),
            format!("{path}&cursor={}", enc(&c[..c.len() - 1])),
        ));
    }
    for (what, url) in &cases {
        let (status, _, body) = app.get_rest(url).await;
        assert_cursor_refused(what, status, &body);
    }

    // GraphQL: the same rules for `after`.
    let data = app
        .graphql_ok(&nfts_query(top, "first: 7"), Value::Null)
        .await;
    let g_nft = data["nftsByWallet"]["pageInfo"]["endCursor"]
        .as_str()
        .expect("an NFT endCursor")
        .to_string();
    let data = app
        .graphql_ok(
            &transfers_query(&format!("walletAddresses: [{}], first: 7", gql_str(w1))),
            Value::Null,
        )
        .await;
    let g_tr = data["erc20Transfers"]["pageInfo"]["endCursor"]
        .as_str()
        .expect("a transfer endCursor")
        .to_string();
    let gcases = [
        (
            "GraphQL NFT cursor on erc20Transfers",
            transfers_query(&format!("first: 7, after: {}", gql_str(&g_nft))),
        ),
        (
            "GraphQL transfer cursor on nftsByWallet",
            nfts_query(top, &format!("first: 7, after: {}", gql_str(&g_tr))),
        ),
        (
            "GraphQL NFT cursor on another wallet",
            nfts_query(
                other_holder,
                &format!("first: 7, after: {}", gql_str(&g_nft)),
            ),
        ),
        (
            "GraphQL transfer cursor with another wallet",
            transfers_query(&format!(
                "walletAddresses: [{}], first: 7, after: {}",
                gql_str(w2),
                gql_str(&g_tr)
            )),
        ),
        (
            "GraphQL edited NFT cursor",
            nfts_query(
                top,
                &format!(
                    "first: 7, after: {}",
                    gql_str(&edit(&g_nft, g_nft.len() / 2))
                ),
            ),
        ),
        (
            "GraphQL garbage cursor",
            nfts_query(top, "first: 7, after: \"garbage\""),
        ),
    ];
    for (what, q) in &gcases {
        let (status, body) = app.graphql(q, json!({})).await;
        assert_gql_refused(what, status, &body);
    }

    app.cleanup().await;
}

/// (block number, log index) of each transfer.
fn positions(ts: &[&Transfer]) -> Vec<(u64, u64)> {
    ts.iter().map(|t| (t.block_number, t.log_index)).collect()
}

/// Walks a v2.2 transfer route to its end; every record once, in the order of `want`, and
/// `status` on every page. Returns the records.
async fn walk_v2_2(app: &TestApp, uri: &str, limit: usize, want: &[(u64, u64)]) -> Vec<Value> {
    let pages = app.walk_rest(uri, limit).await;
    assert_eq!(
        pages.len(),
        want.len().div_ceil(limit).max(1),
        "pages of {uri}"
    );
    for p in &pages {
        assert_eq!(p.body["status"], "SYNCED", "{uri}: {}", p.body);
    }
    let records: Vec<Value> = pages.into_iter().flat_map(|p| p.records).collect();
    let got: Vec<_> = records
        .iter()
        .map(|r| transfer_key(r, "block_number", "log_index"))
        .collect();
    assert_once(uri, &got);
    assert_eq!(got, want, "{uri}: order or content");
    records
}

/// A v2.2 record against the transfer it stands for, field by field.
fn check_v2_2_record(truth: &Truth, r: &Value, t: &Transfer) {
    let s = |k: &str| r[k].as_str().map(str::to_string);
    assert_eq!(s("address").as_deref(), Some(t.contract.as_str()), "{r}");
    assert_eq!(s("from_address").as_deref(), Some(t.from.as_str()), "{r}");
    assert_eq!(s("to_address").as_deref(), Some(t.to.as_str()), "{r}");
    assert_eq!(s("value").as_deref(), Some(t.value.as_str()), "{r}");
    assert_eq!(s("value_decimal"), truth.value_decimal(t), "{r}");
    assert_eq!(s("block_number"), Some(t.block_number.to_string()), "{r}");
    assert_eq!(
        s("block_hash").as_deref(),
        Some(t.block_hash.as_str()),
        "{r}"
    );
    assert_eq!(
        s("block_timestamp").as_deref(),
        Some(t.block_timestamp.as_str()),
        "{r}"
    );
    assert_eq!(
        s("transaction_hash").as_deref(),
        Some(t.transaction_hash.as_str()),
        "{r}"
    );
    // v2.2 writes the two indexes as JSON integers.
    assert_eq!(
        r["transaction_index"].as_u64(),
        Some(t.transaction_index),
        "{r}"
    );
    assert_eq!(r["log_index"].as_u64(), Some(t.log_index), "{r}");
    let meta = truth.meta.get(&t.contract).cloned().unwrap_or_default();
    assert_eq!(s("token_symbol"), meta.symbol, "{r}");
    assert_eq!(
        s("token_decimals"),
        meta.decimals.map(|d| d.to_string()),
        "{r}"
    );
    assert!(
        r["possible_spam"].is_boolean() && r["verified_contract"].is_boolean(),
        "{r}"
    );
    for never in [
        "from_address_entity",
        "from_address_entity_logo",
        "to_address_entity",
        "to_address_entity_logo",
    ] {
        assert!(
            r[never].is_null(),
            "{never} is data tokenql does not have: {r}"
        );
    }
    // Old v2 names are not mixed in.
    assert!(
        r.get("from_wallet").is_none() && r.get("contract_address").is_none(),
        "{r}"
    );
}

/// `GET /{address}/erc20/transfers` and `GET /erc20/{address}/transfers`: both orders, block
/// and date bounds (ISO 8601 and seconds; a block bound wins), `contract_addresses`, record
/// fields, and the errors of the new parameters.
async fn v2_2_transfer_routes(backend: Backend) {
    let truth = Truth::demo();
    let app = common::spawn(backend).await;
    app.load_demo().await;
    let busy = truth.busiest_wallets();
    let (w, n) = &busy[1];
    assert!(*n > 14, "a busy wallet spans several pages of 7");
    let mine = truth.transfers_of(&[w]);

    // Newest first by default, in any letter case of the path; oldest first with order=ASC.
    let desc = positions(&mine);
    let records = walk_v2_2(
        &app,
        &format!("/api/v2.2/{w}/erc20/transfers?limit=7"),
        7,
        &desc,
    )
    .await;
    for (r, t) in records.iter().zip(&mine) {
        check_v2_2_record(&truth, r, t);
    }
    let mut asc = desc.clone();
    asc.reverse();
    let upper = format!("0x{}", w[2..].to_uppercase());
    walk_v2_2(
        &app,
        &format!("/api/v2/{upper}/erc20/transfers?limit=7&order=asc"),
        7,
        &asc,
    )
    .await;

    // A token's transfers, both orders, in pages of 100.
    let token = mine[0].contract.clone();
    let of_token: Vec<&Transfer> = truth
        .transfers
        .iter()
        .filter(|t| t.contract == token)
        .collect();
    let want = positions(&of_token);
    walk_v2_2(
        &app,
        &format!("/api/v2.2/erc20/{token}/transfers?limit=100"),
        100,
        &want,
    )
    .await;
    let mut want_asc = want.clone();
    want_asc.reverse();
    walk_v2_2(
        &app,
        &format!("/api/v2.2/erc20/{token}/transfers?limit=9&order=ASC"),
        9,
        &want_asc,
    )
    .await;

    // Date bounds, inclusive: from the time of a middle transfer (ISO 8601) to that of a later
    // one (seconds); a block bound on the same side wins over a date.
    let (lo, hi) = (&mine[mine.len() * 3 / 4], &mine[mine.len() / 4]);
    assert!(
        lo.block_time < hi.block_time,
        "the wallet's transfers span several blocks"
    );
    let inside: Vec<&Transfer> = mine
        .iter()
        .copied()
        .filter(|t| (lo.block_time..=hi.block_time).contains(&t.block_time))
        .collect();
    assert!(
        inside.len() < mine.len(),
        "the date bounds leave some transfers out"
    );
    let dated = format!(
        "/api/v2.2/{w}/erc20/transfers?limit=5&from_date={}&to_date={}",
        enc(&lo.block_timestamp),
        hi.block_time
    );
    walk_v2_2(&app, &dated, 5, &positions(&inside)).await;
    let by_block: Vec<&Transfer> = mine
        .iter()
        .copied()
        .filter(|t| t.block_number >= lo.block_number && t.block_time <= hi.block_time)
        .collect();
    walk_v2_2(
        &app,
        &format!(
            "/api/v2.2/{w}/erc20/transfers?limit=5&from_block={}&from_date=2999-01-01&to_date={}",
            lo.block_number, hi.block_time
        ),
        5,
        &positions(&by_block),
    )
    .await;

    // contract_addresses narrows a wallet's transfers to those tokens.
    let of_mine_token: Vec<&Transfer> = mine
        .iter()
        .copied()
        .filter(|t| t.contract == token)
        .collect();
    walk_v2_2(
        &app,
        &format!("/api/v2.2/{w}/erc20/transfers?limit=4&contract_addresses[]={token}"),
        4,
        &positions(&of_mine_token),
    )
    .await;

    // The new parameters' errors name the parameter; a cursor is bound to its order.
    let (_, _, first) = app
        .get_rest(&format!("/api/v2.2/{w}/erc20/transfers?limit=7"))
        .await;
    let cursor = first["cursor"].as_str().expect("a cursor").to_string();
    let bad = [
        (format!("/api/v2.2/{w}/erc20/transfers?order=up"), "order"),
        (
            format!("/api/v2.2/{w}/erc20/transfers?from_date=yesterday"),
            "from_date",
        ),
        (
            format!("/api/v2.2/{w}/erc20/transfers?to_date=2023-02-30"),
            "to_date",
        ),
        (
            format!("/api/v2.2/{w}/erc20/transfers?from_date=2023-03-02&to_date=2023-03-01"),
            "from_date",
        ),
        ("/api/v2.2/erc20/0x12/transfers".to_string(), "address"),
        ("/api/v2.2/nonsense/erc20/transfers".to_string(), "address"),
        (
            format!(
                "/api/v2.2/{w}/erc20/transfers?limit=7&order=ASC&cursor={}",
                enc(&cursor)
            ),
            "cursor",
        ),
    ];
    for (uri, name) in bad {
        let (status, _, body) = app.get_rest(&uri).await;
        assert_eq!(status, 400, "{uri}: {body}");
        assert!(
            body["message"]
                .as_str()
                .is_some_and(|m| m.starts_with(&format!("{name}:"))),
            "{uri}: the message should name {name}: {body}"
        );
    }

    app.cleanup().await;
}

/// (block number, log index) of each NFT move (the demo has no batches: batch index 0).
fn move_positions(ms: &[&NftMove]) -> Vec<(u64, u64)> {
    ms.iter().map(|m| (m.block, m.log)).collect()
}

/// A v2.2 NFT transfer record against the move it stands for, field by field.
fn check_nft_transfer_record(r: &Value, m: &NftMove) {
    let s = |k: &str| r[k].as_str().map(str::to_string);
    assert_eq!(
        s("token_address").as_deref(),
        Some(m.contract.as_str()),
        "{r}"
    );
    assert_eq!(s("token_id"), Some(hex_to_dec(&m.id_hex)), "{r}");
    assert_eq!(s("from_address").as_deref(), Some(m.from.as_str()), "{r}");
    assert_eq!(s("to_address").as_deref(), Some(m.to.as_str()), "{r}");
    assert_eq!(s("amount"), Some(m.amount.to_string()), "{r}");
    let kind = if m.erc1155 { "ERC1155" } else { "ERC721" };
    assert_eq!(s("contract_type").as_deref(), Some(kind), "{r}");
    assert_eq!(s("block_number"), Some(m.block.to_string()), "{r}");
    assert_eq!(s("block_timestamp"), Some(iso8601(m.time)), "{r}");
    assert_eq!(
        s("transaction_hash").as_deref(),
        Some(m.transaction_hash.as_str()),
        "{r}"
    );
    assert_eq!(r["log_index"].as_u64(), Some(m.log), "{r}");
    assert!(r["transaction_index"].is_u64(), "{r}");
    if !m.erc1155 {
        assert!(r["operator"].is_null(), "ERC721 has no operator: {r}");
    }
    for never in [
        "value",
        "transaction_type",
        "last_sale",
        "from_address_entity",
        "to_address_entity",
    ] {
        assert!(
            r[never].is_null(),
            "{never} is data tokenql does not have: {r}"
        );
    }
    assert!(
        r["possible_spam"].is_boolean() && r["verified_collection"].is_boolean(),
        "{r}"
    );
}

/// `GET /{address}/nft/transfers` and `GET /nft/{address}/transfers`: both orders, date and
/// block bounds, `contract_addresses`, `format=hex`, mints and burns, record fields, errors.
async fn v2_2_nft_transfer_routes(backend: Backend) {
    let truth = Truth::demo();
    let app = common::spawn(backend).await;
    app.load_demo().await;

    // The wallet in the most moves (mints' and burns' zero address aside).
    let mut counts: std::collections::BTreeMap<&str, usize> = Default::default();
    for m in &truth.nft_moves {
        for w in [&m.from, &m.to] {
            if w != ZERO {
                *counts.entry(w).or_default() += 1;
            }
        }
    }
    let (w, n) = counts
        .iter()
        .max_by_key(|(a, n)| (**n, std::cmp::Reverse(**a)))
        .map(|(a, n)| (a.to_string(), *n))
        .expect("NFT moves in the demo");
    assert!(
        n > 14,
        "the busiest NFT wallet spans several pages of 7: {n}"
    );
    let mine: Vec<&NftMove> = truth
        .nft_moves
        .iter()
        .filter(|m| m.from == w || m.to == w)
        .collect();
    let desc = move_positions(&mine);
    let records = walk_v2_2(
        &app,
        &format!("/api/v2.2/{w}/nft/transfers?limit=7"),
        7,
        &desc,
    )
    .await;
    for (r, m) in records.iter().zip(&mine) {
        check_nft_transfer_record(r, m);
    }
    let mut asc = desc.clone();
    asc.reverse();
    walk_v2_2(
        &app,
        &format!("/api/v2/{w}/nft/transfers?limit=5&order=ASC"),
        5,
        &asc,
    )
    .await;

    // A collection's moves, mints and burns included, both orders.
    let mut by_collection: std::collections::BTreeMap<&str, usize> = Default::default();
    for m in &truth.nft_moves {
        *by_collection.entry(&m.contract).or_default() += 1;
    }
    let (c, _) = by_collection
        .iter()
        .max_by_key(|(a, n)| (**n, std::cmp::Reverse(**a)))
        .expect("a collection");
    let of_c: Vec<&NftMove> = truth
        .nft_moves
        .iter()
        .filter(|m| m.contract == *c)
        .collect();
    let want = move_positions(&of_c);
    walk_v2_2(
        &app,
        &format!("/api/v2.2/nft/{c}/transfers?limit=100"),
        100,
        &want,
    )
    .await;
    let mut want_asc = want.clone();
    want_asc.reverse();
    walk_v2_2(
        &app,
        &format!("/api/v2.2/nft/{c}/transfers?limit=9&order=asc"),
        9,
        &want_asc,
    )
    .await;
    // One token's moves (`getNFTTransfers`): the collection's, of that token only; the id in
    // decimal or hex.
    let mut by_token: std::collections::BTreeMap<(&str, &str), usize> = Default::default();
    for m in &truth.nft_moves {
        *by_token.entry((&m.contract, &m.id_hex)).or_default() += 1;
    }
    let ((tc, tid), n) = by_token
        .iter()
        .max_by_key(|(k, n)| (**n, std::cmp::Reverse(**k)))
        .expect("a token");
    assert!(*n > 1, "the demo's busiest token moved more than once");
    let of_token: Vec<&NftMove> = truth
        .nft_moves
        .iter()
        .filter(|m| m.contract == *tc && m.id_hex == *tid)
        .collect();
    let dec = hex_to_dec(tid);
    let records = walk_v2_2(
        &app,
        &format!("/api/v2.2/nft/{tc}/{dec}/transfers?limit=1"),
        1,
        &move_positions(&of_token),
    )
    .await;
    for (r, m) in records.iter().zip(&of_token) {
        check_nft_transfer_record(r, m);
    }
    let hex = format!("0x{}", tid.trim_start_matches('0'));
    let mut asc = move_positions(&of_token);
    asc.reverse();
    walk_v2_2(
        &app,
        &format!("/api/v2/nft/{tc}/{hex}/transfers?order=ASC&limit=100"),
        100,
        &asc,
    )
    .await;
    for (uri, name) in [
        (format!("/api/v2.2/nft/{tc}/twelve/transfers"), "token_id"),
        (
            format!("/api/v2.2/nft/{tc}/{dec}/transfers?limit=0"),
            "limit",
        ),
    ] {
        let (status, _, body) = app.get_rest(&uri).await;
        assert_eq!(status, 400, "{uri}: {body}");
        assert!(
            body["message"]
                .as_str()
                .is_some_and(|m| m.starts_with(name)),
            "{uri}: {body}"
        );
    }

    // And the collection of the demo's first mint, mints and all.
    let minted = &truth
        .nft_moves
        .iter()
        .find(|m| m.from == ZERO)
        .expect("the demo has mints")
        .contract;
    let of_minted: Vec<&NftMove> = truth
        .nft_moves
        .iter()
        .filter(|m| &m.contract == minted)
        .collect();
    let records = walk_v2_2(
        &app,
        &format!("/api/v2.2/nft/{minted}/transfers?limit=6"),
        6,
        &move_positions(&of_minted),
    )
    .await;
    for (r, m) in records.iter().zip(&of_minted) {
        check_nft_transfer_record(r, m);
    }

    // A burn: the zero address as recipient.
    {
        let burn = truth
            .nft_moves
            .iter()
            .find(|m| m.to == ZERO && m.from != ZERO)
            .expect("the demo has burns");
        let uri = format!(
            "/api/v2.2/nft/{}/transfers?from_block={b}&to_block={b}",
            burn.contract,
            b = burn.block
        );
        let (status, _, body) = app.get_rest(&uri).await;
        assert_eq!(status, 200, "{body}");
        assert!(
            body["result"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|r| r["to_address"] == ZERO && r["log_index"].as_u64() == Some(burn.log)),
            "the burn is a record: {body}"
        );
    }

    // Date bounds (ISO 8601 and seconds), a block bound winning, and one collection only.
    let (lo, hi) = (mine[mine.len() * 3 / 4], mine[mine.len() / 4]);
    let inside: Vec<&NftMove> = mine
        .iter()
        .copied()
        .filter(|m| (lo.time..=hi.time).contains(&m.time))
        .collect();
    let uri = format!(
        "/api/v2.2/{w}/nft/transfers?limit=4&from_date={}&to_date={}",
        enc(&iso8601(lo.time)),
        hi.time
    );
    walk_v2_2(&app, &uri, 4, &move_positions(&inside)).await;
    let by_block: Vec<&NftMove> = mine
        .iter()
        .copied()
        .filter(|m| m.block <= hi.block && m.time >= lo.time)
        .collect();
    let uri = format!(
        "/api/v2.2/{w}/nft/transfers?limit=4&to_block={}&to_date=1000&from_date={}",
        hi.block, lo.time
    );
    walk_v2_2(&app, &uri, 4, &move_positions(&by_block)).await;
    let one = &mine[0].contract;
    let of_one: Vec<&NftMove> = mine
        .iter()
        .copied()
        .filter(|m| &m.contract == one)
        .collect();
    let uri = format!("/api/v2.2/{w}/nft/transfers?contract_addresses={one}&limit=3");
    walk_v2_2(&app, &uri, 3, &move_positions(&of_one)).await;

    // format=hex writes the same ids in hex.
    let (status, _, body) = app
        .get_rest(&format!("/api/v2.2/{w}/nft/transfers?limit=3&format=hex"))
        .await;
    assert_eq!(status, 200, "{body}");
    for (r, m) in body["result"].as_array().expect("result").iter().zip(&mine) {
        let hex = m.id_hex.trim_start_matches('0');
        let want = format!("0x{}", if hex.is_empty() { "0" } else { hex });
        assert_eq!(r["token_id"].as_str(), Some(want.as_str()), "{r}");
    }

    // Errors name the parameter; an ERC20 transfer cursor is not an NFT transfer cursor.
    let busy = &truth.busiest_wallets()[1].0;
    let (_, _, erc20) = app
        .get_rest(&format!("/api/v2.2/{busy}/erc20/transfers?limit=1"))
        .await;
    let foreign = enc(erc20["cursor"]
        .as_str()
        .expect("a busy wallet's ERC20 cursor"));
    for (uri, name) in [
        (
            format!("/api/v2.2/{w}/nft/transfers?order=sideways"),
            "order",
        ),
        (
            format!("/api/v2.2/{w}/nft/transfers?format=octal"),
            "format",
        ),
        (
            format!("/api/v2.2/{w}/nft/transfers?to_date=tomorrow"),
            "to_date",
        ),
        (format!("/api/v2.2/{w}/nft/transfers?chain="), "chain"),
        ("/api/v2.2/nft/0xzz/transfers".to_string(), "address"),
        (
            format!("/api/v2.2/{w}/nft/transfers?cursor={foreign}"),
            "cursor",
        ),
    ] {
        let (status, _, body) = app.get_rest(&uri).await;
        assert_eq!(status, 400, "{uri}: {body}");
        assert!(
            body["message"]
                .as_str()
                .is_some_and(|m| m.starts_with(&format!("{name}:"))),
            "{uri}: the message should name {name}: {body}"
        );
    }

    app.cleanup().await;
}

/// `GET /nft/{address}/owners` and `GET /nft/{address}/{token_id}/owners` against the demo's
/// holdings: order (token id, then owner), record fields, an ERC1155 id with several holders,
/// hex ids, a token id of 2^256-1, and errors.
async fn v2_2_owner_routes(backend: Backend) {
    let truth = Truth::demo();
    let app = common::spawn(backend).await;
    app.load_demo().await;
    let all: Vec<&Nft> = truth.nfts.values().flatten().collect();
    let holders_of = |contract: &str| -> Vec<&Nft> {
        let mut v: Vec<&Nft> = all
            .iter()
            .copied()
            .filter(|n| n.contract == contract)
            .collect();
        v.sort_by(|a, b| (&a.token_id_hex, &a.owner).cmp(&(&b.token_id_hex, &b.owner)));
        v
    };
    let key = |r: &Value| {
        (
            text(&r["token_id"]).unwrap_or_default(),
            text(&r["owner_of"]).unwrap_or_default(),
        )
    };

    // The collection with the most holdings, in pages of 7.
    let mut counts: std::collections::BTreeMap<&str, usize> = Default::default();
    for n in &all {
        *counts.entry(&n.contract).or_default() += 1;
    }
    let (c, n) = counts
        .iter()
        .max_by_key(|(a, n)| (**n, std::cmp::Reverse(**a)))
        .map(|(a, n)| (a.to_string(), *n))
        .expect("holdings");
    assert!(n > 7, "the biggest collection spans pages of 7: {n}");
    let want = holders_of(&c);
    let pages = app
        .walk_rest(&format!("/api/v2.2/nft/{c}/owners?limit=7"), 7)
        .await;
    assert_eq!(pages.len(), want.len().div_ceil(7), "pages of {c}'s owners");
    let records: Vec<Value> = pages.iter().flat_map(|p| p.records.clone()).collect();
    for p in &pages {
        assert_eq!(p.body["status"], "SYNCED", "{}", p.body);
    }
    let got: Vec<_> = records.iter().map(key).collect();
    assert_once("owners", &got);
    let expected: Vec<_> = want
        .iter()
        .map(|n| (n.token_id.clone(), n.owner.clone()))
        .collect();
    assert_eq!(got, expected, "owners of {c}: order or content");
    for (r, h) in records.iter().zip(&want) {
        assert_eq!(
            r["token_address"].as_str(),
            Some(h.contract.as_str()),
            "{r}"
        );
        assert_eq!(text(&r["amount"]), Some(h.amount.clone()), "{r}");
        assert_eq!(
            r["contract_type"].as_str(),
            Some(h.contract_type.as_str()),
            "{r}"
        );
        assert_eq!(
            text(&r["block_number"]),
            Some(h.block_number.to_string()),
            "{r}"
        );
    }

    // One token: an ERC1155 id with several holders if the demo has one, else any token.
    let mut by_token: std::collections::BTreeMap<(&str, &str), Vec<&Nft>> = Default::default();
    for n in &all {
        by_token
            .entry((&n.contract, &n.token_id_hex))
            .or_default()
            .push(n);
    }
    let ((tc, _), holders) = by_token
        .iter()
        .max_by_key(|(k, v)| (v.len(), std::cmp::Reverse(**k)))
        .expect("a token");
    let mut want: Vec<String> = holders.iter().map(|n| n.owner.clone()).collect();
    want.sort();
    let id = &holders[0].token_id;
    let pages = app
        .walk_rest(&format!("/api/v2.2/nft/{tc}/{id}/owners?limit=1"), 1)
        .await;
    let got: Vec<String> = pages
        .iter()
        .flat_map(|p| {
            p.records
                .iter()
                .map(|r| text(&r["owner_of"]).unwrap_or_default())
        })
        .collect();
    assert_eq!(got, want, "owners of {tc} #{id}");
    let digits = holders[0].token_id_hex.trim_start_matches('0');
    let hex_id = format!("0x{}", if digits.is_empty() { "0" } else { digits });
    let (status, _, body) = app
        .get_rest(&format!("/api/v2.2/nft/{tc}/{hex_id}/owners?format=hex"))
        .await;
    assert_eq!(status, 200, "{body}");
    assert!(
        body["result"]
            .as_array()
            .is_some_and(|r| !r.is_empty() && r.iter().all(|x| x["token_id"] == hex_id.as_str())),
        "a hex token id in the path and format=hex: {body}"
    );

    // The largest token id there is: nobody holds it, and that is a complete answer.
    let max = "115792089237316195423570985008687907853269984665640564039457584007913129639935";
    let (status, _, body) = app
        .get_rest(&format!("/api/v2.2/nft/{c}/{max}/owners"))
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["result"], json!([]), "{body}");
    assert_eq!(body["status"], "SYNCED", "{body}");

    for (uri, name) in [
        (format!("/api/v2.2/nft/{c}/{max}0/owners"), "token_id"),
        (format!("/api/v2.2/nft/{c}/twelve/owners"), "token_id"),
        (format!("/api/v2.2/nft/{c}/owners?limit=0"), "limit"),
        (format!("/api/v2.2/nft/{c}/owners?format="), "format"),
        ("/api/v2.2/nft/0x12/owners".to_string(), "address"),
        (format!("/api/v2.2/nft/{c}/owners?cursor=nope"), "cursor"),
    ] {
        let (status, _, body) = app.get_rest(&uri).await;
        assert_eq!(status, 400, "{uri}: {body}");
        assert!(
            body["message"]
                .as_str()
                .is_some_and(|m| m.starts_with(&format!("{name}:"))),
            "{uri}: the message should name {name}: {body}"
        );
    }
    app.cleanup().await;
}

/// `GET /{address}/nft/collections` against the demo's holdings: every collection once, by
/// address, with the wallet's token counts; `exclude_spam`; errors.
async fn v2_2_collections_route(backend: Backend) {
    let truth = Truth::demo();
    let app = common::spawn(backend).await;
    app.load_demo().await;
    let per_wallet = |nfts: &[Nft]| -> std::collections::BTreeMap<String, (usize, String)> {
        let mut m = std::collections::BTreeMap::new();
        for n in nfts {
            let e = m
                .entry(n.contract.clone())
                .or_insert((0, n.contract_type.clone()));
            e.0 += 1;
        }
        m
    };
    let (w, want) = truth
        .nfts
        .iter()
        .map(|(w, v)| (w.clone(), per_wallet(v)))
        .max_by_key(|(w, m)| (m.len(), std::cmp::Reverse(w.clone())))
        .expect("holders");
    assert!(
        want.len() > 3,
        "the wallet holds several collections: {}",
        want.len()
    );
    let pages = app
        .walk_rest(
            &format!("/api/v2.2/{w}/nft/collections?limit=3&token_counts=true"),
            3,
        )
        .await;
    assert_eq!(
        pages.len(),
        want.len().div_ceil(3),
        "pages of {w}'s collections"
    );
    let records: Vec<Value> = pages.iter().flat_map(|p| p.records.clone()).collect();
    for p in &pages {
        assert_eq!(p.body["status"], "SYNCED", "{}", p.body);
    }
    let got: Vec<(String, usize, String)> = records
        .iter()
        .map(|r| {
            (
                text(&r["token_address"]).unwrap_or_default(),
                r["count"].as_u64().unwrap_or(0) as usize,
                text(&r["contract_type"]).unwrap_or_default(),
            )
        })
        .collect();
    let expected: Vec<(String, usize, String)> = want
        .iter()
        .map(|(c, (n, t))| (c.clone(), *n, t.clone()))
        .collect();
    assert_eq!(got, expected, "{w}'s collections: order, counts or types");
    for r in &records {
        for never in ["collection_logo", "floor_price", "last_sale"] {
            assert!(r[never].is_null(), "{never}: {r}");
        }
    }

    // Without token_counts there is no count; exclude_spam leaves out exactly the spam ones.
    let (status, _, body) = app
        .get_rest(&format!("/api/v2.2/{w}/nft/collections"))
        .await;
    assert_eq!(status, 200, "{body}");
    let all = body["result"].as_array().cloned().unwrap_or_default();
    assert!(all.iter().all(|r| r["count"].is_null()), "{body}");
    let (status, _, body) = app
        .get_rest(&format!("/api/v2.2/{w}/nft/collections?exclude_spam=true"))
        .await;
    assert_eq!(status, 200, "{body}");
    let kept: Vec<&Value> = all.iter().filter(|r| r["possible_spam"] != true).collect();
    let got: Vec<&Value> = body["result"].as_array().into_iter().flatten().collect();
    assert_eq!(got, kept, "exclude_spam=true");

    for (uri, name) in [
        (
            format!("/api/v2.2/{w}/nft/collections?token_counts=maybe"),
            "token_counts",
        ),
        (format!("/api/v2.2/{w}/nft/collections?limit=101"), "limit"),
        ("/api/v2.2/0x1/nft/collections".to_string(), "address"),
        (
            format!("/api/v2.2/{w}/nft/collections?cursor=x.y"),
            "cursor",
        ),
    ] {
        let (status, _, body) = app.get_rest(&uri).await;
        assert_eq!(status, 400, "{uri}: {body}");
        assert!(
            body["message"]
                .as_str()
                .is_some_and(|m| m.starts_with(&format!("{name}:"))),
            "{uri}: the message should name {name}: {body}"
        );
    }
    app.cleanup().await;
}

/// A wallet's ERC20 balances computed from the demo's transfers, independently: received minus
/// sent per contract, in blocks up to `to_block`, zero and negative sums left out (a sample of
/// mainnet starts with balances it does not show), by contract address.
fn balances_of(
    truth: &Truth,
    wallet: &str,
    to_block: u64,
) -> std::collections::BTreeMap<String, alloy::primitives::U256> {
    use alloy::primitives::{U256, U512};
    let mut sums: std::collections::BTreeMap<String, (U512, U512)> = Default::default();
    for t in truth
        .transfers
        .iter()
        .filter(|t| t.block_number <= to_block)
    {
        let v = U512::from(U256::from_str_radix(&t.value, 10).expect("a decimal value"));
        let e = sums.entry(t.contract.clone()).or_default();
        if t.to == wallet {
            e.0 += v;
        }
        if t.from == wallet {
            e.1 += v;
        }
    }
    sums.into_iter()
        .filter(|(_, (got, sent))| got > sent)
        .map(|(c, (got, sent))| (c, U256::from(got - sent)))
        .collect()
}

/// `GET /{address}/erc20` against balances summed in the test: every non-zero balance once, by
/// token address, exact; `to_block`, `token_addresses`, `exclude_spam` (default `true`); the
/// `X-Sync-Status` header; errors.
async fn v2_2_balances_route(backend: Backend) {
    let truth = Truth::demo();
    let app = common::spawn(backend).await;
    app.load_demo().await;
    let busiest = truth.busiest_wallets();
    let listed = crate::support::common::truth::token_list();
    let (mut checked, mut logos) = (0, 0);
    for (w, _) in busiest.iter().take(4) {
        let want = balances_of(&truth, w, u64::MAX);
        let (status, headers, body) = app
            .get_rest(&format!("/api/v2.2/{w}/erc20?exclude_spam=false"))
            .await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(
            headers.get("x-sync-status").and_then(|v| v.to_str().ok()),
            Some("SYNCED"),
            "{w}: the status header"
        );
        let records = body
            .as_array()
            .cloned()
            .expect("a bare array, as v2.2 answers");
        let got: Vec<(String, String)> = records
            .iter()
            .map(|r| {
                (
                    text(&r["token_address"]).unwrap_or_default(),
                    text(&r["balance"]).unwrap_or_default(),
                )
            })
            .collect();
        let expected: Vec<(String, String)> = want
            .iter()
            .map(|(c, v)| (c.clone(), v.to_string()))
            .collect();
        assert_eq!(got, expected, "{w}'s balances: order or amounts");
        checked += expected.len();
        for r in &records {
            let meta = truth
                .meta
                .get(r["token_address"].as_str().unwrap_or_default());
            if let Some(d) = meta.and_then(|m| m.decimals) {
                assert_eq!(r["decimals"], json!(d), "{r}");
            }
            // The token list's logo, as the transfer routes' `token_logo` (issue 25).
            let logo = listed
                .get(r["token_address"].as_str().unwrap_or_default())
                .map(|t| t.logo.clone())
                .filter(|l| !l.is_empty());
            assert_eq!(text(&r["logo"]), logo, "{r}");
            assert_eq!(r["thumbnail"], r["logo"], "{r}");
            logos += usize::from(logo.is_some());
            assert!(r["possible_spam"].is_boolean() && r["verified_contract"].is_boolean());
        }
        // The default leaves out exactly the tokens marked possible spam.
        let (_, _, default) = app.get_rest(&format!("/api/v2.2/{w}/erc20")).await;
        let kept: Vec<&Value> = records
            .iter()
            .filter(|r| r["possible_spam"] != true)
            .collect();
        let got: Vec<&Value> = default.as_array().into_iter().flatten().collect();
        assert_eq!(got, kept, "{w}: exclude_spam defaults to true");
    }
    assert!(
        checked > 4 && logos > 0,
        "the busiest wallets hold several tokens, some listed: {checked}, {logos} with a logo"
    );

    // A balance in the past, and of named tokens only.
    let (w, _) = &busiest[0];
    let mut blocks: Vec<u64> = truth
        .transfers_of(&[w])
        .iter()
        .map(|t| t.block_number)
        .collect();
    blocks.sort();
    let mid = blocks[blocks.len() / 2];
    let want = balances_of(&truth, w, mid);
    let (status, _, body) = app
        .get_rest(&format!(
            "/api/v2.2/{w}/erc20?to_block={mid}&exclude_spam=false"
        ))
        .await;
    assert_eq!(status, 200, "{body}");
    let got: Vec<(String, String)> = body
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            (
                text(&r["token_address"]).unwrap_or_default(),
                text(&r["balance"]).unwrap_or_default(),
            )
        })
        .collect();
    let expected: Vec<(String, String)> = want
        .iter()
        .map(|(c, v)| (c.clone(), v.to_string()))
        .collect();
    assert_eq!(got, expected, "{w}'s balances at block {mid}");
    let named: Vec<String> = balances_of(&truth, w, u64::MAX)
        .into_keys()
        .take(2)
        .collect();
    let (status, _, body) = app
        .get_rest(&format!(
            "/api/v2.2/{w}/erc20?exclude_spam=false&token_addresses[]={}&token_addresses[]={}",
            named[0].to_uppercase().replace("0X", "0x"),
            named.get(1).unwrap_or(&named[0])
        ))
        .await;
    assert_eq!(status, 200, "{body}");
    let got: Vec<String> = body
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| text(&r["token_address"]))
        .collect();
    let mut want: Vec<String> = named.clone();
    want.dedup();
    assert_eq!(got, want, "token_addresses");

    // A balance as of a block the chain has not reached is refused, naming the head.
    let head = truth
        .transfers
        .iter()
        .map(|t| t.block_number)
        .max()
        .unwrap_or(0);
    let (status, _, body) = app
        .get_rest(&format!("/api/v2.2/{w}/erc20?to_block={}", head + 1))
        .await;
    assert_eq!(status, 400, "{body}");
    let message = body["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("to_block") && message.contains(&format!("head ({head})")),
        "{message}"
    );
    for (uri, name) in [
        (format!("/api/v2.2/{w}/erc20?to_block=-1"), "to_block"),
        (
            format!("/api/v2.2/{w}/erc20?exclude_spam=maybe"),
            "exclude_spam",
        ),
        (format!("/api/v2.2/{w}/erc20?chain="), "chain"),
        (
            format!("/api/v2.2/{w}/erc20?token_addresses=0x12"),
            "token_addresses",
        ),
        ("/api/v2.2/0x12/erc20".to_string(), "address"),
    ] {
        let (status, _, body) = app.get_rest(&uri).await;
        assert_eq!(status, 400, "{uri}: {body}");
        assert!(
            body["message"]
                .as_str()
                .is_some_and(|m| m.starts_with(&format!("{name}:"))),
            "{uri}: the message should name {name}: {body}"
        );
    }
    app.cleanup().await;
}

/// `GET /nft/{address}` against the demo's holdings grouped per token in the test: one record
/// per token id, by token id, the holder when there is one, the amount over all holders (an
/// ERC1155 id with several holders), hex ids, errors.
async fn v2_2_collection_nfts_route(backend: Backend) {
    use alloy::primitives::U256;
    let truth = Truth::demo();
    let app = common::spawn(backend).await;
    app.load_demo().await;
    // Per (contract, token id): holders and the amount held over all of them.
    let mut tokens: std::collections::BTreeMap<(String, String), (Vec<&Nft>, U256)> =
        Default::default();
    for n in truth.nfts.values().flatten() {
        let e = tokens
            .entry((n.contract.clone(), n.token_id_hex.clone()))
            .or_default();
        e.0.push(n);
        e.1 += U256::from_str_radix(&n.amount, 10).expect("a decimal amount");
    }
    let of = |c: &str| -> Vec<(String, Option<String>, String)> {
        tokens
            .iter()
            .filter(|((tc, _), _)| tc == c)
            .map(|(_, (holders, amount))| {
                let owner = (holders.len() == 1).then(|| holders[0].owner.clone());
                (holders[0].token_id.clone(), owner, amount.to_string())
            })
            .collect()
    };
    let mut ids_per: std::collections::BTreeMap<&str, usize> = Default::default();
    for (c, _) in tokens.keys() {
        *ids_per.entry(c).or_default() += 1;
    }
    // A collection with a token held by several wallets, if the demo has one (the anvil
    // scenario of tests/chain/history_on_demand.rs has ERC1155 ids held by several).
    let shared = tokens
        .iter()
        .filter(|(_, (h, _))| h.len() > 1)
        .map(|((c, _), _)| c.clone())
        .next();
    let biggest = ids_per
        .iter()
        .max_by_key(|(c, n)| (**n, std::cmp::Reverse(**c)))
        .map(|(c, _)| c.to_string())
        .expect("collections");
    assert!(
        ids_per[biggest.as_str()] > 7,
        "the biggest collection spans pages of 7"
    );
    for c in std::iter::once(biggest).chain(shared) {
        let want = of(&c);
        let pages = app
            .walk_rest(&format!("/api/v2.2/nft/{c}?limit=7"), 7)
            .await;
        assert_eq!(pages.len(), want.len().div_ceil(7), "pages of {c}'s NFTs");
        for p in &pages {
            assert_eq!(p.body["status"], "SYNCED", "{}", p.body);
        }
        let records: Vec<Value> = pages.iter().flat_map(|p| p.records.clone()).collect();
        let got: Vec<(String, Option<String>, String)> = records
            .iter()
            .map(|r| {
                (
                    text(&r["token_id"]).unwrap_or_default(),
                    r["owner_of"].as_str().map(str::to_string),
                    text(&r["amount"]).unwrap_or_default(),
                )
            })
            .collect();
        assert_eq!(got, want, "{c}'s NFTs: order, holders or amounts");
        assert!(
            records.iter().all(|r| r["token_address"] == c.as_str()),
            "token_address"
        );
    }

    // One NFT (`getNFTMetadata`): the same record, alone, for a token held by one wallet and
    // (if the demo has one) by several; the id in decimal or hex; a token nobody holds is a 404.
    let single = tokens.iter().find(|(_, (h, _))| h.len() == 1);
    let several = tokens.iter().find(|(_, (h, _))| h.len() > 1);
    for ((c, id_hex), (holders, amount)) in single.into_iter().chain(several) {
        let id = &holders[0].token_id;
        for path_id in [id.clone(), format!("0x{}", id_hex.trim_start_matches('0'))] {
            let (status, headers, body) =
                app.get_rest(&format!("/api/v2.2/nft/{c}/{path_id}")).await;
            assert_eq!(status, 200, "{c} #{path_id}: {body}");
            assert_eq!(
                headers.get("x-sync-status").and_then(|v| v.to_str().ok()),
                Some("SYNCED")
            );
            let owner = (holders.len() == 1).then(|| holders[0].owner.clone());
            assert_eq!(
                (
                    body["token_address"].as_str(),
                    text(&body["token_id"]),
                    body["owner_of"].as_str().map(str::to_string),
                    text(&body["amount"]),
                ),
                (
                    Some(c.as_str()),
                    Some(id.clone()),
                    owner,
                    Some(amount.to_string())
                ),
                "{c} #{path_id}"
            );
        }
    }
    let (c, _) = tokens.keys().next().expect("a token");
    let (status, _, body) = app
        .get_rest(&format!("/api/v2.2/nft/{c}/115792089237316195423570985008687907853269984665640564039457584007913129639935"))
        .await;
    assert_eq!(status, 404, "{body}");
    assert!(
        body["message"]
            .as_str()
            .is_some_and(|m| m.contains("nobody holds it")),
        "{body}"
    );
    let (status, _, body) = app.get_rest(&format!("/api/v2.2/nft/{c}/twelve")).await;
    assert_eq!(status, 400, "{body}");

    // Hex ids, and errors.
    let (c, _) = tokens.keys().next().expect("a token");
    let (status, _, body) = app.get_rest(&format!("/api/v2.2/nft/{c}?format=hex")).await;
    assert_eq!(status, 200, "{body}");
    assert!(
        body["result"].as_array().is_some_and(|r| !r.is_empty()
            && r.iter()
                .all(|x| x["token_id"].as_str().is_some_and(|t| t.starts_with("0x")))),
        "format=hex: {body}"
    );
    for (uri, name) in [
        (format!("/api/v2.2/nft/{c}?limit=0"), "limit"),
        (format!("/api/v2.2/nft/{c}?format=octal"), "format"),
        (
            format!("/api/v2.2/nft/{c}?normalizeMetadata="),
            "normalizeMetadata",
        ),
        ("/api/v2.2/nft/0x12".to_string(), "address"),
        (format!("/api/v2.2/nft/{c}?cursor=nope"), "cursor"),
    ] {
        let (status, _, body) = app.get_rest(&uri).await;
        assert_eq!(status, 400, "{uri}: {body}");
        assert!(
            body["message"]
                .as_str()
                .is_some_and(|m| m.starts_with(&format!("{name}:"))),
            "{uri}: the message should name {name}: {body}"
        );
    }
    app.cleanup().await;
}
