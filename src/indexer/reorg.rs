//! Reorg handling as a small state machine.
//!
//! The follower keeps the header of every block it stored within `max_reorg_depth` of the head
//! (and of every block with transfers). Each step it checks the chain's hash at its own tip and
//! the parent hash of the next block against what it stored:
//!
//! ```text
//!   Following ──(hash mismatch at tip, or parent mismatch)──► Searching
//!   Searching ──(highest stored block whose hash the chain still has)──► RollingBack(keep n)
//!   Searching ──(no match within max_reorg_depth)──► Stopped(DeepReorg)   (loud, no writes)
//!   RollingBack ──(one transaction: delete > n, recompute holdings, checkpoint = n)──► Following
//! ```
//!
//! [`find_fork`] is the Searching step, as a pure function.

use std::collections::BTreeMap;

use alloy::primitives::B256;

/// The outcome of a fork search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fork {
    /// Keep everything through this block (`None`: nothing stored is on the chain any more;
    /// roll back to the start).
    KeepThrough(Option<u64>),
    /// The fork lies below the lowest block a rollback may reach.
    TooDeep,
}

/// Finds the fork point.
///
/// - `stored_desc`: stored (number, hash) pairs, highest first: every stored header from the tip
///   down to `lowest_allowed`, plus the first one below it if any;
/// - `chain`: the chain's current hashes for those numbers (absent: the chain no longer has
///   that block, e.g. it got shorter);
/// - `lowest_allowed`: the deepest block a rollback may remove.
pub fn find_fork(
    stored_desc: &[(u64, B256)],
    chain: &BTreeMap<u64, B256>,
    lowest_allowed: u64,
) -> Fork {
    for (n, h) in stored_desc {
        if chain.get(n) == Some(h) {
            return Fork::KeepThrough(Some(*n));
        }
        if *n < lowest_allowed {
            return Fork::TooDeep;
        }
    }
    Fork::KeepThrough(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(x: u8) -> B256 {
        B256::repeat_byte(x)
    }

    #[test]
    fn no_reorg_keeps_the_tip() {
        let stored = [(10, h(10)), (9, h(9))];
        let chain = BTreeMap::from([(10, h(10)), (9, h(9))]);
        assert_eq!(find_fork(&stored, &chain, 0), Fork::KeepThrough(Some(10)));
    }

    #[test]
    fn finds_the_highest_common_block() {
        let stored = [(10, h(10)), (9, h(9)), (8, h(8)), (5, h(5))];
        let chain = BTreeMap::from([(10, h(0xa0)), (9, h(0x90)), (8, h(8)), (5, h(5))]);
        assert_eq!(find_fork(&stored, &chain, 0), Fork::KeepThrough(Some(8)));
    }

    #[test]
    fn sparse_headers_roll_back_to_the_last_known_good() {
        // Only blocks 10 and 4 were stored; 10 changed: keep through 4 and re-ingest 5..=10.
        let stored = [(10, h(10)), (4, h(4))];
        let chain = BTreeMap::from([(10, h(0xa0)), (4, h(4))]);
        assert_eq!(find_fork(&stored, &chain, 2), Fork::KeepThrough(Some(4)));
    }

    #[test]
    fn shorter_chain_counts_as_mismatch() {
        let stored = [(10, h(10)), (9, h(9))];
        let chain = BTreeMap::from([(9, h(9))]);
        assert_eq!(find_fork(&stored, &chain, 0), Fork::KeepThrough(Some(9)));
    }

    #[test]
    fn everything_replaced_rolls_back_to_start() {
        let stored = [(3, h(3)), (2, h(2))];
        let chain = BTreeMap::from([(3, h(0x33)), (2, h(0x22))]);
        assert_eq!(find_fork(&stored, &chain, 0), Fork::KeepThrough(None));
    }

    #[test]
    fn too_deep_stops() {
        // Window is 70..=100; every stored block in it changed, and the one below (60) too.
        let stored = [(100, h(100)), (80, h(80)), (70, h(70)), (60, h(60))];
        let chain = BTreeMap::from([(100, h(1)), (80, h(2)), (70, h(3)), (60, h(4))]);
        assert_eq!(find_fork(&stored, &chain, 70), Fork::TooDeep);
        // ... but a match right below the window is still a valid fork point.
        let chain = BTreeMap::from([(100, h(1)), (80, h(2)), (70, h(3)), (60, h(60))]);
        assert_eq!(find_fork(&stored, &chain, 70), Fork::KeepThrough(Some(60)));
    }
}
