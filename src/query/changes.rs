//! What a subscriber sees of the change feed: each feed row turned into changes of the
//! transfers it watches, in a sequence that is a function of the feed alone, so that a
//! position in it ([`Position`]) means the same thing to every process and after a restart.
//!
//! For each row, in feed order:
//! 1. a stored block: `ADDED` for each watched transfer, in log order; a removed block:
//!    `REMOVED` for each watched transfer it held;
//! 2. with `confirmations = c > 0`: `CONFIRMED` for every watched transfer of a stored block
//!    `b` still waiting, once the row's head reaches `b + c` (blocks in ascending order).
//!    A block removed before then is never confirmed; one removed after (a reorg deeper than
//!    `c`) is removed all the same.
//!
//! With `c = 0` there is no `CONFIRMED`: an `ADDED` is final unless a `REMOVED` follows.

use std::collections::BTreeMap;

use super::feed::{BlockChange, FeedMark, FeedRow};
use super::{Erc20Transfer, NftTransfer};
use crate::types::{Address, Chain};

/// The most confirmations a subscription may wait for (the feed keeps at least this many
/// blocks).
pub const MAX_CONFIRMATIONS: u64 = 1_000;

/// The default confirmations of every chain.
pub const DEFAULT_CONFIRMATIONS: u64 = 12;

/// Blocks above a transfer's before its `confirmed: true` delivery, per chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Confirmations {
    default: u64,
    per_chain: Vec<(Chain, u64)>,
}

impl Default for Confirmations {
    fn default() -> Self {
        Self {
            default: DEFAULT_CONFIRMATIONS,
            per_chain: Vec::new(),
        }
    }
}

impl Confirmations {
    /// Parses `12`, `eth=12,polygon=64` or both (`20,eth=3`): a bare number sets the default.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut out = Self::default();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (chain, n) = match part.split_once('=') {
                Some((c, n)) => (Some(Chain::parse(c.trim()).map_err(|e| e.0)?), n),
                None => (None, part),
            };
            let n: u64 = n
                .trim()
                .parse()
                .ok()
                .filter(|n| *n <= MAX_CONFIRMATIONS)
                .ok_or_else(|| format!("'{part}': expected a number of blocks, 0 to 1000"))?;
            match chain {
                Some(c) => out.per_chain.push((c, n)),
                None => out.default = n,
            }
        }
        Ok(out)
    }

    /// The confirmations of `chain`.
    pub fn of(&self, chain: Chain) -> u64 {
        self.per_chain
            .iter()
            .rev()
            .find(|(c, _)| *c == chain)
            .map_or(self.default, |(_, n)| *n)
    }
}

/// What happened to a transfer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChangeKind {
    /// Stored at the head.
    Added,
    /// Buried under the subscription's confirmations.
    Confirmed,
    /// Taken away by a reorg.
    Removed,
}

/// A place in a chain's sequence of changes: after the `index`-th change (from 0) of feed
/// row `row`. Written as 40 hex digits; positions of one chain order as their text does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Position {
    pub chain_id: i64,
    pub row: i64,
    pub index: u32,
}

impl Position {
    /// The text form.
    pub fn encode(&self) -> String {
        format!(
            "{:016x}{:016x}{:08x}",
            self.chain_id as u64, self.row as u64, self.index
        )
    }

    /// Reads a position given back by a client, for `chain`.
    pub fn parse(text: &str, chain: Chain) -> Result<Self, String> {
        let bad = || format!("'{text}' is not a position this API gave out");
        let t = text.trim();
        if t.len() != 40 || !t.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(bad());
        }
        let chain_id = u64::from_str_radix(&t[..16], 16).map_err(|_| bad())? as i64;
        let row = u64::from_str_radix(&t[16..32], 16).map_err(|_| bad())? as i64;
        let index = u32::from_str_radix(&t[32..], 16).map_err(|_| bad())?;
        if chain_id != chain.db_id() {
            return Err(format!("'{text}' is a position of another chain"));
        }
        if row <= 0 {
            return Err(bad());
        }
        Ok(Self {
            chain_id,
            row,
            index,
        })
    }
}

/// What a subscriber watches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Watch {
    pub chain: Chain,
    /// Transfers sent or received by one of these (empty: any).
    pub wallets: Vec<Address>,
    /// Transfers of one of these contracts (empty: any).
    pub contracts: Vec<Address>,
    /// Blocks above a transfer's before it is `CONFIRMED` (0: never).
    pub confirmations: u64,
}

impl Watch {
    fn admits(&self, contract: Address, from: Address, to: Address) -> bool {
        (self.contracts.is_empty() || self.contracts.contains(&contract))
            && (self.wallets.is_empty()
                || self.wallets.contains(&from)
                || self.wallets.contains(&to))
    }
}

