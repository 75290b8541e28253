//! Address labels, shown as `from_wallet_label` / `to_wallet_label`. Two formats, told apart by
//! the file's extension (`.json`, `.csv`) or else by its first character (`{` means JSON):
//!
//! - the etherscan-labels JSON (`data/labels/`): `{"0xf977…": {"name": "Binance 8", "labels":
//!   ["binance"]}, …}`. The label is `name`; entries with an empty name are skipped (counted);
//!   an address listed twice (checksummed and lowercase) takes its lowercase entry's name.
//! - a plain CSV `address,label` (a repeated address takes its last label), with an optional
//!   header `address,label`; a label holding commas is quoted (`0x…,"Exchange, hot wallet"`,
//!   `""` for a quote inside).
//!
//! Labels belong to one chain (`--chain`, default `eth`). Importing again updates labels.

use std::collections::BTreeMap;
use std::path::Path;

use sea_orm::DatabaseConnection;
use serde_json::Value;

use super::{csv_fields, data_lines, ListError, ListReport};
use crate::store::labels::upsert_labels;
use crate::types::{Address, Chain};

/// A label file's format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    EtherscanJson,
    Csv,
}

impl Format {
    /// From the file name's extension, else from the content.
    pub fn detect(name: &str, text: &str) -> Format {
        let lower = name.to_ascii_lowercase();
        if lower.ends_with(".json") {
            Format::EtherscanJson
        } else if lower.ends_with(".csv") {
            Format::Csv
        } else if text.trim_start().starts_with('{') {
            Format::EtherscanJson
        } else {
            Format::Csv
        }
    }
}

/// Labels, parsed.
#[derive(Debug, Default)]
pub struct Labels {
    pub labels: BTreeMap<Address, String>,
    pub report: ListReport,
}

impl Labels {
    fn add(&mut self, address: Address, label: String) {
        if self.labels.insert(address, label).is_some() {
            self.report.skip("repeated addresses");
        }
    }
}

/// Parses a label file of either format.
pub fn parse(text: &str, name: &str) -> Result<Labels, ListError> {
    match Format::detect(name, text) {
        Format::EtherscanJson => parse_json(text, name),
        Format::Csv => parse_csv(text, name),
    }
}

/// Parses the etherscan-labels JSON.
pub fn parse_json(text: &str, name: &str) -> Result<Labels, ListError> {
    let map: serde_json::Map<String, Value> = serde_json::from_str(text).map_err(|e| {
        ListError::format(
            name,
            e.line(),
            format!("not an etherscan-labels object {{address: {{name, labels}}}}: {e}"),
        )
    })?;
    let mut out = Labels {
        report: ListReport::new(format!("labels {name}")),
        ..Labels::default()
    };
    // In key order, whatever the map's own: an address listed twice (checksummed and
    // lowercase) takes the label of its lowercase entry, which sorts last.
    let mut entries: Vec<(String, Value)> = map.into_iter().collect();
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    for (key, entry) in entries {
        let at = format!("{name}: entry \"{key}\"");
        let Some(address) = out.report.check(&at, Address::parse(&key)) else {
            continue;
        };
        let label = match entry.get("name") {
            Some(Value::String(s)) => s.trim().to_string(),
            Some(Value::Null) | None if entry.is_object() => String::new(),
            _ => {
                out.report
                    .bad(at, "expected an object with a string \"name\"");
                continue;
            }
        };
        if label.is_empty() {
            out.report.skip("without a name");
            continue;
        }
        out.add(address, label);
    }
    Ok(out)
}

/// Parses an `address,label` CSV.
pub fn parse_csv(text: &str, name: &str) -> Result<Labels, ListError> {
    let mut out = Labels {
        report: ListReport::new(format!("labels {name}")),
        ..Labels::default()
    };
    for (i, (n, line)) in data_lines(text).enumerate() {
        let at = format!("{name}:{n}");
        let Some(fields) = out.report.check(&at, csv_fields(line)) else {
            continue;
        };
        let [address, label] = fields.as_slice() else {
            out.report.bad(
                at,
                format!(
                    "{} fields: expected `address,label` (quote a label holding commas)",
                    fields.len()
                ),
            );
            continue;
        };
        if i == 0 && address.eq_ignore_ascii_case("address") && label.eq_ignore_ascii_case("label")
        {
            continue;
        }
        let Some(address) = out.report.check(&at, Address::parse(address)) else {
            continue;
        };
        let label = label.trim();
        if label.is_empty() {
            out.report.bad(at, "empty label");
            continue;
        }
        out.add(address, label.to_string());
    }
    Ok(out)
}

