//! Block and transaction hashes.
use std::fmt;

use super::ParseError;

/// A 32-byte hash (a block's or a transaction's). Written lowercase with `0x`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Hash32([u8; 32]);

impl Hash32 {
    /// From its 32 bytes.
    pub fn from_bytes(b: [u8; 32]) -> Self {
        Hash32(b)
    }

    /// Its 32 bytes (also its storage form).
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// Parses `0x` followed by 64 hex digits, in any case.
    pub fn parse(s: &str) -> Result<Self, ParseError> {
        let bad = || {
            ParseError::new(format!(
                "'{s}' is not a hash: expected 0x and 64 hex digits"
            ))
        };
        let hex = s
            .strip_prefix("0x")
            .or_else(|| s.strip_prefix("0X"))
            .filter(|h| h.len() == 64)
            .ok_or_else(bad)?;
        let mut out = [0u8; 32];
        for (b, pair) in out.iter_mut().zip(hex.as_bytes().chunks_exact(2)) {
            match (super::hex::digit(pair[0]), super::hex::digit(pair[1])) {
                (Some(h), Some(l)) => *b = h << 4 | l,
                _ => return Err(bad()),
            }
        }
        Ok(Hash32(out))
    }
}

impl fmt::Display for Hash32 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = [0u8; 66];
        out[0] = b'0';
        out[1] = b'x';
        super::hex::write(&self.0, &mut out[2..]);
        // The table writes only ASCII.
        f.write_str(std::str::from_utf8(&out).map_err(|_| fmt::Error)?)
    }
}

impl fmt::Debug for Hash32 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl From<alloy::primitives::B256> for Hash32 {
    fn from(b: alloy::primitives::B256) -> Self {
        Hash32(b.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hash_reads_in_any_case_and_writes_lowercase() {
        let text = format!("0x{}", "aB".repeat(32));
        let h = Hash32::parse(&text).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(h.to_string(), text.to_lowercase());
        assert_eq!(h.as_bytes(), &[0xab; 32]);
        assert!(Hash32::parse("0x12").is_err());
        assert!(Hash32::parse(&"0".repeat(66)).is_err());
        assert!(Hash32::parse(&format!("0x{}", "g".repeat(64))).is_err());
    }
}
