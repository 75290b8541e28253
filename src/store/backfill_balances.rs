//! The kept ERC20 balances a backfill of a fresh database leaves out and sums once at the end.
//!
//! Kept batch by batch, the balances are about half of the database's work per stored
//! transfer during a backfill: each batch reads the stored balance of every (holder, token)
//! pair it moves and writes the pair's row again, and a busy holder's row is rewritten by
//! nearly every batch (`docs/BENCHMARKS.md`). A backfill of finalized blocks into a database
//! that holds nothing else ([`super::backfill_indexes`]) has no reader that needs them yet, so
//! the follower leaves them out with the indexes ([`defer`]), and before it writes a block within
//! reach of a reorg it sums every balance in one pass ([`rebuild`]): from the sums it kept in
//! memory as it wrote the batches ([`Sums`]), or, when it has none that summed every write (a
//! restart, another writer), from the stored transfers. SQLite keeps them batch by batch (see
//! [`defer`] why).
//!
//! The state is `chain_state.balances_pending`, read in the transaction that would change the
//! balances: while it is set no writer touches them (the live follower, a history fetch, a
//! rollback — the per-token totals are still kept), and [`rebuild`] clears it in the
//! transaction that writes the sums. So it survives a crash and a change of leader, and a
//! rebuild interrupted leaves it set, to be done again from the start. Readers read it in the
//! snapshot of their answer: a wallet's balances are summed from its transfers meanwhile
//! (exact), and a token's holders say `SYNCING`.

use std::time::{Duration, Instant};

use futures_util::TryStreamExt;
use sea_orm::sqlx::postgres::{PgPool, PgPoolCopyExt};
use sea_orm::{
    ColumnTrait, Condition, ConnectionTrait, DatabaseConnection, DatabaseTransaction, DbErr,
    EntityTrait, QueryFilter, QueryOrder, QuerySelect, StreamTrait, TransactionTrait,
};

use super::backfill_indexes;
use super::dialect::Dialect;
pub use super::erc20_balances::left_out as pending;
pub use super::erc20_balances::Sums;
use super::erc20_balances::{
    apply_balances, BalanceRows, Deltas, Write, PAIRS_IN_MEMORY, PAIRS_PER_ROUND,
    PG_PAIRS_PER_ROUND,
};
use super::pg_copy::{self, CopyReader, CopyWriter};
use super::write::lock_chain;
use crate::entity::{chain_state, erc20_balance, erc20_transfer};
use crate::types::{Address, Chain, Uint256};

/// Bytes of rows [`rebuild_by_copy`] sends to the server at a time.
const COPY_CHUNK: usize = 1 << 20;

/// Leaves the chain's kept balances out from now on, until [`rebuild`], on PostgreSQL and
/// MySQL; returns whether it did, and, when the chain has no stored transfer yet, the [`Sums`]
/// to keep in memory meanwhile (so that [`rebuild`] need not read the transfers back). A chain
/// without a checkpoint row keeps them.
///
/// SQLite keeps them batch by batch. There a batch's balances cost no round trips (the database
/// is in the process), reading the transfers back costs ~5 µs a row through the driver's worker
/// thread, and even sums kept in memory cost as much to write at the end (one writer, ~4 µs a
/// row) as the batches' balances did, serially instead of beside the fetch: a backfill of 1M
/// transfers 1.1–1.4× slower either way (`docs/BENCHMARKS.md`).
pub async fn defer(db: &DatabaseConnection, chain: Chain) -> Result<Deferral, DbErr> {
    if Dialect::of(db) == Dialect::Sqlite {
        return Ok(Deferral::default());
    }
    let cid = chain.db_id();
    let txn = db.begin().await?;
    lock_chain(&txn, chain).await?;
    let fresh = !any_transfer(&txn, cid).await?;
    set_pending(&txn, cid, true).await?;
    // False when the chain has no checkpoint row: there was nothing to set.
    let left_out = pending(&txn, cid).await?;
    txn.commit().await?;
    Ok(Deferral {
        left_out,
        sums: (left_out && fresh).then(Sums::default),
    })
}

