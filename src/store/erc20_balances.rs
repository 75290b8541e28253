//! Derived ERC20 state: each holder's balance of each token (`erc20_balances`) and each token's
//! net supply and transfer count (`erc20_token_totals`), kept in the transaction that stores
//! or removes the transfers they sum (the balances, except while a fresh backfill on
//! PostgreSQL or MySQL has left them out: [`left_out`], `super::backfill_balances`).
//!
//! A balance is the exact sum of the holder's stored transfers of the token, received minus
//! sent, written as `wraps * 2^256 + balance` ([`Net`]): `wraps` is 0 for every real balance,
//! -1 while the stored transfers sum to a negative balance (history not stored yet), 1 or more
//! past 2^256. Unlike NFT holdings (replayed per token, `derive.rs`), balances are kept by
//! adding what a batch stores and subtracting what a rollback removes: a busy wallet or token
//! has millions of transfers, and a sum does not depend on the order they arrive in (history
//! fetched on demand lands before the live range). Writing a batch twice adds nothing the
//! second time: only transfers not stored yet count ([`unstored`]). The migration that created
//! the tables fills them by replaying `erc20_transfers`, and the black-box suites compare them
//! with a replay of the chain's logs. The zero address is never a holder; a sum of zero is no
//! row.

use std::collections::{BTreeMap, BTreeSet};

use sea_orm::{
    ColumnTrait, Condition, ConnectionTrait, DbErr, EntityName, EntityTrait, IdenStatic,
    QueryFilter, QueryOrder, QuerySelect,
};

use super::bulk::{Rows, Values};
use super::dialect::{any_pair_of_chain, by_address_pairs, Dialect, OR_ARMS};
use super::CHUNK;
use crate::decode::Erc20Move;
use crate::entity::{chain_state, erc20_balance, erc20_token_total, erc20_transfer};
use crate::types::{Address, Uint256};

/// (holder, token) pairs per round on SQLite and MySQL: its reads and deletes take
/// [`OR_ARMS`] pairs per statement, its rows are cut by [`Rows::insert`], and a backfill of 1M transfers between new holders makes 500 rounds, not
/// 10,000 (on SQLite ×1.1–1.2 faster than rounds of 200, `docs/BENCHMARKS.md`).
pub(super) const PAIRS_PER_ROUND: usize = 4_000;
/// (holder, token) pairs per round on PostgreSQL (two arrays, whatever their length).
pub(super) const PG_PAIRS_PER_ROUND: usize = 20_000;
/// (holder, token) pairs summed in memory at most, by a backfill's rebuild and by [`Sums`]
/// (~150 bytes each).
pub(super) const PAIRS_IN_MEMORY: usize = 2_000_000;
/// Blocks per statement when looking for stored transfers.
const BLOCKS_PER_ROUND: usize = 500;

/// `wraps * 2^256 + low`: the exact sum of any number of uint256 values, with either sign.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Net {
    /// How many times 2^256 the sum differs from `low`.
    pub wraps: i64,
    /// The sum modulo 2^256.
    pub low: Uint256,
}

impl Net {
    /// Adds a uint256.
    pub fn add(&mut self, v: Uint256) {
        let (low, carry) = self.low.0.overflowing_add(v.0);
        self.low = Uint256(low);
        self.wraps += i64::from(carry);
    }

    /// Subtracts a uint256.
    pub fn sub(&mut self, v: Uint256) {
        let (low, borrow) = self.low.0.overflowing_sub(v.0);
        self.low = Uint256(low);
        self.wraps -= i64::from(borrow);
    }

    /// Adds another sum.
    pub fn plus(&mut self, o: Net) {
        self.add(o.low);
        self.wraps += o.wraps;
    }

    /// Zero.
    pub fn is_zero(&self) -> bool {
        self.wraps == 0 && self.low.is_zero()
    }

    /// The value, when it is a uint256 (`wraps` 0).
    #[cfg(test)]
    pub fn value(&self) -> Option<Uint256> {
        (self.wraps == 0).then_some(self.low)
    }
}

