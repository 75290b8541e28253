//! The official Moralis Python SDK, `moralis` 0.1.49 from PyPI (pinned with hashes in
//! `tests/clients/moralis-py/requirements.txt`), unmodified, pointed at tokenql by its base URL
//! only: `tests/clients/moralis-py/run.py` sets the default host of the SDK's `Configuration`
//! (the SDK has no option for it; see that script), calls `moralis.evm_api.<group>.<function>`
//! and pages by handing each page's `cursor` back, as the SDK's callers do.
//!
//! Every call is walked to its last page and checked against the independent decoding of the
//! bundled sample ([`super::want`]), record for record and in order, with the page envelope
//! (`page`, `page_size`, `status`, the cursor on every page but the last) and what the SDK sent
//! (the `/api/v2.2` prefix, the chain as given, arrays as repeated keys, its headers).
//!
//! The SDK lives in a virtualenv that `scripts/test` makes when it is missing:
//! `$TOKENQL_MORALIS_PY` is its python, by default `<target dir>/moralis-py-venv/bin/python`.
//! A missing virtualenv fails the test; it is never skipped.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::{json, Value};

use super::want::{self, hex_id, query, Order, Want};
use super::{run_sdk, spawn_enriched, upper, LABEL, LABELED, RICH, SPAM, USDT, WALLET_15};
use crate::support::common::truth::{Nft, NftMove, Truth, ZERO};
use crate::support::common::Backend;

/// The client folder, `tests/clients/moralis-py`.
pub const CLIENT: &str = "moralis-py";
/// The SDK version the folder pins.
const VERSION: &str = "0.1.49";
/// The address labels `spawn_enriched` gives.
const LABELS: &[(&str, &str)] = &[(LABELED, LABEL)];
/// The virtualenv's python, when not the default.
const PYTHON_VAR: &str = "TOKENQL_MORALIS_PY";

/// The python of the SDK's virtualenv: `$TOKENQL_MORALIS_PY`, else
/// `<target dir>/moralis-py-venv/bin/python` (the target dir found from this test binary's
/// path, `<target dir>/<profile>/deps/api-*`). Panics, saying how to make it, when
/// it is missing.
pub fn interpreter() -> PathBuf {
    let python = match std::env::var_os(PYTHON_VAR) {
        Some(p) => PathBuf::from(p),
        None => std::env::current_exe()
            .expect("the test binary's path")
            .ancestors()
            .nth(3)
            .expect("a test binary lives in <target dir>/<profile>/deps")
            .join("moralis-py-venv/bin/python"),
    };
    assert!(
        python.is_file(),
        "{} is missing: the Python SDK test runs the real `moralis` {VERSION} from PyPI in a \
         virtualenv. Run scripts/test, which makes it, or:\n  python3 -m venv {venv}\n  \
         {venv}/bin/pip install --require-hashes -r tests/clients/moralis-py/requirements.txt\n\
         (or point {PYTHON_VAR} at the python of a virtualenv that has it)",
        python.display(),
        venv = python
            .parent()
            .and_then(|p| p.parent())
            .map_or("VENV".into(), |p| p.display().to_string()),
    );
    python
}

