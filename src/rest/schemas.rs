//! The OpenAPI vocabulary of the routes: each operation's query parameters, and the small
//! schemas they and the records use. The query string is parsed by hand
//! ([`crate::rest::params`]), so there is no typed struct to derive from: the `*QueryParams`
//! structs mirror what the parser accepts, and `tests/api/openapi_doc.rs` checks that they stay
//! complete. The handlers name these in their `#[utoipa::path]`; the document
//! ([`crate::rest::openapi`]) lists the handlers.

use std::borrow::Cow;

use utoipa::openapi::schema::{Object, ObjectBuilder, SchemaType, Type};
use utoipa::openapi::{RefOr, Schema};
use utoipa::{IntoParams, PartialSchema, ToSchema};

use crate::types::Chain;

/// An EVM address as a request may write it (`address` component).
pub struct AddressSchema;

impl PartialSchema for AddressSchema {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .pattern(Some("^0[xX][0-9a-fA-F]{40}$"))
            .description(Some(
                "An EVM address: `0x` followed by 40 hex digits, in any letter case (a \
                 mixed-case address need not be a valid EIP-55 checksum). Answers write \
                 addresses lowercase.",
            ))
            .examples([serde_json::json!(crate::demo::EXAMPLE_NFT_WALLET)])
            .into()
    }
}

impl ToSchema for AddressSchema {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("address")
    }
}

/// The `chain` parameter (`chainList` component), built from the chain table.
pub struct ChainList;

impl PartialSchema for ChainList {
    fn schema() -> RefOr<Schema> {
        let values: Vec<String> = Chain::all()
            .flat_map(|c| [c.name().to_string(), c.hex_id()])
            .collect();
        ObjectBuilder::new()
            .schema_type(Type::String)
            .enum_values(Some(values))
            .default(Some(serde_json::json!(Chain::ETH.name())))
            .description(Some(
                "A supported chain, by name or by `0x` hex chain id (hex ids are accepted in \
                 any letter case).",
            ))
            .examples([serde_json::json!(Chain::ETH.name())])
            .into()
    }
}

impl ToSchema for ChainList {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("chainList")
    }
}

/// The value of a metadata attribute: any JSON value, as the metadata gives it.
pub fn attribute_value() -> Object {
    ObjectBuilder::new()
        .description(Some(
            "Its value, as the metadata gives it: usually text or a number, but any JSON value \
             is passed through.",
        ))
        .schema_type(SchemaType::from_iter([
            Type::String,
            Type::Number,
            Type::Boolean,
            Type::Object,
            Type::Array,
            Type::Null,
        ]))
        .build()
}

/// The `format` parameter (`tokenIdFormat` component): how token ids are written.
pub struct TokenIdFormatSchema;

impl PartialSchema for TokenIdFormatSchema {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .enum_values(Some(["decimal", "hex"]))
            .default(Some(serde_json::json!("decimal")))
            .description(Some(
                "How token ids are written: `decimal` digits, or `hex` (`0x` and lowercase hex \
                 digits).",
            ))
            .into()
    }
}

impl ToSchema for TokenIdFormatSchema {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("tokenIdFormat")
    }
}

/// The query parameters of `GET /{address}/nft`, as [`crate::rest::params::NftParams`] parses them.
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)] // Describes the query string; never built.
pub struct NftQueryParams {
    /// The chain to query: a name or a `0x` hex chain id (hex ids in any letter case). Default
    /// `eth` (`0x1`). Any other value is a 400.
    #[param(value_type = ChainList, required = false)]
    chain: String,
    /// How `token_id` is written: `decimal` (default) or `0x`-prefixed `hex`. Anything else
    /// is a 400.
    #[param(value_type = TokenIdFormatSchema, required = false)]
    format: String,
    /// The page size: an integer from 1 to 100, default 100. Out of range or not an integer:
    /// 400.
    #[param(required = false, minimum = 1, maximum = 100, default = 100)]
    limit: i64,
    /// `false` to have the envelope's `total` filled in (the number of matching records);
    /// default `true`, which leaves `total` `null` and is faster. Soon to be deprecated
    /// upstream.
    #[param(required = false, default = true)]
    disable_total: bool,
    /// `true` to leave out NFTs of collections marked as possible spam; default `false`.
    #[param(required = false, default = false)]
    exclude_spam: bool,
    /// Only NFTs of these contracts. The first request naming a collection that is not fully
    /// indexed yet starts its indexing, and answers `SYNCING` until it is done. Repeat the key
    /// for several values (`name=a&name=b`); the bracket (`name[]=a&name[]=b`), indexed
    /// (`name[0]=a&name[1]=b`) and comma-separated (`name=a,b`) forms work too, in any mix. Up
    /// to 100 addresses.
    #[param(value_type = Vec<AddressSchema>, required = false, style = Form, explode, max_items = 100)]
    token_addresses: Vec<String>,
    /// The `cursor` of the previous answer, to get the next page. It is opaque and bound to
    /// the query it came from: a tampered, foreign or malformed cursor is a 400.
    #[param(required = false, max_length = 4096)]
    cursor: String,
    /// `true` to have `normalized_metadata` filled in (name, description, image,
    /// external_link, animation_url, attributes); default `false`, which leaves it `null`.
    #[param(rename = "normalizeMetadata", required = false, default = false)]
    normalize_metadata: bool,
    /// Whether preview media is asked for; default `false`. When `true`, `media` carries the
    /// status of the image's previews and, once made, links to 100, 250 and 500 px PNG
    /// previews served by tokenql. The first request for an image answers `processing`.
    #[param(required = false, default = false)]
    media_items: bool,
}

