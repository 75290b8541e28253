//! Which collections does this wallet hold tokens of?

use sea_orm::sea_query::{Expr, ExprTrait};
use std::collections::{BTreeMap, HashSet};

use sea_orm::{
    ColumnTrait, Condition, ConnectionTrait, EntityTrait, FromQueryResult, QueryFilter, QueryOrder,
    QuerySelect,
};

use super::answer::{Answer, Include};
use super::as_of::{self, Holders, Within};
use super::cursor::{query_digest, CursorKind};
use super::nfts::{certain_holdings, not_spam};
use super::status::Needs;
use super::walk::Walk;
use super::{
    Edge, Key, KeyPart, Page, QueryError, QueryService, WalletCollection, WalletCollectionsQuery,
};
use crate::entity::nft_holding;
use crate::types::{Address, Scope, TokenStandard};

use nft_holding::Column as H;

/// One group of the wallet's holdings.
#[derive(Debug, FromQueryResult)]
struct Group {
    contract_address: Address,
    contract_type: TokenStandard,
    tokens: i64,
}

impl WalletCollectionsQuery {
    fn digest(&self) -> String {
        let mut text = format!(
            "collections|{}|{}|{}",
            self.chain.id(),
            self.owner,
            self.exclude_spam
        );
        if let Some(b) = self.at_block {
            text.push_str(&format!("|at{b}"));
        }
        query_digest(&text)
    }

    /// The wallet's whole history.
    fn needs(&self) -> Needs {
        let wallet = vec![Scope::wallet(self.owner)];
        Needs {
            alternatives: vec![wallet.clone()],
            schedule: wallet,
            ..Needs::default()
        }
    }

    /// Keeps the replayed `rows` the question's filters keep (no spam when asked, only the
    /// certain holdings while `incomplete`), as its SQL does at the head.
    async fn refine(
        &self,
        db: &impl ConnectionTrait,
        mut rows: Vec<nft_holding::Model>,
        incomplete: bool,
        start_block: Option<u64>,
    ) -> Result<Vec<nft_holding::Model>, QueryError> {
        if self.exclude_spam {
            let spam = as_of::spam_among(db, self.chain, &rows).await?;
            rows.retain(|r| !spam.contains(&r.contract_address));
        }
        if incomplete {
            rows = as_of::keep_certain(db, self.chain, rows, start_block).await?;
        }
        Ok(rows)
    }

    fn filter(&self) -> Condition {
        let mut c = Condition::all()
            .add(H::ChainId.eq(self.chain.db_id()))
            .add(H::OwnerAddress.eq(self.owner));
        if self.exclude_spam {
            c = c.add(not_spam(self.chain));
        }
        c
    }
}

impl QueryService {
    /// One page of the collections the wallet holds tokens of, by address, with how many
    /// tokens of each it holds, after `after`. Complete once the wallet's history is; before,
    /// `SYNCING` and only the holdings partial history cannot have made up count.
    ///
    /// The answer carries the related rows `include` asks for ([`Answer`]).
    pub async fn wallet_collections(
        &self,
        q: &WalletCollectionsQuery,
        after: Option<&str>,
        include: Include,
    ) -> Result<Answer<WalletCollection>, QueryError> {
        let page = self.wallet_collections_page(q, after).await?;
        self.answer(q.chain, page, include).await
    }

