//! The request mix of the soak: `clients` closed-loop clients, each sending its next request as
//! soon as the previous one is answered, drawn at random from:
//!
//! | share | request | expected |
//! |---:|---|---|
//! | 30% | REST wallet NFTs: a known wallet (any letter case) or a fresh random one, `limit` 1–100, filters (`token_addresses`, `exclude_spam`, `format`, `normalizeMetadata`, `media_items`), `/api/v2` or `/api/v2.2`, half the time the next page of the client's last answer | 200 |
//! | 25% | REST ERC20 transfers: 1–3 wallets in one of the array encodings, contracts, block ranges, exclusions, next pages | 200 |
//! | 25% | GraphQL: a document of its own (operation name from a million, a random subset of fields, variables or literals) asking a wallet's NFTs and transfers, next pages | 200 |
//! | 5% | invalid REST parameters (address, chain, cursor, limit) | 400 |
//! | 4% | invalid GraphQL (syntax errors, unknown fields, bad arguments), each text new | 200/400 with `errors` |
//! | 4% | no key, or a random unknown key | 401 |
//! | 5% | a key limited to 2 requests/s | 200 or 429 |
//! | 2% | unknown paths | 404 |

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};

use crate::anvil::Rng;

const NFT_FIELDS: &[&str] = &[
    "tokenAddress",
    "tokenId",
    "contractType",
    "ownerOf",
    "amount",
    "blockNumber",
    "blockNumberMinted",
    "tokenUri",
    "metadata",
    "name",
    "symbol",
    "tokenHash",
    "minterAddress",
    "possibleSpam",
    "verifiedCollection",
    "lastTokenUriSync",
    "lastMetadataSync",
];
const TRANSFER_FIELDS: &[&str] = &[
    "contractAddress",
    "fromWallet",
    "toWallet",
    "fromWalletLabel",
    "value",
    "valueDecimal",
    "blockNumber",
    "blockHash",
    "blockTimestamp",
    "transactionHash",
    "logIndex",
    "tokenName",
    "tokenSymbol",
    "tokenDecimals",
    "possibleSpam",
];

/// What the load needs to know about the world.
pub struct Target {
    pub base: String,
    /// Keys without a rate limit.
    pub keys: Vec<String>,
    /// A key limited to 2 requests/s (burst 2).
    pub limited_key: String,
    pub wallets: Vec<String>,
    pub tokens: Vec<String>,
    pub collections: Vec<String>,
    /// The chain head when the load started (for block-range filters).
    pub head: u64,
}

/// Answers counted by class.
#[derive(Default)]
pub struct Counts {
    pub requests: AtomicU64,
    pub ok: AtomicU64,
    pub bad_request: AtomicU64,
    pub unauthorized: AtomicU64,
    pub not_found: AtomicU64,
    pub too_many: AtomicU64,
    pub other_4xx: AtomicU64,
    pub server_errors: AtomicU64,
    pub transport_errors: AtomicU64,
    /// Answers other than the request's kind expects (a 5xx always is).
    pub unexpected: AtomicU64,
    /// The first unexpected answers, for the report.
    pub examples: Mutex<Vec<String>>,
}

impl Counts {
    fn record(&self, status: u16) {
        self.requests.fetch_add(1, Ordering::Relaxed);
        let c = match status {
            200..=299 => &self.ok,
            400 => &self.bad_request,
            401 => &self.unauthorized,
            404 => &self.not_found,
            429 => &self.too_many,
            402..=499 => &self.other_4xx,
            _ => &self.server_errors,
        };
        c.fetch_add(1, Ordering::Relaxed);
    }

    fn unexpected(&self, what: String) {
        self.unexpected.fetch_add(1, Ordering::Relaxed);
        let mut ex = self.examples.lock().unwrap_or_else(|p| p.into_inner());
        if ex.len() < 10 {
            ex.push(what);
        }
    }

    /// One line for the report.
    pub fn summary(&self) -> String {
        let g = |c: &AtomicU64| c.load(Ordering::Relaxed);
        format!(
            "requests {} | 2xx {} | 400 {} | 401 {} | 404 {} | 429 {} | other 4xx {} | 5xx {} | transport errors {} | unexpected {}",
            g(&self.requests),
            g(&self.ok),
            g(&self.bad_request),
            g(&self.unauthorized),
            g(&self.not_found),
            g(&self.too_many),
            g(&self.other_4xx),
            g(&self.server_errors),
            g(&self.transport_errors),
            g(&self.unexpected),
        )
    }
}

