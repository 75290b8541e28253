//! The suites that run a real chain (anvil), processes or database servers of their own, in one
//! binary: the indexer (sync, chain, faults, crash and failover, a backfill's deferred
//! indexes), history on demand, the off-chain workers, live push (subscriptions through reorgs), streaming replication, one
//! snapshot per answer, the Redis-shared rate limits, and webhook deliveries (Moralis Streams)
//! through reorgs, crashes and a receiver down. Test names are `suite::[backend::]name`.

#[path = "../support/mod.rs"]
mod support;

mod backfill_indexes;
mod history_on_demand;
mod indexer_chain;
mod indexer_crash;
mod indexer_faults;
mod indexer_sync;
mod live_push;
mod offchain_media;
mod offchain_metadata;
mod offchain_traits;
mod pinned_walks;
mod replication;
mod shared_limits;
mod snapshot;
mod webhooks;
