//! REST v2: thin shims over the query service, drop-in compatible with the two Moralis Web3
//! Data API v2 routes (see `docs/API.md`).
//!
//! - `GET /{address}/nft` ([`nft`]): the NFTs a wallet owns.
//! - `GET /erc20/transfers` ([`transfers`]): ERC20 transfers; deprecated upstream, so every
//!   answer carries a `Deprecation` header (RFC 9745), errors included.
//! - `GET /{address}/erc20/transfers` and `GET /erc20/{address}/transfers`
//!   ([`token_transfers`]): a wallet's or a token's ERC20 transfers, the v2.2 routes of today's
//!   SDKs.
//! - `GET /{address}/nft/transfers` and `GET /nft/{address}/transfers` ([`nft_transfers`]): a
//!   wallet's or a collection's NFT moves (v2.2).
//! - `GET /nft/{address}/owners` and `GET /nft/{address}/{token_id}/owners` ([`owners`]): who
//!   holds a collection's tokens, or one token (v2.2).
//! - `GET /{address}/nft/collections` ([`collections`]): the collections a wallet holds (v2.2).
//! - `GET /{address}/erc20` ([`balances`]): a wallet's ERC20 balances (v2.2).
//! - `GET /nft/{address}` ([`collection_nfts`]): the tokens of a collection someone holds (v2.2);
//!   `GET /nft/{address}/{token_id}`: one of them; `GET /nft/{address}/{token_id}/transfers`
//!   ([`nft_transfers`]): one token's moves.
//! - `GET /latestBlockNumber/{chain}` and `GET /dateToBlock` ([`blocks`]): the indexed head, and
//!   the last block at or before a date.
//! - `GET /web3/version` and `GET /info/endpointWeights` ([`utils`]).
//! - `GET /erc20/metadata` and `GET /erc20/metadata/symbols` ([`token_meta`]): ERC20 metadata.
//! - `GET /erc20/{token_address}/owners` and `GET /erc20/{address}/stats` ([`token_holders`]):
//!   a token's holders by balance and its transfer count, from the balances the store keeps.
//! - `GET /{address}/balance` and `GET /wallets/balances` ([`native`]): native balances, read
//!   from the chain's JSON-RPC endpoint.
//! - `GET /nft/{address}/traits`, `…/traits/paginate`, `…/traits/resync` and `POST
//!   /nft/{address}/nfts-by-traits` ([`traits`]): a collection's traits, counted from its
//!   tokens' metadata, and the NFTs that have some.
//! - `POST /nft/getMultipleNFTs`, `GET /nft/{address}/metadata`, `POST /nft/metadata`, `GET
//!   /nft/{address}/stats` and `GET /nft/{address}/unique-owners` ([`nft_lookups`]): NFTs named
//!   one by one, and collections' metadata, counts and holders.
//! - `PUT /nft/{address}/sync` and `GET /nft/{address}/{token_id}/metadata/resync`
//!   ([`triggers`]): fetch a collection's history, or a token's metadata, again.
//! - `GET /wallets/{address}/stats` and `GET /wallets/{address}/chains` ([`wallet_lookups`]): a
//!   wallet's counts and the chains it is active on.
//! - The Moralis Streams management routes ([`streams`]), mounted at the root by `server.rs`.
//! - Every other Moralis operation ([`operations`]): a `501` naming the reason ([`unserved`]).
//!
//! Each handler does the same three things: parse the raw query string into boundary types in
//! one place ([`params`], reading each route's table in [`spec`]), call the query service once for the page and once per kind of
//! related data, and reshape the answer into the v2 envelope ([`envelope`]). Failures are one
//! [`ApiError`] whose module states the error policy. `server.rs` nests this router under
//! `/api/v2` and `/api/v2.2` behind API-key auth; unknown routes fall through to its JSON 404.

pub mod balances;
pub mod blocks;
pub mod collection_nfts;
pub mod collections;
pub mod envelope;
pub mod error;
pub mod lookup_params;
pub mod media;
pub mod native;
pub mod nft;
pub mod nft_lookups;
pub mod nft_transfers;
pub mod normalized_metadata;
pub mod openapi;
pub mod operations;
pub mod owners;
pub mod params;
pub mod schemas;
pub mod spec;
pub mod streams;
pub mod token_holders;
pub mod token_meta;
pub mod token_transfers;
pub mod traits;
pub mod transfers;
pub mod triggers;
pub mod unserved;
pub mod utils;
pub mod wallet_lookups;

use axum::middleware::map_response;
use axum::routing::{get, post, put};
use axum::Router;

use crate::app::AppState;

pub use error::ApiError;

/// Any method but `GET` (and `HEAD`) on a known route: a JSON 405.
pub(crate) async fn method_not_allowed() -> ApiError {
    ApiError::MethodNotAllowed("GET")
}

/// Any method but `POST` on a `POST` route: a JSON 405.
pub(crate) async fn post_only() -> ApiError {
    ApiError::MethodNotAllowed("POST")
}

/// Any method but `PUT` on a `PUT` route: a JSON 405.
pub(crate) async fn put_only() -> ApiError {
    ApiError::MethodNotAllowed("PUT")
}

/// The REST v2 routes, relative to the version prefix: the served ones, then a `501` for
/// every other Moralis operation.
pub fn router() -> Router<AppState> {
    served().merge(unserved::router())
}

