//! ERC20 balances as derived state, like `nft_holdings`: one row per (chain, holder, token)
//! whose stored transfers do not sum to zero (`erc20_balances`), and one row per token with
//! its net supply and transfer count (`erc20_token_totals`). The store keeps both in the
//! transaction that stores or removes the transfers; this migration fills them for a database
//! that already holds transfers, by replaying `erc20_transfers`.
//!
//! A balance is the exact sum of the stored transfers (received minus sent), written as
//! `wraps * 2^256 + balance` with `balance` a uint256 in the storage form of every uint256
//! (64 hex digits) and `wraps` an integer: `0` for every real balance, `-1` when the stored
//! transfers sum to a negative balance (history not stored yet), `1` or more past 2^256 (a
//! token whose events do not add up). A sum, unlike a saturating replay, does not depend on
//! the order transfers are stored in (history fetched later lands before the live range) and
//! is undone exactly by subtracting what a reorg removes. The zero address is never a holder;
//! a sum of zero is no row.

use std::collections::BTreeMap;

use sea_orm_migration::sea_orm::{ConnectionTrait, DbBackend, Statement, Value};
use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

const ADDR: u32 = 42;
const U256: u32 = 64;
const OWNERS_INDEX: &str = "idx_erc20_balances_token";
/// Transfers of one token read per statement while replaying.
const PAGE: u64 = 10_000;
/// Rows per INSERT while writing the replay.
const ROWS: usize = 400;
const ZERO_ADDRESS: &str = "0x0000000000000000000000000000000000000000";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            Table::create()
                .table(Erc20Balances::Table)
                .col(big_integer(Erc20Balances::ChainId))
                .col(string_len(Erc20Balances::OwnerAddress, ADDR))
                .col(string_len(Erc20Balances::ContractAddress, ADDR))
                .col(string_len(Erc20Balances::Balance, U256))
                .col(big_integer(Erc20Balances::Wraps).default(0))
                .col(big_integer(Erc20Balances::BlockNumber))
                .primary_key(
                    Index::create()
                        .col(Erc20Balances::ChainId)
                        .col(Erc20Balances::OwnerAddress)
                        .col(Erc20Balances::ContractAddress),
                )
                .to_owned(),
        )
        .await?;
        m.create_index(owners_index(m.get_database_backend()))
            .await?;
        m.create_table(
            Table::create()
                .table(Erc20TokenTotals::Table)
                .col(big_integer(Erc20TokenTotals::ChainId))
                .col(string_len(Erc20TokenTotals::ContractAddress, ADDR))
                .col(string_len(Erc20TokenTotals::Supply, U256))
                .col(big_integer(Erc20TokenTotals::SupplyWraps).default(0))
                .col(big_integer(Erc20TokenTotals::Transfers))
                .primary_key(
                    Index::create()
                        .col(Erc20TokenTotals::ChainId)
                        .col(Erc20TokenTotals::ContractAddress),
                )
                .to_owned(),
        )
        .await?;
        backfill(m.get_connection()).await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.drop_table(Table::drop().table(Erc20TokenTotals::Table).to_owned())
            .await?;
        m.drop_table(Table::drop().table(Erc20Balances::Table).to_owned())
            .await
    }
}

/// A token's real balances (`wraps = 0`) by balance, then owner: the holders list. On
/// PostgreSQL and SQLite a partial index of those rows alone, so that the store's lookups of
/// one (owner, token) row, which never say `wraps = 0`, cannot pick it over the primary key (on
/// PostgreSQL, with the statistics of a table still being filled, they did, and each lookup
/// walked the token's every holder). MySQL has no partial index: `wraps` leads the range there
/// (its planner always takes a primary key whose every column is given).
fn owners_index(backend: DbBackend) -> IndexCreateStatement {
    let mut index = Index::create();
    index
        .name(OWNERS_INDEX)
        .table(Erc20Balances::Table)
        .col(Erc20Balances::ChainId)
        .col(Erc20Balances::ContractAddress);
    if backend == DbBackend::MySql {
        index.col(Erc20Balances::Wraps);
    } else {
        index.and_where(Expr::col(Erc20Balances::Wraps).eq(Expr::cust("0")));
    }
    index
        .col(Erc20Balances::Balance)
        .col(Erc20Balances::OwnerAddress)
        .to_owned()
}

