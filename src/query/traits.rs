//! Which traits do this collection's tokens have, how rare is each, and which tokens have the
//! traits asked for? Every answer is aggregated from the stored metadata of the tokens someone
//! holds (`nft_tokens.metadata`, read as [`crate::types::metadata`] says: the attributes the REST
//! records' `normalized_metadata` shows), recomputed on every read, never stored.
//!
//! **What a trait is.** An attribute with both a type and a value; the value as text (a string
//! as it is, a number or boolean as JSON writes it). A token counts once per trait, however
//! often its metadata repeats it. Counts are over the collection's held tokens (the ones
//! `GET /nft/{address}` lists), with or without traits.
//!
//! **Complete, or not.** An answer is `SYNCED` only when the collection's whole history is
//! stored (as `GET /nft/{address}/owners`) *and* every held token's metadata is settled: fetched
//! (`metadata_status = 'ok'`), or its URI read and found empty (there is nothing to fetch).
//! A token never fetched, or whose last fetch failed (even with older metadata kept), leaves the
//! answer `SYNCING`: its traits may be missing or stale. Rarity (a trait's percentage and
//! label, an NFT's rank) needs every count, so it is given only with `SYNCED` (complete in both
//! senses, the indexer not trailing the head), and is `None` otherwise — never computed from
//! part of the collection.
//!
//! **A limit of the paged walk.** Its cursor carries the last trait's type and value as they
//! are (in base64 with the rest of the payload); with a type and value of more than about
//! 3,000 bytes together, the cursor passes the 4,096 characters a cursor may have and the next
//! page cannot be asked for. The whole list (`traits`) has no such limit. While the
//! history is incomplete, only holdings partial history cannot have made up are counted, as
//! `GET /nft/{address}` does.
//!
//! **Where the aggregation runs: here, in Rust.** Each answer reads the held token ids and their
//! `(token_id, metadata, …)` rows in two statements of one snapshot and tallies them in Rust
//! ([`tally`]). Counting in SQL would need three JSON dialects (`json_each`, `jsonb_array_elements`,
//! `JSON_TABLE`) that cannot restate the metadata reading's fallbacks (`attributes`, `traits`,
//! ERC1155 `properties`, bare values, numeric text), so a counted trait could differ from the one
//! shown. Measured on the data `tally_timing` in [`tally`] builds, with `tally.rs` and
//! `types/metadata.rs` compiled as they are in release mode in a stand-alone harness (the test
//! itself runs in the debug build: ~1.4 s), on the shared 2-core dev machine at a load average of
//! ~5.6 (an idle core is faster): 30,000 tokens of 8 traits each (550-byte documents, 306 distinct traits) take
//! 250-320 ms to parse and tally (the JSON parse ~80-110 ms of it) and 50-100 ms more for the NFT
//! rarity ranks — per request, on top of reading the rows. That is acceptable for the collections
//! this serves (at most a few tens of thousands of tokens); one far larger, or a hot one, should
//! get a maintained table of per-token traits (a follow-up, not built).

mod tally;

use std::collections::{BTreeMap, BTreeSet, HashMap};

use sea_orm::sea_query::{Query, SelectStatement};
use sea_orm::{ColumnTrait, Condition, ConnectionTrait, EntityTrait, QueryFilter, QuerySelect};

use super::collection_nfts::{held_tokens, nft, shared_amounts};
use super::cursor::{query_digest, CursorKind};
use super::nfts::certain_holdings;
use super::status::Needs;
use super::walk::Walk;
use super::{
    CollectionNft, Edge, Key, KeyPart, Page, QueryError, QueryService, RelatedKeys, Relates,
    SyncStatus,
};
use crate::entity::{nft_holding, nft_token};
use crate::store::lists::padded;
use crate::types::{Address, Chain, PageSize, Scope, SortOrder, Uint256};
use tally::{traits_of, Tally, Trait};

use nft_holding::Column as H;
use nft_token::Column as T;

/// The stored `metadata_status` of a fetched document (the off-chain worker's `FetchStatus::Ok`).
const FETCHED: &str = "ok";

/// The collection whose traits are asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraitsQuery {
    pub chain: Chain,
    pub contract: Address,
}

/// One page of a collection's traits, by trait type then value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraitsPageQuery {
    pub chain: Chain,
    pub contract: Address,
    /// Ascending or descending (trait type, then value).
    pub order: SortOrder,
    pub page_size: PageSize,
}

