//! Answers asked while the chain moves, each checked against the chain as of the block it says
//! it was read at (`X-Indexed-Block`): a `SYNCED` answer must hold exactly the records of the
//! chain up to that block (API.md), and that block must be at or after the one the indexer had
//! stored when the request was sent.
//!
//! Used by the single-database suite (`tests/chain/snapshot.rs`, every backend, the follower
//! writing while clients ask) and by the streaming-replica suite (`tests/chain/replication.rs`).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use sea_orm::{DatabaseConnection, EntityTrait};
use serde_json::{json, Value};

use super::super::anvil::{addr, calldata, transferCall, u, Anvil, Rng};

/// A transfer's identity: (transaction hash, log index).
pub type Key = (String, u64);

/// An ERC20 transfer as the chain has it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Move {
    pub block: u64,
    pub from: String,
    pub to: String,
    pub value: u128,
}

/// Every `Transfer` of `token` on the chain now, with its block.
pub async fn chain_moves(anvil: &Anvil, token: &str) -> BTreeMap<Key, Move> {
    let topic = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef";
    let logs = anvil
        .rpc(
            "eth_getLogs",
            json!([{"fromBlock": "0x0", "toBlock": "latest", "address": [token], "topics": [[topic]]}]),
        )
        .await;
    let hex = |v: &Value| {
        let s = v.as_str().expect("hex quantity").trim_start_matches("0x");
        u128::from_str_radix(s, 16).expect("hex quantity")
    };
    let word = |v: &Value| {
        let s = v.as_str().expect("topic");
        format!("0x{}", &s[s.len() - 40..]).to_lowercase()
    };
    let mut out = BTreeMap::new();
    for l in logs.as_array().expect("logs") {
        let topics = l["topics"].as_array().expect("topics");
        let key = (
            l["transactionHash"].as_str().expect("tx").to_lowercase(),
            hex(&l["logIndex"]) as u64,
        );
        let m = Move {
            block: hex(&l["blockNumber"]) as u64,
            from: word(&topics[1]),
            to: word(&topics[2]),
            value: hex(&l["data"]),
        };
        out.insert(key, m);
    }
    out
}

/// What one answer said.
#[derive(Debug, Clone)]
pub enum Said {
    /// A wallet's transfers: key -> (block, from, to, value).
    Transfers(BTreeMap<Key, Move>),
    /// A wallet's balance of the token (`None`: no record for it).
    Balance(Option<u128>),
}

/// One answer seen under load.
#[derive(Debug, Clone)]
pub struct Seen {
    pub wallet: String,
    /// The block the indexer had stored when the request was sent.
    pub stored_before: u64,
    pub status: String,
    /// `X-Indexed-Block`.
    pub block: Option<u64>,
    pub said: Said,
}

/// The last block the indexer has stored, read from `db`.
pub async fn stored(db: &DatabaseConnection) -> u64 {
    tokenql::entity::chain_state::Entity::find_by_id(1i64)
        .one(db)
        .await
        .expect("chain_state")
        .and_then(|s| s.indexed_block)
        .map_or(0, |b| b as u64)
}

