//! Crash safety of the indexer, black-box and on every backend.
//!
//! A chain is built on anvil: ~32k cheap `emitTransfers` logs interleaved with real ERC20
//! transfers, ERC721 mints, transfers and burns, and ERC1155 batch mints, single and batch
//! transfers, over ~220 blocks. The real `tokenql` binary indexes it into a fresh database with a
//! tiny `--max-log-range` (about a hundred write transactions), is SIGKILLed at pseudo-random
//! moments spread over the backfill and restarted after each kill, then left to finish. A digest
//! of every indexed table must equal the digest a clean, uninterrupted run writes into another
//! fresh database of the same backend.
//!
//! Then two `tokenql index` processes follow the same chain into a third database: one leads
//! (it holds the chain's lease), the other stands by. The leader is SIGKILLed three times
//! mid-ingest (a fresh standby started after each kill); each time the standby must store a
//! range of its own within a few seconds, `tokenql status` must show the lease's hand-overs,
//! and the final digest must equal the clean run's.
//!
//! Every block after the deployments carries transfers, so the stored block headers (blocks with
//! logs, range ends, the last blocks before the head) do not depend on where ranges were cut.

use crate::support::anvil;
use crate::support::common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::{Duration, Instant};

use crate::support::indexer::process::{tail, tokenql_cmd, FreshDb};
use alloy::primitives::Bytes;
use anvil::*;
use common::Backend;
use futures_util::TryStreamExt;
use sea_orm::{
    ColumnTrait, ConnectionTrait, DatabaseBackend, DatabaseConnection, EntityName, EntityTrait,
    Order, PaginatorTrait, QueryFilter, QueryOrder, Select, Statement,
};
use serde_json::{json, Value};
use tokenql::entity::{
    address_label, block, chain_state, contract, erc20_transfer, nft_holding, nft_token,
    nft_transfer, scope_sync,
};

/// Kills per crashed run.
const KILLS: usize = 10;
/// `--max-log-range`: tiny, so that the backfill is many write transactions.
const MAX_LOG_RANGE: u64 = 2;
/// Wallets trading real tokens.
const WALLETS: usize = 20;
/// Rounds of traffic.
const ROUNDS: usize = 8;
/// Per round: `emitTransfers` transactions, and logs per transaction.
const SPAM_TXS: usize = 26;
const SPAM_LOGS: u64 = 150;
/// Per round: attempted real moves.
const ERC20_TXS: usize = 120;
const NFT_TXS: usize = 20;
const MULTI_TXS: usize = 20;
/// Blocks without transfers: genesis, and a deployment plus an empty block per contract.
const QUIET_BLOCKS: u64 = 1 + 2 * 4;
/// Block gas limit while traffic is mined: two `emitTransfers` transactions (sent with a 500k
/// gas limit each) per block, or a few smaller ones, so that the chain has many blocks.
const BLOCK_GAS: u64 = 1_000_000;
/// Every transaction uses at least 21,000 of a block's 1,000,000 gas: no block holds more.
const MAX_TXS_PER_BLOCK: u64 = BLOCK_GAS / 21_000;
/// The leader lease of the killed runs: a restart takes over this long after a kill.
const KILL_LEASE_MS: u64 = 400;
/// The leader lease of the failover run: a standby takes over this long after the leader dies.
const FAILOVER_LEASE_MS: u64 = 1_000;
/// Leaders SIGKILLed in the failover run.
const FAILOVERS: usize = 3;
/// How long a standby may take to store a range after its leader was killed.
const TAKEOVER_LIMIT: Duration = Duration::from_secs(6);
/// How long one indexer run may take to get where it is waited for.
const RUN_LIMIT: Duration = Duration::from_secs(90);

/// One backend at a time: two shared cores are better spent on one run than on three.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

// ---------------------------------------------------------------------------------------------
// The chain

/// What the built chain holds, counted while building it.
#[derive(Debug, Default)]
struct Built {
    head: u64,
    erc20_logs: u64,
    /// One per ERC721 `Transfer`, per `TransferSingle`, per id of a `TransferBatch`.
    nft_rows: u64,
    /// Distinct (contract, token id).
    tokens: BTreeSet<(String, u64)>,
    burns: u64,
}

/// The chain being built, and the balances its next transactions may spend.
struct Traffic<'a> {
    chain: &'a Anvil,
    owner: String,
    wallets: Vec<String>,
    toks: [String; 2],
    nft: String,
    multi: String,
    /// (token, wallet) -> balance.
    erc20: BTreeMap<(usize, usize), u64>,
    /// ERC721 id -> owner.
    owners: BTreeMap<u64, usize>,
    /// (wallet, ERC1155 id) -> balance.
    multi_bal: BTreeMap<(usize, u64), u64>,
    next_nft: u64,
    next_spam: u64,
    txs: Vec<(String, String, Vec<u8>)>,
    built: Built,
}