/// What a request expects.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Expect {
    Ok,
    BadRequest,
    /// A GraphQL error: 200 or 400, with `errors`.
    GqlError,
    Unauthorized,
    OkOrLimited,
    NotFound,
}

/// A client's memory of its last pages, to ask for the next ones.
#[derive(Default)]
struct Pages {
    nft: Option<(String, String)>,
    transfers: Option<(String, String)>,
    gql: Option<Value>,
}

enum Body {
    Get(String),
    Post(Value),
}

enum Follow {
    None,
    Nft(String),
    Transfers(String),
    Gql(Value),
}

fn hex_bytes(rng: &mut Rng, n: usize) -> String {
    (0..n).map(|_| format!("{:02x}", rng.below(256))).collect()
}

/// The address in a random letter case (the API accepts any).
fn any_case(rng: &mut Rng, a: &str) -> String {
    match rng.below(3) {
        0 => a.to_string(),
        1 => format!("0x{}", a[2..].to_uppercase()),
        _ => a
            .chars()
            .enumerate()
            .map(|(i, c)| {
                if i > 1 && rng.below(2) == 0 {
                    c.to_ascii_uppercase()
                } else {
                    c
                }
            })
            .collect(),
    }
}

/// `name=v1&name=v2`, `name[]=…` or `name[0]=…`, or comma-separated.
fn array_param(rng: &mut Rng, name: &str, values: &[String]) -> String {
    match rng.below(4) {
        0 => values
            .iter()
            .map(|v| format!("{name}={v}"))
            .collect::<Vec<_>>()
            .join("&"),
        1 => values
            .iter()
            .map(|v| format!("{name}%5B%5D={v}"))
            .collect::<Vec<_>>()
            .join("&"),
        2 => values
            .iter()
            .enumerate()
            .map(|(i, v)| format!("{name}%5B{i}%5D={v}"))
            .collect::<Vec<_>>()
            .join("&"),
        _ => format!("{name}={}", values.join(",")),
    }
}

fn pick<'a>(rng: &mut Rng, v: &'a [String]) -> &'a String {
    &v[rng.index(v.len())]
}

fn some_of(rng: &mut Rng, v: &[String], max: usize) -> Vec<String> {
    let n = 1 + rng.index(max);
    (0..n).map(|_| pick(rng, v).clone()).collect()
}

fn fields(rng: &mut Rng, all: &[&str]) -> String {
    let mut out: Vec<&str> = all.iter().copied().filter(|_| rng.below(2) == 0).collect();
    if out.is_empty() {
        out.push(all[0]);
    }
    out.join(" ")
}

fn rest_nft(rng: &mut Rng, t: &Target, pages: &Pages) -> (String, Follow) {
    if let (Some((q, c)), true) = (&pages.nft, rng.below(2) == 0) {
        return (format!("{q}&cursor={c}"), Follow::Nft(q.clone()));
    }
    let wallet = if rng.below(10) == 0 {
        format!("0x{}", hex_bytes(rng, 20))
    } else {
        let w = pick(rng, &t.wallets).clone();
        any_case(rng, &w)
    };
    let version = if rng.below(4) == 0 { "v2.2" } else { "v2" };
    let mut q = format!(
        "/api/{version}/{wallet}/nft?chain={}&limit={}",
        if rng.below(2) == 0 { "eth" } else { "0x1" },
        1 + rng.below(100)
    );
    if rng.below(4) == 0 {
        let c = some_of(rng, &t.collections, 2);
        q.push('&');
        q.push_str(&array_param(rng, "token_addresses", &c));
    }
    for (p, v) in [
        ("exclude_spam", "true"),
        ("format", "hex"),
        ("normalizeMetadata", "true"),
        ("media_items", "true"),
        ("disable_total", "false"),
    ] {
        if rng.below(4) == 0 {
            q.push_str(&format!("&{p}={v}"));
        }
    }
    (q.clone(), Follow::Nft(q))
}

