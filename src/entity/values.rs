//! Typed columns, read straight into the boundary types, so no code past the entity layer
//! parses a stored value back. A stored value that does not parse is a corrupt row: reading it
//! fails with a `DbErr` naming the type (never a wrong value). See docs/ARCHITECTURE.md,
//! "Storage conventions".
//!
//! Binary (`bytea` on PostgreSQL, `VARBINARY` on MySQL/MariaDB, `BLOB` on SQLite):
//! - [`Address`]: its 20 bytes;
//! - [`Uint256`]: 32 big-endian bytes, so that byte order is numeric order; a transfer's amount
//!   (never compared in SQL) may be stored without its leading zero bytes
//!   ([`crate::store::dialect::Dialect::amount_bytes`]), and reads the same;
//! - [`Hash32`]: a block or transaction hash, its 32 bytes.
//!
//! Text: [`TokenStandard`]: `ERC20`, `ERC721` or `ERC1155`.

use std::sync::Arc;

use sea_orm::sea_query::{ArrayType, ColumnType, Nullable, StringLen, ValueType, ValueTypeErr};
use sea_orm::sqlx::Row as _;
use sea_orm::{ActiveValue, ColIdx, DbErr, IntoActiveValue, QueryResult, TryGetError};
use sea_orm::{TryFromU64, TryGetable, Value};

use crate::types::{Address, Hash32, ParseError, TokenStandard, Uint256};