impl Traffic<'_> {
    fn send(&mut self, from: &str, to: &str, data: Vec<u8>) {
        self.txs.push((from.to_string(), to.to_string(), data));
    }

    fn mint_721(&mut self, to: usize, n: u64) {
        let (owner, nft, start) = (self.owner.clone(), self.nft.clone(), self.next_nft);
        let data = calldata(mintManyCall {
            to: addr(&self.wallets[to]),
            start: u(start),
            n: u(n),
        });
        self.send(&owner, &nft, data);
        for id in start..start + n {
            self.owners.insert(id, to);
            self.built.tokens.insert((nft.clone(), id));
        }
        self.next_nft += n;
        self.built.nft_rows += n;
    }

    /// Credits arrive after the round: a transaction never depends on another of its round.
    fn mint_1155(
        &mut self,
        to: usize,
        ids: &[u64],
        amount: u64,
        credits: &mut Vec<(usize, u64, u64)>,
    ) {
        let (owner, multi) = (self.owner.clone(), self.multi.clone());
        let data = calldata(mintBatchCall {
            to: addr(&self.wallets[to]),
            ids: ids.iter().map(|i| u(*i)).collect(),
            amounts: ids.iter().map(|_| u(amount)).collect(),
        });
        self.send(&owner, &multi, data);
        for id in ids {
            credits.push((to, *id, amount));
            self.built.tokens.insert((multi.clone(), *id));
        }
        self.built.nft_rows += ids.len() as u64;
    }

    /// Sends the pending transactions in a shuffled order, mines them and checks them.
    async fn flush(&mut self, rng: &mut Rng) {
        let mut txs = std::mem::take(&mut self.txs);
        rng.shuffle(&mut txs);
        let hashes = self.chain.send_batch(&txs).await;
        mine_pool(self.chain, &hashes).await;
    }

    async fn mints(&mut self, rng: &mut Rng) {
        let mut credits = Vec::new();
        for w in 0..WALLETS {
            for t in 0..2 {
                let v = 1_000_000 + rng.below(1_000_000);
                let (owner, tok) = (self.owner.clone(), self.toks[t].clone());
                let data = calldata(mintCall {
                    to: addr(&self.wallets[w]),
                    amount: u(v),
                });
                self.send(&owner, &tok, data);
                self.erc20.insert((t, w), v);
                self.built.erc20_logs += 1;
            }
            self.mint_721(w, 5);
            self.mint_1155(w, &[1, 2, 3, 4, 5], 10, &mut credits);
        }
        self.flush(rng).await;
        for (w, id, a) in credits {
            *self.multi_bal.entry((w, id)).or_default() += a;
        }
    }

    /// One round: every transaction spends only what its sender held before the round and
    /// moves each NFT at most once, so all succeed in whatever order they are mined.
    async fn round(&mut self, round: usize, rng: &mut Rng) {
        let owner = self.owner.clone();
        for _ in 0..SPAM_TXS {
            let (tok, start) = (self.toks[0].clone(), self.next_spam);
            let data = calldata(emitTransfersCall {
                start: u(start),
                n: u(SPAM_LOGS),
            });
            self.send(&owner, &tok, data);
            self.next_spam += SPAM_LOGS;
            self.built.erc20_logs += SPAM_LOGS;
        }

        let mut spent20: BTreeMap<(usize, usize), u64> = BTreeMap::new();
        let mut credits20 = Vec::new();
        for _ in 0..ERC20_TXS {
            let (t, from, to) = (rng.index(2), rng.index(WALLETS), rng.index(WALLETS));
            let have = self.erc20[&(t, from)] - spent20.get(&(t, from)).copied().unwrap_or(0);
            if have < 10 {
                continue;
            }
            let v = 1 + rng.below(have / 4);
            *spent20.entry((t, from)).or_default() += v;
            credits20.push((t, to, v));
            let (sender, tok) = (self.wallets[from].clone(), self.toks[t].clone());
            let data = calldata(transferCall {
                to: addr(&self.wallets[to]),
                amount: u(v),
            });
            self.send(&sender, &tok, data);
            self.built.erc20_logs += 1;
        }

        let ids: Vec<u64> = self.owners.keys().copied().collect();
        let mut moved = BTreeSet::new();
        for _ in 0..NFT_TXS {
            let id = ids[rng.index(ids.len())];
            if !moved.insert(id) {
                continue;
            }
            let from = self.owners[&id];
            let (sender, nft) = (self.wallets[from].clone(), self.nft.clone());
            if round > 0 && rng.below(5) == 0 {
                self.send(&sender, &nft, nft_burn_calldata(id));
                self.owners.remove(&id);
                self.built.burns += 1;
            } else {
                let to = rng.index(WALLETS);
                let data = calldata(transferFromCall {
                    from: addr(&sender),
                    to: addr(&self.wallets[to]),
                    id: u(id),
                });
                self.send(&sender, &nft, data);
                self.owners.insert(id, to);
            }
            self.built.nft_rows += 1;
        }
        self.mint_721(rng.index(WALLETS), 3);

        let mut spent: BTreeMap<(usize, u64), u64> = BTreeMap::new();
        let mut credits = Vec::new();
        let keys: Vec<(usize, u64)> = self.multi_bal.keys().copied().collect();
        for _ in 0..MULTI_TXS {
            let (from, first) = keys[rng.index(keys.len())];
            let avail = |k: &(usize, u64), spent: &BTreeMap<(usize, u64), u64>| {
                self.multi_bal[k] - spent.get(k).copied().unwrap_or(0)
            };
            let batch = rng.below(3) == 0;
            let ids: Vec<u64> = keys
                .iter()
                .filter(|k| k.0 == from && (batch || k.1 == first) && avail(k, &spent) >= 2)
                .map(|k| k.1)
                .take(3)
                .collect();
            if ids.is_empty() {
                continue;
            }
            let to = rng.index(WALLETS);
            let mut amounts = Vec::new();
            for id in &ids {
                let a = 1 + rng.below(avail(&(from, *id), &spent) / 2);
                *spent.entry((from, *id)).or_default() += a;
                credits.push((to, *id, a));
                amounts.push(a);
            }
            let (sender, recipient) = (addr(&self.wallets[from]), addr(&self.wallets[to]));
            let data = if ids.len() > 1 || rng.below(2) == 0 {
                calldata(safeBatchTransferFromCall {
                    from: sender,
                    to: recipient,
                    ids: ids.iter().map(|i| u(*i)).collect(),
                    amounts: amounts.iter().map(|a| u(*a)).collect(),
                    data: Bytes::new(),
                })
            } else {
                calldata(safeTransferFromCall {
                    from: sender,
                    to: recipient,
                    id: u(ids[0]),
                    amount: u(amounts[0]),
                    data: Bytes::new(),
                })
            };
            let (from_s, multi) = (self.wallets[from].clone(), self.multi.clone());
            self.send(&from_s, &multi, data);
            self.built.nft_rows += ids.len() as u64;
        }
        // A batch mint bringing a new id each round.
        let new_ids: Vec<u64> = (1..=6 + round as u64).collect();
        self.mint_1155(rng.index(WALLETS), &new_ids, 3, &mut credits);

        self.flush(rng).await;
        for (k, v) in spent20 {
            *self.erc20.get_mut(&k).expect("balance") -= v;
        }
        for (t, w, v) in credits20 {
            *self.erc20.entry((t, w)).or_default() += v;
        }
        for (k, a) in spent {
            *self.multi_bal.get_mut(&k).expect("balance") -= a;
        }
        for (w, id, a) in credits {
            *self.multi_bal.entry((w, id)).or_default() += a;
        }
    }
}

