//! Who holds this ERC20 token, and how much of it moved? Read from the balances and totals the
//! store keeps beside the transfers (`store::erc20_balances`), never summed per request.
//!
//! Both answers depend on the token contract's whole history (API.md): with it, every holder's
//! balance and the token's supply (minted minus burned: the sum of all balances) are exact, and
//! the answer is `SYNCED`. Before, the first request schedules the contract's history and the
//! answer is `SYNCING`; the holders shown are then only those whose own wallet history is
//! stored (a balance summed from part of a history would be made up), and the supply is
//! unknown (`None`), so no share of it is given.

use sea_orm::sea_query::{Expr, ExprTrait, Query, SelectStatement};
use sea_orm::{ColumnTrait, Condition, EntityTrait, QueryFilter, QueryOrder, QuerySelect};

use std::cmp::Ordering;
use std::collections::HashSet;

use super::answer::{Answer, Include, RelatedKeys, Relates};
use super::as_of;
use super::cursor::{query_digest, CursorKind};
use super::erc20_as_of::{holders_since, HoldersSince};
use super::status::Needs;
use super::walk::Walk;
use super::{Edge, Key, KeyPart, Page, QueryError, QueryService, SyncStatus};
use crate::entity::{erc20_balance, erc20_token_total, scope_sync};
use crate::types::{Address, Chain, PageSize, Scope, ScopeKind, ScopeState, SortOrder, Uint256};

use erc20_balance::Column as B;

/// Filters of [`QueryService::token_holders`]: a token's holders by balance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenHoldersQuery {
    pub chain: Chain,
    /// The token contract.
    pub contract: Address,
    /// `Desc`: largest balance first (the default); `Asc`: smallest first. Ties by holder
    /// address in the same direction.
    pub order: SortOrder,
    pub page_size: PageSize,
    /// The holders after this block (`to_block`, `atBlock`); `None`: now.
    pub at_block: Option<u64>,
}

/// One holder's balance of a token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenHolder {
    /// The token contract.
    pub contract: Address,
    /// The holder.
    pub owner: Address,
    /// The balance, in the token's smallest unit; never zero.
    pub balance: Uint256,
    /// The block of the holder's last stored transfer of the token.
    pub block_number: u64,
}

impl Relates for TokenHolder {
    /// The token's metadata, the holder's label, and the holder as a contract (a holder that
    /// is a known contract is one).
    fn keys(&self, keys: &mut RelatedKeys) {
        keys.contracts.extend([self.contract, self.owner]);
        keys.wallets.push(self.owner);
    }
}

/// A page of a token's holders, with the token's supply when it is known.
#[derive(Debug, Clone)]
pub struct TokenHolders {
    /// The page and its related rows (the token, the holders' labels and contract rows).
    pub answer: Answer<TokenHolder>,
    /// The token's total supply (minted minus burned), known only when the contract's whole
    /// history is stored and its transfers add up to a uint256; `None` otherwise.
    pub total_supply: Option<Uint256>,
}

/// Filters of [`QueryService::token_stats`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenStatsQuery {
    pub chain: Chain,
    /// The token contract.
    pub contract: Address,
}

/// A token's statistics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenStats {
    /// Its stored transfers: all of them when `status` is `SYNCED`.
    pub transfers: u64,
    pub status: SyncStatus,
    /// The indexed block the answer was read as of.
    pub block: Option<u64>,
}

/// The contract's whole history (API.md: a token's holders and counts are exact once it is
/// complete).
fn contract_needs(contract: Address) -> Needs {
    let scope = vec![Scope::contract(contract)];
    Needs {
        alternatives: vec![scope.clone()],
        schedule: scope,
        ..Needs::default()
    }
}

/// The addresses of the chain's wallets whose whole history is stored.
fn complete_wallets(chain: Chain) -> SelectStatement {
    Query::select()
        .column(scope_sync::Column::Address)
        .from(scope_sync::Entity)
        .and_where(scope_sync::Column::ChainId.eq(chain.db_id()))
        .and_where(scope_sync::Column::Scope.eq(ScopeKind::Wallet.as_str()))
        .and_where(scope_sync::Column::State.eq(ScopeState::Synced.as_str()))
        .to_owned()
}

/// A (balance, holder) position in the walk's direction.
#[derive(PartialEq, Eq)]
struct Walked {
    desc: bool,
    at: (Uint256, Address),
}

