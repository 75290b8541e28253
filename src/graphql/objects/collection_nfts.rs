//! `NftCollection.nfts`: the `CollectionNft` node (a token of a collection with who holds it)
//! and its page builder ([`resolve`]).

use async_graphql::{Context, MergedObject, Object};

use super::nft_fields::{wants, Linked, NftFields};
use crate::graphql::connection::{Connection, Listed};
use crate::graphql::error::GqlError;
use crate::graphql::fast_path::plain::PlainNode;
use crate::graphql::loaders::Primed;
use crate::graphql::scalars::{Address, BlockNumber, Uint256};
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

/// Every field goes through the ordinary resolvers.
impl PlainNode for CollectionNft {}

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

/// Runs `NftCollection.nfts`: one answer from the query service, with the tokens' rows,
/// metadata and media the selection of `edges.node` shows.
pub async fn resolve(
    ctx: &Context<'_>,
    service: &QueryService,
    q: CollectionNftsQuery,
    after: Option<&str>,
    format: types::TokenIdFormat,
) -> Result<Connection<CollectionNft>, GqlError> {
    let node = ctx.look_ahead().field("edges").field("node");
    let answer = service.collection_nfts(&q, after, wants(&node)).await?;
    let primed = Primed::new(service, q.chain, answer.related);
    let linked = Linked::new(ctx, q.chain, format, primed);
    Ok(Connection::from_page(answer.page, |held| {
        let fields = linked.fields(held.contract, held.token_id, Some(held.contract_type));
        CollectionNft(fields, Holders(held))
    }))
}
