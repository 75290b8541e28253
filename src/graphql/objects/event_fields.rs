//! The fields every transfer record shares about its event, declared once: who sent and
//! received ([`Parties`]: `fromWallet`, `toWallet` and their labels) and the log it came from
//! ([`LogFields`]: `blockNumber` ... `logIndex`). `Erc20Transfer` and `NftTransfer` merge them
//! in with `#[graphql(flatten)]` resolvers where the fields stand; they are not types of the
//! schema.

use std::sync::Arc;

use async_graphql::{Context, Object};

use crate::graphql::error::GqlError;
use crate::graphql::loaders::{include, Primed};
use crate::graphql::scalars::{Address, BlockNumber};
use crate::query::{self, Include};
use crate::types::{self, iso8601_secs};

/// The related rows a page of transfers needs for the selection of its `edges.node`: the
/// contract's metadata when it selects one of `contract_fields`, the parties' labels when it
/// selects one.
pub fn wants(ctx: &Context<'_>, contract_fields: &[&str]) -> Include {
    let node = ctx.look_ahead().field("edges").field("node");
    include(
        &node,
        contract_fields,
        &[],
        &["fromWalletLabel", "toWalletLabel"],
    )
}

/// Who sent and who received a transfer, their labels read through the page's related rows.
pub struct Parties<'a> {
    /// The sender.
    pub from: types::Address,
    /// The recipient.
    pub to: types::Address,
    /// The page's related rows.
    pub primed: &'a Arc<Primed>,
}

impl<'a> Parties<'a> {
    /// `from` and `to`, their labels read through `primed`.
    pub fn new(from: types::Address, to: types::Address, primed: &'a Arc<Primed>) -> Self {
        Self { from, to, primed }
    }
}

/// The sender and the recipient of a transfer.
#[Object]
impl Parties<'_> {
    /// The sender (the zero address for a mint).
    #[graphql(name = "fromWallet")]
    async fn sender(&self) -> Address {
        self.from.into()
    }

    /// The recipient (the zero address for a burn).
    #[graphql(name = "toWallet")]
    async fn recipient(&self) -> Address {
        self.to.into()
    }

    /// A human-readable label of the sender, when known (e.g. an exchange's hot wallet).
    #[graphql(name = "fromWalletLabel")]
    async fn sender_label(&self) -> Result<Option<String>, GqlError> {
        self.primed.label(self.from).await
    }

    /// A human-readable label of the recipient, when known.
    #[graphql(name = "toWalletLabel")]
    async fn recipient_label(&self) -> Result<Option<String>, GqlError> {
        self.primed.label(self.to).await
    }
}

/// Where a transfer's event was logged.
pub struct LogFields<'a> {
    /// The block's number.
    pub block_number: u64,
    /// The block's hash.
    pub block_hash: &'a str,
    /// The block's time, Unix seconds.
    pub block_timestamp: u64,
    /// The hash of the transaction that emitted the event.
    pub transaction_hash: &'a str,
    /// The transaction's position in its block.
    pub transaction_index: u32,
    /// The event's position among the block's logs.
    pub log_index: u32,
}

/// Reads [`LogFields`] from the query service's transfer records, whose fields have the same
/// names.
macro_rules! log_fields_of {
    ($($record:ty),+) => {$(
        impl<'a> From<&'a $record> for LogFields<'a> {
            fn from(t: &'a $record) -> Self {
                LogFields {
                    block_number: t.block_number,
                    block_hash: &t.block_hash,
                    block_timestamp: t.block_timestamp,
                    transaction_hash: &t.transaction_hash,
                    transaction_index: t.transaction_index,
                    log_index: t.log_index,
                }
            }
        }
    )+};
}

log_fields_of!(query::Erc20Transfer, query::NftTransfer);

/// The log a transfer came from.
#[Object]
impl LogFields<'_> {
    /// The block that contains the event.
    async fn block_number(&self) -> BlockNumber {
        self.block_number.into()
    }

    /// The hash of that block.
    async fn block_hash(&self) -> &str {
        self.block_hash
    }

    /// The block's timestamp: ISO 8601 UTC with milliseconds (`2023-03-20T08:37:35.000Z`).
    async fn block_timestamp(&self) -> String {
        iso8601_secs(self.block_timestamp)
    }

    /// The hash of the transaction that emitted the event.
    async fn transaction_hash(&self) -> &str {
        self.transaction_hash
    }

    /// The position of that transaction in its block.
    async fn transaction_index(&self) -> i32 {
        i32::try_from(self.transaction_index).unwrap_or(i32::MAX)
    }

    /// The position of the event among the block's logs (the ids of an ERC1155 batch share
    /// it).
    async fn log_index(&self) -> i32 {
        i32::try_from(self.log_index).unwrap_or(i32::MAX)
    }
}
