//! Holdings as of a past block: the state after the last log of block `N`, amounts and
//! acquisition blocks included, replayed from the stored transfers up to `N` by the same rule
//! the holdings table is kept by ([`crate::store::replay_moves`]), so that as of the indexed
//! head the answer is the table's.
//!
//! - A wallet's holdings need only its own moves: with its history complete, every move that
//!   changed what it held is one it sent or received (two index ranges of `nft_transfers`).
//! - A collection's (or one token's) holders need the collection's moves up to `N`.
//!
//! A walk pinned to a block ([`super::walk::Walk::hold`]) reads its later pages at the head
//! and replays only what changed since ([`since`], [`merge`]): a page costs one more index range
//! (the moves after the pinned block) while the chain moves slowly under the walk.
//!
//! Both are read inside the caller's snapshot, then filtered, ordered and cut to the page in
//! memory: the cost grows with the moves up to `N` (see `docs/BENCHMARKS.md`), not with the
//! page. An incomplete answer keeps only the holdings partial history cannot have made up, as
//! the questions at the head do ([`super::nfts::certain_holdings`]).

use std::collections::{BTreeMap, HashSet};

use sea_orm::{ColumnTrait, Condition, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder};

use super::snapshot::Snapshot;
use super::status::{ChainView, Needs};
use super::walk::{Position, Walk};
use super::QueryError;
use super::SyncStatus;
use crate::entity::{contract, nft_holding, nft_transfer, scope_sync};
use crate::store::dialect::any_of_chain;
use crate::store::replay_moves;
use crate::types::{Address, Chain, ScopeKind, ScopeState, TokenStandard, Uint256};

use nft_transfer::Column as T;

/// Whose holdings to replay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Holders {
    /// One wallet's.
    Wallet(Address),
    /// Every holder of a collection, or of one of its tokens.
    Collection(Address, Option<Uint256>),
}

impl Holders {
    /// The moves that can change these holdings: the wallet's own (sent or received), or the
    /// collection's (or the token's).
    fn moves(self, chain: Chain) -> Condition {
        let on = Condition::all().add(T::ChainId.eq(chain.db_id()));
        match self {
            Holders::Wallet(w) => any_of_chain(
                T::ChainId,
                chain.db_id(),
                [
                    Condition::all().add(T::FromAddress.eq(w)),
                    Condition::all().add(T::ToAddress.eq(w)),
                ],
            ),
            Holders::Collection(c, None) => on.add(T::ContractAddress.eq(c)),
            Holders::Collection(c, Some(t)) => {
                on.add(T::ContractAddress.eq(c)).add(T::TokenId.eq(t))
            }
        }
    }
}

