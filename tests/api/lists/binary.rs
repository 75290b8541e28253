//! Through the real binary (SQLite): `tokenql lists …` and `tokenql contract …`, and
//! `serve --demo` showing the bundled flags and labels.

use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};

use super::support::*;
use crate::support::common::binary::{tokenql, BIN};
use crate::support::common::gql_str;
use crate::support::common::truth::Truth;

fn path_str(p: &Path) -> String {
    p.display().to_string()
}

/// `tokenql lists …` and `tokenql contract …` through the real binary (SQLite), then the
/// result through REST and GraphQL of a server on that database.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lists_and_contract_commands_of_the_binary() {
    let db_file = TempFile::new("binary", "db", "");
    let url = format!("sqlite://{}?mode=rwc", db_file.0.display());
    let (ok, _, err) = tokenql(&url, &["lists", "heuristics"]);
    assert!(!ok && err.contains("run `tokenql migrate`"), "{err}");
    assert!(tokenql(&url, &["migrate"]).0);
    let (logs, blocks, list) = (
        path_str(&bundled("demo-mainnet/logs.jsonl")),
        path_str(&bundled("demo-mainnet/blocks.jsonl")),
        path_str(&bundled("tokenlists/superchain.tokenlist.json")),
    );
    let (ok, out, err) = tokenql(
        &url,
        &[
            "import",
            "--chain",
            "eth",
            "--logs",
            &logs,
            "--blocks",
            &blocks,
            "--tokenlist",
            &list,
        ],
    );
    assert!(ok, "{err}");
    assert!(
        out.contains(&format!("token list {list}: 398 imported, ")),
        "{out}"
    );

    let (eth, base) = (path_str(&spam_csv("eth")), path_str(&spam_csv("base")));
    let (ok, out, err) = tokenql(&url, &["lists", "spam", &eth, &base]);
    assert!(ok, "{err}");
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        [
            format!("spam list {eth}: 4378 imported, 3 skipped (3 duplicate rows), 0 malformed"),
            format!("spam list {base}: 0 imported, 2997 skipped (2997 for chains tokenql does not know: 8453), 0 malformed"),
        ]
    );
    let labels = path_str(&labels_json());
    let (ok, out, err) = tokenql(&url, &["lists", "labels", &labels, "--chain", "eth"]);
    assert!(ok, "{err}");
    assert!(
        out.starts_with(&format!("labels {labels}: 26509 imported")),
        "{out}"
    );
    // Plain CSV labels, one malformed row, a label with a comma.
    let csv = TempFile::new(
        "labels",
        "csv",
        &format!("address,label\n{BINANCE_8},\"Binance 8, cold\"\nnope,x\n"),
    );
    let (ok, out, err) = tokenql(&url, &["lists", "labels", &path_str(&csv.0)]);
    assert!(ok, "{err}");
    assert!(
        out.ends_with(": 1 imported, 0 skipped, 1 malformed\n"),
        "{out}"
    );
    assert!(
        err.contains(&format!("{}:3: 'nope' is not an address", csv.0.display())),
        "the malformed row is named: {err}"
    );
    // A verified list of bare addresses needs --chain.
    let allow = TempFile::new("allow", "csv", &format!("address\n{USDT}\n"));
    let (ok, _, err) = tokenql(&url, &["lists", "verified", &path_str(&allow.0)]);
    assert!(
        !ok && err.contains(&format!(
            "{}:2: this row has no chain_id",
            allow.0.display()
        )),
        "{err}"
    );
    let (ok, out, err) = tokenql(
        &url,
        &["lists", "verified", &path_str(&allow.0), "--chain", "eth"],
    );
    assert!(
        ok && out.contains(": 1 imported, 0 skipped, 0 malformed"),
        "{out}{err}"
    );
    // A spam list without its header is refused as a whole.
    let headless = TempFile::new("headless", "csv", &format!("1,{USDT},12\n"));
    let (ok, _, err) = tokenql(&url, &["lists", "spam", &path_str(&headless.0)]);
    assert!(
        !ok && err.contains(&format!("{}:1: expected a header", headless.0.display())),
        "{err}"
    );
    let (ok, _, err) = tokenql(&url, &["lists", "spam", "/nonexistent.csv"]);
    assert!(!ok && err.contains("cannot read /nonexistent.csv"), "{err}");

    // Admin overrides.
    let (owner, spam_nft) = spam_nft_holder(&Truth::demo());
    let (ok, out, err) = tokenql(
        &url,
        &[
            "contract", "set", "--chain", "eth", &spam_nft, "--spam", "no",
        ],
    );
    assert!(
        ok && out.contains("possible_spam  false (admin)"),
        "{out}{err}"
    );
    let (ok, out, _) = tokenql(&url, &["lists", "spam", &eth]);
    assert!(ok && out.contains("1 kept by an admin override"), "{out}");
    let (ok, out, err) = tokenql(&url, &["contract", "show", "--chain", "eth", USDT]);
    assert!(ok, "{err}");
    for want in [
        "name           Tether USD",
        "decimals       6",
        "possible_spam  false (not set)",
        "verified       true (list)",
    ] {
        assert!(out.contains(want), "{want}: {out}");
    }
    let (ok, _, err) = tokenql(&url, &["contract", "set", USDT]);
    assert!(!ok && err.contains("nothing to set"), "{err}");
    let (ok, _, err) = tokenql(&url, &["contract", "set", USDT, "--spam", "maybe"]);
    assert!(!ok && err.contains("maybe"), "{err}");
    let (ok, _, err) = tokenql(&url, &["contract", "show", "0x12"]);
    assert!(!ok && err.contains("not an address"), "{err}");
    let (ok, _, err) = tokenql(
        &url,
        &[
            "contract",
            "show",
            "0x00000000000000000000000000000000000000a1",
        ],
    );
    assert!(!ok && err.contains("no contract"), "{err}");
    let (ok, out, err) = tokenql(&url, &["lists", "heuristics"]);
    assert!(ok && out.starts_with("spam heuristics: "), "{out}{err}");

    // What the commands wrote, through both APIs.
    let server = ServerOn::start(&url).await;
    let labels = server.api.labels_of_transfers(BINANCE_16).await;
    let b16 = json!("Binance 16");
    assert!(
        !labels.is_empty() && labels.iter().all(|(f, t)| *f == b16 || *t == b16),
        "{labels:?}"
    );
    assert_eq!(
        server.api.spam_flag(&owner, &spam_nft, true).await,
        Some(json!(false)),
        "the admin's choice"
    );
    server.stop().await;
}