/// Mines the pool empty without ever mining an empty block, then checks every receipt.
async fn mine_pool(chain: &Anvil, hashes: &[String]) {
    loop {
        let pool = chain.rpc("txpool_status", json!([])).await;
        let (pending, queued) = (quantity(&pool["pending"]), quantity(&pool["queued"]));
        if pending == 0 {
            assert_eq!(queued, 0, "transactions stuck in the pool");
            break;
        }
        chain.mine((pending / MAX_TXS_PER_BLOCK).max(1)).await;
    }
    let client = {
        tokenql::tls::ensure_crypto_provider();
        reqwest::Client::new()
    };
    for chunk in hashes.chunks(500) {
        let body: Vec<Value> = chunk
            .iter()
            .map(|h| json!({"jsonrpc": "2.0", "id": 1, "method": "eth_getTransactionReceipt", "params": [h]}))
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
        for r in &receipts {
            assert_eq!(r["result"]["status"], "0x1", "a transaction failed: {r}");
        }
    }
}

fn quantity(v: &Value) -> u64 {
    u64::from_str_radix(v.as_str().unwrap_or("0x0").trim_start_matches("0x"), 16).unwrap_or(0)
}

/// Builds the chain: the deployments, the mints, then rounds of traffic.
async fn build_chain(chain: &Anvil, rng: &mut Rng) -> Built {
    let toks = [
        chain
            .deploy("TestToken", token_ctor("Alpha", "ALP", 18))
            .await,
        chain
            .deploy("TestToken", token_ctor("Beta", "BET", 6))
            .await,
    ];
    let nft = chain
        .deploy("TestNFT", nft_ctor("Nifty", "NFT", "ipfs://base/"))
        .await;
    let multi = chain
        .deploy("TestMulti", multi_ctor("https://x.test/{id}.json"))
        .await;
    chain.set_automine(false).await;
    chain
        .rpc("evm_setBlockGasLimit", json!([format!("{BLOCK_GAS:#x}")]))
        .await;
    let mut t = Traffic {
        chain,
        owner: chain.accounts[0].clone(),
        wallets: chain.accounts[1..=WALLETS].to_vec(),
        toks,
        nft,
        multi,
        erc20: BTreeMap::new(),
        owners: BTreeMap::new(),
        multi_bal: BTreeMap::new(),
        next_nft: 1,
        next_spam: 0,
        txs: Vec::new(),
        built: Built::default(),
    };
    t.mints(rng).await;
    for round in 0..ROUNDS {
        t.round(round, rng).await;
    }
    t.built.head = chain.head().await;
    t.built
}

