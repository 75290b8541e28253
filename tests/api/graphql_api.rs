//! The GraphQL API in process (`schema.execute`), on the bundled demo sample: both connections,
//! pagination, formats, and every kind of bad input.

use serde_json::{json, Value};
use tokenql::types::Uint256;

use crate::support::graphql::*;

const NFTS: &str = "query($address: Address!, $first: Int! = 100, $after: String,
    $format: TokenIdFormat! = DECIMAL) {
  nftsByWallet(address: $address, first: $first, after: $after, tokenIdFormat: $format) {
    totalCount status
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    edges { cursor node { FIELDS } }
  }
}";

const TRANSFERS: &str = "query($first: Int! = 100, $after: String, $contracts: [Address!],
    $wallets: [Address!], $from: BlockNumber, $to: BlockNumber) {
  erc20Transfers(first: $first, after: $after, contractAddresses: $contracts,
      walletAddresses: $wallets, fromBlock: $from, toBlock: $to) {
    status
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    edges { cursor node { FIELDS } }
  }
}";

fn nfts_query() -> String {
    NFTS.replace("FIELDS", NFT_FIELDS)
}

fn transfers_query() -> String {
    TRANSFERS.replace("FIELDS", TRANSFER_FIELDS)
}

fn nodes(conn: &Value) -> Vec<Value> {
    conn["edges"]
        .as_array()
        .map(|a| a.iter().map(|e| e["node"].clone()).collect())
        .unwrap_or_default()
}

