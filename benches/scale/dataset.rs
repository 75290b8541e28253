//! The synthetic dataset: power-law ERC20 transfers and NFT holdings, written through the
//! indexer's write path (`tokenql::store::write_batch`) in large batches.
//!
//! Everything is derived from a seed, so two loads with the same parameters store the same
//! rows, and the query driver can name the same wallets and tokens without reading them back.

use std::time::Instant;

use alloy::primitives::B256;
use anyhow::Context;
use sea_orm::{ConnectionTrait, DatabaseConnection, Statement};

use tokenql::decode::{Erc20Move, EventMeta, NftMove};
use tokenql::store::{write_batch, Batch, BlockHeader, Checkpoint};
use tokenql::types::TokenStandard;
use tokenql::types::{Address, Chain, Uint256};

/// Bump when the generator changes: a stored dataset with another version is regenerated.
pub const GENERATOR_VERSION: u32 = 1;

/// Zipf exponents fitted on `mainnet-token-transfers-15320500-15320599.csv` (14,323 transfers,
/// 1,251 tokens, 9,989 wallets; least squares of log(frequency) on log(rank) over the top
/// 1,000 ranks): tokens 1.10, wallets 0.87.
pub const TOKEN_ZIPF: f64 = 1.10;
pub const WALLET_ZIPF: f64 = 0.87;
/// NFT collections by size, and owners of NFTs (same wallets as ERC20).
pub const COLLECTION_ZIPF: f64 = 1.0;
/// Transfers per block (the CSV has 148 per block).
pub const TRANSFERS_PER_BLOCK: u64 = 150;
/// ERC20 transfers per `write_batch` call.
pub const BATCH_TRANSFERS: u64 = 50_000;
/// First block number.
pub const FIRST_BLOCK: u64 = 15_000_000;

/// The parameters of one dataset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Params {
    pub transfers: u64,
    pub wallets: u64,
    pub tokens: u64,
    /// Transfers of the one big token (rank 0).
    pub big_token_transfers: u64,
    pub nft_holdings: u64,
    /// NFTs (ERC721) the whale owns.
    pub whale_nfts: u64,
    pub collections: u64,
    pub seed: u64,
}

impl Params {
    /// The full-size dataset (`10m`), or the same shape divided by `div`.
    pub fn scaled(div: u64) -> Self {
        Self {
            transfers: 10_000_000 / div,
            wallets: 1_000_000 / div,
            tokens: 10_000 / div,
            big_token_transfers: 2_000_000 / div,
            nft_holdings: 1_000_000 / div,
            whale_nfts: 100_000 / div,
            collections: 2_000 / div,
            seed: 0x7a11_5ca1e,
        }
    }

    /// The marker stored with a complete dataset.
    pub fn marker(&self) -> String {
        format!("v{GENERATOR_VERSION} {self:?} token_zipf={TOKEN_ZIPF} wallet_zipf={WALLET_ZIPF} collection_zipf={COLLECTION_ZIPF}")
    }

    pub fn blocks(&self) -> u64 {
        self.transfers.div_ceil(TRANSFERS_PER_BLOCK)
    }

    /// ERC721 tokens (each one holding); the rest of the holdings are ERC1155, 4 holders per id.
    pub fn erc721_tokens(&self) -> u64 {
        self.nft_holdings * 9 / 10
    }

    pub fn erc1155_ids(&self) -> u64 {
        (self.nft_holdings - self.erc721_tokens()) / 4
    }

    /// ERC1155 collections.
    pub fn erc1155_collections(&self) -> u64 {
        (self.collections / 20).max(1)
    }
}

// ---------------------------------------------------------------------------------------------
// Deterministic randomness

/// splitmix64: a fast, well-mixed PRNG, also used as a hash of small integers.
#[derive(Debug, Clone)]
pub struct Rng(u64);

pub fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix(self.0)
    }
    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// Samples ranks 0..n with P(rank k) ∝ 1 / (k + 1)^s.
pub struct Zipf {
    cdf: Vec<f64>,
}