/// The query parameters of `GET /erc20/transfers`, as [`crate::rest::params::TransferParams`]
/// parses them.
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)] // Describes the query string; never built.
pub struct TransferQueryParams {
    /// The chain to query: a name or a `0x` hex chain id (hex ids in any letter case). Default
    /// `eth` (`0x1`). Any other value is a 400.
    #[param(value_type = ChainList, required = false)]
    chain: String,
    /// Only transfers in this block or later (inclusive). A non-negative integer of at most
    /// 9223372036854775807; negative, not an integer, or greater than `to_block`: 400.
    #[param(required = false, minimum = 0)]
    from_block: i64,
    /// Only transfers in this block or earlier (inclusive). A non-negative integer of at most
    /// 9223372036854775807; negative or not an integer: 400.
    #[param(required = false, minimum = 0)]
    to_block: i64,
    /// The page size: an integer from 1 to 100, default 100. Out of range or not an integer:
    /// 400.
    #[param(required = false, minimum = 1, maximum = 100, default = 100)]
    limit: i64,
    /// Only transfers of these token contracts. Repeat the key for several values
    /// (`name=a&name=b`); the bracket (`name[]=a&name[]=b`), indexed (`name[0]=a&name[1]=b`)
    /// and comma-separated (`name=a,b`) forms work too, in any mix. Up to 100 addresses.
    #[param(value_type = Vec<AddressSchema>, required = false, style = Form, explode, max_items = 100)]
    contract_addresses: Vec<String>,
    /// Leave out transfers of these token contracts. Repeat the key for several values
    /// (`name=a&name=b`); the bracket (`name[]=a&name[]=b`), indexed (`name[0]=a&name[1]=b`)
    /// and comma-separated (`name=a,b`) forms work too, in any mix. Up to 100 addresses.
    #[param(value_type = Vec<AddressSchema>, required = false, style = Form, explode, max_items = 100)]
    exclude_contracts: Vec<String>,
    /// Only transfers whose sender or recipient is one of these wallets. Repeat the key for
    /// several values (`name=a&name=b`); the bracket (`name[]=a&name[]=b`), indexed
    /// (`name[0]=a&name[1]=b`) and comma-separated (`name=a,b`) forms work too, in any mix. Up
    /// to 100 addresses.
    #[param(value_type = Vec<AddressSchema>, required = false, style = Form, explode, max_items = 100)]
    wallet_addresses: Vec<String>,
    /// Leave out transfers whose sender or recipient is one of these wallets. Repeat the key
    /// for several values (`name=a&name=b`); the bracket (`name[]=a&name[]=b`), indexed
    /// (`name[0]=a&name[1]=b`) and comma-separated (`name=a,b`) forms work too, in any mix. Up
    /// to 100 addresses.
    #[param(value_type = Vec<AddressSchema>, required = false, style = Form, explode, max_items = 100)]
    exclude_wallets: Vec<String>,
    /// The `cursor` of the previous answer, to get the next page. It is opaque and bound to
    /// the query it came from: a tampered, foreign or malformed cursor is a 400.
    #[param(required = false, max_length = 4096)]
    cursor: String,
}

/// The `order` of a list, as v2.2 names it (`orderList`).
pub struct OrderList;

