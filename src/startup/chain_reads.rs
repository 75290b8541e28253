//! The chains' JSON-RPC endpoints as the query service's [`ChainReader`]s (native balances,
//! block headers):
//! the indexer's RPC client (its failure classes and retries) behind the query side's trait,
//! so neither side imports the other.

use std::sync::Arc;
use std::time::Duration;

use crate::indexer::retry::RetryPolicy;
use crate::indexer::rpc::Rpc;
use crate::query::chain_reads::{BoxFuture, ChainReader, CACHE_ENTRIES};
use crate::query::ChainReads;
use crate::store::blocks::StoredBlock;
use crate::types::{Address, Chain, Uint256};

/// A chain's RPC client, read by the query service.
#[derive(Debug, Clone)]
pub struct RpcReader(Rpc);

impl ChainReader for RpcReader {
    fn head(&self) -> BoxFuture<'_, Result<u64, String>> {
        Box::pin(async move { self.0.block_number().await.map_err(|e| e.to_string()) })
    }

    fn header(&self, number: u64) -> BoxFuture<'_, Result<StoredBlock, String>> {
        Box::pin(async move {
            let headers = self.0.headers(&[number]).await.map_err(|e| e.to_string())?;
            let h = headers
                .get(&number)
                .ok_or_else(|| format!("block {number} has no header"))?;
            Ok(StoredBlock {
                number: h.number,
                hash: h.hash,
                parent_hash: h.parent_hash,
                timestamp: h.timestamp,
            })
        })
    }

    fn balance(&self, wallet: Address, number: u64) -> BoxFuture<'_, Result<Uint256, String>> {
        Box::pin(async move {
            self.0
                .balance(wallet, number)
                .await
                .map_err(|e| e.to_string())
        })
    }
}

/// The chain reads over these chains' endpoints (`(chain, URL)`), each request with
/// this timeout and retry policy.
pub fn chain_reads(
    endpoints: &[(Chain, String)],
    timeout: Duration,
    retry: RetryPolicy,
) -> anyhow::Result<ChainReads> {
    let mut readers: Vec<(Chain, Arc<dyn ChainReader>)> = Vec::new();
    for (chain, url) in endpoints {
        let rpc = Rpc::new(url, timeout, retry).map_err(anyhow::Error::msg)?;
        readers.push((*chain, Arc::new(RpcReader(rpc))));
    }
    Ok(ChainReads::new(readers, CACHE_ENTRIES))
}