/// REST and GraphQL calls with a key.
struct Api {
    base: String,
    key: String,
    client: reqwest::Client,
}

impl Api {
    fn new(base: String, key: String) -> Api {
        tokenql::tls::ensure_crypto_provider();
        Api {
            base,
            key,
            client: reqwest::Client::new(),
        }
    }

    async fn get(&self, path: &str) -> Value {
        let resp = self
            .client
            .get(format!("{}{path}", self.base))
            .header("X-API-Key", &self.key)
            .send()
            .await
            .expect("GET");
        assert_eq!(resp.status(), 200, "GET {path}");
        resp.json().await.expect("json")
    }

    async fn graphql(&self, query: &str) -> Value {
        let resp = self
            .client
            .post(format!("{}/graphql", self.base))
            .header("X-API-Key", &self.key)
            .json(&json!({ "query": query }))
            .send()
            .await
            .expect("POST /graphql");
        assert_eq!(resp.status(), 200, "{query}");
        let body: Value = resp.json().await.expect("json");
        assert!(body.get("errors").is_none(), "{body}");
        body
    }

    /// The labels of the transfers touching `wallet`, the same in REST and GraphQL.
    async fn labels_of_transfers(&self, wallet: &str) -> Vec<(Value, Value)> {
        let rest = self
            .get(&format!(
                "/api/v2/erc20/transfers?wallet_addresses={wallet}&limit=100"
            ))
            .await;
        let gql = self
            .graphql(&format!(
                "{{ erc20Transfers(first: 100, walletAddresses: [{}]) {{ edges {{ node {{ fromWalletLabel toWalletLabel }} }} }} }}",
                gql_str(wallet)
            ))
            .await;
        let rest: Vec<(Value, Value)> = rest["result"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|r| (r["from_wallet_label"].clone(), r["to_wallet_label"].clone()))
                    .collect()
            })
            .unwrap_or_default();
        let gql: Vec<(Value, Value)> = gql["data"]["erc20Transfers"]["edges"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|e| {
                        (
                            e["node"]["fromWalletLabel"].clone(),
                            e["node"]["toWalletLabel"].clone(),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        assert_eq!(rest, gql, "labels of the transfers of {wallet}");
        rest
    }

    /// The spam flag of `owner`'s NFTs of `contract` (None: left out), the same in REST and
    /// GraphQL.
    async fn spam_flag(&self, owner: &str, contract: &str, exclude_spam: bool) -> Option<Value> {
        let rest = self
            .get(&format!(
                "/api/v2/{owner}/nft?limit=100&exclude_spam={exclude_spam}"
            ))
            .await;
        let gql = self
            .graphql(&format!(
                "{{ nftsByWallet(address: {}, first: 100, excludeSpam: {exclude_spam}) {{ edges {{ node {{ tokenAddress possibleSpam }} }} }} }}",
                gql_str(owner)
            ))
            .await;
        let rest_flag = rest["result"]
            .as_array()
            .and_then(|a| a.iter().find(|r| r["token_address"] == json!(contract)))
            .map(|r| r["possible_spam"].clone());
        let gql_flag = gql["data"]["nftsByWallet"]["edges"]
            .as_array()
            .and_then(|a| {
                a.iter()
                    .find(|e| e["node"]["tokenAddress"] == json!(contract))
            })
            .map(|e| e["node"]["possibleSpam"].clone());
        assert_eq!(rest_flag, gql_flag, "{rest}\n{gql}");
        rest_flag
    }
}

/// A server in this process on an existing database.
struct ServerOn {
    api: Api,
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl ServerOn {
    async fn start(url: &str) -> ServerOn {
        let db = tokenql::store::database::connect(url, 4)
            .await
            .expect("connect");
        let (_, key) = tokenql::keys::create(&db, "lists").await.expect("key");
        let state = tokenql::AppState::new(db, Default::default())
            .await
            .expect("state");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let base = format!("http://{}", listener.local_addr().expect("address"));
        let (stop, rx) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(tokenql::run(listener, state, async move {
            let _ = rx.await;
        }));
        ServerOn {
            api: Api::new(base, key),
            stop,
            task,
        }
    }

    async fn stop(self) {
        let _ = self.stop.send(());
        let _ = self.task.await;
    }
}

/// `serve --demo` shows the bundled spam flags and labels out of the box.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_demo_prints_a_working_key_and_shows_flags_and_labels() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    use std::time::Instant;

    let db_file = TempFile::new("demo", "db", "");
    let mut child = Command::new(BIN)
        .args(["serve", "--demo", "--bind", "127.0.0.1:0", "--demo-db"])
        .arg(&db_file.0)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let (mut base, mut key) = (None, None);
    let deadline = Instant::now() + Duration::from_secs(120);
    while (base.is_none() || key.is_none()) && Instant::now() < deadline {
        if let Ok(line) = rx.recv_timeout(Duration::from_millis(200)) {
            if let Some(rest) = line.strip_prefix("tokenql demo is up on ") {
                base = rest.split_whitespace().next().map(str::to_string);
            }
            if let Some(k) = line.strip_prefix("API key (send as X-API-Key): ") {
                key = Some(k.trim().to_string());
            }
        }
    }
    let api = Api::new(
        base.expect("the demo printed its address"),
        key.expect("the demo printed a key"),
    );
    // The printed key works: the example wallet's first page.
    let page = api
        .get(&format!(
            "/api/v2/{}/nft?chain=eth&limit=5",
            tokenql::demo::EXAMPLE_NFT_WALLET
        ))
        .await;
    let labels = api.labels_of_transfers(BINANCE_16).await;
    let (owner, spam_nft) = spam_nft_holder(&Truth::demo());
    let flag = api.spam_flag(&owner, &spam_nft, false).await;
    let excluded = api.spam_flag(&owner, &spam_nft, true).await;
    let _ = child.kill();
    let _ = child.wait();
    let b16 = json!("Binance 16");
    assert!(
        !labels.is_empty() && labels.iter().all(|(f, t)| *f == b16 || *t == b16),
        "{labels:?}"
    );
    assert_eq!(flag, Some(json!(true)), "{owner}'s {spam_nft} is listed");
    assert_eq!(excluded, None, "exclude_spam leaves {spam_nft} out");
    assert_eq!(page["result"].as_array().map(Vec::len), Some(5), "{page}");
    assert!(page["cursor"].is_string(), "{page}");
}
