//! Exact uint256 values: amounts, token ids. They never pass through a float.
use std::fmt;

use alloy::primitives::U256;

use super::ParseError;

/// An unsigned 256-bit integer.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Uint256(pub U256);

impl Uint256 {
    pub const ZERO: Uint256 = Uint256(U256::ZERO);
    pub const MAX: Uint256 = Uint256(U256::MAX);

    /// Parses a decimal integer or a `0x`-prefixed hex integer.
    pub fn parse(s: &str) -> Result<Self, ParseError> {
        let t = s.trim();
        let bad = || ParseError::new(format!("'{t}' is not an unsigned 256-bit integer"));
        if let Some(hex) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
            if hex.is_empty() || hex.len() > 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(bad());
            }
            U256::from_str_radix(hex, 16)
                .map(Uint256)
                .map_err(|_| bad())
        } else {
            if t.is_empty() || t.len() > 78 || !t.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad());
            }
            U256::from_str_radix(t, 10).map(Uint256).map_err(|_| bad())
        }
    }

    /// From 32 big-endian bytes (a log topic or data word).
    pub fn from_be_bytes(b: &[u8; 32]) -> Self {
        Uint256(U256::from_be_bytes(*b))
    }

    /// 32 big-endian bytes: the storage form (byte order equals numeric order).
    pub fn to_be_bytes(&self) -> [u8; 32] {
        self.0.to_be_bytes()
    }

    /// The big-endian bytes without their leading zero bytes, at least one (`[0]` for zero): a
    /// transfer amount's storage form where binary columns have a variable length. A typical
    /// amount takes 8 to 12 bytes instead of 32; the order of these bytes is not numeric order.
    pub fn to_compact_bytes(&self) -> Vec<u8> {
        let word = self.to_be_bytes();
        let skip = word.iter().take(31).take_while(|b| **b == 0).count();
        word[skip..].to_vec()
    }

    /// From 1 to 32 big-endian bytes ([`Uint256::to_compact_bytes`] or
    /// [`Uint256::to_be_bytes`]); `None` for any other length.
    pub fn from_be_slice(b: &[u8]) -> Option<Self> {
        if b.is_empty() || b.len() > 32 {
            return None;
        }
        let mut word = [0u8; 32];
        word[32 - b.len()..].copy_from_slice(b);
        Some(Uint256(U256::from_be_bytes(word)))
    }

    /// 64 lowercase hex digits, zero-padded, no prefix (a cursor's form, and an ERC1155 URI's
    /// `{id}`). String order equals numeric order.
    pub fn to_hex64(&self) -> String {
        format!("{:064x}", self.0)
    }

    /// Reads [`Uint256::to_hex64`]'s form back (a cursor's value: the caller names the fault).
    pub fn from_hex64(s: &str) -> Result<Self, ParseError> {
        if s.len() != 64 {
            return Err(ParseError::new(format!(
                "stored uint256 '{s}' is not 64 hex digits"
            )));
        }
        // Byte by byte: several hundred values are read per page, and a generic radix parse
        // costs several times as much.
        let mut bytes = [0u8; 32];
        for (b, pair) in bytes.iter_mut().zip(s.as_bytes().chunks_exact(2)) {
            match (super::hex::digit(pair[0]), super::hex::digit(pair[1])) {
                (Some(h), Some(l)) => *b = h << 4 | l,
                _ => return Err(ParseError::new(format!("stored uint256 '{s}' is not hex"))),
            }
        }
        Ok(Uint256(U256::from_be_bytes(bytes)))
    }

    /// Decimal digits.
    pub fn to_decimal(&self) -> String {
        Digits::of(self).as_str().to_owned()
    }

    /// Appends the decimal digits ([`Uint256::to_decimal`]).
    pub fn push_decimal(&self, out: &mut String) {
        out.push_str(Digits::of(self).as_str());
    }

    /// `0x`-prefixed lowercase hex without leading zeros (`0x0` for zero).
    pub fn to_hex(&self) -> String {
        format!("{:#x}", self.0)
    }

    /// `self / 10^decimals`, written exactly: no exponent, no trailing zeros, no trailing dot.
    pub fn to_decimal_scaled(&self, decimals: u32) -> String {
        let mut out = String::new();
        self.push_decimal_scaled(&mut out, decimals);
        out
    }

    /// Appends `self / 10^decimals` ([`Uint256::to_decimal_scaled`]).
    pub fn push_decimal_scaled(&self, out: &mut String, decimals: u32) {
        let digits = Digits::of(self);
        let digits = digits.as_str();
        let d = decimals as usize;
        if digits.len() > d {
            let (int, frac) = digits.split_at(digits.len() - d);
            out.push_str(int);
            let frac = frac.trim_end_matches('0');
            if !frac.is_empty() {
                out.push('.');
                out.push_str(frac);
            }
        } else {
            let significant = digits.trim_end_matches('0');
            out.push('0');
            if !significant.is_empty() {
                out.push('.');
                out.extend(std::iter::repeat_n('0', d - digits.len()));
                out.push_str(significant);
            }
        }
    }

    pub fn is_zero(&self) -> bool {
        self.0.is_zero()
    }

    pub fn saturating_sub(self, o: Self) -> Self {
        Uint256(self.0.saturating_sub(o.0))
    }

    pub fn saturating_add(self, o: Self) -> Self {
        Uint256(self.0.saturating_add(o.0))
    }

    pub fn from_u64(v: u64) -> Self {
        Uint256(U256::from(v))
    }
}

