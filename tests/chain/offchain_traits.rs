//! The traits routes, black-box, on every backend, over the metadata the off-chain worker fetched
//! from the local document server (the rig of `offchain_metadata.rs`). Every answer is compared
//! with the test's own aggregation of what tokenql serves as each token's metadata
//! (`GET /nft/{address}?normalizeMetadata=true`): counts, the paged walk (REST and GraphQL's
//! `nftCollection { traits }`), the NFTs a filter selects, and rarity — `null` while a token's metadata is missing, the test's computation once
//! every token's is fetched.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Value};

use crate::support::anvil::*;
use crate::support::common::{Backend, TestApp};

use super::offchain_metadata::{wait_token, Rig};

crate::backend_tests!(traits_follow_the_fetched_metadata);

/// Token ids `1..=TOKENS` are minted.
const TOKENS: u64 = 12;
/// The token whose document fails (503) until the resync.
const LATE: u64 = 7;

/// Token `id`'s metadata document: every form the attribute reading knows, with shared and rare
/// traits, a repeated one, one without a type, one token without any.
fn document(id: u64) -> Value {
    let background = if id % 5 == 0 {
        "Gold"
    } else if id % 2 == 0 {
        "Red"
    } else {
        "Blue"
    };
    let level = id % 4 + 1;
    let mut attributes = vec![
        json!({"trait_type": "Background", "value": background}),
        json!({"trait_type": "Level", "value": level, "display_type": "number"}),
    ];
    if id % 3 == 0 {
        let hat = if id == 3 { "Crown" } else { "Cap" };
        attributes.push(json!({"trait_type": "Hat", "value": hat}));
    }
    match id {
        1 => attributes.push(json!({"trait_type": "Shiny", "value": true})),
        2 => attributes.push(json!({"value": "untyped"})),
        4 => attributes.push(json!({"trait_type": "Background", "value": background})),
        _ => {}
    }
    let name = format!("Trait #{id}");
    match id {
        11 => json!({"name": name}),
        8 => json!({"name": name, "traits": attributes}),
        12 => json!({"name": name, "properties": {
            "Background": background,
            "Level": level,
            "Hat": {"name": "Hat", "value": "Cap"},
        }}),
        _ => json!({"name": name, "attributes": attributes}),
    }
}

