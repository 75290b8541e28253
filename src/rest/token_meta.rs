//! The ERC20 metadata routes (v2.2):
//!
//! - `GET /erc20/metadata` (`getTokenMetadata`): one record per address asked, in request order
//!   (repeats once). An address tokenql holds no token row of still gets its record, with
//!   every field but `address` `null`: the SDKs map the array element by element (the JS SDK
//!   builds a token of each record and reads `record.address`), so a `null` entry would break
//!   them, and leaving an address out would shift a caller that matches answers to requests by
//!   position. Nothing is invented: a field tokenql has no data for is `null`.
//! - `GET /erc20/metadata/symbols` (`getTokenMetadataBySymbol`): every token whose symbol is one
//!   of those asked (letter case aside), in the order of the symbols, then by address.
//!
//! The values come from the contract rows: name, symbol and decimals as the contract answered
//! them (`eth_call`) or, failing that, as an imported token list gives them; the logo from the
//! token list (also given as `thumbnail`: a list has one image); `possible_spam` and
//! `verified_contract` from the lists, the heuristics and the admin; `address_label` from the
//! imported labels. Supply, creation block, prices, categories and links are not indexed
//! (`null`).

use axum::extract::RawQuery;
use axum::Json;
use serde::Serialize;
use utoipa::ToSchema;

use super::envelope::text;
use super::error::ApiError;
use super::params::{TokenMetadataParams, TokenSymbolsParams};
use crate::app::Reader;
use crate::query::TokenMeta;
use crate::types::Address;

/// One token's metadata (`erc20Metadata`).
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = erc20Metadata)]
pub struct TokenMetadataRecord {
    /// The token contract, lowercase.
    #[schema(
        pattern = "^0x[0-9a-f]{40}$",
        example = "0xdac17f958d2ee523a2206206994597c13d831ec7"
    )]
    pub address: String,
    /// The address's label, when one is imported.
    pub address_label: Option<String>,
    /// The token's name, when known.
    #[schema(example = "Tether USD")]
    pub name: Option<String>,
    /// The token's symbol, when known.
    #[schema(example = "USDT")]
    pub symbol: Option<String>,
    /// The token's decimals, when known (a JSON string of digits).
    #[schema(pattern = "^[0-9]+$", example = "6")]
    pub decimals: Option<String>,
    /// The token list's logo URL, when one is imported.
    pub logo: Option<String>,
    /// Not tracked (always `null`).
    pub logo_hash: Option<String>,
    /// The same image as `logo` (a token list has one).
    pub thumbnail: Option<String>,
    /// Not tracked (always `null`).
    pub total_supply: Option<String>,
    /// Not tracked (always `null`).
    pub total_supply_formatted: Option<String>,
    /// Not tracked (always `null`).
    pub fully_diluted_valuation: Option<String>,
    /// Not tracked: the block the contract was created in (always `null`).
    pub block_number: Option<String>,
    /// Not tracked (always `null`).
    pub validated: Option<u32>,
    /// Not tracked: when the contract was created (always `null`).
    pub created_at: Option<String>,
    /// Whether the token is possibly spam; `null` for an address tokenql does not know.
    pub possible_spam: Option<bool>,
    /// Whether the token is verified; `null` for an address tokenql does not know.
    pub verified_contract: Option<bool>,
    /// Not tracked (always `null`).
    pub categories: Option<Vec<String>>,
    /// Not tracked (always `null`).
    #[schema(value_type = Option<Object>)]
    pub links: Option<serde_json::Value>,
    /// Not tracked (always `null`).
    pub circulating_supply: Option<String>,
    /// Not tracked (always `null`).
    pub market_cap: Option<String>,
}

impl TokenMetadataRecord {
    /// The record of `address`, from what tokenql knows of it (`None`: nothing).
    fn new(address: Address, meta: Option<&TokenMeta>) -> Self {
        let info = meta.map(|m| &m.info);
        let logo = text(info.and_then(|i| i.logo.as_ref()));
        Self {
            address: address.to_string(),
            address_label: text(meta.and_then(|m| m.label.as_ref())),
            name: text(info.and_then(|i| i.name.as_ref())),
            symbol: text(info.and_then(|i| i.symbol.as_ref())),
            decimals: info.and_then(|i| i.decimals).map(|d| d.to_string()),
            thumbnail: logo.clone(),
            logo,
            logo_hash: None,
            total_supply: None,
            total_supply_formatted: None,
            fully_diluted_valuation: None,
            block_number: None,
            validated: None,
            created_at: None,
            possible_spam: info.map(|i| i.possible_spam),
            verified_contract: info.map(|i| i.verified),
            categories: None,
            links: None,
            circulating_supply: None,
            market_cap: None,
        }
    }
}

/// The handler of `GET /erc20/metadata`.
#[utoipa::path(
    get,
    path = "/erc20/metadata",
    operation_id = "getTokenMetadata",
    tag = "Token",
    summary = "Get ERC20 token metadata by contract",
    description = "The metadata of up to 25 ERC20 tokens: one record per address asked, in \
request order. Name, symbol and decimals are what the contract answered, or what an imported \
token list gives; the logo comes from the token list. An address tokenql knows no token of still \
gets a record, with every field but `address` `null`. Supply, creation block, prices, categories \
and links are not tracked (`null`).",
    params(super::spec::TokenMetadata),
    responses(
        (status = 200, description = "One record per address asked.", body = Vec<TokenMetadataRecord>),
    ),
)]
pub(super) async fn token_metadata(
    Reader(service): Reader,
    RawQuery(raw): RawQuery,
) -> Result<Json<Vec<TokenMetadataRecord>>, ApiError> {
    let params = TokenMetadataParams::parse(raw.as_deref())?;
    let found = service
        .token_metadata(params.chain, &params.addresses)
        .await
        .map_err(|e| ApiError::from_query("token_metadata", e))?;
    Ok(Json(
        params
            .addresses
            .iter()
            .zip(&found)
            .map(|(a, m)| TokenMetadataRecord::new(*a, m.as_ref()))
            .collect(),
    ))
}

/// The handler of `GET /erc20/metadata/symbols`.
#[utoipa::path(
    get,
    path = "/erc20/metadata/symbols",
    operation_id = "getTokenMetadataBySymbol",
    tag = "Token",
    summary = "Get ERC20 token metadata by symbols",
    description = "Every ERC20 token whose symbol is one of up to 25 symbols (letter case \
aside; at most 100 tokens per symbol), in the order of the symbols, then by address, with the \
fields of `getTokenMetadata`. A symbol no token has adds nothing.",
    params(super::spec::TokenSymbols),
    responses(
        (status = 200, description = "The tokens with these symbols.", body = Vec<TokenMetadataRecord>),
    ),
)]
pub(super) async fn token_metadata_by_symbol(
    Reader(service): Reader,
    RawQuery(raw): RawQuery,
) -> Result<Json<Vec<TokenMetadataRecord>>, ApiError> {
    let params = TokenSymbolsParams::parse(raw.as_deref())?;
    let found = service
        .tokens_by_symbol(params.chain, &params.symbols)
        .await
        .map_err(|e| ApiError::from_query("token_metadata_by_symbol", e))?;
    Ok(Json(
        found
            .iter()
            .map(|m| TokenMetadataRecord::new(m.address, Some(m)))
            .collect(),
    ))
}