/// The sea-orm traits every typed column shares: `$null` is its NULL value.
macro_rules! column_common {
    ($ty:ty, $name:literal, $null:expr) => {
        impl Nullable for $ty {
            fn null() -> Value {
                $null
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

/// The error of a stored value that does not read as `into`.
fn corrupt(from: &'static str, into: &'static str, e: ParseError) -> TryGetError {
    TryGetError::DbErr(DbErr::TryIntoErr {
        from,
        into,
        source: Arc::new(e),
    })
}

/// Implements the sea-orm column traits of a boundary type stored as bytes: `$write` gives the
/// stored bytes, `$read` reads them back.
macro_rules! bytes_column {
    ($ty:ty, $name:literal, $write:expr, $read:expr) => {
        impl From<$ty> for Value {
            fn from(v: $ty) -> Self {
                let write: fn(&$ty) -> Vec<u8> = $write;
                Value::Bytes(Some(write(&v)))
            }
        }

        impl TryGetable for $ty {
            fn try_get_by<I: ColIdx>(res: &QueryResult, idx: I) -> Result<Self, TryGetError> {
                let read: fn(&[u8]) -> Result<$ty, ParseError> = $read;
                read_bytes(res, idx, read)?.map_err(|e| corrupt("bytes", $name, e))
            }
        }

        impl ValueType for $ty {
            fn try_from(v: Value) -> Result<Self, ValueTypeErr> {
                let bytes = <Vec<u8> as ValueType>::try_from(v)?;
                let read: fn(&[u8]) -> Result<$ty, ParseError> = $read;
                read(&bytes).map_err(|_| ValueTypeErr)
            }

            fn type_name() -> String {
                $name.to_string()
            }

            fn array_type() -> ArrayType {
                ArrayType::Bytes
            }

            fn column_type() -> ColumnType {
                ColumnType::VarBinary(StringLen::None)
            }
        }

        column_common!($ty, $name, Value::Bytes(None));
    };
}

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
                String::try_get_by(res, idx)
                    .and_then(|t| read(&t).map_err(|e| corrupt("String", $name, e)))
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

        column_common!($ty, $name, Value::String(None));
    };
}

/// `read` of the bytes stored in column `idx`, borrowed from the row where the driver allows it
/// (no copy of each value: a page reads hundreds), else of the bytes as sea-orm reads a
/// `Vec<u8>`, which also gives sea-orm's own errors (a NULL, a column of another type). A NULL
/// is asked for as one.
fn read_bytes<I: ColIdx, T>(
    res: &QueryResult,
    idx: I,
    read: impl Fn(&[u8]) -> T,
) -> Result<T, TryGetError> {
    let borrowed = if let Some(row) = res.try_as_pg_row() {
        row.try_get::<Option<&[u8]>, _>(idx.as_sqlx_postgres_index())
            .ok()
            .flatten()
            .map(&read)
    } else if let Some(row) = res.try_as_mysql_row() {
        row.try_get::<Option<&[u8]>, _>(idx.as_sqlx_mysql_index())
            .ok()
            .flatten()
            .map(&read)
    } else if let Some(row) = res.try_as_sqlite_row() {
        row.try_get::<Option<&[u8]>, _>(idx.as_sqlx_sqlite_index())
            .ok()
            .flatten()
            .map(&read)
    } else {
        None
    };
    match borrowed {
        Some(value) => Ok(value),
        None => Vec::<u8>::try_get_by(res, idx).map(|bytes| read(&bytes)),
    }
}

/// `N` stored bytes as an array, or the error naming what they should have been.
fn exact<const N: usize>(b: &[u8], what: &str) -> Result<[u8; N], ParseError> {
    b.try_into()
        .map_err(|_| ParseError::new(format!("stored {what} is {} bytes, not {N}", b.len())))
}

bytes_column!(Address, "Address", |a| a.as_bytes().to_vec(), |b| exact(
    b, "address"
)
.map(Address::from_bytes));
bytes_column!(Uint256, "Uint256", |u| u.to_be_bytes().to_vec(), |b| {
    Uint256::from_be_slice(b)
        .ok_or_else(|| ParseError::new(format!("stored uint256 is {} bytes, not 1 to 32", b.len())))
});
bytes_column!(Hash32, "Hash32", |h| h.as_bytes().to_vec(), |b| exact(
    b, "hash"
)
.map(Hash32::from_bytes));
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
    fn values_are_stored_in_their_one_binary_form() {
        let a = Address::parse("0xAbC0000000000000000000000000000000000001")
            .unwrap_or_else(|e| panic!("{e}"));
        let mut bytes = [0u8; 20];
        bytes[0] = 0xab;
        bytes[1] = 0xc0;
        bytes[19] = 1;
        assert_eq!(Value::from(a), Value::Bytes(Some(bytes.to_vec())));
        let v = Uint256::from_u64(255);
        let stored = Value::from(v);
        let mut word = [0u8; 32];
        word[31] = 0xff;
        assert_eq!(stored, Value::Bytes(Some(word.to_vec())));
        assert_eq!(<Uint256 as ValueType>::try_from(stored).ok(), Some(v));
        let h = Hash32::from_bytes([7; 32]);
        assert_eq!(
            <Hash32 as ValueType>::try_from(Value::from(h)).ok(),
            Some(h)
        );
        assert_eq!(
            Value::from(TokenStandard::Erc1155),
            Value::String(Some("ERC1155".to_string()))
        );
    }

    #[test]
    fn byte_order_is_numeric_order() {
        let bytes = |n: u64| Uint256::from_u64(n).to_be_bytes();
        assert!(bytes(9) < bytes(10) && bytes(255) < bytes(256));
        assert!(bytes(u64::MAX) < Uint256::MAX.to_be_bytes());
    }

    #[test]
    fn a_stored_value_that_does_not_parse_is_an_error() {
        let short = Value::Bytes(Some(vec![0x12]));
        assert!(<Address as ValueType>::try_from(short.clone()).is_err());
        assert!(<Hash32 as ValueType>::try_from(short.clone()).is_err());
        assert_eq!(
            <Uint256 as ValueType>::try_from(short).ok(),
            Some(Uint256::from_u64(0x12)),
            "an amount stored without its leading zero bytes"
        );
        for len in [0, 33] {
            let wrong = Value::Bytes(Some(vec![1; len]));
            assert!(
                <Uint256 as ValueType>::try_from(wrong).is_err(),
                "{len} bytes"
            );
        }
        let bad = Value::String(Some("0x12".to_string()));
        assert!(<Address as ValueType>::try_from(bad.clone()).is_err());
        assert!(<TokenStandard as ValueType>::try_from(bad).is_err());
    }
}
