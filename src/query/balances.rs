//! What does this wallet hold of each ERC20 token? Balances summed from the wallet's transfer
//! history: everything it received minus everything it sent, per token contract.
//!
//! The current balances are read from the sums the store keeps (`erc20_balances`, one index
//! range per wallet); a balance as of a past block (`to_block`, when the wallet has a stored
//! transfer after it) is summed from the transfers up to that block. Both give the same answer
//! for the same transfers: the kept sum is the exact sum of every stored transfer.
//!
//! A balance is exact only when every transfer of the wallet in that token is stored: the
//! wallet's whole history (or the token's) is. Until then the answer is `SYNCING` and holds only
//! the balances of tokens whose own history is complete. A token whose balances do not follow
//! from its `Transfer` events (rebasing tokens, mints without an event) is counted as its
//! events say; a sum that comes out negative is left out (and logged), never shown.

use std::collections::BTreeMap;

use alloy::primitives::U512;
use sea_orm::{
    ColumnTrait, Condition, ConnectionTrait, EntityTrait, FromQueryResult, QueryFilter, QuerySelect,
};

use super::answer::{keys_of, Answer, Include, Listing};
use super::cursor::{query_digest, CursorKind};
use super::nfts::{complete_contracts, spam_contracts};
use super::status::{ChainView, Needs};
use super::walk::Walk;
use super::{Edge, Key, KeyPart, Page, QueryError, QueryService};
use super::{TokenBalance, TokenBalanceQuery};
use crate::entity::{erc20_balance, erc20_transfer};
use crate::store::lists::padded;
use crate::types::{Address, Scope, Uint256};

use erc20_transfer::Column as T;

/// One transfer as a balance needs it.
#[derive(Debug, FromQueryResult)]
struct Movement {
    contract_address: Address,
    value: Uint256,
}

impl TokenBalanceQuery {
    fn digest(&self) -> String {
        query_digest(&format!(
            "balances|{}|{}|{}|{}|{}",
            self.chain.id(),
            self.owner,
            self.to_block.map_or(String::new(), |b| b.0.to_string()),
            self.token_addresses.texts().join(","),
            self.exclude_spam
        ))
    }

    /// The scopes the answer depends on: the wallet, or every named token.
    fn needs(&self) -> Needs {
        let wallet = vec![Scope::wallet(self.owner)];
        let named: Vec<Scope> = self
            .token_addresses
            .iter()
            .map(|&a| Scope::contract(a))
            .collect();
        let mut alternatives = vec![wallet.clone()];
        if !named.is_empty() {
            alternatives.push(named);
        }
        Needs {
            alternatives,
            schedule: wallet,
            none: false,
            up_to: self.to_block.map(|b| b.0),
            as_of: true,
            kept_balances: false,
        }
    }

    /// Transfers of the named tokens, up to `to_block`, leaving out spam when asked, and only
    /// of tokens whose whole history is stored when `certain_only`.
    fn filter(&self, certain_only: bool) -> Condition {
        let mut c = Condition::all().add(T::ChainId.eq(self.chain.db_id()));
        if !self.token_addresses.is_empty() {
            c = c.add(T::ContractAddress.is_in(padded(self.token_addresses.to_vec())));
        }
        if let Some(b) = self.to_block {
            c = c.add(T::BlockNumber.lte(b.db()));
        }
        if self.exclude_spam {
            c = c.add(T::ContractAddress.not_in_subquery(spam_contracts(self.chain)));
        }
        if certain_only {
            c = c.add(T::ContractAddress.in_subquery(complete_contracts(self.chain)));
        }
        c
    }
}

/// Received minus sent, per contract; wide enough that no sum of uint256 values overflows.
#[derive(Default)]
struct Ledger {
    sums: BTreeMap<Address, (U512, U512)>,
}

impl Ledger {
    fn add(&mut self, rows: Vec<Movement>, incoming: bool) {
        for m in rows {
            let wide = U512::from(m.value.0);
            let entry = self.sums.entry(m.contract_address).or_default();
            if incoming {
                entry.0 += wide;
            } else {
                entry.1 += wide;
            }
        }
    }

