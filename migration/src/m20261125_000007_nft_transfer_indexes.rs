//! Indexes for reading NFT transfers by wallet and by collection, newest or oldest first
//! (`GET /{address}/nft/transfers`, `GET /nft/{address}/transfers`): one per side of a
//! transfer (sender, recipient) and one per collection, each in the table's order (block
//! number, log index, position in a batch), so a page is an index range cut at its size.

use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// (index name, the column it leads with after the chain).
const INDEXES: [(&str, NftTransfers); 3] = [
    ("idx_nft_transfers_from", NftTransfers::FromAddress),
    ("idx_nft_transfers_to", NftTransfers::ToAddress),
    ("idx_nft_transfers_contract", NftTransfers::ContractAddress),
];

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        for (name, col) in INDEXES {
            m.create_index(
                Index::create()
                    .name(name)
                    .table(NftTransfers::Table)
                    .col(NftTransfers::ChainId)
                    .col(col)
                    .col(NftTransfers::BlockNumber)
                    .col(NftTransfers::LogIndex)
                    .col(NftTransfers::BatchIndex)
                    .to_owned(),
            )
            .await?;
        }
        Ok(())
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        for (name, _) in INDEXES {
            m.drop_index(
                Index::drop()
                    .name(name)
                    .table(NftTransfers::Table)
                    .to_owned(),
            )
            .await?;
        }
        Ok(())
    }
}

#[derive(DeriveIden, Clone, Copy)]
enum NftTransfers {
    Table,
    ChainId,
    FromAddress,
    ToAddress,
    ContractAddress,
    BlockNumber,
    LogIndex,
    BatchIndex,
}
