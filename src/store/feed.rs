//! The change feed's write side: the live indexer appends one row per block it stores (with
//! the block's NFT transfers, and a mark that its ERC20 transfers are the stored ones:
//! [`Records::erc20_stored`]) in the batch's transaction ([`append_stored`]), and one row per
//! block a reorg removes (with the transfers removed) in the rollback's transaction
//! ([`append_removed`]). Rows older than the retention window are pruned as the head moves
//! on, and the last pruned id is kept, so that a reader can tell a position that is gone from
//! one that is merely quiet ([`pruned_through`]). Readers: `query::feed`.
//!
//! Within a chain, `id` increases in commit order: a chain's writers hold the chain's lock
//! (`write::lock_chain`) from their first statement to their commit.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use sea_orm::sea_query::{Expr, ExprTrait};
use sea_orm::{
    ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter, QueryOrder, QuerySelect,
};
use serde::{Deserialize, Serialize};
use tokio::sync::Notify;

use super::{now_ms, BlockHeader, CHUNK};
use crate::decode::{Erc20Move, NftMove};
use crate::entity::{block, change_feed, erc20_transfer, nft_transfer, setting};
use crate::types::hex::lower0x;
use crate::types::{Address, TokenStandard, Uint256};

/// `change_feed.kind` of a block the indexer stored.
pub const STORED: i16 = 1;
/// `change_feed.kind` of a block a reorg removed.
pub const REMOVED: i16 = 2;

/// How many blocks of changes the live indexer keeps for readers (subscriptions resuming
/// with a position, webhooks catching up): rows whose head lies further behind are pruned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    /// Blocks behind the stored head.
    pub blocks: u64,
}

impl Default for Retention {
    fn default() -> Self {
        Self { blocks: 10_000 }
    }
}

/// A block's transfers as a feed row keeps them (compact JSON).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Records {
    #[serde(default, rename = "e", skip_serializing_if = "Vec::is_empty")]
    pub erc20: Vec<Erc20Record>,
    #[serde(default, rename = "n", skip_serializing_if = "Vec::is_empty")]
    pub nft: Vec<NftRecord>,
    /// The block's ERC20 transfers are not copied into the row: they are its rows in
    /// `erc20_transfers` (those of the row's block hash), read in the reader's snapshot. A
    /// rollback that deletes them copies them into the row first ([`append_removed`]), so a
    /// row always describes what was stored. Set on every `STORED` row with ERC20 transfers
    /// since 2026-11-28: copying them cost 11% of a backfill's CPU (`docs/BENCHMARKS.md`).
    #[serde(default, rename = "es", skip_serializing_if = "std::ops::Not::not")]
    pub erc20_stored: bool,
}

/// One ERC20 transfer of a feed row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Erc20Record {
    #[serde(rename = "c")]
    pub contract: Address,
    #[serde(rename = "f")]
    pub from: Address,
    #[serde(rename = "t")]
    pub to: Address,
    #[serde(rename = "v")]
    pub value: Uint256,
    #[serde(rename = "x")]
    pub transaction_hash: String,
    #[serde(rename = "ti")]
    pub transaction_index: u32,
    #[serde(rename = "li")]
    pub log_index: u32,
}

/// One NFT move of a feed row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NftRecord {
    #[serde(rename = "c")]
    pub contract: Address,
    #[serde(rename = "s")]
    pub standard: TokenStandard,
    #[serde(rename = "id")]
    pub token_id: Uint256,
    #[serde(rename = "o", default, skip_serializing_if = "Option::is_none")]
    pub operator: Option<Address>,
    #[serde(rename = "f")]
    pub from: Address,
    #[serde(rename = "t")]
    pub to: Address,
    #[serde(rename = "a")]
    pub amount: Uint256,
    #[serde(rename = "x")]
    pub transaction_hash: String,
    #[serde(rename = "ti")]
    pub transaction_index: u32,
    #[serde(rename = "li")]
    pub log_index: u32,
    #[serde(rename = "bi", default)]
    pub batch_index: u32,
}

/// Woken after every commit that appended rows in this process, so that readers in the same
/// process need not wait for their next poll.
pub fn appended_here() -> &'static Notify {
    static NOTIFY: OnceLock<Notify> = OnceLock::new();
    NOTIFY.get_or_init(Notify::new)
}

