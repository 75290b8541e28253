//! Address labels (`address_labels`): written by label imports ([`upsert_labels`]), read for
//! `tokenql contract show` and the demo; the APIs read them through [`crate::query`].

use sea_orm::sea_query::OnConflict;
use sea_orm::{ColumnTrait, ConnectionTrait, DbErr, EntityTrait, PaginatorTrait, QueryFilter};

use crate::entity::address_label;
use crate::types::{Address, Chain};

/// The label of one address, if it has one.
pub async fn label<C: ConnectionTrait>(
    db: &C,
    chain: Chain,
    address: Address,
) -> Result<Option<String>, DbErr> {
    Ok(address_label::Entity::find_by_id((chain.db_id(), address))
        .one(db)
        .await?
        .map(|l| l.label))
}

/// How many addresses of `chain` are labelled.
pub async fn count<C: ConnectionTrait>(db: &C, chain: Chain) -> Result<u64, DbErr> {
    address_label::Entity::find()
        .filter(address_label::Column::ChainId.eq(chain.db_id()))
        .count(db)
        .await
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
                address: *a,
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