fn is_lower_address(v: &Value) -> bool {
    v.as_str().is_some_and(|s| {
        s.len() == 42
            && s.starts_with("0x")
            && s[2..]
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nfts_by_wallet_lists_the_demo_wallet_with_every_field() {
    let env = setup().await;
    let mixed_case = "0x430D5DDE0CD48989737A95B4C46E1801A9A08531";
    let data = env
        .data(&nfts_query(), json!({ "address": mixed_case }))
        .await;
    let conn = &data["nftsByWallet"];
    assert_eq!(conn["totalCount"], WALLET_NFTS);
    assert!(matches!(
        conn["status"].as_str(),
        Some("SYNCED" | "SYNCING")
    ));
    assert_eq!(conn["pageInfo"]["hasNextPage"], false);
    assert_eq!(conn["pageInfo"]["hasPreviousPage"], false);
    let edges = conn["edges"].as_array().unwrap();
    assert_eq!(edges.len(), WALLET_NFTS);
    assert_eq!(conn["pageInfo"]["startCursor"], edges[0]["cursor"]);
    assert_eq!(
        conn["pageInfo"]["endCursor"],
        edges[WALLET_NFTS - 1]["cursor"]
    );
    let mut keys = Vec::new();
    for n in nodes(conn) {
        assert_eq!(n["ownerOf"], NFT_WALLET, "{n}");
        assert!(is_lower_address(&n["tokenAddress"]), "{n}");
        assert!(
            matches!(n["contractType"].as_str(), Some("ERC721" | "ERC1155")),
            "{n}"
        );
        let id = n["tokenId"].as_str().unwrap();
        assert!(id.bytes().all(|b| b.is_ascii_digit()), "{n}");
        let amount = n["amount"].as_str().unwrap();
        assert!(Uint256::parse(amount).is_ok_and(|a| !a.is_zero()), "{n}");
        assert!(n["blockNumber"].as_u64().is_some_and(|b| b > 0), "{n}");
        let hash = n["tokenHash"].as_str().unwrap();
        assert!(
            hash.len() == 32 && hash.bytes().all(|b| b.is_ascii_hexdigit()),
            "{n}"
        );
        assert!(n["possibleSpam"].is_boolean() && n["verifiedCollection"].is_boolean());
        for nullable in ["name", "symbol", "tokenUri", "metadata", "minterAddress"] {
            assert!(n[nullable].is_null() || n[nullable].is_string(), "{n}");
        }
        keys.push((
            n["tokenAddress"].as_str().unwrap().to_string(),
            Uint256::parse(id).unwrap(),
        ));
    }
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted, "ordered by tokenAddress, then tokenId");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nfts_paginate_to_the_end_with_end_cursor() {
    let env = setup().await;
    let query = nfts_query();
    let all = env.data(&query, json!({ "address": NFT_WALLET })).await;
    let all: Vec<Value> = nodes(&all["nftsByWallet"]);

    let mut seen = Vec::new();
    let mut after = Value::Null;
    let mut pages = 0;
    loop {
        let data = env
            .data(
                &query,
                json!({ "address": NFT_WALLET, "first": 10, "after": after }),
            )
            .await;
        let conn = &data["nftsByWallet"];
        pages += 1;
        assert_eq!(conn["pageInfo"]["hasPreviousPage"], pages > 1);
        assert_eq!(conn["totalCount"], WALLET_NFTS);
        seen.extend(nodes(conn));
        if conn["pageInfo"]["hasNextPage"] == false {
            break;
        }
        after = conn["pageInfo"]["endCursor"].clone();
        assert!(after.is_string());
        assert!(pages < 10, "pagination does not end");
    }
    assert_eq!(pages, WALLET_NFTS.div_ceil(10));
    assert_eq!(seen, all);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn token_id_format_hex() {
    let env = setup().await;
    let query = nfts_query();
    let dec = env.data(&query, json!({ "address": NFT_WALLET })).await;
    let hex = env
        .data(&query, json!({ "address": NFT_WALLET, "format": "HEX" }))
        .await;
    let (dec, hex) = (nodes(&dec["nftsByWallet"]), nodes(&hex["nftsByWallet"]));
    assert_eq!(dec.len(), hex.len());
    for (d, h) in dec.iter().zip(&hex) {
        let h_id = h["tokenId"].as_str().unwrap();
        assert!(h_id.starts_with("0x"), "{h_id}");
        assert_eq!(
            Uint256::parse(h_id).unwrap(),
            Uint256::parse(d["tokenId"].as_str().unwrap()).unwrap()
        );
        assert_eq!(d["tokenHash"], h["tokenHash"]);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn erc20_transfers_paginate_through_the_whole_sample_newest_first() {
    let env = setup().await;
    let query = transfers_query();
    let mut after = Value::Null;
    let mut all = Vec::new();
    let mut pages = 0;
    loop {
        let data = env.data(&query, json!({ "after": after })).await;
        let conn = &data["erc20Transfers"];
        pages += 1;
        all.extend(nodes(conn));
        if conn["pageInfo"]["hasNextPage"] == false {
            assert_eq!(
                conn["pageInfo"]["endCursor"],
                conn["edges"][conn["edges"].as_array().unwrap().len() - 1]["cursor"]
            );
            break;
        }
        after = conn["pageInfo"]["endCursor"].clone();
        assert!(pages < 20, "pagination does not end");
    }
    assert_eq!(all.len(), DEMO_TRANSFERS);
    assert_eq!(pages, DEMO_TRANSFERS.div_ceil(100));
    let keys: Vec<(u64, u64)> = all
        .iter()
        .map(|n| {
            (
                n["blockNumber"].as_u64().unwrap(),
                n["logIndex"].as_u64().unwrap(),
            )
        })
        .collect();
    assert!(
        keys.windows(2).all(|w| w[0] > w[1]),
        "strictly newest first"
    );
    for n in &all {
        for a in ["contractAddress", "fromWallet", "toWallet"] {
            assert!(is_lower_address(&n[a]), "{n}");
        }
        let ts = n["blockTimestamp"].as_str().unwrap();
        assert!(ts.len() == 24 && ts.ends_with(".000Z"), "{ts}");
        assert!(Uint256::parse(n["value"].as_str().unwrap()).is_ok(), "{n}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn erc20_transfers_of_usdt_carry_token_metadata_and_labels() {
    let env = setup().await;
    let query = transfers_query();
    let data = env
        .data(
            &query,
            json!({ "contracts": [USDT.to_uppercase().replace("0X", "0x")], "first": 5 }),
        )
        .await;
    let transfers = nodes(&data["erc20Transfers"]);
    assert_eq!(transfers.len(), 5);
    let wallet = transfers[0]["fromWallet"].as_str().unwrap().to_string();
    for t in &transfers {
        assert_eq!(t["contractAddress"], USDT);
        assert_eq!(t["tokenSymbol"], "USDT");
        assert_eq!(t["tokenName"], "Tether USD");
        assert_eq!(t["tokenDecimals"], 6);
        assert!(t["tokenLogo"]
            .as_str()
            .is_some_and(|l| l.starts_with("https://")));
        let value = Uint256::parse(t["value"].as_str().unwrap()).unwrap();
        assert_eq!(t["valueDecimal"], value.to_decimal_scaled(6));
    }

    // Label the sender of the first transfer; the label shows on both sides of its transfers.
    env.label(&[&wallet], "Test Wallet").await;
    let data = env.data(&query, json!({ "wallets": [wallet] })).await;
    let transfers = nodes(&data["erc20Transfers"]);
    assert!(!transfers.is_empty());
    for t in &transfers {
        let (from, to) = (&t["fromWallet"], &t["toWallet"]);
        assert!(from == wallet.as_str() || to == wallet.as_str(), "{t}");
        if from == wallet.as_str() {
            assert_eq!(t["fromWalletLabel"], "Test Wallet");
        }
        if to == wallet.as_str() {
            assert_eq!(t["toWalletLabel"], "Test Wallet");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn block_bounds_are_inclusive_and_accept_int_or_string() {
    let env = setup().await;
    let query = transfers_query();
    let first = env.data(&query, json!({ "first": 1 })).await;
    let block = nodes(&first["erc20Transfers"])[0]["blockNumber"]
        .as_u64()
        .unwrap();
    for (from, to) in [
        (json!(block), json!(block)),
        (json!(block.to_string()), json!(block)),
    ] {
        let data = env.data(&query, json!({ "from": from, "to": to })).await;
        let transfers = nodes(&data["erc20Transfers"]);
        assert!(!transfers.is_empty());
        assert!(transfers.iter().all(|t| t["blockNumber"] == block));
    }
}

/// Runs `query` and expects `data: null` and only BAD_USER_INPUT errors, one of whose messages
/// contains `expected`.
async fn expect_bad_input(env: &Env, query: &str, variables: Value, expected: &str) {
    let v = env.exec(query, variables).await;
    assert!(v["data"].is_null(), "{v:#}");
    let errors = v["errors"].as_array().cloned().unwrap_or_default();
    assert!(!errors.is_empty(), "{v:#}");
    for e in &errors {
        assert_eq!(e["extensions"]["code"], "BAD_USER_INPUT", "{v:#}");
    }
    assert!(
        errors
            .iter()
            .any(|e| e["message"].as_str().is_some_and(|m| m.contains(expected))),
        "no message contains {expected:?}: {v:#}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_arguments_name_the_argument_and_the_rule() {
    let env = setup().await;
    let nfts = nfts_query();
    let transfers = transfers_query();
    let w = NFT_WALLET;
    for (vars, expected) in [
        (
            json!({ "address": w, "first": 0 }),
            "first: 0 is out of range; expected 1 to 100",
        ),
        (
            json!({ "address": w, "first": 101 }),
            "first: 101 is out of range; expected 1 to 100",
        ),
        (
            json!({ "address": "0x12" }),
            "address: '0x12' is not an address",
        ),
        (
            json!({ "address": "vitalik.eth" }),
            "address: 'vitalik.eth' is not an address",
        ),
        (
            json!({ "address": w, "after": "garbage" }),
            "after: cursor is malformed or has been tampered with",
        ),
    ] {
        expect_bad_input(&env, &nfts, vars, expected).await;
    }
    expect_bad_input(
        &env,
        "{ nftsByWallet(address: \"0x430d5dde0cd48989737a95b4c46e1801a9a08531\", chain: \"solana\") { totalCount } }",
        json!({}),
        "chain: unknown chain 'solana'",
    )
    .await;
    let many: Vec<String> = (0..101).map(|i| format!("0x{i:040x}")).collect();
    expect_bad_input(
        &env,
        "query($t: [Address!]) { nftsByWallet(address: \"0x430d5dde0cd48989737a95b4c46e1801a9a08531\", tokenAddresses: $t) { totalCount } }",
        json!({ "t": many }),
        "tokenAddresses: 101 entries given; at most 100 are allowed",
    )
    .await;

    for (vars, expected) in [
        (json!({ "from": -1 }), "fromBlock: '-1' is negative"),
        (
            json!({ "to": "abc" }),
            "toBlock: 'abc' is not a block number",
        ),
        (
            json!({ "from": 10, "to": 5 }),
            "fromBlock: 10 is greater than toBlock (5)",
        ),
        (
            json!({ "wallets": ["nope"] }),
            "walletAddresses: 'nope' is not an address",
        ),
        (json!({ "first": -3 }), "first: -3 is out of range"),
    ] {
        expect_bad_input(&env, &transfers, vars, expected).await;
    }

    // A cursor of the other connection, and one of the same connection with other filters.
    let page = env.data(&nfts, json!({ "address": w, "first": 1 })).await;
    let nft_cursor = page["nftsByWallet"]["pageInfo"]["endCursor"].clone();
    expect_bad_input(
        &env,
        &transfers,
        json!({ "after": nft_cursor }),
        "after: cursor belongs to another endpoint",
    )
    .await;
    let page = env.data(&transfers, json!({ "first": 1 })).await;
    let cursor = page["erc20Transfers"]["pageInfo"]["endCursor"].clone();
    expect_bad_input(
        &env,
        &transfers,
        json!({ "after": cursor, "contracts": [USDT] }),
        "after: cursor was issued for a query with other filters",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_argument_types_and_unknown_fields_are_bad_user_input() {
    let env = setup().await;
    let w = NFT_WALLET;
    for (query, expected) in [
        (
            format!("{{ nftsByWallet(address: \"{w}\", first: \"ten\") {{ totalCount }} }}"),
            "first",
        ),
        (
            "{ nftsByWallet(address: 5) { totalCount } }".to_string(),
            "address",
        ),
        ("{ nftsByWallet { totalCount } }".to_string(), "address"),
        (
            format!("{{ nftsByWallet(address: \"{w}\", tokenIdFormat: OCTAL) {{ totalCount }} }}"),
            "tokenIdFormat",
        ),
        (
            format!("{{ nftsByWallet(address: \"{w}\") {{ nope }} }}"),
            "nope",
        ),
        (
            "{ erc20Transfers(fromBlock: true) { status } }".to_string(),
            "fromBlock",
        ),
        (
            "{ erc20Transfers { edges { node { value { x } } } } }".to_string(),
            "value",
        ),
        ("{ erc20Transfers(".to_string(), ""),
    ] {
        expect_bad_input(&env, &query, json!({}), expected).await;
    }
    // Variables of the wrong type.
    expect_bad_input(
        &env,
        "query($n: Int!) { erc20Transfers(first: $n) { status } }",
        json!({ "n": "many" }),
        "",
    )
    .await;
}

/// graphql-js' `getIntrospectionQuery()` TypeRef, `ofType` nested `depth` times.
fn type_ref(depth: usize) -> String {
    let mut s = String::from("kind name");
    for _ in 0..depth {
        s = format!("kind name ofType {{ {s} }}");
    }
    s
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn graphiql_introspection_passes_but_deeper_queries_are_refused() {
    let env = setup().await;
    // What GraphiQL sends: graphql-js' standard introspection query (typeDepth 9).
    let standard = format!(
        "query IntrospectionQuery {{ __schema {{ queryType {{ name }} mutationType {{ name }}
          subscriptionType {{ name }} types {{ ...FullType }}
          directives {{ name description locations args {{ ...InputValue }} }} }} }}
        fragment FullType on __Type {{ kind name description
          fields(includeDeprecated: true) {{ name description args {{ ...InputValue }}
            type {{ ...TypeRef }} isDeprecated deprecationReason }}
          inputFields {{ ...InputValue }} interfaces {{ ...TypeRef }}
          enumValues(includeDeprecated: true) {{ name description isDeprecated deprecationReason }}
          possibleTypes {{ ...TypeRef }} }}
        fragment InputValue on __InputValue {{ name description type {{ ...TypeRef }} defaultValue }}
        fragment TypeRef on __Type {{ {} }}",
        type_ref(9)
    );
    let data = env.data(&standard, json!({})).await;
    assert!(data["__schema"]["types"]
        .as_array()
        .is_some_and(|t| !t.is_empty()));

    let deep = format!(
        "{{ __schema {{ types {{ fields {{ type {{ {} }} }} }} }} }}",
        type_ref(14)
    );
    expect_bad_input(
        &env,
        &deep,
        json!({}),
        "query is nested too deep: at most 16 levels",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn too_complex_queries_are_refused() {
    let env = setup().await;
    let page =
        format!("erc20Transfers(first: 100) {{ edges {{ cursor node {{ {TRANSFER_FIELDS} }} }} }}");
    // Each page costs 10 + 22 * 10 = 230: eight fit in 2000, nine do not.
    let pages = |n: usize| -> String {
        let aliased: String = (0..n).map(|i| format!("p{i}: {page}\n")).collect();
        format!("{{ {aliased} }}")
    };
    let data = env.data(&pages(8), json!({})).await;
    assert_eq!(data["p7"]["edges"].as_array().map(Vec::len), Some(100));
    expect_bad_input(&env, &pages(9), json!({}), "query is too complex").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn total_count_is_counted_only_when_selected() {
    let env = setup().await;
    let q =
        format!("{{ nftsByWallet(address: \"{NFT_WALLET}\", first: 5) {{ edges {{ cursor }} }} }}");
    env.statements.store(0, std::sync::atomic::Ordering::SeqCst);
    env.data(&q, json!({})).await;
    let without = env.statements.load(std::sync::atomic::Ordering::SeqCst);
    let q = q.replace("edges", "totalCount edges");
    env.statements.store(0, std::sync::atomic::Ordering::SeqCst);
    let data = env.data(&q, json!({})).await;
    let with = env.statements.load(std::sync::atomic::Ordering::SeqCst);
    assert_eq!(data["nftsByWallet"]["totalCount"], WALLET_NFTS);
    assert_eq!(with, without + 1);
    // Through a fragment too.
    let q = format!("{{ nftsByWallet(address: \"{NFT_WALLET}\", first: 5) {{ ...C }} }} fragment C on NftConnection {{ totalCount }}");
    let data = env.data(&q, json!({})).await;
    assert_eq!(data["nftsByWallet"]["totalCount"], WALLET_NFTS);
}

/// The five lists of a wallet, each a full page with every field, fit in one query; so does the
/// deepest sensible walk of the graph. A list nested in each record of a page of 100 does not
/// (its statements would run 100 times); in a page of 50 it does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_graph_fits_the_limits_for_reasonable_queries() {
    let env = setup().await;
    let page = |list: &str, fields: &str| {
        format!("{list}(first: 100) {{ status pageInfo {{ hasNextPage endCursor }} edges {{ cursor node {{ {fields} }} }} }}")
    };
    let moves = "tokenAddress tokenId contractType fromWallet toWallet fromWalletLabel \
        toWalletLabel operator amount blockNumber blockHash blockTimestamp transactionHash \
        transactionIndex logIndex batchIndex name symbol possibleSpam verifiedCollection";
    let all = format!(
        "{{ wallet(address: \"{NFT_WALLET}\") {{ address {} {} {} {} {} }} }}",
        page("nfts", NFT_FIELDS),
        page("erc20Transfers", TRANSFER_FIELDS),
        page("nftTransfers", moves),
        page(
            "tokenBalances",
            "balance balanceDecimal token { address name symbol decimals }"
        ),
        page(
            "nftCollections",
            "count collection { address name symbol contractType }"
        ),
    );
    let data = env.data(&all, json!({})).await;
    assert_eq!(
        data["wallet"]["nfts"]["edges"].as_array().map(Vec::len),
        Some(WALLET_NFTS)
    );

    // The deepest walk: a wallet's collections, each collection's held tokens.
    let walk = format!(
        "{{ wallet(address: \"{NFT_WALLET}\") {{ nftCollections(first: 50) {{ edges {{ node {{
            collection {{ nfts(first: 5) {{ edges {{ node {{ tokenId ownerOf }} }} }} }} }} }} }} }} }}"
    );
    let data = env.data(&walk, json!({})).await;
    let owner = &data["wallet"]["nftCollections"]["edges"][0]["node"]["collection"]["nfts"]
        ["edges"][0]["node"]["ownerOf"];
    assert_eq!(owner, NFT_WALLET, "{data}");

    let nested = |outer: usize| {
        format!(
            "{{ wallet(address: \"{NFT_WALLET}\") {{ nftCollections(first: {outer}) {{ edges {{ node {{
                collection {{ owners(first: 1) {{ edges {{ node {{ ownerOf }} }} }} }} }} }} }} }} }}"
        )
    };
    env.data(&nested(50), json!({})).await;
    expect_bad_input(&env, &nested(100), json!({}), "query is too complex").await;
    let token_transfers = |outer: usize| {
        format!(
            "{{ wallet(address: \"{NFT_WALLET}\") {{ tokenBalances(first: {outer}) {{ edges {{ node {{
                token {{ transfers(first: 1) {{ edges {{ node {{ value }} }} }} }} }} }} }} }} }}"
        )
    };
    env.data(&token_transfers(50), json!({})).await;
    expect_bad_input(
        &env,
        &token_transfers(100),
        json!({}),
        "query is too complex",
    )
    .await;
}

