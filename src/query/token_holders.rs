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

use super::answer::{Answer, Include, RelatedKeys, Relates};
use super::cursor::{query_digest, CursorKind};
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

impl TokenHoldersQuery {
    fn digest(&self) -> String {
        query_digest(&format!(
            "erc20holders|{}|{}|{}",
            self.chain.id(),
            self.contract,
            self.order.as_str()
        ))
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
        let walk = Walk::<(Uint256, Address)>::begin(self, kind, q.digest(), after)?;
        let keyset = walk.position().map(|&(b, o)| q.resume(b, o));
        let needs = contract_needs(q.contract);
        // The page, the supply and the state they are judged by, as of one moment.
        let snap = self.snapshot().await?;
        let (view, done) = snap.settle(q.chain, |_| needs.clone()).await?;
        let incomplete = walk.incomplete(done.complete);
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
        let rows = find.limit(limit + 1).all(snap.db()).await?;
        let total_supply = if incomplete {
            None
        } else {
            erc20_token_total::Entity::find_by_id((q.chain.db_id(), q.contract))
                .one(snap.db())
                .await?
                .filter(|t| t.supply_wraps == 0)
                .map(|t| t.supply)
        };
        snap.close().await?;
        let page = walk.at(view.indexed_block).finish(
            self,
            rows,
            limit,
            incomplete,
            done.status,
            |r| {
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
            },
        )?;
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