    /// Non-zero balances by contract address, ascending.
    fn balances(self, owner: Address) -> Vec<TokenBalance> {
        let mut out = Vec::new();
        for (contract, (got, sent)) in self.sums {
            if got < sent {
                tracing::warn!(%owner, %contract, "ERC20 transfers sum to a negative balance; left out");
                continue;
            }
            let balance = got - sent;
            if balance.is_zero() {
                continue;
            }
            let bytes: [u8; 64] = balance.to_be_bytes();
            let Some(low) = bytes[32..]
                .try_into()
                .ok()
                .filter(|_| bytes[..32] == [0; 32])
            else {
                tracing::warn!(%owner, %contract, "ERC20 transfers sum past 2^256; left out");
                continue;
            };
            out.push(TokenBalance {
                contract,
                balance: Uint256::from_be_bytes(&low),
            });
        }
        out
    }
}

impl QueryService {
    /// Every non-zero balance of the wallet, by token address, with the answer's status and
    /// the related rows `include` asks for.
    pub async fn all_token_balances(
        &self,
        q: &TokenBalanceQuery,
        include: Include,
    ) -> Result<Listing<TokenBalance>, QueryError> {
        let needs = q.needs();
        // The balances and the state they are judged by, as of one moment.
        let snap = self.snapshot().await?;
        let (view, done) = snap.settle(q.chain, |_| needs.clone()).await?;
        let records = sum_balances(snap.db(), q, &view, !done.complete).await?;
        snap.close().await?;
        let related = self.related(q.chain, keys_of(&records), include).await?;
        Ok(Listing {
            records,
            status: done.status,
            block: view.indexed_block,
            related,
        })
    }

    /// One page of the wallet's non-zero balances, by token address, after `after`.
    ///
    /// The answer carries the related rows `include` asks for ([`Answer`]).
    pub async fn token_balances(
        &self,
        q: &TokenBalanceQuery,
        after: Option<&str>,
        include: Include,
    ) -> Result<Answer<TokenBalance>, QueryError> {
        let page = self.token_balances_page(q, after).await?;
        self.answer(q.chain, page, include).await
    }

    /// The page of [`QueryService::token_balances`], without its related rows.
    async fn token_balances_page(
        &self,
        q: &TokenBalanceQuery,
        after: Option<&str>,
    ) -> Result<Page<TokenBalance>, QueryError> {
        let mut walk = Walk::<(Address,)>::begin(self, CursorKind::Balances, q.digest(), after)?;
        let position = walk.position().map(|&(contract,)| contract);
        let needs = q.needs();
        // The balances and the state they are judged by, as of one moment.
        let snap = self.snapshot().await?;
        let (view, done) = snap.settle(q.chain, |_| needs.clone()).await?;
        let incomplete = walk.incomplete(done.complete);
        let limit = q.page_size.get();
        // A later page of a walk answers as of the block its first page pinned.
        let pinned = match q.to_block {
            Some(_) => None,
            None => {
                walk.hold(snap.db(), q.chain, view.indexed_block).await?;
                walk.pinned().map(|b| TokenBalanceQuery {
                    to_block: Some(crate::types::BlockNumber(b)),
                    ..q.clone()
                })
            }
        };
        let asked = pinned.as_ref().unwrap_or(q);
        let balances = sum_balances(snap.db(), asked, &view, incomplete).await?;
        snap.close().await?;
        let block = walk.pinned();
        let rows: Vec<TokenBalance> = balances
            .into_iter()
            .filter(|b| position.is_none_or(|p| b.contract > p))
            .take(limit as usize + 1)
            .collect();
        walk.at(block.or(view.indexed_block)).finish(
            self,
            rows,
            limit,
            incomplete,
            done.status,
            |b| {
                Ok(Edge {
                    key: Key::new([KeyPart::Address(b.contract)]),
                    node: b,
                })
            },
        )
    }
}

/// The wallet's balances: from the kept sums when they are the answer (no `to_block`, or no
/// stored transfer of the wallet after it) and kept (not left out by a backfill: `view`),
/// else summed from its transfers.
async fn sum_balances(
    db: &impl ConnectionTrait,
    q: &TokenBalanceQuery,
    view: &ChainView,
    certain_only: bool,
) -> Result<Vec<TokenBalance>, QueryError> {
    if !view.balances_pending && kept_sums_answer(db, q).await? {
        kept_balances(db, q, certain_only).await
    } else {
        summed_balances(db, q, certain_only).await
    }
}