/// The decimal digits of a [`Uint256`], written on the stack (at most 78 of them).
struct Digits {
    buf: [u8; 80],
    len: usize,
}

impl Digits {
    fn of(v: &Uint256) -> Self {
        use fmt::Write;
        let mut d = Digits {
            buf: [0; 80],
            len: 0,
        };
        // Most token ids and amounts fit 64 bits, which the standard library writes fastest.
        // Neither write can fail: 78 digits fit.
        let _ = match u64::try_from(v.0) {
            Ok(small) => write!(d, "{small}"),
            Err(_) => write!(d, "{}", v.0),
        };
        d
    }

    fn as_str(&self) -> &str {
        // Only ASCII digits are ever written.
        std::str::from_utf8(&self.buf[..self.len]).unwrap_or_default()
    }
}

impl fmt::Write for Digits {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len + s.len();
        self.buf
            .get_mut(self.len..end)
            .ok_or(fmt::Error)?
            .copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

impl fmt::Display for Uint256 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl fmt::Debug for Uint256 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAX_DEC: &str =
        "115792089237316195423570985008687907853269984665640564039457584007913129639935";

    #[test]
    fn compact_bytes_drop_leading_zeros_and_read_back() {
        for v in [
            Uint256::ZERO,
            Uint256::from_u64(1),
            Uint256::from_u64(255),
            Uint256::from_u64(256),
            Uint256::parse("1000000000000000000000").unwrap_or_else(|e| panic!("{e}")),
            Uint256::MAX,
        ] {
            let b = v.to_compact_bytes();
            assert!(b.len() == 1 || b[0] != 0, "{v}: {b:?}");
            assert_eq!(Uint256::from_be_slice(&b), Some(v));
            assert_eq!(Uint256::from_be_slice(&v.to_be_bytes()), Some(v));
        }
        assert_eq!(Uint256::ZERO.to_compact_bytes(), vec![0]);
        assert_eq!(
            Uint256::from_u64(0x1234).to_compact_bytes(),
            vec![0x12, 0x34]
        );
        assert_eq!(Uint256::MAX.to_compact_bytes().len(), 32);
        assert_eq!(Uint256::from_be_slice(&[]), None);
        assert_eq!(Uint256::from_be_slice(&[1; 33]), None);
    }

