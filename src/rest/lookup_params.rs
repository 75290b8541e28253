//! The parameters of the collection, NFT and wallet lookups and of the two triggers: the path's
//! address and token id, the query string (read through each route's table in [`super::spec`],
//! as [`super::params`] reads every route's) and, for the `POST` routes, the JSON body, parsed
//! here into typed values. A body that is not JSON, lacks a field or names a bad address or
//! token id is a 400 naming what is wrong.

use std::time::Duration;

use alloy::primitives::B256;
use axum::extract::rejection::{JsonRejection, PathRejection};
use axum::extract::Path;
use axum::Json;
use serde::Deserialize;
use serde_json::Value;
use utoipa::ToSchema;

use super::error::ApiError;
use super::nft::path_rejection;
use super::params::{NftShape, RawParams};
use super::spec::{self, MAX_BATCH};
use crate::query::{RefetchFrom, UniqueOwnersQuery};
use crate::types::{Address, BlockNumber, Chain, TokenIdFormat, Uint256};

/// How long `mode=sync` waits for a metadata refetch.
pub const SYNC_WAIT: Duration = Duration::from_secs(15);

/// A route's path address, parsed.
pub fn path_address(name: &'static str, address: &str) -> Result<Address, ApiError> {
    Address::parse(address).map_err(|e| ApiError::parse(name, e))
}

/// The path's address (named `name`) and the `chain` of a route that reads nothing else.
pub fn address_and_chain(
    name: &'static str,
    address: Result<Path<String>, PathRejection>,
    raw: Option<&str>,
) -> Result<(Address, Chain), ApiError> {
    let Path(address) = address.map_err(|r| path_rejection(name, r))?;
    Ok((path_address(name, &address)?, chain_only(raw)?))
}

/// The `chain` of a route that reads nothing else from its query string.
pub fn chain_only(raw: Option<&str>) -> Result<Chain, ApiError> {
    RawParams::read(spec::CHAIN_ONLY, raw).chain()
}

/// A JSON body, or the 400 that says why it is not one.
fn body(body: Result<Json<Value>, JsonRejection>) -> Result<Value, ApiError> {
    body.map(|Json(v)| v)
        .map_err(|r| ApiError::bad("body", format!("is not a JSON object: {}", r.body_text())))
}

/// A body field read as `T`, or the 400 naming it.
fn field<T: for<'de> Deserialize<'de>>(
    value: &Value,
    name: &'static str,
    expected: &str,
) -> Result<Option<T>, ApiError> {
    match value.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => serde_json::from_value(v.clone())
            .map(Some)
            .map_err(|_| ApiError::bad(name, format!("is not {expected}"))),
    }
}

/// The size limit of a batch in a body.
fn batch_len(name: &'static str, n: usize) -> Result<(), ApiError> {
    match n {
        0 => Err(ApiError::bad(name, "is empty; give at least one entry")),
        n if n > MAX_BATCH => Err(ApiError::bad(
            name,
            format!("{n} entries given; at most {MAX_BATCH} are allowed"),
        )),
        _ => Ok(()),
    }
}

/// One token of a `getMultipleNFTs` body.
#[derive(Debug, Deserialize, ToSchema)]
#[schema(as = nftTokenRef)]
pub struct TokenRef {
    /// The collection's address.
    #[schema(value_type = super::schemas::AddressSchema)]
    pub token_address: String,
    /// The token id: decimal digits or `0x` hex, as a string (a JSON integer is taken too).
    #[schema(value_type = String, example = "1")]
    pub token_id: Value,
}

/// The body of `POST /nft/getMultipleNFTs`.
#[derive(Debug, Deserialize, ToSchema)]
#[schema(as = getMultipleNFTsBody)]
pub struct MultipleNftsBody {
    /// The NFTs, 1 to 25.
    pub tokens: Vec<TokenRef>,
    /// `true` fills `normalized_metadata`.
    #[serde(rename = "normalizeMetadata", default)]
    pub normalize_metadata: Option<bool>,
    /// `true` fills `media`.
    #[serde(default)]
    pub media_items: Option<bool>,
}

/// Everything `POST /nft/getMultipleNFTs` was asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MultipleNftsParams {
    pub chain: Chain,
    /// The NFTs, in request order (repeats kept: the answer has one entry per request entry).
    pub tokens: Vec<(Address, Uint256)>,
    pub shape: NftShape,
}

impl MultipleNftsParams {
    /// Parses the query string's `chain` and the body.
    pub fn parse(
        raw: Option<&str>,
        json: Result<Json<Value>, JsonRejection>,
    ) -> Result<Self, ApiError> {
        let chain = chain_only(raw)?;
        let value = body(json)?;
        let tokens: Vec<Value> = field(&value, "tokens", "an array of tokens")?
            .ok_or_else(|| ApiError::bad("tokens", "is required"))?;
        batch_len("tokens", tokens.len())?;
        let tokens = tokens
            .into_iter()
            .map(token_ref)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self {
            chain,
            tokens,
            shape: NftShape {
                format: TokenIdFormat::Decimal,
                normalize_metadata: field(&value, "normalizeMetadata", "true or false")?
                    .unwrap_or(false),
                media_items: field(&value, "media_items", "true or false")?.unwrap_or(false),
            },
        })
    }
}

