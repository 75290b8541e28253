//! One NFT: the `NftToken` object (`nft(...)`, and the `nft` of a move or of a collection's
//! token), with its metadata, media, owners and moves. What it reads comes from the [`Linked`]
//! data of its page.

use std::sync::Arc;

use async_graphql::{Context, Object};

use super::collection::NftCollection;
use super::connection::{nested_page_cost, Connection};
use super::enums::{format_id, ContractType, Order};
use super::error::GqlError;
use super::linked::Linked;
use super::media::NftMedia;
use super::nft::{self as holdings, Nft};
use super::nft_transfer::{self, NftTransfer};
use super::scalars::{Address, BlockNumber};
use super::{args, service};
use crate::query::{token_hash, ContractInfo, TokenInfo};
use crate::types::{self, iso8601_ms};

/// The `NftToken` object.
pub struct NftToken {
    contract: types::Address,
    token_id: types::Uint256,
    contract_type: Option<String>,
    linked: Arc<Linked>,
}

impl NftToken {
    /// One token of `linked`'s page: `contract_type` when the record that links to it knows it.
    pub fn new(
        linked: Arc<Linked>,
        contract: types::Address,
        token_id: types::Uint256,
        contract_type: Option<&str>,
    ) -> Self {
        Self {
            contract,
            token_id,
            contract_type: contract_type.map(str::to_string),
            linked,
        }
    }

    async fn contract(&self) -> Result<Option<Arc<ContractInfo>>, GqlError> {
        self.linked.primed.contract(self.contract).await
    }

    async fn row(&self) -> Result<Option<Arc<TokenInfo>>, GqlError> {
        self.linked.primed.token(self.contract, self.token_id).await
    }
}

/// One NFT (a token id of a collection), whoever holds it: its metadata, its preview media,
/// its owners and its moves. Fields tokenql has no data for yet are `null`.
#[Object]
impl NftToken {
    /// The collection's contract.
    async fn token_address(&self) -> Address {
        self.contract.into()
    }

    /// The token id, exact, in the `tokenIdFormat` asked.
    async fn token_id(&self) -> String {
        format_id(&self.token_id, self.linked.format)
    }

    /// `ERC721` or `ERC1155`; `null` while the contract's standard is unknown.
    async fn contract_type(&self) -> Result<Option<ContractType>, GqlError> {
        if let Some(t) = &self.contract_type {
            return ContractType::stored(t, self.contract).map(Some);
        }
        let standard = self.contract().await?.and_then(|c| c.standard.clone());
        Ok(standard.as_deref().and_then(ContractType::parse))
    }

    /// A stable identifier of the token (chain, contract and token id): 32 hex digits.
    async fn token_hash(&self) -> String {
        token_hash(self.linked.chain, self.contract, self.token_id)
    }

    /// The collection, to walk to its other tokens, owners and moves.
    async fn collection(&self) -> NftCollection {
        NftCollection::new(
            self.linked.chain,
            self.contract,
            self.contract_type.clone(),
            self.linked.primed.clone(),
        )
    }

    /// The token's metadata URI, when known.
    async fn token_uri(&self) -> Result<Option<String>, GqlError> {
        Ok(self.row().await?.and_then(|t| t.token_uri.clone()))
    }

    /// The token's metadata, a JSON document as a string, when fetched.
    async fn metadata(&self) -> Result<Option<String>, GqlError> {
        Ok(self.row().await?.and_then(|t| t.metadata.clone()))
    }

    /// Preview media of the token's image (as `Nft.media`); `null` while the token's metadata
    /// is not fetched.
    async fn media(&self) -> Option<NftMedia> {
        self.linked.media(self.contract, self.token_id)
    }

    /// The block at which the token was minted, when known.
    async fn block_number_minted(&self) -> Result<Option<BlockNumber>, GqlError> {
        let row = self.row().await?;
        Ok(row
            .and_then(|t| t.block_number_minted)
            .map(BlockNumber::from))
    }

    /// The address that minted the token, when known.
    async fn minter_address(&self) -> Result<Option<String>, GqlError> {
        Ok(self.row().await?.and_then(|t| t.minter_address.clone()))
    }

    /// When the token URI was last fetched: ISO 8601 UTC with milliseconds.
    async fn last_token_uri_sync(&self) -> Result<Option<String>, GqlError> {
        let row = self.row().await?;
        Ok(row.and_then(|t| t.last_token_uri_sync).map(iso8601_ms))
    }

