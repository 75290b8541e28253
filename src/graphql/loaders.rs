//! The related rows of a page's nodes ([`Primed`]): what the query service's answer carries.
//!
//! A connection resolver reads the selection first, asks the query service its question with
//! the kinds of related rows the selection shows ([`include`]), and hands the
//! answer's rows to its nodes, whose fields read them from memory: a page costs a constant
//! number of statements, whatever its size, and no field waits on a loader.
//!
//! A row the answer did not read (an object reached past the page, or a selection the look-ahead
//! did not see) is asked of a caching DataLoader ([`Lookups`]), which gathers the keys of
//! concurrent calls into one statement per kind.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use async_graphql::dataloader::{DataLoader, HashMapCache, Loader};
use async_graphql::Lookahead;

use super::error::GqlError;
use crate::query::{self, ContractInfo, Include, MediaInfo, QueryService, RelatedKeys, TokenInfo};
use crate::types::{Address, Chain, Uint256};

/// Key of a contract's metadata.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ContractKey(pub Address);

/// Key of an NFT's token row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TokenKey(pub Address, pub Uint256);

/// Key of an address label.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LabelKey(pub Address);

/// Loads related data of one chain through the query service.
pub struct RelatedLoader {
    service: QueryService,
    chain: Chain,
}

/// Every requested key gets an entry: `None` when the row does not exist.
fn complete<K: Copy + Eq + std::hash::Hash, V>(
    keys: &[K],
    mut found: HashMap<K, V>,
) -> HashMap<K, Option<Arc<V>>> {
    keys.iter()
        .map(|k| (*k, found.remove(k).map(Arc::new)))
        .collect()
}

impl Loader<ContractKey> for RelatedLoader {
    type Value = Option<Arc<ContractInfo>>;
    type Error = GqlError;

    async fn load(
        &self,
        keys: &[ContractKey],
    ) -> Result<HashMap<ContractKey, Self::Value>, GqlError> {
        let addresses: Vec<Address> = keys.iter().map(|k| k.0).collect();
        let found = self.service.contracts(self.chain, &addresses).await?;
        let found = found
            .into_iter()
            .map(|(a, v)| (ContractKey(a), v))
            .collect();
        Ok(complete(keys, found))
    }
}

impl Loader<TokenKey> for RelatedLoader {
    type Value = Option<Arc<TokenInfo>>;
    type Error = GqlError;

    async fn load(&self, keys: &[TokenKey]) -> Result<HashMap<TokenKey, Self::Value>, GqlError> {
        let pairs: Vec<(Address, Uint256)> = keys.iter().map(|k| (k.0, k.1)).collect();
        let found = self.service.tokens(self.chain, &pairs).await?;
        let found = found
            .into_iter()
            .map(|((a, t), v)| (TokenKey(a, t), v))
            .collect();
        Ok(complete(keys, found))
    }
}

impl Loader<LabelKey> for RelatedLoader {
    type Value = Option<Arc<String>>;
    type Error = GqlError;

    async fn load(&self, keys: &[LabelKey]) -> Result<HashMap<LabelKey, Self::Value>, GqlError> {
        let addresses: Vec<Address> = keys.iter().map(|k| k.0).collect();
        let found = self.service.labels(self.chain, &addresses).await?;
        let found = found.into_iter().map(|(a, v)| (LabelKey(a), v)).collect();
        Ok(complete(keys, found))
    }
}

/// Rows looked up past a page: a caching DataLoader over one chain.
pub struct Lookups {
    loader: DataLoader<RelatedLoader, HashMapCache>,
}

impl Lookups {
    fn new(service: QueryService, chain: Chain) -> Self {
        Self {
            loader: DataLoader::with_cache(
                RelatedLoader { service, chain },
                tokio::spawn,
                HashMapCache::default(),
            ),
        }
    }
}

/// The related rows of a page, shared by its nodes (and by the objects reached from them).
pub struct Primed {
    rows: query::Related,
    lookups: Lookups,
}

impl Primed {
    /// The rows an answer carries.
    pub fn new(service: &QueryService, chain: Chain, rows: query::Related) -> Arc<Self> {
        Arc::new(Self {
            rows,
            lookups: Lookups::new(service.clone(), chain),
        })
    }

    /// Reads the rows `include` asks for of `keys` (for an object that is not a page): one
    /// statement per kind.
    pub async fn load(
        service: &QueryService,
        chain: Chain,
        keys: RelatedKeys,
        include: Include,
    ) -> Result<Arc<Self>, GqlError> {
        let rows = service.related(chain, keys, include).await?;
        Ok(Self::new(service, chain, rows))
    }

    /// Metadata of a contract; `None` when unknown.
    pub async fn contract(&self, a: Address) -> Result<Option<Cow<'_, ContractInfo>>, GqlError> {
        if let Some(row) = self.rows.contract_read(a) {
            return Ok(row.map(Cow::Borrowed));
        }
        let row = self
            .lookups
            .loader
            .load_one(ContractKey(a))
            .await?
            .flatten();
        Ok(row.map(|r| Cow::Owned((*r).clone())))
    }

    /// The token row of an NFT; `None` when unknown.
    pub async fn token(
        &self,
        a: Address,
        t: Uint256,
    ) -> Result<Option<Cow<'_, TokenInfo>>, GqlError> {
        if let Some(row) = self.rows.token_read(a, t) {
            return Ok(row.map(Cow::Borrowed));
        }
        let row = self
            .lookups
            .loader
            .load_one(TokenKey(a, t))
            .await?
            .flatten();
        Ok(row.map(|r| Cow::Owned((*r).clone())))
    }

    /// The label of an address, as text; `None` when unlabelled.
    pub async fn label(&self, a: Address) -> Result<Option<String>, GqlError> {
        if let Some(label) = self.rows.label_read(a) {
            return Ok(label.map(str::to_string));
        }
        let label = self.lookups.loader.load_one(LabelKey(a)).await?.flatten();
        Ok(label.map(|l| l.as_str().to_string()))
    }

    /// The rows the answer read (for fields answered without waiting: see [`crate::graphql::fast_path::plain`]).
    pub fn rows(&self) -> &query::Related {
        &self.rows
    }

    /// The preview media of an NFT, when its page read them and its metadata is fetched.
    pub fn media(&self, a: Address, t: Uint256) -> Option<&MediaInfo> {
        self.rows.media(a, t)
    }
}

/// The keys of one contract's rows.
pub fn contract_key(address: Address) -> RelatedKeys {
    RelatedKeys {
        contracts: vec![address],
        ..RelatedKeys::default()
    }
}

/// The kinds of related rows `look` (a node's selection) shows: contracts when it selects any
/// of `contract_fields`, token rows for `token_fields`, labels for `label_fields`, media for
/// `media`.
pub fn include(
    look: &Lookahead<'_>,
    contract_fields: &[&str],
    token_fields: &[&str],
    label_fields: &[&str],
) -> Include {
    Include {
        contracts: selects(look, contract_fields),
        tokens: selects(look, token_fields),
        labels: selects(look, label_fields),
        media: look.field("media").exists(),
    }
}

/// Whether `look` selects any of `fields` (directly, or through fragments).
pub fn selects(look: &Lookahead<'_>, fields: &[&str]) -> bool {
    fields.iter().any(|f| look.field(f).exists())
}
