//! The GraphiQL playground works with no Internet: tokenql serves the page and its bundled
//! assets itself, and a real browser uses it.
//!
//! - [`playground_runs_the_examples_in_chromium`]: headless Chromium, driven by
//!   `tests/browser/playground.mjs` (playwright-core), types the key, opens the docs, runs
//!   every example tab against the demo data (the subscription tab over a WebSocket, on blocks
//!   this test writes through the live indexer's write path meanwhile) and fails on any request to another host or any failed
//!   request. It saves `target/playground.png`.
//! - [`playground_assets_are_served_by_tokenql`]: content types, cache headers, and the `?v=`
//!   stamps of the page's asset links matching the assets served.
//! - [`playground_dist_is_fresh`]: the committed `playground/dist/` is what
//!   `playground/build.mjs` builds from the committed sources.
//!
//! They need Node.js, `npm ci --prefix tests/browser`, `npm ci --prefix playground` and
//! Chromium (`/usr/bin/chromium`, or `$CHROMIUM`); `scripts/test` installs them. Without them
//! these tests fail, saying what is missing: they are never skipped.

use crate::support::common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::Backend;
use sha2::{Digest, Sha256};

/// How long the browser script may take (it takes a few seconds).
const BROWSER_BUDGET: Duration = Duration::from_secs(240);

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn chromium() -> PathBuf {
    std::env::var_os("CHROMIUM").map_or_else(|| PathBuf::from("/usr/bin/chromium"), PathBuf::from)
}

/// Panics with what to install when `node`, a `node_modules` or Chromium is missing.
fn require_tools(node_modules: &[&str], need_chromium: bool) {
    let node = Command::new("node")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    assert!(
        node.is_ok_and(|s| s.success()),
        "node not found: install Node.js (scripts/test needs it too)"
    );
    for dir in node_modules {
        assert!(
            root().join(dir).join("node_modules").is_dir(),
            "{dir}/node_modules is missing: run `npm ci --prefix {dir}` (scripts/test does)"
        );
    }
    if need_chromium {
        let path = chromium();
        assert!(
            path.is_file(),
            "Chromium not found at {} (set CHROMIUM): `apt-get install chromium` (scripts/test does)",
            path.display()
        );
    }
}

/// Runs `cmd`, its stdout and stderr going to `log`, killing it after `budget`. Returns whether
/// it succeeded and what it printed.
fn run_logged(mut cmd: Command, log: &Path, budget: Duration) -> (bool, String) {
    let file = fs::File::create(log).unwrap_or_else(|e| panic!("create {}: {e}", log.display()));
    let err = file.try_clone().expect("clone a file handle");
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(file)
        .stderr(err)
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {cmd:?}: {e}"));
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if started.elapsed() > budget => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(100)),
            Err(e) => panic!("waiting for {cmd:?}: {e}"),
        }
    };
    let output = fs::read_to_string(log).unwrap_or_default();
    match status {
        Some(s) => (s.success(), output),
        None => (false, format!("{output}\n(killed after {budget:?})")),
    }
}

/// Width and height of a PNG, from its IHDR chunk.
fn png_size(bytes: &[u8]) -> Option<(u32, u32)> {
    const SIGNATURE: &[u8] = b"\x89PNG\r\n\x1a\n";
    if bytes.len() < 24 || !bytes.starts_with(SIGNATURE) || &bytes[12..16] != b"IHDR" {
        return None;
    }
    let be = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    Some((be(&bytes[16..20]), be(&bytes[20..24])))
}

