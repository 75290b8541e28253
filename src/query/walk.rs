//! What every keyset-paginated question shares: reading the cursor it resumes from, and turning
//! the rows read (up to one more than the page) into a [`Page`] with the next cursor.

use std::sync::Arc;

use super::cursor::{CursorKind, CursorMint, CursorPayload};
use super::{Edge, Page, QueryError, QueryService, SyncStatus};

/// One page of a walk: where it resumes and what its cursors are bound to.
pub(super) struct Walk {
    kind: CursorKind,
    digest: String,
    /// The cursor this page resumes from; `None` on the first page.
    pub start: Option<CursorPayload>,
    /// The total this page reports (see [`Walk::counting`]).
    total: Option<u64>,
    /// The indexed block the page was read as of (see [`Walk::at`]).
    block: Option<u64>,
}

impl Walk {
    /// Checks `after` (if any) against the question's `kind` and filter `digest`.
    pub fn begin(
        service: &QueryService,
        kind: CursorKind,
        digest: String,
        after: Option<&str>,
    ) -> Result<Self, QueryError> {
        let start = after
            .map(|c| service.cursors.decode(c, kind, &digest))
            .transpose()?;
        Ok(Self {
            kind,
            digest,
            start,
            total: None,
            block: None,
        })
    }

    /// The total an earlier page of this walk counted and its cursor carries, if any: a walk
    /// counts at most once, however deep it goes.
    pub fn counted(&self) -> Option<u64> {
        self.start.as_ref().and_then(|p| p.t)
    }

    /// Reports `total` on this page; its cursors carry it on (or the figure counted earlier,
    /// when this page did not ask for it).
    pub fn counting(mut self, total: Option<u64>) -> Self {
        self.total = total;
        self
    }

    /// Reports the page as read when the indexer had stored `block`.
    pub fn at(mut self, block: Option<u64>) -> Self {
        self.block = block;
        self
    }

    /// The keyset position the page resumes after.
    pub fn position(&self) -> Option<&[String]> {
        self.start.as_ref().map(|p| p.a.as_slice())
    }

    /// Whether this page is incomplete: the answer is, or an earlier page of the walk was (a
    /// walk begun incomplete stays so, or its last page could say `SYNCED`).
    pub fn incomplete(&self, complete: bool) -> bool {
        !complete || self.start.as_ref().is_some_and(|p| p.i)
    }

    /// The page: `rows` (up to `limit + 1`, in output order) cut at `limit`, each made an edge,
    /// a next cursor when a row was left over, `SYNCING` when `incomplete`.
    pub fn finish<R, T>(
        self,
        service: &QueryService,
        rows: Vec<R>,
        limit: u64,
        incomplete: bool,
        status: SyncStatus,
        edge: impl Fn(R) -> Result<Edge<T>, QueryError>,
    ) -> Result<Page<T>, QueryError> {
        let page = self.start.as_ref().map_or(1, |p| p.p);
        let has_more = rows.len() as u64 > limit;
        let edges = rows
            .into_iter()
            .take(limit as usize)
            .map(edge)
            .collect::<Result<Vec<_>, QueryError>>()?;
        let carried = self.total.or(self.counted());
        let mint = Arc::new(CursorMint::new(
            &service.cursors,
            self.kind,
            self.digest,
            page + 1,
            carried,
            incomplete,
        ));
        let next_cursor = if has_more {
            edges.last().map(|e| mint.cursor(&e.key))
        } else {
            None
        };
        Ok(Page {
            edges,
            mint,
            next_cursor,
            page,
            page_size: limit,
            total: self.total,
            block: self.block,
            status: if incomplete {
                SyncStatus::Syncing
            } else {
                status
            },
        })
    }
}
