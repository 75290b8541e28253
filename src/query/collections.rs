//! Which collections does this wallet hold tokens of?

use sea_orm::sea_query::{Expr, ExprTrait};
use sea_orm::{
    ColumnTrait, Condition, EntityTrait, FromQueryResult, QueryFilter, QueryOrder, QuerySelect,
};

use super::answer::{Answer, Include};
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
        query_digest(&format!(
            "collections|{}|{}|{}",
            self.chain.id(),
            self.owner,
            self.exclude_spam
        ))
    }

    fn filter(&self) -> Condition {
        let mut c = Condition::all()
            .add(H::ChainId.eq(self.chain.db_id()))
            .add(H::OwnerAddress.eq(self.owner.to_string()));
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
        let walk = Walk::<(Address,)>::begin(self, CursorKind::Collections, q.digest(), after)?;
        let wallet = vec![Scope::wallet(q.owner)];
        let needs = Needs {
            alternatives: vec![wallet.clone()],
            schedule: wallet,
            ..Needs::default()
        };
        // The page and the state it is judged by, as of one moment.
        let snap = self.snapshot().await?;
        let (view, done) = snap.settle(q.chain, |_| needs.clone()).await?;
        let incomplete = walk.incomplete(done.complete);
        let mut find = nft_holding::Entity::find().filter(q.filter());
        if let Some(&(contract,)) = walk.position() {
            find = find.filter(H::ContractAddress.gt(contract));
        }
        if incomplete {
            find = find.filter(certain_holdings(q.chain, view.start_block));
        }
        let limit = q.page_size.get();
        let rows = find
            .select_only()
            .column(H::ContractAddress)
            .column_as(Expr::col(H::ContractType).max(), "contract_type")
            .column_as(Expr::col(H::TokenId).count(), "tokens")
            .group_by(H::ContractAddress)
            .order_by_asc(H::ContractAddress)
            .limit(limit + 1)
            .into_model::<Group>()
            .all(snap.db())
            .await?;
        snap.close().await?;
        walk.at(view.indexed_block)
            .finish(self, rows, limit, incomplete, done.status, |g| {
                Ok(Edge {
                    key: Key::new([KeyPart::Address(g.contract_address)]),
                    node: WalletCollection {
                        contract: g.contract_address,
                        contract_type: g.contract_type,
                        count: u64::try_from(g.tokens).unwrap_or(0),
                    },
                })
            })
    }
}
