//! Media previews, black-box, on every backend: tokens whose metadata names the images of the
//! local test web server (`tests/support/offchain.rs`), the media worker running in process against it
//! (1 s timeout, 10 MB cap), and the API over real HTTP: `media_items=true` on REST and
//! `media` on GraphQL, then the previews downloaded from tokenql and decoded.

use crate::support::common;
use crate::support::validator;

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::support::offchain::*;
use common::{spawn_with, Backend, TestApp};
use sea_orm::{ColumnTrait, EntityTrait, PaginatorTrait, QueryFilter};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use tokenql::entity::{nft_media, nft_token};
use tokenql::offchain::fetch::Fetcher;
use tokenql::offchain::media::worker::MediaWorker;
use tokenql::offchain::OffchainConfig;
use tokenql::types::{Address, Chain, Uint256};

const WALLET: &str = "0x00000000000000000000000000000000000000aa";
const NFT721: &str = "0x0000000000000000000000000000000000000721";
const NFT1155: &str = "0x0000000000000000000000000000000000001155";

/// One token of the scenario: its id, the metadata case it carries, and what `media` must
/// end as (`None`: `media: null`).
struct Case {
    token: u64,
    case: &'static str,
    status: Option<&'static str>,
}

/// Token ids 1..: the test server's cases by id, then two extra tokens: 50 shares the PNG of
/// token 1, 51 has no metadata at all.
const CASES_721: &[Case] = &[
    Case {
        token: 1,
        case: "png",
        status: Some("success"),
    },
    Case {
        token: 2,
        case: "jpeg",
        status: Some("success"),
    },
    Case {
        token: 3,
        case: "gif",
        status: Some("success"),
    },
    Case {
        token: 4,
        case: "svg",
        status: Some("success"),
    },
    Case {
        token: 5,
        case: "big",
        status: Some("unsupported_media"),
    },
    Case {
        token: 6,
        case: "slow",
        status: Some("temporarily_unavailable"),
    },
    Case {
        token: 7,
        case: "missing",
        status: Some("host_unavailable"),
    },
    Case {
        token: 8,
        case: "loop",
        status: Some("host_unavailable"),
    },
    Case {
        token: 9,
        case: "noimage",
        status: Some("invalid_url"),
    },
    Case {
        token: 10,
        case: "badurl",
        status: Some("invalid_url"),
    },
    Case {
        token: 11,
        case: "textfile",
        status: Some("unsupported_media"),
    },
    Case {
        token: 12,
        case: "invalid",
        status: None,
    },
    Case {
        token: 50,
        case: "png",
        status: Some("success"),
    },
    Case {
        token: 51,
        case: "none",
        status: None,
    },
];
/// The ERC1155 token: its image URL has `{id}`.
const TOKEN_1155: u64 = 0x1234;

/// The original size of each image case.
fn original_size(case: &str) -> Option<(u32, u32)> {
    match case {
        "png" => Some(PNG_SIZE),
        "jpeg" => Some(JPEG_SIZE),
        "gif" => Some(GIF_SIZE),
        "svg" => Some(SVG_SIZE),
        _ => None,
    }
}

fn media_dir() -> PathBuf {
    let mut r = [0u8; 6];
    getrandom::fill(&mut r).expect("randomness");
    let r: String = r.iter().map(|b| format!("{b:02x}")).collect();
    std::env::temp_dir().join(format!("tq-media-test-{}-{r}", std::process::id()))
}

fn offchain_config(dir: &std::path::Path, web: &OffchainServer) -> OffchainConfig {
    OffchainConfig {
        timeout: Duration::from_secs(1),
        max_media_bytes: 10 * 1024 * 1024,
        concurrency: 4,
        media_dir: dir.to_path_buf(),
        poll_interval: Duration::from_millis(100),
        ipfs_gateways: vec![web.base_url().to_string()],
        arweave_gateway: format!("{}/ar", web.base_url()),
        ..OffchainConfig::default()
    }
}

fn addr(s: &str) -> Address {
    Address::parse(s).expect("address")
}