    /// The page of [`QueryService::wallet_collections`], without its related rows.
    async fn wallet_collections_page(
        &self,
        q: &WalletCollectionsQuery,
        after: Option<&str>,
    ) -> Result<Page<WalletCollection>, QueryError> {
        let mut walk = Walk::<(Address,)>::begin(self, CursorKind::Collections, q.digest(), after)?;
        if let Some(block) = q.at_block {
            return self.wallet_collections_at(q, walk, block).await;
        }
        let needs = q.needs();
        // The page and the state it is judged by, as of one moment.
        let snap = self.snapshot().await?;
        let db = snap.db();
        // A later page of a walk answers as of the block its first page pinned: the
        // collections a move touched since are counted again as of it.
        let who = Holders::Wallet(q.owner);
        let settled = as_of::settle(&snap, &mut walk, q.chain, &needs, who).await?;
        let (view, incomplete, since) = (settled.view, settled.incomplete, settled.since);
        let status = settled.status;
        let touched: HashSet<Address> = since
            .iter()
            .flat_map(|s| s.tokens.iter().map(|t| t.0))
            .collect();
        let mut find = nft_holding::Entity::find().filter(q.filter());
        if let Some(&(contract,)) = walk.position() {
            find = find.filter(H::ContractAddress.gt(contract));
        }
        if incomplete {
            find = find.filter(certain_holdings(q.chain, view.start_block));
        }
        let limit = q.page_size.get();
        let read = limit + touched.len() as u64 + 1;
        let mut rows = find
            .select_only()
            .column(H::ContractAddress)
            .column_as(Expr::col(H::ContractType).max(), "contract_type")
            .column_as(Expr::col(H::TokenId).count(), "tokens")
            .group_by(H::ContractAddress)
            .order_by_asc(H::ContractAddress)
            .limit(read)
            .into_model::<Group>()
            .all(db)
            .await?;
        if let (Some(pinned), false) = (walk.pinned(), touched.is_empty()) {
            let within = Within::Contracts(&touched);
            let held = as_of::holdings_at(db, q.chain, who, pinned, within).await?;
            let held = q.refine(db, held, incomplete, view.start_block).await?;
            rows = as_of::merge(
                rows,
                read as usize,
                |g| touched.contains(&g.contract_address),
                groups(held),
                |g| g.contract_address,
                walk.position().map(|p| p.0),
                limit as usize,
            );
        }
        snap.close().await?;
        let block = walk.pinned().or(view.indexed_block);
        walk.at(block)
            .finish(self, rows, limit, incomplete, status, collection)
    }

    /// The page of [`QueryService::wallet_collections`] as of `block` ([`super::as_of`]):
    /// complete once the wallet's history is and the indexer has stored `block`; a block above
    /// the chain's head is refused.
    async fn wallet_collections_at(
        &self,
        q: &WalletCollectionsQuery,
        walk: Walk<(Address,)>,
        block: u64,
    ) -> Result<Page<WalletCollection>, QueryError> {
        let needs = q.needs().as_of(block);
        let snap = self.snapshot().await?;
        let db = snap.db();
        let (view, done) = snap.settle(q.chain, |_| needs.clone()).await?;
        let incomplete = walk.incomplete(done.complete);
        let who = Holders::Wallet(q.owner);
        let rows = as_of::holdings_at(db, q.chain, who, block, Within::All).await?;
        let rows = q.refine(db, rows, incomplete, view.start_block).await?;
        snap.close().await?;
        let mut rows = groups(rows);
        if let Some(&(position,)) = walk.position() {
            rows.retain(|g| g.contract_address > position);
        }
        let limit = q.page_size.get();
        rows.truncate(limit as usize + 1);
        walk.at(view.indexed_block)
            .finish(self, rows, limit, incomplete, done.status, collection)
    }
}

/// Replayed holdings grouped by collection as the head's statement groups the table's, in
/// address order.
fn groups(rows: Vec<nft_holding::Model>) -> Vec<Group> {
    let mut by_contract: BTreeMap<Address, Group> = BTreeMap::new();
    for r in rows {
        let g = by_contract.entry(r.contract_address).or_insert(Group {
            contract_address: r.contract_address,
            contract_type: r.contract_type,
            tokens: 0,
        });
        g.tokens += 1;
    }
    by_contract.into_values().collect()
}

/// A group as a record, keyed by its collection's address.
fn collection(g: Group) -> Result<Edge<WalletCollection>, QueryError> {
    Ok(Edge {
        key: Key::new([KeyPart::Address(g.contract_address)]),
        node: WalletCollection {
            contract: g.contract_address,
            contract_type: g.contract_type,
            count: u64::try_from(g.tokens).unwrap_or(0),
        },
    })
}
