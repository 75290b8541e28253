//! Webhook streams (Moralis Streams compatible): the management writes of the REST routes and
//! the delivery worker's bookkeeping — positions, retries, status and the per-stream lease that
//! lets one process at a time deliver a stream. Tables: `streams`, `stream_addresses`,
//! `stream_positions`; the per-key signing secret is a row of `settings`.

use sea_orm::sea_query::{Expr, ExprTrait};
use sea_orm::{
    ActiveValue, ColumnTrait, Condition, ConnectionTrait, DatabaseConnection, DbErr, EntityTrait,
    PaginatorTrait, QueryFilter, QueryOrder, QuerySelect,
};

use super::{now_ms, skip_existing, CHUNK};
use crate::entity::{setting, stream, stream_address, stream_position};
use crate::types::Address;

/// A stream's delivery state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamStatus {
    /// Delivering.
    Active,
    /// Stopped by its owner.
    Paused,
    /// Stopped after too many failed deliveries.
    Error,
}

impl StreamStatus {
    /// The name the API and the table use.
    pub fn as_str(&self) -> &'static str {
        match self {
            StreamStatus::Active => "active",
            StreamStatus::Paused => "paused",
            StreamStatus::Error => "error",
        }
    }

    fn of(text: &str) -> Self {
        match text {
            "active" => StreamStatus::Active,
            "paused" => StreamStatus::Paused,
            _ => StreamStatus::Error,
        }
    }
}

/// A stream as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stream {
    /// UUID-like id.
    pub id: String,
    /// The API key that owns it.
    pub key_id: i32,
    /// Where deliveries are posted.
    pub webhook_url: String,
    /// The owner's description.
    pub description: String,
    /// Sent back in every delivery.
    pub tag: String,
    /// The transfer events delivered, a bit per event (empty: all).
    pub topics: i16,
    /// Echoed back as given (contract logs are matched by contract address regardless).
    pub include_contract_logs: bool,
    /// Deliver every transfer, whatever its addresses.
    pub all_addresses: bool,
    /// Delivery state.
    pub status: StreamStatus,
    /// Why the stream is in `error` (empty otherwise).
    pub status_message: String,
    /// Consecutive failed deliveries.
    pub failures: i32,
    /// The chains delivered (database ids), ascending.
    pub chains: Vec<i64>,
}

/// What a new stream holds; each chain starts after `start_row` of its change feed.
#[derive(Debug, Clone)]
pub struct NewStream {
    /// Its id.
    pub id: String,
    /// Its owner.
    pub key_id: i32,
    /// Where deliveries are posted.
    pub webhook_url: String,
    /// The owner's description.
    pub description: String,
    /// Sent back in every delivery.
    pub tag: String,
    /// Bits of the transfer events delivered.
    pub topics: i16,
    /// Echoed back.
    pub include_contract_logs: bool,
    /// Every address.
    pub all_addresses: bool,
    /// `(chain database id, last feed row already behind the stream)`.
    pub chains: Vec<(i64, i64)>,
}

/// The fields an update changes (`None`: kept).
#[derive(Debug, Clone, Default)]
pub struct StreamUpdate {
    /// New webhook URL.
    pub webhook_url: Option<String>,
    /// New description.
    pub description: Option<String>,
    /// New tag.
    pub tag: Option<String>,
    /// New topic bits.
    pub topics: Option<i16>,
    /// New flag.
    pub include_contract_logs: Option<bool>,
    /// New flag.
    pub all_addresses: Option<bool>,
    /// New chain set: chains kept keep their position, new ones start after the given row.
    pub chains: Option<Vec<(i64, i64)>>,
}

/// Where a stream's delivery on a chain stands: after change `index` of feed row `row`
/// (`index` = `u32::MAX`: after the whole row).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamPosition {
    /// The chain's database id.
    pub chain_id: i64,
    /// The change feed row.
    pub row: i64,
    /// The change in the row.
    pub index: u32,
}

