//! What the store's in-process tests share: a migrated SQLite file, or PostgreSQL database, of
//! their own.

use sea_orm::DatabaseConnection;

use super::{set_checkpoint, Checkpoint};
use crate::types::Chain;
use migration::MigratorTrait;

/// The PostgreSQL server of the tests (`TOKENQL_TEST_POSTGRES_URL`, as the other test tiers).
fn postgres_server() -> String {
    std::env::var("TOKENQL_TEST_POSTGRES_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432".into())
        .trim_end_matches('/')
        .to_string()
}

/// A migrated PostgreSQL database of its own (`tq_<name>_<pid>`), with a checkpoint for ETH as
/// [`sqlite`]'s; returns it and its name for [`drop_postgres`].
pub async fn postgres(name: &str) -> (DatabaseConnection, String) {
    use sea_orm::ConnectionTrait;
    let db_name = format!("tq_{name}_{}", std::process::id());
    let admin = super::database::connect(&format!("{}/postgres", postgres_server()), 1)
        .await
        .expect("the tests' PostgreSQL server");
    admin
        .execute_unprepared(&format!("DROP DATABASE IF EXISTS {db_name} WITH (FORCE)"))
        .await
        .expect("drop");
    admin
        .execute_unprepared(&format!("CREATE DATABASE {db_name}"))
        .await
        .expect("create");
    admin.close().await.expect("close");
    let db = super::database::connect(&format!("{}/{db_name}", postgres_server()), 4)
        .await
        .expect("open");
    migration::Migrator::up(&db, None).await.expect("migrate");
    let cp = Checkpoint {
        start_block: 0,
        indexed_block: None,
        head_block: 1,
    };
    set_checkpoint(&db, Chain::ETH, cp)
        .await
        .expect("checkpoint");
    (db, db_name)
}

/// Closes `db` and drops the database [`postgres`] made.
pub async fn drop_postgres(db: DatabaseConnection, db_name: &str) {
    use sea_orm::ConnectionTrait;
    db.close().await.expect("close");
    let admin = super::database::connect(&format!("{}/postgres", postgres_server()), 1)
        .await
        .expect("the tests' PostgreSQL server");
    admin
        .execute_unprepared(&format!("DROP DATABASE IF EXISTS {db_name} WITH (FORCE)"))
        .await
        .expect("drop");
    admin.close().await.expect("close");
}

/// A migrated SQLite file of its own (`name` and the process id), with a checkpoint for ETH
/// (start 0, nothing indexed, head 1).
pub async fn sqlite(name: &str) -> (DatabaseConnection, std::path::PathBuf) {
    let path = std::env::temp_dir().join(format!("tq_{name}_{}.db", std::process::id()));
    let url = format!("sqlite://{}?mode=rwc", path.display());
    let db = super::database::connect(&url, 4).await.expect("open");
    migration::Migrator::up(&db, None).await.expect("migrate");
    let cp = Checkpoint {
        start_block: 0,
        indexed_block: None,
        head_block: 1,
    };
    set_checkpoint(&db, Chain::ETH, cp)
        .await
        .expect("checkpoint");
    (db, path)
}

/// Closes `db` and deletes its files.
pub async fn close(db: DatabaseConnection, path: &std::path::Path) {
    db.close().await.expect("close");
    for suffix in ["", "-wal", "-shm"] {
        let mut p = path.to_path_buf().into_os_string();
        p.push(suffix);
        let _ = std::fs::remove_file(p);
    }
}
