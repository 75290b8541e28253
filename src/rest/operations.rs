//! Every operation of the Moralis EVM Data API (v2.2), and whether tokenql serves it: the one
//! list that `GET /info/endpointWeights` ([`super::utils`]) answers from, that gives each
//! operation tokenql does not serve its `501` route ([`super::unserved`]), and that the
//! README's compatibility table mirrors (`tests/api/moralis_routes.rs` checks both).
//!
//! Paths are Moralis's, relative to the version prefix, with `{name}` path parameters.

/// Whether tokenql answers an operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Support {
    /// Served from the indexed data (or the chain's RPC endpoint).
    Served,
    /// Answerable from the indexed data, not built yet: a `501` until it is.
    Planned,
    /// Not answerable from what tokenql indexes: a `501` naming the reason.
    Unserved(&'static str),
}

/// One Moralis operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Operation {
    /// Moralis's operation id (`getWalletNFTs`).
    pub id: &'static str,
    /// The HTTP method, upper case.
    pub method: &'static str,
    /// Moralis's path, relative to the version prefix (`/{address}/nft`).
    pub path: &'static str,
    /// Whether tokenql serves it.
    pub support: Support,
}

impl Operation {
    /// The answer of a `501` route: the operation, and why it is not served.
    pub fn not_served_message(&self) -> String {
        let why = match self.support {
            Support::Served => "it is served",
            Support::Planned => "it is answerable from the indexed data and not built yet",
            Support::Unserved(why) => why,
        };
        format!(
            "{} ({} {}) is not served by tokenql: {why}",
            self.id, self.method, self.path
        )
    }

    /// The path as Moralis's `endpointWeights` writes it: `:name` path parameters.
    pub fn colon_path(&self) -> String {
        self.path
            .split('/')
            .map(
                |s| match s.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
                    Some(name) => format!(":{name}"),
                    None => s.to_string(),
                },
            )
            .collect::<Vec<_>>()
            .join("/")
    }
}

const PRICES: &str = "token and NFT prices need market data (DEX pools, marketplaces, price \
feeds), which tokenql does not index";
const SWAPS: &str = "swaps, pairs and liquidity need DEX pool events, which tokenql does not \
index";
const DEFI: &str = "DeFi positions need protocol state, which tokenql does not index";
const TRANSACTIONS: &str = "tokenql indexes token transfer logs, not transactions, internal \
transactions or arbitrary logs";
const MARKET: &str = "market data, analytics and discovery need prices and trading volume, \
which tokenql does not index";
const ENS: &str = "ENS and Unstoppable Domains resolution needs name-service state, which \
tokenql does not index";
const NFT_TRADES: &str = "NFT trades and prices need marketplace events, which tokenql does not \
index";
const APPROVALS: &str = "allowances and approvals need Approval events, which tokenql does not \
index";
const PNL: &str = "profitability needs prices, which tokenql does not index";
const CALLS: &str = "contract calls and reviews are not part of tokenql's indexed data";
const IPFS: &str = "uploads to IPFS are not part of an indexer";
const ENTITIES: &str = "entities and labels of organizations are not part of tokenql's data \
(it serves address labels on transfer records)";

/// Shorthand for the table below.
const fn op(id: &'static str, method: &'static str, path: &'static str, s: Support) -> Operation {
    Operation {
        id,
        method,
        path,
        support: s,
    }
}

use Support::{Served, Unserved};

