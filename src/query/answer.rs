//! Whole answers: a page of records with the related rows its records show (their contracts'
//! metadata, their NFTs' token rows and preview media, their wallets' labels), read together,
//! one statement per kind whatever the page. The REST handlers and the GraphQL resolvers ask
//! one question and reshape its [`Answer`]; neither gathers keys nor joins maps.
//!
//! The adapter says which kinds it will show ([`Include`]): REST from its parameters
//! (`media_items`), GraphQL from the selection. A kind not included costs nothing.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::{
    CollectionNft, ContractInfo, Erc20Transfer, MediaInfo, MediaSource, NftHolding, NftTransfer,
    Page, QueryError, QueryService, SyncStatus, TokenBalance, TokenInfo, WalletCollection,
};
use crate::types::{Address, Chain, Uint256};

/// Which related rows an answer carries.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Include {
    /// Metadata of the records' contracts (standard, name, symbol, decimals, logo, flags).
    pub contracts: bool,
    /// Token rows (mint, URI, metadata) of the records' NFTs.
    pub tokens: bool,
    /// Labels of the records' wallets (senders and recipients).
    pub labels: bool,
    /// Preview media of the records' NFTs (read from their token rows' metadata).
    pub media: bool,
}

impl Include {
    /// Nothing but the page.
    pub const NONE: Include = Include {
        contracts: false,
        tokens: false,
        labels: false,
        media: false,
    };

    /// The page and its records' contracts.
    pub const CONTRACTS: Include = Include {
        contracts: true,
        ..Include::NONE
    };
}

/// The keys of the related rows some records name, gathered before one read per kind.
#[derive(Debug, Default, Clone)]
pub struct RelatedKeys {
    /// Contracts whose metadata is shown.
    pub contracts: Vec<Address>,
    /// NFTs whose token rows (and media) are shown, with whether the collection is ERC1155
    /// (`{id}` in an image URL is then the token id).
    pub nfts: Vec<(Address, Uint256, bool)>,
    /// Wallets whose labels are shown.
    pub wallets: Vec<Address>,
}

/// A record that names related rows.
pub trait Relates {
    /// Adds the keys of this record's related rows to `keys`.
    fn keys(&self, keys: &mut RelatedKeys);
}

impl Relates for NftHolding {
    fn keys(&self, keys: &mut RelatedKeys) {
        keys.contracts.push(self.contract);
        let erc1155 = self.contract_type.is_multi_token();
        keys.nfts.push((self.contract, self.token_id, erc1155));
    }
}

impl Relates for CollectionNft {
    fn keys(&self, keys: &mut RelatedKeys) {
        keys.contracts.push(self.contract);
        let erc1155 = self.contract_type.is_multi_token();
        keys.nfts.push((self.contract, self.token_id, erc1155));
    }
}

impl Relates for NftTransfer {
    fn keys(&self, keys: &mut RelatedKeys) {
        keys.contracts.push(self.contract);
        let erc1155 = self.contract_type.is_multi_token();
        keys.nfts.push((self.contract, self.token_id, erc1155));
        keys.wallets.extend([self.from, self.to]);
    }
}

impl Relates for Erc20Transfer {
    fn keys(&self, keys: &mut RelatedKeys) {
        keys.contracts.push(self.contract);
        keys.wallets.extend([self.from, self.to]);
    }
}

impl Relates for WalletCollection {
    fn keys(&self, keys: &mut RelatedKeys) {
        keys.contracts.push(self.contract);
    }
}

impl Relates for TokenBalance {
    fn keys(&self, keys: &mut RelatedKeys) {
        keys.contracts.push(self.contract);
    }
}

/// A map of one answer's related rows. Its keys (addresses, token ids) are those of one page, a
/// few hundred at most, and each is looked up once per field shown: SipHash, the standard
/// map's, showed in profiles of the list pages, and its resistance to chosen collisions buys
/// nothing at this size (all keys colliding costs a page some ten thousand comparisons).
type PageMap<K, V> = HashMap<K, V, BuildHasherDefault<PageHasher>>;

/// A multiply-and-rotate hash (the Fx hash of rustc), over eight bytes at a time.
#[derive(Default, Clone, Copy)]
struct PageHasher(u64);

