//! The conversion to binary columns (`m20261128_000012_binary_columns`) on every database: a
//! database holding the sample as the previous release stored it (hex text) is converted by
//! `tokenql migrate` into exactly the rows a fresh import writes, and a conversion killed with
//! SIGKILL in the middle of a table resumes at the batch it was in.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use sea_orm::{ConnectionTrait, EntityTrait, Statement};
use tokenql::entity::*;

use crate::support::common;
use common::binary::{sample_import, tokenql, BIN};
use common::{Backend, FreshDb};

crate::backend_tests!(
    a_killed_conversion_resumes_to_the_same_rows,
    a_misrecorded_migration_is_renamed_by_migrate,
    the_feed_compression_migration_goes_both_ways
);

/// Rows per batch in these runs: the sample's 1,205 ERC20 transfers take 121 batches.
const BATCH: &str = "10";

/// Conversions started and killed before one is killed during the ERC20 transfers.
const ATTEMPTS: usize = 5;

/// Migrates `db` back to before the binary columns: that migration and every later one.
async fn back_to_text(db: &sea_orm::DatabaseConnection, backend: Backend) {
    use migration::MigratorTrait;
    let all = migration::Migrator::migrations();
    let from = all
        .iter()
        .position(|m| m.name() == "m20261128_000012_binary_columns")
        .expect("the binary columns migration is listed");
    migration::Migrator::down(db, Some((all.len() - from) as u32))
        .await
        .unwrap_or_else(|e| panic!("{backend:?}: back to text: {e}"));
}

/// Every row of every table with converted columns, in a canonical order.
async fn digest(db: &sea_orm::DatabaseConnection) -> String {
    let mut parts = Vec::new();
    macro_rules! dump {
        ($($m:ident),*) => {$(
            let mut rows: Vec<String> = $m::Entity::find().all(db).await.expect("select").iter().map(|r| format!("{r:?}")).collect();
            rows.sort();
            parts.push(format!("{}:{}", stringify!($m), rows.join("\n")));
        )*};
    }
    dump!(
        block,
        erc20_transfer,
        nft_transfer,
        nft_holding,
        nft_token,
        contract,
        erc20_balance,
        erc20_token_total,
        scope_sync,
        address_label
    );
    parts.join("\n\n")
}

/// Rows copied so far of `table`'s conversion (`None`: no conversion of it under way).
async fn copied(db: &sea_orm::DatabaseConnection, table: &str) -> Option<i64> {
    let row = db
        .query_one_raw(Statement::from_string(
            db.get_database_backend(),
            format!("SELECT copied FROM binary_conversion WHERE tbl = '{table}'"),
        ))
        .await
        .ok()??;
    row.try_get::<i64>("", "copied").ok()
}

/// Runs `tokenql migrate` and SIGKILLs it once it reports its first batch of ERC20 transfers.
fn kill_after_first_batch(url: &str, backend: Backend) {
    let mut child = Command::new(BIN)
        .arg("migrate")
        .env("DATABASE_URL", url)
        .env("RUST_LOG", "warn")
        .env("TOKENQL_MIGRATE_BATCH", BATCH)
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("run tokenql migrate");
    let stderr = child.stderr.take().expect("stderr");
    let first = BufReader::new(stderr)
        .lines()
        .map_while(Result::ok)
        .find_map(|l| reported(&l, "erc20_transfers"));
    child.kill().expect("SIGKILL");
    let _ = child.wait();
    assert!(first.is_some(), "{backend:?}: no progress reported");
}

/// The rows a progress line reports for `table` (`migrate: <table>: N of M rows converted`).
fn reported(line: &str, table: &str) -> Option<u64> {
    line.strip_prefix(&format!("migrate: {table}: "))?
        .split(' ')
        .next()?
        .parse()
        .ok()
}

