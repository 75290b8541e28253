//! The SYNCED / SYNCING rule of API.md.
//!
//! An answer is `SYNCING` when
//! - nothing has been indexed for the chain yet (no checkpoint), or the indexer trails the chain
//!   head by more than `max_lag_blocks`; or
//! - a collection the request names in `token_addresses` is not `synced` — naming one that is
//!   unknown schedules its backfill by inserting a `pending` row (`ON CONFLICT DO NOTHING`, so
//!   concurrent first requests, in one process or many, schedule it once); or
//! - a collection appearing in the answer is being backfilled (`pending` / `syncing`).

use std::collections::BTreeSet;

use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};

use super::{QueryError, QueryService, SyncStatus};
use crate::entity::{chain_state, collection_sync};
use crate::store::now_ms;
use crate::types::{Address, Chain};

/// Collection states stored in `collection_sync.state`.
pub mod state {
    pub const PENDING: &str = "pending";
    pub const SYNCING: &str = "syncing";
    pub const SYNCED: &str = "synced";
    pub const FAILED: &str = "failed";
}

impl QueryService {
    /// Whether the chain's indexer is caught up.
    pub async fn chain_status(&self, chain: Chain) -> Result<SyncStatus, QueryError> {
        let row = chain_state::Entity::find_by_id(chain.db_id())
            .one(&self.db)
            .await?;
        let lagging = match row {
            Some(s) => match (s.indexed_block, s.head_block) {
                (Some(i), Some(h)) => h.saturating_sub(i) as u64 > self.config.max_lag_blocks,
                _ => true,
            },
            None => true,
        };
        Ok(if lagging {
            SyncStatus::Syncing
        } else {
            SyncStatus::Synced
        })
    }

    /// The status of an answer naming `named` collections and containing `shown` ones, given
    /// the chain's own status ([`Self::chain_status`], read alongside the page); schedules the
    /// backfill of named collections never seen before.
    pub async fn collection_status(
        &self,
        chain: Chain,
        chain_status: SyncStatus,
        named: &[Address],
        shown: &[Address],
    ) -> Result<SyncStatus, QueryError> {
        let mut status = chain_status;
        let all: BTreeSet<String> = named.iter().chain(shown).map(|a| a.to_string()).collect();
        if all.is_empty() {
            return Ok(status);
        }
        let rows = collection_sync::Entity::find()
            .filter(collection_sync::Column::ChainId.eq(chain.db_id()))
            .filter(
                collection_sync::Column::ContractAddress
                    .is_in(super::lists::padded(all.iter().cloned().collect())),
            )
            .all(&self.db)
            .await?;
        let known: BTreeSet<&str> = rows.iter().map(|r| r.contract_address.as_str()).collect();
        if rows.iter().any(|r| r.state != state::SYNCED) {
            status = SyncStatus::Syncing;
        }
        let unknown: Vec<String> = named
            .iter()
            .map(|a| a.to_string())
            .filter(|a| !known.contains(a.as_str()))
            .collect();
        if !unknown.is_empty() {
            status = SyncStatus::Syncing;
            let now = now_ms();
            let new_rows = unknown.into_iter().map(|a| {
                collection_sync::ActiveModel::from(collection_sync::Model {
                    chain_id: chain.db_id(),
                    contract_address: a,
                    state: state::PENDING.into(),
                    requested_at: now,
                    updated_at: now,
                    synced_to_block: None,
                    error: None,
                })
            });
            collection_sync::Entity::insert_many(new_rows)
                .on_conflict(crate::store::skip_existing([
                    collection_sync::Column::ChainId,
                    collection_sync::Column::ContractAddress,
                ]))
                .exec_without_returning(&self.db)
                .await?;
        }
        Ok(status)
    }
}
