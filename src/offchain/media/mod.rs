//! Media previews: the image named by a token's metadata, as 100, 250 and 500 px PNG previews
//! (the long side; the aspect ratio is kept), made once per original URL and served by
//! tokenql itself at `GET /media/{url_hash}/{low|medium|high}.png`.
//!
//! # The flow
//!
//! 1. **Request time** (`media_items=true`, or GraphQL `media`): the query service
//!    ([`crate::query::QueryService::media`]) takes each token's image URL from its stored
//!    metadata ([`image_url`]), looks the URLs up in `nft_media` in one statement (key:
//!    [`url_hash`], the SHA-256 of the URL) and inserts the missing ones as `processing`, due
//!    now (`ON CONFLICT DO NOTHING`: concurrent first requests queue a URL once). The API
//!    never waits for a fetch: the first answer says `processing`.
//! 2. **The worker** ([`worker`]) claims due rows (a conditional update of `next_attempt_at`
//!    is the lease, so several processes can run it), fetches the file through the shared
//!    [`crate::offchain::fetch::Fetcher`] with the `max_media_bytes` cap, hashes it
//!    (`parent_hash`), sniffs its type from its first bytes and its `Content-Type`
//!    ([`preview::sniff`]), decodes it under memory limits and writes the three previews
//!    ([`preview::render`]) into the [`MediaStore`] ([`store`]), then records the outcome.
//! 3. **Serving**: `GET /media/{url_hash}/{size}.png` (no API key, so `<img>` tags work;
//!    immutable caching) reads the store; answers link it absolutely, under `--public-url`
//!    when set, otherwise under the request's `Host`.
//!
//! # Statuses
//!
//! | status | when | retried |
//! |---|---|---|
//! | `success` | previews made (PNG, JPEG, GIF — first frame —, SVG) | never: made once, reused |
//! | `processing` | queued or being fetched | — |
//! | `unsupported_media` | not an image (audio and video keep their `category` and `mimetype`), an image format that is not decoded (WebP, BMP, …), bytes that do not decode, or a file over `max_media_bytes` | no |
//! | `invalid_url` | metadata without a usable image (`image`, `image_url`, inline SVG `image_data`), a value that is not a URL, or a URL the fetcher refuses | no |
//! | `host_unavailable` | the host answered that the file is not there (404, 410, other 4xx) or redirected in a loop | no |
//! | `temporarily_unavailable` | timeout, connection failure, 5xx, 429 | yes, after 1 min, doubling up to 6 h |
//!
//! Tokens whose metadata has not been fetched (or was not JSON) get `media: null`.
//!
//! SVG is rasterized with resvg built without text support: `<text>` elements are not drawn,
//! and external files referenced by the SVG are never read (only `data:` images inside it).

pub mod preview;
pub mod store;
pub mod worker;

pub use crate::types::media::*;
pub use store::MediaStore;