/// What a call must produce.
enum Expect {
    /// Pages of `limit` records, together exactly the records of `want`.
    Walk { limit: usize, want: Want },
    /// One bare JSON array holding exactly the records of `want` (no envelope, no paging).
    Array { want: Want },
    /// Our 400, naming the parameter, reaches the caller as the SDK's error.
    BadRequest { contains: &'static str },
}

/// One call of `moralis.evm_api.<op>(api_key=..., params=params)`.
struct PyCall {
    name: String,
    op: &'static str,
    params: Value,
    expect: Expect,
}

fn walk(name: &str, op: &'static str, params: Value, limit: usize, want: Want) -> PyCall {
    PyCall {
        name: name.to_string(),
        op,
        params,
        expect: Expect::Walk { limit, want },
    }
}

fn bad(name: &str, op: &'static str, params: Value, contains: &'static str) -> PyCall {
    PyCall {
        name: name.to_string(),
        op,
        params,
        expect: Expect::BadRequest { contains },
    }
}

/// What the SDK sent for `call`: our prefix, the chain as given, arrays as repeated keys, the
/// key and its own headers.
fn check_requests(what: &str, call: &PyCall, got: &Value) {
    let requests = got["requests"].as_array().expect("requests");
    assert!(!requests.is_empty(), "{what}: the SDK sent nothing: {got}");
    for r in requests {
        let path = r["path"].as_str().expect("path");
        assert!(path.starts_with("/api/v2.2/"), "{what}: {path}");
        let q = query(path);
        let chain = call.params["chain"]
            .as_str()
            .expect("every call names a chain");
        assert!(
            q.contains(&("chain".into(), chain.into())),
            "{what}: chain as given: {path}"
        );
        for (k, _) in &q {
            assert!(!k.contains('['), "{what}: arrays as repeated keys: {path}");
        }
        for (k, v) in call.params.as_object().expect("params") {
            if let Some(items) = v.as_array() {
                let sent: Vec<&str> = q
                    .iter()
                    .filter(|(qk, _)| qk == k)
                    .map(|(_, v)| v.as_str())
                    .collect();
                let given: Vec<&str> = items.iter().filter_map(Value::as_str).collect();
                assert_eq!(sent, given, "{what}: {k} as repeated keys: {path}");
            }
        }
        let h = &r["headers"];
        assert_eq!(h["x-api-key"], json!("<api key>"), "{what}: {r}");
        assert_eq!(
            h["accept"],
            json!("application/json; charset=utf-8"),
            "{what}: {r}"
        );
        assert_eq!(h["x-moralis-platform"], json!("Python SDK"), "{what}: {r}");
        assert_eq!(
            h["x-moralis-platform-version"],
            json!(VERSION),
            "{what}: {r}"
        );
    }
}

/// Runs `calls` through the Python SDK at `{app.base}/api/v2.2` and checks every call.
async fn check_py(app: &crate::support::common::TestApp, truth: &Truth, calls: &[PyCall]) {
    let base_url = format!("{}/api/v2.2", app.base);
    let input = json!({
        "apiKey": app.key,
        "calls": calls
            .iter()
            .map(|c| json!({"name": c.name, "op": c.op, "params": c.params}))
            .collect::<Vec<_>>(),
    });
    let report = tokio::task::spawn_blocking(move || run_sdk(CLIENT, &base_url, &input))
        .await
        .expect("SDK runner panicked");
    eprintln!("{CLIENT}: {}", report["sdk"]);
    assert_eq!(
        report["sdk"]["moralis"],
        json!(VERSION),
        "{}",
        report["sdk"]
    );
    let results = report["calls"].as_array().expect("calls");
    assert_eq!(results.len(), calls.len());
    for (call, got) in calls.iter().zip(results) {
        let what = format!("{CLIENT} {} ({})", call.name, call.op);
        if let Some(r) = got["requests"].as_array().and_then(|r| r.first()) {
            eprintln!(
                "{what}: GET {} (+{} more)",
                r["path"],
                got["pages"]
                    .as_array()
                    .map_or(0, |p| p.len().saturating_sub(1))
            );
        }
        check_requests(&what, call, got);
        if let Expect::Walk { want, .. } | Expect::Array { want } = &call.expect {
            eprintln!("{what}: {} records", want.len());
            assert!(
                want.len() > 0 || call.name.starts_with("nobody"),
                "{what}: the sample should give this call something to answer"
            );
        }
        match &call.expect {
            Expect::Walk { limit, want } => {
                // The SDK hands back the body as it is: its records are the raw ones.
                for p in got["pages"].as_array().into_iter().flatten() {
                    assert_eq!(p["result"], p["raw"]["result"], "{what}");
                }
                want::check_walk(&what, truth, got, *limit, want, LABELS);
            }
            Expect::Array { want } => {
                want::check_array(&what, truth, got, want, LABELS);
            }
            Expect::BadRequest { contains } => {
                let e = &got["error"];
                assert_eq!(e["status"], json!(400), "{what}: expected our 400: {got}");
                let message = e["body"]["message"].as_str().unwrap_or_default();
                assert!(
                    message.starts_with(&format!("{contains}:")),
                    "{what}: our message should name {contains}: {e}"
                );
                // The SDK's message shows the body as Python bytes (quotes escaped).
                let start = format!("{{\"message\":\"{contains}:");
                assert!(
                    e["message"].as_str().is_some_and(|m| m.contains(&start)),
                    "{what}: the SDK's error should carry our body: {e}"
                );
            }
        }
    }
}

/// The key with the largest count, ties to the smallest key.
fn most<K: Ord + Clone>(counts: &BTreeMap<K, usize>) -> (K, usize) {
    counts
        .iter()
        .max_by_key(|(k, n)| (**n, std::cmp::Reverse((*k).clone())))
        .map(|(k, n)| (k.clone(), *n))
        .expect("something to count")
}

/// `get_wallet_token_transfers`, `get_token_transfers`, `get_wallet_token_balances`,
/// `get_wallet_nft_transfers`, `get_nft_contract_transfers`, `get_contract_nfts`,
/// `get_nft_owners`, `get_nft_token_id_owners` and `get_wallet_nft_collections` of moralis
/// 0.1.49 at its default path `/api/v2.2`: both orders, block and date bounds, contract and
/// token filters, balances at a block, hex token ids (and id 0), `exclude_spam`, a token id of
/// 2^256-1, and our 400s reaching the caller.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn moralis_py_0_1_49_v2_2_calls() {
    let python = interpreter();
    eprintln!("{CLIENT}: {}", python.display());
    let truth = Truth::demo();
    let app = spawn_enriched(Backend::Sqlite).await;

