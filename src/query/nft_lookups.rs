//! Lookups of NFT collections and of NFTs named one by one: a batch of NFTs
//! (`getMultipleNFTs`), collection contracts' metadata, a collection's counts and the distinct
//! wallets holding it.
//!
//! Each reads its rows and the state it is judged by in one snapshot ([`super::snapshot`]):
//! the answer is complete once the named collections' history is (their contract scopes), and
//! an incomplete answer schedules that history. Counts read while incomplete are what is
//! stored so far, and say `SYNCING`.

use std::collections::HashMap;

use sea_orm::sea_query::{Expr, ExprTrait};
use sea_orm::IdenStatic as _;
use sea_orm::{
    ColumnTrait, Condition, ConnectionTrait, EntityTrait, FromQueryResult, PaginatorTrait,
    QueryFilter, QueryOrder, QuerySelect,
};

use super::answer::{keys_of, Include, Listing};
use super::collection_nfts::exact_sum;
use super::cursor::{query_digest, CursorKind};
use super::nfts::certain_holdings;
use super::status::Needs;
use super::walk::Walk;
use super::{
    CollectionNft, ContractInfo, Edge, Key, KeyPart, Page, QueryError, QueryService, SyncStatus,
};
use crate::entity::{contract, nft_holding, nft_transfer};
use crate::store::dialect::{any_pair_of_chain, Dialect};
use crate::types::{Address, Chain, PageSize, Scope, TokenStandard, Uint256};

use nft_holding::Column as H;

/// A value with the status of the answer it was read in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stated<T> {
    /// What was read.
    pub value: T,
    /// `SYNCED` when the value is complete (API.md).
    pub status: SyncStatus,
    /// The last block the indexer had stored when it was read (see [`Page::block`]).
    pub block: Option<u64>,
}

/// What a collection counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CollectionStats {
    /// Token ids someone holds.
    pub tokens: u64,
    /// Distinct wallets holding at least one of its tokens.
    pub owners: u64,
    /// Its transfers (an ERC1155 batch counts once per token id it moves).
    pub transfers: u64,
}

/// What one NFT counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NftTokenStats {
    /// Wallets holding it (1 for a held ERC721 token, 0 for a burned one).
    pub owners: u64,
    /// Its transfers (mints and burns included).
    pub transfers: u64,
}

/// An NFT collection contract's metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NftContract {
    /// The contract.
    pub address: Address,
    /// `ERC721` or `ERC1155`.
    pub standard: TokenStandard,
    /// Name, symbol, spam and verification marks.
    pub info: ContractInfo,
    /// When its name and symbol were read from the chain (Unix ms); `None`: not yet.
    pub synced_at: Option<i64>,
}

/// `GET /nft/{address}/unique-owners`: a collection's distinct holders, by address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UniqueOwnersQuery {
    pub chain: Chain,
    pub contract: Address,
    pub page_size: PageSize,
}

impl UniqueOwnersQuery {
    fn digest(&self) -> String {
        query_digest(&format!("uowners|{}|{}", self.chain.id(), self.contract))
    }
}

/// The answer depends on these collections' whole history, and schedules it when incomplete.
fn collections_need(contracts: &[Address]) -> Needs {
    let mut scopes: Vec<Scope> = contracts.iter().map(|&c| Scope::contract(c)).collect();
    scopes.sort();
    scopes.dedup();
    Needs {
        alternatives: vec![scopes.clone()],
        schedule: scopes,
        ..Needs::default()
    }
}

/// One NFT of a batch, grouped over its holders.
#[derive(Debug, FromQueryResult)]
struct Grouped {
    contract_address: Address,
    token_id: Uint256,
    contract_type: TokenStandard,
    holders: i64,
    /// The lowest holder (the holder, when there is one).
    owner: Address,
    /// The highest amount (the amount, when there is one holder).
    amount: Uint256,
    block_number: i64,
}

/// One holding of an NFT held by several wallets.
#[derive(Debug, FromQueryResult)]
struct Share {
    contract_address: Address,
    token_id: Uint256,
    amount: Uint256,
}

/// Holdings of any of `tokens`.
fn any_of(chain: Chain, tokens: &[(Address, Uint256)]) -> Condition {
    any_pair_of_chain(
        H::ChainId,
        chain.db_id(),
        (H::ContractAddress, H::TokenId),
        tokens.iter().copied(),
    )
}

