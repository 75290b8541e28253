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
//! does not matter. Scalar parameters must appear at most once. An empty value of a parameter
//! a route reads (`chain=`, `limit=`, `a=1,,2`) is a 400, as GraphQL answers an empty argument:
//! leave a parameter out to get its default. Booleans are `true` or `false` (any letter case).
//! Unknown parameters are ignored, as the Moralis API does.
//!
//! Each route reads its query string through its table in [`super::spec`] (the table the
//! OpenAPI document is written from): a parameter outside the table is never read (asking for
//! one is our bug, a 500), booleans take the table's defaults, and the cursor and batch limits
//! are the spec's constants.

use std::collections::HashMap;

use crate::query::{
    BlockRange, CollectionNftsQuery, CursorError, DateRange, Include, NftOwnersQuery, NftQuery,
    NftTransferQuery, TokenBalanceQuery, TokenHoldersQuery, TokenStatsQuery, TransferQuery,
    WalletCollectionsQuery,
};
use crate::types::{
    parse_date, parse_instant, Address, AddressList, BlockNumber, Chain, DateBound, PageSize,
    ParseError, SortOrder, TokenIdFormat, Uint256,
};

use super::error::ApiError;
use super::spec::{self, Kind, ParamSpec, MAX_BATCH, MAX_CURSOR_LEN};

/// A decoded query string, read through its route's table: parameter name (array suffix
/// removed) to its values, in order.
#[derive(Debug)]
pub struct RawParams {
    values: HashMap<String, Vec<String>>,
    spec: &'static [ParamSpec],
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
    /// Decodes a raw query string (without the `?`; `None` is an empty one) of the route whose
    /// parameters are `spec`.
    pub fn read(spec: &'static [ParamSpec], raw: Option<&str>) -> Self {
        let mut values: HashMap<String, Vec<String>> = HashMap::new();
        for (k, v) in form_urlencoded::parse(raw.unwrap_or("").as_bytes()) {
            values
                .entry(base_name(&k).to_string())
                .or_default()
                .push(v.into_owned());
        }
        Self { values, spec }
    }

