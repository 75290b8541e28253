//! A real local chain for black-box tests: anvil (from npm, see `tools/chain/`) on a free port,
//! with the compiled OpenZeppelin test contracts of `tests/fixtures/contracts/`.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use alloy::primitives::{Address as A, U256};
use alloy::sol;
use alloy::sol_types::{SolCall, SolValue};
use serde_json::{json, Value};

sol! {
    function mint(address to, uint256 amount);
    function burn(address from, uint256 amount);
    function transfer(address to, uint256 amount) returns (bool);
    function spray(address[] to, uint256 amount);
    function emitTransfers(uint256 start, uint256 n);
    function transferFrom(address from, address to, uint256 id);
    function nftBurn(uint256 id);
    function mintMany(address to, uint256 start, uint256 n);
    function ownerOf(uint256 id) returns (address);
    function balanceOf(address owner, uint256 id) returns (uint256);
    function mintBatch(address to, uint256[] ids, uint256[] amounts);
    function safeTransferFrom(address from, address to, uint256 id, uint256 amount, bytes data);
    function safeBatchTransferFrom(address from, address to, uint256[] ids, uint256[] amounts, bytes data);
}

/// `burn(uint256)` of TestNFT (the sol! name differs to avoid a clash).
pub fn nft_burn_calldata(id: u64) -> Vec<u8> {
    let mut v = alloy::primitives::keccak256("burn(uint256)")[..4].to_vec();
    v.extend(U256::from(id).abi_encode());
    v
}

/// `burn(address,uint256,uint256)` of TestMulti (the sol! name `burn` is TestToken's).
pub fn multi_burn_calldata(from: &str, id: u64, amount: u64) -> Vec<u8> {
    let mut v = alloy::primitives::keccak256("burn(address,uint256,uint256)")[..4].to_vec();
    v.extend((addr(from), U256::from(id), U256::from(amount)).abi_encode_params());
    v
}

/// A running anvil; killed on drop.
pub struct Anvil {
    child: Child,
    pub url: String,
    pub accounts: Vec<String>,
    client: reqwest::Client,
}

fn anvil_path() -> PathBuf {
    if let Ok(p) = std::env::var("TOKENQL_ANVIL") {
        return PathBuf::from(p);
    }
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tools/chain/node_modules/@foundry-rs/anvil-linux-amd64/bin/anvil")
}

pub fn artifact(name: &str) -> (Value, String) {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join(format!("tests/fixtures/contracts/{name}.json"));
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&p).expect("artifact"))
        .expect("artifact json");
    let code = v["bytecode"].as_str().expect("bytecode").to_string();
    (v["abi"].clone(), code)
}

pub fn hex(b: &[u8]) -> String {
    format!(
        "0x{}",
        b.iter().map(|x| format!("{x:02x}")).collect::<String>()
    )
}

pub fn addr(s: &str) -> A {
    s.parse().expect("address")
}

impl Anvil {
    /// Starts anvil as chain 1 (`eth`) with `accounts` unlocked dev accounts.
    pub async fn start(accounts: usize, extra: &[&str]) -> Anvil {
        let path = anvil_path();
        assert!(
            path.exists(),
            "anvil not found at {}: run `npm ci --prefix tools/chain` (scripts/test does) or set TOKENQL_ANVIL",
            path.display()
        );
        let mut child = Command::new(&path)
            .args([
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--chain-id",
                "1",
                "--accounts",
                &accounts.to_string(),
            ])
            .args(["--gas-limit", "30000000", "--silent"])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start anvil");
        // --silent hides the banner; find the port by probing the process's listening socket.
        let stdout = child.stdout.take().expect("stdout");
        std::thread::spawn(move || for _ in BufReader::new(stdout).lines() {});
        let pid = child.id();
        let mut port = None;
        for _ in 0..200 {
            if let Some(p) = listening_port(pid) {
                port = Some(p);
                break;
            }
            std::thread::sleep(Duration::from_millis(25));
        }
        let url = format!("http://127.0.0.1:{}", port.expect("anvil listens"));
        let mut a = Anvil {
            child,
            url,
            accounts: vec![],
            client: {
                tokenql::tls::ensure_crypto_provider();
                reqwest::Client::new()
            },
        };
        let accts = a.rpc("eth_accounts", json!([])).await;
        a.accounts = accts
            .as_array()
            .expect("accounts")
            .iter()
            .map(|x| x.as_str().expect("str").to_lowercase())
            .collect();
        a
    }