/// Which of the holdings to replay.
#[derive(Debug, Clone, Copy)]
pub(super) enum Within<'a> {
    /// All of them.
    All,
    /// Only these tokens' (contract, token id).
    Tokens(&'a HashSet<(Address, Uint256)>),
    /// Only the tokens of these collections.
    Contracts(&'a HashSet<Address>),
}

/// The holdings of `who` after block `block`, as holding rows (owner, contract, token id,
/// standard, amount, acquisition block), in no particular order.
pub(super) async fn holdings_at(
    db: &impl ConnectionTrait,
    chain: Chain,
    who: Holders,
    block: u64,
    within: Within<'_>,
) -> Result<Vec<nft_holding::Model>, QueryError> {
    let mut moves = who
        .moves(chain)
        .add(T::BlockNumber.lte(i64::try_from(block).unwrap_or(i64::MAX)));
    match within {
        Within::All => {}
        Within::Tokens(tokens) => {
            let contracts: HashSet<Address> = tokens.iter().map(|t| t.0).collect();
            let ids: HashSet<Uint256> = tokens.iter().map(|t| t.1).collect();
            moves = moves
                .add(T::ContractAddress.is_in(contracts))
                .add(T::TokenId.is_in(ids));
        }
        Within::Contracts(contracts) => {
            moves = moves.add(T::ContractAddress.is_in(contracts.iter().copied()));
        }
    }
    let rows = nft_transfer::Entity::find()
        .filter(moves)
        .order_by_asc(T::BlockNumber)
        .order_by_asc(T::LogIndex)
        .order_by_asc(T::BatchIndex)
        .all(db)
        .await?;
    let mut per_token: BTreeMap<(Address, Uint256), Vec<nft_transfer::Model>> = BTreeMap::new();
    for m in rows {
        per_token
            .entry((m.contract_address, m.token_id))
            .or_default()
            .push(m);
    }
    let mut out = Vec::new();
    for ((contract, token_id), moves) in per_token {
        if matches!(within, Within::Tokens(t) if !t.contains(&(contract, token_id))) {
            continue;
        }
        let (holders, kind) = replay_moves(&moves);
        for (owner, (amount, acquired)) in holders {
            if matches!(who, Holders::Wallet(w) if w != owner) {
                continue;
            }
            out.push(nft_holding::Model {
                chain_id: chain.db_id(),
                owner_address: owner,
                contract_address: contract,
                token_id,
                contract_type: kind,
                amount,
                block_number: acquired,
            });
        }
    }
    Ok(out)
}

/// The collections among `rows`' that are marked possible spam.
pub(super) async fn spam_among(
    db: &impl ConnectionTrait,
    chain: Chain,
    rows: &[nft_holding::Model],
) -> Result<HashSet<Address>, QueryError> {
    let contracts: HashSet<Address> = rows.iter().map(|r| r.contract_address).collect();
    if contracts.is_empty() {
        return Ok(HashSet::new());
    }
    let spam: Vec<Address> = contract::Entity::find()
        .filter(contract::Column::ChainId.eq(chain.db_id()))
        .filter(contract::Column::Address.is_in(contracts))
        .filter(contract::Column::PossibleSpam.eq(true))
        .all(db)
        .await?
        .into_iter()
        .map(|c| c.address)
        .collect();
    Ok(spam.into_iter().collect())
}

/// Keeps the rows partial history cannot have made up: those of collections whose history is
/// complete, and ERC721 tokens acquired at or after the live start block (see
/// [`super::nfts::certain_holdings`]).
pub(super) async fn keep_certain(
    db: &impl ConnectionTrait,
    chain: Chain,
    rows: Vec<nft_holding::Model>,
    start_block: Option<u64>,
) -> Result<Vec<nft_holding::Model>, QueryError> {
    let contracts: HashSet<Address> = rows.iter().map(|r| r.contract_address).collect();
    let complete: HashSet<Address> = if contracts.is_empty() {
        HashSet::new()
    } else {
        scope_sync::Entity::find()
            .filter(scope_sync::Column::ChainId.eq(chain.db_id()))
            .filter(scope_sync::Column::Scope.eq(ScopeKind::Contract.as_str()))
            .filter(scope_sync::Column::State.eq(ScopeState::Synced.as_str()))
            .filter(scope_sync::Column::Address.is_in(contracts))
            .all(db)
            .await?
            .into_iter()
            .map(|s| s.address)
            .collect()
    };
    let live = |r: &nft_holding::Model| {
        r.contract_type == TokenStandard::Erc721
            && start_block.is_some_and(|s| r.block_number >= i64::try_from(s).unwrap_or(i64::MAX))
    };
    Ok(rows
        .into_iter()
        .filter(|r| complete.contains(&r.contract_address) || live(r))
        .collect())
}

/// The tokens (contract, token id) `who` has moves of after `block`, as far as the snapshot
/// holds: the only holdings that can differ between `block` and the indexed head.
async fn touched_after(
    db: &impl ConnectionTrait,
    chain: Chain,
    who: Holders,
    block: u64,
) -> Result<HashSet<(Address, Uint256)>, QueryError> {
    use sea_orm::QuerySelect;
    let moves = who
        .moves(chain)
        .add(T::BlockNumber.gt(i64::try_from(block).unwrap_or(i64::MAX)));
    Ok(nft_transfer::Entity::find()
        .filter(moves)
        .select_only()
        .column(T::ContractAddress)
        .column(T::TokenId)
        .into_tuple::<(Address, Uint256)>()
        .all(db)
        .await?
        .into_iter()
        .collect())
}

/// What a page pinned to a past block must replace in the head's rows.
pub(super) struct Since {
    /// The tokens whose holdings changed after the pinned block.
    pub tokens: HashSet<(Address, Uint256)>,
    /// Their holdings as of the pinned block (by `who`).
    pub rows: Vec<nft_holding::Model>,
}

/// The holdings of `who` that changed after `pinned` and what they were at `pinned`; `None`
/// when nothing changed (the indexed head is `pinned`, or no move of `who` was stored since):
/// then the head's rows are the answer as of `pinned`.
pub(super) async fn since(
    db: &impl ConnectionTrait,
    chain: Chain,
    who: Holders,
    pinned: u64,
    indexed: Option<u64>,
) -> Result<Option<Since>, QueryError> {
    if indexed.is_none_or(|i| i <= pinned) {
        return Ok(None);
    }
    let tokens = touched_after(db, chain, who, pinned).await?;
    if tokens.is_empty() {
        return Ok(None);
    }
    let rows = holdings_at(db, chain, who, pinned, Within::Tokens(&tokens)).await?;
    Ok(Some(Since { tokens, rows }))
}

/// A page of a holdings walk at the head, settled in its snapshot.
pub(super) struct Settled {
    /// The chain's state in the snapshot.
    pub view: ChainView,
    /// Whether the answer is incomplete ([`Walk::incomplete`]).
    pub incomplete: bool,
    /// The status the answer's rows are judged by.
    pub status: SyncStatus,
    /// What changed after the block the walk is pinned to, on a later page.
    pub since: Option<Since>,
}

impl Settled {
    /// How many tokens changed since the pinned block: a page reads that many more rows.
    pub fn changed(&self) -> u64 {
        self.since.as_ref().map_or(0, |s| s.tokens.len() as u64)
    }
}

/// Settles a page of `who`'s holdings walk in `snap`: judges the answer by `needs`, pins the
/// walk (a later page checks the block its first page pinned) and reads what `who` moved
/// after that block, which the page answers as of.
pub(super) async fn settle<P: Position>(
    snap: &Snapshot<'_>,
    walk: &mut Walk<P>,
    chain: Chain,
    needs: &Needs,
    who: Holders,
) -> Result<Settled, QueryError> {
    let (view, done) = snap.settle(chain, |_| needs.clone()).await?;
    let incomplete = walk.incomplete(done.complete);
    walk.hold(snap.db(), chain, view.indexed_block).await?;
    let moved = match walk.pinned() {
        Some(b) => since(snap.db(), chain, who, b, view.indexed_block).await?,
        None => None,
    };
    Ok(Settled {
        view,
        incomplete,
        status: done.status,
        since: moved,
    })
}

/// One page as of a pinned block, from `head` (the head's rows after the position, in key
/// order, as many as `read` asked for) and `pinned` (the rows, as of the pinned block, of the
/// keys `changed` says moved since): the head's rows of changed keys are dropped, the pinned
/// ones put in their place. Returns up to `limit + 1` rows in key order, after `after`.
///
/// When the head's read was cut at `read`, a pinned row past its last key is left for a later
/// page: between them may lie head rows not read. Since at most as many head rows are dropped
/// as keys changed, `read = limit + 1 + changed` leaves a full page.
pub(super) fn merge<R, K: Ord>(
    head: Vec<R>,
    read: usize,
    changed: impl Fn(&R) -> bool,
    pinned: Vec<R>,
    key: impl Fn(&R) -> K,
    after: Option<K>,
    limit: usize,
) -> Vec<R> {
    let last = (head.len() >= read)
        .then(|| head.last().map(&key))
        .flatten();
    let mut rows: Vec<R> = head.into_iter().filter(|r| !changed(r)).collect();
    rows.extend(pinned.into_iter().filter(|r| {
        let k = key(r);
        after.as_ref().is_none_or(|a| k > *a) && last.as_ref().is_none_or(|l| k <= *l)
    }));
    rows.sort_by_key(|r| key(r));
    rows.truncate(limit + 1);
    rows
}

#[cfg(test)]
mod tests {
    use super::merge;

    #[test]
    fn a_pinned_page_replaces_the_changed_keys() {
        // Head rows 1..=6 read (a full read of 6); keys 2 and 5 changed: 2 is gone at the
        // pinned block, 5 is there, and 4.5 (10 * key) was there then, 9 is past the read.
        let head = vec![10, 20, 30, 40, 50, 60];
        let pinned = vec![45, 50, 90];
        let changed = |r: &i32| *r == 20 || *r == 50;
        let page = merge(head, 6, changed, pinned, |r| *r, Some(5), 3);
        assert_eq!(page, vec![10, 30, 40, 45]);
        // A read that was not cut: everything after the position is there.
        let page = merge(vec![10, 20], 6, |r| *r == 20, vec![90], |r| *r, None, 3);
        assert_eq!(page, vec![10, 90]);
    }
}