// ---------------------------------------------------------------------------------------------
// The binary

/// A running `tokenql index`, SIGKILLed when dropped (a failing test leaves no process behind).
struct Indexer {
    child: Child,
    log: PathBuf,
}

impl Indexer {
    /// `tokenql index` on `db`, following `rpc` from block 0; stderr is appended to `log`.
    /// A restart after a kill waits for the killed process's leader lease to expire, so the
    /// lease is short ([`KILL_LEASE_MS`]).
    fn start(db: &FreshDb, rpc: &str, log: &Path) -> Indexer {
        Self::start_with_lease(db, rpc, log, KILL_LEASE_MS)
    }

    fn start_with_lease(db: &FreshDb, rpc: &str, log: &Path, lease_ms: u64) -> Indexer {
        let range = MAX_LOG_RANGE.to_string();
        let rpc = format!("eth={rpc}");
        let lease = lease_ms.to_string();
        let args = [
            "index",
            "--rpc",
            &rpc,
            "--start-block",
            "eth=0",
            "--max-log-range",
            &range,
            "--leader-lease-ms",
            &lease,
        ];
        let child = tokenql_cmd(&db.url, log, &args)
            .spawn()
            .expect("start tokenql index");
        Indexer {
            child,
            log: log.to_path_buf(),
        }
    }

    /// SIGKILL (`Child::kill`), and reap.
    fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Panics with the log's tail when the process has exited on its own.
    fn assert_running(&mut self) {
        if let Ok(Some(status)) = self.child.try_wait() {
            panic!("tokenql index exited ({status}):\n{}", tail(&self.log));
        }
    }
}

impl Drop for Indexer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `tokenql migrate`, then a connection for the test's own reads.
async fn migrate(db: &FreshDb, log: &Path) -> DatabaseConnection {
    let status = tokenql_cmd(&db.url, log, &["migrate"])
        .status()
        .expect("run tokenql migrate");
    assert!(status.success(), "tokenql migrate: {status}\n{}", tail(log));
    tokenql::store::database::connect(&db.url, 2)
        .await
        .expect("connect to the test database")
}

async fn indexed(db: &DatabaseConnection) -> Option<u64> {
    chain_state::Entity::find_by_id(1i64)
        .one(db)
        .await
        .expect("chain_state")
        .and_then(|s| s.indexed_block)
        .map(|b| b as u64)
}

/// Ingest reached the head, whose stored hash is the chain's, and every contract's and token's
/// metadata was read.
async fn finished(db: &DatabaseConnection, head: u64, head_hash: &str) -> bool {
    if indexed(db).await != Some(head) {
        return false;
    }
    let stored = block::Entity::find_by_id((1i64, head as i64))
        .one(db)
        .await
        .expect("block");
    if stored.map(|b| b.hash.to_string()).as_deref() != Some(head_hash) {
        return false;
    }
    let contracts = contract::Entity::find()
        .filter(contract::Column::Standard.is_not_null())
        .filter(contract::Column::MetadataFetchedAt.is_null())
        .count(db)
        .await
        .expect("contracts");
    let tokens = nft_token::Entity::find()
        .filter(nft_token::Column::LastTokenUriSync.is_null())
        .count(db)
        .await
        .expect("tokens");
    contracts == 0 && tokens == 0
}