    // ERC20: the busiest wallet, its two busiest tokens, a date window inside its history.
    let wallet = truth
        .busiest_wallets()
        .into_iter()
        .map(|(w, _)| w)
        .find(|w| w != ZERO)
        .expect("a wallet");
    let mine = truth.transfers_of(&[&wallet]);
    assert!(
        mine.len() > 8,
        "the wallet spans pages of 4: {}",
        mine.len()
    );
    let mut per_token: BTreeMap<String, usize> = BTreeMap::new();
    for t in &mine {
        *per_token.entry(t.contract.clone()).or_default() += 1;
    }
    let (top, _) = most(&per_token);
    per_token.remove(&top);
    let tokens: Vec<String> = std::iter::once(top)
        .chain(per_token.keys().next().cloned())
        .collect();
    let (lo, hi) = (mine[mine.len() * 3 / 4], mine[mine.len() / 4]);
    assert!(
        lo.block_time < hi.block_time,
        "the wallet's transfers span several blocks"
    );
    let (lo_time, hi_time) = (lo.block_time, hi.block_time);
    let mut blocks: Vec<u64> = truth.transfers.iter().map(|t| t.block_number).collect();
    blocks.sort_unstable();
    let (from, to) = (blocks[blocks.len() / 4], blocks[blocks.len() * 3 / 4]);
    let usdt_since = truth
        .transfers
        .iter()
        .filter(|t| t.contract == USDT)
        .map(|t| t.block_time)
        .min()
        .expect("USDT transfers")
        + 1;