/// A stream's place on a chain: where it stands and where it began.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamStart {
    /// Where it stands.
    pub position: StreamPosition,
    /// The last row written when it began: blocks stored at or before it are not its own.
    pub start_row: i64,
}

fn stream_of(m: stream::Model, chains: Vec<i64>) -> Stream {
    Stream {
        id: m.id,
        key_id: m.key_id,
        webhook_url: m.webhook_url,
        description: m.description,
        tag: m.tag,
        topics: m.topics,
        include_contract_logs: m.include_contract_logs,
        all_addresses: m.all_addresses,
        status: StreamStatus::of(&m.status),
        status_message: m.status_message,
        failures: m.failures,
        chains,
    }
}

async fn chains_of<C: ConnectionTrait>(db: &C, id: &str) -> Result<Vec<i64>, DbErr> {
    Ok(positions(db, id)
        .await?
        .iter()
        .map(|p| p.chain_id)
        .collect())
}

async fn insert_positions<C: ConnectionTrait>(
    db: &C,
    id: &str,
    chains: &[(i64, i64)],
) -> Result<(), DbErr> {
    for &(chain_id, row) in chains {
        let model = stream_position::ActiveModel::from(stream_position::Model {
            stream_id: id.to_string(),
            chain_id,
            feed_row: row,
            feed_index: i64::from(u32::MAX),
            start_row: row,
        });
        stream_position::Entity::insert(model)
            .on_conflict(skip_existing([
                stream_position::Column::StreamId,
                stream_position::Column::ChainId,
            ]))
            .exec_without_returning(db)
            .await?;
    }
    Ok(())
}

/// Stores a new stream, active, with its chains' positions.
pub async fn create(db: &DatabaseConnection, new: &NewStream) -> Result<(), DbErr> {
    let txn = super::begin_write(db).await?;
    let model = stream::ActiveModel::from(stream::Model {
        id: new.id.clone(),
        key_id: new.key_id,
        webhook_url: new.webhook_url.clone(),
        description: new.description.clone(),
        tag: new.tag.clone(),
        topics: new.topics,
        include_contract_logs: new.include_contract_logs,
        all_addresses: new.all_addresses,
        status: StreamStatus::Active.as_str().to_string(),
        status_message: String::new(),
        failures: 0,
        lease_holder: None,
        lease_until_ms: 0,
        created_ms: now_ms(),
    });
    stream::Entity::insert(model)
        .exec_without_returning(&txn)
        .await?;
    insert_positions(&txn, &new.id, &new.chains).await?;
    txn.commit().await
}

/// The stream `id`, when it exists and (with `key_id`) belongs to that key.
pub async fn find<C: ConnectionTrait>(
    db: &C,
    key_id: Option<i32>,
    id: &str,
) -> Result<Option<Stream>, DbErr> {
    let mut q = stream::Entity::find_by_id(id.to_string());
    if let Some(k) = key_id {
        q = q.filter(stream::Column::KeyId.eq(k));
    }
    let Some(m) = q.one(db).await? else {
        return Ok(None);
    };
    let chains = chains_of(db, id).await?;
    Ok(Some(stream_of(m, chains)))
}

/// Up to `limit` streams of `key_id` with ids after `after`, in id order, and how many the key
/// holds.
pub async fn list<C: ConnectionTrait>(
    db: &C,
    key_id: i32,
    after: Option<&str>,
    limit: u64,
) -> Result<(Vec<Stream>, u64), DbErr> {
    let mut q = stream::Entity::find().filter(stream::Column::KeyId.eq(key_id));
    if let Some(a) = after {
        q = q.filter(stream::Column::Id.gt(a));
    }
    let models = q
        .order_by_asc(stream::Column::Id)
        .limit(limit)
        .all(db)
        .await?;
    let mut out = Vec::with_capacity(models.len());
    for m in models {
        let chains = chains_of(db, &m.id).await?;
        out.push(stream_of(m, chains));
    }
    let total = stream::Entity::find()
        .filter(stream::Column::KeyId.eq(key_id))
        .count(db)
        .await?;
    Ok((out, total))
}

