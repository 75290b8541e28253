//! Reads of address labels (`address_labels`), for `tokenql contract show` and the demo.
//! Labels are written by [`super::meta::upsert_labels`]; the APIs read them through
//! [`crate::query`].

use sea_orm::{ColumnTrait, ConnectionTrait, DbErr, EntityTrait, PaginatorTrait, QueryFilter};

use crate::entity::address_label;
use crate::types::{Address, Chain};

/// The label of one address, if it has one.
pub async fn label<C: ConnectionTrait>(
    db: &C,
    chain: Chain,
    address: Address,
) -> Result<Option<String>, DbErr> {
    Ok(
        address_label::Entity::find_by_id((chain.db_id(), address.to_string()))
            .one(db)
            .await?
            .map(|l| l.label),
    )
}

/// How many addresses of `chain` are labelled.
pub async fn count<C: ConnectionTrait>(db: &C, chain: Chain) -> Result<u64, DbErr> {
    address_label::Entity::find()
        .filter(address_label::Column::ChainId.eq(chain.db_id()))
        .count(db)
        .await
}
