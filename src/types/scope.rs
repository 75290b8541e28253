//! Scopes of completeness (API.md, "SYNCED / SYNCING"): what must be stored for an answer to
//! be complete. The chain is complete when indexed from block 0; a contract or a wallet when its
//! history before the live start block is stored.

use std::fmt;

use super::{Address, ParseError};

/// Which kind of history a scope covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ScopeKind {
    /// Every transfer a contract emitted.
    Contract,
    /// Every transfer a wallet sent or received, on any contract.
    Wallet,
}

impl ScopeKind {
    /// The stored form (`scope_sync.scope`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Contract => "contract",
            Self::Wallet => "wallet",
        }
    }

    /// Parses the stored or command-line form.
    pub fn parse(s: &str) -> Result<Self, ParseError> {
        match s {
            "contract" => Ok(Self::Contract),
            "wallet" => Ok(Self::Wallet),
            _ => Err(ParseError::new(format!(
                "'{s}' is not a scope: use contract or wallet"
            ))),
        }
    }
}

impl fmt::Display for ScopeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One contract's or one wallet's history.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Scope {
    pub kind: ScopeKind,
    pub address: Address,
}

impl Scope {
    /// A contract's history.
    pub fn contract(address: Address) -> Self {
        Self {
            kind: ScopeKind::Contract,
            address,
        }
    }

    /// A wallet's history.
    pub fn wallet(address: Address) -> Self {
        Self {
            kind: ScopeKind::Wallet,
            address,
        }
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.kind, self.address)
    }
}

/// The state of a scope's history fetch (`scope_sync.state`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScopeState {
    /// Queued for a worker.
    Pending,
    /// A worker holds its lease.
    Syncing,
    /// Complete: every transfer of the scope is stored.
    Synced,
    /// Failed for good; a later request retries it after a back-off.
    Failed,
}

impl ScopeState {
    /// The stored form.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Syncing => "syncing",
            Self::Synced => "synced",
            Self::Failed => "failed",
        }
    }

    /// Parses the stored form; anything unknown reads as `Pending` (never as complete).
    pub fn from_db(s: &str) -> Self {
        match s {
            "syncing" => Self::Syncing,
            "synced" => Self::Synced,
            "failed" => Self::Failed,
            _ => Self::Pending,
        }
    }
}

impl fmt::Display for ScopeState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_and_states_round_trip() {
        for k in [ScopeKind::Contract, ScopeKind::Wallet] {
            assert_eq!(ScopeKind::parse(k.as_str()), Ok(k));
        }
        assert!(ScopeKind::parse("chain").is_err());
        for s in [
            ScopeState::Pending,
            ScopeState::Syncing,
            ScopeState::Synced,
            ScopeState::Failed,
        ] {
            assert_eq!(ScopeState::from_db(s.as_str()), s);
        }
        assert_eq!(ScopeState::from_db("weird"), ScopeState::Pending);
    }
}
