//! One NFT collection: the `NftCollection` object (`nftCollection(...)`, and the `collection`
//! of a token or of a wallet's collection), with its metadata, tokens, owners, moves and traits.

use std::borrow::Cow;
use std::sync::Arc;

use async_graphql::{Context, Object};

use super::collection_meta::CollectionMeta;
use super::collection_nfts::{self, CollectionNft};
use super::collection_traits::NftTrait;
use super::nft::{self, Nft};
use super::stats::{self, CollectionHolder};
use super::transfer_fields::{CollectionTransfers, TransferScope};
use crate::graphql::args;
use crate::graphql::connection::{nested_page_cost, Connection};
use crate::graphql::enums::{ContractType, Order, TokenIdFormat};
use crate::graphql::error::GqlError;
use crate::graphql::loaders::{contract_key, include, Primed};
use crate::graphql::scalars::{Address, BlockNumber};
use crate::graphql::service;
use crate::query::{self, ContractInfo, NftOwnersQuery, QueryService};
use crate::types::{self, Chain};

/// `NftCollection` fields answered from the contract's metadata.
pub const CONTRACT_FIELDS: &[&str] = &[
    "contractType",
    "name",
    "symbol",
    "possibleSpam",
    "verifiedCollection",
];

/// The `NftCollection` object.
pub struct NftCollection {
    chain: Chain,
    address: types::Address,
    /// The standard, when the record that links here knows it.
    contract_type: Option<types::TokenStandard>,
    primed: Arc<Primed>,
}

impl NftCollection {
    /// The collection at `address`, its metadata read through `primed`.
    pub fn new(
        chain: Chain,
        address: types::Address,
        contract_type: Option<types::TokenStandard>,
        primed: Arc<Primed>,
    ) -> Self {
        Self {
            chain,
            address,
            contract_type,
            primed,
        }
    }

    /// `nftCollection(...)`: one statement for the metadata, when `ctx` selects it.
    pub async fn load(
        ctx: &Context<'_>,
        service: &QueryService,
        chain: Chain,
        address: types::Address,
    ) -> Result<Self, GqlError> {
        let wants = include(&ctx.look_ahead(), CONTRACT_FIELDS, &[], &[]);
        let primed = Primed::load(service, chain, contract_key(address), wants).await?;
        Ok(Self::new(chain, address, None, primed))
    }

    async fn contract(&self) -> Result<Option<Cow<'_, ContractInfo>>, GqlError> {
        self.primed.contract(self.address).await
    }
}

/// An NFT collection (an ERC721 or ERC1155 contract): its metadata, the tokens someone holds,
/// who holds them, how they moved, and their traits.
#[Object]
impl NftCollection {
    /// The collection's contract.
    async fn address(&self) -> Address {
        self.address.into()
    }

    /// `ERC721` or `ERC1155`; `null` while the contract's standard is unknown.
    async fn contract_type(&self) -> Result<Option<ContractType>, GqlError> {
        if let Some(t) = self.contract_type {
            return Ok(Some(t.into()));
        }
        let standard = self.contract().await?.and_then(|c| c.standard);
        Ok(standard.map(ContractType::from))
    }

    /// `name`, `symbol`, `possibleSpam`, `verifiedCollection`: [`CollectionMeta`].
    #[graphql(flatten)]
    async fn collection_meta(&self) -> CollectionMeta {
        CollectionMeta::new(&self.primed, self.address)
    }

    /// How many of its token ids someone holds, how many wallets hold them, and how many
    /// transfers it has had (`getNFTCollectionStats`).
    async fn stats(&self, ctx: &Context<'_>) -> Result<stats::NftCollectionStats, GqlError> {
        stats::collection(ctx, self.chain, self.address).await
    }

    /// The distinct wallets holding at least one of its tokens, by address
    /// (`getUniqueOwnersByCollection`). `SYNCED` once the collection's whole history is
    /// indexed; before, the first request schedules it, and only holders of tokens partial
    /// history cannot have made up are shown.
    #[graphql(complexity = "nested_page_cost(first, child_complexity)")]
    async fn unique_owners(
        &self,
        ctx: &Context<'_>,
        #[graphql(default = 100, desc = "How many wallets per page: 1 to 100.")] first: i32,
        #[graphql(desc = "The `endCursor` of the previous page, to get the next one.")]
        after: Option<String>,
    ) -> Result<Connection<CollectionHolder>, GqlError> {
        stats::unique_owners(ctx, self.chain, self.address, first, after).await
    }

