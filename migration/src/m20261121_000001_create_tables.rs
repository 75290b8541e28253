//! The initial schema: every table the store, the query service and the indexer share.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

const ADDR: u32 = 42;
const HASH: u32 = 66;
const U256: u32 = 64;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            Table::create()
                .table(ChainState::Table)
                .col(big_integer(ChainState::ChainId).primary_key())
                .col(big_integer_null(ChainState::StartBlock))
                .col(big_integer_null(ChainState::IndexedBlock))
                .col(big_integer_null(ChainState::HeadBlock))
                .col(big_integer(ChainState::UpdatedAt))
                .to_owned(),
        )
        .await?;

        m.create_table(
            Table::create()
                .table(Blocks::Table)
                .col(big_integer(Blocks::ChainId))
                .col(big_integer(Blocks::Number))
                .col(string_len(Blocks::Hash, HASH))
                .col(string_len_null(Blocks::ParentHash, HASH))
                .col(big_integer(Blocks::Timestamp))
                .primary_key(Index::create().col(Blocks::ChainId).col(Blocks::Number))
                .to_owned(),
        )
        .await?;

        m.create_table(
            Table::create()
                .table(Erc20Transfers::Table)
                .col(big_integer(Erc20Transfers::ChainId))
                .col(big_integer(Erc20Transfers::BlockNumber))
                .col(integer(Erc20Transfers::LogIndex))
                .col(string_len(Erc20Transfers::BlockHash, HASH))
                .col(big_integer(Erc20Transfers::BlockTimestamp))
                .col(string_len(Erc20Transfers::TransactionHash, HASH))
                .col(integer(Erc20Transfers::TransactionIndex))
                .col(string_len(Erc20Transfers::ContractAddress, ADDR))
                .col(string_len(Erc20Transfers::FromAddress, ADDR))
                .col(string_len(Erc20Transfers::ToAddress, ADDR))
                .col(string_len(Erc20Transfers::Value, U256))
                .primary_key(
                    Index::create()
                        .col(Erc20Transfers::ChainId)
                        .col(Erc20Transfers::BlockNumber)
                        .col(Erc20Transfers::LogIndex),
                )
                .to_owned(),
        )
        .await?;
        for (name, col) in [
            ("idx_erc20_contract", Erc20Transfers::ContractAddress),
            ("idx_erc20_from", Erc20Transfers::FromAddress),
            ("idx_erc20_to", Erc20Transfers::ToAddress),
        ] {
            m.create_index(
                Index::create()
                    .name(name)
                    .table(Erc20Transfers::Table)
                    .col(Erc20Transfers::ChainId)
                    .col(col)
                    .col(Erc20Transfers::BlockNumber)
                    .col(Erc20Transfers::LogIndex)
                    .to_owned(),
            )
            .await?;
        }

        m.create_table(
            Table::create()
                .table(NftTransfers::Table)
                .col(big_integer(NftTransfers::ChainId))
                .col(big_integer(NftTransfers::BlockNumber))
                .col(integer(NftTransfers::LogIndex))
                .col(integer(NftTransfers::BatchIndex))
                .col(string_len(NftTransfers::BlockHash, HASH))
                .col(big_integer(NftTransfers::BlockTimestamp))
                .col(string_len(NftTransfers::TransactionHash, HASH))
                .col(integer(NftTransfers::TransactionIndex))
                .col(string_len(NftTransfers::ContractAddress, ADDR))
                .col(string_len(NftTransfers::ContractType, 8))
                .col(string_len_null(NftTransfers::Operator, ADDR))
                .col(string_len(NftTransfers::FromAddress, ADDR))
                .col(string_len(NftTransfers::ToAddress, ADDR))
                .col(string_len(NftTransfers::TokenId, U256))
                .col(string_len(NftTransfers::Amount, U256))
                .primary_key(
                    Index::create()
                        .col(NftTransfers::ChainId)
                        .col(NftTransfers::BlockNumber)
                        .col(NftTransfers::LogIndex)
                        .col(NftTransfers::BatchIndex),
                )
                .to_owned(),
        )
        .await?;
        m.create_index(
            Index::create()
                .name("idx_nft_transfers_token")
                .table(NftTransfers::Table)
                .col(NftTransfers::ChainId)
                .col(NftTransfers::ContractAddress)
                .col(NftTransfers::TokenId)
                .col(NftTransfers::BlockNumber)
                .to_owned(),
        )
        .await?;

        m.create_table(
            Table::create()
                .table(NftHoldings::Table)
                .col(big_integer(NftHoldings::ChainId))
                .col(string_len(NftHoldings::OwnerAddress, ADDR))
                .col(string_len(NftHoldings::ContractAddress, ADDR))
                .col(string_len(NftHoldings::TokenId, U256))
                .col(string_len(NftHoldings::ContractType, 8))
                .col(string_len(NftHoldings::Amount, U256))
                .col(big_integer(NftHoldings::BlockNumber))
                .primary_key(
                    Index::create()
                        .col(NftHoldings::ChainId)
                        .col(NftHoldings::OwnerAddress)
                        .col(NftHoldings::ContractAddress)
                        .col(NftHoldings::TokenId),
                )
                .to_owned(),
        )
        .await?;
        m.create_index(
            Index::create()
                .name("idx_nft_holdings_token")
                .table(NftHoldings::Table)
                .col(NftHoldings::ChainId)
                .col(NftHoldings::ContractAddress)
                .col(NftHoldings::TokenId)
                .to_owned(),
        )
        .await?;

        m.create_table(
            Table::create()
                .table(NftTokens::Table)
                .col(big_integer(NftTokens::ChainId))
                .col(string_len(NftTokens::ContractAddress, ADDR))
                .col(string_len(NftTokens::TokenId, U256))
                .col(string_len(NftTokens::ContractType, 8))
                .col(text_null(NftTokens::TokenUri))
                .col(text_null(NftTokens::Metadata))
                .col(big_integer_null(NftTokens::BlockNumberMinted))
                .col(string_len_null(NftTokens::MinterAddress, ADDR))
                .col(big_integer_null(NftTokens::LastTokenUriSync))
                .col(big_integer_null(NftTokens::LastMetadataSync))
                .primary_key(
                    Index::create()
                        .col(NftTokens::ChainId)
                        .col(NftTokens::ContractAddress)
                        .col(NftTokens::TokenId),
                )
                .to_owned(),
        )
        .await?;

        m.create_table(
            Table::create()
                .table(Contracts::Table)
                .col(big_integer(Contracts::ChainId))
                .col(string_len(Contracts::Address, ADDR))
                .col(string_len_null(Contracts::Standard, 8))
                .col(text_null(Contracts::Name))
                .col(text_null(Contracts::Symbol))
                .col(integer_null(Contracts::Decimals))
                .col(text_null(Contracts::Logo))
                .col(boolean(Contracts::PossibleSpam).default(false))
                .col(boolean(Contracts::Verified).default(false))
                .primary_key(
                    Index::create()
                        .col(Contracts::ChainId)
                        .col(Contracts::Address),
                )
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

        m.create_table(
            Table::create()
                .table(AddressLabels::Table)
                .col(big_integer(AddressLabels::ChainId))
                .col(string_len(AddressLabels::Address, ADDR))
                .col(text(AddressLabels::Label))
                .primary_key(
                    Index::create()
                        .col(AddressLabels::ChainId)
                        .col(AddressLabels::Address),
                )
                .to_owned(),
        )
        .await?;

        m.create_table(
            Table::create()
                .table(ApiKeys::Table)
                .col(pk_auto(ApiKeys::Id))
                .col(string_len(ApiKeys::Name, 255))
                .col(string_len_uniq(ApiKeys::KeyHash, 64))
                .col(string_len(ApiKeys::KeyPrefix, 16))
                .col(big_integer(ApiKeys::CreatedAt))
                .col(big_integer_null(ApiKeys::RevokedAt))
                .to_owned(),
        )
        .await?;

        m.create_table(
            Table::create()
                .table(Settings::Table)
                .col(string_len(Settings::Name, 64).primary_key())
                .col(text(Settings::Value))
                .to_owned(),
        )
        .await?;
        Ok(())
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        for t in [
            Settings::Table.into_iden(),
            ApiKeys::Table.into_iden(),
            AddressLabels::Table.into_iden(),
            CollectionSync::Table.into_iden(),
            Contracts::Table.into_iden(),
            NftTokens::Table.into_iden(),
            NftHoldings::Table.into_iden(),
            NftTransfers::Table.into_iden(),
            Erc20Transfers::Table.into_iden(),
            Blocks::Table.into_iden(),
            ChainState::Table.into_iden(),
        ] {
            m.drop_table(Table::drop().table(t).to_owned()).await?;
        }
        Ok(())
    }
}

