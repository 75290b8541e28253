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
//!   comparison, which keyset pagination relies on. Migrations before
//!   `m20261128_000012_binary_columns` wrote them as lowercase hex text (`0x` and 40 or 64
//!   digits; uint256 as 64 digits without `0x`), and that migration converts them;
//! - timestamps are `BIGINT` seconds (block times) or milliseconds (sync times).

pub use sea_orm_migration::prelude::*;

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
        ]
    }
}

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
