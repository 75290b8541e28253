//! Off-chain metadata and media: the fetch state of each token's metadata, the `nft_media`
//! table of preview images (one row per original media URL, shared by every token that points
//! at it), and where a contract's spam / verified flags came from (so an admin's override
//! survives the next list import).

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        // SQLite alters one column per statement.
        let token_cols = [
            string_len_null(NftTokens::MetadataStatus, 32),
            integer(NftTokens::MetadataAttempts).default(0).to_owned(),
            big_integer_null(NftTokens::MetadataNextAt),
            text_null(NftTokens::MetadataError),
        ];
        for mut col in token_cols {
            m.alter_table(
                Table::alter()
                    .table(NftTokens::Table)
                    .add_column(&mut col)
                    .to_owned(),
            )
            .await?;
        }
        // Tokens whose URI the indexer read before this migration are due now (from here on
        // the indexer marks them when it stores a URI).
        m.get_connection()
            .execute_unprepared(
                "UPDATE nft_tokens SET metadata_next_at = 0 WHERE token_uri IS NOT NULL",
            )
            .await?;
        m.create_index(
            Index::create()
                .name("idx_nft_tokens_metadata_due")
                .table(NftTokens::Table)
                .col(NftTokens::MetadataNextAt)
                .to_owned(),
        )
        .await?;

        for mut col in [
            string_len_null(Contracts::SpamSource, 16),
            string_len_null(Contracts::VerifiedSource, 16),
        ] {
            m.alter_table(
                Table::alter()
                    .table(Contracts::Table)
                    .add_column(&mut col)
                    .to_owned(),
            )
            .await?;
        }

        m.create_table(
            Table::create()
                .table(NftMedia::Table)
                .col(string_len(NftMedia::UrlHash, 64).primary_key())
                .col(text(NftMedia::OriginalMediaUrl))
                .col(string_len(NftMedia::Status, 32))
                .col(string_len_null(NftMedia::Mimetype, 128))
                .col(string_len_null(NftMedia::Category, 16))
                .col(string_len_null(NftMedia::ParentHash, 66))
                .col(text_null(NftMedia::Previews))
                .col(integer(NftMedia::Attempts).default(0))
                .col(big_integer_null(NftMedia::NextAttemptAt))
                .col(text_null(NftMedia::Error))
                .col(big_integer(NftMedia::UpdatedAt))
                .to_owned(),
        )
        .await?;
        m.create_index(
            Index::create()
                .name("idx_nft_media_due")
                .table(NftMedia::Table)
                .col(NftMedia::NextAttemptAt)
                .to_owned(),
        )
        .await?;

        // MySQL's TEXT stops at 64 KiB: too small for on-chain `data:` token URIs and images
        // and for large metadata documents. MEDIUMTEXT holds 16 MiB (the fetch cap is lower).
        if m.get_database_backend() == sea_orm::DbBackend::MySql {
            let db = m.get_connection();
            db.execute_unprepared(
                "ALTER TABLE nft_tokens MODIFY token_uri MEDIUMTEXT NULL, \
                 MODIFY metadata MEDIUMTEXT NULL",
            )
            .await?;
            db.execute_unprepared(
                "ALTER TABLE nft_media MODIFY original_media_url MEDIUMTEXT NOT NULL",
            )
            .await?;
        }
        Ok(())
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.drop_table(Table::drop().table(NftMedia::Table).to_owned())
            .await?;
        for col in [Contracts::SpamSource, Contracts::VerifiedSource] {
            m.alter_table(
                Table::alter()
                    .table(Contracts::Table)
                    .drop_column(col)
                    .to_owned(),
            )
            .await?;
        }
        m.drop_index(
            Index::drop()
                .name("idx_nft_tokens_metadata_due")
                .table(NftTokens::Table)
                .to_owned(),
        )
        .await?;
        for col in [
            NftTokens::MetadataStatus,
            NftTokens::MetadataAttempts,
            NftTokens::MetadataNextAt,
            NftTokens::MetadataError,
        ] {
            m.alter_table(
                Table::alter()
                    .table(NftTokens::Table)
                    .drop_column(col)
                    .to_owned(),
            )
            .await?;
        }
        Ok(())
    }
}

#[derive(DeriveIden)]
enum NftTokens {
    Table,
    MetadataStatus,
    MetadataAttempts,
    MetadataNextAt,
    MetadataError,
}

#[derive(DeriveIden)]
enum Contracts {
    Table,
    SpamSource,
    VerifiedSource,
}

#[derive(DeriveIden)]
enum NftMedia {
    Table,
    UrlHash,
    OriginalMediaUrl,
    Status,
    Mimetype,
    Category,
    ParentHash,
    Previews,
    Attempts,
    NextAttemptAt,
    Error,
    UpdatedAt,
}
