//! One wallet: the `Wallet` object (`wallet(...)`), whose fields are the lists of what it
//! holds and what it sent or received. It reads nothing itself; each list is one question of
//! the query service.

use async_graphql::{Context, Object};

use super::balances::{self, TokenBalance};
use super::nft::{self, NftConnection};
use super::stats;
use super::transfer_fields::{TransferScope, WalletErc20Transfers, WalletNftTransfers};
use super::wallet_collections::{self, WalletCollection};
use crate::graphql::args;
use crate::graphql::connection::{page_cost, Connection};
use crate::graphql::enums::TokenIdFormat;
use crate::graphql::error::GqlError;
use crate::graphql::scalars::{Address, BlockNumber};
use crate::graphql::service;
use crate::query::{NftQuery, TokenBalanceQuery, WalletCollectionsQuery};
use crate::types::{self, Chain};

/// The `Wallet` object.
pub struct Wallet {
    chain: Chain,
    address: types::Address,
}

impl Wallet {
    /// The wallet at `address` on `chain`.
    pub fn new(chain: Chain, address: types::Address) -> Self {
        Self { chain, address }
    }
}

/// A wallet (any address) on one chain: what it holds, and what it sent or received.
#[Object]
impl Wallet {
    /// The wallet's address.
    async fn address(&self) -> Address {
        self.address.into()
    }

    /// The wallet's counts: NFTs and collections held, NFT and ERC20 transfers sent or
    /// received (`getWalletStats`).
    async fn stats(&self, ctx: &Context<'_>) -> Result<stats::WalletStats, GqlError> {
        stats::wallet(ctx, self.chain, self.address).await
    }