/// A bad argument of a list nested in the graph is refused like one of a root field: `data`
/// is `null` and the HTTP status 400.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_argument_deep_in_the_graph_is_a_400() {
    let env = setup().await;
    let deep = format!(
        "{{ wallet(address: \"{NFT_WALLET}\") {{ address nfts(first: 1) {{ status }}
            nftCollections(first: 1) {{ edges {{ node {{ collection {{
                owners(first: 0) {{ status }} }} }} }} }} }} }}"
    );
    expect_bad_input(&env, &deep, json!({}), "first: 0 is out of range").await;
    let (status, body) = env.post(Some(&env.key), &deep, json!({})).await;
    assert_eq!(status, axum::http::StatusCode::BAD_REQUEST, "{body}");
    assert!(body["data"].is_null(), "{body}");
}

/// Every example tab of the playground (`playground/index.html`) runs on the demo data without
/// an error, and each of its lists has records.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_playground_examples_run_on_the_demo_data() {
    let env = setup().await;
    let html = include_str!("../../playground/index.html");
    let block = |from: usize, open: &str| -> Option<(usize, String)> {
        let start = from + html[from..].find(open)? + open.len();
        let end = start + html[start..].find("</script>")?;
        Some((end, html[start..end].to_string()))
    };
    let (mut at, mut examples, mut subscriptions) = (0, 0, 0);
    while let Some((end, query)) = block(
        at,
        "<script type=\"application/graphql\" class=\"example-query\">",
    ) {
        let (next, vars) = block(
            end,
            "<script type=\"application/json\" class=\"example-variables\">",
        )
        .unwrap_or_else(|| panic!("no variables after {query}"));
        let vars: Value = serde_json::from_str(&vars).unwrap_or_else(|e| panic!("{e}: {vars}"));
        (at, examples) = (next, examples + 1);
        // A subscription runs over a WebSocket: the browser test runs it on live changes.
        if query.contains("\nsubscription ") {
            subscriptions += 1;
            continue;
        }
        let data = env.data(&query, vars).await;
        let mut lists = Vec::new();
        collect_lists(&data, &mut lists);
        assert!(!lists.is_empty(), "no list in the answer to {query}");
        for (path, n) in lists {
            assert!(n > 0, "{path} is empty in the answer to\n{query}\n{data:#}");
        }
    }
    assert_eq!(examples, 6, "the playground's example tabs");
    assert_eq!(subscriptions, 1, "the playground's subscription tab");
}