/// What [`defer`] did.
#[derive(Debug, Default)]
pub struct Deferral {
    /// The balances are left out.
    pub left_out: bool,
    /// The sums to keep while they are: written by [`rebuild`] instead of summing the stored
    /// transfers.
    pub sums: Option<Sums>,
}

/// Whether the chain has any stored ERC20 transfer.
async fn any_transfer<C: ConnectionTrait>(db: &C, cid: i64) -> Result<bool, DbErr> {
    let one: Option<i64> = erc20_transfer::Entity::find()
        .select_only()
        .column(erc20_transfer::Column::BlockNumber)
        .filter(erc20_transfer::Column::ChainId.eq(cid))
        .limit(1)
        .into_tuple()
        .one(db)
        .await?;
    Ok(one.is_some())
}

/// Sets or clears [`pending`], and counts the writes since from zero.
async fn set_pending<C: ConnectionTrait>(db: &C, cid: i64, left_out: bool) -> Result<(), DbErr> {
    chain_state::Entity::update_many()
        .col_expr(
            chain_state::Column::BalancesPending,
            sea_orm::sea_query::Expr::value(left_out),
        )
        .col_expr(
            chain_state::Column::BalancesWrites,
            sea_orm::sea_query::Expr::value(0i64),
        )
        .filter(chain_state::Column::ChainId.eq(cid))
        .exec(db)
        .await?;
    Ok(())
}

/// What a [`rebuild`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Rebuilt {
    /// Transfers summed.
    pub transfers: u64,
    /// (holder, token) pairs summed (those that sum to zero have no row).
    pub pairs: u64,
}

/// Builds the transfer tables' lacking indexes
/// ([`backfill_indexes::restore_transfer_indexes`]) and [`rebuild`]s the chain's balances;
/// returns how many indexes it built and what the rebuild did.
///
/// On PostgreSQL, when the balances were left out, the two run side by side, on two of the
/// pool's connections. They touch different things: the sums read the transfers and write only
/// `erc20_balances`, the index builds read the same table and write only its new indexes, and
/// neither waits for the other; a restore that kept one core of the server busy keeps two
/// (`docs/BENCHMARKS.md`). Else they run one after the other: on MySQL an index build's last
/// step would wait for the sums' transaction to end (it reads the table), and readers of the
/// table would queue behind it meanwhile; SQLite has one writer at a time; and a pool of fewer
/// than four connections (the index builds' one, and the sums' three: [`rebuild_by_copy`])
/// would make one side wait for a connection.
pub async fn rebuild_beside_indexes(
    db: &DatabaseConnection,
    chain: Chain,
    sums: Option<Sums>,
) -> Result<(usize, Option<Rebuilt>), DbErr> {
    let side_by_side =
        Dialect::of(db) == Dialect::Postgres && super::database::max_connections(db) >= 4;
    if side_by_side && pending(db, chain.db_id()).await? {
        return tokio::try_join!(
            backfill_indexes::restore_transfer_indexes(db),
            rebuild(db, chain, sums)
        );
    }
    let built = backfill_indexes::restore_transfer_indexes(db).await?;
    Ok((built, rebuild(db, chain, sums).await?))
}

/// Sums every kept balance of the chain afresh from its stored transfers and clears
/// [`pending`], in one transaction under the chain's lock; `None` when they were not left out.
///
/// The transfers are read once, in the order of their primary key (a sequential read on every
/// backend, no address index needed), and summed in memory; at [`PAIRS_IN_MEMORY`] pairs the
/// sums are written (added to those written before) and the read goes on after the last
/// transfer summed.
///
/// On PostgreSQL (with a pool of three connections or more) the transfers are read and the
/// first round's sums written by binary `COPY` on connections of their own ([`rebuild_by_copy`]).
///
/// `sums` kept in memory since [`defer`] are written instead, with no transfer read, when they
/// summed every write since ([`Sums`]).
pub async fn rebuild(
    db: &DatabaseConnection,
    chain: Chain,
    sums: Option<Sums>,
) -> Result<Option<Rebuilt>, DbErr> {
    rebuild_with(db, chain, PAIRS_IN_MEMORY, sums).await
}

