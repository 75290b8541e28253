//! One NFT: the `NftToken` object (`nft(...)`): its own data ([`NftFields`]), and what it
//! leads to: its collection, its owners and its moves ([`NftLinks`]).

use std::sync::Arc;

use async_graphql::{Context, MergedObject, Object};

use super::collection::{NftCollection, CONTRACT_FIELDS as COLLECTION_FIELDS};
use super::nft::{self as holdings, Nft};
use super::nft_fields::{self, Linked, NftFields};
use super::nft_transfer::{self, NftTransfer};
use super::stats;
use crate::graphql::args;
use crate::graphql::connection::{page_cost, Connection};
use crate::graphql::enums::Order;
use crate::graphql::error::GqlError;
use crate::graphql::loaders::{selects, Primed};
use crate::graphql::scalars::BlockNumber;
use crate::graphql::service;
use crate::query::{QueryService, RelatedKeys};
use crate::types::{self, Chain};

/// One NFT (a token id of a collection), whoever holds it: its metadata, its preview media, its
/// collection, its owners and its moves. Fields tokenql has no data for yet are `null`.
#[derive(MergedObject)]
pub struct NftToken(NftFields, NftLinks);

impl NftToken {
    /// `nft(...)`: the token's rows, its contract's metadata and its media, each in one
    /// statement when the selection needs it.
    pub async fn load(
        ctx: &Context<'_>,
        service: &QueryService,
        chain: Chain,
        contract: types::Address,
        token_id: types::Uint256,
        format: types::TokenIdFormat,
    ) -> Result<Self, GqlError> {
        let look = ctx.look_ahead();
        let mut wants = nft_fields::wants(&look);
        let media = std::mem::take(&mut wants.media);
        // The collection's metadata; and its standard, which decides whether `{id}` in an
        // image URL is the token id (media reads the token row's metadata).
        wants.contracts |= media || selects(&look.field("collection"), COLLECTION_FIELDS);
        wants.tokens |= media;
        let keys = RelatedKeys {
            contracts: vec![contract],
            nfts: vec![(contract, token_id, false)],
            wallets: Vec::new(),
        };
        let mut rows = service.related(chain, keys, wants).await?;
        if media {
            let erc1155 = rows
                .contract(contract)
                .and_then(|c| c.standard)
                .is_some_and(types::TokenStandard::is_multi_token);
            service
                .read_media(&mut rows, &[(contract, token_id, erc1155)])
                .await?;
        }
        let linked = Linked::new(ctx, chain, format, Primed::new(service, chain, rows));
        let links = NftLinks {
            contract,
            token_id,
            linked: linked.clone(),
        };
        Ok(NftToken(linked.fields(contract, token_id, None), links))
    }
}

/// The `NftLinks` object: merged into `NftToken`.
pub struct NftLinks {
    contract: types::Address,
    token_id: types::Uint256,
    linked: Arc<Linked>,
}

/// What one NFT leads to.
#[Object]
impl NftLinks {
    /// How many wallets hold the token now and how many transfers it has had
    /// (`getNFTTokenStats`).
    async fn stats(&self, ctx: &Context<'_>) -> Result<stats::NftTokenStats, GqlError> {
        stats::token(ctx, self.linked.chain, self.contract, self.token_id).await
    }

    /// The collection, to walk to its other tokens, owners and moves.
    async fn collection(&self) -> NftCollection {
        NftCollection::new(
            self.linked.chain,
            self.contract,
            None,
            self.linked.primed.clone(),
        )
    }

    /// Who holds the token now (an ERC1155 token may have many holders), ordered by owner.
    /// `SYNCED` once the collection's whole history is indexed; before, the first request
    /// schedules it, and only holdings partial history cannot have made up are shown.
    #[graphql(complexity = "page_cost(first, child_complexity)")]
    async fn owners(
        &self,
        ctx: &Context<'_>,
        #[graphql(default = 100, desc = "How many owners per page: 1 to 100.")] first: i32,
        #[graphql(desc = "The `endCursor` of the previous page, to get the next one.")]
        after: Option<String>,
        #[graphql(
            desc = "The state after this block (after its last log), amounts and acquisition blocks included; default: now. `SYNCED` only once the history the answer depends on is complete and the indexer has stored the block; a block above the chain's head is an error."
        )]
        at_block: Option<BlockNumber>,
    ) -> Result<Connection<Nft>, GqlError> {
        let q = crate::query::NftOwnersQuery {
            chain: self.linked.chain,
            contract: self.contract,
            token_id: Some(self.token_id),
            page_size: args::first(first)?,
            at_block: args::block("atBlock", at_block.as_ref())?.map(|b| b.0),
        };
        let service = service(ctx)?;
        let after = args::after(after.as_deref())?;
        let answer = service.nft_owners(&q, after, holdings::wants(ctx)).await?;
        Ok(holdings::holdings(
            ctx,
            service,
            q.chain,
            answer,
            self.linked.format,
        ))
    }

    /// The token's moves (mints and burns included), newest first unless `order: ASC`: by
    /// block, log index, then position in a batch. `SYNCED` once the collection's whole
    /// history is indexed (or when `fromBlock` is at or after the live start block).
    #[allow(clippy::too_many_arguments)]
    #[graphql(complexity = "page_cost(first, child_complexity)")]
    async fn transfers(
        &self,
        ctx: &Context<'_>,
        #[graphql(default = 100, desc = "How many moves per page: 1 to 100.")] first: i32,
        #[graphql(
            desc = "The `endCursor` of the previous page, to get the next one; only \
                          valid with the same arguments."
        )]
        after: Option<String>,
        #[graphql(desc = "Only moves in this block or later (inclusive).")] from_block: Option<
            BlockNumber,
        >,
        #[graphql(desc = "Only moves in this block or earlier (inclusive).")] to_block: Option<
            BlockNumber,
        >,
        #[graphql(desc = "Only moves at or after this time: Unix seconds or ISO 8601 \
                          (`2023-03-20T08:37:35Z`); `fromBlock` wins over it.")]
        from_date: Option<String>,
        #[graphql(desc = "Only moves at or before this time: Unix seconds or ISO 8601; \
                          `toBlock` wins over it.")]
        to_date: Option<String>,
        #[graphql(default, desc = "`DESC` (newest first, the default) or `ASC`.")] order: Order,
    ) -> Result<Connection<NftTransfer>, GqlError> {
        let range = args::Range {
            from_block,
            to_block,
            from_date,
            to_date,
            order,
        };
        let bounds = range.parse()?;
        let q = crate::query::NftTransferQuery {
            chain: self.linked.chain,
            wallet: None,
            contracts: types::AddressList::one(self.contract),
            blocks: bounds.blocks,
            dates: bounds.dates,
            order: bounds.order,
            page_size: args::first(first)?,
        };
        let (service, after) = (service(ctx)?, args::after(after.as_deref())?);
        let format = self.linked.format;
        nft_transfer::resolve(ctx, service, q, Some(self.token_id), after, format).await
    }
}