/// A trait value as text, as the API writes it.
fn text(v: &Value) -> Option<String> {
    match v {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

/// The collection as tokenql serves it: each token's record (`normalizeMetadata=true`), by id.
async fn served(app: &TestApp, nft: &str) -> BTreeMap<u64, Value> {
    let mut out = BTreeMap::new();
    let mut uri = format!("/api/v2.2/nft/{nft}?normalizeMetadata=true&limit=5");
    loop {
        let (status, _, body) = app.get_rest(&uri).await;
        assert_eq!(status, 200, "{uri}: {body}");
        for r in body["result"].as_array().expect("result") {
            let id = r["token_id"]
                .as_str()
                .expect("id")
                .parse()
                .expect("decimal");
            out.insert(id, r.clone());
        }
        let Some(c) = body["cursor"].as_str() else {
            break;
        };
        uri = format!(
            "/api/v2.2/nft/{nft}?normalizeMetadata=true&limit=5&cursor={}",
            enc(c)
        );
    }
    assert_eq!(out.len(), TOKENS as usize, "{out:?}");
    out
}

fn enc(s: &str) -> String {
    form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

/// A token's traits, from its served record.
fn traits_of(record: &Value) -> BTreeSet<(String, String)> {
    record["normalized_metadata"]["attributes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|a| Some((a["trait_type"].as_str()?.to_string(), text(&a["value"])?)))
        .collect()
}

/// The test's own aggregation: tokens per trait.
fn tally(tokens: &BTreeMap<u64, BTreeSet<(String, String)>>) -> BTreeMap<(String, String), u64> {
    let mut counts = BTreeMap::new();
    for traits in tokens.values() {
        for t in traits {
            *counts.entry(t.clone()).or_insert(0u64) += 1;
        }
    }
    counts
}

/// The rarity fields of a trait `count` of `total` tokens have: `(percentage, rarity_label)`.
fn trait_rarity(count: u64, total: u64) -> (Value, Value) {
    let percentage = (count as f64 * 10_000.0 / total as f64).round() / 100.0;
    let top = (count * 100).div_ceil(total);
    (json!(percentage), json!(format!("Top {top}% trait")))
}

/// Each token's `(rarity_rank, rarity_percentage, rarity_label)`: score = Σ total / count over
/// its traits (in ascending order of count), rank = 1 + tokens scoring higher.
fn nft_rarity(tokens: &BTreeMap<u64, BTreeSet<(String, String)>>) -> BTreeMap<u64, Value> {
    let counts = tally(tokens);
    let total = tokens.len() as u64;
    let scores: BTreeMap<u64, f64> = tokens
        .iter()
        .map(|(id, traits)| {
            let mut c: Vec<u64> = traits.iter().map(|t| counts[t]).collect();
            c.sort_unstable();
            (*id, c.iter().map(|&c| total as f64 / c as f64).sum())
        })
        .collect();
    scores
        .iter()
        .map(|(id, score)| {
            let rank = 1 + scores.values().filter(|s| *s > score).count() as u64;
            let p = (rank * 100).div_ceil(total);
            (*id, json!([rank, p, format!("Top {p}%")]))
        })
        .collect()
}

/// `POST {uri}` with the app's key and `body`.
async fn post(app: &TestApp, uri: &str, body: &str) -> (u16, Value) {
    let resp = app
        .client
        .post(format!("{}{uri}", app.base))
        .header("X-API-Key", &app.key)
        .header("Content-Type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .unwrap_or_else(|e| panic!("POST {uri}: {e}"));
    let status = resp.status().as_u16();
    let text = resp.text().await.expect("body");
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

/// `GET /traits`, flattened to `(type, value) → (count, percentage, label)`, with its status.
async fn traits(app: &TestApp, nft: &str) -> (String, BTreeMap<(String, String), Value>) {
    let (status, headers, body) = app.get_rest(&format!("/api/v2.2/nft/{nft}/traits")).await;
    assert_eq!(status, 200, "{body}");
    assert!(headers.contains_key("x-indexed-block"), "{headers:?}");
    let mut out = BTreeMap::new();
    let mut types = Vec::new();
    for t in body["traits"].as_array().expect("traits") {
        let ty = t["trait_type"].as_str().expect("trait_type").to_string();
        types.push(ty.clone());
        for v in t["values"].as_array().expect("values") {
            let value = v["trait_value"].as_str().expect("trait_value").to_string();
            let fields = json!([v["count"], v["percentage"], v["rarity_label"]]);
            assert!(out.insert((ty.clone(), value), fields).is_none(), "{body}");
        }
    }
    let mut sorted = types.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(types, sorted, "one entry per trait type, by name: {body}");
    (body["status"].as_str().unwrap_or_default().to_string(), out)
}

/// Every page of `/traits/paginate` with `query`, flattened as [`traits`], in the order read;
/// with every page's status.
async fn traits_walk(
    app: &TestApp,
    nft: &str,
    query: &str,
) -> (Vec<String>, Vec<((String, String), Value)>) {
    let mut statuses = Vec::new();
    let mut out = Vec::new();
    let mut uri = format!("/api/v2.2/nft/{nft}/traits/paginate?{query}");
    for page in 1.. {
        let (status, _, body) = app.get_rest(&uri).await;
        assert_eq!(status, 200, "{uri}: {body}");
        assert_eq!(body["page"], json!(page), "{body}");
        statuses.push(body["status"].as_str().unwrap_or_default().to_string());
        for r in body["result"].as_array().expect("result") {
            let key = (
                r["trait_type"].as_str().expect("type").to_string(),
                r["trait_value"].as_str().expect("value").to_string(),
            );
            out.push((key, json!([r["count"], r["percentage"], r["rarity_label"]])));
        }
        let Some(c) = body["cursor"].as_str() else {
            break;
        };
        uri = format!(
            "/api/v2.2/nft/{nft}/traits/paginate?{query}&cursor={}",
            enc(c)
        );
    }
    (statuses, out)
}

/// Every page of `nftCollection { traits(order) }`, 3 a page, flattened as [`traits`]; with
/// every page's status.
async fn graphql_walk(
    app: &TestApp,
    nft: &str,
    order: &str,
) -> (Vec<String>, Vec<((String, String), Value)>) {
    let query = "query($a: String!, $after: String, $order: SortOrder!) { \
        nftCollection(chain: \"0x1\", address: $a) { traits(first: 3, after: $after, order: $order) { \
        status pageInfo { hasNextPage endCursor } \
        edges { node { traitType value count percentage rarityLabel } } } } }";
    let mut statuses = Vec::new();
    let mut out = Vec::new();
    let mut after = Value::Null;
    loop {
        let data = app
            .graphql_ok(query, json!({"a": nft, "after": after, "order": order}))
            .await;
        let c = &data["nftCollection"]["traits"];
        statuses.push(c["status"].as_str().unwrap_or_default().to_string());
        for e in c["edges"].as_array().expect("edges") {
            let n = &e["node"];
            let key = (
                n["traitType"].as_str().expect("type").to_string(),
                n["value"].as_str().expect("value").to_string(),
            );
            out.push((key, json!([n["count"], n["percentage"], n["rarityLabel"]])));
        }
        if c["pageInfo"]["hasNextPage"] != json!(true) {
            break;
        }
        after = c["pageInfo"]["endCursor"].clone();
    }
    (statuses, out)
}

/// Every page of `nfts-by-traits` with `body`: the records by id, and every page's status.
async fn nfts_walk(app: &TestApp, nft: &str, body: &str) -> (Vec<String>, Vec<(u64, Value)>) {
    let base = format!("/api/v2.2/nft/{nft}/nfts-by-traits?normalizeMetadata=true&limit=2");
    let mut statuses = Vec::new();
    let mut out = Vec::new();
    let mut uri = base.clone();
    loop {
        let (status, page) = post(app, &uri, body).await;
        assert_eq!(status, 200, "{uri} {body}: {page}");
        statuses.push(page["status"].as_str().unwrap_or_default().to_string());
        for r in page["result"].as_array().expect("result") {
            out.push((
                r["token_id"].as_str().expect("id").parse().expect("id"),
                r.clone(),
            ));
        }
        let Some(c) = page["cursor"].as_str() else {
            break;
        };
        uri = format!("{base}&cursor={}", enc(c));
    }
    (statuses, out)
}

/// The test's own matcher of a token's traits.
type Matcher = Box<dyn Fn(&BTreeSet<(String, String)>) -> bool>;

/// The filters asked, each with the test's own matcher.
fn filters() -> Vec<(&'static str, Matcher)> {
    let has = |t: &'static str, vs: &'static [&'static str]| {
        move |traits: &BTreeSet<(String, String)>| {
            traits
                .iter()
                .any(|(tt, v)| tt == t && vs.contains(&v.as_str()))
        }
    };
    vec![
        ("{}", Box::new(|_: &BTreeSet<(String, String)>| true)),
        (
            r#"{"traits": {"Background": "Red"}}"#,
            Box::new(has("Background", &["Red"])),
        ),
        (
            r#"{"traits": {"Background": ["Red", "Gold"], "Level": [1, "2"]}}"#,
            Box::new(move |t: &BTreeSet<(String, String)>| {
                has("Background", &["Red", "Gold"])(t) && has("Level", &["1", "2"])(t)
            }),
        ),
        (
            r#"{"traits": [{"trait_type": "Hat", "value": "Cap"}, {"trait_type": "Shiny", "value": true}], "x": 1}"#,
            Box::new(move |t: &BTreeSet<(String, String)>| {
                has("Hat", &["Cap"])(t) && has("Shiny", &["true"])(t)
            }),
        ),
        (
            r#"{"traits": {"Hat": ["Cap", "Crown"]}}"#,
            Box::new(has("Hat", &["Cap", "Crown"])),
        ),
        (
            r#"{"traits": {"Background": "Purple"}}"#,
            Box::new(|_: &BTreeSet<(String, String)>| false),
        ),
    ]
}

/// Checks every traits route against the served records; `complete`: every token's metadata is
/// fetched (so `SYNCED` with rarity), else `SYNCING` with rarity `null`.
async fn check(app: &TestApp, nft: &str, complete: bool) {
    let records = served(app, nft).await;
    let tokens: BTreeMap<u64, BTreeSet<(String, String)>> =
        records.iter().map(|(id, r)| (*id, traits_of(r))).collect();
    assert_eq!(
        tokens[&LATE].is_empty(),
        !complete,
        "token #{LATE}'s metadata: {:?}",
        records[&LATE]
    );
    let total = TOKENS;
    let want: BTreeMap<(String, String), Value> = tally(&tokens)
        .into_iter()
        .map(|(t, count)| {
            let (p, l) = if complete {
                trait_rarity(count, total)
            } else {
                (Value::Null, Value::Null)
            };
            (t, json!([count, p, l]))
        })
        .collect();
    assert!(want.len() >= 8, "{want:?}");
    let synced = if complete { "SYNCED" } else { "SYNCING" };

    let (status, got) = traits(app, nft).await;
    assert_eq!((status.as_str(), &got), (synced, &want));

    // The paged walk is the list, in either order, whatever the page size.
    let asc: Vec<((String, String), Value)> = want.clone().into_iter().collect();
    let mut desc = asc.clone();
    desc.reverse();
    for (query, expected) in [
        ("order=ASC&limit=3", &asc),
        ("order=asc&limit=100", &asc),
        ("limit=2", &desc),
        ("order=DESC&limit=1", &desc),
    ] {
        let (statuses, walked) = traits_walk(app, nft, query).await;
        assert_eq!(&walked, expected, "{query}");
        assert!(
            statuses.iter().all(|s| s == synced),
            "{query}: {statuses:?}"
        );
    }

    // The same walk in GraphQL: `nftCollection { traits }`.
    for (order, expected) in [("ASC", &asc), ("DESC", &desc)] {
        let (statuses, walked) = graphql_walk(app, nft, order).await;
        assert_eq!(&walked, expected, "GraphQL {order}");
        assert!(
            statuses.iter().all(|s| s == synced),
            "GraphQL {order}: {statuses:?}"
        );
    }

    // NFTs by traits: the test's own filter, each record as `GET /nft/{address}` writes it,
    // with the test's rarity.
    let ranks = nft_rarity(&tokens);
    for (body, matcher) in filters() {
        let (statuses, got) = nfts_walk(app, nft, body).await;
        assert!(statuses.iter().all(|s| s == synced), "{body}: {statuses:?}");
        let ids: Vec<u64> = got.iter().map(|(id, _)| *id).collect();
        let want_ids: Vec<u64> = tokens
            .iter()
            .filter(|(_, t)| matcher(t))
            .map(|(id, _)| *id)
            .collect();
        assert_eq!(ids, want_ids, "{body}");
        for (id, r) in &got {
            let mut shown = r.clone();
            let rarity = json!([
                shown["rarity_rank"],
                shown["rarity_percentage"],
                shown["rarity_label"]
            ]);
            for k in ["rarity_rank", "rarity_percentage", "rarity_label"] {
                shown.as_object_mut().expect("record").remove(k);
            }
            assert_eq!(&shown, &records[id], "{body}: #{id}");
            let want_rarity = if complete {
                ranks[id].clone()
            } else {
                json!([null, null, null])
            };
            assert_eq!(rarity, want_rarity, "{body}: #{id}");
        }
    }
}

/// A collection of 12 tokens over three wallets, its documents served; one document fails
/// until the resync: traits and NFTs by traits follow the metadata tokenql holds, `SYNCING`
/// with no rarity while a token's is missing, `SYNCED` with the test's rarity once fetched.
async fn traits_follow_the_fetched_metadata(backend: Backend) {
    let mut rig = Rig::new(backend).await;
    let base = rig.server.base_url().to_string();
    let owner = rig.chain.accounts[0].clone();
    for id in 1..=TOKENS {
        if id == LATE {
            rig.server.put_status(&format!("/trait/{id}"), 503);
        } else {
            rig.server.put(
                &format!("/trait/{id}"),
                "application/json",
                document(id).to_string(),
            );
        }
    }
    let nft = rig
        .chain
        .deploy(
            "TestNFT",
            nft_ctor("Traits", "TRT", &format!("{base}/trait/")),
        )
        .await;
    for (wallet, start, n) in [(1usize, 1u64, 5u64), (2, 6, 4), (3, 10, 3)] {
        let to = rig.chain.accounts[wallet].clone();
        let tx = rig
            .chain
            .send(
                &owner,
                &nft,
                calldata(mintManyCall {
                    to: addr(&to),
                    start: u(start),
                    n: u(n),
                }),
            )
            .await;
        rig.chain.wait_mined(std::slice::from_ref(&tx)).await;
    }
    rig.start();
    for id in 1..=TOKENS {
        let want = if id == LATE { "unavailable" } else { "ok" };
        wait_token(&rig.app.db, &nft, id, "first fetch", |t| {
            t.metadata_status.as_deref() == Some(want)
        })
        .await;
    }
    check(&rig.app, &nft, false).await;

    // Bad input is the caller's fault, named.
    let route = format!("/api/v2.2/nft/{nft}/nfts-by-traits");
    for body in [
        "",
        "{",
        "[]",
        r#"{"traits": {"Hat": {}}}"#,
        r#"{"traits": 3}"#,
    ] {
        let (status, answer) = post(&rig.app, &route, body).await;
        let m = answer["message"].as_str().unwrap_or_default();
        assert!(
            status == 400 && m.starts_with("body: "),
            "{body}: {status} {answer}"
        );
    }
    let (status, answer) = post(&rig.app, &format!("{route}?cursor=nope"), "{}").await;
    assert_eq!(status, 400, "{answer}");
    let (status, _, answer) = rig.app.get_rest(&route).await;
    assert_eq!(status, 405, "{answer}");
    assert!(
        answer["message"]
            .as_str()
            .is_some_and(|m| m.ends_with("answers POST")),
        "{answer}"
    );
    for uri in [
        format!("/api/v2.2/nft/{nft}/traits?chain=nope"),
        format!("/api/v2.2/nft/{nft}/traits/paginate?order=up"),
        format!("/api/v2.2/nft/{nft}/traits/paginate?cursor=nope"),
        "/api/v2.2/nft/0x12/traits".to_string(),
    ] {
        let (status, _, answer) = rig.app.get_rest(&uri).await;
        assert_eq!(status, 400, "{uri}: {answer}");
    }
    // A cursor of one order is refused by the other.
    let (_, _, page) = rig
        .app
        .get_rest(&format!(
            "/api/v2.2/nft/{nft}/traits/paginate?order=ASC&limit=1"
        ))
        .await;
    let c = page["cursor"].as_str().expect("a next page");
    let (status, _, answer) = rig
        .app
        .get_rest(&format!(
            "/api/v2.2/nft/{nft}/traits/paginate?order=DESC&limit=1&cursor={}",
            enc(c)
        ))
        .await;
    assert_eq!(status, 400, "{answer}");

    // The document is fixed upstream; the resync queues every token for a refetch.
    rig.server.put(
        &format!("/trait/{LATE}"),
        "application/json",
        document(LATE).to_string(),
    );
    let (status, _, answer) = rig
        .app
        .get_rest(&format!("/api/v2/nft/{nft}/traits/resync"))
        .await;
    assert_eq!(status, 202, "{answer}");
    assert!(
        answer["status"]
            .as_str()
            .is_some_and(|s| s.contains(&format!("{TOKENS} tokens"))),
        "{answer}"
    );
    // Every token refetched (the records then stay as they are while they are compared).
    for id in 1..=TOKENS {
        wait_token(&rig.app.db, &nft, id, "refetch", |t| {
            t.metadata_status.as_deref() == Some("ok") && t.metadata_next_at.is_none()
        })
        .await;
    }
    check(&rig.app, &nft, true).await;
    rig.finish().await;
}
