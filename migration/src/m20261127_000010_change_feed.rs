//! The change feed (`change_feed`): what the live indexer stored and what a reorg took away,
//! one row per block with transfers, appended in the transaction that stores the batch or
//! rolls it back. Subscriptions and webhooks read it in `id` order; `id` increases in commit
//! order within a chain, because a chain's writers hold the chain's lock until they commit.
//!
//! `records` is the block's transfers as compact JSON (kept in the row, so that a record a
//! reorg removed can still be delivered as removed); MySQL/MariaDB need `LONGTEXT` for a block
//! of many transfers.

use sea_orm_migration::sea_orm::DbBackend;
use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

const HASH: u32 = 66;
const INDEX: &str = "idx_change_feed_chain_id";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        let mut records = ColumnDef::new(ChangeFeed::Records);
        records.not_null();
        if m.get_database_backend() == DbBackend::MySql {
            records.custom(Alias::new("LONGTEXT"));
        } else {
            records.text();
        }
        m.create_table(
            Table::create()
                .table(ChangeFeed::Table)
                .col(big_pk_auto(ChangeFeed::Id))
                .col(big_integer(ChangeFeed::ChainId))
                .col(small_integer(ChangeFeed::Kind))
                .col(big_integer(ChangeFeed::BlockNumber))
                .col(string_len(ChangeFeed::BlockHash, HASH))
                .col(big_integer(ChangeFeed::BlockTimestamp))
                .col(big_integer(ChangeFeed::HeadBlock))
                .col(records)
                .col(big_integer(ChangeFeed::CreatedMs))
                .to_owned(),
        )
        .await?;
        m.create_index(
            Index::create()
                .name(INDEX)
                .table(ChangeFeed::Table)
                .col(ChangeFeed::ChainId)
                .col(ChangeFeed::Id)
                .to_owned(),
        )
        .await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.drop_table(Table::drop().table(ChangeFeed::Table).to_owned())
            .await
    }
}

#[derive(DeriveIden)]
enum ChangeFeed {
    Table,
    Id,
    ChainId,
    Kind,
    BlockNumber,
    BlockHash,
    BlockTimestamp,
    HeadBlock,
    Records,
    CreatedMs,
}
