//! Typed columns (`entity/values.rs`) on every database: stored text is read straight into
//! `Address`, `Uint256` and `TokenStandard` (borrowed from the row where the driver allows),
//! a NULL reads as `None` (SQLite would hand a borrowed NULL over as an empty text), and a
//! stored value that does not parse is an error naming the type, never a wrong value.

use crate::support::common;

use common::{Backend, FreshDb};
use sea_orm::{ConnectionTrait, EntityTrait, QueryOrder};
use tokenql::entity::contract;
use tokenql::types::{Address, TokenStandard};

crate::backend_tests!(typed_columns_read_what_was_stored);

const A1: &str = "0x00000000000000000000000000000000000000a1";
const A2: &str = "0x00000000000000000000000000000000000000a2";

async fn typed_columns_read_what_was_stored(backend: Backend) {
    let fresh = FreshDb::create(backend, "typed").await;
    let db = &fresh.db;
    let insert = |address: &str, standard: &str| {
        format!(
            "INSERT INTO contracts (chain_id, address, standard, possible_spam, verified) \
             VALUES (1, '{address}', {standard}, false, false)"
        )
    };
    db.execute_unprepared(&insert(A1, "NULL"))
        .await
        .expect("insert");
    db.execute_unprepared(&insert(A2, "'ERC1155'"))
        .await
        .expect("insert");
    let rows = contract::Entity::find()
        .order_by_asc(contract::Column::Address)
        .all(db)
        .await
        .unwrap_or_else(|e| panic!("{backend:?}: {e}"));
    let read: Vec<_> = rows.iter().map(|r| (r.address, r.standard)).collect();
    let parse = |a: &str| Address::parse(a).expect("an address");
    assert_eq!(
        read,
        [(parse(A1), None), (parse(A2), Some(TokenStandard::Erc1155))],
        "{backend:?}"
    );

    db.execute_unprepared(&insert("0x12", "'ERC20'"))
        .await
        .expect("insert");
    let err = contract::Entity::find()
        .all(db)
        .await
        .expect_err("a stored address that does not parse is an error");
    assert!(err.to_string().contains("Address"), "{backend:?}: {err}");
    fresh.drop_database().await;
}
