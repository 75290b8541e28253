//! What the store's in-process tests share: a migrated database of their own, a SQLite file
//! or a database on the tests' PostgreSQL or MySQL server.

use sea_orm::{ConnectionTrait, DatabaseConnection};

use super::{set_checkpoint, Checkpoint};
use crate::types::Chain;
use migration::MigratorTrait;

/// A migrated SQLite file of its own (`name` and the process id), with a checkpoint for ETH
/// (start 0, nothing indexed, head 1).
pub async fn sqlite(name: &str) -> (DatabaseConnection, std::path::PathBuf) {
    let path = std::env::temp_dir().join(format!("tq_{name}_{}.db", std::process::id()));
    let url = format!("sqlite://{}?mode=rwc", path.display());
    (migrated(&url).await, path)
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

/// A backend of the tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
    MySql,
}

/// A database [`open`] made, to [`dispose`] of.
pub enum Scratch {
    File(std::path::PathBuf),
    /// The server's admin URL and the database's name.
    Server(String, String),
}

/// The tests' server of `backend` (`TOKENQL_TEST_POSTGRES_URL`, `TOKENQL_TEST_MYSQL_URL`, as the
/// other test tiers), without a database.
fn server(backend: Backend) -> String {
    let (var, default) = match backend {
        Backend::MySql => ("TOKENQL_TEST_MYSQL_URL", "mysql://root@127.0.0.1:3306"),
        _ => (
            "TOKENQL_TEST_POSTGRES_URL",
            "postgres://postgres@127.0.0.1:5432",
        ),
    };
    std::env::var(var)
        .unwrap_or_else(|_| default.into())
        .trim_end_matches('/')
        .to_string()
}

/// A migrated database of its own on `backend` (`tq_<name>_<pid>`), with a checkpoint for ETH
/// as [`sqlite`]'s, and a pool of 4.
pub async fn open(backend: Backend, name: &str) -> (DatabaseConnection, Scratch) {
    if backend == Backend::Sqlite {
        let (db, path) = sqlite(name).await;
        return (db, Scratch::File(path));
    }
    let db_name = format!("tq_{name}_{}", std::process::id());
    let admin_url = match backend {
        Backend::Postgres => format!("{}/postgres", server(backend)),
        _ => server(backend),
    };
    on_server(
        &admin_url,
        &[
            format!("DROP DATABASE IF EXISTS {db_name}"),
            format!("CREATE DATABASE {db_name}"),
        ],
    )
    .await;
    let db = migrated(&format!("{}/{db_name}", server(backend))).await;
    (db, Scratch::Server(admin_url, db_name))
}

/// Closes `db` and deletes what [`open`] made.
pub async fn dispose(db: DatabaseConnection, scratch: Scratch) {
    match scratch {
        Scratch::File(path) => close(db, &path).await,
        Scratch::Server(admin_url, db_name) => {
            db.close().await.expect("close");
            on_server(&admin_url, &[format!("DROP DATABASE IF EXISTS {db_name}")]).await;
        }
    }
}

/// Runs `statements` on the server at `admin_url`, one connection, then closes it.
async fn on_server(admin_url: &str, statements: &[String]) {
    let admin = super::database::connect(admin_url, 1)
        .await
        .expect("the tests' database server");
    for sql in statements {
        admin.execute_unprepared(sql).await.expect(sql);
    }
    admin.close().await.expect("close");
}

/// Connects to `url` with a pool of 4, migrates it and sets ETH's checkpoint.
async fn migrated(url: &str) -> DatabaseConnection {
    let db = super::database::connect(url, 4).await.expect("open");
    migration::Migrator::up(&db, None).await.expect("migrate");
    let cp = Checkpoint {
        start_block: 0,
        indexed_block: None,
        head_block: 1,
    };
    set_checkpoint(&db, Chain::ETH, cp)
        .await
        .expect("checkpoint");
    db
}
