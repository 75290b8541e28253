//! The OpenAPI 3.1 document of the REST routes, generated from the code, and the two routes
//! that publish it: `GET /openapi.json` (the document) and `GET /docs` (a self-contained API
//! reference page that renders it, with no external assets, so it works offline).
//!
//! Where each part comes from:
//!
//! - the operations: `#[utoipa::path]` on the handlers in [`super::nft`] and
//!   [`super::transfers`] (path, operation id, description, query parameters, 200 body);
//! - the record and envelope schemas: `ToSchema` on the types the handlers serialize
//!   ([`super::nft::NftRecord`], [`super::envelope::NftEnvelope`], …), so a field added there
//!   appears here;
//! - the query parameters: each route's table in [`super::spec`] (named by a marker such as
//!   [`super::spec::WalletNfts`]), the same table [`super::params`] reads the query string
//!   through; `tests/api/openapi_doc.rs` checks that every parameter the parser accepts is
//!   documented, and `tests/api/architecture.rs` that no query parameter is described outside
//!   the tables;
//! - the chain list: the chain table of [`crate::types::Chain`];
//! - what both operations share ([`Finish`]): the `X-API-Key` security scheme, the
//!   `{"message"}` error answers, `deprecated` and the `Deprecation` header of the transfers
//!   route;
//! - last, `normalize` gives the generic envelopes their names, marks every response field as
//!   required (all are always written, `null` when missing) and unwraps doc-comment lines.
//!
//! The committed `openapi.json` at the repository root is this document, kept current by
//! `tests/api/openapi_doc.rs` (`UPDATE_OPENAPI=1` rewrites it).

use std::sync::OnceLock;

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use utoipa::openapi::path::Operation;
use utoipa::openapi::schema::{ObjectBuilder, Type};
use utoipa::openapi::security::{ApiKey, ApiKeyValue, SecurityScheme};
use utoipa::openapi::{
    ContentBuilder, Deprecated, HeaderBuilder, OpenApi as OpenApiDoc, RefOr, ResponseBuilder,
};
use utoipa::{Modify, OpenApi, ToSchema};

use super::error::ErrorBody;
use super::schemas::{AddressSchema, ChainList, OrderList, TokenIdFormatSchema};
use crate::app::AppState;

mod normalize;

/// The name of the security scheme of every operation.
pub const SECURITY_SCHEME: &str = "ApiKeyAuth";

/// The general description of the document (CommonMark).
const DESCRIPTION: &str = "\
REST routes of tokenql, drop-in compatible with the routes of the **Moralis Web3 Data API \
v2 and v2.2** that they implement: the NFTs a wallet owns; the ERC20 transfers that touched a set \
of wallets or contracts (v2); a wallet's and a token's ERC20 transfers, and a wallet's and a \
collection's NFT transfers (v2.2, with date bounds and `order`); a collection's and a token's \
owners; a wallet's collections; a collection's traits and the NFTs that have some (v2.2); and \
the lookups: the indexed head, the block at a date, \
ERC20 metadata, native balances (read from the chain's JSON-RPC endpoint), the version and the \
operations served.

