//! A token's holders and counts as the test computes them from transfers it decoded itself
//! (the demo's logs, anvil's `eth_getLogs`), and the checks of `GET /erc20/{token}/owners` and
//! `GET /erc20/{token}/stats` against them: used by the API suite (demo) and the chain suite
//! (reorgs).

use std::collections::BTreeMap;

use alloy::primitives::{U256, U512};
use serde_json::Value;

use super::common::{text, TestApp};

/// The zero address: never a holder.
pub const ZERO: &str = "0x0000000000000000000000000000000000000000";

/// One ERC20 transfer as the checks need it: contract, from, to, value (decimal digits).
pub type Move<'a> = (&'a str, &'a str, &'a str, &'a str);

/// A token's holders and supply computed from its transfers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HoldersTruth {
    /// (holder, balance) for every holder whose transfers sum to a balance in (0, 2^256), largest
    /// balance first, equal balances by holder address descending.
    pub holders: Vec<(String, U256)>,
    /// Minted minus burned, when it is in [0, 2^256).
    pub supply: Option<U256>,
    /// The token's transfers.
    pub transfers: usize,
}

fn wide(v: &str) -> U512 {
    U512::from(U256::from_str_radix(v, 10).unwrap_or_else(|e| panic!("value {v}: {e}")))
}

/// `got - sent` as a uint256, when it is one.
fn net(got: U512, sent: U512) -> Option<U256> {
    (got >= sent)
        .then(|| got - sent)
        .filter(|n| *n < U512::from(U256::MAX) + U512::from(1u8))
        .map(U256::from)
}

/// The holders of `token` by the transfers `moves` (of any token).
pub fn holders_truth<'a>(moves: impl IntoIterator<Item = Move<'a>>, token: &str) -> HoldersTruth {
    let mut sums: BTreeMap<&str, (U512, U512)> = BTreeMap::new();
    let (mut minted, mut burned, mut transfers) = (U512::ZERO, U512::ZERO, 0);
    for (contract, from, to, value) in moves {
        if contract != token {
            continue;
        }
        transfers += 1;
        let v = wide(value);
        if from == ZERO {
            minted += v;
        } else {
            sums.entry(from).or_default().1 += v;
        }
        if to == ZERO {
            burned += v;
        } else {
            sums.entry(to).or_default().0 += v;
        }
    }
    let mut holders: Vec<(String, U256)> = sums
        .into_iter()
        .filter_map(|(h, (got, sent))| net(got, sent).map(|b| (h.to_string(), b)))
        .filter(|(_, b)| !b.is_zero())
        .collect();
    holders.sort_by(|a, b| b.1.cmp(&a.1).then(b.0.cmp(&a.0)));
    HoldersTruth {
        holders,
        supply: net(minted, burned),
        transfers,
    }
}

/// Every record of `GET /erc20/{token}/owners` (`order`, `limit`), walked to the last page, with
/// the pages' envelopes.
pub async fn walk_owners(
    app: &TestApp,
    base: &str,
    token: &str,
    order: &str,
    limit: usize,
) -> (Vec<Value>, Vec<Value>) {
    let pages = app
        .walk_rest(
            &format!("{base}/erc20/{token}/owners?chain=eth&order={order}&limit={limit}"),
            limit,
        )
        .await;
    let records = pages.iter().flat_map(|p| p.records.clone()).collect();
    (records, pages.into_iter().map(|p| p.body).collect())
}

/// Checks the owners of `token` walked in both orders (pages of `limit`) and its stats against
/// `truth`; `balance_formatted` against `decimals` when given. Every page must say `SYNCED`.
pub async fn check_token(
    app: &TestApp,
    token: &str,
    truth: &HoldersTruth,
    decimals: Option<u32>,
    limit: usize,
    what: &str,
) {
    for order in ["DESC", "ASC"] {
        let (records, pages) = walk_owners(app, "/api/v2.2", token, order, limit).await;
        for p in &pages {
            assert_eq!(p["status"], "SYNCED", "{what}: {token} {order}: {p}");
            let supply = truth.supply.map(|s| s.to_string());
            assert_eq!(text(&p["total_supply"]), supply, "{what}: {token}'s supply");
        }
        let got: Vec<(String, String)> = records
            .iter()
            .map(|r| {
                (
                    text(&r["owner_address"]).unwrap_or_default(),
                    text(&r["balance"]).unwrap_or_default(),
                )
            })
            .collect();
        let mut want: Vec<(String, String)> = truth
            .holders
            .iter()
            .map(|(h, b)| (h.clone(), b.to_string()))
            .collect();
        if order == "ASC" {
            want.reverse();
        }
        assert_eq!(got, want, "{what}: {token}'s holders, {order}");
        for r in &records {
            let balance = U256::from_str_radix(r["balance"].as_str().unwrap_or("x"), 10)
                .unwrap_or_else(|e| panic!("{what}: {r}: {e}"));
            let share = &r["percentage_relative_to_total_supply"];
            match truth.supply.filter(|s| !s.is_zero()) {
                Some(s) => {
                    let want = f64::from(balance) / f64::from(s) * 100.0;
                    let got = share.as_f64().unwrap_or_else(|| panic!("{what}: {r}"));
                    assert!(
                        (got - want).abs() <= want.abs() * 1e-9 + 1e-12,
                        "{what}: share {got}, want {want}: {r}"
                    );
                }
                None => assert!(share.is_null(), "{what}: no supply, no share: {r}"),
            }
            if let Some(d) = decimals {
                assert_eq!(
                    text(&r["balance_formatted"]),
                    Some(super::common::truth::scale(&balance.to_string(), d)),
                    "{what}: {r}"
                );
            }
            for k in ["usd_value", "entity", "entity_logo"] {
                assert!(r[k].is_null(), "{what}: {k} is not known: {r}");
            }
            assert!(
                r["is_contract"].is_null() || r["is_contract"] == true,
                "{what}: {r}"
            );
            assert!(
                r["owner_address_label"].is_null() || r["owner_address_label"].is_string(),
                "{what}: {r}"
            );
        }
    }
    let (status, headers, body) = app
        .get_rest(&format!("/api/v2.2/erc20/{token}/stats?chain=eth"))
        .await;
    assert_eq!(status, 200, "{what}: {body}");
    assert_eq!(
        body,
        serde_json::json!({"transfers": {"total": truth.transfers.to_string()}}),
        "{what}: {token}'s stats"
    );
    assert_eq!(
        headers.get("x-sync-status").and_then(|v| v.to_str().ok()),
        Some("SYNCED"),
        "{what}: {token}'s stats status"
    );
}
