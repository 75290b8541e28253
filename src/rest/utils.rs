//! The utility routes:
//!
//! - `GET /web3/version` (`web3ApiVersion`): `{"version"}`, tokenql's own version;
//! - `GET /info/endpointWeights` (`endpointWeights`): one record per operation tokenql serves,
//!   in Moralis's shape, from [`super::operations`].

use axum::Json;
use serde::Serialize;
use utoipa::ToSchema;

use super::operations;

/// The answer of `GET /web3/version` (`web3version`).
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = web3version)]
pub struct Web3Version {
    /// tokenql's version (the crate's).
    #[schema(example = "0.1.0")]
    pub version: &'static str,
}

/// The handler of `GET /web3/version`.
#[utoipa::path(
    get,
    path = "/web3/version",
    operation_id = "web3ApiVersion",
    tag = "Utils",
    summary = "Get API version",
    description = "The version of this tokenql server.",
    responses(
        (status = 200, description = "The server's version.", body = Web3Version),
    ),
)]
pub(super) async fn web3_version() -> Json<Web3Version> {
    Json(Web3Version {
        version: env!("CARGO_PKG_VERSION"),
    })
}

/// One served operation and what a request of it costs (`endpointWeights`).
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = endpointWeights)]
pub struct EndpointWeight {
    /// The operation id.
    #[schema(example = "getWalletNFTs")]
    pub endpoint: &'static str,
    /// Its path, relative to the version prefix, with `:name` path parameters.
    #[schema(example = "/:address/nft")]
    pub path: String,
    /// How many requests of the API key's rate limit one request takes: always `"1"`.
    #[schema(example = "1")]
    #[serde(rename = "rateLimitCost")]
    pub rate_limit_cost: &'static str,
    /// Compute units billed per request: always `"0"` (tokenql does not bill).
    #[schema(example = "0")]
    pub price: &'static str,
}

/// The handler of `GET /info/endpointWeights`.
#[utoipa::path(
    get,
    path = "/info/endpointWeights",
    operation_id = "endpointWeights",
    tag = "Utils",
    summary = "Get weights of endpoints",
    description = "One record per operation this server serves: every request takes one from \
the API key's rate limit, and none is billed.",
    responses(
        (status = 200, description = "The served operations.", body = Vec<EndpointWeight>),
    ),
)]
pub(super) async fn endpoint_weights() -> Json<Vec<EndpointWeight>> {
    Json(
        operations::served()
            .map(|op| EndpointWeight {
                endpoint: op.id,
                path: op.colon_path(),
                rate_limit_cost: "1",
                price: "0",
            })
            .collect(),
    )
}
