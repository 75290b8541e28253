//! Webhooks compatible with Moralis Streams (issue 27), black-box on anvil and every backend:
//! a real `tokenql serve` process indexes the chain and delivers a stream made through the
//! management routes to a receiver in the test, which verifies `x-signature` as Moralis's SDK
//! does. Transfers flow while reorgs of depth 1, 5 and 30 replace stored blocks, the serve
//! process is SIGKILLed five times mid-delivery and restarted, and the receiver answers 500 for
//! a minute; then a receiver that keeps refusing puts the stream in `error`, and the status route
//! resumes it. Afterwards the deliveries, deduplicated by `(streamId, block.hash, confirmed,
//! removed)`, match the chain's own logs exactly: every surviving watched transfer was
//! delivered unconfirmed and confirmed, every delivered transfer a reorg took away is listed in
//! a removal delivery, nothing else was delivered, and each block's confirmation or removal came
//! after it was added. Last, a receiver written against Moralis's published types (the SDK's
//! `verifySignature`, `@moralisweb3/streams-typings`) accepts every delivery as received.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::support::anvil::*;
use crate::support::common::{self, Backend, TestApp};
use crate::support::indexer::process::pinned_binary;
use crate::support::indexer::*;
use crate::support::webhooks::{signature_of, stringify, Receiver};

crate::backend_tests!(deliveries_match_the_chain_through_reorgs_crashes_and_outages);

/// Confirmations of the stream's chain: deeper than the 1-block reorg, shallower than the
/// 5-block one (whose confirmed transfers are then removed all the same).
const CONFIRMATIONS: u64 = 3;

/// A transfer as the chain and the deliveries both name it: block hash and log index (an NFT
/// mint of several tokens has a log per token).
type Key = (String, u64);

/// A `tokenql serve` process indexing anvil and delivering webhooks; killed on drop.
struct Serve {
    child: Child,
    base: String,
}

impl Serve {
    /// The main scene's process: the receiver's minute down must not put the stream in error.
    fn start(app: &TestApp, rpc: &str, log: &std::path::Path) -> Serve {
        Self::start_with(app, rpc, log, &["--webhook-max-failures", "1000"])
    }

    fn start_with(app: &TestApp, rpc: &str, log: &std::path::Path, extra: &[&str]) -> Serve {
        let rpc = format!("eth={rpc}");
        let confirmations = CONFIRMATIONS.to_string();
        let mut child = Command::new(pinned_binary())
            .args([
                "serve",
                "--bind",
                "127.0.0.1:0",
                "--offchain-workers",
                "false",
            ])
            .args([
                "--rpc",
                &rpc,
                "--start-block",
                "eth=0",
                "--leader-lease-ms",
                "300",
            ])
            .args(["--webhook-confirmations", &confirmations])
            .args(["--webhook-lease-ms", "400", "--webhook-retry-ms", "100"])
            .args(extra)
            .env("DATABASE_URL", &app.db_url)
            .env("TOKENQL_LOG_FORMAT", "json")
            .env("TOKENQL_FEED_POLL_MS", "50")
            .env("TOKENQL_POLL_INTERVAL_MS", "50")
            .env("RUST_LOG", "info,sqlx=warn,sea_orm=warn")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start tokenql serve");
        let stderr = child.stderr.take().expect("stderr");
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .expect("log file");
        let (tx, rx) = std::sync::mpsc::channel::<String>();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let _ = writeln!(file, "{line}");
                if line.contains("\"listening\"") {
                    let _ = tx.send(line);
                }
            }
        });
        let line = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("tokenql serve listens within 60 s");
        let v: Value = serde_json::from_str(&line).expect("a JSON log line");
        let addr = v["fields"]["addr"].as_str().expect("addr").to_string();
        Serve {
            child,
            base: format!("http://{addr}"),
        }
    }

    /// SIGKILL, and reap.
    fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A management call: method, path, body; answers status and JSON.
