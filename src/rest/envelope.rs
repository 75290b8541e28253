//! The two v2 envelopes around a page of records, and helpers shared by the record shapes.
//!
//! Field order follows the Moralis answers. `page` and `page_size` are JSON numbers, as the
//! reference bodies show; every other number inside a record is a JSON string.

use axum::http::{HeaderName, HeaderValue};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Serialize;
use utoipa::ToSchema;

use crate::query::Page;

/// The response header naming the last block the indexer had stored when the answer was read:
/// a `SYNCED` answer holds every matching record up to that block, and none after it. Absent
/// while nothing is indexed.
pub const INDEXED_BLOCK_HEADER: HeaderName = HeaderName::from_static("x-indexed-block");

/// `body` as JSON, with the [`INDEXED_BLOCK_HEADER`] of an answer read as of `block`.
pub fn with_block(block: Option<u64>, body: impl Serialize) -> Response {
    let mut response = Json(body).into_response();
    if let Some(b) = block {
        response
            .headers_mut()
            .insert(INDEXED_BLOCK_HEADER, HeaderValue::from(b));
    }
    response
}

/// `GET /{address}/nft`: `{"status","total","page","page_size","cursor","result"}`.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = nftOwnerCollection)]
pub struct NftEnvelope<R> {
    /// `SYNCED` or `SYNCING`.
    #[schema(value_type = SyncStatusSchema)]
    pub status: &'static str,
    /// Number of matching records; `null` unless `disable_total=false`.
    #[schema(example = 15)]
    pub total: Option<u64>,
    /// 1-based page number.
    #[schema(minimum = 1, example = 1)]
    pub page: u64,
    /// The page size asked for (`limit`).
    #[schema(minimum = 1, maximum = 100, example = 100)]
    pub page_size: u64,
    /// Opens the next page; `null` on the last page.
    pub cursor: Option<String>,
    /// The records of this page.
    pub result: Vec<R>,
    /// The block the page was read as of: sent as [`INDEXED_BLOCK_HEADER`].
    #[serde(skip)]
    pub block: Option<u64>,
}

impl<R> NftEnvelope<R> {
    /// Wraps `result` with the paging facts of `page`.
    pub fn new<T>(page: &Page<T>, result: Vec<R>) -> Self {
        Self {
            status: page.status.as_str(),
            total: page.total,
            page: page.page,
            page_size: page.page_size,
            cursor: page.next_cursor.clone(),
            result,
            block: page.block,
        }
    }
}

impl<R: Serialize> IntoResponse for NftEnvelope<R> {
    fn into_response(self) -> Response {
        with_block(self.block, &self)
    }
}

/// Declares a transfer-style envelope, `{"status","page","page_size","cursor","result"}`,
/// under the schema name Moralis gives it (`status` is tokenql's addition where Moralis has
/// none; clients that do not know it ignore it).
macro_rules! paged_envelope {
    ($(#[$doc:meta])* $name:ident, $schema:ident) => {
        $(#[$doc])*
        #[derive(Debug, Serialize, ToSchema)]
        #[schema(as = $schema)]
        pub struct $name<R> {
            /// `SYNCED` or `SYNCING`.
            #[schema(value_type = SyncStatusSchema)]
            pub status: &'static str,
            /// 1-based page number.
            #[schema(minimum = 1, example = 1)]
            pub page: u64,
            /// The page size asked for (`limit`).
            #[schema(minimum = 1, maximum = 100, example = 100)]
            pub page_size: u64,
            /// Opens the next page; `null` on the last page.
            pub cursor: Option<String>,
            /// The records of this page.
            pub result: Vec<R>,
            /// The block the page was read as of: sent as [`INDEXED_BLOCK_HEADER`].
            #[serde(skip)]
            pub block: Option<u64>,
        }

        impl<R> $name<R> {
            /// Wraps `result` with the paging facts of `page`.
            pub fn new<T>(page: &Page<T>, result: Vec<R>) -> Self {
                Self {
                    status: page.status.as_str(),
                    page: page.page,
                    page_size: page.page_size,
                    cursor: page.next_cursor.clone(),
                    result,
                    block: page.block,
                }
            }
        }

        impl<R: Serialize> IntoResponse for $name<R> {
            fn into_response(self) -> Response {
                with_block(self.block, &self)
            }
        }
    };
}

paged_envelope!(
    /// `GET /erc20/transfers`: `{"status","page","page_size","cursor","result"}` (`status` is
    /// tokenql's addition to the v2 envelope; clients that do not know it ignore it).
    TransferEnvelope,
    erc20TransfersResponse
);
paged_envelope!(
    /// `GET /{address}/erc20/transfers`, `GET /erc20/{address}/transfers`.
    TransactionCollection,
    erc20TransactionCollection
);
paged_envelope!(
    /// `GET /{address}/nft/transfers`, `GET /nft/{address}/transfers`.
    NftTransferCollection,
    nftTransferCollection
);
paged_envelope!(
    /// `GET /nft/{address}`: a page of a collection's tokens.
    CollectionNfts,
    nftCollection
);
paged_envelope!(
    /// `GET /{address}/nft/collections`.
    WalletCollections,
    nftWalletCollections
);

/// The `status` of [`NftEnvelope`] as the OpenAPI document describes it (the envelope writes
/// `SyncStatus::as_str`): `SYNCED` when the answer is complete, `SYNCING` while the history of a
/// wallet or contract it depends on is being fetched or the indexer trails the chain head.
#[derive(Debug, Clone, Copy, ToSchema)]
#[schema(
    as = syncStatus,
    rename_all = "UPPERCASE",
    description = "`SYNCED` when the answer is complete: it holds every matching record over the chain's whole history up to the indexer's head. `SYNCING` while the history of a wallet or contract it depends on is still being fetched (the first such request schedules it), or while the indexer trails the chain head."
)]
pub enum SyncStatusSchema {
    /// The answer is complete.
    Synced,
    /// A wallet's or contract's history the answer depends on is still being fetched, or the
    /// indexer lags.
    Syncing,
}

/// A stored optional text as the API writes it: blank becomes `null`, never `""`.
pub fn text(v: Option<&String>) -> Option<String> {
    v.filter(|s| !s.trim().is_empty()).cloned()
}

/// The label of `wallet` in a page's related rows, as [`text`] writes it.
pub fn label(related: &crate::query::Related, wallet: crate::types::Address) -> Option<String> {
    related
        .label(wallet)
        .filter(|s| !s.trim().is_empty())
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blank_text_is_null() {
        assert_eq!(text(None), None);
        assert_eq!(text(Some(&String::new())), None);
        assert_eq!(text(Some(&"  ".to_string())), None);
        assert_eq!(text(Some(&"USDT".to_string())), Some("USDT".to_string()));
    }
}
