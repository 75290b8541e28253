//! `media`: the preview media of an NFT in the Moralis v2 shape (`media_items=true`), and
//! `GET /media/{url_hash}/{low|medium|high}.png`, which serves the previews (no API key, so
//! `<img>` tags work). See [`crate::offchain::media`] for how previews are made.

use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use utoipa::ToSchema;

use crate::app::AppState;
use crate::offchain::media::MediaStore;
use crate::query::{MediaInfo, MediaPreview};
use crate::types::iso8601_ms;
use crate::types::media::{is_url_hash, MediaStatus, PreviewSize};

/// Preview media of an NFT's image (`media_items=true`).
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(as = media)]
pub struct MediaRecord {
    /// Where the previews stand.
    #[schema(value_type = MediaStatusSchema)]
    pub status: &'static str,
    /// When this media record last changed (ISO 8601, ms).
    #[serde(rename = "updatedAt")]
    #[schema(
        pattern = "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z$",
        example = "2024-01-02T03:04:05.000Z"
    )]
    pub updated_at: String,
    /// The media type of the original file, once fetched (e.g. `image/png`).
    #[schema(example = "image/png")]
    pub mimetype: Option<String>,
    /// `image`, `audio` or `video`, once fetched.
    #[schema(value_type = Option<MediaCategorySchema>)]
    pub category: Option<String>,
    /// `0x` + SHA-256 of the original file, once fetched.
    #[schema(pattern = "^0x[0-9a-f]{64}$")]
    pub parent_hash: Option<String>,
    /// The image URL taken from the metadata (`image`, else `image_url`, else inline SVG
    /// `image_data` as a `data:` URI); `null` when the metadata names none.
    pub original_media_url: Option<String>,
    /// The previews, when `status` is `success`; otherwise `null`.
    pub media_collection: Option<MediaCollection>,
}

/// The three previews of an image.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(as = mediaCollection)]
pub struct MediaCollection {
    /// The long side is 100 px.
    pub low: MediaItem,
    /// The long side is 250 px.
    pub medium: MediaItem,
    /// The long side is 500 px.
    pub high: MediaItem,
}

/// One preview: a PNG served by tokenql.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(as = mediaItem)]
pub struct MediaItem {
    /// Absolute URL of the PNG file.
    #[schema(
        example = "http://127.0.0.1:8080/media/9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08/low.png"
    )]
    pub url: String,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
}

/// The `mediaStatus` schema: the statuses of [`MediaStatus`], by their API text.
pub struct MediaStatusSchema;

impl utoipa::PartialSchema for MediaStatusSchema {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{ObjectBuilder, Type};
        ObjectBuilder::new()
            .schema_type(Type::String)
            .description(Some(
                "Where the previews stand: `success` (made); `processing` (queued or being \
                 fetched: the first request for an image answers this); `unsupported_media` \
                 (not an image — audio and video keep their `category` —, an image format \
                 that is not decoded, undecodable bytes, or a file over the size cap); \
                 `invalid_url` (the metadata names no image, or a value that is not a URL); \
                 `host_unavailable` (the host answered that the file is not there, or \
                 redirected in a loop); `temporarily_unavailable` (timeout, connection \
                 failure, 5xx or 429; retried later with backoff).",
            ))
            .enum_values(Some(MediaStatus::ALL.iter().map(MediaStatus::as_str)))
            .into()
    }
}

impl ToSchema for MediaStatusSchema {
    fn name() -> std::borrow::Cow<'static, str> {
        "mediaStatus".into()
    }
}

/// The kind of media: `image`, `audio` or `video`.
#[derive(Debug, Clone, Copy, ToSchema)]
#[schema(as = mediaCategory, rename_all = "lowercase")]
pub enum MediaCategorySchema {
    Image,
    Audio,
    Video,
}

fn item(p: &MediaPreview, base: &str) -> MediaItem {
    MediaItem {
        url: format!("{base}{}", p.path),
        width: p.width,
        height: p.height,
    }
}