/// [`rebuild`], writing the sums every `pairs` pairs.
async fn rebuild_with(
    db: &DatabaseConnection,
    chain: Chain,
    pairs: usize,
    sums: Option<Sums>,
) -> Result<Option<Rebuilt>, DbErr> {
    if let Some(sums) = sums {
        match write_kept_sums(db, chain, sums).await? {
            Kept::Written(done) => return Ok(Some(done)),
            Kept::NotPending => return Ok(None),
            Kept::Stale => {}
        }
    }
    if Dialect::of(db) == Dialect::Postgres && super::database::max_connections(db) >= 3 {
        return rebuild_by_copy(db, chain, pairs).await;
    }
    rebuild_in_rounds(db, chain, pairs).await
}

/// What [`write_kept_sums`] found.
enum Kept {
    /// The sums were written and the flag cleared.
    Written(Rebuilt),
    /// The balances are not left out.
    NotPending,
    /// The sums missed a write: nothing was written.
    Stale,
}

/// Writes the [`Sums`] kept in memory as the chain's balances and clears [`pending`], under the
/// chain's lock, when they summed every write since [`defer`]. On PostgreSQL the sums go in by
/// binary `COPY` on a connection of their own, as [`rebuild_by_copy`]'s first round does.
async fn write_kept_sums(db: &DatabaseConnection, chain: Chain, sums: Sums) -> Result<Kept, DbErr> {
    let cid = chain.db_id();
    let by_copy = Dialect::of(db) == Dialect::Postgres && super::database::max_connections(db) >= 2;
    let txn = match locked_if_summed(db, chain, &sums).await? {
        Ok(txn) => txn,
        Err(kept) => return Ok(kept),
    };
    let started = Instant::now();
    delete_balances(&txn, cid).await?;
    if by_copy {
        // Committed before the COPY, which would otherwise wait on the deleted rows' locks.
        txn.commit().await?;
        let txn = match locked_if_summed(db, chain, &sums).await? {
            Ok(txn) => txn,
            Err(kept) => return Ok(kept),
        };
        let pool = db.get_postgres_connection_pool();
        write_round(&txn, pool, cid, &sums.deltas, true).await?;
        return clear_pending(txn, chain, &sums, started).await;
    }
    write_sums(&txn, cid, &sums.deltas, true).await?;
    clear_pending(txn, chain, &sums, started).await
}

/// Clears [`pending`] and commits the rebuild that wrote `sums`.
async fn clear_pending(
    txn: DatabaseTransaction,
    chain: Chain,
    sums: &Sums,
    started: Instant,
) -> Result<Kept, DbErr> {
    let done = Rebuilt {
        transfers: sums.transfers,
        pairs: sums.deltas.balances.len() as u64,
    };
    log_progress(chain, done, started, started.elapsed());
    set_pending(&txn, chain.db_id(), false).await?;
    txn.commit().await?;
    Ok(Kept::Written(done))
}

/// A transaction holding the chain's lock, when its balances are left out and `sums` summed
/// every write since; else what [`write_kept_sums`] found (and nothing held).
async fn locked_if_summed(
    db: &DatabaseConnection,
    chain: Chain,
    sums: &Sums,
) -> Result<Result<DatabaseTransaction, Kept>, DbErr> {
    let Some(txn) = locked_if_pending(db, chain).await? else {
        return Ok(Err(Kept::NotPending));
    };
    let writes = super::erc20_balances::left_out_writes(&txn, chain.db_id()).await?;
    if writes != Some(sums.writes) {
        tracing::info!(
            %chain,
            summed = sums.writes,
            writes,
            "backfill: the balances summed in memory missed a write; summing the transfers"
        );
        return Ok(Err(Kept::Stale));
    }
    Ok(Ok(txn))
}

/// A transaction holding the chain's lock, when its balances are left out ([`pending`]); `None`
/// (and nothing held) when they are not.
async fn locked_if_pending(
    db: &DatabaseConnection,
    chain: Chain,
) -> Result<Option<DatabaseTransaction>, DbErr> {
    let txn = db.begin().await?;
    lock_chain(&txn, chain).await?;
    if pending(&txn, chain.db_id()).await? {
        return Ok(Some(txn));
    }
    txn.commit().await?;
    Ok(None)
}

