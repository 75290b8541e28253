//! One moment per answer: the rows an answer returns, the chain's state and the scope rows its
//! status is judged by are read in one read-only transaction, so `SYNCED` describes exactly
//! the rows returned (API.md).
//!
//! Read in separate statements on separate connections, a batch committed between the page
//! and the chain's state makes the state one block newer than the page: a `SYNCED` answer then
//! misses that block's records. In one snapshot (PostgreSQL and MySQL/MariaDB: `REPEATABLE
//! READ READ ONLY`, whose reads all see the database as of the first; SQLite: a deferred
//! transaction, whose reads in WAL mode all see the same committed state) they cannot disagree.
//! On a streaming replica the snapshot is the replica's, and the primary's head it is compared
//! with is read at or after the request arrived (see [`QueryService::chain_view`]).

use std::sync::Mutex;

use sea_orm::{AccessMode, DatabaseTransaction, IsolationLevel, TransactionTrait};

use super::status::{ChainView, Completeness, Needs};
use super::{QueryError, QueryService};
use crate::store::dialect::Dialect;
use crate::types::{Chain, Scope};

/// A read-only snapshot of the read connection, open until [`Snapshot::close`] (dropped
/// unclosed, it is rolled back).
pub(super) struct Snapshot<'s> {
    service: &'s QueryService,
    txn: DatabaseTransaction,
    /// History to schedule once the snapshot is closed: the write takes a connection of its
    /// own, which must not wait on the one the snapshot holds.
    schedule: Mutex<Option<(Chain, Vec<Scope>)>>,
}

impl QueryService {
    /// Begins a snapshot on the connection reads go to.
    pub(super) async fn snapshot(&self) -> Result<Snapshot<'_>, QueryError> {
        let txn = match Dialect::of(&self.db) {
            // SQLite has one isolation level; a deferred transaction's first read fixes what
            // every later read of it sees (WAL: the writer goes on meanwhile).
            Dialect::Sqlite => self.db.begin().await?,
            Dialect::Postgres | Dialect::MySql => {
                self.db
                    .begin_with_config(
                        Some(IsolationLevel::RepeatableRead),
                        Some(AccessMode::ReadOnly),
                    )
                    .await?
            }
        };
        Ok(Snapshot {
            service: self,
            txn,
            schedule: Mutex::new(None),
        })
    }
}

impl Snapshot<'_> {
    /// The connection every statement of the answer reads through.
    pub fn db(&self) -> &DatabaseTransaction {
        &self.txn
    }

    /// The chain's state and the answer's completeness as of this snapshot. `needs` gives the
    /// scopes the answer depends on for a live start block (`None`: every scope it could
    /// depend on, the ones read); an incomplete answer schedules their history when the
    /// snapshot is closed.
    pub async fn settle(
        &self,
        chain: Chain,
        needs: impl Fn(Option<u64>) -> Needs,
    ) -> Result<(ChainView, Completeness), QueryError> {
        let service = self.service;
        let view = service.chain_view(&self.txn, chain).await?;
        let rows = service.scope_rows(&self.txn, chain, &needs(None)).await?;
        let needs = needs(view.start_block);
        if let (Some(block), Some(head), true) = (needs.up_to, view.head, needs.as_of) {
            if block > head {
                return Err(QueryError::AboveHead { block, head });
            }
        }
        let (done, schedule) = QueryService::judge(&view, &needs, &rows);
        if schedule {
            *self.schedule.lock().unwrap_or_else(|e| e.into_inner()) =
                Some((chain, needs.schedule));
        }
        Ok((view, done))
    }

    /// Ends the snapshot, then schedules the history an incomplete answer lacks.
    pub async fn close(self) -> Result<(), QueryError> {
        self.txn.commit().await?;
        let pending = self
            .schedule
            .into_inner()
            .unwrap_or_else(|e| e.into_inner());
        if let Some((chain, scopes)) = pending {
            self.service.schedule(chain, &scopes).await?;
        }
        Ok(())
    }
}
