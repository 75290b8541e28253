//! The token standards tokenql reads: the one spelling of `ERC20`, `ERC721` and `ERC1155`.

use std::fmt;

use super::ParseError;

/// A token contract's standard.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TokenStandard {
    /// Fungible tokens.
    Erc20,
    /// Non-fungible tokens: each id has one owner.
    Erc721,
    /// Multi-tokens: each id has balances held by many owners.
    Erc1155,
}

impl TokenStandard {
    /// `ERC20`, `ERC721` or `ERC1155`, as stored and as the APIs write it.
    pub const fn as_str(self) -> &'static str {
        match self {
            TokenStandard::Erc20 => "ERC20",
            TokenStandard::Erc721 => "ERC721",
            TokenStandard::Erc1155 => "ERC1155",
        }
    }

    /// Reads the stored or written form (exact spelling).
    pub fn parse(s: &str) -> Result<Self, ParseError> {
        [
            TokenStandard::Erc20,
            TokenStandard::Erc721,
            TokenStandard::Erc1155,
        ]
        .into_iter()
        .find(|t| t.as_str() == s)
        .ok_or_else(|| ParseError::new(format!("'{s}' is not ERC20, ERC721 or ERC1155")))
    }

    /// Whether it is an NFT standard (ERC721 or ERC1155).
    pub fn is_nft(self) -> bool {
        self != TokenStandard::Erc20
    }

    /// Whether each id may have many holders with balances (ERC1155).
    pub fn is_multi_token(self) -> bool {
        self == TokenStandard::Erc1155
    }
}

impl fmt::Display for TokenStandard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spelled_once_and_read_back() {
        for t in [
            TokenStandard::Erc20,
            TokenStandard::Erc721,
            TokenStandard::Erc1155,
        ] {
            assert_eq!(TokenStandard::parse(t.as_str()), Ok(t));
        }
        assert!(TokenStandard::parse("erc721").is_err());
        assert!(TokenStandard::Erc1155.is_multi_token());
        assert!(!TokenStandard::Erc721.is_multi_token());
    }
}
