//! Typed columns: addresses, uint256 values and token standards are stored as text (see
//! docs/ARCHITECTURE.md, "Storage conventions") and read straight into the boundary types, so no
//! code past the entity layer parses a stored string back. A stored value that does not parse
//! is a corrupt row: reading it fails with a `DbErr` naming the type (never a wrong value).
//!
//! - [`Address`]: 42-character lowercase `0x` text;
//! - [`Uint256`]: 64 lowercase hex digits, zero-padded, so that text order is numeric order;
//! - [`TokenStandard`]: `ERC20`, `ERC721` or `ERC1155`.

use std::sync::Arc;

use sea_orm::sea_query::{ArrayType, ColumnType, Nullable, StringLen, ValueType, ValueTypeErr};
use sea_orm::sqlx::Row as _;
use sea_orm::{ActiveValue, ColIdx, DbErr, IntoActiveValue, QueryResult, TryGetError};
use sea_orm::{TryFromU64, TryGetable, Value};

use crate::types::{Address, ParseError, TokenStandard, Uint256};

/// Implements the sea-orm column traits of a boundary type stored as text: `$write` gives the
/// stored text, `$read` parses it back.
macro_rules! text_column {
    ($ty:ty, $name:literal, $write:expr, $read:expr) => {
        impl From<$ty> for Value {
            fn from(v: $ty) -> Self {
                let write: fn(&$ty) -> String = $write;
                Value::String(Some(write(&v)))
            }
        }

        impl TryGetable for $ty {
            fn try_get_by<I: ColIdx>(res: &QueryResult, idx: I) -> Result<Self, TryGetError> {
                let read: fn(&str) -> Result<$ty, ParseError> = $read;
                read_text(res, idx, read)?.map_err(|e| {
                    TryGetError::DbErr(DbErr::TryIntoErr {
                        from: "String",
                        into: $name,
                        source: Arc::new(e),
                    })
                })
            }
        }

        impl ValueType for $ty {
            fn try_from(v: Value) -> Result<Self, ValueTypeErr> {
                let text = <String as ValueType>::try_from(v)?;
                let read: fn(&str) -> Result<$ty, ParseError> = $read;
                read(&text).map_err(|_| ValueTypeErr)
            }

            fn type_name() -> String {
                $name.to_string()
            }

            fn array_type() -> ArrayType {
                ArrayType::String
            }

            fn column_type() -> ColumnType {
                ColumnType::String(StringLen::None)
            }
        }

        impl Nullable for $ty {
            fn null() -> Value {
                Value::String(None)
            }
        }

        impl IntoActiveValue<$ty> for $ty {
            fn into_active_value(self) -> ActiveValue<$ty> {
                ActiveValue::Set(self)
            }
        }

        /// Never an auto-incremented key: sea-orm asks only to read back such keys.
        impl TryFromU64 for $ty {
            fn try_from_u64(_: u64) -> Result<Self, DbErr> {
                Err(DbErr::Custom(format!("{} is not a generated key", $name)))
            }
        }
    };
}

/// `read` of the text stored in column `idx`, borrowed from the row where the driver allows it
/// (no copy of each value: a page reads hundreds), else of the text as sea-orm reads a `String`,
/// which also gives sea-orm's own errors (a NULL, a column of another type). A NULL is asked
/// for as one: SQLite would decode it as an empty text.
fn read_text<I: ColIdx, T>(
    res: &QueryResult,
    idx: I,
    read: impl Fn(&str) -> T,
) -> Result<T, TryGetError> {
    let borrowed = if let Some(row) = res.try_as_pg_row() {
        row.try_get::<Option<&str>, _>(idx.as_sqlx_postgres_index())
            .ok()
            .flatten()
            .map(&read)
    } else if let Some(row) = res.try_as_mysql_row() {
        row.try_get::<Option<&str>, _>(idx.as_sqlx_mysql_index())
            .ok()
            .flatten()
            .map(&read)
    } else if let Some(row) = res.try_as_sqlite_row() {
        row.try_get::<Option<&str>, _>(idx.as_sqlx_sqlite_index())
            .ok()
            .flatten()
            .map(&read)
    } else {
        None
    };
    match borrowed {
        Some(value) => Ok(value),
        None => String::try_get_by(res, idx).map(|text| read(&text)),
    }
}

text_column!(Address, "Address", |a| a.to_string(), Address::parse);
text_column!(Uint256, "Uint256", Uint256::to_db, Uint256::from_db);
text_column!(
    TokenStandard,
    "TokenStandard",
    |t| t.as_str().to_string(),
    TokenStandard::parse
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_stored_in_the_one_text_form() {
        let a = Address::parse("0xAbC0000000000000000000000000000000000001")
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            Value::from(a),
            Value::String(Some(
                "0xabc0000000000000000000000000000000000001".to_string()
            ))
        );
        let v = Uint256::from_u64(255);
        let stored = Value::from(v);
        assert_eq!(stored, Value::String(Some(format!("{:0>64}", "ff"))));
        assert_eq!(<Uint256 as ValueType>::try_from(stored).ok(), Some(v));
        assert_eq!(
            Value::from(TokenStandard::Erc1155),
            Value::String(Some("ERC1155".to_string()))
        );
    }

    #[test]
    fn a_stored_value_that_does_not_parse_is_an_error() {
        let bad = Value::String(Some("0x12".to_string()));
        assert!(<Address as ValueType>::try_from(bad.clone()).is_err());
        assert!(<Uint256 as ValueType>::try_from(bad.clone()).is_err());
        assert!(<TokenStandard as ValueType>::try_from(bad).is_err());
    }
}
