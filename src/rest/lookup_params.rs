//! The OpenAPI descriptions of the query parameters of the lookup routes (blocks, token
//! metadata, native balances), as [`super::params`] parses them: the counterpart of
//! [`super::schemas`] for these routes, checked by `tests/api/openapi_doc.rs` the same way.

use utoipa::IntoParams;

use super::schemas::{AddressSchema, ChainList};

/// The query parameters of `GET /dateToBlock`, as
/// [`crate::rest::params::DateToBlockParams::parse`] parses them.
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)] // Describes the query string; never built.
pub struct DateToBlockQueryParams {
    /// The chain to query: a name or a `0x` hex chain id (hex ids in any letter case). Default
    /// `eth` (`0x1`). Any other value is a 400.
    #[param(value_type = ChainList, required = false)]
    chain: String,
    /// The date: Unix seconds (`1660245125`), Unix milliseconds (`1660245125000`: digits
    /// beyond the last second of the year 9999), or ISO 8601 (`2022-08-11`,
    /// `2022-08-11T19:12:05Z`, `2022-08-11T21:12:05+02:00`; no zone means UTC). Required;
    /// anything else is a 400.
    #[param(required = true, example = "2022-08-11T19:12:05.000Z")]
    date: String,
}

/// The query parameters of `GET /erc20/metadata`, as
/// [`crate::rest::params::TokenMetadataParams::parse`] parses them.
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)] // Describes the query string; never built.
pub struct TokenMetadataQueryParams {
    /// The chain to query: a name or a `0x` hex chain id (hex ids in any letter case). Default
    /// `eth` (`0x1`). Any other value is a 400.
    #[param(value_type = ChainList, required = false)]
    chain: String,
    /// The token contracts, 1 to 25 (repeats count once). Repeated keys
    /// (`addresses=a&addresses=b`), brackets (`addresses[]=a`), indexed (`addresses[0]=a`) and
    /// comma-separated forms all work.
    #[param(value_type = Vec<AddressSchema>, required = true, style = Form, explode, min_items = 1, max_items = 25)]
    addresses: Vec<String>,
}

/// The query parameters of `GET /erc20/metadata/symbols`, as
/// [`crate::rest::params::TokenSymbolsParams::parse`] parses them.
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)] // Describes the query string; never built.
pub struct TokenSymbolsQueryParams {
    /// The chain to query: a name or a `0x` hex chain id (hex ids in any letter case). Default
    /// `eth` (`0x1`). Any other value is a 400.
    #[param(value_type = ChainList, required = false)]
    chain: String,
    /// The symbols, 1 to 25, each at most 64 printable characters, compared without regard to
    /// letter case. Repeated keys (`symbols=a&symbols=b`), brackets (`symbols[]=a`), indexed
    /// (`symbols[0]=a`) and comma-separated forms all work.
    #[param(required = true, style = Form, explode, min_items = 1, max_items = 25)]
    symbols: Vec<String>,
}

/// The query parameters of `GET /{address}/balance`, as
/// [`crate::rest::params::NativeBalanceParams::parse_one`] parses them.
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)] // Describes the query string; never built.
pub struct NativeBalanceQueryParams {
    /// The chain to query: a name or a `0x` hex chain id (hex ids in any letter case). Default
    /// `eth` (`0x1`). Any other value is a 400.
    #[param(value_type = ChainList, required = false)]
    chain: String,
    /// The block to read the balance at, a non-negative integer; default: the chain's head. A
    /// block after the head, negative or not an integer: 400.
    #[param(required = false, minimum = 0)]
    to_block: i64,
}

/// The query parameters of `GET /wallets/balances`, as
/// [`crate::rest::params::NativeBalanceParams::parse_many`] parses them.
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)] // Describes the query string; never built.
pub struct NativeBalancesQueryParams {
    /// The chain to query: a name or a `0x` hex chain id (hex ids in any letter case). Default
    /// `eth` (`0x1`). Any other value is a 400.
    #[param(value_type = ChainList, required = false)]
    chain: String,
    /// The block to read the balances at, a non-negative integer; default: the chain's head. A
    /// block after the head, negative or not an integer: 400.
    #[param(required = false, minimum = 0)]
    to_block: i64,
    /// The wallets, 1 to 25 (repeats count once). Repeated keys
    /// (`wallet_addresses=a&wallet_addresses=b`), brackets (`wallet_addresses[]=a`), indexed
    /// (`wallet_addresses[0]=a`) and comma-separated forms all work.
    #[param(value_type = Vec<AddressSchema>, required = true, style = Form, explode, min_items = 1, max_items = 25)]
    wallet_addresses: Vec<String>,
}