/// One `{token_address, token_id}` of a body.
fn token_ref(v: Value) -> Result<(Address, Uint256), ApiError> {
    let t: TokenRef = serde_json::from_value(v).map_err(|_| {
        ApiError::bad(
            "tokens",
            "has an entry that is not {\"token_address\": \"0x…\", \"token_id\": \"…\"}",
        )
    })?;
    let address = path_address("token_address", &t.token_address)?;
    let id = match &t.token_id {
        Value::String(s) => s.trim().to_string(),
        Value::Number(n) if n.is_u64() => n.to_string(),
        _ => return Err(ApiError::bad("token_id", "is not a token id string")),
    };
    let id = Uint256::parse(&id).map_err(|e| ApiError::parse("token_id", e))?;
    Ok((address, id))
}

/// The body of `POST /nft/metadata`.
#[derive(Debug, Deserialize, ToSchema)]
#[schema(as = nftContractsBody)]
pub struct ContractsBody {
    /// The collections, 1 to 25.
    #[schema(value_type = Vec<super::schemas::AddressSchema>)]
    pub addresses: Vec<String>,
}

/// Everything `POST /nft/metadata` was asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContractsParams {
    pub chain: Chain,
    /// The collections, in request order, each once.
    pub addresses: Vec<Address>,
}

impl ContractsParams {
    /// Parses the query string's `chain` and the body's `addresses`.
    pub fn parse(
        raw: Option<&str>,
        json: Result<Json<Value>, JsonRejection>,
    ) -> Result<Self, ApiError> {
        let chain = chain_only(raw)?;
        let value = body(json)?;
        let given: Vec<String> = field(&value, "addresses", "an array of addresses")?
            .ok_or_else(|| ApiError::bad("addresses", "is required"))?;
        batch_len("addresses", given.len())?;
        let mut addresses: Vec<Address> = Vec::new();
        for a in &given {
            let a = path_address("addresses", a)?;
            if !addresses.contains(&a) {
                addresses.push(a);
            }
        }
        Ok(Self { chain, addresses })
    }
}

/// Everything `GET /nft/{address}/unique-owners` was asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UniqueOwnersParams {
    pub query: UniqueOwnersQuery,
    pub cursor: Option<String>,
}

impl UniqueOwnersParams {
    /// Parses the path's collection and the query string.
    pub fn parse(address: &str, raw: Option<&str>) -> Result<Self, ApiError> {
        let p = RawParams::read(spec::UNIQUE_OWNERS, raw);
        Ok(Self {
            query: UniqueOwnersQuery {
                chain: p.chain()?,
                contract: path_address("address", address)?,
                page_size: p.page_size()?,
            },
            cursor: p.cursor()?,
        })
    }
}

/// Everything `GET /nft/{address}/{token_id}/metadata/resync` was asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResyncParams {
    pub chain: Chain,
    pub contract: Address,
    pub token_id: Uint256,
    pub from: RefetchFrom,
    /// How long to wait for the outcome (`mode=sync`); zero: not at all.
    pub wait: Duration,
}

impl ResyncParams {
    /// Parses the path's collection and token id and the query string.
    pub fn parse(address: &str, token_id: &str, raw: Option<&str>) -> Result<Self, ApiError> {
        let p = RawParams::read(spec::RESYNC_METADATA, raw);
        let from = match p.choice("flag")? {
            "metadata" => RefetchFrom::Metadata,
            _ => RefetchFrom::Uri,
        };
        let wait = match p.choice("mode")? {
            "sync" => SYNC_WAIT,
            _ => Duration::ZERO,
        };
        Ok(Self {
            chain: p.chain()?,
            contract: path_address("address", address)?,
            token_id: Uint256::parse(token_id).map_err(|e| ApiError::parse("token_id", e))?,
            from,
            wait,
        })
    }
}

/// A block named by a path: by number or by hash.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockRef {
    /// Its number.
    Number(u64),
    /// Its hash.
    Hash(B256),
}

/// `block_number_or_hash`: decimal digits, or `0x` and 64 hex digits (any letter case).
pub fn block_ref(s: &str) -> Result<BlockRef, ApiError> {
    const NAME: &str = "block_number_or_hash";
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) if hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()) => hex
            .parse::<B256>()
            .map(BlockRef::Hash)
            .map_err(|_| ApiError::bad(NAME, "is not a block hash")),
        Some(_) => Err(ApiError::bad(
            NAME,
            format!("'{s}' is not a block hash; expected 0x and 64 hex digits"),
        )),
        None => BlockNumber::parse(s)
            .map(|b| BlockRef::Number(b.0))
            .map_err(|e| ApiError::parse(NAME, e)),
    }
}

