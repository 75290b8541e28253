//! The custom scalars: `Address`, `Uint256`, `BlockNumber`.
//!
//! As inputs they only check the JSON kind (so `address: 5` fails validation, naming the
//! argument) and carry the raw value; resolvers convert them into the boundary types of
//! [`crate::types`] with `TryFrom`, and a bad value becomes a `BAD_USER_INPUT` error that names
//! the argument and the rule. As outputs they are built from the boundary types, so what they
//! write is always canonical.

use async_graphql::{InputValueError, InputValueResult, Number, Scalar, ScalarType, Value};

use crate::types::{self, ParseError};

/// The `Address` scalar (described on its `ScalarType` impl, which is what GraphQL shows).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Address(String);

/// An EVM address: `0x` followed by 40 hex digits. Accepted in any letter case (mixed case need
/// not be a valid EIP-55 checksum); always written lowercase.
#[Scalar(name = "Address")]
impl ScalarType for Address {
    fn parse(value: Value) -> InputValueResult<Self> {
        match value {
            Value::String(s) => Ok(Address(s)),
            other => Err(InputValueError::expected_type(other)),
        }
    }

    fn is_valid(value: &Value) -> bool {
        matches!(value, Value::String(_))
    }

    fn to_value(&self) -> Value {
        Value::String(self.0.clone())
    }
}

impl From<types::Address> for Address {
    fn from(a: types::Address) -> Self {
        Address(a.to_string())
    }
}

impl TryFrom<&Address> for types::Address {
    type Error = ParseError;

    fn try_from(a: &Address) -> Result<Self, ParseError> {
        types::Address::parse(&a.0)
    }
}

/// The `Uint256` scalar (described on its `ScalarType` impl).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Uint256(String);

/// An unsigned 256-bit integer, written as a decimal string so that no digit is lost (JSON
/// numbers are only exact up to 2^53). Input: a decimal string or a `0x`-prefixed hex string.
#[Scalar(name = "Uint256")]
impl ScalarType for Uint256 {
    fn parse(value: Value) -> InputValueResult<Self> {
        match value {
            Value::String(s) => Ok(Uint256(s)),
            other => Err(InputValueError::expected_type(other)),
        }
    }

    fn is_valid(value: &Value) -> bool {
        matches!(value, Value::String(_))
    }

    fn to_value(&self) -> Value {
        Value::String(self.0.clone())
    }
}

impl From<types::Uint256> for Uint256 {
    fn from(v: types::Uint256) -> Self {
        Uint256(v.to_decimal())
    }
}

impl TryFrom<&Uint256> for types::Uint256 {
    type Error = ParseError;

    fn try_from(v: &Uint256) -> Result<Self, ParseError> {
        types::Uint256::parse(&v.0)
    }
}

/// The `BlockNumber` scalar (described on its `ScalarType` impl).
#[derive(Debug, Clone, PartialEq)]
pub enum BlockNumber {
    /// A JSON number (input, or any output).
    Number(Number),
    /// A string (input only).
    Text(String),
}

/// A block number: a non-negative integer, written as a JSON number (block numbers stay far
/// below 2^53). Input: an `Int` or a decimal string (for numbers beyond `Int`'s 32 bits).
#[Scalar(name = "BlockNumber")]
impl ScalarType for BlockNumber {
    fn parse(value: Value) -> InputValueResult<Self> {
        match value {
            Value::Number(n) => Ok(BlockNumber::Number(n)),
            Value::String(s) => Ok(BlockNumber::Text(s)),
            other => Err(InputValueError::expected_type(other)),
        }
    }

    fn is_valid(value: &Value) -> bool {
        matches!(value, Value::Number(_) | Value::String(_))
    }

    fn to_value(&self) -> Value {
        match self {
            BlockNumber::Number(n) => Value::Number(n.clone()),
            BlockNumber::Text(s) => Value::String(s.clone()),
        }
    }
}

impl From<u64> for BlockNumber {
    fn from(n: u64) -> Self {
        BlockNumber::Number(Number::from(n))
    }
}

impl TryFrom<&BlockNumber> for types::BlockNumber {
    type Error = ParseError;

    fn try_from(b: &BlockNumber) -> Result<Self, ParseError> {
        match b {
            BlockNumber::Number(n) => types::BlockNumber::parse(&n.to_string()),
            BlockNumber::Text(s) => types::BlockNumber::parse(s),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse<T: ScalarType>(v: Value) -> Option<T> {
        <T as ScalarType>::parse(v).ok()
    }

    #[test]
    fn address_in_any_case_out_lowercase() {
        let a: Address = parse(Value::String(
            "0xF977814e90dA44bFA03b6295A0616a897441aceC".into(),
        ))
        .unwrap();
        let parsed = types::Address::try_from(&a).unwrap();
        assert_eq!(
            Address::from(parsed).to_value(),
            Value::String("0xf977814e90da44bfa03b6295a0616a897441acec".into())
        );
        assert!(parse::<Address>(Value::from(5)).is_none());
        assert!(!<Address as ScalarType>::is_valid(&Value::from(true)));
        let bad: Address = parse(Value::String("0x12".into())).unwrap();
        assert!(types::Address::try_from(&bad).is_err());
    }

    #[test]
    fn uint256_decimal_or_hex_in_decimal_out() {
        let v: Uint256 = parse(Value::String("0xff".into())).unwrap();
        let parsed = types::Uint256::try_from(&v).unwrap();
        assert_eq!(
            Uint256::from(parsed).to_value(),
            Value::String("255".into())
        );
        assert!(parse::<Uint256>(Value::from(255)).is_none());
        let bad: Uint256 = parse(Value::String("1e3".into())).unwrap();
        assert!(types::Uint256::try_from(&bad).is_err());
    }

    #[test]
    fn block_number_int_or_string_in_number_out() {
        let b: BlockNumber = parse(Value::from(16_867_742)).unwrap();
        assert_eq!(types::BlockNumber::try_from(&b).unwrap().0, 16_867_742);
        let b: BlockNumber = parse(Value::String("9007199254740993".into())).unwrap();
        assert_eq!(
            types::BlockNumber::try_from(&b).unwrap().0,
            9_007_199_254_740_993
        );
        assert_eq!(BlockNumber::from(7).to_value(), Value::from(7));
        for bad in [
            Value::from(-1),
            Value::from(1.5),
            Value::String("abc".into()),
        ] {
            let b: BlockNumber = parse(bad.clone()).unwrap();
            assert!(types::BlockNumber::try_from(&b).is_err(), "{bad}");
        }
        assert!(parse::<BlockNumber>(Value::Boolean(true)).is_none());
    }
}
