//! `nftsByWallet`'s types: `NftConnection`, `NftEdge`, `Nft`, and the `TokenIdFormat` and
//! `ContractType` enums.

use std::collections::HashMap;
use std::sync::Arc;

use async_graphql::futures_util::future::try_join;
use async_graphql::{Context, Enum, Object};

use super::connection::{PageInfo, SyncStatus};
use super::error::GqlError;
use super::loaders::{ContractKey, Preloaded, Related, TokenKey};
use super::media::{MediaBase, NftMedia};
use super::scalars::{Address, BlockNumber, Uint256};
use crate::query::{
    ContractInfo, CursorMint, MediaInfo, MediaSource, NftHolding, NftQuery, QueryService, TokenInfo,
};
use crate::types::{self, iso8601_ms, Chain};

/// How `Nft.tokenId` is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Enum)]
pub enum TokenIdFormat {
    /// Decimal digits, e.g. `1234` (the default).
    #[default]
    Decimal,
    /// `0x`-prefixed lowercase hex without leading zeros, e.g. `0x4d2`.
    Hex,
}

impl From<TokenIdFormat> for types::TokenIdFormat {
    fn from(f: TokenIdFormat) -> Self {
        match f {
            TokenIdFormat::Decimal => types::TokenIdFormat::Decimal,
            TokenIdFormat::Hex => types::TokenIdFormat::Hex,
        }
    }
}

/// The token standard a contract implements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Enum)]
pub enum ContractType {
    /// A fungible token.
    #[graphql(name = "ERC20")]
    Erc20,
    /// A non-fungible token: each token id has one owner.
    #[graphql(name = "ERC721")]
    Erc721,
    /// A multi-token: each token id has balances, held by many owners.
    #[graphql(name = "ERC1155")]
    Erc1155,
}

impl ContractType {
    fn parse(s: &str) -> Option<Self> {
        match s {
            "ERC20" => Some(ContractType::Erc20),
            "ERC721" => Some(ContractType::Erc721),
            "ERC1155" => Some(ContractType::Erc1155),
            _ => None,
        }
    }
}

/// The `NftConnection` object.
pub struct NftConnection {
    edges: Vec<NftEdge>,
    page_info: PageInfo,
    status: SyncStatus,
    total: Option<u64>,
}

/// One page of the NFTs a wallet holds, ordered by `tokenAddress` then `tokenId` ascending.
#[Object]
impl NftConnection {
    /// The NFTs of this page, each with the cursor that resumes right after it.
    async fn edges(&self) -> &[NftEdge] {
        &self.edges
    }

    /// Whether more pages follow, and the cursors to get them.
    async fn page_info(&self) -> &PageInfo {
        &self.page_info
    }

    /// `SYNCED` once the wallet's history is complete (or, with `tokenAddresses`, every named
    /// collection's) and the indexer is caught up; otherwise `SYNCING`, and the first such
    /// request schedules the missing history. While `SYNCING`, only holdings that cannot be
    /// made up by a partial history are shown.
    async fn status(&self) -> SyncStatus {
        self.status
    }

    /// How many NFTs match the filters, over all pages. Counted (one more statement) only when
    /// selected.
    async fn total_count(&self) -> Result<i32, GqlError> {
        let total = self.total.ok_or_else(|| {
            tracing::error!("totalCount resolved without having been counted");
            GqlError::internal()
        })?;
        i32::try_from(total).map_err(|_| {
            tracing::error!(total, "totalCount does not fit a GraphQL Int");
            GqlError::internal()
        })
    }
}

/// The `NftEdge` object.
pub struct NftEdge {
    key: Vec<String>,
    mint: Arc<CursorMint>,
    node: Nft,
}

/// An NFT with its cursor.
#[Object]
impl NftEdge {
    /// Pass as `after` to get the NFTs that follow this one.
    async fn cursor(&self) -> String {
        self.mint.cursor(&self.key)
    }

    /// The NFT.
    async fn node(&self) -> &Nft {
        &self.node
    }
}

/// The `Nft` object: a holding, with the loader of its related data.
pub struct Nft {
    holding: NftHolding,
    chain: Chain,
    format: types::TokenIdFormat,
    related: Arc<Related>,
    contract: Preloaded<ContractInfo>,
    token: Preloaded<TokenInfo>,
    /// Its preview media, when selected and its metadata is fetched; and the links' base.
    media: Option<(MediaInfo, Arc<str>)>,
}