    // NFTs: the wallet with the most moves and its busiest collection; the collection with the
    // most moves; the collection of the first mint; the biggest collection by holdings; the
    // token with the most holders; the wallet with the most collections.
    let mut moves_of: BTreeMap<String, usize> = BTreeMap::new();
    let mut moves_in: BTreeMap<String, usize> = BTreeMap::new();
    for m in &truth.nft_moves {
        for a in [&m.from, &m.to] {
            if a != ZERO {
                *moves_of.entry(a.clone()).or_default() += 1;
            }
        }
        *moves_in.entry(m.contract.clone()).or_default() += 1;
    }
    let (mover, _) = most(&moves_of);
    let mut mover_in: BTreeMap<String, usize> = BTreeMap::new();
    for m in truth
        .nft_moves
        .iter()
        .filter(|m| m.from == mover || m.to == mover)
    {
        *mover_in.entry(m.contract.clone()).or_default() += 1;
    }
    let (mover_collection, _) = most(&mover_in);
    let (busy_collection, _) = most(&moves_in);
    let minted = truth
        .nft_moves
        .iter()
        .rev()
        .find(|m| m.from == ZERO)
        .expect("the sample has mints")
        .contract
        .clone();
    let burnt: Vec<&NftMove> = truth.nft_moves.iter().filter(|m| m.to == ZERO).collect();
    assert!(!burnt.is_empty(), "the sample has burns");
    let all: Vec<&Nft> = truth.nfts.values().flatten().collect();
    let mut held_in: BTreeMap<String, usize> = BTreeMap::new();
    let mut holders: BTreeMap<(String, String), usize> = BTreeMap::new();
    for n in &all {
        *held_in.entry(n.contract.clone()).or_default() += 1;
        *holders
            .entry((n.contract.clone(), n.token_id_hex.clone()))
            .or_default() += 1;
    }
    let (big, big_n) = most(&held_in);
    assert!(big_n > 7, "the biggest collection spans pages of 7");
    let ((token_contract, token_hex), _) = most(&holders);
    let token_dec = crate::support::common::truth::hex_to_dec(&token_hex);
    let collector = truth
        .nfts
        .iter()
        .max_by_key(|(w, v)| {
            let n = v
                .iter()
                .map(|n| &n.contract)
                .collect::<std::collections::BTreeSet<_>>();
            (n.len(), std::cmp::Reverse((*w).clone()))
        })
        .map(|(w, _)| w.clone())
        .expect("a holder");
    let max = "115792089237316195423570985008687907853269984665640564039457584007913129639935";

    // Balances: a wallet with positive and negative sums, listed and unlisted tokens, one of
    // them flagged as spam; a block inside its history.
    let (holder, spam_token, listed) = want::balance_wallet(&truth);
    super::mark_spam(&app, &spam_token).await;
    let mut holder_blocks: Vec<u64> = truth
        .transfers_of(&[&holder])
        .iter()
        .map(|t| t.block_number)
        .collect();
    holder_blocks.sort_unstable();
    let mid_block = holder_blocks[holder_blocks.len() / 2];
    // Collection NFTs: the collection with token id 0.
    let zero_id = all
        .iter()
        .find(|n| n.token_id == "0")
        .map(|n| n.contract.clone())
        .expect("the sample holds a token id 0");

