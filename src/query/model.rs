//! The query service's inputs and outputs: domain types, neither database rows nor API shapes.

use crate::types::{
    Address, AddressList, BlockNumber, Chain, PageSize, ParseError, SortOrder, TokenStandard,
    Uint256,
};

/// Filters of `nfts_by_wallet`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NftQuery {
    pub chain: Chain,
    pub owner: Address,
    /// Restrict to these collections; empty means all.
    pub token_addresses: AddressList,
    pub exclude_spam: bool,
    /// Count the records matching the filters.
    pub with_total: bool,
    pub page_size: PageSize,
    /// The holdings after this block (`to_block`, `atBlock`); `None`: now.
    pub at_block: Option<u64>,
}

/// One NFT held by a wallet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NftHolding {
    pub contract: Address,
    pub token_id: Uint256,
    pub owner: Address,
    pub amount: Uint256,
    /// `ERC721` or `ERC1155`.
    pub contract_type: TokenStandard,
    /// The block at which the owner last acquired it.
    pub block_number: u64,
}

impl NftHolding {
    /// The token's [`token_hash`].
    pub fn token_hash(&self, chain: Chain) -> String {
        token_hash(chain, self.contract, self.token_id)
    }
}

/// A stable identifier of a token: the first 16 bytes of
/// `SHA-256("{chain id}:{contract address}:{decimal token id}")`, as 32 hex digits.
pub fn token_hash(chain: Chain, contract: Address, token_id: Uint256) -> String {
    use sha2::{Digest, Sha256};
    // Written piece by piece rather than through `format!`: every record of a page has one.
    let mut h = Sha256::new();
    h.update(chain.id().to_string());
    h.update(b":");
    h.update(contract.hex());
    h.update(b":");
    h.update(token_id.to_decimal());
    crate::types::hex::lower(&h.finalize()[..16])
}

/// Whether the answer is complete.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncStatus {
    Synced,
    Syncing,
}

impl SyncStatus {
    pub fn as_str(&self) -> &'static str {
        match self {
            SyncStatus::Synced => "SYNCED",
            SyncStatus::Syncing => "SYNCING",
        }
    }
}

/// A record with its keyset position, from which [`Page::cursor`] mints the cursor that resumes
/// right after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edge<T> {
    pub key: Key,
    pub node: T,
}

/// One value of a keyset position: the typed value the SQL compares (a cursor carries its text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyPart {
    /// An integer column (a block number, a log or batch index).
    Int(i64),
    /// An address column (`0x` and 40 lowercase hex digits).
    Address(Address),
    /// A uint256 column (64 hex digits in a cursor, [`Uint256::to_hex64`]).
    Uint(Uint256),
    /// A text value (a trait's type or value), as it is.
    Text(String),
}

impl KeyPart {
    fn text(&self) -> String {
        match self {
            KeyPart::Int(n) => n.to_string(),
            KeyPart::Address(a) => a.to_string(),
            KeyPart::Uint(u) => u.to_hex64(),
            KeyPart::Text(t) => t.clone(),
        }
    }
}

/// A record's keyset position: the values of the columns its list is ordered by (at most
/// [`Key::MAX`]). It is turned into text only when a cursor is minted, so a page whose
/// per-record cursors nobody asks for makes no string per record (but a text value's own).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Key {
    parts: [KeyPart; Key::MAX],
    len: u8,
}

impl Key {
    /// The most columns a list is ordered by.
    pub const MAX: usize = 3;

    /// The position of these values, in order. Every list's order is known at compile time,
    /// so a key of more than [`Key::MAX`] values does not compile.
    pub fn new<const N: usize>(values: [KeyPart; N]) -> Self {
        const {
            assert!(
                N <= Key::MAX,
                "a keyset position has at most Key::MAX values"
            )
        };
        let mut values = values.into_iter();
        let parts = std::array::from_fn(|_| values.next().unwrap_or(KeyPart::Int(0)));
        Self {
            parts,
            len: N as u8,
        }
    }

    /// The values as a cursor carries them.
    pub fn texts(&self) -> Vec<String> {
        self.parts[..usize::from(self.len)]
            .iter()
            .map(KeyPart::text)
            .collect()
    }
}

/// One page of a keyset-paginated answer.
#[derive(Debug, Clone)]
pub struct Page<T> {
    pub edges: Vec<Edge<T>>,
    /// Signs the cursors of `edges` on demand.
    pub mint: std::sync::Arc<super::cursor::CursorMint>,
    /// Cursor of the next page; `None` on the last page.
    pub next_cursor: Option<String>,
    /// 1-based page number.
    pub page: u64,
    pub page_size: u64,
    pub total: Option<u64>,
    pub status: SyncStatus,
    /// The last block the indexer had stored when the page was read: a `SYNCED` page holds
    /// every record up to it. `None`: nothing indexed yet.
    pub block: Option<u64>,
}

