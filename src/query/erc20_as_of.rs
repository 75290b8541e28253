//! A token's holders as of a past block, from the balances the store keeps at the head: only
//! the holders of a transfer stored after the block can differ, and each one's balance then is
//! its balance now minus what it received since plus what it sent since. The cost grows with
//! the token's transfers after the block (one index range of `erc20_transfers`), not with its
//! holders: a walk pinned to a block a few blocks back pays almost nothing.

use std::collections::{HashMap, HashSet};

use alloy::primitives::{U256, U512};
use sea_orm::sea_query::{Expr, ExprTrait};
use sea_orm::{ColumnTrait, Condition, ConnectionTrait, EntityTrait, QueryFilter, QuerySelect};

use super::QueryError;
use crate::entity::{erc20_balance, erc20_transfer};
use crate::types::{Address, Chain, Uint256};

use erc20_transfer::Column as T;

/// What changed in a token's balances after a block.
pub(super) struct HoldersSince {
    /// The holders whose balance changed after the block (never the zero address).
    pub owners: HashSet<Address>,
    /// Their real balances as of the block (none for a holder with nothing then).
    pub rows: Vec<erc20_balance::Model>,
    /// Minted after the block (sent by the zero address).
    minted: U512,
    /// Burned after the block (received by the zero address).
    burned: U512,
}

impl HoldersSince {
    /// The supply as of the block, from the `supply` now.
    pub fn supply_then(&self, supply: Uint256) -> Option<Uint256> {
        narrow((U512::from(supply.0) + self.burned).checked_sub(self.minted)?)
    }
}

/// A 512-bit amount as a uint256, when it is one.
fn narrow(v: U512) -> Option<Uint256> {
    let bytes: [u8; 64] = v.to_be_bytes();
    let low: [u8; 32] = bytes[32..].try_into().ok()?;
    (bytes[..32] == [0; 32]).then(|| Uint256::from_be_bytes(&low))
}

/// Received and sent after the block, per address.
#[derive(Default)]
struct Flows {
    received: U512,
    sent: U512,
}

/// The token's holders whose balances changed after `block`, with their balances then; `None`
/// when nothing changed (the indexed head is `block`, or no transfer of the token was stored
/// since): then the kept balances are the answer as of `block`.
pub(super) async fn holders_since(
    db: &impl ConnectionTrait,
    chain: Chain,
    contract: Address,
    block: u64,
    indexed: Option<u64>,
) -> Result<Option<HoldersSince>, QueryError> {
    if indexed.is_none_or(|i| i <= block) {
        return Ok(None);
    }
    let after = i64::try_from(block).unwrap_or(i64::MAX);
    let moves: Vec<(Address, Address, Uint256)> = erc20_transfer::Entity::find()
        .filter(T::ChainId.eq(chain.db_id()))
        .filter(T::ContractAddress.eq(contract))
        .filter(T::BlockNumber.gt(after))
        .select_only()
        .columns([T::FromAddress, T::ToAddress, T::Value])
        .into_tuple()
        .all(db)
        .await?;
    if moves.is_empty() {
        return Ok(None);
    }
    let mut flows: HashMap<Address, Flows> = HashMap::new();
    for (from, to, value) in moves {
        let v = U512::from(value.0);
        flows.entry(from).or_default().sent += v;
        flows.entry(to).or_default().received += v;
    }
    let zero = flows.remove(&Address::ZERO).unwrap_or_default();
    let owners: HashSet<Address> = flows.keys().copied().collect();
    let now = kept(db, chain, contract, &owners).await?;
    let last = last_blocks(db, chain, contract, &owners, after).await?;
    let rows = flows
        .into_iter()
        .filter_map(|(owner, f)| {
            let (balance, wraps) = now.get(&owner).copied().unwrap_or((Uint256::ZERO, 0));
            let then = balance_then(balance, wraps, &f)?;
            Some(erc20_balance::Model {
                chain_id: chain.db_id(),
                owner_address: owner,
                contract_address: contract,
                balance: then,
                wraps: 0,
                block_number: last.get(&owner).copied()?,
            })
        })
        .collect();
    Ok(Some(HoldersSince {
        owners,
        rows,
        minted: zero.sent,
        burned: zero.received,
    }))
}

