//! What the graph counts and the lists it answers outside a page of records: a collection's,
//! a token's and a wallet's counts and a wallet's first and last activity (`NftCollectionStats`,
//! `NftTokenStats`, `WalletStats`, `WalletActivity`), each with the status of the answer it was
//! read in, and a collection's distinct holders (a `CollectionHolderConnection`). The query service
//! answers each in one snapshot, as it answers the REST lookups.

use async_graphql::{Context, SimpleObject};

use crate::graphql::args;
use crate::graphql::connection::{Connection, Listed, SyncStatus};
use crate::graphql::error::GqlError;
use crate::graphql::fast_path::plain::PlainNode;
use crate::graphql::scalars::{Address, BlockNumber};
use crate::graphql::service;
use crate::query::{self, ChainReadError, ChainReads, UniqueOwnersQuery};
use crate::types::{self, Chain};

/// A wallet holding at least one token of a collection (ask `wallet(address:)` for what it
/// holds).
#[derive(SimpleObject)]
pub struct CollectionHolder {
    /// The wallet's address.
    address: Address,
}

impl Listed for CollectionHolder {
    const CONNECTION: &'static str = "CollectionHolderConnection";
    const EDGE: &'static str = "CollectionHolderEdge";
}

impl PlainNode for CollectionHolder {}

/// One holder of an ERC20 token, with its balance.
#[derive(SimpleObject)]
pub struct TokenHolder {
    /// The holder's address.
    address: Address,
    /// Its balance, in the token's smallest unit (exact uint256; never zero).
    balance: crate::graphql::scalars::Uint256,
    /// The block of its last stored transfer of the token.
    block_number: BlockNumber,
}

impl Listed for TokenHolder {
    const CONNECTION: &'static str = "TokenHolderConnection";
    const EDGE: &'static str = "TokenHolderEdge";
}

impl PlainNode for TokenHolder {}

/// An ERC20 token's counts.
#[derive(SimpleObject)]
pub struct TokenStats {
    /// Its transfers.
    transfers: u64,
    /// `SYNCED` once the token contract's whole history is indexed; before, the count of the
    /// transfers stored so far.
    status: SyncStatus,
}

/// `Token.holders`.
pub async fn token_holders(
    ctx: &Context<'_>,
    chain: Chain,
    contract: types::Address,
    order: types::SortOrder,
    (first, after, at_block): (i32, Option<String>, Option<&BlockNumber>),
) -> Result<Connection<TokenHolder>, GqlError> {
    let q = query::TokenHoldersQuery {
        chain,
        contract,
        order,
        page_size: args::first(first)?,
        at_block: args::block("atBlock", at_block)?.map(|b| b.0),
    };
    let after = args::after(after.as_deref())?;
    let holders = service(ctx)?.token_holders(&q, after).await?;
    Ok(Connection::from_page(holders.answer.page, |h| {
        TokenHolder {
            address: h.owner.into(),
            balance: h.balance.into(),
            block_number: h.block_number.into(),
        }
    }))
}

/// `Token.stats`.
pub async fn token_counts(
    ctx: &Context<'_>,
    chain: Chain,
    contract: types::Address,
) -> Result<TokenStats, GqlError> {
    let q = query::TokenStatsQuery { chain, contract };
    let s = service(ctx)?.token_stats(&q).await?;
    Ok(TokenStats {
        transfers: s.transfers,
        status: s.status.into(),
    })
}

/// A collection's counts.
#[derive(SimpleObject)]
pub struct NftCollectionStats {
    /// Token ids someone holds.
    total_tokens: u64,
    /// Distinct wallets holding at least one of its tokens.
    owners: u64,
    /// Its transfers, mints and burns included (an ERC1155 batch counts once per id it moves).
    transfers: u64,
    /// `SYNCED` once the collection's whole history is indexed; before, the counts are of what
    /// is stored so far.
    status: SyncStatus,
}

/// One NFT's counts.
#[derive(SimpleObject)]
pub struct NftTokenStats {
    /// Wallets holding it now.
    owners: u64,
    /// Its transfers, mints and burns included.
    transfers: u64,
    /// `SYNCED` once the collection's whole history is indexed.
    status: SyncStatus,
}

/// A wallet's counts on its chain.
#[derive(SimpleObject)]
pub struct WalletStats {
    /// NFTs it holds (token ids; an ERC1155 id counts once whatever the amount).
    nfts: u64,
    /// Collections it holds at least one token of.
    collections: u64,
    /// NFT transfers it sent or received (one to itself counts once).
    nft_transfers: u64,
    /// ERC20 transfers it sent or received (one to itself counts once).
    token_transfers: u64,
    /// `SYNCED` once the wallet's whole history is indexed.
    status: SyncStatus,
}

/// A transfer that marks a wallet's activity.
#[derive(SimpleObject)]
pub struct ActivityMark {
    /// Its block.
    block_number: BlockNumber,
    /// Its block's time: ISO 8601 UTC with milliseconds (`2023-03-20T08:37:35.000Z`).
    block_timestamp: String,
    /// Its transaction.
    transaction_hash: String,
}

