//! The enums of the schema: `TokenIdFormat`, `ContractType`, `SortOrder`.

use async_graphql::Enum;

use crate::types::{self, SortOrder};

/// How token ids are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Enum)]
pub enum TokenIdFormat {
    /// Decimal digits, e.g. `1234` (the default).
    #[default]
    Decimal,
    /// `0x`-prefixed lowercase hex without leading zeros, e.g. `0x4d2`.
    Hex,
}

impl From<TokenIdFormat> for types::TokenIdFormat {
    fn from(f: TokenIdFormat) -> Self {
        match f {
            TokenIdFormat::Decimal => types::TokenIdFormat::Decimal,
            TokenIdFormat::Hex => types::TokenIdFormat::Hex,
        }
    }
}

/// The token standard a contract implements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Enum)]
pub enum ContractType {
    /// A fungible token.
    #[graphql(name = "ERC20")]
    Erc20,
    /// A non-fungible token: each token id has one owner.
    #[graphql(name = "ERC721")]
    Erc721,
    /// A multi-token: each token id has balances, held by many owners.
    #[graphql(name = "ERC1155")]
    Erc1155,
}

impl From<types::TokenStandard> for ContractType {
    fn from(t: types::TokenStandard) -> Self {
        match t {
            types::TokenStandard::Erc20 => ContractType::Erc20,
            types::TokenStandard::Erc721 => ContractType::Erc721,
            types::TokenStandard::Erc1155 => ContractType::Erc1155,
        }
    }
}

/// A token id written in `format`.
pub fn format_id(id: &types::Uint256, format: types::TokenIdFormat) -> String {
    match format {
        types::TokenIdFormat::Decimal => id.to_decimal(),
        types::TokenIdFormat::Hex => id.to_hex(),
    }
}

/// The direction of a list by chain position.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Enum)]
#[graphql(name = "SortOrder")]
pub enum Order {
    /// Oldest first: block number, then log index (then position in a batch) ascending.
    Asc,
    /// Newest first (the default).
    #[default]
    Desc,
}

impl From<Order> for SortOrder {
    fn from(o: Order) -> Self {
        match o {
            Order::Asc => SortOrder::Asc,
            Order::Desc => SortOrder::Desc,
        }
    }
}
