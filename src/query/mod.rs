//! The query service: the one implementation of each question, framework-free. The REST shims
//! and the GraphQL resolvers both call it; they only translate parameters in and reshape the
//! answer out.
//!
//! - [`QueryService::nfts_by_wallet`]: current holdings of a wallet, keyset-ordered by
//!   (contract address, token id) ascending.
//! - [`QueryService::erc20_transfers`]: ERC20 transfers, keyset-ordered by (block number, log
//!   index) descending — a total, stable order.
//! - Every question answers whole: its page with the related rows its records show (contract
//!   metadata, token rows, labels, preview media), read in one batch per kind for the whole page
//!   ([`Answer`], [`Include`]), so a page costs a constant number of statements whatever its
//!   size, and the adapters only reshape.
//! - [`QueryService::traits`], [`QueryService::traits_page`], [`QueryService::nfts_by_traits`]:
//!   a collection's traits, counted from its tokens' metadata, and the NFTs that have some.
//! - [`QueryService::token_holders`] and [`QueryService::token_stats`]: an ERC20 token's
//!   holders by balance and its transfer count, from the balances the store keeps.
//! - [`QueryService::media`]: preview media of a page's tokens (queues unknown images for the
//!   media worker; never waits on a fetch).

mod answer;
mod as_of;
mod balances;
mod blocks;
pub mod chain_reads;
pub mod changes;
mod collection_nfts;
mod collections;
mod columns;
mod cursor;
mod erc20_as_of;
pub mod feed;

mod media;
mod model;
mod nft_lookups;
mod nft_transfers;
mod nfts;
mod owners;
mod related;
mod snapshot;
pub mod status;
mod token_holders;
mod token_meta;
mod traits;
mod transfer_filter;
mod transfers;
mod triggers;
mod walk;
mod wallet_lookups;

pub use answer::{keys_of, Answer, Include, Listing, Related, RelatedKeys, Relates};
pub use blocks::DateToBlock;
pub use chain_reads::{ChainReadError, ChainReader, ChainReads, NativeAnswer};
pub use cursor::{CursorCodec, CursorError, CursorKind, CursorMint};
pub use media::{MediaInfo, MediaPreview, MediaSource};
pub use model::*;
pub use nft_lookups::{CollectionStats, NftContract, NftTokenStats, Stated, UniqueOwnersQuery};
pub use token_holders::{
    TokenHolder, TokenHolders, TokenHoldersQuery, TokenStats, TokenStatsQuery,
};
pub use token_meta::{TokenMeta, MAX_PER_SYMBOL};
pub use traits::{
    CollectionTraits, NftRarity, NftsByTraitsQuery, TraitCount, TraitFilter, TraitRarity,
    TraitedNft, TraitsPageQuery, TraitsQuery,
};
pub use triggers::{RefetchFrom, RefetchOutcome};
pub use wallet_lookups::{Activity, ChainActivity, WalletStats};

use sea_orm::{DatabaseConnection, DbErr};

/// Errors of the query service: the user's fault ([`QueryError::BadCursor`]) or ours.
#[derive(Debug, thiserror::Error)]
pub enum QueryError {
    /// The cursor is malformed, tampered with, or belongs to another query.
    #[error("cursor {0}")]
    BadCursor(#[from] CursorError),
    /// The question asks for a state as of a block above the chain's head.
    #[error("block {block} is above the chain's head ({head}); ask up to block {head} at most")]
    AboveHead { block: u64, head: u64 },
    /// A database failure: never shown to the user.
    #[error("database error: {0}")]
    Db(#[from] DbErr),
    /// Data in the database that does not parse: a bug of ours, never shown to the user.
    #[error("corrupt stored value: {0}")]
    Corrupt(String),
}

/// The message of every outage answer, REST's 503 and GraphQL's `SERVICE_UNAVAILABLE` alike.
pub const UNAVAILABLE_MESSAGE: &str = "the service is temporarily unavailable; retry later";

/// Whose fault an error is: the one classification both adapters answer by (REST with its
/// status, GraphQL with its `extensions.code` and status).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// The request is wrong (a bad cursor, a block above the head): 400, `BAD_USER_INPUT`.
    User,
    /// The database cannot be reached (no connection to be had): 503, `SERVICE_UNAVAILABLE`.
    Unavailable,
    /// Anything else is a bug or failure of ours: 500, `INTERNAL_SERVER_ERROR`.
    Ours,
}

impl QueryError {
    /// Whose fault this error is.
    pub fn fault(&self) -> Fault {
        match self {
            QueryError::BadCursor(_) | QueryError::AboveHead { .. } => Fault::User,
            QueryError::Db(DbErr::ConnectionAcquire(_) | DbErr::Conn(_)) => Fault::Unavailable,
            QueryError::Db(_) | QueryError::Corrupt(_) => Fault::Ours,
        }
    }
}

/// Tunables of the query service.
#[derive(Debug, Clone, Copy)]
pub struct QueryConfig {
    /// How far (in blocks) the indexer may trail the chain head before answers say `SYNCING`.
    pub max_lag_blocks: u64,
}

impl Default for QueryConfig {
    fn default() -> Self {
        Self { max_lag_blocks: 16 }
    }
}

/// The query service. Cheap to clone.
///
/// It reads from `db` and writes (history scheduling, the media queue) to the primary. A
/// service reading from a read replica ([`QueryService::reading_from`]) also checks the
/// replica's completeness markers against the primary's (see [`status`]).
#[derive(Debug, Clone)]
pub struct QueryService {
    db: DatabaseConnection,
    /// The primary when `db` is a replica.
    primary: Option<DatabaseConnection>,
    cursors: CursorCodec,
    config: QueryConfig,
}

impl QueryService {
    /// Loads (or creates) the cursor secret from the database (the primary: every process
    /// and replica shares it, so a cursor works on all of them).
    pub async fn new(db: DatabaseConnection, config: QueryConfig) -> Result<Self, DbErr> {
        let secret = crate::store::settings::cursor_secret(&db).await?;
        Ok(Self {
            db,
            primary: None,
            cursors: CursorCodec::new(secret),
            config,
        })
    }

    /// The same service reading from `choice` (a replica, or the primary).
    pub fn reading_from(&self, choice: &crate::store::replicas::ReadChoice) -> Self {
        let primary = self.writer().clone();
        Self {
            db: choice.db.clone(),
            primary: choice.replica.map(|_| primary),
            cursors: self.cursors.clone(),
            config: self.config,
        }
    }

    /// The connection reads go to.
    pub fn db(&self) -> &DatabaseConnection {
        &self.db
    }

    /// The connection writes go to: the primary.
    fn writer(&self) -> &DatabaseConnection {
        self.primary.as_ref().unwrap_or(&self.db)
    }
}
