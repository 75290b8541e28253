//! NFT moves: the `NftTransfer` node of `Wallet.nftTransfers`, `NftCollection.transfers` and
//! `NftToken.transfers`, and the page builder they share ([`resolve`]).

use std::borrow::Cow;
use std::sync::Arc;

use async_graphql::{Context, Object};

use crate::graphql::connection::{Connection, Listed};
use crate::graphql::enums::{format_id, ContractType};
use crate::graphql::error::GqlError;
use crate::graphql::fast_path::plain::PlainNode;
use crate::graphql::loaders::{include, Primed};
use crate::graphql::scalars::{Address, BlockNumber, Uint256};
use crate::query::{self, ContractInfo, NftTransferQuery, QueryService};
use crate::types::{self, iso8601_secs};

/// The `NftTransfer` object: a move, with the related rows of its page.
pub struct NftTransfer {
    transfer: query::NftTransfer,
    format: types::TokenIdFormat,
    primed: Arc<Primed>,
}

impl NftTransfer {
    async fn contract(&self) -> Result<Option<Cow<'_, ContractInfo>>, GqlError> {
        self.primed.contract(self.transfer.contract).await
    }
}

impl Listed for NftTransfer {
    const CONNECTION: &'static str = "NftTransferConnection";
    const EDGE: &'static str = "NftTransferEdge";
}

/// Every field goes through the ordinary resolvers.
impl PlainNode for NftTransfer {}

impl NftTransfer {
    /// A move outside a page (a live change), its related rows loaded through `primed`.
    pub(crate) fn single(
        transfer: query::NftTransfer,
        format: types::TokenIdFormat,
        primed: Arc<Primed>,
    ) -> Self {
        Self {
            transfer,
            format,
            primed,
        }
    }
}

/// One NFT move: an ERC721 `Transfer`, an ERC1155 `TransferSingle`, or one id of an ERC1155
/// `TransferBatch` (a batch of n ids is n moves, in batch order). Mints come from the zero
/// address, burns go to it.
#[Object]
impl NftTransfer {
    /// The collection's contract.
    async fn token_address(&self) -> Address {
        self.transfer.contract.into()
    }

    /// The token id, exact, in the list's `tokenIdFormat`.
    async fn token_id(&self) -> String {
        format_id(&self.transfer.token_id, self.format)
    }

    /// `ERC721` or `ERC1155`.
    async fn contract_type(&self) -> Result<ContractType, GqlError> {
        Ok(self.transfer.contract_type.into())
    }

    /// The sender (the zero address for a mint).
    #[graphql(name = "fromWallet")]
    async fn sender(&self) -> Address {
        self.transfer.from.into()
    }

    /// The recipient (the zero address for a burn).
    #[graphql(name = "toWallet")]
    async fn recipient(&self) -> Address {
        self.transfer.to.into()
    }

    /// A human-readable label of the sender, when known.
    #[graphql(name = "fromWalletLabel")]
    async fn sender_label(&self) -> Result<Option<String>, GqlError> {
        self.primed.label(self.transfer.from).await
    }

    /// A human-readable label of the recipient, when known.
    #[graphql(name = "toWalletLabel")]
    async fn recipient_label(&self) -> Result<Option<String>, GqlError> {
        self.primed.label(self.transfer.to).await
    }

    /// The ERC1155 operator that sent the move; `null` for ERC721.
    async fn operator(&self) -> Option<Address> {
        self.transfer.operator.map(Address::from)
    }

    /// How many of the token moved (always `1` for ERC721), exact.
    async fn amount(&self) -> Uint256 {
        self.transfer.amount.into()
    }

    /// The block that contains the move.
    async fn block_number(&self) -> BlockNumber {
        self.transfer.block_number.into()
    }

    /// The hash of that block.
    async fn block_hash(&self) -> &str {
        &self.transfer.block_hash
    }

    /// The block's timestamp: ISO 8601 UTC with milliseconds (`2023-03-20T08:37:35.000Z`).
    async fn block_timestamp(&self) -> String {
        iso8601_secs(self.transfer.block_timestamp)
    }

    /// The hash of the transaction that emitted the event.
    async fn transaction_hash(&self) -> &str {
        &self.transfer.transaction_hash
    }

    /// The position of that transaction in its block.
    async fn transaction_index(&self) -> i32 {
        i32::try_from(self.transfer.transaction_index).unwrap_or(i32::MAX)
    }

    /// The position of the event among the block's logs (a batch's ids share it).
    async fn log_index(&self) -> i32 {
        i32::try_from(self.transfer.log_index).unwrap_or(i32::MAX)
    }

    /// The position of the id in its `TransferBatch` (0 for any other move).
    async fn batch_index(&self) -> i32 {
        i32::try_from(self.transfer.batch_index).unwrap_or(i32::MAX)
    }

    /// The collection's name, when known.
    async fn name(&self) -> Result<Option<String>, GqlError> {
        Ok(self.contract().await?.and_then(|c| c.name.clone()))
    }

    /// The collection's symbol, when known.
    async fn symbol(&self) -> Result<Option<String>, GqlError> {
        Ok(self.contract().await?.and_then(|c| c.symbol.clone()))
    }

    /// Whether the collection is flagged as possible spam.
    async fn possible_spam(&self) -> Result<bool, GqlError> {
        Ok(self.contract().await?.is_some_and(|c| c.possible_spam))
    }

    /// Whether the collection is verified.
    async fn verified_collection(&self) -> Result<bool, GqlError> {
        Ok(self.contract().await?.is_some_and(|c| c.verified))
    }
}

/// Node fields answered from the collection's metadata.
const CONTRACT_FIELDS: &[&str] = &["name", "symbol", "possibleSpam", "verifiedCollection"];

/// Runs a list of NFT moves (`token_id`: one token's only): one answer from the query service,
/// with the related rows the selection of `edges.node` shows.
pub async fn resolve(
    ctx: &Context<'_>,
    service: &QueryService,
    q: NftTransferQuery,
    token_id: Option<types::Uint256>,
    after: Option<&str>,
    format: types::TokenIdFormat,
) -> Result<Connection<NftTransfer>, GqlError> {
    let node = ctx.look_ahead().field("edges").field("node");
    let wants = include(
        &node,
        CONTRACT_FIELDS,
        &[],
        &["fromWalletLabel", "toWalletLabel"],
    );
    let answer = match token_id {
        None => service.nft_transfers(&q, after, wants).await?,
        Some(t) => service.token_nft_transfers(&q, t, after, wants).await?,
    };
    let primed = Primed::new(service, q.chain, answer.related);
    Ok(Connection::from_page(answer.page, |transfer| NftTransfer {
        transfer,
        format,
        primed: primed.clone(),
    }))
}
