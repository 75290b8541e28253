//! Contract and token metadata by `eth_call`, off the ingest path.
//!
//! Contracts: the standard by ERC165 `supportsInterface` (ERC721 `0x80ac58cd`, ERC1155
//! `0xd9b67a26`), `name()`, `symbol()`, `decimals()` — tolerant of reverts, missing functions and
//! `bytes32` return values (old tokens such as MKR). A standard shown by the contract's own
//! events is kept (an ERC165 answer that contradicts them is logged); names, symbols and
//! decimals it answers replace a token list's fallbacks. The spam heuristics then judge the
//! names. Tokens: `tokenURI(id)` (ERC721) or `uri(id)` (ERC1155). Each contract and
//! token is read once; a transient RPC failure leaves it for a later round.

use std::time::Duration;

use alloy::primitives::U256;
use alloy::sol;
use alloy::sol_types::SolCall;
use futures_util::future::join_all;
use sea_orm::{DatabaseConnection, DbErr};
use tokio::sync::watch;

use super::retry::pause;
use super::rpc::{Rpc, RpcFailure};
use crate::store::contracts::{self, ContractRead, StoredContract};
use crate::store::now_ms;
use crate::store::token_meta::{self, UnreadUri};
use crate::types::{Address, Chain, TokenStandard};

sol! {
    function name() returns (string);
    function symbol() returns (string);
    function decimals() returns (uint8);
    function tokenURI(uint256 id) returns (string);
    function uri(uint256 id) returns (string);
    function supportsInterface(bytes4 id) returns (bool);
}

/// ERC165 interface ids.
const ERC721_ID: [u8; 4] = [0x80, 0xac, 0x58, 0xcd];
const ERC1155_ID: [u8; 4] = [0xd9, 0xb6, 0x7a, 0x26];

/// Contracts or tokens read per round.
const ROUND: u64 = 32;
/// Calls in flight at once.
const CONCURRENCY: usize = 8;

/// Runs the metadata worker of one chain until stopped.
pub async fn run(db: DatabaseConnection, chain: Chain, rpc: Rpc, mut stop: watch::Receiver<bool>) {
    loop {
        let did = async {
            let a = contracts_round(&db, chain, &rpc).await?;
            let b = tokens_round(&db, chain, &rpc).await?;
            Ok::<_, Failure>(a + b)
        }
        .await;
        let wait = match did {
            Ok(0) => Duration::from_millis(500),
            Ok(_) => Duration::ZERO,
            Err(e) => {
                tracing::debug!(%chain, error = %e, "metadata round failed; will retry");
                Duration::from_secs(2)
            }
        };
        if pause(&mut stop, wait).await {
            return;
        }
    }
}