/// The traits an NFT must have: for each trait type named, one of its values (types are ANDed,
/// a type's values ORed). Types and values compare exactly (letter case included). No type
/// named: every NFT matches.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TraitFilter {
    wanted: BTreeMap<String, BTreeSet<String>>,
}

impl TraitFilter {
    /// The filter asking for every `(trait type, value)` of `pairs`.
    pub fn new(pairs: impl IntoIterator<Item = (String, String)>) -> Self {
        let mut wanted: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (t, v) in pairs {
            wanted.entry(t).or_default().insert(v);
        }
        Self { wanted }
    }

    /// Whether a token with `traits` has the traits asked for.
    fn matches(&self, traits: &BTreeSet<Trait>) -> bool {
        self.wanted
            .iter()
            .all(|(t, values)| traits.iter().any(|(tt, v)| tt == t && values.contains(v)))
    }

    /// A canonical description, for the cursor digest.
    fn canonical(&self) -> String {
        serde_json::to_string(&self.wanted).unwrap_or_default()
    }
}

/// A collection's NFTs with the traits of `traits`, by token id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NftsByTraitsQuery {
    pub chain: Chain,
    pub contract: Address,
    pub traits: TraitFilter,
    pub page_size: PageSize,
}

/// How rare a trait is.
#[derive(Debug, Clone, PartialEq)]
pub struct TraitRarity {
    /// The share of the collection's tokens that have it, in percent, two decimals.
    pub percentage: f64,
    /// `Top N% trait`: N the share rounded up to a whole percentage.
    pub label: String,
}

/// One trait of a collection.
#[derive(Debug, Clone, PartialEq)]
pub struct TraitCount {
    pub trait_type: String,
    /// The value as text.
    pub value: String,
    /// How many of the collection's tokens have it.
    pub count: u64,
    /// `None` unless the answer is complete (see the module docs).
    pub rarity: Option<TraitRarity>,
}

/// A collection's traits, whole.
#[derive(Debug, Clone, PartialEq)]
pub struct CollectionTraits {
    /// By trait type, then value.
    pub traits: Vec<TraitCount>,
    /// The tokens counted.
    pub tokens: u64,
    pub status: SyncStatus,
    /// The last block the indexer had stored when the answer was read.
    pub block: Option<u64>,
}

/// How rare an NFT is within its collection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NftRarity {
    /// 1 for the rarest; equal scores share a rank.
    pub rank: u64,
    /// `rank / tokens` in percent, rounded up to a whole number.
    pub percentage: u64,
    /// `Top N%`, N the percentage.
    pub label: String,
}

/// A collection's NFT that has the traits asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraitedNft {
    /// Its record, as [`QueryService::collection_nfts`] gives it.
    pub nft: CollectionNft,
    /// `None` unless the answer is complete (see the module docs).
    pub rarity: Option<NftRarity>,
}

impl Relates for TraitedNft {
    fn keys(&self, keys: &mut RelatedKeys) {
        self.nft.keys(keys);
    }
}

/// A collection's held tokens with their traits, as of one snapshot.
struct Collection {
    tokens: BTreeMap<Uint256, BTreeSet<Trait>>,
    /// Every token's metadata is settled (see the module docs).
    settled: bool,
}

/// The holdings of `contract` that count: all of them, or only the certain ones while the
/// collection's history is `partial`.
fn holdings(chain: Chain, contract: Address, partial: Option<Option<u64>>) -> Condition {
    let c = Condition::all()
        .add(H::ChainId.eq(chain.db_id()))
        .add(H::ContractAddress.eq(contract));
    match partial {
        Some(start_block) => c.add(certain_holdings(chain, start_block)),
        None => c,
    }
}

/// The token ids `filter` holds, as a subquery.
fn held_ids(filter: Condition) -> SelectStatement {
    Query::select()
        .column(H::TokenId)
        .from(nft_holding::Entity)
        .cond_where(filter)
        .to_owned()
}

type TokenRow = (
    Uint256,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<i64>,
);