impl PartialSchema for OrderList {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .enum_values(Some(["ASC", "DESC"]))
            .default(Some(serde_json::json!("DESC")))
            .description(Some(
                "`DESC` (the default): newest first; `ASC`: oldest first. Any letter case.",
            ))
            .into()
    }
}

impl ToSchema for OrderList {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("orderList")
    }
}

/// The query parameters of `GET /{address}/erc20/transfers`, as
/// [`crate::rest::params::TransferParams::parse_wallet`] parses them.
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)] // Describes the query string; never built.
pub struct WalletTransferQueryParams {
    /// The chain to query: a name or a `0x` hex chain id (hex ids in any letter case). Default
    /// `eth` (`0x1`). Any other value is a 400.
    #[param(value_type = ChainList, required = false)]
    chain: String,
    /// Only transfers in this block or later (inclusive). A non-negative integer; negative, not
    /// an integer, or greater than `to_block`: 400. Wins over `from_date`.
    #[param(required = false, minimum = 0)]
    from_block: i64,
    /// Only transfers in this block or earlier (inclusive). A non-negative integer; negative
    /// or not an integer: 400. Wins over `to_date`.
    #[param(required = false, minimum = 0)]
    to_block: i64,
    /// Only transfers in blocks of this time or later (inclusive): Unix seconds, or ISO 8601
    /// (`2023-03-20`, `2023-03-20T08:37:35Z`, `2023-03-20T10:37:35+02:00`; no zone is UTC).
    /// Anything else, or later than `to_date`: 400. Ignored when `from_block` is given.
    #[param(required = false)]
    from_date: String,
    /// Only transfers in blocks of this time or earlier (inclusive), written as `from_date`.
    /// Ignored when `to_block` is given.
    #[param(required = false)]
    to_date: String,
    /// Only transfers of these token contracts. Repeat the key for several values
    /// (`name=a&name=b`); the bracket (`name[]=a&name[]=b`), indexed (`name[0]=a&name[1]=b`)
    /// and comma-separated (`name=a,b`) forms work too, in any mix. Up to 100 addresses.
    #[param(value_type = Vec<AddressSchema>, required = false, style = Form, explode, max_items = 100)]
    contract_addresses: Vec<String>,
    /// The page size: an integer from 1 to 100, default 100. Out of range or not an integer:
    /// 400.
    #[param(required = false, minimum = 1, maximum = 100, default = 100)]
    limit: i64,
    /// `DESC` (newest first, the default) or `ASC` (oldest first); any letter case.
    #[param(value_type = OrderList, required = false)]
    order: String,
    /// The `cursor` of the previous answer, to get the next page. It is opaque and bound to
    /// the query it came from (the order included): a tampered, foreign or malformed cursor is
    /// a 400.
    #[param(required = false, max_length = 4096)]
    cursor: String,
}

/// The query parameters of `GET /erc20/{address}/transfers`, as
/// [`crate::rest::params::TransferParams::parse_token`] parses them.
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)] // Describes the query string; never built.
pub struct TokenTransferQueryParams {
    /// The chain to query: a name or a `0x` hex chain id (hex ids in any letter case). Default
    /// `eth` (`0x1`). Any other value is a 400.
    #[param(value_type = ChainList, required = false)]
    chain: String,
    /// Only transfers in this block or later (inclusive). A non-negative integer; negative, not
    /// an integer, or greater than `to_block`: 400. Wins over `from_date`.
    #[param(required = false, minimum = 0)]
    from_block: i64,
    /// Only transfers in this block or earlier (inclusive). A non-negative integer; negative
    /// or not an integer: 400. Wins over `to_date`.
    #[param(required = false, minimum = 0)]
    to_block: i64,
    /// Only transfers in blocks of this time or later (inclusive): Unix seconds, or ISO 8601
    /// (`2023-03-20`, `2023-03-20T08:37:35Z`, `2023-03-20T10:37:35+02:00`; no zone is UTC).
    /// Anything else, or later than `to_date`: 400. Ignored when `from_block` is given.
    #[param(required = false)]
    from_date: String,
    /// Only transfers in blocks of this time or earlier (inclusive), written as `from_date`.
    /// Ignored when `to_block` is given.
    #[param(required = false)]
    to_date: String,
    /// The page size: an integer from 1 to 100, default 100. Out of range or not an integer:
    /// 400.
    #[param(required = false, minimum = 1, maximum = 100, default = 100)]
    limit: i64,
    /// `DESC` (newest first, the default) or `ASC` (oldest first); any letter case.
    #[param(value_type = OrderList, required = false)]
    order: String,
    /// The `cursor` of the previous answer, to get the next page. It is opaque and bound to
    /// the query it came from (the order included): a tampered, foreign or malformed cursor is
    /// a 400.
    #[param(required = false, max_length = 4096)]
    cursor: String,
}