/// Every `edges` list in `v`: (its path, its length), outer lists first; of the lists nested in
/// records, the first record's.
fn collect_lists(v: &Value, out: &mut Vec<(String, usize)>) {
    fn go(v: &Value, path: String, out: &mut Vec<(String, usize)>) {
        let Value::Object(m) = v else {
            return;
        };
        for (k, x) in m {
            if k == "edges" {
                out.push((path.clone(), x.as_array().map_or(0, Vec::len)));
                go(&x[0], format!("{path}.{k}"), out);
            } else {
                go(x, format!("{path}.{k}"), out);
            }
        }
    }
    go(v, String::new(), out);
}

/// `query` with the first field of `fields` asked twice: the same answer, but a selection the
/// direct path of a list's nodes leaves to the ordinary resolvers (which merge the two).
fn through_resolvers(query: &str, fields: &str) -> String {
    let first = fields.split_whitespace().next().expect("a field");
    let doubled = query.replace(fields, &format!("{fields} {first}"));
    assert_ne!(doubled, query, "the fields are in the query: {query}");
    doubled
}

/// The direct path of list nodes (`graphql::fast_path::plain`) and the ordinary resolvers answer every field
/// alike: the same pages, asked each way, are equal value for value (labels and token metadata
/// included, contract and token rows present and absent): in process (values), over HTTP (the
/// page written as JSON, `graphql::fast_path::written`), and through the resolvers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_nodes_answer_alike_on_every_path() {
    let env = setup().await;
    let wallet = "0x430d5dde0cd48989737a95b4c46e1801a9a08531";
    let plain = nfts_query();
    let direct = env.data(&plain, json!({ "address": wallet })).await;
    let resolved = env
        .data(
            &through_resolvers(&plain, NFT_FIELDS),
            json!({ "address": wallet }),
        )
        .await;
    assert_eq!(nodes(&direct["nftsByWallet"]).len(), WALLET_NFTS);
    assert_eq!(direct, resolved);
    assert_eq!(
        over_http(&env, &plain, json!({ "address": wallet })).await,
        direct
    );

    let plain = transfers_query();
    let first = env.data(&plain, json!({ "first": 50 })).await;
    let sender = nodes(&first["erc20Transfers"])[0]["fromWallet"]
        .as_str()
        .unwrap()
        .to_string();
    env.label(&[&sender], "Both \"Paths\"\n").await;
    let vars = json!({ "first": 100, "wallets": [sender] });
    let direct = env.data(&plain, vars.clone()).await;
    let resolved = env
        .data(&through_resolvers(&plain, TRANSFER_FIELDS), vars.clone())
        .await;
    let transfers = nodes(&direct["erc20Transfers"]);
    assert!(transfers
        .iter()
        .any(|t| t["fromWalletLabel"] == "Both \"Paths\"\n"));
    assert_eq!(direct, resolved);
    assert_eq!(over_http(&env, &plain, vars).await, direct);

    // `@skip` and `@include` hold on every path.
    let skipping = plain.replace(
        "contractAddress fromWallet",
        "contractAddress @skip(if: true) fromWallet @include(if: false)",
    );
    let skipped = env.data(&skipping, json!({ "first": 5 })).await;
    for t in nodes(&skipped["erc20Transfers"]) {
        assert!(
            t.get("contractAddress").is_none() && t.get("fromWallet").is_none(),
            "{t}"
        );
        assert!(t["toWallet"].is_string(), "{t}");
    }
    assert_eq!(
        over_http(&env, &skipping, json!({ "first": 5 })).await,
        skipped
    );
}

