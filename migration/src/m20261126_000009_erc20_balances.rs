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
/// Transfers read per statement while replaying.
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
        // A token's holders by balance: `wraps = 0`, then the balance range, then the owner.
        m.create_index(
            Index::create()
                .name(OWNERS_INDEX)
                .table(Erc20Balances::Table)
                .col(Erc20Balances::ChainId)
                .col(Erc20Balances::ContractAddress)
                .col(Erc20Balances::Wraps)
                .col(Erc20Balances::Balance)
                .col(Erc20Balances::OwnerAddress)
                .to_owned(),
        )
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

/// What the replay adds up: per (chain, owner, token) the net and the last block, per (chain,
/// token) the net supply and the transfer count.
#[derive(Default)]
struct Replay {
    balances: BTreeMap<(i64, String, String), (Net, i64)>,
    totals: BTreeMap<(i64, String), (Net, i64)>,
}

impl Replay {
    fn add(&mut self, row: &sea_orm_migration::sea_orm::QueryResult) -> Result<(), DbErr> {
        let chain: i64 = row.try_get("", "chain_id")?;
        let block: i64 = row.try_get("", "block_number")?;
        let contract: String = row.try_get("", "contract_address")?;
        let from: String = row.try_get("", "from_address")?;
        let to: String = row.try_get("", "to_address")?;
        let value = limbs(&row.try_get::<String>("", "value")?)?;
        let total = self.totals.entry((chain, contract.clone())).or_default();
        total.1 += 1;
        if from == ZERO_ADDRESS {
            total.0.add(&value);
        }
        if to == ZERO_ADDRESS {
            total.0.sub(&value);
        }
        if from != ZERO_ADDRESS {
            let e = self
                .balances
                .entry((chain, from, contract.clone()))
                .or_default();
            e.0.sub(&value);
            e.1 = Ord::max(e.1, block);
        }
        if to != ZERO_ADDRESS {
            let e = self.balances.entry((chain, to, contract)).or_default();
            e.0.add(&value);
            e.1 = Ord::max(e.1, block);
        }
        Ok(())
    }
}

/// Replays every stored transfer into both tables.
async fn backfill<C: ConnectionTrait>(db: &C) -> Result<(), DbErr> {
    let backend = db.get_database_backend();
    let mut replay = Replay::default();
    let mut after: Option<(i64, i64, i32)> = None;
    loop {
        let (sql, values) = page_sql(backend, after);
        let rows = db
            .query_all_raw(Statement::from_sql_and_values(backend, sql, values))
            .await?;
        for row in &rows {
            replay.add(row)?;
        }
        let Some(last) = rows.last() else { break };
        after = Some((
            last.try_get("", "chain_id")?,
            last.try_get("", "block_number")?,
            last.try_get("", "log_index")?,
        ));
        if (rows.len() as u64) < PAGE {
            break;
        }
    }
    let balances: Vec<Vec<Value>> = replay
        .balances
        .into_iter()
        .filter(|(_, (net, _))| !net.is_zero())
        .map(|((chain, owner, contract), (net, block))| {
            vec![
                chain.into(),
                owner.into(),
                contract.into(),
                net.low_hex().into(),
                net.wraps.into(),
                block.into(),
            ]
        })
        .collect();
    let totals: Vec<Vec<Value>> = replay
        .totals
        .into_iter()
        .map(|((chain, contract), (net, count))| {
            vec![
                chain.into(),
                contract.into(),
                net.low_hex().into(),
                net.wraps.into(),
                count.into(),
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

/// One page of the transfers in key order, after `after`.
fn page_sql(backend: DbBackend, after: Option<(i64, i64, i32)>) -> (String, Vec<Value>) {
    let p = |n: usize| match backend {
        DbBackend::Postgres => format!("${n}"),
        _ => "?".to_string(),
    };
    let cols = "SELECT chain_id, block_number, log_index, contract_address, from_address, \
                to_address, value FROM erc20_transfers";
    let order = format!("ORDER BY chain_id, block_number, log_index LIMIT {PAGE}");
    match after {
        None => (format!("{cols} {order}"), Vec::new()),
        Some((c, b, l)) => (
            format!(
                "{cols} WHERE chain_id > {} OR (chain_id = {} AND (block_number > {} OR \
                 (block_number = {} AND log_index > {}))) {order}",
                p(1),
                p(2),
                p(3),
                p(4),
                p(5)
            ),
            vec![c.into(), c.into(), b.into(), b.into(), l.into()],
        ),
    }
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
