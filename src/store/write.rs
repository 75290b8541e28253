//! The write path: [`write_batch`] stores one batch (block headers, decoded transfers,
//! optionally the chain checkpoint and a history fetch's progress) in one transaction, and the
//! chain-state writes beside it ([`set_head`], [`set_checkpoint`], [`mark_history_complete`]).
//! See the [module docs](super) for why writing a batch twice, or batches out of order, yields
//! the same database.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use alloy::primitives::B256;
use sea_orm::sea_query::OnConflict;
use sea_orm::{
    ColumnTrait, ConnectionTrait, DatabaseConnection, DatabaseTransaction, DbErr, EntityTrait,
    QueryFilter, QuerySelect, TransactionTrait,
};

use super::batch_txn::BatchTxn;
use super::erc20_balances::{Sums, Unsummed};
use super::{bulk, derive, dialect, erc20_balances, feed, lease, now_ms, rows, scopes, CHUNK};
use crate::decode::{Erc20Move, NftMove};
use crate::entity::{chain_state, contract};
use crate::types::{Address, Chain, TokenStandard, Uint256};

/// A block header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockHeader {
    pub number: u64,
    pub hash: B256,
    pub parent_hash: Option<B256>,
    /// Unix seconds.
    pub timestamp: u64,
}

/// Where a chain's indexing stands, written with the batch that advanced it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Checkpoint {
    /// First block the live indexer covers.
    pub start_block: u64,
    /// Last block fully stored; `None` before the first one.
    pub indexed_block: Option<u64>,
    /// Chain head last seen.
    pub head_block: u64,
}

/// One unit of writing.
#[derive(Debug, Clone, Default)]
pub struct Batch {
    pub blocks: Vec<BlockHeader>,
    pub erc20: Vec<Erc20Move>,
    pub nft: Vec<NftMove>,
    pub checkpoint: Option<Checkpoint>,
    /// A history fetch's progress, recorded with the transfers it stored.
    pub history: Option<scopes::Progress>,
    /// The chain's lease the writer must hold (the live indexer's batches); `None`: no check
    /// (an import, a history fetch).
    pub fence: Option<lease::Fence>,
    /// Append the batch's blocks to the change feed (the live indexer's batches, which carry
    /// a checkpoint), keeping this much of it; `None`: no feed rows (an import, a history
    /// fetch, a follower with the feed turned off).
    pub feed: Option<feed::Retention>,
    /// Read the database file through a memory map (SQLite; a backfill's batches, whose
    /// lookups land all over a large file: `BatchTxn::map_file`).
    pub map_file: bool,
}

/// Errors of the write path.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("a transfer in block {0} has no header in the batch")]
    MissingBlock(u64),
    #[error("the chain's lease is held by {}, not by this process", .holder.as_deref().unwrap_or("nobody"))]
    LeaseLost { holder: Option<String> },
    #[error(transparent)]
    Db(#[from] DbErr),
}

/// Stores a batch in one transaction. See the module docs.
pub async fn write_batch(
    db: &DatabaseConnection,
    chain: Chain,
    batch: &Batch,
) -> Result<(), StoreError> {
    write_batch_summing(db, chain, batch, &mut None).await
}

