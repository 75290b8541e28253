//! The harness of the history-on-demand suite (`tests/chain/history_on_demand.rs`): the scene
//! of transfers built on anvil before the indexer starts, the truth decoded from every log of
//! the chain, the questions asked over REST and GraphQL with their checks, and the servers and
//! scope rows the scenarios watch.
#![allow(dead_code)]
use super::anvil;
use super::common;
use super::proxy;

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use super::indexer::{chain_1155_balances, chain_721_owners};
use alloy::primitives::{Bytes, U256};
use anvil::*;
use common::{gql_list, gql_str, text, TestApp};
use futures_util::future::join_all;
use proxy::LogCall;
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter};
use serde_json::{json, Value};
use tokenql::entity::{chain_state, scope_sync};
use tokio::sync::oneshot;

pub const ZERO: &str = "0x0000000000000000000000000000000000000000";
/// From a scope's first request to `SYNCED` (debug build, two shared cores, three backends).
pub const SYNC_BOUND: Duration = Duration::from_secs(60);

// ---------------------------------------------------------------------------------------------
// The scene: a history built before the indexer starts, then live rounds

/// How much traffic a scene has.
#[derive(Debug, Clone, Copy)]
pub struct Size {
    /// Wallets that send and receive (besides the receiver-only, sender-only and idle ones).
    pub traders: usize,
    pub rounds: usize,
    /// Per round: plain ERC20 transfers, `spray` transactions (8 transfers each), ERC20 burns,
    /// ERC721 moves (transfers and burns), ERC1155 transfers (single and batch).
    pub erc20: usize,
    pub sprays: usize,
    pub burns: usize,
    pub nft_moves: usize,
    pub multi_moves: usize,
    /// Empty blocks after each round: a longer history, in more `eth_getLogs` ranges.
    pub gap: u64,
    pub block_gas: u64,
}

