//! Which NFTs does this wallet own?

use sea_orm::sea_query::{Expr, ExprTrait, Query, SelectStatement};
use sea_orm::{
    ColumnTrait, Condition, ConnectionTrait, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder,
    QuerySelect,
};

use super::answer::{Answer, Include};
use super::as_of::{self, Holders, Within};
use super::cursor::{query_digest, CursorKind};
use super::status::Needs;
use super::walk::Walk;
use super::{Edge, Key, KeyPart, NftHolding, NftQuery, Page, QueryError, QueryService};
use crate::entity::{contract, nft_holding, scope_sync};
use crate::store::dialect::Dialect;
use crate::store::lists::padded;
use crate::types::{Address, Chain, Scope, ScopeKind, ScopeState, TokenStandard, Uint256};

use nft_holding::Column as H;

impl NftQuery {
    /// The filters a cursor is bound to (not the page size, nor whether a total is counted).
    fn digest(&self) -> String {
        let mut text = format!(
            "nft|{}|{}|{}|{}",
            self.chain.id(),
            self.owner,
            self.token_addresses.texts().join(","),
            self.exclude_spam
        );
        if let Some(b) = self.at_block {
            text.push_str(&format!("|at{b}"));
        }
        query_digest(&text)
    }

    fn filter(&self) -> Condition {
        let mut c = Condition::all()
            .add(H::ChainId.eq(self.chain.db_id()))
            .add(H::OwnerAddress.eq(self.owner));
        if !self.token_addresses.is_empty() {
            c = c.add(H::ContractAddress.is_in(padded(self.token_addresses.to_vec())));
        }
        if self.exclude_spam {
            c = c.add(not_spam(self.chain));
        }
        c
    }

    /// The scopes the answer depends on (API.md): the wallet, or every named collection.
    /// An incomplete answer schedules the named collections' history, or else the wallet's.
    fn needs(&self) -> Needs {
        let wallet = vec![Scope::wallet(self.owner)];
        let named: Vec<Scope> = self
            .token_addresses
            .iter()
            .map(|&a| Scope::contract(a))
            .collect();
        if named.is_empty() {
            Needs {
                alternatives: vec![wallet.clone()],
                schedule: wallet,
                ..Needs::default()
            }
        } else {
            Needs {
                alternatives: vec![wallet, named.clone()],
                schedule: named,
                ..Needs::default()
            }
        }
    }

    /// While the answer is incomplete, only the holdings that partial history cannot have
    /// made up: those of collections whose history is complete, and ERC721 tokens acquired
    /// in the live range (every later transfer of them is stored). An ERC1155 balance or an
    /// older ERC721 holding may lack a transfer not fetched yet: never shown as if certain.
    fn certain(&self, start_block: Option<u64>) -> Condition {
        certain_holdings(self.chain, start_block)
    }
}

impl NftQuery {
    /// Keeps the replayed `rows` the question's filters keep (the named collections, no spam
    /// when asked, only the certain holdings while `incomplete`), as its SQL does at the head.
    async fn refine(
        &self,
        db: &impl ConnectionTrait,
        mut rows: Vec<nft_holding::Model>,
        incomplete: bool,
        start_block: Option<u64>,
    ) -> Result<Vec<nft_holding::Model>, QueryError> {
        if !self.token_addresses.is_empty() {
            rows.retain(|r| {
                self.token_addresses
                    .iter()
                    .any(|a| *a == r.contract_address)
            });
        }
        if self.exclude_spam {
            let spam = as_of::spam_among(db, self.chain, &rows).await?;
            rows.retain(|r| !spam.contains(&r.contract_address));
        }
        if incomplete {
            rows = as_of::keep_certain(db, self.chain, rows, start_block).await?;
        }
        Ok(rows)
    }
}

/// Holdings of collections not marked possible spam.
pub(super) fn not_spam(chain: Chain) -> Condition {
    Condition::all().add(H::ContractAddress.not_in_subquery(spam_contracts(chain)))
}