/// A wallet's first and last transfer (ERC20 or NFT, sent or received) on its chain.
#[derive(SimpleObject)]
pub struct WalletActivity {
    /// The first; `null` when it has none.
    first_transfer: Option<ActivityMark>,
    /// The last; `null` when it has none.
    last_transfer: Option<ActivityMark>,
    /// `SYNCED` once the wallet's whole history is indexed.
    status: SyncStatus,
}

fn mark(a: query::Activity) -> ActivityMark {
    ActivityMark {
        block_number: a.block_number.into(),
        block_timestamp: types::iso8601_secs(a.block_timestamp),
        transaction_hash: a.transaction_hash,
    }
}

/// A wallet's native balance, read from the chain's JSON-RPC endpoint.
#[derive(SimpleObject)]
pub struct NativeBalance {
    /// The balance in wei.
    balance: crate::graphql::scalars::Uint256,
    /// The block it was read at (the chain's head, or `atBlock`).
    block_number: BlockNumber,
}

/// `Wallet.nativeBalance`.
pub async fn native_balance(
    ctx: &Context<'_>,
    chain: Chain,
    address: types::Address,
    at_block: Option<&BlockNumber>,
) -> Result<NativeBalance, GqlError> {
    let at = args::block("atBlock", at_block)?.map(|b| b.0);
    let reads = ctx.data_opt::<ChainReads>().cloned().unwrap_or_default();
    let answer = reads
        .balances(chain, &[address], at)
        .await
        .map_err(|e| match e {
            ChainReadError::NoEndpoint(chain) => GqlError::bad_input(
                "chain",
                format!(
                "native balances of {} are read from its JSON-RPC endpoint, and this server has \
                 none; start it with --rpc {}=URL",
                chain.name(),
                chain.name().replace(' ', "_")
            ),
            ),
            ChainReadError::AfterHead { block, head } => GqlError::bad_input(
                "atBlock",
                format!("{block} is after the chain's head {head}"),
            ),
            ChainReadError::Endpoint(detail) => {
                tracing::error!(%detail, "native balance: the chain's endpoint failed");
                GqlError::unavailable()
            }
        })?;
    let balance = answer.balances.first().map(|b| b.1).unwrap_or_default();
    Ok(NativeBalance {
        balance: balance.into(),
        block_number: answer.block.into(),
    })
}

/// `NftCollection.stats`.
pub async fn collection(
    ctx: &Context<'_>,
    chain: Chain,
    address: types::Address,
) -> Result<NftCollectionStats, GqlError> {
    let s = service(ctx)?.collection_stats(chain, address).await?;
    Ok(NftCollectionStats {
        total_tokens: s.value.tokens,
        owners: s.value.owners,
        transfers: s.value.transfers,
        status: s.status.into(),
    })
}

/// `NftToken.stats`.
pub async fn token(
    ctx: &Context<'_>,
    chain: Chain,
    address: types::Address,
    token_id: types::Uint256,
) -> Result<NftTokenStats, GqlError> {
    let s = service(ctx)?
        .nft_token_stats(chain, address, token_id)
        .await?;
    Ok(NftTokenStats {
        owners: s.value.owners,
        transfers: s.value.transfers,
        status: s.status.into(),
    })
}

/// `Wallet.stats`.
pub async fn wallet(
    ctx: &Context<'_>,
    chain: Chain,
    address: types::Address,
) -> Result<WalletStats, GqlError> {
    let s = service(ctx)?.wallet_stats(chain, address).await?;
    Ok(WalletStats {
        nfts: s.value.nfts,
        collections: s.value.collections,
        nft_transfers: s.value.nft_transfers,
        token_transfers: s.value.token_transfers,
        status: s.status.into(),
    })
}

/// `Wallet.activity`.
pub async fn activity(
    ctx: &Context<'_>,
    chain: Chain,
    address: types::Address,
) -> Result<WalletActivity, GqlError> {
    let s = service(ctx)?.wallet_activity(chain, address).await?;
    Ok(WalletActivity {
        first_transfer: s.value.first.map(mark),
        last_transfer: s.value.last.map(mark),
        status: s.status.into(),
    })
}

/// `NftCollection.uniqueOwners`.
pub async fn unique_owners(
    ctx: &Context<'_>,
    chain: Chain,
    contract: types::Address,
    first: i32,
    after: Option<String>,
) -> Result<Connection<CollectionHolder>, GqlError> {
    let q = UniqueOwnersQuery {
        chain,
        contract,
        page_size: args::first(first)?,
    };
    let after = args::after(after.as_deref())?;
    let page = service(ctx)?.unique_owners(&q, after).await?;
    Ok(Connection::from_page(page, |owner| CollectionHolder {
        address: owner.into(),
    }))
}