/// Starts (or resumes) the indexer and lets it finish, then stops it.
async fn run_to_end(
    fresh: &FreshDb,
    db: &DatabaseConnection,
    rpc: &str,
    head: (u64, &str),
    log: &Path,
) {
    let mut p = Indexer::start(fresh, rpc, log);
    let deadline = Instant::now() + RUN_LIMIT;
    while !finished(db, head.0, head.1).await {
        p.assert_running();
        assert!(
            Instant::now() < deadline,
            "the indexer did not finish within {RUN_LIMIT:?} (indexed {:?} of {}):\n{}",
            indexed(db).await,
            head.0,
            tail(log)
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    p.kill();
}

/// PostgreSQL's count of transactions rolled back in this database: a client killed inside a
/// transaction makes its server process roll it back. `None` on the other backends.
async fn pg_rollbacks(db: &DatabaseConnection) -> Option<i64> {
    if db.get_database_backend() != DatabaseBackend::Postgres {
        return None;
    }
    let sql = "SELECT xact_rollback FROM pg_stat_database WHERE datname = current_database()";
    let row = db
        .query_one_raw(Statement::from_string(DatabaseBackend::Postgres, sql))
        .await
        .expect("pg_stat_database")
        .expect("a row");
    Some(row.try_get_by_index::<i64>(0).expect("xact_rollback"))
}

/// Whether another connection to this database is inside one of the indexer's write
/// transactions: idle inside a transaction (PostgreSQL), or running an INSERT (or COPY), which
/// only `write_batch` does once the checkpoint exists (its other writes are single UPDATEs). MySQL's
/// own transaction table is a snapshot refreshed every 100 ms, too stale to aim with. `None` on
/// SQLite, which cannot tell without taking the write lock itself.
async fn in_write_transaction(db: &DatabaseConnection) -> Option<bool> {
    let backend = db.get_database_backend();
    let sql = match backend {
        DatabaseBackend::Postgres => {
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() \
             AND pid <> pg_backend_pid() AND xact_start IS NOT NULL \
             AND (state = 'idle in transaction' \
             OR (state = 'active' AND (query LIKE 'INSERT%' OR query LIKE 'COPY%')))"
        }
        DatabaseBackend::MySql => {
            "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE DB = DATABASE() \
             AND ID <> CONNECTION_ID() AND INFO LIKE 'INSERT%'"
        }
        _ => return None,
    };
    let row = db
        .query_one_raw(Statement::from_string(backend, sql))
        .await
        .expect("open transactions")
        .expect("a row");
    Some(row.try_get_by_index::<i64>(0).expect("count") > 0)
}

// ---------------------------------------------------------------------------------------------
// The digest

/// Per table: (rows, hash of the rows in primary-key order). std's SipHash is enough to compare
/// two databases in one process, and many times cheaper than SHA-256 in a debug build.
type Digest = BTreeMap<&'static str, (u64, u64)>;

async fn digest_rows<E>(
    db: &DatabaseConnection,
    q: Select<E>,
    row: impl Fn(E::Model) -> String,
) -> (u64, u64)
where
    E: EntityTrait,
    E::Model: Send + Sync,
{
    use std::hash::Hasher;
    let mut h = std::hash::DefaultHasher::new();
    let mut n = 0u64;
    let stream = q.stream(db).await.expect("query");
    let mut stream = std::pin::pin!(stream);
    while let Some(m) = stream.try_next().await.expect("row") {
        h.write(row(m).as_bytes());
        h.write_u8(b'\n');
        n += 1;
    }
    (n, h.finish())
}

/// Inserts the digest of one entity's table, its rows in primary-key order.
macro_rules! digest_table {
    ($d:ident, $db:ident, $entity:ident, [$($key:ident),+], $row:expr) => {
        let q = $entity::Entity::find()$(.order_by($entity::Column::$key, Order::Asc))+;
        $d.insert($entity::Entity.table_name(), digest_rows($db, q, $row).await);
    };
}

/// A row as its `Debug` text.
fn all<T: std::fmt::Debug>(row: T) -> String {
    format!("{row:?}")
}

/// Digests every indexed table, leaving out the columns that hold wall-clock times.
async fn digest(db: DatabaseConnection) -> Digest {
    let (db, mut d) = (&db, Digest::new());
    digest_table!(d, db, chain_state, [ChainId], |m| {
        all((m.chain_id, m.start_block, m.indexed_block, m.head_block))
    });
    digest_table!(d, db, block, [ChainId, Number], all);
    digest_table!(d, db, erc20_transfer, [ChainId, BlockNumber, LogIndex], all);
    digest_table!(
        d,
        db,
        nft_transfer,
        [ChainId, BlockNumber, LogIndex, BatchIndex],
        all
    );
    digest_table!(
        d,
        db,
        nft_holding,
        [ChainId, OwnerAddress, ContractAddress, TokenId],
        all
    );
    digest_table!(d, db, nft_token, [ChainId, ContractAddress, TokenId], |m| {
        let minted = (m.block_number_minted, m.minter_address);
        all((
            m.chain_id,
            m.contract_address,
            m.token_id,
            m.contract_type,
            minted,
            m.token_uri,
            m.metadata,
        ))
    });
    digest_table!(d, db, contract, [ChainId, Address], |m| {
        let meta = (m.name, m.symbol, m.decimals, m.logo);
        all((
            m.chain_id,
            m.address,
            m.standard,
            meta,
            m.possible_spam,
            m.verified,
        ))
    });
    digest_table!(d, db, scope_sync, [ChainId, Scope, Address], |m| {
        all((
            m.chain_id,
            m.scope,
            m.address,
            m.state,
            m.synced_to_block,
            m.error,
        ))
    });
    digest_table!(d, db, address_label, [ChainId, Address], all);
    d
}

// ---------------------------------------------------------------------------------------------
// The scenario

/// One kill: the indexed block before the start and after the kill, when it landed, and whether
/// a write transaction was seen open just before (PostgreSQL, MySQL).
struct Kill {
    before: Option<u64>,
    after: Option<u64>,
    at: Duration,
    in_txn: bool,
}

impl std::fmt::Debug for Kill {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let b = |n: Option<u64>| n.map_or("-".to_string(), |n| n.to_string());
        let (before, after, ms) = (b(self.before), b(self.after), self.at.as_millis());
        let txn = if self.in_txn { " in txn" } else { "" };
        write!(f, "{before}->{after} at {ms}ms{txn}")
    }
}

/// Runs the indexer on `fresh` KILLS times, SIGKILLing it at moments spread over the backfill.
async fn kill_repeatedly(
    fresh: &FreshDb,
    db: &DatabaseConnection,
    rpc: &str,
    head: u64,
    log: &Path,
    rng: &mut Rng,
) -> Vec<Kill> {
    let mut kills = Vec::new();
    for i in 0..KILLS {
        let before = indexed(db).await;
        assert!(
            before.is_none_or(|b| b < head),
            "ingest finished before kill {i}: {kills:?}"
        );
        // Every other kill, where the server can tell: the moment a write transaction is open.
        let targeted = i % 2 == 1 && in_write_transaction(db).await.is_some();
        let mut p = Indexer::start(fresh, rpc, log);
        let started = Instant::now();
        if i == 0 {
            // While it starts up or stores its first ranges.
            tokio::time::sleep(Duration::from_millis(30 + rng.below(300))).await;
        } else {
            // Once this life stored a range and ingest passed a point in the i-th stretch of the
            // chain, and then after a jitter about as long as a range takes, so that kills land
            // in every phase of a step (reading the chain, decoding, writing).
            let stretch = head as f64 / (KILLS as f64 + 0.5);
            let point = (stretch * (i as f64 + rng.below(800) as f64 / 1000.0)) as u64;
            let point = point.max(before.map_or(0, |b| b + 1));
            let deadline = Instant::now() + RUN_LIMIT;
            while indexed(db).await.is_none_or(|b| b < point) {
                p.assert_running();
                assert!(
                    Instant::now() < deadline,
                    "ingest never reached block {point}:\n{}",
                    tail(log)
                );
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            if !targeted {
                tokio::time::sleep(Duration::from_millis(rng.below(150))).await;
            }
        }
        let mut in_txn = false;
        let deadline = Instant::now() + Duration::from_secs(5);
        while targeted && !in_txn && Instant::now() < deadline {
            in_txn = in_write_transaction(db).await == Some(true);
        }
        p.assert_running();
        let at = started.elapsed();
        p.kill();
        let after = indexed(db).await;
        kills.push(Kill {
            before,
            after,
            at,
            in_txn,
        });
    }
    kills
}

/// The pid in the chain's leader lease (`host:pid:nonce`), if any process holds it.
async fn leader_pid(db: &DatabaseConnection) -> Option<u32> {
    let row = tokenql::entity::indexer_lease::Entity::find_by_id(1i64)
        .one(db)
        .await
        .expect("indexer_lease");
    let holder = row?.holder?;
    holder.rsplit(':').nth(1)?.parse().ok()
}

/// One leader killed in the failover run.
#[derive(Debug)]
#[allow(dead_code)] // Read through `Debug` in failure messages.
struct Failover {
    /// Indexed block when the leader was killed.
    at: Option<u64>,
    /// From the kill to the standby's first stored range.
    takeover: Duration,
}

/// Two `tokenql index` for one chain; the leader is SIGKILLed [`FAILOVERS`] times mid-ingest
/// (and a fresh standby started after each kill). Returns the takeovers; ingest is left to
/// finish by the survivors.
async fn fail_over_repeatedly(
    fresh: &FreshDb,
    db: &DatabaseConnection,
    rpc: &str,
    head: (u64, &str),
    log: &Path,
) -> Vec<Failover> {
    let start = || Indexer::start_with_lease(fresh, rpc, log, FAILOVER_LEASE_MS);
    let mut procs = vec![start(), start()];
    let mut failovers = Vec::new();
    for i in 0..FAILOVERS {
        let point = head.0 * (i as u64 + 1) / (FAILOVERS as u64 + 2);
        let deadline = Instant::now() + RUN_LIMIT;
        while indexed(db).await.is_none_or(|b| b < point) || leader_pid(db).await.is_none() {
            assert!(
                Instant::now() < deadline,
                "ingest never reached block {point} with a leader:\n{}",
                tail(log)
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let pid = leader_pid(db).await.expect("a leader");
        let idx = procs
            .iter()
            .position(|p| p.child.id() == pid)
            .unwrap_or_else(|| panic!("the leader {pid} is none of this test's processes"));
        let at = indexed(db).await;
        assert!(
            at.is_some_and(|b| b < head.0),
            "ingest finished before failover {i}"
        );
        procs.swap_remove(idx).kill();
        let killed = Instant::now();
        procs.push(start());
        // The standby takes the lease over and stores a range of its own.
        loop {
            let moved = indexed(db).await > at;
            let leader = leader_pid(db).await;
            if moved && leader.is_some_and(|p| p != pid) {
                break;
            }
            assert!(
                killed.elapsed() < TAKEOVER_LIMIT,
                "no standby took over within {TAKEOVER_LIMIT:?} of killing leader {pid} \
                 (leader now {leader:?}, indexed {:?}):\n{}",
                indexed(db).await,
                tail(log)
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        failovers.push(Failover {
            at,
            takeover: killed.elapsed(),
        });
    }
    let deadline = Instant::now() + RUN_LIMIT;
    while !finished(db, head.0, head.1).await {
        for p in &mut procs {
            p.assert_running();
        }
        assert!(
            Instant::now() < deadline,
            "the failover run did not finish:\n{}",
            tail(log)
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    for p in procs {
        p.kill();
    }
    failovers
}

async fn killed_repeatedly_ends_like_a_clean_run(backend: Backend) {
    let _serial = SERIAL.lock().await;
    let t0 = Instant::now();
    let mut rng = Rng(0xc4a5_4b0f_f1e5_7a11);
    let chain = Anvil::start(WALLETS + 1, &["--base-fee", "0"]).await;
    let built = build_chain(&chain, &mut rng).await;
    let head = built.head;
    let block = chain
        .rpc("eth_getBlockByNumber", json!([format!("{head:#x}"), false]))
        .await;
    let head_hash = block["hash"].as_str().expect("head hash").to_string();
    let t_chain = t0.elapsed();

    // A clean, uninterrupted run.
    let t1 = Instant::now();
    let clean = FreshDb::create(backend).await;
    let clean_log = std::env::temp_dir().join(format!("{}.log", clean.name));
    let clean_db = migrate(&clean, &clean_log).await;
    let tip = (head, head_hash.as_str());
    run_to_end(&clean, &clean_db, &chain.url, tip, &clean_log).await;
    let t_clean = t1.elapsed();

    // A run killed KILLS times, then left to finish.
    let t2 = Instant::now();
    let crashed = FreshDb::create(backend).await;
    let log = std::env::temp_dir().join(format!("{}.log", crashed.name));
    let db = migrate(&crashed, &log).await;
    let rollbacks = pg_rollbacks(&db).await;
    let kills = kill_repeatedly(&crashed, &db, &chain.url, head, &log, &mut rng).await;
    // PostgreSQL counts the transactions the kills left open (its stats arrive shortly after).
    let mut rolled_back = None;
    if let Some(start) = rollbacks {
        let deadline = Instant::now() + Duration::from_secs(3);
        while rolled_back.is_none_or(|n| n == 0) && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(100)).await;
            rolled_back = pg_rollbacks(&db).await.map(|n| n - start);
        }
    }
    run_to_end(&crashed, &db, &chain.url, tip, &log).await;
    let t_crashed = t2.elapsed();

    // Both digests at once: decoding rows is most of their cost.
    let t3 = Instant::now();
    let want = tokio::spawn(digest(clean_db.clone()));
    let got = digest(db.clone()).await;
    let want = want.await.expect("digest task");
    let t_digest = t3.elapsed();

    // The clean run stored what the chain holds, so that equal digests mean something.
    assert_eq!(want["erc20_transfers"].0, built.erc20_logs, "ERC20 rows");
    assert_eq!(want["nft_transfers"].0, built.nft_rows, "NFT transfer rows");
    assert_eq!(
        want["nft_tokens"].0,
        built.tokens.len() as u64,
        "NFT tokens"
    );
    assert_eq!(want["contracts"].0, 4, "contracts");
    assert!(want["nft_holdings"].0 > 100, "holdings: {want:?}");
    assert!(built.burns > 0, "the scenario burns ERC721 tokens");
    assert!(
        want["blocks"].0 + QUIET_BLOCKS > head,
        "every block after the deployments carries transfers ({} of {} blocks stored)",
        want["blocks"].0,
        head + 1
    );

    // The kills interrupted ingest: all before the head, all but the first after this life had
    // stored something, and (where the server can tell) those aimed at write transactions hit.
    let mid_ingest = kills
        .iter()
        .filter(|k| k.after.is_none_or(|b| b < head))
        .count();
    let progressed = kills.iter().filter(|k| k.after > k.before).count();
    let in_txn = kills.iter().filter(|k| k.in_txn).count();
    assert!(
        mid_ingest == KILLS && progressed >= KILLS - 1,
        "the kills did not interrupt ingest (head {head}): {kills:?}"
    );
    if in_write_transaction(&db).await.is_some() {
        assert!(
            in_txn >= KILLS / 2 - 1,
            "the kills missed the write transactions: {kills:?}"
        );
    }

    assert_eq!(
        got,
        want,
        "{backend:?}: the killed and restarted run differs from the clean one (kills: {kills:?}; \
         logs: {}, {})",
        clean_log.display(),
        log.display()
    );

    // Two indexers for the chain, the leader killed FAILOVERS times.
    let t4 = Instant::now();
    let fo = FreshDb::create(backend).await;
    let fo_log = std::env::temp_dir().join(format!("{}.log", fo.name));
    let fo_db = migrate(&fo, &fo_log).await;
    let failovers = fail_over_repeatedly(&fo, &fo_db, &chain.url, tip, &fo_log).await;
    // `tokenql status` names the lease's holder and counts the hand-overs.
    let status = tokenql_cmd(&fo.url, &fo_log, &["status"])
        .stdout(std::process::Stdio::piped())
        .output()
        .expect("tokenql status");
    let status = String::from_utf8_lossy(&status.stdout).into_owned();
    let lease_line = status
        .lines()
        .skip_while(|l| !l.contains("leader"))
        .find(|l| l.starts_with("eth"))
        .unwrap_or_else(|| panic!("no lease in `tokenql status`:\n{status}"));
    let takeovers: usize = lease_line
        .split_whitespace()
        .last()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no takeover count in {lease_line:?}"));
    assert!(
        takeovers > FAILOVERS,
        "the lease changed hands at least {} times: {status}",
        FAILOVERS + 1
    );
    let fo_digest = digest(fo_db.clone()).await;
    assert_eq!(
        fo_digest,
        want,
        "{backend:?}: the run whose leader was killed {FAILOVERS} times differs from the clean \
         one (failovers: {failovers:?}; log: {})",
        fo_log.display()
    );
    let t_failover = t4.elapsed();

    let _ = clean_db.close().await;
    let _ = db.close().await;
    let _ = fo_db.close().await;
    clean.drop_db().await;
    crashed.drop_db().await;
    fo.drop_db().await;
    let _ = std::fs::remove_file(&clean_log);
    let _ = std::fs::remove_file(&log);
    let _ = std::fs::remove_file(&fo_log);
    let secs = |d: Duration| format!("{:.1}s", d.as_secs_f64());
    let rolled_back = rolled_back.map_or(String::new(), |n| format!(", {n} rolled back"));
    eprintln!(
        "indexer_crash {backend:?}: {} blocks, {} ERC20 logs, {} NFT rows, built in {}; clean run {}; \
         {KILLS} kills ({mid_ingest} mid-ingest, {in_txn} seen in a write transaction{rolled_back}) \
         and the rest {}; digests equal, in {}; {FAILOVERS} leaders killed beside a standby, run in {} \
         (takeovers: {failovers:?}); total {}\n  kills (indexed before->after): {kills:?}",
        head + 1,
        built.erc20_logs,
        built.nft_rows,
        secs(t_chain),
        secs(t_clean),
        secs(t_crashed),
        secs(t_digest),
        secs(t_failover),
        secs(t0.elapsed()),
    );
}

crate::backend_tests!(killed_repeatedly_ends_like_a_clean_run);