/// The addresses of the chain's contracts whose whole history is stored.
pub(super) fn complete_contracts(chain: Chain) -> SelectStatement {
    Query::select()
        .column(scope_sync::Column::Address)
        .from(scope_sync::Entity)
        .and_where(scope_sync::Column::ChainId.eq(chain.db_id()))
        .and_where(scope_sync::Column::Scope.eq(ScopeKind::Contract.as_str()))
        .and_where(scope_sync::Column::State.eq(ScopeState::Synced.as_str()))
        .to_owned()
}

/// The contracts of the chain marked possible spam.
pub(super) fn spam_contracts(chain: Chain) -> SelectStatement {
    Query::select()
        .column(contract::Column::Address)
        .from(contract::Entity)
        .and_where(contract::Column::ChainId.eq(chain.db_id()))
        .and_where(contract::Column::PossibleSpam.eq(true))
        .to_owned()
}

/// The holdings that partial history cannot have made up (see [`NftQuery::certain`]).
pub(super) fn certain_holdings(chain: Chain, start_block: Option<u64>) -> Condition {
    let mut c = Condition::any().add(H::ContractAddress.in_subquery(complete_contracts(chain)));
    if let Some(start) = start_block {
        c = c.add(
            Condition::all()
                .add(H::ContractType.eq(TokenStandard::Erc721.as_str()))
                .add(H::BlockNumber.gte(start as i64)),
        );
    }
    c
}

impl QueryService {
    /// One page of the wallet's NFTs, after `after` (a cursor from a previous page).
    ///
    /// The answer carries the related rows `include` asks for ([`Answer`]).
    pub async fn nfts_by_wallet(
        &self,
        q: &NftQuery,
        after: Option<&str>,
        include: Include,
    ) -> Result<Answer<NftHolding>, QueryError> {
        let page = self.nfts_by_wallet_page(q, after).await?;
        self.answer(q.chain, page, include).await
    }

    /// The page of [`QueryService::nfts_by_wallet`], without its related rows.
    async fn nfts_by_wallet_page(
        &self,
        q: &NftQuery,
        after: Option<&str>,
    ) -> Result<Page<NftHolding>, QueryError> {
        let mut walk = Walk::<(Address, Uint256)>::begin(self, CursorKind::Nft, q.digest(), after)?;
        if let Some(block) = q.at_block {
            return self.nfts_by_wallet_at(q, walk, block).await;
        }
        let keyset = walk.position().map(|&(c, t)| self.nft_keyset(c, t));
        let limit = q.page_size.get();
        let needs = q.needs();
        // The page and the state it is judged by, as of one moment; an incomplete answer
        // holds only the certain holdings.
        let snap = self.snapshot().await?;
        let db = snap.db();
        let who = Holders::Wallet(q.owner);
        let settled = as_of::settle(&snap, &mut walk, q.chain, &needs, who).await?;
        let (view, incomplete, changed) = (settled.view, settled.incomplete, settled.changed());
        let status = settled.status;
        let restrict = incomplete.then(|| q.certain(view.start_block));
        let since = settled.since;
        let mut rows = nft_rows(db, q, keyset, restrict.clone(), limit + changed).await?;
        if let Some(s) = since {
            let pinned = q.refine(db, s.rows, incomplete, view.start_block).await?;
            rows = as_of::merge(
                rows,
                (limit + changed + 1) as usize,
                |r| s.tokens.contains(&(r.contract_address, r.token_id)),
                pinned,
                |r| (r.contract_address, r.token_id),
                walk.position().copied(),
                limit as usize,
            );
        }
        // Counted once per walk: the first page asking for it counts, its cursors carry the
        // figure on (as of that page; the cursor is signed, so it cannot be forged).
        let total = match (q.with_total, walk.counted()) {
            (true, Some(t)) => Some(t),
            (true, None) => Some(count_nfts(db, q, restrict).await?),
            (false, _) => None,
        };
        snap.close().await?;
        let block = walk.pinned().or(view.indexed_block);
        walk.counting(total)
            .at(block)
            .finish(self, rows, limit, incomplete, status, holding)
    }
}