impl Zipf {
    pub fn new(n: u64, s: f64) -> Self {
        let mut cdf = Vec::with_capacity(n as usize);
        let mut acc = 0.0;
        for k in 0..n {
            acc += 1.0 / ((k + 1) as f64).powf(s);
            cdf.push(acc);
        }
        for v in &mut cdf {
            *v /= acc;
        }
        Self { cdf }
    }
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        let u = rng.unit();
        self.cdf.partition_point(|&c| c < u) as u64
    }
}

fn address(salt: u64, i: u64) -> Address {
    let mut w = [0u8; 32];
    for (k, chunk) in w[8..].chunks_mut(8).enumerate() {
        let v = mix(salt ^ mix(i.wrapping_mul(31).wrapping_add(k as u64)));
        chunk.copy_from_slice(&v.to_be_bytes()[..chunk.len()]);
    }
    Address::from_word(&w)
}

fn hash(salt: u64, i: u64) -> B256 {
    let mut w = [0u8; 32];
    for (k, chunk) in w.chunks_mut(8).enumerate() {
        chunk.copy_from_slice(
            &mix(salt ^ mix(i.wrapping_mul(7).wrapping_add(k as u64))).to_be_bytes(),
        );
    }
    B256::from(w)
}

const WALLET_SALT: u64 = 0x11;
const TOKEN_SALT: u64 = 0x22;
const COLLECTION_SALT: u64 = 0x33;
const WHALE_COLLECTION_SALT: u64 = 0x44;
const MULTI_SALT: u64 = 0x55;
const BLOCK_SALT: u64 = 0x66;
const TX_SALT: u64 = 0x77;

/// The wallet of activity rank `i` (0 is the busiest).
pub fn wallet(i: u64) -> Address {
    address(WALLET_SALT, i)
}
/// The ERC20 token of rank `i` (0 is the big token).
pub fn token(i: u64) -> Address {
    address(TOKEN_SALT, i)
}
/// The whale: the wallet of rank 1 (busy in ERC20 too), owning `whale_nfts` ERC721 tokens.
pub fn whale() -> Address {
    wallet(1)
}
fn collection(i: u64) -> Address {
    address(COLLECTION_SALT, i)
}
fn whale_collection(i: u64) -> Address {
    address(WHALE_COLLECTION_SALT, i)
}
fn multi_collection(i: u64) -> Address {
    address(MULTI_SALT, i)
}

// ---------------------------------------------------------------------------------------------
// Generation

/// Generates the batches one after the other.
struct Generator {
    p: Params,
    rng: Rng,
    tokens: Zipf,
    wallets: Zipf,
    collections: Zipf,
    multi: Zipf,
    next_block: u64,
    transfers_done: u64,
    big_done: u64,
    erc721_done: u64,
    whale_done: u64,
    erc1155_done: u64,
    /// Next token id per (non-whale) ERC721 collection.
    collection_next: Vec<u64>,
    /// ERC721 tokens minted to someone other than the whale, to be transferred once later:
    /// (collection, token id, owner).
    resale: Vec<(Address, u64, Address)>,
}

fn u(v: u64) -> Uint256 {
    Uint256::from_u64(v)
}

impl Generator {
    fn new(p: Params) -> Self {
        Self {
            p,
            rng: Rng::new(p.seed),
            tokens: Zipf::new(p.tokens.saturating_sub(1).max(1), TOKEN_ZIPF),
            wallets: Zipf::new(p.wallets, WALLET_ZIPF),
            collections: Zipf::new(p.collections, COLLECTION_ZIPF),
            multi: Zipf::new(p.erc1155_collections(), COLLECTION_ZIPF),
            next_block: FIRST_BLOCK,
            transfers_done: 0,
            big_done: 0,
            erc721_done: 0,
            whale_done: 0,
            erc1155_done: 0,
            collection_next: vec![0; p.collections as usize],
            resale: Vec::new(),
        }
    }

    fn last_block(&self) -> u64 {
        FIRST_BLOCK + self.p.blocks() - 1
    }

    fn done(&self) -> bool {
        self.transfers_done >= self.p.transfers
    }

    fn other_wallet(&mut self, not: Address) -> Address {
        loop {
            let w = wallet(self.wallets.sample(&mut self.rng));
            if w != not && w != whale() {
                return w;
            }
        }
    }