impl Ord for Walked {
    fn cmp(&self, other: &Self) -> Ordering {
        let ascending = self.at.cmp(&other.at);
        if self.desc {
            ascending.reverse()
        } else {
            ascending
        }
    }
}

impl PartialOrd for Walked {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// The page as of an earlier block: `rows` (read at the head, `page.0` asked for) with the
/// holders `since` names put back as they were then (see [`as_of::merge`]), up to `page.1 + 1`.
async fn put_back(
    db: &impl sea_orm::ConnectionTrait,
    q: &TokenHoldersQuery,
    since: HoldersSince,
    rows: Vec<erc20_balance::Model>,
    incomplete: bool,
    position: Option<&(Uint256, Address)>,
    (read, limit): (usize, usize),
) -> Result<Vec<erc20_balance::Model>, QueryError> {
    let mut then = since.rows;
    if incomplete {
        let complete = complete_among(db, q.chain, &since.owners).await?;
        then.retain(|r| complete.contains(&r.owner_address));
    }
    let desc = q.order == SortOrder::Desc;
    let key = move |b: Uint256, o: Address| Walked { desc, at: (b, o) };
    Ok(as_of::merge(
        rows,
        read,
        |r| since.owners.contains(&r.owner_address),
        then,
        |r| key(r.balance, r.owner_address),
        position.map(|&(b, o)| key(b, o)),
        limit,
    ))
}

/// Those of `owners` whose wallet's whole history is stored.
async fn complete_among(
    db: &impl sea_orm::ConnectionTrait,
    chain: Chain,
    owners: &HashSet<Address>,
) -> Result<HashSet<Address>, QueryError> {
    let list: Vec<Address> = owners.iter().copied().collect();
    let mut out = HashSet::new();
    for chunk in list.chunks(500) {
        let rows = scope_sync::Entity::find()
            .filter(scope_sync::Column::ChainId.eq(chain.db_id()))
            .filter(scope_sync::Column::Scope.eq(ScopeKind::Wallet.as_str()))
            .filter(scope_sync::Column::State.eq(ScopeState::Synced.as_str()))
            .filter(scope_sync::Column::Address.is_in(chunk.iter().copied()))
            .all(db)
            .await?;
        out.extend(rows.into_iter().map(|r| r.address));
    }
    Ok(out)
}

impl TokenHoldersQuery {
    fn digest(&self) -> String {
        let mut text = format!(
            "erc20holders|{}|{}|{}",
            self.chain.id(),
            self.contract,
            self.order.as_str()
        );
        if let Some(b) = self.at_block {
            text.push_str(&format!("|at{b}"));
        }
        query_digest(&text)
    }

    /// The token's real balances (`wraps` 0: a sum that is a uint256; zero is no row). The `0`
    /// is written into the statement, not bound: it is what lets PostgreSQL and SQLite read the
    /// partial index of real balances (`idx_erc20_balances_token`) in a prepared statement too.
    fn filter(&self) -> Condition {
        Condition::all()
            .add(B::ChainId.eq(self.chain.db_id()))
            .add(B::ContractAddress.eq(self.contract))
            .add(Expr::col(B::Wraps).eq(Expr::cust("0")))
    }

    /// Rows after the cursor's (balance, owner) position, in the walk's order; the balance
    /// bound first, so that it is the index range.
    fn resume(&self, balance: Uint256, owner: Address) -> Condition {
        match self.order {
            SortOrder::Desc => Condition::all().add(B::Balance.lte(balance)).add(
                Condition::any()
                    .add(B::Balance.lt(balance))
                    .add(B::OwnerAddress.lt(owner)),
            ),
            SortOrder::Asc => Condition::all().add(B::Balance.gte(balance)).add(
                Condition::any()
                    .add(B::Balance.gt(balance))
                    .add(B::OwnerAddress.gt(owner)),
            ),
        }
    }
}

impl QueryService {
    /// One page of a token's holders by balance, after `after`, with the token's supply when
    /// it is known (see the module docs for what an incomplete answer holds).
    pub async fn token_holders(
        &self,
        q: &TokenHoldersQuery,
        after: Option<&str>,
    ) -> Result<TokenHolders, QueryError> {
        let (page, total_supply) = self.token_holders_page(q, after).await?;
        let include = Include {
            contracts: true,
            labels: true,
            ..Include::NONE
        };
        Ok(TokenHolders {
            answer: self.answer(q.chain, page, include).await?,
            total_supply,
        })
    }

