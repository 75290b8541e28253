//! Every empty or malformed argument of the graph is an HTTP 400 whose errors are all
//! `BAD_USER_INPUT`, one of them naming the argument (`first: ...`); cursors are bound to the
//! list and the arguments that issued them. And an empty database is never `SYNCED`.

use serde_json::Value;

use crate::support::common::truth::Truth;
use crate::support::common::{gql_str, Backend, TestApp};

/// `query` must answer 400 with only `BAD_USER_INPUT` errors, one starting with `name:` (or,
/// for async-graphql's own validation errors, naming `"name"`).
async fn refused(app: &TestApp, query: &str, name: &str) {
    let (status, body) = app.graphql(query, Value::Null).await;
    assert_eq!(status, 400, "{query}\n{body}");
    assert!(body["data"].is_null(), "{query}\n{body}");
    let errors = body["errors"].as_array().cloned().unwrap_or_default();
    assert!(!errors.is_empty(), "{query}\n{body}");
    for e in &errors {
        assert_eq!(e["extensions"]["code"], "BAD_USER_INPUT", "{query}\n{body}");
    }
    let names = |m: &str| m.starts_with(&format!("{name}:")) || m.contains(&format!("\"{name}\""));
    assert!(
        errors
            .iter()
            .any(|e| e["message"].as_str().is_some_and(names)),
        "no error names {name}: {query}\n{body}"
    );
}

/// The end cursor of the list at `path` of `query`'s answer.
async fn cursor(app: &TestApp, query: &str, path: &[&str]) -> String {
    let data = app.graphql_ok(query, Value::Null).await;
    let c = super::walk::at(&data, path);
    c["pageInfo"]["endCursor"]
        .as_str()
        .unwrap_or_else(|| panic!("no cursor at {path:?}: {data}"))
        .to_string()
}

