//! From the change feed to deliveries: a stream reads one sequence of changes per chain (both
//! kinds of transfer, every address: [`Moved`] under a [`Watch`] of everything, so that a
//! position means the same whatever addresses the stream watches today), and the changes of one
//! feed row become deliveries grouped by kind and block ([`plan`]): the row's own block `ADDED`
//! (or `REMOVED`), then one `CONFIRMED` delivery per block it buried. Each delivery keeps the
//! position of its last change: saved once the receiver accepted it, it is where a restart
//! resumes. Records the stream does not watch are dropped ([`Filter`]); a delivery left empty
//! is skipped, its position passed.

use std::collections::HashSet;

use crate::query::changes::{Change, ChangeKind, Position, Watch, Watched};
use crate::query::feed::FeedRow;
use crate::query::{Erc20Transfer, NftTransfer};
use crate::types::{Address, Chain, TokenStandard};

use super::spec::Topics;

/// A transfer of either kind, in a row's order (ERC20 then NFT, each in log order).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Moved {
    /// An ERC20 transfer.
    Erc20(Erc20Transfer),
    /// An NFT move.
    Nft(NftTransfer),
}

impl Watched for Moved {
    fn pick(row: &FeedRow, watch: &Watch) -> Vec<Self> {
        let erc20 = Erc20Transfer::pick(row, watch)
            .into_iter()
            .map(Moved::Erc20);
        let nft = NftTransfer::pick(row, watch).into_iter().map(Moved::Nft);
        erc20.chain(nft).collect()
    }
}

/// The watch of a stream's sequence on `chain`: everything, with `confirmations`.
pub fn watch_all(chain: Chain, confirmations: u64) -> Watch {
    Watch {
        chain,
        wallets: Vec::new(),
        contracts: Vec::new(),
        confirmations,
    }
}

/// What a stream delivers: its addresses (or all) and its events.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Every address.
    pub all: bool,
    /// Transfers from, to or of one of these.
    pub addresses: HashSet<Address>,
    /// The events delivered.
    pub topics: Topics,
}

impl Filter {
    fn touches(&self, contract: Address, from: Address, to: Address) -> bool {
        self.all
            || self.addresses.contains(&from)
            || self.addresses.contains(&to)
            || self.addresses.contains(&contract)
    }

    /// Whether the stream delivers `m`.
    pub fn admits(&self, m: &Moved) -> bool {
        match m {
            Moved::Erc20(t) => {
                self.topics.has(Topics::TRANSFER) && self.touches(t.contract, t.from, t.to)
            }
            Moved::Nft(t) => {
                let bit = if t.contract_type == TokenStandard::Erc1155 {
                    Topics::TRANSFER_SINGLE | Topics::TRANSFER_BATCH
                } else {
                    Topics::TRANSFER
                };
                self.topics.has(bit) && self.touches(t.contract, t.from, t.to)
            }
        }
    }
}

/// One delivery: the watched transfers of one block that one kind of change touched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    /// `Added`, `Confirmed` or `Removed`.
    pub kind: ChangeKind,
    /// The block.
    pub block_number: u64,
    /// Its hash.
    pub block_hash: String,
    /// Its time, Unix seconds.
    pub block_timestamp: u64,
    /// The ERC20 transfers.
    pub erc20: Vec<Erc20Transfer>,
    /// The NFT moves.
    pub nft: Vec<NftTransfer>,
    /// The position of the delivery's last change.
    pub position: Position,
    /// When the feed row behind it was written (Unix milliseconds).
    pub written_ms: i64,
}

impl Delivery {
    /// Whether it holds nothing the stream watches.
    pub fn is_empty(&self) -> bool {
        self.erc20.is_empty() && self.nft.is_empty()
    }