/// Writes a block with one ERC20 transfer every 300 ms above the demo's indexed head, through
/// the live indexer's write path (so with its change feed rows), until aborted.
async fn live_blocks(db: sea_orm::DatabaseConnection) {
    use alloy::primitives::B256;
    use sea_orm::EntityTrait;
    use tokenql::decode::{Erc20Move, EventMeta};
    use tokenql::store::{Batch, BlockHeader, Checkpoint};
    use tokenql::types::{Address, Chain, Uint256};

    let state = tokenql::entity::chain_state::Entity::find_by_id(Chain::ETH.db_id())
        .one(&db)
        .await
        .expect("chain_state")
        .expect("the demo's checkpoint");
    let start = u64::try_from(state.start_block.unwrap_or(0)).expect("start block");
    let mut n = u64::try_from(state.indexed_block.expect("indexed")).expect("indexed") + 1;
    let word = |tag: u8, n: u64| {
        let mut b = [tag; 32];
        b[24..].copy_from_slice(&n.to_be_bytes());
        b
    };
    loop {
        let hash = B256::from(word(0xb1, n));
        let batch = Batch {
            blocks: vec![BlockHeader {
                number: n,
                hash,
                parent_hash: None,
                timestamp: 1_800_000_000 + n,
            }],
            erc20: vec![Erc20Move {
                meta: EventMeta {
                    contract: Address::from_word(&word(0, 7)),
                    block_number: n,
                    block_hash: hash,
                    transaction_hash: B256::from(word(0x7a, n)),
                    transaction_index: 0,
                    log_index: 0,
                },
                from: Address::from_word(&word(0, 8)),
                to: Address::from_word(&word(0, 9)),
                value: Uint256::from_u64(n),
            }],
            checkpoint: Some(Checkpoint {
                start_block: start,
                indexed_block: Some(n),
                head_block: n,
            }),
            feed: Some(Default::default()),
            ..Default::default()
        };
        tokenql::store::write_batch(&db, Chain::ETH, &batch)
            .await
            .expect("write a live block");
        n += 1;
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn playground_runs_the_examples_in_chromium() {
    require_tools(&["tests/browser"], true);
    let app = common::spawn(Backend::Sqlite).await;
    app.load_demo().await;

    let target = root().join("target");
    fs::create_dir_all(&target).expect("create target/");
    let shot = target.join("playground.png");
    let log = target.join("playground-browser.log");
    let _ = fs::remove_file(&shot);

    // The subscription tab's changes: a block of one transfer every 300 ms, written as the live
    // indexer writes them, while the browser runs.
    let writer = tokio::spawn(live_blocks(app.db.clone()));
    let mut cmd = Command::new("node");
    cmd.arg(root().join("tests/browser/playground.mjs"))
        .arg(&app.base)
        .arg(&app.key)
        .arg(&shot)
        .env("CHROMIUM", chromium());
    // The server answers on this runtime while the browser runs on a blocking thread.
    let (ok, output) = tokio::task::spawn_blocking(move || run_logged(cmd, &log, BROWSER_BUDGET))
        .await
        .expect("the browser thread panicked");
    writer.abort();
    assert!(ok, "the browser test failed:\n{output}");

    let png =
        fs::read(&shot).unwrap_or_else(|e| panic!("no screenshot at {}: {e}", shot.display()));
    assert_eq!(
        png_size(&png),
        Some((1440, 900)),
        "{} is not a 1440x900 PNG",
        shot.display()
    );
    // A blank 1440x900 page compresses to a few kilobytes; GraphiQL with an answer is ~100 KB.
    assert!(
        png.len() > 30_000,
        "{} is only {} bytes: the page looks empty",
        shot.display(),
        png.len()
    );
    app.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn playground_assets_are_served_by_tokenql() {
    let app = common::spawn(Backend::Sqlite).await;
    let get = |path: &str, accept: &str| {
        app.client
            .get(format!("{}{path}", app.base))
            .header("accept", accept)
            .send()
    };
    let header = |r: &reqwest::Response, name: &str| {
        r.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string()
    };

    let page = get("/playground", "text/html")
        .await
        .expect("GET /playground");
    assert_eq!(page.status(), 200);
    assert_eq!(header(&page, "content-type"), "text/html; charset=utf-8");
    assert_eq!(header(&page, "cache-control"), "no-cache");
    let html = page.text().await.expect("page body");
    let from_graphql = get("/graphql", "text/html,application/xhtml+xml")
        .await
        .expect("GET /graphql from a browser");
    assert_eq!(from_graphql.status(), 200);
    assert_eq!(from_graphql.text().await.expect("page body"), html);

    // Nothing from another host: every src/href is local (or data:).
    for attr in ["src=\"", "href=\""] {
        for (i, _) in html.match_indices(attr) {
            let value = &html[i + attr.len()..];
            assert!(
                value.starts_with('/') || value.starts_with("data:"),
                "the page links outside tokenql: {}",
                &value[..value.find('"').unwrap_or(value.len())]
            );
        }
    }

    for (name, content_type) in [
        ("playground.js", "text/javascript; charset=utf-8"),
        ("playground.css", "text/css; charset=utf-8"),
    ] {
        let prefix = format!("/playground/assets/{name}?v=");
        let start = html
            .find(&prefix)
            .unwrap_or_else(|| panic!("the page does not link {prefix}..."));
        let link = &html[start..];
        let link = &link[..link.find('"').expect("an unterminated link")];
        let stamp = &link[prefix.len()..];

        let asset = get(link, "*/*").await.expect("GET an asset");
        assert_eq!(asset.status(), 200, "{link}");
        assert_eq!(header(&asset, "content-type"), content_type, "{link}");
        assert_eq!(
            header(&asset, "cache-control"),
            "public, max-age=31536000, immutable",
            "{link}"
        );
        assert_eq!(header(&asset, "x-content-type-options"), "nosniff");
        let body = asset.bytes().await.expect("asset body");
        assert!(body.len() > 10_000, "{link}: {} bytes", body.len());
        let digest: String = Sha256::digest(&body)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(
            stamp,
            &digest[..16],
            "{link}: the page's stamp is not the served file's hash: run `npm run build` in playground/"
        );
    }

    let missing = get("/playground/assets/nope.js", "*/*")
        .await
        .expect("GET a missing asset");
    assert_eq!(missing.status(), 404);
    app.cleanup().await;
}

#[test]
fn playground_dist_is_fresh() {
    require_tools(&["playground"], false);
    let mut cmd = Command::new("node");
    cmd.arg(root().join("playground/build.mjs")).arg("--check");
    let log = std::env::temp_dir().join(format!(
        "tokenql-playground-check-{}.log",
        std::process::id()
    ));
    let (ok, output) = run_logged(cmd, &log, Duration::from_secs(120));
    let _ = fs::remove_file(&log);
    assert!(
        ok,
        "playground/dist/ is not what playground/build.mjs builds: run `npm ci && npm run build` \
         in playground/ and commit dist/ and index.html\n{output}"
    );
}
