//! The fields every NFT record shares about its collection's contract (`name`, `symbol`,
//! `possibleSpam`, `verifiedCollection`), declared once: `NftCollection`, an NFT's own fields
//! and `NftTransfer` merge [`CollectionMeta`] in with a `#[graphql(flatten)]` resolver where
//! the fields stand. It is not a type of the schema.

use std::borrow::Cow;
use std::sync::Arc;

use async_graphql::Object;

use crate::graphql::error::GqlError;
use crate::graphql::loaders::Primed;
use crate::query::ContractInfo;
use crate::types;

/// A collection's contract, its metadata read through the page's related rows.
pub struct CollectionMeta {
    primed: Arc<Primed>,
    contract: types::Address,
}

impl CollectionMeta {
    /// The metadata of `contract`, read through `primed`.
    pub fn new(primed: &Arc<Primed>, contract: types::Address) -> Self {
        Self {
            primed: Arc::clone(primed),
            contract,
        }
    }

    async fn contract(&self) -> Result<Option<Cow<'_, ContractInfo>>, GqlError> {
        self.primed.contract(self.contract).await
    }
}

/// The collection's metadata, when known.
#[Object]
impl CollectionMeta {
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
