//! Which tokens of this collection does someone hold? One record per token id, by token id,
//! with its holder when there is exactly one (every ERC721 token; an ERC1155 id held by one
//! wallet) and the amount held over all holders.
//!
//! Two statements a page: the token ids with their holder counts (the collection index of
//! `nft_holdings` serves it in order), then the amounts of the page's ids held by several
//! wallets (ERC1155), summed exactly here: the stored amounts are hex text no database sums.

use std::collections::HashMap;

use alloy::primitives::U512;
use sea_orm::sea_query::{Expr, ExprTrait};
use sea_orm::{
    ColumnTrait, Condition, ConnectionTrait, EntityTrait, FromQueryResult, QueryFilter, QueryOrder,
    QuerySelect,
};

use super::answer::{Answer, Include};
use super::cursor::{query_digest, CursorKind};
use super::nfts::certain_holdings;
use super::status::Needs;
use super::walk::Walk;
use super::{
    CollectionNft, CollectionNftsQuery, Edge, Key, KeyPart, Page, QueryError, QueryService,
};
use crate::entity::nft_holding;
use crate::store::lists::padded;
use crate::types::{Address, Scope, TokenStandard, Uint256};

use nft_holding::Column as H;

/// One token id of the collection, grouped over its holders.
#[derive(Debug, FromQueryResult)]
pub(super) struct Token {
    token_id: Uint256,
    contract_type: TokenStandard,
    holders: i64,
    /// The lowest holder (the holder, when there is one).
    owner: Address,
    /// The highest amount (the amount, when there is one holder).
    amount: Uint256,
    block_number: i64,
}

/// One holding of a token held by several wallets.
#[derive(Debug, FromQueryResult)]
struct Share {
    token_id: Uint256,
    amount: Uint256,
}

impl CollectionNftsQuery {
    fn digest(&self) -> String {
        let mut text = format!("cnfts|{}|{}", self.chain.id(), self.contract);
        if let Some(t) = self.token {
            text.push_str(&format!("|{}", t.to_db()));
        }
        query_digest(&text)
    }

    fn filter(&self) -> Condition {
        let c = Condition::all()
            .add(H::ChainId.eq(self.chain.db_id()))
            .add(H::ContractAddress.eq(self.contract.to_string()));
        match self.token {
            Some(t) => c.add(H::TokenId.eq(t)),
            None => c,
        }
    }

    /// The collection's whole history (its holdings are exact once it is complete).
    fn needs(&self) -> Needs {
        let collection = vec![Scope::contract(self.contract)];
        Needs {
            alternatives: vec![collection.clone()],
            schedule: collection,
            ..Needs::default()
        }
    }
}

impl QueryService {
    /// One page of the collection's held tokens, by token id, after `after`. While the
    /// collection's history is incomplete the answer is `SYNCING` and holds only tokens partial
    /// history cannot have made up (ERC721 tokens acquired since the live start block).
    ///
    /// The answer carries the related rows `include` asks for ([`Answer`]).
    pub async fn collection_nfts(
        &self,
        q: &CollectionNftsQuery,
        after: Option<&str>,
        include: Include,
    ) -> Result<Answer<CollectionNft>, QueryError> {
        let page = self.collection_nfts_page(q, after).await?;
        self.answer(q.chain, page, include).await
    }

    /// The page of [`QueryService::collection_nfts`], without its related rows.
    async fn collection_nfts_page(
        &self,
        q: &CollectionNftsQuery,
        after: Option<&str>,
    ) -> Result<Page<CollectionNft>, QueryError> {
        let kind = CursorKind::CollectionNfts;
        let walk = Walk::<(Uint256,)>::begin(self, kind, q.digest(), after)?;
        let mut filter = q.filter();
        if let Some(&(token,)) = walk.position() {
            filter = filter.add(H::TokenId.gt(token));
        }
        let needs = q.needs();
        // The page and the state it is judged by, as of one moment.
        let snap = self.snapshot().await?;
        let (view, done) = snap.settle(q.chain, |_| needs.clone()).await?;
        let incomplete = walk.incomplete(done.complete);
        if incomplete {
            filter = filter.add(certain_holdings(q.chain, view.start_block));
        }
        let limit = q.page_size.get();
        let tokens = held_tokens(snap.db(), filter.clone(), limit + 1).await?;
        let page = &tokens[..tokens.len().min(limit as usize)];
        // Read in the same snapshot, the shares add up to the amounts of the tokens read.
        let shared = shared_amounts(snap.db(), filter, page).await?;
        snap.close().await?;
        let contract = q.contract;
        walk.at(view.indexed_block)
            .finish(self, tokens, limit, incomplete, done.status, |t| {
                nft(contract, t, &shared)
            })
    }
}

