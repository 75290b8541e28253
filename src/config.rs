//! Configuration shared by the commands: loaded once from flags with environment fallbacks
//! (see README "Configuration").

use std::time::Duration;

use sea_orm::{ConnectOptions, Database, DatabaseConnection, DbErr};

/// The default database: a SQLite file in the working directory.
pub const DEFAULT_DATABASE_URL: &str = "sqlite://tokenql.db?mode=rwc";

/// Connects to `url` (SQLite, PostgreSQL or MySQL/MariaDB) with a bounded pool.
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
        });
    Database::connect(opts).await
}

/// Whether every migration has been applied. Read-only: an unmigrated database is left as it
/// was (no empty migrations table is created).
pub async fn migrations_current(db: &DatabaseConnection) -> Result<bool, DbErr> {
    use migration::MigratorTrait;
    Ok(migration::Migrator::get_pending_migrations_read_only(db)
        .await?
        .is_empty())
}
