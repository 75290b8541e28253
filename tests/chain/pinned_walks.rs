//! Walks of the holdings questions pinned to their first page's block, on anvil and every
//! backend (issue 26, point 4): a wallet's NFTs, a collection's owners and tokens, a wallet's
//! collections and a token's holders, walked a record a page (up to 50 pages), while NFTs and
//! tokens move, 200 blocks land and a 5-block reorg replaces blocks above the pinned one: every
//! walk ends on exactly the records of its first page's block. A walk whose pinned block a
//! reorg replaced is refused with a 400 that says to start again. On the same chain, after
//! ERC1155 batches, burns and a reorg that replaces stored NFT moves, every holdings question
//! as of ten blocks spread over the history equals the holdings the test replays from the
//! chain's own logs, on REST and GraphQL.

use std::time::Duration;

use serde_json::Value;

use crate::support::anvil::*;
use crate::support::as_of::{chain_erc20_moves, chain_nft_moves, check_block, Subjects};
use crate::support::common::truth::ZERO;
use crate::support::common::{self, enc, text, Backend, TestApp};
use crate::support::indexer::*;

crate::backend_tests!(holdings_walks_hold_their_block);

/// A walk begun: the records of its pages so far and the cursor of the next.
struct Walking {
    uri: String,
    records: Vec<Value>,
    cursor: Option<String>,
}

impl Walking {
    /// The first page of `uri` (a record a page).
    async fn begin(app: &TestApp, uri: String) -> Walking {
        let mut w = Walking {
            uri,
            records: Vec::new(),
            cursor: None,
        };
        w.page(app).await.expect("the first page");
        w
    }

    /// Reads the next page; the refusal when there is one.
    async fn page(&mut self, app: &TestApp) -> Result<(), (u16, Value)> {
        let uri = match &self.cursor {
            None => format!("{}limit=1", self.uri),
            Some(c) => format!("{}limit=1&cursor={}", self.uri, enc(c)),
        };
        let (status, _, body) = app.get_rest(&uri).await;
        if status != 200 {
            return Err((status, body));
        }
        assert_eq!(body["status"], "SYNCED", "{uri}: {body}");
        self.records
            .extend(body["result"].as_array().into_iter().flatten().map(key));
        self.cursor = text(&body["cursor"]);
        Ok(())
    }

    /// Reads up to `n` more pages.
    async fn pages(&mut self, app: &TestApp, n: usize) {
        for _ in 0..n {
            if self.cursor.is_none() {
                return;
            }
            let uri = self.uri.clone();
            self.page(app)
                .await
                .unwrap_or_else(|e| panic!("{uri}: {e:?}"));
        }
    }

    /// Reads every page left: the walk's records.
    async fn finish(mut self, app: &TestApp) -> Vec<Value> {
        self.pages(app, usize::MAX).await;
        self.records
    }
}

/// What a record of any of the walked lists says (the fields that change with a move).
fn key(r: &Value) -> Value {
    serde_json::json!([
        r["token_address"],
        r["token_id"],
        r["owner_of"],
        r["owner_address"],
        r["amount"],
        r["balance"],
        r["count"],
        r["block_number"],
    ])
}

/// The transactions of a reorg's new blocks: one token transfer, so that the new blocks are
/// not the old ones again (empty blocks of the same parent and time would be).
fn replacement(from: &str, tok: &str, to: &str) -> Value {
    let data = calldata(transferCall {
        to: addr(to),
        amount: u(1),
    });
    serde_json::json!([[{"from": from, "to": tok, "gas": "0x100000", "data": hex(&data)}, 0]])
}

/// A whole walk at once, begun now.
async fn walk(app: &TestApp, uri: &str) -> Vec<Value> {
    Walking::begin(app, uri.to_string()).await.finish(app).await
}

