//! `data:` URIs (RFC 2397): `data:[<media type>][;<param>…][;base64],<data>`.
//!
//! The payload is percent-decoded, then base64-decoded when `;base64` is given (padding
//! optional, whitespace ignored, standard or URL-safe alphabet). `;utf8` / `;charset=…` are
//! accepted and change nothing: the bytes are returned as they are. A missing media type is
//! `text/plain`, as the RFC says.

use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
use base64::engine::DecodePaddingMode;
use base64::Engine;

use super::{FetchError, Fetched};

const STANDARD: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);
const URL_SAFE: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::URL_SAFE,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// Decodes `%XX` escapes; a `%` not followed by two hex digits stays as it is.
pub(super) fn percent_decode(s: &str) -> Vec<u8> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        if b[i] == b'%' && i + 2 < b.len() {
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    out
}

/// Decodes a `data:` URI (the caller checked the scheme), refusing more than `max_bytes`.
pub(super) fn decode(uri: &str, max_bytes: u64) -> Result<Fetched, FetchError> {
    let rest = uri
        .get(5..)
        .filter(|_| uri[..5].eq_ignore_ascii_case("data:"))
        .ok_or_else(|| FetchError::InvalidUrl("not a data: URI".into()))?;
    let (header, payload) = rest
        .split_once(',')
        .ok_or_else(|| FetchError::InvalidUrl("data: URI without a comma".into()))?;
    let mut params = header.split(';').map(str::trim);
    let media_type = params.next().unwrap_or_default().to_ascii_lowercase();
    let base64 = params.any(|p| p.eq_ignore_ascii_case("base64"));
    let media_type = if media_type.is_empty() {
        "text/plain".to_string()
    } else if media_type.contains('/') {
        media_type
    } else {
        return Err(FetchError::InvalidUrl(format!(
            "data: URI with media type {media_type:?}"
        )));
    };
    // Cheap early refusal: decoding can only shrink the payload (by 3/4 for base64).
    let bound = if base64 {
        payload.len() as u64 / 4 * 3
    } else {
        payload.len() as u64 / 3
    };
    if bound > max_bytes {
        return Err(FetchError::TooLarge(max_bytes));
    }
    let decoded = percent_decode(payload);
    let bytes = if base64 {
        let clean: Vec<u8> = decoded
            .into_iter()
            .filter(|c| !c.is_ascii_whitespace())
            .collect();
        STANDARD
            .decode(&clean)
            .or_else(|_| URL_SAFE.decode(&clean))
            .map_err(|e| FetchError::InvalidUrl(format!("data: URI with bad base64: {e}")))?
    } else {
        decoded
    };
    if bytes.len() as u64 > max_bytes {
        return Err(FetchError::TooLarge(max_bytes));
    }
    Ok(Fetched {
        bytes,
        content_type: Some(media_type),
        final_url: uri.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(uri: &str) -> (String, String) {
        let f = decode(uri, 1 << 20).unwrap_or_else(|e| panic!("{uri}: {e}"));
        assert_eq!(f.final_url, uri);
        (
            f.content_type.unwrap_or_default(),
            String::from_utf8(f.bytes).unwrap_or_default(),
        )
    }

    #[test]
    fn json_in_every_encoding() {
        let doc = r#"{"name":"A b","image":"x"}"#;
        let b64 = STANDARD.encode(doc);
        for uri in [
            format!("data:application/json;base64,{b64}"),
            format!("data:application/json;base64,{}", b64.trim_end_matches('=')),
            format!("DATA:Application/JSON;charset=utf-8;base64,{b64}"),
            format!("data:application/json,{doc}"),
            "data:application/json,%7B%22name%22%3A%22A%20b%22%2C%22image%22%3A%22x%22%7D"
                .to_string(),
            format!("data:application/json;utf8,{doc}"),
        ] {
            assert_eq!(ok(&uri), ("application/json".into(), doc.into()), "{uri}");
        }
    }

    #[test]
    fn svg_plain_and_base64() {
        let svg = "<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 1 1'></svg>";
        assert_eq!(
            ok(&format!(
                "data:image/svg+xml;base64,{}",
                STANDARD.encode(svg)
            )),
            ("image/svg+xml".into(), svg.into())
        );
        assert_eq!(
            ok(&format!("data:image/svg+xml;utf8,{svg}")),
            ("image/svg+xml".into(), svg.into())
        );
        assert_eq!(
            ok("data:image/svg+xml,%3Csvg%3E%3C/svg%3E"),
            ("image/svg+xml".into(), "<svg></svg>".into())
        );
        // URL-safe base64 and whitespace are tolerated.
        let bytes = [0xfbu8, 0xff, 0xfe];
        let f = decode("data:image/png;base64,+//+", 10).map(|f| f.bytes);
        assert_eq!(f, Ok(bytes.to_vec()));
        let f = decode("data:image/png;base64,-__-", 10).map(|f| f.bytes);
        assert_eq!(f, Ok(bytes.to_vec()));
        let f = decode("data:image/png;base64,+/\n/+", 10).map(|f| f.bytes);
        assert_eq!(f, Ok(bytes.to_vec()));
    }

    #[test]
    fn defaults_and_odd_escapes() {
        assert_eq!(ok("data:,hi"), ("text/plain".into(), "hi".into()));
        assert_eq!(
            ok("data:text/plain,100%"),
            ("text/plain".into(), "100%".into())
        );
        assert_eq!(
            ok("data:text/plain,%zz%4"),
            ("text/plain".into(), "%zz%4".into())
        );
    }

    #[test]
    fn bad_ones() {
        for uri in [
            "data:application/json;base64,!!!!",
            "data:application/json;base64,abcde",
            "data:application/json",
            "data:nonsense,{}",
            "datx:application/json,{}",
        ] {
            assert!(
                matches!(decode(uri, 1 << 20), Err(FetchError::InvalidUrl(_))),
                "{uri}"
            );
        }
    }

    #[test]
    fn size_cap() {
        let doc = "x".repeat(100);
        assert_eq!(
            decode(&format!("data:text/plain,{doc}"), 99).map(|f| f.bytes.len()),
            Err(FetchError::TooLarge(99))
        );
        assert_eq!(
            decode(&format!("data:text/plain,{doc}"), 100).map(|f| f.bytes.len()),
            Ok(100)
        );
        let b64 = STANDARD.encode("y".repeat(1000));
        assert_eq!(
            decode(&format!("data:text/plain;base64,{b64}"), 500).map(|f| f.bytes.len()),
            Err(FetchError::TooLarge(500))
        );
    }
}