pub async fn bad_input_is_400(backend: Backend) {
    let truth = Truth::demo();
    let app = crate::support::common::spawn(backend).await;
    app.load_demo().await;
    let w = gql_str(&truth.busiest_wallets()[1].0);
    let c = gql_str(
        &truth
            .nfts
            .values()
            .flatten()
            .next()
            .expect("an NFT")
            .contract,
    );
    let max_plus_one =
        "115792089237316195423570985008687907853269984665640564039457584007913129639936";
    let wallet = |list: &str| format!("{{ wallet(address: {w}) {{ {list} {{ status }} }} }}");
    let cases: Vec<(String, &str)> = vec![
        (format!("{{ wallet(address: {w}, chain: \"\") {{ address }} }}"), "chain"),
        (format!("{{ wallet(address: {w}, chain: \" \") {{ address }} }}"), "chain"),
        (format!("{{ wallet(address: {w}, chain: \"solana\") {{ address }} }}"), "chain"),
        ("{ wallet(address: \"\") { address } }".into(), "address"),
        ("{ wallet(address: \"0x12\") { address } }".into(), "address"),
        ("{ wallet(address: 12) { address } }".into(), "address"),
        ("{ wallet { address } }".into(), "address"),
        (wallet("erc20Transfers(first: 0)"), "first"),
        (wallet("erc20Transfers(first: 101)"), "first"),
        (wallet("erc20Transfers(after: \"\")"), "after"),
        (wallet("erc20Transfers(after: \"garbage\")"), "after"),
        (wallet("erc20Transfers(fromDate: \"\")"), "fromDate"),
        (wallet("erc20Transfers(toDate: \"yesterday\")"), "toDate"),
        (wallet("erc20Transfers(toDate: \"2023-02-30\")"), "toDate"),
        (wallet("erc20Transfers(fromDate: \"2023-03-02\", toDate: \"2023-03-01\")"), "fromDate"),
        (wallet("erc20Transfers(fromBlock: 10, toBlock: 5)"), "fromBlock"),
        (wallet("erc20Transfers(fromBlock: -1)"), "fromBlock"),
        (wallet("erc20Transfers(order: UP)"), "order"),
        (wallet("erc20Transfers(contractAddresses: [\"nope\"])"), "contractAddresses"),
        (wallet("nftTransfers(toBlock: \"x\")"), "toBlock"),
        (wallet("nftTransfers(tokenIdFormat: OCTAL)"), "tokenIdFormat"),
        (wallet("nftTransfers(first: -1)"), "first"),
        (wallet("nftCollections(first: 0)"), "first"),
        (wallet("nftCollections(after: \"x.y\")"), "after"),
        (wallet("tokenBalances(toBlock: \"-5\")"), "toBlock"),
        (wallet("tokenBalances(tokenAddresses: [\"0xzz\"])"), "tokenAddresses"),
        (wallet("nfts(first: 1000)"), "first"),
        ("{ token(address: \"\") { address } }".into(), "address"),
        ("{ token(address: \"0x0\", chain: \"eth\") { address } }".into(), "address"),
        (format!("{{ token(address: {c}) {{ transfers(toDate: \"\") {{ status }} }} }}"), "toDate"),
        (format!("{{ nftCollection(address: {c}, chain: \"\") {{ address }} }}"), "chain"),
        ("{ nftCollection(address: \"0xzz\") { address } }".into(), "address"),
        (format!("{{ nftCollection(address: {c}) {{ owners(first: 0) {{ status }} }} }}"), "first"),
        (format!("{{ nftCollection(address: {c}) {{ nfts(after: \"\") {{ status }} }} }}"), "after"),
        (format!("{{ nftCollection(address: {c}) {{ transfers(fromDate: \"soon\") {{ status }} }} }}"), "fromDate"),
        (format!("{{ nft(address: {c}, tokenId: \"\") {{ tokenId }} }}"), "tokenId"),
        (format!("{{ nft(address: {c}, tokenId: \"twelve\") {{ tokenId }} }}"), "tokenId"),
        (format!("{{ nft(address: {c}, tokenId: \"-1\") {{ tokenId }} }}"), "tokenId"),
        (format!("{{ nft(address: {c}, tokenId: \"{max_plus_one}\") {{ tokenId }} }}"), "tokenId"),
        (format!("{{ nft(address: {c}, tokenId: \"0x1{}\") {{ tokenId }} }}", "0".repeat(64)), "tokenId"),
        (format!("{{ nft(address: {c}, tokenId: 1) {{ tokenId }} }}"), "tokenId"),
        (format!("{{ nft(address: {c}) {{ tokenId }} }}"), "tokenId"),
        (format!("{{ nft(address: {c}, tokenId: \"1\", chain: \"\") {{ tokenId }} }}"), "chain"),
        (format!("{{ nft(address: {c}, tokenId: \"1\") {{ owners(first: 0) {{ status }} }} }}"), "first"),
        (format!("{{ nft(address: {c}, tokenId: \"1\") {{ transfers(fromBlock: 9, toBlock: 8) {{ status }} }} }}"), "fromBlock"),
    ];
    for (q, name) in &cases {
        refused(&app, q, name).await;
    }

    // Cursors: of another list, or of the same list with other arguments.
    let of_wallet = cursor(&app, &format!("{{ wallet(address: {w}) {{ erc20Transfers(first: 1) {{ pageInfo {{ endCursor }} }} }} }}"), &["wallet", "erc20Transfers"]).await;
    let token = gql_str(&truth.transfers_of(&[&truth.busiest_wallets()[1].0])[0].contract);
    let of_collection = cursor(&app, &format!("{{ nftCollection(address: {c}) {{ transfers(first: 1) {{ pageInfo {{ endCursor }} }} }} }}"), &["nftCollection", "transfers"]).await;
    let of_owners = cursor(&app, &format!("{{ nftCollection(address: {c}) {{ owners(first: 1) {{ pageInfo {{ endCursor }} }} }} }}"), &["nftCollection", "owners"]).await;
    for q in [
        format!(
            "{{ wallet(address: {w}) {{ erc20Transfers(after: {}, order: ASC) {{ status }} }} }}",
            gql_str(&of_wallet)
        ),
        format!(
            "{{ token(address: {token}) {{ transfers(after: {}) {{ status }} }} }}",
            gql_str(&of_wallet)
        ),
        format!(
            "{{ wallet(address: {w}) {{ nftTransfers(after: {}) {{ status }} }} }}",
            gql_str(&of_wallet)
        ),
        format!(
            "{{ nft(address: {c}, tokenId: \"1\") {{ transfers(after: {}) {{ status }} }} }}",
            gql_str(&of_collection)
        ),
        format!(
            "{{ nft(address: {c}, tokenId: \"1\") {{ owners(after: {}) {{ status }} }} }}",
            gql_str(&of_owners)
        ),
        format!(
            "{{ wallet(address: {w}) {{ nftCollections(after: {}) {{ status }} }} }}",
            gql_str(&of_owners)
        ),
    ] {
        refused(&app, &q, "after").await;
    }
    app.cleanup().await;
}

/// A database with nothing indexed (no chain state, no history): no list of the graph may say
/// `SYNCED`, though every one is empty.
pub async fn nothing_indexed_yet_says_syncing(backend: Backend) {
    let app = crate::support::common::spawn(backend).await;
    let w = gql_str("0x430d5dde0cd48989737a95b4c46e1801a9a08531");
    let c = gql_str("0xdac17f958d2ee523a2206206994597c13d831ec7");
    let lists = "{ status edges { cursor } }";
    let query = format!(
        "{{ wallet(address: {w}) {{ nfts {lists} erc20Transfers {lists} tokenBalances {lists}
              nftTransfers {lists} nftCollections {lists} }}
            token(address: {c}) {{ transfers {lists} }}
            nftCollection(address: {c}) {{ nfts {lists} owners {lists} transfers {lists} }}
            nft(address: {c}, tokenId: \"1\") {{ owners {lists} transfers {lists} }} }}"
    );
    let data = app.graphql_ok(&query, Value::Null).await;
    let mut seen = 0;
    for (entry, fields) in data.as_object().expect("data") {
        for (list, conn) in fields.as_object().expect("an entry point") {
            assert_eq!(
                conn["status"], "SYNCING",
                "{backend:?} {entry}.{list}: {conn}"
            );
            assert_eq!(
                conn["edges"],
                serde_json::json!([]),
                "{entry}.{list}: {conn}"
            );
            seen += 1;
        }
    }
    assert_eq!(seen, 11, "every list of the graph: {data}");
    app.cleanup().await;
}