impl Nft {
    async fn contract(&self) -> Result<Option<Arc<ContractInfo>>, GqlError> {
        match &self.contract {
            Some(c) => Ok(c.clone()),
            None => self.related.contract(self.holding.contract).await,
        }
    }

    async fn token(&self) -> Result<Option<Arc<TokenInfo>>, GqlError> {
        match &self.token {
            Some(t) => Ok(t.clone()),
            None => {
                self.related
                    .token(self.holding.contract, self.holding.token_id)
                    .await
            }
        }
    }
}

/// An NFT held by a wallet: one token id of one collection, with the amount held.
#[Object]
impl Nft {
    /// The address of the collection's contract.
    async fn token_address(&self) -> Address {
        self.holding.contract.into()
    }

    /// The token id, exact, in the `tokenIdFormat` of the query: decimal digits (default) or
    /// `0x` hex.
    async fn token_id(&self) -> String {
        match self.format {
            types::TokenIdFormat::Decimal => self.holding.token_id.to_decimal(),
            types::TokenIdFormat::Hex => self.holding.token_id.to_hex(),
        }
    }

    /// `ERC721` or `ERC1155`.
    async fn contract_type(&self) -> Result<ContractType, GqlError> {
        ContractType::parse(&self.holding.contract_type).ok_or_else(|| {
            tracing::error!(
                contract_type = %self.holding.contract_type,
                contract = %self.holding.contract,
                "stored NFT holding has an unknown contract type"
            );
            GqlError::internal()
        })
    }

    /// The wallet holding it.
    async fn owner_of(&self) -> Address {
        self.holding.owner.into()
    }

    /// How many of this token the wallet holds (always `1` for ERC721).
    async fn amount(&self) -> Uint256 {
        self.holding.amount.into()
    }

    /// The block at which the wallet acquired it.
    async fn block_number(&self) -> BlockNumber {
        self.holding.block_number.into()
    }

    /// The block at which the token was minted, when known.
    async fn block_number_minted(&self) -> Result<Option<BlockNumber>, GqlError> {
        Ok(self
            .token()
            .await?
            .and_then(|t| t.block_number_minted)
            .map(BlockNumber::from))
    }

    /// The token's metadata URI, when known.
    async fn token_uri(&self) -> Result<Option<String>, GqlError> {
        Ok(self.token().await?.and_then(|t| t.token_uri.clone()))
    }

    /// The token's metadata, a JSON document as a string, when fetched.
    async fn metadata(&self) -> Result<Option<String>, GqlError> {
        Ok(self.token().await?.and_then(|t| t.metadata.clone()))
    }

    /// The collection's name, when known.
    async fn name(&self) -> Result<Option<String>, GqlError> {
        Ok(self.contract().await?.and_then(|c| c.name.clone()))
    }

    /// The collection's symbol, when known.
    async fn symbol(&self) -> Result<Option<String>, GqlError> {
        Ok(self.contract().await?.and_then(|c| c.symbol.clone()))
    }

    /// A stable identifier of the token (chain, contract and token id): 32 hex digits.
    async fn token_hash(&self) -> String {
        self.holding.token_hash(self.chain)
    }

    /// The address that minted the token, when known.
    async fn minter_address(&self) -> Result<Option<String>, GqlError> {
        Ok(self.token().await?.and_then(|t| t.minter_address.clone()))
    }

    /// Whether the collection is flagged as possible spam.
    async fn possible_spam(&self) -> Result<bool, GqlError> {
        Ok(self.contract().await?.is_some_and(|c| c.possible_spam))
    }

    /// Whether the collection is verified.
    async fn verified_collection(&self) -> Result<bool, GqlError> {
        Ok(self.contract().await?.is_some_and(|c| c.verified))
    }

    /// When the token URI was last fetched: ISO 8601 UTC with milliseconds.
    async fn last_token_uri_sync(&self) -> Result<Option<String>, GqlError> {
        Ok(self
            .token()
            .await?
            .and_then(|t| t.last_token_uri_sync)
            .map(iso8601_ms))
    }