/// The chains `GET /wallets/{address}/chains` asks about; empty: every indexed chain.
pub fn wallet_chains(raw: Option<&str>) -> Result<Vec<Chain>, ApiError> {
    RawParams::read(spec::WALLET_CHAINS, raw).chains("chains")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(v: Value) -> Result<Json<Value>, JsonRejection> {
        Ok(Json(v))
    }

    fn message(e: ApiError) -> String {
        e.message()
    }

    #[test]
    fn multiple_nfts_read_tokens_in_request_order() {
        let p = MultipleNftsParams::parse(
            Some("chain=0x1"),
            json(serde_json::json!({
                "tokens": [
                    {"token_address": "0x00000000000000000000000000000000000000BB", "token_id": "0x10"},
                    {"token_address": "0x00000000000000000000000000000000000000aa", "token_id": 7},
                ],
                "normalizeMetadata": true,
            })),
        )
        .unwrap_or_else(|e| panic!("{}", e.message()));
        assert_eq!(p.tokens.len(), 2);
        assert_eq!(p.tokens[0].1, Uint256::from_u64(16));
        assert_eq!(p.tokens[1].1, Uint256::from_u64(7));
        assert!(p.shape.normalize_metadata && !p.shape.media_items);
    }

    #[test]
    fn bad_bodies_are_refused_with_the_field_named() {
        let cases = [
            (serde_json::json!({}), "tokens"),
            (serde_json::json!({"tokens": []}), "tokens"),
            (serde_json::json!({"tokens": "x"}), "tokens"),
            (
                serde_json::json!({"tokens": [{"token_address": "0x1", "token_id": "1"}]}),
                "token_address",
            ),
            (
                serde_json::json!({"tokens": [{"token_address": format!("0x{}", "a".repeat(40)), "token_id": "-1"}]}),
                "token_id",
            ),
            (
                serde_json::json!({"tokens": [{"token_address": format!("0x{}", "a".repeat(40)), "token_id": "1"}], "media_items": "yes"}),
                "media_items",
            ),
        ];
        for (body, field) in cases {
            let e = MultipleNftsParams::parse(None, json(body.clone()))
                .err()
                .unwrap_or_else(|| panic!("{body} accepted"));
            assert!(message(e).contains(field), "{body}");
        }
        let many: Vec<Value> = (0..26)
            .map(|i| serde_json::json!({"token_address": format!("0x{}", "a".repeat(40)), "token_id": i}))
            .collect();
        let e = MultipleNftsParams::parse(None, json(serde_json::json!({ "tokens": many })));
        assert!(e.is_err());
    }

    #[test]
    fn contracts_are_read_once_each_in_order() {
        let a = format!("0x{}", "a".repeat(40));
        let b = format!("0x{}", "B".repeat(40));
        let p = ContractsParams::parse(None, json(serde_json::json!({"addresses": [b, a, b]})))
            .unwrap_or_else(|e| panic!("{}", e.message()));
        assert_eq!(p.addresses.len(), 2);
        assert_eq!(p.addresses[0].to_string(), format!("0x{}", "b".repeat(40)));
    }

    #[test]
    fn resync_reads_flag_and_mode() {
        let a = format!("0x{}", "a".repeat(40));
        let p = ResyncParams::parse(&a, "5", Some("flag=METADATA&mode=sync"))
            .unwrap_or_else(|e| panic!("{}", e.message()));
        assert_eq!((p.from, p.wait), (RefetchFrom::Metadata, SYNC_WAIT));
        let p = ResyncParams::parse(&a, "5", None).unwrap_or_else(|e| panic!("{}", e.message()));
        assert_eq!((p.from, p.wait), (RefetchFrom::Uri, Duration::ZERO));
        assert!(ResyncParams::parse(&a, "5", Some("mode=later")).is_err());
        assert!(ResyncParams::parse(&a, "x", None).is_err());
    }

    #[test]
    fn blocks_are_named_by_number_or_hash() {
        let hash = format!("0x{}", "Ab".repeat(32));
        assert_eq!(block_ref("12").ok(), Some(BlockRef::Number(12)));
        assert!(matches!(block_ref(&hash), Ok(BlockRef::Hash(_))));
        for bad in ["-1", "0x12", "abc", &format!("0x{}", "g".repeat(64))] {
            assert!(block_ref(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn wallet_chains_are_parsed_once_each() {
        let chains = wallet_chains(Some("chains[]=eth&chains[]=0x1&chains=polygon"))
            .unwrap_or_else(|e| panic!("{}", e.message()));
        assert_eq!(chains.len(), 2);
        assert!(wallet_chains(Some("chains=nochain")).is_err());
        assert!(wallet_chains(None)
            .unwrap_or_else(|e| panic!("{}", e.message()))
            .is_empty());
    }
}
