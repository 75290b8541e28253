//! Token metadata state in `nft_tokens`: the token URI read by `eth_call` (the indexer's
//! metadata worker) and the off-chain metadata document fetched from it (the off-chain worker).
//!
//! The off-chain worker [`claim_for_fetch`]es due tokens: a token is taken only when its
//! `metadata_next_at` is still what was read, and pushed a lease ahead, so two processes never
//! fetch one token at once; [`record_fetch`] writes the outcome only while that lease is still
//! the token's (a fetch that outlived its lease leaves the row to whoever claimed it next).

use std::time::Duration;

use sea_orm::sea_query::Expr;
use sea_orm::{
    ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter, QueryOrder, QuerySelect,
};

use super::now_ms;
use crate::entity::nft_token::{self, Column as T};
use crate::types::{Address, Chain, TokenStandard, Uint256};

/// A token whose URI has not been read yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnreadUri {
    /// The chain's id as stored.
    pub chain_id: i64,
    /// The contract's address.
    pub contract: Address,
    /// The token id.
    pub token_id: Uint256,
    /// `ERC721` or `ERC1155`.
    pub contract_type: TokenStandard,
    /// A URI already known (none is read then).
    pub token_uri: Option<String>,
}

/// Up to `limit` tokens of `chain` whose URI was never read.
pub async fn unread_uris<C: ConnectionTrait>(
    db: &C,
    chain: Chain,
    limit: u64,
) -> Result<Vec<UnreadUri>, DbErr> {
    Ok(nft_token::Entity::find()
        .filter(T::ChainId.eq(chain.db_id()))
        .filter(T::LastTokenUriSync.is_null())
        .limit(limit)
        .all(db)
        .await?
        .into_iter()
        .map(|m| UnreadUri {
            chain_id: m.chain_id,
            contract: m.contract_address,
            token_id: m.token_id,
            contract_type: m.contract_type,
            token_uri: m.token_uri,
        })
        .collect())
}

/// Records a token's URI (`None`: it has none) as read at `now`. A token with a URI becomes
/// due for the off-chain metadata worker at once.
pub async fn record_uri<C: ConnectionTrait>(
    db: &C,
    token: &UnreadUri,
    uri: Option<String>,
    now: i64,
) -> Result<(), DbErr> {
    let mut update = nft_token::Entity::update_many();
    if uri.is_some() {
        update = update.col_expr(T::MetadataNextAt, Expr::value(now));
    }
    update
        .col_expr(T::TokenUri, Expr::value(uri))
        .col_expr(T::LastTokenUriSync, Expr::value(now))
        .filter(T::ChainId.eq(token.chain_id))
        .filter(T::ContractAddress.eq(token.contract))
        .filter(T::TokenId.eq(token.token_id))
        .exec(db)
        .await?;
    Ok(())
}

/// A token claimed for an off-chain metadata fetch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimedToken {
    /// The chain's id as stored.
    pub chain_id: i64,
    /// The contract's address.
    pub contract: Address,
    /// The token id.
    pub token_id: Uint256,
    /// `ERC721` or `ERC1155`.
    pub contract_type: TokenStandard,
    /// The token URI, when read (nothing is fetched without one).
    pub token_uri: Option<String>,
    /// Failed fetches since the last success.
    pub attempts: i32,
    /// The lease's end: the `metadata_next_at` written when claiming (Unix ms).
    pub lease_until: i64,
}

type DueRow = (
    i64,
    Address,
    Uint256,
    TokenStandard,
    Option<String>,
    i32,
    Option<i64>,
);

/// Claims up to `limit` tokens due for a fetch, oldest due first, each for `lease` (see the
/// module docs).
pub async fn claim_for_fetch<C: ConnectionTrait>(
    db: &C,
    limit: u64,
    lease: Duration,
) -> Result<Vec<ClaimedToken>, DbErr> {
    if limit == 0 {
        return Ok(Vec::new());
    }
    let now = now_ms();
    let rows: Vec<DueRow> = nft_token::Entity::find()
        .select_only()
        .columns([
            T::ChainId,
            T::ContractAddress,
            T::TokenId,
            T::ContractType,
            T::TokenUri,
            T::MetadataAttempts,
            T::MetadataNextAt,
        ])
        .filter(T::MetadataNextAt.lte(now))
        .order_by_asc(T::MetadataNextAt)
        .limit(limit)
        .into_tuple()
        .all(db)
        .await?;
    let lease_until = now + lease.as_millis() as i64;
    let mut claimed = Vec::with_capacity(rows.len());
    for (chain_id, contract, token_id, contract_type, token_uri, attempts, next_at) in rows {
        let taken = nft_token::Entity::update_many()
            .col_expr(T::MetadataNextAt, Expr::value(lease_until))
            .filter(T::ChainId.eq(chain_id))
            .filter(T::ContractAddress.eq(contract))
            .filter(T::TokenId.eq(token_id))
            .filter(T::MetadataNextAt.eq(next_at))
            .exec(db)
            .await?;
        if taken.rows_affected == 1 {
            claimed.push(ClaimedToken {
                chain_id,
                contract,
                token_id,
                contract_type,
                token_uri,
                attempts,
                lease_until,
            });
        }
    }
    Ok(claimed)
}