/// One signed step of a sum: [`Net::add`] or [`Net::sub`].
type Step = fn(&mut Net, Uint256);

/// What some transfers change: per (holder, token) the sum and the last block, per token the
/// supply and the transfer count.
#[derive(Debug, Default)]
pub(crate) struct Deltas {
    pub(super) balances: BTreeMap<(Address, Address), (Net, i64)>,
    totals: BTreeMap<Address, (Net, i64)>,
}

impl Deltas {
    /// Counts one transfer in (`removed`: out).
    pub(super) fn transfer(
        &mut self,
        contract: Address,
        from: Address,
        to: Address,
        value: Uint256,
        block: i64,
        removed: bool,
    ) {
        let (add, sub): (Step, Step) = if removed {
            (Net::sub, Net::add)
        } else {
            (Net::add, Net::sub)
        };
        let total = self.totals.entry(contract).or_default();
        total.1 += if removed { -1 } else { 1 };
        if from.is_zero() {
            add(&mut total.0, value);
        }
        if to.is_zero() {
            sub(&mut total.0, value);
        }
        if !from.is_zero() {
            let e = self.balances.entry((from, contract)).or_default();
            sub(&mut e.0, value);
            e.1 = e.1.max(block);
        }
        if !to.is_zero() {
            let e = self.balances.entry((to, contract)).or_default();
            add(&mut e.0, value);
            e.1 = e.1.max(block);
        }
    }

    /// Adds `other`'s balance changes (not its totals) to these.
    fn add_balances(&mut self, other: Deltas) {
        for (key, (net, block)) in other.balances {
            let e = self.balances.entry(key).or_default();
            e.0.plus(net);
            e.1 = e.1.max(block);
        }
    }

    /// Whether nothing changes.
    fn is_empty(&self) -> bool {
        self.totals.is_empty()
    }
}

/// Which moves of a batch are not stored yet (one flag per move; a key repeated in the batch
/// counts once): the ones storing it adds. Runs in the writing transaction, after its first
/// write (see `write::lock_chain`), so no other writer of the chain stores any of them before
/// it commits.
pub(crate) async fn unstored<C: ConnectionTrait>(
    db: &C,
    cid: i64,
    moves: &[Erc20Move],
) -> Result<Vec<bool>, DbErr> {
    let blocks: BTreeSet<i64> = moves.iter().map(|m| m.meta.block_number as i64).collect();
    let blocks: Vec<i64> = blocks.into_iter().collect();
    let mut stored: BTreeSet<(i64, i32)> = BTreeSet::new();
    for round in blocks.chunks(BLOCKS_PER_ROUND) {
        let keys = erc20_transfer::Entity::find()
            .select_only()
            .column(erc20_transfer::Column::BlockNumber)
            .column(erc20_transfer::Column::LogIndex)
            .filter(erc20_transfer::Column::ChainId.eq(cid))
            .filter(erc20_transfer::Column::BlockNumber.is_in(round.to_vec()))
            .into_tuple::<(i64, i32)>()
            .all(db)
            .await?;
        stored.extend(keys);
    }
    Ok(moves
        .iter()
        .map(|m| stored.insert((m.meta.block_number as i64, m.meta.log_index as i32)))
        .collect())
}

/// Adds newly stored transfers to the balances and totals. While the balances are left out
/// ([`left_out`]), returns what the transfers would have added to them, for a follower's sums
/// in memory (`super::backfill_balances::Sums`).
pub(crate) async fn add_stored<C: ConnectionTrait>(
    db: &C,
    cid: i64,
    moves: &[&Erc20Move],
) -> Result<Option<Unsummed>, DbErr> {
    let mut d = Deltas::default();
    for m in moves {
        d.transfer(
            m.meta.contract,
            m.from,
            m.to,
            m.value,
            m.meta.block_number as i64,
            false,
        );
    }
    let seen = apply(db, cid, &d, None).await?;
    Ok(seen.map(|seen| Unsummed {
        seen,
        transfers: moves.len() as u64,
        deltas: d,
    }))
}

