//! The chain table of API.md: names and hex ids.
use std::fmt;

use super::ParseError;

/// A supported EVM chain.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Chain {
    id: u64,
    name: &'static str,
}

const CHAINS: &[(&str, u64)] = &[
    ("eth", 0x1),
    ("goerli", 0x5),
    ("sepolia", 0xaa36a7),
    ("polygon", 0x89),
    ("mumbai", 0x13881),
    ("bsc", 0x38),
    ("bsc testnet", 0x61),
    ("avalanche", 0xa86a),
    ("fantom", 0xfa),
    ("palm", 0x2a15c308d),
    ("cronos", 0x19),
    ("arbitrum", 0xa4b1),
];

impl Chain {
    /// Ethereum mainnet, the default chain of both routes.
    pub const ETH: Chain = Chain { id: 1, name: "eth" };

    /// Parses a chain name (`eth`, `bsc testnet`, any case) or hex id (`0x1`, `0xAA36A7`).
    pub fn parse(s: &str) -> Result<Self, ParseError> {
        let t = s.trim();
        let lower = t.to_ascii_lowercase();
        let found = if let Some(hex) = lower.strip_prefix("0x") {
            u64::from_str_radix(hex, 16).ok().and_then(Self::from_id)
        } else {
            CHAINS
                .iter()
                .find(|(n, _)| *n == lower)
                .map(|&(name, id)| Chain { id, name })
        };
        found.ok_or_else(|| {
            ParseError::new(format!(
                "unknown chain '{t}'; supported: {}",
                CHAINS
                    .iter()
                    .map(|(n, id)| format!("{n} (0x{id:x})"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })
    }

    /// The chain with this numeric id, if supported.
    pub fn from_id(id: u64) -> Option<Self> {
        CHAINS
            .iter()
            .find(|(_, i)| *i == id)
            .map(|&(name, id)| Chain { id, name })
    }

    pub fn id(&self) -> u64 {
        self.id
    }

    /// The id as stored in the database.
    pub fn db_id(&self) -> i64 {
        self.id as i64
    }

    pub fn name(&self) -> &'static str {
        self.name
    }

    /// `0x`-prefixed lowercase hex id, as the SDKs send it.
    pub fn hex_id(&self) -> String {
        format!("0x{:x}", self.id)
    }

    /// All supported chains.
    pub fn all() -> impl Iterator<Item = Chain> {
        CHAINS.iter().map(|&(name, id)| Chain { id, name })
    }
}

impl Default for Chain {
    fn default() -> Self {
        Chain::ETH
    }
}

impl fmt::Display for Chain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_hex_ids() {
        assert_eq!(Chain::parse("eth").unwrap(), Chain::ETH);
        assert_eq!(Chain::parse("0x1").unwrap(), Chain::ETH);
        assert_eq!(Chain::parse("ETH").unwrap(), Chain::ETH);
        assert_eq!(Chain::parse("0xAA36A7").unwrap().name(), "sepolia");
        assert_eq!(Chain::parse("bsc testnet").unwrap().id(), 0x61);
        assert_eq!(Chain::parse("palm").unwrap().hex_id(), "0x2a15c308d");
    }

    #[test]
    fn unknown_chains() {
        for bad in ["", "ethereum", "0x2", "0x", "0xzz", "1", "solana"] {
            let e = Chain::parse(bad).unwrap_err();
            assert!(e.0.contains("unknown chain"), "{bad}: {e}");
        }
    }
}
