//! Lowercase hex, written from a table: hashes, addresses, keys and digests are written here,
//! never through `core::fmt` one byte at a time (a page of records writes hundreds).

const DIGITS: &[u8; 16] = b"0123456789abcdef";

/// Writes `bytes` as lowercase hex into `out`, which holds exactly two bytes per input byte.
pub fn write(bytes: &[u8], out: &mut [u8]) {
    for (b, pair) in bytes.iter().zip(out.chunks_exact_mut(2)) {
        pair[0] = DIGITS[usize::from(b >> 4)];
        pair[1] = DIGITS[usize::from(b & 0x0f)];
    }
}

/// Appends `bytes` as lowercase hex to `out`.
pub fn push(out: &mut String, bytes: &[u8]) {
    out.reserve(2 * bytes.len());
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0x0f)]));
    }
}

/// `bytes` as lowercase hex.
pub fn lower(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(2 * bytes.len());
    push(&mut s, bytes);
    s
}

/// `0x` and `bytes` as lowercase hex: how the APIs and the change feed write hashes and
/// addresses (what `{:#x}` and `Address`'s `Display` write).
pub fn lower0x(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(2 + 2 * bytes.len());
    s.push_str("0x");
    push(&mut s, bytes);
    s
}

/// The value of one hex digit, in either case.
pub fn digit(c: u8) -> Option<u8> {
    match VALUES[usize::from(c)] {
        NOT_HEX => None,
        v => Some(v),
    }
}

/// Decodes hex digits (no `0x`), in either case; `None` when a character is not a hex digit
/// or their count is odd. Vectorised (alloy's decoder): a log's topics, hashes and data are
/// most of what ingest reads.
pub fn decode(digits: &str) -> Option<Vec<u8>> {
    // alloy's decoder would skip a leading `0x`: after the caller's own, it is not hex.
    if digits.starts_with("0x") {
        return None;
    }
    alloy::primitives::hex::decode(digits).ok()
}

/// Decodes exactly `2 * out.len()` hex digits (no `0x`), in either case, into `out`; false
/// when they are not that.
pub fn decode_into(digits: &str, out: &mut [u8]) -> bool {
    digits.len() == 2 * out.len()
        && !digits.starts_with("0x")
        && alloy::primitives::hex::decode_to_slice(digits, out).is_ok()
}

/// Marks a byte that is not a hex digit in [`VALUES`].
const NOT_HEX: u8 = 0xff;

/// Each byte's value as a hex digit (decoding a page's addresses reads thousands of digits).
const VALUES: [u8; 256] = {
    let mut values = [NOT_HEX; 256];
    let mut i = 0;
    while i < 10 {
        values[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        values[b'a' as usize + i] = 10 + i as u8;
        values[b'A' as usize + i] = 10 + i as u8;
        i += 1;
    }
    values
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_hex_exactly() {
        let all: Vec<u8> = (0..=255).collect();
        assert_eq!(decode(&lower(&all)), Some(all));
        assert_eq!(decode("aBcD"), Some(vec![0xab, 0xcd]));
        assert_eq!(decode(""), Some(vec![]));
        for bad in ["0x00", "0", "zz", " 0", "0g"] {
            assert_eq!(decode(bad), None, "{bad}");
        }
        let mut out = [0u8; 2];
        assert!(decode_into("ff01", &mut out));
        assert_eq!(out, [0xff, 0x01]);
        for bad in ["ff", "ff0102", "0xff", "fg01"] {
            assert!(!decode_into(bad, &mut out), "{bad}");
        }
    }

    #[test]
    fn every_byte_round_trips() {
        let all: Vec<u8> = (0..=255).collect();
        let s = lower(&all);
        assert_eq!(s.len(), 512);
        let expected: String = all.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(s, expected);
        assert_eq!(lower0x(&[0x00, 0x0f, 0xf0]), "0x000ff0");
        let mut buf = [0u8; 4];
        write(&[0xab, 0x01], &mut buf);
        assert_eq!(&buf, b"ab01");
        for (i, c) in s.bytes().enumerate() {
            let nibble = if i % 2 == 0 {
                all[i / 2] >> 4
            } else {
                all[i / 2] & 0x0f
            };
            assert_eq!(digit(c), Some(nibble));
            assert_eq!(digit(c.to_ascii_uppercase()), Some(nibble));
        }
        assert_eq!(digit(b'g'), None);
        for c in 0..=255u8 {
            let expected = char::from(c).to_digit(16).map(|d| d as u8);
            assert_eq!(digit(c), expected, "{c}");
        }
    }
}
