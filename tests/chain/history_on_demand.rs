//! History on demand (issue #11), black-box on every backend against a real anvil chain: the
//! indexer starts with the default start block (the head at first start) on a chain with a
//! long history, and every answer that says `SYNCED` must hold the whole history.
//!
//! A scene of thousands of ERC20 transfers (plain, sprayed, burned) and NFT moves (ERC721 mints,
//! transfers and burns; ERC1155 batch mints, `TransferSingle` and `TransferBatch`) among 50+
//! wallets is built before the indexer starts; live traffic follows. The truth is decoded here
//! from every log of the chain from block 0 (and checked against `ownerOf` / `balanceOf`). For
//! each asked wallet (busy ones, one that only received, one that only sent, one never seen)
//! and each asked ERC20 contract, over REST and GraphQL:
//! - an answer saying `SYNCED` equals the truth;
//! - an answer saying `SYNCING` shows only records of the truth, with the truth's amounts (no
//!   phantom holding, no negative balance, no invented transfer);
//! - the first request answers `SYNCING`, and every answer reaches `SYNCED` within a bound.
//!
//! Then, one scenario each: fifty concurrent first requests (over two API servers) fetch one
//! wallet history in one pass; a `tokenql index` SIGKILLed during a wallet's history fetch
//! resumes from its stored progress and ends exact (and `tokenql sync` warms scopes ahead of
//! traffic); a reorg in the live range while histories are fetched; a faulty RPC endpoint
//! (timeouts, 429, 503, dropped connections, malformed bodies, provider range limits) with
//! bounded retries; a history that fails for good is marked failed with its reason, answers
//! stay `SYNCING`, and a request after the back-off retries it to completion.
//!
//! The JSON-RPC proxy (`proxy/`) counts the indexer's requests, records the `eth_getLogs` calls
//! that name a wallet in a topic, and holds or fails chosen ones, so that in-between states are
//! observed, not raced.

use crate::support::anvil;
use crate::support::common;
use crate::support::proxy;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Child;
use std::time::{Duration, Instant};

use crate::support::indexer::process::{tail, tokenql_cmd, FreshDb};
use crate::support::indexer::{chain_1155_balances, chain_721_owners, wait_synced, Indexer};
use alloy::primitives::{Bytes, U256};
use anvil::*;
use common::{gql_list, gql_str, text, Backend, TestApp};
use futures_util::future::join_all;
use proxy::{Fault, Hold, LogCall, Proxy, Rates};
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter};
use serde_json::{json, Value};
use tokenql::entity::{chain_state, scope_sync};
use tokio::sync::oneshot;

const ZERO: &str = "0x0000000000000000000000000000000000000000";
/// From a scope's first request to `SYNCED` (debug build, two shared cores, three backends).
const SYNC_BOUND: Duration = Duration::from_secs(60);

// ---------------------------------------------------------------------------------------------
// The scene: a history built before the indexer starts, then live rounds

/// How much traffic a scene has.
#[derive(Debug, Clone, Copy)]
struct Size {
    /// Wallets that send and receive (besides the receiver-only, sender-only and idle ones).
    traders: usize,
    rounds: usize,
    /// Per round: plain ERC20 transfers, `spray` transactions (8 transfers each), ERC20 burns,
    /// ERC721 moves (transfers and burns), ERC1155 transfers (single and batch).
    erc20: usize,
    sprays: usize,
    burns: usize,
    nft_moves: usize,
    multi_moves: usize,
    /// Empty blocks after each round: a longer history, in more `eth_getLogs` ranges.
    gap: u64,
    block_gas: u64,
}

/// The main scenario: thousands of transfers among 57 wallets.
const MAIN: Size = Size {
    traders: 54,
    rounds: 8,
    erc20: 260,
    sprays: 12,
    burns: 4,
    nft_moves: 30,
    multi_moves: 30,
    gap: 30,
    block_gas: 2_000_000,
};

/// The other scenarios: a shorter history over more blocks.
const SMALL: Size = Size {
    traders: 24,
    rounds: 4,
    erc20: 120,
    sprays: 5,
    burns: 2,
    nft_moves: 15,
    multi_moves: 15,
    gap: 90,
    block_gas: 2_000_000,
};

/// A live round (after the start block).
const LIVE: Size = Size {
    traders: 0,
    rounds: 1,
    erc20: 60,
    sprays: 2,
    burns: 1,
    nft_moves: 12,
    multi_moves: 12,
    gap: 0,
    block_gas: 2_000_000,
};

const MULTI_IDS: u64 = 5;

struct Scene {
    owner: String,
    /// ERC20: [the busiest, another, one active only before the start block].
    tokens: Vec<String>,
    nft: String,
    multi: String,
    /// Wallets that send and receive; the first two are the busiest.
    traders: Vec<String>,
    /// Receives transfers and NFTs, never sends anything (and gets no mint).
    receiver: String,
    /// Receives nothing but its mints; sends ERC20s and NFTs.
    sender: String,
    /// Never touched.
    idle: String,
    /// ERC721 id -> owner, as the scene's transactions leave them.
    owners: BTreeMap<u64, String>,
    next_id: u64,
    rng: Rng,
    txs: Vec<(String, String, Vec<u8>)>,
}

impl Scene {
    /// Deploys the contracts and builds the history: mints, then `size.rounds` rounds.
    async fn build(chain: &Anvil, size: &Size, seed: u64) -> Scene {
        assert!(chain.accounts.len() > size.traders + 3, "enough accounts");
        let tokens = vec![
            chain
                .deploy("TestToken", token_ctor("Alpha", "ALP", 18))
                .await,
            chain
                .deploy("TestToken", token_ctor("Beta", "BET", 6))
                .await,
            chain
                .deploy("TestToken", token_ctor("Gamma", "GAM", 9))
                .await,
        ];
        let nft = chain
            .deploy("TestNFT", nft_ctor("Nifty", "NFT", "ipfs://base/"))
            .await;
        let multi = chain
            .deploy("TestMulti", multi_ctor("https://x.test/{id}.json"))
            .await;
        let n = size.traders;
        let mut s = Scene {
            owner: chain.accounts[0].clone(),
            tokens,
            nft,
            multi,
            traders: chain.accounts[1..=n].to_vec(),
            receiver: chain.accounts[n + 1].clone(),
            sender: chain.accounts[n + 2].clone(),
            idle: chain.accounts[n + 3].clone(),
            owners: BTreeMap::new(),
            next_id: 1,
            rng: Rng(seed),
            txs: Vec::new(),
        };
        chain.set_automine(false).await;
        chain.set_block_gas_limit(size.block_gas).await;
        // Mints: every trader and the sender get all three tokens, four ERC721s and every
        // ERC1155 id.
        let minted: Vec<String> = s.traders.iter().chain([&s.sender]).cloned().collect();
        let owner = s.owner.clone();
        for w in &minted {
            for t in s.tokens.clone() {
                let data = calldata(mintCall {
                    to: addr(w),
                    amount: u(1_000_000_000_000_000),
                });
                s.push(&owner, &t, data);
            }
            s.mint_721(w, 4);
            let data = calldata(mintBatchCall {
                to: addr(w),
                ids: (1..=MULTI_IDS).map(u).collect(),
                amounts: vec![u(1000); MULTI_IDS as usize],
            });
            let (owner, multi) = (s.owner.clone(), s.multi.clone());
            s.push(&owner, &multi, data);
        }
        s.flush(chain).await;
        for _ in 0..size.rounds {
            s.round(chain, size, true).await;
        }
        s
    }

    fn push(&mut self, from: &str, to: &str, data: Vec<u8>) {
        self.txs.push((from.to_string(), to.to_string(), data));
    }

    fn mint_721(&mut self, to: &str, n: u64) {
        let data = calldata(mintManyCall {
            to: addr(to),
            start: u(self.next_id),
            n: u(n),
        });
        for id in self.next_id..self.next_id + n {
            self.owners.insert(id, to.to_string());
        }
        self.next_id += n;
        let (owner, nft) = (self.owner.clone(), self.nft.clone());
        self.push(&owner, &nft, data);
    }

    fn busy(&self) -> [String; 2] {
        [self.traders[0].clone(), self.traders[1].clone()]
    }

    fn trader(&mut self) -> String {
        self.traders[self.rng.index(self.traders.len())].clone()
    }

    /// A sender: the busiest wallets 30 % of the time, the sender-only wallet 6 %.
    fn pick_sender(&mut self) -> String {
        let r = self.rng.below(100);
        if r < 30 {
            self.traders[(r % 2) as usize].clone()
        } else if r < 36 {
            self.sender.clone()
        } else {
            self.trader()
        }
    }

    /// A recipient other than `not`: the busiest wallets 30 % of the time, the receiver-only
    /// wallet 6 %; never the sender-only wallet.
    fn pick_recipient(&mut self, not: &str) -> String {
        loop {
            let r = self.rng.below(100);
            let c = if r < 30 {
                self.traders[(r % 2) as usize].clone()
            } else if r < 36 {
                self.receiver.clone()
            } else {
                self.trader()
            };
            if c != not {
                return c;
            }
        }
    }

    /// One round. Every transaction succeeds whatever its place in the round's blocks: ERC20
    /// and ERC1155 amounts are tiny against the mints, and each ERC721 moves at most once.
    /// `history`: the history-only token trades too.
    async fn round(&mut self, chain: &Anvil, size: &Size, history: bool) {
        let tokens = if history { 3 } else { 2 };
        for _ in 0..size.erc20 {
            let r = self.rng.below(10);
            let t = if r < 6 {
                0
            } else if r < 9 {
                1
            } else {
                2 % tokens
            };
            let from = self.pick_sender();
            let to = self.pick_recipient(&from);
            let data = calldata(transferCall {
                to: addr(&to),
                amount: u(1 + self.rng.below(1000)),
            });
            let tok = self.tokens[t].clone();
            self.push(&from, &tok, data);
        }
        for _ in 0..size.sprays {
            let from = self.pick_sender();
            let mut to = BTreeSet::new();
            while to.len() < 8 {
                to.insert(self.pick_recipient(&from));
            }
            let data = calldata(sprayCall {
                to: to.iter().map(|a| addr(a)).collect(),
                amount: u(1 + self.rng.below(50)),
            });
            let tok = self.tokens[self.rng.index(tokens)].clone();
            self.push(&from, &tok, data);
        }
        for _ in 0..size.burns {
            let from = self.pick_sender();
            let data = calldata(burnCall {
                from: addr(&from),
                amount: u(1 + self.rng.below(100)),
            });
            let (owner, tok) = (
                self.owner.clone(),
                self.tokens[self.rng.index(tokens)].clone(),
            );
            self.push(&owner, &tok, data);
        }
        // ERC721: the receiver-only wallet never sends, so its tokens stay put.
        let movable: Vec<u64> = self
            .owners
            .iter()
            .filter(|(_, o)| **o != self.receiver)
            .map(|(id, _)| *id)
            .collect();
        let mut moved = BTreeSet::new();
        for _ in 0..size.nft_moves {
            let id = movable[self.rng.index(movable.len())];
            if !moved.insert(id) {
                continue;
            }
            let from = self.owners[&id].clone();
            let nft = self.nft.clone();
            if self.rng.below(6) == 0 {
                self.push(&from, &nft, nft_burn_calldata(id));
                self.owners.remove(&id);
            } else {
                let to = self.pick_recipient(&from);
                let data = calldata(transferFromCall {
                    from: addr(&from),
                    to: addr(&to),
                    id: u(id),
                });
                self.push(&from, &nft, data);
                self.owners.insert(id, to);
            }
        }
        let w = self.trader();
        self.mint_721(&w, 2);
        // ERC1155: single and batch transfers; everyone but the receiver holds 1000 of each id
        // from the mints and sends at most a few.
        for _ in 0..size.multi_moves {
            let r = self.rng.below(10);
            let from = if r < 2 {
                self.traders[(r % 2) as usize].clone()
            } else if r < 3 {
                self.sender.clone()
            } else {
                self.trader()
            };
            let to = self.pick_recipient(&from);
            let batch = self.rng.below(3) == 0;
            let mut ids: Vec<u64> = Vec::new();
            let want = if batch { 1 + self.rng.below(3) } else { 1 };
            while (ids.len() as u64) < want {
                let id = 1 + self.rng.below(MULTI_IDS);
                if !ids.contains(&id) {
                    ids.push(id);
                }
            }
            let amounts: Vec<U256> = ids.iter().map(|_| u(1 + self.rng.below(3))).collect();
            let data = if batch {
                calldata(safeBatchTransferFromCall {
                    from: addr(&from),
                    to: addr(&to),
                    ids: ids.iter().map(|i| u(*i)).collect(),
                    amounts,
                    data: Bytes::new(),
                })
            } else {
                calldata(safeTransferFromCall {
                    from: addr(&from),
                    to: addr(&to),
                    id: u(ids[0]),
                    amount: amounts[0],
                    data: Bytes::new(),
                })
            };
            let multi = self.multi.clone();
            self.push(&from, &multi, data);
        }
        self.flush(chain).await;
        if size.gap > 0 {
            chain.mine(size.gap).await;
        }
    }

