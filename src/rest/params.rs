//! Query-string parsing: the one place REST parameters become boundary types.
//!
//! The raw query string is decoded with `form_urlencoded` (so `+` is a space and `%5B%5D` is
//! `[]`), then every key loses an array suffix: `a[]` and `a[0]` both become `a`. A list
//! parameter therefore accepts all the encodings clients use, in any mix:
//!
//! - repeated keys `a=1&a=2` (the Python SDK),
//! - brackets `a[]=1&a[]=2` (the JS SDK),
//! - indexed `a[0]=1&a[1]=2` (the documentation's samples),
//! - a single value `a=1`, and comma-separated values `a=1,2`.
//!
//! Address lists are sorted and de-duplicated by [`AddressList`], so the order of the entries
//! does not matter. Scalar parameters must appear at most once. Empty values (`limit=`) count as
//! absent, so the default applies. Booleans are `true` or `false` (any letter case). Unknown
//! parameters are ignored, as the Moralis API does.

use std::collections::HashMap;

use crate::query::{BlockRange, CursorError, NftQuery, TransferQuery};
use crate::types::{Address, AddressList, BlockNumber, Chain, PageSize, ParseError, TokenIdFormat};

use super::error::ApiError;

/// Longest cursor accepted; ours are far shorter.
const MAX_CURSOR_LEN: usize = 4096;

/// A decoded query string: parameter name (array suffix removed) to its values, in order.
#[derive(Debug, Default)]
pub struct RawParams {
    values: HashMap<String, Vec<String>>,
}

/// `a[]` and `a[7]` name the parameter `a`; any other key is kept as it is.
fn base_name(key: &str) -> &str {
    if let Some(open_and_inside) = key.strip_suffix(']') {
        if let Some(open) = open_and_inside.rfind('[') {
            let inside = &open_and_inside[open + 1..];
            if open > 0 && inside.bytes().all(|b| b.is_ascii_digit()) {
                return &open_and_inside[..open];
            }
        }
    }
    key
}

impl RawParams {
    /// Decodes a raw query string (without the `?`); `None` is an empty one.
    pub fn parse(raw: Option<&str>) -> Self {
        let mut values: HashMap<String, Vec<String>> = HashMap::new();
        for (k, v) in form_urlencoded::parse(raw.unwrap_or("").as_bytes()) {
            values
                .entry(base_name(&k).to_string())
                .or_default()
                .push(v.into_owned());
        }
        Self { values }
    }

    /// The non-empty values given for `name`.
    fn given(&self, name: &str) -> impl Iterator<Item = &str> {
        self.values
            .get(name)
            .into_iter()
            .flatten()
            .map(|v| v.trim())
            .filter(|v| !v.is_empty())
    }

    /// The one value of a scalar parameter, if given.
    pub fn single(&self, name: &'static str) -> Result<Option<&str>, ApiError> {
        let mut it = self.given(name);
        let first = it.next();
        let more = it.count();
        if more > 0 {
            return Err(ApiError::bad(
                name,
                format!("given {} times; expected a single value", more + 1),
            ));
        }
        Ok(first)
    }

    /// A scalar parameter parsed by `parse`, or `default` when absent.
    fn scalar<T>(
        &self,
        name: &'static str,
        default: T,
        parse: impl FnOnce(&str) -> Result<T, ParseError>,
    ) -> Result<T, ApiError> {
        match self.single(name)? {
            Some(v) => parse(v).map_err(|e| ApiError::parse(name, e)),
            None => Ok(default),
        }
    }

    /// Every item of a list parameter, across all encodings, comma-separated values split.
    pub fn list(&self, name: &str) -> Vec<&str> {
        self.given(name)
            .flat_map(|v| v.split(','))
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .collect()
    }

    /// `chain`: a name or hex id; default `eth`.
    pub fn chain(&self) -> Result<Chain, ApiError> {
        self.scalar("chain", Chain::ETH, Chain::parse)
    }

    /// `limit`: 1..=100; default 100.
    pub fn page_size(&self) -> Result<PageSize, ApiError> {
        self.scalar("limit", PageSize::default(), PageSize::parse)
    }