/// A kind of record a subscriber can watch.
pub trait Watched: Clone + Send + Sync + 'static {
    /// The watched records of `row`, in log order.
    fn pick(row: &FeedRow, watch: &Watch) -> Vec<Self>;
}

impl Watched for Erc20Transfer {
    fn pick(row: &FeedRow, watch: &Watch) -> Vec<Self> {
        row.erc20
            .iter()
            .filter(|t| watch.admits(t.contract, t.from, t.to))
            .cloned()
            .collect()
    }
}

impl Watched for NftTransfer {
    fn pick(row: &FeedRow, watch: &Watch) -> Vec<Self> {
        row.nft
            .iter()
            .filter(|t| watch.admits(t.contract, t.from, t.to))
            .cloned()
            .collect()
    }
}

/// One change a subscriber receives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change<T> {
    pub kind: ChangeKind,
    pub position: Position,
    pub record: T,
    /// When the feed row behind it was written (Unix milliseconds).
    pub written_ms: i64,
}

/// The state of one subscriber's sequence: the watched transfers of stored blocks still
/// waiting for their confirmations.
#[derive(Debug, Clone)]
pub struct Changes<T> {
    watch: Watch,
    waiting: BTreeMap<u64, Vec<T>>,
}

impl<T: Watched> Changes<T> {
    /// A sequence that starts with nothing waiting.
    pub fn new(watch: Watch) -> Self {
        Self {
            watch,
            waiting: BTreeMap::new(),
        }
    }

    /// The blocks (their feed rows) still waiting after the rows `marks` lists, replayed from
    /// the start of the retained feed.
    pub fn waiting_rows(marks: &[FeedMark], confirmations: u64) -> Vec<i64> {
        if confirmations == 0 {
            return Vec::new();
        }
        let mut waiting: BTreeMap<u64, i64> = BTreeMap::new();
        for m in marks {
            match m.change {
                BlockChange::Stored => {
                    waiting.insert(m.block_number, m.id);
                }
                BlockChange::Removed => {
                    waiting.remove(&m.block_number);
                }
            }
            confirm(&mut waiting, m.head, confirmations);
        }
        waiting.into_values().collect()
    }

    /// Puts back what `rows` (from [`Changes::waiting_rows`]) hold as waiting.
    pub fn restore(&mut self, rows: &[FeedRow]) {
        for row in rows {
            let picked = T::pick(row, &self.watch);
            if !picked.is_empty() {
                self.waiting.insert(row.block_number, picked);
            }
        }
    }

    /// The changes `row` makes, numbered from 0 in the row.
    pub fn apply(&mut self, row: &FeedRow) -> Vec<Change<T>> {
        let mut out = Vec::new();
        let picked = T::pick(row, &self.watch);
        let kind = match row.change {
            BlockChange::Stored => ChangeKind::Added,
            BlockChange::Removed => {
                self.waiting.remove(&row.block_number);
                ChangeKind::Removed
            }
        };
        let mut push = |kind, record| {
            out.push(Change {
                kind,
                position: Position {
                    chain_id: self.watch.chain.db_id(),
                    row: row.id,
                    index: 0,
                },
                record,
                written_ms: row.created_ms,
            })
        };
        for r in &picked {
            push(kind, r.clone());
        }
        let c = self.watch.confirmations;
        if row.change == BlockChange::Stored && c > 0 && !picked.is_empty() {
            self.waiting.insert(row.block_number, picked);
        }
        if c > 0 {
            for (_, records) in confirm(&mut self.waiting, row.head, c) {
                for r in records {
                    push(ChangeKind::Confirmed, r);
                }
            }
        }
        for (i, change) in out.iter_mut().enumerate() {
            change.position.index = i as u32;
        }
        out
    }
}