/// Applies `update` to the stream; `false` when the key holds no such stream.
pub async fn update(
    db: &DatabaseConnection,
    key_id: i32,
    id: &str,
    update: &StreamUpdate,
) -> Result<bool, DbErr> {
    let txn = super::begin_write(db).await?;
    let Some(m) = stream::Entity::find_by_id(id.to_string())
        .filter(stream::Column::KeyId.eq(key_id))
        .one(&txn)
        .await?
    else {
        return Ok(false);
    };
    let mut a: stream::ActiveModel = m.into();
    let u = update.clone();
    if let Some(v) = u.webhook_url {
        a.webhook_url = ActiveValue::Set(v);
    }
    if let Some(v) = u.description {
        a.description = ActiveValue::Set(v);
    }
    if let Some(v) = u.tag {
        a.tag = ActiveValue::Set(v);
    }
    if let Some(v) = u.topics {
        a.topics = ActiveValue::Set(v);
    }
    if let Some(v) = u.include_contract_logs {
        a.include_contract_logs = ActiveValue::Set(v);
    }
    if let Some(v) = u.all_addresses {
        a.all_addresses = ActiveValue::Set(v);
    }
    stream::Entity::update(a).exec(&txn).await?;
    if let Some(chains) = &update.chains {
        let keep: Vec<i64> = chains.iter().map(|c| c.0).collect();
        stream_position::Entity::delete_many()
            .filter(stream_position::Column::StreamId.eq(id))
            .filter(stream_position::Column::ChainId.is_not_in(keep))
            .exec(&txn)
            .await?;
        insert_positions(&txn, id, chains).await?;
    }
    txn.commit().await?;
    Ok(true)
}

/// Deletes the stream, its addresses and positions; `false` when the key holds no such stream.
pub async fn delete(db: &DatabaseConnection, key_id: i32, id: &str) -> Result<bool, DbErr> {
    let txn = super::begin_write(db).await?;
    let gone = stream::Entity::delete_many()
        .filter(stream::Column::Id.eq(id))
        .filter(stream::Column::KeyId.eq(key_id))
        .exec(&txn)
        .await?
        .rows_affected;
    if gone == 0 {
        return Ok(false);
    }
    stream_address::Entity::delete_many()
        .filter(stream_address::Column::StreamId.eq(id))
        .exec(&txn)
        .await?;
    stream_position::Entity::delete_many()
        .filter(stream_position::Column::StreamId.eq(id))
        .exec(&txn)
        .await?;
    txn.commit().await?;
    Ok(true)
}

/// Sets the stream's status and message; back to `active`, its failures start again from 0.
pub async fn set_status<C: ConnectionTrait>(
    db: &C,
    id: &str,
    status: StreamStatus,
    message: &str,
) -> Result<(), DbErr> {
    let mut q = stream::Entity::update_many()
        .col_expr(stream::Column::Status, Expr::value(status.as_str()))
        .col_expr(stream::Column::StatusMessage, Expr::value(message));
    if status == StreamStatus::Active {
        q = q.col_expr(stream::Column::Failures, Expr::value(0));
    }
    q.filter(stream::Column::Id.eq(id)).exec(db).await?;
    Ok(())
}

/// Adds `addresses` to the stream's (those it has are kept).
pub async fn add_addresses<C: ConnectionTrait>(
    db: &C,
    id: &str,
    addresses: &[Address],
) -> Result<(), DbErr> {
    for chunk in addresses.chunks(CHUNK) {
        let rows = chunk.iter().map(|a| {
            stream_address::ActiveModel::from(stream_address::Model {
                stream_id: id.to_string(),
                address: *a,
            })
        });
        stream_address::Entity::insert_many(rows)
            .on_conflict(skip_existing([
                stream_address::Column::StreamId,
                stream_address::Column::Address,
            ]))
            .exec_without_returning(db)
            .await?;
    }
    Ok(())
}