- **Base paths.** The routes live under `/api/v2`; `/api/v2.2` serves exactly the same routes \
(the default base of the newest official JS SDK).
- **Authentication.** Every request carries an `X-API-Key` header (name case-insensitive). \
Keys are created with `tokenql keys create`. A missing or unknown key is a 401.
- **Values are JSON strings**, numbers included (`block_number`, `value`, `token_id`, …), \
exactly as Moralis writes them; booleans are JSON booleans; `page` and `page_size` are JSON \
integers. A missing value is `null`, never `\"\"`. uint256 values are exact decimal strings. \
Timestamps are ISO 8601 UTC with milliseconds. Addresses and hashes are lowercase `0x` hex.
- **Addresses in requests** are accepted in any letter case.
- **Lists in the query string**: repeated keys (`a=1&a=2`), brackets (`a[]=1&a[]=2`), indexed \
keys (`a[0]=1&a[1]=2`) and comma-separated values (`a=1,2`) all work.
- **Paging** is by cursor: pass the `cursor` of an answer to get the next page; it is `null` on \
the last page.
- **Webhooks (Moralis Streams).** `/streams/evm…` and `/settings` live at the server's root \
(their paths say so with a server of their own), with the same key; see the `Streams` tag.
- **Operations not served.** Every other operation of the Moralis EVM API answers at its own \
path and method with a `501` and a `{\"message\"}` naming the operation and why tokenql does not \
serve it (prices, swaps, DeFi, transactions, …); they are not listed here (`endpointWeights` lists \
what is served, the README's compatibility table everything).
- **Errors** are `{\"message\": \"...\"}`: 400 names the parameter and the rule it broke, 401 \
a missing or unknown key, 404 an unknown route (or a block the indexed data cannot name), 429 \
a rate limit (with `Retry-After`), 500 and 503 our fault (a generic message; details only in \
the server log).";

/// The document's skeleton; [`Finish`] adds what both operations share.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "tokenql REST API (Moralis Web3 Data API v2 compatible)",
        description = DESCRIPTION,
        license(name = "MIT OR Apache-2.0"),
    ),
    servers(
        (url = "/api/v2", description = "The v2 routes."),
        (url = "/api/v2.2", description = "The same routes under the base path of the newest official JS SDK."),
    ),
    paths(
        super::nft::wallet_nfts,
        super::transfers::erc20_transfers,
        super::token_transfers::wallet_token_transfers,
        super::token_transfers::token_transfers,
        super::nft_transfers::wallet_nft_transfers,
        super::nft_transfers::collection_nft_transfers,
        super::owners::collection_owners,
        super::owners::token_owners,
        super::collections::wallet_collections,
        super::balances::wallet_balances,
        super::collection_nfts::collection_nfts,
        super::collection_nfts::nft_metadata,
        super::nft_transfers::token_nft_transfers,
        super::nft_transfers::all_nft_transfers,
        super::nft_transfers::block_nft_transfers,
        super::blocks::latest_block_number,
        super::blocks::date_to_block,
        super::utils::web3_version,
        super::utils::endpoint_weights,
        super::native::native_balance,
        super::native::native_balances,
        super::token_meta::token_metadata,
        super::token_meta::token_metadata_by_symbol,
        super::traits::collection_traits,
        super::traits::collection_traits_page,
        super::traits::resync_traits,
        super::traits::nfts_by_traits,
        super::nft_lookups::multiple_nfts,
        super::nft_lookups::contract_metadata,
        super::nft_lookups::bulk_contract_metadata,
        super::nft_lookups::collection_stats,
        super::nft_lookups::token_stats,
        super::nft_lookups::unique_owners,
        super::triggers::sync_collection,
        super::triggers::resync_metadata,
        super::wallet_lookups::wallet_stats,
        super::wallet_lookups::wallet_active_chains,
        super::token_holders::token_owners,
        super::token_holders::token_stats,
        super::streams::create,
        super::streams::list,
        super::streams::get_one,
        super::streams::update,
        super::streams::delete,
        super::streams::set_status,
        super::streams::addresses,
        super::streams::add_addresses,
        super::streams::remove_addresses,
        super::streams::replay,
        super::streams::settings,
        super::streams::set_settings,
    ),
    components(schemas(AddressSchema, ChainList, TokenIdFormatSchema, OrderList, ErrorBody)),
    security(("ApiKeyAuth" = [])),
    tags(
        (name = "NFT", description = "NFTs owned by a wallet, and NFT transfers."),
        (name = "Token", description = "ERC20 token transfers."),
        (name = "Block", description = "Blocks: the indexed head, and the block at a date."),
        (name = "Balance", description = "Native balances, read from the chain's JSON-RPC endpoint."),
        (name = "Wallet", description = "A wallet's counts and the chains it is active on."),
        (name = "Utils", description = "The server's version and the operations it serves."),
        (name = "Streams", description = "Webhooks compatible with Moralis Streams: streams, their addresses, the signing secret. These routes live at the server's root, not under `/api/v2`."),
    ),
    modifiers(&Finish),
)]
struct ApiDoc;

/// Adds what both operations share: the security scheme, the error answers, the deprecation
/// of the transfers route.
struct Finish;

/// The error answers of every operation: status and when it happens.
const ERRORS: &[(&str, &str)] = &[
    (
        "400",
        "A parameter broke a rule; the message names the parameter and the rule.",
    ),
    (
        "401",
        "The `X-API-Key` header is missing, or the key is unknown or revoked.",
    ),
    (
        "404",
        "No such route (for example a path segment that is empty or holds a `/`), or, on the \
         lookups, no answer in the indexed data: an NFT, collection or block it cannot name (the \
         message says why).",
    ),
    (
        "429",
        "Too many requests; retry after `Retry-After` seconds.",
    ),
    (
        "500",
        "Our fault; the message is generic and the details are in the server log.",
    ),
    (
        "503",
        "The database is temporarily unavailable; retry later.",
    ),
];

/// The `Deprecation` header of the transfers route (RFC 9745).
fn deprecation_header() -> utoipa::openapi::Header {
    HeaderBuilder::new()
        .schema(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .examples([serde_json::json!("@1693785600")]),
        )
        .description(Some(
            "RFC 9745: this route is deprecated (upstream since 2023-09-04, written as an RFC \
             9651 date, `@` and Unix seconds). It is still served fully.",
        ))
        .build()
}

fn error_response(description: &str) -> utoipa::openapi::Response {
    let mut r = ResponseBuilder::new().description(description).content(
        "application/json",
        ContentBuilder::new()
            .schema(Some(RefOr::Ref(utoipa::openapi::Ref::from_schema_name(
                ErrorBody::name(),
            ))))
            .build(),
    );
    if description.contains("Retry-After") {
        r = r.header(
            "Retry-After",
            HeaderBuilder::new()
                .schema(
                    ObjectBuilder::new()
                        .schema_type(Type::Integer)
                        .minimum(Some(0)),
                )
                .description(Some("Seconds to wait before retrying."))
                .build(),
        );
    }
    r.build()
}

