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
        })
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
        let mint = Arc::new(CursorMint::new(
            &service.cursors,
            self.kind,
            self.digest,
            page + 1,
            None,
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
            total: None,
            status: if incomplete {
                SyncStatus::Syncing
            } else {
                status
            },
        })
    }
}
