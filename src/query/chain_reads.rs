//! What the query side reads from a chain's JSON-RPC endpoint rather than from the tables:
//! native balances (a chain's own coin, e.g. ETH: not indexed), with a bounded cache, and
//! block headers the indexer did not store (to settle `dateToBlock` exactly, see
//! [`super::blocks`]).
//!
//! The query service defines what it needs of a chain ([`ChainReader`]: its head, a block's
//! header, a balance at a block) and the application gives it one reader per chain it has
//! an endpoint for (`startup` adapts the indexer's RPC client), so this module depends on no
//! RPC client, and the indexer on nothing here.
//!
//! A balance is read at a block number: the one asked for, or the head read just before.
//! Balances at blocks at least [`CACHE_DEPTH`] below the head are cached per (chain, wallet,
//! block), up to a bounded number of entries (the oldest entry leaves first); nearer the head
//! a reorg could still change them, so they are read every time.

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use crate::store::blocks::StoredBlock;
use crate::types::{Address, Chain, Uint256};

/// A boxed future, as [`ChainReader`]'s methods return.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Blocks below the head from which balances are cached (a reorg deeper than this is refused
/// by the indexer's default `--max-reorg-depth`).
pub const CACHE_DEPTH: u64 = 64;

/// Cached balances at most, per service.
pub const CACHE_ENTRIES: usize = 100_000;

/// What the query service reads from a chain. `Err` carries the failure's detail, for the log
/// only.
pub trait ChainReader: Send + Sync + std::fmt::Debug {
    /// The chain's head block number.
    fn head(&self) -> BoxFuture<'_, Result<u64, String>>;
    /// The header of block `number` (of the chain as the endpoint sees it now).
    fn header(&self, number: u64) -> BoxFuture<'_, Result<StoredBlock, String>>;
    /// `wallet`'s native balance at block `number`, in wei.
    fn balance(&self, wallet: Address, number: u64) -> BoxFuture<'_, Result<Uint256, String>>;
}

/// Why native balances could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChainReadError {
    /// No JSON-RPC endpoint is configured for the chain.
    #[error("no JSON-RPC endpoint is configured for {}", .0.name())]
    NoEndpoint(Chain),
    /// The block asked for is after the chain's head.
    #[error("block {block} is after the chain's head {head}")]
    AfterHead {
        /// The block asked for.
        block: u64,
        /// The chain's head.
        head: u64,
    },
    /// The endpoint failed (the detail is for the log only).
    #[error("the chain's JSON-RPC endpoint failed: {0}")]
    Endpoint(String),
}

/// Native balances of some wallets at one block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NativeAnswer {
    /// The block the balances were read at.
    pub block: u64,
    /// Each wallet's balance in wei, in the order asked.
    pub balances: Vec<(Address, Uint256)>,
}

/// A bounded map, the oldest entry evicted first.
#[derive(Debug, Default)]
struct Cache {
    map: HashMap<(u64, Address, u64), Uint256>,
    order: VecDeque<(u64, Address, u64)>,
}

impl Cache {
    fn get(&self, key: &(u64, Address, u64)) -> Option<Uint256> {
        self.map.get(key).copied()
    }

    fn put(&mut self, key: (u64, Address, u64), value: Uint256, capacity: usize) {
        if capacity == 0 || self.map.insert(key, value).is_some() {
            return;
        }
        self.order.push_back(key);
        while self.order.len() > capacity {
            if let Some(old) = self.order.pop_front() {
                self.map.remove(&old);
            }
        }
    }
}

#[derive(Debug, Default)]
struct Inner {
    readers: HashMap<u64, Arc<dyn ChainReader>>,
    cache: Mutex<Cache>,
    capacity: usize,
}

/// The native-balance service: one [`ChainReader`] per chain with an endpoint, and the cache.
/// Cheap to clone; the default has no endpoint at all.
#[derive(Debug, Clone, Default)]
pub struct ChainReads {
    inner: Arc<Inner>,
}

impl ChainReads {
    /// A service reading each chain through its reader, caching up to `capacity` balances.
    pub fn new(readers: Vec<(Chain, Arc<dyn ChainReader>)>, capacity: usize) -> Self {
        Self {
            inner: Arc::new(Inner {
                readers: readers.into_iter().map(|(c, r)| (c.id(), r)).collect(),
                cache: Mutex::default(),
                capacity,
            }),
        }
    }

    /// Whether `chain` has an endpoint.
    pub fn serves(&self, chain: Chain) -> bool {
        self.inner.readers.contains_key(&chain.id())
    }

