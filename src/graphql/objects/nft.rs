//! NFT holdings: `Nft` (one token held by one wallet), `NftConnection` (`nftsByWallet`,
//! `Wallet.nfts`), and the holdings page builder shared with the owners connections
//! ([`holdings`]).

use std::borrow::Cow;
use std::sync::Arc;

use async_graphql::{Context, Object};

use super::collection_meta::CollectionMeta;
use super::media::{self, NftMedia};
use crate::graphql::connection::{Connection, Edge, Listed, PageInfo, SyncStatus};
use crate::graphql::enums::{format_id, ContractType};
use crate::graphql::error::GqlError;
use crate::graphql::fast_path::plain::{nullable, text, Leaf, PlainEdges, PlainNode};
use crate::graphql::loaders::{include, Primed};
use crate::graphql::scalars::{Address, BlockNumber, Uint256};
use crate::query::{Answer, Include, NftHolding, NftQuery, QueryService, TokenInfo};
use crate::types::{self, iso8601_ms, Chain};

/// The `NftConnection` object: a wallet's NFTs, with their count.
pub struct NftConnection {
    inner: Connection<Nft>,
    total: Option<u64>,
}

/// One page of the NFTs a wallet holds, ordered by `tokenAddress` then `tokenId` ascending.
#[Object]
impl NftConnection {
    /// The NFTs of this page, each with the cursor that resumes right after it.
    async fn edges(&self) -> PlainEdges<'_, Edge<Nft>> {
        PlainEdges(&self.inner.edges)
    }

    /// Whether more pages follow, and the cursors to get them.
    async fn page_info(&self) -> &PageInfo {
        &self.inner.page_info
    }

    /// `SYNCED` once the wallet's history is complete (or, with `tokenAddresses`, every named
    /// collection's) and the indexer is caught up; otherwise `SYNCING`, and the first such
    /// request schedules the missing history. While `SYNCING`, only holdings that cannot be
    /// made up by a partial history are shown.
    async fn status(&self) -> SyncStatus {
        self.inner.status
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

/// The `Nft` object: a holding, with the related rows of its page.
pub struct Nft {
    holding: NftHolding,
    chain: Chain,
    format: types::TokenIdFormat,
    primed: Arc<Primed>,
    /// The base of preview links.
    base: Arc<str>,
}

impl Listed for Nft {
    const CONNECTION: &'static str = "NftOwnerConnection";
    const EDGE: &'static str = "NftEdge";
}

impl PlainNode for Nft {
    /// Every field but `media`, as the resolvers below answer it, once its rows were read with
    /// the page.
    fn plain(&self, name: &str) -> Option<Leaf<'_>> {
        let h = &self.holding;
        let rows = self.primed.rows();
        let contract = || rows.contract_read(h.contract);
        let token = || rows.token_read(h.contract, h.token_id);
        Some(match name {
            "tokenAddress" => Leaf::from(h.contract),
            "tokenId" => match self.format {
                types::TokenIdFormat::Decimal => Leaf::Decimal(h.token_id),
                types::TokenIdFormat::Hex => text(h.token_id.to_hex()),
            },
            "contractType" => Leaf::Enum(h.contract_type.as_str()),
            "ownerOf" => Leaf::from(h.owner),
            "amount" => Leaf::Decimal(h.amount),
            "blockNumber" => Leaf::from(h.block_number),
            "blockNumberMinted" => {
                nullable(token()?.and_then(|t| t.block_number_minted), Leaf::from)
            }
            "tokenUri" => opt_text(token()?.and_then(|t| t.token_uri.as_ref())),
            "metadata" => opt_text(token()?.and_then(|t| t.metadata.as_ref())),
            "name" => opt_text(contract()?.and_then(|c| c.name.as_ref())),
            "symbol" => opt_text(contract()?.and_then(|c| c.symbol.as_ref())),
            "tokenHash" => text(h.token_hash(self.chain)),
            "minterAddress" => opt_text(token()?.and_then(|t| t.minter_address.as_ref())),
            "possibleSpam" => Leaf::from(contract()?.is_some_and(|c| c.possible_spam)),
            "verifiedCollection" => Leaf::from(contract()?.is_some_and(|c| c.verified)),
            "lastTokenUriSync" => {
                nullable(token()?.and_then(|t| t.last_token_uri_sync), Leaf::Millis)
            }
            "lastMetadataSync" => {
                nullable(token()?.and_then(|t| t.last_metadata_sync), Leaf::Millis)
            }
            _ => return None,
        })
    }
}