    pub async fn rpc(&self, method: &str, params: Value) -> Value {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let r: Value = self
            .client
            .post(&self.url)
            .json(&body)
            .send()
            .await
            .expect("rpc")
            .json()
            .await
            .expect("rpc json");
        if let Some(e) = r.get("error") {
            panic!("{method}: {e}");
        }
        r["result"].clone()
    }

    /// Sends many calls as one JSON-RPC batch; returns their transaction hashes.
    pub async fn send_batch(&self, txs: &[(String, String, Vec<u8>)]) -> Vec<String> {
        let mut out = Vec::new();
        // Explicit nonces: a batch may hold many transactions of one sender.
        let mut nonces: std::collections::HashMap<String, u64> = std::collections::HashMap::new();
        for (from, _, _) in txs {
            if !nonces.contains_key(from) {
                let n = self
                    .rpc("eth_getTransactionCount", json!([from, "pending"]))
                    .await;
                let n = u64::from_str_radix(n.as_str().expect("hex").trim_start_matches("0x"), 16)
                    .expect("nonce");
                nonces.insert(from.clone(), n);
            }
        }
        for chunk in txs.chunks(500) {
            let body: Vec<Value> = chunk
                .iter()
                .enumerate()
                .map(|(i, (from, to, data))| {
                    let nonce = nonces.get_mut(from).expect("nonce");
                    let n = *nonce;
                    *nonce += 1;
                    json!({"jsonrpc": "2.0", "id": i, "method": "eth_sendTransaction",
                           "params": [{"from": from, "to": to, "data": hex(data), "gas": "0x7a120", "nonce": format!("{n:#x}")}]})
                })
                .collect();
            for v in self.batch("eth_sendTransaction", &body).await {
                out.push(v.as_str().expect("hash").to_string());
            }
        }
        out
    }

    /// Posts `body` (requests of `method`) as one JSON-RPC batch; returns the results in the
    /// order of the requests' ids. Panics on an error.
    pub async fn batch(&self, method: &str, body: &[Value]) -> Vec<Value> {
        let mut r: Vec<Value> = self
            .client
            .post(&self.url)
            .json(body)
            .send()
            .await
            .expect("batch")
            .json()
            .await
            .expect("batch json");
        r.sort_by_key(|v| v["id"].as_u64());
        r.into_iter()
            .map(|mut v| {
                if let Some(e) = v.get("error") {
                    panic!("{method}: {e}");
                }
                v["result"].take()
            })
            .collect()
    }

    pub async fn send(&self, from: &str, to: &str, data: Vec<u8>) -> String {
        self.send_batch(&[(from.to_string(), to.to_string(), data)])
            .await
            .remove(0)
    }

    /// Deploys a fixture contract with ABI-encoded constructor arguments.
    pub async fn deploy(&self, name: &str, ctor_args: Vec<u8>) -> String {
        let (_, code) = artifact(name);
        let data = format!("{code}{}", hex(&ctor_args).trim_start_matches("0x"));
        let tx = self
            .rpc(
                "eth_sendTransaction",
                json!([{"from": self.accounts[0], "data": data, "gas": "0x1c9c380"}]),
            )
            .await;
        let receipt = self.mined_receipt(&tx).await;
        assert_eq!(receipt["status"], "0x1", "deploy {name}: {receipt}");
        receipt["contractAddress"]
            .as_str()
            .expect("contract address")
            .to_lowercase()
    }