fn rest_transfers(rng: &mut Rng, t: &Target, pages: &Pages) -> (String, Follow) {
    if let (Some((q, c)), true) = (&pages.transfers, rng.below(2) == 0) {
        return (format!("{q}&cursor={c}"), Follow::Transfers(q.clone()));
    }
    let mut q = format!(
        "/api/v2/erc20/transfers?chain=eth&limit={}",
        1 + rng.below(100)
    );
    match rng.below(3) {
        0 | 1 => {
            let w: Vec<String> = some_of(rng, &t.wallets, 3)
                .iter()
                .map(|a| any_case(rng, a))
                .collect();
            q.push('&');
            q.push_str(&array_param(rng, "wallet_addresses", &w));
        }
        _ => {
            let c = some_of(rng, &t.tokens, 2);
            q.push('&');
            q.push_str(&array_param(rng, "contract_addresses", &c));
        }
    }
    if rng.below(4) == 0 {
        let from = rng.below(t.head.max(1));
        q.push_str(&format!("&from_block={from}"));
        if rng.below(2) == 0 {
            q.push_str(&format!("&to_block={}", from + rng.below(5_000)));
        }
    }
    if rng.below(8) == 0 {
        q.push_str(&format!("&exclude_wallets={}", pick(rng, &t.wallets)));
    }
    if rng.below(8) == 0 {
        q.push_str(&format!("&exclude_contracts={}", pick(rng, &t.tokens)));
    }
    (q.clone(), Follow::Transfers(q))
}

fn graphql(rng: &mut Rng, t: &Target, pages: &Pages) -> (Value, Follow) {
    if let (Some(body), true) = (&pages.gql, rng.below(2) == 0) {
        return (body.clone(), Follow::Gql(body.clone()));
    }
    let w = pick(rng, &t.wallets).clone();
    let wallet = any_case(rng, &w);
    let first = 1 + rng.below(50);
    let name = if rng.below(5) == 0 {
        String::new()
    } else {
        format!("W{}", rng.below(1_000_000))
    };
    let nft_fields = fields(rng, NFT_FIELDS);
    let xfer_fields = fields(rng, TRANSFER_FIELDS);
    let spam = if rng.below(3) == 0 {
        ", excludeSpam: true"
    } else {
        ""
    };
    let fmt = if rng.below(3) == 0 {
        ", tokenIdFormat: HEX"
    } else {
        ""
    };
    let body = if rng.below(2) == 0 {
        json!({
            "query": format!(
                "query {name}($a: Address!, $n: Int!, $after: String) {{ \
                 nfts: nftsByWallet(address: $a, first: $n, after: $after{spam}{fmt}) {{ status \
                 pageInfo {{ hasNextPage endCursor }} edges {{ node {{ {nft_fields} }} }} }} \
                 xfers: erc20Transfers(walletAddresses: [$a], first: 10) {{ edges {{ node {{ {xfer_fields} }} }} }} }}"
            ),
            "variables": {"a": wallet, "n": first, "after": null},
        })
    } else {
        json!({
            "query": format!(
                "query {name} {{ nfts: nftsByWallet(address: \"{wallet}\", first: {first}{spam}{fmt}) {{ \
                 status pageInfo {{ hasNextPage endCursor }} edges {{ node {{ {nft_fields} }} }} }} \
                 xfers: erc20Transfers(walletAddresses: [\"{wallet}\"], first: {}) {{ edges {{ cursor node {{ {xfer_fields} }} }} }} }}",
                1 + rng.below(20)
            ),
        })
    };
    (body.clone(), Follow::Gql(body))
}

