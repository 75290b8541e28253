//! uint256 exactness: transfers of 2^256-1, token ids of 2^256-1, and `value_decimal` for 0, 6,
//! 18 and 77 decimals, imported through the real write path and read back through both APIs.

use crate::support::common;

use std::collections::BTreeMap;

use common::truth::{TRANSFER, TRANSFER_SINGLE};
use common::{gql_str, nfts_query, text, transfers_query, Backend, TestApp};
use serde_json::{json, Value};
use tokenql::store::contracts::{upsert_contract_meta, ContractMeta};
use tokenql::types::{Address, Chain};

crate::backend_tests!(uint256_exact);

const MAX: &str = "115792089237316195423570985008687907853269984665640564039457584007913129639935";
const MAX_HEX: &str = "0xffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff";

const WALLET: &str = "0xaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
const SENDER: &str = "0xbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
const ZERO: &str = "0x0000000000000000000000000000000000000000";
const T0: &str = "0xd000000000000000000000000000000000000000";
const T6: &str = "0xd600000000000000000000000000000000000000";
const T18: &str = "0xd180000000000000000000000000000000000000";
const T77: &str = "0xd770000000000000000000000000000000000000";
const TU: &str = "0xdd00000000000000000000000000000000000000";
const N721: &str = "0x7210000000000000000000000000000000000000";
const N1155: &str = "0x1155000000000000000000000000000000000000";

fn topic(addr: &str) -> String {
    format!("0x{:0>64}", &addr[2..])
}

fn word_hex(hex_digits: &str) -> String {
    format!("{hex_digits:0>64}")
}

fn word(n: u128) -> String {
    format!("{n:064x}")
}

/// A log line of `contract` in `block` (JSON-RPC hex encoding), as `tokenql import` reads it.
pub(crate) fn log(
    contract: &str,
    topics: Vec<String>,
    data: String,
    block: u64,
    log_index: u64,
) -> String {
    json!({
        "address": contract,
        "topics": topics,
        "data": format!("0x{data}"),
        "blockNumber": format!("{block:#x}"),
        "blockHash": format!("0x{block:064x}"),
        "transactionHash": format!("0x{:064x}", block * 1000 + log_index),
        "transactionIndex": format!("{log_index:#x}"),
        "logIndex": format!("{log_index:#x}"),
        "removed": false,
    })
    .to_string()
}

fn erc20(contract: &str, value_word: String, block: u64, log_index: u64) -> String {
    log(
        contract,
        vec![TRANSFER.into(), topic(SENDER), topic(WALLET)],
        value_word,
        block,
        log_index,
    )
}

/// (block, log index, contract, value, value_decimal, token_decimals), newest first.
type Expected = (
    u64,
    u64,
    &'static str,
    &'static str,
    Option<&'static str>,
    Option<&'static str>,
);

fn expected_transfers() -> Vec<Expected> {
    vec![
        (101, 5, TU, "42", None, None),
        (
            101,
            4,
            T77,
            "10000000000000000000000000000000000000000000000000000000000000000000000000000",
            Some("0.1"),
            Some("77"),
        ),
        (101, 3, T18, "0", Some("0"), Some("18")),
        (101, 2, T18, "5", Some("0.000000000000000005"), Some("18")),
        (101, 1, T6, "1000000", Some("1"), Some("6")),
        (101, 0, T6, "1500000", Some("1.5"), Some("6")),
        (
            100,
            3,
            T77,
            MAX,
            Some("1.15792089237316195423570985008687907853269984665640564039457584007913129639935"),
            Some("77"),
        ),
        (
            100,
            2,
            T18,
            MAX,
            Some("115792089237316195423570985008687907853269984665640564039457.584007913129639935"),
            Some("18"),
        ),
        (
            100,
            1,
            T6,
            MAX,
            Some("115792089237316195423570985008687907853269984665640564039457584007913129.639935"),
            Some("6"),
        ),
        (100, 0, T0, MAX, Some(MAX), Some("0")),
    ]
}