/// Removes `addresses` from the stream's.
pub async fn remove_addresses<C: ConnectionTrait>(
    db: &C,
    id: &str,
    addresses: &[Address],
) -> Result<(), DbErr> {
    for chunk in addresses.chunks(CHUNK) {
        stream_address::Entity::delete_many()
            .filter(stream_address::Column::StreamId.eq(id))
            .filter(stream_address::Column::Address.is_in(chunk.to_vec()))
            .exec(db)
            .await?;
    }
    Ok(())
}

/// Up to `limit` of the stream's addresses after `after` (`u64::MAX`: all), in order, and how
/// many it holds.
pub async fn addresses<C: ConnectionTrait>(
    db: &C,
    id: &str,
    after: Option<Address>,
    limit: u64,
) -> Result<(Vec<Address>, u64), DbErr> {
    let mut q = stream_address::Entity::find().filter(stream_address::Column::StreamId.eq(id));
    if let Some(a) = after {
        q = q.filter(stream_address::Column::Address.gt(a));
    }
    let mut q = q.order_by_asc(stream_address::Column::Address);
    if limit < u64::MAX {
        q = q.limit(limit);
    }
    let page = q.all(db).await?.into_iter().map(|r| r.address).collect();
    let total = stream_address::Entity::find()
        .filter(stream_address::Column::StreamId.eq(id))
        .count(db)
        .await?;
    Ok((page, total))
}

fn secret_key(key_id: i32) -> String {
    format!("streams_secret:{key_id}")
}

/// The key's webhook signing secret, made (random) on first use.
pub async fn secret<C: ConnectionTrait>(db: &C, key_id: i32) -> Result<String, DbErr> {
    let name = secret_key(key_id);
    if let Some(s) = setting::Entity::find_by_id(name.clone()).one(db).await? {
        return Ok(s.value);
    }
    let mut raw = [0u8; 16];
    getrandom::fill(&mut raw).map_err(|e| DbErr::Custom(format!("no randomness: {e}")))?;
    let model = setting::ActiveModel::from(setting::Model {
        name: name.clone(),
        value: crate::types::hex::lower(&raw),
    });
    setting::Entity::insert(model)
        .on_conflict(skip_existing([setting::Column::Name]))
        .exec_without_returning(db)
        .await?;
    setting::Entity::find_by_id(name)
        .one(db)
        .await?
        .map(|s| s.value)
        .ok_or_else(|| DbErr::RecordNotFound("streams secret".into()))
}

/// Replaces the key's webhook signing secret.
pub async fn set_secret<C: ConnectionTrait>(db: &C, key_id: i32, value: &str) -> Result<(), DbErr> {
    let model = setting::ActiveModel::from(setting::Model {
        name: secret_key(key_id),
        value: value.to_string(),
    });
    setting::Entity::insert(model)
        .on_conflict(
            sea_orm::sea_query::OnConflict::column(setting::Column::Name)
                .update_column(setting::Column::Value)
                .to_owned(),
        )
        .exec_without_returning(db)
        .await?;
    Ok(())
}

/// The ids of the active streams, every key's.
pub async fn active_ids<C: ConnectionTrait>(db: &C) -> Result<Vec<String>, DbErr> {
    stream::Entity::find()
        .select_only()
        .column(stream::Column::Id)
        .filter(stream::Column::Status.eq(StreamStatus::Active.as_str()))
        .order_by_asc(stream::Column::Id)
        .into_tuple()
        .all(db)
        .await
}