async fn holdings_walks_hold_their_block(backend: Backend) {
    let chain = Anvil::start(30, &[]).await;
    let app = common::spawn(backend).await;
    let tok = chain
        .deploy("TestToken", token_ctor("Alpha", "ALP", 18))
        .await;
    let nft = chain
        .deploy("TestNFT", nft_ctor("Nifty", "NFT", "ipfs://base/"))
        .await;
    let multi = chain
        .deploy("TestMulti", multi_ctor("https://x.test/{id}.json"))
        .await;
    let a = chain.accounts.clone();
    let (w1, w2) = (a[1].clone(), a[2].clone());
    // Ten a transaction: a send carries 500,000 gas.
    for start in [1, 11, 21, 31] {
        let data = calldata(mintManyCall {
            to: addr(&w1),
            start: u(start),
            n: u(10),
        });
        chain.send(&a[0], &nft, data).await;
    }
    chain
        .send(
            &a[0],
            &multi,
            calldata(mintBatchCall {
                to: addr(&w1),
                ids: (1..=10).map(u).collect(),
                amounts: (1..=10).map(|i| u(i * 3)).collect(),
            }),
        )
        .await;
    for (i, w) in a[1..26].iter().enumerate() {
        let amount = u(1_000 + (i as u64 * 37) % 11 * 10);
        let data = calldata(mintCall {
            to: addr(w),
            amount,
        });
        chain.send(&a[0], &tok, data).await;
    }
    let indexer = Indexer::start(&app.db, &chain.url, |_| {});
    wait_synced(&app.db, &chain, Duration::from_secs(60)).await;

    let questions = [
        format!("/api/v2.2/{w1}/nft?chain=eth&"),
        format!("/api/v2.2/nft/{nft}/owners?chain=eth&"),
        format!("/api/v2.2/nft/{multi}?chain=eth&"),
        format!("/api/v2.2/{w1}/nft/collections?chain=eth&token_counts=true&"),
        format!("/api/v2.2/erc20/{tok}/owners?chain=eth&"),
    ];
    let mut before = Vec::new();
    for q in &questions {
        before.push(walk(&app, q).await);
    }
    assert_eq!(
        before[0].len(),
        50,
        "{}: 40 ERC721 and 10 ERC1155",
        questions[0]
    );
    let mut walks = Vec::new();
    for q in &questions {
        walks.push(Walking::begin(&app, q.clone()).await);
    }

    // Moves under the walks: ERC721 tokens leave w1 (one burned), ERC1155 amounts move, a new
    // collection reaches w1, token balances change and a new holder appears; then 200 blocks.
    let moves = [
        (
            w1.clone(),
            nft.clone(),
            calldata(transferFromCall {
                from: addr(&w1),
                to: addr(&w2),
                id: u(2),
            }),
        ),
        (
            w1.clone(),
            nft.clone(),
            calldata(transferFromCall {
                from: addr(&w1),
                to: addr(&w2),
                id: u(39),
            }),
        ),
        (w1.clone(), nft.clone(), nft_burn_calldata(17)),
        (
            w1.clone(),
            multi.clone(),
            calldata(safeTransferFromCall {
                from: addr(&w1),
                to: addr(&w2),
                id: u(4),
                amount: u(12),
                data: Default::default(),
            }),
        ),
        (
            w1.clone(),
            multi.clone(),
            calldata(safeTransferFromCall {
                from: addr(&w1),
                to: addr(&w2),
                id: u(9),
                amount: u(1),
                data: Default::default(),
            }),
        ),
        (
            a[3].clone(),
            tok.clone(),
            calldata(transferCall {
                to: addr(&a[27]),
                amount: u(500),
            }),
        ),
        (
            a[0].clone(),
            tok.clone(),
            calldata(mintCall {
                to: addr(&a[5]),
                amount: u(5_000),
            }),
        ),
    ];
    for (from, to, data) in &moves[..4] {
        chain.send(from, to, data.clone()).await;
    }
    chain.mine(100).await;
    wait_synced(&app.db, &chain, Duration::from_secs(60)).await;
    for w in &mut walks {
        w.pages(&app, 12).await;
    }
    for (from, to, data) in &moves[4..] {
        chain.send(from, to, data.clone()).await;
    }
    let other = chain
        .deploy("TestNFT", nft_ctor("Other", "OTH", "ipfs://o/"))
        .await;
    let mint_other = calldata(mintManyCall {
        to: addr(&w1),
        start: u(1),
        n: u(2),
    });
    chain.send(&a[0], &other, mint_other).await;
    chain.mine(100).await;
    wait_synced(&app.db, &chain, Duration::from_secs(60)).await;
    // A reorg of five blocks, all above every walk's pinned block; the new ones move a token.
    chain.reorg(5, replacement(&a[4], &tok, &a[28])).await;
    wait_synced(&app.db, &chain, Duration::from_secs(60)).await;
    for ((w, want), q) in walks.into_iter().zip(&before).zip(&questions) {
        assert_eq!(&w.finish(&app).await, want, "{q}: the walk holds its block");
    }
    // The chain moved: a walk begun now sees every change.
    for (q, then) in questions.iter().zip(&before) {
        assert_ne!(
            &walk(&app, q).await,
            then,
            "{q}: the moves changed the answer"
        );
    }

    // A walk pinned to a block a reorg then replaces is refused, on every question.
    let mut walks = Vec::new();
    for q in &questions {
        walks.push(Walking::begin(&app, q.clone()).await);
    }
    chain.reorg(1, replacement(&a[6], &tok, &a[29])).await;
    wait_synced(&app.db, &chain, Duration::from_secs(60)).await;
    for (mut w, q) in walks.into_iter().zip(&questions) {
        let (status, body) = w
            .page(&app)
            .await
            .err()
            .unwrap_or_else(|| panic!("{q}: a torn walk is refused"));
        assert_eq!(status, 400, "{q}: {body}");
        let message = body["message"].as_str().unwrap_or_default();
        assert!(message.contains("reorganized"), "{q}: {body}");
    }
    let scene = Scene {
        tok,
        nft,
        multi,
        other,
    };
    as_of_through_a_reorg(&app, &chain, &scene).await;
    indexer.stop().await.expect("indexer ran cleanly");
    app.cleanup().await;
}