    #[test]
    fn max_round_trips_through_every_form() {
        let m = Uint256::parse(MAX_DEC).unwrap();
        assert_eq!(m, Uint256::MAX);
        assert_eq!(m.to_hex64(), "f".repeat(64));
        assert_eq!(Uint256::from_hex64(&m.to_hex64()).unwrap(), m);
        assert_eq!(m.to_decimal(), MAX_DEC);
        assert_eq!(m.to_hex(), format!("0x{}", "f".repeat(64)));
        assert_eq!(Uint256::parse(&m.to_hex()).unwrap(), m);
    }

    #[test]
    fn stored_form_and_decimals_at_the_64_bit_edge() {
        for v in [
            "0",
            "1",
            "18446744073709551615",
            "18446744073709551616",
            MAX_DEC,
        ] {
            let n = Uint256::parse(v).unwrap();
            assert_eq!(n.to_decimal(), v);
            assert_eq!(Uint256::from_hex64(&n.to_hex64()).unwrap(), n, "{v}");
            assert_eq!(
                Uint256::from_hex64(&n.to_hex64().to_uppercase()).unwrap(),
                n,
                "{v}"
            );
        }
        for bad in ["", "00", &"g".repeat(64), &format!("{}é", "0".repeat(62))] {
            assert!(Uint256::from_hex64(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn db_form_sorts_numerically() {
        let a = Uint256::from_u64(9).to_hex64();
        let b = Uint256::from_u64(10).to_hex64();
        let c = Uint256::MAX.to_hex64();
        assert!(a < b && b < c);
    }

    #[test]
    fn scaled_decimal_is_exact() {
        let v = Uint256::parse("8078781185194").unwrap();
        assert_eq!(v.to_decimal_scaled(18), "0.000008078781185194");
        assert_eq!(
            Uint256::parse("201110013289805900")
                .unwrap()
                .to_decimal_scaled(18),
            "0.2011100132898059"
        );
        assert_eq!(Uint256::parse("1000000").unwrap().to_decimal_scaled(6), "1");
        assert_eq!(
            Uint256::parse("1500000").unwrap().to_decimal_scaled(6),
            "1.5"
        );
        assert_eq!(Uint256::parse("123").unwrap().to_decimal_scaled(0), "123");
        assert_eq!(Uint256::parse("50").unwrap().to_decimal_scaled(3), "0.05");
        assert_eq!(Uint256::parse("120").unwrap().to_decimal_scaled(2), "1.2");
        assert_eq!(Uint256::parse("120").unwrap().to_decimal_scaled(3), "0.12");
        assert_eq!(Uint256::ZERO.to_decimal_scaled(0), "0");
        // Appended to what is there, as the JSON writer uses it.
        let mut out = String::from("x");
        Uint256::MAX.push_decimal(&mut out);
        Uint256::from_u64(7).push_decimal_scaled(&mut out, 1);
        assert_eq!(out, format!("x{MAX_DEC}0.7"));
        assert_eq!(Uint256::ZERO.to_decimal_scaled(18), "0");
        assert_eq!(
            Uint256::MAX.to_decimal_scaled(77),
            "1.15792089237316195423570985008687907853269984665640564039457584007913129639935"
        );
        assert_eq!(
            Uint256::MAX.to_decimal_scaled(18),
            "115792089237316195423570985008687907853269984665640564039457.584007913129639935"
        );
        assert_eq!(
            Uint256::from_u64(1).to_decimal_scaled(77),
            format!("0.{}1", "0".repeat(76))
        );
    }

    #[test]
    fn refuses_bad_input() {
        for bad in [
            "",
            "-1",
            "1.5",
            "1e3",
            "abc",
            "0x",
            "0xg",
            &format!("{MAX_DEC}0"),
            "115792089237316195423570985008687907853269984665640564039457584007913129639936",
        ] {
            assert!(Uint256::parse(bad).is_err(), "{bad}");
        }
    }
}
