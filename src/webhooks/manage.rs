//! The management operations behind the REST routes (`rest::streams`): each takes the caller's
//! key and typed input, reads and writes through `store::streams`, and answers Moralis's
//! shapes. A stream is visible to the key that made it only; any other id is
//! [`ManageError::NotFound`].

use sea_orm::DbErr;
use serde::Serialize;
use serde_json::{Map, Value};
use utoipa::ToSchema;

use super::body::{Addressee, WebhookBody};
use super::plan::{Delivery, Filter, Moved};
use super::spec::{self, BadInput, StreamPatch, StreamSpec, StreamView};
use super::{Confirmations, Sender};
use crate::query::changes::{ChangeKind, Position};
use crate::query::{QueryError, QueryService};
use crate::store::streams::{self as stored, NewStream, Stream, StreamStatus, StreamUpdate};
use crate::types::{Address, Chain};

/// Why a management operation failed.
#[derive(Debug, thiserror::Error)]
pub enum ManageError {
    /// The user's input broke a rule (400).
    #[error("{}: {}", .0.field, .0.rule)]
    Bad(BadInput),
    /// No such stream for this key (404).
    #[error("stream not found")]
    NotFound,
    /// The feed keeps no stored block with that number (404).
    #[error("{0}")]
    NoBlock(String),
    /// Reading failed (ours).
    #[error(transparent)]
    Query(#[from] QueryError),
    /// Writing failed (ours).
    #[error("database: {0}")]
    Db(#[from] DbErr),
}

impl From<BadInput> for ManageError {
    fn from(b: BadInput) -> Self {
        ManageError::Bad(b)
    }
}

/// A page of streams (`{result, cursor, total}`).
#[derive(Debug, Serialize, ToSchema)]
pub struct StreamPage {
    /// The streams.
    pub result: Vec<StreamView>,
    /// The next page's cursor, `null` on the last page.
    pub cursor: Option<String>,
    /// How many streams the key holds.
    pub total: u64,
}

/// An address of a stream.
#[derive(Debug, Serialize, ToSchema)]
pub struct AddressItem {
    /// `0x` lowercase hex.
    pub address: String,
}

/// A page of a stream's addresses (`{result, cursor, total}`).
#[derive(Debug, Serialize, ToSchema)]
pub struct AddressPage {
    /// The addresses.
    pub result: Vec<AddressItem>,
    /// The next page's cursor, `null` on the last page.
    pub cursor: Option<String>,
    /// How many addresses the stream watches.
    pub total: u64,
}

/// The answer of adding or removing addresses: the stream and the address(es) as given.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AddressesChanged {
    /// The stream.
    pub stream_id: String,
    /// One address, or the list.
    #[schema(value_type = Object)]
    pub address: Value,
}

/// The key's settings (`{secretKey, region}`).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Settings {
    /// The secret deliveries are signed with.
    pub secret_key: String,
    /// Always `us-east-1` (deliveries leave from this server).
    #[schema(value_type = String)]
    pub region: &'static str,
}

/// A stream id: 36 characters of hex digits and dashes.
pub fn parse_stream_id(raw: &str, field: &'static str) -> Result<String, BadInput> {
    let ok = raw.len() == 36 && raw.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-');
    if ok {
        Ok(raw.to_ascii_lowercase())
    } else {
        Err(BadInput {
            field,
            rule: format!("'{raw}' is not a stream id"),
        })
    }
}

fn new_id() -> Result<String, DbErr> {
    let mut r = [0u8; 16];
    getrandom::fill(&mut r).map_err(|e| DbErr::Custom(format!("no randomness: {e}")))?;
    r[6] = (r[6] & 0x0f) | 0x40;
    r[8] = (r[8] & 0x3f) | 0x80;
    let h = crate::types::hex::lower(&r);
    Ok(format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..]
    ))
}

async fn view(service: &QueryService, s: &Stream) -> Result<StreamView, ManageError> {
    let (_, total) = stored::addresses(service.db(), &s.id, None, 0).await?;
    Ok(StreamView::of(s, total))
}

async fn owned(service: &QueryService, key_id: i32, id: &str) -> Result<Stream, ManageError> {
    stored::find(service.db(), Some(key_id), id)
        .await?
        .ok_or(ManageError::NotFound)
}

/// Each chain with the last feed row already written: a new chain starts from now.
async fn starts(service: &QueryService, chains: &[Chain]) -> Result<Vec<(i64, i64)>, ManageError> {
    let mut out = Vec::with_capacity(chains.len());
    for c in chains {
        out.push((c.db_id(), service.feed_bounds(*c).await?.last));
    }
    Ok(out)
}