/// The query parameters of `GET /{address}/nft/transfers`, as
/// [`crate::rest::params::NftTransferParams::parse_wallet`] parses them.
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)] // Describes the query string; never built.
pub struct WalletNftTransferQueryParams {
    /// The chain to query: a name or a `0x` hex chain id (hex ids in any letter case). Default
    /// `eth` (`0x1`). Any other value is a 400.
    #[param(value_type = ChainList, required = false)]
    chain: String,
    /// Only moves in this block or later (inclusive). A non-negative integer; negative, not an
    /// integer, or greater than `to_block`: 400. Wins over `from_date`.
    #[param(required = false, minimum = 0)]
    from_block: i64,
    /// Only moves in this block or earlier (inclusive). A non-negative integer; negative or not
    /// an integer: 400. Wins over `to_date`.
    #[param(required = false, minimum = 0)]
    to_block: i64,
    /// Only moves in blocks of this time or later (inclusive): Unix seconds, or ISO 8601
    /// (`2023-03-20`, `2023-03-20T08:37:35Z`, `2023-03-20T10:37:35+02:00`; no zone is UTC).
    /// Anything else, or later than `to_date`: 400. Ignored when `from_block` is given.
    #[param(required = false)]
    from_date: String,
    /// Only moves in blocks of this time or earlier (inclusive), written as `from_date`.
    /// Ignored when `to_block` is given.
    #[param(required = false)]
    to_date: String,
    /// How token ids are written: `decimal` (default) or `hex`.
    #[param(value_type = TokenIdFormatSchema, required = false)]
    format: String,
    /// The page size: an integer from 1 to 100, default 100. Out of range or not an integer:
    /// 400.
    #[param(required = false, minimum = 1, maximum = 100, default = 100)]
    limit: i64,
    /// `DESC` (newest first, the default) or `ASC` (oldest first); any letter case.
    #[param(value_type = OrderList, required = false)]
    order: String,
    /// The `cursor` of the previous answer, to get the next page. It is opaque and bound to
    /// the query it came from (the order included): a tampered, foreign or malformed cursor is
    /// a 400.
    #[param(required = false, max_length = 4096)]
    cursor: String,
    /// Only moves of these collections. Repeat the key for several values (`name=a&name=b`);
    /// the bracket (`name[]=a&name[]=b`), indexed (`name[0]=a&name[1]=b`) and comma-separated
    /// (`name=a,b`) forms work too, in any mix. Up to 100 addresses.
    #[param(value_type = Vec<AddressSchema>, required = false, style = Form, explode, max_items = 100)]
    contract_addresses: Vec<String>,
}

/// The query parameters of `GET /nft/{address}/transfers`, as
/// [`crate::rest::params::NftTransferParams::parse_collection`] parses them.
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)] // Describes the query string; never built.
pub struct CollectionNftTransferQueryParams {
    /// The chain to query: a name or a `0x` hex chain id (hex ids in any letter case). Default
    /// `eth` (`0x1`). Any other value is a 400.
    #[param(value_type = ChainList, required = false)]
    chain: String,
    /// Only moves in this block or later (inclusive). A non-negative integer; negative, not an
    /// integer, or greater than `to_block`: 400. Wins over `from_date`.
    #[param(required = false, minimum = 0)]
    from_block: i64,
    /// Only moves in this block or earlier (inclusive). A non-negative integer; negative or not
    /// an integer: 400. Wins over `to_date`.
    #[param(required = false, minimum = 0)]
    to_block: i64,
    /// Only moves in blocks of this time or later (inclusive): Unix seconds, or ISO 8601
    /// (`2023-03-20`, `2023-03-20T08:37:35Z`, `2023-03-20T10:37:35+02:00`; no zone is UTC).
    /// Anything else, or later than `to_date`: 400. Ignored when `from_block` is given.
    #[param(required = false)]
    from_date: String,
    /// Only moves in blocks of this time or earlier (inclusive), written as `from_date`.
    /// Ignored when `to_block` is given.
    #[param(required = false)]
    to_date: String,
    /// How token ids are written: `decimal` (default) or `hex`.
    #[param(value_type = TokenIdFormatSchema, required = false)]
    format: String,
    /// The page size: an integer from 1 to 100, default 100. Out of range or not an integer:
    /// 400.
    #[param(required = false, minimum = 1, maximum = 100, default = 100)]
    limit: i64,
    /// `DESC` (newest first, the default) or `ASC` (oldest first); any letter case.
    #[param(value_type = OrderList, required = false)]
    order: String,
    /// The `cursor` of the previous answer, to get the next page. It is opaque and bound to
    /// the query it came from (the order included): a tampered, foreign or malformed cursor is
    /// a 400.
    #[param(required = false, max_length = 4096)]
    cursor: String,
}