/// Reads the held tokens of `holdings` and their metadata (two statements of `db`'s snapshot).
async fn read_collection(
    db: &impl ConnectionTrait,
    chain: Chain,
    contract: Address,
    holdings: Condition,
) -> Result<Collection, QueryError> {
    let held: Vec<Uint256> = nft_holding::Entity::find()
        .filter(holdings.clone())
        .select_only()
        .column(H::TokenId)
        .distinct()
        .into_tuple()
        .all(db)
        .await?;
    let rows: Vec<TokenRow> = nft_token::Entity::find()
        .filter(T::ChainId.eq(chain.db_id()))
        .filter(T::ContractAddress.eq(contract))
        .filter(T::TokenId.in_subquery(held_ids(holdings)))
        .select_only()
        .columns([
            T::TokenId,
            T::Metadata,
            T::MetadataStatus,
            T::TokenUri,
            T::LastTokenUriSync,
        ])
        .into_tuple()
        .all(db)
        .await?;
    let mut rows: HashMap<Uint256, (Option<String>, bool)> = rows
        .into_iter()
        .map(|(id, metadata, status, uri, uri_read)| {
            let settled =
                status.as_deref() == Some(FETCHED) || (uri_read.is_some() && uri.is_none());
            (id, (metadata, settled))
        })
        .collect();
    let mut settled = true;
    let tokens = held
        .into_iter()
        .map(|id| {
            // A held token without its row (never expected) is one whose metadata is unknown.
            let (metadata, done) = rows.remove(&id).unwrap_or((None, false));
            settled &= done;
            (id, traits_of(metadata.as_deref()))
        })
        .collect();
    Ok(Collection { tokens, settled })
}

/// The scopes every traits answer depends on: the collection's whole history.
fn needs(contract: Address) -> Needs {
    let collection = vec![Scope::contract(contract)];
    Needs {
        alternatives: vec![collection.clone()],
        schedule: collection,
        ..Needs::default()
    }
}

/// The collection's traits, by trait type then value, with rarity when `complete`.
fn counted(tally: &Tally, complete: bool) -> Vec<TraitCount> {
    tally
        .counts
        .iter()
        .map(|((trait_type, value), &count)| TraitCount {
            trait_type: trait_type.clone(),
            value: value.clone(),
            count,
            rarity: complete.then(|| tally.trait_rarity(count)),
        })
        .collect()
}

/// A collection read as of one snapshot, with the state it is judged by.
struct Read {
    collection: Collection,
    /// `SYNCED`: complete in both senses (see the module docs), as was every earlier page, and
    /// the indexer is not trailing the head. Rarity is given only then.
    complete: bool,
    status: SyncStatus,
    block: Option<u64>,
}

impl QueryService {
    /// Reads the collection's tokens and the state they are judged by, as of one snapshot.
    /// `incomplete` says whether the answer is, given whether this read is complete (a walk
    /// begun incomplete stays so).
    async fn read_traits(
        &self,
        chain: Chain,
        contract: Address,
        incomplete: impl Fn(bool) -> bool,
    ) -> Result<Read, QueryError> {
        let needs = needs(contract);
        let snap = self.snapshot().await?;
        let (view, done) = snap.settle(chain, |_| needs.clone()).await?;
        let partial = (!done.complete).then_some(view.start_block);
        let filter = holdings(chain, contract, partial);
        let collection = read_collection(snap.db(), chain, contract, filter).await?;
        snap.close().await?;
        let incomplete = incomplete(done.complete && collection.settled);
        let status = if incomplete {
            SyncStatus::Syncing
        } else {
            done.status
        };
        Ok(Read {
            collection,
            // Rarity is shown with `SYNCED` only (an indexer trailing the head may yet store a
            // token that changes every share).
            complete: status == SyncStatus::Synced,
            status,
            block: view.indexed_block,
        })
    }

    /// Every trait of the collection, with how many of its tokens have it (and, when complete,
    /// how rare it is). Schedules the collection's history when it is incomplete.
    pub async fn traits(&self, q: &TraitsQuery) -> Result<CollectionTraits, QueryError> {
        let read = self.read_traits(q.chain, q.contract, |c| !c).await?;
        let tally = Tally::new(read.collection.tokens.values());
        Ok(CollectionTraits {
            traits: counted(&tally, read.complete),
            tokens: tally.total,
            status: read.status,
            block: read.block,
        })
    }