/// Deletes the chain's balances (those of an interrupted rebuild, or of before the backfill).
async fn delete_balances<C: ConnectionTrait>(db: &C, cid: i64) -> Result<(), DbErr> {
    erc20_balance::Entity::delete_many()
        .filter(erc20_balance::Column::ChainId.eq(cid))
        .exec(db)
        .await?;
    Ok(())
}

/// Logs how far a rebuild got: `writing` of the time since `started` went to writing sums.
fn log_progress(chain: Chain, done: Rebuilt, started: Instant, writing: Duration) {
    tracing::info!(
        %chain,
        transfers = done.transfers,
        pairs = done.pairs,
        seconds = started.elapsed().as_secs_f64(),
        writing_seconds = writing.as_secs_f64(),
        "backfill: summing the balances"
    );
}

/// [`rebuild`] on PostgreSQL, streaming with binary `COPY`, which spares the server a statement
/// and an array per 20,000 rows and the client a decoded row object per transfer
/// (`docs/BENCHMARKS.md`).
///
/// The sums of an interrupted rebuild are deleted first, in a transaction of their own. Then,
/// under the chain's lock (no writer adds or removes this chain's transfers meanwhile), the
/// transfers are read with one `COPY ... TO STDOUT` on a second connection, in any order (a
/// sum does not depend on it), and the first round of sums is written with one
/// `COPY ... FROM STDIN` on a third, committed on its own; later rounds (beyond `pairs` pairs)
/// are added to it in the lock's transaction, which clears [`pending`] last. Until then no
/// reader takes the table for the truth (the flag is set), and a crash before it leaves the
/// flag set: the next rebuild deletes what was written and starts again.
async fn rebuild_by_copy(
    db: &DatabaseConnection,
    chain: Chain,
    pairs: usize,
) -> Result<Option<Rebuilt>, DbErr> {
    let cid = chain.db_id();
    let Some(txn) = locked_if_pending(db, chain).await? else {
        return Ok(None);
    };
    // Committed before the COPY, which would otherwise wait on the deleted rows' locks.
    delete_balances(&txn, cid).await?;
    txn.commit().await?;
    let Some(txn) = locked_if_pending(db, chain).await? else {
        return Ok(None);
    };
    let pool = db.get_postgres_connection_pool();
    let sql = format!(
        "COPY (SELECT contract_address, from_address, to_address, value, block_number \
         FROM erc20_transfers WHERE chain_id = {cid}) TO STDOUT (FORMAT binary)"
    );
    let mut stream = PgPoolCopyExt::copy_out_raw(pool, &sql)
        .await
        .map_err(pg_copy::error)?;
    let started = Instant::now();
    let mut writing = Duration::ZERO;
    let mut reader = CopyReader::default();
    let mut d = Deltas::default();
    let mut done = Rebuilt::default();
    let mut first = true;
    while let Some(chunk) = stream.try_next().await.map_err(pg_copy::error)? {
        reader.push(&chunk);
        while let Some(row) = reader.next_row()? {
            sum_row(&mut d, &row)?;
            done.transfers += 1;
        }
        if d.balances.len() >= pairs {
            let write_started = Instant::now();
            done.pairs += d.balances.len() as u64;
            write_round(&txn, pool, cid, &std::mem::take(&mut d), first).await?;
            writing += write_started.elapsed();
            first = false;
        }
    }
    if !reader.ended() {
        return Err(DbErr::Custom(
            "binary COPY of the transfers ended early".into(),
        ));
    }
    let write_started = Instant::now();
    done.pairs += d.balances.len() as u64;
    write_round(&txn, pool, cid, &d, first).await?;
    writing += write_started.elapsed();
    log_progress(chain, done, started, writing);
    set_pending(&txn, cid, false).await?;
    txn.commit().await?;
    Ok(Some(done))
}

