//! The cost of holdings as of a past block, next to the same question at the head, in one run:
//! the first page (100 records) of a 10,000-token collection's owners, and of a busy wallet's
//! NFTs, as of a block in the middle of the history and as of now.
//!
//! ```text
//! cargo bench --bench as_of                                  # SQLite
//! cargo bench --bench as_of -- --backends sqlite,postgres    # PostgreSQL: $TOKENQL_TEST_POSTGRES_URL
//! ```
//!
//! The data is written through the indexer's write path (`store::write_batch`) into a fresh,
//! migrated database: a collection of 10,000 ERC721 tokens minted over blocks 1..=2,000 to 1,000
//! wallets and resold 30,000 times over blocks 2,001..=6,000, and a wallet that receives 1,500
//! NFTs of 15 other collections over the same blocks and sends 500 of them on (48,000 moves in
//! all); the chain's history is declared complete, so every answer is `SYNCED`. Each question
//! is then asked in-process through the query service (`QueryService::nft_owners`,
//! `nfts_by_wallet`), alternating head and past, `--rounds` times after a warm-up; the report
//! gives the medians and the ratio past ÷ head. See `docs/BENCHMARKS.md` ("Holdings as of a
//! block").
#![allow(clippy::print_stdout)] // the report is this program's output

use std::time::{Duration, Instant};

use anyhow::Context;
use clap::Parser;
use migration::MigratorTrait;
use sea_orm::{ConnectionTrait, DatabaseConnection};

use tokenql::decode::{EventMeta, NftMove};
use tokenql::query::{Include, NftOwnersQuery, NftQuery, QueryConfig, QueryService};
use tokenql::store::{mark_history_complete, write_batch, Batch, BlockHeader, Checkpoint};
use tokenql::types::{Address, AddressList, Chain, PageSize, TokenStandard, Uint256};

/// Holdings as of a block vs at the head (see docs/BENCHMARKS.md).
#[derive(Parser, Debug)]
#[command(name = "as_of")]
struct Args {
    /// Backends, comma-separated: sqlite, postgres.
    #[arg(long, default_value = "sqlite", value_delimiter = ',')]
    backends: Vec<String>,
    /// Measured rounds per question (each asks at the head and in the past once).
    #[arg(long, default_value_t = 30)]
    rounds: usize,
}

const LAST_BLOCK: u64 = 6_000;
const PAST_BLOCK: u64 = 3_000;
const TOKENS: u64 = 10_000;
const RESALES: u64 = 30_000;
const WALLETS: u64 = 1_000;
const BUSY_RECEIVES: u64 = 1_500;
const BUSY_SENDS: u64 = 500;

fn address(salt: u64, i: u64) -> Address {
    let mut word = [0u8; 32];
    word[12..20].copy_from_slice(&salt.to_be_bytes());
    word[24..].copy_from_slice(&i.to_be_bytes());
    Address::from_word(&word)
}

fn wallet(i: u64) -> Address {
    address(0xa11e7, i)
}

fn collection() -> Address {
    address(0xc011, 0)
}

fn busy() -> Address {
    wallet(WALLETS + 1)
}

/// A splitmix64 step: the data is the same on every run.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn erc721(contract: Address, id: u64, from: Address, to: Address, block: u64, log: u32) -> NftMove {
    let hash = |salt: u64| {
        let mut b = [0u8; 32];
        b[..8].copy_from_slice(&salt.to_be_bytes());
        b[8..16].copy_from_slice(&block.to_be_bytes());
        alloy::primitives::B256::from(b)
    };
    NftMove {
        meta: EventMeta {
            contract,
            block_number: block,
            block_hash: hash(1),
            transaction_hash: hash(2 + u64::from(log)),
            transaction_index: log,
            log_index: log,
        },
        batch_index: 0,
        standard: TokenStandard::Erc721,
        operator: None,
        from,
        to,
        token_id: Uint256::from_u64(id),
        amount: Uint256::from_u64(1),
    }
}

/// Every move, per block.
fn moves() -> Vec<Vec<NftMove>> {
    let mut per_block: Vec<Vec<NftMove>> = (0..=LAST_BLOCK).map(|_| Vec::new()).collect();
    let mut owner: Vec<Address> = Vec::with_capacity(TOKENS as usize);
    let push = |per_block: &mut Vec<Vec<NftMove>>, c, id, from, to, block: u64| {
        let log = per_block[block as usize].len() as u32;
        per_block[block as usize].push(erc721(c, id, from, to, block, log));
    };
    for id in 0..TOKENS {
        let to = wallet(mix(id) % WALLETS);
        owner.push(to);
        push(
            &mut per_block,
            collection(),
            id,
            Address::ZERO,
            to,
            1 + id * 2_000 / TOKENS,
        );
    }
    for k in 0..RESALES {
        let id = mix(k ^ 0x5a1e) % TOKENS;
        let to = wallet(mix(k ^ 0x70) % WALLETS);
        let from = owner[id as usize];
        if from == to {
            continue;
        }
        owner[id as usize] = to;
        push(
            &mut per_block,
            collection(),
            id,
            from,
            to,
            2_001 + k * 4_000 / RESALES,
        );
    }
    for k in 0..BUSY_RECEIVES {
        let c = address(0xb05e, k % 15);
        let block = 1 + k * (LAST_BLOCK - 1) / BUSY_RECEIVES;
        push(&mut per_block, c, k, wallet(k % WALLETS), busy(), block);
        if k % 3 == 1 && k / 3 < BUSY_SENDS {
            push(
                &mut per_block,
                c,
                k,
                busy(),
                wallet((k + 7) % WALLETS),
                block + 1,
            );
        }
    }
    per_block
}

