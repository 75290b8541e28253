//! What the store's in-process tests share: a migrated SQLite file of their own.

use sea_orm::DatabaseConnection;

use super::{set_checkpoint, Checkpoint};
use crate::types::Chain;
use migration::MigratorTrait;

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