async fn import(app: &TestApp) {
    let ff = "f".repeat(64);
    let ten_pow_76 = {
        // 10^76 in hex, computed by repeated multiplication on base-2^32 limbs.
        let mut limbs: Vec<u64> = vec![1];
        for _ in 0..76 {
            let mut carry = 0u64;
            for l in limbs.iter_mut() {
                let v = *l * 10 + carry;
                *l = v & 0xffff_ffff;
                carry = v >> 32;
            }
            if carry > 0 {
                limbs.push(carry);
            }
        }
        limbs
            .iter()
            .rev()
            .map(|l| format!("{l:08x}"))
            .collect::<String>()
    };
    let lines = vec![
        erc20(T0, ff.clone(), 100, 0),
        erc20(T6, ff.clone(), 100, 1),
        erc20(T18, ff.clone(), 100, 2),
        erc20(T77, ff.clone(), 100, 3),
        erc20(T6, word(1_500_000), 101, 0),
        erc20(T6, word(1_000_000), 101, 1),
        erc20(T18, word(5), 101, 2),
        erc20(T18, word(0), 101, 3),
        erc20(T77, word_hex(ten_pow_76.trim_start_matches('0')), 101, 4),
        erc20(TU, word(42), 101, 5),
        log(
            N721,
            vec![
                TRANSFER.into(),
                topic(ZERO),
                topic(WALLET),
                format!("0x{ff}"),
            ],
            String::new(),
            102,
            0,
        ),
        log(
            N1155,
            vec![
                TRANSFER_SINGLE.into(),
                topic(SENDER),
                topic(ZERO),
                topic(WALLET),
            ],
            format!("{ff}{ff}"),
            102,
            1,
        ),
    ];
    let blocks: String = (100..=102u64)
        .map(|b| {
            format!(
                "{{\"number\":\"{b:#x}\",\"hash\":\"0x{b:064x}\",\"parentHash\":null,\"timestamp\":\"{:#x}\"}}\n",
                1_700_000_000 + b * 12
            )
        })
        .collect();
    let headers = tokenql::import::read_blocks_str(&blocks, "synthetic blocks").expect("headers");
    let report =
        tokenql::import::import_lines(&app.db, Chain::ETH, lines.into_iter().map(Ok), headers)
            .await
            .expect("import");
    // The synthetic chain stands on its own: its whole history is imported.
    tokenql::store::mark_history_complete(&app.db, Chain::ETH)
        .await
        .expect("declare the history complete");
    assert_eq!(report.erc20_transfers, 10, "{report:?}");
    assert_eq!(report.nft_transfers, 2, "{report:?}");

    let meta = |d: u8| ContractMeta {
        name: Some(format!("Token{d}")),
        symbol: Some(format!("T{d}")),
        decimals: Some(d),
        logo: None,
    };
    let addr = |a: &str| Address::parse(a).expect("address");
    upsert_contract_meta(
        &app.db,
        Chain::ETH,
        &[
            (addr(T0), meta(0)),
            (addr(T6), meta(6)),
            (addr(T18), meta(18)),
            (addr(T77), meta(77)),
        ],
    )
    .await
    .expect("contract metadata");
}

