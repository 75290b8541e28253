//! Per-key rate limits: `rate_limit_per_sec` (requests per second, `0` = unlimited) and
//! `rate_limit_burst` (the bucket's size). `NULL` in either column means the server's default
//! (`--rate-limit` / `--rate-burst`).
//!
//! One column per `ALTER TABLE`: SQLite accepts a single alteration per statement.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        for col in [ApiKeys::RateLimitPerSec, ApiKeys::RateLimitBurst] {
            m.alter_table(
                Table::alter()
                    .table(ApiKeys::Table)
                    .add_column(integer_null(col))
                    .to_owned(),
            )
            .await?;
        }
        Ok(())
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        for col in [ApiKeys::RateLimitBurst, ApiKeys::RateLimitPerSec] {
            m.alter_table(
                Table::alter()
                    .table(ApiKeys::Table)
                    .drop_column(col)
                    .to_owned(),
            )
            .await?;
        }
        Ok(())
    }
}

#[derive(DeriveIden, Clone, Copy)]
enum ApiKeys {
    Table,
    RateLimitPerSec,
    RateLimitBurst,
}
