//! `chain_state.balances_pending`: the chain's kept ERC20 balances (`erc20_balances`) are not
//! maintained batch by batch, because a backfill of a fresh database left them out; they are
//! summed once from `erc20_transfers` when the backfill nears the head, and the flag cleared in
//! the same transaction. While it is set, answers that read the kept balances sum a wallet's
//! transfers instead or say `SYNCING`. Every existing chain's balances are maintained: `false`.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.alter_table(
            Table::alter()
                .table(ChainState::Table)
                .add_column(boolean(ChainState::BalancesPending).default(false))
                .to_owned(),
        )
        .await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.alter_table(
            Table::alter()
                .table(ChainState::Table)
                .drop_column(ChainState::BalancesPending)
                .to_owned(),
        )
        .await
    }
}

#[derive(DeriveIden)]
enum ChainState {
    Table,
    BalancesPending,
}
