//! Arguments, parsed once at the boundary into the types of [`crate::types`] and
//! [`crate::query`]. A bad value is a `BAD_USER_INPUT` error that names the argument and the
//! rule (`first: 0 is out of range; expected 1 to 100`); an empty string is one too (`chain: is
//! empty; ...`), never a default in disguise.

use std::fmt::Display;

use super::enums::Order;
use super::error::GqlError;
use super::scalars::{Address, BlockNumber, Uint256};
use crate::query::{BlockRange, DateRange};
use crate::types::{self, AddressList, Chain, DateBound, PageSize, SortOrder};

/// Prefixes a parse error with the argument's name.
pub fn arg<T, E: Display>(name: &str, r: Result<T, E>) -> Result<T, GqlError> {
    r.map_err(|e| GqlError::bad_input(name, e))
}

/// `s`, unless it is empty (or only spaces).
fn non_empty<'a>(name: &str, s: &'a str) -> Result<&'a str, GqlError> {
    if s.trim().is_empty() {
        Err(GqlError::bad_input(
            name,
            "is empty; give a value, or leave the argument out for its default",
        ))
    } else {
        Ok(s)
    }
}

/// A chain argument: a name or a hex id.
pub fn chain(name: &str, s: &str) -> Result<Chain, GqlError> {
    arg(name, Chain::parse(non_empty(name, s)?))
}

/// An address argument.
pub fn address(name: &str, a: &Address) -> Result<types::Address, GqlError> {
    arg(name, types::Address::try_from(a))
}

/// A token id argument: decimal or `0x` hex, at most 2^256-1.
pub fn token_id(name: &str, t: &Uint256) -> Result<types::Uint256, GqlError> {
    arg(name, types::Uint256::try_from(t))
}

/// A list of 1 to 100 addresses; absent is no filter. An empty list is refused, as REST refuses
/// an empty value: `[]` is no default in disguise.
pub fn address_list(name: &str, list: Option<&[Address]>) -> Result<AddressList, GqlError> {
    if list.is_some_and(<[Address]>::is_empty) {
        return Err(GqlError::bad_input(
            name,
            "is empty; give at least one address, or leave the argument out",
        ));
    }
    let parsed = list
        .unwrap_or_default()
        .iter()
        .map(types::Address::try_from)
        .collect::<Result<Vec<_>, _>>();
    arg(name, parsed.and_then(AddressList::from_addresses))
}

/// A block number argument.
pub fn block(name: &str, b: Option<&BlockNumber>) -> Result<Option<types::BlockNumber>, GqlError> {
    b.map(|b| arg(name, types::BlockNumber::try_from(b)))
        .transpose()
}

/// `first`: 1 to 100.
pub fn first(n: i32) -> Result<PageSize, GqlError> {
    arg("first", PageSize::new(i64::from(n)))
}

/// `after`: absent for the first page; an empty cursor is refused.
pub fn after(after: Option<&str>) -> Result<Option<&str>, GqlError> {
    after.map(|a| non_empty("after", a)).transpose()
}

/// `fromBlock` and `toBlock`, with `fromBlock <= toBlock`.
pub fn blocks(
    from: Option<&BlockNumber>,
    to: Option<&BlockNumber>,
) -> Result<BlockRange, GqlError> {
    let (from, to) = (block("fromBlock", from)?, block("toBlock", to)?);
    BlockRange::new(from, to).map_err(|_| {
        let (f, t) = (from.map_or(0, |b| b.0), to.map_or(0, |b| b.0));
        GqlError::bad_input(
            "fromBlock",
            format!("{f} is greater than toBlock ({t}); expected fromBlock <= toBlock"),
        )
    })
}

/// One date bound: Unix seconds or ISO 8601.
fn date(name: &str, s: Option<&str>, bound: DateBound) -> Result<Option<u64>, GqlError> {
    s.map(|s| arg(name, types::parse_date(non_empty(name, s)?, bound)))
        .transpose()
}

/// The arguments that bound a list of transfers and order it: `fromBlock`, `toBlock`,
/// `fromDate`, `toDate`, `order`. Every bound is inclusive; a block bound wins over a date
/// bound of the same side (the date is still checked), as the REST v2.2 routes do.
#[derive(Debug, Clone, Default)]
pub struct Range {
    pub from_block: Option<BlockNumber>,
    pub to_block: Option<BlockNumber>,
    pub from_date: Option<String>,
    pub to_date: Option<String>,
    pub order: Order,
}