    /// A boolean parameter: `true` or `false`.
    pub fn boolean(&self, name: &'static str, default: bool) -> Result<bool, ApiError> {
        self.scalar(name, default, parse_bool)
    }

    /// An address-list parameter: up to 100 addresses.
    pub fn addresses(&self, name: &'static str) -> Result<AddressList, ApiError> {
        AddressList::parse(&self.list(name)).map_err(|e| ApiError::parse(name, e))
    }

    /// A block-number parameter, if given.
    pub fn block(&self, name: &'static str) -> Result<Option<BlockNumber>, ApiError> {
        self.scalar(name, None, |v| BlockNumber::parse(v).map(Some))
    }

    /// `cursor`, if given. Its content is checked by the query service.
    pub fn cursor(&self) -> Result<Option<String>, ApiError> {
        match self.single("cursor")? {
            Some(c) if c.len() > MAX_CURSOR_LEN => {
                Err(ApiError::bad("cursor", CursorError::Invalid.to_string()))
            }
            c => Ok(c.map(str::to_string)),
        }
    }

    /// `from_block` and `to_block`, with `from_block <= to_block`.
    pub fn block_range(&self) -> Result<BlockRange, ApiError> {
        let from = self.block("from_block")?;
        let to = self.block("to_block")?;
        BlockRange::new(from, to).map_err(|_| {
            let (f, t) = (from.map_or(0, |b| b.0), to.map_or(0, |b| b.0));
            ApiError::bad(
                "from_block",
                format!("{f} is greater than to_block {t}; expected from_block <= to_block"),
            )
        })
    }
}

/// `true` or `false`, in any letter case.
fn parse_bool(s: &str) -> Result<bool, ParseError> {
    if s.eq_ignore_ascii_case("true") {
        Ok(true)
    } else if s.eq_ignore_ascii_case("false") {
        Ok(false)
    } else {
        Err(ParseError(format!(
            "'{s}' is not a boolean; expected true or false"
        )))
    }
}

/// Everything `GET /{address}/nft` was asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NftParams {
    /// The filters handed to the query service.
    pub query: NftQuery,
    /// The cursor of the page to read; `None` for the first page.
    pub cursor: Option<String>,
    /// How `token_id` is written.
    pub format: TokenIdFormat,
    /// `normalizeMetadata`: whether `normalized_metadata` is filled in.
    pub normalize_metadata: bool,
    /// `media_items`: whether `media` is asked for.
    pub media_items: bool,
}

impl NftParams {
    /// Parses the path's `address` and the raw query string.
    pub fn parse(address: &str, raw: Option<&str>) -> Result<Self, ApiError> {
        let p = RawParams::parse(raw);
        let owner = Address::parse(address).map_err(|e| ApiError::parse("address", e))?;
        let query = NftQuery {
            chain: p.chain()?,
            owner,
            token_addresses: p.addresses("token_addresses")?,
            exclude_spam: p.boolean("exclude_spam", false)?,
            with_total: !p.boolean("disable_total", true)?,
            page_size: p.page_size()?,
        };
        Ok(Self {
            query,
            cursor: p.cursor()?,
            format: p.scalar("format", TokenIdFormat::Decimal, TokenIdFormat::parse)?,
            normalize_metadata: p.boolean("normalizeMetadata", false)?,
            media_items: p.boolean("media_items", false)?,
        })
    }
}

/// Everything `GET /erc20/transfers` was asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransferParams {
    /// The filters handed to the query service.
    pub query: TransferQuery,
    /// The cursor of the page to read; `None` for the first page.
    pub cursor: Option<String>,
}

impl TransferParams {
    /// Parses the raw query string.
    pub fn parse(raw: Option<&str>) -> Result<Self, ApiError> {
        let p = RawParams::parse(raw);
        let query = TransferQuery {
            chain: p.chain()?,
            wallets: p.addresses("wallet_addresses")?,
            contracts: p.addresses("contract_addresses")?,
            exclude_wallets: p.addresses("exclude_wallets")?,
            exclude_contracts: p.addresses("exclude_contracts")?,
            blocks: p.block_range()?,
            page_size: p.page_size()?,
        };
        Ok(Self {
            query,
            cursor: p.cursor()?,
        })
    }
}

#[cfg(test)]
#[path = "params_tests.rs"]
mod tests;