/// Counts one transfer read by [`rebuild_by_copy`]: (token, from, to, value, block).
fn sum_row(d: &mut Deltas, row: &[Option<&[u8]>]) -> Result<(), DbErr> {
    let [token, from, to, value, block] = row else {
        return Err(DbErr::Custom(format!(
            "binary COPY: a transfer of {} fields",
            row.len()
        )));
    };
    let address = |f: Option<&[u8]>, name: &str| -> Result<Address, DbErr> {
        let b: [u8; 20] = pg_copy::field(f, name)?
            .try_into()
            .map_err(|_| DbErr::Custom(format!("binary COPY: {name} is not 20 bytes")))?;
        Ok(Address::from_bytes(b))
    };
    let value = Uint256::from_be_slice(pg_copy::field(*value, "value")?)
        .ok_or_else(|| DbErr::Custom("binary COPY: value is not 1 to 32 bytes".into()))?;
    d.transfer(
        address(*token, "contract_address")?,
        address(*from, "from_address")?,
        address(*to, "to_address")?,
        value,
        pg_copy::int8(*block, "block_number")?,
        false,
    );
    Ok(())
}

/// Writes a round of [`rebuild_by_copy`]'s sums: the first with `COPY ... FROM STDIN` on a
/// connection of its own, in key order, committed; the next added to the stored ones in `txn`.
async fn write_round<C: ConnectionTrait>(
    txn: &C,
    pool: &PgPool,
    cid: i64,
    d: &Deltas,
    first: bool,
) -> Result<(), DbErr> {
    if !first {
        return apply_balances(txn, cid, d, None).await;
    }
    let mut copy = PgPoolCopyExt::copy_in_raw(
        pool,
        "COPY erc20_balances (chain_id, owner_address, contract_address, balance, wraps, \
         block_number) FROM STDIN (FORMAT binary)",
    )
    .await
    .map_err(pg_copy::error)?;
    let mut w = CopyWriter::default();
    for ((owner, token), (net, block)) in &d.balances {
        if net.is_zero() {
            continue;
        }
        w.row(6)
            .int8(cid)
            .bytes(owner.as_bytes())
            .bytes(token.as_bytes())
            .bytes(&net.low.to_be_bytes())
            .int8(net.wraps)
            .int8(*block);
        if w.len() >= COPY_CHUNK {
            copy.send(w.take()).await.map_err(pg_copy::error)?;
        }
    }
    copy.send(w.finish()).await.map_err(pg_copy::error)?;
    copy.finish().await.map_err(pg_copy::error)?;
    Ok(())
}

/// [`rebuild`], writing the sums every `pairs` pairs.
async fn rebuild_in_rounds(
    db: &DatabaseConnection,
    chain: Chain,
    pairs: usize,
) -> Result<Option<Rebuilt>, DbErr> {
    let cid = chain.db_id();
    let Some(txn) = locked_if_pending(db, chain).await? else {
        return Ok(None);
    };
    delete_balances(&txn, cid).await?;
    let mut done = Rebuilt::default();
    let mut after: Option<(i64, i32)> = None;
    let mut first = true;
    let started = Instant::now();
    let mut writing = Duration::ZERO;
    loop {
        let (sums, read, last) = sum_from(&txn, cid, after, pairs).await?;
        done.transfers += read;
        done.pairs += sums.balances.len() as u64;
        let write_started = Instant::now();
        write_sums(&txn, cid, &sums, first).await?;
        writing += write_started.elapsed();
        first = false;
        log_progress(chain, done, started, writing);
        match last {
            Some(position) => after = Some(position),
            None => break,
        }
    }
    set_pending(&txn, cid, false).await?;
    txn.commit().await?;
    Ok(Some(done))
}

/// Sums the chain's transfers after `after` (block, log index), in key order, until `pairs`
/// pairs are summed. Returns the sums, how many transfers were read, and
/// the last one summed when the read stopped early (`None`: it reached the end).
async fn sum_from<C: ConnectionTrait + StreamTrait>(
    db: &C,
    cid: i64,
    after: Option<(i64, i32)>,
    pairs: usize,
) -> Result<(Deltas, u64, Option<(i64, i32)>), DbErr> {
    use erc20_transfer::Column as T;
    let mut find = erc20_transfer::Entity::find()
        .select_only()
        .column(T::ContractAddress)
        .column(T::FromAddress)
        .column(T::ToAddress)
        .column(T::Value)
        .column(T::BlockNumber)
        .column(T::LogIndex)
        .filter(T::ChainId.eq(cid));
    if let Some((block, log)) = after {
        find = find.filter(T::BlockNumber.gte(block)).filter(
            Condition::any()
                .add(T::BlockNumber.gt(block))
                .add(T::LogIndex.gt(log)),
        );
    }
    let mut rows = find
        .order_by_asc(T::BlockNumber)
        .order_by_asc(T::LogIndex)
        .into_tuple::<(Address, Address, Address, Uint256, i64, i32)>()
        .stream(db)
        .await?;
    let mut d = Deltas::default();
    let mut read = 0;
    while let Some(row) = rows.try_next().await? {
        let (token, from, to, value, block, log) = row;
        d.transfer(token, from, to, value, block, false);
        read += 1;
        if d.balances.len() >= pairs {
            return Ok((d, read, Some((block, log))));
        }
    }
    Ok((d, read, None))
}

