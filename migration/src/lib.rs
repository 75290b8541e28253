//! Database migrations for tokenql, one file per migration.
//!
//! They are run explicitly by `tokenql migrate` (or this crate's own CLI), never as a side
//! effect of starting the server. Every migration must behave identically on SQLite,
//! PostgreSQL and MySQL/MariaDB; the black-box suites run them on all three.
//!
//! Value conventions shared with the entity layer:
//! - chain ids and block numbers are `BIGINT` (palm's id does not fit 32 bits);
//! - addresses, block and transaction hashes and uint256 values (amounts, token ids, balances)
//!   are binary: 20 bytes, 32 bytes, and 32 big-endian bytes, exact on every backend (MySQL's
//!   DECIMAL stops at 65 digits, uint256 needs 78) and ordered numerically by plain byte
//!   comparison, which keyset pagination relies on. A transfer's amount, never compared in
//!   SQL, is written without its leading zero bytes where the column's length varies
//!   (PostgreSQL, SQLite: the store's `Dialect::amount_bytes`). Migrations before
//!   `m20261128_000012_binary_columns` wrote them as lowercase hex text (`0x` and 40 or 64
//!   digits; uint256 as 64 digits without `0x`), and that migration converts them;
//! - timestamps are `BIGINT` seconds (block times) or milliseconds (sync times).

pub use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::{DatabaseConnection, Statement};

mod m20261121_000001_create_tables;
mod m20261121_000002_contract_metadata_fetch;
mod m20261121_000003_api_key_rate_limit;
mod m20261121_000004_metadata_media_flags;
mod m20261124_000005_history_scopes;
mod m20261124_000006_indexer_leases;
mod m20261125_000007_nft_transfer_indexes;
mod m20261125_000008_nft_owner_index;
mod m20261126_000009_erc20_balances;
mod m20261127_000010_change_feed;
mod m20261127_000011_streams;
mod m20261128_000012_binary_columns;
mod m20261128_000013_feed_compression;
mod m20261129_000014_balances_pending;
mod m20261130_000015_balances_writes;

/// The ordered list of migrations.
pub struct Migrator;

#[async_trait::async_trait]
impl MigratorTrait for Migrator {
    fn migrations() -> Vec<Box<dyn MigrationTrait>> {
        vec![
            Box::new(m20261121_000001_create_tables::Migration),
            Box::new(m20261121_000002_contract_metadata_fetch::Migration),
            Box::new(m20261121_000003_api_key_rate_limit::Migration),
            Box::new(m20261121_000004_metadata_media_flags::Migration),
            Box::new(m20261124_000005_history_scopes::Migration),
            Box::new(m20261124_000006_indexer_leases::Migration),
            Box::new(m20261125_000007_nft_transfer_indexes::Migration),
            Box::new(m20261125_000008_nft_owner_index::Migration),
            Box::new(m20261126_000009_erc20_balances::Migration),
            Box::new(m20261127_000010_change_feed::Migration),
            Box::new(m20261127_000011_streams::Migration),
            Box::new(m20261128_000012_binary_columns::Migration),
            Box::new(m20261128_000013_feed_compression::Migration),
            Box::new(m20261129_000014_balances_pending::Migration),
            Box::new(m20261130_000015_balances_writes::Migration),
        ]
    }
}

/// The name of the binary columns migration.
pub(crate) const BINARY_COLUMNS: &str = "m20261128_000012_binary_columns";

/// Migrations an earlier release recorded under a wrong name, with their right one: the binary
/// columns migration was named by its file, a folder's `mod.rs`.
const MISRECORDED: &[(&str, &str)] = &[("mod", BINARY_COLUMNS)];

/// Whether the migrations table holds a migration under a wrong name ([`MISRECORDED`]): sea-orm
/// would then find no file for it. Read-only.
pub async fn misrecorded(db: &DatabaseConnection) -> Result<bool, DbErr> {
    if !SchemaManager::new(db).has_table(SEAQL_MIGRATIONS).await? {
        return Ok(false);
    }
    let backend = db.get_database_backend();
    let sql = placeholders(
        backend,
        "SELECT COUNT(*) AS n FROM seaql_migrations WHERE version = ?",
    );
    for (wrong, _) in MISRECORDED {
        let stmt = Statement::from_sql_and_values(backend, sql.clone(), [(*wrong).into()]);
        let row = db.query_one_raw(stmt).await?;
        if row
            .map(|r| r.try_get::<i64>("", "n"))
            .transpose()?
            .unwrap_or(0)
            > 0
        {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Gives the migrations [`MISRECORDED`] their right names, so that [`Migrator::up`] finds
/// them applied. `tokenql migrate` runs it first; it changes nothing on a database without
/// such rows.
pub async fn repair_recorded_names(db: &DatabaseConnection) -> Result<(), DbErr> {
    if !misrecorded(db).await? {
        return Ok(());
    }
    let backend = db.get_database_backend();
    let sql = placeholders(
        backend,
        "UPDATE seaql_migrations SET version = ? WHERE version = ?",
    );
    for (wrong, right) in MISRECORDED {
        let values = [(*right).into(), (*wrong).into()];
        db.execute_raw(Statement::from_sql_and_values(backend, sql.clone(), values))
            .await?;
    }
    Ok(())
}

/// The table sea-orm records applied migrations in.
const SEAQL_MIGRATIONS: &str = "seaql_migrations";

/// `?` placeholders, or PostgreSQL's `$n`.
pub(crate) fn placeholders(backend: sea_orm_migration::sea_orm::DbBackend, sql: &str) -> String {
    if backend != sea_orm_migration::sea_orm::DbBackend::Postgres {
        return sql.to_string();
    }
    let mut n = 0;
    let mut out = String::with_capacity(sql.len() + 8);
    for c in sql.chars() {
        if c == '?' {
            n += 1;
            out.push_str(&format!("${n}"));
        } else {
            out.push(c);
        }
    }
    out
}
