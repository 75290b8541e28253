//! Verified allow-lists: CSV, one contract per line, either
//!
//! ```text
//! chain_id,address
//! 1,0xbc4ca0eda7647a8ab7c2061c2e118a18a936f13d
//! polygon,0x2953399124f0cbb46d2cbacd8a89cf0599974963
//! ```
//!
//! or, with `--chain`, addresses alone (`address` per line; a row with a `chain_id` still uses
//! its own chain). A header line (`chain_id,address` or `address`) is optional; blank lines and
//! `#` comments are ignored. `chain_id` is decimal, hex or a chain name. Every listed contract
//! gets `verified = true` with source `list`, unless an admin decided its flag.

use std::collections::{BTreeSet, HashMap};
use std::path::Path;

use sea_orm::DatabaseConnection;

use super::{csv_fields, data_lines, parse_chain_id, ListError, ListReport};
use crate::store::flags::Flag;
use crate::types::{Address, Chain};

/// An allow-list, parsed.
#[derive(Debug, Default)]
pub struct AllowList {
    pub contracts: HashMap<Chain, BTreeSet<Address>>,
    pub report: ListReport,
}

/// Parses an allow-list; rows without a chain id belong to `chain`, which they then need.
pub fn parse(text: &str, name: &str, chain: Option<Chain>) -> Result<AllowList, ListError> {
    let mut out = AllowList {
        report: ListReport::new(format!("verified list {name}")),
        ..AllowList::default()
    };
    for (i, (n, line)) in data_lines(text).enumerate() {
        let at = format!("{name}:{n}");
        let Some(fields) = out.report.check(&at, csv_fields(line)) else {
            continue;
        };
        let lower: Vec<String> = fields.iter().map(|f| f.to_ascii_lowercase()).collect();
        if i == 0 && (lower == ["chain_id", "address"] || lower == ["address"]) {
            continue;
        }
        let (row_chain, address) =
            match fields.as_slice() {
                [address] => match chain {
                    Some(c) => (Ok(Some(c)), address),
                    None => return Err(ListError::format(
                        name,
                        n,
                        "this row has no chain_id: write `chain_id,address` rows or give --chain",
                    )),
                },
                [id, address] => (parse_chain_id(id), address),
                _ => {
                    out.report.bad(
                        at,
                        format!(
                            "{} fields: expected `chain_id,address` or `address`",
                            fields.len()
                        ),
                    );
                    continue;
                }
            };
        let Some(address) = out.report.check(&at, Address::parse(address)) else {
            continue;
        };
        match row_chain {
            Ok(Some(c)) => {
                if !out.contracts.entry(c).or_default().insert(address) {
                    out.report.skip("duplicate rows");
                }
            }
            Ok(None) => out.report.skip_unknown_chain(&fields[0]),
            Err(e) => out.report.bad(at, e),
        }
    }
    Ok(out)
}

/// Imports an allow-list file.
pub async fn import_file(
    db: &DatabaseConnection,
    path: &Path,
    chain: Option<Chain>,
) -> Result<ListReport, ListError> {
    let text = super::read_text(path)?;
    import_str(db, &text, &path.display().to_string(), chain).await
}

/// Imports an allow-list given as text, in one transaction.
pub async fn import_str(
    db: &DatabaseConnection,
    text: &str,
    name: &str,
    chain: Option<Chain>,
) -> Result<ListReport, ListError> {
    let list = parse(text, name, chain)?;
    super::apply_flag_list(db, Flag::Verified, &list.contracts, list.report).await
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "0xbc4ca0eda7647a8ab7c2061c2e118a18a936f13d";
    const B: &str = "0x2953399124f0cbb46d2cbacd8a89cf0599974963";

    #[test]
    fn with_chain_ids() {
        let text = format!("chain_id,address\n1,{A}\npolygon,{B}\n0x2105,{B}\n# note\n1,{A}\n");
        let list = parse(&text, "v.csv", None).unwrap();
        assert_eq!(list.contracts[&Chain::ETH].len(), 1);
        assert_eq!(list.contracts.len(), 2);
        assert_eq!(list.report.skipped_total(), 2);
        assert_eq!(list.report.malformed, 0);
    }

    #[test]
    fn addresses_alone_need_a_chain() {
        let text = format!("address\n{A}\n{B}\n");
        let e = parse(&text, "v.csv", None).unwrap_err();
        assert_eq!(
            e.to_string(),
            "v.csv:2: this row has no chain_id: write `chain_id,address` rows or give --chain"
        );
        let list = parse(&text, "v.csv", Some(Chain::ETH)).unwrap();
        assert_eq!(list.contracts[&Chain::ETH].len(), 2);
        // No header at all.
        let list = parse(&format!("{A}\n"), "v.csv", Some(Chain::ETH)).unwrap();
        assert_eq!(list.contracts[&Chain::ETH].len(), 1);
    }

    #[test]
    fn malformed_rows() {
        let text = format!("1,0xnope\n1,{A},x\nmars,{A}\n1,{B}\n");
        let list = parse(&text, "v.csv", None).unwrap();
        assert_eq!(list.report.malformed, 3, "{:?}", list.report.problems);
        assert!(list.report.problems[1].starts_with("v.csv:2: 3 fields"));
        assert_eq!(list.contracts[&Chain::ETH].len(), 1);
    }
}
