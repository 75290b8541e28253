//! One parameter spec per REST route: the single description of what a route reads from its
//! query string. The parser reads the query string through its route's table
//! ([`super::params::RawParams::read`]): a parameter outside the table is never read, the
//! booleans' defaults are the table's, and the cursor and batch limits are the constants here.
//! The OpenAPI document's query parameters are written from the same table, through the marker
//! types below that each handler's `#[utoipa::path(params(...))]` names.
//! `tests/api/architecture.rs` checks that no query parameter is described anywhere else.

use utoipa::openapi::path::{Parameter, ParameterBuilder, ParameterIn, ParameterStyle};
use utoipa::openapi::schema::{ArrayBuilder, KnownFormat, ObjectBuilder, SchemaFormat, Type};
use utoipa::openapi::{Ref, RefOr, Required, Schema};
use utoipa::{IntoParams, ToSchema};

use super::schemas::{AddressSchema, ChainList, OrderList, TokenIdFormatSchema};
use crate::types::{PageSize, MAX_LIST_LEN};

mod routes;

pub use routes::*;

/// Longest cursor accepted; ours are far shorter.
pub const MAX_CURSOR_LEN: usize = 4096;

/// Most entries a batch lookup takes (`addresses`, `symbols`, `wallet_addresses`).
pub const MAX_BATCH: usize = 25;

/// Most chains a `chains` list takes.
pub const MAX_CHAINS: usize = 64;

/// What a query parameter holds, and so how it is parsed and described.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `chain`: a name or hex id (`chainList`); default `eth`.
    Chain,
    /// A block number: a non-negative integer.
    Block,
    /// A date bound: Unix seconds or ISO 8601.
    Date,
    /// A required instant (Unix seconds or milliseconds, or ISO 8601), with an example.
    Instant {
        /// The example the document shows.
        example: &'static str,
    },
    /// `limit`: the page size, 1 to [`PageSize::MAX`], default [`PageSize::MAX`].
    Limit,
    /// `cursor`: opaque, at most [`MAX_CURSOR_LEN`] characters.
    Cursor,
    /// `order`: `ASC` or `DESC` (`orderList`).
    Order,
    /// `format`: how token ids are written (`tokenIdFormat`).
    Format,
    /// `true` or `false`.
    Bool {
        /// The value when the parameter is left out.
        default: bool,
    },
    /// An optional list of up to [`MAX_LIST_LEN`] addresses.
    Addresses,
    /// A required list of 1 to [`MAX_BATCH`] addresses.
    AddressBatch,
    /// A required list of 1 to [`MAX_BATCH`] texts.
    TextBatch,
    /// One of a few words (any letter case), `default` when left out.
    Choice {
        /// The words, as the document lists them.
        values: &'static [&'static str],
        /// The value when the parameter is left out.
        default: &'static str,
    },
    /// An optional list of chains (names or hex ids), each once.
    Chains,
}

impl Kind {
    /// Whether a request must give the parameter.
    pub const fn required(self) -> bool {
        matches!(
            self,
            Kind::Instant { .. } | Kind::AddressBatch | Kind::TextBatch
        )
    }
}

/// One query parameter of a route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParamSpec {
    /// Its name in the query string (array suffixes aside).
    pub name: &'static str,
    /// What it holds.
    pub kind: Kind,
    /// What the document says of it (CommonMark).
    pub description: &'static str,
}

/// A `$ref` to the component schema `T`.
fn component<T: ToSchema>() -> RefOr<Schema> {
    RefOr::Ref(Ref::from_schema_name(T::name()))
}

/// A non-negative 64-bit integer schema, as a block number.
fn block_schema() -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::Integer)
        .format(Some(SchemaFormat::KnownFormat(KnownFormat::Int64)))
        .minimum(Some(0))
}

/// An array schema of `items`, `min..=max` long.
fn list_schema(items: RefOr<Schema>, min: Option<usize>, max: usize) -> RefOr<Schema> {
    ArrayBuilder::new()
        .items(items)
        .min_items(min)
        .max_items(Some(max))
        .into()
}

impl ParamSpec {
    /// The schema of the parameter's value.
    fn schema(&self) -> RefOr<Schema> {
        let text = || ObjectBuilder::new().schema_type(Type::String);
        match self.kind {
            Kind::Chain => component::<ChainList>(),
            Kind::Order => component::<OrderList>(),
            Kind::Format => component::<TokenIdFormatSchema>(),
            Kind::Block => block_schema().into(),
            Kind::Limit => block_schema()
                .minimum(Some(1))
                .maximum(Some(PageSize::MAX))
                .default(Some(serde_json::json!(PageSize::MAX)))
                .into(),
            Kind::Date | Kind::Instant { .. } => text().into(),
            Kind::Cursor => text().max_length(Some(MAX_CURSOR_LEN)).into(),
            Kind::Bool { default } => ObjectBuilder::new()
                .schema_type(Type::Boolean)
                .default(Some(serde_json::json!(default)))
                .into(),
            Kind::Addresses => list_schema(component::<AddressSchema>(), None, MAX_LIST_LEN),
            Kind::AddressBatch => list_schema(component::<AddressSchema>(), Some(1), MAX_BATCH),
            Kind::TextBatch => list_schema(text().into(), Some(1), MAX_BATCH),
            Kind::Choice { values, default } => text()
                .enum_values(Some(values.iter().copied()))
                .default(Some(serde_json::json!(default)))
                .into(),
            Kind::Chains => list_schema(component::<ChainList>(), None, MAX_CHAINS),
        }
    }