/// [`write_batch`], adding what the batch's new ERC20 transfers move to `sums` (a follower's
/// sums of the balances a backfill left out) once the batch is committed; `sums` becomes `None`
/// when they no longer hold every stored transfer ([`Sums`]).
pub async fn write_batch_summing(
    db: &DatabaseConnection,
    chain: Chain,
    batch: &Batch,
    sums: &mut Option<Sums>,
) -> Result<(), StoreError> {
    let cid = chain.db_id();
    // Rows first (a transfer without its block header fails here, before any writing).
    let blocks = rows::blocks(cid, &batch.blocks);
    let dialect = dialect::Dialect::of(db);
    let erc20 = rows::erc20(cid, &batch.erc20, &batch.blocks, dialect)?;
    let nft = rows::nft(cid, &batch.nft, &batch.blocks, dialect)?;
    let mut laps = Laps::start();

    let txn = BatchTxn::begin(db).await?;
    lock_chain(&txn, chain).await?;
    txn.map_file(batch.map_file).await?;
    if let Some(fence) = &batch.fence {
        lease::check(&txn, chain, fence)
            .await?
            .map_err(|holder| StoreError::LeaseLost { holder })?;
    }
    blocks.insert(&txn).await?;
    laps.lap("lock, blocks");
    let unsummed = store_transfers(&txn, cid, &batch.erc20, erc20, nft, &mut laps).await?;
    let fed = match (batch.feed, batch.checkpoint.and_then(|c| c.indexed_block)) {
        (Some(retention), Some(head)) => {
            feed::append_stored(
                &txn,
                cid,
                &batch.blocks,
                &batch.erc20,
                &batch.nft,
                head,
                retention,
            )
            .await?;
            true
        }
        _ => false,
    };
    laps.lap("feed");

    // Contracts seen, with the standard their events show.
    let mut standards: BTreeMap<Address, TokenStandard> = BTreeMap::new();
    for t in &batch.erc20 {
        standards
            .entry(t.meta.contract)
            .or_insert(TokenStandard::Erc20);
    }
    for t in &batch.nft {
        standards.insert(t.meta.contract, t.standard);
    }
    record_contracts(&txn, cid, &standards).await?;
    laps.lap("contracts");

    let touched: BTreeSet<(Address, Uint256)> = batch
        .nft
        .iter()
        .map(|t| (t.meta.contract, t.token_id))
        .collect();
    derive::recompute_tokens(&txn, cid, &touched).await?;
    laps.lap("tokens");

    if let Some(cp) = batch.checkpoint {
        set_checkpoint(&txn, chain, cp).await?;
    }
    if let Some(p) = batch.history {
        scopes::record_progress(&txn, chain, p).await?;
    }
    laps.lap("checkpoint");
    txn.commit().await?;
    laps.lap("commit");
    if let Some(unsummed) = unsummed {
        erc20_balances::absorb(sums, unsummed);
    }
    tracing::debug!(
        erc20 = batch.erc20.len(),
        nft = batch.nft.len(),
        blocks = batch.blocks.len(),
        laps = %laps,
        "batch written"
    );
    if fed {
        feed::appended_here().notify_waiters();
    }
    Ok(())
}

/// Stores a batch's transfers and adds its ERC20 transfers to the balances. The ERC20
/// transfers not stored yet (read under the chain's lock) are inserted without a conflict
/// check (by binary `COPY` on PostgreSQL, [`BatchTxn::insert_new`]), and only they move the
/// balances: writing a batch twice adds nothing. Returns what they add to the balances while
/// those are left out.
async fn store_transfers(
    txn: &BatchTxn,
    cid: i64,
    moves: &[Erc20Move],
    erc20: bulk::Rows,
    nft: bulk::Rows,
    laps: &mut Laps,
) -> Result<Option<Unsummed>, DbErr> {
    let new = erc20_balances::unstored(txn, cid, moves).await?;
    laps.lap("unstored");
    txn.insert_new(erc20.only(&new)).await?;
    nft.insert(txn).await?;
    laps.lap("transfers");
    let added: Vec<&Erc20Move> = moves
        .iter()
        .zip(&new)
        .filter_map(|(m, new)| new.then_some(m))
        .collect();
    let unsummed = erc20_balances::add_stored(txn, cid, &added).await?;
    laps.lap("balances");
    Ok(unsummed)
}

/// How long each phase of a batch's write took, for the debug log
/// (`RUST_LOG=tokenql::store::write=debug`): where ingest spends its time.
struct Laps {
    last: Instant,
    laps: Vec<(&'static str, Duration)>,
}

impl Laps {
    fn start() -> Self {
        Laps {
            last: Instant::now(),
            laps: Vec::new(),
        }
    }

    /// Ends the phase named `name`.
    fn lap(&mut self, name: &'static str) {
        let now = Instant::now();
        self.laps.push((name, now - self.last));
        self.last = now;
    }
}

impl std::fmt::Display for Laps {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, (name, d)) in self.laps.iter().enumerate() {
            let sep = if i == 0 { "" } else { "; " };
            write!(f, "{sep}{name} {:.1} ms", d.as_secs_f64() * 1e3)?;
        }
        Ok(())
    }
}