/// `wraps * 2^256 + low`, `low` as four little-endian 64-bit limbs: the exact sum of any
/// number of uint256 values, with either sign.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Net {
    wraps: i64,
    low: [u64; 4],
}

impl Net {
    fn add(&mut self, v: &[u64; 4]) {
        let mut carry = false;
        for (a, b) in self.low.iter_mut().zip(v) {
            let (s, c1) = a.overflowing_add(*b);
            let (s, c2) = s.overflowing_add(u64::from(carry));
            *a = s;
            carry = c1 || c2;
        }
        self.wraps += i64::from(carry);
    }

    fn sub(&mut self, v: &[u64; 4]) {
        let mut borrow = false;
        for (a, b) in self.low.iter_mut().zip(v) {
            let (s, b1) = a.overflowing_sub(*b);
            let (s, b2) = s.overflowing_sub(u64::from(borrow));
            *a = s;
            borrow = b1 || b2;
        }
        self.wraps -= i64::from(borrow);
    }

    fn is_zero(&self) -> bool {
        self.wraps == 0 && self.low == [0; 4]
    }

    fn low_hex(&self) -> String {
        let l = self.low;
        format!("{:016x}{:016x}{:016x}{:016x}", l[3], l[2], l[1], l[0])
    }
}

/// A stored uint256 (64 hex digits) as limbs.
fn limbs(hex: &str) -> Result<[u64; 4], DbErr> {
    let bad = || {
        DbErr::Custom(format!(
            "erc20_transfers.value {hex:?} is not 64 hex digits"
        ))
    };
    if hex.len() != 64 || !hex.is_ascii() {
        return Err(bad());
    }
    let mut out = [0u64; 4];
    for (i, limb) in out.iter_mut().enumerate() {
        let end = 64 - 16 * i;
        *limb = u64::from_str_radix(&hex[end - 16..end], 16).map_err(|_| bad())?;
    }
    Ok(out)
}

/// What the replay of one token adds up: per holder the net and the last block; the token's
/// net supply and transfer count.
#[derive(Default)]
struct Replay {
    balances: BTreeMap<String, (Net, i64)>,
    supply: Net,
    transfers: i64,
}

impl Replay {
    fn add(&mut self, row: &sea_orm_migration::sea_orm::QueryResult) -> Result<(), DbErr> {
        let block: i64 = row.try_get("", "block_number")?;
        let from: String = row.try_get("", "from_address")?;
        let to: String = row.try_get("", "to_address")?;
        let value = limbs(&row.try_get::<String>("", "value")?)?;
        self.transfers += 1;
        if from == ZERO_ADDRESS {
            self.supply.add(&value);
        } else {
            let e = self.balances.entry(from).or_default();
            e.0.sub(&value);
            e.1 = Ord::max(e.1, block);
        }
        if to == ZERO_ADDRESS {
            self.supply.sub(&value);
        } else {
            let e = self.balances.entry(to).or_default();
            e.0.add(&value);
            e.1 = Ord::max(e.1, block);
        }
        Ok(())
    }
}

/// Replays every stored transfer into both tables, one token at a time (in the order of the
/// token's transfers, along `idx_erc20_contract`), so that memory holds one token's holders.
async fn backfill<C: ConnectionTrait>(db: &C) -> Result<(), DbErr> {
    let backend = db.get_database_backend();
    let tokens = db
        .query_all_raw(Statement::from_string(
            backend,
            "SELECT DISTINCT chain_id, contract_address FROM erc20_transfers",
        ))
        .await?;
    let page = crate::placeholders(
        backend,
        &format!(
            "SELECT block_number, log_index, from_address, to_address, value \
             FROM erc20_transfers WHERE chain_id = ? AND contract_address = ? \
             AND block_number >= ? AND (block_number > ? OR log_index > ?) \
             ORDER BY block_number, log_index LIMIT {PAGE}"
        ),
    );
    for token in tokens {
        let chain: i64 = token.try_get("", "chain_id")?;
        let contract: String = token.try_get("", "contract_address")?;
        let mut replay = Replay::default();
        let mut after: (i64, i32) = (-1, -1);
        loop {
            let values: Vec<Value> = vec![
                chain.into(),
                contract.clone().into(),
                after.0.into(),
                after.0.into(),
                after.1.into(),
            ];
            let rows = db
                .query_all_raw(Statement::from_sql_and_values(backend, &page, values))
                .await?;
            for row in &rows {
                replay.add(row)?;
            }
            let Some(last) = rows.last() else { break };
            after = (
                last.try_get("", "block_number")?,
                last.try_get("", "log_index")?,
            );
            if (rows.len() as u64) < PAGE {
                break;
            }
        }
        write_token(db, chain, &contract, replay).await?;
    }
    Ok(())
}

