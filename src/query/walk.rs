//! What every keyset-paginated question shares: reading the cursor it resumes from into the
//! question's typed position ([`Position`]), and turning the rows read (up to one more than the
//! page) into a [`Page`] with the next cursor. No question decodes cursor text itself.

use std::sync::Arc;

use super::cursor::{CursorError, CursorKind, CursorMint, CursorPayload};
use super::{Edge, Page, QueryError, QueryService, SyncStatus};
use crate::types::{Address, Uint256};

/// One value of a keyset position, parsed from the text a cursor carries (as
/// [`super::KeyPart`] writes it).
pub(super) trait Part: Sized {
    /// `None` when `text` is not such a value.
    fn parse(text: &str) -> Option<Self>;
}

impl Part for i64 {
    fn parse(text: &str) -> Option<Self> {
        text.parse().ok()
    }
}

impl Part for i32 {
    fn parse(text: &str) -> Option<Self> {
        text.parse().ok()
    }
}

impl Part for String {
    fn parse(text: &str) -> Option<Self> {
        Some(text.to_string())
    }
}

impl Part for Address {
    fn parse(text: &str) -> Option<Self> {
        Address::parse(text).ok()
    }
}

impl Part for Uint256 {
    fn parse(text: &str) -> Option<Self> {
        Uint256::from_hex64(text).ok()
    }
}

/// A question's keyset position: the values of the columns its list is ordered by, in order.
pub(super) trait Position: Sized {
    /// `None` unless `texts` are exactly such values.
    fn parse(texts: &[String]) -> Option<Self>;
}

impl<A: Part> Position for (A,) {
    fn parse(texts: &[String]) -> Option<Self> {
        match texts {
            [a] => Some((A::parse(a)?,)),
            _ => None,
        }
    }
}

impl<A: Part, B: Part> Position for (A, B) {
    fn parse(texts: &[String]) -> Option<Self> {
        match texts {
            [a, b] => Some((A::parse(a)?, B::parse(b)?)),
            _ => None,
        }
    }
}

impl<A: Part, B: Part, C: Part> Position for (A, B, C) {
    fn parse(texts: &[String]) -> Option<Self> {
        match texts {
            [a, b, c] => Some((A::parse(a)?, B::parse(b)?, C::parse(c)?)),
            _ => None,
        }
    }
}

/// One page of a walk: where it resumes (a position `P`) and what its cursors are bound to.
pub(super) struct Walk<P> {
    kind: CursorKind,
    digest: String,
    /// The cursor this page resumes from; `None` on the first page.
    start: Option<CursorPayload>,
    /// The position `start` names.
    position: Option<P>,
    /// The total this page reports (see [`Walk::counting`]).
    total: Option<u64>,
    /// The indexed block the page was read as of (see [`Walk::at`]).
    block: Option<u64>,
    /// The block the walk is pinned to, with its hash's first 16 hex digits (see
    /// [`Walk::hold`]).
    pinned: Option<(u64, String)>,
}

/// The part of a block's hash a cursor carries: 64 bits tell a replaced block from its
/// predecessor.
fn short_hash(hash: &alloy::primitives::B256) -> String {
    crate::types::hex::lower(&hash.as_slice()[..8])
}

impl<P: Position> Walk<P> {
    /// Checks `after` (if any) against the question's `kind` and filter `digest`, and reads the
    /// position it resumes after.
    pub fn begin(
        service: &QueryService,
        kind: CursorKind,
        digest: String,
        after: Option<&str>,
    ) -> Result<Self, QueryError> {
        let start = after
            .map(|c| service.cursors.decode(c, kind, &digest))
            .transpose()?;
        let position = start
            .as_ref()
            .map(|p| P::parse(&p.after).ok_or(CursorError::Invalid))
            .transpose()?;
        let pinned = start.as_ref().and_then(|p| p.pinned.clone());
        Ok(Self {
            kind,
            digest,
            start,
            position,
            total: None,
            block: None,
            pinned,
        })
    }

    /// The block this walk answers as of, when an earlier page pinned it: its pages hold no
    /// record of a later block.
    pub fn pinned(&self) -> Option<u64> {
        self.pinned.as_ref().map(|(b, _)| *b)
    }

    /// Pins the walk, read in the page's snapshot `db`: a first page pins the indexed block
    /// (when its header is stored), and its cursors carry it; a later page checks that the
    /// block it is pinned to is still the one the walk began on. A reorg that replaced it (or
    /// any block below it) changes its hash, or removes its header until the indexer stores
    /// the new one: then the walk cannot go on without a gap, and its cursor is refused.
    pub async fn hold(
        &mut self,
        db: &impl sea_orm::ConnectionTrait,
        chain: crate::types::Chain,
        indexed: Option<u64>,
    ) -> Result<(), QueryError> {
        if let Some((block, hash)) = &self.pinned {
            let stored = crate::store::chain::block_hash(db, chain, *block).await?;
            if stored.map(|h| short_hash(&h)).as_deref() != Some(hash.as_str()) {
                return Err(CursorError::Reorganized(*block).into());
            }
            return Ok(());
        }
        if self.start.is_none() {
            if let Some(block) = indexed {
                let stored = crate::store::chain::block_hash(db, chain, block).await?;
                self.pinned = stored.map(|h| (block, short_hash(&h)));
            }
        }
        Ok(())
    }

    /// The total an earlier page of this walk counted and its cursor carries, if any: a walk
    /// counts at most once, however deep it goes.
    pub fn counted(&self) -> Option<u64> {
        self.start.as_ref().and_then(|p| p.total)
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

    /// The keyset position the page resumes after; `None` on the first page.
    pub fn position(&self) -> Option<&P> {
        self.position.as_ref()
    }

    /// Whether this page is incomplete: the answer is, or an earlier page of the walk was (a
    /// walk begun incomplete stays so, or its last page could say `SYNCED`).
    pub fn incomplete(&self, complete: bool) -> bool {
        !complete || self.start.as_ref().is_some_and(|p| p.incomplete)
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
        let page = self.start.as_ref().map_or(1, |p| p.page);
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
            self.pinned,
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