async fn call(base: &str, key: &str, method: &str, path: &str, body: Value) -> (u16, Value) {
    let client = reqwest::Client::new();
    let url = format!("{base}{path}");
    let req = match method {
        "PUT" => client.put(&url),
        "POST" => client.post(&url),
        "DELETE" => client.delete(&url),
        _ => client.get(&url),
    };
    let req = if body.is_null() {
        req
    } else {
        req.header("content-type", "application/json")
            .body(body.to_string())
    };
    let resp = req.header("X-API-Key", key).send().await.expect("request");
    let status = resp.status().as_u16();
    let text = resp.text().await.expect("body");
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// The chain's `Transfer` logs of `contract` above block `after` touching `watched` (from, to
/// or the contract).
async fn truth(
    chain: &Anvil,
    contract: &str,
    watched: &BTreeSet<String>,
    after: u64,
) -> BTreeSet<Key> {
    let from = format!("{:#x}", after + 1);
    let logs = chain
        .rpc(
            "eth_getLogs",
            json!([{"fromBlock": from, "toBlock": "latest", "address": contract}]),
        )
        .await;
    let word = |t: &Value| format!("0x{}", &t.as_str().expect("topic")[26..]);
    logs.as_array()
        .expect("logs")
        .iter()
        .filter(|l| {
            let t = l["topics"].as_array().expect("topics");
            watched.contains(contract)
                || watched.contains(&word(&t[1]))
                || watched.contains(&word(&t[2]))
        })
        .map(|l| {
            let index = l["logIndex"]
                .as_str()
                .expect("index")
                .trim_start_matches("0x");
            (
                l["blockHash"].as_str().expect("hash").to_string(),
                u64::from_str_radix(index, 16).expect("hex"),
            )
        })
        .collect()
}

/// A delivery without what may differ between its copies: `retries`, and the token metadata
/// that became known meanwhile.
fn comparable(b: &Value) -> Value {
    fn strip(list: Option<&mut Value>) {
        for t in list.and_then(Value::as_array_mut).into_iter().flatten() {
            if let Some(o) = t.as_object_mut() {
                for m in [
                    "tokenName",
                    "tokenSymbol",
                    "tokenDecimals",
                    "valueWithDecimals",
                ] {
                    o.remove(m);
                }
            }
        }
    }
    let mut c = b.clone();
    c["retries"] = json!(0);
    for list in ["erc20Transfers", "nftTransfers"] {
        strip(c.get_mut(list));
        strip(c.get_mut("removed").and_then(|r| r.get_mut(list)));
    }
    c
}

/// The deduplication key of a delivery.
type Dedupe = (String, String, bool, bool);

/// What the receiver holds, deduplicated: keys of the unconfirmed, the confirmed and the
/// removal deliveries. Panics when two copies of one delivery differ.
fn deduplicated(bodies: &[Value]) -> [BTreeSet<Key>; 3] {
    let mut seen: BTreeMap<Dedupe, Value> = BTreeMap::new();
    let mut out: [BTreeSet<Key>; 3] = Default::default();
    for b in bodies {
        let removed = b.get("removed").is_some();
        let key = (
            b["streamId"].as_str().expect("streamId").to_string(),
            b["block"]["hash"].as_str().expect("hash").to_string(),
            b["confirmed"].as_bool().expect("confirmed"),
            removed,
        );
        let content = comparable(b);
        if let Some(first) = seen.get(&key) {
            assert_eq!(first, &content, "two copies of one delivery differ");
            continue;
        }
        seen.insert(key.clone(), content);
        let slot = match (removed, key.2) {
            (true, _) => 2,
            (false, false) => 0,
            (false, true) => 1,
        };
        let lists = if removed { &b["removed"] } else { b };
        for field in ["erc20Transfers", "nftTransfers"] {
            for t in lists[field].as_array().expect("a list") {
                let index: u64 = t["logIndex"]
                    .as_str()
                    .expect("logIndex")
                    .parse()
                    .expect("n");
                assert!(
                    out[slot].insert((key.1.clone(), index)),
                    "twice in one slot: {t}"
                );
            }
        }
        if removed {
            assert_eq!(
                b["erc20Transfers"],
                json!([]),
                "a removal lists nothing as added"
            );
            assert_eq!(b["confirmed"], false, "a removal is unconfirmed");
        }
    }
    out
}

/// Deliveries came in order: a block's confirmation and its removal after its own unconfirmed
/// delivery.
fn check_order(bodies: &[Value]) {
    let mut added = BTreeSet::new();
    for b in bodies {
        let hash = b["block"]["hash"].as_str().expect("hash").to_string();
        if b["confirmed"] == false && b.get("removed").is_none() {
            added.insert(hash);
        } else {
            assert!(
                added.contains(&hash),
                "a block confirmed or removed before it was added: {b}"
            );
        }
    }
}

/// Checks the shape of a delivery against Moralis's `IWebhook`.
fn check_shape(b: &Value) {
    for field in [
        "logs",
        "txs",
        "txsInternal",
        "abi",
        "erc20Approvals",
        "nftTokenApprovals",
    ] {
        assert!(b[field].is_array(), "{field}: {b}");
    }
    assert!(b["nftApprovals"]["ERC721"].is_array() && b["nftApprovals"]["ERC1155"].is_array());
    assert_eq!(b["chainId"], "0x1");
    assert_eq!(b["tag"], "hooks");
    assert!(b["retries"].is_u64() && b["block"]["number"].is_string());
    assert!(b["block"]["timestamp"].is_string());
    for t in b["erc20Transfers"].as_array().expect("list") {
        for f in [
            "transactionHash",
            "logIndex",
            "contract",
            "from",
            "to",
            "value",
        ] {
            assert!(t[f].is_string(), "{f}: {t}");
        }
        // Metadata is read from the contract after its first transfers: known, or not yet.
        let known = (t["tokenSymbol"].clone(), t["tokenDecimals"].clone());
        assert!(
            known == (json!("ALP"), json!("18")) || known == (json!(""), json!("")),
            "{t}"
        );
        assert!(t["possibleSpam"].is_boolean());
    }
    for t in b["nftTransfers"].as_array().expect("list") {
        assert_eq!(t["tokenContractType"], "ERC721", "{t}");
        assert!(t["tokenId"].is_string() && t["amount"].is_string(), "{t}");
    }
}

/// The replacement transaction of a reorg: a token transfer at `offset` in the new blocks.
fn replacement(from: &str, tok: &str, to: &str, amount: u64, offset: u64) -> Value {
    let data = calldata(transferCall {
        to: addr(to),
        amount: u(amount),
    });
    json!([{"from": from, "to": tok, "gas": "0x100000", "data": hex(&data)}, offset])
}

/// One step of traffic: a mint, a transfer, a spray and an NFT mint (a block each).
async fn traffic(chain: &Anvil, tok: &str, nft: &str, r: u64) {
    let a = &chain.accounts;
    let sender = &a[(r % 8 + 1) as usize];
    let mint = calldata(mintCall {
        to: addr(sender),
        amount: u(1_000 + r),
    });
    chain.send(&a[0], tok, mint).await;
    let pay = calldata(transferCall {
        to: addr(&a[(r % 5 + 12) as usize]),
        amount: u(r),
    });
    chain.send(sender, tok, pay).await;
    let to: Vec<_> = (0..3)
        .map(|i| addr(&a[((i + r) % 20 + 2) as usize]))
        .collect();
    chain
        .send(sender, tok, calldata(sprayCall { to, amount: u(3) }))
        .await;
    let mint = calldata(mintManyCall {
        to: addr(&a[(r % 4 + 1) as usize]),
        start: u(r * 10),
        n: u(2),
    });
    chain.send(&a[0], nft, mint).await;
}

/// Management routes: bad input is a 400 naming the field, another key sees no stream.
async fn check_management(app: &TestApp, base: &str, id: &str) {
    let k = &app.key;
    let (s, v) = call(
        base,
        k,
        "PUT",
        "/streams/evm",
        json!({"webhookUrl": "http://x/h",
        "chainIds": ["0x1"], "topic0": ["Approval(address,address,uint256)"]}),
    )
    .await;
    assert_eq!(s, 400, "{v}");
    assert!(
        v["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("topic0:")),
        "{v}"
    );
    let (s, v) = call(
        base,
        k,
        "PUT",
        "/streams/evm",
        json!({"webhookUrl": "http://x/h",
        "chainIds": ["0x1"], "includeNativeTxs": true}),
    )
    .await;
    assert_eq!(s, 400, "{v}");
    let (s, _) = call(
        base,
        k,
        "GET",
        "/streams/evm/00000000-0000-4000-8000-000000000000",
        Value::Null,
    )
    .await;
    assert_eq!(s, 404);
    let (_, other) = tokenql::keys::create(&app.db, "other").await.expect("key");
    let (s, _) = call(
        base,
        &other,
        "GET",
        &format!("/streams/evm/{id}"),
        Value::Null,
    )
    .await;
    assert_eq!(s, 404, "a stream is visible to its own key only");
    let (s, v) = call(base, k, "GET", "/streams/evm?limit=10", Value::Null).await;
    assert_eq!((s, v["total"].clone()), (200, json!(1)), "{v}");
    let (s, v) = call(
        base,
        k,
        "GET",
        &format!("/streams/evm/{id}/address?limit=100"),
        Value::Null,
    )
    .await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["total"], json!(9), "{v}");
}

/// A receiver written against Moralis's published types accepts the deliveries unchanged:
/// `tests/clients/moralis-2.27/webhook.js` checks each one with the SDK's own
/// `Moralis.Streams.verifySignature` and against the fields `@moralisweb3/streams-typings`
/// declares.
fn check_with_moralis_sdk(receiver: &Receiver, secret: &str, stream: &str) {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/moralis-2.27");
    assert!(
        dir.join("node_modules/@moralisweb3/streams-typings")
            .exists(),
        "the Moralis SDK is not installed in {}: scripts/test installs it (or: npm ci --prefix \
         tests/clients/moralis-2.27)",
        dir.display()
    );
    let deliveries: Vec<Value> = receiver
        .raw()
        .into_iter()
        .map(|(body, signature)| json!({"body": body, "signature": signature}))
        .collect();
    let file = std::env::temp_dir().join(format!("tq-webhooks-{stream}.json"));
    let input = json!({"secret": secret, "deliveries": deliveries});
    std::fs::write(&file, input.to_string()).expect("write the deliveries");
    let out = Command::new("node")
        .arg(dir.join("webhook.js"))
        .arg(&file)
        .output()
        .expect("run node");
    let _ = std::fs::remove_file(&file);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "webhook.js failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = stdout.lines().last().unwrap_or_default();
    let v: Value = serde_json::from_str(line).expect("webhook.js answers JSON");
    assert_eq!(v["problems"], json!([]), "{v}");
    assert_eq!(v["checked"], json!(deliveries.len()), "{v}");
}

/// What the scenario's steps share.
struct Scene<'a> {
    app: &'a TestApp,
    chain: &'a Anvil,
    tok: &'a str,
    nft: &'a str,
    log: &'a std::path::Path,
    id: &'a str,
}