    /// When the metadata was last fetched: ISO 8601 UTC with milliseconds.
    async fn last_metadata_sync(&self) -> Result<Option<String>, GqlError> {
        Ok(self
            .token()
            .await?
            .and_then(|t| t.last_metadata_sync)
            .map(iso8601_ms))
    }

    /// Preview media of the token's image: its status and, once made, links to 100, 250 and
    /// 500 px PNG previews. The first request for an image queues it (`PROCESSING`); `null`
    /// while the token's metadata is not fetched.
    async fn media(&self) -> Option<NftMedia> {
        self.media
            .as_ref()
            .map(|(info, base)| NftMedia::new(info.clone(), base))
    }
}

/// Node fields answered from the contract's metadata.
const CONTRACT_FIELDS: &[&str] = &["name", "symbol", "possibleSpam", "verifiedCollection"];
/// Node fields answered from the token row.
const TOKEN_FIELDS: &[&str] = &[
    "blockNumberMinted",
    "tokenUri",
    "metadata",
    "minterAddress",
    "lastTokenUriSync",
    "lastMetadataSync",
    "media",
];

/// Runs `nftsByWallet`: one page from the query service, then one batch per kind of related data
/// the selection needs. `q.with_total` is set here, from the selection.
pub async fn resolve(
    ctx: &Context<'_>,
    service: &QueryService,
    mut q: NftQuery,
    after: Option<&str>,
    format: types::TokenIdFormat,
) -> Result<NftConnection, GqlError> {
    let look = ctx.look_ahead();
    q.with_total = look.field("totalCount").exists();
    let page = service.nfts_by_wallet(&q, after).await?;

    let related = Related::new(service.clone(), q.chain);
    let node = look.field("edges").field("node");
    let wants = |fields: &[&str]| fields.iter().any(|f| node.field(f).exists());
    let contracts: Vec<ContractKey> = if wants(CONTRACT_FIELDS) {
        page.edges
            .iter()
            .map(|e| ContractKey(e.node.contract))
            .collect()
    } else {
        Vec::new()
    };
    let tokens: Vec<TokenKey> = if wants(TOKEN_FIELDS) {
        page.edges
            .iter()
            .map(|e| TokenKey(e.node.contract, e.node.token_id))
            .collect()
    } else {
        Vec::new()
    };
    let (contracts, tokens) = try_join(related.prime(contracts), related.prime(tokens)).await?;
    // A key the page did not prime is absent (`None`): the node then asks the loader.
    let contract_of = |h: &NftHolding| contracts.get(&ContractKey(h.contract)).cloned();
    let token_of = |h: &NftHolding| tokens.get(&TokenKey(h.contract, h.token_id)).cloned();

    // Preview media: one batch for the page, from the token rows just loaded.
    let mut media = HashMap::new();
    if node.field("media").exists() {
        let mut sources = Vec::with_capacity(page.edges.len());
        for e in &page.edges {
            let h = &e.node;
            let t = match token_of(h) {
                Some(t) => t,
                None => related.token(h.contract, h.token_id).await?,
            };
            let source = MediaSource {
                token_id: h.token_id,
                erc1155: h.contract_type == "ERC1155",
                metadata: t.as_ref().and_then(|t| t.metadata.clone()),
                metadata_synced_at: t.as_ref().and_then(|t| t.last_metadata_sync),
            };
            sources.push(((h.contract, h.token_id), source));
        }
        media = service.media(sources).await?;
    }
    let base: Arc<str> = ctx
        .data_opt::<MediaBase>()
        .map(|b| b.0.as_str())
        .unwrap_or_default()
        .into();

    let page_info = PageInfo::from(&page);
    let edges = page
        .edges
        .into_iter()
        .map(|e| NftEdge {
            key: e.key,
            mint: page.mint.clone(),
            node: Nft {
                media: media
                    .get(&(e.node.contract, e.node.token_id))
                    .map(|m| (m.clone(), base.clone())),
                contract: contract_of(&e.node),
                token: token_of(&e.node),
                holding: e.node,
                chain: q.chain,
                format,
                related: related.clone(),
            },
        })
        .collect();
    Ok(NftConnection {
        edges,
        page_info,
        status: page.status.into(),
        total: page.total,
    })
}
