//! Who holds this collection's tokens (or this one token)?

use sea_orm::{ColumnTrait, Condition, EntityTrait, QueryFilter, QueryOrder, QuerySelect};

use super::answer::{Answer, Include};
use super::as_of::{self, Holders, Within};
use super::cursor::{query_digest, CursorKind};
use super::nfts::{certain_holdings, holding};
use super::status::Needs;
use super::walk::Walk;
use super::{Key, KeyPart, NftHolding, NftOwnersQuery, Page, QueryError, QueryService};
use crate::entity::nft_holding;
use crate::types::{Address, Scope, Uint256};

use nft_holding::Column as H;

impl NftOwnersQuery {
    fn digest(&self) -> String {
        let mut text = format!(
            "owners|{}|{}|{}",
            self.chain.id(),
            self.contract,
            self.token_id.map_or(String::new(), |t| t.to_hex64()),
        );
        if let Some(b) = self.at_block {
            text.push_str(&format!("|at{b}"));
        }
        query_digest(&text)
    }

    fn filter(&self) -> Condition {
        let mut c = Condition::all()
            .add(H::ChainId.eq(self.chain.db_id()))
            .add(H::ContractAddress.eq(self.contract));
        if let Some(t) = self.token_id {
            c = c.add(H::TokenId.eq(t));
        }
        c
    }

    /// The collection's whole history (API.md: its holdings are exact once it is complete).
    fn needs(&self) -> Needs {
        let collection = vec![Scope::contract(self.contract)];
        Needs {
            alternatives: vec![collection.clone()],
            schedule: collection,
            ..Needs::default()
        }
    }
}

/// Rows after the cursor's (token id, owner) position; `token_id >= t` is the index range.
fn after(token: Uint256, owner: Address) -> Condition {
    Condition::all().add(H::TokenId.gte(token)).add(
        Condition::any()
            .add(H::TokenId.gt(token))
            .add(H::OwnerAddress.gt(owner)),
    )
}

impl QueryService {
    /// One page of a collection's (or a token's) holders, by token id then owner, after
    /// `after`. While the collection's history is incomplete the answer is `SYNCING` and holds
    /// only holdings partial history cannot have made up (as [`QueryService::nfts_by_wallet`]).
    ///
    /// The answer carries the related rows `include` asks for ([`Answer`]).
    pub async fn nft_owners(
        &self,
        q: &NftOwnersQuery,
        after_cursor: Option<&str>,
        include: Include,
    ) -> Result<Answer<NftHolding>, QueryError> {
        let page = self.nft_owners_page(q, after_cursor).await?;
        self.answer(q.chain, page, include).await
    }

    /// The page of [`QueryService::nft_owners`], without its related rows.
    async fn nft_owners_page(
        &self,
        q: &NftOwnersQuery,
        after_cursor: Option<&str>,
    ) -> Result<Page<NftHolding>, QueryError> {
        let kind = CursorKind::NftOwner;
        let mut walk = Walk::<(Uint256, Address)>::begin(self, kind, q.digest(), after_cursor)?;
        if let Some(block) = q.at_block {
            return self.nft_owners_at(q, walk, block).await;
        }
        let keyset = walk.position().map(|&(t, o)| after(t, o));
        let needs = q.needs();
        // The page and the state it is judged by, as of one moment.
        let snap = self.snapshot().await?;
        let db = snap.db();
        let who = Holders::Collection(q.contract, q.token_id);
        let settled = as_of::settle(&snap, &mut walk, q.chain, &needs, who).await?;
        let (view, incomplete, changed) = (settled.view, settled.incomplete, settled.changed());
        let status = settled.status;
        let since = settled.since;
        let mut find = nft_holding::Entity::find().filter(q.filter());
        if let Some(k) = keyset {
            find = find.filter(k);
        }
        if incomplete {
            find = find.filter(certain_holdings(q.chain, view.start_block));
        }
        let limit = q.page_size.get();
        let mut rows = find
            .order_by_asc(H::TokenId)
            .order_by_asc(H::OwnerAddress)
            .limit(limit + changed + 1)
            .all(db)
            .await?;
        if let Some(s) = since {
            let mut pinned = s.rows;
            if incomplete {
                pinned = as_of::keep_certain(db, q.chain, pinned, view.start_block).await?;
            }
            rows = as_of::merge(
                rows,
                (limit + changed + 1) as usize,
                |r| s.tokens.contains(&(r.contract_address, r.token_id)),
                pinned,
                |r| (r.token_id, r.owner_address),
                walk.position().copied(),
                limit as usize,
            );
        }
        snap.close().await?;
        let block = walk.pinned().or(view.indexed_block);
        walk.at(block)
            .finish(self, rows, limit, incomplete, status, owner_edge)
    }

    /// The page of [`QueryService::nft_owners`] as of `block` ([`super::as_of`]): complete once
    /// the collection's history is and the indexer has stored `block`; a block above the
    /// chain's head is refused.
    async fn nft_owners_at(
        &self,
        q: &NftOwnersQuery,
        walk: Walk<(Uint256, Address)>,
        block: u64,
    ) -> Result<Page<NftHolding>, QueryError> {
        let needs = q.needs().as_of(block);
        let snap = self.snapshot().await?;
        let (view, done) = snap.settle(q.chain, |_| needs.clone()).await?;
        let incomplete = walk.incomplete(done.complete);
        let who = Holders::Collection(q.contract, q.token_id);
        let mut rows = as_of::holdings_at(snap.db(), q.chain, who, block, Within::All).await?;
        if incomplete {
            rows = as_of::keep_certain(snap.db(), q.chain, rows, view.start_block).await?;
        }
        snap.close().await?;
        rows.sort_by_key(|r| (r.token_id, r.owner_address));
        if let Some(&position) = walk.position() {
            rows.retain(|r| (r.token_id, r.owner_address) > position);
        }
        let limit = q.page_size.get();
        rows.truncate(limit as usize + 1);
        walk.at(view.indexed_block)
            .finish(self, rows, limit, incomplete, done.status, owner_edge)
    }
}

/// A holding as a record, keyed by its (token id, owner) position.
fn owner_edge(r: nft_holding::Model) -> Result<super::Edge<NftHolding>, QueryError> {
    let mut e = holding(r)?;
    e.key = Key::new([
        KeyPart::Uint(e.node.token_id),
        KeyPart::Address(e.node.owner),
    ]);
    Ok(e)
}
