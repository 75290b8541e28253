//! The v2.2 traits routes, over [`crate::query::QueryService::traits`] and its siblings:
//!
//! - `GET /nft/{address}/traits` (`getNFTTraitsByCollection`): every trait of the collection,
//!   grouped by trait type, with how many tokens have each value;
//! - `GET /nft/{address}/traits/paginate` (`getNFTTraitsByCollectionPaginate`): the same, one
//!   record per (trait type, value), paged by cursor;
//! - `GET /nft/{address}/traits/resync` (`resyncNFTRarity`): queues a refetch of the
//!   collection's metadata; traits are recomputed on every read, so nothing else is to do;
//! - `POST /nft/{address}/nfts-by-traits` (`getNFTByContractTraits`): the collection's NFTs that
//!   have the traits of the JSON body ([`body`]), in the record shape of `GET /nft/{address}`
//!   plus their rarity.
//!
//! Counts are over the tokens of the collection someone holds, from their stored metadata.
//! `status` is `SYNCED` only once the collection's whole history is indexed *and* every held
//! token's metadata is fetched; rarity (`percentage`, `rarity_label`, `rarity_rank`, …) is given
//! only then, and is `null` otherwise (see `query/traits.rs`).

mod body;

use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, PathRejection};
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Serialize;
use utoipa::ToSchema;

use super::envelope::{with_block, SyncStatusSchema};
use super::error::ApiError;
use super::nft::{path_rejection, records, Held, NftRecord};
use super::params::{CollectionNftsParams, RawParams};
use super::spec;
use crate::app::{preview_base, AppState, Reader};
use crate::query::{NftsByTraitsQuery, TraitCount, TraitedNft, TraitsPageQuery, TraitsQuery};
use crate::types::Address;

impl From<&TraitedNft> for Held {
    fn from(t: &TraitedNft) -> Self {
        Held::from(&t.nft)
    }
}

/// One value of a trait type, as `getNFTTraitsByCollection` writes it.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = nftTraitValue)]
pub struct TraitValueRecord {
    /// The value, as text (a number or boolean as JSON writes it).
    #[schema(example = "Lavender")]
    pub trait_value: String,
    /// How many of the collection's tokens have it.
    #[schema(example = 18)]
    pub count: u64,
    /// The share of the collection's tokens that have it, in percent (two decimals); `null`
    /// until the answer is `SYNCED`.
    #[schema(example = 8.58)]
    pub percentage: Option<f64>,
    /// `Top N% trait`, N the share rounded up; `null` until the answer is `SYNCED`.
    #[schema(example = "Top 9% trait")]
    pub rarity_label: Option<String>,
}

/// A trait type and its values.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = nftTrait)]
pub struct TraitRecord {
    /// The trait type.
    #[schema(example = "Background")]
    pub trait_type: String,
    /// Its values, by value.
    pub values: Vec<TraitValueRecord>,
}

/// `GET /nft/{address}/traits`: `{"status", "traits"}`.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = nftCollectionTraits)]
pub struct CollectionTraitsBody {
    /// `SYNCED` or `SYNCING` (tokenql's addition).
    #[schema(value_type = SyncStatusSchema)]
    pub status: &'static str,
    /// The trait types, by name.
    pub traits: Vec<TraitRecord>,
}

/// One (trait type, value) of `getNFTTraitsByCollectionPaginate`.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = nftTraitCount)]
pub struct TraitCountRecord {
    /// The trait type.
    #[schema(example = "Background")]
    pub trait_type: String,
    /// The value, as text.
    #[schema(example = "Lavender")]
    pub trait_value: String,
    /// How many of the collection's tokens have it.
    #[schema(example = 18)]
    pub count: u64,
    /// The share of the collection's tokens that have it, in percent (two decimals); `null`
    /// until the answer is `SYNCED`.
    #[schema(example = 8.58)]
    pub percentage: Option<f64>,
    /// `Top N% trait`; `null` until the answer is `SYNCED`.
    #[schema(example = "Top 9% trait")]
    pub rarity_label: Option<String>,
}