    /// The page of [`QueryService::token_holders`], without its related rows.
    async fn token_holders_page(
        &self,
        q: &TokenHoldersQuery,
        after: Option<&str>,
    ) -> Result<(Page<TokenHolder>, Option<Uint256>), QueryError> {
        let kind = CursorKind::TokenHolders;
        let mut walk = Walk::<(Uint256, Address)>::begin(self, kind, q.digest(), after)?;
        let keyset = walk.position().map(|&(b, o)| q.resume(b, o));
        let needs = Needs {
            up_to: q.at_block,
            as_of: q.at_block.is_some(),
            kept_balances: true,
            ..contract_needs(q.contract)
        };
        // The page, the supply and the state they are judged by, as of one moment.
        let snap = self.snapshot().await?;
        let db = snap.db();
        let (view, done) = snap.settle(q.chain, |_| needs.clone()).await?;
        let incomplete = walk.incomplete(done.complete);
        // As of `to_block`, or, on a later page of a walk, the block its first page pinned:
        // the kept balances with the holders of a later transfer put back as they were.
        if q.at_block.is_none() {
            walk.hold(db, q.chain, view.indexed_block).await?;
        }
        let since = match q.at_block.or(walk.pinned()) {
            Some(b) => holders_since(db, q.chain, q.contract, b, view.indexed_block).await?,
            None => None,
        };
        let changed = since.as_ref().map_or(0, |s| s.owners.len() as u64);
        let mut find = erc20_balance::Entity::find().filter(q.filter());
        if let Some(k) = keyset {
            find = find.filter(k);
        }
        if incomplete {
            find = find.filter(B::OwnerAddress.in_subquery(complete_wallets(q.chain)));
        }
        let find = match q.order {
            SortOrder::Desc => find
                .order_by_desc(B::Balance)
                .order_by_desc(B::OwnerAddress),
            SortOrder::Asc => find.order_by_asc(B::Balance).order_by_asc(B::OwnerAddress),
        };
        let limit = q.page_size.get();
        let read = limit + changed + 1;
        let mut rows = find.limit(read).all(db).await?;
        let mut total_supply = if incomplete {
            None
        } else {
            erc20_token_total::Entity::find_by_id((q.chain.db_id(), q.contract))
                .one(db)
                .await?
                .filter(|t| t.supply_wraps == 0)
                .map(|t| t.supply)
        };
        if let Some(s) = since {
            total_supply = total_supply.and_then(|t| s.supply_then(t));
            let page = (read as usize, limit as usize);
            rows = put_back(db, q, s, rows, incomplete, walk.position(), page).await?;
        }
        snap.close().await?;
        let block = q.at_block.or(walk.pinned()).or(view.indexed_block);
        let page = walk
            .at(block)
            .finish(self, rows, limit, incomplete, done.status, |r| {
                Ok(Edge {
                    key: Key::new([KeyPart::Uint(r.balance), KeyPart::Address(r.owner_address)]),
                    node: TokenHolder {
                        contract: r.contract_address,
                        owner: r.owner_address,
                        balance: r.balance,
                        block_number: u64::try_from(r.block_number).map_err(|_| {
                            QueryError::Corrupt(format!("block number {}", r.block_number))
                        })?,
                    },
                })
            })?;
        Ok((page, total_supply))
    }

    /// A token's transfer count, with its status: `SYNCED` once the contract's whole history
    /// is stored (before, the count of the transfers stored so far, `SYNCING`).
    pub async fn token_stats(&self, q: &TokenStatsQuery) -> Result<TokenStats, QueryError> {
        let needs = contract_needs(q.contract);
        let snap = self.snapshot().await?;
        let (view, done) = snap.settle(q.chain, |_| needs.clone()).await?;
        let row = erc20_token_total::Entity::find_by_id((q.chain.db_id(), q.contract))
            .one(snap.db())
            .await?;
        snap.close().await?;
        let transfers = row.map_or(Ok(0), |r| {
            u64::try_from(r.transfers)
                .map_err(|_| QueryError::Corrupt(format!("transfer count {}", r.transfers)))
        })?;
        Ok(TokenStats {
            transfers,
            status: done.status,
            block: view.indexed_block,
        })
    }
}
