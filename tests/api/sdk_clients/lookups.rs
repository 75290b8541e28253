//! The lookup operations through the official SDKs, base URL only: the JS SDK (`moralis`
//! 2.27.2) and the Python SDK (`moralis` 0.1.49) call `web3ApiVersion`, `endpointWeights`,
//! `getDateToBlock`, `getTokenMetadata`, `getTokenMetadataBySymbol`, `getNativeBalance` and
//! `getNativeBalancesForAddresses` (neither SDK has `getLatestBlockNumber`) and
//! `getNFTMetadata` on the bundled sample, with native balances read from anvil. Each answer is
//! compared with independent truth: `Cargo.toml`, the OpenAPI document, the sample's
//! `blocks.jsonl`, the token list file, anvil's own `eth_getBalance`, and the sample's holdings
//! decoded by the test (`Truth`).

use std::time::Duration;

use serde_json::{json, Value};
use tokenql::types::Chain;

use super::{python, run_sdk, USDT};
use crate::support::anvil::Anvil;
use crate::support::common::truth::{token_list, Truth};
use crate::support::common::{self, Backend, TestApp};

const DAI: &str = "0x6b175474e89094c44da98b954eedeac495271d0f";

/// Block 20000010 of the sample (`data/demo-mainnet/blocks.jsonl`): (number, hash, Unix seconds).
fn sample_block() -> (u64, String, u64) {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/data/demo-mainnet/blocks.jsonl"
    );
    let text = std::fs::read_to_string(path).expect("blocks.jsonl");
    let hex = |v: &Value| {
        u64::from_str_radix(v.as_str().unwrap_or("0x0").trim_start_matches("0x"), 16).expect("hex")
    };
    text.lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("header"))
        .map(|b| {
            (
                hex(&b["number"]),
                b["hash"].as_str().unwrap_or_default().to_string(),
                hex(&b["timestamp"]),
            )
        })
        .find(|b| b.0 == 20_000_010)
        .expect("block 20000010 in the sample")
}

/// The token list's (name, symbol, decimals, logo) of an Ethereum token.
fn listed(address: &str) -> (String, String, u64, String) {
    let t = token_list().remove(address).expect("listed");
    (t.name, t.symbol, t.decimals, t.logo)
}

/// The package version in `Cargo.toml`.
fn cargo_version() -> String {
    let toml = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml"))
        .expect("Cargo.toml");
    let package = toml.split("[package]").nth(1).expect("[package]");
    package
        .lines()
        .find_map(|l| l.strip_prefix("version = \""))
        .and_then(|v| v.strip_suffix('"'))
        .expect("version")
        .to_string()
}

/// The served Data API operations of the OpenAPI document, as `endpointWeights` writes them.
fn documented() -> Vec<Value> {
    let doc = serde_json::to_value(tokenql::rest::openapi::document()).expect("document");
    let mut ops: Vec<(String, String)> = Vec::new();
    for (path, item) in doc["paths"].as_object().into_iter().flatten() {
        // The Streams routes are another API's (Moralis Streams), not the Data API's weights.
        if tokenql::rest::streams::at_root(path) {
            continue;
        }
        for op in item.as_object().into_iter().flat_map(|o| o.values()) {
            if let Some(id) = op["operationId"].as_str() {
                ops.push((id.to_string(), path.replace('{', ":").replace('}', "")));
            }
        }
    }
    ops.sort();
    ops.into_iter()
        .map(|(e, p)| json!({"endpoint": e, "path": p, "rateLimitCost": "1", "price": "0"}))
        .collect()
}

/// A chain of three blocks with native transfers, for balances at several blocks.
async fn chain() -> Anvil {
    let anvil = Anvil::start(3, &[]).await;
    for i in 0..3 {
        let (from, to) = (&anvil.accounts[i], &anvil.accounts[(i + 1) % 3]);
        let value = format!("{:#x}", (i as u128 + 1) * 10u128.pow(18) + 7);
        anvil
            .rpc(
                "eth_sendTransaction",
                json!([{"from": from, "to": to, "value": value}]),
            )
            .await;
    }
    anvil
}