/// Takes out the entries of blocks `b` with `b + c <= head`, in ascending order.
fn confirm<V>(waiting: &mut BTreeMap<u64, V>, head: i64, c: u64) -> Vec<(u64, V)> {
    let Some(limit) = u64::try_from(head).ok().and_then(|h| h.checked_sub(c)) else {
        return Vec::new();
    };
    let rest = waiting.split_off(&(limit + 1));
    std::mem::replace(waiting, rest).into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Uint256;

    fn addr(n: u8) -> Address {
        Address::from_word(&[n; 32])
    }

    fn transfer(block: u64, log: u32, hash: &str) -> Erc20Transfer {
        Erc20Transfer {
            contract: addr(1),
            from: addr(2),
            to: addr(3),
            value: Uint256::from_u64(7),
            block_number: block,
            block_hash: hash.into(),
            block_timestamp: 0,
            transaction_hash: "0x".into(),
            transaction_index: 0,
            log_index: log,
        }
    }

    fn row(id: i64, change: BlockChange, block: u64, head: i64, hash: &str) -> FeedRow {
        FeedRow {
            id,
            change,
            block_number: block,
            block_hash: hash.into(),
            head,
            erc20: vec![transfer(block, 0, hash), transfer(block, 1, hash)],
            nft: Vec::new(),
            created_ms: 0,
        }
    }

    fn watch(c: u64) -> Watch {
        Watch {
            chain: Chain::from_id(1).unwrap(),
            wallets: Vec::new(),
            contracts: Vec::new(),
            confirmations: c,
        }
    }

    fn kinds(changes: &[Change<Erc20Transfer>]) -> Vec<(ChangeKind, u64)> {
        changes
            .iter()
            .map(|c| (c.kind, c.record.block_number))
            .collect()
    }

    #[test]
    fn a_block_is_confirmed_once_buried_and_removed_only_if_the_reorg_is_deeper() {
        use BlockChange::{Removed as Gone, Stored};
        use ChangeKind::{Added, Confirmed, Removed};
        let mut s = Changes::<Erc20Transfer>::new(watch(2));
        assert_eq!(
            kinds(&s.apply(&row(1, Stored, 10, 10, "a"))),
            [(Added, 10); 2]
        );
        assert_eq!(
            kinds(&s.apply(&row(2, Stored, 11, 11, "b"))),
            [(Added, 11); 2]
        );
        // Block 12 buries block 10 under two blocks.
        let third = s.apply(&row(3, Stored, 12, 12, "c"));
        assert_eq!(
            kinds(&third),
            [(Added, 12), (Added, 12), (Confirmed, 10), (Confirmed, 10)]
        );
        assert_eq!(
            third.iter().map(|c| c.position.index).collect::<Vec<_>>(),
            [0, 1, 2, 3]
        );
        // A reorg of 12 and 11: both removed, neither confirmed later.
        assert_eq!(
            kinds(&s.apply(&row(4, Gone, 12, 10, "c"))),
            [(Removed, 12); 2]
        );
        assert_eq!(
            kinds(&s.apply(&row(5, Gone, 11, 10, "b"))),
            [(Removed, 11); 2]
        );
        assert_eq!(
            kinds(&s.apply(&row(6, Stored, 11, 11, "b2"))),
            [(Added, 11); 2]
        );
        // Block 10 was confirmed before a reorg deeper than two: removed all the same.
        assert_eq!(
            kinds(&s.apply(&row(7, Gone, 10, 9, "a"))),
            [(Removed, 10); 2]
        );
    }

    #[test]
    fn replaying_marks_restores_exactly_what_waits() {
        use BlockChange::*;
        let rows = [
            row(1, Stored, 10, 10, "a"),
            row(2, Stored, 11, 11, "b"),
            row(3, Removed, 11, 10, "b"),
            row(4, Stored, 11, 11, "b2"),
            row(5, Stored, 12, 12, "c"),
        ];
        let mut live = Changes::<Erc20Transfer>::new(watch(2));
        for r in &rows[..4] {
            live.apply(r);
        }
        let marks: Vec<FeedMark> = rows[..4]
            .iter()
            .map(|r| FeedMark {
                id: r.id,
                change: r.change,
                block_number: r.block_number,
                head: r.head,
            })
            .collect();
        let waiting = Changes::<Erc20Transfer>::waiting_rows(&marks, 2);
        assert_eq!(waiting, [1, 4]);
        let mut resumed = Changes::<Erc20Transfer>::new(watch(2));
        resumed.restore(&[rows[0].clone(), rows[3].clone()]);
        assert_eq!(resumed.apply(&rows[4]), live.apply(&rows[4]));
    }

    #[test]
    fn positions_round_trip_and_order_as_text() {
        let chain = Chain::from_id(1).unwrap();
        let a = Position {
            chain_id: 1,
            row: 9,
            index: 3,
        };
        let b = Position {
            chain_id: 1,
            row: 10,
            index: 0,
        };
        assert_eq!(Position::parse(&a.encode(), chain), Ok(a));
        assert!(a.encode() < b.encode());
        assert!(Position::parse("zz", chain).is_err());
        assert!(Position::parse(&a.encode(), Chain::from_id(137).unwrap()).is_err());
    }

    #[test]
    fn confirmations_take_a_default_and_per_chain_values() {
        let c = Confirmations::parse("20, eth=3").unwrap_or_default();
        assert_eq!(c.of(Chain::ETH), 3);
        assert_eq!(c.of(Chain::from_id(137).unwrap_or(Chain::ETH)), 20);
        assert!(Confirmations::parse("eth=x").is_err());
        assert!(Confirmations::parse("nochain=3").is_err());
        assert_eq!(Confirmations::parse("").map(|c| c.of(Chain::ETH)), Ok(12));
    }
}
