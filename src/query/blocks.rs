//! Block questions answered from the stored headers and the chain's checkpoint: the indexed
//! head (`getLatestBlockNumber`) and the last block at or before a date (`getDateToBlock`).
//!
//! The date question is answered exactly or not at all. Block timestamps strictly increase
//! along a chain (a header's timestamp is above its parent's), so the last block at or before
//! a date `d` is the stored block `B` with the highest number among those stamped at or before
//! `d`, **provided** no unstored block can sit between `B` and `d`: that holds when `B` is
//! stamped exactly `d`, or when the next stored block is `B + 1`. Headers are stored sparsely
//! (the blocks with transfers, the ends of each indexed range, every block near the head), so
//! otherwise the answer is [`DateToBlock::Unsettled`] and says which blocks are missing; with a
//! JSON-RPC endpoint for the chain, [`DateToBlock::settled`] reads the missing headers it needs
//! (a binary search between the two stored blocks: log2 of the gap reads) and answers exactly.

use alloy::primitives::B256;
use sea_orm::ConnectionTrait;

use super::{ChainReadError, ChainReads, QueryError, QueryService};
use crate::store::blocks::{self, StoredBlock};
use crate::types::Chain;

/// The answer to "which block was the last at or before this date?".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DateToBlock {
    /// The block, exactly.
    Found(StoredBlock),
    /// Nothing of the chain is stored.
    NothingStored,
    /// The date is before the first stored block of the chain (`first`).
    BeforeFirst {
        /// The lowest stored block.
        first: StoredBlock,
    },
    /// The date is after the newest stored block (`newest`): a block not indexed yet may still
    /// come at or before it.
    AfterHead {
        /// The newest stored block.
        newest: StoredBlock,
    },
    /// The answer is `before` or a block between it and `after`, whose headers are not stored.
    Unsettled {
        /// The last stored block at or before the date.
        before: StoredBlock,
        /// The next stored block, after the date.
        after: StoredBlock,
    },
}

impl DateToBlock {
    /// The same answer, an [`DateToBlock::Unsettled`] one settled with headers read from the
    /// chain's endpoint when `reads` has one for `chain` (the last block stamped at or before
    /// `secs`, found by binary search between the two stored blocks).
    pub async fn settled(
        self,
        reads: &ChainReads,
        chain: Chain,
        secs: u64,
    ) -> Result<DateToBlock, ChainReadError> {
        let DateToBlock::Unsettled { before, after } = self else {
            return Ok(self);
        };
        if !reads.serves(chain) {
            return Ok(self);
        }
        // `last` is stamped at or before `secs`, block `above` after it.
        let (mut last, mut above) = (before, after.number);
        while above - last.number > 1 {
            let mid = last.number + (above - last.number) / 2;
            let header = reads.header(chain, mid).await?;
            if header.timestamp <= secs {
                last = header;
            } else {
                above = mid;
            }
        }
        Ok(DateToBlock::Found(last))
    }
}

impl QueryService {
    /// The last block of `chain` the indexer has fully stored; `None` before the first one.
    pub async fn latest_block(&self, chain: Chain) -> Result<Option<u64>, QueryError> {
        let state = crate::store::chain::state(&self.db, chain).await?;
        Ok(state.and_then(|s| s.indexed_block))
    }

    /// The number of the stored block with this hash; `None` when its header is not stored
    /// (headers are kept for the blocks with transfers, so a block with an NFT or ERC20
    /// transfer of the indexed range is always found).
    pub async fn block_number_of(
        &self,
        chain: Chain,
        hash: B256,
    ) -> Result<Option<u64>, QueryError> {
        Ok(blocks::by_hash(&self.db, chain, hash)
            .await?
            .map(|b| b.number))
    }

    /// The block a holdings answer as of the date `secs` (Unix seconds) is asked as of:
    /// holdings change only in blocks with transfers, and every such block's header is stored,
    /// so the last stored block at or before the date answers for every block up to the next
    /// stored one (no endpoint is read). A date before the first stored block: the block
    /// before it; after the newest stored block, or nothing stored: `None`, now.
    pub async fn holdings_block_at(
        &self,
        chain: Chain,
        secs: u64,
    ) -> Result<Option<u64>, QueryError> {
        Ok(match self.date_to_block(chain, secs).await? {
            DateToBlock::Found(b) | DateToBlock::Unsettled { before: b, .. } => Some(b.number),
            DateToBlock::BeforeFirst { first } => Some(first.number.saturating_sub(1)),
            DateToBlock::AfterHead { .. } | DateToBlock::NothingStored => None,
        })
    }

    /// The last block of `chain` stamped at or before `secs` (Unix seconds), exactly, from the
    /// stored headers (see the module documentation). Its statements read one snapshot: a
    /// block stored between them cannot make a stale neighbour look consecutive.
    pub async fn date_to_block(&self, chain: Chain, secs: u64) -> Result<DateToBlock, QueryError> {
        let snap = self.snapshot().await?;
        let answer = date_to_block_in(snap.db(), chain, secs).await?;
        snap.close().await?;
        Ok(answer)
    }
}

/// [`QueryService::date_to_block`], read through `db`.
async fn date_to_block_in(
    db: &impl ConnectionTrait,
    chain: Chain,
    secs: u64,
) -> Result<DateToBlock, QueryError> {
    let Some(before) = blocks::last_at_or_before(db, chain, secs).await? else {
        return Ok(match blocks::first(db, chain).await? {
            Some(first) => DateToBlock::BeforeFirst { first },
            None => DateToBlock::NothingStored,
        });
    };
    if before.timestamp == secs {
        return Ok(DateToBlock::Found(before));
    }
    Ok(match blocks::next_after(db, chain, before.number).await? {
        None => DateToBlock::AfterHead { newest: before },
        Some(after) if after.number == before.number + 1 => DateToBlock::Found(before),
        Some(after) => DateToBlock::Unsettled { before, after },
    })
}
