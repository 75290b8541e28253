//! One active indexer per chain: `indexer_lease` holds, per chain, which process may write the
//! chain's live index (`holder`, e.g. `host:pid:nonce`) and until when (`expires_at`, Unix
//! milliseconds). The holder renews it while it runs and clears it when it stops; a standby
//! takes it over once it has expired. Every batch the holder writes checks the row inside its
//! transaction, so a deposed leader cannot write after a takeover.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            Table::create()
                .table(IndexerLease::Table)
                .col(big_integer(IndexerLease::ChainId).primary_key())
                .col(string_len_null(IndexerLease::Holder, 128))
                .col(big_integer(IndexerLease::ExpiresAt))
                .col(big_integer(IndexerLease::AcquiredAt))
                .col(big_integer(IndexerLease::Takeovers).default(0))
                .to_owned(),
        )
        .await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.drop_table(Table::drop().table(IndexerLease::Table).to_owned())
            .await
    }
}

#[derive(DeriveIden)]
enum IndexerLease {
    Table,
    ChainId,
    Holder,
    ExpiresAt,
    AcquiredAt,
    Takeovers,
}
