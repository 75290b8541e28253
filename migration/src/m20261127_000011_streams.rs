//! Webhook streams compatible with Moralis Streams: `streams` (one row per stream, owned by the
//! API key that made it, with its status, its retry count and the lease of the process that
//! delivers it), `stream_addresses` (the addresses a stream watches) and `stream_positions`
//! (per stream and chain, the last change of the change feed delivered: feed row and index; and
//! the row the stream started after, whose earlier blocks it never confirms).
//! The per-key signing secret lives in `settings` (`streams_secret:<key id>`).

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

const ID: u32 = 36;
const ADDRESS: u32 = 42;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(streams()).await?;
        m.create_index(
            Index::create()
                .name("idx_streams_key_id")
                .table(Streams::Table)
                .col(Streams::KeyId)
                .col(Streams::Id)
                .to_owned(),
        )
        .await?;
        m.create_table(
            Table::create()
                .table(StreamAddresses::Table)
                .col(string_len(StreamAddresses::StreamId, ID))
                .col(string_len(StreamAddresses::Address, ADDRESS))
                .primary_key(
                    Index::create()
                        .col(StreamAddresses::StreamId)
                        .col(StreamAddresses::Address),
                )
                .to_owned(),
        )
        .await?;
        m.create_table(
            Table::create()
                .table(StreamPositions::Table)
                .col(string_len(StreamPositions::StreamId, ID))
                .col(big_integer(StreamPositions::ChainId))
                .col(big_integer(StreamPositions::FeedRow))
                .col(big_integer(StreamPositions::FeedIndex))
                .col(big_integer(StreamPositions::StartRow))
                .primary_key(
                    Index::create()
                        .col(StreamPositions::StreamId)
                        .col(StreamPositions::ChainId),
                )
                .to_owned(),
        )
        .await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        for table in [
            StreamPositions::Table.into_iden(),
            StreamAddresses::Table.into_iden(),
            Streams::Table.into_iden(),
        ] {
            m.drop_table(Table::drop().table(table).to_owned()).await?;
        }
        Ok(())
    }
}

fn streams() -> TableCreateStatement {
    Table::create()
        .table(Streams::Table)
        .col(string_len(Streams::Id, ID).primary_key())
        .col(integer(Streams::KeyId))
        .col(text(Streams::WebhookUrl))
        .col(text(Streams::Description))
        .col(text(Streams::Tag))
        .col(small_integer(Streams::Topics))
        .col(boolean(Streams::IncludeContractLogs))
        .col(boolean(Streams::AllAddresses))
        .col(string_len(Streams::Status, 16))
        .col(text(Streams::StatusMessage))
        .col(integer(Streams::Failures).default(0))
        .col(string_len_null(Streams::LeaseHolder, 128))
        .col(big_integer(Streams::LeaseUntilMs).default(0))
        .col(big_integer(Streams::CreatedMs))
        .to_owned()
}

#[derive(DeriveIden)]
enum Streams {
    Table,
    Id,
    KeyId,
    WebhookUrl,
    Description,
    Tag,
    Topics,
    IncludeContractLogs,
    AllAddresses,
    Status,
    StatusMessage,
    Failures,
    LeaseHolder,
    LeaseUntilMs,
    CreatedMs,
}

#[derive(DeriveIden)]
enum StreamAddresses {
    Table,
    StreamId,
    Address,
}

#[derive(DeriveIden)]
enum StreamPositions {
    Table,
    StreamId,
    ChainId,
    FeedRow,
    FeedIndex,
    StartRow,
}
