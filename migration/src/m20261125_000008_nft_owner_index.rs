//! An index for reading a collection's owners (`GET /nft/{address}/owners`,
//! `GET /nft/{address}/{token_id}/owners`) in their order: by token id, then owner.

use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

const NAME: &str = "idx_nft_holdings_collection";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_index(
            Index::create()
                .name(NAME)
                .table(NftHoldings::Table)
                .col(NftHoldings::ChainId)
                .col(NftHoldings::ContractAddress)
                .col(NftHoldings::TokenId)
                .col(NftHoldings::OwnerAddress)
                .to_owned(),
        )
        .await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.drop_index(
            Index::drop()
                .name(NAME)
                .table(NftHoldings::Table)
                .to_owned(),
        )
        .await
    }
}

#[derive(DeriveIden)]
enum NftHoldings {
    Table,
    ChainId,
    ContractAddress,
    TokenId,
    OwnerAddress,
}
