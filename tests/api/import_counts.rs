//! `tokenql import`'s counts, line by line: what is imported, what is skipped and why (not a
//! transfer, malformed, no block header), and where a write batch ends (its blocks are counted
//! per batch), on every backend.

use crate::support::common;

use common::truth::{TRANSFER, TRANSFER_SINGLE};
use common::Backend;
use serde_json::{json, Value};
use tokenql::import::{import_lines, read_blocks_str, ImportReport};
use tokenql::types::Chain;

crate::backend_tests!(import_counts_every_skip, import_batches_end_on_decoded_logs);

const TOKEN: &str = "0x00000000000000000000000000000000000000aa";

fn word(n: u64) -> String {
    format!("{n:064x}")
}

/// A log of `TOKEN` in `block` (the uint256 suite's), with `extra` fields overriding or added.
fn log(topics: Vec<String>, data: String, block: u64, index: u64, extra: Value) -> String {
    let line = crate::blackbox_uint256::log(TOKEN, topics, data, block, index);
    let mut l: Value = serde_json::from_str(&line).expect("a log line");
    if let (Some(l), Some(extra)) = (l.as_object_mut(), extra.as_object()) {
        l.extend(extra.clone());
    }
    l.to_string()
}

/// An ERC20 `Transfer` of `value` from 0x…01 to 0x…02.
fn erc20(block: u64, index: u64, value: u64) -> String {
    let topics = vec![
        TRANSFER.into(),
        format!("0x{}", word(1)),
        format!("0x{}", word(2)),
    ];
    log(topics, word(value), block, index, json!({}))
}

/// Headers of `blocks` in the blocks file's form.
fn headers(
    blocks: impl Iterator<Item = u64>,
) -> std::collections::BTreeMap<u64, tokenql::store::BlockHeader> {
    let text: String = blocks
        .map(|b| {
            format!(
                "{{\"number\":\"{b:#x}\",\"hash\":\"0x{b:064x}\",\"timestamp\":\"{:#x}\"}}\n",
                1_700_000_000 + b * 12
            )
        })
        .collect();
    read_blocks_str(&text, "blocks").expect("headers")
}

async fn import(
    db: &sea_orm::DatabaseConnection,
    lines: &[String],
    blocks: &[u64],
) -> ImportReport {
    let lines = lines.iter().cloned().map(Ok);
    import_lines(db, Chain::ETH, lines, headers(blocks.iter().copied()))
        .await
        .expect("import")
}

async fn import_counts_every_skip(backend: Backend) {
    let fresh = common::FreshDb::create(backend, "import_counts").await;
    let transfer = |from: u64, to: u64| {
        vec![
            TRANSFER.into(),
            format!("0x{}", word(from)),
            format!("0x{}", word(to)),
        ]
    };
    let single = vec![
        TRANSFER_SINGLE.into(),
        format!("0x{}", word(3)),
        format!("0x{}", word(0)),
        format!("0x{}", word(2)),
    ];
    let lines = vec![
        erc20(10, 0, 5),
        String::new(), // blank: not a line
        "{not json".into(),
        // ERC721: the token id is the fourth topic.
        log(
            [transfer(0, 2), vec![format!("0x{}", word(77))]].concat(),
            String::new(),
            10,
            1,
            json!({}),
        ),
        log(single, format!("{}{}", word(9), word(4)), 11, 0, json!({})),
        // Every argument in data: not a standard transfer.
        log(vec![TRANSFER.into()], word(1).repeat(3), 11, 1, json!({})),
        // Another event.
        log(
            vec![format!("0x{}", word(9))],
            String::new(),
            11,
            2,
            json!({}),
        ),
        // A broken ERC20 encoding, an address that does not parse: malformed.
        log(transfer(1, 2), "01".into(), 11, 3, json!({})),
        log(transfer(1, 2), word(1), 11, 4, json!({"address": "0xzz"})),
        // Removed by a reorg: counted with the non-transfers.
        log(transfer(1, 2), word(1), 11, 5, json!({"removed": true})),
        // Block 12 has no header: malformed, a transfer or not; block 13 has its timestamp.
        erc20(12, 0, 6),
        log(
            vec![format!("0x{}", word(9))],
            String::new(),
            12,
            1,
            json!({}),
        ),
        log(
            transfer(1, 2),
            word(7),
            13,
            0,
            json!({"blockTimestamp": "0x6553f100"}),
        ),
    ];
    let want = ImportReport {
        lines: 12,
        blocks: 3,
        erc20_transfers: 2,
        nft_transfers: 2,
        skipped_not_transfer: 3,
        skipped_malformed: 5,
    };
    assert_eq!(import(&fresh.db, &lines, &[10, 11]).await, want);
    // Again: the same counts, nothing new stored.
    assert_eq!(import(&fresh.db, &lines, &[10, 11]).await, want);
    let state = tokenql::store::chain::state(&fresh.db, Chain::ETH)
        .await
        .expect("state")
        .expect("a checkpoint");
    assert_eq!(
        (state.start_block, state.indexed_block),
        (Some(10), Some(13))
    );
    fresh.drop_database().await;
}

/// A batch holds 2,000 decoded logs, wherever the lines that did not decode fall: 2,002 transfers
/// after one malformed line and one non-transfer make two batches, and block 10, on both sides of
/// the cut, counts once in each.
async fn import_batches_end_on_decoded_logs(backend: Backend) {
    let fresh = common::FreshDb::create(backend, "import_batches").await;
    let mut lines = vec!["{not json".to_string()];
    lines.extend((0..1_999).map(|i| erc20(9, i, i + 1)));
    lines.push(log(
        vec![format!("0x{}", word(9))],
        String::new(),
        10,
        0,
        json!({}),
    ));
    lines.extend((1..3).map(|i| erc20(10, i, i)));
    lines.push(erc20(11, 0, 1));
    let report = import(&fresh.db, &lines, &[9, 10, 11]).await;
    let want = ImportReport {
        lines: 2_004,
        blocks: 4,
        erc20_transfers: 2_002,
        nft_transfers: 0,
        skipped_not_transfer: 1,
        skipped_malformed: 1,
    };
    assert_eq!(report, want);
    fresh.drop_database().await;
}