/// Writes one token's replay.
async fn write_token<C: ConnectionTrait>(
    db: &C,
    chain: i64,
    contract: &str,
    replay: Replay,
) -> Result<(), DbErr> {
    let balances: Vec<Vec<Value>> = replay
        .balances
        .into_iter()
        .filter(|(_, (net, _))| !net.is_zero())
        .map(|(owner, (net, block))| {
            vec![
                chain.into(),
                owner.into(),
                contract.to_string().into(),
                net.low_hex().into(),
                net.wraps.into(),
                block.into(),
            ]
        })
        .collect();
    insert(
        db,
        Erc20Balances::Table,
        [
            Erc20Balances::ChainId,
            Erc20Balances::OwnerAddress,
            Erc20Balances::ContractAddress,
            Erc20Balances::Balance,
            Erc20Balances::Wraps,
            Erc20Balances::BlockNumber,
        ],
        balances,
    )
    .await?;
    let totals = vec![vec![
        chain.into(),
        contract.to_string().into(),
        replay.supply.low_hex().into(),
        replay.supply.wraps.into(),
        replay.transfers.into(),
    ]];
    insert(
        db,
        Erc20TokenTotals::Table,
        [
            Erc20TokenTotals::ChainId,
            Erc20TokenTotals::ContractAddress,
            Erc20TokenTotals::Supply,
            Erc20TokenTotals::SupplyWraps,
            Erc20TokenTotals::Transfers,
        ],
        totals,
    )
    .await
}

/// Inserts `rows` of `N` columns into `table`, [`ROWS`] per statement.
async fn insert<C: ConnectionTrait, T: Iden + Copy + 'static, const N: usize>(
    db: &C,
    table: T,
    cols: [T; N],
    rows: Vec<Vec<Value>>,
) -> Result<(), DbErr> {
    for chunk in rows.chunks(ROWS) {
        let mut q = Query::insert();
        q.into_table(table).columns(cols);
        for row in chunk {
            q.values(row.iter().cloned().map(Expr::value))
                .map_err(|e| DbErr::Custom(e.to_string()))?;
        }
        db.execute(&q).await?;
    }
    Ok(())
}

#[derive(DeriveIden, Clone, Copy)]
enum Erc20Balances {
    Table,
    ChainId,
    OwnerAddress,
    ContractAddress,
    Balance,
    Wraps,
    BlockNumber,
}

#[derive(DeriveIden, Clone, Copy)]
enum Erc20TokenTotals {
    Table,
    ChainId,
    ContractAddress,
    Supply,
    SupplyWraps,
    Transfers,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_carry_and_borrow_into_wraps() {
        let max = [u64::MAX; 4];
        let one = [1, 0, 0, 0];
        let mut n = Net::default();
        n.sub(&one);
        assert_eq!((n.wraps, n.low), (-1, max), "-1 is -2^256 + (2^256 - 1)");
        n.add(&one);
        assert!(n.is_zero());
        n.add(&max);
        n.add(&max);
        assert_eq!(n.wraps, 1, "two maxima pass 2^256 once");
        n.sub(&max);
        n.sub(&max);
        assert!(n.is_zero());
        assert!(limbs(&"0".repeat(63)).is_err());
        let mut v = Net::default();
        v.add(&limbs(&format!("{:064x}", 0x1234u64)).unwrap_or_default());
        assert_eq!(v.low_hex(), format!("{:064x}", 0x1234u64));
    }
}