/// Creates a stream of `key_id`, delivering from now on.
pub async fn create(
    service: &QueryService,
    key_id: i32,
    spec: StreamSpec,
) -> Result<StreamView, ManageError> {
    let id = new_id()?;
    let new = NewStream {
        id: id.clone(),
        key_id,
        webhook_url: spec.webhook_url,
        description: spec.description,
        tag: spec.tag,
        topics: spec.topics.0,
        include_contract_logs: spec.include_contract_logs,
        all_addresses: spec.all_addresses,
        chains: starts(service, &spec.chains).await?,
    };
    stored::create(service.db(), &new).await?;
    get(service, key_id, &id).await
}

/// The stream `id` of `key_id`.
pub async fn get(service: &QueryService, key_id: i32, id: &str) -> Result<StreamView, ManageError> {
    let s = owned(service, key_id, id).await?;
    view(service, &s).await
}

/// A page of `key_id`'s streams after `cursor` (the last id of the previous page).
pub async fn list(
    service: &QueryService,
    key_id: i32,
    limit: u64,
    cursor: Option<&str>,
) -> Result<StreamPage, ManageError> {
    let after = cursor.map(|c| parse_stream_id(c, "cursor")).transpose()?;
    let (streams, total) = stored::list(service.db(), key_id, after.as_deref(), limit).await?;
    let cursor = (streams.len() as u64 == limit)
        .then(|| streams.last().map(|s| s.id.clone()))
        .flatten();
    let mut result = Vec::with_capacity(streams.len());
    for s in &streams {
        result.push(view(service, s).await?);
    }
    Ok(StreamPage {
        result,
        cursor,
        total,
    })
}

/// Applies `patch` to the stream; chains added start from now, chains kept keep their place.
pub async fn update(
    service: &QueryService,
    key_id: i32,
    id: &str,
    patch: StreamPatch,
) -> Result<StreamView, ManageError> {
    let chains = match &patch.chains {
        Some(c) => Some(starts(service, c).await?),
        None => None,
    };
    let update = StreamUpdate {
        webhook_url: patch.webhook_url,
        description: patch.description,
        tag: patch.tag,
        topics: patch.topics.map(|t| t.0),
        include_contract_logs: patch.include_contract_logs,
        all_addresses: patch.all_addresses,
        chains,
    };
    if !stored::update(service.db(), key_id, id, &update).await? {
        return Err(ManageError::NotFound);
    }
    get(service, key_id, id).await
}

/// Deletes the stream; answers it as it was.
pub async fn delete(
    service: &QueryService,
    key_id: i32,
    id: &str,
) -> Result<StreamView, ManageError> {
    let before = get(service, key_id, id).await?;
    if !stored::delete(service.db(), key_id, id).await? {
        return Err(ManageError::NotFound);
    }
    Ok(before)
}

/// Parses `{"status": "active" | "paused"}`.
pub fn parse_status(m: &Map<String, Value>) -> Result<StreamStatus, BadInput> {
    match m.get("status").and_then(Value::as_str) {
        Some("active") => Ok(StreamStatus::Active),
        Some("paused") => Ok(StreamStatus::Paused),
        _ => Err(BadInput {
            field: "status",
            rule: "expected \"active\" or \"paused\"".into(),
        }),
    }
}

/// Sets the stream's status: `active` resumes it where its deliveries stopped.
pub async fn set_status(
    service: &QueryService,
    key_id: i32,
    id: &str,
    status: StreamStatus,
) -> Result<StreamView, ManageError> {
    owned(service, key_id, id).await?;
    stored::set_status(service.db(), id, status, "").await?;
    get(service, key_id, id).await
}

fn echo(addresses: &[Address], raw: &Map<String, Value>) -> Value {
    match raw.get("address") {
        Some(Value::Array(_)) => Value::Array(
            addresses
                .iter()
                .map(|a| Value::String(a.to_string()))
                .collect(),
        ),
        _ => addresses
            .first()
            .map_or(Value::Null, |a| Value::String(a.to_string())),
    }
}

/// Adds (`add`) or removes the addresses of `body` to or from the stream.
pub async fn change_addresses(
    service: &QueryService,
    key_id: i32,
    id: &str,
    body: &Map<String, Value>,
    add: bool,
) -> Result<AddressesChanged, ManageError> {
    let addresses = spec::parse_addresses(body)?;
    owned(service, key_id, id).await?;
    if add {
        stored::add_addresses(service.db(), id, &addresses).await?;
    } else {
        stored::remove_addresses(service.db(), id, &addresses).await?;
    }
    Ok(AddressesChanged {
        stream_id: id.to_string(),
        address: echo(&addresses, body),
    })
}