    /// The parameter as the OpenAPI document lists it.
    pub fn parameter(&self) -> Parameter {
        let required = if self.kind.required() {
            Required::True
        } else {
            Required::False
        };
        let list = matches!(
            self.kind,
            Kind::Addresses | Kind::AddressBatch | Kind::TextBatch | Kind::Chains
        );
        let example = match self.kind {
            Kind::Instant { example } => Some(serde_json::json!(example)),
            _ => None,
        };
        ParameterBuilder::new()
            .name(self.name)
            .parameter_in(ParameterIn::Query)
            .description(Some(self.description))
            .required(required)
            .schema(Some(self.schema()))
            .style(list.then_some(ParameterStyle::Form))
            .explode(list.then_some(true))
            .example(example)
            .build()
    }
}

/// Declares a marker type per route, for `#[utoipa::path(params(...))]`: its `IntoParams`
/// writes the route's table.
macro_rules! route_specs {
    ($($(#[$doc:meta])* $marker:ident => $table:ident,)*) => {
        $(
            $(#[$doc])*
            pub struct $marker;

            impl IntoParams for $marker {
                fn into_params(_: impl Fn() -> Option<ParameterIn>) -> Vec<Parameter> {
                    $table.iter().map(ParamSpec::parameter).collect()
                }
            }
        )*
    };
}

route_specs! {
    /// `GET /{address}/nft`.
    WalletNfts => WALLET_NFTS,
    /// `GET /erc20/transfers`.
    Erc20Transfers => ERC20_TRANSFERS,
    /// `GET /{address}/erc20/transfers`.
    WalletTransfers => WALLET_TRANSFERS,
    /// `GET /erc20/{address}/transfers`.
    TokenTransfers => TOKEN_TRANSFERS,
    /// `GET /{address}/nft/transfers`.
    WalletNftTransfers => WALLET_NFT_TRANSFERS,
    /// `GET /nft/{address}/transfers`.
    CollectionNftTransfers => COLLECTION_NFT_TRANSFERS,
    /// `GET /nft/{address}/{token_id}`, `POST /nft/{address}/nfts-by-traits`.
    NftLists => NFT_LISTS,
    /// `GET /nft/{address}`.
    CollectionNfts => COLLECTION_NFTS,
    /// `GET /nft/{address}/owners`, `GET /nft/{address}/{token_id}/owners`.
    NftOwners => NFT_OWNERS,
    /// `GET /{address}/nft/collections`.
    WalletCollections => WALLET_COLLECTIONS,
    /// `GET /{address}/erc20`.
    WalletBalances => WALLET_BALANCES,
    /// `GET /dateToBlock`.
    DateToBlock => DATE_TO_BLOCK,
    /// `GET /erc20/metadata`.
    TokenMetadata => TOKEN_METADATA,
    /// `GET /erc20/metadata/symbols`.
    TokenSymbols => TOKEN_SYMBOLS,
    /// `GET /{address}/balance`.
    NativeBalance => NATIVE_BALANCE,
    /// `GET /wallets/balances`.
    NativeBalances => NATIVE_BALANCES,
    /// `GET /nft/{address}/traits`, `GET /nft/{address}/traits/resync`.
    Traits => TRAITS,
    /// `GET /nft/{address}/traits/paginate`.
    TraitsPage => TRAITS_PAGE,
    /// The lookups that read only `chain`.
    ChainOnly => CHAIN_ONLY,
    /// `GET /nft/{address}/unique-owners`.
    UniqueOwners => UNIQUE_OWNERS,
    /// `GET /nft/{address}/{token_id}/metadata/resync`.
    ResyncMetadata => RESYNC_METADATA,
    /// `GET /wallets/{address}/chains`.
    WalletChains => WALLET_CHAINS,
    /// `GET /block/{block_number_or_hash}/nft/transfers`.
    BlockNftTransfers => BLOCK_NFT_TRANSFERS,
    /// `GET /erc20/{token_address}/owners`.
    TokenOwners => TOKEN_OWNERS,
    /// `GET /erc20/{address}/stats`.
    TokenStats => TOKEN_STATS,
    /// `GET /streams/evm`, `GET /streams/evm/{id}/address`.
    StreamsPage => STREAMS_PAGE,
}

/// Every route's table, for the checks that the tables are sound.
pub const ALL: &[&[ParamSpec]] = &[
    WALLET_NFTS,
    ERC20_TRANSFERS,
    WALLET_TRANSFERS,
    TOKEN_TRANSFERS,
    WALLET_NFT_TRANSFERS,
    COLLECTION_NFT_TRANSFERS,
    NFT_LISTS,
    COLLECTION_NFTS,
    NFT_OWNERS,
    WALLET_COLLECTIONS,
    WALLET_BALANCES,
    DATE_TO_BLOCK,
    TOKEN_METADATA,
    TOKEN_SYMBOLS,
    NATIVE_BALANCE,
    NATIVE_BALANCES,
    TRAITS,
    TRAITS_PAGE,
    CHAIN_ONLY,
    UNIQUE_OWNERS,
    RESYNC_METADATA,
    WALLET_CHAINS,
    BLOCK_NFT_TRANSFERS,
    TOKEN_OWNERS,
    TOKEN_STATS,
    STREAMS_PAGE,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_table_names_each_parameter_once() {
        for table in ALL {
            let mut names: Vec<&str> = table.iter().map(|p| p.name).collect();
            names.sort_unstable();
            let before = names.len();
            names.dedup();
            assert_eq!(before, names.len(), "a name twice in {table:?}");
        }
    }
}
