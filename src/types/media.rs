//! The media vocabulary every layer shares: where a preview stands ([`MediaStatus`]), the
//! preview sizes, the one rule that finds a token's image in its metadata ([`image_url`]), the
//! URL hash that keys previews, and the shape of preview links. The worker that makes the
//! previews is [`crate::offchain::media`]; the APIs read these names from here.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::hex;

/// Where a media item stands (the `status` of the API's `media` object).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MediaStatus {
    Success,
    Processing,
    UnsupportedMedia,
    InvalidUrl,
    HostUnavailable,
    TemporarilyUnavailable,
}

impl MediaStatus {
    pub const ALL: [MediaStatus; 6] = [
        MediaStatus::Success,
        MediaStatus::Processing,
        MediaStatus::UnsupportedMedia,
        MediaStatus::InvalidUrl,
        MediaStatus::HostUnavailable,
        MediaStatus::TemporarilyUnavailable,
    ];

    /// The stored and API text.
    pub fn as_str(&self) -> &'static str {
        match self {
            MediaStatus::Success => "success",
            MediaStatus::Processing => "processing",
            MediaStatus::UnsupportedMedia => "unsupported_media",
            MediaStatus::InvalidUrl => "invalid_url",
            MediaStatus::HostUnavailable => "host_unavailable",
            MediaStatus::TemporarilyUnavailable => "temporarily_unavailable",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.as_str() == s)
    }
}

/// The three preview sizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PreviewSize {
    Low,
    Medium,
    High,
}

impl PreviewSize {
    pub const ALL: [PreviewSize; 3] = [PreviewSize::Low, PreviewSize::Medium, PreviewSize::High];

    /// The length of the long side, in pixels.
    pub fn long_side(&self) -> u32 {
        match self {
            PreviewSize::Low => 100,
            PreviewSize::Medium => 250,
            PreviewSize::High => 500,
        }
    }

    /// `low`, `medium` or `high`.
    pub fn name(&self) -> &'static str {
        match self {
            PreviewSize::Low => "low",
            PreviewSize::Medium => "medium",
            PreviewSize::High => "high",
        }
    }

    /// The size named by a served file name (`low.png`, …).
    pub fn from_file_name(file: &str) -> Option<Self> {
        let name = file.strip_suffix(".png")?;
        Self::ALL.into_iter().find(|s| s.name() == name)
    }

    /// The dimensions of this preview of a `width` × `height` original: the long side becomes
    /// [`Self::long_side`] exactly (small originals are scaled up), the short side keeps the
    /// aspect ratio, rounded, at least 1.
    pub fn dimensions(&self, width: f64, height: f64) -> (u32, u32) {
        let long = f64::from(self.long_side());
        let short = |a: f64, b: f64| ((a * long / b).round() as u32).clamp(1, self.long_side());
        if width >= height {
            (self.long_side(), short(height, width))
        } else {
            (short(width, height), self.long_side())
        }
    }
}

/// Width and height of a stored preview.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Dimensions {
    pub width: u32,
    pub height: u32,
}

/// The `previews` column: the dimensions of the three stored previews.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredPreviews {
    pub low: Dimensions,
    pub medium: Dimensions,
    pub high: Dimensions,
}

impl StoredPreviews {
    pub fn get(&self, size: PreviewSize) -> Dimensions {
        match size {
            PreviewSize::Low => self.low,
            PreviewSize::Medium => self.medium,
            PreviewSize::High => self.high,
        }
    }
}

/// The key of an `nft_media` row: lowercase hex SHA-256 of the original URL.
pub fn url_hash(url: &str) -> String {
    hex::lower(&Sha256::digest(url.as_bytes()))
}

/// `0x` + lowercase hex SHA-256 of a file's bytes (the API's `parent_hash`).
pub fn content_hash(bytes: &[u8]) -> String {
    hex::lower0x(&Sha256::digest(bytes))
}

/// Whether `s` looks like a URL hash (64 lowercase hex digits).
pub fn is_url_hash(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// The longest image URL queued: longer ones (huge inline `data:` URIs) are `invalid_url`, so
/// that every backend can store the URL in a `TEXT` column.
pub const MAX_URL_LEN: usize = 32 * 1024;

/// What a token's metadata says about its image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImageRef {
    /// A URL (or `data:` URI) to fetch.
    Url(String),
    /// No usable image: missing, not text, or not a URL (`invalid_url`); the offending value
    /// when there is one.
    Invalid(Option<String>),
}

/// The image of a token, from its parsed metadata: `image`, else `image_url`, else
/// `image_data` holding inline SVG (as a `data:` URI). For ERC1155 tokens, `{id}` is replaced
/// by `erc1155_id` (the token id as 64 lowercase hex digits), as the standard says.
pub fn image_url(metadata: &Value, erc1155_id: Option<&str>) -> ImageRef {
    let Value::Object(o) = metadata else {
        return ImageRef::Invalid(None);
    };
    let text = |k: &str| {
        o.get(k)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
    };
    let found = text("image").or_else(|| text("image_url"));
    let url = match found {
        Some(u) => u.to_string(),
        None => match text("image_data") {
            Some(svg) if svg.starts_with("data:") => svg.to_string(),
            Some(svg) if svg.contains("<svg") => {
                use base64::Engine;
                format!(
                    "data:image/svg+xml;base64,{}",
                    base64::engine::general_purpose::STANDARD.encode(svg)
                )
            }
            Some(other) => return ImageRef::Invalid(Some(other.to_string())),
            None => return ImageRef::Invalid(None),
        },
    };
    let url = match erc1155_id {
        Some(id) => url.replace("{id}", id),
        None => url,
    };
    if url.len() > MAX_URL_LEN {
        ImageRef::Invalid(None)
    } else if looks_like_url(&url) {
        ImageRef::Url(url)
    } else {
        ImageRef::Invalid(Some(url))
    }
}