/// Begins a transaction that writes. On SQLite it takes the database's write lock at once
/// ([`sqlite_write_lock`]); PostgreSQL and MySQL lock rows as they are written: a plain
/// `BEGIN`. The chain's writers take the chain's lock instead ([`lock_chain`]), which does the
/// same on SQLite.
pub async fn begin_write(db: &DatabaseConnection) -> Result<DatabaseTransaction, DbErr> {
    let txn = db.begin().await?;
    if !dialect::Dialect::of(db).locks_rows() {
        sqlite_write_lock(&txn).await?;
    }
    Ok(txn)
}

/// The first statement of a writing transaction on SQLite: a write that changes nothing,
/// which takes the database's write lock at once, waiting for it like any writer, as
/// `BEGIN IMMEDIATE` would (sea-orm's `begin` has no way to say that). Otherwise a
/// transaction that reads before it writes is refused with `SQLITE_BUSY_SNAPSHOT` ("database
/// is locked") at its first write when another connection (the indexer, the lease renewer)
/// committed in between.
async fn sqlite_write_lock<C: ConnectionTrait>(txn: &C) -> Result<(), DbErr> {
    txn.execute_unprepared("UPDATE settings SET value = value WHERE 0")
        .await?;
    Ok(())
}

/// Serialises the chain's writers: the first statement of every writing transaction locks the
/// chain's checkpoint row (`SELECT … FOR UPDATE`), so transactions that recompute the same
/// token's holdings (the live follower, history fetches, a rollback — in one process or
/// several) run one after the other, each reading the transfers the previous one committed.
/// Without it, two of them could each replay the token without the other's new transfers and
/// leave its holdings wrong (or collide on a holding's key). A chain without a checkpoint yet
/// (an import's first batch) has one writer.
///
/// SQLite runs one writing transaction at a time by itself: there the first statement takes
/// the database's write lock ([`sqlite_write_lock`]), since the chain's writers read (the
/// lease check) before they write.
pub(crate) async fn lock_chain<C: ConnectionTrait>(db: &C, chain: Chain) -> Result<(), DbErr> {
    if !dialect::Dialect::of(db).locks_rows() {
        return sqlite_write_lock(db).await;
    }
    chain_state::Entity::find_by_id(chain.db_id())
        .lock_exclusive()
        .one(db)
        .await?;
    Ok(())
}

/// Inserts unknown contracts and fills in a standard where none was known yet.
async fn record_contracts<C: ConnectionTrait>(
    db: &C,
    cid: i64,
    standards: &BTreeMap<Address, TokenStandard>,
) -> Result<(), DbErr> {
    let rows: Vec<contract::ActiveModel> = standards
        .iter()
        .map(|(a, s)| {
            contract::Model {
                chain_id: cid,
                address: *a,
                standard: Some(*s),
                name: None,
                symbol: None,
                decimals: None,
                logo: None,
                possible_spam: false,
                verified: false,
                metadata_fetched_at: None,
                spam_source: None,
                verified_source: None,
            }
            .into()
        })
        .collect();
    for chunk in rows.chunks(CHUNK) {
        contract::Entity::insert_many(chunk.to_vec())
            .on_conflict(crate::store::skip_existing([
                contract::Column::ChainId,
                contract::Column::Address,
            ]))
            .exec_without_returning(db)
            .await?;
    }
    let mut by_standard: BTreeMap<TokenStandard, Vec<Address>> = BTreeMap::new();
    for (a, s) in standards {
        by_standard.entry(*s).or_default().push(*a);
    }
    for (s, addrs) in by_standard {
        for chunk in addrs.chunks(CHUNK) {
            contract::Entity::update_many()
                .col_expr(
                    contract::Column::Standard,
                    sea_orm::sea_query::Expr::value(s),
                )
                .filter(contract::Column::ChainId.eq(cid))
                .filter(contract::Column::Standard.is_null())
                .filter(contract::Column::Address.is_in(chunk.to_vec()))
                .exec(db)
                .await?;
        }
    }
    Ok(())
}