async fn balance(anvil: &Anvil, a: &str, block: u64) -> String {
    let v = anvil
        .rpc("eth_getBalance", json!([a, format!("{block:#x}")]))
        .await;
    alloy::primitives::U256::from_str_radix(
        v.as_str().unwrap_or("0x0").trim_start_matches("0x"),
        16,
    )
    .expect("balance")
    .to_string()
}

async fn spawn(anvil: &Anvil, backend: Backend) -> TestApp {
    let chain_reads = tokenql::startup::chain_reads::chain_reads(
        &[(Chain::ETH, anvil.url.clone())],
        Duration::from_secs(5),
        Default::default(),
    )
    .expect("native balances");
    let options = tokenql::app::ServerOptions {
        chain_reads,
        ..Default::default()
    };
    let app = common::spawn_with(backend, options).await;
    app.load_demo().await;
    app
}

/// Runs `calls` through `client` (an SDK) against `app`'s `/api/v2.2`: the calls' reports.
pub(super) async fn run(app: &TestApp, client: &str, calls: Value) -> Vec<Value> {
    let input = json!({"apiKey": app.key, "calls": calls});
    let base = format!("{}/api/v2.2", app.base);
    let client = client.to_string();
    let report = tokio::task::spawn_blocking(move || run_sdk(&client, &base, &input))
        .await
        .expect("SDK runner");
    report["calls"].as_array().expect("calls").clone()
}

/// The one page an SDK read of a call, after checking it did not fail.
pub(super) fn page<'a>(calls: &'a [Value], name: &str) -> &'a Value {
    let call = calls
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no call {name}"));
    assert!(call["error"].is_null(), "{name}: {}", call["error"]);
    &call["pages"][0]
}

/// The raw records both SDKs must have received.
async fn want(anvil: &Anvil) -> Vec<(&'static str, Value)> {
    let (number, hash, ts) = sample_block();
    let [a, b, _] = [0, 1, 2].map(|i| anvil.accounts[i].clone());
    let token = |addr: &str| {
        let (name, symbol, decimals, logo) = listed(addr);
        (name, symbol, decimals.to_string(), logo)
    };
    let usdt = token(USDT);
    let dai = token(DAI);
    let total = |x: &str, y: &str| {
        let p = |s: &str| alloy::primitives::U256::from_str_radix(s, 10).expect("decimal");
        (p(x) + p(y)).to_string()
    };
    let (a1, b2, a2) = (
        balance(anvil, &a, 1).await,
        balance(anvil, &b, 2).await,
        balance(anvil, &a, 2).await,
    );
    vec![
        ("version", json!({"version": cargo_version()})),
        ("weights", json!(documented())),
        (
            "date",
            json!({"block": number, "timestamp": ts, "hash": hash}),
        ),
        (
            "metadata",
            json!([
                [USDT, usdt.0, usdt.1, usdt.2, usdt.3],
                [DAI, dai.0, dai.1, dai.2, dai.3]
            ]),
        ),
        ("symbols", json!([[USDT, usdt.0, usdt.1, usdt.2, usdt.3]])),
        ("balance", json!({"balance": a1})),
        ("nft", one_nft().1),
        (
            "balances",
            json!({"block_number": "2", "total_balance": total(&a2, &b2),
            "wallet_balances": [[a, a2], [b, b2]]}),
        ),
    ]
}

