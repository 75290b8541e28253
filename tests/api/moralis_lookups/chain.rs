//! The block and native-balance routes against a real chain: anvil mines a dozen blocks 12 s
//! apart with native transfers between its accounts, the real indexer stores them, and the
//! server reads native balances from anvil's endpoint. Every answer is compared with anvil's
//! own `eth_getBlockByNumber` and `eth_getBalance`.

use std::time::Duration;

use serde_json::{json, Value};
use tokenql::query::ChainReads;
use tokenql::types::Chain;

use crate::support::anvil::Anvil;
use crate::support::common::{self, Backend, TestApp};
use crate::support::indexer::{wait_synced, Indexer};

/// Seconds between blocks.
const INTERVAL: u64 = 12;

/// A chain block as anvil has it.
#[derive(Debug, Clone)]
struct ChainBlock {
    number: u64,
    timestamp: u64,
    hash: String,
    parent_hash: String,
}

fn quantity(v: &Value) -> u64 {
    u64::from_str_radix(v.as_str().unwrap_or("0x0").trim_start_matches("0x"), 16)
        .expect("hex quantity")
}

fn wei(v: &Value) -> String {
    alloy::primitives::U256::from_str_radix(
        v.as_str().unwrap_or("0x0").trim_start_matches("0x"),
        16,
    )
    .expect("hex balance")
    .to_string()
}

/// Mines `n` blocks, each with one native transfer between the first accounts.
async fn build_chain(anvil: &Anvil, n: u64) {
    anvil
        .rpc("anvil_setBlockTimestampInterval", json!([INTERVAL]))
        .await;
    for i in 0..n {
        let from = &anvil.accounts[(i % 3) as usize];
        let to = &anvil.accounts[((i + 1) % 4) as usize];
        let value = format!("{:#x}", (i + 1) as u128 * 10u128.pow(17) + i as u128);
        anvil
            .rpc(
                "eth_sendTransaction",
                json!([{"from": from, "to": to, "value": value}]),
            )
            .await;
    }
}

async fn chain_blocks(anvil: &Anvil) -> Vec<ChainBlock> {
    let mut out = Vec::new();
    for n in 0..=anvil.head().await {
        let b = anvil
            .rpc("eth_getBlockByNumber", json!([format!("{n:#x}"), false]))
            .await;
        out.push(ChainBlock {
            number: n,
            timestamp: quantity(&b["timestamp"]),
            hash: b["hash"].as_str().unwrap_or_default().to_string(),
            parent_hash: b["parentHash"].as_str().unwrap_or_default().to_string(),
        });
    }
    out
}

/// The server's native balances: eth from anvil, bsc from an endpoint that refuses
/// connections, no other chain.
fn chain_reads(anvil: &Anvil) -> ChainReads {
    let retry = tokenql::indexer::retry::RetryPolicy {
        base: Duration::from_millis(10),
        max_delay: Duration::from_millis(50),
        max_attempts: 2,
    };
    let bsc = Chain::parse("bsc").expect("bsc");
    tokenql::startup::chain_reads::chain_reads(
        &[
            (Chain::ETH, anvil.url.clone()),
            (bsc, "http://127.0.0.1:1".to_string()),
        ],
        Duration::from_secs(5),
        retry,
    )
    .expect("native balances")
}

/// Blocks, dates and native balances on one indexed anvil chain.
pub(super) async fn chain_lookups(backend: Backend) {
    let anvil = Anvil::start(4, &[]).await;
    build_chain(&anvil, 10).await;
    let options = tokenql::app::ServerOptions {
        chain_reads: chain_reads(&anvil),
        ..Default::default()
    };
    let app = common::spawn_with(backend, options).await;
    let indexer = Indexer::start(&app.db, &anvil.url, |_| {});
    wait_synced(&app.db, &anvil, Duration::from_secs(60)).await;
    indexer.stop().await.expect("indexer stops cleanly");
    let blocks = chain_blocks(&anvil).await;

    latest_block_number(&app, &blocks).await;
    date_to_block(&app, &blocks).await;
    native_balances(&app, &anvil, &blocks).await;

    app.cleanup().await;
}

async fn latest_block_number(app: &TestApp, blocks: &[ChainBlock]) {
    let head = blocks.last().expect("blocks").number;
    for prefix in ["/api/v2", "/api/v2.2"] {
        for chain in ["eth", "0x1", "ETH"] {
            let (status, _, body) = app
                .get_rest(&format!("{prefix}/latestBlockNumber/{chain}"))
                .await;
            assert_eq!((status, body), (200, json!(head.to_string())), "{chain}");
        }
    }
    let (status, _, body) = app.get_rest("/api/v2.2/latestBlockNumber/polygon").await;
    assert_eq!(status, 404, "{body}");
    assert!(body["message"]
        .as_str()
        .is_some_and(|m| m.contains("polygon") && m.contains("nothing")));
    let (status, _, body) = app.get_rest("/api/v2.2/latestBlockNumber/nope").await;
    assert_eq!(status, 400, "{body}");
    assert!(body["message"]
        .as_str()
        .is_some_and(|m| m.starts_with("chain:")));
}