/// The setting that holds a chain's last pruned id.
fn pruned_key(cid: i64) -> String {
    format!("change_feed_pruned:{cid}")
}

/// The highest id pruned from a chain's feed (0 when nothing was).
pub async fn pruned_through<C: ConnectionTrait>(db: &C, cid: i64) -> Result<i64, DbErr> {
    Ok(setting::Entity::find_by_id(pruned_key(cid))
        .one(db)
        .await?
        .and_then(|s| s.value.parse().ok())
        .unwrap_or(0))
}

/// Appends a row per block of `blocks` with transfers, and one for the batch's last block
/// `head` when it has none (so that readers learn the head moved), then prunes what fell out
/// of `retention`. Runs inside the batch's transaction.
pub(crate) async fn append_stored<C: ConnectionTrait>(
    txn: &C,
    cid: i64,
    blocks: &[BlockHeader],
    erc20: &[Erc20Move],
    nft: &[NftMove],
    head: u64,
    retention: Retention,
) -> Result<(), DbErr> {
    let mut by_block: BTreeMap<u64, Records> = BTreeMap::new();
    for t in erc20 {
        by_block
            .entry(t.meta.block_number)
            .or_default()
            .erc20_stored = true;
    }
    for t in nft {
        by_block
            .entry(t.meta.block_number)
            .or_default()
            .nft
            .push(nft_record(t));
    }
    by_block.entry(head).or_default();
    let headers: BTreeMap<u64, &BlockHeader> = blocks.iter().map(|b| (b.number, b)).collect();
    let now = now_ms();
    let mut rows = Vec::with_capacity(by_block.len());
    for (number, mut records) in by_block {
        let Some(header) = headers.get(&number) else {
            continue;
        };
        records.nft.sort_by_key(|r| (r.log_index, r.batch_index));
        rows.push(row(cid, STORED, header, head as i64, &records, now)?);
    }
    insert(txn, rows).await?;
    let first = blocks.iter().map(|b| b.number).min().unwrap_or(head);
    if first / 256 != head / 256 || blocks.len() > 256 {
        prune(txn, cid, head.saturating_sub(retention.blocks)).await?;
    }
    Ok(())
}

/// Appends a row per block above `fork` that holds stored transfers, highest block first,
/// with the transfers the rollback is about to delete, after copying its ERC20 transfers into
/// the block's `STORED` row ([`Records::erc20_stored`]). Runs inside the rollback's
/// transaction, before the deletes.
pub(crate) async fn append_removed<C: ConnectionTrait>(
    txn: &C,
    cid: i64,
    fork: i64,
) -> Result<(), DbErr> {
    let (by_block, headers) = removed(txn, cid, fork).await?;
    copy_into_stored_rows(txn, cid, &by_block, &headers).await?;
    let now = now_ms();
    let mut rows = Vec::with_capacity(by_block.len());
    for (number, records) in by_block.into_iter().rev() {
        let Some(b) = headers.get(&number) else {
            continue;
        };
        rows.push(change_feed::ActiveModel::from(change_feed::Model {
            id: 0,
            chain_id: cid,
            kind: REMOVED,
            block_number: number,
            block_hash: b.hash.to_string(),
            block_timestamp: b.timestamp,
            head_block: fork,
            records: to_json(&records)?,
            created_ms: now,
        }));
    }
    insert(txn, rows).await
}

/// With the feed turned off (`--feed-retention-blocks 0`), what [`append_removed`] does for the
/// `STORED` rows written while it was on: those above `fork` get a copy of the ERC20 transfers
/// the rollback is about to delete. Runs inside the rollback's transaction, before the deletes.
pub(crate) async fn keep_stored_rows<C: ConnectionTrait>(
    txn: &C,
    cid: i64,
    fork: i64,
) -> Result<(), DbErr> {
    let any = change_feed::Entity::find()
        .select_only()
        .column(change_feed::Column::Id)
        .filter(change_feed::Column::ChainId.eq(cid))
        .filter(change_feed::Column::Kind.eq(STORED))
        .filter(change_feed::Column::BlockNumber.gt(fork))
        .into_tuple::<i64>()
        .one(txn)
        .await?;
    if any.is_none() {
        return Ok(());
    }
    let (by_block, headers) = removed(txn, cid, fork).await?;
    copy_into_stored_rows(txn, cid, &by_block, &headers).await
}

