//! `GET /erc20/metadata` and `GET /erc20/metadata/symbols` on the bundled mainnet sample and
//! its token list, compared with the token list read here, independently of the importer.

use std::collections::BTreeMap;

use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
use serde_json::{json, Value};
use tokenql::entity::contract;
use tokenql::types::{Address, Chain};

use crate::support::common::truth::{token_list, ListedToken};
use crate::support::common::{self, Backend, TestApp};

const USDT: &str = "0xdac17f958d2ee523a2206206994597c13d831ec7";
const DAI: &str = "0x6b175474e89094c44da98b954eedeac495271d0f";
/// An ERC721 collection of the sample: not a token.
const NFT: &str = "0x3acce66cd37518a6d77d9ea3039e00b3a2955460";
/// No contract at all.
const NOBODY: &str = "0x00000000000000000000000000000000000000aa";

/// The record the list says `address` has (with the flags and label given here).
fn want(address: &str, spam: bool, label: Option<&str>) -> Value {
    let list = token_list();
    let t = list.get(address).expect("listed");
    let (name, symbol, decimals, logo) = (&t.name, &t.symbol, t.decimals, &t.logo);
    json!({
        "address": address, "address_label": label, "name": name, "symbol": symbol,
        "decimals": decimals.to_string(), "logo": logo, "logo_hash": null, "thumbnail": logo,
        "total_supply": null, "total_supply_formatted": null, "fully_diluted_valuation": null,
        "block_number": null, "validated": null, "created_at": null, "possible_spam": spam,
        "verified_contract": false, "categories": null, "links": null,
        "circulating_supply": null, "market_cap": null,
    })
}

/// The record of an address tokenql knows no token of.
fn unknown(address: &str) -> Value {
    let mut v = want(USDT, false, None);
    for (k, field) in v.as_object_mut().into_iter().flatten() {
        *field = if k == "address" {
            json!(address)
        } else {
            Value::Null
        };
    }
    v
}

async fn setup(backend: Backend) -> TestApp {
    let app = common::spawn(backend).await;
    app.load_demo().await;
    contract::Entity::update_many()
        .col_expr(contract::Column::PossibleSpam, Expr::value(true))
        .filter(
            contract::Column::Address.eq(tokenql::types::Address::parse(DAI).expect("an address")),
        )
        .exec(&app.db)
        .await
        .expect("flag DAI");
    let usdt = Address::parse(USDT).expect("address");
    tokenql::store::labels::upsert_labels(&app.db, Chain::ETH, &[(usdt, "Tether: USDT".into())])
        .await
        .expect("label");
    app
}

/// Metadata by address and by symbol.
pub(super) async fn erc20_metadata(backend: Backend) {
    let app = setup(backend).await;
    // Request order kept, repeats once, mixed case accepted, every encoding.
    let q = format!(
        "addresses[]={DAI}&addresses[]={NOBODY}&addresses[]={}&addresses[]={NFT}&addresses[]={DAI}",
        USDT.to_uppercase().replace("0X", "0x")
    );
    let (status, _, body) = app.get_rest(&format!("/api/v2.2/erc20/metadata?{q}")).await;
    assert_eq!(status, 200, "{body}");
    let expected = json!([
        want(DAI, true, None),
        unknown(NOBODY),
        want(USDT, false, Some("Tether: USDT")),
        unknown(NFT),
    ]);
    assert_eq!(body, expected);
    let (_, _, v2) = app
        .get_rest(&format!(
            "/api/v2/erc20/metadata?chain=eth&addresses={DAI},{NOBODY},{USDT},{NFT}"
        ))
        .await;
    assert_eq!(v2, expected);

    // Every listed Ethereum token the sample has, by address and by symbol.
    let list = token_list();
    let listed: Vec<&String> = list.keys().take(25).collect();
    let q: Vec<String> = listed.iter().map(|a| format!("addresses={a}")).collect();
    let (_, _, body) = app
        .get_rest(&format!("/api/v2.2/erc20/metadata?{}", q.join("&")))
        .await;
    for (record, a) in body.as_array().into_iter().flatten().zip(&listed) {
        let spam = a.as_str() == DAI;
        let label = (a.as_str() == USDT).then_some("Tether: USDT");
        assert_eq!(record, &want(a, spam, label), "{a}");
    }
    by_symbol(&app, &list).await;
    metadata_errors(&app).await;
    app.cleanup().await;
}

async fn by_symbol(app: &TestApp, list: &BTreeMap<String, ListedToken>) {
    // `pepe` names several listed tokens; `UsDt` one; `NOPE` none.
    let of = |symbol: &str| -> Vec<Value> {
        list.iter()
            .filter(|(_, t)| t.symbol.eq_ignore_ascii_case(symbol))
            .map(|(a, _)| {
                let label = (a.as_str() == USDT).then_some("Tether: USDT");
                want(a, a.as_str() == DAI, label)
            })
            .collect()
    };
    let mut expected = of("pepe");
    assert!(expected.len() > 1, "the list has several PEPE tokens");
    expected.extend(of("usdt"));
    expected.extend(of("dai"));
    let (status, _, body) = app
        .get_rest("/api/v2.2/erc20/metadata/symbols?symbols[]=pepe&symbols[]=UsDt&symbols[]=NOPE&symbols[]=DAI")
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body, json!(expected));
    let (_, _, none) = app
        .get_rest("/api/v2.2/erc20/metadata/symbols?symbols=USDT&chain=polygon")
        .await;
    assert_eq!(none, json!([]));
}

async fn metadata_errors(app: &TestApp) {
    let many: Vec<String> = (0..26).map(|i| format!("addresses={i:#042x}")).collect();
    let long = "X".repeat(65);
    for (uri, mention) in [
        ("/api/v2/erc20/metadata".to_string(), "addresses:"),
        (
            "/api/v2/erc20/metadata?addresses=0x12".to_string(),
            "addresses:",
        ),
        (
            format!("/api/v2/erc20/metadata?{}", many.join("&")),
            "addresses: 26 entries",
        ),
        (
            format!("/api/v2/erc20/metadata?addresses={USDT}&chain=nope"),
            "chain:",
        ),
        ("/api/v2/erc20/metadata/symbols".to_string(), "symbols:"),
        (
            format!("/api/v2/erc20/metadata/symbols?symbols={long}"),
            "symbols:",
        ),
        (
            "/api/v2/erc20/metadata/symbols?symbols=a%01b".to_string(),
            "symbols:",
        ),
    ] {
        super::refused(app, &uri, 400, mention).await;
    }
}