/// Takes or renews the lease on delivering stream `id` for `holder` for `ttl_ms`; `true` when
/// `holder` holds it afterwards (the stream is active and no other process holds a live lease).
pub async fn lease<C: ConnectionTrait>(
    db: &C,
    id: &str,
    holder: &str,
    ttl_ms: i64,
) -> Result<bool, DbErr> {
    let now = now_ms();
    stream::Entity::update_many()
        .col_expr(stream::Column::LeaseHolder, Expr::value(holder))
        .col_expr(stream::Column::LeaseUntilMs, Expr::value(now + ttl_ms))
        .filter(stream::Column::Id.eq(id))
        .filter(stream::Column::Status.eq(StreamStatus::Active.as_str()))
        .filter(
            Condition::any()
                .add(stream::Column::LeaseHolder.eq(holder))
                .add(stream::Column::LeaseHolder.is_null())
                .add(stream::Column::LeaseUntilMs.lt(now)),
        )
        .exec(db)
        .await?;
    // MySQL counts only changed rows: read the holder back instead of trusting the count.
    let held = stream::Entity::find_by_id(id.to_string())
        .filter(stream::Column::Status.eq(StreamStatus::Active.as_str()))
        .one(db)
        .await?
        .is_some_and(|m| m.lease_holder.as_deref() == Some(holder));
    Ok(held)
}

/// Gives the lease on stream `id` back, when `holder` holds it.
pub async fn release<C: ConnectionTrait>(db: &C, id: &str, holder: &str) -> Result<(), DbErr> {
    stream::Entity::update_many()
        .col_expr(
            stream::Column::LeaseHolder,
            Expr::value(Option::<String>::None),
        )
        .col_expr(stream::Column::LeaseUntilMs, Expr::value(0i64))
        .filter(stream::Column::Id.eq(id))
        .filter(stream::Column::LeaseHolder.eq(holder))
        .exec(db)
        .await?;
    Ok(())
}

/// The stream's positions, by chain.
pub async fn positions<C: ConnectionTrait>(db: &C, id: &str) -> Result<Vec<StreamPosition>, DbErr> {
    Ok(starts(db, id)
        .await?
        .into_iter()
        .map(|s| s.position)
        .collect())
}

/// The stream's positions and starts, by chain.
pub async fn starts<C: ConnectionTrait>(db: &C, id: &str) -> Result<Vec<StreamStart>, DbErr> {
    Ok(stream_position::Entity::find()
        .filter(stream_position::Column::StreamId.eq(id))
        .order_by_asc(stream_position::Column::ChainId)
        .all(db)
        .await?
        .into_iter()
        .map(|p| StreamStart {
            position: StreamPosition {
                chain_id: p.chain_id,
                row: p.feed_row,
                index: u32::try_from(p.feed_index).unwrap_or(u32::MAX),
            },
            start_row: p.start_row,
        })
        .collect())
}

/// Records that the stream's delivery on `p.chain_id` reached `p`.
pub async fn save_position<C: ConnectionTrait>(
    db: &C,
    id: &str,
    p: StreamPosition,
) -> Result<(), DbErr> {
    stream_position::Entity::update_many()
        .col_expr(stream_position::Column::FeedRow, Expr::value(p.row))
        .col_expr(
            stream_position::Column::FeedIndex,
            Expr::value(i64::from(p.index)),
        )
        .filter(stream_position::Column::StreamId.eq(id))
        .filter(stream_position::Column::ChainId.eq(p.chain_id))
        .exec(db)
        .await?;
    Ok(())
}

/// Counts a failed delivery; returns the consecutive failures so far.
pub async fn record_failure<C: ConnectionTrait>(db: &C, id: &str) -> Result<i32, DbErr> {
    stream::Entity::update_many()
        .col_expr(
            stream::Column::Failures,
            Expr::col(stream::Column::Failures).add(1),
        )
        .filter(stream::Column::Id.eq(id))
        .exec(db)
        .await?;
    Ok(stream::Entity::find_by_id(id.to_string())
        .one(db)
        .await?
        .map_or(0, |m| m.failures))
}

/// Clears the consecutive failures after a delivery that succeeded.
pub async fn clear_failures<C: ConnectionTrait>(db: &C, id: &str) -> Result<(), DbErr> {
    stream::Entity::update_many()
        .col_expr(stream::Column::Failures, Expr::value(0))
        .filter(stream::Column::Id.eq(id))
        .filter(stream::Column::Failures.ne(0))
        .exec(db)
        .await?;
    Ok(())
}