#[derive(DeriveIden)]
enum ChainState {
    Table,
    ChainId,
    StartBlock,
    IndexedBlock,
    HeadBlock,
    UpdatedAt,
}

#[derive(DeriveIden)]
enum Blocks {
    Table,
    ChainId,
    Number,
    Hash,
    ParentHash,
    Timestamp,
}

#[derive(DeriveIden)]
enum Erc20Transfers {
    Table,
    ChainId,
    BlockNumber,
    LogIndex,
    BlockHash,
    BlockTimestamp,
    TransactionHash,
    TransactionIndex,
    ContractAddress,
    FromAddress,
    ToAddress,
    Value,
}

#[derive(DeriveIden)]
enum NftTransfers {
    Table,
    ChainId,
    BlockNumber,
    LogIndex,
    BatchIndex,
    BlockHash,
    BlockTimestamp,
    TransactionHash,
    TransactionIndex,
    ContractAddress,
    ContractType,
    Operator,
    FromAddress,
    ToAddress,
    TokenId,
    Amount,
}

#[derive(DeriveIden)]
enum NftHoldings {
    Table,
    ChainId,
    OwnerAddress,
    ContractAddress,
    TokenId,
    ContractType,
    Amount,
    BlockNumber,
}

#[derive(DeriveIden)]
enum NftTokens {
    Table,
    ChainId,
    ContractAddress,
    TokenId,
    ContractType,
    TokenUri,
    Metadata,
    BlockNumberMinted,
    MinterAddress,
    LastTokenUriSync,
    LastMetadataSync,
}

#[derive(DeriveIden)]
enum Contracts {
    Table,
    ChainId,
    Address,
    Standard,
    Name,
    Symbol,
    Decimals,
    Logo,
    PossibleSpam,
    Verified,
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
enum AddressLabels {
    Table,
    ChainId,
    Address,
    Label,
}

#[derive(DeriveIden)]
enum ApiKeys {
    Table,
    Id,
    Name,
    KeyHash,
    KeyPrefix,
    CreatedAt,
    RevokedAt,
}

#[derive(DeriveIden)]
enum Settings {
    Table,
    Name,
    Value,
}