/// `wraps * 2^256 + balance - received + sent`, when it is a real (non-zero uint256) balance.
fn balance_then(balance: Uint256, wraps: i64, f: &Flows) -> Option<Uint256> {
    let wrap = U512::from(U256::MAX) + U512::from(1u8);
    let span = wrap * U512::from(wraps.unsigned_abs());
    let (plus, minus) = if wraps >= 0 {
        (U512::from(balance.0) + f.sent + span, f.received)
    } else {
        (U512::from(balance.0) + f.sent, f.received + span)
    };
    narrow(plus.checked_sub(minus)?).filter(|b| !b.0.is_zero())
}

/// The kept (balance, wraps) of `owners` now.
async fn kept(
    db: &impl ConnectionTrait,
    chain: Chain,
    contract: Address,
    owners: &HashSet<Address>,
) -> Result<HashMap<Address, (Uint256, i64)>, QueryError> {
    let list: Vec<Address> = owners.iter().copied().collect();
    let mut out = HashMap::new();
    for chunk in list.chunks(500) {
        let rows = erc20_balance::Entity::find()
            .filter(erc20_balance::Column::ChainId.eq(chain.db_id()))
            .filter(erc20_balance::Column::ContractAddress.eq(contract))
            .filter(erc20_balance::Column::OwnerAddress.is_in(chunk.iter().copied()))
            .all(db)
            .await?;
        out.extend(
            rows.into_iter()
                .map(|r| (r.owner_address, (r.balance, r.wraps))),
        );
    }
    Ok(out)
}

/// The block of each owner's last transfer of the token at or before `block`.
async fn last_blocks(
    db: &impl ConnectionTrait,
    chain: Chain,
    contract: Address,
    owners: &HashSet<Address>,
    block: i64,
) -> Result<HashMap<Address, i64>, QueryError> {
    let list: Vec<Address> = owners.iter().copied().collect();
    let mut out: HashMap<Address, i64> = HashMap::new();
    for side in [T::FromAddress, T::ToAddress] {
        for chunk in list.chunks(500) {
            let rows: Vec<(Address, i64)> = erc20_transfer::Entity::find()
                .filter(
                    Condition::all()
                        .add(T::ChainId.eq(chain.db_id()))
                        .add(T::ContractAddress.eq(contract))
                        .add(T::BlockNumber.lte(block))
                        .add(side.is_in(chunk.iter().copied())),
                )
                .select_only()
                .column(side)
                .column_as(Expr::col(T::BlockNumber).max(), "block")
                .group_by(side)
                .into_tuple()
                .all(db)
                .await?;
            for (owner, b) in rows {
                let e = out.entry(owner).or_insert(b);
                *e = Ord::max(*e, b);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(v: u64) -> U512 {
        U512::from(v)
    }

    #[test]
    fn a_balance_then_undoes_what_moved_since() {
        let f = |received, sent| Flows {
            received: u(received),
            sent: u(sent),
        };
        let b = |v| Uint256::from_u64(v);
        // 10 now, after receiving 4 and sending 1: 7 then.
        assert_eq!(balance_then(b(10), 0, &f(4, 1)), Some(b(7)));
        // Nothing then (all of it received since): no row.
        assert_eq!(balance_then(b(4), 0, &f(4, 0)), None);
        // A holder with no row now (sent everything since) held what it sent.
        assert_eq!(balance_then(b(0), 0, &f(0, 9)), Some(b(9)));
        // A sum that is negative now (history not stored yet) may be real then... or not.
        assert_eq!(balance_then(Uint256(U256::MAX), -1, &f(0, 3)), Some(b(2)));
        assert_eq!(balance_then(b(1), -1, &f(0, 3)), None);
    }
}