/// Mints the tokens to the wallet through the write path (one block), then stores each
/// token's metadata as the metadata worker would.
async fn seed(app: &TestApp, web: &OffchainServer) {
    use tokenql::decode::{EventMeta, NftMove};
    use tokenql::store::{write_batch, Batch, BlockHeader};
    use tokenql::types::TokenStandard;

    let block = BlockHeader {
        number: 100,
        hash: alloy::primitives::B256::repeat_byte(1),
        parent_hash: None,
        timestamp: 1_700_000_000,
    };
    let mint = |contract: &str, standard, token: u64, log_index: u32| NftMove {
        meta: EventMeta {
            contract: addr(contract),
            block_number: 100,
            block_hash: block.hash,
            transaction_hash: alloy::primitives::B256::repeat_byte(2),
            transaction_index: 0,
            log_index,
        },
        batch_index: 0,
        standard,
        operator: None,
        from: Address::ZERO,
        to: addr(WALLET),
        token_id: Uint256::from_u64(token),
        amount: Uint256::from_u64(1),
    };
    let mut nft: Vec<NftMove> = CASES_721
        .iter()
        .enumerate()
        .map(|(i, c)| mint(NFT721, TokenStandard::Erc721, c.token, i as u32))
        .collect();
    nft.push(mint(NFT1155, TokenStandard::Erc1155, TOKEN_1155, 100));
    // The chain's whole history: indexed from block 0 through the mints' block.
    let batch = Batch {
        blocks: vec![block],
        nft,
        checkpoint: Some(tokenql::store::Checkpoint {
            start_block: 0,
            indexed_block: Some(100),
            head_block: 100,
        }),
        ..Batch::default()
    };
    write_batch(&app.db, Chain::parse("eth").expect("eth"), &batch)
        .await
        .expect("write the mints");

    let now = tokenql::store::now_ms();
    let set = |contract: &str, token: u64, metadata: String| {
        nft_token::Entity::update_many()
            .col_expr(
                nft_token::Column::Metadata,
                sea_orm::sea_query::Expr::value(metadata),
            )
            .col_expr(
                nft_token::Column::LastMetadataSync,
                sea_orm::sea_query::Expr::value(now),
            )
            .filter(nft_token::Column::ContractAddress.eq(addr(contract)))
            .filter(nft_token::Column::TokenId.eq(Uint256::from_u64(token)))
            .exec(&app.db)
    };
    for c in CASES_721 {
        let metadata = match c.case {
            "none" => continue,
            // As fetched: not JSON, so no media.
            "invalid" => "{\"name\": \"broken\", ".to_string(),
            case => document(web.base_url(), case).to_string(),
        };
        let r = set(NFT721, c.token, metadata).await.expect("set metadata");
        assert_eq!(r.rows_affected, 1, "token {} has a row", c.token);
    }
    let id = Uint256::from_u64(TOKEN_1155).to_hex64();
    web.put(&format!("/img1155/{id}.png"), "image/png", png_bytes());
    let doc = json!({"name": "multi", "image": web.url("/img1155/{id}.png")});
    set(NFT1155, TOKEN_1155, doc.to_string())
        .await
        .expect("set 1155 metadata");
}