/// The routes of the lookups: blocks, utilities, token metadata, native balances.
fn lookups() -> Router<AppState> {
    Router::new()
        .route(
            "/latestBlockNumber/{chain}",
            get(blocks::latest_block_number).fallback(method_not_allowed),
        )
        .route(
            "/dateToBlock",
            get(blocks::date_to_block).fallback(method_not_allowed),
        )
        .route(
            "/web3/version",
            get(utils::web3_version).fallback(method_not_allowed),
        )
        .route(
            "/info/endpointWeights",
            get(utils::endpoint_weights).fallback(method_not_allowed),
        )
        .route(
            "/erc20/metadata",
            get(token_meta::token_metadata).fallback(method_not_allowed),
        )
        .route(
            "/erc20/metadata/symbols",
            get(token_meta::token_metadata_by_symbol).fallback(method_not_allowed),
        )
        .route(
            "/{address}/balance",
            get(native::native_balance).fallback(method_not_allowed),
        )
        .route(
            "/wallets/balances",
            get(native::native_balances).fallback(method_not_allowed),
        )
}

/// The routes of a collection's traits.
fn traits() -> Router<AppState> {
    Router::new()
        .route(
            "/nft/{address}/traits",
            get(traits::collection_traits).fallback(method_not_allowed),
        )
        .route(
            "/nft/{address}/traits/paginate",
            get(traits::collection_traits_page).fallback(method_not_allowed),
        )
        .route(
            "/nft/{address}/traits/resync",
            get(traits::resync_traits).fallback(method_not_allowed),
        )
        .route(
            "/nft/{address}/nfts-by-traits",
            post(traits::nfts_by_traits).fallback(post_only),
        )
}

/// The routes of the collection, NFT and wallet lookups and of the two triggers.
fn collection_lookups() -> Router<AppState> {
    Router::new()
        .route(
            "/nft/getMultipleNFTs",
            post(nft_lookups::multiple_nfts).fallback(post_only),
        )
        .route(
            "/nft/metadata",
            post(nft_lookups::bulk_contract_metadata).fallback(post_only),
        )
        .route(
            "/nft/{address}/metadata",
            get(nft_lookups::contract_metadata).fallback(method_not_allowed),
        )
        .route(
            "/nft/{address}/stats",
            get(nft_lookups::collection_stats).fallback(method_not_allowed),
        )
        .route(
            "/nft/{address}/{token_id}/stats",
            get(nft_lookups::token_stats).fallback(method_not_allowed),
        )
        .route(
            "/nft/{address}/unique-owners",
            get(nft_lookups::unique_owners).fallback(method_not_allowed),
        )
        .route(
            "/nft/{address}/sync",
            put(triggers::sync_collection).fallback(put_only),
        )
        .route(
            "/nft/{address}/{token_id}/metadata/resync",
            get(triggers::resync_metadata).fallback(method_not_allowed),
        )
        .route(
            "/wallets/{address}/stats",
            get(wallet_lookups::wallet_stats).fallback(method_not_allowed),
        )
        .route(
            "/nft/transfers",
            get(nft_transfers::all_nft_transfers).fallback(method_not_allowed),
        )
        .route(
            "/block/{block_number_or_hash}/nft/transfers",
            get(nft_transfers::block_nft_transfers).fallback(method_not_allowed),
        )
        .route(
            "/wallets/{address}/chains",
            get(wallet_lookups::wallet_active_chains).fallback(method_not_allowed),
        )
}

/// The routes of a token's holders and stats (read from the kept ERC20 balances). Moralis
/// names the owners route's parameter `token_address`; sibling parameters share one name in
/// the router.
fn erc20_holders() -> Router<AppState> {
    Router::new()
        .route(
            "/erc20/{address}/owners",
            get(token_holders::token_owners).fallback(method_not_allowed),
        )
        .route(
            "/erc20/{address}/stats",
            get(token_holders::token_stats).fallback(method_not_allowed),
        )
}

/// The served routes.
fn served() -> Router<AppState> {
    lookups()
        .merge(traits())
        .merge(collection_lookups())
        .merge(erc20_holders())
        .route(
            "/{address}/nft",
            get(nft::wallet_nfts).fallback(method_not_allowed),
        )
        .route(
            "/erc20/transfers",
            get(transfers::erc20_transfers)
                .fallback(method_not_allowed)
                .layer(map_response(transfers::mark_deprecated)),
        )
        .route(
            "/{address}/erc20/transfers",
            get(token_transfers::wallet_token_transfers).fallback(method_not_allowed),
        )
        .route(
            "/erc20/{address}/transfers",
            get(token_transfers::token_transfers).fallback(method_not_allowed),
        )
        .route(
            "/{address}/nft/transfers",
            get(nft_transfers::wallet_nft_transfers).fallback(method_not_allowed),
        )
        .route(
            "/nft/{address}/transfers",
            get(nft_transfers::collection_nft_transfers).fallback(method_not_allowed),
        )
        .route(
            "/nft/{address}/owners",
            get(owners::collection_owners).fallback(method_not_allowed),
        )
        .route(
            "/nft/{address}/{token_id}/owners",
            get(owners::token_owners).fallback(method_not_allowed),
        )
        .route(
            "/{address}/erc20",
            get(balances::wallet_balances).fallback(method_not_allowed),
        )
        .route(
            "/nft/{address}",
            get(collection_nfts::collection_nfts).fallback(method_not_allowed),
        )
        .route(
            "/nft/{address}/{token_id}",
            get(collection_nfts::nft_metadata).fallback(method_not_allowed),
        )
        .route(
            "/nft/{address}/{token_id}/transfers",
            get(nft_transfers::token_nft_transfers).fallback(method_not_allowed),
        )
        .route(
            "/{address}/nft/collections",
            get(collections::wallet_collections).fallback(method_not_allowed),
        )
}