/// A page of the stream's addresses after `cursor` (the last address of the previous page).
pub async fn addresses(
    service: &QueryService,
    key_id: i32,
    id: &str,
    limit: u64,
    cursor: Option<&str>,
) -> Result<AddressPage, ManageError> {
    let after = cursor
        .map(|c| {
            Address::parse(c).map_err(|e| BadInput {
                field: "cursor",
                rule: e.0,
            })
        })
        .transpose()?;
    owned(service, key_id, id).await?;
    let (page, total) = stored::addresses(service.db(), id, after, limit).await?;
    let cursor = (page.len() as u64 == limit)
        .then(|| page.last().map(|a| a.to_string()))
        .flatten();
    Ok(AddressPage {
        result: page
            .iter()
            .map(|a| AddressItem {
                address: a.to_string(),
            })
            .collect(),
        cursor,
        total,
    })
}

/// The key's settings (its secret made on first use).
pub async fn settings(service: &QueryService, key_id: i32) -> Result<Settings, ManageError> {
    Ok(Settings {
        secret_key: stored::secret(service.db(), key_id).await?,
        region: "us-east-1",
    })
}

/// Sets the key's secret from `{"secretKey": "..."}` (8 to 256 characters; absent: kept).
pub async fn set_settings(
    service: &QueryService,
    key_id: i32,
    m: &Map<String, Value>,
) -> Result<Settings, ManageError> {
    match m.get("secretKey") {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) if (8..=256).contains(&s.len()) => {
            stored::set_secret(service.db(), key_id, s).await?;
        }
        Some(_) => {
            return Err(ManageError::Bad(BadInput {
                field: "secretKey",
                rule: "expected a string of 8 to 256 characters".into(),
            }))
        }
    }
    settings(service, key_id).await
}

/// Sends stream `id`'s delivery of block `number` of `chain` again, from the change feed's
/// stored transfers: `confirmed` when the block is buried under the chain's confirmations.
/// Answers the body sent (the receiver's refusal is not an error of this call: Moralis answers
/// the same).
pub async fn replay(
    service: &QueryService,
    key_id: i32,
    (chain, number, id): (Chain, u64, &str),
    confirmations: &Confirmations,
    sender: &Sender,
) -> Result<WebhookBody, ManageError> {
    let s = owned(service, key_id, id).await?;
    let Some((row, head)) = service.feed_stored_block(chain, number).await? else {
        return Err(ManageError::NoBlock(format!(
            "block {number} of {} is not among the blocks the change feed keeps",
            chain.name()
        )));
    };
    let (all, _) = stored::addresses(service.db(), id, None, u64::MAX).await?;
    let filter = Filter {
        all: s.all_addresses,
        addresses: all.into_iter().collect(),
        topics: spec::Topics(s.topics),
    };
    let buried = head >= number as i64 + confirmations.of(chain) as i64;
    let keep = |m: Moved| filter.admits(&m).then_some(m);
    let d = Delivery {
        kind: if buried {
            ChangeKind::Confirmed
        } else {
            ChangeKind::Added
        },
        block_number: number,
        block_hash: row.block_hash.clone(),
        block_timestamp: row.erc20.first().map_or_else(
            || row.nft.first().map_or(0, |t| t.block_timestamp),
            |t| t.block_timestamp,
        ),
        erc20: row
            .erc20
            .iter()
            .cloned()
            .filter_map(|t| match keep(Moved::Erc20(t)) {
                Some(Moved::Erc20(t)) => Some(t),
                _ => None,
            })
            .collect(),
        nft: row
            .nft
            .iter()
            .cloned()
            .filter_map(|t| match keep(Moved::Nft(t)) {
                Some(Moved::Nft(t)) => Some(t),
                _ => None,
            })
            .collect(),
        position: Position {
            chain_id: chain.db_id(),
            row: row.id,
            index: 0,
        },
        written_ms: row.created_ms,
    };
    let meta = super::metadata(service, chain, &d).await?;
    let to = Addressee {
        stream_id: &s.id,
        tag: &s.tag,
        chain,
    };
    let body = super::body::body(to, &d, &meta, 0);
    let secret = stored::secret(service.db(), key_id).await?;
    if let Err(e) = sender.post(&s.webhook_url, &body, &secret).await {
        tracing::warn!(stream = %s.id, error = %e, "replayed delivery refused");
    }
    Ok(body)
}
