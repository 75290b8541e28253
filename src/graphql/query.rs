//! The `Query` root: both questions. Arguments are parsed here, once, into the boundary types
//! of [`crate::types`]; a bad one is a `BAD_USER_INPUT` error naming the argument and the rule.

use std::fmt::Display;

use async_graphql::{Context, Object};

use super::error::GqlError;
use super::nft::{self, NftConnection, TokenIdFormat};
use super::scalars::{Address, BlockNumber};
use super::transfer::{self, Erc20TransferConnection};
use crate::query::{BlockRange, DateRange, NftQuery, QueryService, TransferQuery};
use crate::types::{self, AddressList, Chain, PageSize, SortOrder};

/// The root of every query.
pub struct QueryRoot;

/// Prefixes a parse error with the argument's name.
fn arg<T, E: Display>(name: &str, r: Result<T, E>) -> Result<T, GqlError> {
    r.map_err(|e| GqlError::bad_input(name, e))
}

fn address_list(name: &str, list: Option<&[Address]>) -> Result<AddressList, GqlError> {
    let parsed = list
        .unwrap_or_default()
        .iter()
        .map(types::Address::try_from)
        .collect::<Result<Vec<_>, _>>();
    arg(name, parsed.and_then(AddressList::from_addresses))
}

fn block(name: &str, b: Option<&BlockNumber>) -> Result<Option<types::BlockNumber>, GqlError> {
    b.map(|b| arg(name, types::BlockNumber::try_from(b)))
        .transpose()
}

fn service<'a>(ctx: &Context<'a>) -> Result<&'a QueryService, GqlError> {
    ctx.data_opt::<QueryService>().ok_or_else(|| {
        tracing::error!("the GraphQL schema was built without a QueryService");
        GqlError::internal()
    })
}

/// tokenql answers two questions: which NFTs does this wallet own, and which ERC20 transfers
/// touched these wallets or contracts. Both answers are Relay connections paginated with
/// opaque keyset cursors (`first` / `after`).
#[Object(name = "Query")]
impl QueryRoot {
    /// The NFTs (ERC721 and ERC1155) a wallet holds now, ordered by `tokenAddress` then
    /// `tokenId` ascending. Naming a collection in `tokenAddresses` that is not fully indexed
    /// schedules its indexing, and the answer says `SYNCING` until it is done.
    #[allow(clippy::too_many_arguments)]
    #[graphql(complexity = "super::connection::page_cost(first, child_complexity)")]
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
    ) -> Result<NftConnection, GqlError> {
        let q = NftQuery {
            chain: arg("chain", Chain::parse(&chain))?,
            owner: arg("address", types::Address::try_from(&address))?,
            token_addresses: address_list("tokenAddresses", token_addresses.as_deref())?,
            exclude_spam,
            with_total: false,
            page_size: arg("first", PageSize::new(i64::from(first)))?,
        };
        let service = service(ctx)?;
        nft::resolve(ctx, service, q, after.as_deref(), token_id_format.into()).await
    }

    /// ERC20 transfers, newest first (`blockNumber` descending, then `logIndex` descending).
    /// Filters combine with AND; with none, every transfer of the chain is listed.
    #[allow(clippy::too_many_arguments)]
    #[graphql(complexity = "super::connection::page_cost(first, child_complexity)")]
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
    ) -> Result<Erc20TransferConnection, GqlError> {
        let from = block("fromBlock", from_block.as_ref())?;
        let to = block("toBlock", to_block.as_ref())?;
        if let (Some(f), Some(t)) = (from, to) {
            if f > t {
                return Err(GqlError::bad_input(
                    "fromBlock",
                    format!(
                        "{} is greater than toBlock ({}); expected fromBlock <= toBlock",
                        f.0, t.0
                    ),
                ));
            }
        }
        let q = TransferQuery {
            chain: arg("chain", Chain::parse(&chain))?,
            wallets: address_list("walletAddresses", wallet_addresses.as_deref())?,
            contracts: address_list("contractAddresses", contract_addresses.as_deref())?,
            exclude_wallets: address_list("excludeWallets", exclude_wallets.as_deref())?,
            exclude_contracts: address_list("excludeContracts", exclude_contracts.as_deref())?,
            blocks: arg("fromBlock", BlockRange::new(from, to))?,
            dates: DateRange::default(),
            order: SortOrder::Desc,
            page_size: arg("first", PageSize::new(i64::from(first)))?,
        };
        let service = service(ctx)?;
        transfer::resolve(ctx, service, q, after.as_deref()).await
    }
}
