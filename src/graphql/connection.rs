//! What every Relay connection shares: the generic [`Connection`] and [`Edge`], `PageInfo`,
//! `SyncStatus`, and the cost of a page ([`page_cost`]).
//!
//! A connection is built from one page of the query service ([`Connection::from_page`]). Each
//! node type names its connection and edge types ([`Listed`]), so that the schema shows one
//! `XConnection` / `XEdge` pair per kind of node, and this module needs none of them.

use std::borrow::Cow;
use std::sync::Arc;

use async_graphql::{Enum, Object, OutputType, SimpleObject, TypeName};

use crate::graphql::fast_path::plain::{Plain, PlainEdge, PlainEdges, PlainNode};

use crate::query::{self, CursorMint, Key, Page};

/// A node type of a list: the names of its connection and edge types in the schema.
pub trait Listed: PlainNode {
    /// The name of `Connection<Self>`, e.g. `NftTransferConnection`.
    const CONNECTION: &'static str;
    /// The name of `Edge<Self>`, e.g. `NftTransferEdge`.
    const EDGE: &'static str;
}

impl<N: Listed + Send + Sync> TypeName for Edge<N> {
    fn type_name() -> Cow<'static, str> {
        Cow::Borrowed(N::EDGE)
    }
}

impl<N: Listed + Send + Sync> TypeName for Connection<N> {
    fn type_name() -> Cow<'static, str> {
        Cow::Borrowed(N::CONNECTION)
    }
}

/// The `XEdge` objects: a record with the cursor that resumes right after it (signed only when
/// selected).
pub struct Edge<N> {
    key: Key,
    mint: Arc<CursorMint>,
    node: N,
}

impl<N: OutputType + Listed> PlainEdge for Edge<N> {
    type Node = N;

    fn cursor_text(&self) -> String {
        self.mint.cursor(&self.key)
    }

    fn record(&self) -> &N {
        &self.node
    }
}

/// A record of the list, with its cursor.
#[Object(name_type)]
impl<N: OutputType + Listed> Edge<N> {
    /// Pass as `after` to get the records that follow this one.
    async fn cursor(&self) -> String {
        self.cursor_text()
    }

    /// The record.
    async fn node(&self) -> Plain<'_, N> {
        Plain(&self.node)
    }
}

/// The `XConnection` objects: one page of a list.
pub struct Connection<N> {
    pub(super) edges: Vec<Edge<N>>,
    pub(super) page_info: PageInfo,
    pub(super) status: SyncStatus,
}

impl<N> Connection<N> {
    /// The connection of `page`, each record made a node by `node`.
    pub fn from_page<T>(page: Page<T>, mut node: impl FnMut(T) -> N) -> Self {
        let page_info = PageInfo::from(&page);
        let status = page.status.into();
        let mint = page.mint;
        let edges = page
            .edges
            .into_iter()
            .map(|e| Edge {
                key: e.key,
                mint: mint.clone(),
                node: node(e.node),
            })
            .collect();
        Self {
            edges,
            page_info,
            status,
        }
    }
}

/// One page of a list, in the order the field that returned it states. Pass
/// `pageInfo.endCursor` as `after` (with the same arguments) for the next page.
#[Object(name_type)]
impl<N: OutputType + Listed> Connection<N> {
    /// The records of this page, each with the cursor that resumes right after it.
    async fn edges(&self) -> PlainEdges<'_, Edge<N>> {
        PlainEdges(&self.edges)
    }

    /// Whether more pages follow, and the cursors to get them.
    async fn page_info(&self) -> &PageInfo {
        &self.page_info
    }

    /// `SYNCED` when the answer is complete: it holds every matching record over the chain's
    /// whole history up to the indexer's head (the field that returned this connection says
    /// which wallet or contract histories that takes). Otherwise `SYNCING`: such a history is
    /// still being fetched (the first request for it schedules it), or the indexer trails the
    /// chain head; ask again later.
    async fn status(&self) -> SyncStatus {
        self.status
    }
}

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
    10 + child_complexity.saturating_mul(blocks(first))
}

/// The complexity of a list that can sit in the nodes of another list (`Token.transfers`,
/// `NftCollection.*`): nested, it runs its statements once per record of the
/// outer page, which counts it once per block of 10, so it costs [`NESTED_LIST`] rather
/// than 10. An outer page of 100 records cannot nest a list within [`super::MAX_COMPLEXITY`];
/// one of 50 can.
pub fn nested_page_cost(first: i32, child_complexity: usize) -> usize {
    NESTED_LIST + child_complexity.saturating_mul(blocks(first))
}

/// The base cost of a list that may be nested in another list's nodes: 20 per outer record.
pub const NESTED_LIST: usize = 200;

/// Started blocks of 10 records in a page of `first` (1 to 100).
fn blocks(first: i32) -> usize {
    usize::try_from(first.clamp(1, 100))
        .unwrap_or(1)
        .div_ceil(10)
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
        assert_eq!(nested_page_cost(100, 30), 500);
    }
}
