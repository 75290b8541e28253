//! Boundary types: every user-supplied string becomes one of these in exactly one place (the
//! REST params parser or a GraphQL argument), with a [`ParseError`] that names the rule it broke.
//! Nothing past the boundary re-validates a string.

mod address;
mod chain;
mod hash;
pub mod hex;
mod limits;
pub mod media;
pub mod metadata;
mod order;
mod scope;
mod standard;
mod text_serde;
mod time;
mod uint256;

pub use address::Address;
pub use chain::Chain;
pub use hash::Hash32;
pub use limits::{AddressList, BlockNumber, PageSize, TokenIdFormat, MAX_LIST_LEN};
pub use order::SortOrder;
pub use scope::{Scope, ScopeKind, ScopeState};
pub use standard::TokenStandard;
pub use time::{
    iso8601_ms, iso8601_secs, parse_date, parse_instant, push_iso8601_ms, push_iso8601_secs,
    DateBound,
};
pub use uint256::Uint256;

/// Why a user-supplied value was refused. The message is safe to show to the user; the caller
/// prefixes it with the parameter's name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ParseError(pub String);

impl ParseError {
    pub(crate) fn new(msg: impl Into<String>) -> Self {
        Self(msg.into())
    }
}
