//! Lookups by (contract, token id) pairs in process on every backend, past what one SQL `OR`
//! may hold on SQLite (`store::dialect::OR_ARMS`): an NFT batch of 1,200 tokens derives every
//! token's row and holding (`store/derive.rs`), and the token rows of all of them, asked at once
//! as a GraphQL dataloader's batch asks, are all found (`QueryService::tokens`).

use alloy::primitives::B256;

use crate::support::common::{Backend, FreshDb};
use tokenql::decode::{EventMeta, NftMove};
use tokenql::query::QueryService;
use tokenql::store::{write_batch, Batch, BlockHeader, Checkpoint};
use tokenql::types::{Address, Chain, TokenStandard, Uint256};

crate::backend_tests!(a_batch_of_more_tokens_than_an_or_holds);

/// Tokens minted, more than two `OR`s' worth.
const TOKENS: u32 = 1_200;

fn a(n: u64) -> Address {
    Address::parse(&format!("0x{n:040x}")).unwrap_or_else(|e| panic!("{e}"))
}

/// Block 1: token ids 0..[`TOKENS`] of collection 0xc0 minted to wallet 0xa.
fn mints() -> Batch {
    let hash = B256::with_last_byte(1);
    let nft = (0..TOKENS)
        .map(|i| NftMove {
            meta: EventMeta {
                contract: a(0xc0),
                block_number: 1,
                block_hash: hash,
                transaction_hash: B256::with_last_byte(2),
                transaction_index: 0,
                log_index: i,
            },
            batch_index: 0,
            standard: TokenStandard::Erc721,
            operator: None,
            from: Address::ZERO,
            to: a(0xa),
            token_id: Uint256::from_u64(u64::from(i)),
            amount: Uint256::from_u64(1),
        })
        .collect();
    Batch {
        nft,
        ..block_one(hash)
    }
}

/// Block 1 (hash `hash`) with nothing in it, and the checkpoint that stores it: what the
/// in-process tests of this binary write their transfers in.
pub(crate) fn block_one(hash: B256) -> Batch {
    Batch {
        blocks: vec![BlockHeader {
            number: 1,
            hash,
            parent_hash: None,
            timestamp: 1_000,
        }],
        checkpoint: Some(Checkpoint {
            start_block: 0,
            indexed_block: Some(1),
            head_block: 1,
        }),
        ..Batch::default()
    }
}

/// Every minted token gets its row, with its mint, and every one is found in one call; a token
/// never minted is not.
async fn a_batch_of_more_tokens_than_an_or_holds(backend: Backend) {
    let fresh = FreshDb::create(backend, "pair_lookups").await;
    let db = fresh.db.clone();
    write_batch(&db, Chain::ETH, &mints()).await.expect("write");
    let service = QueryService::new(db.clone(), Default::default())
        .await
        .expect("service");
    let mut keys: Vec<_> = (0..=TOKENS)
        .map(|i| (a(0xc0), Uint256::from_u64(u64::from(i))))
        .collect();
    keys.reverse();
    let found = service.tokens(Chain::ETH, &keys).await.expect("tokens");
    assert_eq!(
        found.len(),
        TOKENS as usize,
        "every minted token, not token {TOKENS}"
    );
    for (key, info) in &found {
        assert_eq!(info.block_number_minted, Some(1), "{key:?}");
    }
    assert!(!found.contains_key(&(a(0xc0), Uint256::from_u64(u64::from(TOKENS)))));
    fresh.drop_database().await;
}