/// What a write added to the chain's transfers while its balances were left out.
#[derive(Debug)]
pub(crate) struct Unsummed {
    /// `chain_state.balances_writes` before this write (which adds one to it).
    pub(super) seen: i64,
    /// Transfers added.
    pub(super) transfers: u64,
    /// What they add to the balances.
    pub(super) deltas: Deltas,
}

/// The left-out balances of a chain summed in memory by the follower that writes its backfill
/// ([`crate::store::write_batch_summing`]), from the chain's first transfer on.
///
/// They are the sums of every stored transfer only if they summed every write that moved the
/// chain's transfers since `backfill_balances::defer`: each such write (a batch, a history
/// fetch, a rollback, by any process) adds one to `chain_state.balances_writes` in its
/// transaction, and the sums count the writes they summed. `backfill_balances::rebuild` writes
/// them only when the two counts are equal, under the chain's lock; else it sums the stored
/// transfers. A write the sums miss, or sums grown past [`PAIRS_IN_MEMORY`] pairs, drop them
/// (`None`).
#[derive(Debug, Default)]
pub struct Sums {
    /// Writes summed.
    pub(super) writes: i64,
    /// Transfers summed.
    pub(super) transfers: u64,
    /// Their sums.
    pub(super) deltas: Deltas,
}

/// Adds a committed write's transfers to `sums`, or drops them when it is not the next write
/// they expect (see [`Sums`]).
pub(super) fn absorb(sums: &mut Option<Sums>, write: Unsummed) {
    let Some(s) = sums else {
        return;
    };
    let fits = s.deltas.balances.len() + write.deltas.balances.len() <= PAIRS_IN_MEMORY;
    if write.seen != s.writes || !fits {
        tracing::info!(
            summed = s.writes,
            seen = write.seen,
            fits,
            "backfill: balances no longer summed in memory; they will be summed from the transfers"
        );
        *sums = None;
        return;
    }
    s.deltas.add_balances(write.deltas);
    s.writes += 1;
    s.transfers += write.transfers;
}

/// Subtracts the transfers above `fork` (about to be deleted by a rollback) from the balances
/// and totals; a balance's last block becomes that of its last transfer at or below `fork`.
pub(crate) async fn remove_above<C: ConnectionTrait>(
    db: &C,
    cid: i64,
    fork: i64,
) -> Result<(), DbErr> {
    let removed = erc20_transfer::Entity::find()
        .filter(erc20_transfer::Column::ChainId.eq(cid))
        .filter(erc20_transfer::Column::BlockNumber.gt(fork))
        .all(db)
        .await?;
    let mut d = Deltas::default();
    for t in removed {
        d.transfer(
            t.contract_address,
            t.from_address,
            t.to_address,
            t.value,
            t.block_number,
            true,
        );
    }
    apply(db, cid, &d, Some(fork)).await?;
    Ok(())
}

/// Applies `d` to the stored rows. `fork`: the transfers above it are being removed, so a
/// remaining balance's last block is looked up at or below it. While a backfill has left the
/// balances out ([`left_out`]), only the totals change, the write is counted
/// (`chain_state.balances_writes`) and the count before it returned: the balances are summed
/// afresh when the backfill ends.
async fn apply<C: ConnectionTrait>(
    db: &C,
    cid: i64,
    d: &Deltas,
    fork: Option<i64>,
) -> Result<Option<i64>, DbErr> {
    if d.is_empty() {
        return Ok(None);
    }
    let seen = left_out_writes(db, cid).await?;
    match seen {
        Some(seen) => count_write(db, cid, seen).await?,
        None => apply_balances(db, cid, d, fork).await?,
    }
    apply_totals(db, cid, &d.totals).await?;
    Ok(seen)
}

