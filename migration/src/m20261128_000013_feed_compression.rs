//! The change feed's `records` compressed with LZ4 on PostgreSQL. A live batch writes each
//! block's transfers there as one JSON text (~160 bytes a transfer), which PostgreSQL
//! compresses when the row is stored: with its default method (pglz) that was ~35 ms of the
//! ~460 ms a batch of 20,000 transfers takes to write, with LZ4 ~7 ms, for about the same size
//! (docs/BENCHMARKS.md, "Ingest: where a batch's time goes"). Values already stored keep their
//! compression; PostgreSQL reads either. A server built without LZ4 (or older than 14) keeps
//! pglz: the change is skipped, with a notice. Nothing to do on SQLite and MySQL/MariaDB,
//! which do not compress a row's text.

use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::DbBackend;

pub struct Migration;

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261128_000013_feed_compression"
    }
}

/// `SET COMPRESSION` runs through `EXECUTE`, so that a server which does not know LZ4, or the
/// clause, raises an error the block catches instead of failing the migration.
const TO_LZ4: &str = "DO $$ BEGIN \
    EXECUTE 'ALTER TABLE change_feed ALTER COLUMN records SET COMPRESSION lz4'; \
    EXCEPTION WHEN others THEN \
    RAISE NOTICE 'change_feed.records keeps the default compression: %', SQLERRM; \
    END $$";

const TO_DEFAULT: &str = "DO $$ BEGIN \
    EXECUTE 'ALTER TABLE change_feed ALTER COLUMN records SET COMPRESSION default'; \
    EXCEPTION WHEN others THEN NULL; \
    END $$";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        if m.get_database_backend() == DbBackend::Postgres {
            m.get_connection().execute_unprepared(TO_LZ4).await?;
        }
        Ok(())
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        if m.get_database_backend() == DbBackend::Postgres {
            m.get_connection().execute_unprepared(TO_DEFAULT).await?;
        }
        Ok(())
    }
}