/// `GET /dateToBlock?date=…` must answer `want` (a block) or a 404 mentioning `want_error`.
async fn date_case(app: &TestApp, date: &str, want: Result<&ChainBlock, &str>) {
    let uri = format!(
        "/api/v2.2/dateToBlock?chain=0x1&date={}",
        form_urlencoded::byte_serialize(date.as_bytes()).collect::<String>()
    );
    let (status, _, body) = app.get_rest(&uri).await;
    match want {
        Ok(b) => {
            assert_eq!(status, 200, "{uri}: {body}");
            assert_eq!(body["block"], json!(b.number), "{uri}");
            assert_eq!(body["timestamp"], json!(b.timestamp), "{uri}");
            assert_eq!(body["hash"], json!(b.hash), "{uri}");
            assert_eq!(body["parent_hash"], json!(b.parent_hash), "{uri}");
            assert_eq!(
                body["block_timestamp"],
                json!(tokenql::types::iso8601_secs(b.timestamp)),
                "{uri}"
            );
        }
        Err(mention) => {
            assert_eq!(status, 404, "{uri}: {body}");
            let m = body["message"].as_str().unwrap_or_default();
            assert!(m.starts_with("date:") && m.contains(mention), "{uri}: {m}");
        }
    }
}

async fn date_to_block(app: &TestApp, blocks: &[ChainBlock]) {
    let iso = tokenql::types::iso8601_secs;
    for (i, b) in blocks.iter().enumerate() {
        // At the block's time, and between it and the next one (every form Moralis takes).
        date_case(app, &b.timestamp.to_string(), Ok(b)).await;
        date_case(app, &iso(b.timestamp), Ok(b)).await;
        if i + 1 < blocks.len() {
            let between = b.timestamp + INTERVAL / 2;
            assert!(between < blocks[i + 1].timestamp);
            date_case(app, &between.to_string(), Ok(b)).await;
            date_case(app, &format!("{}999", between), Ok(b)).await;
            date_case(app, &iso(between).replace(".000Z", "+00:00"), Ok(b)).await;
        }
    }
    let (first, last) = (&blocks[0], &blocks[blocks.len() - 1]);
    date_case(
        app,
        &(first.timestamp - 1).to_string(),
        Err("before the first"),
    )
    .await;
    date_case(app, "2000-01-01", Err("before the first")).await;
    date_case(
        app,
        &(last.timestamp + 1).to_string(),
        Err("after the newest"),
    )
    .await;
    for (q, param) in [
        ("", "date:"),
        ("date=yesterday", "date:"),
        ("date=1&chain=x", "chain:"),
    ] {
        super::refused(app, &format!("/api/v2/dateToBlock?{q}"), 400, param).await;
    }
    sparse_headers(app).await;
    settled_by_the_chain(app, blocks).await;
}

/// Headers of blocks 3 to 6 not stored: the dates they settle are answered exactly all the
/// same, from headers read from anvil (the server has its endpoint).
async fn settled_by_the_chain(app: &TestApp, blocks: &[ChainBlock]) {
    use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
    use tokenql::entity::block;
    block::Entity::delete_many()
        .filter(block::Column::ChainId.eq(Chain::ETH.db_id()))
        .filter(block::Column::Number.between(3, 6))
        .exec(&app.db)
        .await
        .expect("headers removed");
    for b in &blocks[2..=7] {
        date_case(app, &b.timestamp.to_string(), Ok(b)).await;
        date_case(app, &(b.timestamp + INTERVAL / 2).to_string(), Ok(b)).await;
    }
}

/// Headers stored with a gap (blocks 10, 11 and 20 of polygon): a date between 11 and 20 has
/// no exact answer; dates settled by consecutive stored blocks do.
async fn sparse_headers(app: &TestApp) {
    let polygon = Chain::parse("polygon").expect("polygon");
    let header = |number: u64, timestamp: u64| tokenql::store::BlockHeader {
        number,
        hash: alloy::primitives::B256::repeat_byte(number as u8),
        parent_hash: Some(alloy::primitives::B256::repeat_byte(number as u8 - 1)),
        timestamp,
    };
    let batch = tokenql::store::Batch {
        blocks: vec![header(10, 1_000), header(11, 1_012), header(20, 1_120)],
        ..Default::default()
    };
    tokenql::store::write_batch(&app.db, polygon, &batch)
        .await
        .expect("headers stored");
    let ask = |date: u64| async move {
        app.get_rest(&format!("/api/v2/dateToBlock?chain=polygon&date={date}"))
            .await
    };
    for (date, block) in [(1_000, 10), (1_011, 10), (1_012, 11), (1_120, 20)] {
        let (status, _, body) = ask(date).await;
        assert_eq!(
            (status, &body["block"]),
            (200, &json!(block)),
            "{date}: {body}"
        );
    }
    for date in [1_013, 1_119] {
        let (status, _, body) = ask(date).await;
        assert_eq!(status, 404, "{date}: {body}");
        assert!(
            body["message"]
                .as_str()
                .is_some_and(|m| m.contains("blocks 12 to 19")
                    && m.contains("not stored")
                    && m.contains("no JSON-RPC endpoint for polygon")),
            "{date}: {body}"
        );
    }
    // bsc's endpoint refuses connections: the headers it would read are a 503.
    let bsc = Chain::parse("bsc").expect("bsc");
    tokenql::store::write_batch(&app.db, bsc, &batch)
        .await
        .expect("headers stored");
    let (status, _, body) = app
        .get_rest("/api/v2/dateToBlock?chain=bsc&date=1013")
        .await;
    assert_eq!(status, 503, "{body}");
}

