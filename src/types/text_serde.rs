//! Serde for the boundary types, as the text the APIs write: an [`Address`] as `0x` and 40
//! lowercase hex digits, a [`Uint256`] as `0x` hex, a [`TokenStandard`] as `ERC20`/`ERC721`/
//! `ERC1155`. Used where a value is kept as JSON (the change feed's records), so that reading
//! it back goes through the same parsers as user input.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{Address, TokenStandard, Uint256};

impl Serialize for Address {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Address {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        Address::parse(&text).map_err(D::Error::custom)
    }
}

impl Serialize for Uint256 {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_hex())
    }
}

impl<'de> Deserialize<'de> for Uint256 {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        Uint256::parse(&text).map_err(D::Error::custom)
    }
}

impl Serialize for TokenStandard {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for TokenStandard {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        TokenStandard::parse(&text).map_err(D::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_round_trip_as_api_text() {
        let a = Address::parse("0x00000000000000000000000000000000000000Ab").unwrap();
        let v = Uint256::parse("1000000000000000000000").unwrap();
        let json = serde_json::to_string(&(a, v, TokenStandard::Erc1155)).unwrap();
        assert_eq!(
            json,
            r#"["0x00000000000000000000000000000000000000ab","0x3635c9adc5dea00000","ERC1155"]"#
        );
        let back: (Address, Uint256, TokenStandard) = serde_json::from_str(&json).unwrap();
        assert_eq!(back, (a, v, TokenStandard::Erc1155));
        assert!(serde_json::from_str::<Address>(r#""0x12""#).is_err());
    }
}