    /// Sends the queued transactions, mines them, and checks that every one succeeded.
    async fn flush(&mut self, chain: &Anvil) {
        let txs = std::mem::take(&mut self.txs);
        let hashes = chain.send_batch(&txs).await;
        chain.mine_pool(3).await;
        assert_succeeded(chain, &hashes).await;
    }

    /// A one-transaction block (automine off).
    async fn block_with(&self, chain: &Anvil, from: &str, to: &str, data: Vec<u8>) {
        let h = chain.send(from, to, data).await;
        chain.mine(1).await;
        assert_succeeded(chain, &[h]).await;
    }

    /// An ERC721 id `w` holds now.
    fn held_by(&self, w: &str) -> u64 {
        *self
            .owners
            .iter()
            .find(|(_, o)| *o == w)
            .map(|(id, _)| id)
            .unwrap_or_else(|| panic!("{w} holds an ERC721"))
    }
}

async fn assert_succeeded(chain: &Anvil, hashes: &[String]) {
    tokenql::tls::ensure_crypto_provider();
    let client = reqwest::Client::new();
    for chunk in hashes.chunks(500) {
        let body: Vec<Value> = chunk
            .iter()
            .enumerate()
            .map(|(i, h)| json!({"jsonrpc": "2.0", "id": i, "method": "eth_getTransactionReceipt", "params": [h]}))
            .collect();
        let receipts: Vec<Value> = client
            .post(&chain.url)
            .json(&body)
            .send()
            .await
            .expect("receipts")
            .json()
            .await
            .expect("receipts json");
        assert_eq!(receipts.len(), chunk.len(), "one receipt per transaction");
        for r in &receipts {
            assert_eq!(r["result"]["status"], "0x1", "a transaction failed: {r}");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The truth: every transfer log of the chain from block 0, decoded here

#[derive(Debug, Clone, PartialEq, Eq)]
struct Erc20 {
    contract: String,
    from: String,
    to: String,
    value: String,
    block: u64,
}

#[derive(Debug, Default)]
struct Truth {
    /// (tx hash, log index) -> transfer.
    erc20: BTreeMap<(String, u64), Erc20>,
    /// wallet -> (contract, token id) -> amount.
    nfts: BTreeMap<String, BTreeMap<(String, String), String>>,
    /// wallet -> NFT transfer rows (ERC721, and per id of ERC1155) it sent / received.
    nft_sent: BTreeMap<String, usize>,
    nft_received: BTreeMap<String, usize>,
    erc721_burns: usize,
    singles: usize,
    batches: usize,
}

fn topic_sig(s: &str) -> String {
    format!("{:#x}", alloy::primitives::keccak256(s.as_bytes()))
}

fn word_addr(t: &str) -> String {
    format!("0x{}", &t[t.len() - 40..]).to_lowercase()
}

fn quantity(v: &Value) -> u64 {
    let s = v.as_str().unwrap_or_else(|| panic!("a quantity: {v}"));
    u64::from_str_radix(s.trim_start_matches("0x"), 16).expect("hex quantity")
}

fn words(data: &str) -> Vec<U256> {
    let h = data.trim_start_matches("0x");
    (0..h.len() / 64)
        .map(|i| U256::from_str_radix(&h[64 * i..64 * i + 64], 16).expect("word"))
        .collect()
}

impl Truth {
    /// Reads every transfer log from block 0 to the head (the chain must be still).
    async fn read(chain: &Anvil) -> Truth {
        let transfer = topic_sig("Transfer(address,address,uint256)");
        let single = topic_sig("TransferSingle(address,address,address,uint256,uint256)");
        let batch = topic_sig("TransferBatch(address,address,address,uint256[],uint256[])");
        let head = chain.head().await;
        let logs = chain
            .rpc(
                "eth_getLogs",
                json!([{"fromBlock": "0x0", "toBlock": format!("{head:#x}"),
                        "topics": [[transfer, single, batch]]}]),
            )
            .await;
        let mut t = Truth::default();
        let mut owners: BTreeMap<(String, String), String> = BTreeMap::new();
        let mut balances: BTreeMap<(String, String, String), i128> = BTreeMap::new();
        let mut moved_1155 = |t: &mut Truth, c: &str, from: &str, to: &str, id: U256, v: U256| {
            let v = i128::try_from(v).expect("small amounts");
            if from != ZERO {
                *balances
                    .entry((from.to_string(), c.to_string(), id.to_string()))
                    .or_default() -= v;
                *t.nft_sent.entry(from.to_string()).or_default() += 1;
            }
            if to != ZERO {
                *balances
                    .entry((to.to_string(), c.to_string(), id.to_string()))
                    .or_default() += v;
                *t.nft_received.entry(to.to_string()).or_default() += 1;
            }
        };
        for l in logs.as_array().expect("logs") {
            let topics: Vec<String> = l["topics"]
                .as_array()
                .expect("topics")
                .iter()
                .map(|x| x.as_str().expect("topic").to_lowercase())
                .collect();
            let c = l["address"].as_str().expect("address").to_lowercase();
            let data = l["data"].as_str().expect("data");
            let key = (
                l["transactionHash"].as_str().expect("tx").to_lowercase(),
                quantity(&l["logIndex"]),
            );
            if topics[0] == transfer && topics.len() == 3 {
                t.erc20.insert(
                    key,
                    Erc20 {
                        contract: c,
                        from: word_addr(&topics[1]),
                        to: word_addr(&topics[2]),
                        value: words(data)[0].to_string(),
                        block: quantity(&l["blockNumber"]),
                    },
                );
            } else if topics[0] == transfer && topics.len() == 4 {
                let (from, to) = (word_addr(&topics[1]), word_addr(&topics[2]));
                let id = U256::from_str_radix(topics[3].trim_start_matches("0x"), 16)
                    .expect("id")
                    .to_string();
                if from != ZERO {
                    *t.nft_sent.entry(from).or_default() += 1;
                }
                if to == ZERO {
                    owners.remove(&(c, id));
                    t.erc721_burns += 1;
                } else {
                    *t.nft_received.entry(to.clone()).or_default() += 1;
                    owners.insert((c, id), to);
                }
            } else if topics[0] == single {
                let (from, to) = (word_addr(&topics[2]), word_addr(&topics[3]));
                let w = words(data);
                moved_1155(&mut t, &c, &from, &to, w[0], w[1]);
                t.singles += 1;
            } else if topics[0] == batch {
                let (from, to) = (word_addr(&topics[2]), word_addr(&topics[3]));
                let w = words(data);
                let ids_at = w[0].to::<usize>() / 32;
                let vals_at = w[1].to::<usize>() / 32;
                let n = w[ids_at].to::<usize>();
                assert_eq!(
                    w[vals_at].to::<usize>(),
                    n,
                    "a TransferBatch with as many values"
                );
                for i in 0..n {
                    moved_1155(
                        &mut t,
                        &c,
                        &from,
                        &to,
                        w[ids_at + 1 + i],
                        w[vals_at + 1 + i],
                    );
                }
                t.batches += 1;
            }
        }
        for ((c, id), o) in owners {
            t.nfts.entry(o).or_default().insert((c, id), "1".into());
        }
        for ((o, c, id), b) in balances {
            assert!(
                b >= 0,
                "the chain has no negative balance ({o} {c} {id}: {b})"
            );
            if b > 0 {
                t.nfts.entry(o).or_default().insert((c, id), b.to_string());
            }
        }
        t
    }

    fn want(&self, q: &Q) -> Records {
        match q {
            Q::Nfts(w) => self
                .nfts
                .get(w)
                .map(|m| {
                    m.iter()
                        .map(|((c, id), a)| (format!("{c}/{id}"), a.clone()))
                        .collect()
                })
                .unwrap_or_default(),
            Q::CollectionNfts(w, c) => self
                .want(&Q::Nfts(w.clone()))
                .into_iter()
                .filter(|(k, _)| k.starts_with(&format!("{c}/")))
                .collect(),
            Q::WalletTransfers(w) => self.transfers(|t| &t.from == w || &t.to == w),
            Q::ContractTransfers(c) => self.transfers(|t| &t.contract == c),
            Q::TransfersFrom(b) => self.transfers(|t| t.block >= *b),
            Q::AllTransfers => self.transfers(|_| true),
            Q::V22WalletTransfers(w) => self.want(&Q::WalletTransfers(w.clone())),
            Q::V22TokenTransfers(c) => self.want(&Q::ContractTransfers(c.clone())),
            Q::Owners(c) => self
                .nfts
                .iter()
                .flat_map(|(owner, held)| {
                    held.iter()
                        .filter(|((cc, _), _)| cc == c)
                        .map(move |((cc, id), a)| (format!("{cc}/{id}/{owner}"), a.clone()))
                })
                .collect(),
            Q::Balances(w) => self.balances(w),
            Q::ContractNfts(c) => {
                let mut tokens: BTreeMap<String, (Vec<String>, U256)> = BTreeMap::new();
                for (owner, held) in &self.nfts {
                    for ((cc, id), a) in held.iter().filter(|((cc, _), _)| cc == c) {
                        let e = tokens.entry(format!("{cc}/{id}")).or_default();
                        e.0.push(owner.clone());
                        e.1 += U256::from_str_radix(a, 10).expect("a decimal amount");
                    }
                }
                tokens
                    .into_iter()
                    .map(|(k, (owners, amount))| {
                        let owner = if owners.len() == 1 {
                            owners[0].clone()
                        } else {
                            "-".into()
                        };
                        (k, format!("{owner} {amount}"))
                    })
                    .collect()
            }
            Q::Collections(w) => {
                let mut counts: Records = Records::new();
                for (cc, _) in self.nfts.get(w).into_iter().flat_map(|m| m.keys()) {
                    let n = counts.entry(cc.clone()).or_insert_with(|| "0".into());
                    *n = (n.parse::<u64>().unwrap_or(0) + 1).to_string();
                }
                counts
            }
        }
    }

    /// A wallet's non-zero ERC20 balances: received minus sent, per contract.
    fn balances(&self, w: &str) -> Records {
        let mut sums: BTreeMap<String, (U256, U256)> = BTreeMap::new();
        for t in self.erc20.values() {
            let v = U256::from_str_radix(&t.value, 10).expect("a decimal value");
            let e = sums.entry(t.contract.clone()).or_default();
            if t.to == w {
                e.0 += v;
            }
            if t.from == w {
                e.1 += v;
            }
        }
        sums.into_iter()
            .filter(|(_, (got, sent))| got > sent)
            .map(|(c, (got, sent))| (c, (got - sent).to_string()))
            .collect()
    }

    fn transfers(&self, keep: impl Fn(&Erc20) -> bool) -> Records {
        self.erc20
            .iter()
            .filter(|(_, t)| keep(t))
            .map(|((tx, li), t)| (transfer_key(tx, *li), transfer_value(t)))
            .collect()
    }

    /// Transfers of `w` before block `start`.
    fn erc20_before(&self, w: &str, start: u64) -> usize {
        self.erc20
            .values()
            .filter(|t| t.block < start && (t.from == w || t.to == w))
            .count()
    }

    fn erc20_sent(&self, w: &str) -> usize {
        self.erc20.values().filter(|t| t.from == w).count()
    }

    fn erc20_received(&self, w: &str, from_zero: bool) -> usize {
        self.erc20
            .values()
            .filter(|t| t.to == w && (from_zero || t.from != ZERO))
            .count()
    }
}

fn transfer_key(tx: &str, li: u64) -> String {
    format!("{}:{li}", tx.to_lowercase())
}

fn transfer_value(t: &Erc20) -> String {
    format!(
        "{} {} -> {} {} @{}",
        t.contract, t.from, t.to, t.value, t.block
    )
}

/// The truth decoded from the logs agrees with the contracts' own state (`ownerOf`,
/// `balanceOf`) for these wallets' NFTs.
async fn truth_matches_contracts(chain: &Anvil, s: &Scene, wallets: &[String], truth: &Truth) {
    let ids: BTreeSet<u64> = (1..s.next_id).collect();
    let owners = chain_721_owners(chain, &s.nft, &ids).await;
    let balances = chain_1155_balances(chain, &s.multi, wallets, &(1..=MULTI_IDS).collect()).await;
    for w in wallets {
        let mut want: Records = owners
            .iter()
            .filter(|(_, o)| *o == w)
            .map(|(id, _)| (format!("{}/{id}", s.nft), "1".to_string()))
            .collect();
        for ((o, id), b) in &balances {
            if o == w {
                want.insert(format!("{}/{id}", s.multi), b.clone());
            }
        }
        assert_eq!(
            truth.want(&Q::Nfts(w.clone())),
            want,
            "decoded holdings of {w}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Asking: REST and GraphQL, every page, with the status of each page

/// Records of one answer: key -> value (NFTs: `contract/id` -> amount; transfers:
/// `tx:logindex` -> `contract from -> to value @block`).
type Records = BTreeMap<String, String>;

/// One question.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Q {
    /// NFTs of a wallet.
    Nfts(String),
    /// NFTs of a wallet in one collection (`token_addresses`).
    CollectionNfts(String, String),
    /// ERC20 transfers filtered by one wallet.
    WalletTransfers(String),
    /// ERC20 transfers filtered by one contract.
    ContractTransfers(String),
    /// ERC20 transfers from this block on (no wallet, no contract).
    TransfersFrom(u64),
    /// Every ERC20 transfer (depends on the chain scope).
    AllTransfers,
    /// A wallet's ERC20 transfers over v2.2's `/{address}/erc20/transfers` (REST only).
    V22WalletTransfers(String),
    /// A token's ERC20 transfers over v2.2's `/erc20/{address}/transfers` (REST only).
    V22TokenTransfers(String),
    /// A collection's holders over `/nft/{address}/owners` (REST only).
    Owners(String),
    /// A wallet's collections and token counts over `/{address}/nft/collections` (REST only).
    Collections(String),
    /// A wallet's ERC20 balances over `/{address}/erc20` (REST only; status in a header).
    Balances(String),
    /// A collection's held tokens over `/nft/{address}` (REST only).
    ContractNfts(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Via {
    Rest,
    Gql,
}

/// A server to ask: the harness's, or another on the same database.
#[derive(Clone)]
struct Api {
    base: String,
    key: String,
    client: reqwest::Client,
}

impl Api {
    fn of(app: &TestApp) -> Api {
        Api {
            base: app.base.clone(),
            key: app.key.clone(),
            client: app.client.clone(),
        }
    }

    async fn get_with_headers(&self, path: &str) -> (reqwest::header::HeaderMap, Value) {
        let r = self
            .client
            .get(format!("{}{path}", self.base))
            .header("X-API-Key", &self.key)
            .send()
            .await
            .unwrap_or_else(|e| panic!("GET {path}: {e}"));
        let code = r.status().as_u16();
        let headers = r.headers().clone();
        let text = r.text().await.expect("body");
        assert_eq!(code, 200, "GET {path}: {text}");
        let body =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("GET {path}: {e}: {text}"));
        (headers, body)
    }

    async fn gql(&self, query: &str) -> Value {
        let r = self
            .client
            .post(format!("{}/graphql", self.base))
            .header("X-API-Key", &self.key)
            .json(&json!({ "query": query }))
            .send()
            .await
            .unwrap_or_else(|e| panic!("POST /graphql: {e}"));
        let code = r.status().as_u16();
        let body: Value = r.json().await.expect("GraphQL JSON");
        assert!(
            code == 200 && body.get("errors").is_none_or(|e| e.is_null()),
            "GraphQL ({code}): {body}\nquery: {query}"
        );
        body["data"].clone()
    }
}

/// One answer, all its pages.
#[derive(Debug, Default)]
struct Answer {
    statuses: Vec<String>,
    records: Records,
    /// Keys returned twice.
    repeated: Vec<String>,
}

impl Answer {
    fn synced(&self) -> bool {
        self.statuses.iter().all(|s| s == "SYNCED")
    }

    fn add(&mut self, k: String, v: String) {
        if let Some(prev) = self.records.insert(k.clone(), v.clone()) {
            self.repeated.push(format!("{k}: {prev} / {v}"));
        }
    }

    fn status(&mut self, what: &str, s: &Value) {
        let s = s.as_str().unwrap_or_default().to_string();
        assert!(
            s == "SYNCED" || s == "SYNCING",
            "{what}: status must be SYNCED or SYNCING, got {s:?}"
        );
        self.statuses.push(s);
    }
}

fn rest_path(q: &Q) -> String {
    let base = match q {
        Q::V22WalletTransfers(w) => {
            return format!("/api/v2.2/{w}/erc20/transfers?chain=eth&limit=100")
        }
        Q::V22TokenTransfers(c) => {
            return format!("/api/v2.2/erc20/{c}/transfers?chain=eth&limit=100&order=ASC")
        }
        Q::Owners(c) => return format!("/api/v2.2/nft/{c}/owners?chain=eth&limit=100"),
        Q::Balances(w) => return format!("/api/v2.2/{w}/erc20?chain=eth&exclude_spam=false"),
        Q::ContractNfts(c) => return format!("/api/v2.2/nft/{c}?chain=eth&limit=100"),
        Q::Collections(w) => {
            return format!("/api/v2.2/{w}/nft/collections?chain=eth&limit=100&token_counts=true")
        }
        Q::Nfts(w) => return format!("/api/v2/{w}/nft?chain=eth&limit=100"),
        Q::CollectionNfts(w, c) => {
            return format!("/api/v2/{w}/nft?chain=eth&token_addresses%5B%5D={c}&limit=100")
        }
        Q::WalletTransfers(w) => format!("wallet_addresses%5B%5D={w}"),
        Q::ContractTransfers(c) => format!("contract_addresses%5B%5D={c}"),
        Q::TransfersFrom(b) => format!("from_block={b}"),
        Q::AllTransfers => String::new(),
    };
    let sep = if base.is_empty() { "" } else { "&" };
    format!("/api/v2/erc20/transfers?chain=eth{sep}{base}&limit=100")
}

fn gql_query(q: &Q, after: Option<&str>) -> String {
    let after = after.map_or(String::new(), |c| format!(", after: {}", gql_str(c)));
    let page = "status pageInfo { hasNextPage endCursor }";
    match q {
        Q::V22WalletTransfers(_)
        | Q::V22TokenTransfers(_)
        | Q::Owners(_)
        | Q::Collections(_)
        | Q::Balances(_)
        | Q::ContractNfts(_) => {
            panic!("{q:?} is a REST question")
        }
        Q::Nfts(w) => format!(
            "{{ c: nftsByWallet(address: {}, chain: \"eth\", first: 100{after}) {{ {page} \
             edges {{ node {{ tokenAddress tokenId amount ownerOf }} }} }} }}",
            gql_str(w)
        ),
        Q::CollectionNfts(w, c) => format!(
            "{{ c: nftsByWallet(address: {}, chain: \"eth\", first: 100, tokenAddresses: {}{after}) \
             {{ {page} edges {{ node {{ tokenAddress tokenId amount ownerOf }} }} }} }}",
            gql_str(w),
            gql_list(&[c])
        ),
        _ => {
            let filter = match q {
                Q::WalletTransfers(w) => format!(", walletAddresses: {}", gql_list(&[w])),
                Q::ContractTransfers(c) => format!(", contractAddresses: {}", gql_list(&[c])),
                Q::TransfersFrom(b) => format!(", fromBlock: {b}"),
                _ => String::new(),
            };
            format!(
                "{{ c: erc20Transfers(chain: \"eth\", first: 100{filter}{after}) {{ {page} \
                 edges {{ node {{ transactionHash logIndex contractAddress fromWallet toWallet \
                 value blockNumber }} }} }} }}"
            )
        }
    }
}

/// The `X-Sync-Status` header of a route that answers a bare array, as a JSON string.
fn header_status(headers: &reqwest::header::HeaderMap) -> Value {
    json!(headers
        .get("x-sync-status")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default())
}

fn lower(v: &Value) -> String {
    text(v).unwrap_or_default().to_lowercase()
}

/// One REST record or GraphQL node as (key, value); NFTs must belong to the wallet asked.
fn record(what: &str, q: &Q, via: Via, r: &Value) -> (String, String) {
    let f = |rest: &str, gql: &str| lower(&r[if via == Via::Rest { rest } else { gql }]);
    match q {
        Q::Owners(c) => {
            assert_eq!(
                &f("token_address", ""),
                c,
                "{what}: another collection: {r}"
            );
            (
                format!(
                    "{}/{}/{}",
                    f("token_address", ""),
                    f("token_id", ""),
                    f("owner_of", "")
                ),
                f("amount", ""),
            )
        }
        Q::Balances(_) => (f("token_address", ""), f("balance", "")),
        Q::ContractNfts(c) => {
            assert_eq!(
                &f("token_address", ""),
                c,
                "{what}: another collection: {r}"
            );
            let owner = r["owner_of"].as_str().map_or("-".into(), str::to_lowercase);
            (
                format!("{c}/{}", f("token_id", "")),
                format!("{owner} {}", f("amount", "")),
            )
        }
        // A SYNCING answer writes no count (`null`): "*", which `check` takes as unknown.
        Q::Collections(_) => {
            let count = f("count", "");
            let count = if count.is_empty() {
                "*".to_string()
            } else {
                count
            };
            (f("token_address", ""), count)
        }
        Q::V22WalletTransfers(_) | Q::V22TokenTransfers(_) => {
            let li: u64 = f("log_index", "")
                .parse()
                .unwrap_or_else(|_| panic!("{what}: log index of {r}"));
            let block: u64 = f("block_number", "")
                .parse()
                .unwrap_or_else(|_| panic!("{what}: block number of {r}"));
            let t = Erc20 {
                contract: f("address", ""),
                from: f("from_address", ""),
                to: f("to_address", ""),
                value: f("value", ""),
                block,
            };
            (
                transfer_key(&f("transaction_hash", ""), li),
                transfer_value(&t),
            )
        }
        Q::Nfts(w) | Q::CollectionNfts(w, _) => {
            assert_eq!(
                &f("owner_of", "ownerOf"),
                w,
                "{what}: an NFT of another wallet: {r}"
            );
            (
                format!(
                    "{}/{}",
                    f("token_address", "tokenAddress"),
                    f("token_id", "tokenId")
                ),
                f("amount", "amount"),
            )
        }
        _ => {
            let li: u64 = f("log_index", "logIndex")
                .parse()
                .unwrap_or_else(|_| panic!("{what}: log index of {r}"));
            let block: u64 = f("block_number", "blockNumber")
                .parse()
                .unwrap_or_else(|_| panic!("{what}: block number of {r}"));
            let t = Erc20 {
                contract: f("contract_address", "contractAddress"),
                from: f("from_wallet", "fromWallet"),
                to: f("to_wallet", "toWallet"),
                value: f("value", "value"),
                block,
            };
            (
                transfer_key(&f("transaction_hash", "transactionHash"), li),
                transfer_value(&t),
            )
        }
    }
}

fn describe(q: &Q, via: Via) -> String {
    match via {
        Via::Rest => format!("REST {}", rest_path(q)),
        Via::Gql => format!("GraphQL {q:?}"),
    }
}

/// Asks `q` and follows every page.
async fn ask(api: &Api, q: &Q, via: Via) -> Answer {
    let what = describe(q, via);
    let mut a = Answer::default();
    let mut cursor: Option<String> = None;
    for _ in 0..500 {
        let (status, records, next) = match via {
            Via::Rest => {
                let path = match &cursor {
                    None => rest_path(q),
                    Some(c) => format!("{}&cursor={}", rest_path(q), common::enc(c)),
                };
                let (headers, body) = api.get_with_headers(&path).await;
                if matches!(q, Q::Balances(_)) {
                    // Not paged: a bare array, the status in a header.
                    let records = body
                        .as_array()
                        .unwrap_or_else(|| panic!("{what}: not an array: {body}"))
                        .clone();
                    (header_status(&headers), records, None)
                } else {
                    let next = body["cursor"]
                        .as_str()
                        .filter(|c| !c.is_empty())
                        .map(str::to_string);
                    let records = body["result"]
                        .as_array()
                        .unwrap_or_else(|| panic!("{what}: result is not an array: {body}"))
                        .clone();
                    (body["status"].clone(), records, next)
                }
            }
            Via::Gql => {
                let data = api.gql(&gql_query(q, cursor.as_deref())).await;
                let c = &data["c"];
                let next = if c["pageInfo"]["hasNextPage"] == true {
                    Some(
                        c["pageInfo"]["endCursor"]
                            .as_str()
                            .unwrap_or_else(|| panic!("{what}: no endCursor: {c}"))
                            .to_string(),
                    )
                } else {
                    None
                };
                let nodes = c["edges"]
                    .as_array()
                    .unwrap_or_else(|| panic!("{what}: no edges: {c}"))
                    .iter()
                    .map(|e| e["node"].clone())
                    .collect();
                (c["status"].clone(), nodes, next)
            }
        };
        a.status(&what, &status);
        for r in &records {
            let (k, v) = record(&what, q, via, r);
            a.add(k, v);
        }
        match next {
            None => return a,
            Some(c) => cursor = Some(c),
        }
    }
    panic!("{what}: more than 500 pages");
}

/// The status of the first page only.
async fn first_status(api: &Api, q: &Q, via: Via) -> String {
    let s = match via {
        Via::Rest => {
            let (headers, body) = api.get_with_headers(&rest_path(q)).await;
            match q {
                Q::Balances(_) => header_status(&headers),
                _ => body["status"].clone(),
            }
        }
        Via::Gql => api.gql(&gql_query(q, None)).await["c"]["status"].clone(),
    };
    let s = s.as_str().unwrap_or_default().to_string();
    assert!(
        s == "SYNCED" || s == "SYNCING",
        "{}: status must be SYNCED or SYNCING, got {s:?}",
        describe(q, via)
    );
    s
}

fn diff(want: &Records, got: &Records) -> String {
    let missing: Vec<String> = want
        .iter()
        .filter(|(k, _)| !got.contains_key(*k))
        .take(4)
        .map(|(k, v)| format!("{k} = {v}"))
        .collect();
    let extra: Vec<String> = got
        .iter()
        .filter(|(k, _)| !want.contains_key(*k))
        .take(4)
        .map(|(k, v)| format!("{k} = {v}"))
        .collect();
    let wrong: Vec<String> = got
        .iter()
        .filter_map(|(k, v)| {
            want.get(k)
                .filter(|w| *w != v)
                .map(|w| format!("{k}: {v}, truth {w}"))
        })
        .take(4)
        .collect();
    format!(
        "{} records, truth {}; missing {} (e.g. {missing:?}); extra {} (e.g. {extra:?}); \
         different {wrong:?}",
        got.len(),
        want.len(),
        want.keys().filter(|k| !got.contains_key(*k)).count(),
        got.keys().filter(|k| !want.contains_key(*k)).count(),
    )
}

/// Checks an answer against the truth: `SYNCED` equals it; `SYNCING` shows only true records
/// with their true values. Returns whether it said `SYNCED`.
fn check(what: &str, a: &Answer, want: &Records) -> bool {
    if a.synced() {
        assert!(
            a.repeated.is_empty(),
            "{what}: a SYNCED answer repeats records: {:?}",
            a.repeated
        );
        assert!(
            a.records == *want,
            "{what}: the answer says SYNCED but differs from the chain: {}",
            diff(want, &a.records)
        );
        true
    } else {
        for (k, v) in &a.records {
            match want.get(k) {
                Some(w) if w == v || v == "*" => {}
                Some(w) => panic!(
                    "{what}: a SYNCING answer shows {k} = {v}; the chain has {w} ({:?})",
                    a.statuses
                ),
                None => panic!(
                    "{what}: a SYNCING answer shows {k} = {v}, which the chain does not have \
                     (a phantom record) ({:?})",
                    a.statuses
                ),
            }
        }
        false
    }
}

/// Asks and checks.
async fn ask_check(api: &Api, q: &Q, via: Via, truth: &Truth, ctx: &str) -> bool {
    let a = ask(api, q, via).await;
    check(&format!("{ctx}: {}", describe(q, via)), &a, &truth.want(q))
}

/// Every question about these wallets and contracts, both ways.
fn questions(wallets: &[String], contracts: &[String]) -> Vec<(Q, Via)> {
    let mut out = Vec::new();
    for via in [Via::Rest, Via::Gql] {
        for w in wallets {
            out.push((Q::Nfts(w.clone()), via));
            out.push((Q::WalletTransfers(w.clone()), via));
        }
        for c in contracts {
            out.push((Q::ContractTransfers(c.clone()), via));
        }
    }
    out
}

/// Questions being followed to `SYNCED`.
struct Tracker {
    items: Vec<(Q, Via, Option<Duration>)>,
    since: Instant,
    polls: usize,
}

impl Tracker {
    fn new(qs: Vec<(Q, Via)>, since: Instant) -> Tracker {
        Tracker {
            items: qs.into_iter().map(|(q, v)| (q, v, None)).collect(),
            since,
            polls: 0,
        }
    }

    /// Asks every question not yet seen `SYNCED` once (concurrently) and checks each answer;
    /// returns the questions still `SYNCING`.
    /// The first poll reads and checks every page of every answer; later ones read the first
    /// page, and every page only of answers that say `SYNCED` there.
    async fn poll(&mut self, api: &Api, truth: &Truth, ctx: &str) -> Vec<(Q, Via)> {
        let full = self.polls == 0;
        self.polls += 1;
        let open: Vec<usize> = (0..self.items.len())
            .filter(|i| self.items[*i].2.is_none())
            .collect();
        let results = join_all(open.iter().map(|i| {
            let (q, via, _) = &self.items[*i];
            async move {
                if full || first_status(api, q, *via).await == "SYNCED" {
                    ask_check(api, q, *via, truth, ctx).await
                } else {
                    false
                }
            }
        }))
        .await;
        let at = self.since.elapsed();
        let mut still = Vec::new();
        for (i, synced) in open.into_iter().zip(results) {
            if synced {
                self.items[i].2 = Some(at);
            } else {
                still.push((self.items[i].0.clone(), self.items[i].1));
            }
        }
        still
    }

    /// Polls until every question accepted by `scope` says `SYNCED`, within [`SYNC_BOUND`]
    /// of the first request.
    async fn until_synced(
        &mut self,
        api: &Api,
        truth: &Truth,
        ctx: &str,
        scope: impl Fn(&Q) -> bool,
    ) {
        loop {
            let still: Vec<(Q, Via)> = self
                .poll(api, truth, ctx)
                .await
                .into_iter()
                .filter(|(q, _)| scope(q))
                .collect();
            if still.is_empty() {
                return;
            }
            assert!(
                self.since.elapsed() < SYNC_BOUND,
                "{ctx}: still SYNCING {SYNC_BOUND:?} after the first request: {still:?}"
            );
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }
}

/// Asks every question once more: all must say `SYNCED` and equal the truth.
async fn all_exact(api: &Api, qs: &[(Q, Via)], truth: &Truth, ctx: &str) {
    let results = join_all(
        qs.iter()
            .map(|(q, via)| ask_check(api, q, *via, truth, ctx)),
    )
    .await;
    let syncing: Vec<&(Q, Via)> = qs
        .iter()
        .zip(&results)
        .filter(|(_, s)| !**s)
        .map(|(q, _)| q)
        .collect();
    assert!(
        syncing.is_empty(),
        "{ctx}: these still say SYNCING: {syncing:?}"
    );
}

/// Polls one question until it says `SYNCED` (checking every answer), within `limit`.
async fn wait_synced_answer(api: &Api, q: &Q, via: Via, truth: &Truth, limit: Duration, ctx: &str) {
    let deadline = Instant::now() + limit;
    while !ask_check(api, q, via, truth, ctx).await {
        assert!(
            Instant::now() < deadline,
            "{ctx}: {} still SYNCING after {limit:?}",
            describe(q, via)
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

// ---------------------------------------------------------------------------------------------
// Scopes, as stored

async fn scope_rows(db: &DatabaseConnection) -> Vec<scope_sync::Model> {
    scope_sync::Entity::find()
        .all(db)
        .await
        .expect("scope_sync rows")
}

async fn scope_row(
    db: &DatabaseConnection,
    kind: &str,
    address: &str,
) -> Option<scope_sync::Model> {
    let rows = scope_sync::Entity::find()
        .filter(scope_sync::Column::Scope.eq(kind))
        .filter(scope_sync::Column::Address.eq(address.to_lowercase()))
        .all(db)
        .await
        .expect("scope_sync");
    assert!(rows.len() <= 1, "one row per scope: {rows:?}");
    rows.into_iter().next()
}

async fn wait_scope(
    db: &DatabaseConnection,
    kind: &str,
    address: &str,
    limit: Duration,
    done: impl Fn(&scope_sync::Model) -> bool,
) -> scope_sync::Model {
    let deadline = Instant::now() + limit;
    loop {
        let row = scope_row(db, kind, address).await;
        if let Some(r) = row.as_ref().filter(|r| done(r)) {
            return r.clone();
        }
        assert!(
            Instant::now() < deadline,
            "{kind} {address}: scope not in the awaited state after {limit:?}: {row:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Failed attempts of history fetches, sampled from `scope_sync` while a test runs (a
/// diagnostic: a complete scope clears its error).
struct ScopeErrors {
    stop: oneshot::Sender<()>,
    task: tokio::task::JoinHandle<BTreeSet<String>>,
}

impl ScopeErrors {
    fn watch(db: &DatabaseConnection) -> ScopeErrors {
        let db = db.clone();
        let (stop, mut rx) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let mut seen = BTreeSet::new();
            loop {
                if let Ok(rows) = scope_sync::Entity::find().all(&db).await {
                    for r in rows {
                        if let Some(e) = r.error {
                            seen.insert(format!("{} {}: {e}", r.scope, r.address));
                        }
                    }
                }
                tokio::select! {
                    _ = &mut rx => return seen,
                    _ = tokio::time::sleep(Duration::from_millis(50)) => {}
                }
            }
        });
        ScopeErrors { stop, task }
    }

    async fn stop(self) -> BTreeSet<String> {
        let _ = self.stop.send(());
        self.task.await.expect("watcher")
    }
}

/// The live start block, as the indexer stored it.
async fn live_start(db: &DatabaseConnection) -> u64 {
    chain_state::Entity::find_by_id(1i64)
        .one(db)
        .await
        .expect("chain_state")
        .and_then(|s| s.start_block)
        .expect("a start block") as u64
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_millis() as i64
}

/// The history calls of one wallet are one pass over `[0, target)`: per filter, ranges that
/// start at 0, follow each other without gap or overlap, and end at `target - 1`.
fn assert_one_pass(what: &str, calls: &[LogCall], target: u64) {
    assert!(
        !calls.is_empty(),
        "{what}: no eth_getLogs naming the wallet"
    );
    let mut by_filter: BTreeMap<&str, Vec<(u64, u64)>> = BTreeMap::new();
    for c in calls {
        let (Some(f), Some(t)) = (c.from, c.to) else {
            panic!("{what}: a history call without a numeric block range: {c:?}");
        };
        by_filter.entry(&c.shape).or_default().push((f, t));
    }
    for (shape, mut ranges) in by_filter {
        ranges.sort();
        let mut next = 0;
        for (f, t) in &ranges {
            assert!(
                *f == next && t >= f,
                "{what}: filter {shape}: ranges {ranges:?} are not one pass over [0, {target})"
            );
            next = t + 1;
        }
        assert_eq!(
            next, target,
            "{what}: filter {shape}: ranges {ranges:?} do not end at the live start block {target}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// A second API server on the same database

struct Server {
    api: Api,
    stop: Option<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

/// An API server of its own (its own query service and caches) on `db`.
async fn serve(db: &DatabaseConnection, key: &str) -> Server {
    tokenql::tls::ensure_crypto_provider();
    let state = tokenql::AppState::new(db.clone(), tokenql::query::QueryConfig::default())
        .await
        .expect("AppState");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("address");
    let (tx, rx) = oneshot::channel::<()>();
    let task = tokio::spawn(tokenql::run(listener, state, async move {
        let _ = rx.await;
    }));
    Server {
        api: Api {
            base: format!("http://{addr}"),
            key: key.to_string(),
            client: reqwest::Client::builder()
                .timeout(Duration::from_secs(60))
                .build()
                .expect("client"),
        },
        stop: Some(tx),
        task,
    }
}

impl Server {
    async fn stop(mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        tokio::time::timeout(Duration::from_secs(10), self.task)
            .await
            .expect("the server stops")
            .expect("server task")
            .expect("server");
    }
}

fn configure(c: &mut tokenql::indexer::ChainConfig) {
    // The default users get: the live index starts at the head at first start.
    c.start_block = None;
    c.request_timeout = Duration::from_secs(10);
}

// ---------------------------------------------------------------------------------------------
// The main scenario

async fn every_synced_answer_holds_the_whole_history(backend: Backend) {
    let t0 = Instant::now();
    let chain = Anvil::start(MAIN.traders + 4, &[]).await;
    let mut s = Scene::build(&chain, &MAIN, 0x1157_0e1d).await;
    let head = chain.head().await;
    let t_build = t0.elapsed();

    let app = common::spawn(backend).await;
    let api = Api::of(&app);
    let p = Proxy::start(&chain.url, 17).await;
    let ix = Indexer::start(&app.db, &p.url, |c| {
        configure(c);
        // Four scopes are held at the proxy below; the others share the remaining two.
        c.history_workers = 6;
        // Short slices: long histories yield their worker and go round the queue.
        c.history_slice = Duration::from_millis(300);
    });
    wait_synced(&app.db, &chain, Duration::from_secs(60)).await;
    let start = live_start(&app.db).await;
    assert_eq!(
        start, head,
        "the default live start block is the head at first start"
    );
    assert!(
        scope_rows(&app.db).await.is_empty(),
        "no history is fetched before it is asked for"
    );

    // Live traffic before the first request: history tokens move on, balances from before the
    // start block are spent.
    for _ in 0..2 {
        s.round(&chain, &LIVE, false).await;
    }
    wait_synced(&app.db, &chain, Duration::from_secs(60)).await;
    let truth = Truth::read(&chain).await;

    // The scene has what the scenario claims.
    let [busy0, busy1] = s.busy();
    assert!(
        truth.erc20.len() > 3000,
        "thousands of ERC20 transfers ({})",
        truth.erc20.len()
    );
    let nft_rows: usize = truth.nft_received.values().sum();
    assert!(nft_rows > 700, "hundreds of NFT moves ({nft_rows})");
    assert!(
        truth.erc721_burns > 5 && truth.singles > 50 && truth.batches > 50,
        "ERC721 burns ({}), ERC1155 singles ({}) and batches ({})",
        truth.erc721_burns,
        truth.singles,
        truth.batches
    );
    for w in [&busy0, &busy1] {
        assert!(
            truth.erc20_before(w, start) > 400,
            "{w} is busy before the start block ({})",
            truth.erc20_before(w, start)
        );
    }
    assert_eq!(truth.erc20_sent(&s.receiver), 0, "the receiver never sends");
    assert_eq!(
        truth.nft_sent.get(&s.receiver),
        None,
        "the receiver never sends NFTs"
    );
    assert!(truth.erc20_received(&s.receiver, true) > 50 && truth.nfts.contains_key(&s.receiver));
    assert_eq!(
        truth.erc20_received(&s.sender, false),
        0,
        "the sender receives nothing but its mints"
    );
    assert!(truth.erc20_sent(&s.sender) > 50 && truth.nft_sent.get(&s.sender).copied() > Some(5));
    assert_eq!(truth.want(&Q::WalletTransfers(s.idle.clone())).len(), 0);

    let wallets: Vec<String> = vec![
        busy0.clone(),
        busy1.clone(),
        s.receiver.clone(),
        s.sender.clone(),
        s.idle.clone(),
        s.traders[5].clone(),
        s.traders[13].clone(),
        s.traders[27].clone(),
        s.traders[40].clone(),
        s.traders[53].clone(),
    ];
    let contracts = s.tokens.clone();
    let mut qs = questions(&wallets, &contracts);
    // NFTs of wallets never asked for, in one named collection: exact once the collection is.
    let named = [
        Q::CollectionNfts(s.traders[20].clone(), s.nft.clone()),
        Q::CollectionNfts(s.traders[31].clone(), s.multi.clone()),
    ];
    for via in [Via::Rest, Via::Gql] {
        qs.extend(named.iter().map(|q| (q.clone(), via)));
    }
    // The v2.2 routes over REST: the same scopes decide them.
    for w in &wallets {
        qs.push((Q::V22WalletTransfers(w.clone()), Via::Rest));
        qs.push((Q::Collections(w.clone()), Via::Rest));
        qs.push((Q::Balances(w.clone()), Via::Rest));
    }
    for c in &contracts {
        qs.push((Q::V22TokenTransfers(c.clone()), Via::Rest));
    }
    for c in [&s.nft, &s.multi] {
        qs.push((Q::Owners(c.clone()), Via::Rest));
        qs.push((Q::ContractNfts(c.clone()), Via::Rest));
    }

    // The busiest wallet's history is held at the proxy, with the histories of one ERC20 and
    // of both NFT collections: its in-between state is certain, and partial (the other
    // wallets' histories know some of its moves, not all).
    let held_token = s.tokens[1].clone();
    p.hold(Hold::Any(vec![
        Hold::WalletLogs(busy0.clone()),
        Hold::LogsOf(held_token.clone()),
        Hold::LogsOf(s.nft.clone()),
        Hold::LogsOf(s.multi.clone()),
    ]));

    // First requests: each schedules its scope and answers SYNCING.
    let first = Instant::now();
    let watcher = ScopeErrors::watch(&app.db);
    for w in &wallets {
        assert_eq!(
            first_status(&api, &Q::Nfts(w.clone()), Via::Rest).await,
            "SYNCING",
            "{backend:?}: the first request for {w}'s NFTs"
        );
    }
    for c in &contracts {
        assert_eq!(
            first_status(&api, &Q::ContractTransfers(c.clone()), Via::Rest).await,
            "SYNCING",
            "{backend:?}: the first request for {c}'s transfers"
        );
    }
    for q in &named {
        assert_eq!(
            first_status(&api, q, Via::Rest).await,
            "SYNCING",
            "{backend:?}: the first request naming a collection: {q:?}"
        );
    }
    // Neither wallets nor contracts: the chain, never complete when started late; but from
    // the start block on, no history is needed.
    assert!(
        !ask_check(&api, &Q::AllTransfers, Via::Rest, &truth, "chain").await,
        "{backend:?}: unfiltered transfers of a chain joined late say SYNCING"
    );
    assert!(
        !ask_check(&api, &Q::AllTransfers, Via::Gql, &truth, "chain").await,
        "{backend:?}: unfiltered transfers of a chain joined late say SYNCING (GraphQL)"
    );
    for via in [Via::Rest, Via::Gql] {
        assert!(
            ask_check(&api, &Q::TransfersFrom(start), via, &truth, "live range").await,
            "{backend:?}: transfers from the start block on say SYNCED ({via:?})"
        );
    }
    p.wait_count("held", 1, Duration::from_secs(20)).await;

    // Everything but the held scopes completes, complete wallets exact although contracts
    // their answers show are not; live traffic goes on meanwhile.
    let mut tracker = Tracker::new(qs.clone(), first);
    let ctx = format!("{backend:?}, histories being fetched");
    tracker.poll(&api, &truth, &ctx).await;
    s.round(&chain, &LIVE, false).await;
    wait_synced(&app.db, &chain, Duration::from_secs(60)).await;
    let truth = Truth::read(&chain).await;
    let held_q = |q: &Q| match q {
        Q::Nfts(w)
        | Q::WalletTransfers(w)
        | Q::V22WalletTransfers(w)
        | Q::Collections(w)
        | Q::Balances(w) => *w == busy0,
        Q::ContractTransfers(c) | Q::V22TokenTransfers(c) => *c == held_token,
        Q::CollectionNfts(..) | Q::Owners(_) | Q::ContractNfts(_) => true,
        _ => false,
    };
    tracker
        .until_synced(&api, &truth, &ctx, |q| !held_q(q))
        .await;
    let t_others = first.elapsed();
    // The held scopes are incomplete: SYNCING, with only records of the truth (the wallet's
    // live transfers at least: they are stored and certain).
    let mut partial = Vec::new();
    let held: Vec<(Q, Via)> = qs.iter().filter(|(q, _)| held_q(q)).cloned().collect();
    for (q, via) in &held {
        let a = ask(&api, q, *via).await;
        let what = format!("{backend:?}, held: {}", describe(q, *via));
        assert!(!check(&what, &a, &truth.want(q)), "{what} says SYNCING");
        if matches!(q, Q::WalletTransfers(_) | Q::ContractTransfers(_)) {
            assert!(!a.records.is_empty(), "{what}: shows its stored transfers");
        }
        partial.push(format!("{} of {}", a.records.len(), truth.want(q).len()));
    }
    for (kind, a) in [
        ("wallet", &busy0),
        ("contract", &held_token),
        ("contract", &s.nft),
        ("contract", &s.multi),
    ] {
        let row = scope_row(&app.db, kind, a)
            .await
            .unwrap_or_else(|| panic!("{backend:?}: no scope for the held {kind} {a}"));
        assert_ne!(row.state, "synced", "{row:?}");
    }
    p.release();
    // The held wallet's bound runs from its release.
    tracker.since = Instant::now();
    tracker
        .until_synced(
            &api,
            &truth,
            &format!("{backend:?}, after the release"),
            |_| true,
        )
        .await;
    let t_held = tracker.since.elapsed();

    // Complete scopes stay exact while live traffic moves their history's tokens.
    s.round(&chain, &LIVE, false).await;
    wait_synced(&app.db, &chain, Duration::from_secs(60)).await;
    let truth = Truth::read(&chain).await;
    all_exact(
        &api,
        &qs,
        &truth,
        &format!("{backend:?}, complete, after more live traffic"),
    )
    .await;
    assert!(
        !ask_check(&api, &Q::AllTransfers, Via::Rest, &truth, "chain").await,
        "{backend:?}: the chain scope stays incomplete"
    );

    // The decoded truth agrees with the contracts' own state.
    truth_matches_contracts(&chain, &s, &wallets, &truth).await;

    // The scopes: one per asked wallet (and perhaps the wallets asked about one collection,
    // whose answers the collection completes anyway), complete over [0, start).
    let rows = scope_rows(&app.db).await;
    let wallet_rows: BTreeSet<String> = rows
        .iter()
        .filter(|r| r.scope == "wallet")
        .map(|r| r.address.to_string())
        .collect();
    let asked: BTreeSet<String> = wallets.iter().cloned().collect();
    let extra: BTreeSet<String> = wallet_rows.difference(&asked).cloned().collect();
    assert!(
        wallet_rows.is_superset(&asked)
            && extra.is_subset(&[s.traders[20].clone(), s.traders[31].clone()].into()),
        "{backend:?}: a wallet scope per asked wallet, and no other: {wallet_rows:?}"
    );
    for a in wallets
        .iter()
        .map(|w| ("wallet", w))
        .chain(contracts.iter().map(|c| ("contract", c)))
        .chain([("contract", &s.nft), ("contract", &s.multi)])
    {
        let r = scope_row(&app.db, a.0, a.1)
            .await
            .unwrap_or_else(|| panic!("no scope for {a:?}"));
        assert_eq!(r.chain_id, 1);
        assert_eq!(r.state, "synced", "{r:?}");
        assert_eq!(r.target_block, Some(start as i64), "{r:?}");
        assert_eq!(r.synced_to_block, Some(start as i64 - 1), "{r:?}");
    }
    let busy_row = scope_row(&app.db, "wallet", &busy0).await.expect("row");
    assert!(
        busy_row.logs > 400,
        "the busiest wallet's history is hundreds of logs: {busy_row:?}"
    );

    let calls: Vec<String> = wallets
        .iter()
        .map(|w| format!("{}", p.count(&format!("eth_getLogs~{w}"))))
        .collect();
    let errors = watcher.stop().await;
    eprintln!(
        "history_on_demand {backend:?}: {} blocks of history, {} ERC20 transfers, {nft_rows} NFT \
         rows; built in {:.1}s; {} answers SYNCED within {:.1}s of the first request but the \
         held scopes', which took {:.1}s from their release (held, they showed {partial:?} \
         records of the truth's); {} polls; wallet eth_getLogs calls \
         {calls:?}; failed attempts seen: {errors:?}; total {:.1}s",
        start,
        truth.erc20.len(),
        t_build.as_secs_f64(),
        qs.len(),
        t_others.as_secs_f64(),
        t_held.as_secs_f64(),
        tracker.polls,
        t0.elapsed().as_secs_f64()
    );
    // A fault-free endpoint: no history attempt fails (a failure here, e.g. a duplicate key in
    // the derived holdings, means concurrent writers raced on the same rows).
    assert!(
        errors.is_empty(),
        "{backend:?}: history attempts failed with a fault-free endpoint: {errors:?}"
    );
    ix.stop().await.expect("the indexer ends cleanly");
    app.cleanup().await;
}

// ---------------------------------------------------------------------------------------------
// (a) Fifty concurrent first requests, over two API servers: one history fetch

async fn fifty_first_requests_fetch_one_history(backend: Backend) {
    let chain = Anvil::start(SMALL.traders + 4, &[]).await;
    let s = Scene::build(&chain, &SMALL, 0x50_f1_57).await;
    let app = common::spawn(backend).await;
    let p = Proxy::start(&chain.url, 23).await;
    let ix = Indexer::start(&app.db, &p.url, configure);
    wait_synced(&app.db, &chain, Duration::from_secs(60)).await;
    let start = live_start(&app.db).await;
    let truth = Truth::read(&chain).await;
    let other = serve(&app.db, &app.key).await;
    let apis = [Api::of(&app), other.api.clone()];
    let w = s.busy()[0].clone();
    p.hold(Hold::WalletLogs(w.clone()));

    let kinds = [
        (Q::Nfts(w.clone()), Via::Rest),
        (Q::Nfts(w.clone()), Via::Gql),
        (Q::WalletTransfers(w.clone()), Via::Rest),
        (Q::WalletTransfers(w.clone()), Via::Gql),
    ];
    let answers = join_all((0..50).map(|i| {
        let (api, (q, via)) = (&apis[i % 2], &kinds[(i / 2) % 4]);
        async move { first_status(api, q, *via).await }
    }))
    .await;
    assert!(
        answers.iter().all(|a| a == "SYNCING"),
        "{backend:?}: fifty first requests answer SYNCING: {answers:?}"
    );
    let rows = scope_rows(&app.db).await;
    assert_eq!(rows.len(), 1, "{backend:?}: one scope row: {rows:?}");
    assert_eq!(
        (rows[0].scope.as_str(), rows[0].address.to_string().as_str()),
        ("wallet", w.as_str())
    );
    p.wait_count("held", 1, Duration::from_secs(20)).await;
    // Whatever else the fifty requests started would be waiting at the proxy by now too.
    tokio::time::sleep(Duration::from_millis(500)).await;
    p.release();
    let q = Q::Nfts(w.clone());
    wait_synced_answer(
        &apis[0],
        &q,
        Via::Rest,
        &truth,
        SYNC_BOUND,
        &format!("{backend:?}"),
    )
    .await;
    let calls = p.wallet_calls(&w);
    // More requests for a complete wallet fetch nothing.
    join_all((0..10).map(|i| {
        let (api, (q, via)) = (&apis[i % 2], &kinds[i % 4]);
        async move { first_status(api, q, *via).await }
    }))
    .await;
    all_exact(
        &apis[1],
        &kinds,
        &truth,
        &format!("{backend:?}, after one fetch"),
    )
    .await;
    assert_eq!(
        p.wallet_calls(&w),
        calls,
        "a complete wallet is not fetched again"
    );
    let row = scope_row(&app.db, "wallet", &w).await.expect("row");
    assert_eq!(row.target_block, Some(start as i64), "{row:?}");
    assert_one_pass(&format!("{backend:?}: fifty first requests"), &calls, start);
    eprintln!(
        "history_on_demand {backend:?}: fifty first requests, one fetch: {} eth_getLogs naming \
         the wallet over [0, {start})",
        calls.len()
    );
    other.stop().await;
    ix.stop().await.expect("the indexer ends cleanly");
    app.cleanup().await;
}

// ---------------------------------------------------------------------------------------------
// (b) SIGKILL during a wallet's history fetch; restart; `tokenql sync`

/// A running `tokenql index`, SIGKILLed when dropped.
struct IndexProcess(Child);

impl IndexProcess {
    fn start(db: &FreshDb, rpc: &str, log: &Path) -> IndexProcess {
        let rpc = format!("eth={rpc}");
        let child = tokenql_cmd(
            &db.url,
            log,
            &["index", "--rpc", &rpc, "--max-log-range", "40"],
        )
        .spawn()
        .expect("start tokenql index");
        IndexProcess(child)
    }

    fn assert_running(&mut self, log: &Path) {
        if let Ok(Some(status)) = self.0.try_wait() {
            panic!("tokenql index exited ({status}):\n{}", tail(log));
        }
    }

    /// SIGKILL, and reap.
    fn kill(mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Drop for IndexProcess {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

async fn killed_during_a_wallet_history_resumes_exactly(backend: Backend) {
    let chain = Anvil::start(SMALL.traders + 4, &[]).await;
    let s = Scene::build(&chain, &SMALL, 0x0c_4a_5e).await;
    let fresh = FreshDb::create(backend).await;
    let log = std::env::temp_dir().join(format!("{}.log", fresh.name));
    let status = tokenql_cmd(&fresh.url, &log, &["migrate"])
        .status()
        .expect("tokenql migrate");
    assert!(
        status.success(),
        "tokenql migrate: {status}\n{}",
        tail(&log)
    );
    let db = tokenql::store::database::connect(&fresh.url, 3)
        .await
        .expect("connect");
    let (_, key) = tokenql::keys::create(&db, "history").await.expect("key");
    let server = serve(&db, &key).await;
    let api = server.api.clone();
    let p = Proxy::start(&chain.url, 29).await;
    p.set_max_log_span(Some(40));
    let mut ixp = IndexProcess::start(&fresh, &p.url, &log);
    wait_synced(&db, &chain, Duration::from_secs(60)).await;
    ixp.assert_running(&log);
    let start = live_start(&db).await;
    assert!(start > 300, "a history of many ranges ({start} blocks)");
    let truth = Truth::read(&chain).await;

    // The wallet's history is fetched up to the middle, then held there.
    let w = s.busy()[0].clone();
    let cut = start / 2;
    p.hold(Hold::WalletLogsFrom(w.clone(), cut));
    let q = Q::Nfts(w.clone());
    assert_eq!(
        first_status(&api, &q, Via::Rest).await,
        "SYNCING",
        "first request"
    );
    p.wait_count("held", 1, Duration::from_secs(30)).await;
    let row = wait_scope(&db, "wallet", &w, Duration::from_secs(20), |r| {
        r.synced_to_block.is_some_and(|b| b + 1 >= cut as i64)
    })
    .await;
    assert_eq!(
        row.state, "syncing",
        "{backend:?}: the fetch is under way: {row:?}"
    );
    let progress = row.synced_to_block.expect("progress") as u64;
    // Partial: SYNCING, true records only.
    for via in [Via::Rest, Via::Gql] {
        for q in [Q::Nfts(w.clone()), Q::WalletTransfers(w.clone())] {
            assert!(
                !ask_check(&api, &q, via, &truth, &format!("{backend:?}, half fetched")).await,
                "{backend:?}: half a history says SYNCING"
            );
        }
    }
    let before = p.wallet_calls(&w).len();
    ixp.assert_running(&log);
    ixp.kill();
    p.release();
    let row = scope_row(&db, "wallet", &w).await.expect("row");
    assert_ne!(
        row.state, "synced",
        "{backend:?}: killed mid-fetch: {row:?}"
    );
    assert!(
        !ask_check(&api, &q, Via::Rest, &truth, &format!("{backend:?}, killed")).await,
        "{backend:?}: an interrupted history says SYNCING"
    );

    // Restarted: the fetch resumes from its stored progress and completes.
    let restarted = Instant::now();
    let mut ixp = IndexProcess::start(&fresh, &p.url, &log);
    for via in [Via::Rest, Via::Gql] {
        for q in [Q::Nfts(w.clone()), Q::WalletTransfers(w.clone())] {
            wait_synced_answer(
                &api,
                &q,
                via,
                &truth,
                SYNC_BOUND,
                &format!("{backend:?}, restarted"),
            )
            .await;
        }
    }
    let t_resume = restarted.elapsed();
    ixp.assert_running(&log);
    let calls = p.wallet_calls(&w);
    let after = &calls[before..];
    assert!(!after.is_empty(), "the restarted indexer fetched the rest");
    assert!(
        after.iter().all(|c| c.from.is_some_and(|f| f > progress)),
        "{backend:?}: the restarted fetch resumes after its stored progress (block {progress}), \
         it asked for {after:?}"
    );
    let row = scope_row(&db, "wallet", &w).await.expect("row");
    assert_eq!(
        (row.state.as_str(), row.synced_to_block),
        ("synced", Some(start as i64 - 1))
    );

    // `tokenql sync` warms scopes ahead of traffic: complete before any request.
    let (w2, c2) = (s.traders[7].clone(), s.tokens[1].clone());
    for (kind, a) in [("wallet", &w2), ("contract", &c2)] {
        let mut cmd = tokenql_cmd(&fresh.url, &log, &["sync", kind, "--chain", "eth", a]);
        let out = tokio::task::spawn_blocking(move || cmd.status().expect("tokenql sync"))
            .await
            .expect("tokenql sync");
        assert!(
            out.success(),
            "tokenql sync {kind} {a}: {out}\n{}",
            tail(&log)
        );
        wait_scope(&db, kind, a, SYNC_BOUND, |r| r.state == "synced").await;
    }
    for via in [Via::Rest, Via::Gql] {
        for q in [
            Q::Nfts(w2.clone()),
            Q::WalletTransfers(w2.clone()),
            Q::ContractTransfers(c2.clone()),
        ] {
            assert!(
                ask_check(&api, &q, via, &truth, &format!("{backend:?}, warmed")).await,
                "{backend:?}: a scope warmed by `tokenql sync` answers SYNCED on its first \
                 request: {}",
                describe(&q, via)
            );
        }
    }
    eprintln!(
        "history_on_demand {backend:?}: killed with the wallet's history stored to block \
         {progress} of {start}; SYNCED {:.1}s after the restart, {} calls after it",
        t_resume.as_secs_f64(),
        after.len()
    );
    ixp.kill();
    server.stop().await;
    let _ = db.close().await;
    fresh.drop_db().await;
    let _ = std::fs::remove_file(&log);
}

// ---------------------------------------------------------------------------------------------
// (c) A reorg in the live range while histories are fetched

async fn a_reorg_while_histories_are_fetched(backend: Backend) {
    let chain = Anvil::start(SMALL.traders + 4, &[]).await;
    let s = Scene::build(&chain, &SMALL, 0x0004_e0e9).await;
    let app = common::spawn(backend).await;
    let api = Api::of(&app);
    let p = Proxy::start(&chain.url, 31).await;
    let ix = Indexer::start(&app.db, &p.url, configure);
    wait_synced(&app.db, &chain, Duration::from_secs(60)).await;
    let start = live_start(&app.db).await;

    // Live blocks of one transaction each, among wallets a, b and c.
    let (a, b, c) = (
        s.traders[2].clone(),
        s.traders[3].clone(),
        s.traders[4].clone(),
    );
    let (tok, nft, multi) = (s.tokens[0].clone(), s.nft.clone(), s.multi.clone());
    let id = s.held_by(&a);
    let erc20 = |to: &str, v: u64| {
        calldata(transferCall {
            to: addr(to),
            amount: u(v),
        })
    };
    let single = |from: &str, to: &str, id: u64, v: u64| {
        calldata(safeTransferFromCall {
            from: addr(from),
            to: addr(to),
            id: u(id),
            amount: u(v),
            data: Bytes::new(),
        })
    };
    s.block_with(&chain, &a, &tok, erc20(&b, 11)).await;
    s.block_with(&chain, &b, &multi, single(&b, &a, 2, 3)).await;
    // The six blocks the reorg replaces.
    s.block_with(&chain, &a, &tok, erc20(&b, 12)).await;
    let move_721 = calldata(transferFromCall {
        from: addr(&a),
        to: addr(&b),
        id: u(id),
    });
    s.block_with(&chain, &a, &nft, move_721).await;
    s.block_with(&chain, &a, &multi, single(&a, &b, 1, 4)).await;
    s.block_with(&chain, &b, &tok, erc20(&a, 13)).await;
    s.block_with(&chain, &c, &tok, erc20(&a, 14)).await;
    s.block_with(&chain, &a, &multi, single(&a, &c, 3, 5)).await;
    wait_synced(&app.db, &chain, Duration::from_secs(60)).await;
    assert!(chain.head().await >= start + 8, "eight live blocks");

    // Histories are asked for and held at the proxy (the live follower is not).
    p.hold(Hold::History);
    let wallets = vec![a.clone(), b.clone(), c.clone()];
    let contracts = vec![tok.clone()];
    let qs = questions(&wallets, &contracts);
    let first = Instant::now();
    for (q, via) in &qs {
        if *via == Via::Rest && !matches!(q, Q::WalletTransfers(_)) {
            assert_eq!(
                first_status(&api, q, *via).await,
                "SYNCING",
                "first request {q:?}"
            );
        }
    }
    p.wait_count("held", 1, Duration::from_secs(20)).await;

    // The reorg: the last six blocks are replaced; the ERC721 goes to c instead of b.
    let tx = |from: &str, to: &str, data: Vec<u8>| json!({"from": from, "to": to, "gas": "0x100000", "data": hex(&data)});
    let to_c = calldata(transferFromCall {
        from: addr(&a),
        to: addr(&c),
        id: u(id),
    });
    chain
        .reorg(
            6,
            json!([[tx(&a, &nft, to_c), 0], [tx(&a, &tok, erc20(&c, 15)), 2]]),
        )
        .await;
    wait_synced(&app.db, &chain, Duration::from_secs(60)).await;
    let truth = Truth::read(&chain).await;
    assert_eq!(
        chain_721_owners(&chain, &nft, &[id].into()).await.get(&id),
        Some(&c),
        "the reorg gave ERC721 {id} to c"
    );
    assert!(truth
        .want(&Q::Nfts(c.clone()))
        .contains_key(&format!("{nft}/{id}")));
    // While held: SYNCING, true records only (of the chain after the reorg).
    let mut tracker = Tracker::new(qs.clone(), first);
    let still = tracker
        .poll(&api, &truth, &format!("{backend:?}, held, after the reorg"))
        .await;
    assert_eq!(
        still.len(),
        qs.len(),
        "{backend:?}: held histories say SYNCING: {still:?}"
    );
    p.release();
    tracker
        .until_synced(
            &api,
            &truth,
            &format!("{backend:?}, after the reorg"),
            |_| true,
        )
        .await;

    // A second reorg, of complete scopes.
    s.block_with(&chain, &a, &tok, erc20(&b, 16)).await;
    s.block_with(&chain, &b, &multi, single(&b, &a, 4, 2)).await;
    s.block_with(
        &chain,
        &c,
        &nft,
        calldata(transferFromCall {
            from: addr(&c),
            to: addr(&b),
            id: u(id),
        }),
    )
    .await;
    wait_synced(&app.db, &chain, Duration::from_secs(60)).await;
    chain
        .reorg(3, json!([[tx(&a, &tok, erc20(&c, 17)), 1]]))
        .await;
    wait_synced(&app.db, &chain, Duration::from_secs(60)).await;
    let truth = Truth::read(&chain).await;
    assert!(truth
        .want(&Q::Nfts(c.clone()))
        .contains_key(&format!("{nft}/{id}")));
    all_exact(
        &api,
        &qs,
        &truth,
        &format!("{backend:?}, after a reorg of complete scopes"),
    )
    .await;
    ix.stop().await.expect("the indexer ends cleanly");
    app.cleanup().await;
}

// ---------------------------------------------------------------------------------------------
// (d) A faulty endpoint: exact, retries bounded

async fn faults_leave_histories_exact(backend: Backend) {
    const SPAN: u64 = 50;
    let chain = Anvil::start(SMALL.traders + 4, &[]).await;
    let mut s = Scene::build(&chain, &SMALL, 0xfa_17).await;
    let app = common::spawn(backend).await;
    let api = Api::of(&app);
    let p = Proxy::start(&chain.url, 0xbad_5eed).await;
    p.set_max_log_span(Some(SPAN));
    let ix = Indexer::start(&app.db, &p.url, |c| {
        configure(c);
        c.request_timeout = Duration::from_millis(500);
        c.history_attempts = 50;
        c.history_retry_after = Duration::from_millis(300);
    });
    wait_synced(&app.db, &chain, Duration::from_secs(60)).await;
    let start = live_start(&app.db).await;
    assert!(
        start > 4 * SPAN,
        "the history spans several provider ranges ({start})"
    );
    let truth = Truth::read(&chain).await;

    // References without faults (behind the same range limit): one wallet, one contract.
    let (w0, c0) = (s.traders[9].clone(), s.tokens[2].clone());
    let refs = [
        (Q::Nfts(w0.clone()), Via::Rest),
        (Q::ContractTransfers(c0.clone()), Via::Rest),
    ];
    for (q, via) in &refs {
        wait_synced_answer(
            &api,
            q,
            *via,
            &truth,
            SYNC_BOUND,
            &format!("{backend:?}, fault-free"),
        )
        .await;
    }
    let ref_wallet = p.count(&format!("eth_getLogs~{w0}"));
    let ref_contract = p.count(&format!("eth_getLogs@{c0}"));
    assert!(ref_wallet > 0 && ref_contract > 0, "{:?}", p.counts());

    // Now every kind of fault, then at random.
    p.set_delay(Duration::from_millis(700));
    p.script([
        Fault::Drop,
        Fault::Unavailable,
        Fault::Malformed,
        Fault::TooManyRequests,
        Fault::Delay(Duration::from_millis(700)),
        Fault::Malformed,
    ]);
    p.set_rates(Rates {
        delay: 20,
        too_many_requests: 50,
        unavailable: 50,
        drop: 50,
        malformed: 50,
    });
    let mut wallets = vec![
        s.traders[0].clone(),
        s.traders[1].clone(),
        s.receiver.clone(),
        s.sender.clone(),
    ];
    wallets.push(s.traders[11].clone());
    let contracts = vec![s.tokens[0].clone(), s.tokens[1].clone()];
    let qs = questions(&wallets, &contracts);
    truth_matches_contracts(&chain, &s, &wallets, &truth).await;
    let first = Instant::now();
    let mut tracker = Tracker::new(qs.clone(), first);
    let ctx = format!("{backend:?}, through faults");
    tracker.until_synced(&api, &truth, &ctx, |_| true).await;
    let t_synced = first.elapsed();
    // Live traffic through the faults, then everything again.
    s.round(&chain, &LIVE, false).await;
    wait_synced(&app.db, &chain, Duration::from_secs(60)).await;
    let truth = Truth::read(&chain).await;
    all_exact(&api, &qs, &truth, &format!("{ctx}, after live traffic")).await;

    let counts = p.counts();
    for k in [
        "fault:delay",
        "fault:429",
        "fault:503",
        "fault:drop",
        "fault:malformed",
        "span_refused",
    ] {
        assert!(
            counts.get(k).copied().unwrap_or(0) > 0,
            "the proxy injected {k}: {counts:?}"
        );
    }
    let mut seen = Vec::new();
    for w in &wallets {
        let n = p.count(&format!("eth_getLogs~{w}"));
        seen.push(n);
        assert!(
            n <= 3 * ref_wallet + 20,
            "{backend:?}: bounded retries for {w}'s history: {n} eth_getLogs, {ref_wallet} \
             without faults"
        );
    }
    for c in &contracts {
        let n = p.count(&format!("eth_getLogs@{c}"));
        seen.push(n);
        assert!(
            n <= 3 * ref_contract + 20,
            "{backend:?}: bounded retries for {c}'s history: {n} eth_getLogs, {ref_contract} \
             without faults"
        );
    }
    let failed: Vec<scope_sync::Model> = scope_rows(&app.db)
        .await
        .into_iter()
        .filter(|r| r.state != "synced")
        .collect();
    assert!(
        failed.is_empty(),
        "{backend:?}: every scope complete: {failed:?}"
    );
    eprintln!(
        "history_on_demand {backend:?}: through faults, SYNCED {:.1}s after the first request; \
         eth_getLogs per scope {seen:?} (fault-free: wallet {ref_wallet}, contract \
         {ref_contract}); {} span refusals",
        t_synced.as_secs_f64(),
        counts.get("span_refused").copied().unwrap_or(0)
    );
    ix.stop().await.expect("the indexer ends cleanly");
    app.cleanup().await;
}

// ---------------------------------------------------------------------------------------------
// (e) A history that fails for good: marked failed, SYNCING, retried after the back-off

async fn a_failed_history_is_retried_after_the_backoff(backend: Backend) {
    const ATTEMPTS: u32 = 3;
    const BACKOFF: Duration = Duration::from_secs(6);
    const RPC_TRIES: u32 = 4;
    let chain = Anvil::start(SMALL.traders + 4, &[]).await;
    let s = Scene::build(&chain, &SMALL, 0xe_0e_0e).await;
    let app = common::spawn(backend).await;
    let api = Api::of(&app);
    let p = Proxy::start(&chain.url, 37).await;
    let ix = Indexer::start(&app.db, &p.url, |c| {
        configure(c);
        c.request_timeout = Duration::from_secs(2);
        c.history_attempts = ATTEMPTS;
        c.history_retry_after = BACKOFF;
        // A short RPC retry budget: the transient failure exhausts its attempts quickly.
        c.retry.max_attempts = RPC_TRIES;
    });
    wait_synced(&app.db, &chain, Duration::from_secs(60)).await;
    let truth = Truth::read(&chain).await;

    // w1: the endpoint answers its history with a JSON-RPC error (permanent); w2: with HTTP 503
    // (transient, but without end); w3: healthy.
    let (w1, w2, w3) = (
        s.traders[0].clone(),
        s.traders[1].clone(),
        s.traders[2].clone(),
    );
    p.fail(Hold::WalletLogs(w1.clone()));
    p.fail_unavailable(Hold::WalletLogs(w2.clone()));
    let first = Instant::now();
    for w in [&w1, &w2, &w3] {
        assert_eq!(
            first_status(&api, &Q::Nfts(w.clone()), Via::Rest).await,
            "SYNCING",
            "first request for {w}"
        );
    }
    let mut failed = Vec::new();
    for (w, reason) in [(&w1, "history unavailable"), (&w2, "503")] {
        let r = wait_scope(&app.db, "wallet", w, SYNC_BOUND, |r| r.state == "failed").await;
        assert!(
            r.error.as_deref().is_some_and(|e| e.contains(reason)),
            "{backend:?}: a failed scope keeps its reason ({reason}): {r:?}"
        );
        assert!(
            r.retry_at
                .is_some_and(|t| t >= r.updated_at + BACKOFF.as_millis() as i64 - 1000),
            "{backend:?}: a retry time after the back-off: {r:?}"
        );
        assert!(
            (1..=ATTEMPTS as i32).contains(&r.attempts),
            "{backend:?}: at most {ATTEMPTS} attempts recorded: {r:?}"
        );
        failed.push(r);
    }
    let t_failed = first.elapsed();
    // Bounded: a permanent error is not retried; HTTP 503 is, under the RPC client's budget,
    // for each of the scope's attempts.
    let (n1, n2) = (
        p.count(&format!("eth_getLogs~{w1}")),
        p.count(&format!("eth_getLogs~{w2}")),
    );
    assert!(
        n1 <= ATTEMPTS as u64 * 4,
        "{backend:?}: {n1} eth_getLogs for a history answered by a JSON-RPC error ({ATTEMPTS} \
         attempts)"
    );
    assert!(
        n2 <= (ATTEMPTS * RPC_TRIES) as u64 * 4,
        "{backend:?}: {n2} eth_getLogs for a history answered by HTTP 503 ({ATTEMPTS} attempts \
         of {RPC_TRIES} tries)"
    );

    // The endpoint heals. During the back-off, every answer depending on a failed scope says
    // SYNCING with true records only, and requests do not retry it.
    p.heal();
    let before = (
        p.count(&format!("eth_getLogs~{w1}")),
        p.count(&format!("eth_getLogs~{w2}")),
    );
    let first_retry = failed
        .iter()
        .filter_map(|r| r.retry_at)
        .min()
        .expect("retry_at");
    let last_retry = failed
        .iter()
        .filter_map(|r| r.retry_at)
        .max()
        .expect("retry_at");
    let mut rounds = 0;
    while now_ms() < first_retry - 2000 {
        for w in [&w1, &w2] {
            for via in [Via::Rest, Via::Gql] {
                for q in [Q::Nfts(w.clone()), Q::WalletTransfers(w.clone())] {
                    assert!(
                        !ask_check(&api, &q, via, &truth, &format!("{backend:?}, failed")).await,
                        "{backend:?}: a failed scope answers SYNCING: {}",
                        describe(&q, via)
                    );
                }
            }
        }
        assert!(
            now_ms() < first_retry,
            "the checks of the back-off ran past it: make BACKOFF longer"
        );
        for w in [&w1, &w2] {
            let r = scope_row(&app.db, "wallet", w).await.expect("row");
            assert_eq!(
                r.state, "failed",
                "{backend:?}: no retry before the back-off ends: {r:?}"
            );
        }
        rounds += 1;
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(
        rounds > 0,
        "requests were made during the back-off ({t_failed:?} to fail)"
    );
    assert_eq!(
        (
            p.count(&format!("eth_getLogs~{w1}")),
            p.count(&format!("eth_getLogs~{w2}"))
        ),
        before,
        "{backend:?}: no history call for a failed scope before its back-off ends"
    );
    // A healthy wallet completed meanwhile.
    wait_synced_answer(
        &api,
        &Q::Nfts(w3.clone()),
        Via::Rest,
        &truth,
        SYNC_BOUND,
        "healthy",
    )
    .await;

    // After the back-off, a request retries each, and it completes.
    while now_ms() <= last_retry + 50 {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let retried = Instant::now();
    for w in [&w1, &w2] {
        for via in [Via::Rest, Via::Gql] {
            for q in [Q::Nfts(w.clone()), Q::WalletTransfers(w.clone())] {
                wait_synced_answer(
                    &api,
                    &q,
                    via,
                    &truth,
                    SYNC_BOUND,
                    &format!("{backend:?}, retried"),
                )
                .await;
            }
        }
        let r = scope_row(&app.db, "wallet", w).await.expect("row");
        assert_eq!(r.state, "synced", "{r:?}");
    }
    assert!(
        p.count(&format!("eth_getLogs~{w1}")) > before.0
            && p.count(&format!("eth_getLogs~{w2}")) > before.1,
        "the retries fetched"
    );
    eprintln!(
        "history_on_demand {backend:?}: failed ({:?} / {:?}) after {n1} / {n2} calls, in \
         {:.1}s; {rounds} rounds of requests during the back-off; retried after it, SYNCED in \
         {:.1}s",
        failed[0].error,
        failed[1].error,
        t_failed.as_secs_f64(),
        retried.elapsed().as_secs_f64()
    );
    ix.stop().await.expect("the indexer ends cleanly");
    app.cleanup().await;
}

// ---------------------------------------------------------------------------------------------
// (f) Many histories at once, writing the same tokens' holdings, beside the live follower

async fn concurrent_histories_of_shared_tokens_stay_exact(backend: Backend) {
    let chain = Anvil::start(SMALL.traders + 4, &[]).await;
    let mut s = Scene::build(&chain, &SMALL, 0xc0_cc_0e).await;
    let app = common::spawn(backend).await;
    let api = Api::of(&app);
    let p = Proxy::start(&chain.url, 41).await;
    // Small ranges: every history is many write transactions, each recomputing the holdings
    // of ERC1155 ids that every wallet moves.
    p.set_max_log_span(Some(20));
    let ix = Indexer::start(&app.db, &p.url, |c| {
        configure(c);
        c.history_workers = 8;
    });
    wait_synced(&app.db, &chain, Duration::from_secs(60)).await;
    let mut wallets: Vec<String> = s.traders[..10].to_vec();
    wallets.push(s.receiver.clone());
    wallets.push(s.sender.clone());
    let first = Instant::now();
    let watcher = ScopeErrors::watch(&app.db);
    for w in &wallets {
        assert_eq!(
            first_status(&api, &Q::Nfts(w.clone()), Via::Rest).await,
            "SYNCING",
            "{backend:?}: first request for {w}"
        );
    }
    // Live traffic while they are fetched.
    s.round(&chain, &LIVE, false).await;
    wait_synced(&app.db, &chain, Duration::from_secs(60)).await;
    let truth = Truth::read(&chain).await;
    let mut qs = Vec::new();
    for via in [Via::Rest, Via::Gql] {
        qs.extend(wallets.iter().map(|w| (Q::Nfts(w.clone()), via)));
    }
    let mut tracker = Tracker::new(qs.clone(), first);
    tracker
        .until_synced(
            &api,
            &truth,
            &format!("{backend:?}, concurrent histories"),
            |_| true,
        )
        .await;
    let t_synced = first.elapsed();
    s.round(&chain, &LIVE, false).await;
    wait_synced(&app.db, &chain, Duration::from_secs(60)).await;
    let truth = Truth::read(&chain).await;
    truth_matches_contracts(&chain, &s, &wallets, &truth).await;
    all_exact(
        &api,
        &qs,
        &truth,
        &format!("{backend:?}, concurrent histories, after live traffic"),
    )
    .await;
    let writes: u64 = wallets
        .iter()
        .map(|w| p.count(&format!("eth_getLogs~{w}")))
        .sum();
    let errors = watcher.stop().await;
    eprintln!(
        "history_on_demand {backend:?}: {} concurrent wallet histories ({writes} eth_getLogs) \
         SYNCED in {:.1}s",
        wallets.len(),
        t_synced.as_secs_f64()
    );
    assert!(
        errors.is_empty(),
        "{backend:?}: history attempts failed with a fault-free endpoint (concurrent writers \
         raced on the same rows?): {errors:?}"
    );
    ix.stop().await.expect("the indexer ends cleanly");
    app.cleanup().await;
}

crate::backend_tests!(
    every_synced_answer_holds_the_whole_history,
    fifty_first_requests_fetch_one_history,
    killed_during_a_wallet_history_resumes_exactly,
    a_reorg_while_histories_are_fetched,
    faults_leave_histories_exact,
    a_failed_history_is_retried_after_the_backoff,
    concurrent_histories_of_shared_tokens_stay_exact
);
