//! ERC1155 batches (a batch of n ids is n moves, in batch order), burns (ERC721 and an ERC1155
//! batch), a token id of 2^256-1, and exact token balances, on logs written here: the truth
//! is what was written, listed by hand below.

use serde_json::{json, Value};
use tokenql::store::contracts::{upsert_contract_meta, ContractMeta};
use tokenql::types::{Address, Chain};

use super::walk::{call, conn, s, walk, MAX};
use crate::support::common::truth::{iso8601, TRANSFER, TRANSFER_SINGLE, ZERO};
use crate::support::common::{gql_str, Backend, TestApp};

pub const A: &str = "0xaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
pub const B: &str = "0xbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
const OP: &str = "0x0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b";
pub const SENDER: &str = "0x5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e";
pub const C1155: &str = "0x1155000000000000000000000000000000000000";
pub const C721: &str = "0x7210000000000000000000000000000000000000";
pub const T18: &str = "0xd180000000000000000000000000000000000000";
pub const TM: &str = "0xdd00000000000000000000000000000000000000";
const FF: &str = "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff";
pub const MAX_HEX: &str = "0xffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff";

fn topic(a: &str) -> String {
    format!("0x{:0>64}", &a[2..])
}

fn word(n: u64) -> String {
    format!("{n:064x}")
}

/// A token id or amount: `MAX` or a small number.
fn w(v: &str) -> String {
    if v == MAX {
        FF.to_string()
    } else {
        word(v.parse().expect("a small number"))
    }
}

fn time(block: u64) -> u64 {
    1_700_000_000 + block * 12
}

fn log(contract: &str, topics: Vec<String>, data: String, block: u64, index: u64) -> String {
    json!({
        "address": contract,
        "topics": topics,
        "data": format!("0x{data}"),
        "blockNumber": format!("{block:#x}"),
        "blockHash": format!("0x{block:064x}"),
        "transactionHash": format!("0x{:064x}", block * 1000 + index),
        "transactionIndex": format!("{index:#x}"),
        "logIndex": format!("{index:#x}"),
        "removed": false,
    })
    .to_string()
}

/// `TransferBatch(operator, from, to, ids, values)`: two ABI-encoded dynamic arrays.
fn batch(op: &str, from: &str, to: &str, moves: &[(&str, &str)], block: u64, index: u64) -> String {
    let sig =
        alloy::primitives::keccak256("TransferBatch(address,address,address,uint256[],uint256[])");
    let n = moves.len() as u64;
    let mut data = word(0x40) + &word(0x40 + 32 * (1 + n));
    data += &word(n);
    data += &moves.iter().map(|(id, _)| w(id)).collect::<String>();
    data += &word(n);
    data += &moves.iter().map(|(_, v)| w(v)).collect::<String>();
    let topics = vec![format!("{sig}"), topic(op), topic(from), topic(to)];
    log(C1155, topics, data, block, index)
}

fn single(op: &str, from: &str, to: &str, id: &str, v: &str, block: u64, index: u64) -> String {
    let topics = vec![TRANSFER_SINGLE.into(), topic(op), topic(from), topic(to)];
    log(C1155, topics, w(id) + &w(v), block, index)
}

fn nft(from: &str, to: &str, id: &str, block: u64, index: u64) -> String {
    let topics = vec![
        TRANSFER.into(),
        topic(from),
        topic(to),
        format!("0x{}", w(id)),
    ];
    log(C721, topics, String::new(), block, index)
}

fn erc20(token: &str, from: &str, to: &str, v: &str, block: u64, index: u64) -> String {
    log(
        token,
        vec![TRANSFER.into(), topic(from), topic(to)],
        w(v),
        block,
        index,
    )
}

/// One move as written: (block, log, batch index, contract, id, from, to, amount, operator).
type Move = (
    u64,
    u64,
    u64,
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    Option<&'static str>,
);

