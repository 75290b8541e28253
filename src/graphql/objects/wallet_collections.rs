//! `Wallet.nftCollections`: the `WalletCollection` node (a collection the wallet holds tokens
//! of, with how many) and its page builder ([`wallet_collections`]).

use std::sync::Arc;

use async_graphql::{Context, Object};

use super::collection::{NftCollection, CONTRACT_FIELDS};
use crate::graphql::connection::{Connection, Listed};
use crate::graphql::error::GqlError;
use crate::graphql::fast_path::plain::PlainNode;
use crate::graphql::loaders::{include, Primed};
use crate::query::{self, QueryService, WalletCollectionsQuery};
use crate::types::Chain;

/// The `WalletCollection` object.
pub struct WalletCollection {
    held: query::WalletCollection,
    synced: bool,
    primed: Arc<Primed>,
    chain: Chain,
}

impl Listed for WalletCollection {
    const CONNECTION: &'static str = "WalletCollectionConnection";
    const EDGE: &'static str = "WalletCollectionEdge";
}

/// Every field goes through the ordinary resolvers.
impl PlainNode for WalletCollection {}

/// A collection a wallet holds tokens of.
#[Object]
impl WalletCollection {
    /// The collection, to walk to its metadata, tokens, owners and moves.
    async fn collection(&self) -> NftCollection {
        let t = Some(self.held.contract_type);
        NftCollection::new(self.chain, self.held.contract, t, self.primed.clone())
    }

    /// How many of the collection's tokens (distinct ids) the wallet holds; `null` while the
    /// list is `SYNCING` (a count from partial history could be short).
    async fn count(&self) -> Option<i32> {
        let n = self.synced.then_some(self.held.count)?;
        Some(i32::try_from(n).unwrap_or(i32::MAX))
    }
}

/// Runs `Wallet.nftCollections`: one page, and the collections' metadata in one batch when
/// the selection of `edges.node.collection` needs it.
pub async fn wallet_collections(
    ctx: &Context<'_>,
    service: &QueryService,
    q: WalletCollectionsQuery,
    after: Option<&str>,
) -> Result<Connection<WalletCollection>, GqlError> {
    let look = ctx
        .look_ahead()
        .field("edges")
        .field("node")
        .field("collection");
    let wants = include(&look, CONTRACT_FIELDS, &[], &[]);
    let answer = service.wallet_collections(&q, after, wants).await?;
    let primed = Primed::new(service, q.chain, answer.related);
    let synced = answer.page.status == query::SyncStatus::Synced;
    Ok(Connection::from_page(answer.page, |held| {
        WalletCollection {
            held,
            synced,
            primed: primed.clone(),
            chain: q.chain,
        }
    }))
}