impl<T> Page<T> {
    /// The cursor that resumes right after `edge`.
    pub fn cursor(&self, edge: &Edge<T>) -> String {
        self.mint.cursor(&edge.key)
    }
}

/// Inclusive block bounds, with `from <= to` when both are given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BlockRange {
    pub from: Option<BlockNumber>,
    pub to: Option<BlockNumber>,
}

impl BlockRange {
    pub fn new(from: Option<BlockNumber>, to: Option<BlockNumber>) -> Result<Self, ParseError> {
        if let (Some(f), Some(t)) = (from, to) {
            if f > t {
                return Err(ParseError::new(format!(
                    "from_block {} is greater than to_block {}",
                    f.0, t.0
                )));
            }
        }
        Ok(Self { from, to })
    }
}

/// Inclusive bounds on the block time, in Unix seconds, with `from <= to` when both are given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DateRange {
    pub from: Option<u64>,
    pub to: Option<u64>,
}

impl DateRange {
    pub fn new(from: Option<u64>, to: Option<u64>) -> Result<Self, ParseError> {
        if let (Some(f), Some(t)) = (from, to) {
            if f > t {
                return Err(ParseError::new(format!(
                    "{f} is after to_date {t}; expected from_date <= to_date"
                )));
            }
        }
        Ok(Self { from, to })
    }
}

/// Filters of `erc20_transfers`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransferQuery {
    pub chain: Chain,
    pub wallets: AddressList,
    pub contracts: AddressList,
    pub exclude_wallets: AddressList,
    pub exclude_contracts: AddressList,
    pub blocks: BlockRange,
    /// Block-time bounds. (REST's v2.2 routes drop a date bound when the block bound of the
    /// same side is given: the block bound wins.)
    pub dates: DateRange,
    /// Newest first (the default) or oldest first.
    pub order: SortOrder,
    pub page_size: PageSize,
}

/// Filters of `wallet_collections`: the collections a wallet holds tokens of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalletCollectionsQuery {
    pub chain: Chain,
    pub owner: Address,
    pub exclude_spam: bool,
    pub page_size: PageSize,
    /// The collections held after this block (`to_block`, `atBlock`); `None`: now.
    pub at_block: Option<u64>,
}

/// A collection a wallet holds tokens of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalletCollection {
    pub contract: Address,
    /// `ERC721` or `ERC1155`.
    pub contract_type: TokenStandard,
    /// How many of the collection's tokens (distinct ids) the wallet holds.
    pub count: u64,
}

/// Filters of `nft_owners`: who holds a collection's tokens, or one token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NftOwnersQuery {
    pub chain: Chain,
    pub contract: Address,
    /// One token only; `None` for every token of the collection.
    pub token_id: Option<Uint256>,
    pub page_size: PageSize,
    /// The holders after this block (`to_block`, `atBlock`); `None`: now.
    pub at_block: Option<u64>,
}

/// Filters of `token_balances`: a wallet's ERC20 balances, from its transfer history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenBalanceQuery {
    pub chain: Chain,
    pub owner: Address,
    /// The balance after this block (inclusive); `None`: now.
    pub to_block: Option<BlockNumber>,
    /// Restrict to these tokens; empty means all.
    pub token_addresses: AddressList,
    pub exclude_spam: bool,
    /// Records per page ([`crate::query::QueryService::token_balances`] only).
    pub page_size: PageSize,
}

/// A wallet's non-zero balance of one ERC20 token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenBalance {
    pub contract: Address,
    pub balance: Uint256,
}

/// Filters of `collection_nfts`: the tokens of a collection that someone holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CollectionNftsQuery {
    pub chain: Chain,
    pub contract: Address,
    /// Only this token (one NFT's record); `None`: every held token.
    pub token: Option<Uint256>,
    pub page_size: PageSize,
    /// The tokens held after this block (`to_block`, `atBlock`); `None`: now.
    pub at_block: Option<u64>,
}

/// One token of a collection, with who holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CollectionNft {
    pub contract: Address,
    pub token_id: Uint256,
    /// `ERC721` or `ERC1155`.
    pub contract_type: TokenStandard,
    /// The holder, when exactly one wallet holds the token; `None` when several do.
    pub owner: Option<Address>,
    /// How many of the token are held, over all holders.
    pub amount: Uint256,
    /// The latest block at which a holder acquired it.
    pub block_number: u64,
}