/// Several pages in one document, with aliases and `__typename`: each page lands where it was
/// asked, over HTTP as in process.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_written_as_json_land_where_they_were_asked() {
    let env = setup().await;
    let doc = format!(
        "query($w: Address!) {{
          a: erc20Transfers(first: 3) {{ edges {{ __typename c: cursor node {{ __typename x: value }} }} }}
          b: nftsByWallet(address: $w, first: 2) {{ edges {{ node {{ tokenId t: __typename }} }} }}
          c: erc20Transfers(first: 2, after: null) {{ status edges {{ node {{ {TRANSFER_FIELDS} }} }} }}
          wallet(address: $w) {{ nfts(first: 1) {{ edges {{ cursor node {{ tokenAddress }} }} }} }}
        }}"
    );
    let vars = json!({ "w": NFT_WALLET });
    let in_process = env.data(&doc, vars.clone()).await;
    assert_eq!(in_process["a"]["edges"].as_array().map(Vec::len), Some(3));
    assert_eq!(
        in_process["a"]["edges"][0]["__typename"],
        "Erc20TransferEdge"
    );
    assert_eq!(
        in_process["a"]["edges"][0]["node"]["__typename"],
        "Erc20Transfer"
    );
    assert_eq!(in_process["b"]["edges"][1]["node"]["t"], "Nft");
    assert_eq!(in_process["c"]["edges"].as_array().map(Vec::len), Some(2));
    assert_eq!(
        in_process["wallet"]["nfts"]["edges"]
            .as_array()
            .map(Vec::len),
        Some(1)
    );
    assert_eq!(over_http(&env, &doc, vars).await, in_process);
}