/// Every NFT move written, oldest first.
const MOVES: [Move; 11] = [
    (100, 0, 0, C1155, "1", ZERO, A, "5", Some(OP)),
    (100, 0, 1, C1155, MAX, ZERO, A, "2", Some(OP)),
    (100, 0, 2, C1155, "7", ZERO, A, "1", Some(OP)),
    (100, 1, 0, C721, MAX, ZERO, A, "1", None),
    (101, 0, 0, C1155, MAX, A, B, "1", Some(A)),
    (101, 1, 0, C721, MAX, A, B, "1", None),
    (101, 2, 0, C721, "5", ZERO, A, "1", None),
    (102, 0, 0, C721, "5", A, ZERO, "1", None),
    (102, 1, 0, C1155, "1", A, B, "2", Some(A)),
    (102, 1, 1, C1155, "7", A, B, "1", Some(A)),
    (103, 0, 0, C1155, "1", B, ZERO, "1", Some(B)),
];

async fn import(app: &TestApp) {
    let lines = vec![
        batch(OP, ZERO, A, &[("1", "5"), (MAX, "2"), ("7", "1")], 100, 0),
        nft(ZERO, A, MAX, 100, 1),
        erc20(T18, SENDER, A, "10", 100, 2),
        erc20(TM, SENDER, A, MAX, 100, 3),
        single(A, A, B, MAX, "1", 101, 0),
        nft(A, B, MAX, 101, 1),
        nft(ZERO, A, "5", 101, 2),
        erc20(T18, A, B, "3", 101, 3),
        nft(A, ZERO, "5", 102, 0),
        batch(A, A, B, &[("1", "2"), ("7", "1")], 102, 1),
        batch(B, B, ZERO, &[("1", "1")], 103, 0),
    ];
    let blocks: String = (100..=103u64)
        .map(|b| format!("{{\"number\":\"{b:#x}\",\"hash\":\"0x{b:064x}\",\"parentHash\":null,\"timestamp\":\"{:#x}\"}}\n", time(b)))
        .collect();
    let headers = tokenql::import::read_blocks_str(&blocks, "synthetic blocks").expect("headers");
    let report =
        tokenql::import::import_lines(&app.db, Chain::ETH, lines.into_iter().map(Ok), headers)
            .await
            .expect("import");
    tokenql::store::mark_history_complete(&app.db, Chain::ETH)
        .await
        .expect("complete");
    assert_eq!(
        (report.erc20_transfers, report.nft_transfers),
        (3, 11),
        "{report:?}"
    );
    let meta = ContractMeta {
        name: Some("Eighteen".into()),
        symbol: Some("E18".into()),
        decimals: Some(18),
        logo: None,
    };
    let t18 = Address::parse(T18).expect("address");
    upsert_contract_meta(&app.db, Chain::ETH, &[(t18, meta)])
        .await
        .expect("metadata");
}

/// The moves of `keep`, newest first, as (block, log, batch).
fn moves_where(keep: impl Fn(&Move) -> bool) -> Vec<(u64, u64, u64)> {
    MOVES
        .iter()
        .rev()
        .filter(|m| keep(m))
        .map(|m| (m.0, m.1, m.2))
        .collect()
}

fn move_keys(nodes: &[Value]) -> Vec<(u64, u64, u64)> {
    let n = |v: &Value, k: &str| v[k].as_u64().unwrap_or_else(|| panic!("no {k}: {v}"));
    nodes
        .iter()
        .map(|v| (n(v, "blockNumber"), n(v, "logIndex"), n(v, "batchIndex")))
        .collect()
}

