//! The chain side of the soak: the contracts, the wallets, and a round of live traffic every
//! few seconds (ERC20 transfers, ERC721 moves, mints and burns, ERC1155 moves), as an operator's
//! chain would have.

use std::collections::{BTreeMap, BTreeSet};

use crate::anvil::{
    addr, calldata, mintBatchCall, mintCall, mintManyCall, multi_ctor, nft_burn_calldata, nft_ctor,
    safeTransferFromCall, token_ctor, transferCall, transferFromCall, u, Anvil, Rng,
};

/// ERC721 ids minted to each wallet at the start.
const NFTS_PER_WALLET: u64 = 3;
/// ERC1155 ids, minted to every wallet at the start.
const MULTI_IDS: [u64; 3] = [1, 2, 3];

/// What is deployed, who holds what, and what was sent.
pub struct World {
    /// The deployer, which mints.
    pub owner: String,
    /// The wallets that trade (and that the load asks about).
    pub wallets: Vec<String>,
    /// Two ERC20 tokens.
    pub tokens: Vec<String>,
    /// An ERC721 collection.
    pub nft: String,
    /// An ERC1155 collection.
    pub multi: String,
    /// Every ERC721 id ever minted (burned ones included).
    pub nft_ids: BTreeSet<u64>,
    /// ERC721 owners as sent (burned ids removed).
    owners721: BTreeMap<u64, String>,
    /// ERC1155 balances as sent.
    bal1155: BTreeMap<(String, u64), u64>,
    next_id: u64,
    rounds: u64,
    /// Transactions sent, and how many of them reverted.
    pub sent: u64,
    pub reverted: u64,
    rng: Rng,
}

impl World {
    /// Deploys the contracts and gives every one of `wallets` tokens, NFTs and ERC1155 ids.
    pub async fn deploy(chain: &Anvil, wallets: usize, seed: u64) -> World {
        let owner = chain.accounts[0].clone();
        let wallets: Vec<String> = chain.accounts[1..=wallets].to_vec();
        let tokens = vec![
            chain
                .deploy("TestToken", token_ctor("Alpha", "ALP", 18))
                .await,
            chain
                .deploy("TestToken", token_ctor("Beta", "BET", 6))
                .await,
        ];
        // Metadata URLs on a closed loopback port: the off-chain workers try them and fail
        // fast, as they would against a host that is down.
        let nft = chain
            .deploy(
                "TestNFT",
                nft_ctor("Nifty", "NFT", "http://127.0.0.1:9/nft/"),
            )
            .await;
        let multi = chain
            .deploy(
                "TestMulti",
                multi_ctor("http://127.0.0.1:9/multi/{id}.json"),
            )
            .await;
        let mut w = World {
            owner,
            wallets,
            tokens,
            nft,
            multi,
            nft_ids: BTreeSet::new(),
            owners721: BTreeMap::new(),
            bal1155: BTreeMap::new(),
            next_id: 1,
            rounds: 0,
            sent: 0,
            reverted: 0,
            rng: Rng(seed | 1),
        };
        let mut txs = Vec::new();
        for wallet in w.wallets.clone() {
            for t in w.tokens.clone() {
                txs.push((
                    w.owner.clone(),
                    t,
                    calldata(mintCall {
                        to: addr(&wallet),
                        amount: u(1_000_000_000_000_000_000),
                    }),
                ));
            }
            txs.push(w.mint_nfts(&wallet, NFTS_PER_WALLET));
            txs.push((
                w.owner.clone(),
                w.multi.clone(),
                calldata(mintBatchCall {
                    to: addr(&wallet),
                    ids: MULTI_IDS.iter().map(|i| u(*i)).collect(),
                    amounts: MULTI_IDS.iter().map(|_| u(10)).collect(),
                }),
            ));
            for id in MULTI_IDS {
                w.bal1155.insert((wallet.clone(), id), 10);
            }
        }
        // Blocks are mined by the soak (`send`): with automine, a batch's transactions race
        // for nonces.
        chain.set_automine(false).await;
        w.send(chain, &txs).await;
        w
    }