async fn uint256_exact(backend: Backend) {
    let app = common::spawn(backend).await;
    import(&app).await;
    let want = expected_transfers();

    // REST transfers.
    let (status, _, body) = app
        .get_rest(&format!(
            "/api/v2/erc20/transfers?wallet_addresses={WALLET}"
        ))
        .await;
    assert_eq!(status, 200, "{body}");
    let got = body["result"].as_array().expect("result").clone();
    assert_eq!(got.len(), want.len(), "{body}");
    for (r, (block, li, contract, value, dec, decimals)) in got.iter().zip(&want) {
        let s = |k: &str| text(&r[k]);
        assert_eq!(s("block_number"), Some(block.to_string()), "{r}");
        assert_eq!(s("log_index"), Some(li.to_string()), "{r}");
        assert_eq!(s("contract_address").as_deref(), Some(*contract), "{r}");
        assert!(r["value"].is_string(), "value must be a JSON string: {r}");
        assert_eq!(s("value").as_deref(), Some(*value), "REST value: {r}");
        assert_eq!(
            s("value_decimal").as_deref(),
            *dec,
            "REST value_decimal: {r}"
        );
        assert_eq!(
            s("token_decimals").as_deref(),
            *decimals,
            "REST token_decimals: {r}"
        );
    }

    // GraphQL transfers.
    let data = app
        .graphql_ok(
            &transfers_query(&format!("walletAddresses: [{}]", gql_str(WALLET))),
            Value::Null,
        )
        .await;
    let nodes: Vec<Value> = data["erc20Transfers"]["edges"]
        .as_array()
        .expect("edges")
        .iter()
        .map(|e| e["node"].clone())
        .collect();
    assert_eq!(nodes.len(), want.len(), "{data}");
    for (n, (block, li, _, value, dec, decimals)) in nodes.iter().zip(&want) {
        assert_eq!(text(&n["blockNumber"]), Some(block.to_string()), "{n}");
        assert_eq!(text(&n["logIndex"]), Some(li.to_string()), "{n}");
        assert!(
            n["value"].is_string(),
            "GraphQL value must be a string: {n}"
        );
        assert_eq!(
            text(&n["value"]).as_deref(),
            Some(*value),
            "GraphQL value: {n}"
        );
        assert_eq!(
            text(&n["valueDecimal"]).as_deref(),
            *dec,
            "GraphQL valueDecimal: {n}"
        );
        assert_eq!(
            text(&n["tokenDecimals"]).as_deref(),
            *decimals,
            "GraphQL tokenDecimals: {n}"
        );
    }

    // NFTs: ERC1155 (0x1155...) sorts before ERC721 (0x7210...).
    let expect_nfts: BTreeMap<&str, (&str, &str)> =
        [(N1155, ("ERC1155", MAX)), (N721, ("ERC721", "1"))].into();
    for (format, id) in [("decimal", MAX), ("hex", MAX_HEX)] {
        let (status, _, body) = app
            .get_rest(&format!("/api/v2/{WALLET}/nft?format={format}"))
            .await;
        assert_eq!(status, 200, "{body}");
        let got = body["result"].as_array().expect("result");
        assert_eq!(got.len(), 2, "{body}");
        for (r, (contract, (kind, amount))) in got.iter().zip(&expect_nfts) {
            assert_eq!(text(&r["token_address"]).as_deref(), Some(*contract), "{r}");
            assert_eq!(text(&r["contract_type"]).as_deref(), Some(*kind), "{r}");
            assert!(r["token_id"].is_string(), "token_id must be a string: {r}");
            assert_eq!(
                text(&r["token_id"]).as_deref(),
                Some(id),
                "REST format={format}: {r}"
            );
            assert_eq!(
                text(&r["amount"]).as_deref(),
                Some(*amount),
                "REST amount: {r}"
            );
        }
    }
    let data = app.graphql_ok(&nfts_query(WALLET, ""), Value::Null).await;
    let nodes: Vec<Value> = data["nftsByWallet"]["edges"]
        .as_array()
        .expect("edges")
        .iter()
        .map(|e| e["node"].clone())
        .collect();
    assert_eq!(nodes.len(), 2, "{data}");
    for (n, (contract, (kind, amount))) in nodes.iter().zip(&expect_nfts) {
        assert_eq!(text(&n["tokenAddress"]).as_deref(), Some(*contract), "{n}");
        assert_eq!(text(&n["contractType"]).as_deref(), Some(*kind), "{n}");
        assert!(
            n["tokenId"].is_string(),
            "GraphQL tokenId must be a string: {n}"
        );
        assert_eq!(
            text(&n["tokenId"]).as_deref(),
            Some(MAX),
            "GraphQL tokenId: {n}"
        );
        assert_eq!(
            text(&n["amount"]).as_deref(),
            Some(*amount),
            "GraphQL amount: {n}"
        );
    }
    let data = app
        .graphql_ok(&nfts_query(WALLET, "tokenIdFormat: HEX"), Value::Null)
        .await;
    for e in data["nftsByWallet"]["edges"].as_array().expect("edges") {
        assert_eq!(
            text(&e["node"]["tokenId"]).as_deref(),
            Some(MAX_HEX),
            "GraphQL tokenIdFormat: HEX: {e}"
        );
    }

    app.cleanup().await;
}
