//! Contract metadata writes: names, symbols, decimals and logos (from token lists now, from
//! `eth_call` in the indexer), and address labels.

use sea_orm::sea_query::OnConflict;
use sea_orm::{ConnectionTrait, DbErr, EntityTrait};

use crate::entity::{address_label, contract};
use crate::types::{Address, Chain};

/// Metadata of one token contract, as a token list or `eth_call` gives it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContractMeta {
    pub name: Option<String>,
    pub symbol: Option<String>,
    pub decimals: Option<u8>,
    pub logo: Option<String>,
}

/// Upserts names, symbols, decimals and logos. Returns the number of rows given.
pub async fn upsert_contract_meta<C: ConnectionTrait>(
    db: &C,
    chain: Chain,
    metas: &[(Address, ContractMeta)],
) -> Result<usize, DbErr> {
    // One row per address (the last entry wins): PostgreSQL refuses to upsert a row twice in
    // one statement.
    let metas: std::collections::BTreeMap<&Address, &ContractMeta> =
        metas.iter().map(|(a, m)| (a, m)).collect();
    let rows: Vec<contract::ActiveModel> = metas
        .into_iter()
        .map(|(a, m)| {
            contract::Model {
                chain_id: chain.db_id(),
                address: a.to_string(),
                standard: None,
                name: m.name.clone(),
                symbol: m.symbol.clone(),
                decimals: m.decimals.map(i32::from),
                logo: m.logo.clone(),
                possible_spam: false,
                verified: false,
                metadata_fetched_at: None,
                spam_source: None,
                verified_source: None,
            }
            .into()
        })
        .collect();
    for chunk in rows.chunks(super::CHUNK) {
        contract::Entity::insert_many(chunk.to_vec())
            .on_conflict(
                OnConflict::columns([contract::Column::ChainId, contract::Column::Address])
                    .update_columns([
                        contract::Column::Name,
                        contract::Column::Symbol,
                        contract::Column::Decimals,
                        contract::Column::Logo,
                    ])
                    .to_owned(),
            )
            .exec_without_returning(db)
            .await?;
    }
    Ok(rows.len())
}

/// Upserts address labels.
pub async fn upsert_labels<C: ConnectionTrait>(
    db: &C,
    chain: Chain,
    labels: &[(Address, String)],
) -> Result<usize, DbErr> {
    let labels: std::collections::BTreeMap<&Address, &String> =
        labels.iter().map(|(a, l)| (a, l)).collect();
    let rows: Vec<address_label::ActiveModel> = labels
        .into_iter()
        .map(|(a, l)| {
            address_label::Model {
                chain_id: chain.db_id(),
                address: a.to_string(),
                label: l.clone(),
            }
            .into()
        })
        .collect();
    for chunk in rows.chunks(super::CHUNK) {
        address_label::Entity::insert_many(chunk.to_vec())
            .on_conflict(
                OnConflict::columns([
                    address_label::Column::ChainId,
                    address_label::Column::Address,
                ])
                .update_column(address_label::Column::Label)
                .to_owned(),
            )
            .exec_without_returning(db)
            .await?;
    }
    Ok(rows.len())
}

/// Sets the spam / verified flags of one contract (creating its row if needed).
pub async fn set_flags<C: ConnectionTrait>(
    db: &C,
    chain: Chain,
    address: Address,
    possible_spam: bool,
    verified: bool,
) -> Result<(), DbErr> {
    let row: contract::ActiveModel = contract::Model {
        chain_id: chain.db_id(),
        address: address.to_string(),
        standard: None,
        name: None,
        symbol: None,
        decimals: None,
        logo: None,
        possible_spam,
        verified,
        metadata_fetched_at: None,
                spam_source: None,
                verified_source: None,
    }
    .into();
    contract::Entity::insert(row)
        .on_conflict(
            OnConflict::columns([contract::Column::ChainId, contract::Column::Address])
                .update_columns([contract::Column::PossibleSpam, contract::Column::Verified])
                .to_owned(),
        )
        .exec_without_returning(db)
        .await?;
    Ok(())
}
