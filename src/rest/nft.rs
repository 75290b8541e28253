//! `GET /{address}/nft`: the NFTs a wallet owns, in the Moralis v2 shape.
//!
//! One page costs a constant number of statements: the query service answers the page (with
//! its count and status) and its related rows in one batch per kind; this module reshapes it.

use axum::extract::rejection::PathRejection;
use axum::extract::{Path, RawQuery, State};
use axum::http::HeaderMap;
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

use super::envelope::{text, NftEnvelope};
use super::error::ApiError;
use super::media::MediaRecord;
use super::normalized_metadata::NormalizedMetadata;
use super::params::{settle_date, NftParams, NftShape};
use crate::app::preview_base;
use crate::app::{AppState, Reader};
use crate::query::{token_hash, Answer, CollectionNft, NftHolding, Related};
use crate::types::{iso8601_ms, Address, Chain, TokenIdFormat, TokenStandard, Uint256};

/// One NFT held by the wallet, as Moralis writes it: numbers as strings, missing values `null`.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = nftOwner)]
pub struct NftRecord {
    /// Contract address, lowercase.
    #[schema(
        pattern = "^0x[0-9a-f]{40}$",
        example = "0x57f1887a8bf19b14fc0df6fd9b2acc9af147ea85"
    )]
    pub token_address: String,
    /// Token id in the asked `format` (decimal, or `0x` hex).
    #[schema(pattern = "^([0-9]+|0x[0-9a-f]+)$", example = "15")]
    pub token_id: String,
    /// `ERC721` or `ERC1155`.
    #[schema(value_type = ContractTypeSchema)]
    pub contract_type: String,
    /// The owner, lowercase. Always set on a wallet's or an owner's record; on a collection's
    /// record (`GET /nft/{address}`) `null` when several wallets hold the token.
    #[schema(
        pattern = "^0x[0-9a-f]{40}$",
        example = "0x430d5dde0cd48989737a95b4c46e1801a9a08531"
    )]
    pub owner_of: Option<String>,
    /// The block at which the owner acquired it.
    #[schema(pattern = "^[0-9]+$", example = "19000000")]
    pub block_number: String,
    /// The block at which it was minted, when known.
    #[schema(pattern = "^[0-9]+$", example = "18999000")]
    pub block_number_minted: Option<String>,
    /// Its token URI, when known.
    pub token_uri: Option<String>,
    /// Its metadata as a JSON-encoded string, or `null` when unknown or not JSON.
    #[schema(example = "{\"name\":\"#15\",\"image\":\"ipfs://Qm...\"}")]
    pub metadata: Option<String>,
    /// The normalized metadata when `normalizeMetadata=true`, else `null`.
    pub normalized_metadata: Option<NormalizedMetadata>,
    /// Preview media of the token's image when `media_items=true` (else `null`); also `null`
    /// while the token's metadata is not fetched.
    pub media: Option<MediaRecord>,
    /// How many the owner holds (1 for ERC721).
    #[schema(pattern = "^[0-9]+$", example = "1")]
    pub amount: String,
    /// Collection name, when known.
    pub name: Option<String>,
    /// Collection symbol, when known.
    pub symbol: Option<String>,
    /// A stable identifier of the token.
    #[schema(
        pattern = "^[0-9a-f]{32}$",
        example = "502cee781b0fb40ea02508b21d319ced"
    )]
    pub token_hash: String,
    /// When the token URI was last read (ISO 8601, ms).
    #[schema(
        pattern = "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z$",
        example = "2024-01-02T03:04:05.000Z"
    )]
    pub last_token_uri_sync: Option<String>,
    /// When the metadata was last read (ISO 8601, ms).
    #[schema(
        pattern = "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z$",
        example = "2024-01-02T03:04:05.000Z"
    )]
    pub last_metadata_sync: Option<String>,
    /// Who minted it, when known.
    #[schema(pattern = "^0x[0-9a-f]{40}$")]
    pub minter_address: Option<String>,
    /// Whether the collection is possibly spam.
    pub possible_spam: bool,
    /// Whether the collection is verified.
    pub verified_collection: bool,
}

/// `contract_type` as the OpenAPI document describes it (the record copies the stored text).
#[derive(Debug, Clone, Copy, ToSchema)]
#[schema(as = contractType, rename_all = "UPPERCASE")]
pub enum ContractTypeSchema {
    /// An ERC721 collection: `amount` is `"1"`.
    Erc721,
    /// An ERC1155 collection: `amount` is the balance.
    Erc1155,
}

/// What a record says of the holding itself; the rest comes from its related rows.
pub(super) struct Held {
    contract: Address,
    token_id: Uint256,
    contract_type: TokenStandard,
    /// The holder; `None` on a collection's record of a token several wallets hold.
    owner: Option<Address>,
    amount: Uint256,
    block_number: u64,
}

impl From<&NftHolding> for Held {
    fn from(h: &NftHolding) -> Self {
        Self {
            contract: h.contract,
            token_id: h.token_id,
            contract_type: h.contract_type,
            owner: Some(h.owner),
            amount: h.amount,
            block_number: h.block_number,
        }
    }
}

impl From<&CollectionNft> for Held {
    fn from(n: &CollectionNft) -> Self {
        Self {
            contract: n.contract,
            token_id: n.token_id,
            contract_type: n.contract_type,
            owner: n.owner,
            amount: n.amount,
            block_number: n.block_number,
        }
    }
}

