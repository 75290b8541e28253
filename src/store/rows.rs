//! A batch's block headers and transfers as column-major [`Rows`] of their tables, in the
//! storage forms of the entities (`crate::entity::values`): hashes and addresses as their
//! bytes, uint256 as 32 big-endian bytes (a transfer's amount as the dialect stores it:
//! [`Dialect::amount_bytes`]), numbers as integers.

use std::collections::BTreeMap;

use sea_orm::{EntityName, IdenStatic};

use super::bulk::{Rows, Values};
use super::dialect::Dialect;
use super::{BlockHeader, StoreError};
use crate::decode::{Erc20Move, EventMeta, NftMove};
use crate::entity::{block, erc20_transfer, nft_transfer};

fn cap<T>(n: usize) -> Vec<T> {
    Vec::with_capacity(n)
}

pub(crate) fn blocks(cid: i64, headers: &[BlockHeader]) -> Rows {
    use block::Column as C;
    let n = headers.len();
    let (mut number, mut hash, mut parent, mut time) = (cap(n), cap(n), cap(n), cap(n));
    for b in headers {
        number.push(b.number as i64);
        hash.push(b.hash.to_vec());
        parent.push(b.parent_hash.as_ref().map(|h| h.to_vec()));
        time.push(b.timestamp as i64);
    }
    Rows::new(
        block::Entity.table_name(),
        vec![C::ChainId.as_str(), C::Number.as_str()],
    )
    .col(C::ChainId.as_str(), Values::BigInt(vec![cid; n]))
    .col(C::Number.as_str(), Values::BigInt(number))
    .col(C::Hash.as_str(), Values::Bytes(hash))
    .col(C::ParentHash.as_str(), Values::OptBytes(parent))
    .col(C::Timestamp.as_str(), Values::BigInt(time))
}

/// The columns every transfer table has, filled from [`EventMeta`].
struct Common {
    block_number: Vec<i64>,
    log_index: Vec<i32>,
    block_hash: Vec<Vec<u8>>,
    block_timestamp: Vec<i64>,
    transaction_hash: Vec<Vec<u8>>,
    transaction_index: Vec<i32>,
    contract_address: Vec<Vec<u8>>,
}

impl Common {
    fn with_capacity(n: usize) -> Self {
        Self {
            block_number: cap(n),
            log_index: cap(n),
            block_hash: cap(n),
            block_timestamp: cap(n),
            transaction_hash: cap(n),
            transaction_index: cap(n),
            contract_address: cap(n),
        }
    }

    fn push(&mut self, m: &EventMeta, times: &BTreeMap<u64, u64>) -> Result<(), StoreError> {
        let ts = times
            .get(&m.block_number)
            .copied()
            .ok_or(StoreError::MissingBlock(m.block_number))?;
        self.block_number.push(m.block_number as i64);
        self.log_index.push(m.log_index as i32);
        self.block_hash.push(m.block_hash.to_vec());
        self.block_timestamp.push(ts as i64);
        self.transaction_hash.push(m.transaction_hash.to_vec());
        self.transaction_index.push(m.transaction_index as i32);
        self.contract_address.push(m.contract.as_bytes().to_vec());
        Ok(())
    }

    /// Appends these columns to `rows`; the column names are the same in both tables.
    fn into_columns(self, cid: i64, rows: Rows) -> Rows {
        use erc20_transfer::Column as C;
        let n = self.block_number.len();
        rows.col(C::ChainId.as_str(), Values::BigInt(vec![cid; n]))
            .col(C::BlockNumber.as_str(), Values::BigInt(self.block_number))
            .col(C::LogIndex.as_str(), Values::Int(self.log_index))
            .col(C::BlockHash.as_str(), Values::Bytes(self.block_hash))
            .col(
                C::BlockTimestamp.as_str(),
                Values::BigInt(self.block_timestamp),
            )
            .col(
                C::TransactionHash.as_str(),
                Values::Bytes(self.transaction_hash),
            )
            .col(
                C::TransactionIndex.as_str(),
                Values::Int(self.transaction_index),
            )
            .col(
                C::ContractAddress.as_str(),
                Values::Bytes(self.contract_address),
            )
    }
}

