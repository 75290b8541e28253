//! Token lists ([tokenlists.org](https://tokenlists.org) schema): `{"tokens": [{"chainId",
//! "address", "name", "symbol", "decimals", "logoURI"}, …]}`.
//!
//! A token list is a fallback: its name, symbol and decimals fill only what is unknown (values
//! the indexer reads by `eth_call` win, whichever comes first); its `logoURI` becomes the
//! contract's logo. Entries of chains tokenql does not know are counted and skipped; a broken
//! entry is counted as malformed. The spam heuristics then run over the listed contracts.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use sea_orm::DatabaseConnection;
use serde::Deserialize;
use serde_json::Value;

use super::{ListError, ListReport};
use crate::store::contracts::{fill_contract_meta, ContractMeta};
use crate::types::{Address, Chain};

#[derive(Deserialize)]
struct TokenList {
    tokens: Vec<Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Entry {
    chain_id: u64,
    address: String,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    symbol: Option<String>,
    #[serde(default)]
    decimals: Option<u8>,
    #[serde(default, rename = "logoURI")]
    logo_uri: Option<String>,
}

/// A token list, parsed: metadata per chain and contract.
#[derive(Debug, Default)]
pub struct Tokens {
    pub tokens: HashMap<Chain, BTreeMap<Address, ContractMeta>>,
    pub report: ListReport,
}

/// Parses a token list, keeping the entries of `only` (every known chain when `None`).
pub fn parse(text: &str, name: &str, only: Option<Chain>) -> Result<Tokens, ListError> {
    let list: TokenList = serde_json::from_str(text).map_err(|e| {
        ListError::format(
            name,
            e.line(),
            format!("not a token list {{\"tokens\": [...]}}: {e}"),
        )
    })?;
    let mut out = Tokens {
        report: ListReport::new(format!("token list {name}")),
        ..Tokens::default()
    };
    let text = |s: Option<String>| s.map(|s| s.trim().to_string()).filter(|s| !s.is_empty());
    for (i, raw) in list.tokens.into_iter().enumerate() {
        let at = format!("{name}: tokens[{i}]");
        let Some(entry) = out.report.check(&at, serde_json::from_value::<Entry>(raw)) else {
            continue;
        };
        let Some(address) = out.report.check(&at, Address::parse(&entry.address)) else {
            continue;
        };
        let Some(chain) = Chain::from_id(entry.chain_id) else {
            out.report.skip_unknown_chain(&entry.chain_id.to_string());
            continue;
        };
        if only.is_some_and(|c| c != chain) {
            out.report.skip("of other chains");
            continue;
        }
        let meta = ContractMeta {
            name: text(entry.name),
            symbol: text(entry.symbol),
            decimals: entry.decimals,
            logo: text(entry.logo_uri),
        };
        if out
            .tokens
            .entry(chain)
            .or_default()
            .insert(address, meta)
            .is_some()
        {
            out.report.skip("repeated entries (the last one wins)");
        }
    }
    Ok(out)
}

/// Imports a token list file.
pub async fn import_file(
    db: &DatabaseConnection,
    path: &Path,
    only: Option<Chain>,
) -> Result<ListReport, ListError> {
    let text = super::read_text(path)?;
    import_str(db, &text, &path.display().to_string(), only).await
}

/// Imports a token list given as text (in one transaction), then runs the spam heuristics over
/// its contracts.
pub async fn import_str(
    db: &DatabaseConnection,
    text: &str,
    name: &str,
    only: Option<Chain>,
) -> Result<ListReport, ListError> {
    let parsed = parse(text, name, only)?;
    let mut report = parsed.report;
    let txn = crate::store::begin_write(db).await?;
    let mut imported: Vec<(Chain, Vec<Address>)> = Vec::new();
    for (chain, tokens) in parsed.tokens {
        let metas: Vec<(Address, ContractMeta)> = tokens.into_iter().collect();
        report.imported += fill_contract_meta(&txn, chain, &metas).await? as u64;
        imported.push((chain, metas.into_iter().map(|(a, _)| a).collect()));
    }
    txn.commit().await?;
    for (chain, addresses) in imported {
        super::heuristics::apply(db, Some((chain, &addresses))).await?;
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    const USDT: &str = "0xdac17f958d2ee523a2206206994597c13d831ec7";

    #[test]
    fn entries_by_chain() {
        let text = format!(
            r#"{{"name": "x", "tokens": [
                {{"chainId": 1, "address": "{USDT}", "name": "Tether USD", "symbol": "USDT", "decimals": 6, "logoURI": "https://l/usdt.png"}},
                {{"chainId": 10, "address": "{USDT}", "name": "Tether USD", "symbol": "USDT", "decimals": 6}},
                {{"chainId": 137, "address": "{USDT}", "name": " ", "decimals": 6}},
                {{"chainId": 1, "address": "0x12"}},
                {{"chainId": 1, "address": "{USDT}", "decimals": 300}},
                {{"address": "{USDT}"}}
            ]}}"#
        );
        let t = parse(&text, "l.json", None).unwrap();
        let usdt = Address::parse(USDT).unwrap();
        let eth = &t.tokens[&Chain::ETH][&usdt];
        assert_eq!(eth.name.as_deref(), Some("Tether USD"));
        assert_eq!(eth.decimals, Some(6));
        assert_eq!(eth.logo.as_deref(), Some("https://l/usdt.png"));
        let polygon = Chain::parse("polygon").unwrap();
        assert_eq!(
            t.tokens[&polygon][&usdt].name, None,
            "blank name is unknown"
        );
        assert_eq!(t.report.skipped_total(), 1, "chain 10");
        assert_eq!(t.report.malformed, 3, "{:?}", t.report.problems);
        assert!(t.report.problems[0].starts_with("l.json: tokens[3]: '0x12'"));

        let only = parse(&text, "l.json", Some(polygon)).unwrap();
        assert_eq!(only.tokens.len(), 1);
        assert!(only.report.skipped.contains_key("of other chains"));
    }

    #[test]
    fn not_a_token_list() {
        let e = parse("{\"tokens\": 3}", "l.json", None).unwrap_err();
        assert!(
            e.to_string().starts_with("l.json:1: not a token list"),
            "{e}"
        );
    }
}