impl QueryService {
    /// The page of [`QueryService::nfts_by_wallet`] as of `block` ([`super::as_of`]): complete
    /// once the wallet's (or every named collection's) history is and the indexer has stored
    /// `block`; a block above the chain's head is refused.
    async fn nfts_by_wallet_at(
        &self,
        q: &NftQuery,
        walk: Walk<(Address, Uint256)>,
        block: u64,
    ) -> Result<Page<NftHolding>, QueryError> {
        let needs = q.needs().as_of(block);
        let snap = self.snapshot().await?;
        let db = snap.db();
        let (view, done) = snap.settle(q.chain, |_| needs.clone()).await?;
        let incomplete = walk.incomplete(done.complete);
        let who = Holders::Wallet(q.owner);
        let rows = as_of::holdings_at(db, q.chain, who, block, Within::All).await?;
        let mut rows = q.refine(db, rows, incomplete, view.start_block).await?;
        snap.close().await?;
        rows.sort_by_key(|r| (r.contract_address, r.token_id));
        let total = match (q.with_total, walk.counted()) {
            (true, Some(t)) => Some(t),
            (true, None) => Some(rows.len() as u64),
            (false, _) => None,
        };
        if let Some(&position) = walk.position() {
            rows.retain(|r| (r.contract_address, r.token_id) > position);
        }
        let limit = q.page_size.get();
        rows.truncate(limit as usize + 1);
        walk.counting(total).at(view.indexed_block).finish(
            self,
            rows,
            limit,
            incomplete,
            done.status,
            holding,
        )
    }

    /// The keyset condition of rows after a cursor's (contract, token id) position.
    fn nft_keyset(&self, contract: Address, token: Uint256) -> Condition {
        if Dialect::of(&self.db).row_keysets() {
            // A row comparison bounds PostgreSQL's primary-key range at the cursor itself:
            // none of the cursor's contract's earlier tokens is read (the `OR` form below
            // filters them, 1,900 rows on the whale's page 1,000).
            Condition::all().add(
                Expr::tuple([Expr::col(H::ContractAddress), Expr::col(H::TokenId)])
                    .gt(Expr::tuple([Expr::val(contract), Expr::val(token)])),
            )
        } else {
            // `contract >= c` is the index range on every backend (a row-value comparison
            // is not, on all MariaDB versions); the rest only filters within contract `c`.
            Condition::all().add(H::ContractAddress.gte(contract)).add(
                Condition::any()
                    .add(H::ContractAddress.gt(contract))
                    .add(H::TokenId.gt(token)),
            )
        }
    }
}

/// A row as a record, keyed by its (contract, token id) position.
pub(super) fn holding(r: nft_holding::Model) -> Result<Edge<NftHolding>, QueryError> {
    let node = NftHolding {
        contract: r.contract_address,
        token_id: r.token_id,
        owner: r.owner_address,
        amount: r.amount,
        contract_type: r.contract_type,
        block_number: u64::try_from(r.block_number).unwrap_or(0),
    };
    Ok(Edge {
        key: Key::new([
            KeyPart::Address(r.contract_address),
            KeyPart::Uint(r.token_id),
        ]),
        node,
    })
}

/// How many holdings answer `q` (within `restrict`, while the answer is incomplete).
async fn count_nfts(
    db: &impl ConnectionTrait,
    q: &NftQuery,
    restrict: Option<Condition>,
) -> Result<u64, QueryError> {
    let mut count = nft_holding::Entity::find().filter(q.filter());
    if let Some(r) = restrict {
        count = count.filter(r);
    }
    Ok(count.count(db).await?)
}

/// Up to `limit + 1` holdings in keyset order.
async fn nft_rows(
    db: &impl ConnectionTrait,
    q: &NftQuery,
    keyset: Option<Condition>,
    restrict: Option<Condition>,
    limit: u64,
) -> Result<Vec<nft_holding::Model>, QueryError> {
    let mut find = nft_holding::Entity::find().filter(q.filter());
    if let Some(k) = keyset {
        find = find.filter(k);
    }
    if let Some(r) = restrict {
        find = find.filter(r);
    }
    Ok(find
        .order_by_asc(H::ContractAddress)
        .order_by_asc(H::TokenId)
        .limit(limit + 1)
        .all(db)
        .await?)
}
