//! The transaction a batch is written in ([`super::write_batch`]). On PostgreSQL and SQLite it
//! is a sqlx transaction of the store's own: sea-orm's statements run on it like on any
//! connection, their bound values moved into the driver's arguments rather than copied (sea-orm's
//! own transaction copies every value of a statement before binding it: for a batch's bulk
//! inserts, every address, hash and amount). On PostgreSQL the batch's new ERC20 transfers go in
//! by binary `COPY` on the same connection, inside the same transaction (sea-orm's
//! `DatabaseTransaction` does not lend its connection for `COPY`). On MySQL it is sea-orm's
//! transaction; there and on SQLite the transfers go in as a bulk `INSERT`.
//!
//! `COPY` saves the server the `UNNEST` arrays' parsing, and the writer building a bound value
//! per field: in `psql`, 40,000 transfers went into the table (its primary key only, as in a
//! backfill) in 67–81 ms by `COPY` and in 124–129 ms from arrays.

use std::sync::Arc;

use sea_orm::sqlx::{self, Database, IntoArguments, Postgres, Sqlite};
use sea_orm::{
    ConnAcquireErr, ConnectionTrait, DatabaseConnection, DatabaseTransaction, DbErr, ExecResult,
    QueryResult, RuntimeErr, Statement, TransactionTrait,
};
use sea_query_sqlx::SqlxValues;
use tokio::sync::Mutex;

use super::bulk::Rows;
use super::dialect::Dialect;
use super::pg_copy::error as exec_error;

