//! The fields of one NFT (a token id of a collection), whoever holds it: its metadata, preview
//! media, collection name and flags ([`NftFields`]), part of `NftToken` and of `CollectionNft`;
//! and [`Linked`], what the tokens of one page share: the rows their answer carries.

use std::borrow::Cow;
use std::sync::Arc;

use async_graphql::{Context, Lookahead, Object};

use super::collection_meta::CollectionMeta;
use super::media::{self, NftMedia};
use super::nft::TOKEN_FIELDS;
use crate::graphql::enums::{format_id, ContractType};
use crate::graphql::error::GqlError;
use crate::graphql::loaders::{include, Primed};
use crate::graphql::scalars::{Address, BlockNumber};
use crate::query::{token_hash, ContractInfo, Include, TokenInfo};
use crate::types::{self, iso8601_ms, Chain};

/// What the tokens of one page (or one `nft(...)`) share: their chain, id format, related rows
/// (read with the page, as [`wants`] asked) and the base of preview links.
pub struct Linked {
    pub chain: Chain,
    pub format: types::TokenIdFormat,
    pub primed: Arc<Primed>,
    base: Arc<str>,
}

/// [`NftFields`] answered from the contract's metadata.
const CONTRACT_FIELDS: &[&str] = &[
    "contractType",
    "name",
    "symbol",
    "possibleSpam",
    "verifiedCollection",
];

/// The related rows `look` (a selection of [`NftFields`]) shows.
pub fn wants(look: &Lookahead<'_>) -> Include {
    include(look, CONTRACT_FIELDS, TOKEN_FIELDS, &[])
}

impl Linked {
    /// The tokens' shared data: `primed` holds their rows.
    pub fn new(
        ctx: &Context<'_>,
        chain: Chain,
        format: types::TokenIdFormat,
        primed: Arc<Primed>,
    ) -> Arc<Self> {
        Arc::new(Self {
            chain,
            format,
            primed,
            base: media::base(ctx),
        })
    }

    /// The fields of one token: `contract_type` when the record it belongs to knows it.
    pub fn fields(
        self: &Arc<Self>,
        contract: types::Address,
        token_id: types::Uint256,
        contract_type: Option<types::TokenStandard>,
    ) -> NftFields {
        NftFields {
            contract,
            token_id,
            contract_type,
            linked: self.clone(),
        }
    }

    /// The preview media of one token, when its page selected and has them.
    fn media(&self, contract: types::Address, token_id: types::Uint256) -> Option<NftMedia> {
        let m = self.primed.media(contract, token_id)?;
        Some(NftMedia::new(m.clone(), &self.base))
    }
}

/// The `NftFields` object: merged into `NftToken` and `CollectionNft`.
pub struct NftFields {
    contract: types::Address,
    token_id: types::Uint256,
    contract_type: Option<types::TokenStandard>,
    linked: Arc<Linked>,
}

impl NftFields {
    async fn contract(&self) -> Result<Option<Cow<'_, ContractInfo>>, GqlError> {
        self.linked.primed.contract(self.contract).await
    }

    async fn row(&self) -> Result<Option<Cow<'_, TokenInfo>>, GqlError> {
        self.linked.primed.token(self.contract, self.token_id).await
    }
}

/// One NFT's own data, whoever holds it.
#[Object]
impl NftFields {
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
        if let Some(t) = self.contract_type {
            return Ok(Some(t.into()));
        }
        let standard = self.contract().await?.and_then(|c| c.standard);
        Ok(standard.map(ContractType::from))
    }

    /// A stable identifier of the token (chain, contract and token id): 32 hex digits.
    async fn token_hash(&self) -> String {
        token_hash(self.linked.chain, self.contract, self.token_id)
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

    /// `name`, `symbol`, `possibleSpam`, `verifiedCollection`: [`CollectionMeta`].
    #[graphql(flatten)]
    async fn collection_meta(&self) -> CollectionMeta {
        CollectionMeta::new(&self.linked.primed, self.contract)
    }
}
