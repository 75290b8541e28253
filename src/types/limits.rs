//! Page sizes, block bounds, id formats and address lists.
use super::{Address, ParseError};

/// At most this many entries in one list parameter.
pub const MAX_LIST_LEN: usize = 100;

/// How many records one page holds: 1..=100, default 100.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageSize(u16);

impl PageSize {
    pub const MAX: u16 = 100;

    pub fn parse(s: &str) -> Result<Self, ParseError> {
        let t = s.trim();
        let n: i64 = t
            .parse()
            .map_err(|_| ParseError::new(format!("'{t}' is not an integer; expected 1 to 100")))?;
        Self::new(n)
    }

    pub fn new(n: i64) -> Result<Self, ParseError> {
        if (1..=i64::from(Self::MAX)).contains(&n) {
            Ok(PageSize(n as u16))
        } else {
            Err(ParseError::new(format!(
                "{n} is out of range; expected 1 to 100"
            )))
        }
    }

    pub fn get(&self) -> u64 {
        u64::from(self.0)
    }
}

impl Default for PageSize {
    fn default() -> Self {
        PageSize(Self::MAX)
    }
}

/// A block number: a non-negative integer that fits the database's BIGINT.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct BlockNumber(pub u64);

impl BlockNumber {
    pub fn parse(s: &str) -> Result<Self, ParseError> {
        let t = s.trim();
        if t.starts_with('-') {
            return Err(ParseError::new(format!(
                "'{t}' is negative; expected a block number >= 0"
            )));
        }
        t.parse::<u64>()
            .ok()
            .filter(|n| *n <= i64::MAX as u64)
            .map(BlockNumber)
            .ok_or_else(|| {
                ParseError::new(format!(
                    "'{t}' is not a block number (a non-negative integer)"
                ))
            })
    }

    pub fn db(&self) -> i64 {
        self.0 as i64
    }
}

/// How token ids are written: decimal (default) or `0x` hex.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub enum TokenIdFormat {
    #[default]
    Decimal,
    Hex,
}

impl TokenIdFormat {
    pub fn parse(s: &str) -> Result<Self, ParseError> {
        match s.trim() {
            "decimal" => Ok(Self::Decimal),
            "hex" => Ok(Self::Hex),
            other => Err(ParseError::new(format!(
                "'{other}' is not a format; expected 'decimal' or 'hex'"
            ))),
        }
    }
}

/// A de-duplicated, sorted list of at most [`MAX_LIST_LEN`] addresses.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct AddressList(Vec<Address>);

impl AddressList {
    pub fn parse<S: AsRef<str>>(items: &[S]) -> Result<Self, ParseError> {
        if items.len() > MAX_LIST_LEN {
            return Err(ParseError::new(format!(
                "{} entries given; at most {MAX_LIST_LEN} are allowed",
                items.len()
            )));
        }
        let mut v = items
            .iter()
            .map(|s| Address::parse(s.as_ref()))
            .collect::<Result<Vec<_>, _>>()?;
        v.sort();
        v.dedup();
        Ok(AddressList(v))
    }

    pub fn from_addresses(mut v: Vec<Address>) -> Result<Self, ParseError> {
        if v.len() > MAX_LIST_LEN {
            return Err(ParseError::new(format!(
                "{} entries given; at most {MAX_LIST_LEN} are allowed",
                v.len()
            )));
        }
        v.sort();
        v.dedup();
        Ok(AddressList(v))
    }

    /// A list of one address.
    pub fn one(a: Address) -> Self {
        AddressList(vec![a])
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = &Address> {
        self.0.iter()
    }

    /// Lowercase `0x` texts (a query digest's form).
    pub fn texts(&self) -> Vec<String> {
        self.0.iter().map(|a| a.to_string()).collect()
    }

    /// The addresses, as a list of their own.
    pub fn to_vec(&self) -> Vec<Address> {
        self.0.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_size() {
        assert_eq!(PageSize::default().get(), 100);
        assert_eq!(PageSize::parse("1").unwrap().get(), 1);
        assert_eq!(PageSize::parse("100").unwrap().get(), 100);
        for bad in ["0", "101", "-1", "abc", "", "1.5", "99999999999999999999"] {
            assert!(PageSize::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn block_number() {
        assert_eq!(BlockNumber::parse("0").unwrap().0, 0);
        assert_eq!(BlockNumber::parse("16867742").unwrap().0, 16867742);
        for bad in ["-1", "1.0", "abc", "", "0x10", "9223372036854775808"] {
            assert!(BlockNumber::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn token_id_format() {
        assert_eq!(TokenIdFormat::parse("hex").unwrap(), TokenIdFormat::Hex);
        assert!(TokenIdFormat::parse("octal").is_err());
    }

    #[test]
    fn address_list() {
        let a = "0xf977814e90da44bfa03b6295a0616a897441acec";
        let l = AddressList::parse(&[a, &a.to_uppercase().replace("0X", "0x")]).unwrap();
        assert_eq!(l.texts(), vec![a.to_string()]);
        let many: Vec<String> = (0..101).map(|i| format!("0x{i:040x}")).collect();
        assert!(AddressList::parse(&many)
            .unwrap_err()
            .0
            .contains("at most 100"));
        assert!(AddressList::parse(&["0x12"]).is_err());
    }
}