impl PageHasher {
    const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(Self::SEED);
    }
}

impl Hasher for PageHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(c);
            self.add(u64::from_le_bytes(word));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(word) ^ ((rest.len() as u64) << 59));
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }

    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// The related rows of some records. Each kind maps every key that was read: `None` when the
/// row does not exist, absent when the kind (or the key) was not asked for.
#[derive(Debug, Default, Clone)]
pub struct Related {
    contracts: PageMap<Address, Option<ContractInfo>>,
    tokens: PageMap<(Address, Uint256), Option<TokenInfo>>,
    labels: PageMap<Address, Option<String>>,
    media: PageMap<(Address, Uint256), MediaInfo>,
}

impl Related {
    /// Metadata of a contract; `None` when unknown (or not read).
    pub fn contract(&self, a: Address) -> Option<&ContractInfo> {
        self.contracts.get(&a)?.as_ref()
    }

    /// The token row of an NFT; `None` when unknown (or not read).
    pub fn token(&self, a: Address, t: Uint256) -> Option<&TokenInfo> {
        self.tokens.get(&(a, t))?.as_ref()
    }

    /// The label of a wallet; `None` when unlabelled (or not read).
    pub fn label(&self, a: Address) -> Option<&str> {
        self.labels.get(&a)?.as_deref()
    }

    /// The preview media of an NFT; `None` while its metadata is not fetched (or not read).
    pub fn media(&self, a: Address, t: Uint256) -> Option<&MediaInfo> {
        self.media.get(&(a, t))
    }

    /// A contract's metadata when it was read (`Some(None)`: no such row); `None` when it was
    /// not asked for, so that a caller reaching past the page can read it itself.
    pub fn contract_read(&self, a: Address) -> Option<Option<&ContractInfo>> {
        self.contracts.get(&a).map(Option::as_ref)
    }

    /// A token row when it was read (see [`Related::contract_read`]).
    pub fn token_read(&self, a: Address, t: Uint256) -> Option<Option<&TokenInfo>> {
        self.tokens.get(&(a, t)).map(Option::as_ref)
    }

    /// A wallet's label when it was read (see [`Related::contract_read`]).
    pub fn label_read(&self, a: Address) -> Option<Option<&str>> {
        self.labels.get(&a).map(Option::as_deref)
    }
}

/// Every key gets an entry (a key named twice, once): `None` when no row was found.
fn every<K: Copy + Eq + std::hash::Hash, V>(
    keys: impl IntoIterator<Item = K>,
    found: HashMap<K, V>,
) -> PageMap<K, Option<V>> {
    let mut all: PageMap<K, Option<V>> = found.into_iter().map(|(k, v)| (k, Some(v))).collect();
    for k in keys {
        all.entry(k).or_insert(None);
    }
    all
}

/// A page with the related rows of its records: what an API shows, finished.
#[derive(Debug, Clone)]
pub struct Answer<N> {
    pub page: Page<N>,
    pub related: Related,
}

/// A whole list (not paged) with its status and the related rows of its records.
#[derive(Debug, Clone)]
pub struct Listing<N> {
    pub records: Vec<N>,
    pub status: SyncStatus,
    /// The last block the indexer had stored when the list was read (see [`Page::block`]).
    pub block: Option<u64>,
    pub related: Related,
}

impl QueryService {
    /// The related rows `include` asks for of the rows `keys` name: one statement per kind
    /// (media: one more, to queue images seen for the first time). Duplicate keys cost nothing.
    pub async fn related(
        &self,
        chain: Chain,
        keys: RelatedKeys,
        include: Include,
    ) -> Result<Related, QueryError> {
        let contracts: Vec<Address> = if include.contracts {
            keys.contracts
        } else {
            Vec::new()
        };
        let read_tokens = include.tokens || include.media;
        let nft_keys: Vec<(Address, Uint256)> = if read_tokens {
            keys.nfts.iter().map(|(a, t, _)| (*a, *t)).collect()
        } else {
            Vec::new()
        };
        let wallets: Vec<Address> = if include.labels {
            keys.wallets
        } else {
            Vec::new()
        };
        let (found_contracts, found_tokens, found_labels) = futures_util::try_join!(
            self.contracts(chain, &contracts),
            self.tokens(chain, &nft_keys),
            self.labels(chain, &wallets),
        )?;
        let mut related = Related {
            contracts: every(contracts, found_contracts),
            tokens: every(nft_keys, found_tokens),
            labels: every(wallets, found_labels),
            media: PageMap::default(),
        };
        if include.media {
            self.read_media(&mut related, &keys.nfts).await?;
        }
        Ok(related)
    }