    /// The receipt of `tx` once a block holds it: mines a block, and on a busy machine, where
    /// the node may not have the transaction in its pool yet or its receipt indexed, waits and
    /// mines again (up to ~10 s).
    async fn mined_receipt(&self, tx: &Value) -> Value {
        for attempt in 0..100 {
            if attempt % 10 == 0 {
                self.mine(1).await;
            }
            let receipt = self.rpc("eth_getTransactionReceipt", json!([tx])).await;
            if !receipt.is_null() {
                return receipt;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Value::Null
    }

    pub async fn mine(&self, n: u64) {
        self.rpc("anvil_mine", json!([format!("{n:#x}")])).await;
    }

    pub async fn set_automine(&self, on: bool) {
        self.rpc("evm_setAutomine", json!([on])).await;
    }

    pub async fn head(&self) -> u64 {
        let h = self.rpc("eth_blockNumber", json!([])).await;
        u64::from_str_radix(h.as_str().expect("hex").trim_start_matches("0x"), 16).expect("number")
    }

    /// Mines blocks until every transaction is included (automine off).
    pub async fn mine_all(&self, hashes: &[String]) {
        for _ in 0..1000 {
            self.mine(1).await;
            match hashes.last() {
                Some(h)
                    if self
                        .rpc("eth_getTransactionReceipt", json!([h]))
                        .await
                        .is_null() =>
                {
                    continue
                }
                _ => return,
            }
        }
        panic!("transactions were not mined");
    }

    /// Waits until every transaction has a receipt (automine on: the node mines as each one
    /// arrives, and may report its receipt a moment after answering), then checks they
    /// succeeded. One left in the pool all the same (seen once under the full suite's load: no
    /// receipt within 30 s, the cause not found) gets a block mined for it, once a second
    /// while it waits; after 60 s it panics.
    pub async fn wait_mined(&self, hashes: &[String]) {
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        for h in hashes {
            let mut nudge = std::time::Instant::now() + Duration::from_secs(1);
            while self
                .rpc("eth_getTransactionReceipt", json!([h]))
                .await
                .is_null()
            {
                assert!(std::time::Instant::now() < deadline, "{h} was never mined");
                if std::time::Instant::now() >= nudge {
                    self.mine(1).await;
                    nudge = std::time::Instant::now() + Duration::from_secs(1);
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
        self.assert_success(hashes).await;
    }

    /// All receipts succeeded?
    pub async fn assert_success(&self, hashes: &[String]) {
        for h in hashes {
            let r = self.rpc("eth_getTransactionReceipt", json!([h])).await;
            assert_eq!(r["status"], "0x1", "tx {h} failed: {r}");
        }
    }

    pub async fn call(&self, to: &str, data: Vec<u8>) -> Vec<u8> {
        let r = self
            .rpc(
                "eth_call",
                json!([{"to": to, "data": hex(&data)}, "latest"]),
            )
            .await;
        let s = r
            .as_str()
            .expect("hex")
            .trim_start_matches("0x")
            .to_string();
        (0..s.len() / 2)
            .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).expect("hex"))
            .collect()
    }

    /// `anvil_reorg`: replaces the last `depth` blocks; `txs` are (raw tx json, block offset).
    pub async fn reorg(&self, depth: u64, txs: Value) {
        self.rpc("anvil_reorg", json!([depth, txs])).await;
    }
}

impl Drop for Anvil {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The TCP port a process listens on, from /proc.
fn listening_port(pid: u32) -> Option<u16> {
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?;
    let inodes: Vec<String> = fds
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .filter_map(|l| {
            l.to_str()?
                .strip_prefix("socket:[")?
                .strip_suffix(']')
                .map(str::to_string)
        })
        .collect();
    let tcp = std::fs::read_to_string("/proc/net/tcp").ok()?;
    for line in tcp.lines().skip(1) {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() > 9 && f[3] == "0A" && inodes.iter().any(|i| i == f[9]) {
            let port = f[1].rsplit(':').next()?;
            return u16::from_str_radix(port, 16).ok();
        }
    }
    None
}

/// Constructor arguments.
pub fn token_ctor(name: &str, symbol: &str, decimals: u8) -> Vec<u8> {
    (name.to_string(), symbol.to_string(), U256::from(decimals)).abi_encode_params()
}

pub fn nft_ctor(name: &str, symbol: &str, base: &str) -> Vec<u8> {
    (name.to_string(), symbol.to_string(), base.to_string()).abi_encode_params()
}

pub fn multi_ctor(uri: &str) -> Vec<u8> {
    (uri.to_string(),).abi_encode_params()
}

pub fn u(n: u64) -> U256 {
    U256::from(n)
}

pub fn calldata<C: SolCall>(c: C) -> Vec<u8> {
    c.abi_encode()
}

impl Anvil {
    /// Sets the gas limit of the next blocks (`evm_setBlockGasLimit`): a small one spreads the
    /// transaction pool over many blocks.
    pub async fn set_block_gas_limit(&self, gas: u64) {
        self.rpc("evm_setBlockGasLimit", json!([format!("{gas:#x}")]))
            .await;
    }

    /// Transactions waiting in the pool (`txpool_status`).
    pub async fn pending(&self) -> u64 {
        let s = self.rpc("txpool_status", json!([])).await;
        let p = &s["pending"];
        p.as_u64().unwrap_or_else(|| {
            u64::from_str_radix(p.as_str().expect("pending").trim_start_matches("0x"), 16)
                .expect("pending")
        })
    }

    /// Mines (automine off) until the pool is empty, `step` blocks at a time; returns the head.
    pub async fn mine_pool(&self, step: u64) -> u64 {
        for _ in 0..10_000 {
            if self.pending().await == 0 {
                return self.head().await;
            }
            self.mine(step).await;
        }
        panic!("the transaction pool never emptied");
    }
}

/// Logs per `emitTransfers` transaction (~21M gas: one transaction per 30M-gas block).
pub const LOGS_PER_EMIT: u64 = 10_000;

impl Anvil {
    /// Makes `n` real ERC20 `Transfer` logs on `token` (a `TestToken`) with `emitTransfers`,
    /// [`LOGS_PER_EMIT`] per transaction, numbered from `first`: the transactions go as one
    /// JSON-RPC batch with explicit nonces and a gas limit of `eth_estimateGas` + 10% (under the
    /// 30M block limit, so one transaction per block), then blocks are mined until all are in.
    /// Returns the transaction hashes (all succeeded).
    pub async fn emit_transfer_logs(&self, token: &str, first: u64, n: u64) -> Vec<String> {
        const BLOCK_GAS: u64 = 30_000_000;
        let from = self.accounts[0].clone();
        let probe = calldata(emitTransfersCall {
            start: u(first),
            n: u(LOGS_PER_EMIT.min(n.max(1))),
        });
        let est = self
            .rpc(
                "eth_estimateGas",
                json!([{"from": from, "to": token, "data": hex(&probe)}]),
            )
            .await;
        let est = u64::from_str_radix(est.as_str().expect("hex").trim_start_matches("0x"), 16)
            .expect("gas estimate");
        let gas = (est + est / 10).min(BLOCK_GAS);
        let n0 = self
            .rpc("eth_getTransactionCount", json!([from, "pending"]))
            .await;
        let mut nonce = u64::from_str_radix(n0.as_str().expect("hex").trim_start_matches("0x"), 16)
            .expect("nonce");
        let mut body = Vec::new();
        let mut start = 0;
        while start < n {
            let k = LOGS_PER_EMIT.min(n - start);
            let data = calldata(emitTransfersCall {
                start: u(first + start),
                n: u(k),
            });
            body.push(
                json!({"jsonrpc": "2.0", "id": body.len(), "method": "eth_sendTransaction",
                "params": [{"from": from, "to": token, "data": hex(&data),
                            "gas": format!("{gas:#x}"), "nonce": format!("{nonce:#x}")}]}),
            );
            nonce += 1;
            start += k;
        }
        let mut hashes = Vec::new();
        for chunk in body.chunks(500) {
            for v in self.batch("eth_sendTransaction", chunk).await {
                hashes.push(v.as_str().expect("tx hash").to_string());
            }
        }
        // One transaction fits a block: mine as many blocks as transactions, then stragglers.
        self.mine(hashes.len() as u64).await;
        self.mine_all(&hashes).await;
        self.assert_success(&hashes).await;
        hashes
    }
}

/// A tiny deterministic PRNG (xorshift64*), so that a failing schedule can be replayed.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    pub fn index(&mut self, len: usize) -> usize {
        self.below(len as u64) as usize
    }
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            items.swap(i, self.index(i + 1));
        }
    }
}
