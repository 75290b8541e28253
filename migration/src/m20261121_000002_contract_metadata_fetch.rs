//! Remembers when the indexer read a contract's metadata by `eth_call`, so each contract is
//! read once.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.alter_table(
            Table::alter()
                .table(Contracts::Table)
                .add_column(big_integer_null(Contracts::MetadataFetchedAt))
                .to_owned(),
        )
        .await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.alter_table(
            Table::alter()
                .table(Contracts::Table)
                .drop_column(Contracts::MetadataFetchedAt)
                .to_owned(),
        )
        .await
    }
}

#[derive(DeriveIden)]
enum Contracts {
    Table,
    MetadataFetchedAt,
}