    fn mint_nfts(&mut self, to: &str, n: u64) -> (String, String, Vec<u8>) {
        let start = self.next_id;
        self.next_id += n;
        for id in start..start + n {
            self.nft_ids.insert(id);
            self.owners721.insert(id, to.to_string());
        }
        (
            self.owner.clone(),
            self.nft.clone(),
            calldata(mintManyCall {
                to: addr(to),
                start: u(start),
                n: u(n),
            }),
        )
    }

    fn other_wallet(&mut self, not: &str) -> String {
        loop {
            let w = self.wallets[self.rng.index(self.wallets.len())].clone();
            if w != not {
                return w;
            }
        }
    }

    /// One round: `erc20` ERC20 transfers, three ERC721 moves, a mint, a burn every third
    /// round, two ERC1155 moves; sent as one batch (automine: a block per transaction).
    pub async fn round(&mut self, chain: &Anvil, erc20: usize) {
        let mut txs = Vec::new();
        for _ in 0..erc20 {
            let from = self.wallets[self.rng.index(self.wallets.len())].clone();
            let to = self.other_wallet(&from);
            let token = self.tokens[self.rng.index(self.tokens.len())].clone();
            let amount = 1 + self.rng.below(1_000_000);
            txs.push((
                from,
                token,
                calldata(transferCall {
                    to: addr(&to),
                    amount: u(amount),
                }),
            ));
        }
        // A block may order one batch's transactions of different senders otherwise than
        // sent: a token moved twice in one round could be moved by its next owner first. So a
        // round touches each ERC721 id, and each ERC1155 (holder, id), at most once.
        let held: Vec<u64> = self.owners721.keys().copied().collect();
        let mut touched = BTreeSet::new();
        for _ in 0..3 {
            let id = held[self.rng.index(held.len())];
            if !touched.insert(id) {
                continue;
            }
            let Some(from) = self.owners721.get(&id).cloned() else {
                continue;
            };
            let to = self.other_wallet(&from);
            txs.push((
                from.clone(),
                self.nft.clone(),
                calldata(transferFromCall {
                    from: addr(&from),
                    to: addr(&to),
                    id: u(id),
                }),
            ));
            self.owners721.insert(id, to);
        }
        let to = self.wallets[self.rng.index(self.wallets.len())].clone();
        txs.push(self.mint_nfts(&to, 1));
        self.rounds += 1;
        if self.rounds % 3 == 0 {
            let id = held[self.rng.index(held.len())];
            if touched.insert(id) {
                if let Some(holder) = self.owners721.remove(&id) {
                    txs.push((holder, self.nft.clone(), nft_burn_calldata(id)));
                }
            }
        }
        let mut touched = BTreeSet::new();
        for _ in 0..2 {
            let held: Vec<(String, u64)> = self
                .bal1155
                .iter()
                .filter(|(k, b)| **b > 0 && !touched.contains(*k))
                .map(|(k, _)| k.clone())
                .collect();
            if held.is_empty() {
                break;
            }
            let (from, id) = held[self.rng.index(held.len())].clone();
            let to = self.other_wallet(&from);
            let amount = 1 + self.rng.below(self.bal1155[&(from.clone(), id)]);
            txs.push((
                from.clone(),
                self.multi.clone(),
                calldata(safeTransferFromCall {
                    from: addr(&from),
                    to: addr(&to),
                    id: u(id),
                    amount: u(amount),
                    data: Default::default(),
                }),
            ));
            touched.insert((from.clone(), id));
            touched.insert((to.clone(), id));
            *self.bal1155.entry((from, id)).or_default() -= amount;
            *self.bal1155.entry((to, id)).or_default() += amount;
        }
        self.send(chain, &txs).await;
    }

    /// Sends a batch, mines it (a block at a time until the pool is empty, then a few empty
    /// blocks, so that the head moves as on a live chain) and counts what reverted (the truth
    /// check reads the chain, not this model, so a revert only makes the traffic smaller).
    async fn send(&mut self, chain: &Anvil, txs: &[(String, String, Vec<u8>)]) {
        let hashes = chain.send_batch(txs).await;
        chain.mine_pool(1).await;
        chain.mine(1 + self.rng.below(4)).await;
        self.sent += hashes.len() as u64;
        for h in &hashes {
            let r = chain
                .rpc("eth_getTransactionReceipt", serde_json::json!([h]))
                .await;
            if r["status"] != "0x1" {
                self.reverted += 1;
            }
        }
    }
}
