//! `NftCollection.nfts`: the `CollectionNft` node (a token of a collection, with who holds it)
//! and its page builder ([`resolve`]).

use std::sync::Arc;

use async_graphql::{Context, Object};

use super::connection::Connection;
use super::error::GqlError;
use super::linked::Linked;
use super::loaders::{Keys, Primed, Related};
use super::nft_token::NftToken;
use super::scalars::{Address, BlockNumber, Uint256};
use crate::query::{self, CollectionNftsQuery, QueryService};
use crate::types;

/// The `CollectionNft` object.
pub struct CollectionNft {
    held: query::CollectionNft,
    linked: Arc<Linked>,
}

/// A token of a collection that someone holds, with its holder when there is one and how many
/// are held in all.
#[Object]
impl CollectionNft {
    /// The token: its id, metadata, media, owners and moves.
    async fn nft(&self) -> NftToken {
        let h = &self.held;
        self.linked
            .token(h.contract, h.token_id, Some(&h.contract_type))
    }

    /// The holder, when exactly one wallet holds the token (always, for ERC721); `null` when
    /// several do (see `nft { owners }`).
    async fn owner_of(&self) -> Option<Address> {
        self.held.owner.map(Address::from)
    }

    /// How many of the token are held, over all holders (`1` for ERC721), exact.
    async fn amount(&self) -> Uint256 {
        self.held.amount.into()
    }

    /// The latest block at which a holder acquired it.
    async fn block_number(&self) -> BlockNumber {
        self.held.block_number.into()
    }
}

/// Runs `NftCollection.nfts`: one page from the query service, then the tokens' rows, metadata
/// and media in one batch per kind, as the selection of `edges.node.nft` needs.
pub async fn resolve(
    ctx: &Context<'_>,
    service: &QueryService,
    q: CollectionNftsQuery,
    after: Option<&str>,
    format: types::TokenIdFormat,
) -> Result<Connection<CollectionNft>, GqlError> {
    let page = service.collection_nfts(&q, after).await?;
    let link = ctx.look_ahead().field("edges").field("node").field("nft");
    let tokens: Vec<_> = page
        .edges
        .iter()
        .map(|e| {
            let h = &e.node;
            (h.contract, h.token_id, h.contract_type == "ERC1155")
        })
        .collect();
    let mut keys = Keys::default();
    Linked::want(&link, &tokens, &mut keys);
    let primed = Primed::load(Related::new(service.clone(), q.chain), keys).await?;
    let linked = Linked::load(ctx, service, q.chain, format, primed, &link, tokens).await?;
    Ok(Connection::from_page(page, |held| CollectionNft {
        held,
        linked: linked.clone(),
    }))
}