/// Filters of `nft_transfers`: a wallet's (sent or received) or a collection's NFT moves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NftTransferQuery {
    pub chain: Chain,
    /// The sender or recipient; `None` for every wallet.
    pub wallet: Option<Address>,
    /// Restrict to these collections; empty means all.
    pub contracts: AddressList,
    pub blocks: BlockRange,
    pub dates: DateRange,
    pub order: SortOrder,
    pub page_size: PageSize,
}

/// One NFT move: an ERC721 `Transfer`, an ERC1155 `TransferSingle`, or one id of a
/// `TransferBatch`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NftTransfer {
    pub contract: Address,
    pub token_id: Uint256,
    /// `ERC721` or `ERC1155`.
    pub contract_type: TokenStandard,
    pub operator: Option<Address>,
    pub from: Address,
    pub to: Address,
    pub amount: Uint256,
    pub block_number: u64,
    pub block_hash: String,
    /// Unix seconds.
    pub block_timestamp: u64,
    pub transaction_hash: String,
    pub transaction_index: u32,
    pub log_index: u32,
    /// Position in a `TransferBatch` (0 otherwise).
    pub batch_index: u32,
}

/// One ERC20 transfer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Erc20Transfer {
    pub contract: Address,
    pub from: Address,
    pub to: Address,
    pub value: Uint256,
    pub block_number: u64,
    pub block_hash: String,
    /// Unix seconds.
    pub block_timestamp: u64,
    pub transaction_hash: String,
    pub transaction_index: u32,
    pub log_index: u32,
}

/// Metadata of a token contract.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ContractInfo {
    pub standard: Option<TokenStandard>,
    pub name: Option<String>,
    pub symbol: Option<String>,
    pub decimals: Option<u32>,
    pub logo: Option<String>,
    pub possible_spam: bool,
    pub verified: bool,
}

/// Per-token data of an NFT.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TokenInfo {
    pub token_uri: Option<String>,
    pub metadata: Option<String>,
    pub block_number_minted: Option<u64>,
    pub minter_address: Option<String>,
    /// Unix milliseconds.
    pub last_token_uri_sync: Option<i64>,
    /// Unix milliseconds.
    pub last_metadata_sync: Option<i64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_reads_as_the_cursor_texts_of_its_columns() {
        let a = Address::parse("0x00000000000000000000000000000000000000aB")
            .unwrap_or_else(|e| panic!("{e}"));
        let key = Key::new([
            KeyPart::Int(-3),
            KeyPart::Address(a),
            KeyPart::Uint(Uint256::from_u64(255)),
        ]);
        assert_eq!(
            key.texts(),
            vec![
                "-3".to_string(),
                "0x00000000000000000000000000000000000000ab".to_string(),
                format!("{}ff", "0".repeat(62)),
            ]
        );
        assert_eq!(Key::new([KeyPart::Int(7)]).texts(), vec!["7".to_string()]);
        assert!(Key::new([]).texts().is_empty());
    }

    fn holding(contract: &str, id: &str) -> NftHolding {
        NftHolding {
            contract: Address::parse(contract).unwrap_or_else(|e| panic!("{e}")),
            token_id: Uint256::parse(id).unwrap_or_else(|e| panic!("{e}")),
            owner: Address::parse("0x0000000000000000000000000000000000000001")
                .unwrap_or_else(|e| panic!("{e}")),
            amount: Uint256::from_u64(1),
            contract_type: TokenStandard::Erc721,
            block_number: 1,
        }
    }

    /// Pinned values: `sha256("1:0xbc4c…f13d:1")[..16]` as computed independently (Python's
    /// hashlib). Letter case and the token id's input format do not change it.
    #[test]
    fn token_hash_is_pinned() {
        let bayc = "0xbc4ca0eda7647a8ab7c2061c2e118a18a936f13d";
        assert_eq!(
            holding(bayc, "1").token_hash(Chain::ETH),
            "279ebc372e664ca222fd73c70ff776f0"
        );
        assert_eq!(
            holding(&bayc.to_uppercase().replace("0X", "0x"), "0x01").token_hash(Chain::ETH),
            "279ebc372e664ca222fd73c70ff776f0"
        );
        let polygon = Chain::parse("0x89").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            holding(bayc, &format!("0x{}", "f".repeat(64))).token_hash(polygon),
            "ae8b63e1f88d49b658eea75166543ce5"
        );
    }
}