impl From<TraitCount> for TraitCountRecord {
    fn from(t: TraitCount) -> Self {
        let (percentage, rarity_label) = match t.rarity {
            Some(r) => (Some(r.percentage), Some(r.label)),
            None => (None, None),
        };
        Self {
            trait_type: t.trait_type,
            trait_value: t.value,
            count: t.count,
            percentage,
            rarity_label,
        }
    }
}

/// Declares a paged envelope of `$record`s, `{"status","page","page_size","cursor","result"}`.
macro_rules! traits_envelope {
    ($(#[$doc:meta])* $name:ident, $schema:ident, $record:ty) => {
        $(#[$doc])*
        #[derive(Debug, Serialize, ToSchema)]
        #[schema(as = $schema)]
        pub struct $name {
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
            pub result: Vec<$record>,
            /// The block the page was read as of (the `X-Indexed-Block` header).
            #[serde(skip)]
            pub block: Option<u64>,
        }

        impl $name {
            /// Wraps `result` with the paging facts of `page`.
            fn new<T>(page: &crate::query::Page<T>, result: Vec<$record>) -> Self {
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

        impl IntoResponse for $name {
            fn into_response(self) -> Response {
                with_block(self.block, &self)
            }
        }
    };
}

traits_envelope!(
    /// `GET /nft/{address}/traits/paginate`.
    TraitsPage,
    nftTraitsPage,
    TraitCountRecord
);

/// An NFT with the traits asked for: the record of `GET /nft/{address}`, and its rarity.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = nftWithRarity)]
pub struct TraitedNftRecord {
    /// The NFT's record.
    #[serde(flatten)]
    pub nft: NftRecord,
    /// 1 for the rarest token of the collection (equal scores share a rank); `null` until the
    /// answer is `SYNCED`.
    #[schema(example = 12)]
    pub rarity_rank: Option<u64>,
    /// `rarity_rank` over the collection's tokens, in percent, rounded up; `null` until the
    /// answer is `SYNCED`.
    #[schema(example = 4)]
    pub rarity_percentage: Option<u64>,
    /// `Top N%`, N the `rarity_percentage`; `null` until the answer is `SYNCED`.
    #[schema(example = "Top 4%")]
    pub rarity_label: Option<String>,
}

traits_envelope!(
    /// `POST /nft/{address}/nfts-by-traits`.
    NftsByTraits,
    nftsByTraits,
    TraitedNftRecord
);

/// `GET /nft/{address}/traits/resync`: `{"status"}`.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = resyncTraits)]
pub struct ResyncBody {
    /// What was done.
    #[schema(example = "Traits resync requested: 120 tokens queued for a metadata refetch")]
    pub status: String,
}

// Written for the document only: the body is parsed by `body::parse`.
/// The JSON body of `POST /nft/{address}/nfts-by-traits`: the traits an NFT must have.
#[derive(Debug, ToSchema)]
#[schema(as = nftsByTraitsBody)]
pub struct NftsByTraitsBody {
    /// Trait type → a value or a list of values (`{"Background": "Blue", "Level": [3, 4]}`), or
    /// a list of `{"trait_type", "value"}`. Every trait type named must match, with one of its
    /// values; left out or empty, every NFT matches.
    #[schema(value_type = Option<Object>, example = json!({"Background": "Blue", "Level": [3, 4]}))]
    pub traits: Option<serde_json::Value>,
}

/// The path's collection address.
fn collection(address: Result<Path<String>, PathRejection>) -> Result<Address, ApiError> {
    let Path(address) = address.map_err(|r| path_rejection("address", r))?;
    Address::parse(&address).map_err(|e| ApiError::parse("address", e))
}

/// The handler of `GET /nft/{address}/traits`.
#[utoipa::path(
    get,
    path = "/nft/{address}/traits",
    operation_id = "getNFTTraitsByCollection",
    tag = "NFT",
    summary = "Get NFT traits by collection",
    description = "Every trait of a collection, from the metadata of the tokens someone holds: \
one entry per trait type (by name), each with its values (by value) and how many tokens have \
each. A trait is a metadata attribute with a type and a value; the value is written as text.\n\n\
`status` is `SYNCED` once the collection's whole history is indexed and every held token's \
metadata is fetched; the first request for a collection that is not starts fetching its \
history. `percentage` and `rarity_label` are given only then, `null` before. For large \
collections, `getNFTTraitsByCollectionPaginate` pages the same list.",
    params(
        ("address" = super::schemas::AddressSchema, Path, description = "The collection: `0x` and 40 hex digits, in any letter case."),
        super::spec::Traits,
    ),
    responses(
        (status = 200, description = "The collection's traits.", body = CollectionTraitsBody),
    ),
)]
pub(super) async fn collection_traits(
    Reader(service): Reader,
    address: Result<Path<String>, PathRejection>,
    RawQuery(raw): RawQuery,
) -> Result<Response, ApiError> {
    let contract = collection(address)?;
    let p = RawParams::read(spec::TRAITS, raw.as_deref());
    let q = TraitsQuery {
        chain: p.chain()?,
        contract,
    };
    let answer = service
        .traits(&q)
        .await
        .map_err(|e| ApiError::from_query("traits", e))?;
    let mut traits: Vec<TraitRecord> = Vec::new();
    for t in answer.traits {
        let record = TraitCountRecord::from(t);
        let value = TraitValueRecord {
            trait_value: record.trait_value,
            count: record.count,
            percentage: record.percentage,
            rarity_label: record.rarity_label,
        };
        match traits.last_mut() {
            Some(last) if last.trait_type == record.trait_type => last.values.push(value),
            _ => traits.push(TraitRecord {
                trait_type: record.trait_type,
                values: vec![value],
            }),
        }
    }
    let body = CollectionTraitsBody {
        status: answer.status.as_str(),
        traits,
    };
    Ok(with_block(answer.block, body))
}

/// The handler of `GET /nft/{address}/traits/paginate`.
#[utoipa::path(
    get,
    path = "/nft/{address}/traits/paginate",
    operation_id = "getNFTTraitsByCollectionPaginate",
    tag = "NFT",
    summary = "Get NFT traits by collection, paged",
    description = "The traits of `getNFTTraitsByCollection`, one record per (trait type, \
value), ordered by trait type then value (`order`); pass `cursor` to get the next page.\n\n\
`status`, `percentage` and `rarity_label` as in `getNFTTraitsByCollection`; a walk begun \
`SYNCING` stays so to its last page.",
    params(
        ("address" = super::schemas::AddressSchema, Path, description = "The collection: `0x` and 40 hex digits, in any letter case."),
        super::spec::TraitsPage,
    ),
    responses(
        (status = 200, description = "A page of the collection's traits.", body = TraitsPage),
    ),
)]
pub(super) async fn collection_traits_page(
    Reader(service): Reader,
    address: Result<Path<String>, PathRejection>,
    RawQuery(raw): RawQuery,
) -> Result<TraitsPage, ApiError> {
    let contract = collection(address)?;
    let p = RawParams::read(spec::TRAITS_PAGE, raw.as_deref());
    let q = TraitsPageQuery {
        chain: p.chain()?,
        contract,
        order: p.order()?,
        page_size: p.page_size()?,
    };
    let cursor = p.cursor()?;
    let page = service
        .traits_page(&q, cursor.as_deref())
        .await
        .map_err(|e| ApiError::from_query("traits_page", e))?;
    let result = page
        .edges
        .iter()
        .map(|e| TraitCountRecord::from(e.node.clone()))
        .collect();
    Ok(TraitsPage::new(&page, result))
}