/// How an off-chain metadata fetch ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FetchRecord<'a> {
    /// The document was fetched: it is stored, the failures are forgotten and nothing is due.
    Fetched {
        /// The stored status text of success.
        status: &'a str,
        /// The JSON object, as stored.
        document: String,
        /// When (Unix ms).
        at: i64,
    },
    /// The fetch failed: the stored document (if any) is kept.
    Failed {
        /// The stored status text of the failure.
        status: &'a str,
        /// Why, for operators (short, one line).
        error: String,
        /// Failed fetches since the last success, this one included.
        attempts: i32,
        /// When to try again (Unix ms).
        retry_at: i64,
    },
}

/// Records a fetch's outcome, if `token`'s lease is still the token's (see the module docs).
pub async fn record_fetch<C: ConnectionTrait>(
    db: &C,
    token: &ClaimedToken,
    record: FetchRecord<'_>,
) -> Result<(), DbErr> {
    let update = nft_token::Entity::update_many()
        .filter(T::ChainId.eq(token.chain_id))
        .filter(T::ContractAddress.eq(token.contract))
        .filter(T::TokenId.eq(token.token_id))
        .filter(T::MetadataNextAt.eq(token.lease_until));
    let update = match record {
        FetchRecord::Fetched {
            status,
            document,
            at,
        } => update
            .col_expr(T::Metadata, Expr::value(document))
            .col_expr(T::LastMetadataSync, Expr::value(at))
            .col_expr(T::MetadataStatus, Expr::value(status))
            .col_expr(T::MetadataAttempts, Expr::value(0))
            .col_expr(T::MetadataError, Expr::value(None::<String>))
            .col_expr(T::MetadataNextAt, Expr::value(None::<i64>)),
        FetchRecord::Failed {
            status,
            error,
            attempts,
            retry_at,
        } => update
            .col_expr(T::MetadataStatus, Expr::value(status))
            .col_expr(T::MetadataError, Expr::value(error))
            .col_expr(T::MetadataAttempts, Expr::value(attempts))
            .col_expr(T::MetadataNextAt, Expr::value(retry_at)),
    };
    update.exec(db).await?;
    Ok(())
}

/// Makes every token of `contract` that has a URI due for a metadata refetch at `now`, its
/// failures forgotten (a fetch under way loses its lease and is done again, as with
/// [`request_refetch`]); returns how many tokens were queued. Tokens whose URI is not read yet
/// are fetched once it is.
pub async fn refetch_collection<C: ConnectionTrait>(
    db: &C,
    chain: Chain,
    contract: Address,
    now: i64,
) -> Result<u64, DbErr> {
    let done = nft_token::Entity::update_many()
        .col_expr(T::MetadataNextAt, Expr::value(now))
        .col_expr(T::MetadataAttempts, Expr::value(0))
        .filter(T::ChainId.eq(chain.db_id()))
        .filter(T::ContractAddress.eq(contract))
        .filter(T::TokenUri.is_not_null())
        .exec(db)
        .await?;
    Ok(done.rows_affected)
}

/// Asks for a token's metadata to be fetched again (`reread_uri`: its token URI read from the
/// chain first): due at once, its failures forgotten. A fetch under way when asked is
/// discarded (its lease no longer matches) and the token is claimed again. `false`: no such
/// token is stored.
pub async fn request_refetch<C: ConnectionTrait>(
    db: &C,
    chain: Chain,
    contract: Address,
    token_id: Uint256,
    reread_uri: bool,
    now: i64,
) -> Result<bool, DbErr> {
    let mut update = nft_token::Entity::update_many()
        .col_expr(T::MetadataAttempts, Expr::value(0))
        .filter(T::ChainId.eq(chain.db_id()))
        .filter(T::ContractAddress.eq(contract))
        .filter(T::TokenId.eq(token_id));
    update = if reread_uri {
        // Due again once the URI is read ([`record_uri`]).
        update
            .col_expr(T::LastTokenUriSync, Expr::value(None::<i64>))
            .col_expr(T::MetadataNextAt, Expr::value(None::<i64>))
    } else {
        update.col_expr(T::MetadataNextAt, Expr::value(now))
    };
    Ok(update.exec(db).await?.rows_affected > 0)
}

/// Where a refetch asked at `since` ([`request_refetch`]) stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refetch {
    /// Not done yet.
    Pending,
    /// The document was fetched and stored.
    Fetched,
    /// The fetch failed (it is retried on the usual schedule).
    Failed,
    /// The token URI was read again and the token has none: there is nothing to fetch.
    NoUri,
    /// The token is no longer stored (a reorg removed it).
    Gone,
}

/// Where the refetch of a token asked at `since` stands.
pub async fn refetch_state<C: ConnectionTrait>(
    db: &C,
    chain: Chain,
    contract: Address,
    token_id: Uint256,
    since: i64,
) -> Result<Refetch, DbErr> {
    type Row = (Option<i64>, Option<i64>, Option<String>, i32);
    let row: Option<Row> = nft_token::Entity::find()
        .select_only()
        .columns([
            T::LastMetadataSync,
            T::LastTokenUriSync,
            T::TokenUri,
            T::MetadataAttempts,
        ])
        .filter(T::ChainId.eq(chain.db_id()))
        .filter(T::ContractAddress.eq(contract))
        .filter(T::TokenId.eq(token_id))
        .into_tuple()
        .one(db)
        .await?;
    Ok(match row {
        None => Refetch::Gone,
        Some((Some(fetched), ..)) if fetched >= since => Refetch::Fetched,
        Some((_, _, _, attempts)) if attempts > 0 => Refetch::Failed,
        Some((_, Some(read), None, _)) if read >= since => Refetch::NoUri,
        Some(_) => Refetch::Pending,
    })
}