/// The main scenario: thousands of transfers among 57 wallets.
pub const MAIN: Size = Size {
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
pub const SMALL: Size = Size {
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
pub const LIVE: Size = Size {
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

pub const MULTI_IDS: u64 = 5;

pub struct Scene {
    pub owner: String,
    /// ERC20: [the busiest, another, one active only before the start block].
    pub tokens: Vec<String>,
    pub nft: String,
    pub multi: String,
    /// Wallets that send and receive; the first two are the busiest.
    pub traders: Vec<String>,
    /// Receives transfers and NFTs, never sends anything (and gets no mint).
    pub receiver: String,
    /// Receives nothing but its mints; sends ERC20s and NFTs.
    pub sender: String,
    /// Never touched.
    pub idle: String,
    /// ERC721 id -> owner, as the scene's transactions leave them.
    pub owners: BTreeMap<u64, String>,
    pub next_id: u64,
    pub rng: Rng,
    pub txs: Vec<(String, String, Vec<u8>)>,
}

impl Scene {
    /// Deploys the contracts and builds the history: mints, then `size.rounds` rounds.
    pub async fn build(chain: &Anvil, size: &Size, seed: u64) -> Scene {
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

    pub fn push(&mut self, from: &str, to: &str, data: Vec<u8>) {
        self.txs.push((from.to_string(), to.to_string(), data));
    }

    pub fn mint_721(&mut self, to: &str, n: u64) {
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

    pub fn busy(&self) -> [String; 2] {
        [self.traders[0].clone(), self.traders[1].clone()]
    }

    pub fn trader(&mut self) -> String {
        self.traders[self.rng.index(self.traders.len())].clone()
    }

    /// A sender: the busiest wallets 30 % of the time, the sender-only wallet 6 %.
    pub fn pick_sender(&mut self) -> String {
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
    pub fn pick_recipient(&mut self, not: &str) -> String {
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
    pub async fn round(&mut self, chain: &Anvil, size: &Size, history: bool) {
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
    pub async fn flush(&mut self, chain: &Anvil) {
        let txs = std::mem::take(&mut self.txs);
        let hashes = chain.send_batch(&txs).await;
        chain.mine_pool(3).await;
        assert_succeeded(chain, &hashes).await;
    }

    /// A one-transaction block (automine off).
    pub async fn block_with(&self, chain: &Anvil, from: &str, to: &str, data: Vec<u8>) {
        let h = chain.send(from, to, data).await;
        chain.mine(1).await;
        assert_succeeded(chain, &[h]).await;
    }

    /// An ERC721 id `w` holds now.
    pub fn held_by(&self, w: &str) -> u64 {
        *self
            .owners
            .iter()
            .find(|(_, o)| *o == w)
            .map(|(id, _)| id)
            .unwrap_or_else(|| panic!("{w} holds an ERC721"))
    }
}

pub async fn assert_succeeded(chain: &Anvil, hashes: &[String]) {
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
pub struct Erc20 {
    pub contract: String,
    pub from: String,
    pub to: String,
    pub value: String,
    pub block: u64,
}

#[derive(Debug, Default)]
pub struct Truth {
    /// (tx hash, log index) -> transfer.
    pub erc20: BTreeMap<(String, u64), Erc20>,
    /// wallet -> (contract, token id) -> amount.
    pub nfts: BTreeMap<String, BTreeMap<(String, String), String>>,
    /// wallet -> NFT transfer rows (ERC721, and per id of ERC1155) it sent / received.
    pub nft_sent: BTreeMap<String, usize>,
    pub nft_received: BTreeMap<String, usize>,
    pub erc721_burns: usize,
    pub singles: usize,
    pub batches: usize,
}

pub fn topic_sig(s: &str) -> String {
    format!("{:#x}", alloy::primitives::keccak256(s.as_bytes()))
}

pub fn word_addr(t: &str) -> String {
    format!("0x{}", &t[t.len() - 40..]).to_lowercase()
}

pub fn quantity(v: &Value) -> u64 {
    let s = v.as_str().unwrap_or_else(|| panic!("a quantity: {v}"));
    u64::from_str_radix(s.trim_start_matches("0x"), 16).expect("hex quantity")
}

pub fn words(data: &str) -> Vec<U256> {
    let h = data.trim_start_matches("0x");
    (0..h.len() / 64)
        .map(|i| U256::from_str_radix(&h[64 * i..64 * i + 64], 16).expect("word"))
        .collect()
}

impl Truth {
    /// Reads every transfer log from block 0 to the head (the chain must be still).
    pub async fn read(chain: &Anvil) -> Truth {
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

    pub fn want(&self, q: &Q) -> Records {
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
    pub fn balances(&self, w: &str) -> Records {
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

    pub fn transfers(&self, keep: impl Fn(&Erc20) -> bool) -> Records {
        self.erc20
            .iter()
            .filter(|(_, t)| keep(t))
            .map(|((tx, li), t)| (transfer_key(tx, *li), transfer_value(t)))
            .collect()
    }

    /// Transfers of `w` before block `start`.
    pub fn erc20_before(&self, w: &str, start: u64) -> usize {
        self.erc20
            .values()
            .filter(|t| t.block < start && (t.from == w || t.to == w))
            .count()
    }

    pub fn erc20_sent(&self, w: &str) -> usize {
        self.erc20.values().filter(|t| t.from == w).count()
    }

    pub fn erc20_received(&self, w: &str, from_zero: bool) -> usize {
        self.erc20
            .values()
            .filter(|t| t.to == w && (from_zero || t.from != ZERO))
            .count()
    }
}

pub fn transfer_key(tx: &str, li: u64) -> String {
    format!("{}:{li}", tx.to_lowercase())
}

pub fn transfer_value(t: &Erc20) -> String {
    format!(
        "{} {} -> {} {} @{}",
        t.contract, t.from, t.to, t.value, t.block
    )
}

/// The truth decoded from the logs agrees with the contracts' own state (`ownerOf`,
/// `balanceOf`) for these wallets' NFTs.
pub async fn truth_matches_contracts(chain: &Anvil, s: &Scene, wallets: &[String], truth: &Truth) {
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
pub type Records = BTreeMap<String, String>;

/// One question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Q {
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
pub enum Via {
    Rest,
    Gql,
}

/// A server to ask: the harness's, or another on the same database.
#[derive(Clone)]
pub struct Api {
    pub base: String,
    pub key: String,
    pub client: reqwest::Client,
}

impl Api {
    pub fn of(app: &TestApp) -> Api {
        Api {
            base: app.base.clone(),
            key: app.key.clone(),
            client: app.client.clone(),
        }
    }

    pub async fn get_with_headers(&self, path: &str) -> (reqwest::header::HeaderMap, Value) {
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

    pub async fn gql(&self, query: &str) -> Value {
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
pub struct Answer {
    pub statuses: Vec<String>,
    pub records: Records,
    /// Keys returned twice.
    pub repeated: Vec<String>,
}

impl Answer {
    pub fn synced(&self) -> bool {
        self.statuses.iter().all(|s| s == "SYNCED")
    }

    pub fn add(&mut self, k: String, v: String) {
        if let Some(prev) = self.records.insert(k.clone(), v.clone()) {
            self.repeated.push(format!("{k}: {prev} / {v}"));
        }
    }

    pub fn status(&mut self, what: &str, s: &Value) {
        let s = s.as_str().unwrap_or_default().to_string();
        assert!(
            s == "SYNCED" || s == "SYNCING",
            "{what}: status must be SYNCED or SYNCING, got {s:?}"
        );
        self.statuses.push(s);
    }
}

pub fn rest_path(q: &Q) -> String {
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

pub fn gql_query(q: &Q, after: Option<&str>) -> String {
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
pub fn header_status(headers: &reqwest::header::HeaderMap) -> Value {
    json!(headers
        .get("x-sync-status")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default())
}

pub fn lower(v: &Value) -> String {
    text(v).unwrap_or_default().to_lowercase()
}

/// One REST record or GraphQL node as (key, value); NFTs must belong to the wallet asked.
pub fn record(what: &str, q: &Q, via: Via, r: &Value) -> (String, String) {
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

pub fn describe(q: &Q, via: Via) -> String {
    match via {
        Via::Rest => format!("REST {}", rest_path(q)),
        Via::Gql => format!("GraphQL {q:?}"),
    }
}

/// Asks `q` and follows every page.
pub async fn ask(api: &Api, q: &Q, via: Via) -> Answer {
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
pub async fn first_status(api: &Api, q: &Q, via: Via) -> String {
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

pub fn diff(want: &Records, got: &Records) -> String {
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
pub fn check(what: &str, a: &Answer, want: &Records) -> bool {
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
pub async fn ask_check(api: &Api, q: &Q, via: Via, truth: &Truth, ctx: &str) -> bool {
    let a = ask(api, q, via).await;
    check(&format!("{ctx}: {}", describe(q, via)), &a, &truth.want(q))
}

/// Every question about these wallets and contracts, both ways.
pub fn questions(wallets: &[String], contracts: &[String]) -> Vec<(Q, Via)> {
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
pub struct Tracker {
    pub items: Vec<(Q, Via, Option<Duration>)>,
    pub since: Instant,
    pub polls: usize,
}

impl Tracker {
    pub fn new(qs: Vec<(Q, Via)>, since: Instant) -> Tracker {
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
    pub async fn poll(&mut self, api: &Api, truth: &Truth, ctx: &str) -> Vec<(Q, Via)> {
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
    pub async fn until_synced(
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
pub async fn all_exact(api: &Api, qs: &[(Q, Via)], truth: &Truth, ctx: &str) {
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
pub async fn wait_synced_answer(
    api: &Api,
    q: &Q,
    via: Via,
    truth: &Truth,
    limit: Duration,
    ctx: &str,
) {
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

pub async fn scope_rows(db: &DatabaseConnection) -> Vec<scope_sync::Model> {
    scope_sync::Entity::find()
        .all(db)
        .await
        .expect("scope_sync rows")
}

pub async fn scope_row(
    db: &DatabaseConnection,
    kind: &str,
    address: &str,
) -> Option<scope_sync::Model> {
    let rows = scope_sync::Entity::find()
        .filter(scope_sync::Column::Scope.eq(kind))
        .filter(
            scope_sync::Column::Address
                .eq(tokenql::types::Address::parse(address).expect("an address")),
        )
        .all(db)
        .await
        .expect("scope_sync");
    assert!(rows.len() <= 1, "one row per scope: {rows:?}");
    rows.into_iter().next()
}

pub async fn wait_scope(
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
pub struct ScopeErrors {
    pub stop: oneshot::Sender<()>,
    pub task: tokio::task::JoinHandle<BTreeSet<String>>,
}

impl ScopeErrors {
    pub fn watch(db: &DatabaseConnection) -> ScopeErrors {
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

    pub async fn stop(self) -> BTreeSet<String> {
        let _ = self.stop.send(());
        self.task.await.expect("watcher")
    }
}

/// The live start block, as the indexer stored it.
pub async fn live_start(db: &DatabaseConnection) -> u64 {
    chain_state::Entity::find_by_id(1i64)
        .one(db)
        .await
        .expect("chain_state")
        .and_then(|s| s.start_block)
        .expect("a start block") as u64
}

pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_millis() as i64
}

/// The history calls of one wallet are one pass over `[0, target)`: per filter, ranges that
/// start at 0, follow each other without gap or overlap, and end at `target - 1`.
pub fn assert_one_pass(what: &str, calls: &[LogCall], target: u64) {
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

pub struct Server {
    pub api: Api,
    pub stop: Option<oneshot::Sender<()>>,
    pub task: tokio::task::JoinHandle<std::io::Result<()>>,
}

/// An API server of its own (its own query service and caches) on `db`.
pub async fn serve(db: &DatabaseConnection, key: &str) -> Server {
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
    pub async fn stop(mut self) {
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

pub fn configure(c: &mut tokenql::indexer::ChainConfig) {
    // The default users get: the live index starts at the head at first start.
    c.start_block = None;
    c.request_timeout = Duration::from_secs(10);
}

// ---------------------------------------------------------------------------------------------
// The main scenario