    /// When the metadata was last fetched: ISO 8601 UTC with milliseconds.
    async fn last_metadata_sync(&self) -> Result<Option<String>, GqlError> {
        let row = self.row().await?;
        Ok(row.and_then(|t| t.last_metadata_sync).map(iso8601_ms))
    }

    /// The collection's name, when known.
    async fn name(&self) -> Result<Option<String>, GqlError> {
        Ok(self.contract().await?.and_then(|c| c.name.clone()))
    }

    /// The collection's symbol, when known.
    async fn symbol(&self) -> Result<Option<String>, GqlError> {
        Ok(self.contract().await?.and_then(|c| c.symbol.clone()))
    }

    /// Whether the collection is flagged as possible spam.
    async fn possible_spam(&self) -> Result<bool, GqlError> {
        Ok(self.contract().await?.is_some_and(|c| c.possible_spam))
    }

    /// Whether the collection is verified.
    async fn verified_collection(&self) -> Result<bool, GqlError> {
        Ok(self.contract().await?.is_some_and(|c| c.verified))
    }

    /// Who holds the token now (an ERC1155 token may have many holders), ordered by owner.
    /// `SYNCED` once the collection's whole history is indexed; before, the first request
    /// schedules it, and only holdings partial history cannot have made up are shown.
    #[graphql(complexity = "nested_page_cost(first, child_complexity)")]
    async fn owners(
        &self,
        ctx: &Context<'_>,
        #[graphql(default = 100, desc = "How many owners per page: 1 to 100.")] first: i32,
        #[graphql(desc = "The `endCursor` of the previous page, to get the next one.")]
        after: Option<String>,
    ) -> Result<Connection<Nft>, GqlError> {
        let q = crate::query::NftOwnersQuery {
            chain: self.linked.chain,
            contract: self.contract,
            token_id: Some(self.token_id),
            page_size: args::first(first)?,
        };
        let service = service(ctx)?;
        let page = service
            .nft_owners(&q, args::after(after.as_deref())?)
            .await?;
        holdings::holdings(ctx, service, q.chain, page, self.linked.format).await
    }

    /// The token's moves (mints and burns included), newest first unless `order: ASC`: by
    /// block, log index, then position in a batch. `SYNCED` once the collection's whole
    /// history is indexed (or when `fromBlock` is at or after the live start block).
    #[allow(clippy::too_many_arguments)]
    #[graphql(complexity = "nested_page_cost(first, child_complexity)")]
    async fn transfers(
        &self,
        ctx: &Context<'_>,
        #[graphql(default = 100, desc = "How many moves per page: 1 to 100.")] first: i32,
        #[graphql(
            desc = "The `endCursor` of the previous page, to get the next one; only \
                          valid with the same arguments."
        )]
        after: Option<String>,
        #[graphql(desc = "Only moves in this block or later (inclusive).")] from_block: Option<
            BlockNumber,
        >,
        #[graphql(desc = "Only moves in this block or earlier (inclusive).")] to_block: Option<
            BlockNumber,
        >,
        #[graphql(desc = "Only moves at or after this time: Unix seconds or ISO 8601 \
                          (`2023-03-20T08:37:35Z`); `fromBlock` wins over it.")]
        from_date: Option<String>,
        #[graphql(desc = "Only moves at or before this time: Unix seconds or ISO 8601; \
                          `toBlock` wins over it.")]
        to_date: Option<String>,
        #[graphql(default, desc = "`DESC` (newest first, the default) or `ASC`.")] order: Order,
    ) -> Result<Connection<NftTransfer>, GqlError> {
        let range = args::Range {
            from_block,
            to_block,
            from_date,
            to_date,
            order,
        };
        let bounds = range.parse()?;
        let q = crate::query::NftTransferQuery {
            chain: self.linked.chain,
            wallet: None,
            contracts: types::AddressList::one(self.contract),
            blocks: bounds.blocks,
            dates: bounds.dates,
            order: bounds.order,
            page_size: args::first(first)?,
        };
        let (service, after) = (service(ctx)?, args::after(after.as_deref())?);
        let format = self.linked.format;
        nft_transfer::resolve(ctx, service, q, Some(self.token_id), after, format).await
    }
}
