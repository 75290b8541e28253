//! `Nft.media` and `NftToken.media`: preview media of an NFT's image, the GraphQL face of
//! [`crate::query::MediaInfo`] (the same data as REST's `media`, in camelCase); the query
//! service reads them with the page that shows them.

use std::sync::Arc;

use async_graphql::{Context, Enum, Object, SimpleObject};

use crate::query::{MediaInfo, MediaPreview};
use crate::types::iso8601_ms;
use crate::types::media::{self, PreviewSize};

/// The base URL of preview links for one request (`--public-url`, else `http://{Host}`), put
/// into the request's data by [`crate::graphql::http`].
#[derive(Debug, Clone, Default)]
pub struct MediaBase(pub String);

/// The base URL of this request's preview links (empty when the HTTP layer set none).
pub fn base(ctx: &Context<'_>) -> Arc<str> {
    ctx.data_opt::<MediaBase>()
        .map(|b| b.0.as_str())
        .unwrap_or_default()
        .into()
}

/// Where the previews of an image stand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Enum)]
pub enum MediaStatus {
    /// The previews are made.
    Success,
    /// The image is queued or being fetched; ask again later.
    Processing,
    /// Not an image (audio and video keep their `category`), an image format that is not
    /// decoded, undecodable bytes, or a file over the size cap.
    UnsupportedMedia,
    /// The metadata names no image, or a value that is not a URL.
    InvalidUrl,
    /// The host answered that the file is not there (4xx), or redirected in a loop.
    HostUnavailable,
    /// Timeout, connection failure, 5xx or 429; retried later with backoff.
    TemporarilyUnavailable,
}

impl From<media::MediaStatus> for MediaStatus {
    fn from(s: media::MediaStatus) -> Self {
        match s {
            media::MediaStatus::Success => MediaStatus::Success,
            media::MediaStatus::Processing => MediaStatus::Processing,
            media::MediaStatus::UnsupportedMedia => MediaStatus::UnsupportedMedia,
            media::MediaStatus::InvalidUrl => MediaStatus::InvalidUrl,
            media::MediaStatus::HostUnavailable => MediaStatus::HostUnavailable,
            media::MediaStatus::TemporarilyUnavailable => MediaStatus::TemporarilyUnavailable,
        }
    }
}

/// One preview: a PNG served by tokenql.
#[derive(Debug, Clone, SimpleObject)]
pub struct MediaItem {
    /// Absolute URL of the PNG file.
    url: String,
    /// Width in pixels.
    width: u32,
    /// Height in pixels.
    height: u32,
}

/// The three previews of an image.
#[derive(Debug, Clone, SimpleObject)]
pub struct MediaCollection {
    /// The long side is 100 px.
    low: MediaItem,
    /// The long side is 250 px.
    medium: MediaItem,
    /// The long side is 500 px.
    high: MediaItem,
}

/// The `NftMedia` object.
pub struct NftMedia {
    info: MediaInfo,
    base: String,
}

impl NftMedia {
    /// The media of one token, its links under `base`.
    pub fn new(info: MediaInfo, base: &str) -> Self {
        Self {
            info,
            base: base.to_string(),
        }
    }

    fn item(&self, size: PreviewSize) -> Option<MediaItem> {
        let p: &MediaPreview = self
            .info
            .previews
            .iter()
            .flatten()
            .find(|p| p.size == size)?;
        Some(MediaItem {
            url: format!("{}{}", self.base, p.path),
            width: p.width,
            height: p.height,
        })
    }
}

/// Preview media of an NFT's image: its status and, once made, 100, 250 and 500 px previews.
#[Object]
impl NftMedia {
    /// Where the previews stand. The first request for an image answers `PROCESSING`.
    async fn status(&self) -> MediaStatus {
        self.info.status.into()
    }

    /// When this media record last changed: ISO 8601 UTC with milliseconds.
    async fn updated_at(&self) -> String {
        iso8601_ms(self.info.updated_at)
    }

    /// The media type of the original file, once fetched (e.g. `image/png`).
    async fn mimetype(&self) -> Option<&str> {
        self.info.mimetype.as_deref()
    }

    /// `image`, `audio` or `video`, once fetched.
    async fn category(&self) -> Option<&str> {
        self.info.category.as_deref()
    }

    /// `0x` + SHA-256 of the original file, once fetched.
    async fn parent_hash(&self) -> Option<&str> {
        self.info.parent_hash.as_deref()
    }

    /// The image URL taken from the metadata (`image`, else `image_url`, else inline SVG
    /// `image_data` as a `data:` URI); `null` when the metadata names none.
    async fn original_media_url(&self) -> Option<&str> {
        self.info.original_media_url.as_deref()
    }

    /// The previews, when `status` is `SUCCESS`; otherwise `null`.
    async fn media_collection(&self) -> Option<MediaCollection> {
        if self.info.status != media::MediaStatus::Success {
            return None;
        }
        Some(MediaCollection {
            low: self.item(PreviewSize::Low)?,
            medium: self.item(PreviewSize::Medium)?,
            high: self.item(PreviewSize::High)?,
        })
    }
}