/// A token of the sample one wallet holds: its (collection, token id) and, as `shape` writes
/// an NFT, `[token_address, token_id, owner_of, amount]`, from the test's own decoding.
fn one_nft() -> ((String, String), Value) {
    let truth = Truth::demo();
    let mut holders: std::collections::BTreeMap<(&str, &str), Vec<_>> = Default::default();
    for n in truth.nfts.values().flatten() {
        holders
            .entry((&n.contract, &n.token_id))
            .or_default()
            .push(n);
    }
    let ((c, id), h) = holders
        .into_iter()
        .find(|(_, h)| h.len() == 1)
        .expect("a token held by one wallet");
    let want = json!([c, id, h[0].owner, h[0].amount]);
    ((c.to_string(), id.to_string()), want)
}

/// The parts of a raw answer `want` names, in its shape.
fn shape(name: &str, raw: &Value) -> Value {
    match name {
        "nft" => json!([
            raw["token_address"],
            raw["token_id"],
            raw["owner_of"],
            raw["amount"]
        ]),
        "date" => {
            json!({"block": raw["block"], "timestamp": raw["timestamp"], "hash": raw["hash"]})
        }
        "metadata" | "symbols" => json!(raw
            .as_array()
            .into_iter()
            .flatten()
            .map(|r| json!([
                r["address"],
                r["name"],
                r["symbol"],
                r["decimals"],
                r["logo"]
            ]))
            .collect::<Vec<_>>()),
        "balances" => {
            let r = &raw[0];
            json!({"block_number": r["block_number"], "total_balance": r["total_balance"],
                "wallet_balances": r["wallet_balances"].as_array().into_iter().flatten()
                    .map(|w| json!([w["address"], w["balance"]])).collect::<Vec<_>>()})
        }
        "weights" => {
            let mut all = raw.as_array().cloned().unwrap_or_default();
            all.sort_by_key(|w| w["endpoint"].as_str().map(str::to_string));
            json!(all)
        }
        _ => raw.clone(),
    }
}