/// Sets the chain's `balances_writes` to one more than `seen`, read in the same transaction.
async fn count_write<C: ConnectionTrait>(db: &C, cid: i64, seen: i64) -> Result<(), DbErr> {
    chain_state::Entity::update_many()
        .col_expr(
            chain_state::Column::BalancesWrites,
            sea_orm::sea_query::Expr::value(seen + 1),
        )
        .filter(chain_state::Column::ChainId.eq(cid))
        .exec(db)
        .await?;
    Ok(())
}

/// Applies the balance changes of `d` (see [`apply`]).
pub(super) async fn apply_balances<C: ConnectionTrait>(
    db: &C,
    cid: i64,
    d: &Deltas,
    fork: Option<i64>,
) -> Result<(), DbErr> {
    let pairs: Vec<(Address, Address)> = d.balances.keys().copied().collect();
    let per_round = if Dialect::of(db).takes_key_arrays() {
        PG_PAIRS_PER_ROUND
    } else {
        PAIRS_PER_ROUND
    };
    for round in pairs.chunks(per_round) {
        let stored: BTreeMap<(Address, Address), erc20_balance::Model> = read_pairs(db, cid, round)
            .await?
            .into_iter()
            .map(|r| ((r.owner_address, r.contract_address), r))
            .collect();
        // Under the chain's lock, a pair not read here is not stored: its row is inserted
        // without a conflict check (`Rows::known_new`), the others replaced.
        let (mut inserted, mut replaced) = (BalanceRows::default(), BalanceRows::default());
        let mut emptied = Vec::new();
        for key in round {
            let Some((delta, block)) = d.balances.get(key) else {
                continue;
            };
            let mut net = Net::default();
            let mut last = *block;
            let stored_row = stored.get(key);
            if let Some(r) = stored_row {
                net = Net {
                    wraps: r.wraps,
                    low: r.balance,
                };
                last = last.max(r.block_number);
            }
            net.plus(*delta);
            if net.is_zero() {
                if stored_row.is_some() {
                    emptied.push(*key);
                }
                continue;
            }
            if let Some(fork) = fork {
                last = last_block(db, cid, key.0, key.1, fork).await?;
            }
            let rows = if stored_row.is_some() {
                &mut replaced
            } else {
                &mut inserted
            };
            rows.push(*key, net, last);
        }
        for part in emptied.chunks(OR_ARMS) {
            erc20_balance::Entity::delete_many()
                .filter(pair_condition(cid, part))
                .exec(db)
                .await?;
        }
        inserted.write(db, cid, Write::Insert).await?;
        replaced.write(db, cid, Write::Replace).await?;
    }
    Ok(())
}

/// Whether a backfill has left the chain's balances out (`chain_state.balances_pending`; no
/// row for the chain: no), to sum them at its end (`super::backfill_balances`).
pub async fn left_out<C: ConnectionTrait>(db: &C, cid: i64) -> Result<bool, DbErr> {
    Ok(left_out_writes(db, cid).await?.is_some())
}

/// When the chain's balances are left out ([`left_out`]), how many writes have moved its
/// transfers since (`chain_state.balances_writes`).
pub(super) async fn left_out_writes<C: ConnectionTrait>(
    db: &C,
    cid: i64,
) -> Result<Option<i64>, DbErr> {
    let row: Option<(bool, i64)> = chain_state::Entity::find_by_id(cid)
        .select_only()
        .column(chain_state::Column::BalancesPending)
        .column(chain_state::Column::BalancesWrites)
        .into_tuple()
        .one(db)
        .await?;
    Ok(row.and_then(|(pending, writes)| pending.then_some(writes)))
}

/// How [`BalanceRows::write`] writes its rows.
#[derive(Clone, Copy)]
pub(super) enum Write {
    /// The pairs are not stored ([`Rows::known_new`]).
    Insert,
    /// The pairs may be stored: their rows are replaced ([`Rows::replacing`]).
    Replace,
}