#[derive(Debug, thiserror::Error)]
enum Failure {
    #[error(transparent)]
    Db(#[from] DbErr),
    #[error(transparent)]
    Rpc(#[from] RpcFailure),
}

/// Decodes a `string` return value, or a `bytes32` one (trailing zeros trimmed).
pub fn decode_text(ret: &[u8]) -> Option<String> {
    let s = if ret.len() == 32 {
        let end = ret.iter().rposition(|b| *b != 0).map_or(0, |i| i + 1);
        String::from_utf8_lossy(&ret[..end]).into_owned()
    } else {
        let word = |i: usize| -> Option<usize> {
            let w = ret.get(i..i + 32)?;
            if w[..24].iter().any(|b| *b != 0) {
                return None;
            }
            Some(u64::from_be_bytes(w[24..].try_into().ok()?) as usize)
        };
        let off = word(0)?;
        let len = word(off)?;
        let bytes = ret.get(off + 32..off.checked_add(32)?.checked_add(len)?)?;
        String::from_utf8_lossy(bytes).into_owned()
    };
    let s = s.trim_matches(char::from(0)).trim().to_string();
    (!s.is_empty()).then_some(s)
}

fn decode_u8(ret: &[u8]) -> Option<u8> {
    if ret.len() < 32 || ret[..31].iter().any(|b| *b != 0) {
        return None;
    }
    Some(ret[31])
}

async fn contracts_round(
    db: &DatabaseConnection,
    chain: Chain,
    rpc: &Rpc,
) -> Result<usize, Failure> {
    let rows = contracts::unread(db, chain, ROUND).await?;
    let n = rows.len();
    for chunk in rows.chunks(CONCURRENCY) {
        let reads = join_all(chunk.iter().map(|r| read_contract(rpc, r))).await;
        for (row, read) in chunk.iter().zip(reads) {
            let (name, symbol, decimals, erc165) = read?;
            if let (Some(events), Some(declared)) = (row.standard, erc165) {
                if events != declared {
                    tracing::warn!(%chain, contract = %row.address, %events, erc165 = %declared, "contract's events and ERC165 disagree; keeping what its events show");
                }
            }
            let read = ContractRead {
                standard: row.standard.or(erc165),
                // What the contract answers wins over a token list's fallback.
                name: name.or(row.name.clone()),
                symbol: symbol.or(row.symbol.clone()),
                decimals: decimals.map(i32::from).or(row.decimals),
                read_at: now_ms(),
            };
            contracts::record_read(db, row.chain_id, row.address, read).await?;
        }
    }
    if n > 0 {
        // Names and symbols arrived: the spam heuristics judge them.
        let read: Vec<Address> = rows.iter().map(|r| r.address).collect();
        crate::lists::heuristics::apply(db, Some((chain, &read))).await?;
    }
    Ok(n)
}

/// What a contract answered: name, symbol, decimals and the standard ERC165 names.
type Answers = (
    Option<String>,
    Option<String>,
    Option<u8>,
    Option<TokenStandard>,
);

async fn supports(rpc: &Rpc, address: Address, id: [u8; 4]) -> Result<bool, RpcFailure> {
    let data = supportsInterfaceCall { id: id.into() }.abi_encode();
    Ok(rpc
        .eth_call(address, &data)
        .await?
        .and_then(|r| decode_u8(&r))
        == Some(1))
}

async fn read_contract(rpc: &Rpc, row: &StoredContract) -> Result<Answers, RpcFailure> {
    let address = row.address;
    let erc165 = if supports(rpc, address, ERC721_ID).await? {
        Some(TokenStandard::Erc721)
    } else if supports(rpc, address, ERC1155_ID).await? {
        Some(TokenStandard::Erc1155)
    } else {
        None
    };
    let name = rpc
        .eth_call(address, &nameCall {}.abi_encode())
        .await?
        .and_then(|r| decode_text(&r));
    let symbol = rpc
        .eth_call(address, &symbolCall {}.abi_encode())
        .await?
        .and_then(|r| decode_text(&r));
    let nft_events = row.standard.is_some_and(|s| s != TokenStandard::Erc20);
    let fungible = erc165.is_none() && !nft_events;
    let decimals = if fungible {
        rpc.eth_call(address, &decimalsCall {}.abi_encode())
            .await?
            .and_then(|r| decode_u8(&r))
    } else {
        None
    };
    Ok((name, symbol, decimals, erc165))
}

async fn tokens_round(db: &DatabaseConnection, chain: Chain, rpc: &Rpc) -> Result<usize, Failure> {
    let rows = token_meta::unread_uris(db, chain, ROUND).await?;
    let n = rows.len();
    for chunk in rows.chunks(CONCURRENCY) {
        let reads = join_all(chunk.iter().map(|r| read_token_uri(rpc, r))).await;
        for (row, read) in chunk.iter().zip(reads) {
            let uri = row.token_uri.clone().or(read?);
            // With a URI, the off-chain metadata worker fetches what it names, from now on.
            token_meta::record_uri(db, row, uri, now_ms()).await?;
        }
    }
    Ok(n)
}

async fn read_token_uri(rpc: &Rpc, row: &UnreadUri) -> Result<Option<String>, RpcFailure> {
    let (address, id): (Address, U256) = (row.contract, row.token_id.0);
    let data = if row.contract_type.is_multi_token() {
        uriCall { id }.abi_encode()
    } else {
        tokenURICall { id }.abi_encode()
    };
    Ok(rpc
        .eth_call(address, &data)
        .await?
        .and_then(|r| decode_text(&r)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_and_bytes32() {
        let mut b32 = [0u8; 32];
        b32[..5].copy_from_slice(b"Maker");
        assert_eq!(decode_text(&b32).as_deref(), Some("Maker"));
        let enc = alloy::sol_types::SolValue::abi_encode_params(&("Tether USD".to_string(),));
        assert_eq!(decode_text(&enc).as_deref(), Some("Tether USD"));
        assert_eq!(decode_text(&[0u8; 32]), None);
        assert_eq!(decode_text(&[1, 2, 3]), None);
        let mut bad = enc.clone();
        bad[31] = 0xff; // offset out of range
        assert_eq!(decode_text(&bad), None);
    }

    #[test]
    fn decimals() {
        let mut w = [0u8; 32];
        w[31] = 18;
        assert_eq!(decode_u8(&w), Some(18));
        w[0] = 1;
        assert_eq!(decode_u8(&w), None);
    }
}
