//! The database connection: the default URL, pools and their bounded caches per connection,
//! and whether the migrations are applied. Settings come from flags with environment
//! fallbacks (see README "Configuration").

use std::time::Duration;

use sea_orm::{ConnectOptions, Database, DatabaseConnection, DbErr};

/// The default database: a SQLite file in the working directory.
pub const DEFAULT_DATABASE_URL: &str = "sqlite://tokenql.db?mode=rwc";

/// Prepared statements kept per pooled connection (sqlx's cache, least recently used out, by
/// text; sqlx's default made explicit). What they weigh depends on how many distinct texts the
/// server issues, which is why lists in SQL are padded ([`crate::query`]'s `lists`): with SQLite
/// the compiled statements live in the server's memory.
pub const STATEMENT_CACHE: usize = 100;

/// SQLite's page cache per pooled connection, in KiB: with the default pool of 16, at most
/// 8 MiB of the server's memory. SQLite's default (2,000 KiB) is per connection too, so the
/// pool held 16 copies of the same hot pages, up to 31 MiB, and the copies only fill as the
/// database grows: in a soak they took the server's RSS up by ~1.5 MiB a minute for half an
/// hour (docs/BENCHMARKS.md, "Soak"). Pages not cached are read from the operating system's
/// file cache.
pub const SQLITE_PAGE_CACHE_KIB: u32 = 512;

/// The default pool size for `url`: 16, or 4 on SQLite. SQLite runs one writing transaction
/// at a time, readers beyond the cores gain nothing, and each connection's caches are the
/// server's memory (~4.5 MiB each in the soak: docs/BENCHMARKS.md, "Soak").
pub fn default_pool(url: &str) -> u32 {
    if url.starts_with("sqlite:") {
        4
    } else {
        16
    }
}

/// Connects to `url` (SQLite, PostgreSQL or MySQL/MariaDB) with a bounded pool; every
/// connection's caches are bounded ([`STATEMENT_CACHE`], [`SQLITE_PAGE_CACHE_KIB`]).
pub async fn connect(url: &str, max_connections: u32) -> Result<DatabaseConnection, DbErr> {
    let mut opts = ConnectOptions::new(url.to_string());
    opts.max_connections(max_connections)
        .min_connections(1)
        .connect_timeout(Duration::from_secs(10))
        .acquire_timeout(Duration::from_secs(10))
        // A ping on every checkout is one more round trip per statement; a connection in use
        // is known to be alive, so only one idle for a while (dropped by a proxy, say) is
        // tested.
        .test_before_acquire_if_idle_for(Duration::from_secs(30))
        .sqlx_logging(false)
        // WAL lets readers proceed while a batch is written; wait rather than fail on a lock.
        .map_sqlx_sqlite_opts(|o| {
            o.journal_mode(sea_orm::sqlx::sqlite::SqliteJournalMode::Wal)
                .busy_timeout(Duration::from_secs(10))
                .synchronous(sea_orm::sqlx::sqlite::SqliteSynchronous::Normal)
                .statement_cache_capacity(STATEMENT_CACHE)
                .pragma("cache_size", format!("-{SQLITE_PAGE_CACHE_KIB}"))
        })
        .map_sqlx_postgres_opts(|o| o.statement_cache_capacity(STATEMENT_CACHE))
        .map_sqlx_mysql_opts(|o| o.statement_cache_capacity(STATEMENT_CACHE));
    Database::connect(opts).await
}

/// The most connections `db`'s pool opens (1 for a connection that is not a pool).
pub fn max_connections(db: &DatabaseConnection) -> u32 {
    use sea_orm::DatabaseConnectionType as Type;
    match &db.inner {
        Type::SqlxSqlitePoolConnection(_) => db
            .get_sqlite_connection_pool()
            .options()
            .get_max_connections(),
        Type::SqlxPostgresPoolConnection(_) => db
            .get_postgres_connection_pool()
            .options()
            .get_max_connections(),
        Type::SqlxMySqlPoolConnection(_) => db
            .get_mysql_connection_pool()
            .options()
            .get_max_connections(),
        _ => 1,
    }
}

/// A PostgreSQL pool (a read replica's) that opens no connection until the first statement,
/// so a server that is down now is not an error yet; a connection that cannot be had within
/// two seconds fails the statement rather than holding the request.
pub fn connect_lazy(url: &str, max_connections: u32) -> Result<DatabaseConnection, DbErr> {
    use sea_orm::sqlx::postgres::{PgConnectOptions, PgPoolOptions};
    let opts: PgConnectOptions = url
        .parse()
        .map_err(|e: sea_orm::sqlx::Error| DbErr::Custom(format!("invalid URL: {e}")))?;
    let pool = PgPoolOptions::new()
        .max_connections(max_connections)
        .min_connections(0)
        .acquire_timeout(Duration::from_secs(2))
        .test_before_acquire(false)
        .connect_lazy_with(opts.statement_cache_capacity(STATEMENT_CACHE));
    Ok(sea_orm::SqlxPostgresConnector::from_sqlx_postgres_pool(
        pool,
    ))
}

/// Whether every migration has been applied. Read-only: an unmigrated database is left as it
/// was (no empty migrations table is created). A migration an earlier release recorded under a
/// wrong name counts as pending: `tokenql migrate` renames it.
pub async fn migrations_current(db: &DatabaseConnection) -> Result<bool, DbErr> {
    use migration::MigratorTrait;
    if migration::misrecorded(db).await? {
        return Ok(false);
    }
    Ok(migration::Migrator::get_pending_migrations_read_only(db)
        .await?
        .is_empty())
}
