//! The door to the tables: everything that changes indexed data goes through here, from
//! `import` and from the indexer alike, and so does every read outside the APIs' read side
//! ([`crate::query`]): the indexer's checkpoints and block hashes, the workers' queues, API
//! keys, contract rows for the lists and the CLI.
//!
//! [`write_batch`] (the write path, `store/write.rs`) stores one batch (block headers, decoded
//! transfers, optionally the chain checkpoint) in one transaction. It is idempotent: rows are
//! keyed by (chain, block, log index [, batch index]) and inserted with `ON CONFLICT DO
//! NOTHING` (the ERC20 transfers read as not stored under the chain's lock, with a plain
//! `INSERT`), and derived rows (holdings, token mints) are recomputed from the stored transfers
//! of every token the batch touched, and ERC20 balances gain exactly the transfers the batch
//! adds (`erc20_balances`), so writing the same batch twice — or batches out of order — yields
//! the same database.
//!
//! The other doors, by table:
//!
//! | module | tables | for |
//! |---|---|---|
//! | [`chain`] | `chain_state`, `blocks` (reads) | the follower, status, import, demo |
//! | [`blocks`] | `blocks` (reads by time) | the query service's block questions |
//! | [`rollback`] | transfers, holdings, ERC20 balances, tokens, blocks | the follower's reorgs |
//! | [`erc20_balances`] | `erc20_balances`, `erc20_token_totals` | kept by [`write_batch`] and [`rollback`] |
//! | [`scopes`] | `scope_sync` | history fetches on demand |
//! | [`lease`] | `indexer_lease` | one active indexer per chain |
//! | [`contracts`], [`flags`], [`labels`], [`lists`] | `contracts`, `address_labels` | lists, heuristics, the indexer's `eth_call` reads, `tokenql contract` |
//! | [`token_meta`] | `nft_tokens` (URIs, metadata) | the indexer's and the off-chain metadata workers |
//! | [`media_queue`] | `nft_media` | the query service's queueing, the media worker |
//! | [`keys`] | `api_keys` | `tokenql keys`, authentication |
//! | [`settings`] | `settings` | the cursor secret; [`begin_write`] takes SQLite's write lock on it |
//! | [`backfill_indexes`] | the transfer tables' address indexes, the holders index | a fresh backfill leaves them out, then builds them |
//! | [`replicas`] | — | read-replica routing |
//! | [`dialect`] | — | the one place SQL differs between SQLite, PostgreSQL and MySQL |

pub mod backfill_balances;
pub mod backfill_indexes;
mod batch_txn;
pub mod blocks;
mod bulk;
pub mod chain;
pub mod contracts;
pub mod database;
mod derive;
pub mod dialect;
pub(crate) mod erc20_balances;
pub mod feed;
pub mod flags;
pub mod keys;
pub mod labels;
pub mod lease;
pub(crate) mod lists;
pub mod media_queue;
mod pg_copy;
pub mod replicas;
pub mod rollback;
mod rows;
pub mod scopes;
pub mod settings;
pub mod streams;
#[cfg(test)]
mod testing;
pub mod token_meta;
mod write;

/// Replays one token's moves in chain order into its holders (owner -> amount, block of the
/// latest acquisition) and standard: the rule the holdings table is kept by, for answers as of
/// a past block.
pub use derive::replay as replay_moves;

pub use write::{
    begin_write, mark_history_complete, set_checkpoint, set_head, write_batch, write_batch_summing,
    Batch, BlockHeader, Checkpoint, StoreError,
};

use sea_orm::sea_query::OnConflict;

/// Rows per multi-row INSERT: well under every backend's bind-parameter limit.
pub(crate) const CHUNK: usize = 400;

/// `ON CONFLICT (cols) DO NOTHING`, written so that MySQL gets `ON DUPLICATE KEY UPDATE c = c`
/// (sea-query's bare `do_nothing` becomes `IGNORE`, which MariaDB rejects there).
pub(crate) fn skip_existing<C, const N: usize>(cols: [C; N]) -> OnConflict
where
    C: sea_orm::sea_query::IntoIden + Copy,
{
    OnConflict::columns(cols).do_nothing_on(cols).to_owned()
}

/// Now, in Unix milliseconds.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}