    /// The spec of `name` in the route's table; a name outside it is our bug.
    fn spec(&self, name: &'static str) -> Result<&'static ParamSpec, ApiError> {
        self.spec
            .iter()
            .find(|p| p.name == name)
            .ok_or_else(|| ApiError::Internal {
                context: "query parameters",
                detail: format!("{name} is not in the route's parameter table"),
            })
    }

    /// The values given for `name`, trimmed; an empty one is refused.
    fn given(&self, name: &'static str) -> Result<Vec<&str>, ApiError> {
        self.spec(name)?;
        let values: Vec<&str> = self
            .values
            .get(name)
            .into_iter()
            .flatten()
            .map(|v| v.trim())
            .collect();
        if values.iter().any(|v| v.is_empty()) {
            return Err(empty(name));
        }
        Ok(values)
    }

    /// The one value of a scalar parameter, if given.
    pub fn single(&self, name: &'static str) -> Result<Option<&str>, ApiError> {
        match self.given(name)?.as_slice() {
            [] => Ok(None),
            [one] => Ok(Some(one)),
            more => Err(ApiError::bad(
                name,
                format!("given {} times; expected a single value", more.len()),
            )),
        }
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

    /// Every item of a list parameter, across all encodings, comma-separated values split; an
    /// empty item (`a=1,,2`) is refused.
    pub fn list(&self, name: &'static str) -> Result<Vec<&str>, ApiError> {
        let items: Vec<&str> = self
            .given(name)?
            .into_iter()
            .flat_map(|v| v.split(','))
            .map(str::trim)
            .collect();
        if items.iter().any(|v| v.is_empty()) {
            return Err(empty(name));
        }
        Ok(items)
    }

    /// `chain`: a name or hex id; default `eth`.
    pub fn chain(&self) -> Result<Chain, ApiError> {
        self.scalar("chain", Chain::ETH, Chain::parse)
    }

    /// `limit`: 1..=100; default 100.
    pub fn page_size(&self) -> Result<PageSize, ApiError> {
        self.scalar("limit", PageSize::default(), PageSize::parse)
    }

    /// A boolean parameter: `true` or `false`; its table gives the default.
    pub fn boolean(&self, name: &'static str) -> Result<bool, ApiError> {
        let default = matches!(self.spec(name)?.kind, Kind::Bool { default: true });
        self.scalar(name, default, parse_bool)
    }

    /// An address-list parameter: up to 100 addresses.
    pub fn addresses(&self, name: &'static str) -> Result<AddressList, ApiError> {
        AddressList::parse(&self.list(name)?).map_err(|e| ApiError::parse(name, e))
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

impl RawParams {
    /// `order`: `ASC` or `DESC` (any letter case); default `DESC`.
    pub fn order(&self) -> Result<SortOrder, ApiError> {
        self.scalar("order", SortOrder::Desc, SortOrder::parse)
    }

    /// `to_date` of a holdings question (Unix seconds or ISO 8601), checked, and dropped when
    /// `to_block` (`block`) is given: the block wins.
    pub fn holdings_date(&self, block: Option<u64>) -> Result<Option<u64>, ApiError> {
        let date = self.scalar("to_date", None, |v| parse_date(v, DateBound::To).map(Some))?;
        Ok(date.filter(|_| block.is_none()))
    }

    /// `from_date` and `to_date` (Unix seconds or ISO 8601), with `from_date <= to_date`. Each
    /// is checked even where `blocks` bounds the same side, and then dropped: a block bound
    /// wins (v2.2).
    pub fn dates(&self, blocks: &BlockRange) -> Result<DateRange, ApiError> {
        let from = self.scalar("from_date", None, |v| {
            parse_date(v, DateBound::From).map(Some)
        })?;
        let to = self.scalar("to_date", None, |v| parse_date(v, DateBound::To).map(Some))?;
        let from = from.filter(|_| blocks.from.is_none());
        let to = to.filter(|_| blocks.to.is_none());
        DateRange::new(from, to).map_err(|e| ApiError::parse("from_date", e))
    }
}

/// Settles a holdings question's `to_date` into the block it is as of (`at_block`), through
/// the stored headers ([`QueryService::holdings_block_at`]); nothing when no date was asked.
pub async fn settle_date(
    service: &crate::query::QueryService,
    chain: crate::types::Chain,
    at_block: &mut Option<u64>,
    to_date: Option<u64>,
) -> Result<(), ApiError> {
    if let Some(secs) = to_date {
        *at_block = service
            .holdings_block_at(chain, secs)
            .await
            .map_err(|e| ApiError::from_query("the block of to_date", e))?;
    }
    Ok(())
}

/// The answer to an empty value of `name`.
fn empty(name: &'static str) -> ApiError {
    ApiError::bad(
        name,
        "is empty; give a value, or leave the parameter out for its default",
    )
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
    /// `to_date`, when asked without `to_block`: the handler turns it into the block the
    /// answer is as of.
    pub to_date: Option<u64>,
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
        let p = RawParams::read(spec::WALLET_NFTS, raw);
        let owner = Address::parse(address).map_err(|e| ApiError::parse("address", e))?;
        let at_block = p.block("to_block")?.map(|b| b.0);
        let to_date = p.holdings_date(at_block)?;
        let query = NftQuery {
            chain: p.chain()?,
            owner,
            token_addresses: p.addresses("token_addresses")?,
            exclude_spam: p.boolean("exclude_spam")?,
            with_total: !p.boolean("disable_total")?,
            page_size: p.page_size()?,
            at_block,
        };
        let shape = NftShape::parse(&p)?;
        Ok(Self {
            query,
            cursor: p.cursor()?,
            to_date,
            format: shape.format,
            normalize_metadata: shape.normalize_metadata,
            media_items: shape.media_items,
        })
    }
}

/// How NFT records are written: the options every NFT route shares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NftShape {
    /// How `token_id` is written.
    pub format: TokenIdFormat,
    /// `normalizeMetadata`: whether `normalized_metadata` is filled in.
    pub normalize_metadata: bool,
    /// `media_items`: whether `media` is asked for.
    pub media_items: bool,
}

impl NftShape {
    /// The related rows an NFT record shows: its collection and token row always, its media
    /// when `media_items=true`.
    pub fn include(&self) -> Include {
        Include {
            contracts: true,
            tokens: true,
            labels: false,
            media: self.media_items,
        }
    }

    /// Reads `format`, `normalizeMetadata` and `media_items`.
    fn parse(p: &RawParams) -> Result<Self, ApiError> {
        Ok(Self {
            format: p.scalar("format", TokenIdFormat::Decimal, TokenIdFormat::parse)?,
            normalize_metadata: p.boolean("normalizeMetadata")?,
            media_items: p.boolean("media_items")?,
        })
    }
}

impl NftParams {
    /// How the records are written.
    pub fn shape(&self) -> NftShape {
        NftShape {
            format: self.format,
            normalize_metadata: self.normalize_metadata,
            media_items: self.media_items,
        }
    }
}

/// Everything `GET /nft/{address}/owners` or `GET /nft/{address}/{token_id}/owners` was asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnersParams {
    /// The filters handed to the query service.
    pub query: NftOwnersQuery,
    /// The cursor of the page to read; `None` for the first page.
    pub cursor: Option<String>,
    /// `to_date`, when asked without `to_block`: the handler turns it into the block the
    /// answer is as of.
    pub to_date: Option<u64>,
    /// How the records are written.
    pub shape: NftShape,
}

impl OwnersParams {
    /// Parses the path's collection `address`, its `token_id` if any, and the query string.
    pub fn parse(
        address: &str,
        token_id: Option<&str>,
        raw: Option<&str>,
    ) -> Result<Self, ApiError> {
        let p = RawParams::read(spec::NFT_OWNERS, raw);
        let contract = Address::parse(address).map_err(|e| ApiError::parse("address", e))?;
        let token_id = token_id
            .map(|t| Uint256::parse(t).map_err(|e| ApiError::parse("token_id", e)))
            .transpose()?;
        let at_block = p.block("to_block")?.map(|b| b.0);
        let to_date = p.holdings_date(at_block)?;
        Ok(Self {
            query: NftOwnersQuery {
                chain: p.chain()?,
                contract,
                token_id,
                page_size: p.page_size()?,
                at_block,
            },
            cursor: p.cursor()?,
            to_date,
            shape: NftShape::parse(&p)?,
        })
    }
}

/// Everything `GET /nft/{address}` was asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CollectionNftsParams {
    /// The filters handed to the query service.
    pub query: CollectionNftsQuery,
    /// The cursor of the page to read; `None` for the first page.
    pub cursor: Option<String>,
    /// `to_date`, when asked without `to_block`: the handler turns it into the block the
    /// answer is as of.
    pub to_date: Option<u64>,
    /// How the records are written.
    pub shape: NftShape,
}