/// The handler of `GET /nft/{address}/traits/resync`.
#[utoipa::path(
    get,
    path = "/nft/{address}/traits/resync",
    operation_id = "resyncNFTRarity",
    tag = "NFT",
    summary = "Resync NFT traits",
    description = "Queues a refetch of the metadata of every token of the collection that has \
a token URI. Traits and rarity are recomputed from the stored metadata on every read, so they \
follow as the documents arrive (`status` says `SYNCING` meanwhile).",
    params(
        ("address" = super::schemas::AddressSchema, Path, description = "The collection: `0x` and 40 hex digits, in any letter case."),
        super::spec::Traits,
    ),
    responses(
        (status = 202, description = "The refetch is queued.", body = ResyncBody),
    ),
)]
pub(super) async fn resync_traits(
    Reader(service): Reader,
    address: Result<Path<String>, PathRejection>,
    RawQuery(raw): RawQuery,
) -> Result<Response, ApiError> {
    let contract = collection(address)?;
    let p = RawParams::read(spec::TRAITS, raw.as_deref());
    let chain = p.chain()?;
    let queued = service
        .resync_traits(chain, contract)
        .await
        .map_err(|e| ApiError::from_query("resync_traits", e))?;
    let body = ResyncBody {
        status: format!("Traits resync requested: {queued} tokens queued for a metadata refetch"),
    };
    Ok((StatusCode::ACCEPTED, Json(body)).into_response())
}