    /// The collection's tokens that someone holds, by token id, each with its holder (when
    /// one) and the amount held. `SYNCED` once the collection's whole history is indexed;
    /// before, the first request schedules it, and only tokens partial history cannot have
    /// made up are shown.
    #[graphql(complexity = "nested_page_cost(first, child_complexity)")]
    async fn nfts(
        &self,
        ctx: &Context<'_>,
        #[graphql(default = 100, desc = "How many tokens per page: 1 to 100.")] first: i32,
        #[graphql(desc = "The `endCursor` of the previous page, to get the next one.")]
        after: Option<String>,
        #[graphql(default, desc = "How token ids are written: decimal (default) or hex.")]
        token_id_format: TokenIdFormat,
        #[graphql(
            desc = "The state after this block (after its last log), amounts and acquisition blocks included; default: now. `SYNCED` only once the history the answer depends on is complete and the indexer has stored the block; a block above the chain's head is an error."
        )]
        at_block: Option<BlockNumber>,
    ) -> Result<Connection<CollectionNft>, GqlError> {
        let q = query::CollectionNftsQuery {
            chain: self.chain,
            contract: self.address,
            token: None,
            page_size: args::first(first)?,
            at_block: args::block("atBlock", at_block.as_ref())?.map(|b| b.0),
        };
        let (service, after) = (service(ctx)?, args::after(after.as_deref())?);
        collection_nfts::resolve(ctx, service, q, after, token_id_format.into()).await
    }

    /// Who holds the collection's tokens now: one record per (token, owner), by token id then
    /// owner. `SYNCED` once the collection's whole history is indexed; before, the first
    /// request schedules it, and only holdings partial history cannot have made up are shown.
    #[graphql(complexity = "nested_page_cost(first, child_complexity)")]
    async fn owners(
        &self,
        ctx: &Context<'_>,
        #[graphql(default = 100, desc = "How many holdings per page: 1 to 100.")] first: i32,
        #[graphql(desc = "The `endCursor` of the previous page, to get the next one.")]
        after: Option<String>,
        #[graphql(default, desc = "How token ids are written: decimal (default) or hex.")]
        token_id_format: TokenIdFormat,
        #[graphql(
            desc = "The state after this block (after its last log), amounts and acquisition blocks included; default: now. `SYNCED` only once the history the answer depends on is complete and the indexer has stored the block; a block above the chain's head is an error."
        )]
        at_block: Option<BlockNumber>,
    ) -> Result<Connection<Nft>, GqlError> {
        let q = NftOwnersQuery {
            chain: self.chain,
            contract: self.address,
            token_id: None,
            page_size: args::first(first)?,
            at_block: args::block("atBlock", at_block.as_ref())?.map(|b| b.0),
        };
        let (service, after) = (service(ctx)?, args::after(after.as_deref())?);
        let answer = service.nft_owners(&q, after, nft::wants(ctx)).await?;
        Ok(nft::holdings(
            ctx,
            service,
            self.chain,
            answer,
            token_id_format.into(),
        ))
    }

    /// The collection's traits, counted from the metadata of the tokens someone holds: one
    /// record per (trait type, value), by trait type then value (`order`). `SYNCED` once the
    /// collection's whole history is indexed and every held token's metadata is fetched;
    /// `percentage` and `rarityLabel` are given only then.
    #[graphql(complexity = "nested_page_cost(first, child_complexity)")]
    async fn traits(
        &self,
        ctx: &Context<'_>,
        #[graphql(default = 100, desc = "How many traits per page: 1 to 100.")] first: i32,
        #[graphql(
            desc = "The `endCursor` of the previous page, to get the next one; only \
                          valid with the same `order`."
        )]
        after: Option<String>,
        #[graphql(
            default,
            desc = "By trait type, then value: `DESC` (the default) or `ASC`."
        )]
        order: Order,
    ) -> Result<Connection<NftTrait>, GqlError> {
        let q = query::TraitsPageQuery {
            chain: self.chain,
            contract: self.address,
            order: order.into(),
            page_size: args::first(first)?,
        };
        let (service, after) = (service(ctx)?, args::after(after.as_deref())?);
        let page = service.traits_page(&q, after).await?;
        Ok(Connection::from_page(page, NftTrait))
    }

    /// `transfers`, declared with the other transfer fields: [`CollectionTransfers`].
    #[graphql(flatten)]
    async fn transfers_field(&self) -> CollectionTransfers {
        CollectionTransfers(TransferScope::contract(self.chain, self.address))
    }
}