    /// The balances of `wallets` at `to_block`, or at the chain's head.
    pub async fn balances(
        &self,
        chain: Chain,
        wallets: &[Address],
        to_block: Option<u64>,
    ) -> Result<NativeAnswer, ChainReadError> {
        let reader = self
            .inner
            .readers
            .get(&chain.id())
            .ok_or(ChainReadError::NoEndpoint(chain))?;
        let head = reader.head().await.map_err(ChainReadError::Endpoint)?;
        let block = match to_block {
            Some(block) if block > head => return Err(ChainReadError::AfterHead { block, head }),
            Some(block) => block,
            None => head,
        };
        let cacheable = head.saturating_sub(block) >= CACHE_DEPTH;
        let reads = wallets
            .iter()
            .map(|w| self.balance(reader, chain, *w, block, cacheable));
        let balances = futures_util::future::try_join_all(reads).await?;
        Ok(NativeAnswer { block, balances })
    }

    /// The header of `block` on `chain`.
    pub async fn header(&self, chain: Chain, block: u64) -> Result<StoredBlock, ChainReadError> {
        let reader = self
            .inner
            .readers
            .get(&chain.id())
            .ok_or(ChainReadError::NoEndpoint(chain))?;
        reader.header(block).await.map_err(ChainReadError::Endpoint)
    }

    /// One balance, from the cache when it may be there.
    async fn balance(
        &self,
        reader: &Arc<dyn ChainReader>,
        chain: Chain,
        wallet: Address,
        block: u64,
        cacheable: bool,
    ) -> Result<(Address, Uint256), ChainReadError> {
        let key = (chain.id(), wallet, block);
        if cacheable {
            if let Some(v) = self.cached(&key) {
                return Ok((wallet, v));
            }
        }
        let v = reader
            .balance(wallet, block)
            .await
            .map_err(ChainReadError::Endpoint)?;
        if cacheable {
            if let Ok(mut cache) = self.inner.cache.lock() {
                cache.put(key, v, self.inner.capacity);
            }
        }
        Ok((wallet, v))
    }

    fn cached(&self, key: &(u64, Address, u64)) -> Option<Uint256> {
        self.inner.cache.lock().ok().and_then(|c| c.get(key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};

    /// A chain of 1,000 blocks where every balance is the block number; counts balance reads.
    #[derive(Debug, Default)]
    struct Counting {
        reads: AtomicU64,
    }

    impl ChainReader for Counting {
        fn head(&self) -> BoxFuture<'_, Result<u64, String>> {
            Box::pin(async { Ok(1_000) })
        }
        fn header(&self, number: u64) -> BoxFuture<'_, Result<StoredBlock, String>> {
            Box::pin(async move {
                Ok(StoredBlock {
                    number,
                    hash: alloy::primitives::B256::ZERO,
                    parent_hash: None,
                    timestamp: number * 12,
                })
            })
        }
        fn balance(&self, _: Address, number: u64) -> BoxFuture<'_, Result<Uint256, String>> {
            self.reads.fetch_add(1, Ordering::SeqCst);
            Box::pin(async move { Ok(Uint256::from_u64(number)) })
        }
    }

    fn wallet(n: u8) -> Address {
        Address::parse(&format!("0x{:040x}", n)).unwrap_or(Address::ZERO)
    }

    #[tokio::test]
    async fn caches_deep_blocks_only_and_stays_bounded() {
        let reader = Arc::new(Counting::default());
        let service = ChainReads::new(vec![(Chain::ETH, reader.clone())], 2);
        let reads = || reader.reads.load(Ordering::SeqCst);
        let wallets = [wallet(1)];
        let ask = |block| service.balances(Chain::ETH, &wallets, block);

        assert_eq!(
            ask(Some(10)).await.map(|a| a.balances[0].1),
            Ok(Uint256::from_u64(10))
        );
        assert_eq!(ask(Some(10)).await.map(|a| a.block), Ok(10));
        assert_eq!(reads(), 1, "a deep block is read once");
        ask(None).await.ok();
        ask(None).await.ok();
        assert_eq!(reads(), 3, "the head is read every time");
        ask(Some(11)).await.ok();
        ask(Some(12)).await.ok();
        ask(Some(10)).await.ok();
        assert_eq!(reads(), 6, "the oldest entry left a cache of two");
        assert_eq!(
            ask(Some(1_001)).await,
            Err(ChainReadError::AfterHead {
                block: 1_001,
                head: 1_000
            })
        );
        assert_eq!(
            service
                .balances(Chain::parse("polygon").unwrap_or(Chain::ETH), &[], None)
                .await,
            Err(ChainReadError::NoEndpoint(
                Chain::parse("polygon").unwrap_or(Chain::ETH)
            ))
        );
    }
}
