//! The `Query` root: the two flat questions (`nftsByWallet`, `erc20Transfers`) and the four
//! entry points of the graph (`wallet`, `token`, `nftCollection`, `nft`). Arguments are parsed
//! here, once, with [`crate::graphql::args`]; a bad one is a `BAD_USER_INPUT` error naming the argument
//! and the rule.

use async_graphql::{Context, Object};

use super::collection::NftCollection;
use super::nft::{self, NftConnection};
use super::nft_token::NftToken;
use super::token::Token;
use super::transfer::{self, Erc20Transfer};
use super::wallet::Wallet;
use crate::graphql::args;
use crate::graphql::connection::Connection;
use crate::graphql::enums::TokenIdFormat;
use crate::graphql::error::GqlError;
use crate::graphql::scalars::{Address, BlockNumber, Uint256};
use crate::graphql::service;
use crate::query::{DateRange, NftQuery, TransferQuery};
use crate::types::SortOrder;

/// The root of every query.
pub struct QueryRoot;

/// tokenql's data as a graph: start at a `wallet`, a `token`, an `nftCollection` or an `nft`
/// and walk its lists (holdings, balances, transfers, owners, collections). The two flat
/// questions `nftsByWallet` and `erc20Transfers` remain. Every list is a Relay connection
/// paginated with opaque keyset cursors (`first` / `after`) and says with `status` whether it
/// is complete.
#[Object(name = "Query")]
impl QueryRoot {
    /// The NFTs (ERC721 and ERC1155) a wallet holds now, ordered by `tokenAddress` then
    /// `tokenId` ascending. Naming a collection in `tokenAddresses` that is not fully indexed
    /// schedules its indexing, and the answer says `SYNCING` until it is done.
    #[allow(clippy::too_many_arguments)]
    #[graphql(complexity = "crate::graphql::connection::page_cost(first, child_complexity)")]
    async fn nfts_by_wallet(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The wallet, in any letter case.")] address: Address,
        #[graphql(
            default = "eth",
            desc = "The chain: a name (`eth`, `polygon`, `bsc testnet`, ...) or a hex id \
                    (`0x1`, `0x89`, ...)."
        )]
        chain: String,
        #[graphql(default = 100, desc = "How many NFTs per page: 1 to 100.")] first: i32,
        #[graphql(
            desc = "The `endCursor` of the previous page, to get the next one; it is \
                          only valid with the same filters."
        )]
        after: Option<String>,
        #[graphql(desc = "Only NFTs of these collections (at most 100 addresses).")]
        token_addresses: Option<Vec<Address>>,
        #[graphql(
            default = false,
            desc = "Leave out NFTs of collections flagged as possible spam."
        )]
        exclude_spam: bool,
        #[graphql(default, desc = "How `tokenId` is written: decimal (default) or hex.")]
        token_id_format: TokenIdFormat,
        #[graphql(
            desc = "The state after this block (after its last log), amounts and acquisition blocks included; default: now. `SYNCED` only once the history the answer depends on is complete and the indexer has stored the block; a block above the chain's head is an error."
        )]
        at_block: Option<BlockNumber>,
    ) -> Result<NftConnection, GqlError> {
        let q = NftQuery {
            chain: args::chain("chain", &chain)?,
            owner: args::address("address", &address)?,
            token_addresses: args::address_list("tokenAddresses", token_addresses.as_deref())?,
            exclude_spam,
            with_total: false,
            page_size: args::first(first)?,
            at_block: args::block("atBlock", at_block.as_ref())?.map(|b| b.0),
        };
        let service = service(ctx)?;
        nft::resolve(ctx, service, q, after.as_deref(), token_id_format.into()).await
    }

    /// ERC20 transfers, newest first (`blockNumber` descending, then `logIndex` descending).
    /// Filters combine with AND; with none, every transfer of the chain is listed. `SYNCED`
    /// once every named wallet's history is complete (or every named contract's; with
    /// neither, the chain's; none is needed from the live start block on).
    #[allow(clippy::too_many_arguments)]
    #[graphql(complexity = "crate::graphql::connection::page_cost(first, child_complexity)")]
    async fn erc20_transfers(
        &self,
        ctx: &Context<'_>,
        #[graphql(
            default = "eth",
            desc = "The chain: a name (`eth`, `polygon`, `bsc testnet`, ...) or a hex id \
                    (`0x1`, `0x89`, ...)."
        )]
        chain: String,
        #[graphql(
            desc = "Only transfers sent or received by one of these wallets (at most \
                          100)."
        )]
        wallet_addresses: Option<Vec<Address>>,
        #[graphql(desc = "Only transfers of these token contracts (at most 100).")]
        contract_addresses: Option<Vec<Address>>,
        #[graphql(
            desc = "Leave out transfers sent or received by these wallets (at most \
                          100)."
        )]
        exclude_wallets: Option<Vec<Address>>,
        #[graphql(desc = "Leave out transfers of these token contracts (at most 100).")]
        exclude_contracts: Option<Vec<Address>>,
        #[graphql(desc = "Only transfers in this block or later (inclusive).")] from_block: Option<
            BlockNumber,
        >,
        #[graphql(desc = "Only transfers in this block or earlier (inclusive).")] to_block: Option<
            BlockNumber,
        >,
        #[graphql(default = 100, desc = "How many transfers per page: 1 to 100.")] first: i32,
        #[graphql(
            desc = "The `endCursor` of the previous page, to get the next one; it is \
                          only valid with the same filters."
        )]
        after: Option<String>,
    ) -> Result<Connection<Erc20Transfer>, GqlError> {
        let blocks = args::blocks(from_block.as_ref(), to_block.as_ref())?;
        let q = TransferQuery {
            chain: args::chain("chain", &chain)?,
            wallets: args::address_list("walletAddresses", wallet_addresses.as_deref())?,
            contracts: args::address_list("contractAddresses", contract_addresses.as_deref())?,
            exclude_wallets: args::address_list("excludeWallets", exclude_wallets.as_deref())?,
            exclude_contracts: args::address_list(
                "excludeContracts",
                exclude_contracts.as_deref(),
            )?,
            blocks,
            dates: DateRange::default(),
            order: SortOrder::Desc,
            page_size: args::first(first)?,
        };
        let service = service(ctx)?;
        transfer::resolve(ctx, service, q, after.as_deref()).await
    }

    /// A wallet on one chain: walk to what it holds (`nfts`, `tokenBalances`,
    /// `nftCollections`) and what it sent or received (`erc20Transfers`, `nftTransfers`).
    async fn wallet(
        &self,
        #[graphql(
            default = "eth",
            desc = "The chain: a name (`eth`, `polygon`, `bsc testnet`, ...) or a hex id \
                    (`0x1`, `0x89`, ...)."
        )]
        chain: String,
        #[graphql(desc = "The wallet, in any letter case.")] address: Address,
    ) -> Result<Wallet, GqlError> {
        Ok(Wallet::new(
            args::chain("chain", &chain)?,
            args::address("address", &address)?,
        ))
    }

    /// An ERC20 token on one chain: its metadata and its `transfers`.
    async fn token(
        &self,
        ctx: &Context<'_>,
        #[graphql(
            default = "eth",
            desc = "The chain: a name (`eth`, `polygon`, `bsc testnet`, ...) or a hex id \
                    (`0x1`, `0x89`, ...)."
        )]
        chain: String,
        #[graphql(desc = "The token's contract, in any letter case.")] address: Address,
    ) -> Result<Token, GqlError> {
        let chain = args::chain("chain", &chain)?;
        let address = args::address("address", &address)?;
        Token::load(ctx, service(ctx)?, chain, address).await
    }

    /// An NFT collection (ERC721 or ERC1155) on one chain: its metadata, its tokens (`nfts`),
    /// who holds them (`owners`), how they moved (`transfers`) and their traits (`traits`).
    async fn nft_collection(
        &self,
        ctx: &Context<'_>,
        #[graphql(
            default = "eth",
            desc = "The chain: a name (`eth`, `polygon`, `bsc testnet`, ...) or a hex id \
                    (`0x1`, `0x89`, ...)."
        )]
        chain: String,
        #[graphql(desc = "The collection's contract, in any letter case.")] address: Address,
    ) -> Result<NftCollection, GqlError> {
        let chain = args::chain("chain", &chain)?;
        let address = args::address("address", &address)?;
        NftCollection::load(ctx, service(ctx)?, chain, address).await
    }

    /// One NFT: its metadata and media, who holds it (`owners`) and how it moved
    /// (`transfers`). A token tokenql knows nothing of yet has `null` metadata and no owners.
    async fn nft(
        &self,
        ctx: &Context<'_>,
        #[graphql(
            default = "eth",
            desc = "The chain: a name (`eth`, `polygon`, `bsc testnet`, ...) or a hex id \
                    (`0x1`, `0x89`, ...)."
        )]
        chain: String,
        #[graphql(desc = "The collection's contract, in any letter case.")] address: Address,
        #[graphql(desc = "The token id: decimal digits or `0x` hex, at most 2^256-1.")]
        token_id: Uint256,
        #[graphql(default, desc = "How token ids are written: decimal (default) or hex.")]
        token_id_format: TokenIdFormat,
    ) -> Result<NftToken, GqlError> {
        let chain = args::chain("chain", &chain)?;
        let contract = args::address("address", &address)?;
        let id = args::token_id("tokenId", &token_id)?;
        let format = token_id_format.into();
        NftToken::load(ctx, service(ctx)?, chain, contract, id, format).await
    }
}