impl CollectionNftsParams {
    /// Parses the path's collection `address`, its `token_id` if any (`GET
    /// /nft/{address}/{token_id}`: one NFT), and the raw query string.
    pub fn parse(
        address: &str,
        token_id: Option<&str>,
        raw: Option<&str>,
    ) -> Result<Self, ApiError> {
        // One NFT's record is the NFT now; the list may be asked as of a block.
        let table = match token_id {
            Some(_) => spec::NFT_LISTS,
            None => spec::COLLECTION_NFTS,
        };
        let p = RawParams::read(table, raw);
        let contract = Address::parse(address).map_err(|e| ApiError::parse("address", e))?;
        let token = token_id
            .map(|t| Uint256::parse(t).map_err(|e| ApiError::parse("token_id", e)))
            .transpose()?;
        let (at_block, to_date) = match token {
            Some(_) => (None, None),
            None => {
                let at_block = p.block("to_block")?.map(|b| b.0);
                (at_block, p.holdings_date(at_block)?)
            }
        };
        Ok(Self {
            query: CollectionNftsQuery {
                chain: p.chain()?,
                contract,
                token,
                page_size: p.page_size()?,
                at_block,
            },
            cursor: p.cursor()?,
            to_date,
            shape: NftShape::parse(&p)?,
        })
    }
}

/// Everything `GET /{address}/erc20` was asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BalanceParams {
    /// The filters handed to the query service (its page size is unused: the route answers
    /// every balance at once).
    pub query: TokenBalanceQuery,
}