async fn native_balances(app: &TestApp, anvil: &Anvil, blocks: &[ChainBlock]) {
    let head = blocks.last().expect("blocks").number;
    let at = |a: &str, n: u64| {
        let a = a.to_string();
        async move {
            wei(&anvil
                .rpc("eth_getBalance", json!([a, format!("{n:#x}")]))
                .await)
        }
    };
    for n in [0, 1, head / 2, head] {
        for (i, a) in anvil.accounts.iter().enumerate() {
            // Mixed case, as the JS SDK sends checksummed addresses.
            let asked = if i % 2 == 0 {
                a.to_uppercase().replace("0X", "0x")
            } else {
                a.clone()
            };
            let (status, _, body) = app
                .get_rest(&format!("/api/v2.2/{asked}/balance?chain=0x1&to_block={n}"))
                .await;
            assert_eq!(status, 200, "{body}");
            assert_eq!(body, json!({"balance": at(a, n).await}), "{a} at {n}");
        }
        let wallets: Vec<String> = anvil.accounts.iter().rev().cloned().collect();
        let q: Vec<String> = wallets
            .iter()
            .map(|w| format!("wallet_addresses[]={w}"))
            .collect();
        let (status, _, body) = app
            .get_rest(&format!(
                "/api/v2/wallets/balances?to_block={n}&{}",
                q.join("&")
            ))
            .await;
        assert_eq!(status, 200, "{body}");
        let mut total = alloy::primitives::U256::ZERO;
        let mut want = Vec::new();
        for w in &wallets {
            let b = at(w, n).await;
            total += alloy::primitives::U256::from_str_radix(&b, 10).expect("decimal");
            want.push((w.clone(), b));
        }
        let record = &body[0];
        assert_eq!(body.as_array().map(Vec::len), Some(1), "{body}");
        assert_eq!(record["chain"], "0x1");
        assert_eq!(record["block_number"], json!(n.to_string()));
        assert_eq!(
            record["block_timestamp"],
            json!(tokenql::types::iso8601_secs(blocks[n as usize].timestamp))
        );
        assert_eq!(record["total_balance"], json!(total.to_string()));
        let got: Vec<(String, String)> = record["wallet_balances"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|w| {
                (
                    w["address"].as_str().unwrap_or_default().to_string(),
                    w["balance"].as_str().unwrap_or_default().to_string(),
                )
            })
            .collect();
        assert_eq!(got, want, "at {n}");
    }
    // The head, without to_block.
    let a = &anvil.accounts[1];
    let (_, _, body) = app.get_rest(&format!("/api/v2/{a}/balance")).await;
    assert_eq!(body, json!({"balance": at(a, head).await}));
    native_errors(app, a, head).await;
}

async fn native_errors(app: &TestApp, a: &str, head: u64) {
    let cases = [
        (
            format!("/api/v2/{a}/balance?to_block={}", head + 1),
            400,
            "to_block:",
        ),
        (format!("/api/v2/{a}/balance?to_block=-1"), 400, "to_block:"),
        (
            format!("/api/v2/{a}/balance?chain=polygon"),
            400,
            "chain: native balances of polygon are read from its JSON-RPC endpoint, and this \
             server has none; start it with --rpc polygon=URL",
        ),
        (format!("/api/v2/{a}/balance?chain=bsc"), 503, "retry later"),
        (
            "/api/v2/wallets/balances".to_string(),
            400,
            "wallet_addresses:",
        ),
        (
            format!("/api/v2/wallets/balances?wallet_addresses={a}&chain=polygon"),
            400,
            "polygon",
        ),
        ("/api/v2/0x12/balance".to_string(), 400, "address:"),
    ];
    for (uri, status, mention) in cases {
        super::refused(app, &uri, status, mention).await;
    }
    let many: Vec<String> = (0..26)
        .map(|i| format!("wallet_addresses={i:#042x}"))
        .collect();
    let (status, _, body) = app
        .get_rest(&format!("/api/v2/wallets/balances?{}", many.join("&")))
        .await;
    assert_eq!(status, 400, "{body}");
}