async fn a_killed_conversion_resumes_to_the_same_rows(backend: Backend) {
    let fresh = FreshDb::create(backend, "binconv").await;
    let url = fresh.url.clone();
    let import = sample_import();
    let (ok, _, err) = tokenql(&url, &import.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(ok, "{backend:?}: {err}");
    let db = &fresh.db;
    let want = digest(db).await;

    // As the previous release stored it: every table back to hex text.
    back_to_text(db, backend).await;

    // Killed in the middle of the ERC20 transfers. The kill races the batches still running
    // after the progress line was read: when it lands after the table, the attempt is
    // finished, converted back, and made again.
    let mut done = None;
    for _ in 0..ATTEMPTS {
        kill_after_first_batch(&url, backend);
        done = copied(db, "erc20_transfers").await;
        if done.is_some() {
            break;
        }
        let (ok, _, err) = tokenql(&url, &["migrate"]);
        assert!(ok, "{backend:?}: {err}");
        back_to_text(db, backend).await;
    }
    let done = done.unwrap_or_else(|| {
        panic!("{backend:?}: no kill in {ATTEMPTS} attempts landed during the ERC20 transfers")
    });
    assert!(
        done > 0 && (done as u64) < 1205,
        "{backend:?}: killed after {done} rows"
    );

    // Run again: it resumes after the rows already copied, and ends converted.
    let out = Command::new(BIN)
        .arg("migrate")
        .env("DATABASE_URL", &url)
        .env("RUST_LOG", "warn")
        .env("TOKENQL_MIGRATE_BATCH", BATCH)
        .output()
        .expect("run tokenql migrate");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{backend:?}: {err}");
    let resumed = err
        .lines()
        .find_map(|l| reported(l, "erc20_transfers"))
        .unwrap_or_else(|| panic!("{backend:?}: no progress on the second run: {err}"));
    assert!(
        resumed > done as u64,
        "{backend:?}: the second run started over ({resumed} rows after its first batch, \
         {done} copied before the kill)"
    );
    assert_eq!(
        digest(db).await,
        want,
        "{backend:?}: the converted rows differ from a fresh import's"
    );
    let (ok, _, err) = tokenql(&url, &["migrate"]);
    assert!(ok, "{backend:?}: nothing left to migrate: {err}");
    fresh.drop_database().await;
}

/// The versions recorded in the migrations table.
async fn recorded(db: &sea_orm::DatabaseConnection) -> Vec<String> {
    let sql = "SELECT version FROM seaql_migrations ORDER BY version";
    let rows = db
        .query_all_raw(Statement::from_string(db.get_database_backend(), sql))
        .await
        .expect("read seaql_migrations");
    rows.iter()
        .map(|r| r.try_get::<String>("", "version").expect("version"))
        .collect()
}

async fn a_misrecorded_migration_is_renamed_by_migrate(backend: Backend) {
    let fresh = FreshDb::create(backend, "misrec").await;
    let (ok, _, err) = tokenql(&fresh.url, &["migrate"]);
    assert!(ok, "{backend:?}: {err}");
    let db = &fresh.db;
    let named = "m20261128_000012_binary_columns".to_string();
    let now = recorded(db).await;
    assert!(now.contains(&named), "{backend:?}: {now:?}");
    assert!(!now.iter().any(|v| v == "mod"), "{backend:?}: {now:?}");

    // As the release that introduced it recorded it: named after its file, `mod.rs`.
    db.execute_unprepared(
        "UPDATE seaql_migrations SET version = 'mod' \
         WHERE version = 'm20261128_000012_binary_columns'",
    )
    .await
    .expect("record the earlier name");
    assert!(
        migration::misrecorded(db).await.expect("check"),
        "{backend:?}"
    );
    let current = tokenql::store::database::migrations_current(db).await;
    assert_eq!(
        current.ok(),
        Some(false),
        "{backend:?}: pending, not an error"
    );

    let (ok, _, err) = tokenql(&fresh.url, &["migrate"]);
    assert!(ok, "{backend:?}: {err}");
    assert_eq!(
        recorded(db).await,
        now,
        "{backend:?}: renamed, nothing applied twice"
    );
    let current = tokenql::store::database::migrations_current(db).await;
    assert_eq!(current.ok(), Some(true), "{backend:?}");
    fresh.drop_database().await;
}

/// The compression method of `change_feed.records` on PostgreSQL (`l`: LZ4, empty: the
/// server's default).
async fn feed_compression(db: &sea_orm::DatabaseConnection) -> String {
    let sql = "SELECT attcompression::text AS c FROM pg_attribute \
               WHERE attrelid = 'change_feed'::regclass AND attname = 'records'";
    let row = db
        .query_one_raw(Statement::from_string(db.get_database_backend(), sql))
        .await
        .expect("read pg_attribute")
        .expect("change_feed.records exists");
    row.try_get::<String>("", "c").expect("attcompression")
}

/// `m20261128_000013_feed_compression`: recorded on every backend, reversible, and on
/// PostgreSQL the feed's JSON column compressed with LZ4 (the server here is built with it).
async fn the_feed_compression_migration_goes_both_ways(backend: Backend) {
    use migration::MigratorTrait;
    let fresh = FreshDb::create(backend, "feedlz4").await;
    let (ok, _, err) = tokenql(&fresh.url, &["migrate"]);
    assert!(ok, "{backend:?}: {err}");
    let db = &fresh.db;
    let name = "m20261128_000013_feed_compression".to_string();
    assert!(recorded(db).await.contains(&name), "{backend:?}");
    let postgres = backend == Backend::Postgres;
    if postgres {
        assert_eq!(feed_compression(db).await, "l", "LZ4 after the migration");
    }
    // Down to before it: it and every later migration.
    let all = migration::Migrator::migrations();
    let at = all
        .iter()
        .position(|m| m.name() == name)
        .expect("the feed compression migration is listed");
    migration::Migrator::down(db, Some((all.len() - at) as u32))
        .await
        .unwrap_or_else(|e| panic!("{backend:?}: down: {e}"));
    assert!(!recorded(db).await.contains(&name), "{backend:?}");
    if postgres {
        assert_eq!(feed_compression(db).await, "", "the default after down");
    }
    migration::Migrator::up(db, None)
        .await
        .unwrap_or_else(|e| panic!("{backend:?}: up: {e}"));
    if postgres {
        assert_eq!(feed_compression(db).await, "l", "LZ4 again");
    }
    fresh.drop_database().await;
}