impl BalanceParams {
    /// Parses the path's wallet `address` and the raw query string. `exclude_spam` defaults to
    /// `true`, as in v2.2.
    pub fn parse(address: &str, raw: Option<&str>) -> Result<Self, ApiError> {
        let p = RawParams::read(spec::WALLET_BALANCES, raw);
        let owner = Address::parse(address).map_err(|e| ApiError::parse("address", e))?;
        Ok(Self {
            query: TokenBalanceQuery {
                chain: p.chain()?,
                owner,
                to_block: p.block("to_block")?,
                token_addresses: p.addresses("token_addresses")?,
                exclude_spam: p.boolean("exclude_spam")?,
                page_size: PageSize::default(),
            },
        })
    }
}

/// Everything `GET /{address}/nft/collections` was asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CollectionsParams {
    /// The filters handed to the query service.
    pub query: WalletCollectionsQuery,
    /// The cursor of the page to read; `None` for the first page.
    pub cursor: Option<String>,
    /// `to_date`, when asked without `to_block`: the handler turns it into the block the
    /// answer is as of.
    pub to_date: Option<u64>,
    /// `token_counts`: whether each record carries `count`.
    pub token_counts: bool,
}

impl CollectionsParams {
    /// Parses the path's wallet `address` and the raw query string.
    pub fn parse(address: &str, raw: Option<&str>) -> Result<Self, ApiError> {
        let p = RawParams::read(spec::WALLET_COLLECTIONS, raw);
        let owner = Address::parse(address).map_err(|e| ApiError::parse("address", e))?;
        let at_block = p.block("to_block")?.map(|b| b.0);
        let to_date = p.holdings_date(at_block)?;
        Ok(Self {
            query: WalletCollectionsQuery {
                chain: p.chain()?,
                owner,
                exclude_spam: p.boolean("exclude_spam")?,
                page_size: p.page_size()?,
                at_block,
            },
            cursor: p.cursor()?,
            to_date,
            token_counts: p.boolean("token_counts")?,
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
    /// Parses the raw query string of `GET /erc20/transfers` (v2: no dates, newest first).
    pub fn parse(raw: Option<&str>) -> Result<Self, ApiError> {
        let p = RawParams::read(spec::ERC20_TRANSFERS, raw);
        let query = TransferQuery {
            chain: p.chain()?,
            wallets: p.addresses("wallet_addresses")?,
            contracts: p.addresses("contract_addresses")?,
            exclude_wallets: p.addresses("exclude_wallets")?,
            exclude_contracts: p.addresses("exclude_contracts")?,
            blocks: p.block_range()?,
            dates: DateRange::default(),
            order: SortOrder::Desc,
            page_size: p.page_size()?,
        };
        Ok(Self {
            query,
            cursor: p.cursor()?,
        })
    }

    /// Parses `GET /{address}/erc20/transfers` (v2.2): the transfers that the wallet in the
    /// path sent or received, optionally of `contract_addresses` only.
    pub fn parse_wallet(address: &str, raw: Option<&str>) -> Result<Self, ApiError> {
        let p = RawParams::read(spec::WALLET_TRANSFERS, raw);
        let wallet = Address::parse(address).map_err(|e| ApiError::parse("address", e))?;
        let contracts = p.addresses("contract_addresses")?;
        Self::v2_2(&p, AddressList::one(wallet), contracts)
    }

    /// Parses `GET /erc20/{address}/transfers` (v2.2): the transfers of the token contract in
    /// the path.
    pub fn parse_token(address: &str, raw: Option<&str>) -> Result<Self, ApiError> {
        let p = RawParams::read(spec::TOKEN_TRANSFERS, raw);
        let token = Address::parse(address).map_err(|e| ApiError::parse("address", e))?;
        Self::v2_2(&p, AddressList::default(), AddressList::one(token))
    }

    /// What the two v2.2 transfer routes share: blocks or dates, `order`, `limit`, `cursor`.
    fn v2_2(p: &RawParams, wallets: AddressList, contracts: AddressList) -> Result<Self, ApiError> {
        let blocks = p.block_range()?;
        let query = TransferQuery {
            chain: p.chain()?,
            wallets,
            contracts,
            exclude_wallets: AddressList::default(),
            exclude_contracts: AddressList::default(),
            dates: p.dates(&blocks)?,
            blocks,
            order: p.order()?,
            page_size: p.page_size()?,
        };
        Ok(Self {
            query,
            cursor: p.cursor()?,
        })
    }
}

/// Everything `GET /{address}/nft/transfers` or `GET /nft/{address}/transfers` was asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NftTransferParams {
    /// The filters handed to the query service.
    pub query: NftTransferQuery,
    /// The cursor of the page to read; `None` for the first page.
    pub cursor: Option<String>,
    /// How `token_id` is written.
    pub format: TokenIdFormat,
}

impl NftTransferParams {
    /// Parses `GET /{address}/nft/transfers`: the NFTs the wallet in the path sent or
    /// received, optionally of `contract_addresses` only.
    pub fn parse_wallet(address: &str, raw: Option<&str>) -> Result<Self, ApiError> {
        let p = RawParams::read(spec::WALLET_NFT_TRANSFERS, raw);
        let wallet = Address::parse(address).map_err(|e| ApiError::parse("address", e))?;
        let contracts = p.addresses("contract_addresses")?;
        Self::parse_rest(&p, Some(wallet), contracts)
    }

    /// Parses `GET /nft/{address}/transfers`: the moves of the collection in the path.
    pub fn parse_collection(address: &str, raw: Option<&str>) -> Result<Self, ApiError> {
        let p = RawParams::read(spec::COLLECTION_NFT_TRANSFERS, raw);
        let collection = Address::parse(address).map_err(|e| ApiError::parse("address", e))?;
        Self::parse_rest(&p, None, AddressList::one(collection))
    }

    /// Parses `GET /nft/{address}/{token_id}/transfers`: the moves of one token; the token id
    /// in decimal or `0x` hex.
    pub fn parse_token(
        address: &str,
        token_id: &str,
        raw: Option<&str>,
    ) -> Result<(Self, Uint256), ApiError> {
        let token = Uint256::parse(token_id).map_err(|e| ApiError::parse("token_id", e))?;
        Ok((Self::parse_collection(address, raw)?, token))
    }

    /// Parses `GET /nft/transfers`: every collection's moves.
    pub fn parse_all(raw: Option<&str>) -> Result<Self, ApiError> {
        let p = RawParams::read(spec::COLLECTION_NFT_TRANSFERS, raw);
        Self::parse_rest(&p, None, AddressList::default())
    }

    /// Parses `GET /block/{block_number_or_hash}/nft/transfers` but its block, which the caller
    /// sets ([`NftTransferParams::in_block`]) once it has resolved the path's number or hash.
    pub fn parse_block(raw: Option<&str>) -> Result<Self, ApiError> {
        let p = RawParams::read(spec::BLOCK_NFT_TRANSFERS, raw);
        Ok(Self {
            query: NftTransferQuery {
                chain: p.chain()?,
                wallet: None,
                contracts: AddressList::default(),
                blocks: BlockRange::default(),
                dates: DateRange::default(),
                order: p.order()?,
                page_size: p.page_size()?,
            },
            cursor: p.cursor()?,
            format: p.scalar("format", TokenIdFormat::Decimal, TokenIdFormat::parse)?,
        })
    }

    /// The same question, of block `number` only.
    pub fn in_block(mut self, number: u64) -> Self {
        let b = Some(BlockNumber(number));
        self.query.blocks = BlockRange { from: b, to: b };
        self
    }

    /// What both routes share: blocks or dates, `order`, `limit`, `cursor`, `format`.
    fn parse_rest(
        p: &RawParams,
        wallet: Option<Address>,
        contracts: AddressList,
    ) -> Result<Self, ApiError> {
        let blocks = p.block_range()?;
        let query = NftTransferQuery {
            chain: p.chain()?,
            wallet,
            contracts,
            dates: p.dates(&blocks)?,
            blocks,
            order: p.order()?,
            page_size: p.page_size()?,
        };
        Ok(Self {
            query,
            cursor: p.cursor()?,
            format: p.scalar("format", TokenIdFormat::Decimal, TokenIdFormat::parse)?,
        })
    }
}

impl RawParams {
    /// A required parameter's one value.
    fn required(&self, name: &'static str) -> Result<&str, ApiError> {
        self.single(name)?
            .ok_or_else(|| ApiError::bad(name, "is required"))
    }

    /// A required list of 1 to [`MAX_BATCH`] items, in request order, repeats dropped.
    fn batch(&self, name: &'static str) -> Result<Vec<&str>, ApiError> {
        let mut items: Vec<&str> = Vec::new();
        for item in self.list(name)? {
            if !items.contains(&item) {
                items.push(item);
            }
        }
        match items.len() {
            0 => Err(ApiError::bad(name, "is required; give at least one value")),
            n if n > MAX_BATCH => Err(ApiError::bad(
                name,
                format!("{n} entries given; at most {MAX_BATCH} are allowed"),
            )),
            _ => Ok(items),
        }
    }

    /// A required list of addresses ([`RawParams::batch`]), in request order, each once.
    fn address_batch(&self, name: &'static str) -> Result<Vec<Address>, ApiError> {
        let mut out: Vec<Address> = Vec::new();
        for item in self.batch(name)? {
            let a = Address::parse(item).map_err(|e| ApiError::parse(name, e))?;
            if !out.contains(&a) {
                out.push(a);
            }
        }
        Ok(out)
    }
}

impl RawParams {
    /// A [`Kind::Choice`] parameter: one of its words (any letter case), as the table writes
    /// it; its table gives the default.
    pub fn choice(&self, name: &'static str) -> Result<&'static str, ApiError> {
        let Kind::Choice { values, default } = self.spec(name)?.kind else {
            return Err(ApiError::Internal {
                context: "query parameters",
                detail: format!("{name} is not a choice"),
            });
        };
        match self.single(name)? {
            None => Ok(default),
            Some(v) => values
                .iter()
                .find(|w| w.eq_ignore_ascii_case(v))
                .copied()
                .ok_or_else(|| {
                    ApiError::bad(name, format!("'{v}' is not one of {}", values.join(", ")))
                }),
        }
    }

    /// A [`Kind::Chains`] parameter: the chains named, in request order, each once; empty
    /// when left out.
    pub fn chains(&self, name: &'static str) -> Result<Vec<Chain>, ApiError> {
        let mut out: Vec<Chain> = Vec::new();
        for item in self.list(name)? {
            let chain = Chain::parse(item).map_err(|e| ApiError::parse(name, e))?;
            if !out.contains(&chain) {
                out.push(chain);
            }
        }
        if out.len() > spec::MAX_CHAINS {
            return Err(ApiError::bad(
                name,
                format!(
                    "{} chains given; at most {} are allowed",
                    out.len(),
                    spec::MAX_CHAINS
                ),
            ));
        }
        Ok(out)
    }
}

/// The `{chain}` path segment of `GET /latestBlockNumber/{chain}`.
pub fn path_chain(chain: &str) -> Result<Chain, ApiError> {
    Chain::parse(chain).map_err(|e| ApiError::parse("chain", e))
}

/// Everything `GET /dateToBlock` was asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DateToBlockParams {
    /// The chain.
    pub chain: Chain,
    /// The date, in Unix seconds.
    pub date: u64,
}

impl DateToBlockParams {
    /// Parses `chain` and the required `date` (Unix seconds or milliseconds, or ISO 8601).
    pub fn parse(raw: Option<&str>) -> Result<Self, ApiError> {
        let p = RawParams::read(spec::DATE_TO_BLOCK, raw);
        let date = parse_instant(p.required("date")?).map_err(|e| ApiError::parse("date", e))?;
        Ok(Self {
            chain: p.chain()?,
            date,
        })
    }
}

/// Everything `GET /erc20/metadata` was asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenMetadataParams {
    /// The chain.
    pub chain: Chain,
    /// The token contracts, in request order, each once.
    pub addresses: Vec<Address>,
}

impl TokenMetadataParams {
    /// Parses `chain` and the required `addresses` (1 to [`MAX_BATCH`]).
    pub fn parse(raw: Option<&str>) -> Result<Self, ApiError> {
        let p = RawParams::read(spec::TOKEN_METADATA, raw);
        Ok(Self {
            addresses: p.address_batch("addresses")?,
            chain: p.chain()?,
        })
    }
}

/// Everything `GET /erc20/metadata/symbols` was asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenSymbolsParams {
    /// The chain.
    pub chain: Chain,
    /// The symbols, in request order, each once, as given (compared without regard to case).
    pub symbols: Vec<String>,
}