    /// One page of [`QueryService::traits`], ordered by (trait type, value) as `q.order` says,
    /// after `after`.
    pub async fn traits_page(
        &self,
        q: &TraitsPageQuery,
        after: Option<&str>,
    ) -> Result<Page<TraitCount>, QueryError> {
        let digest = query_digest(&format!(
            "traits|{}|{}|{:?}",
            q.chain.id(),
            q.contract,
            q.order
        ));
        let walk = Walk::<(String, String)>::begin(self, CursorKind::Traits, digest, after)?;
        let read = self
            .read_traits(q.chain, q.contract, |c| walk.incomplete(c))
            .await?;
        let tally = Tally::new(read.collection.tokens.values());
        let mut traits = counted(&tally, read.complete);
        if q.order == SortOrder::Desc {
            traits.reverse();
        }
        let limit = q.page_size.get();
        let position = walk.position().map(|(t, v)| (t.as_str(), v.as_str()));
        let rows: Vec<TraitCount> = traits
            .into_iter()
            .filter(|t| {
                let here = (t.trait_type.as_str(), t.value.as_str());
                match (position, q.order) {
                    (None, _) => true,
                    (Some(p), SortOrder::Asc) => here > p,
                    (Some(p), SortOrder::Desc) => here < p,
                }
            })
            .take(limit as usize + 1)
            .collect();
        let incomplete = read.status == SyncStatus::Syncing;
        walk.at(read.block)
            .finish(self, rows, limit, incomplete, read.status, |t| {
                Ok(Edge {
                    key: Key::new([
                        KeyPart::Text(t.trait_type.clone()),
                        KeyPart::Text(t.value.clone()),
                    ]),
                    node: t,
                })
            })
    }

    /// One page of the collection's held NFTs that have the traits of `q`, by token id, after
    /// `after`, each with its rarity when the answer is complete. The answer carries the related
    /// rows `include` asks for ([`super::Answer`]).
    pub async fn nfts_by_traits(
        &self,
        q: &NftsByTraitsQuery,
        after: Option<&str>,
        include: super::Include,
    ) -> Result<super::Answer<TraitedNft>, QueryError> {
        let page = self.nfts_by_traits_page(q, after).await?;
        self.answer(q.chain, page, include).await
    }

    /// The page of [`QueryService::nfts_by_traits`], without its related rows.
    async fn nfts_by_traits_page(
        &self,
        q: &NftsByTraitsQuery,
        after: Option<&str>,
    ) -> Result<Page<TraitedNft>, QueryError> {
        let digest = query_digest(&format!(
            "tnfts|{}|{}|{}",
            q.chain.id(),
            q.contract,
            q.traits.canonical()
        ));
        let walk = Walk::<(Uint256,)>::begin(self, CursorKind::TraitNfts, digest, after)?;
        let needs = needs(q.contract);
        // The tokens, their traits, their holders and the state they are judged by, as of one
        // moment.
        let snap = self.snapshot().await?;
        let (view, done) = snap.settle(q.chain, |_| needs.clone()).await?;
        let partial = (!done.complete).then_some(view.start_block);
        let filter = holdings(q.chain, q.contract, partial);
        let collection = read_collection(snap.db(), q.chain, q.contract, filter.clone()).await?;
        let incomplete = walk.incomplete(done.complete && collection.settled);
        let limit = q.page_size.get();
        let from = walk.position().map(|&(t,)| t);
        let ids: Vec<Uint256> = collection
            .tokens
            .iter()
            .filter(|(id, traits)| from.is_none_or(|f| **id > f) && q.traits.matches(traits))
            .map(|(id, _)| *id)
            .take(limit as usize + 1)
            .collect();
        let (tokens, shared) = if ids.is_empty() {
            (Vec::new(), HashMap::new())
        } else {
            let filter = filter.add(H::TokenId.is_in(padded(ids.clone())));
            let tokens = held_tokens(snap.db(), filter.clone(), limit + 1).await?;
            let page = &tokens[..tokens.len().min(limit as usize)];
            let shared = shared_amounts(snap.db(), filter, page).await?;
            (tokens, shared)
        };
        snap.close().await?;
        let status = if incomplete {
            SyncStatus::Syncing
        } else {
            done.status
        };
        // Rarity with `SYNCED` only (see `Read::complete`).
        let rarity = if status == SyncStatus::Synced {
            Tally::new(collection.tokens.values()).nft_rarity(&collection.tokens)
        } else {
            HashMap::new()
        };
        walk.at(view.indexed_block)
            .finish(self, tokens, limit, incomplete, status, |t| {
                let e = nft(q.contract, t, &shared)?;
                let rarity = rarity.get(&e.node.token_id).cloned();
                Ok(Edge {
                    key: e.key,
                    node: TraitedNft {
                        nft: e.node,
                        rarity,
                    },
                })
            })
    }

    /// Queues a refetch of the collection's metadata (every token with a URI becomes due for the
    /// off-chain worker now); the traits follow on the next read. The number of tokens queued.
    pub async fn resync_traits(&self, chain: Chain, contract: Address) -> Result<u64, QueryError> {
        Ok(crate::store::token_meta::refetch_collection(
            self.writer(),
            chain,
            contract,
            crate::store::now_ms(),
        )
        .await?)
    }
}