/// Writes the sums of `d`: inserted when `fresh` (the chain's balances were just deleted),
/// else added to the stored ones.
async fn write_sums<C: ConnectionTrait>(
    db: &C,
    cid: i64,
    d: &Deltas,
    fresh: bool,
) -> Result<(), DbErr> {
    if !fresh {
        return apply_balances(db, cid, d, None).await;
    }
    let per_round = if Dialect::of(db).takes_key_arrays() {
        PG_PAIRS_PER_ROUND
    } else {
        PAIRS_PER_ROUND
    };
    let sums: Vec<_> = d.balances.iter().filter(|(_, s)| !s.0.is_zero()).collect();
    for round in sums.chunks(per_round) {
        let mut rows = BalanceRows::default();
        for (key, (net, block)) in round {
            rows.push(**key, *net, *block);
        }
        rows.write(db, cid, Write::Insert).await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::{Erc20Move, EventMeta};
    use crate::store::testing::{close, dispose, open, sqlite, Backend, Scratch};
    use crate::store::{
        set_checkpoint, write_batch, write_batch_summing, Batch, BlockHeader, Checkpoint,
    };
    use alloy::primitives::B256;

    fn a(n: u64) -> Address {
        Address::parse(&format!("0x{n:040x}")).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Block `block`'s batch: `n` transfers of two tokens between a few holders (each moves
    /// several pairs, some to zero), minted from the zero address now and then.
    fn batch(block: u64, n: u64) -> Batch {
        let hash = B256::with_last_byte(block as u8);
        let erc20 = (0..n)
            .map(|i| {
                let k = block * 31 + i * 7;
                Erc20Move {
                    meta: EventMeta {
                        contract: a(0xc0 + k % 2),
                        block_number: block,
                        block_hash: hash,
                        transaction_hash: hash,
                        transaction_index: 0,
                        log_index: i as u32,
                    },
                    from: if k % 5 == 0 {
                        Address::ZERO
                    } else {
                        a(k % 6 + 1)
                    },
                    to: a((k + 3) % 6 + 1),
                    value: Uint256::from_u64(k % 4 + 1),
                }
            })
            .collect();
        Batch {
            blocks: vec![BlockHeader {
                number: block,
                hash,
                parent_hash: None,
                timestamp: block,
            }],
            erc20,
            ..Batch::default()
        }
    }

    async fn balances(db: &DatabaseConnection) -> Vec<erc20_balance::Model> {
        let mut rows = erc20_balance::Entity::find()
            .all(db)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        rows.sort_by_key(|r| (r.owner_address, r.contract_address));
        rows
    }

    /// Balances summed afresh (in several rounds of a few pairs: on PostgreSQL the first copied
    /// in, the next added to it) equal those kept batch by batch; while they are left out, a
    /// batch moves none of them; a rebuild over an interrupted one's rows gives the same sums;
    /// the rebuild clears the flag and the next one does nothing.
    async fn summed_afresh_the_balances_equal_those_kept_batch_by_batch(backend: Backend) {
        let (db, scratch) = open(backend, "rebuild").await;
        for block in 1..=4 {
            write_batch(&db, Chain::ETH, &batch(block, 9))
                .await
                .expect("write");
        }
        let kept = balances(&db).await;
        assert!(kept.len() > 4, "the batches move several pairs: {kept:?}");

        let deferral = defer(&db, Chain::ETH).await.expect("defer");
        assert_eq!(
            deferral.left_out,
            backend != Backend::Sqlite,
            "{deferral:?}"
        );
        assert!(deferral.sums.is_none(), "transfers are stored: no sums");
        // Left out on every backend here: the rebuild works the same on all of them.
        set_pending(&db, Chain::ETH.db_id(), true)
            .await
            .expect("flag");
        assert!(pending(&db, Chain::ETH.db_id()).await.expect("read"));
        write_batch(&db, Chain::ETH, &batch(5, 9))
            .await
            .expect("write");
        assert_eq!(balances(&db).await, kept, "left out: no balance moves");
        for block in 1..=5 {
            write_batch(&db, Chain::ETH, &batch(block, 9))
                .await
                .expect("rewrite");
        }

        let done = rebuild_with(&db, Chain::ETH, 3, None)
            .await
            .expect("rebuild");
        assert_eq!(done.map(|d| d.transfers), Some(45));
        assert!(!pending(&db, Chain::ETH.db_id()).await.expect("read"));
        let rebuilt = balances(&db).await;
        assert_ne!(rebuilt, kept, "block 5 counts now");

        // As if interrupted after writing: the flag set again over the rows.
        set_pending(&db, Chain::ETH.db_id(), true)
            .await
            .expect("flag");
        rebuild_with(&db, Chain::ETH, 1_000, None)
            .await
            .expect("rebuild again");
        assert_eq!(balances(&db).await, rebuilt, "one round or several");

        // The same five blocks kept batch by batch in a database of their own.
        let (db2, path2) = sqlite(&format!("rebuild_kept_{backend:?}")).await;
        for block in 1..=5 {
            write_batch(&db2, Chain::ETH, &batch(block, 9))
                .await
                .expect("write");
        }
        assert_eq!(rebuilt, balances(&db2).await);
        assert_eq!(rebuild(&db, Chain::ETH, None).await.expect("again"), None);
        dispose(db, scratch).await;
        close(db2, &path2).await;
    }

    /// A database whose chain has a checkpoint row and no transfer, with its balances deferred
    /// (on every backend: the sums work the same on all of them).
    async fn deferred(backend: Backend, name: &str) -> (DatabaseConnection, Scratch) {
        let (db, scratch) = open(backend, name).await;
        let start = Checkpoint {
            start_block: 0,
            indexed_block: None,
            head_block: 1_000,
        };
        set_checkpoint(&db, Chain::ETH, start).await.expect("row");
        let deferral = defer(&db, Chain::ETH).await.expect("defer");
        assert_eq!(
            deferral.left_out,
            backend != Backend::Sqlite,
            "SQLite keeps them"
        );
        assert_eq!(
            deferral.left_out,
            deferral.sums.is_some(),
            "nothing stored yet"
        );
        set_pending(&db, Chain::ETH.db_id(), true)
            .await
            .expect("flag");
        (db, scratch)
    }

    /// The balances of blocks `blocks` kept batch by batch, in a database of their own.
    async fn kept_batch_by_batch(
        name: &str,
        blocks: impl IntoIterator<Item = u64>,
    ) -> Vec<erc20_balance::Model> {
        let (db, path) = sqlite(name).await;
        for block in blocks {
            write_batch(&db, Chain::ETH, &batch(block, 9))
                .await
                .expect("write");
        }
        let kept = balances(&db).await;
        close(db, &path).await;
        kept
    }

    /// Balances summed in memory as a fresh backfill's batches are written (a rewritten batch
    /// adds nothing) are written as they are, and equal those kept batch by batch.
    async fn summed_in_memory_the_balances_equal_those_kept_batch_by_batch(backend: Backend) {
        let (db, scratch) = deferred(backend, "sums").await;
        let mut sums = Some(Sums::default());
        for block in [1, 2, 3, 2, 4, 5] {
            write_batch_summing(&db, Chain::ETH, &batch(block, 9), &mut sums)
                .await
                .expect("write");
        }
        let counts = sums.as_ref().map(|s| (s.writes, s.transfers));
        assert_eq!(counts, Some((5, 45)), "the rewrite of block 2 adds nothing");
        assert_eq!(balances(&db).await, [], "left out");
        let done = rebuild(&db, Chain::ETH, sums).await.expect("rebuild");
        assert_eq!(done.map(|d| d.transfers), Some(45), "the sums, not a read");
        assert!(!pending(&db, Chain::ETH.db_id()).await.expect("read"));
        let kept = kept_batch_by_batch(&format!("sums_kept_{backend:?}"), 1..=5).await;
        assert!(kept.len() > 4, "the batches move several pairs: {kept:?}");
        assert_eq!(balances(&db).await, kept);
        dispose(db, scratch).await;
    }

    /// Sums that missed a write (another writer's) are dropped at the next write they see, or
    /// refused by the rebuild, which writes nothing of them and sums the stored transfers.
    async fn sums_that_missed_a_write_are_not_written(backend: Backend) {
        let (db, scratch) = deferred(backend, "stale_sums").await;
        let mut sums = Some(Sums::default());
        write_batch_summing(&db, Chain::ETH, &batch(1, 9), &mut sums)
            .await
            .expect("write");
        write_batch(&db, Chain::ETH, &batch(2, 9))
            .await
            .expect("not summed");
        let stale = sums.take().expect("summed one write");
        assert!(matches!(
            write_kept_sums(&db, Chain::ETH, stale)
                .await
                .expect("check"),
            Kept::Stale
        ));
        assert!(pending(&db, Chain::ETH.db_id()).await.expect("read"));
        assert_eq!(balances(&db).await, [], "nothing written");
        let mut sums = Some(Sums::default());
        write_batch_summing(&db, Chain::ETH, &batch(3, 9), &mut sums)
            .await
            .expect("write");
        assert!(sums.is_none(), "dropped at a write it did not expect");
        let mut stale = Some(Sums::default());
        write_batch_summing(&db, Chain::ETH, &batch(4, 9), &mut stale)
            .await
            .expect("write");
        let done = rebuild(&db, Chain::ETH, stale).await.expect("rebuild");
        assert_eq!(done.map(|d| d.transfers), Some(36), "every stored transfer");
        let kept = kept_batch_by_batch(&format!("stale_kept_{backend:?}"), 1..=4).await;
        assert_eq!(balances(&db).await, kept);
        dispose(db, scratch).await;
    }

    mod sqlite {
        #[tokio::test]
        async fn summed_afresh_the_balances_equal_those_kept_batch_by_batch() {
            super::summed_afresh_the_balances_equal_those_kept_batch_by_batch(
                super::Backend::Sqlite,
            )
            .await;
        }

        #[tokio::test]
        async fn summed_in_memory_the_balances_equal_those_kept_batch_by_batch() {
            super::summed_in_memory_the_balances_equal_those_kept_batch_by_batch(
                super::Backend::Sqlite,
            )
            .await;
        }

        #[tokio::test]
        async fn sums_that_missed_a_write_are_not_written() {
            super::sums_that_missed_a_write_are_not_written(super::Backend::Sqlite).await;
        }
    }

    mod postgres {
        #[tokio::test]
        async fn summed_afresh_the_balances_equal_those_kept_batch_by_batch() {
            super::summed_afresh_the_balances_equal_those_kept_batch_by_batch(
                super::Backend::Postgres,
            )
            .await;
        }

        #[tokio::test]
        async fn summed_in_memory_the_balances_equal_those_kept_batch_by_batch() {
            super::summed_in_memory_the_balances_equal_those_kept_batch_by_batch(
                super::Backend::Postgres,
            )
            .await;
        }

        #[tokio::test]
        async fn sums_that_missed_a_write_are_not_written() {
            super::sums_that_missed_a_write_are_not_written(super::Backend::Postgres).await;
        }
    }

    mod mysql {
        #[tokio::test]
        async fn summed_afresh_the_balances_equal_those_kept_batch_by_batch() {
            super::summed_afresh_the_balances_equal_those_kept_batch_by_batch(
                super::Backend::MySql,
            )
            .await;
        }

        #[tokio::test]
        async fn summed_in_memory_the_balances_equal_those_kept_batch_by_batch() {
            super::summed_in_memory_the_balances_equal_those_kept_batch_by_batch(
                super::Backend::MySql,
            )
            .await;
        }

        #[tokio::test]
        async fn sums_that_missed_a_write_are_not_written() {
            super::sums_that_missed_a_write_are_not_written(super::Backend::MySql).await;
        }
    }
}