impl NftRecord {
    /// Builds a record from a holding and the related rows of its page.
    fn new(h: Held, chain: Chain, related: &Related, base: &str, params: &NftShape) -> Self {
        let contract = related.contract(h.contract);
        let token = related.token(h.contract, h.token_id);
        // `metadata` must be a JSON string or null (the JS SDK drops the page otherwise).
        let parsed: Option<(String, Value)> = token
            .and_then(|t| t.metadata.as_ref())
            .and_then(|m| serde_json::from_str(m).ok().map(|v| (m.clone(), v)));
        let normalized_metadata = params.normalize_metadata.then(|| {
            let erc1155_id = h
                .contract_type
                .is_multi_token()
                .then(|| h.token_id.to_hex64());
            NormalizedMetadata::for_token(parsed.as_ref().map(|(_, v)| v), erc1155_id.as_deref())
        });
        Self {
            token_address: h.contract.to_string(),
            token_id: match params.format {
                TokenIdFormat::Decimal => h.token_id.to_decimal(),
                TokenIdFormat::Hex => h.token_id.to_hex(),
            },
            contract_type: h.contract_type.as_str().to_string(),
            owner_of: h.owner.map(|o| o.to_string()),
            block_number: h.block_number.to_string(),
            block_number_minted: token
                .and_then(|t| t.block_number_minted)
                .map(|b| b.to_string()),
            token_uri: text(token.and_then(|t| t.token_uri.as_ref())),
            metadata: parsed.map(|(raw, _)| raw),
            normalized_metadata,
            media: params
                .media_items
                .then(|| related.media(h.contract, h.token_id))
                .flatten()
                .map(|m| MediaRecord::new(m, base)),
            amount: h.amount.to_decimal(),
            name: text(contract.and_then(|c| c.name.as_ref())),
            symbol: text(contract.and_then(|c| c.symbol.as_ref())),
            token_hash: token_hash(chain, h.contract, h.token_id),
            last_token_uri_sync: token.and_then(|t| t.last_token_uri_sync).map(iso8601_ms),
            last_metadata_sync: token.and_then(|t| t.last_metadata_sync).map(iso8601_ms),
            minter_address: text(token.and_then(|t| t.minter_address.as_ref())),
            possible_spam: contract.is_some_and(|c| c.possible_spam),
            verified_collection: contract.is_some_and(|c| c.verified),
        }
    }
}

/// The record of one of a collection's NFTs, outside a page (`getMultipleNFTs`).
pub(super) fn collection_record(
    n: &CollectionNft,
    chain: Chain,
    related: &Related,
    base: &str,
    shape: &NftShape,
) -> NftRecord {
    NftRecord::new(Held::from(n), chain, related, base, shape)
}

/// A path segment axum could not decode (not UTF-8 after percent-decoding).
pub(super) fn path_rejection(param: &'static str, r: PathRejection) -> ApiError {
    match r {
        PathRejection::FailedToDeserializePathParams(_) => {
            ApiError::bad(param, "is not valid percent-encoded UTF-8")
        }
        other => ApiError::Internal {
            context: "path extraction",
            detail: other.body_text(),
        },
    }
}

/// The handler of `GET /{address}/nft`.
#[utoipa::path(
    get,
    path = "/{address}/nft",
    operation_id = "getWalletNFTs",
    tag = "NFT",
    summary = "Get NFTs by wallet",
    description = "The NFTs a wallet owns, one record per (contract, token id), with the block \
at which the wallet acquired each.\n\n\
- `status` is `SYNCED` when the answer is complete, and `SYNCING` while a collection it depends \
on is still being indexed or the indexer trails the chain head.\n\
- Naming a collection in `token_addresses` that is not fully indexed yet starts its indexing \
(once), and answers `SYNCING` until it is done.\n\
- Records are ordered by contract, then token id; pass `cursor` to get the next page.",
    params(
        ("address" = super::schemas::AddressSchema, Path, description = "The wallet: `0x` and 40 hex digits, in any letter case."),
        super::spec::WalletNfts,
    ),
    responses(
        (status = 200, description = "A page of the wallet's NFTs.", body = NftEnvelope<NftRecord>),
    ),
)]
pub(super) async fn wallet_nfts(
    State(state): State<AppState>,
    Reader(service): Reader,
    address: Result<Path<String>, PathRejection>,
    RawQuery(raw): RawQuery,
    headers: HeaderMap,
) -> Result<NftEnvelope<NftRecord>, ApiError> {
    let Path(address) = address.map_err(|r| path_rejection("address", r))?;
    let mut params = NftParams::parse(&address, raw.as_deref())?;
    let q = &mut params.query;
    settle_date(&service, q.chain, &mut q.at_block, params.to_date).await?;
    let shape = params.shape();
    let answer = service
        .nfts_by_wallet(&params.query, params.cursor.as_deref(), shape.include())
        .await
        .map_err(|e| ApiError::from_query("nfts_by_wallet", e))?;
    let base = preview_base(&state, &headers);
    let result = records(params.query.chain, &answer, &shape, &base);
    Ok(NftEnvelope::new(&answer.page, result))
}

/// The records of an answer's NFTs, from the page and its related rows.
pub(super) fn records<N>(
    chain: Chain,
    answer: &Answer<N>,
    shape: &NftShape,
    base: &str,
) -> Vec<NftRecord>
where
    for<'a> Held: From<&'a N>,
{
    answer
        .page
        .edges
        .iter()
        .map(|e| NftRecord::new(Held::from(&e.node), chain, &answer.related, base, shape))
        .collect()
}
