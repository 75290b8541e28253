//! Scopes of completeness (API.md, "SYNCED / SYNCING"): the per-collection backfill state of
//! `collection_sync` becomes `scope_sync`, one row per (chain, scope, address) where a scope is
//! a `contract` (every transfer it emitted) or a `wallet` (every transfer it sent or received).
//! Existing collection rows move over as `contract` scopes with their state and progress.
//!
//! `chain_state.history_complete` marks a chain whose stored history is whole although its
//! start block is not 0 (an imported sample declared complete, `import --complete-history`).

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

const ADDR: u32 = 42;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            Table::create()
                .table(ScopeSync::Table)
                .col(big_integer(ScopeSync::ChainId))
                .col(string_len(ScopeSync::Scope, 8))
                .col(string_len(ScopeSync::Address, ADDR))
                .col(string_len(ScopeSync::State, 16))
                .col(big_integer(ScopeSync::RequestedAt))
                .col(big_integer(ScopeSync::UpdatedAt))
                .col(big_integer(ScopeSync::QueuedAt))
                .col(big_integer_null(ScopeSync::TargetBlock))
                .col(big_integer_null(ScopeSync::SyncedToBlock))
                .col(big_integer(ScopeSync::Logs).default(0))
                .col(integer(ScopeSync::Attempts).default(0))
                .col(text_null(ScopeSync::Error))
                .col(big_integer_null(ScopeSync::RetryAt))
                .col(big_integer_null(ScopeSync::LeaseUntil))
                .primary_key(
                    Index::create()
                        .col(ScopeSync::ChainId)
                        .col(ScopeSync::Scope)
                        .col(ScopeSync::Address),
                )
                .to_owned(),
        )
        .await?;
        m.create_index(
            Index::create()
                .name("idx_scope_sync_queue")
                .table(ScopeSync::Table)
                .col(ScopeSync::ChainId)
                .col(ScopeSync::State)
                .col(ScopeSync::QueuedAt)
                .to_owned(),
        )
        .await?;
        m.get_connection()
            .execute_unprepared(
                "INSERT INTO scope_sync (chain_id, scope, address, state, requested_at, \
                 updated_at, queued_at, synced_to_block, logs, attempts, error) \
                 SELECT chain_id, 'contract', contract_address, state, requested_at, updated_at, \
                 requested_at, synced_to_block, 0, 0, error FROM collection_sync",
            )
            .await?;
        m.drop_table(Table::drop().table(CollectionSync::Table).to_owned())
            .await?;
        m.alter_table(
            Table::alter()
                .table(ChainState::Table)
                .add_column(boolean(ChainState::HistoryComplete).default(false))
                .to_owned(),
        )
        .await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.alter_table(
            Table::alter()
                .table(ChainState::Table)
                .drop_column(ChainState::HistoryComplete)
                .to_owned(),
        )
        .await?;
        m.create_table(
            Table::create()
                .table(CollectionSync::Table)
                .col(big_integer(CollectionSync::ChainId))
                .col(string_len(CollectionSync::ContractAddress, ADDR))
                .col(string_len(CollectionSync::State, 16))
                .col(big_integer(CollectionSync::RequestedAt))
                .col(big_integer(CollectionSync::UpdatedAt))
                .col(big_integer_null(CollectionSync::SyncedToBlock))
                .col(text_null(CollectionSync::Error))
                .primary_key(
                    Index::create()
                        .col(CollectionSync::ChainId)
                        .col(CollectionSync::ContractAddress),
                )
                .to_owned(),
        )
        .await?;
        m.get_connection()
            .execute_unprepared(
                "INSERT INTO collection_sync (chain_id, contract_address, state, requested_at, \
                 updated_at, synced_to_block, error) SELECT chain_id, address, state, \
                 requested_at, updated_at, synced_to_block, error FROM scope_sync \
                 WHERE scope = 'contract'",
            )
            .await?;
        m.drop_table(Table::drop().table(ScopeSync::Table).to_owned())
            .await
    }
}

#[derive(DeriveIden)]
enum ScopeSync {
    Table,
    ChainId,
    Scope,
    Address,
    State,
    RequestedAt,
    UpdatedAt,
    QueuedAt,
    TargetBlock,
    SyncedToBlock,
    Logs,
    Attempts,
    Error,
    RetryAt,
    LeaseUntil,
}

#[derive(DeriveIden)]
enum CollectionSync {
    Table,
    ChainId,
    ContractAddress,
    State,
    RequestedAt,
    UpdatedAt,
    SyncedToBlock,
    Error,
}

#[derive(DeriveIden)]
enum ChainState {
    Table,
    HistoryComplete,
}