impl QueryService {
    /// The NFTs named by `tokens` (up to a batch), each as a collection's record
    /// ([`QueryService::collection_nfts`]): one record per token someone holds, in no
    /// particular order; a token nobody holds has none. Complete once every named
    /// collection's history is; while not, only the holdings partial history cannot have
    /// made up.
    pub async fn nfts_by_ids(
        &self,
        chain: Chain,
        tokens: &[(Address, Uint256)],
        include: Include,
    ) -> Result<Listing<CollectionNft>, QueryError> {
        let contracts: Vec<Address> = tokens.iter().map(|&(c, _)| c).collect();
        let needs = collections_need(&contracts);
        let snap = self.snapshot().await?;
        let (view, done) = snap.settle(chain, |_| needs.clone()).await?;
        let mut filter = any_of(chain, tokens);
        if !done.complete {
            filter = filter.add(certain_holdings(chain, view.start_block));
        }
        let dialect = Dialect::of(snap.db());
        let grouped = if tokens.is_empty() {
            Vec::new()
        } else {
            nft_holding::Entity::find()
                .filter(filter.clone())
                .select_only()
                .column(H::ContractAddress)
                .column(H::TokenId)
                .column_as(Expr::col(H::ContractType).max(), "contract_type")
                .column_as(Expr::col(H::OwnerAddress).count(), "holders")
                .column_as(
                    dialect.binary_extreme(H::OwnerAddress.as_str(), true),
                    "owner",
                )
                .column_as(dialect.binary_extreme(H::Amount.as_str(), false), "amount")
                .column_as(Expr::col(H::BlockNumber).max(), "block_number")
                .group_by(H::ContractAddress)
                .group_by(H::TokenId)
                .into_model::<Grouped>()
                .all(snap.db())
                .await?
        };
        let shared = shared_amounts(snap.db(), chain, &grouped).await?;
        snap.close().await?;
        let records = grouped
            .into_iter()
            .map(|g| batch_record(g, &shared))
            .collect::<Result<Vec<_>, _>>()?;
        let related = self.related(chain, keys_of(&records), include).await?;
        Ok(Listing {
            records,
            status: done.status,
            block: view.indexed_block,
            related,
        })
    }

    /// The NFT collection contracts among `addresses` that tokenql knows (an NFT transfer of
    /// theirs is stored), in no particular order.
    pub async fn nft_contracts(
        &self,
        chain: Chain,
        addresses: &[Address],
    ) -> Result<Stated<Vec<NftContract>>, QueryError> {
        let needs = collections_need(addresses);
        let snap = self.snapshot().await?;
        let (view, done) = snap.settle(chain, |_| needs.clone()).await?;
        let rows = contract::Entity::find()
            .filter(contract::Column::ChainId.eq(chain.db_id()))
            .filter(contract::Column::Address.is_in(addresses.iter().copied()))
            .all(snap.db())
            .await?;
        snap.close().await?;
        let value = rows.into_iter().filter_map(nft_contract).collect();
        Ok(Stated {
            value,
            status: done.status,
            block: view.indexed_block,
        })
    }

    /// How many tokens, holders and transfers the collection has.
    pub async fn collection_stats(
        &self,
        chain: Chain,
        collection: Address,
    ) -> Result<Stated<CollectionStats>, QueryError> {
        let needs = collections_need(&[collection]);
        let snap = self.snapshot().await?;
        let (view, done) = snap.settle(chain, |_| needs.clone()).await?;
        let held = Condition::all()
            .add(H::ChainId.eq(chain.db_id()))
            .add(H::ContractAddress.eq(collection));
        let tokens = distinct_count(snap.db(), held.clone(), H::TokenId).await?;
        let owners = distinct_count(snap.db(), held, H::OwnerAddress).await?;
        let transfers = nft_transfer::Entity::find()
            .filter(nft_transfer::Column::ChainId.eq(chain.db_id()))
            .filter(nft_transfer::Column::ContractAddress.eq(collection))
            .count(snap.db())
            .await?;
        snap.close().await?;
        Ok(Stated {
            value: CollectionStats {
                tokens,
                owners,
                transfers,
            },
            status: done.status,
            block: view.indexed_block,
        })
    }

    /// How many wallets hold the token and how many transfers it has had.
    pub async fn nft_token_stats(
        &self,
        chain: Chain,
        collection: Address,
        token_id: Uint256,
    ) -> Result<Stated<NftTokenStats>, QueryError> {
        let needs = collections_need(&[collection]);
        let snap = self.snapshot().await?;
        let (view, done) = snap.settle(chain, |_| needs.clone()).await?;
        let owners = nft_holding::Entity::find()
            .filter(any_of(chain, &[(collection, token_id)]))
            .count(snap.db())
            .await?;
        let transfers = nft_transfer::Entity::find()
            .filter(nft_transfer::Column::ChainId.eq(chain.db_id()))
            .filter(nft_transfer::Column::ContractAddress.eq(collection))
            .filter(nft_transfer::Column::TokenId.eq(token_id))
            .count(snap.db())
            .await?;
        snap.close().await?;
        Ok(Stated {
            value: NftTokenStats { owners, transfers },
            status: done.status,
            block: view.indexed_block,
        })
    }

