//! The transfer list fields, declared once: `Wallet.erc20Transfers`, `Wallet.nftTransfers`,
//! `Token.transfers`, `NftCollection.transfers` and `NftToken.transfers` take the same
//! arguments (`first`, `after`, the block and date bounds, `order`; `contractAddresses` on a
//! wallet, `tokenIdFormat` where the object does not fix it) and differ only in their object's
//! [`TransferScope`] and their node type.
//!
//! async-graphql declares a field's arguments in its resolver's signature and cannot take them
//! from a struct, so [`transfer_fields!`] writes each field's resolver, with the one declaration
//! of the arguments, into a small object of its own ([`WalletErc20Transfers`], ...). Each
//! object merges its transfer field in with a `#[graphql(flatten)]` resolver placed where the
//! field stands in the schema; the small objects are not types of the schema.

use async_graphql::Context;

use super::nft_transfer::{self, NftTransfer};
use super::transfer::{self, Erc20Transfer};
use crate::graphql::args::{self, Range};
use crate::graphql::connection::{nested_page_cost, page_cost, Connection};
use crate::graphql::enums::{Order, TokenIdFormat};
use crate::graphql::error::GqlError;
use crate::graphql::scalars::{Address, BlockNumber};
use crate::graphql::service;
use crate::query::{NftTransferQuery, TransferQuery};
use crate::types::{self, AddressList, Chain};

/// Which transfers belong to an object: a wallet's, a contract's, or one token's.
#[derive(Debug, Clone, Copy)]
pub struct TransferScope {
    /// The chain they are on.
    pub chain: Chain,
    /// Only transfers sent or received by this wallet.
    pub wallet: Option<types::Address>,
    /// Only transfers of this contract.
    pub contract: Option<types::Address>,
    /// Only moves of this token id (with `contract`).
    pub token_id: Option<types::Uint256>,
    /// How token ids are written, when the object fixes it (an `NftToken` keeps its own).
    pub format: Option<types::TokenIdFormat>,
}

/// A transfer field's arguments, as the resolver received them.
#[derive(Debug)]
pub struct TransferArgs {
    /// `first`.
    pub first: i32,
    /// `after`.
    pub after: Option<String>,
    /// `contractAddresses`, on the fields that take it.
    pub contract_addresses: Option<Vec<Address>>,
    /// The block and date bounds and `order`.
    pub range: Range,
    /// `tokenIdFormat`, on the fields that take it.
    pub token_id_format: Option<TokenIdFormat>,
}

impl TransferScope {
    /// A wallet's transfers, of the contracts `contractAddresses` names.
    pub fn wallet(chain: Chain, wallet: types::Address) -> Self {
        Self {
            chain,
            wallet: Some(wallet),
            contract: None,
            token_id: None,
            format: None,
        }
    }

    /// A contract's transfers.
    pub fn contract(chain: Chain, contract: types::Address) -> Self {
        Self {
            chain,
            wallet: None,
            contract: Some(contract),
            token_id: None,
            format: None,
        }
    }

    /// One NFT's moves, its token ids written in `format`.
    pub fn token(
        chain: Chain,
        contract: types::Address,
        id: types::Uint256,
        format: types::TokenIdFormat,
    ) -> Self {
        Self {
            token_id: Some(id),
            format: Some(format),
            ..Self::contract(chain, contract)
        }
    }

    /// The contracts to list: the object's own, or the `contractAddresses` argument.
    fn contracts(&self, arg: Option<&[Address]>) -> Result<AddressList, GqlError> {
        match self.contract {
            Some(contract) => Ok(AddressList::one(contract)),
            None => args::address_list("contractAddresses", arg),
        }
    }
}

/// A page of ERC20 transfers for a transfer field.
pub async fn erc20_page(
    ctx: &Context<'_>,
    scope: TransferScope,
    a: TransferArgs,
) -> Result<Connection<Erc20Transfer>, GqlError> {
    let bounds = a.range.parse()?;
    let q = TransferQuery {
        chain: scope.chain,
        wallets: scope.wallet.map(AddressList::one).unwrap_or_default(),
        contracts: scope.contracts(a.contract_addresses.as_deref())?,
        exclude_wallets: AddressList::default(),
        exclude_contracts: AddressList::default(),
        blocks: bounds.blocks,
        dates: bounds.dates,
        order: bounds.order,
        page_size: args::first(a.first)?,
    };
    let (service, after) = (service(ctx)?, args::after(a.after.as_deref())?);
    transfer::resolve(ctx, service, q, after).await
}

/// A page of NFT moves for a transfer field.
pub async fn nft_page(
    ctx: &Context<'_>,
    scope: TransferScope,
    a: TransferArgs,
) -> Result<Connection<NftTransfer>, GqlError> {
    let bounds = a.range.parse()?;
    let q = NftTransferQuery {
        chain: scope.chain,
        wallet: scope.wallet,
        contracts: scope.contracts(a.contract_addresses.as_deref())?,
        blocks: bounds.blocks,
        dates: bounds.dates,
        order: bounds.order,
        page_size: args::first(a.first)?,
    };
    let format = scope
        .format
        .unwrap_or_else(|| a.token_id_format.unwrap_or_default().into());
    let (service, after) = (service(ctx)?, args::after(a.after.as_deref())?);
    nft_transfer::resolve(ctx, service, q, scope.token_id, after, format).await
}

