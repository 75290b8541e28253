//! Preview media of a page of NFTs (`media_items=true`, GraphQL `media`): one lookup of the
//! page's image URLs in `nft_media`, and one insert of the unknown ones as `processing` (due
//! now, for the media worker). Nothing here waits on a fetch.

use std::collections::{BTreeMap, HashMap};
use std::hash::Hash;

use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};

use super::{QueryError, QueryService};
use crate::entity::nft_media;
use crate::store::lists::padded;
use crate::store::media_queue::enqueue_missing;
use crate::store::now_ms;
use crate::types::media::{
    image_url, preview_path, url_hash, ImageRef, MediaStatus, PreviewSize, StoredPreviews,
};
use crate::types::Uint256;

/// What [`QueryService::media`] needs to know about one token.
#[derive(Debug, Clone)]
pub struct MediaSource {
    pub token_id: Uint256,
    /// ERC1155: `{id}` in the image URL is replaced by the token id.
    pub erc1155: bool,
    /// The stored metadata, as fetched.
    pub metadata: Option<String>,
    /// When the metadata was fetched (Unix ms).
    pub metadata_synced_at: Option<i64>,
}

/// One preview of a [`MediaInfo`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MediaPreview {
    pub size: PreviewSize,
    /// Where tokenql serves it: `/media/{url_hash}/{size}.png` (prefix it with the public
    /// base URL).
    pub path: String,
    pub width: u32,
    pub height: u32,
}

/// The preview media of one token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MediaInfo {
    pub status: MediaStatus,
    pub original_media_url: Option<String>,
    pub mimetype: Option<String>,
    /// `image`, `audio` or `video`.
    pub category: Option<String>,
    /// `0x` + SHA-256 of the original file.
    pub parent_hash: Option<String>,
    /// Unix milliseconds.
    pub updated_at: i64,
    /// Low, medium and high, when `status` is `success`.
    pub previews: Option<Vec<MediaPreview>>,
}

impl MediaInfo {
    fn from_row(row: nft_media::Model) -> Result<Self, QueryError> {
        let status = MediaStatus::parse(&row.status)
            .ok_or_else(|| QueryError::Corrupt(format!("media status {:?}", row.status)))?;
        let previews = match (status, &row.previews) {
            (MediaStatus::Success, Some(json)) => {
                let stored: StoredPreviews = serde_json::from_str(json)
                    .map_err(|e| QueryError::Corrupt(format!("media previews: {e}")))?;
                Some(
                    PreviewSize::ALL
                        .into_iter()
                        .map(|size| {
                            let d = stored.get(size);
                            MediaPreview {
                                size,
                                path: preview_path(&row.url_hash, size),
                                width: d.width,
                                height: d.height,
                            }
                        })
                        .collect(),
                )
            }
            (MediaStatus::Success, None) => {
                return Err(QueryError::Corrupt(
                    "successful media without previews".into(),
                ))
            }
            _ => None,
        };
        Ok(Self {
            status,
            original_media_url: Some(row.original_media_url),
            mimetype: row.mimetype,
            category: row.category,
            parent_hash: row.parent_hash,
            updated_at: row.updated_at,
            previews,
        })
    }

    fn processing(url: String, now: i64) -> Self {
        Self {
            status: MediaStatus::Processing,
            original_media_url: Some(url),
            mimetype: None,
            category: None,
            parent_hash: None,
            updated_at: now,
            previews: None,
        }
    }
}

impl QueryService {
    /// The preview media of these tokens. Tokens without metadata, or whose metadata is not
    /// JSON, are absent (the APIs answer `null`); metadata without a usable image gives
    /// `invalid_url`. Image URLs seen for the first time are queued for the media worker and
    /// answered as `processing`. Costs one `SELECT` and, when something is new, one `INSERT`.
    pub async fn media<K: Clone + Eq + Hash>(
        &self,
        sources: Vec<(K, MediaSource)>,
    ) -> Result<HashMap<K, MediaInfo>, QueryError> {
        let now = now_ms();
        let mut out = HashMap::new();
        // URL hash -> (URL, the tokens showing it).
        let mut wanted: BTreeMap<String, (String, Vec<K>)> = BTreeMap::new();
        for (key, src) in sources {
            let Some(meta) = src
                .metadata
                .as_deref()
                .and_then(|m| serde_json::from_str::<serde_json::Value>(m).ok())
            else {
                continue;
            };
            let id = src.erc1155.then(|| src.token_id.to_hex64());
            match image_url(&meta, id.as_deref()) {
                ImageRef::Url(url) => {
                    wanted
                        .entry(url_hash(&url))
                        .or_insert_with(|| (url, Vec::new()))
                        .1
                        .push(key);
                }
                ImageRef::Invalid(value) => {
                    out.insert(
                        key,
                        MediaInfo {
                            status: MediaStatus::InvalidUrl,
                            original_media_url: value,
                            mimetype: None,
                            category: None,
                            parent_hash: None,
                            updated_at: src.metadata_synced_at.unwrap_or(now),
                            previews: None,
                        },
                    );
                }
            }
        }
        if wanted.is_empty() {
            return Ok(out);
        }

        let rows = nft_media::Entity::find()
            .filter(nft_media::Column::UrlHash.is_in(padded(wanted.keys().cloned().collect())))
            .all(&self.db)
            .await?;
        let mut found: HashMap<String, MediaInfo> = HashMap::with_capacity(rows.len());
        for row in rows {
            found.insert(row.url_hash.clone(), MediaInfo::from_row(row)?);
        }

        let mut missing = Vec::new();
        for (hash, (url, keys)) in wanted {
            let info = match found.remove(&hash) {
                Some(info) => info,
                None => {
                    missing.push((hash, url.clone()));
                    MediaInfo::processing(url, now)
                }
            };
            for key in keys {
                out.insert(key, info.clone());
            }
        }
        // Another request may queue the same URL at the same time: the first insert wins,
        // and both answer `processing`.
        enqueue_missing(
            self.writer(),
            missing,
            MediaStatus::Processing.as_str(),
            now,
        )
        .await?;
        Ok(out)
    }
}