/// Balance rows, column by column, for one statement per round.
#[derive(Default)]
pub(super) struct BalanceRows {
    owners: Vec<Vec<u8>>,
    tokens: Vec<Vec<u8>>,
    balances: Vec<Vec<u8>>,
    wraps: Vec<i64>,
    blocks: Vec<i64>,
}

impl BalanceRows {
    pub(super) fn push(&mut self, (owner, token): (Address, Address), net: Net, block: i64) {
        self.owners.push(owner.as_bytes().to_vec());
        self.tokens.push(token.as_bytes().to_vec());
        self.balances.push(net.low.to_be_bytes().to_vec());
        self.wraps.push(net.wraps);
        self.blocks.push(block);
    }

    /// Writes the rows: inserts them, or replaces the stored ones of the same (holder, token).
    pub(super) async fn write<C: ConnectionTrait>(
        self,
        db: &C,
        cid: i64,
        how: Write,
    ) -> Result<(), DbErr> {
        use erc20_balance::Column as B;
        let n = self.owners.len();
        let rows = Rows::new(
            erc20_balance::Entity.table_name(),
            vec![
                B::ChainId.as_str(),
                B::OwnerAddress.as_str(),
                B::ContractAddress.as_str(),
            ],
        );
        let rows = match how {
            Write::Insert => rows.known_new(),
            Write::Replace => rows.replacing(&[
                B::Balance.as_str(),
                B::Wraps.as_str(),
                B::BlockNumber.as_str(),
            ]),
        };
        rows.col(B::ChainId.as_str(), Values::BigInt(vec![cid; n]))
            .col(B::OwnerAddress.as_str(), Values::Bytes(self.owners))
            .col(B::ContractAddress.as_str(), Values::Bytes(self.tokens))
            .col(B::Balance.as_str(), Values::Bytes(self.balances))
            .col(B::Wraps.as_str(), Values::BigInt(self.wraps))
            .col(B::BlockNumber.as_str(), Values::BigInt(self.blocks))
            .insert(db)
            .await
    }
}

/// Applies per-token changes to `erc20_token_totals` (a token with no transfer left loses its
/// row).
async fn apply_totals<C: ConnectionTrait>(
    db: &C,
    cid: i64,
    totals: &BTreeMap<Address, (Net, i64)>,
) -> Result<(), DbErr> {
    use erc20_token_total::Column as T;
    let tokens: Vec<Address> = totals.keys().copied().collect();
    for round in tokens.chunks(CHUNK) {
        let stored: BTreeMap<Address, erc20_token_total::Model> = erc20_token_total::Entity::find()
            .filter(T::ChainId.eq(cid))
            .filter(T::ContractAddress.is_in(round.iter().copied()))
            .all(db)
            .await?
            .into_iter()
            .map(|r| (r.contract_address, r))
            .collect();
        let mut rows = Vec::new();
        for token in round {
            let Some((delta, count)) = totals.get(token) else {
                continue;
            };
            let (mut supply, mut transfers) = (Net::default(), 0);
            if let Some(r) = stored.get(token) {
                supply = Net {
                    wraps: r.supply_wraps,
                    low: r.supply,
                };
                transfers = r.transfers;
            }
            supply.plus(*delta);
            transfers += count;
            if transfers > 0 {
                rows.push(erc20_token_total::ActiveModel::from(
                    erc20_token_total::Model {
                        chain_id: cid,
                        contract_address: *token,
                        supply: supply.low,
                        supply_wraps: supply.wraps,
                        transfers,
                    },
                ));
            }
        }
        erc20_token_total::Entity::delete_many()
            .filter(T::ChainId.eq(cid))
            .filter(T::ContractAddress.is_in(round.iter().copied()))
            .exec(db)
            .await?;
        if !rows.is_empty() {
            erc20_token_total::Entity::insert_many(rows)
                .exec_without_returning(db)
                .await?;
        }
    }
    Ok(())
}