/// The contracts of the scenario.
struct Scene {
    tok: String,
    nft: String,
    multi: String,
    other: String,
}

/// `safeBatchTransferFrom(from, to, ids, amounts)` of TestMulti.
fn batch_move(from: &str, to: &str, ids: &[u64], amounts: &[u64]) -> Vec<u8> {
    calldata(safeBatchTransferFromCall {
        from: addr(from),
        to: addr(to),
        ids: ids.iter().map(|i| u(*i)).collect(),
        amounts: amounts.iter().map(|a| u(*a)).collect(),
        data: Default::default(),
    })
}

/// `transferFrom(from, to, id)` of TestNFT.
fn nft_move(from: &str, to: &str, id: u64) -> Vec<u8> {
    calldata(transferFromCall {
        from: addr(from),
        to: addr(to),
        id: u(id),
    })
}

/// A reorg's replacement transaction: `data` sent from `from` to `to` in the new block
/// `offset` (0 = the first).
fn replacing(from: &str, to: &str, data: &[u8], offset: u64) -> Value {
    serde_json::json!([{"from": from, "to": to, "gas": "0x100000", "data": hex(data)}, offset])
}

/// Every holdings question as of ten blocks spread over the scenario (ERC721 mints, moves and a
/// burn, ERC1155 batches and a burn, token transfers, and a 3-block reorg that replaces NFT
/// moves the indexer had stored with others), REST and GraphQL, against the holdings this test
/// replays from the chain's own logs up to each block (issue 26).
async fn as_of_through_a_reorg(app: &TestApp, chain: &Anvil, scene: &Scene) {
    let a = &chain.accounts;
    let (w1, w2, w8, w9) = (&a[1], &a[2], &a[8], &a[9]);
    let (nft, multi) = (&scene.nft, &scene.multi);
    // Blocks that stay: an ERC1155 batch, an ERC1155 burn, an ERC721 move.
    chain
        .send(w1, multi, batch_move(w1, w8, &[1, 3, 5], &[1, 2, 3]))
        .await;
    chain.send(w1, multi, multi_burn_calldata(w1, 6, 4)).await;
    chain.send(w1, nft, nft_move(w1, w8, 5)).await;
    // Blocks the reorg replaces: an ERC721 burn, an ERC1155 batch, a move of a moved token.
    chain.send(w1, nft, nft_burn_calldata(7)).await;
    chain
        .send(w1, multi, batch_move(w1, w2, &[7, 8], &[7, 8]))
        .await;
    chain.send(w8, nft, nft_move(w8, w2, 5)).await;
    wait_synced(&app.db, chain, Duration::from_secs(60)).await;
    let txs = serde_json::json!([
        replacing(w1, nft, &nft_move(w1, w9, 8), 0),
        replacing(w8, multi, &batch_move(w8, w9, &[1, 3], &[1, 1]), 1),
        replacing(w1, multi, &multi_burn_calldata(w1, 10, 5), 2),
    ]);
    chain.reorg(3, txs).await;
    wait_synced(&app.db, chain, Duration::from_secs(60)).await;

    let collections = vec![nft.clone(), multi.clone(), scene.other.clone()];
    let moves = chain_nft_moves(chain, &collections).await;
    let erc20 = chain_erc20_moves(chain, std::slice::from_ref(&scene.tok)).await;
    let burned_then = |id: u64| {
        moves
            .iter()
            .any(|m| m.contract == *nft && m.id_hex == format!("{id:064x}") && m.to == ZERO)
    };
    assert!(
        burned_then(17) && !burned_then(7),
        "the reorg took the burn of token 7 away"
    );
    assert!(
        moves.iter().any(|m| m.to == *w9 && m.contract == *nft),
        "the new blocks moved token 8"
    );
    let mut moved: Vec<u64> = moves
        .iter()
        .map(|m| m.block)
        .chain(erc20.iter().map(|t| t.block))
        .collect();
    moved.sort_unstable();
    moved.dedup();
    // Seven blocks spread over the history, the block before the first, and the last three.
    let n = moved.len();
    assert!(n >= 12, "{moved:?}");
    let mut blocks: Vec<u64> = (0..7).map(|i| moved[i * (n - 4) / 6]).collect();
    blocks.push(moved[0] - 1);
    blocks.extend(&moved[n - 3..]);
    blocks.sort_unstable();
    blocks.dedup();
    assert!(blocks.len() >= 10, "{blocks:?}");
    let subjects = Subjects {
        wallets: vec![w1.clone(), w2.clone(), w8.clone(), w9.clone()],
        collections,
        tokens: vec![scene.tok.clone()],
    };
    for block in blocks {
        check_block(app, &moves, &erc20, &subjects, block).await;
    }
}