    fn meta(contract: Address, block: u64, log: u32) -> EventMeta {
        EventMeta {
            contract,
            block_number: block,
            block_hash: hash(BLOCK_SALT, block),
            transaction_hash: hash(TX_SALT, (block << 16) | u64::from(log / 3)),
            transaction_index: log / 3,
            log_index: log,
        }
    }

    /// An ERC721 resale of token `id` of `contract` from `from` to `to`.
    fn resale(
        contract: Address,
        id: u64,
        from: Address,
        to: Address,
        block: u64,
        log: u32,
    ) -> NftMove {
        NftMove {
            meta: Self::meta(contract, block, log),
            batch_index: 0,
            standard: TokenStandard::Erc721,
            operator: None,
            from,
            to,
            token_id: u(id),
            amount: u(1),
        }
    }

    /// The next batch, or `None` when everything has been generated.
    fn batch(&mut self) -> Option<Batch> {
        if self.done() {
            return None;
        }
        let n = BATCH_TRANSFERS.min(self.p.transfers - self.transfers_done);
        let first = self.next_block;
        let nblocks = n.div_ceil(TRANSFERS_PER_BLOCK);
        let mut batch = Batch::default();
        for b in first..first + nblocks {
            batch.blocks.push(BlockHeader {
                number: b,
                hash: hash(BLOCK_SALT, b),
                parent_hash: Some(hash(BLOCK_SALT, b - 1)),
                timestamp: 1_660_000_000 + (b - FIRST_BLOCK) * 12,
            });
        }
        // ERC20: exactly `big_token_transfers` of token 0, spread evenly; Zipf otherwise.
        for k in 0..n {
            let global = self.transfers_done + k;
            let block = first + k / TRANSFERS_PER_BLOCK;
            let log = (k % TRANSFERS_PER_BLOCK) as u32;
            let big_due = (global + 1) * self.p.big_token_transfers / self.p.transfers;
            let contract = if self.big_done < big_due {
                self.big_done += 1;
                token(0)
            } else {
                token(1 + self.tokens.sample(&mut self.rng))
            };
            let from = wallet(self.wallets.sample(&mut self.rng));
            let to = loop {
                let t = wallet(self.wallets.sample(&mut self.rng));
                if t != from {
                    break t;
                }
            };
            batch.erc20.push(Erc20Move {
                meta: Self::meta(contract, block, log),
                from,
                to,
                value: u(self.rng.next() >> 8),
            });
        }
        self.transfers_done += n;
        let last = first + nblocks - 1;

        // NFTs, in proportion to the transfers written so far; log indexes after the ERC20 ones.
        let erc721_due = self.p.erc721_tokens() * self.transfers_done / self.p.transfers;
        let erc1155_due = self.p.erc1155_ids() * self.transfers_done / self.p.transfers;
        let mut nft_log = vec![TRANSFERS_PER_BLOCK as u32; nblocks as usize];
        let mut next_slot = 0u64;
        let mut place = || -> (u64, u32) {
            let i = (next_slot % nblocks) as usize;
            next_slot += 1;
            let log = nft_log[i];
            nft_log[i] += 1;
            (first + i as u64, log)
        };
        let zero = Address::ZERO;
        // Last batch's resales first (they move tokens minted before this batch).
        let resales = std::mem::take(&mut self.resale);
        for (c, id, owner) in resales {
            let to = self.other_wallet(owner);
            let (b, l) = place();
            batch.nft.push(Self::resale(c, id, owner, to, b, l));
        }
        while self.erc721_done < erc721_due {
            let i = self.erc721_done;
            self.erc721_done += 1;
            // One ERC721 in nine goes to the whale until it has its share.
            let (c, id, owner) = if i % 9 == 0 && self.whale_done < self.p.whale_nfts {
                let w = self.whale_done;
                self.whale_done += 1;
                (whale_collection(w / 2_000), w % 2_000, whale())
            } else {
                let ci = self.collections.sample(&mut self.rng);
                let id = self.collection_next[ci as usize];
                self.collection_next[ci as usize] += 1;
                let owner = self.other_wallet(zero);
                if self.rng.below(10) == 0 {
                    self.resale.push((collection(ci), id, owner));
                }
                (collection(ci), id, owner)
            };
            let (b, l) = place();
            batch.nft.push(NftMove {
                meta: Self::meta(c, b, l),
                batch_index: 0,
                standard: TokenStandard::Erc721,
                operator: None,
                from: zero,
                to: owner,
                token_id: u(id),
                amount: u(1),
            });
        }
        while self.erc1155_done < erc1155_due {
            let id = self.erc1155_done;
            self.erc1155_done += 1;
            let c = multi_collection(self.multi.sample(&mut self.rng));
            let mut owners: Vec<Address> = Vec::with_capacity(4);
            while owners.len() < 4 {
                let o = self.other_wallet(zero);
                if !owners.contains(&o) {
                    owners.push(o);
                }
            }
            let operator = owners[0];
            for o in owners {
                let (b, l) = place();
                batch.nft.push(NftMove {
                    meta: Self::meta(c, b, l),
                    batch_index: 0,
                    standard: TokenStandard::Erc1155,
                    operator: Some(operator),
                    from: zero,
                    to: o,
                    token_id: u(id),
                    amount: u(1 + self.rng.below(10)),
                });
            }
        }
        // The very last batch also sells what it minted for resale, after the mints.
        if self.done() {
            let resales = std::mem::take(&mut self.resale);
            for (c, id, owner) in resales {
                let to = self.other_wallet(owner);
                let (b, l) = place();
                batch.nft.push(Self::resale(c, id, owner, to, b, l));
            }
        }
        batch.checkpoint = Some(Checkpoint {
            start_block: FIRST_BLOCK,
            indexed_block: Some(last),
            head_block: self.last_block(),
        });
        self.next_block = last + 1;
        Some(batch)
    }
}