/// Writes, for each transfer field, an object holding its [`TransferScope`] whose one field is
/// the transfer field. A field is listed with its doc comment, the object's name and the
/// field's complexity (`page_cost`, or `nested_page_cost` for a list inside other lists'
/// nodes), `erc20` or `nft`, the field's name, and which optional arguments it takes
/// (`contracts = contract_addresses`, `format = token_id_format`).
macro_rules! transfer_fields {
    (@node erc20) => { Erc20Transfer };
    (@node nft) => { NftTransfer };
    (@page erc20) => { erc20_page };
    (@page nft) => { nft_page };
    ($(
        $(#[$field_attr:meta])*
        $object:ident($cost:ident): $kind:ident fn $name:ident(
            $(contracts = $contracts:ident)? $(,)? $(format = $format:ident)?
        );
    )+) => {$(
        #[doc = concat!("`", stringify!($object), "`: one transfer field, merged into its object.")]
        pub struct $object(pub TransferScope);

        impl $object {
            /// The field's complexity ([`page_cost`] or [`nested_page_cost`]).
            fn cost(first: i32, child_complexity: usize) -> usize {
                $cost(first, child_complexity)
            }
        }

        #[async_graphql::Object]
        impl $object {
            $(#[$field_attr])*
            #[graphql(complexity = "Self::cost(first, child_complexity)")]
            #[allow(clippy::too_many_arguments)]
            async fn $name(
                &self,
                ctx: &Context<'_>,
                #[graphql(default = 100, desc = "How many transfers per page: 1 to 100.")] first: i32,
                #[graphql(
                    desc = "The `endCursor` of the previous page, to get the next one; only \
                            valid with the same arguments."
                )]
                after: Option<String>,
                $(
                    #[graphql(desc = "Only transfers of these contracts (at most 100 addresses).")]
                    $contracts: Option<Vec<Address>>,
                )?
                #[graphql(desc = "Only transfers in this block or later (inclusive).")]
                from_block: Option<BlockNumber>,
                #[graphql(desc = "Only transfers in this block or earlier (inclusive).")]
                to_block: Option<BlockNumber>,
                #[graphql(
                    desc = "Only transfers at or after this time: Unix seconds or ISO 8601 \
                            (`2023-03-20T08:37:35Z`); `fromBlock` wins over it."
                )]
                from_date: Option<String>,
                #[graphql(
                    desc = "Only transfers at or before this time: Unix seconds or ISO 8601; \
                            `toBlock` wins over it."
                )]
                to_date: Option<String>,
                #[graphql(default, desc = "`DESC` (newest first, the default) or `ASC`.")]
                order: Order,
                $(
                    #[graphql(default, desc = "How token ids are written: decimal (default) or hex.")]
                    $format: TokenIdFormat,
                )?
            ) -> Result<Connection<transfer_fields!(@node $kind)>, GqlError> {
                let args = TransferArgs {
                    first,
                    after,
                    contract_addresses: None $(.or($contracts))?,
                    range: Range { from_block, to_block, from_date, to_date, order },
                    token_id_format: None $(.or(Some($format)))?,
                };
                transfer_fields!(@page $kind)(ctx, self.0, args).await
            }
        }
    )+};
}

transfer_fields! {
    /// The ERC20 transfers the wallet sent or received, newest first unless `order: ASC`: by
    /// block, then log index. `SYNCED` once the wallet's whole history is indexed (or, with
    /// `contractAddresses`, every named token's; or when `fromBlock` is at or after the live
    /// start block).
    WalletErc20Transfers(page_cost): erc20 fn erc20_transfers(contracts = contract_addresses);

    /// The NFTs the wallet sent or received (mints and burns included), newest first unless
    /// `order: ASC`: by block, log index, then position in a batch. `SYNCED` once the
    /// wallet's whole history is indexed (or, with `contractAddresses`, every named
    /// collection's; or when `fromBlock` is at or after the live start block).
    WalletNftTransfers(page_cost): nft fn nft_transfers(
        contracts = contract_addresses, format = token_id_format
    );

    /// The token's transfers, newest first unless `order: ASC`: by block, then log index.
    /// `SYNCED` once the token's whole history is indexed (or when `fromBlock` is at or after
    /// the live start block).
    TokenTransfers(nested_page_cost): erc20 fn transfers();

    /// The collection's moves (mints and burns included), newest first unless `order: ASC`:
    /// by block, log index, then position in a batch. `SYNCED` once the collection's whole
    /// history is indexed (or when `fromBlock` is at or after the live start block).
    CollectionTransfers(nested_page_cost): nft fn transfers(format = token_id_format);

    /// The token's moves (mints and burns included), newest first unless `order: ASC`: by
    /// block, log index, then position in a batch. `SYNCED` once the collection's whole
    /// history is indexed (or when `fromBlock` is at or after the live start block).
    NftTokenTransfers(page_cost): nft fn transfers();
}