    /// The wallet's native balance (the chain's own coin), read from the chain's JSON-RPC
    /// endpoint at the head or at `atBlock` (`getNativeBalance`). A server without an endpoint
    /// for the chain answers `BAD_USER_INPUT` naming `chain`; a failing endpoint,
    /// `SERVICE_UNAVAILABLE`.
    async fn native_balance(
        &self,
        ctx: &Context<'_>,
        #[graphql(
            desc = "The block to read the balance at; default: the chain's head. A block after the head is an error."
        )]
        at_block: Option<BlockNumber>,
    ) -> Result<stats::NativeBalance, GqlError> {
        stats::native_balance(ctx, self.chain, self.address, at_block.as_ref()).await
    }

    /// The wallet's first and last transfer on this chain (`getWalletActiveChains`).
    async fn activity(&self, ctx: &Context<'_>) -> Result<stats::WalletActivity, GqlError> {
        stats::activity(ctx, self.chain, self.address).await
    }

    /// The NFTs the wallet holds now: the answer of `nftsByWallet`, with the same arguments
    /// and order (`tokenAddress`, then `tokenId`).
    #[allow(clippy::too_many_arguments)]
    #[graphql(complexity = "page_cost(first, child_complexity)")]
    async fn nfts(
        &self,
        ctx: &Context<'_>,
        #[graphql(default = 100, desc = "How many NFTs per page: 1 to 100.")] first: i32,
        #[graphql(desc = "The `endCursor` of the previous page, to get the next one.")]
        after: Option<String>,
        #[graphql(desc = "Only NFTs of these collections (at most 100 addresses).")]
        token_addresses: Option<Vec<Address>>,
        #[graphql(
            default = false,
            desc = "Leave out collections flagged as possible spam."
        )]
        exclude_spam: bool,
        #[graphql(default, desc = "How token ids are written: decimal (default) or hex.")]
        token_id_format: TokenIdFormat,
        #[graphql(
            desc = "The state after this block (after its last log), amounts and acquisition blocks included; default: now. `SYNCED` only once the history the answer depends on is complete and the indexer has stored the block; a block above the chain's head is an error."
        )]
        at_block: Option<BlockNumber>,
    ) -> Result<NftConnection, GqlError> {
        let q = NftQuery {
            chain: self.chain,
            owner: self.address,
            token_addresses: args::address_list("tokenAddresses", token_addresses.as_deref())?,
            exclude_spam,
            with_total: false,
            page_size: args::first(first)?,
            at_block: args::block("atBlock", at_block.as_ref())?.map(|b| b.0),
        };
        let (service, after) = (service(ctx)?, args::after(after.as_deref())?);
        nft::resolve(ctx, service, q, after, token_id_format.into()).await
    }

    /// `erc20Transfers`, declared with the other transfer fields: [`WalletErc20Transfers`].
    #[graphql(flatten)]
    async fn erc20_transfers_field(&self) -> WalletErc20Transfers {
        WalletErc20Transfers(TransferScope::wallet(self.chain, self.address))
    }

    /// The wallet's non-zero ERC20 balances, summed exactly from its whole transfer history
    /// (a rebasing token's balance drifts from its contract's `balanceOf`), by token address.
    /// `SYNCED` once the wallet's whole history is indexed (or, with `tokenAddresses`, every
    /// named token's); before, the first request schedules it, and only the balances of
    /// tokens whose own history is complete are shown.
    #[graphql(complexity = "page_cost(first, child_complexity)")]
    async fn token_balances(
        &self,
        ctx: &Context<'_>,
        #[graphql(default = 100, desc = "How many balances per page: 1 to 100.")] first: i32,
        #[graphql(desc = "The `endCursor` of the previous page, to get the next one.")]
        after: Option<String>,
        #[graphql(desc = "Only these tokens (at most 100 addresses).")] token_addresses: Option<
            Vec<Address>,
        >,
        #[graphql(desc = "The balances after this block (inclusive); now when absent.")]
        to_block: Option<BlockNumber>,
        #[graphql(default = false, desc = "Leave out tokens flagged as possible spam.")]
        exclude_spam: bool,
    ) -> Result<Connection<TokenBalance>, GqlError> {
        let q = TokenBalanceQuery {
            chain: self.chain,
            owner: self.address,
            to_block: args::block("toBlock", to_block.as_ref())?,
            token_addresses: args::address_list("tokenAddresses", token_addresses.as_deref())?,
            exclude_spam,
            page_size: args::first(first)?,
        };
        let (service, after) = (service(ctx)?, args::after(after.as_deref())?);
        balances::balances(ctx, service, q, after).await
    }

    /// `nftTransfers`, declared with the other transfer fields: [`WalletNftTransfers`].
    #[graphql(flatten)]
    async fn nft_transfers_field(&self) -> WalletNftTransfers {
        WalletNftTransfers(TransferScope::wallet(self.chain, self.address))
    }

    /// The collections the wallet holds at least one token of, by address, with how many of
    /// each. `SYNCED` once the wallet's whole history is indexed; before, the first request
    /// schedules it, and only holdings partial history cannot have made up count.
    #[graphql(complexity = "page_cost(first, child_complexity)")]
    async fn nft_collections(
        &self,
        ctx: &Context<'_>,
        #[graphql(default = 100, desc = "How many collections per page: 1 to 100.")] first: i32,
        #[graphql(desc = "The `endCursor` of the previous page, to get the next one.")]
        after: Option<String>,
        #[graphql(
            default = false,
            desc = "Leave out collections flagged as possible spam."
        )]
        exclude_spam: bool,
        #[graphql(
            desc = "The state after this block (after its last log), amounts and acquisition blocks included; default: now. `SYNCED` only once the history the answer depends on is complete and the indexer has stored the block; a block above the chain's head is an error."
        )]
        at_block: Option<BlockNumber>,
    ) -> Result<Connection<WalletCollection>, GqlError> {
        let q = WalletCollectionsQuery {
            chain: self.chain,
            owner: self.address,
            exclude_spam,
            page_size: args::first(first)?,
            at_block: args::block("atBlock", at_block.as_ref())?.map(|b| b.0),
        };
        let (service, after) = (service(ctx)?, args::after(after.as_deref())?);
        wallet_collections::wallet_collections(ctx, service, q, after).await
    }
}