/// A receiver that keeps refusing puts the stream in `error` after `--webhook-max-failures`
/// attempts; `POST /streams/evm/{id}/status {"status": "active"}` resumes it where it stopped
/// (the final check finds those transfers delivered).
async fn error_and_resume(s: &Scene<'_>, receiver: &Receiver, serve: Serve) -> Serve {
    serve.kill();
    let serve = Serve::start_with(s.app, &s.chain.url, s.log, &["--webhook-max-failures", "3"]);
    receiver.set_down(true);
    traffic(s.chain, s.tok, s.nft, 40).await;
    s.chain.mine(1).await;
    let path = format!("/streams/evm/{}", s.id);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (_, v) = call(&serve.base, &s.app.key, "GET", &path, Value::Null).await;
        if v["status"] == "error" {
            let message = v["statusMessage"].as_str().unwrap_or_default();
            assert!(message.contains("3 consecutive deliveries failed"), "{v}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the stream did not go to error: {v}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    receiver.set_down(false);
    let (status, v) = call(
        &serve.base,
        &s.app.key,
        "POST",
        &format!("{path}/status"),
        json!({"status": "active"}),
    )
    .await;
    assert_eq!((status, &v["status"]), (200, &json!("active")), "{v}");
    serve
}

/// Waits until the receiver holds `done`; `false` after `limit`.
async fn until(
    receiver: &Receiver,
    limit: Duration,
    done: impl Fn(&[BTreeSet<Key>; 3]) -> bool,
) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        let (bodies, _) = receiver.snapshot();
        if done(&deduplicated(&bodies)) {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn deliveries_match_the_chain_through_reorgs_crashes_and_outages(backend: Backend) {
    let chain = Anvil::start(30, &[]).await;
    let app = common::spawn(backend).await;
    let a = chain.accounts.clone();
    let tok = chain
        .deploy("TestToken", token_ctor("Alpha", "ALP", 18))
        .await;
    let nft = chain
        .deploy("TestNFT", nft_ctor("Nifty", "NFT", "ipfs://base/"))
        .await;
    let log = std::env::temp_dir().join(format!(
        "tq-webhooks-{}-{backend:?}.log",
        std::process::id()
    ));
    let mut serve = Serve::start(&app, &chain.url, &log);
    // Transfers before the stream exists, still waiting for their confirmations when it is
    // made: not the stream's (neither added nor confirmed to it).
    traffic(&chain, &tok, &nft, 100).await;
    wait_synced(&app.db, &chain, Duration::from_secs(60)).await;
    let before = chain.head().await;
    let (_, settings) = call(&serve.base, &app.key, "GET", "/settings", Value::Null).await;
    let secret = settings["secretKey"]
        .as_str()
        .expect("a secret")
        .to_string();
    let receiver = Receiver::start(&secret).await;
    let (s, stream) = call(
        &serve.base,
        &app.key,
        "PUT",
        "/streams/evm",
        json!({
            "webhookUrl": receiver.url, "description": "test", "tag": "hooks", "chainIds": ["0x1"],
            "topic0": ["Transfer(address,address,uint256)"], "includeContractLogs": false,
        }),
    )
    .await;
    assert_eq!(s, 200, "{stream}");
    let id = stream["id"].as_str().expect("id").to_string();
    let watched: BTreeSet<String> = a[1..=8].iter().cloned().collect();
    let list: Vec<&String> = watched.iter().collect();
    let (s, v) = call(
        &serve.base,
        &app.key,
        "POST",
        &format!("/streams/evm/{id}/address"),
        json!({"address": list}),
    )
    .await;
    assert_eq!(s, 200, "{v}");
    let (s, _) = call(
        &serve.base,
        &app.key,
        "POST",
        &format!("/streams/evm/{id}/address"),
        json!({"address": a[20]}),
    )
    .await;
    assert_eq!(s, 200);
    let mut watched = watched;
    watched.insert(a[20].clone());
    check_management(&app, &serve.base, &id).await;

    let mut kills = 0;
    for step in 0..14u64 {
        traffic(&chain, &tok, &nft, step + 1).await;
        if step % 3 == 1 && kills < 5 {
            // Deliveries are under way: SIGKILL, and start again.
            tokio::time::sleep(Duration::from_millis(150 + 40 * step)).await;
            serve.kill();
            kills += 1;
            serve = Serve::start(&app, &chain.url, &log);
        }
        if step == 3 {
            // The NFT mint's block is replaced (a 1-block reorg).
            wait_synced(&app.db, &chain, Duration::from_secs(60)).await;
            chain
                .reorg(1, json!([replacement(&a[2], &tok, &a[9], 7, 0)]))
                .await;
        }
        if step == 6 {
            receiver.set_down(true);
        }
        if step == 8 {
            // The receiver stays down for a minute (a restart of the server fell inside it):
            // deliveries back off, up to 30 s apart, and resume once it answers again.
            tokio::time::sleep(Duration::from_secs(60)).await;
            receiver.set_down(false);
        }
        if step == 9 {
            wait_synced(&app.db, &chain, Duration::from_secs(60)).await;
            chain
                .reorg(
                    5,
                    json!([
                        replacement(&a[3], &tok, &a[8], 5, 1),
                        replacement(&a[4], &tok, &a[1], 6, 3)
                    ]),
                )
                .await;
        }
        if step == 12 {
            wait_synced(&app.db, &chain, Duration::from_secs(60)).await;
            let txs: Vec<Value> = (0..4)
                .map(|i| replacement(&a[(i + 1) as usize], &tok, &a[(i + 2) as usize], 9, i * 6))
                .collect();
            chain.reorg(30, Value::Array(txs)).await;
        }
        chain.mine(1).await;
    }
    assert_eq!(kills, 5);
    let scene = Scene {
        app: &app,
        chain: &chain,
        tok: &tok,
        nft: &nft,
        log: &log,
        id: &id,
    };
    let serve = error_and_resume(&scene, &receiver, serve).await;
    chain.mine(CONFIRMATIONS + 1).await;
    wait_synced(&app.db, &chain, Duration::from_secs(60)).await;

    let mut want = truth(&chain, &tok, &watched, before).await;
    want.extend(truth(&chain, &nft, &watched, before).await);
    assert!(
        want.len() > 40,
        "traffic touched the watched wallets: {}",
        want.len()
    );
    let settled = |[_, confirmed, _]: &[BTreeSet<Key>; 3]| want.is_subset(confirmed);
    if !until(&receiver, Duration::from_secs(90), settled).await {
        let (bodies, _) = receiver.snapshot();
        let [u, c, r] = deduplicated(&bodies);
        panic!(
            "deliveries did not settle: {} bodies; unconfirmed {} confirmed {} removed {}; \
             want {}, missing confirmed {:?}\n{}",
            bodies.len(),
            u.len(),
            c.len(),
            r.len(),
            want.len(),
            want.difference(&c).collect::<Vec<_>>(),
            crate::support::indexer::process::tail(&log)
        );
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (bodies, bad) = receiver.snapshot();
    assert_eq!(bad, 0, "every signature verified");
    assert!(
        receiver.refused() > 0,
        "the receiver was down while deliveries were due"
    );
    assert!(
        bodies.iter().any(|b| b["retries"].as_u64() > Some(0)),
        "retries counted"
    );
    bodies.iter().for_each(check_shape);
    check_order(&bodies);
    assert!(
        bodies
            .iter()
            .any(|b| b["erc20Transfers"][0]["valueWithDecimals"].is_string()),
        "once the token's metadata is read, deliveries carry it"
    );
    let [unconfirmed, confirmed, removed] = deduplicated(&bodies);
    eprintln!(
        "webhooks: {} bodies, {} refused while down; {} unconfirmed, {} confirmed, {} removed",
        bodies.len(),
        receiver.refused(),
        unconfirmed.len(),
        confirmed.len(),
        removed.len()
    );
    assert!(
        want.is_subset(&unconfirmed),
        "missing unconfirmed: {:?}",
        want.difference(&unconfirmed).collect::<Vec<_>>()
    );
    let extra: BTreeSet<Key> = unconfirmed.difference(&want).cloned().collect();
    assert!(!extra.is_empty(), "the reorgs removed delivered transfers");
    assert_eq!(
        extra, removed,
        "exactly the delivered transfers the reorgs took away are removed"
    );
    let confirmed_extra: BTreeSet<Key> = confirmed.difference(&want).cloned().collect();
    assert!(
        confirmed_extra.is_subset(&removed),
        "confirmed and not on the chain: only what the 5-block reorg removed"
    );
    assert!(
        !confirmed_extra.is_empty(),
        "the 5-block reorg removed confirmed transfers"
    );
    let (s, v) = call(
        &serve.base,
        &app.key,
        "GET",
        &format!("/streams/evm/{id}"),
        Value::Null,
    )
    .await;
    assert_eq!((s, v["status"].clone()), (200, json!("active")), "{v}");
    assert_eq!(
        signature_of(&stringify("{\"a\": 1}"), "s"),
        signature_of("{\"a\":1}", "s")
    );
    check_with_moralis_sdk(&receiver, &secret, &id);
    serve.kill();
    let _ = std::fs::remove_file(&log);
    app.cleanup().await;
}
