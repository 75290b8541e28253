//! The metadata worker: fetches the JSON document each token URI names and stores it raw in
//! `nft_tokens.metadata`, with its sync time; or records why it failed and when to try again.
//! The API only reads what is stored, so it never waits for a fetch.
//!
//! **What is due.** The indexer sets `metadata_next_at = now` whenever it stores a token URI
//! (migration m4 made the tokens it had read before due). The worker
//! takes due tokens (`metadata_next_at <= now`, oldest first, index
//! `idx_nft_tokens_metadata_due`) a batch at a time and claims each with a conditional UPDATE
//! that moves `metadata_next_at` a lease (5 min) ahead only if it still holds the value read —
//! so any number of processes can run workers without fetching one token twice. Up to
//! `--fetch-concurrency` fetches run at once (and `--fetch-per-host` to one host, see
//! [`crate::offchain::fetch`]).
//!
//! **ERC1155.** `{id}` in an ERC1155 URI is replaced by the token id as 64 lowercase hex
//! digits without `0x`, as the standard says ([`uri_for`]); no other form is tried.
//!
//! **Outcomes** (`metadata_status`):
//!
//! | status | meaning | next attempt |
//! |---|---|---|
//! | `ok` | a JSON object was fetched; `metadata`, `last_metadata_sync` set, attempts reset | none (`metadata_next_at` NULL) |
//! | `unavailable` | timeout, connection/DNS failure, 408/425/429, 5xx (every IPFS gateway tried) | 1 min, doubling per failure, at most 6 h |
//! | `invalid_uri` | empty, relative, unknown scheme, malformed `data:` URI | 24 h |
//! | `not_found` | 404, 410, 401, 403 or another 4xx | 24 h |
//! | `too_large` | larger than `--max-metadata-bytes` | 24 h |
//! | `redirects` | a redirect loop or more than 5 redirects | 24 h |
//! | `invalid_json` | the body is not a JSON object (arrays and other values included) | 24 h |
//!
//! A failure sets `metadata_status`, `metadata_error` (a short text), increments
//! `metadata_attempts` and sets `metadata_next_at`; delays get up to 10 % random jitter.
//! Metadata stored by an earlier success is kept. `last_token_uri_sync` belongs to the
//! indexer.

mod schedule;
mod worker;

pub use schedule::{FetchStatus, Schedule};
pub use worker::{json_object, run, uri_for};