/// The block of the last stored transfer at or below `fork` between `owner` and `token` (one
/// index probe per side); 0 when there is none (the balance is then history not stored yet).
async fn last_block<C: ConnectionTrait>(
    db: &C,
    cid: i64,
    owner: Address,
    token: Address,
    fork: i64,
) -> Result<i64, DbErr> {
    use erc20_transfer::Column as T;
    let mut last = 0;
    for side in [T::FromAddress, T::ToAddress] {
        let found: Option<i64> = erc20_transfer::Entity::find()
            .select_only()
            .column(T::BlockNumber)
            .filter(T::ChainId.eq(cid))
            .filter(side.eq(owner))
            .filter(T::ContractAddress.eq(token))
            .filter(T::BlockNumber.lte(fork))
            .order_by_desc(T::BlockNumber)
            .limit(1)
            .into_tuple()
            .one(db)
            .await?;
        last = last.max(found.unwrap_or(0));
    }
    Ok(last)
}

/// `(owner, token) IN pairs`, written as an `OR` (SQLite, MySQL; see [`any_pair_of_chain`]).
fn pair_condition(cid: i64, pairs: &[(Address, Address)]) -> Condition {
    use erc20_balance::Column as B;
    any_pair_of_chain(
        B::ChainId,
        cid,
        (B::OwnerAddress, B::ContractAddress),
        pairs.iter().copied(),
    )
}

/// The stored balance rows of `pairs`: on PostgreSQL one primary-key probe per pair (the
/// `LATERAL … LIMIT 1` keeps the planner from hashing the whole table when its statistics are
/// stale, as they are while a chain is first indexed).
async fn read_pairs<C: ConnectionTrait>(
    db: &C,
    cid: i64,
    pairs: &[(Address, Address)],
) -> Result<Vec<erc20_balance::Model>, DbErr> {
    if Dialect::of(db).takes_key_arrays() {
        erc20_balance::Entity::find()
            .from_raw_sql(by_address_pairs(
                "SELECT b.* FROM UNNEST($2::bytea[], $3::bytea[]) AS k(o, c) CROSS JOIN LATERAL \
                 (SELECT * FROM erc20_balances x WHERE x.chain_id = $1 AND x.owner_address = k.o \
                 AND x.contract_address = k.c LIMIT 1) b",
                cid,
                pairs,
            ))
            .all(db)
            .await
    } else {
        // By the key's prefix: the holders of a part (an index range each), then its tokens,
        // then the pairs themselves, in parts whose holders × tokens (the searches) stay
        // bounded ([`by_holders_and_tokens`]). An `OR` of the pairs (`any_pair_of_chain`) is
        // exact too, but SQLite plans each of its arms: 1.2–1.3× slower ingest.
        use erc20_balance::Column as B;
        let mut rows = Vec::with_capacity(pairs.len());
        for (owners, tokens) in by_holders_and_tokens(pairs) {
            let read = erc20_balance::Entity::find()
                .filter(B::ChainId.eq(cid))
                .filter(B::OwnerAddress.is_in(owners))
                .filter(B::ContractAddress.is_in(tokens))
                .all(db)
                .await?;
            rows.extend(read);
        }
        let wanted: BTreeSet<&(Address, Address)> = pairs.iter().collect();
        rows.retain(|r| wanted.contains(&(r.owner_address, r.contract_address)));
        Ok(rows)
    }
}

/// Index searches (holders × tokens) one read of [`read_pairs`] may make.
const SEARCHES_PER_READ: usize = 40_000;
/// Parameters (holders + tokens) of one read of [`read_pairs`], well within SQLite's and
/// MySQL's bind limits.
const PARAMS_PER_READ: usize = 8_000;

