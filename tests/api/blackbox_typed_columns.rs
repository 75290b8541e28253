//! Typed columns (`entity/values.rs`) on every database: stored bytes and text are read
//! straight into `Address` and `TokenStandard` (borrowed from the row where the driver
//! allows), a NULL reads as `None`, and a stored value that does not read is an error naming
//! the type, never a wrong value.

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
    // Addresses are stored as their bytes: written here as the backend's binary literal.
    let insert = |address: &str, standard: &str| {
        let hex = address.trim_start_matches("0x");
        let literal = match backend {
            Backend::Postgres => format!("'\\x{hex}'::bytea"),
            _ => format!("X'{hex}'"),
        };
        format!(
            "INSERT INTO contracts (chain_id, address, standard, possible_spam, verified) \
             VALUES (1, {literal}, {standard}, false, false)"
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

    // A value of the wrong size (MySQL's `BINARY(20)` pads a short one, so there an unknown
    // standard stands for the corrupt value).
    let (bad, kind) = match backend {
        Backend::Mysql => (
            insert("0x00000000000000000000000000000000000000a3", "'ERC99'"),
            "TokenStandard",
        ),
        _ => (insert("0x12", "'ERC20'"), "Address"),
    };
    db.execute_unprepared(&bad).await.expect("insert");
    let err = contract::Entity::find()
        .all(db)
        .await
        .expect_err("a stored value that does not read is an error");
    assert!(err.to_string().contains(kind), "{backend:?}: {err}");
    fresh.drop_database().await;
}
