//! Which tokens of this collection does someone hold? One record per token id, by token id,
//! with its holder when there is exactly one (every ERC721 token; an ERC1155 id held by one
//! wallet) and the amount held over all holders.
//!
//! Two statements a page: the token ids with their holder counts (the collection index of
//! `nft_holdings` serves it in order), then the amounts of the page's ids held by several
//! wallets (ERC1155), summed exactly here: the stored amounts are hex text no database sums.

use std::collections::{BTreeMap, HashMap};

use alloy::primitives::U512;
use sea_orm::sea_query::{Expr, ExprTrait};
use sea_orm::IdenStatic as _;
use sea_orm::{
    ColumnTrait, Condition, ConnectionTrait, EntityTrait, FromQueryResult, QueryFilter, QueryOrder,
    QuerySelect,
};

use super::answer::{Answer, Include};
use super::as_of::{self, Holders, Within};
use super::cursor::{query_digest, CursorKind};
use super::nfts::certain_holdings;
use super::status::Needs;
use super::walk::Walk;
use super::{
    CollectionNft, CollectionNftsQuery, Edge, Key, KeyPart, Page, QueryError, QueryService,
};
use crate::entity::nft_holding;
use crate::store::dialect::Dialect;
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
            text.push_str(&format!("|{}", t.to_hex64()));
        }
        if let Some(b) = self.at_block {
            text.push_str(&format!("|at{b}"));
        }
        query_digest(&text)
    }

    fn filter(&self) -> Condition {
        let c = Condition::all()
            .add(H::ChainId.eq(self.chain.db_id()))
            .add(H::ContractAddress.eq(self.contract));
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
        let mut walk = Walk::<(Uint256,)>::begin(self, kind, q.digest(), after)?;
        if let Some(block) = q.at_block {
            return self.collection_nfts_at(q, walk, block).await;
        }
        let mut filter = q.filter();
        if let Some(&(token,)) = walk.position() {
            filter = filter.add(H::TokenId.gt(token));
        }
        let needs = q.needs();
        // The page and the state it is judged by, as of one moment.
        let snap = self.snapshot().await?;
        let db = snap.db();
        let who = Holders::Collection(q.contract, q.token);
        let settled = as_of::settle(&snap, &mut walk, q.chain, &needs, who).await?;
        let (view, incomplete, changed) = (settled.view, settled.incomplete, settled.changed());
        let status = settled.status;
        if incomplete {
            filter = filter.add(certain_holdings(q.chain, view.start_block));
        }
        let since = settled.since;
        let limit = q.page_size.get();
        let mut tokens = held_tokens(db, filter.clone(), limit + changed + 1).await?;
        let mut replayed = HashMap::new();
        if let Some(s) = since {
            let mut rows = s.rows;
            if incomplete {
                rows = as_of::keep_certain(db, q.chain, rows, view.start_block).await?;
            }
            let (pinned, sums) = group_tokens(rows)?;
            replayed = sums;
            tokens = as_of::merge(
                tokens,
                (limit + changed + 1) as usize,
                |t| s.tokens.contains(&(q.contract, t.token_id)),
                pinned,
                |t| t.token_id,
                walk.position().map(|p| p.0),
                limit as usize,
            );
        }
        let page = &tokens[..tokens.len().min(limit as usize)];
        // Read in the same snapshot, the shares add up to the amounts of the tokens read (a
        // token replayed as of the pinned block has its sum already).
        let at_head: Vec<&Token> = page
            .iter()
            .filter(|t| !replayed.contains_key(&t.token_id))
            .collect();
        let mut shared = shared_amounts(db, filter, at_head).await?;
        shared.extend(replayed);
        snap.close().await?;
        let contract = q.contract;
        let block = walk.pinned().or(view.indexed_block);
        walk.at(block)
            .finish(self, tokens, limit, incomplete, status, |t| {
                nft(contract, t, &shared)
            })
    }

    /// The page of [`QueryService::collection_nfts`] as of `block` ([`super::as_of`]):
    /// complete once the collection's history is and the indexer has stored `block`; a block
    /// above the chain's head is refused.
    async fn collection_nfts_at(
        &self,
        q: &CollectionNftsQuery,
        walk: Walk<(Uint256,)>,
        block: u64,
    ) -> Result<Page<CollectionNft>, QueryError> {
        let needs = q.needs().as_of(block);
        let snap = self.snapshot().await?;
        let (view, done) = snap.settle(q.chain, |_| needs.clone()).await?;
        let incomplete = walk.incomplete(done.complete);
        let who = Holders::Collection(q.contract, q.token);
        let mut rows = as_of::holdings_at(snap.db(), q.chain, who, block, Within::All).await?;
        if incomplete {
            rows = as_of::keep_certain(snap.db(), q.chain, rows, view.start_block).await?;
        }
        snap.close().await?;
        let (mut tokens, shared) = group_tokens(rows)?;
        if let Some(&(position,)) = walk.position() {
            tokens.retain(|t| t.token_id > position);
        }
        let limit = q.page_size.get();
        tokens.truncate(limit as usize + 1);
        let contract = q.contract;
        walk.at(view.indexed_block)
            .finish(self, tokens, limit, incomplete, done.status, |t| {
                nft(contract, t, &shared)
            })
    }
}