/// Up to `limit` of the held tokens `filter` matches, grouped over their holders, by token id.
pub(super) async fn held_tokens(
    db: &impl ConnectionTrait,
    filter: Condition,
    limit: u64,
) -> Result<Vec<Token>, QueryError> {
    Ok(nft_holding::Entity::find()
        .filter(filter)
        .select_only()
        .column(H::TokenId)
        .column_as(Expr::col(H::ContractType).max(), "contract_type")
        .column_as(Expr::col(H::OwnerAddress).count(), "holders")
        .column_as(Expr::col(H::OwnerAddress).min(), "owner")
        .column_as(Expr::col(H::Amount).max(), "amount")
        .column_as(Expr::col(H::BlockNumber).max(), "block_number")
        .group_by(H::TokenId)
        .order_by_asc(H::TokenId)
        .limit(limit)
        .into_model::<Token>()
        .all(db)
        .await?)
}

/// The summed amounts of the tokens held by several wallets.
pub(super) async fn shared_amounts(
    db: &impl ConnectionTrait,
    filter: Condition,
    tokens: &[Token],
) -> Result<HashMap<Uint256, Uint256>, QueryError> {
    let ids: Vec<Uint256> = tokens
        .iter()
        .filter(|t| t.holders > 1)
        .map(|t| t.token_id)
        .collect();
    if ids.is_empty() {
        return Ok(HashMap::new());
    }
    let shares = nft_holding::Entity::find()
        .filter(filter)
        .filter(H::TokenId.is_in(padded(ids)))
        .select_only()
        .column(H::TokenId)
        .column(H::Amount)
        .into_model::<Share>()
        .all(db)
        .await?;
    let mut sums: HashMap<Uint256, U512> = HashMap::new();
    for s in shares {
        *sums.entry(s.token_id).or_default() += U512::from(s.amount.0);
    }
    // An amount held is at most the supply, a uint256: a larger sum is a bug of ours.
    sums.into_iter()
        .map(|(id, sum)| {
            let bytes: [u8; 64] = sum.to_be_bytes();
            let low: [u8; 32] = bytes[32..]
                .try_into()
                .ok()
                .filter(|_| bytes[..32] == [0; 32])
                .ok_or_else(|| QueryError::Corrupt(format!("token {id}: supply past 2^256")))?;
            Ok((id, Uint256::from_be_bytes(&low)))
        })
        .collect()
}

/// A grouped token as a record, keyed by its token id.
pub(super) fn nft(
    contract: Address,
    t: Token,
    shared: &HashMap<Uint256, Uint256>,
) -> Result<Edge<CollectionNft>, QueryError> {
    let token_id = t.token_id;
    let (owner, amount) = if t.holders == 1 {
        (Some(t.owner), t.amount)
    } else {
        // Read in the page's snapshot, every shared token's shares are there.
        let amount = shared.get(&t.token_id).copied().ok_or_else(|| {
            QueryError::Corrupt(format!("token {token_id}: its shares were not read"))
        })?;
        (None, amount)
    };
    Ok(Edge {
        key: Key::new([KeyPart::Uint(t.token_id)]),
        node: CollectionNft {
            contract,
            token_id,
            contract_type: t.contract_type,
            owner,
            amount,
            block_number: u64::try_from(t.block_number).unwrap_or(0),
        },
    })
}