/// Asks one of `bases` for a wallet's transfers (even `n`) or balances (odd `n`).
async fn ask(
    client: &reqwest::Client,
    base: &str,
    key: &str,
    wallet: &str,
    token: &str,
    n: usize,
) -> (String, Option<u64>, Said) {
    let path = if n % 2 == 0 {
        format!("/api/v2.2/{wallet}/erc20/transfers?chain=eth&limit=100")
    } else {
        format!("/api/v2.2/{wallet}/erc20?chain=eth")
    };
    let resp = client
        .get(format!("{base}{path}"))
        .header("X-API-Key", key)
        .send()
        .await
        .expect("request");
    assert_eq!(resp.status().as_u16(), 200, "{path}");
    let header = |name: &str| {
        resp.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    let block = header("x-indexed-block").map(|b| b.parse().expect("x-indexed-block"));
    let sync = header("x-sync-status");
    let body: Value = resp.json().await.expect("json");
    if n % 2 == 0 {
        assert_eq!(
            body["cursor"],
            Value::Null,
            "one page holds {wallet}'s transfers"
        );
        let records = body["result"].as_array().expect("result");
        let said = records.iter().map(transfer).collect();
        let status = body["status"].as_str().expect("status").to_string();
        (status, block, Said::Transfers(said))
    } else {
        let balance = body
            .as_array()
            .expect("balances")
            .iter()
            .find(|r| r["token_address"] == token)
            .map(|r| {
                r["balance"]
                    .as_str()
                    .expect("balance")
                    .parse()
                    .expect("u128")
            });
        (sync.expect("x-sync-status"), block, Said::Balance(balance))
    }
}

/// A REST transfer record as a [`Move`].
fn transfer(r: &Value) -> (Key, Move) {
    let s = |k: &str| r[k].as_str().unwrap_or_default().to_lowercase();
    let key = (
        s("transaction_hash"),
        r["log_index"].as_u64().expect("log_index"),
    );
    let m = Move {
        block: s("block_number").parse().expect("block_number"),
        from: s("from_address"),
        to: s("to_address"),
        value: s("value").parse().expect("value"),
    };
    (key, m)
}

/// `clients` concurrent clients asking `wallets`' transfers and balances from `bases` (in
/// turn) until `until`; each request notes the block `db` had stored before it was sent.
pub async fn ask_under_load(
    bases: &[String],
    key: &str,
    wallets: &[String],
    token: &str,
    db: &DatabaseConnection,
    clients: usize,
    until: Instant,
) -> Vec<Seen> {
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .expect("client");
    let one = |c: usize| {
        let client = client.clone();
        async move {
            let mut rng = Rng(0x9e37_79b9 + c as u64);
            let mut seen = Vec::new();
            let mut n = c;
            while Instant::now() < until {
                let wallet = &wallets[rng.index(wallets.len())];
                let stored_before = stored(db).await;
                let base = &bases[n % bases.len()];
                let (status, block, said) = ask(&client, base, key, wallet, token, n).await;
                seen.push(Seen {
                    wallet: wallet.clone(),
                    stored_before,
                    status,
                    block,
                    said,
                });
                n += 1;
            }
            seen
        }
    };
    let all = futures_util::future::join_all((0..clients).map(one)).await;
    all.into_iter().flatten().collect()
}

/// Sends a transfer between two of `wallets` every `every` until `until` (anvil mines each in
/// a block of its own); returns how many were sent.
pub async fn traffic(
    chain: &Anvil,
    token: &str,
    wallets: &[String],
    every: Duration,
    until: Instant,
) -> usize {
    let mut rng = Rng(0x7a11_c0de);
    let mut sent = 0;
    while Instant::now() < until {
        let from = rng.index(wallets.len());
        let to = (from + 1 + rng.index(wallets.len() - 1)) % wallets.len();
        let data = calldata(transferCall {
            to: addr(&wallets[to]),
            amount: u(1 + rng.below(1_000)),
        });
        chain.send(&wallets[from], token, data).await;
        sent += 1;
        tokio::time::sleep(every).await;
    }
    sent
}

/// `wallet`'s transfers up to `block`.
fn transfers_to(truth: &BTreeMap<Key, Move>, wallet: &str, block: u64) -> BTreeMap<Key, Move> {
    truth
        .iter()
        .filter(|(_, m)| m.block <= block && (m.from == wallet || m.to == wallet))
        .map(|(k, m)| (k.clone(), m.clone()))
        .collect()
}

/// `wallet`'s balance up to `block` (`None` when zero).
fn balance_to(truth: &BTreeMap<Key, Move>, wallet: &str, block: u64) -> Option<u128> {
    let mut b: i128 = 0;
    for m in truth.values().filter(|m| m.block <= block) {
        if m.to == wallet {
            b += m.value as i128;
        }
        if m.from == wallet {
            b -= m.value as i128;
        }
    }
    (b != 0).then_some(b as u128)
}

/// The `SYNCED` answers among `seen` that break the promise, described; and how many were
/// `SYNCED`.
pub fn broken(seen: &[Seen], truth: &BTreeMap<Key, Move>) -> (usize, Vec<String>) {
    let mut synced = 0;
    let mut bad = Vec::new();
    for s in seen.iter().filter(|s| s.status == "SYNCED") {
        synced += 1;
        let Some(block) = s.block else {
            bad.push(format!("{}: SYNCED without X-Indexed-Block", s.wallet));
            continue;
        };
        if block < s.stored_before {
            bad.push(format!(
                "{}: SYNCED as of block {block}, but {} was stored before the request",
                s.wallet, s.stored_before
            ));
            continue;
        }
        let wrong = match &s.said {
            Said::Transfers(got) => {
                let want = transfers_to(truth, &s.wallet, block);
                (got != &want).then(|| {
                    let missing: Vec<_> = want.keys().filter(|k| !got.contains_key(*k)).collect();
                    let extra: Vec<_> = got.keys().filter(|k| !want.contains_key(*k)).collect();
                    format!("transfers: missing {missing:?}, extra {extra:?}")
                })
            }
            Said::Balance(got) => {
                let want = balance_to(truth, &s.wallet, block);
                (got != &want).then(|| format!("balance {got:?}, the chain's {want:?}"))
            }
        };
        if let Some(w) = wrong {
            bad.push(format!("{} SYNCED as of block {block}: {w}", s.wallet));
        }
    }
    (synced, bad)
}
