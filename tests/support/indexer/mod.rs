//! Shared pieces of the indexer suites: running the indexer in-process against anvil, waiting
//! for it, and the chain's own truth (logs decoded here, `ownerOf`/`balanceOf` by `eth_call`).
#![allow(dead_code)]

pub mod consistency;
pub mod process;

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use sea_orm::{DatabaseConnection, EntityTrait};
use serde_json::{json, Value};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use super::anvil::Anvil;
use super::common::TestApp;

/// A running in-process indexer.
pub struct Indexer {
    stop: Option<oneshot::Sender<()>>,
    pub task: JoinHandle<Result<(), tokenql::indexer::IndexerError>>,
}

impl Indexer {
    pub fn start(
        db: &DatabaseConnection,
        rpc_url: &str,
        configure: impl FnOnce(&mut tokenql::indexer::ChainConfig),
    ) -> Indexer {
        let mut cfg = tokenql::indexer::ChainConfig::new(tokenql::types::Chain::ETH, rpc_url);
        cfg.start_block = Some(0);
        cfg.poll_interval = Duration::from_millis(50);
        cfg.retry.base = Duration::from_millis(20);
        cfg.retry.max_delay = Duration::from_millis(500);
        configure(&mut cfg);
        let (tx, rx) = oneshot::channel::<()>();
        let task = tokio::spawn(tokenql::indexer::run(
            db.clone(),
            tokenql::indexer::IndexerConfig {
                chains: vec![cfg],
                ..Default::default()
            },
            async move {
                let _ = rx.await;
            },
        ));
        Indexer {
            stop: Some(tx),
            task,
        }
    }

    pub async fn stop(mut self) -> Result<(), tokenql::indexer::IndexerError> {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        tokio::time::timeout(Duration::from_secs(30), self.task)
            .await
            .expect("indexer stops within 30 s")
            .expect("indexer task")
    }
}

/// Waits until the stored block at the chain head has the chain's hash (caught up, post-reorg
/// included).
pub async fn wait_synced(db: &DatabaseConnection, anvil: &Anvil, limit: Duration) {
    let deadline = Instant::now() + limit;
    loop {
        let head = anvil.head().await;
        let block = anvil
            .rpc("eth_getBlockByNumber", json!([format!("{head:#x}"), false]))
            .await;
        let hash = block["hash"].as_str().unwrap_or_default().to_string();
        let state = tokenql::entity::chain_state::Entity::find_by_id(1i64)
            .one(db)
            .await
            .expect("chain_state");
        let stored = tokenql::entity::block::Entity::find_by_id((1i64, head as i64))
            .one(db)
            .await
            .expect("block");
        if state.and_then(|s| s.indexed_block) == Some(head as i64)
            && stored.map(|b| b.hash.to_string()) == Some(hash)
        {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "indexer did not catch up with head {head} within {limit:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn word_addr(t: &str) -> String {
    format!("0x{}", &t[t.len() - 40..]).to_lowercase()
}

fn hex_dec(h: &str) -> String {
    alloy::primitives::U256::from_str_radix(h.trim_start_matches("0x"), 16)
        .expect("hex")
        .to_string()
}

/// ERC20 transfers as the chain has them now: (tx hash, log index) -> (contract, from, to, value).
pub async fn chain_erc20(
    anvil: &Anvil,
    contracts: &[String],
) -> BTreeMap<(String, u64), (String, String, String, String)> {
    let logs = anvil
        .rpc(
            "eth_getLogs",
            json!([{"fromBlock": "0x0", "toBlock": "latest", "address": contracts,
                    "topics": [["0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"]]}]),
        )
        .await;
    let mut out = BTreeMap::new();
    for l in logs.as_array().expect("logs") {
        let topics = l["topics"].as_array().expect("topics");
        if topics.len() != 3 {
            continue;
        }
        let li = u64::from_str_radix(
            l["logIndex"].as_str().expect("li").trim_start_matches("0x"),
            16,
        )
        .expect("li");
        out.insert(
            (l["transactionHash"].as_str().expect("tx").to_string(), li),
            (
                l["address"].as_str().expect("a").to_lowercase(),
                word_addr(topics[1].as_str().expect("t")),
                word_addr(topics[2].as_str().expect("t")),
                hex_dec(l["data"].as_str().expect("data")),
            ),
        );
    }
    out
}

/// The API's transfers touching `wallet`, keyed like [`chain_erc20`].
pub async fn api_erc20(
    app: &TestApp,
    wallet: &str,
) -> BTreeMap<(String, u64), (String, String, String, String)> {
    let recs = app
        .rest_transfers(&format!("chain=eth&wallet_addresses%5B%5D={wallet}"), 100)
        .await;
    let mut out = BTreeMap::new();
    for r in recs {
        let s = |k: &str| r[k].as_str().unwrap_or_default().to_string();
        let key = (
            s("transaction_hash"),
            s("log_index").parse().expect("log index"),
        );
        let prev = out.insert(
            key.clone(),
            (
                s("contract_address"),
                s("from_wallet"),
                s("to_wallet"),
                s("value"),
            ),
        );
        assert!(
            prev.is_none(),
            "transfer {key:?} returned twice for {wallet}"
        );
    }
    out
}

/// The API's NFTs of `owner`: (contract, token id) -> amount.
pub async fn api_nfts(app: &TestApp, owner: &str) -> BTreeMap<(String, String), String> {
    let recs = app.rest_nfts(owner, 100).await;
    recs.iter()
        .map(|r| {
            let s = |k: &str| r[k].as_str().unwrap_or_default().to_string();
            ((s("token_address"), s("token_id")), s("amount"))
        })
        .collect()
}

/// ERC721 owners as the chain has them now (`ownerOf`; burned ids are absent).
pub async fn chain_721_owners(
    anvil: &Anvil,
    nft: &str,
    ids: &BTreeSet<u64>,
) -> BTreeMap<u64, String> {
    use alloy::sol_types::SolCall;
    let mut out = BTreeMap::new();
    for id in ids {
        let data = super::anvil::ownerOfCall {
            id: super::anvil::u(*id),
        }
        .abi_encode();
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "eth_call", "params": [{"to": nft, "data": super::anvil::hex(&data)}, "latest"]});
        let r: Value = {
            tokenql::tls::ensure_crypto_provider();
            reqwest::Client::new()
        }
        .post(&anvil.url)
        .json(&body)
        .send()
        .await
        .expect("rpc")
        .json()
        .await
        .expect("json");
        if let Some(res) = r["result"].as_str() {
            out.insert(*id, word_addr(res));
        }
    }
    out
}

/// ERC1155 balances as the chain has them now.
pub async fn chain_1155_balances(
    anvil: &Anvil,
    multi: &str,
    owners: &[String],
    ids: &BTreeSet<u64>,
) -> BTreeMap<(String, u64), String> {
    use alloy::sol_types::SolCall;
    let mut out = BTreeMap::new();
    for o in owners {
        for id in ids {
            let data = super::anvil::balanceOfCall {
                owner: super::anvil::addr(o),
                id: super::anvil::u(*id),
            }
            .abi_encode();
            let ret = anvil.call(multi, data).await;
            let v = alloy::primitives::U256::from_be_slice(&ret);
            if !v.is_zero() {
                out.insert((o.clone(), *id), v.to_string());
            }
        }
    }
    out
}
