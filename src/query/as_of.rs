//! Holdings as of a past block: the state after the last log of block `N`, amounts and
//! acquisition blocks included, replayed from the stored transfers up to `N` by the same rule
//! the holdings table is kept by ([`crate::store::replay_moves`]), so that as of the indexed
//! head the answer is the table's.
//!
//! - A wallet's holdings need only its own moves: with its history complete, every move that
//!   changed what it held is one it sent or received (two index ranges of `nft_transfers`).
//! - A collection's (or one token's) holders need the collection's moves up to `N`.
//!
//! Both are read inside the caller's snapshot, then filtered, ordered and cut to the page in
//! memory: the cost grows with the moves up to `N` (see `docs/BENCHMARKS.md`), not with the
//! page. An incomplete answer keeps only the holdings partial history cannot have made up, as
//! the questions at the head do ([`super::nfts::certain_holdings`]).

use std::collections::{BTreeMap, HashSet};

use sea_orm::{ColumnTrait, Condition, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder};

use super::QueryError;
use crate::entity::{contract, nft_holding, nft_transfer, scope_sync};
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

/// The holdings of `who` after block `block`, as holding rows (owner, contract, token id,
/// standard, amount, acquisition block), in no particular order.
pub(super) async fn holdings_at(
    db: &impl ConnectionTrait,
    chain: Chain,
    who: Holders,
    block: u64,
) -> Result<Vec<nft_holding::Model>, QueryError> {
    let mut moves = Condition::all()
        .add(T::ChainId.eq(chain.db_id()))
        .add(T::BlockNumber.lte(i64::try_from(block).unwrap_or(i64::MAX)));
    moves = match who {
        Holders::Wallet(w) => moves.add(
            Condition::any()
                .add(T::FromAddress.eq(w))
                .add(T::ToAddress.eq(w)),
        ),
        Holders::Collection(c, None) => moves.add(T::ContractAddress.eq(c)),
        Holders::Collection(c, Some(t)) => {
            moves.add(T::ContractAddress.eq(c)).add(T::TokenId.eq(t))
        }
    };
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
