//! Reading a row's columns by position, straight through sqlx.
//!
//! sea-orm's getters look columns up by name and, for every NULL they meet, format the column's
//! name into an error they then discard: on a page of 100 token rows with mostly NULL optional
//! columns that was an eighth of the server's CPU time (`perf record`, `benches/scale`). The
//! hot paths select their columns in a fixed order and read them with [`column`].

use sea_orm::sqlx::{self, Row as _};
use sea_orm::{DbErr, QueryResult};

/// A Rust type sqlx decodes on every backend tokenql supports.
pub trait Decodable:
    for<'r> sqlx::Decode<'r, sqlx::Postgres>
    + sqlx::Type<sqlx::Postgres>
    + for<'r> sqlx::Decode<'r, sqlx::MySql>
    + sqlx::Type<sqlx::MySql>
    + for<'r> sqlx::Decode<'r, sqlx::Sqlite>
    + sqlx::Type<sqlx::Sqlite>
{
}

impl<T> Decodable for T where
    T: for<'r> sqlx::Decode<'r, sqlx::Postgres>
        + sqlx::Type<sqlx::Postgres>
        + for<'r> sqlx::Decode<'r, sqlx::MySql>
        + sqlx::Type<sqlx::MySql>
        + for<'r> sqlx::Decode<'r, sqlx::Sqlite>
        + sqlx::Type<sqlx::Sqlite>
{
}

/// Column `idx` of `row`: `None` for NULL.
pub fn column<T: Decodable>(row: &QueryResult, idx: usize) -> Result<Option<T>, DbErr> {
    let got = if let Some(r) = row.try_as_pg_row() {
        r.try_get::<Option<T>, _>(idx)
    } else if let Some(r) = row.try_as_mysql_row() {
        r.try_get::<Option<T>, _>(idx)
    } else if let Some(r) = row.try_as_sqlite_row() {
        r.try_get::<Option<T>, _>(idx)
    } else {
        return Err(DbErr::Type("a row of an unsupported backend".into()));
    };
    got.map_err(|e| DbErr::Type(format!("column {idx}: {e}")))
}

/// The value at position `idx` read as a typed column ([`crate::entity`]'s addresses, uint256
/// values and standards): never NULL, and a stored text that does not parse is an error.
pub fn typed<T: sea_orm::TryGetable>(row: &QueryResult, idx: usize) -> Result<T, DbErr> {
    T::try_get_by_index(row, idx).map_err(DbErr::from)
}