/// The base of preview links: `public_url` (without a trailing `/`) when configured, else
/// `http://{host}` from the request's `Host` header when it is a plausible host (letters,
/// digits, `.-:[]`), else empty (links are then relative: `/media/…`).
pub fn public_base(public_url: Option<&str>, host: Option<&str>) -> String {
    if let Some(u) = public_url.map(|u| u.trim().trim_end_matches('/')) {
        if !u.is_empty() {
            return u.to_string();
        }
    }
    match host.map(str::trim) {
        Some(h)
            if !h.is_empty()
                && h.len() <= 255
                && h.chars().all(|c| {
                    c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':' | '[' | ']')
                }) =>
        {
            format!("http://{h}")
        }
        _ => String::new(),
    }
}

/// The path of a served preview: `/media/{url_hash}/{size}.png`.
pub fn preview_path(url_hash: &str, size: PreviewSize) -> String {
    format!("/media/{url_hash}/{}.png", size.name())
}

/// A scheme (`letter *(letter / digit / + - .)`) followed by `:` and no whitespace: anything
/// else is `invalid_url` without a fetch. Which schemes are fetched is the fetcher's call.
fn looks_like_url(s: &str) -> bool {
    let Some((scheme, rest)) = s.split_once(':') else {
        return false;
    };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        && !rest.is_empty()
        && !s.chars().any(char::is_whitespace)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn statuses_round_trip() {
        for s in MediaStatus::ALL {
            assert_eq!(MediaStatus::parse(s.as_str()), Some(s));
        }
        assert_eq!(MediaStatus::parse("SUCCESS"), None);
    }

    #[test]
    fn preview_dimensions_keep_the_aspect_ratio() {
        assert_eq!(PreviewSize::High.dimensions(640.0, 480.0), (500, 375));
        assert_eq!(PreviewSize::Low.dimensions(300.0, 1200.0), (25, 100));
        assert_eq!(PreviewSize::Medium.dimensions(120.0, 60.0), (250, 125));
        assert_eq!(PreviewSize::Low.dimensions(10000.0, 1.0), (100, 1));
        assert_eq!(PreviewSize::High.dimensions(7.0, 7.0), (500, 500));
    }

    #[test]
    fn file_names() {
        assert_eq!(
            PreviewSize::from_file_name("medium.png"),
            Some(PreviewSize::Medium)
        );
        for bad in ["medium", "huge.png", "../low.png", "low.png.png", ""] {
            assert_eq!(PreviewSize::from_file_name(bad), None, "{bad}");
        }
    }

    #[test]
    fn hashes() {
        assert_eq!(
            url_hash("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert!(is_url_hash(&url_hash("x")));
        assert!(!is_url_hash("../../etc/passwd"));
        assert!(!is_url_hash(&url_hash("x").to_uppercase()));
        assert!(content_hash(b"abc").starts_with("0xba7816bf"));
    }

    #[test]
    fn public_base_prefers_the_configured_url() {
        assert_eq!(
            public_base(Some("https://cdn.example.com/"), Some("h:1")),
            "https://cdn.example.com"
        );
        assert_eq!(
            public_base(None, Some("127.0.0.1:8080")),
            "http://127.0.0.1:8080"
        );
        assert_eq!(public_base(Some(" "), Some("[::1]:80")), "http://[::1]:80");
        assert_eq!(public_base(None, Some("evil.com/<script>")), "");
        assert_eq!(public_base(None, None), "");
    }

    #[test]
    fn image_from_metadata() {
        let u = |s: &str| ImageRef::Url(s.to_string());
        assert_eq!(
            image_url(&json!({"image": " ipfs://Qm/1.png "}), None),
            u("ipfs://Qm/1.png")
        );
        assert_eq!(
            image_url(&json!({"image": "", "image_url": "https://x/y.png"}), None),
            u("https://x/y.png")
        );
        assert_eq!(
            image_url(&json!({"image": "https://x/{id}.png"}), Some("00ab")),
            u("https://x/00ab.png")
        );
        assert_eq!(
            image_url(&json!({"image": "not a url"}), None),
            ImageRef::Invalid(Some("not a url".into()))
        );
        assert_eq!(
            image_url(&json!({"name": "x"}), None),
            ImageRef::Invalid(None)
        );
        assert_eq!(image_url(&json!([1]), None), ImageRef::Invalid(None));
        assert_eq!(
            image_url(&json!({"image": 5}), None),
            ImageRef::Invalid(None)
        );
        let ImageRef::Url(svg) = image_url(&json!({"image_data": "<svg></svg>"}), None) else {
            panic!("inline SVG is an image");
        };
        assert!(svg.starts_with("data:image/svg+xml;base64,"));
    }
}