    let in_window = |time: u64| (lo_time..=hi_time).contains(&time);
    let calls = vec![
        walk(
            "a wallet's ERC20 transfers, limit 4",
            "token.get_wallet_token_transfers",
            json!({"address": upper(&wallet), "chain": "eth", "limit": 4}),
            4,
            Want::erc20(&truth, Order::Desc, |t| t.from == wallet || t.to == wallet),
        ),
        walk(
            "a wallet's ERC20 transfers of two tokens, oldest first",
            "token.get_wallet_token_transfers",
            json!({"address": wallet, "chain": "0x1", "order": "ASC", "limit": 3,
                   "contract_addresses": tokens}),
            3,
            Want::erc20(&truth, Order::Asc, |t| {
                (t.from == wallet || t.to == wallet) && tokens.contains(&t.contract)
            }),
        ),
        walk(
            "a wallet's ERC20 transfers between two dates",
            "token.get_wallet_token_transfers",
            json!({"address": wallet, "chain": "eth", "limit": 5,
                   "from_date": lo.block_timestamp, "to_date": hi_time.to_string()}),
            5,
            Want::erc20(&truth, Order::Desc, |t| {
                (t.from == wallet || t.to == wallet) && in_window(t.block_time)
            }),
        ),
        walk(
            "USDT in a block range, limit 7",
            "token.get_token_transfers",
            json!({"address": USDT, "chain": "eth", "from_block": from, "to_block": to,
                   "limit": 7}),
            7,
            Want::erc20(&truth, Order::Desc, |t| {
                t.contract == USDT && (from..=to).contains(&t.block_number)
            }),
        ),
        walk(
            "USDT after its first second, oldest first",
            "token.get_token_transfers",
            json!({"address": upper(USDT), "chain": "0x1", "order": "ASC", "limit": 50,
                   "from_date": usdt_since.to_string()}),
            50,
            Want::erc20(&truth, Order::Asc, |t| {
                t.contract == USDT && t.block_time >= usdt_since
            }),
        ),
        walk(
            "a wallet's NFT moves, limit 5",
            "nft.get_wallet_nft_transfers",
            json!({"address": WALLET_15, "chain": "eth", "limit": 5}),
            5,
            Want::moves(&truth, Order::Desc, false, |m| {
                m.from == WALLET_15 || m.to == WALLET_15
            }),
        ),
        walk(
            "a wallet's NFT moves in one collection, oldest first, hex ids",
            "nft.get_wallet_nft_transfers",
            json!({"address": upper(&mover), "chain": "eth", "order": "ASC", "format": "hex",
                   "limit": 2, "contract_addresses": [mover_collection]}),
            2,
            Want::moves(&truth, Order::Asc, true, |m| {
                (m.from == mover || m.to == mover) && m.contract == mover_collection
            }),
        ),
        walk(
            "a collection's NFT moves, oldest first",
            "nft.get_nft_contract_transfers",
            json!({"address": busy_collection, "chain": "eth", "order": "ASC", "limit": 9}),
            9,
            Want::moves(&truth, Order::Asc, false, |m| m.contract == busy_collection),
        ),
        walk(
            "a collection's NFT moves with its mints, limit 6",
            "nft.get_nft_contract_transfers",
            json!({"address": minted, "chain": "0x1", "limit": 6}),
            6,
            Want::moves(&truth, Order::Desc, false, |m| m.contract == minted),
        ),
        walk(
            "a burnt token's collection up to the burn, hex ids",
            "nft.get_nft_contract_transfers",
            json!({"address": burnt[0].contract, "chain": "eth", "format": "hex",
                   "to_block": burnt[0].block, "limit": 3}),
            3,
            Want::moves(&truth, Order::Desc, true, |m| {
                m.contract == burnt[0].contract && m.block <= burnt[0].block
            }),
        ),
        walk(
            "a collection's owners, limit 7",
            "nft.get_nft_owners",
            json!({"address": big, "chain": "eth", "limit": 7}),
            7,
            Want::owners(&truth, &big, None, false),
        ),
        walk(
            "a collection's owners, hex ids, normalized metadata",
            "nft.get_nft_owners",
            json!({"address": upper(RICH), "chain": "0x1", "limit": 2, "format": "hex",
                   "normalizeMetadata": true, "media_items": false}),
            2,
            Want::owners(&truth, RICH, None, true),
        ),
        walk(
            "a token's owners, limit 1",
            "nft.get_nft_token_id_owners",
            json!({"address": token_contract, "chain": "eth", "token_id": token_dec,
                   "limit": 1}),
            1,
            Want::owners(&truth, &token_contract, Some(&token_hex), false),
        ),
        walk(
            "a token's owners by its hex id, hex ids",
            "nft.get_nft_token_id_owners",
            json!({"address": token_contract, "chain": "eth", "token_id": hex_id(&token_hex),
                   "format": "hex"}),
            100,
            Want::owners(&truth, &token_contract, Some(&token_hex), true),
        ),
        walk(
            "nobody holds token 2^256-1",
            "nft.get_nft_token_id_owners",
            json!({"address": big, "chain": "eth", "token_id": max}),
            100,
            Want::owners(&truth, &big, Some(&"f".repeat(64)), false),
        ),
        walk(
            "a wallet's collections with counts, limit 3",
            "nft.get_wallet_nft_collections",
            json!({"address": collector, "chain": "eth", "limit": 3, "token_counts": true}),
            3,
            Want::collections(&truth, &collector, true, &[]),
        ),
        walk(
            "a wallet's collections without spam",
            "nft.get_wallet_nft_collections",
            json!({"address": upper(WALLET_15), "chain": "0x1", "limit": 4,
                   "exclude_spam": true}),
            4,
            Want::collections(&truth, WALLET_15, false, &[SPAM]),
        ),
        PyCall {
            name: "a wallet's balances, spam left out by default".into(),
            op: "token.get_wallet_token_balances",
            params: json!({"address": upper(&holder), "chain": "eth"}),
            expect: Expect::Array {
                want: Want::balances(&truth, &holder, None, |t| t != spam_token),
            },
        },
        PyCall {
            name: "a wallet's balances with spam".into(),
            op: "token.get_wallet_token_balances",
            params: json!({"address": holder, "chain": "0x1", "exclude_spam": false}),
            expect: Expect::Array {
                want: Want::balances(&truth, &holder, None, |_| true),
            },
        },
        PyCall {
            name: "a wallet's balances of two tokens".into(),
            op: "token.get_wallet_token_balances",
            params: json!({"address": holder, "chain": "eth", "exclude_spam": false,
                           "token_addresses": [upper(&spam_token), listed]}),
            expect: Expect::Array {
                want: Want::balances(&truth, &holder, None, |t| t == spam_token || t == listed),
            },
        },
        PyCall {
            name: "a wallet's balances at a block".into(),
            op: "token.get_wallet_token_balances",
            params: json!({"address": holder, "chain": "eth", "to_block": mid_block,
                           "exclude_spam": false}),
            expect: Expect::Array {
                want: Want::balances(&truth, &holder, Some(mid_block), |_| true),
            },
        },
        walk(
            "a collection's NFTs, limit 7",
            "nft.get_contract_nfts",
            json!({"address": big, "chain": "eth", "limit": 7}),
            7,
            Want::collection_nfts(&truth, &big, false),
        ),
        walk(
            "a collection's NFTs with token id 0, hex ids",
            "nft.get_contract_nfts",
            json!({"address": upper(&zero_id), "chain": "0x1", "format": "hex",
                   "normalizeMetadata": true, "media_items": false, "limit": 1}),
            1,
            Want::collection_nfts(&truth, &zero_id, true),
        ),
        walk(
            "a collection's NFTs with metadata",
            "nft.get_contract_nfts",
            json!({"address": RICH, "chain": "eth", "limit": 3, "normalizeMetadata": true}),
            3,
            Want::collection_nfts(&truth, RICH, false),
        ),
        bad(
            "balances of a malformed address",
            "token.get_wallet_token_balances",
            json!({"address": "0x12", "chain": "eth"}),
            "address",
        ),
        bad(
            "from_date after to_date",
            "token.get_token_transfers",
            json!({"address": USDT, "chain": "eth", "from_date": "2023-03-02",
                   "to_date": "2023-03-01"}),
            "from_date",
        ),
        bad(
            "a date that is not one",
            "nft.get_wallet_nft_transfers",
            json!({"address": WALLET_15, "chain": "eth", "to_date": "tomorrow"}),
            "to_date",
        ),
        bad(
            "a token id past 2^256-1",
            "nft.get_nft_token_id_owners",
            json!({"address": big, "chain": "eth", "token_id": format!("{max}0")}),
            "token_id",
        ),
    ];
    check_py(&app, &truth, &calls).await;
    app.cleanup().await;
}

/// The Python client folder pins `moralis` 0.1.49 and every dependency by version and hash.
#[test]
fn python_client_pins_its_sdk() {
    let dir = super::repo_root().join("tests/clients").join(CLIENT);
    let read = |f: &str| {
        std::fs::read_to_string(dir.join(f)).unwrap_or_else(|e| panic!("{CLIENT}/{f}: {e}"))
    };
    assert_eq!(
        read("requirements.in").trim(),
        format!("moralis=={VERSION}")
    );
    let lock = read("requirements.txt");
    let pins: Vec<&str> = lock
        .lines()
        .filter(|l| !l.starts_with(' ') && !l.starts_with('#') && !l.trim().is_empty())
        .collect();
    assert!(
        pins.iter()
            .any(|l| l.starts_with(&format!("moralis=={VERSION} "))),
        "{lock}"
    );
    for pin in &pins {
        assert!(
            pin.contains("==") && pin.ends_with('\\'),
            "{CLIENT}: not pinned: {pin}"
        );
    }
    let hashes = lock
        .lines()
        .filter(|l| l.trim_start().starts_with("--hash=sha256:"))
        .count();
    assert!(hashes >= pins.len(), "{CLIENT}: every pin has its hashes");
}
