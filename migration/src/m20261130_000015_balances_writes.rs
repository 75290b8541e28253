//! `chain_state.balances_writes`: how many transactions have added or removed the chain's ERC20
//! transfers since a backfill left its kept balances out (`balances_pending`). A follower that
//! sums the balances in memory as it writes counts the writes it summed; at the end of the
//! backfill its sums are those of every stored transfer only if the two counts are equal (else
//! the balances are summed from the stored transfers). Existing chains: 0.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.alter_table(
            Table::alter()
                .table(ChainState::Table)
                .add_column(big_integer(ChainState::BalancesWrites).default(0))
                .to_owned(),
        )
        .await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.alter_table(
            Table::alter()
                .table(ChainState::Table)
                .drop_column(ChainState::BalancesWrites)
                .to_owned(),
        )
        .await
    }
}

#[derive(DeriveIden)]
enum ChainState {
    Table,
    BalancesWrites,
}