// ---------------------------------------------------------------------------------------------
// The marker

const MARKER_TABLE: &str = "bench_scale_marker";

/// The marker of a complete dataset in `db`, if any.
pub async fn stored_marker(db: &DatabaseConnection) -> Option<String> {
    let backend = db.get_database_backend();
    let row = db
        .query_one_raw(Statement::from_string(
            backend,
            format!("SELECT v FROM {MARKER_TABLE} WHERE k = 'dataset'"),
        ))
        .await
        .ok()??;
    row.try_get::<String>("", "v").ok()
}

async fn write_marker(db: &DatabaseConnection, marker: &str) -> anyhow::Result<()> {
    let backend = db.get_database_backend();
    db.execute_unprepared(&format!(
        "CREATE TABLE IF NOT EXISTS {MARKER_TABLE} (k VARCHAR(64) PRIMARY KEY, v TEXT NOT NULL)"
    ))
    .await?;
    db.execute_raw(Statement::from_string(
        backend,
        format!("DELETE FROM {MARKER_TABLE} WHERE k = 'dataset'"),
    ))
    .await?;
    db.execute_raw(Statement::from_sql_and_values(
        backend,
        match backend {
            sea_orm::DbBackend::Postgres => {
                format!("INSERT INTO {MARKER_TABLE} (k, v) VALUES ('dataset', $1)")
            }
            _ => format!("INSERT INTO {MARKER_TABLE} (k, v) VALUES ('dataset', ?)"),
        },
        [marker.into()],
    ))
    .await?;
    Ok(())
}

/// Refreshes the planners' statistics of the loaded tables (PostgreSQL: with `VACUUM` too
/// when `vacuum`, after the load).
async fn refresh_statistics(db: &DatabaseConnection, vacuum: bool) -> anyhow::Result<()> {
    match db.get_database_backend() {
        sea_orm::DbBackend::Postgres => {
            let sql = if vacuum { "VACUUM ANALYZE" } else { "ANALYZE" };
            db.execute_unprepared(sql).await?;
        }
        sea_orm::DbBackend::MySql => {
            db.execute_unprepared(
                "ANALYZE TABLE erc20_transfers, nft_holdings, nft_tokens, contracts, nft_transfers",
            )
            .await?;
        }
        _ => {
            db.execute_unprepared("ANALYZE").await?;
        }
    }
    Ok(())
}