/// Checks a whole `GET /{address}/nft` answer against its schema in the OpenAPI document.
fn check_documented(body: &Value) {
    let doc = serde_json::to_value(tokenql::rest::openapi::document()).expect("document");
    let schema = &doc["paths"]["/{address}/nft"]["get"]["responses"]["200"]["content"]
        ["application/json"]["schema"];
    assert!(schema.is_object(), "the NFT answer is documented");
    let mut errors = Vec::new();
    validator::validate(&doc, schema, body, "$", &mut errors);
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

/// `GET /{wallet}/nft?media_items=true`, timed: (elapsed, media by "contract/token id"). Every
/// answer must match the OpenAPI document.
async fn rest_media(app: &TestApp) -> (Duration, HashMap<String, Value>) {
    let start = Instant::now();
    let (status, _, body) = app
        .get_rest(&format!(
            "/api/v2/{WALLET}/nft?chain=eth&limit=100&media_items=true"
        ))
        .await;
    let elapsed = start.elapsed();
    assert_eq!(status, 200, "{body}");
    check_documented(&body);
    let records = body["result"].as_array().expect("result");
    assert_eq!(records.len(), CASES_721.len() + 1);
    let media = records
        .iter()
        .map(|r| {
            let key = format!(
                "{}/{}",
                r["token_address"].as_str().unwrap_or_default(),
                r["token_id"].as_str().unwrap_or_default()
            );
            (key, r["media"].clone())
        })
        .collect();
    (elapsed, media)
}

fn key(contract: &str, token: u64) -> String {
    format!("{contract}/{token}")
}

fn img_hits(web: &OffchainServer) -> u64 {
    [
        "png", "jpeg", "gif", "svg", "big", "slow", "missing", "loop", "loop2", "text",
    ]
    .iter()
    .map(|n| web.hits(&format!("/img/{n}")))
    .sum()
}

/// Waits until no answer says `processing`.
async fn wait_until_settled(app: &TestApp) -> HashMap<String, Value> {
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let (_, media) = rest_media(app).await;
        if media.values().all(|m| m["status"] != "processing") {
            return media;
        }
        assert!(
            Instant::now() < deadline,
            "media still processing after 90 s: {media:?}"
        );
        tokio::time::sleep(Duration::from_millis(150)).await;
    }
}

/// Downloads a preview from tokenql and checks its size against the original's.
async fn check_preview(app: &TestApp, item: &Value, long: u32, original: (u32, u32)) {
    let url = item["url"].as_str().expect("preview url");
    assert!(
        url.starts_with(&format!("{}/media/", app.base)),
        "{url} is not served by tokenql at {}",
        app.base
    );
    // No API key: `<img>` tags must work.
    let resp = app.client.get(url).send().await.expect("get preview");
    assert_eq!(resp.status(), 200, "{url}");
    assert_eq!(resp.headers()["content-type"], "image/png");
    let cache = resp.headers()["cache-control"].to_str().unwrap_or_default();
    assert!(cache.contains("immutable"), "{cache}");
    let bytes = resp.bytes().await.expect("preview body");
    let img = image::load_from_memory_with_format(&bytes, image::ImageFormat::Png)
        .expect("the preview is a PNG");
    let (w, h) = (img.width(), img.height());
    assert_eq!(
        (item["width"].as_u64(), item["height"].as_u64()),
        (Some(w.into()), Some(h.into()))
    );
    assert_eq!(w.max(h), long, "long side of {url}");
    let (ow, oh) = (f64::from(original.0), f64::from(original.1));
    let (exact_w, exact_h) = if ow >= oh {
        (f64::from(long), f64::from(long) * oh / ow)
    } else {
        (f64::from(long) * ow / oh, f64::from(long))
    };
    assert!(
        (f64::from(w) - exact_w).abs() <= 1.0 && (f64::from(h) - exact_h).abs() <= 1.0,
        "{url}: {w}x{h} does not keep the aspect of {}x{}",
        original.0,
        original.1
    );
}

