//! The SYNCED / SYNCING rule of API.md: `SYNCED` promises that the answer is complete.
//!
//! Completeness has three scopes: the **chain** (indexed from block 0, or an imported history
//! declared whole), a **contract** and a **wallet** (their history before the live start block
//! is stored: `scope_sync` rows in state `synced`). Each question says which scopes it depends
//! on as [`Needs`]: the answer is complete when the chain is, or when every scope of one of the
//! alternatives is. An answer is `SYNCED` only when it is complete **and** the indexer is
//! within `max_lag_blocks` of the chain head (nothing indexed yet: `SYNCING`).
//!
//! An incomplete answer schedules the history fetch of the scopes it names (once, through the
//! database: `store::scopes::schedule`), and a failed fetch whose back-off has passed is
//! scheduled again. When unsure, the answer is `SYNCING`: a scope row that does not parse, a
//! missing checkpoint, a state other than `synced` all count as incomplete.

use super::{QueryError, QueryService, SyncStatus};
use crate::entity::chain_state;
use crate::store::now_ms;
use crate::store::scopes::{self, ScopeRow};
use crate::types::{Chain, Scope, ScopeState};

use sea_orm::{ConnectionTrait, EntityTrait};

/// The chain's indexing state, as answers need it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChainView {
    /// The indexer trails the head by more than `max_lag_blocks`, or has indexed nothing.
    pub lagging: bool,
    /// The chain's whole history is stored: every answer is complete.
    pub complete: bool,
    /// The live start block: every transfer from here on is stored. `None`: not known yet.
    pub start_block: Option<u64>,
    /// The chain's head as the indexer last saw it (on a replica, the primary's indexer too).
    pub head: Option<u64>,
    /// The last block the indexer has stored (as of the snapshot it was read in): a complete
    /// answer holds every record up to it. `None`: nothing indexed yet.
    pub indexed_block: Option<u64>,
    /// The kept ERC20 balances are left out by a backfill (`store::backfill_balances`): an
    /// answer read from them is not complete.
    pub balances_pending: bool,
}

/// The scopes an answer depends on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Needs {
    /// Complete when every scope of any one of these is (the chain always suffices). Empty:
    /// only the chain.
    pub alternatives: Vec<Vec<Scope>>,
    /// Scheduled when the answer is incomplete.
    pub schedule: Vec<Scope>,
    /// The answer needs no history (e.g. transfers from the live start block on).
    pub none: bool,
    /// The last block the answer covers (`to_block`); `None`: the indexed head. Complete only
    /// once the indexer has stored it (or the chain's head, when it lies beyond).
    pub up_to: Option<u64>,
    /// `up_to` is the block the answer is as of (a balance at block N), not the end of a range
    /// of records: a block above the chain's head is refused, not answered.
    pub as_of: bool,
    /// The answer is read from the kept ERC20 balances (a token's holders): `SYNCING` while a
    /// backfill has left them out.
    pub kept_balances: bool,
}

impl Needs {
    /// The same scopes, for an answer as of `block` (a state after it, not a range of records).
    pub fn as_of(self, block: u64) -> Self {
        Needs {
            up_to: Some(block),
            as_of: true,
            ..self
        }
    }

    /// Every scope named, once.
    fn scopes(&self) -> Vec<Scope> {
        let mut all: Vec<Scope> = self
            .alternatives
            .iter()
            .flatten()
            .chain(&self.schedule)
            .copied()
            .collect();
        all.sort();
        all.dedup();
        all
    }
}

/// Whether an answer is complete, and its status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Completeness {
    pub complete: bool,
    pub status: SyncStatus,
}

impl QueryService {
    /// The chain's indexing state. Read from a replica, the chain counts as lagging unless
    /// the replica has stored what the primary's indexer has (within `max_lag_blocks` of the
    /// head the primary has seen): a replica behind makes an answer `SYNCING`, never a
    /// `SYNCED` one with records missing. A primary that cannot be asked: `SYNCING` too.
    ///
    /// `db` is the read connection or a snapshot of it ([`super::snapshot`]).
    pub async fn chain_view<C: ConnectionTrait>(
        &self,
        db: &C,
        chain: Chain,
    ) -> Result<ChainView, QueryError> {
        let here = chain_state::Entity::find_by_id(chain.db_id()).one(db);
        let (row, primary_head) = match &self.primary {
            None => (here.await?, None),
            Some(p) => {
                let there = chain_state::Entity::find_by_id(chain.db_id()).one(p);
                let (row, there) = futures_util::join!(here, there);
                let head = match there {
                    Ok(r) => r.and_then(|r| r.head_block.max(r.indexed_block)),
                    Err(e) => {
                        tracing::warn!(error = %e, "the primary does not answer; answers say SYNCING");
                        Some(i64::MAX)
                    }
                };
                (row?, Some(head))
            }
        };
        let Some(s) = row else {
            return Ok(ChainView {
                lagging: true,
                complete: false,
                start_block: None,
                head: None,
                indexed_block: None,
                balances_pending: false,
            });
        };
        let head = match primary_head {
            None => s.head_block,
            Some(p) => s.head_block.max(p),
        };
        let lagging = match (s.indexed_block, head) {
            (Some(i), Some(h)) => h.saturating_sub(i) as u64 > self.config.max_lag_blocks,
            _ => true,
        };
        let start_block = s.start_block.and_then(|b| u64::try_from(b).ok());
        Ok(ChainView {
            lagging,
            complete: s.history_complete || start_block == Some(0),
            start_block,
            head: head
                .max(s.indexed_block)
                .and_then(|h| u64::try_from(h).ok()),
            indexed_block: s.indexed_block.and_then(|b| u64::try_from(b).ok()),
            balances_pending: s.balances_pending,
        })
    }