/// `data` of `query` sent over HTTP (as a client sends it), failing on any error.
async fn over_http(env: &Env, query: &str, variables: Value) -> Value {
    let (status, v) = env.post(Some(&env.key), query, variables).await;
    assert_eq!(status, axum::http::StatusCode::OK, "{v:#}");
    assert!(v.get("errors").is_none(), "unexpected errors: {v:#}");
    v["data"].clone()
}

/// A document sent again is parsed once (`graphql::fast_path::documents`), but every request is still
/// checked on its own: its variables, the complexity they make, and a document that does not
/// parse is refused every time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_document_sent_again_is_checked_again() {
    let env = setup().await;
    let page = |n: usize| -> String {
        let aliased: String = (0..n)
            .map(|i| {
                format!("p{i}: erc20Transfers(first: $n) {{ edges {{ node {{ {TRANSFER_FIELDS} }} }} }}\n")
            })
            .collect();
        format!("query($n: Int!) {{ {aliased} }}")
    };
    // Ten pages of 10 fit the complexity limit (10 x 31); ten pages of 100 do not (10 x 220).
    let ten = page(10);
    for _ in 0..2 {
        let data = env.data(&ten, json!({ "n": 10 })).await;
        assert_eq!(data["p9"]["edges"].as_array().map(Vec::len), Some(10));
        expect_bad_input(&env, &ten, json!({ "n": 100 }), "query is too complex").await;
        expect_bad_input(&env, &ten, json!({ "n": "many" }), "").await;
        expect_bad_input(&env, &ten, json!({ "n": 0 }), "first").await;
        expect_bad_input(&env, "{ erc20Transfers(", json!({}), "expected name").await;
    }
    // The same text with other variables answers for those variables.
    let one = page(1);
    let three = env.data(&one, json!({ "n": 3 })).await;
    let five = env.data(&one, json!({ "n": 5 })).await;
    assert_eq!(three["p0"]["edges"].as_array().map(Vec::len), Some(3));
    assert_eq!(five["p0"]["edges"].as_array().map(Vec::len), Some(5));
    for data in [&three, &five] {
        let keys: Vec<&String> = data
            .as_object()
            .map(|o| o.keys().collect())
            .unwrap_or_default();
        assert_eq!(keys, ["p0"], "the answer is the document's own: {data:#}");
    }
}