/// The query parameters of `GET /nft/{address}/owners`, `GET /nft/{address}/{token_id}/owners`
/// and `GET /nft/{address}`, as [`crate::rest::params::OwnersParams::parse`] and
/// [`crate::rest::params::CollectionNftsParams::parse`] parse them.
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)] // Describes the query string; never built.
pub struct OwnersQueryParams {
    /// The chain to query: a name or a `0x` hex chain id (hex ids in any letter case). Default
    /// `eth` (`0x1`). Any other value is a 400.
    #[param(value_type = ChainList, required = false)]
    chain: String,
    /// How token ids are written: `decimal` (default) or `hex`.
    #[param(value_type = TokenIdFormatSchema, required = false)]
    format: String,
    /// The page size: an integer from 1 to 100, default 100. Out of range or not an integer:
    /// 400.
    #[param(required = false, minimum = 1, maximum = 100, default = 100)]
    limit: i64,
    /// The `cursor` of the previous answer, to get the next page. It is opaque and bound to
    /// the query it came from: a tampered, foreign or malformed cursor is a 400.
    #[param(required = false, max_length = 4096)]
    cursor: String,
    /// `true` fills `normalized_metadata` (name, description, image, … from the metadata).
    #[param(rename = "normalizeMetadata", required = false, default = false)]
    normalize_metadata: bool,
    /// `true` fills `media` (preview status and 100/250/500 px images).
    #[param(required = false, default = false)]
    media_items: bool,
}

/// The query parameters of `GET /{address}/nft/collections`, as
/// [`crate::rest::params::CollectionsParams::parse`] parses them.
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)] // Describes the query string; never built.
pub struct CollectionsQueryParams {
    /// The chain to query: a name or a `0x` hex chain id (hex ids in any letter case). Default
    /// `eth` (`0x1`). Any other value is a 400.
    #[param(value_type = ChainList, required = false)]
    chain: String,
    /// The page size: an integer from 1 to 100, default 100. Out of range or not an integer:
    /// 400.
    #[param(required = false, minimum = 1, maximum = 100, default = 100)]
    limit: i64,
    /// `true` leaves out collections marked possible spam.
    #[param(required = false, default = false)]
    exclude_spam: bool,
    /// `true` adds `count`: how many of each collection's tokens the wallet holds.
    #[param(required = false, default = false)]
    token_counts: bool,
    /// The `cursor` of the previous answer, to get the next page. It is opaque and bound to
    /// the query it came from: a tampered, foreign or malformed cursor is a 400.
    #[param(required = false, max_length = 4096)]
    cursor: String,
}

/// The query parameters of `GET /{address}/erc20`, as
/// [`crate::rest::params::BalanceParams::parse`] parses them.
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)] // Describes the query string; never built.
pub struct BalanceQueryParams {
    /// The chain to query: a name or a `0x` hex chain id (hex ids in any letter case). Default
    /// `eth` (`0x1`). Any other value is a 400.
    #[param(value_type = ChainList, required = false)]
    chain: String,
    /// The balances after this block (inclusive), a non-negative integer of at most
    /// 9223372036854775807; default: now. Negative or not an integer: 400.
    #[param(required = false, minimum = 0)]
    to_block: i64,
    /// Only these tokens. Repeated keys (`token_addresses=a&token_addresses=b`), brackets
    /// (`token_addresses[]=a`), indexed (`token_addresses[0]=a`) and comma-separated forms all
    /// work. Up to 100 addresses.
    #[param(value_type = Vec<AddressSchema>, required = false, style = Form, explode, max_items = 100)]
    token_addresses: Vec<String>,
    /// `true` (the default, as in v2.2) leaves out tokens marked possible spam.
    #[param(required = false, default = true)]
    exclude_spam: bool,
}