/// Runs the mix until `stop`; counts into `counts`.
pub async fn client(id: usize, target: Arc<Target>, counts: Arc<Counts>, stop: Arc<AtomicBool>) {
    let http = match reqwest::Client::builder()
        .timeout(std::time::Duration::from_secs(60))
        .build()
    {
        Ok(c) => c,
        Err(e) => {
            counts.unexpected(format!("client {id}: no HTTP client: {e}"));
            return;
        }
    };
    let mut rng = Rng(0x50a6_0000 + id as u64 * 7919);
    let mut pages = Pages::default();
    let t = &*target;
    while !stop.load(Ordering::Relaxed) {
        let dice = rng.below(100);
        let key = Some(pick(&mut rng, &t.keys).clone());
        let (body, follow, key, expect) = match dice {
            0..=29 => {
                let (q, f) = rest_nft(&mut rng, t, &pages);
                (Body::Get(q), f, key, Expect::Ok)
            }
            30..=54 => {
                let (q, f) = rest_transfers(&mut rng, t, &pages);
                (Body::Get(q), f, key, Expect::Ok)
            }
            55..=79 => {
                let (b, f) = graphql(&mut rng, t, &pages);
                (Body::Post(b), f, key, Expect::Ok)
            }
            80..=84 => {
                let w = pick(&mut rng, &t.wallets).clone();
                let q = match rng.below(4) {
                    0 => format!("/api/v2/0x{}/nft?chain=eth", hex_bytes(&mut rng, 7)),
                    1 => format!("/api/v2/{w}/nft?chain=nochain{}", rng.below(1000)),
                    2 => format!(
                        "/api/v2/{w}/nft?chain=eth&cursor={}",
                        hex_bytes(&mut rng, 40)
                    ),
                    _ => format!(
                        "/api/v2/erc20/transfers?chain=eth&limit={}",
                        101 + rng.below(10_000)
                    ),
                };
                (Body::Get(q), Follow::None, key, Expect::BadRequest)
            }
            85..=88 => {
                let n = rng.below(1_000_000);
                let q = match rng.below(3) {
                    0 => format!("query Broken{n} {{ nftsByWallet(address: \"0x{n}\""),
                    1 => format!("{{ noSuchField{n} {{ id }} }}"),
                    _ => format!("{{ nftsByWallet(address: \"0x{n:x}\", first: 5) {{ status }} }}"),
                };
                (
                    Body::Post(json!({ "query": q })),
                    Follow::None,
                    key,
                    Expect::GqlError,
                )
            }
            89..=92 => {
                let w = pick(&mut rng, &t.wallets).clone();
                let key = (rng.below(2) == 0).then(|| format!("tq_{}", hex_bytes(&mut rng, 24)));
                (
                    Body::Get(format!("/api/v2/{w}/nft?chain=eth&limit=5")),
                    Follow::None,
                    key,
                    Expect::Unauthorized,
                )
            }
            93..=97 => {
                let w = pick(&mut rng, &t.wallets).clone();
                (
                    Body::Get(format!("/api/v2/{w}/nft?chain=eth&limit=10")),
                    Follow::None,
                    Some(t.limited_key.clone()),
                    Expect::OkOrLimited,
                )
            }
            _ => (
                Body::Get(format!("/api/v2/nothing/{}/here", rng.below(1_000_000))),
                Follow::None,
                key,
                Expect::NotFound,
            ),
        };
        let (what, req) = match &body {
            Body::Get(q) => (format!("GET {q}"), http.get(format!("{}{q}", t.base))),
            Body::Post(b) => (
                format!("POST /graphql {b}"),
                http.post(format!("{}/graphql", t.base)).json(b),
            ),
        };
        let req = match &key {
            Some(k) => req.header("x-api-key", k),
            None => req,
        };
        let resp = match req.send().await {
            Ok(r) => r,
            Err(e) => {
                counts.transport_errors.fetch_add(1, Ordering::Relaxed);
                counts.unexpected(format!("{what}: {e}"));
                continue;
            }
        };
        let status = resp.status().as_u16();
        let text = match resp.text().await {
            Ok(t) => t,
            Err(e) => {
                counts.transport_errors.fetch_add(1, Ordering::Relaxed);
                counts.unexpected(format!("{what}: body: {e}"));
                continue;
            }
        };
        counts.record(status);
        let fine = match expect {
            Expect::Ok => status == 200,
            Expect::BadRequest => status == 400,
            Expect::GqlError => (status == 200 || status == 400) && text.contains("\"errors\""),
            Expect::Unauthorized => status == 401,
            Expect::OkOrLimited => status == 200 || status == 429,
            Expect::NotFound => status == 404,
        };
        if !fine {
            let mut t = text;
            t.truncate(300);
            counts.unexpected(format!("{what}: {status} (expected {expect:?}): {t}"));
            continue;
        }
        if status != 200 {
            continue;
        }
        // Remember where the next page starts.
        match follow {
            Follow::None => {}
            Follow::Nft(q) | Follow::Transfers(q) => {
                let v: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
                let next = v["cursor"]
                    .as_str()
                    .filter(|c| !c.is_empty())
                    .map(|c| (q, crate::common::enc(c)));
                if what.contains("/nft?") {
                    pages.nft = next;
                } else {
                    pages.transfers = next;
                }
            }
            Follow::Gql(mut b) => {
                let v: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
                let info = &v["data"]["nfts"]["pageInfo"];
                pages.gql = match (info["hasNextPage"].as_bool(), info["endCursor"].as_str()) {
                    (Some(true), Some(c)) if b.get("variables").is_some() => {
                        b["variables"]["after"] = json!(c);
                        Some(b)
                    }
                    _ => None,
                };
            }
        }
    }
}