    /// The stored state of the scopes `needs` names (none when it names none), read through
    /// `db` (the snapshot the answer's rows are read in).
    pub async fn scope_rows<C: ConnectionTrait>(
        &self,
        db: &C,
        chain: Chain,
        needs: &Needs,
    ) -> Result<Vec<ScopeRow>, QueryError> {
        Ok(scopes::read(db, chain, &needs.scopes()).await?)
    }

    /// Decides an answer's completeness from the chain's state and its scopes' rows (read in
    /// the page's snapshot). The second value is the history to schedule, if any: the answer is
    /// incomplete and one of its scopes has no row yet, or failed and may be retried now.
    pub fn judge(view: &ChainView, needs: &Needs, rows: &[ScopeRow]) -> (Completeness, bool) {
        let synced = |s: &Scope| {
            rows.iter()
                .any(|r| r.scope == *s && r.state == ScopeState::Synced)
        };
        let complete = view.complete
            || needs.none
            || needs
                .alternatives
                .iter()
                .any(|alt| !alt.is_empty() && alt.iter().all(synced));
        let schedule = !complete && Self::needs_scheduling(needs, rows);
        // An answer up to a block the indexer has not stored yet is incomplete, whatever its
        // scopes: the node may have records there that are not stored.
        let reached = needs.up_to.is_none_or(|b| {
            let last = view.head.map_or(b, |h| b.min(h));
            view.indexed_block.is_some_and(|i| last <= i)
        });
        // Kept balances a backfill left out are not summed yet: not complete, whatever the
        // scopes (and nothing to schedule: the backfill sums them).
        let summed = !(needs.kept_balances && view.balances_pending);
        let status = if complete && reached && summed && !view.lagging {
            SyncStatus::Synced
        } else {
            SyncStatus::Syncing
        };
        (Completeness { complete, status }, schedule)
    }

    /// Schedules the history fetch of `scopes` (once, through the primary).
    pub async fn schedule(&self, chain: Chain, scopes: &[Scope]) -> Result<(), QueryError> {
        scopes::schedule(self.writer(), chain, scopes).await?;
        Ok(())
    }

    /// Whether a scope to schedule has no row yet, or failed and may be retried now.
    fn needs_scheduling(needs: &Needs, rows: &[ScopeRow]) -> bool {
        let now = now_ms();
        needs
            .schedule
            .iter()
            .any(|s| match rows.iter().find(|r| r.scope == *s) {
                None => true,
                Some(r) => r.state == ScopeState::Failed && r.retry_at.is_none_or(|t| t <= now),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Address;

    fn a(n: u8) -> Address {
        Address::parse(&format!("0x{:040x}", n)).expect("address")
    }

    #[test]
    fn scopes_are_named_once() {
        let w = Scope::wallet(a(1));
        let c = Scope::contract(a(2));
        let needs = Needs {
            alternatives: vec![vec![w], vec![c, w]],
            schedule: vec![w],
            ..Needs::default()
        };
        assert_eq!(needs.scopes(), vec![c, w]);
    }

    fn view(indexed: u64, head: u64) -> ChainView {
        ChainView {
            lagging: false,
            complete: true,
            start_block: Some(0),
            head: Some(head),
            indexed_block: Some(indexed),
            balances_pending: false,
        }
    }

    fn up_to(block: Option<u64>) -> Needs {
        Needs {
            up_to: block,
            ..Needs::default()
        }
    }

    #[test]
    fn an_answer_up_to_a_block_not_stored_yet_is_syncing() {
        let status = |v: ChainView, n: Needs| QueryService::judge(&v, &n, &[]).0.status;
        // The indexer within the lag of the head: complete up to what it stored.
        assert_eq!(status(view(100, 105), up_to(None)), SyncStatus::Synced);
        assert_eq!(status(view(100, 105), up_to(Some(100))), SyncStatus::Synced);
        // The node has block 103, the indexer has not stored it.
        assert_eq!(
            status(view(100, 105), up_to(Some(103))),
            SyncStatus::Syncing
        );
        // A range ending past the head covers what exists: up to the head.
        assert_eq!(
            status(view(105, 105), up_to(Some(10_000))),
            SyncStatus::Synced
        );
        assert_eq!(
            status(view(104, 105), up_to(Some(10_000))),
            SyncStatus::Syncing
        );
        // Nothing indexed: never complete.
        let none = ChainView {
            indexed_block: None,
            head: None,
            ..view(0, 0)
        };
        assert_eq!(status(none, up_to(Some(1))), SyncStatus::Syncing);
    }

    #[test]
    fn an_answer_from_kept_balances_a_backfill_left_out_is_syncing() {
        let status = |v: ChainView, n: Needs| QueryService::judge(&v, &n, &[]).0.status;
        let pending = ChainView {
            balances_pending: true,
            ..view(100, 100)
        };
        let holders = Needs {
            kept_balances: true,
            ..Needs::default()
        };
        assert_eq!(status(pending, holders.clone()), SyncStatus::Syncing);
        assert_eq!(status(view(100, 100), holders), SyncStatus::Synced);
        // An answer that does not read them is not affected.
        assert_eq!(status(pending, Needs::default()), SyncStatus::Synced);
    }
}