async fn load(db: &DatabaseConnection) -> anyhow::Result<u64> {
    let per_block = moves();
    let mut written = 0;
    for chunk in (1..=LAST_BLOCK).collect::<Vec<_>>().chunks(500) {
        let mut batch = Batch::default();
        for &b in chunk {
            let hash = |n: u64| {
                let mut h = [0u8; 32];
                h[..8].copy_from_slice(&1u64.to_be_bytes());
                h[8..16].copy_from_slice(&n.to_be_bytes());
                alloy::primitives::B256::from(h)
            };
            batch.blocks.push(BlockHeader {
                number: b,
                hash: hash(b),
                parent_hash: Some(hash(b - 1)),
                timestamp: 1_700_000_000 + b * 12,
            });
            batch.nft.extend(per_block[b as usize].iter().cloned());
        }
        written += batch.nft.len() as u64;
        batch.checkpoint = Some(Checkpoint {
            start_block: 1,
            indexed_block: chunk.last().copied(),
            head_block: LAST_BLOCK,
        });
        write_batch(db, Chain::ETH, &batch)
            .await
            .context("write_batch")?;
    }
    mark_history_complete(db, Chain::ETH).await?;
    Ok(written)
}

/// A fresh, migrated database of `backend`, and how to drop it.
async fn fresh(backend: &str) -> anyhow::Result<(DatabaseConnection, Option<(String, String)>)> {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)?
        .as_secs();
    let (url, drop) = match backend {
        "sqlite" => {
            let path = std::env::temp_dir().join(format!("tq_bench_as_of_{stamp}.db"));
            (format!("sqlite://{}?mode=rwc", path.display()), None)
        }
        "postgres" => {
            let server = std::env::var("TOKENQL_TEST_POSTGRES_URL")
                .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432".to_string());
            let name = format!("tq_bench_as_of_{stamp}");
            let admin = sea_orm::Database::connect(format!("{server}/postgres")).await?;
            admin
                .execute_unprepared(&format!("CREATE DATABASE {name}"))
                .await?;
            (
                format!("{server}/{name}"),
                Some((format!("{server}/postgres"), name)),
            )
        }
        other => anyhow::bail!("unknown backend {other}: expected sqlite or postgres"),
    };
    let db = tokenql::store::database::connect(&url, 4).await?;
    migration::Migrator::up(&db, None).await?;
    Ok((db, drop))
}

fn median(mut v: Vec<Duration>) -> f64 {
    v.sort();
    v[v.len() / 2].as_secs_f64() * 1000.0
}

/// Times `ask(head)` and `ask(past)` alternately: the two medians (ms).
async fn compare<F, Fut>(rounds: usize, ask: F) -> anyhow::Result<(f64, f64, usize, usize)>
where
    F: Fn(Option<u64>) -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<usize>>,
{
    let (now_n, past_n) = (ask(None).await?, ask(Some(PAST_BLOCK)).await?);
    let (mut head, mut past) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        let t = Instant::now();
        ask(None).await?;
        head.push(t.elapsed());
        let t = Instant::now();
        ask(Some(PAST_BLOCK)).await?;
        past.push(t.elapsed());
    }
    Ok((median(head), median(past), now_n, past_n))
}

async fn run(backend: &str, rounds: usize) -> anyhow::Result<()> {
    let (db, drop) = fresh(backend).await?;
    let t = Instant::now();
    let moves = load(&db).await?;
    println!(
        "[{backend}] loaded {moves} NFT moves in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    let service = QueryService::new(db.clone(), QueryConfig::default()).await?;
    let page = PageSize::default();
    let owners = |at_block| {
        let service = service.clone();
        async move {
            let q = NftOwnersQuery {
                chain: Chain::ETH,
                contract: collection(),
                token_id: None,
                page_size: page,
                at_block,
            };
            let a = service.nft_owners(&q, None, Include::default()).await?;
            anyhow::ensure!(a.page.status.as_str() == "SYNCED", "owners not SYNCED");
            Ok(a.page.edges.len())
        }
    };
    let wallet_nfts = |at_block| {
        let service = service.clone();
        async move {
            let q = NftQuery {
                chain: Chain::ETH,
                owner: busy(),
                token_addresses: AddressList::default(),
                exclude_spam: false,
                with_total: false,
                page_size: page,
                at_block,
            };
            let a = service.nfts_by_wallet(&q, None, Include::default()).await?;
            anyhow::ensure!(a.page.status.as_str() == "SYNCED", "wallet NFTs not SYNCED");
            Ok(a.page.edges.len())
        }
    };
    for (name, (head, past, n_head, n_past)) in [
        (
            "owners of a 10,000-token collection, page 1",
            compare(rounds, owners).await?,
        ),
        (
            "a busy wallet's NFTs, page 1",
            compare(rounds, wallet_nfts).await?,
        ),
    ] {
        println!(
            "[{backend}] {name}: head {head:.2} ms ({n_head} records), as of block {PAST_BLOCK} \
             {past:.2} ms ({n_past} records), past / head {:.1}",
            past / head
        );
    }
    db.close().await?;
    if let Some((admin, name)) = drop {
        let admin = sea_orm::Database::connect(admin).await?;
        admin
            .execute_unprepared(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
            .await?;
    }
    Ok(())
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    for backend in &args.backends {
        run(backend, args.rounds).await?;
    }
    Ok(())
}