    /// Adds the preview media of these NFTs to `related`, from their token rows there (read
    /// first, with [`Include::tokens`]).
    pub async fn read_media(
        &self,
        related: &mut Related,
        nfts: &[(Address, Uint256, bool)],
    ) -> Result<(), QueryError> {
        let sources = nfts
            .iter()
            .map(|&(a, t, erc1155)| {
                let row = related.token(a, t);
                let source = MediaSource {
                    token_id: t,
                    erc1155,
                    metadata: row.and_then(|r| r.metadata.clone()),
                    metadata_synced_at: row.and_then(|r| r.last_metadata_sync),
                };
                ((a, t), source)
            })
            .collect();
        related.media.extend(self.media(sources).await?);
        Ok(())
    }

    /// `page` with the related rows `include` asks for of its records.
    pub(super) async fn answer<N: Relates>(
        &self,
        chain: Chain,
        page: Page<N>,
        include: Include,
    ) -> Result<Answer<N>, QueryError> {
        let related = self.related(chain, keys_of(page.edges.iter().map(|e| &e.node)), include);
        Ok(Answer {
            related: related.await?,
            page,
        })
    }
}

/// The keys the related rows of `records` are found by.
pub fn keys_of<'a, N: Relates + 'a>(records: impl IntoIterator<Item = &'a N>) -> RelatedKeys {
    let mut keys = RelatedKeys::default();
    for r in records {
        r.keys(&mut keys);
    }
    keys
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(n: u8) -> Address {
        Address::parse(&format!("0x{:040x}", n)).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn a_row_read_and_missing_differs_from_a_row_not_asked() {
        let (a, b, c) = (addr(1), addr(2), addr(3));
        let found = HashMap::from([(a, ContractInfo::default())]);
        let related = Related {
            contracts: every([a, b, a, b], found),
            ..Related::default()
        };
        assert!(related.contract(a).is_some());
        assert_eq!(related.contract_read(b), Some(None));
        assert_eq!(related.contract_read(c), None);
        assert!(related.contract(b).is_none() && related.contract(c).is_none());
    }

    #[test]
    fn page_keys_hash_apart() {
        use std::hash::BuildHasher;
        let build = BuildHasherDefault::<PageHasher>::default();
        let mut seen = std::collections::HashSet::new();
        for n in 0..=255u8 {
            for t in 0..8u64 {
                assert!(seen.insert(build.hash_one((addr(n), Uint256::from_u64(t)))));
            }
            assert!(seen.insert(build.hash_one(addr(n))));
        }
        // Bytes short of a word differ from the same bytes padded with zeros.
        let bytes = |b: &[u8]| {
            let mut h = PageHasher::default();
            h.write(b);
            h.finish()
        };
        assert_ne!(bytes(&[1, 0]), bytes(&[1]));
        assert_ne!(
            bytes(&[1, 0, 0, 0, 0, 0, 0, 0, 0]),
            bytes(&[1, 0, 0, 0, 0, 0, 0, 0])
        );
    }

    #[test]
    fn keys_follow_each_kind_of_record() {
        let t = Erc20Transfer {
            contract: addr(1),
            from: addr(2),
            to: addr(3),
            value: Uint256::from_u64(5),
            block_number: 1,
            block_hash: String::new(),
            block_timestamp: 0,
            transaction_hash: String::new(),
            transaction_index: 0,
            log_index: 0,
        };
        let keys = keys_of([&t]);
        assert_eq!(keys.contracts, vec![addr(1)]);
        assert_eq!(keys.wallets, vec![addr(2), addr(3)]);
        assert!(keys.nfts.is_empty());
    }
}