/// Loads the dataset into a freshly migrated `db`, printing progress; writes the marker last.
#[allow(clippy::print_stdout)] // progress is this program's output
pub async fn load(db: &DatabaseConnection, p: Params, label: &str) -> anyhow::Result<()> {
    let mut g = Generator::new(p);
    let t = Instant::now();
    let mut last_print = Instant::now();
    let (mut gen_s, mut write_s, mut nft_rows) = (0.0, 0.0, 0u64);
    // The planners' statistics are refreshed each time the tables have doubled: the loader's
    // own reads (the derived rows' key joins) would otherwise be planned for empty tables
    // wherever autovacuum is off, and slow down as the tables grow (seen: 10x).
    let mut next_statistics = 50_000u64;
    // As the indexer's backfill of a fresh database does: the address and holders indexes are
    // built once, after the load (`tokenql::store::backfill_indexes`), unless
    // `TOKENQL_BENCH_KEEP_INDEXES=1` asks for them kept up row by row (for a comparison).
    let keep = std::env::var("TOKENQL_BENCH_KEEP_INDEXES").is_ok_and(|v| v.trim() == "1");
    if !keep {
        tokenql::store::backfill_indexes::defer(db).await?;
    }
    loop {
        let tg = Instant::now();
        let Some(batch) = g.batch() else { break };
        gen_s += tg.elapsed().as_secs_f64();
        nft_rows += batch.nft.len() as u64;
        let tw = Instant::now();
        write_batch(db, Chain::ETH, &batch)
            .await
            .with_context(|| format!("write_batch at block {}", batch.blocks[0].number))?;
        write_s += tw.elapsed().as_secs_f64();
        if g.transfers_done >= next_statistics && !g.done() {
            refresh_statistics(db, false).await?;
            next_statistics *= 2;
        }
        if last_print.elapsed().as_secs_f64() >= 10.0 || g.done() {
            last_print = Instant::now();
            let el = t.elapsed().as_secs_f64();
            let rate = g.transfers_done as f64 / el;
            let eta = (p.transfers - g.transfers_done) as f64 / rate.max(1.0);
            println!(
                "  [{label}] {:>10} / {} ERC20 transfers, {nft_rows} NFT moves, {:.0} transfers/s, \
                 {el:.0} s elapsed, ETA {eta:.0} s (generate {gen_s:.0} s, write {write_s:.0} s)",
                g.transfers_done, p.transfers, rate
            );
        }
    }
    let tb = Instant::now();
    let built = tokenql::store::backfill_indexes::restore(db).await?;
    println!(
        "  [{label}] {built} address indexes built in {:.0} s",
        tb.elapsed().as_secs_f64()
    );
    // Statistics for the planners after a bulk load.
    refresh_statistics(db, true).await?;
    write_marker(db, &p.marker()).await?;
    println!(
        "  [{label}] loaded in {:.0} s ({} ERC20 transfers, {nft_rows} NFT moves)",
        t.elapsed().as_secs_f64(),
        p.transfers
    );
    Ok(())
}

/// One table's footprint on PostgreSQL.
#[derive(Debug, Clone)]
pub struct TableSize {
    pub table: String,
    pub rows: i64,
    /// The table itself (heap, TOAST, free space and visibility maps).
    pub table_bytes: i64,
    /// All of its indexes.
    pub index_bytes: i64,
}

/// Rows and bytes of every table tokenql stores data in (PostgreSQL only; exact row counts).
pub async fn table_sizes(db: &DatabaseConnection) -> anyhow::Result<Vec<TableSize>> {
    use sea_orm::{ConnectionTrait, Statement};
    const TABLES: [&str; 6] = [
        "erc20_transfers",
        "nft_transfers",
        "nft_holdings",
        "nft_tokens",
        "blocks",
        "contracts",
    ];
    let mut out = Vec::new();
    for t in TABLES {
        let sql = format!(
            "SELECT (SELECT count(*) FROM {t})::bigint AS n, \
             pg_table_size('{t}')::bigint AS tb, pg_indexes_size('{t}')::bigint AS ib"
        );
        let row = db
            .query_one_raw(Statement::from_string(db.get_database_backend(), sql))
            .await?
            .ok_or_else(|| anyhow::anyhow!("no size row for {t}"))?;
        out.push(TableSize {
            table: t.to_string(),
            rows: row.try_get("", "n")?,
            table_bytes: row.try_get("", "tb")?,
            index_bytes: row.try_get("", "ib")?,
        });
    }
    Ok(out)
}