/// The answers the HTTP layer gives, before any route runs, to a request head it will not
/// read: status and when it happens. Both have an empty body.
const REFUSED_HEADS: &[(&str, &str)] = &[
    (
        "414",
        "The request's URI (path and query) is longer than 65,534 bytes; the server refuses it \
         before reading it, with an empty body. Pass fewer or shorter values.",
    ),
    (
        "431",
        "The request's head (URI and headers) is larger than the server buffers (about 400 KB); \
         the server refuses it before reading it, with an empty body.",
    ),
];

fn add_errors(op: &mut Operation) {
    for (status, description) in ERRORS {
        op.responses
            .responses
            .insert((*status).to_string(), RefOr::T(error_response(description)));
    }
    for (status, description) in REFUSED_HEADS {
        op.responses.responses.insert(
            (*status).to_string(),
            RefOr::T(ResponseBuilder::new().description(*description).build()),
        );
    }
}

impl Modify for Finish {
    fn modify(&self, doc: &mut OpenApiDoc) {
        let components = doc.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            SECURITY_SCHEME,
            SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::with_description(
                "X-API-Key",
                "An API key created with `tokenql keys create`. The header name is \
                 case-insensitive. An `Authorization: Bearer` header, as some SDKs also send, \
                 is ignored.",
            ))),
        );
        for (path, item) in doc.paths.paths.iter_mut() {
            if super::streams::at_root(path) {
                item.servers = Some(vec![utoipa::openapi::server::Server::new("/")]);
            }
            for op in [item.post.as_mut(), item.put.as_mut(), item.delete.as_mut()]
                .into_iter()
                .flatten()
            {
                add_errors(op);
            }
            let Some(op) = item.get.as_mut() else {
                continue;
            };
            add_errors(op);
            if path == "/erc20/transfers" {
                op.deprecated = Some(Deprecated::True);
                for response in op.responses.responses.values_mut() {
                    if let RefOr::T(r) = response {
                        r.headers
                            .insert("Deprecation".to_string(), deprecation_header());
                    }
                }
            }
        }
    }
}

/// The OpenAPI 3.1 document of the REST v2 routes.
pub fn document() -> OpenApiDoc {
    let doc = ApiDoc::openapi();
    serde_json::to_value(&doc)
        .ok()
        .map(normalize::normalize)
        .and_then(|v| serde_json::from_value(v).ok())
        .unwrap_or(doc)
}

/// The document as served and committed: pretty JSON with one trailing newline.
pub fn to_json() -> Result<String, serde_json::Error> {
    serde_json::to_string_pretty(&document()).map(|s| format!("{s}\n"))
}

/// The API reference page: self-contained HTML, CSS and JS that fetches `openapi.json`.
pub const DOCS_HTML: &str = include_str!("openapi_docs.html");

/// `GET /openapi.json`: the document, built once.
async fn openapi_json() -> Response {
    static JSON: OnceLock<Result<String, String>> = OnceLock::new();
    match JSON.get_or_init(|| to_json().map_err(|e| e.to_string())) {
        Ok(json) => (
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            )],
            json.clone(),
        )
            .into_response(),
        Err(e) => super::ApiError::Internal {
            context: "openapi document",
            detail: e.clone(),
        }
        .into_response(),
    }
}

/// `GET /docs`: the API reference page.
async fn docs() -> Response {
    (
        StatusCode::OK,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/html; charset=utf-8"),
        )],
        DOCS_HTML,
    )
        .into_response()
}

/// `GET /openapi.json` and `GET /docs`, both public (no API key).
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/openapi.json", get(openapi_json))
        .route("/docs", get(docs))
}

#[cfg(test)]
mod tests {
    use utoipa::openapi::{RefOr, Schema};
    use utoipa::PartialSchema;

    use super::*;
    use crate::types::Chain;

    #[test]
    fn is_openapi_3_1_with_both_operations() {
        let doc = serde_json::to_value(document()).unwrap_or_default();
        assert!(doc["openapi"]
            .as_str()
            .is_some_and(|v| v.starts_with("3.1")));
        assert_eq!(
            doc["paths"]["/{address}/nft"]["get"]["operationId"],
            "getWalletNFTs"
        );
        let transfers = &doc["paths"]["/erc20/transfers"]["get"];
        assert_eq!(transfers["operationId"], "getErc20Transfers");
        assert_eq!(transfers["deprecated"], true);
        assert!(transfers["responses"]["200"]["headers"]["Deprecation"].is_object());
        assert!(doc["paths"]["/{address}/nft"]["get"]["deprecated"].is_null());
    }

    #[test]
    fn chain_list_is_the_chain_table() {
        let RefOr::T(Schema::Object(o)) = ChainList::schema() else {
            panic!("chainList is not an object schema");
        };
        let values = o.enum_values.unwrap_or_default();
        for c in Chain::all() {
            assert!(values.contains(&serde_json::json!(c.name())));
            assert!(values.contains(&serde_json::json!(c.hex_id())));
        }
        assert_eq!(values.len(), 2 * Chain::all().count());
    }
}