/// Longest symbol accepted.
const MAX_SYMBOL_LEN: usize = 64;

impl TokenSymbolsParams {
    /// Parses `chain` and the required `symbols` (1 to [`MAX_BATCH`], each at most 64
    /// characters, no control characters).
    pub fn parse(raw: Option<&str>) -> Result<Self, ApiError> {
        let p = RawParams::read(spec::TOKEN_SYMBOLS, raw);
        let symbols = p.batch("symbols")?;
        if let Some(bad) = symbols
            .iter()
            .find(|s| s.chars().count() > MAX_SYMBOL_LEN || s.chars().any(char::is_control))
        {
            return Err(ApiError::bad(
                "symbols",
                format!(
                    "'{}' is not a token symbol; expected at most {MAX_SYMBOL_LEN} printable characters",
                    bad.chars().take(MAX_SYMBOL_LEN).collect::<String>()
                ),
            ));
        }
        Ok(Self {
            symbols: symbols.into_iter().map(str::to_string).collect(),
            chain: p.chain()?,
        })
    }
}

/// Everything `GET /{address}/balance` or `GET /wallets/balances` was asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NativeBalanceParams {
    /// The chain.
    pub chain: Chain,
    /// The wallets, in request order, each once.
    pub wallets: Vec<Address>,
    /// The block to read the balances at; `None`: the chain's head.
    pub to_block: Option<BlockNumber>,
}

