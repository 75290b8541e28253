//! Derived rows: current holdings and token mints, recomputed from the stored transfers of the
//! tokens a batch touched. Recomputing (rather than applying deltas) keeps them exact whatever
//! the order batches arrive in, and is what a reorg rollback reuses after deleting orphaned
//! transfers.

use std::collections::{BTreeMap, BTreeSet};

use std::sync::LazyLock;

use sea_orm::sea_query::OnConflict;
use sea_orm::{
    ColumnTrait, Condition, ConnectionTrait, DbErr, EntityTrait, QueryFilter, QueryOrder,
};

use super::dialect::{any_pair_of_chain, by_keys, key_join, Dialect};

use crate::entity::{nft_holding, nft_token, nft_transfer};
use crate::types::{Address, TokenStandard, Uint256};

/// Tokens per recomputation round.
const TOKENS_PER_ROUND: usize = 200;
/// Tokens per round on PostgreSQL (see [`pg_by_tokens`]).
const PG_TOKENS_PER_ROUND: usize = 2_000;
/// A round's moves on PostgreSQL, the tokens joined as arrays ([`by_keys`]).
static MOVES_BY_KEYS: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT t.* FROM nft_transfers t {} WHERE t.chain_id = $1 \
         ORDER BY t.block_number, t.log_index, t.batch_index",
        key_join("t", "contract_address", "token_id")
    )
});

fn token_condition(
    cid: i64,
    tokens: &[(Address, Uint256)],
    contract: impl ColumnTrait,
    id: impl ColumnTrait,
    chain: impl ColumnTrait,
) -> Condition {
    any_pair_of_chain(chain, cid, (contract, id), tokens.iter().copied())
}

/// Recomputes holdings and mint data of `tokens` (contract, token id in storage form).
pub(crate) async fn recompute_tokens<C: ConnectionTrait>(
    db: &C,
    cid: i64,
    tokens: &BTreeSet<(Address, Uint256)>,
) -> Result<(), DbErr> {
    let all: Vec<(Address, Uint256)> = tokens.iter().cloned().collect();
    let pg = Dialect::of(db).takes_key_arrays();
    // PostgreSQL's statements take the tokens as two arrays: no parameter limit, no `OR`.
    let per_round = if pg {
        PG_TOKENS_PER_ROUND
    } else {
        TOKENS_PER_ROUND
    };
    for round in all.chunks(per_round) {
        let per_token = round_moves(db, pg, cid, round).await?;
        let (holdings, token_rows) = derived_rows(cid, &per_token);
        replace_rows(db, pg, cid, round, &per_token, holdings, token_rows).await?;
    }
    Ok(())
}

/// Every move of the round's tokens, per token, in chain order.
async fn round_moves<C: ConnectionTrait>(
    db: &C,
    pg: bool,
    cid: i64,
    round: &[(Address, Uint256)],
) -> Result<BTreeMap<(Address, Uint256), Vec<nft_transfer::Model>>, DbErr> {
    let moves = if pg {
        nft_transfer::Entity::find()
            .from_raw_sql(by_keys(&MOVES_BY_KEYS, cid, round.iter().copied()))
            .all(db)
            .await?
    } else {
        nft_transfer::Entity::find()
            .filter(token_condition(
                cid,
                round,
                nft_transfer::Column::ContractAddress,
                nft_transfer::Column::TokenId,
                nft_transfer::Column::ChainId,
            ))
            .order_by_asc(nft_transfer::Column::BlockNumber)
            .order_by_asc(nft_transfer::Column::LogIndex)
            .order_by_asc(nft_transfer::Column::BatchIndex)
            .all(db)
            .await?
    };

    let mut per_token: BTreeMap<(Address, Uint256), Vec<nft_transfer::Model>> = BTreeMap::new();
    for m in moves {
        per_token
            .entry((m.contract_address, m.token_id))
            .or_default()
            .push(m);
    }
    Ok(per_token)
}

/// The holdings and token rows the moves make.
fn derived_rows(
    cid: i64,
    per_token: &BTreeMap<(Address, Uint256), Vec<nft_transfer::Model>>,
) -> (Vec<nft_holding::ActiveModel>, Vec<nft_token::ActiveModel>) {
    let mut holdings = Vec::new();
    let mut token_rows = Vec::new();
    for ((contract, token_id), moves) in per_token {
        let (holders, kind) = replay(moves);
        for (owner, (amount, block)) in holders {
            holdings.push(nft_holding::ActiveModel::from(nft_holding::Model {
                chain_id: cid,
                owner_address: owner,
                contract_address: *contract,
                token_id: *token_id,
                contract_type: kind,
                amount,
                block_number: block,
            }));
        }
        let mint = moves.iter().find(|m| m.from_address.is_zero());
        token_rows.push(nft_token::ActiveModel::from(nft_token::Model {
            chain_id: cid,
            contract_address: *contract,
            token_id: *token_id,
            contract_type: kind,
            token_uri: None,
            metadata: None,
            block_number_minted: mint.map(|m| m.block_number),
            minter_address: mint.map(|m| {
                let minter = match m.contract_type {
                    TokenStandard::Erc1155 => m.operator.unwrap_or(m.to_address),
                    _ => m.to_address,
                };
                minter.to_string()
            }),
            last_token_uri_sync: None,
            last_metadata_sync: None,
            metadata_status: None,
            metadata_attempts: 0,
            metadata_next_at: None,
            metadata_error: None,
        }));
    }
    (holdings, token_rows)
}