    fn start(c: &Change<Moved>) -> Self {
        let (number, hash, timestamp) = match &c.record {
            Moved::Erc20(t) => (t.block_number, t.block_hash.clone(), t.block_timestamp),
            Moved::Nft(t) => (t.block_number, t.block_hash.clone(), t.block_timestamp),
        };
        Self {
            kind: c.kind,
            block_number: number,
            block_hash: hash,
            block_timestamp: timestamp,
            erc20: Vec::new(),
            nft: Vec::new(),
            position: c.position,
            written_ms: c.written_ms,
        }
    }
}

fn block_of(m: &Moved) -> u64 {
    match m {
        Moved::Erc20(t) => t.block_number,
        Moved::Nft(t) => t.block_number,
    }
}

/// The deliveries of one row's `changes`, those after `after` only, filtered by `filter`
/// (empty ones kept, for their positions).
pub fn plan(
    changes: Vec<Change<Moved>>,
    after: Option<Position>,
    filter: &Filter,
) -> Vec<Delivery> {
    let mut out: Vec<Delivery> = Vec::new();
    for c in changes {
        if after.is_some_and(|a| c.position <= a) {
            continue;
        }
        let same = out
            .last()
            .is_some_and(|d| d.kind == c.kind && d.block_number == block_of(&c.record));
        if !same {
            out.push(Delivery::start(&c));
        }
        let Some(d) = out.last_mut() else {
            continue;
        };
        d.position = c.position;
        if !filter.admits(&c.record) {
            continue;
        }
        match c.record {
            Moved::Erc20(t) => d.erc20.push(t),
            Moved::Nft(t) => d.nft.push(t),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::changes::Changes;
    use crate::query::feed::BlockChange;
    use crate::types::Uint256;

    fn addr(n: u8) -> Address {
        Address::from_word(&[n; 32])
    }

    fn row(id: i64, change: BlockChange, block: u64, head: i64, to: u8) -> FeedRow {
        let t = |log| Erc20Transfer {
            contract: addr(1),
            from: addr(2),
            to: addr(to + log as u8),
            value: Uint256::from_u64(7),
            block_number: block,
            block_hash: format!("0x{block:x}"),
            block_timestamp: 0,
            transaction_hash: "0x".into(),
            transaction_index: 0,
            log_index: log,
        };
        FeedRow {
            id,
            change,
            block_number: block,
            block_hash: format!("0x{block:x}"),
            head,
            erc20: vec![t(0), t(1)],
            nft: Vec::new(),
            created_ms: 0,
        }
    }

    #[test]
    fn a_row_becomes_one_delivery_per_kind_and_block_filtered() {
        let chain = Chain::ETH;
        let mut s = Changes::<Moved>::new(watch_all(chain, 1));
        let filter = Filter {
            addresses: [addr(10)].into_iter().collect(),
            ..Default::default()
        };
        let first = plan(
            s.apply(&row(1, BlockChange::Stored, 5, 5, 10)),
            None,
            &filter,
        );
        assert_eq!(first.len(), 1);
        assert_eq!(
            first[0].erc20.len(),
            1,
            "only the transfer to the watched address"
        );
        let second = plan(
            s.apply(&row(2, BlockChange::Stored, 6, 6, 20)),
            None,
            &filter,
        );
        assert_eq!(
            second
                .iter()
                .map(|d| (d.kind, d.block_number, d.is_empty()))
                .collect::<Vec<_>>(),
            [
                (ChangeKind::Added, 6, true),
                (ChangeKind::Confirmed, 5, false)
            ]
        );
        assert_eq!(second[1].position.index, 3);
        // Resuming after the first delivery of the row leaves the second only.
        let mut again = Changes::<Moved>::new(watch_all(chain, 1));
        again.apply(&row(1, BlockChange::Stored, 5, 5, 10));
        let resumed = plan(
            again.apply(&row(2, BlockChange::Stored, 6, 6, 20)),
            Some(second[0].position),
            &filter,
        );
        assert_eq!(resumed, second[1..]);
    }
}