/// The stored transfers above `fork`, by block, and those blocks' stored headers.
async fn removed<C: ConnectionTrait>(
    txn: &C,
    cid: i64,
    fork: i64,
) -> Result<(BTreeMap<i64, Records>, BTreeMap<i64, block::Model>), DbErr> {
    let mut by_block: BTreeMap<i64, Records> = BTreeMap::new();
    for t in erc20_transfer::Entity::find()
        .filter(erc20_transfer::Column::ChainId.eq(cid))
        .filter(erc20_transfer::Column::BlockNumber.gt(fork))
        .order_by_asc(erc20_transfer::Column::BlockNumber)
        .order_by_asc(erc20_transfer::Column::LogIndex)
        .all(txn)
        .await?
    {
        let records = by_block.entry(t.block_number).or_default();
        records.erc20.push(stored_erc20_record(&t));
    }
    for t in nft_transfer::Entity::find()
        .filter(nft_transfer::Column::ChainId.eq(cid))
        .filter(nft_transfer::Column::BlockNumber.gt(fork))
        .order_by_asc(nft_transfer::Column::BlockNumber)
        .order_by_asc(nft_transfer::Column::LogIndex)
        .order_by_asc(nft_transfer::Column::BatchIndex)
        .all(txn)
        .await?
    {
        let records = by_block.entry(t.block_number).or_default();
        records.nft.push(NftRecord {
            contract: t.contract_address,
            standard: t.contract_type,
            token_id: t.token_id,
            operator: t.operator,
            from: t.from_address,
            to: t.to_address,
            amount: t.amount,
            transaction_hash: t.transaction_hash.to_string(),
            transaction_index: t.transaction_index as u32,
            log_index: t.log_index as u32,
            batch_index: t.batch_index as u32,
        });
    }
    let numbers: Vec<i64> = by_block.keys().copied().collect();
    let mut headers = BTreeMap::new();
    for chunk in numbers.chunks(CHUNK) {
        for b in block::Entity::find()
            .filter(block::Column::ChainId.eq(cid))
            .filter(block::Column::Number.is_in(chunk.to_vec()))
            .all(txn)
            .await?
        {
            headers.insert(b.number, b);
        }
    }
    Ok((by_block, headers))
}

/// Copies the ERC20 transfers a rollback is about to delete (`removed`, by block) into the
/// `STORED` rows that point at them ([`Records::erc20_stored`]): those of the removed blocks
/// with the stored block hash (`headers`). Runs in the rollback's transaction, before the
/// deletes.
async fn copy_into_stored_rows<C: ConnectionTrait>(
    txn: &C,
    cid: i64,
    removed: &BTreeMap<i64, Records>,
    headers: &BTreeMap<i64, block::Model>,
) -> Result<(), DbErr> {
    let numbers: Vec<i64> = removed
        .iter()
        .filter(|(_, r)| !r.erc20.is_empty())
        .map(|(n, _)| *n)
        .collect();
    for chunk in numbers.chunks(CHUNK) {
        let rows = change_feed::Entity::find()
            .filter(change_feed::Column::ChainId.eq(cid))
            .filter(change_feed::Column::Kind.eq(STORED))
            .filter(change_feed::Column::BlockNumber.is_in(chunk.to_vec()))
            .all(txn)
            .await?;
        for row in rows {
            let mut records = parse(&row)?;
            let hash = headers.get(&row.block_number).map(|b| b.hash.to_string());
            if !records.erc20_stored || hash.as_deref() != Some(row.block_hash.as_str()) {
                continue;
            }
            records.erc20 = removed
                .get(&row.block_number)
                .map(|r| r.erc20.clone())
                .unwrap_or_default();
            records.erc20_stored = false;
            change_feed::Entity::update_many()
                .col_expr(
                    change_feed::Column::Records,
                    Expr::value(to_json(&records)?),
                )
                .filter(change_feed::Column::Id.eq(row.id))
                .exec(txn)
                .await?;
        }
    }
    Ok(())
}

