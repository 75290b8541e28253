//! NFT moves: the `NftTransfer` node of `Wallet.nftTransfers`, `NftCollection.transfers` and
//! `NftToken.transfers`, and the page builder they share ([`resolve`]).

use std::sync::Arc;

use async_graphql::{Context, Object};

use super::collection_meta::CollectionMeta;
use super::event_fields::{self, LogFields, Parties};
use crate::graphql::connection::{Connection, Listed};
use crate::graphql::enums::{format_id, ContractType};
use crate::graphql::error::GqlError;
use crate::graphql::fast_path::plain::PlainNode;
use crate::graphql::loaders::Primed;
use crate::graphql::scalars::{Address, Uint256};
use crate::query::{self, NftTransferQuery, QueryService};
use crate::types::{self};

/// The `NftTransfer` object: a move, with the related rows of its page.
pub struct NftTransfer {
    transfer: query::NftTransfer,
    format: types::TokenIdFormat,
    primed: Arc<Primed>,
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

    /// `fromWallet`, `toWallet` and their labels: [`Parties`].
    #[graphql(flatten)]
    async fn parties(&self) -> Parties<'_> {
        Parties::new(self.transfer.from, self.transfer.to, &self.primed)
    }

    /// The ERC1155 operator that sent the move; `null` for ERC721.
    async fn operator(&self) -> Option<Address> {
        self.transfer.operator.map(Address::from)
    }

    /// How many of the token moved (always `1` for ERC721), exact.
    async fn amount(&self) -> Uint256 {
        self.transfer.amount.into()
    }

    /// `blockNumber` ... `logIndex`: [`LogFields`].
    #[graphql(flatten)]
    async fn log_fields(&self) -> LogFields<'_> {
        LogFields::from(&self.transfer)
    }

    /// The position of the id in its `TransferBatch` (0 for any other move).
    async fn batch_index(&self) -> i32 {
        i32::try_from(self.transfer.batch_index).unwrap_or(i32::MAX)
    }

    /// `name`, `symbol`, `possibleSpam`, `verifiedCollection`: [`CollectionMeta`].
    #[graphql(flatten)]
    async fn collection_meta(&self) -> CollectionMeta {
        CollectionMeta::new(&self.primed, self.transfer.contract)
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
    let wants = event_fields::wants(ctx, CONTRACT_FIELDS);
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