/// Every move node against the move written at its place.
fn check_moves(nodes: &[Value]) {
    for n in nodes {
        let key = (
            n["blockNumber"].as_u64(),
            n["logIndex"].as_u64(),
            n["batchIndex"].as_u64(),
        );
        let m = MOVES
            .iter()
            .find(|m| (Some(m.0), Some(m.1), Some(m.2)) == key)
            .expect("a move written");
        assert_eq!(s(&n["tokenAddress"]).as_deref(), Some(m.3), "{n}");
        assert_eq!(s(&n["tokenId"]).as_deref(), Some(m.4), "{n}");
        assert_eq!(
            (s(&n["fromWallet"]), s(&n["toWallet"])),
            (Some(m.5.into()), Some(m.6.into())),
            "{n}"
        );
        assert_eq!(s(&n["amount"]).as_deref(), Some(m.7), "{n}");
        assert_eq!(s(&n["operator"]).as_deref(), m.8, "{n}");
        let kind = if m.3 == C1155 { "ERC1155" } else { "ERC721" };
        assert_eq!(s(&n["contractType"]).as_deref(), Some(kind), "{n}");
        assert_eq!(s(&n["blockTimestamp"]), Some(iso8601(time(m.0))), "{n}");
    }
}

const MOVE: &str = "tokenAddress tokenId contractType fromWallet toWallet operator amount \
    blockNumber logIndex batchIndex blockTimestamp";

pub async fn batches_burns_and_the_largest_token_id(backend: Backend) {
    let app = crate::support::common::spawn(backend).await;
    import(&app).await;
    let q =
        |entry: String, list: &'static str, first: usize, args: String, fields: &'static str| {
            move |after: &str| {
                format!(
                    "{{ {entry} {{ {} {} }} }}",
                    call(list, first, after, &args),
                    conn(fields)
                )
            }
        };
    let wallet = |a: &str| format!("wallet(address: {})", gql_str(a));
    let coll = |c: &str| format!("nftCollection(address: {})", gql_str(c));
    let token =
        |c: &str, id: &str| format!("nft(address: {}, tokenId: {})", gql_str(c), gql_str(id));

    // Moves: a wallet's, a collection's and one token's, in pages of 2 and 3, both orders.
    for (entry, path0, want) in [
        (wallet(A), "wallet", moves_where(|m| m.5 == A || m.6 == A)),
        (wallet(B), "wallet", moves_where(|m| m.5 == B || m.6 == B)),
        (coll(C1155), "nftCollection", moves_where(|m| m.3 == C1155)),
        (coll(C721), "nftCollection", moves_where(|m| m.3 == C721)),
        (
            token(C1155, MAX_HEX),
            "nft",
            moves_where(|m| m.3 == C1155 && m.4 == MAX),
        ),
        (
            token(C721, "5"),
            "nft",
            moves_where(|m| m.3 == C721 && m.4 == "5"),
        ),
    ] {
        let list = if path0 == "wallet" {
            "nftTransfers"
        } else {
            "transfers"
        };
        let got = walk(
            &app,
            &[path0, list],
            3,
            q(entry.clone(), list, 3, String::new(), MOVE),
        )
        .await;
        got.assert_synced(&entry);
        assert_eq!(move_keys(&got.nodes), want, "{entry}: newest first");
        check_moves(&got.nodes);
        let asc = walk(
            &app,
            &[path0, list],
            2,
            q(entry.clone(), list, 2, "order: ASC".into(), MOVE),
        )
        .await;
        let mut reversed = want.clone();
        reversed.reverse();
        assert_eq!(move_keys(&asc.nodes), reversed, "{entry}: order: ASC");
    }
    // Date bounds on blocks 101 to 102 (ISO 8601, then seconds).
    let dated = format!(
        "fromDate: {}, toDate: \"{}\"",
        gql_str(&iso8601(time(101))),
        time(102)
    );
    let got = walk(
        &app,
        &["wallet", "nftTransfers"],
        4,
        q(wallet(A), "nftTransfers", 4, dated, MOVE),
    )
    .await;
    assert_eq!(
        move_keys(&got.nodes),
        moves_where(|m| (m.5 == A || m.6 == A) && (101..=102).contains(&m.0))
    );

    super::synthetic_holdings::holdings_after_burns(&app).await;
    app.cleanup().await;
}
