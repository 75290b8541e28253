//! The change feed between its writer and its readers, in process on every backend: a
//! `STORED` row keeps no copy of its block's ERC20 transfers and its readers read them from
//! `erc20_transfers` in their snapshot; a rollback copies them into the row before it deletes
//! them (`store::feed::Records::erc20_stored`).

use alloy::primitives::B256;
use sea_orm::{DatabaseConnection, EntityTrait, QueryOrder};

use crate::support::common::{Backend, FreshDb};
use tokenql::decode::{Erc20Move, EventMeta};
use tokenql::entity::change_feed;
use tokenql::query::feed::FeedRow;
use tokenql::query::QueryService;
use tokenql::store::feed::{self as written, Retention};
use tokenql::store::rollback::rollback_to;
use tokenql::store::{write_batch, Batch, Checkpoint};
use tokenql::types::{Address, Chain, Uint256};

crate::backend_tests!(stored_rows_read_their_transfers_through_reorgs);

fn a(n: u64) -> Address {
    Address::parse(&format!("0x{n:040x}")).unwrap_or_else(|e| panic!("{e}"))
}

/// Block 1 (hash `h`) with `n` transfers of token 0xc0, in log order, as the live
/// follower writes it (with the feed and its checkpoint).
fn block_one(h: u8, n: u32) -> Batch {
    let hash = B256::with_last_byte(h);
    let erc20 = (0..n)
        .map(|i| Erc20Move {
            meta: EventMeta {
                contract: a(0xc0),
                block_number: 1,
                block_hash: hash,
                transaction_hash: B256::with_last_byte(h.wrapping_add(i as u8)),
                transaction_index: i,
                log_index: i,
            },
            from: a(1),
            to: a(u64::from(h) * 100 + u64::from(i)),
            value: Uint256::from_u64(u64::from(i) + 1),
        })
        .collect();
    Batch {
        erc20,
        feed: Some(Retention::default()),
        ..crate::pair_lookups::block_one(hash)
    }
}

/// (block hash, recipients in log order) of a row's ERC20 transfers.
fn moved(row: &FeedRow) -> (String, Vec<Address>) {
    let to = row.erc20.iter().map(|t| t.to).collect();
    (row.block_hash.clone(), to)
}

async fn stored_flags(db: &DatabaseConnection) -> Vec<(i16, bool, usize)> {
    change_feed::Entity::find()
        .order_by_asc(change_feed::Column::Id)
        .all(db)
        .await
        .expect("rows")
        .iter()
        .map(|r| {
            let records = written::parse(r).expect("records");
            (r.kind, records.erc20_stored, records.erc20.len())
        })
        .collect()
}

/// A `STORED` row keeps no copy of its ERC20 transfers and reads them from the table; a
/// rollback copies them into it before it deletes them, so after a reorg the old row, the
/// removal and the new block's row each read what they describe; so does a rollback made with
/// the feed turned off.
async fn stored_rows_read_their_transfers_through_reorgs(backend: Backend) {
    let fresh = FreshDb::create(backend, "feed_stored").await;
    let db = fresh.db.clone();
    let service = QueryService::new(db.clone(), Default::default())
        .await
        .expect("service");
    write_batch(&db, Chain::ETH, &block_one(0xa, 3))
        .await
        .expect("write");
    assert_eq!(stored_flags(&db).await, [(written::STORED, true, 0)]);
    let rows = service.feed_after(Chain::ETH, 0, 10).await.expect("feed");
    let old = (format!("0x{:064x}", 0xa), vec![a(1000), a(1001), a(1002)]);
    assert_eq!(
        rows.iter().map(moved).collect::<Vec<_>>(),
        vec![old.clone()]
    );
    assert_eq!(rows[0].erc20[2].value, Uint256::from_u64(3));

    let cp = Checkpoint {
        start_block: 0,
        indexed_block: None,
        head_block: 1,
    };
    rollback_to(&db, Chain::ETH, None, cp, None, true)
        .await
        .expect("rollback");
    write_batch(&db, Chain::ETH, &block_one(0xb, 1))
        .await
        .expect("rewrite");
    assert_eq!(
        stored_flags(&db).await,
        [
            (written::STORED, false, 3),
            (written::REMOVED, false, 3),
            (written::STORED, true, 0)
        ]
    );
    let rows = service.feed_after(Chain::ETH, 0, 10).await.expect("feed");
    let new = (format!("0x{:064x}", 0xb), vec![a(1100)]);
    assert_eq!(
        rows.iter().map(moved).collect::<Vec<_>>(),
        [old.clone(), old, new.clone()]
    );
    let ids: Vec<i64> = rows.iter().map(|r| r.id).collect();
    let again = service
        .feed_rows(Chain::ETH, &ids[2..])
        .await
        .expect("rows");
    assert_eq!(
        again.iter().map(moved).collect::<Vec<_>>(),
        vec![new.clone()]
    );
    let (last, _) = service
        .feed_stored_block(Chain::ETH, 1)
        .await
        .expect("block")
        .expect("stored");
    assert_eq!(moved(&last), new);

    // The feed turned off (no rows written or removed any more): a rollback still gives the
    // rows written before their copy.
    rollback_to(&db, Chain::ETH, None, cp, None, false)
        .await
        .expect("rollback without the feed");
    assert_eq!(
        stored_flags(&db).await,
        [
            (written::STORED, false, 3),
            (written::REMOVED, false, 3),
            (written::STORED, false, 1)
        ]
    );
    let rows = service.feed_after(Chain::ETH, 0, 10).await.expect("feed");
    assert_eq!(moved(&rows[2]), new);
    fresh.drop_database().await;
}