/// The handler of `POST /nft/{address}/nfts-by-traits`.
#[utoipa::path(
    post,
    path = "/nft/{address}/nfts-by-traits",
    operation_id = "getNFTByContractTraits",
    tag = "NFT",
    summary = "Get NFTs by traits",
    description = "The collection's held NFTs whose metadata has the traits of the body, by \
token id, in the record shape of `getContractNFTs` plus `rarity_rank`, `rarity_percentage` and \
`rarity_label`; pass `cursor` (with the same body) to get the next page.\n\n\
The body is `{\"traits\": {\"Background\": \"Blue\", \"Level\": [3, 4]}}` (a trait type's \
values are alternatives; every trait type named must match; types and values compare exactly) \
or `{\"traits\": [{\"trait_type\": \"Background\", \"value\": \"Blue\"}]}`; `{}` asks for every \
NFT. A value is a string, number or boolean, matched against the trait's value as text.\n\n\
`status` as in `getNFTTraitsByCollection`; the rarity fields are `null` until it is `SYNCED`.",
    params(
        ("address" = super::schemas::AddressSchema, Path, description = "The collection: `0x` and 40 hex digits, in any letter case."),
        super::spec::NftLists,
    ),
    request_body(content = inline(NftsByTraitsBody), content_type = "application/json",
        description = "The traits asked for."),
    responses(
        (status = 200, description = "A page of the NFTs that have the traits.", body = NftsByTraits),
    ),
)]
pub(super) async fn nfts_by_traits(
    State(state): State<AppState>,
    Reader(service): Reader,
    address: Result<Path<String>, PathRejection>,
    RawQuery(raw): RawQuery,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<NftsByTraits, ApiError> {
    let Path(address) = address.map_err(|r| path_rejection("address", r))?;
    let params = CollectionNftsParams::parse(&address, None, raw.as_deref())?;
    let body = body.map_err(|r| ApiError::bad("body", r.body_text()))?;
    let q = NftsByTraitsQuery {
        chain: params.query.chain,
        contract: params.query.contract,
        traits: body::parse(&body)?,
        page_size: params.query.page_size,
    };
    let answer = service
        .nfts_by_traits(&q, params.cursor.as_deref(), params.shape.include())
        .await
        .map_err(|e| ApiError::from_query("nfts_by_traits", e))?;
    let base = preview_base(&state, &headers);
    let result = records(q.chain, &answer, &params.shape, &base)
        .into_iter()
        .zip(&answer.page.edges)
        .map(|(nft, e)| {
            let rarity = e.node.rarity.as_ref();
            TraitedNftRecord {
                nft,
                rarity_rank: rarity.map(|r| r.rank),
                rarity_percentage: rarity.map(|r| r.percentage),
                rarity_label: rarity.map(|r| r.label.clone()),
            }
        })
        .collect();
    Ok(NftsByTraits::new(&answer.page, result))
}