fn block_times(headers: &[BlockHeader]) -> BTreeMap<u64, u64> {
    headers.iter().map(|b| (b.number, b.timestamp)).collect()
}

pub(crate) fn erc20(
    cid: i64,
    moves: &[Erc20Move],
    headers: &[BlockHeader],
    dialect: Dialect,
) -> Result<Rows, StoreError> {
    use erc20_transfer::Column as C;
    let times = block_times(headers);
    let n = moves.len();
    let mut common = Common::with_capacity(n);
    let (mut from, mut to, mut value) = (cap(n), cap(n), cap(n));
    for t in moves {
        common.push(&t.meta, &times)?;
        from.push(t.from.as_bytes().to_vec());
        to.push(t.to.as_bytes().to_vec());
        value.push(dialect.amount_bytes(&t.value));
    }
    let rows = Rows::new(
        erc20_transfer::Entity.table_name(),
        vec![
            C::ChainId.as_str(),
            C::BlockNumber.as_str(),
            C::LogIndex.as_str(),
        ],
    );
    Ok(common
        .into_columns(cid, rows)
        .col(C::FromAddress.as_str(), Values::Bytes(from))
        .col(C::ToAddress.as_str(), Values::Bytes(to))
        .col(C::Value.as_str(), Values::Bytes(value)))
}

pub(crate) fn nft(
    cid: i64,
    moves: &[NftMove],
    headers: &[BlockHeader],
    dialect: Dialect,
) -> Result<Rows, StoreError> {
    use nft_transfer::Column as C;
    let times = block_times(headers);
    let n = moves.len();
    let mut common = Common::with_capacity(n);
    let (mut batch_index, mut kind, mut operator) = (cap(n), cap(n), cap(n));
    let (mut from, mut to, mut token_id, mut amount) = (cap(n), cap(n), cap(n), cap(n));
    for t in moves {
        common.push(&t.meta, &times)?;
        batch_index.push(t.batch_index as i32);
        kind.push(t.standard.as_str().to_string());
        operator.push(t.operator.map(|a| a.as_bytes().to_vec()));
        from.push(t.from.as_bytes().to_vec());
        to.push(t.to.as_bytes().to_vec());
        token_id.push(t.token_id.to_be_bytes().to_vec());
        amount.push(dialect.amount_bytes(&t.amount));
    }
    let rows = Rows::new(
        nft_transfer::Entity.table_name(),
        vec![
            C::ChainId.as_str(),
            C::BlockNumber.as_str(),
            C::LogIndex.as_str(),
            C::BatchIndex.as_str(),
        ],
    );
    Ok(common
        .into_columns(cid, rows)
        .col(C::BatchIndex.as_str(), Values::Int(batch_index))
        .col(C::ContractType.as_str(), Values::Text(kind))
        .col(C::Operator.as_str(), Values::OptBytes(operator))
        .col(C::FromAddress.as_str(), Values::Bytes(from))
        .col(C::ToAddress.as_str(), Values::Bytes(to))
        .col(C::TokenId.as_str(), Values::Bytes(token_id))
        .col(C::Amount.as_str(), Values::Bytes(amount)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The transfer tables share their common column names (written through erc20's enum).
    #[test]
    fn common_columns_exist_in_both_tables() {
        use sea_orm::Iterable;
        let nft: Vec<&str> = nft_transfer::Column::iter().map(|c| c.as_str()).collect();
        for c in erc20_transfer::Column::iter() {
            let name = c.as_str();
            if !["from_address", "to_address", "value"].contains(&name) {
                assert!(nft.contains(&name), "{name}");
            }
        }
    }
}