/// A feed row's records.
pub fn parse(row: &change_feed::Model) -> Result<Records, DbErr> {
    serde_json::from_str(&row.records)
        .map_err(|e| DbErr::Custom(format!("change feed row {}: {e}", row.id)))
}

/// A stored ERC20 transfer as a feed row keeps it.
pub fn stored_erc20_record(t: &erc20_transfer::Model) -> Erc20Record {
    Erc20Record {
        contract: t.contract_address,
        from: t.from_address,
        to: t.to_address,
        value: t.value,
        transaction_hash: t.transaction_hash.to_string(),
        transaction_index: t.transaction_index as u32,
        log_index: t.log_index as u32,
    }
}

fn nft_record(t: &NftMove) -> NftRecord {
    NftRecord {
        contract: t.meta.contract,
        standard: t.standard,
        token_id: t.token_id,
        operator: t.operator,
        from: t.from,
        to: t.to,
        amount: t.amount,
        transaction_hash: lower0x(t.meta.transaction_hash.as_slice()),
        transaction_index: t.meta.transaction_index,
        log_index: t.meta.log_index,
        batch_index: t.batch_index,
    }
}

fn to_json(records: &Records) -> Result<String, DbErr> {
    serde_json::to_string(records).map_err(|e| DbErr::Custom(format!("feed records: {e}")))
}

fn row(
    cid: i64,
    kind: i16,
    header: &BlockHeader,
    head: i64,
    records: &Records,
    now: i64,
) -> Result<change_feed::ActiveModel, DbErr> {
    Ok(change_feed::ActiveModel::from(change_feed::Model {
        id: 0,
        chain_id: cid,
        kind,
        block_number: header.number as i64,
        block_hash: lower0x(header.hash.as_slice()),
        block_timestamp: header.timestamp as i64,
        head_block: head,
        records: to_json(records)?,
        created_ms: now,
    }))
}

/// Rows per `INSERT` (a row holds a block's transfers as JSON: keep statements moderate).
const ROWS_PER_INSERT: usize = 64;

/// Inserts `rows` in order, a multi-row `INSERT` per [`ROWS_PER_INSERT`]: every backend gives
/// the rows of one `INSERT … VALUES` their auto-increment ids in the order of the values, so ids
/// follow `rows`' order (a statement per row cost a round trip per block while catching up).
async fn insert<C: ConnectionTrait>(
    txn: &C,
    rows: Vec<change_feed::ActiveModel>,
) -> Result<(), DbErr> {
    let mut rows = rows;
    for r in &mut rows {
        r.id = sea_orm::ActiveValue::NotSet;
    }
    for chunk in rows.chunks(ROWS_PER_INSERT) {
        change_feed::Entity::insert_many(chunk.to_vec())
            .exec_without_returning(txn)
            .await?;
    }
    Ok(())
}

/// Deletes the chain's rows whose head lies below `below`, recording the last id deleted.
async fn prune<C: ConnectionTrait>(txn: &C, cid: i64, below: u64) -> Result<(), DbErr> {
    let last: Option<i64> = change_feed::Entity::find()
        .select_only()
        .column_as(Expr::col(change_feed::Column::Id).max(), "m")
        .filter(change_feed::Column::ChainId.eq(cid))
        .filter(change_feed::Column::HeadBlock.lt(below as i64))
        .into_tuple::<Option<i64>>()
        .one(txn)
        .await?
        .flatten();
    let Some(last) = last else {
        return Ok(());
    };
    change_feed::Entity::delete_many()
        .filter(change_feed::Column::ChainId.eq(cid))
        .filter(change_feed::Column::Id.lte(last))
        .exec(txn)
        .await?;
    let model = setting::ActiveModel::from(setting::Model {
        name: pruned_key(cid),
        value: last.to_string(),
    });
    setting::Entity::insert(model)
        .on_conflict(
            sea_orm::sea_query::OnConflict::column(setting::Column::Name)
                .update_column(setting::Column::Value)
                .to_owned(),
        )
        .exec_without_returning(txn)
        .await?;
    Ok(())
}