    /// One page of the distinct wallets holding the collection, by address, after `after`.
    /// While the collection's history is incomplete, only holders of tokens partial history
    /// cannot have made up, and `SYNCING`.
    pub async fn unique_owners(
        &self,
        q: &UniqueOwnersQuery,
        after: Option<&str>,
    ) -> Result<Page<Address>, QueryError> {
        let walk = Walk::<(Address,)>::begin(self, CursorKind::UniqueOwners, q.digest(), after)?;
        let mut filter = Condition::all()
            .add(H::ChainId.eq(q.chain.db_id()))
            .add(H::ContractAddress.eq(q.contract));
        if let Some(&(owner,)) = walk.position() {
            filter = filter.add(H::OwnerAddress.gt(owner));
        }
        let needs = collections_need(&[q.contract]);
        let snap = self.snapshot().await?;
        let (view, done) = snap.settle(q.chain, |_| needs.clone()).await?;
        let incomplete = walk.incomplete(done.complete);
        if incomplete {
            filter = filter.add(certain_holdings(q.chain, view.start_block));
        }
        let limit = q.page_size.get();
        let owners: Vec<Address> = nft_holding::Entity::find()
            .filter(filter)
            .select_only()
            .column(H::OwnerAddress)
            .distinct()
            .order_by_asc(H::OwnerAddress)
            .limit(limit + 1)
            .into_tuple()
            .all(snap.db())
            .await?;
        snap.close().await?;
        walk.at(view.indexed_block)
            .finish(self, owners, limit, incomplete, done.status, |owner| {
                Ok(Edge {
                    key: Key::new([KeyPart::Address(owner)]),
                    node: owner,
                })
            })
    }
}

/// `SELECT COUNT(DISTINCT column)` of the holdings matching `filter`.
async fn distinct_count(
    db: &impl ConnectionTrait,
    filter: Condition,
    column: H,
) -> Result<u64, QueryError> {
    let n: Option<i64> = nft_holding::Entity::find()
        .filter(filter)
        .select_only()
        .column_as(Expr::col(column).count_distinct(), "n")
        .into_tuple()
        .one(db)
        .await?;
    Ok(n.and_then(|n| u64::try_from(n).ok()).unwrap_or(0))
}

/// The summed amounts of the NFTs several wallets hold, read in the same snapshot.
async fn shared_amounts(
    db: &impl ConnectionTrait,
    chain: Chain,
    grouped: &[Grouped],
) -> Result<HashMap<(Address, Uint256), Uint256>, QueryError> {
    let keys: Vec<(Address, Uint256)> = grouped
        .iter()
        .filter(|g| g.holders > 1)
        .map(|g| (g.contract_address, g.token_id))
        .collect();
    if keys.is_empty() {
        return Ok(HashMap::new());
    }
    let shares = nft_holding::Entity::find()
        .filter(any_of(chain, &keys))
        .select_only()
        .column(H::ContractAddress)
        .column(H::TokenId)
        .column(H::Amount)
        .into_model::<Share>()
        .all(db)
        .await?;
    let mut by_token: HashMap<(Address, Uint256), Vec<Uint256>> = HashMap::new();
    for s in shares {
        by_token
            .entry((s.contract_address, s.token_id))
            .or_default()
            .push(s.amount);
    }
    by_token
        .into_iter()
        .map(|(k, amounts)| Ok((k, exact_sum(amounts)?)))
        .collect()
}

/// A grouped NFT as a collection's record.
fn batch_record(
    g: Grouped,
    shared: &HashMap<(Address, Uint256), Uint256>,
) -> Result<CollectionNft, QueryError> {
    let key = (g.contract_address, g.token_id);
    let (owner, amount) = if g.holders == 1 {
        (Some(g.owner), g.amount)
    } else {
        let amount = shared.get(&key).copied().ok_or_else(|| {
            QueryError::Corrupt(format!("token {}: its shares were not read", g.token_id))
        })?;
        (None, amount)
    };
    Ok(CollectionNft {
        contract: g.contract_address,
        token_id: g.token_id,
        contract_type: g.contract_type,
        owner,
        amount,
        block_number: u64::try_from(g.block_number).unwrap_or(0),
    })
}

/// A stored contract as an NFT collection; `None` unless it is one.
fn nft_contract(m: contract::Model) -> Option<NftContract> {
    let standard = m.standard.filter(|s| s.is_nft())?;
    Some(NftContract {
        address: m.address,
        standard,
        info: ContractInfo {
            standard: Some(standard),
            name: m.name,
            symbol: m.symbol,
            decimals: None,
            logo: m.logo,
            possible_spam: m.possible_spam,
            verified: m.verified,
        },
        synced_at: m.metadata_fetched_at,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_amounts_add_up_exactly() {
        let max =
            Uint256::parse(&format!("0x{}", "f".repeat(64))).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            exact_sum([Uint256::from_u64(2), Uint256::from_u64(3)]).ok(),
            Some(Uint256::from_u64(5))
        );
        assert_eq!(exact_sum([max]).ok(), Some(max));
        assert!(exact_sum([max, Uint256::from_u64(1)]).is_err());
    }

    #[test]
    fn collections_are_needed_once_each() {
        let a = Address::parse("0x00000000000000000000000000000000000000aa")
            .unwrap_or_else(|e| panic!("{e}"));
        let needs = collections_need(&[a, a]);
        assert_eq!(needs.alternatives, vec![vec![Scope::contract(a)]]);
        assert_eq!(needs.schedule, vec![Scope::contract(a)]);
    }
}