/// Replayed holdings grouped by token id as [`held_tokens`] groups the table's, in token id
/// order, with the summed amounts of the tokens several wallets hold.
fn group_tokens(
    rows: Vec<nft_holding::Model>,
) -> Result<(Vec<Token>, HashMap<Uint256, Uint256>), QueryError> {
    let mut groups: BTreeMap<Uint256, Vec<nft_holding::Model>> = BTreeMap::new();
    for r in rows {
        groups.entry(r.token_id).or_default().push(r);
    }
    let mut tokens = Vec::with_capacity(groups.len());
    let mut shares = Vec::new();
    for (token_id, held) in groups {
        let lowest = held.iter().min_by_key(|r| r.owner_address);
        let Some(lowest) = lowest else { continue };
        tokens.push(Token {
            token_id,
            contract_type: lowest.contract_type,
            holders: held.len() as i64,
            owner: lowest.owner_address,
            amount: held.iter().map(|r| r.amount).max().unwrap_or(lowest.amount),
            block_number: held.iter().map(|r| r.block_number).max().unwrap_or(0),
        });
        if held.len() > 1 {
            shares.extend(held.iter().map(|r| (token_id, r.amount)));
        }
    }
    Ok((tokens, sum_shares(shares)?))
}

/// Up to `limit` of the held tokens `filter` matches, grouped over their holders, by token id.
pub(super) async fn held_tokens(
    db: &impl ConnectionTrait,
    filter: Condition,
    limit: u64,
) -> Result<Vec<Token>, QueryError> {
    let dialect = Dialect::of(db);
    Ok(nft_holding::Entity::find()
        .filter(filter)
        .select_only()
        .column(H::TokenId)
        .column_as(Expr::col(H::ContractType).max(), "contract_type")
        .column_as(Expr::col(H::OwnerAddress).count(), "holders")
        .column_as(
            dialect.binary_extreme(H::OwnerAddress.as_str(), true),
            "owner",
        )
        .column_as(dialect.binary_extreme(H::Amount.as_str(), false), "amount")
        .column_as(Expr::col(H::BlockNumber).max(), "block_number")
        .group_by(H::TokenId)
        .order_by_asc(H::TokenId)
        .limit(limit)
        .into_model::<Token>()
        .all(db)
        .await?)
}

/// The summed amounts of the tokens held by several wallets.
pub(super) async fn shared_amounts<'a>(
    db: &impl ConnectionTrait,
    filter: Condition,
    tokens: impl IntoIterator<Item = &'a Token>,
) -> Result<HashMap<Uint256, Uint256>, QueryError> {
    let ids: Vec<Uint256> = tokens
        .into_iter()
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
    sum_shares(shares.into_iter().map(|s| (s.token_id, s.amount)))
}

/// The sum of each token's `shares` (token id, amount held by one wallet), exactly.
pub(super) fn sum_shares(
    shares: impl IntoIterator<Item = (Uint256, Uint256)>,
) -> Result<HashMap<Uint256, Uint256>, QueryError> {
    let mut per_token: HashMap<Uint256, Vec<Uint256>> = HashMap::new();
    for (id, amount) in shares {
        per_token.entry(id).or_default().push(amount);
    }
    per_token
        .into_iter()
        .map(|(id, amounts)| Ok((id, exact_sum(amounts)?)))
        .collect()
}

/// Adds up uint256 amounts exactly; a sum past 2^256 (more than any supply: an amount held is
/// at most the supply) is a bug of ours.
pub(super) fn exact_sum(amounts: impl IntoIterator<Item = Uint256>) -> Result<Uint256, QueryError> {
    let sum: U512 = amounts.into_iter().map(|a| U512::from(a.0)).sum();
    let bytes: [u8; 64] = sum.to_be_bytes();
    bytes[32..]
        .try_into()
        .ok()
        .filter(|_| bytes[..32] == [0; 32])
        .map(|low: [u8; 32]| Uint256::from_be_bytes(&low))
        .ok_or_else(|| QueryError::Corrupt("an NFT's supply past 2^256".to_string()))
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