impl MediaRecord {
    /// The record of `m`, with preview links under `base` (see [`crate::app::preview_base`]).
    pub fn new(m: &MediaInfo, base: &str) -> Self {
        let find = |size| m.previews.iter().flatten().find(|p| p.size == size);
        let media_collection = match (
            find(PreviewSize::Low),
            find(PreviewSize::Medium),
            find(PreviewSize::High),
        ) {
            (Some(low), Some(medium), Some(high)) if m.status == MediaStatus::Success => {
                Some(MediaCollection {
                    low: item(low, base),
                    medium: item(medium, base),
                    high: item(high, base),
                })
            }
            _ => None,
        };
        Self {
            status: m.status.as_str(),
            updated_at: iso8601_ms(m.updated_at),
            mimetype: m.mimetype.clone(),
            category: m.category.clone(),
            parent_hash: m.parent_hash.clone(),
            original_media_url: m.original_media_url.clone(),
            media_collection,
        }
    }
}

fn not_found(message: &'static str) -> Response {
    super::ApiError::NotFound(message).into_response()
}

/// `GET /media/{url_hash}/{file}`: a stored preview. 400 for a malformed hash, 404 for any
/// other file name or a preview not made (yet).
pub async fn preview_file(
    State(state): State<AppState>,
    path: Result<Path<(String, String)>, PathRejection>,
) -> Response {
    let Ok(Path((hash, file))) = path else {
        return not_found("no such preview");
    };
    if !is_url_hash(&hash) {
        return super::ApiError::bad("url_hash", "must be 64 lowercase hex digits").into_response();
    }
    let Some(size) = PreviewSize::from_file_name(&file) else {
        return not_found("no such preview: the file is low.png, medium.png or high.png");
    };
    let store = MediaStore::new(state.ops.options().offchain.media_dir.clone());
    match store.get(&hash, size).await {
        Ok(Some(bytes)) => (
            [
                (header::CONTENT_TYPE, "image/png"),
                // A preview never changes once made (its URL names the original's URL hash).
                (header::CACHE_CONTROL, "public, max-age=31536000, immutable"),
                (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            ],
            bytes,
        )
            .into_response(),
        Ok(None) => not_found("no such preview"),
        Err(e) => super::ApiError::Internal {
            context: "media store",
            detail: e.to_string(),
        }
        .into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn info(status: MediaStatus, previews: bool) -> MediaInfo {
        MediaInfo {
            status,
            original_media_url: Some("https://x/a.png".into()),
            mimetype: Some("image/png".into()),
            category: Some("image".into()),
            parent_hash: Some(format!("0x{}", "ab".repeat(32))),
            updated_at: 1_700_000_000_123,
            previews: previews.then(|| {
                PreviewSize::ALL
                    .into_iter()
                    .map(|size| MediaPreview {
                        size,
                        path: crate::types::media::preview_path(&"0".repeat(64), size),
                        width: size.long_side(),
                        height: size.long_side() / 2,
                    })
                    .collect()
            }),
        }
    }

    #[test]
    fn success_has_absolute_preview_links() {
        let r = serde_json::to_value(MediaRecord::new(
            &info(MediaStatus::Success, true),
            "http://h:1",
        ))
        .unwrap();
        assert_eq!(r["status"], "success");
        assert_eq!(r["updatedAt"], "2023-11-14T22:13:20.123Z");
        assert_eq!(
            r["media_collection"]["medium"],
            json!({"url": format!("http://h:1/media/{}/medium.png", "0".repeat(64)),
                   "width": 250, "height": 125})
        );
    }

    #[test]
    fn other_statuses_have_no_collection() {
        let r = serde_json::to_value(MediaRecord::new(&info(MediaStatus::Processing, false), ""))
            .unwrap();
        assert_eq!(r["status"], "processing");
        assert!(r["media_collection"].is_null());
        assert_eq!(r["original_media_url"], "https://x/a.png");
    }
}