/// A parsed [`Range`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Bounds {
    pub blocks: BlockRange,
    pub dates: DateRange,
    pub order: SortOrder,
}

impl Range {
    /// Parses the bounds: `fromBlock <= toBlock`, dates that parse, and `fromDate <= toDate`
    /// for the dates kept (a date is dropped where a block bounds the same side).
    pub fn parse(&self) -> Result<Bounds, GqlError> {
        let blocks = blocks(self.from_block.as_ref(), self.to_block.as_ref())?;
        let from = date("fromDate", self.from_date.as_deref(), DateBound::From)?;
        let to = date("toDate", self.to_date.as_deref(), DateBound::To)?;
        let from = from.filter(|_| blocks.from.is_none());
        let to = to.filter(|_| blocks.to.is_none());
        let dates = DateRange::new(from, to).map_err(|_| {
            let (f, t) = (from.unwrap_or(0), to.unwrap_or(0));
            GqlError::bad_input(
                "fromDate",
                format!("{f} is after toDate ({t}); expected fromDate <= toDate"),
            )
        })?;
        Ok(Bounds {
            blocks,
            dates,
            order: self.order.into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use async_graphql::{ScalarType, Value};

    fn message<T: std::fmt::Debug>(r: Result<T, GqlError>) -> String {
        r.expect_err("an error").message().to_string()
    }

    fn number(n: i64) -> BlockNumber {
        <BlockNumber as ScalarType>::parse(Value::from(n)).expect("a number")
    }

    #[test]
    fn an_empty_list_is_refused_by_name() {
        let m = message(address_list("contractAddresses", Some(&[])));
        assert!(m.starts_with("contractAddresses: is empty"), "{m}");
        assert!(address_list("contractAddresses", None).is_ok());
    }

    #[test]
    fn empty_values_are_refused_by_name() {
        assert!(message(chain("chain", "")).starts_with("chain: is empty"));
        assert!(message(chain("chain", "  ")).starts_with("chain: is empty"));
        assert!(message(after(Some(""))).starts_with("after: is empty"));
        let r = Range {
            to_date: Some(String::new()),
            ..Range::default()
        };
        assert!(message(r.parse()).starts_with("toDate: is empty"));
        assert_eq!(after(None).ok(), Some(None));
        assert_eq!(chain("chain", "0x1").ok(), Some(Chain::ETH));
    }

    #[test]
    fn malformed_values_name_the_argument() {
        assert!(message(chain("chain", "solana")).starts_with("chain: unknown chain 'solana'"));
        assert!(message(first(0)).starts_with("first: 0 is out of range"));
        assert!(message(first(101)).starts_with("first: 101 is out of range"));
        let bad: Uint256 =
            <Uint256 as ScalarType>::parse(Value::String(format!("0x1{}", "0".repeat(64))))
                .expect("a string");
        assert!(message(token_id("tokenId", &bad)).starts_with("tokenId: '0x1000"));
        let r = Range {
            from_date: Some("yesterday".into()),
            ..Range::default()
        };
        assert!(message(r.parse()).starts_with("fromDate: 'yesterday' is not a date"));
    }

    #[test]
    fn bounds_are_ordered_and_a_block_wins_over_a_date() {
        let r = Range {
            from_block: Some(number(10)),
            to_block: Some(number(5)),
            ..Range::default()
        };
        assert!(message(r.parse()).starts_with("fromBlock: 10 is greater than toBlock (5)"));
        let r = Range {
            from_date: Some("2023-03-02".into()),
            to_date: Some("2023-03-01".into()),
            ..Range::default()
        };
        assert!(message(r.parse()).starts_with("fromDate: 1677715200 is after toDate"));
        // The same dates with a block on the `from` side: the date is dropped, so no conflict.
        let r = Range {
            from_block: Some(number(7)),
            from_date: Some("2023-03-02".into()),
            to_date: Some("2023-03-01".into()),
            order: Order::Asc,
            ..Range::default()
        };
        let b = r.parse().expect("valid");
        assert_eq!(b.blocks.from, Some(types::BlockNumber(7)));
        assert_eq!(
            b.dates,
            DateRange::new(None, Some(1_677_628_800)).expect("dates")
        );
        assert_eq!(b.order, SortOrder::Asc);
        // A date that does not parse is refused even where a block bound wins.
        let r = Range {
            from_block: Some(number(7)),
            from_date: Some("soon".into()),
            ..Range::default()
        };
        assert!(message(r.parse()).starts_with("fromDate:"));
    }
}