/// A batch's writing transaction.
pub(super) enum BatchTxn {
    /// sea-orm's transaction (MySQL).
    Orm(DatabaseTransaction),
    /// A sqlx transaction on a connection of the PostgreSQL pool.
    Pg(Mutex<sqlx::Transaction<'static, Postgres>>),
    /// A sqlx transaction on a connection of the SQLite pool.
    Sqlite(Mutex<sqlx::Transaction<'static, Sqlite>>),
}

/// Runs `$on_sqlx` with `$conn` bound to the sqlx connection of a PostgreSQL or SQLite batch
/// transaction (the same code, typed for each driver), or `$on_orm` with sea-orm's.
macro_rules! on_connection {
    ($txn:expr, $orm:ident => $on_orm:expr, $conn:ident => $on_sqlx:expr) => {
        match $txn {
            BatchTxn::Orm($orm) => $on_orm,
            BatchTxn::Pg(txn) => {
                let mut guard = txn.lock().await;
                let $conn = &mut **guard;
                $on_sqlx
            }
            BatchTxn::Sqlite(txn) => {
                let mut guard = txn.lock().await;
                let $conn = &mut **guard;
                $on_sqlx
            }
        }
    };
}

impl BatchTxn {
    /// Begins the transaction: on PostgreSQL and SQLite on a connection of the pool, held
    /// until the commit (dropped uncommitted, it is rolled back).
    pub(super) async fn begin(db: &DatabaseConnection) -> Result<Self, DbErr> {
        use sea_orm::DatabaseConnectionType as Type;
        match &db.inner {
            Type::SqlxPostgresPoolConnection(_) => {
                let txn = db.get_postgres_connection_pool().begin().await;
                Ok(BatchTxn::Pg(Mutex::new(txn.map_err(begin_error)?)))
            }
            Type::SqlxSqlitePoolConnection(_) => {
                let txn = db.get_sqlite_connection_pool().begin().await;
                Ok(BatchTxn::Sqlite(Mutex::new(txn.map_err(begin_error)?)))
            }
            _ => Ok(BatchTxn::Orm(db.begin().await?)),
        }
    }

    /// On SQLite, whether the rest of the batch reads the database file through a memory map
    /// of up to [`SQLITE_MMAP_BYTES`] (`PRAGMA mmap_size`) or by `pread` into the connection's
    /// small page cache (`super::database::SQLITE_PAGE_CACHE_KIB`). The setting stays on the
    /// connection, so that a backfill's batches keep their map from one to the next (a map
    /// set up for each batch and torn down after it gained nothing), and the first batch on
    /// the connection that does not map takes it down. Call it once the transaction holds the
    /// write lock (`write::lock_chain`): the pragma then starts no read snapshot of its own. A
    /// no-op on the other backends.
    ///
    /// A backfill's balance lookups and key inserts land on pages all over a large file:
    /// through the map, a page the cache does not hold costs no system call and no copy
    /// (docs/BENCHMARKS.md, "A backfill reads SQLite's file through a memory map"). Mapped
    /// pages count in the process's resident memory (they are the same page-cache pages
    /// `pread` copies from), so only a backfill maps, and pooled connections are recycled
    /// (sqlx's 30-minute lifetime) even if no batch unmaps them.
    pub(super) async fn map_file(&self, map: bool) -> Result<(), DbErr> {
        let BatchTxn::Sqlite(txn) = self else {
            return Ok(());
        };
        let bytes = if map { SQLITE_MMAP_BYTES } else { 0 };
        let sql = sqlx::AssertSqlSafe(format!("PRAGMA mmap_size = {bytes}"));
        let mut txn = txn.lock().await;
        sqlx::Executor::execute(&mut **txn, sql)
            .await
            .map_err(exec_error)?;
        Ok(())
    }

    /// Commits.
    pub(super) async fn commit(self) -> Result<(), DbErr> {
        match self {
            BatchTxn::Orm(txn) => txn.commit().await,
            BatchTxn::Pg(txn) => txn.into_inner().commit().await.map_err(exec_error),
            BatchTxn::Sqlite(txn) => txn.into_inner().commit().await.map_err(exec_error),
        }
    }

    /// Inserts rows whose keys the caller knows are not stored ([`Rows::known_new`]): by
    /// binary `COPY` on PostgreSQL, by bulk `INSERT` elsewhere.
    pub(super) async fn insert_new(&self, rows: Rows) -> Result<(), DbErr> {
        let BatchTxn::Pg(txn) = self else {
            return rows.known_new().insert(self).await;
        };
        let Some((sql, data)) = rows.copy_in()? else {
            return Ok(());
        };
        let mut conn = txn.lock().await;
        let mut copy = conn.copy_in_raw(&sql).await.map_err(exec_error)?;
        copy.send(data).await.map_err(exec_error)?;
        copy.finish().await.map_err(exec_error)?;
        Ok(())
    }
}

/// The most bytes of the database file a SQLite backfill's batch maps ([`BatchTxn::map_file`]);
/// SQLite lowers it to its own build's limit (2 GiB by default).
const SQLITE_MMAP_BYTES: u64 = 1 << 31;

/// A sqlx error of `BEGIN` on a pooled connection, as sea-orm reports it: no connection to be
/// had is [`DbErr::ConnectionAcquire`].
fn begin_error(e: sqlx::Error) -> DbErr {
    match e {
        sqlx::Error::PoolTimedOut => DbErr::ConnectionAcquire(ConnAcquireErr::Timeout),
        sqlx::Error::PoolClosed => DbErr::ConnectionAcquire(ConnAcquireErr::ConnectionClosed),
        e => exec_error(e),
    }
}

/// A sqlx error of a query, as sea-orm reports it.
fn query_error(e: sqlx::Error) -> DbErr {
    DbErr::Query(RuntimeErr::SqlxError(Arc::new(e)))
}

/// The statement with its values moved into the driver's arguments, bound as sea-orm's
/// drivers bind them.
fn bound<DB>(stmt: Statement) -> sqlx::query::Query<'static, DB, SqlxValues>
where
    DB: Database,
    SqlxValues: for<'q> IntoArguments<DB>,
{
    let values = stmt.values.unwrap_or(sea_orm::Values(Vec::new()));
    sqlx::query_with(sqlx::AssertSqlSafe(stmt.sql), SqlxValues(values))
}

#[async_trait::async_trait]
impl ConnectionTrait for BatchTxn {
    /// The trait names sea-orm's backend type; which backend it is, [`Dialect`] says.
    fn get_database_backend(&self) -> sea_orm::DatabaseBackend {
        match self {
            BatchTxn::Orm(txn) => txn.get_database_backend(),
            BatchTxn::Pg(_) => Dialect::Postgres.backend(),
            BatchTxn::Sqlite(_) => Dialect::Sqlite.backend(),
        }
    }

    async fn execute_raw(&self, stmt: Statement) -> Result<ExecResult, DbErr> {
        on_connection! {
            self,
            txn => txn.execute_raw(stmt).await,
            conn => Ok(bound(stmt).execute(conn).await.map_err(exec_error)?.into())
        }
    }

    async fn execute_unprepared(&self, sql: &str) -> Result<ExecResult, DbErr> {
        on_connection! {
            self,
            txn => txn.execute_unprepared(sql).await,
            conn => {
                let sql = sqlx::AssertSqlSafe(sql.to_owned());
                Ok(sqlx::Executor::execute(conn, sql).await.map_err(exec_error)?.into())
            }
        }
    }

    async fn query_one_raw(&self, stmt: Statement) -> Result<Option<QueryResult>, DbErr> {
        on_connection! {
            self,
            txn => txn.query_one_raw(stmt).await,
            conn => {
                let row = bound(stmt).fetch_optional(conn).await.map_err(query_error)?;
                Ok(row.map(QueryResult::from))
            }
        }
    }

    async fn query_all_raw(&self, stmt: Statement) -> Result<Vec<QueryResult>, DbErr> {
        on_connection! {
            self,
            txn => txn.query_all_raw(stmt).await,
            conn => {
                let rows = bound(stmt).fetch_all(conn).await.map_err(query_error)?;
                Ok(rows.into_iter().map(QueryResult::from).collect())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use alloy::primitives::B256;
    use sea_orm::{EntityTrait, PaginatorTrait, QueryOrder};

    use super::*;
    use crate::decode::{Erc20Move, EventMeta};
    use crate::entity::erc20_transfer;
    use crate::store::rows;
    use crate::store::testing::{dispose, open, Backend, Scratch};
    use crate::store::BlockHeader;
    use crate::types::{Address, Uint256};

    fn a(n: u64) -> Address {
        Address::parse(&format!("0x{n:040x}")).unwrap_or_else(|e| panic!("{e}"))
    }

    fn moves(n: u32) -> (Vec<Erc20Move>, Vec<BlockHeader>) {
        let hash = B256::with_last_byte(7);
        let moves = (0..n)
            .map(|i| Erc20Move {
                meta: EventMeta {
                    contract: a(0xc0),
                    block_number: 7,
                    block_hash: hash,
                    transaction_hash: B256::with_last_byte(i as u8),
                    transaction_index: i,
                    log_index: i,
                },
                from: a(u64::from(i) + 1),
                to: a(u64::from(i) + 2),
                // Above 64 bits, so that the value's whole binary form travels.
                value: Uint256::parse(&format!("{}", u128::MAX - u128::from(i)))
                    .unwrap_or_else(|e| panic!("{e}")),
            })
            .collect();
        let header = BlockHeader {
            number: 7,
            hash,
            parent_hash: None,
            timestamp: 1_700_000_000,
        };
        (moves, vec![header])
    }

    async fn stored(db: &impl ConnectionTrait) -> Vec<erc20_transfer::Model> {
        erc20_transfer::Entity::find()
            .order_by_asc(erc20_transfer::Column::LogIndex)
            .all(db)
            .await
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// Rows inserted in a batch's transaction (by `COPY` on PostgreSQL) are seen by the
    /// statements run in it, and by others only once it commits; dropped uncommitted, it
    /// leaves nothing; a known-new key that is stored fails the insert, and the transaction
    /// leaves nothing more.
    async fn inserts_commit_with_the_transaction(backend: Backend) {
        let (db, scratch) = open(backend, "batch_txn").await;
        let (moves, headers) = moves(3);
        let new =
            || rows::erc20(1, &moves, &headers, Dialect::of(&db)).unwrap_or_else(|e| panic!("{e}"));

        let txn = BatchTxn::begin(&db).await.expect("begin");
        assert_eq!(
            matches!(txn, BatchTxn::Orm(_)),
            backend == Backend::MySql,
            "PostgreSQL and SQLite write on the store's own sqlx transaction"
        );
        txn.insert_new(new()).await.expect("insert");
        assert_eq!(stored(&txn).await.len(), 3, "seen inside the transaction");
        if backend != Backend::Sqlite {
            // SQLite's one writer would wait for this transaction's lock here.
            assert!(
                stored(&db).await.is_empty(),
                "not seen outside before commit"
            );
        }
        drop(txn);
        assert!(stored(&db).await.is_empty(), "dropped uncommitted: nothing");

        let txn = BatchTxn::begin(&db).await.expect("begin");
        txn.insert_new(new()).await.expect("insert");
        txn.commit().await.expect("commit");
        let rows = stored(&db).await;
        assert_eq!(rows.len(), 3);
        for (row, m) in rows.iter().zip(&moves) {
            assert_eq!(
                (
                    row.from_address,
                    row.to_address,
                    row.value,
                    row.block_timestamp
                ),
                (m.from, m.to, m.value, 1_700_000_000)
            );
            assert_eq!(
                row.transaction_hash.as_bytes().as_slice(),
                m.meta.transaction_hash.as_slice()
            );
        }

        let txn = BatchTxn::begin(&db).await.expect("begin");
        assert!(
            txn.insert_new(new()).await.is_err(),
            "a stored key is refused, not skipped"
        );
        drop(txn);
        assert_eq!(
            erc20_transfer::Entity::find()
                .count(&db)
                .await
                .expect("count"),
            3
        );
        dispose(db, scratch).await;
    }

    /// `PRAGMA mmap_size` as the transaction's connection has it.
    async fn mapped(txn: &BatchTxn) -> i64 {
        let row = txn
            .query_one_raw(Statement::from_string(
                Dialect::Sqlite.backend(),
                "PRAGMA mmap_size",
            ))
            .await
            .expect("pragma")
            .expect("a row");
        row.try_get("", "mmap_size").expect("mmap_size")
    }

    /// A SQLite batch that maps the file reads it through the map; the map stays on the
    /// connection after the commit, and the next batch there that does not map takes it down.
    /// On SQLite both batches run on a pool of one connection, so that the second one is on
    /// the first one's connection; on the other backends the map is a no-op. The batches'
    /// rows are stored either way.
    async fn a_batch_maps_the_file_while_asked(backend: Backend) {
        let (db, scratch) = open(backend, "batch_txn_map").await;
        let single = match &scratch {
            Scratch::File(path) => {
                let url = format!("sqlite://{}", path.display());
                Some(
                    super::super::database::connect(&url, 1)
                        .await
                        .expect("open"),
                )
            }
            Scratch::Server(..) => None,
        };
        let on = single.as_ref().unwrap_or(&db);
        let (moves, headers) = moves(4);
        let rows = |keep: [bool; 4]| {
            rows::erc20(1, &moves, &headers, Dialect::of(&db))
                .expect("rows")
                .only(&keep)
        };
        for (map, keep) in [
            (true, [true, true, false, false]),
            (false, [false, false, true, true]),
        ] {
            let txn = BatchTxn::begin(on).await.expect("begin");
            txn.insert_new(rows(keep)).await.expect("insert");
            if backend == Backend::Sqlite {
                assert_eq!(
                    mapped(&txn).await > 0,
                    !map,
                    "the first batch's map stays on the connection"
                );
            }
            txn.map_file(map).await.expect("map");
            if backend == Backend::Sqlite {
                assert_eq!(mapped(&txn).await > 0, map, "mapped: {map}");
            }
            txn.commit().await.expect("commit");
        }
        assert_eq!(stored(&db).await.len(), 4);
        if let Some(single) = single {
            single.close().await.expect("close");
        }
        dispose(db, scratch).await;
    }

    mod sqlite {
        #[tokio::test]
        async fn inserts_commit_with_the_transaction() {
            super::inserts_commit_with_the_transaction(super::Backend::Sqlite).await;
        }

        #[tokio::test]
        async fn a_batch_maps_the_file_while_asked() {
            super::a_batch_maps_the_file_while_asked(super::Backend::Sqlite).await;
        }
    }

    mod postgres {
        #[tokio::test]
        async fn inserts_commit_with_the_transaction() {
            super::inserts_commit_with_the_transaction(super::Backend::Postgres).await;
        }

        #[tokio::test]
        async fn a_batch_maps_the_file_while_asked() {
            super::a_batch_maps_the_file_while_asked(super::Backend::Postgres).await;
        }
    }

    mod mysql {
        #[tokio::test]
        async fn inserts_commit_with_the_transaction() {
            super::inserts_commit_with_the_transaction(super::Backend::MySql).await;
        }

        #[tokio::test]
        async fn a_batch_maps_the_file_while_asked() {
            super::a_batch_maps_the_file_while_asked(super::Backend::MySql).await;
        }
    }
}