/// Every operation of the Moralis EVM Data API v2.2, by group.
#[rustfmt::skip]
pub const OPERATIONS: &[Operation] = &[
    // Wallets.
    op("getWalletNFTs", "GET", "/{address}/nft", Served),
    op("getWalletNFTTransfers", "GET", "/{address}/nft/transfers", Served),
    op("getWalletNFTCollections", "GET", "/{address}/nft/collections", Served),
    op("getWalletTokenBalances", "GET", "/{address}/erc20", Served),
    op("getWalletTokenTransfers", "GET", "/{address}/erc20/transfers", Served),
    op("getNativeBalance", "GET", "/{address}/balance", Served),
    op("getNativeBalancesForAddresses", "GET", "/wallets/balances", Served),
    op("getWalletActiveChains", "GET", "/wallets/{address}/chains", Served),
    op("getWalletStats", "GET", "/wallets/{address}/stats", Served),
    op("getWalletTransactions", "GET", "/{address}", Unserved(TRANSACTIONS)),
    op("getWalletTransactionsVerbose", "GET", "/{address}/verbose", Unserved(TRANSACTIONS)),
    op("getWalletHistory", "GET", "/wallets/{address}/history", Unserved(TRANSACTIONS)),
    op("getWalletTokenBalancesPrice", "GET", "/wallets/{address}/tokens", Unserved(PRICES)),
    op("getWalletNetWorth", "GET", "/wallets/{address}/net-worth", Unserved(PRICES)),
    op("getWalletApprovals", "GET", "/wallets/{address}/approvals", Unserved(APPROVALS)),
    op("getWalletProfitabilitySummary", "GET", "/wallets/{address}/profitability/summary", Unserved(PNL)),
    op("getWalletProfitability", "GET", "/wallets/{address}/profitability", Unserved(PNL)),
    op("getSwapsByWalletAddress", "GET", "/wallets/{address}/swaps", Unserved(SWAPS)),
    op("getDefiSummary", "GET", "/wallets/{address}/defi/summary", Unserved(DEFI)),
    op("getDefiPositionsSummary", "GET", "/wallets/{address}/defi/positions", Unserved(DEFI)),
    op("getDefiPositionsByProtocol", "GET", "/wallets/{address}/defi/{protocol}/positions", Unserved(DEFI)),
    op("getNFTTradesByWallet", "GET", "/wallets/{address}/nfts/trades", Unserved(NFT_TRADES)),
    // NFTs.
    op("getContractNFTs", "GET", "/nft/{address}", Served),
    op("getNFTContractTransfers", "GET", "/nft/{address}/transfers", Served),
    op("getNFTOwners", "GET", "/nft/{address}/owners", Served),
    op("getNFTTokenIdOwners", "GET", "/nft/{address}/{token_id}/owners", Served),
    op("getNFTMetadata", "GET", "/nft/{address}/{token_id}", Served),
    op("getNFTTransfers", "GET", "/nft/{address}/{token_id}/transfers", Served),
    op("getNFTTransfersFromToBlock", "GET", "/nft/transfers", Served),
    op("getNFTTransfersByBlock", "GET", "/block/{block_number_or_hash}/nft/transfers", Served),
    op("getMultipleNFTs", "POST", "/nft/getMultipleNFTs", Served),
    op("getNFTContractMetadata", "GET", "/nft/{address}/metadata", Served),
    op("getNFTBulkContractMetadata", "POST", "/nft/metadata", Served),
    op("getUniqueOwnersByCollection", "GET", "/nft/{address}/unique-owners", Served),
    op("getNFTCollectionStats", "GET", "/nft/{address}/stats", Served),
    op("getNFTTokenStats", "GET", "/nft/{address}/{token_id}/stats", Served),
    op("syncNFTContract", "PUT", "/nft/{address}/sync", Served),
    op("reSyncMetadata", "GET", "/nft/{address}/{token_id}/metadata/resync", Served),
    op("getNFTTraitsByCollection", "GET", "/nft/{address}/traits", Served),
    op("getNFTTraitsByCollectionPaginate", "GET", "/nft/{address}/traits/paginate", Served),
    op("resyncNFTRarity", "GET", "/nft/{address}/traits/resync", Served),
    op("getNFTByContractTraits", "POST", "/nft/{address}/nfts-by-traits", Served),
    op("getNFTTrades", "GET", "/nft/{address}/trades", Unserved(NFT_TRADES)),
    op("getNFTTradesByToken", "GET", "/nft/{address}/{token_id}/trades", Unserved(NFT_TRADES)),
    op("getNFTLowestPrice", "GET", "/nft/{address}/lowestprice", Unserved(NFT_TRADES)),
    op("getNFTContractSalePrices", "GET", "/nft/{address}/price", Unserved(NFT_TRADES)),
    op("getNFTSalePrices", "GET", "/nft/{address}/{token_id}/price", Unserved(NFT_TRADES)),
    op("getNFTFloorPriceByContract", "GET", "/nft/{address}/floor-price", Unserved(NFT_TRADES)),
    op("getNFTFloorPriceByToken", "GET", "/nft/{address}/{token_id}/floor-price", Unserved(NFT_TRADES)),
    op("getNFTHistoricalFloorPriceByContract", "GET", "/nft/{address}/floor-price/historical", Unserved(NFT_TRADES)),
    // Tokens.
    op("getErc20Transfers", "GET", "/erc20/transfers", Served),
    op("getTokenTransfers", "GET", "/erc20/{address}/transfers", Served),
    op("getTokenMetadata", "GET", "/erc20/metadata", Served),
    op("getTokenMetadataBySymbol", "GET", "/erc20/metadata/symbols", Served),
    op("getTokenOwners", "GET", "/erc20/{token_address}/owners", Served),
    op("getTokenStats", "GET", "/erc20/{address}/stats", Served),
    op("getTokenPrice", "GET", "/erc20/{address}/price", Unserved(PRICES)),
    op("getMultipleTokenPrices", "POST", "/erc20/prices", Unserved(PRICES)),
    op("getTokenAllowance", "GET", "/erc20/{address}/allowance", Unserved(APPROVALS)),
    op("getSwapsByTokenAddress", "GET", "/erc20/{address}/swaps", Unserved(SWAPS)),
    op("getTokenPairs", "GET", "/erc20/{token_address}/pairs", Unserved(SWAPS)),
    op("getAggregatedTokenPairStats", "GET", "/erc20/{token_address}/pairs/stats", Unserved(SWAPS)),
    op("getTokenHolderStats", "GET", "/erc20/{token_address}/holders", Unserved(MARKET)),
    op("getHistoricalTokenHolders", "GET", "/erc20/{token_address}/holders/historical", Unserved(MARKET)),
    op("getTopProfitableWalletPerToken", "GET", "/erc20/{address}/top-gainers", Unserved(PNL)),
    op("getTokenAnalytics", "GET", "/tokens/{address}/analytics", Unserved(MARKET)),
    op("getMultipleTokenAnalytics", "POST", "/tokens/analytics", Unserved(MARKET)),
    op("getTokenScore", "GET", "/tokens/{tokenAddress}/score", Unserved(MARKET)),
    op("getTrendingTokens", "GET", "/tokens/trending", Unserved(MARKET)),
    op("searchTokens", "GET", "/tokens/search", Unserved(MARKET)),
    // DEX pairs.
    op("getPairReserves", "GET", "/{pair_address}/reserves", Unserved(SWAPS)),
    op("getPairAddress", "GET", "/{token0_address}/{token1_address}/pairAddress", Unserved(SWAPS)),
    op("getPairPrice", "GET", "/{token0_address}/{token1_address}/price", Unserved(PRICES)),
    op("getSwapsByPairAddress", "GET", "/pairs/{address}/swaps", Unserved(SWAPS)),
    op("getPairStats", "GET", "/pairs/{address}/stats", Unserved(SWAPS)),
    op("getPairCandlesticks", "GET", "/pairs/{address}/ohlcv", Unserved(SWAPS)),
    op("getSnipersByPairAddress", "GET", "/pairs/{address}/snipers", Unserved(SWAPS)),
    // Market data and discovery.
    op("getTopERC20TokensByMarketCap", "GET", "/market-data/erc20s/top-tokens", Unserved(MARKET)),
    op("getTopERC20TokensByPriceMovers", "GET", "/market-data/erc20s/top-movers", Unserved(MARKET)),
    op("getTopNFTCollectionsByMarketCap", "GET", "/market-data/nfts/top-collections", Unserved(MARKET)),
    op("getHottestNFTCollectionsByTradingVolume", "GET", "/market-data/nfts/hottest-collections", Unserved(MARKET)),
    op("getTopCryptoCurrenciesByMarketCap", "GET", "/market-data/global/market-cap", Unserved(MARKET)),
    op("getTopCryptoCurrenciesByTradingVolume", "GET", "/market-data/global/volume", Unserved(MARKET)),
    op("getTokenDetails", "GET", "/discovery/token", Unserved(MARKET)),
    op("getFilteredTokens", "POST", "/discovery/tokens", Unserved(MARKET)),
    op("getTopGainersTokens", "GET", "/discovery/tokens/top-gainers", Unserved(MARKET)),
    op("getTopLosersTokens", "GET", "/discovery/tokens/top-losers", Unserved(MARKET)),
    op("getRisingLiquidityTokens", "GET", "/discovery/tokens/rising-liquidity", Unserved(MARKET)),
    op("getBuyingPressureTokens", "GET", "/discovery/tokens/buying-pressure", Unserved(MARKET)),
    op("getSolidPerformersTokens", "GET", "/discovery/tokens/solid-performers", Unserved(MARKET)),
    op("getExperiencedBuyersTokens", "GET", "/discovery/tokens/experienced-buyers", Unserved(MARKET)),
    op("getRiskyBetsTokens", "GET", "/discovery/tokens/risky-bets", Unserved(MARKET)),
    op("getBlueChipTokens", "GET", "/discovery/tokens/blue-chip", Unserved(MARKET)),
    // Entities.
    op("searchEntities", "GET", "/entities/search", Unserved(ENTITIES)),
    op("getEntity", "GET", "/entities/{entityId}", Unserved(ENTITIES)),
    op("getEntityCategories", "GET", "/entities/categories", Unserved(ENTITIES)),
    op("getEntitiesByCategory", "GET", "/entities/categories/{categoryId}", Unserved(ENTITIES)),
    // Blocks and transactions.
    op("getLatestBlockNumber", "GET", "/latestBlockNumber/{chain}", Served),
    op("getDateToBlock", "GET", "/dateToBlock", Served),
    op("getBlock", "GET", "/block/{block_number_or_hash}", Unserved(TRANSACTIONS)),
    op("getBlockStats", "GET", "/block/{block_number_or_hash}/stats", Unserved(TRANSACTIONS)),
    op("getTransaction", "GET", "/transaction/{transaction_hash}", Unserved(TRANSACTIONS)),
    op("getTransactionVerbose", "GET", "/transaction/{transaction_hash}/verbose", Unserved(TRANSACTIONS)),
    op("getInternalTransactions", "GET", "/transaction/{transaction_hash}/internal-transactions", Unserved(TRANSACTIONS)),
    op("getContractLogs", "GET", "/{address}/logs", Unserved(TRANSACTIONS)),
    op("getContractEvents", "POST", "/{address}/events", Unserved(TRANSACTIONS)),
    // Name resolution.
    op("resolveAddress", "GET", "/resolve/{address}/reverse", Unserved(ENS)),
    op("resolveDomain", "GET", "/resolve/{domain}", Unserved(ENS)),
    op("resolveENSDomain", "GET", "/resolve/ens/{domain}", Unserved(ENS)),
    op("resolveAddressToDomain", "GET", "/resolve/{address}/domain", Unserved(ENS)),
    // Utilities.
    op("web3ApiVersion", "GET", "/web3/version", Served),
    op("endpointWeights", "GET", "/info/endpointWeights", Served),
    op("runContractFunction", "POST", "/{address}/function", Unserved(CALLS)),
    op("reviewContracts", "POST", "/contracts-review", Unserved(CALLS)),
    op("uploadFolder", "POST", "/ipfs/uploadFolder", Unserved(IPFS)),
];

/// The operations tokenql serves.
pub fn served() -> impl Iterator<Item = &'static Operation> {
    OPERATIONS.iter().filter(|o| o.support == Support::Served)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_routes_are_unique() {
        let mut ids: Vec<&str> = OPERATIONS.iter().map(|o| o.id).collect();
        ids.sort_unstable();
        let n = ids.len();
        ids.dedup();
        assert_eq!(ids.len(), n, "an operation id is listed twice");
        let mut routes: Vec<(&str, &str)> = OPERATIONS.iter().map(|o| (o.method, o.path)).collect();
        routes.sort_unstable();
        routes.dedup();
        assert_eq!(routes.len(), n, "a route is listed twice");
    }

    #[test]
    fn colon_paths() {
        let op = OPERATIONS
            .iter()
            .find(|o| o.id == "getNFTTokenIdOwners")
            .copied();
        assert_eq!(
            op.map(|o| o.colon_path()).as_deref(),
            Some("/nft/:address/:token_id/owners")
        );
    }
}