/// An optional text as a nullable value.
fn opt_text(v: Option<&String>) -> Leaf<'_> {
    nullable(v, |s| text(s.as_str()))
}

impl Nft {
    async fn token(&self) -> Result<Option<Cow<'_, TokenInfo>>, GqlError> {
        self.primed
            .token(self.holding.contract, self.holding.token_id)
            .await
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
        format_id(&self.holding.token_id, self.format)
    }

    /// `ERC721` or `ERC1155`.
    async fn contract_type(&self) -> Result<ContractType, GqlError> {
        Ok(self.holding.contract_type.into())
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

    /// `name`, `symbol`, `possibleSpam`, `verifiedCollection`: [`CollectionMeta`].
    #[graphql(flatten)]
    async fn collection_meta(&self) -> CollectionMeta {
        CollectionMeta::new(&self.primed, self.holding.contract)
    }

    /// A stable identifier of the token (chain, contract and token id): 32 hex digits.
    async fn token_hash(&self) -> String {
        self.holding.token_hash(self.chain)
    }

    /// The address that minted the token, when known.
    async fn minter_address(&self) -> Result<Option<String>, GqlError> {
        Ok(self.token().await?.and_then(|t| t.minter_address.clone()))
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
        let h = &self.holding;
        let info = self.primed.media(h.contract, h.token_id)?;
        Some(NftMedia::new(info.clone(), &self.base))
    }
}

/// Node fields answered from the contract's metadata.
pub const CONTRACT_FIELDS: &[&str] = &["name", "symbol", "possibleSpam", "verifiedCollection"];
/// Node fields answered from the token row.
pub const TOKEN_FIELDS: &[&str] = &[
    "blockNumberMinted",
    "tokenUri",
    "metadata",
    "minterAddress",
    "lastTokenUriSync",
    "lastMetadataSync",
    "media",
];

/// The related rows the selection of a holdings connection's `edges.node` shows.
pub fn wants(ctx: &Context<'_>) -> Include {
    let node = ctx.look_ahead().field("edges").field("node");
    include(&node, CONTRACT_FIELDS, TOKEN_FIELDS, &[])
}

/// The connection of an answer of holdings (`nftsByWallet`, `Wallet.nfts`, the owners lists),
/// asked with [`wants`]: its nodes read the answer's rows.
pub fn holdings(
    ctx: &Context<'_>,
    service: &QueryService,
    chain: Chain,
    answer: Answer<NftHolding>,
    format: types::TokenIdFormat,
) -> Connection<Nft> {
    let primed = Primed::new(service, chain, answer.related);
    let base = media::base(ctx);
    Connection::from_page(answer.page, |holding| Nft {
        holding,
        chain,
        format,
        primed: primed.clone(),
        base: base.clone(),
    })
}

/// Runs `nftsByWallet` (and `Wallet.nfts`): one answer from the query service, then
/// [`holdings`]. `q.with_total` is set here, from the selection.
pub async fn resolve(
    ctx: &Context<'_>,
    service: &QueryService,
    mut q: NftQuery,
    after: Option<&str>,
    format: types::TokenIdFormat,
) -> Result<NftConnection, GqlError> {
    q.with_total = ctx.look_ahead().field("totalCount").exists();
    let answer = service.nfts_by_wallet(&q, after, wants(ctx)).await?;
    let total = answer.page.total;
    let inner = holdings(ctx, service, q.chain, answer, format);
    Ok(NftConnection { inner, total })
}