impl NativeBalanceParams {
    /// Parses `GET /{address}/balance`: the path's wallet, `chain` and `to_block`.
    pub fn parse_one(address: &str, raw: Option<&str>) -> Result<Self, ApiError> {
        let p = RawParams::read(spec::NATIVE_BALANCE, raw);
        let wallet = Address::parse(address).map_err(|e| ApiError::parse("address", e))?;
        Ok(Self {
            chain: p.chain()?,
            wallets: vec![wallet],
            to_block: p.block("to_block")?,
        })
    }

    /// Parses `GET /wallets/balances`: the required `wallet_addresses` (1 to [`MAX_BATCH`]),
    /// `chain` and `to_block`.
    pub fn parse_many(raw: Option<&str>) -> Result<Self, ApiError> {
        let p = RawParams::read(spec::NATIVE_BALANCES, raw);
        Ok(Self {
            wallets: p.address_batch("wallet_addresses")?,
            chain: p.chain()?,
            to_block: p.block("to_block")?,
        })
    }
}

/// Everything `GET /erc20/{token_address}/owners` was asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenOwnersParams {
    /// The filters handed to the query service.
    pub query: TokenHoldersQuery,
    /// The cursor of the page to read; `None` for the first page.
    pub cursor: Option<String>,
    /// `to_date`, when asked without `to_block`: the handler turns it into the block the
    /// answer is as of.
    pub to_date: Option<u64>,
}