/// `pairs` cut, in order, into parts whose holders × tokens stay within [`SEARCHES_PER_READ`]
/// and holders + tokens within [`PARAMS_PER_READ`]: each part's distinct holders and tokens. A round's pairs are ordered by holder, so a part spans few holders when they
/// hold many tokens, and many when they hold one.
fn by_holders_and_tokens(pairs: &[(Address, Address)]) -> Vec<(Vec<Address>, Vec<Address>)> {
    let mut parts = Vec::new();
    let (mut owners, mut tokens) = (BTreeSet::new(), BTreeSet::new());
    for &(o, t) in pairs {
        let o_after = owners.len() + usize::from(!owners.contains(&o));
        let t_after = tokens.len() + usize::from(!tokens.contains(&t));
        if o_after * t_after > SEARCHES_PER_READ || o_after + t_after > PARAMS_PER_READ {
            parts.push((
                std::mem::take(&mut owners).into_iter().collect(),
                std::mem::take(&mut tokens).into_iter().collect(),
            ));
        }
        owners.insert(o);
        tokens.insert(t);
    }
    if !owners.is_empty() {
        parts.push((owners.into_iter().collect(), tokens.into_iter().collect()));
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Parts cover every pair once, in order, within both bounds: one part for many holders of
    /// one token, parts of ~200 when every pair has a holder and a token of its own.
    #[test]
    fn reads_are_cut_into_bounded_parts() {
        let one_token: Vec<_> = (0..4_000).map(|i| (nth(1, i), a(0))).collect();
        assert_eq!(by_holders_and_tokens(&one_token).len(), 1);
        let distinct: Vec<_> = (0..1_000).map(|i| (nth(1, i), nth(2, i))).collect();
        let parts = by_holders_and_tokens(&distinct);
        assert_eq!(parts.len(), 5);
        let mut covered = 0;
        for (owners, tokens) in &parts {
            assert!(owners.len() * tokens.len() <= SEARCHES_PER_READ);
            assert!(owners.len() + tokens.len() <= PARAMS_PER_READ);
            covered += owners.len();
        }
        assert_eq!(covered, 1_000);
        assert!(by_holders_and_tokens(&[]).is_empty());
    }

    fn a(n: u8) -> Address {
        Address::parse(&format!("0x{n:040x}")).unwrap_or_else(|e| panic!("{e}"))
    }

    /// The `i`th address of family `k`.
    fn nth(k: u8, i: u64) -> Address {
        Address::parse(&format!("0x{k:02x}{i:038x}")).unwrap_or_else(|e| panic!("{e}"))
    }

    fn u(n: u64) -> Uint256 {
        Uint256::from_u64(n)
    }

    #[test]
    fn a_sum_carries_and_borrows_into_wraps() {
        let mut n = Net::default();
        n.sub(u(1));
        assert_eq!((n.wraps, n.low), (-1, Uint256::MAX));
        assert_eq!(n.value(), None, "a negative sum is no balance");
        n.add(u(1));
        assert!(n.is_zero());
        n.add(Uint256::MAX);
        n.add(Uint256::MAX);
        assert_eq!(n.wraps, 1);
        let mut m = Net::default();
        m.sub(Uint256::MAX);
        m.sub(Uint256::MAX);
        n.plus(m);
        assert!(n.is_zero(), "adding the opposite sum gives zero exactly");
    }

    #[test]
    fn transfers_move_balances_and_supply_and_cancel_when_removed() {
        let (token, x, y) = (a(0xc), a(1), a(2));
        let mut d = Deltas::default();
        d.transfer(token, Address::ZERO, x, u(10), 5, false);
        d.transfer(token, x, y, u(4), 7, false);
        d.transfer(token, y, Address::ZERO, u(1), 8, false);
        assert_eq!(d.balances[&(x, token)].0.value(), Some(u(6)));
        assert_eq!(d.balances[&(x, token)].1, 7);
        assert_eq!(d.balances[&(y, token)].0.value(), Some(u(3)));
        assert_eq!(
            d.totals[&token].0.value(),
            Some(u(9)),
            "minted 10, burned 1"
        );
        assert_eq!(d.totals[&token].1, 3);
        assert!(!d.balances.contains_key(&(Address::ZERO, token)));
        d.transfer(token, x, y, u(4), 7, true);
        assert_eq!(d.balances[&(x, token)].0.value(), Some(u(10)));
        assert_eq!(d.totals[&token].1, 2);
    }
}
