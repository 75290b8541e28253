//! DataLoaders for related data: contract metadata, NFT token rows, address labels.
//!
//! Every connection gets its own [`Related`] (one chain, one cache), shared by its nodes. Node
//! fields call [`Related::contract`], [`Related::token`] and [`Related::label`]; the DataLoader
//! gathers the keys of concurrent calls into one batch, i.e. one statement of the query service
//! ([`QueryService::contracts`], [`QueryService::tokens`], [`QueryService::labels`]) per kind.
//!
//! Batching by time alone (a loader's batching window) could split a large page into several
//! batches on a slow machine, so the connection resolver *primes* the loader instead: it loads the
//! keys of the whole page for every kind of related data its selection needs, in one call per
//! kind, before the nodes are resolved, and shares the rows with its nodes, so that
//! the hundreds of node fields of a page read them without going through the loader
//! ([`Primed`]). Absent rows are cached as `None`, so an unlabelled address is not fetched
//! twice. A page therefore costs a constant number of statements, whatever its size.

use std::collections::HashMap;
use std::sync::Arc;

use async_graphql::dataloader::{DataLoader, HashMapCache, Loader};
use async_graphql::futures_util::future::try_join3;
use async_graphql::Lookahead;

use super::error::GqlError;
use crate::query::{ContractInfo, QueryService, TokenInfo};
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

/// The related data of one connection: a caching DataLoader over one chain.
pub struct Related {
    loader: DataLoader<RelatedLoader, HashMapCache>,
}

impl Related {
    pub fn new(service: QueryService, chain: Chain) -> Arc<Self> {
        Arc::new(Self {
            // No batching window: the connection resolver primes the whole page in one call
            // per kind, so waiting (the loader's default 1 ms) would only add latency.
            loader: DataLoader::with_cache(
                RelatedLoader { service, chain },
                tokio::spawn,
                HashMapCache::default(),
            )
            .delay(std::time::Duration::ZERO),
        })
    }

    /// Metadata of a contract; `None` when unknown.
    pub async fn contract(&self, a: Address) -> Result<Option<Arc<ContractInfo>>, GqlError> {
        Ok(self.loader.load_one(ContractKey(a)).await?.flatten())
    }

    /// The token row of an NFT; `None` when unknown.
    pub async fn token(&self, a: Address, t: Uint256) -> Result<Option<Arc<TokenInfo>>, GqlError> {
        Ok(self.loader.load_one(TokenKey(a, t)).await?.flatten())
    }

    /// The label of an address; `None` when unlabelled.
    pub async fn label(&self, a: Address) -> Result<Option<Arc<String>>, GqlError> {
        Ok(self.loader.load_one(LabelKey(a)).await?.flatten())
    }

    /// Loads these keys in one batch (cached for later calls), and returns what it found, so
    /// that a connection can hand each node its related rows directly.
    pub async fn prime<K>(
        &self,
        keys: impl IntoIterator<Item = K>,
    ) -> Result<HashMap<K, <RelatedLoader as Loader<K>>::Value>, GqlError>
    where
        K: Send + Sync + std::hash::Hash + Eq + Clone + 'static,
        RelatedLoader: Loader<K, Error = GqlError>,
    {
        self.loader.load_many(keys).await
    }
}

/// The keys of the related rows a page needs, by kind (a kind whose fields are not selected
/// stays empty, and costs nothing).
#[derive(Debug, Default)]
pub struct Keys {
    pub contracts: Vec<ContractKey>,
    pub tokens: Vec<TokenKey>,
    pub labels: Vec<LabelKey>,
}

/// The related rows a page loaded for its nodes, one batch per kind, shared by the nodes. A row
/// the page did not load is asked of the loader (and its cache).
pub struct Primed {
    related: Arc<Related>,
    contracts: HashMap<ContractKey, Option<Arc<ContractInfo>>>,
    tokens: HashMap<TokenKey, Option<Arc<TokenInfo>>>,
    labels: HashMap<LabelKey, Option<Arc<String>>>,
}

impl Primed {
    /// Loads `keys`, one statement per kind that has any.
    pub async fn load(related: Arc<Related>, keys: Keys) -> Result<Arc<Self>, GqlError> {
        let (contracts, tokens, labels) = try_join3(
            related.prime(keys.contracts),
            related.prime(keys.tokens),
            related.prime(keys.labels),
        )
        .await?;
        Ok(Arc::new(Self {
            related,
            contracts,
            tokens,
            labels,
        }))
    }

    /// Metadata of a contract; `None` when unknown.
    pub async fn contract(&self, a: Address) -> Result<Option<Arc<ContractInfo>>, GqlError> {
        match self.contracts.get(&ContractKey(a)) {
            Some(c) => Ok(c.clone()),
            None => self.related.contract(a).await,
        }
    }

    /// The token row of an NFT; `None` when unknown.
    pub async fn token(&self, a: Address, t: Uint256) -> Result<Option<Arc<TokenInfo>>, GqlError> {
        match self.tokens.get(&TokenKey(a, t)) {
            Some(row) => Ok(row.clone()),
            None => self.related.token(a, t).await,
        }
    }

    /// The label of an address, as text; `None` when unlabelled.
    pub async fn label(&self, a: Address) -> Result<Option<String>, GqlError> {
        let l = match self.labels.get(&LabelKey(a)) {
            Some(l) => l.clone(),
            None => self.related.label(a).await?,
        };
        Ok(l.map(|l| l.as_str().to_string()))
    }

    /// The loader behind it, for objects reached from this page's nodes.
    pub fn related(&self) -> &Arc<Related> {
        &self.related
    }
}

/// Whether `look` selects any of `fields` (directly, or through fragments).
pub fn selects(look: &Lookahead<'_>, fields: &[&str]) -> bool {
    fields.iter().any(|f| look.field(f).exists())
}
