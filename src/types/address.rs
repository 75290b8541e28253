//! EVM addresses.
use std::fmt;

use super::ParseError;

/// A 20-byte EVM address. Accepted in any letter case; always written lowercase with `0x`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Address([u8; 20]);

impl Address {
    /// The zero address (mints come from it, burns go to it).
    pub const ZERO: Address = Address([0; 20]);

    /// Parses `0x` followed by 40 hex digits, in any case.
    pub fn parse(s: &str) -> Result<Self, ParseError> {
        let s = s.trim();
        let hex = s
            .strip_prefix("0x")
            .or_else(|| s.strip_prefix("0X"))
            .ok_or_else(|| {
                ParseError::new(format!(
                    "'{s}' is not an address: expected 0x followed by 40 hex digits"
                ))
            })?;
        if hex.len() != 40 {
            return Err(ParseError::new(format!(
                "'{s}' is not an address: expected 0x followed by 40 hex digits"
            )));
        }
        let mut out = [0u8; 20];
        for (i, chunk) in hex.as_bytes().chunks(2).enumerate() {
            let hi = super::hex::digit(chunk[0]);
            let lo = super::hex::digit(chunk[1]);
            match (hi, lo) {
                (Some(h), Some(l)) => out[i] = h << 4 | l,
                _ => {
                    return Err(ParseError::new(format!(
                        "'{s}' is not an address: it contains a character that is not hex"
                    )))
                }
            }
        }
        Ok(Address(out))
    }

    /// From the last 20 bytes of a 32-byte log topic.
    pub fn from_word(word: &[u8; 32]) -> Self {
        let mut out = [0u8; 20];
        out.copy_from_slice(&word[12..]);
        Address(out)
    }

    /// From its 20 bytes.
    pub fn from_bytes(b: [u8; 20]) -> Self {
        Address(b)
    }

    /// Its 20 bytes (also its storage form).
    pub fn as_bytes(&self) -> &[u8; 20] {
        &self.0
    }

    pub fn is_zero(&self) -> bool {
        self.0 == [0; 20]
    }

    /// `0x` and 40 lowercase hex digits, without going through the formatting machinery (a
    /// page of records writes hundreds of addresses).
    pub(crate) fn hex(&self) -> [u8; 42] {
        let mut out = [0u8; 42];
        out[0] = b'0';
        out[1] = b'x';
        super::hex::write(&self.0, &mut out[2..]);
        out
    }
}

impl fmt::Display for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let hex = self.hex();
        // Only ASCII hex digits were written.
        f.write_str(std::str::from_utf8(&hex).map_err(|_| fmt::Error)?)
    }
}

impl fmt::Debug for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_any_case_and_writes_lowercase() {
        let a = Address::parse("0xF977814e90dA44bFA03b6295A0616a897441aceC").unwrap();
        assert_eq!(a.to_string(), "0xf977814e90da44bfa03b6295a0616a897441acec");
        assert_eq!(
            Address::parse("0XF977814E90DA44BFA03B6295A0616A897441ACEC").unwrap(),
            a
        );
    }

    #[test]
    fn refuses_bad_input() {
        for bad in [
            "",
            "0x",
            "f977814e90da44bfa03b6295a0616a897441acec",
            "0xf977814e90da44bfa03b6295a0616a897441ace",
            "0xf977814e90da44bfa03b6295a0616a897441acecc",
            "0xg977814e90da44bfa03b6295a0616a897441acec",
            "vitalik.eth",
        ] {
            assert!(Address::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn from_topic_word() {
        let mut w = [0u8; 32];
        w[31] = 1;
        assert_eq!(
            Address::from_word(&w).to_string(),
            "0x0000000000000000000000000000000000000001"
        );
    }
}
