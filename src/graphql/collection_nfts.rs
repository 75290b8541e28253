//! `NftCollection.nfts`: the `CollectionNft` node (a token of a collection with who holds it)
//! and its page builder ([`resolve`]).

use async_graphql::{Context, MergedObject, Object};

use super::connection::{Connection, Listed};
use super::error::GqlError;
use super::loaders::{Keys, Primed, Related};
use super::nft_fields::{Linked, NftFields};
use super::scalars::{Address, BlockNumber, Uint256};
use crate::query::{self, CollectionNftsQuery, QueryService};
use crate::types;

/// A token of a collection that someone holds: its own data, its holder when there is one, and
/// how many are held in all.
#[derive(MergedObject)]
pub struct CollectionNft(NftFields, Holders);

impl Listed for CollectionNft {
    const CONNECTION: &'static str = "CollectionNftConnection";
    const EDGE: &'static str = "CollectionNftEdge";
}

/// The `Holders` object: merged into `CollectionNft`.
pub struct Holders(query::CollectionNft);

/// Who holds a token of a collection.
#[Object]
impl Holders {
    /// The holder, when exactly one wallet holds the token (always, for ERC721); `null` when
    /// several do (see `nft(...) { owners }`).
    async fn owner_of(&self) -> Option<Address> {
        self.0.owner.map(Address::from)
    }

    /// How many of the token are held, over all holders (`1` for ERC721), exact.
    async fn amount(&self) -> Uint256 {
        self.0.amount.into()
    }

    /// The latest block at which a holder acquired it.
    async fn block_number(&self) -> BlockNumber {
        self.0.block_number.into()
    }
}

/// Runs `NftCollection.nfts`: one page from the query service, then the tokens' rows, metadata
/// and media in one batch per kind, as the selection of `edges.node` needs.
pub async fn resolve(
    ctx: &Context<'_>,
    service: &QueryService,
    q: CollectionNftsQuery,
    after: Option<&str>,
    format: types::TokenIdFormat,
) -> Result<Connection<CollectionNft>, GqlError> {
    let page = service.collection_nfts(&q, after).await?;
    let node = ctx.look_ahead().field("edges").field("node");
    let tokens: Vec<_> = page
        .edges
        .iter()
        .map(|e| {
            let h = &e.node;
            (h.contract, h.token_id, h.contract_type.is_multi_token())
        })
        .collect();
    let mut keys = Keys::default();
    Linked::want(&node, &tokens, &mut keys);
    let primed = Primed::load(Related::new(service.clone(), q.chain), keys).await?;
    let linked = Linked::load(ctx, service, q.chain, format, primed, &node, tokens).await?;
    Ok(Connection::from_page(page, |held| {
        let fields = linked.fields(
            held.contract,
            held.token_id,
            Some(held.contract_type.as_str()),
        );
        CollectionNft(fields, Holders(held))
    }))
}
