//! One NFT: the `NftToken` object (`nft(...)`): its own data ([`NftFields`]), and what it
//! leads to: its collection, its owners and its moves ([`NftLinks`]).

use std::sync::Arc;

use async_graphql::{Context, MergedObject, Object};

use super::collection::{NftCollection, CONTRACT_FIELDS as COLLECTION_FIELDS};
use super::nft::{self as holdings, Nft};
use super::nft_fields::{self, Linked, NftFields};
use super::stats;
use super::transfer_fields::{NftTokenTransfers, TransferScope};
use crate::graphql::args;
use crate::graphql::connection::{page_cost, Connection};
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

    /// `transfers`, declared with the other transfer fields: [`NftTokenTransfers`].
    #[graphql(flatten)]
    async fn transfers_field(&self) -> NftTokenTransfers {
        NftTokenTransfers(TransferScope::token(
            self.linked.chain,
            self.contract,
            self.token_id,
            self.linked.format,
        ))
    }
}
