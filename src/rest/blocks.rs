//! The block routes, answered from the stored block headers and the chain's checkpoint:
//!
//! - `GET /latestBlockNumber/{chain}` (`getLatestBlockNumber`): the last block the indexer has
//!   fully stored, as a JSON string;
//! - `GET /dateToBlock` (`getDateToBlock`): the last block at or before a date, exactly (see
//!   [`crate::query::DateToBlock`]), or a 404 saying why there is no exact answer.
//!
//! Neither depends on a wallet's or a contract's history, so neither carries `status`.

use axum::extract::rejection::PathRejection;
use axum::extract::{Path, RawQuery, State};
use axum::Json;
use serde::Serialize;
use utoipa::ToSchema;

use super::error::ApiError;
use super::nft::path_rejection;
use super::params::{path_chain, DateToBlockParams};
use crate::app::{AppState, Reader};
use crate::query::DateToBlock;
use crate::types::{iso8601_secs, Chain};

/// The handler of `GET /latestBlockNumber/{chain}`.
#[utoipa::path(
    get,
    path = "/latestBlockNumber/{chain}",
    operation_id = "getLatestBlockNumber",
    tag = "Block",
    summary = "Get latest block number",
    description = "The last block of the chain that tokenql has fully indexed (every transfer up \
to it is stored), as a JSON string of decimal digits. A chain with nothing indexed yet is a 404.",
    params(
        ("chain" = super::schemas::ChainList, Path, description = "The chain: a name or a `0x` hex chain id (hex ids in any letter case)."),
    ),
    responses(
        (status = 200, description = "The number of the last indexed block.", body = String, content_type = "application/json", example = json!("15320599")),
    ),
)]
pub(super) async fn latest_block_number(
    Reader(service): Reader,
    chain: Result<Path<String>, PathRejection>,
) -> Result<Json<String>, ApiError> {
    let Path(chain) = chain.map_err(|r| path_rejection("chain", r))?;
    let chain = path_chain(&chain)?;
    match service.latest_block(chain).await {
        Ok(Some(n)) => Ok(Json(n.to_string())),
        Ok(None) => Err(nothing_indexed(chain)),
        Err(e) => Err(ApiError::from_query("latest_block", e)),
    }
}

/// The 404 of a chain with nothing indexed.
fn nothing_indexed(chain: Chain) -> ApiError {
    ApiError::Missing(format!(
        "chain: nothing of {} ({}) is indexed yet",
        chain.name(),
        chain.hex_id()
    ))
}

/// The answer of `GET /dateToBlock` (`blockDate`).
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = blockDate)]
pub struct BlockDate {
    /// The date asked about, in ISO 8601 UTC (a fraction of a second is dropped).
    #[schema(example = "2022-08-11T19:12:05.000Z")]
    pub date: String,
    /// The number of the last block at or before the date (a JSON number, as Moralis has it).
    #[schema(minimum = 0, example = 15320599)]
    pub block: u64,
    /// The block's timestamp in Unix seconds (a JSON number).
    #[schema(minimum = 0, example = 1660245125)]
    pub timestamp: u64,
    /// The block's timestamp in ISO 8601 UTC with milliseconds.
    #[schema(example = "2022-08-11T19:12:05.000Z")]
    pub block_timestamp: String,
    /// The block's hash.
    #[schema(pattern = "^0x[0-9a-f]{64}$")]
    pub hash: String,
    /// The block's parent's hash, when its header was stored with one.
    #[schema(pattern = "^0x[0-9a-f]{64}$")]
    pub parent_hash: Option<String>,
}

/// The handler of `GET /dateToBlock`.
#[utoipa::path(
    get,
    path = "/dateToBlock",
    operation_id = "getDateToBlock",
    tag = "Block",
    summary = "Get block by date",
    description = "The last block stamped at or before `date`, exactly, from the stored block \
headers; where the date falls between two stored blocks with blocks between them whose headers \
are not stored, from headers read from the chain's JSON-RPC endpoint (when the server has one \
for the chain). There is no guess: the answer is a 404 saying which case it is when the date is \
before the first stored block, after the newest indexed block (a block not indexed yet may \
still come at or before it), or in a stretch of unstored headers and the server has no endpoint \
for the chain.",
    params(super::spec::DateToBlock),
    responses(
        (status = 200, description = "The last block at or before the date.", body = BlockDate),
    ),
)]
pub(super) async fn date_to_block(
    State(state): State<AppState>,
    Reader(service): Reader,
    RawQuery(raw): RawQuery,
) -> Result<Json<BlockDate>, ApiError> {
    let params = DateToBlockParams::parse(raw.as_deref())?;
    let answer = service
        .date_to_block(params.chain, params.date)
        .await
        .map_err(|e| ApiError::from_query("date_to_block", e))?
        .settled(&state.ops.options().chain_reads, params.chain, params.date)
        .await
        .map_err(super::native::chain_read_error)?;
    let date = iso8601_secs(params.date);
    let b = match answer {
        DateToBlock::Found(b) => b,
        DateToBlock::NothingStored => return Err(nothing_indexed(params.chain)),
        DateToBlock::BeforeFirst { first } => {
            return Err(ApiError::Missing(format!(
                "date: {date} is before the first stored block of {} (block {}, stamped {}); \
                 no block at or before it is known",
                params.chain.name(),
                first.number,
                iso8601_secs(first.timestamp)
            )))
        }
        DateToBlock::AfterHead { newest } => {
            return Err(ApiError::Missing(format!(
                "date: {date} is after the newest indexed block of {} (block {}, stamped {}); \
                 the last block at or before it is not indexed yet",
                params.chain.name(),
                newest.number,
                iso8601_secs(newest.timestamp)
            )))
        }
        DateToBlock::Unsettled { before, after } => {
            return Err(ApiError::Missing(format!(
                "date: the last block at or before {date} is block {} or one of blocks {} to {}, \
                 whose headers are not stored, and this server has no JSON-RPC endpoint for {} to \
                 read them from; tokenql answers only exactly",
                before.number,
                before.number + 1,
                after.number - 1,
                params.chain.name()
            )))
        }
    };
    Ok(Json(BlockDate {
        date,
        block: b.number,
        timestamp: b.timestamp,
        block_timestamp: iso8601_secs(b.timestamp),
        hash: format!("{:#x}", b.hash),
        parent_hash: b.parent_hash.map(|h| format!("{h:#x}")),
    }))
}
