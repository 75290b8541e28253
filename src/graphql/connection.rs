//! What both Relay connections share: `PageInfo` and `SyncStatus`.

use async_graphql::{Enum, SimpleObject};

use crate::query::{self, Page};

/// Where a page sits in the whole answer (Relay cursor connections).
#[derive(Debug, Clone, PartialEq, Eq, SimpleObject)]
pub struct PageInfo {
    /// Whether more records follow: pass `endCursor` as `after` to get them.
    pub has_next_page: bool,
    /// Whether records precede this page (it was requested with `after`).
    pub has_previous_page: bool,
    /// The cursor of the first edge; `null` when the page is empty.
    pub start_cursor: Option<String>,
    /// The cursor of the last edge; `null` when the page is empty.
    pub end_cursor: Option<String>,
}

impl<T> From<&Page<T>> for PageInfo {
    fn from(p: &Page<T>) -> Self {
        PageInfo {
            has_next_page: p.next_cursor.is_some(),
            has_previous_page: p.page > 1,
            start_cursor: p.edges.first().map(|e| p.cursor(e)),
            end_cursor: p.edges.last().map(|e| p.cursor(e)),
        }
    }
}

/// Whether an answer is complete.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Enum)]
pub enum SyncStatus {
    /// The answer is complete: it holds every matching record over the chain's whole history
    /// up to the indexer's head (every wallet, contract or chain it depends on is complete, and
    /// the indexer is caught up with the chain head).
    Synced,
    /// The history of a wallet or contract the answer depends on is still being fetched (the
    /// first such request schedules it), or the indexer trails the chain head: the answer may
    /// be incomplete. Ask again later.
    Syncing,
}

impl From<query::SyncStatus> for SyncStatus {
    fn from(s: query::SyncStatus) -> Self {
        match s {
            query::SyncStatus::Synced => SyncStatus::Synced,
            query::SyncStatus::Syncing => SyncStatus::Syncing,
        }
    }
}

/// The complexity of a connection field: 10 for its statements, plus its selection once per
/// started block of 10 records. A full page of 100 transfers with every field costs 230.
pub fn page_cost(first: i32, child_complexity: usize) -> usize {
    let blocks = usize::try_from(first.clamp(1, 100))
        .unwrap_or(1)
        .div_ceil(10);
    10 + child_complexity.saturating_mul(blocks)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cost_grows_with_the_page() {
        assert_eq!(page_cost(1, 30), 40);
        assert_eq!(page_cost(100, 30), 310);
        assert_eq!(page_cost(-5, 30), 40);
        assert_eq!(page_cost(10_000, 30), 310);
    }
}