impl TokenOwnersParams {
    /// Parses the path's token address and the raw query string.
    pub fn parse(address: &str, raw: Option<&str>) -> Result<Self, ApiError> {
        let p = RawParams::read(spec::TOKEN_OWNERS, raw);
        let contract = Address::parse(address).map_err(|e| ApiError::parse("token_address", e))?;
        let at_block = p.block("to_block")?.map(|b| b.0);
        let to_date = p.holdings_date(at_block)?;
        Ok(Self {
            query: TokenHoldersQuery {
                chain: p.chain()?,
                contract,
                order: p.order()?,
                page_size: p.page_size()?,
                at_block,
            },
            cursor: p.cursor()?,
            to_date,
        })
    }
}

/// Everything `GET /erc20/{address}/stats` was asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenStatsParams {
    /// The question handed to the query service.
    pub query: TokenStatsQuery,
}

impl TokenStatsParams {
    /// Parses the path's token address and the raw query string.
    pub fn parse(address: &str, raw: Option<&str>) -> Result<Self, ApiError> {
        let p = RawParams::read(spec::TOKEN_STATS, raw);
        let contract = Address::parse(address).map_err(|e| ApiError::parse("address", e))?;
        Ok(Self {
            query: TokenStatsQuery {
                chain: p.chain()?,
                contract,
            },
        })
    }
}

#[cfg(test)]
#[path = "params_tests.rs"]
mod tests;