/// Whether the kept sums are the balances as of the query's block: it has none (now), or the
/// wallet has no stored transfer after it (one index probe per side). The zero address has no
/// kept sums (it is never a holder): its mints and burns are summed.
async fn kept_sums_answer(
    db: &impl ConnectionTrait,
    q: &TokenBalanceQuery,
) -> Result<bool, QueryError> {
    if q.owner.is_zero() {
        return Ok(false);
    }
    let Some(block) = q.to_block else {
        return Ok(true);
    };
    for side in [T::FromAddress, T::ToAddress] {
        let later: Option<i64> = erc20_transfer::Entity::find()
            .select_only()
            .column(T::BlockNumber)
            .filter(T::ChainId.eq(q.chain.db_id()))
            .filter(side.eq(q.owner))
            .filter(T::BlockNumber.gt(block.db()))
            .limit(1)
            .into_tuple()
            .one(db)
            .await?;
        if later.is_some() {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The wallet's balances read from the kept sums: those that are a uint256 (`wraps` 0; zero
/// is no row), by token address — what [`Ledger::balances`] makes of the same transfers.
async fn kept_balances(
    db: &impl ConnectionTrait,
    q: &TokenBalanceQuery,
    certain_only: bool,
) -> Result<Vec<TokenBalance>, QueryError> {
    use erc20_balance::Column as B;
    let mut find = erc20_balance::Entity::find()
        .filter(B::ChainId.eq(q.chain.db_id()))
        .filter(B::OwnerAddress.eq(q.owner))
        .filter(B::Wraps.eq(0));
    if !q.token_addresses.is_empty() {
        find = find.filter(B::ContractAddress.is_in(padded(q.token_addresses.to_vec())));
    }
    if q.exclude_spam {
        find = find.filter(B::ContractAddress.not_in_subquery(spam_contracts(q.chain)));
    }
    if certain_only {
        find = find.filter(B::ContractAddress.in_subquery(complete_contracts(q.chain)));
    }
    let mut out: Vec<TokenBalance> = find
        .all(db)
        .await?
        .into_iter()
        .map(|r| TokenBalance {
            contract: r.contract_address,
            balance: r.balance,
        })
        .collect();
    out.sort_by_key(|b| b.contract);
    Ok(out)
}

/// The wallet's balances summed from its stored transfers: two statements, received and
/// sent (each served by its own index).
async fn summed_balances(
    db: &impl ConnectionTrait,
    q: &TokenBalanceQuery,
    certain_only: bool,
) -> Result<Vec<TokenBalance>, QueryError> {
    let owner = q.owner;
    let side = |column: T| {
        erc20_transfer::Entity::find()
            .filter(q.filter(certain_only))
            .filter(column.eq(owner))
            .select_only()
            .column(T::ContractAddress)
            .column(T::Value)
            .into_model::<Movement>()
            .all(db)
    };
    // In the caller's snapshot: a transfer cannot be counted received and not yet sent.
    let received = side(T::ToAddress).await?;
    let sent = side(T::FromAddress).await?;
    let mut ledger = Ledger::default();
    ledger.add(received, true);
    ledger.add(sent, false);
    Ok(ledger.balances(q.owner))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn moves(list: &[(&str, u64)]) -> Vec<Movement> {
        list.iter()
            .map(|(c, v)| Movement {
                contract_address: Address::parse(c).unwrap_or_else(|e| panic!("{e}")),
                value: Uint256::from_u64(*v),
            })
            .collect()
    }

    #[test]
    fn received_minus_sent_leaving_out_zero_and_negative() {
        let a = "0x00000000000000000000000000000000000000aa";
        let b = "0x00000000000000000000000000000000000000bb";
        let c = "0x00000000000000000000000000000000000000cc";
        let mut l = Ledger::default();
        l.add(moves(&[(a, 10), (a, 5), (b, 3), (c, 1)]), true);
        l.add(moves(&[(a, 4), (b, 3), (c, 2)]), false);
        let owner = Address::parse(a).unwrap_or_else(|e| panic!("{e}"));
        let got = l.balances(owner);
        assert_eq!(
            got.len(),
            1,
            "zero (b) and negative (c) balances are left out"
        );
        assert_eq!(got[0].contract.to_string(), a);
        assert_eq!(got[0].balance, Uint256::from_u64(11));
    }

    #[test]
    fn sums_past_2_pow_256_stay_exact() {
        let a = "0x00000000000000000000000000000000000000aa";
        let max = Uint256::MAX;
        let contract = Address::parse(a).unwrap_or_else(|e| panic!("{e}"));
        let mut l = Ledger::default();
        let big = |n: usize| {
            (0..n)
                .map(|_| Movement {
                    contract_address: contract,
                    value: max,
                })
                .collect::<Vec<_>>()
        };
        l.add(big(2), true);
        l.add(big(1), false);
        let owner = Address::parse(a).unwrap_or_else(|e| panic!("{e}"));
        let got = l.balances(owner);
        assert_eq!(got[0].balance, Uint256::MAX);
    }
}