/// Records the chain head last seen (for the lag in SYNCED/SYNCING), when it changed.
pub async fn set_head<C: ConnectionTrait>(db: &C, chain: Chain, head: u64) -> Result<(), DbErr> {
    chain_state::Entity::update_many()
        .col_expr(
            chain_state::Column::HeadBlock,
            sea_orm::sea_query::Expr::value(head as i64),
        )
        .col_expr(
            chain_state::Column::UpdatedAt,
            sea_orm::sea_query::Expr::value(now_ms()),
        )
        .filter(chain_state::Column::ChainId.eq(chain.db_id()))
        .filter(chain_state::Column::HeadBlock.ne(head as i64))
        .exec(db)
        .await?;
    Ok(())
}

/// Declares the chain's stored history whole (an imported sample that stands on its own):
/// every answer about it is complete, whatever its start block.
pub async fn mark_history_complete<C: ConnectionTrait>(db: &C, chain: Chain) -> Result<(), DbErr> {
    chain_state::Entity::update_many()
        .col_expr(
            chain_state::Column::HistoryComplete,
            sea_orm::sea_query::Expr::value(true),
        )
        .filter(chain_state::Column::ChainId.eq(chain.db_id()))
        .exec(db)
        .await?;
    Ok(())
}

/// Upserts a chain's checkpoint.
pub async fn set_checkpoint<C: ConnectionTrait>(
    db: &C,
    chain: Chain,
    cp: Checkpoint,
) -> Result<(), DbErr> {
    let row: chain_state::ActiveModel = chain_state::Model {
        chain_id: chain.db_id(),
        start_block: Some(cp.start_block as i64),
        indexed_block: cp.indexed_block.map(|b| b as i64),
        head_block: Some(cp.head_block as i64),
        updated_at: now_ms(),
        history_complete: false,
        balances_pending: false,
        balances_writes: 0,
    }
    .into();
    chain_state::Entity::insert(row)
        .on_conflict(
            OnConflict::column(chain_state::Column::ChainId)
                .update_columns([
                    chain_state::Column::StartBlock,
                    chain_state::Column::IndexedBlock,
                    chain_state::Column::HeadBlock,
                    chain_state::Column::UpdatedAt,
                ])
                .to_owned(),
        )
        .exec_without_returning(db)
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::testing::{close, sqlite};

    /// On SQLite, a writing transaction that reads after [`lock_chain`] (the lease check) and
    /// writes later is not refused when another connection writes meanwhile: the other writer
    /// waits for the lock the first statement took. (Without it, the other writer commits at
    /// once and the later write fails with `SQLITE_BUSY_SNAPSHOT`.)
    #[tokio::test]
    async fn a_sqlite_writer_holds_the_write_lock_from_its_first_statement() {
        let (db, path) = sqlite("lock_chain").await;
        let txn = db.begin().await.expect("begin");
        lock_chain(&txn, Chain::ETH).await.expect("lock");
        read_then_write_while_another_writes(&db, txn).await;
        let head = chain_state::Entity::find_by_id(Chain::ETH.db_id())
            .one(&db)
            .await
            .expect("read")
            .and_then(|s| s.head_block);
        assert_eq!(head, Some(7));
        close(db, &path).await;
    }

    /// The same for any writing transaction begun by [`begin_write`] (a stream's update reads
    /// the stream first): the other writer waits, the later write succeeds.
    #[tokio::test]
    async fn a_sqlite_transaction_begun_to_write_holds_the_write_lock_from_its_start() {
        let (db, path) = sqlite("begin_write").await;
        let txn = begin_write(&db).await.expect("begin");
        read_then_write_while_another_writes(&db, txn).await;
        close(db, &path).await;
    }

    /// In `txn` (which took its lock): reads, lets another connection try to write, writes,
    /// commits. Asserts that the other writer waited for the commit and then succeeded, and
    /// that `txn`'s write after its read was not refused.
    async fn read_then_write_while_another_writes(
        db: &DatabaseConnection,
        txn: DatabaseTransaction,
    ) {
        chain_state::Entity::find_by_id(Chain::ETH.db_id())
            .one(&txn)
            .await
            .expect("read");
        let other = tokio::spawn({
            let db = db.clone();
            async move { set_head(&db, Chain::ETH, 7).await }
        });
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(!other.is_finished(), "the other writer waits for the lock");
        set_head(&txn, Chain::ETH, 5)
            .await
            .expect("the write after the read");
        txn.commit().await.expect("commit");
        other
            .await
            .expect("task")
            .expect("the other writer, after the commit");
    }
}