async fn previews_end_to_end(backend: Backend) {
    let web = OffchainServer::start().await;
    let dir = media_dir();
    let config = offchain_config(&dir, &web);
    let options = tokenql::app::ServerOptions {
        offchain: config.clone(),
        ..Default::default()
    };
    let app = spawn_with(backend, options).await;
    seed(&app, &web).await;

    // 1. With no worker running, the first request answers: `processing` for every image
    //    URL, and nothing is fetched (an API that fetched, or waited for a fetch, would ask
    //    the web server or hang; shown without a clock — latency is measured in benches/).
    let (_, media) = rest_media(&app).await;
    assert_eq!(web.total_hits(), 0, "{backend:?}: the API fetched an image");
    for c in CASES_721 {
        let m = &media[&key(NFT721, c.token)];
        match (c.status, c.case) {
            (None, _) => assert!(m.is_null(), "token {}: {m}", c.token),
            (Some("invalid_url"), _) => assert_eq!(m["status"], "invalid_url", "{m}"),
            (Some(_), case) => {
                assert_eq!(m["status"], "processing", "token {}: {m}", c.token);
                let path = image_path(case).expect("image case");
                assert_eq!(m["original_media_url"], web.url(path));
                assert!(m["media_collection"].is_null());
            }
        }
    }
    assert_eq!(
        media[&key(NFT721, 10)]["original_media_url"],
        "not a url",
        "the offending value is shown"
    );
    assert!(media[&key(NFT721, 9)]["original_media_url"].is_null());
    let m1155 = &media[&key(NFT1155, TOKEN_1155)];
    let id = Uint256::from_u64(TOKEN_1155).to_hex64();
    assert_eq!(m1155["status"], "processing");
    assert_eq!(
        m1155["original_media_url"],
        web.url(&format!("/img1155/{id}.png"))
    );
    assert_eq!(img_hits(&web), 0, "the API fetched media itself");
    // Tokens 1 and 50 share one row: 10 image URLs (9 ERC721 cases + the ERC1155 one).
    assert_eq!(
        nft_media::Entity::find()
            .count(&app.db)
            .await
            .expect("count"),
        10
    );

    // 2. The worker runs; the API keeps answering promptly meanwhile.
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let worker = MediaWorker::new(app.db.clone(), Fetcher::new(config.clone()), config);
    let worker = tokio::spawn(worker.run(async move {
        let _ = stopped.await;
    }));
    let media = wait_until_settled(&app).await;

    // 3. Each case ends in its documented status.
    for c in CASES_721 {
        let m = &media[&key(NFT721, c.token)];
        match c.status {
            None => assert!(m.is_null(), "token {}: {m}", c.token),
            Some(status) => assert_eq!(m["status"], status, "token {} ({}): {m}", c.token, c.case),
        }
        if c.status.is_some() {
            let updated = m["updatedAt"].as_str().expect("updatedAt");
            assert!(updated.len() == 24 && updated.ends_with('Z'), "{updated}");
        }
    }
    assert_eq!(media[&key(NFT1155, TOKEN_1155)]["status"], "success");
    // The slow host is retried after a minute's backoff.
    let slow = nft_media::Entity::find()
        .filter(nft_media::Column::OriginalMediaUrl.eq(web.url("/img/slow")))
        .one(&app.db)
        .await
        .expect("slow row")
        .expect("the slow image has a row");
    assert_eq!(slow.attempts, 1);
    // A minute after the failed attempt (measured from the row's own update time, so a slow
    // machine does not matter), and still in the future.
    let next = slow.next_attempt_at.expect("a retry is scheduled");
    assert_eq!(
        next - slow.updated_at,
        60_000,
        "retry a minute after the failure"
    );
    assert!(next > tokenql::store::now_ms(), "the retry is not due yet");
    let png = &media[&key(NFT721, 1)];
    assert_eq!(png["mimetype"], "image/png");
    assert_eq!(png["category"], "image");
    assert_eq!(
        png["parent_hash"],
        format!("0x{}", hex(&Sha256::digest(png_bytes())))
    );
    assert_eq!(media[&key(NFT721, 2)]["mimetype"], "image/jpeg");
    assert_eq!(media[&key(NFT721, 3)]["mimetype"], "image/gif");
    let svg = &media[&key(NFT721, 4)];
    assert_eq!(svg["mimetype"], "image/svg+xml");
    assert_eq!(
        svg["parent_hash"],
        format!("0x{}", hex(&Sha256::digest(svg_bytes())))
    );
    let text = &media[&key(NFT721, 11)];
    assert_eq!(text["mimetype"], "text/plain");
    assert!(text["category"].is_null() && text["media_collection"].is_null());
    assert!(text["parent_hash"].is_string());
    for t in [5, 6, 7, 8, 9, 10, 11] {
        assert!(
            media[&key(NFT721, t)]["media_collection"].is_null(),
            "token {t}"
        );
    }

    // 4. Every preview, downloaded from tokenql and decoded, has the right size.
    for c in CASES_721.iter().filter(|c| c.status == Some("success")) {
        let m = &media[&key(NFT721, c.token)];
        let original = original_size(c.case).expect("image case");
        for (size, long) in [("low", 100), ("medium", 250), ("high", 500)] {
            check_preview(&app, &m["media_collection"][size], long, original).await;
        }
    }
    check_preview(
        &app,
        &media[&key(NFT1155, TOKEN_1155)]["media_collection"]["low"],
        100,
        PNG_SIZE,
    )
    .await;

    // 5. Made once, reused: two tokens share the PNG's row and previews, fetched once; more
    //    requests fetch nothing.
    assert_eq!(
        media[&key(NFT721, 1)]["media_collection"],
        media[&key(NFT721, 50)]["media_collection"]
    );
    assert_eq!(web.hits("/img/png"), 1, "the shared PNG was fetched once");
    let png_rows = nft_media::Entity::find()
        .filter(nft_media::Column::OriginalMediaUrl.eq(web.url("/img/png")))
        .count(&app.db)
        .await
        .expect("count");
    assert_eq!(png_rows, 1);
    let hits = img_hits(&web);
    let (_, again) = rest_media(&app).await;
    tokio::time::sleep(Duration::from_millis(500)).await; // several worker polls
    let (_, again2) = rest_media(&app).await;
    assert_eq!(
        img_hits(&web),
        hits,
        "a second request fetched an original again"
    );
    assert_eq!(again, again2);
    assert_eq!(again[&key(NFT721, 1)], media[&key(NFT721, 1)]);

    // 6. GraphQL answers the same data.
    let data = app
        .graphql_ok(
            "query($a: Address!) { nftsByWallet(address: $a, first: 100) { edges { node {
                tokenAddress tokenId
                media { status mimetype category parentHash originalMediaUrl updatedAt
                        mediaCollection { low { url width height } medium { url width height }
                                          high { url width height } } } } } } }",
            json!({ "a": WALLET }),
        )
        .await;
    let edges = data["nftsByWallet"]["edges"].as_array().expect("edges");
    assert_eq!(edges.len(), CASES_721.len() + 1);
    for e in edges {
        let n = &e["node"];
        let k = format!(
            "{}/{}",
            n["tokenAddress"].as_str().unwrap_or_default(),
            n["tokenId"].as_str().unwrap_or_default()
        );
        let (g, r) = (&n["media"], &again[&k]);
        if r.is_null() {
            assert!(g.is_null(), "{k}: {g}");
            continue;
        }
        assert_eq!(
            g["status"].as_str().map(str::to_lowercase).as_deref(),
            r["status"].as_str(),
            "{k}"
        );
        assert_eq!(g["mimetype"], r["mimetype"], "{k}");
        assert_eq!(g["category"], r["category"], "{k}");
        assert_eq!(g["parentHash"], r["parent_hash"], "{k}");
        assert_eq!(g["originalMediaUrl"], r["original_media_url"], "{k}");
        assert_eq!(g["updatedAt"], r["updatedAt"], "{k}");
        assert_eq!(g["mediaCollection"], r["media_collection"], "{k}");
    }

    // 7. The preview route checks its path.
    let get = |path: String| {
        let c = app.client.clone();
        let url = format!("{}{path}", app.base);
        async move { c.get(url).send().await.expect("get").status().as_u16() }
    };
    let hash = tokenql::offchain::media::url_hash(&web.url("/img/png"));
    assert_eq!(get(format!("/media/{hash}/low.png")).await, 200);
    assert_eq!(get(format!("/media/{hash}/huge.png")).await, 404);
    assert_eq!(get(format!("/media/{hash}/low")).await, 404);
    assert_eq!(get(format!("/media/{}/low.png", "0".repeat(64))).await, 404);
    assert_eq!(
        get(format!("/media/{}/low.png", hash.to_uppercase())).await,
        400
    );
    assert_eq!(get("/media/..%2F..%2Fetc/low.png".into()).await, 400);
    assert_eq!(get("/media/.../low.png".into()).await, 400);

    let _ = stop.send(());
    tokio::time::timeout(Duration::from_secs(10), worker)
        .await
        .expect("the worker stops")
        .expect("the worker did not panic");
    app.cleanup().await;
    let _ = std::fs::remove_dir_all(&dir);
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

crate::backend_tests!(previews_end_to_end);