async fn sdk_lookups(backend: Backend) {
    let anvil = chain().await;
    let app = spawn(&anvil, backend).await;
    let (_, _, ts) = sample_block();
    let date = tokenql::types::iso8601_secs(ts);
    let (a, b) = (anvil.accounts[0].clone(), anvil.accounts[1].clone());
    let want = want(&anvil).await;
    let ((collection, token), _) = one_nft();

    let js = run(&app, "moralis-2.27", json!([
        {"name": "nft", "op": "nft.getNFTMetadata", "params": {"chain": "0x1", "address": collection, "tokenId": token}},
        {"name": "version", "op": "utils.web3ApiVersion", "params": {}},
        {"name": "weights", "op": "utils.endpointWeights", "params": {}},
        {"name": "date", "op": "block.getDateToBlock", "params": {"chain": "0x1", "date": date}},
        {"name": "before", "op": "block.getDateToBlock", "params": {"chain": "0x1", "date": "2015-01-01T00:00:00Z"}},
        {"name": "metadata", "op": "token.getTokenMetadata", "params": {"chain": "0x1", "addresses": [USDT, DAI]}},
        {"name": "symbols", "op": "token.getTokenMetadataBySymbol", "params": {"chain": "0x1", "symbols": ["USDT"]}},
        {"name": "balance", "op": "balance.getNativeBalance", "params": {"chain": "0x1", "address": a, "toBlock": 1}},
        {"name": "balances", "op": "balance.getNativeBalancesForAddresses", "params": {"chain": "0x1", "walletAddresses": [a, b], "toBlock": 2}},
    ])).await;
    for (name, expected) in &want {
        assert_eq!(&shape(name, &page(&js, name)["raw"]), expected, "JS {name}");
    }
    js_typed(&js, &want);

    let py = run(&app, python::CLIENT, json!([
        {"name": "nft", "op": "nft.get_nft_metadata", "params": {"chain": "eth", "address": collection, "token_id": token}},
        {"name": "version", "op": "utils.web3_api_version", "params": {}},
        {"name": "weights", "op": "utils.endpoint_weights", "params": {}},
        {"name": "date", "op": "block.get_date_to_block", "params": {"chain": "eth", "date": date}},
        {"name": "before", "op": "block.get_date_to_block", "params": {"chain": "eth", "date": "2015-01-01"}},
        {"name": "metadata", "op": "token.get_token_metadata", "params": {"chain": "eth", "addresses": [USDT, DAI]}},
        {"name": "symbols", "op": "token.get_token_metadata_by_symbol", "params": {"chain": "eth", "symbols": ["USDT"]}},
        {"name": "balance", "op": "balance.get_native_balance", "params": {"chain": "eth", "address": a, "to_block": 1}},
        {"name": "balances", "op": "balance.get_native_balances_for_addresses", "params": {"chain": "eth", "wallet_addresses": [a, b], "to_block": 2}},
    ])).await;
    for (name, expected) in &want {
        assert_eq!(
            &shape(name, &page(&py, name)["raw"]),
            expected,
            "Python {name}"
        );
    }
    // The graph reads the same balance: `wallet { nativeBalance(atBlock:) }`.
    let q = format!(
        r#"{{ wallet(chain: "eth", address: "{a}") {{ nativeBalance(atBlock: 1) {{ balance blockNumber }} }} }}"#
    );
    let data = app.graphql_ok(&q, json!({})).await;
    assert_eq!(
        data["wallet"]["nativeBalance"],
        json!({"balance": balance(&anvil, &a, 1).await, "blockNumber": 1}),
        "{data}"
    );
    let q = format!(
        r#"{{ wallet(chain: "polygon", address: "{a}") {{ nativeBalance {{ balance }} }} }}"#
    );
    let (_, answer) = app.graphql(&q, json!({})).await;
    assert_eq!(
        answer["errors"][0]["extensions"]["code"], "BAD_USER_INPUT",
        "{answer}"
    );
    for calls in [&js, &py] {
        // Before the sample's first block: our 404 reaches the caller.
        let before = calls
            .iter()
            .find(|c| c["name"] == "before")
            .expect("before");
        assert_eq!(before["error"]["status"], json!(404), "{before}");
        let message = before["error"]["body"]["message"]
            .as_str()
            .unwrap_or_default();
        assert!(
            message.contains("before the first stored block"),
            "{before}"
        );
    }
    app.cleanup().await;
}

/// What the JS SDK's typed results kept: the block, the tokens, the balances.
fn js_typed(js: &[Value], want: &[(&str, Value)]) {
    let want = |name: &str| {
        want.iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    };
    // The SDK's EvmBlockDate keeps its fields under `data`.
    let date = &page(js, "date")["result"]["data"];
    let w = want("date");
    assert_eq!(
        (&date["block"], &date["hash"]),
        (&w["block"], &w["hash"]),
        "{date}"
    );
    let ts = w["timestamp"].as_u64().unwrap_or_default();
    assert_eq!(
        date["blockTimestamp"],
        json!(tokenql::types::iso8601_secs(ts)),
        "{date}"
    );
    let tokens = page(js, "metadata")["result"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for (t, w) in tokens
        .iter()
        .zip(want("metadata").as_array().into_iter().flatten())
    {
        let token = &t["token"];
        assert_eq!(
            token["contractAddress"].as_str().map(str::to_lowercase),
            w[0].as_str().map(str::to_string)
        );
        assert_eq!(
            (&token["name"], &token["symbol"], &token["logo"]),
            (&w[1], &w[2], &w[4]),
            "{t}"
        );
        assert_eq!(
            token["decimals"].to_string(),
            w[3].as_str().unwrap_or_default(),
            "{t}"
        );
    }
    assert_eq!(tokens.len(), 2);
    let balance = &page(js, "balance")["result"]["balance"];
    assert!(
        balance
            .to_string()
            .contains(want("balance")["balance"].as_str().unwrap_or("?")),
        "{balance}"
    );
}

crate::backend_tests!(sdk_lookups);