/// Replaces the round's holdings and token rows with `holdings` and `token_rows`.
async fn replace_rows<C: ConnectionTrait>(
    db: &C,
    pg: bool,
    cid: i64,
    round: &[(Address, Uint256)],
    per_token: &BTreeMap<(Address, Uint256), Vec<nft_transfer::Model>>,
    holdings: Vec<nft_holding::ActiveModel>,
    token_rows: Vec<nft_token::ActiveModel>,
) -> Result<(), DbErr> {
    // Tokens with no transfers left (all rolled back) lose their token row too.
    let gone: Vec<(Address, Uint256)> = round
        .iter()
        .filter(|k| !per_token.contains_key(*k))
        .cloned()
        .collect();
    if !gone.is_empty() {
        nft_token::Entity::delete_many()
            .filter(token_condition(
                cid,
                &gone,
                nft_token::Column::ContractAddress,
                nft_token::Column::TokenId,
                nft_token::Column::ChainId,
            ))
            .exec(db)
            .await?;
    }
    if pg {
        db.execute_raw(by_keys(
            "DELETE FROM nft_holdings h USING UNNEST($2::bytea[], $3::bytea[]) AS k(c, i) \
             WHERE h.chain_id = $1 AND h.contract_address = k.c AND h.token_id = k.i",
            cid,
            round.iter().copied(),
        ))
        .await?;
    } else {
        nft_holding::Entity::delete_many()
            .filter(token_condition(
                cid,
                round,
                nft_holding::Column::ContractAddress,
                nft_holding::Column::TokenId,
                nft_holding::Column::ChainId,
            ))
            .exec(db)
            .await?;
    }
    for chunk in holdings.chunks(super::CHUNK) {
        nft_holding::Entity::insert_many(chunk.to_vec())
            .exec_without_returning(db)
            .await?;
    }
    for chunk in token_rows.chunks(super::CHUNK) {
        nft_token::Entity::insert_many(chunk.to_vec())
            .on_conflict(
                OnConflict::columns([
                    nft_token::Column::ChainId,
                    nft_token::Column::ContractAddress,
                    nft_token::Column::TokenId,
                ])
                .update_columns([
                    nft_token::Column::ContractType,
                    nft_token::Column::BlockNumberMinted,
                    nft_token::Column::MinterAddress,
                ])
                .to_owned(),
            )
            .exec_without_returning(db)
            .await?;
    }
    Ok(())
}

/// Replays one token's transfers in order: owner -> (amount, block of latest acquisition), and
/// the token's standard. Balances saturate at zero where history before the indexed range is
/// missing.
pub fn replay(moves: &[nft_transfer::Model]) -> (BTreeMap<Address, (Uint256, i64)>, TokenStandard) {
    let mut holders: BTreeMap<Address, (Uint256, i64)> = BTreeMap::new();
    let mut kind = TokenStandard::Erc721;
    for m in moves {
        kind = m.contract_type;
        if m.contract_type == TokenStandard::Erc721 {
            holders.clear();
            if !m.to_address.is_zero() {
                holders.insert(m.to_address, (Uint256::from_u64(1), m.block_number));
            }
            continue;
        }
        if !m.from_address.is_zero() {
            if let Some((bal, _)) = holders.get_mut(&m.from_address) {
                *bal = bal.saturating_sub(m.amount);
                if bal.is_zero() {
                    holders.remove(&m.from_address);
                }
            }
        }
        if !m.to_address.is_zero() && !m.amount.is_zero() {
            let e = holders
                .entry(m.to_address)
                .or_insert((Uint256::ZERO, m.block_number));
            e.0 = e.0.saturating_add(m.amount);
            e.1 = m.block_number;
        }
    }
    (holders, kind)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Hash32;

    fn a(n: u8) -> Address {
        Address::parse(&format!("0x{n:040x}")).unwrap_or_else(|e| panic!("{e}"))
    }

    fn mv(block: i64, kind: TokenStandard, from: u8, to: u8, amount: u64) -> nft_transfer::Model {
        nft_transfer::Model {
            chain_id: 1,
            block_number: block,
            log_index: 0,
            batch_index: 0,
            block_hash: Hash32::default(),
            block_timestamp: 0,
            transaction_hash: Hash32::default(),
            transaction_index: 0,
            contract_address: a(0xc),
            contract_type: kind,
            operator: None,
            from_address: a(from),
            to_address: a(to),
            token_id: Uint256::ZERO,
            amount: Uint256::from_u64(amount),
        }
    }

    const ERC721: TokenStandard = TokenStandard::Erc721;
    const ERC1155: TokenStandard = TokenStandard::Erc1155;

    #[test]
    fn erc721_follows_the_last_transfer_and_burns() {
        let (h, _) = replay(&[mv(1, ERC721, 0, 0xa, 1), mv(5, ERC721, 0xa, 0xb, 1)]);
        assert_eq!(
            h.into_iter().collect::<Vec<_>>(),
            vec![(a(0xb), (Uint256::from_u64(1), 5))]
        );
        let (h, _) = replay(&[mv(1, ERC721, 0, 0xa, 1), mv(2, ERC721, 0xa, 0, 1)]);
        assert!(h.is_empty());
    }

    #[test]
    fn erc1155_balances_and_acquisition_block() {
        let (h, k) = replay(&[
            mv(1, ERC1155, 0, 0xa, 10),
            mv(2, ERC1155, 0xa, 0xb, 4),
            mv(3, ERC1155, 0xa, 0xb, 6),
            mv(4, ERC1155, 0xf, 0xa, 1), // 0xf's history is unknown: saturates
        ]);
        assert_eq!(k, ERC1155);
        assert_eq!(h[&a(0xa)], (Uint256::from_u64(1), 4));
        assert_eq!(h[&a(0xb)], (Uint256::from_u64(10), 3));
        assert!(!h.contains_key(&a(0xf)));
    }
}
