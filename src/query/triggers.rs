//! Requests that start work instead of reading: fetch a collection's history
//! (`syncNFTContract`) and fetch a token's metadata again (`reSyncMetadata`). Both write
//! through the primary (a replica's service forwards them), and both are idempotent.

use std::time::Duration;

use super::{QueryError, QueryService};
use crate::store::now_ms;
use crate::store::token_meta::{self, Refetch};
use crate::types::{Address, Chain, Scope, Uint256};

/// What a metadata refetch re-reads first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefetchFrom {
    /// The token URI, from the chain (`tokenURI` / `uri`), then the document.
    Uri,
    /// The document, from the token URI already stored.
    Metadata,
}

/// How a metadata refetch asked to wait ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefetchOutcome {
    /// No such token is stored.
    Unknown,
    /// Queued; not waited for (or not done within the wait).
    Queued,
    /// The document was fetched and stored.
    Fetched,
    /// The fetch failed (it is retried on the usual schedule).
    Failed,
    /// The token URI was read again and the token has none: there is nothing to fetch.
    NoUri,
}

/// How often a waiting refetch looks at the token's row.
const POLL: Duration = Duration::from_millis(200);

impl QueryService {
    /// Schedules the collection's whole history (nothing to do when it is stored or under
    /// way already).
    pub async fn sync_collection(
        &self,
        chain: Chain,
        collection: Address,
    ) -> Result<(), QueryError> {
        self.schedule(chain, &[Scope::contract(collection)]).await
    }

    /// Asks for the token's metadata to be fetched again by the off-chain worker, and waits up
    /// to `wait` for the outcome (`Duration::ZERO`: queue only).
    pub async fn refetch_metadata(
        &self,
        chain: Chain,
        contract: Address,
        token_id: Uint256,
        from: RefetchFrom,
        wait: Duration,
    ) -> Result<RefetchOutcome, QueryError> {
        let since = now_ms();
        let db = self.writer();
        let reread_uri = from == RefetchFrom::Uri;
        if !token_meta::request_refetch(db, chain, contract, token_id, reread_uri, since).await? {
            return Ok(RefetchOutcome::Unknown);
        }
        let deadline = tokio::time::Instant::now() + wait;
        while tokio::time::Instant::now() < deadline {
            tokio::time::sleep(POLL.min(wait)).await;
            return Ok(
                match token_meta::refetch_state(db, chain, contract, token_id, since).await? {
                    Refetch::Pending => continue,
                    Refetch::Fetched => RefetchOutcome::Fetched,
                    Refetch::Failed => RefetchOutcome::Failed,
                    Refetch::NoUri => RefetchOutcome::NoUri,
                    Refetch::Gone => RefetchOutcome::Unknown,
                },
            );
        }
        Ok(RefetchOutcome::Queued)
    }
}