/// Imports a label file for `chain`.
pub async fn import_file(
    db: &DatabaseConnection,
    path: &Path,
    chain: Chain,
) -> Result<ListReport, ListError> {
    let text = super::read_text(path)?;
    import_str(db, &text, &path.display().to_string(), chain).await
}

/// Imports labels given as text (format as [`Format::detect`] finds it), in one transaction.
pub async fn import_str(
    db: &DatabaseConnection,
    text: &str,
    name: &str,
    chain: Chain,
) -> Result<ListReport, ListError> {
    let parsed = parse(text, name)?;
    let mut report = parsed.report;
    let labels: Vec<(Address, String)> = parsed.labels.into_iter().collect();
    let txn = crate::store::begin_write(db).await?;
    report.imported = upsert_labels(&txn, chain, &labels).await? as u64;
    txn.commit().await?;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    const BINANCE_8: &str = "0xf977814e90da44bfa03b6295a0616a897441acec";

    #[test]
    fn etherscan_json() {
        let text = r#"{
            "0xF977814e90dA44bFA03b6295A0616a897441aceC": {"name": "Binance 8", "labels": ["binance"]},
            "0x9d6971bf21b0e94724a7134371a8f7f41bb9db88": {"name": "", "labels": ["airdrop-hunter"]},
            "0x689c56aef474df92d44a1b70850f808488f9769c": {"name": " KuCoin 2 ", "labels": []},
            "0x12": {"name": "short"},
            "0x22ff777ef6fe0690f1f74c6758126909653ad56a": "Balancer"
        }"#;
        let l = parse(text, "labels.json").unwrap();
        let b8 = Address::parse(BINANCE_8).unwrap();
        assert_eq!(l.labels.get(&b8).map(String::as_str), Some("Binance 8"));
        assert_eq!(l.labels.len(), 2);
        assert_eq!(l.report.skipped_total(), 1);
        assert_eq!(l.report.malformed, 2, "{:?}", l.report.problems);
        assert!(l
            .report
            .problems
            .iter()
            .any(|p| p.starts_with("labels.json: entry \"0x12\"")));
    }

    #[test]
    fn broken_json_names_file_and_line() {
        let e = parse("{\n\"0xab\": {\"name\": \"x\"\n", "l.json").unwrap_err();
        assert!(e.to_string().starts_with("l.json:3: "), "{e}");
        let e = parse("[1, 2]", "l.json").unwrap_err();
        assert!(e.to_string().starts_with("l.json:1: "), "{e}");
    }

    #[test]
    fn plain_csv() {
        let text = format!(
            "address,label\n{BINANCE_8},Binance 8\n0x689c56aef474df92d44a1b70850f808488f9769c,\"KuCoin, hot \"\"2\"\"\"\nnope,x\n0x22ff777ef6fe0690f1f74c6758126909653ad56a,\n0x22ff777ef6fe0690f1f74c6758126909653ad56a,a,b\n"
        );
        let l = parse(&text, "labels.csv").unwrap();
        assert_eq!(l.labels.len(), 2);
        assert!(l.labels.values().any(|v| v == "KuCoin, hot \"2\""));
        assert_eq!(l.report.malformed, 3, "{:?}", l.report.problems);
        assert!(l.report.problems[0].starts_with("labels.csv:4: 'nope'"));
        assert!(l.report.problems[1].starts_with("labels.csv:5: empty label"));
        assert!(l.report.problems[2].starts_with("labels.csv:6: 3 fields"));
        // Without a header, detected by content.
        let l = parse(&format!("{BINANCE_8},Binance 8\n"), "labels.txt").unwrap();
        assert_eq!(l.labels.len(), 1);
    }

    #[test]
    fn format_detection() {
        assert_eq!(Format::detect("a.JSON", ""), Format::EtherscanJson);
        assert_eq!(Format::detect("a.csv", "{"), Format::Csv);
        assert_eq!(Format::detect("a", "  {\"0x\": {}}"), Format::EtherscanJson);
        assert_eq!(Format::detect("a", "0xab,x"), Format::Csv);
    }
}
