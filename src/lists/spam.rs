//! Spam lists: CSV in the format of Covalent's GoldRush spam lists (`data/spam/`),
//!
//! ```text
//! chain_id,address,spam_score
//! 1,0x19247618d79e3fc4d4866169789e4b8eedef52e6,12
//! ```
//!
//! The header is required (columns found by name; `spam_score` is optional and, when present,
//! must be an integer). `chain_id` is decimal, hex (`0x89`) or a chain name; one file may mix
//! chains. Rows of chains tokenql does not know (e.g. Base, 8453) are counted and skipped.
//! Every listed contract gets `possible_spam = true` with source `list`, unless an admin
//! decided its flag.

use std::collections::{BTreeSet, HashMap};
use std::path::Path;

use sea_orm::DatabaseConnection;

use super::{csv_fields, data_lines, parse_chain_id, ListError, ListReport};
use crate::store::flags::Flag;
use crate::types::{Address, Chain};

/// A spam list, parsed: the listed contracts per chain, and what was skipped.
#[derive(Debug, Default)]
pub struct SpamList {
    pub contracts: HashMap<Chain, BTreeSet<Address>>,
    pub report: ListReport,
}

/// Parses a spam list; `name` names the file in messages.
pub fn parse(text: &str, name: &str) -> Result<SpamList, ListError> {
    let mut lines = data_lines(text);
    let Some((hline, header)) = lines.next() else {
        return Err(ListError::format(
            name,
            1,
            "empty file: expected a header `chain_id,address,spam_score`",
        ));
    };
    let columns: Vec<String> = csv_fields(header)
        .map_err(|e| ListError::format(name, hline, e))?
        .iter()
        .map(|c| c.to_ascii_lowercase())
        .collect();
    let col = |n: &str| columns.iter().position(|c| c == n);
    let (Some(chain_col), Some(addr_col)) = (col("chain_id"), col("address")) else {
        return Err(ListError::format(
            name,
            hline,
            format!(
                "expected a header naming the columns `chain_id,address,spam_score`, found `{header}`"
            ),
        ));
    };
    let score_col = col("spam_score");
    let mut out = SpamList {
        report: ListReport::new(format!("spam list {name}")),
        ..SpamList::default()
    };
    for (n, line) in lines {
        let at = format!("{name}:{n}");
        let fields = match csv_fields(line) {
            Ok(f) if f.len() == columns.len() => f,
            Ok(f) => {
                out.report.bad(
                    at,
                    format!("{} fields, the header has {}", f.len(), columns.len()),
                );
                continue;
            }
            Err(e) => {
                out.report.bad(at, e);
                continue;
            }
        };
        if let Some(s) = score_col {
            if fields[s].parse::<i64>().is_err() {
                out.report
                    .bad(at, format!("spam_score '{}' is not an integer", fields[s]));
                continue;
            }
        }
        let Some(address) = out.report.check(&at, Address::parse(&fields[addr_col])) else {
            continue;
        };
        match parse_chain_id(&fields[chain_col]) {
            Ok(Some(chain)) => {
                if !out.contracts.entry(chain).or_default().insert(address) {
                    out.report.skip("duplicate rows");
                }
            }
            Ok(None) => out.report.skip_unknown_chain(&fields[chain_col]),
            Err(e) => out.report.bad(at, e),
        }
    }
    Ok(out)
}

/// Imports a spam list file.
pub async fn import_file(db: &DatabaseConnection, path: &Path) -> Result<ListReport, ListError> {
    let text = super::read_text(path)?;
    import_str(db, &text, &path.display().to_string()).await
}

/// Imports a spam list given as text, in one transaction.
pub async fn import_str(
    db: &DatabaseConnection,
    text: &str,
    name: &str,
) -> Result<ListReport, ListError> {
    let list = parse(text, name)?;
    super::apply_flag_list(db, Flag::Spam, &list.contracts, list.report).await
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "0x19247618d79e3fc4d4866169789e4b8eedef52e6";
    const B: &str = "0x15c943d6f3f1506d910f0fd58d38725c8bcec9bf";

    #[test]
    fn covalent_format() {
        let text = format!(
            "chain_id,address,spam_score\n1,{A},12\n137,{B},15\n8453,{B},20\n8453,{A},20\n1,{}, 12\n",
            A.to_uppercase().replace("0X", "0x")
        );
        let list = parse(&text, "x.csv").unwrap();
        assert_eq!(list.contracts.len(), 2);
        assert_eq!(list.contracts[&Chain::ETH].len(), 1);
        let skipped: Vec<_> = list.report.skipped.iter().collect();
        assert_eq!(
            skipped,
            [
                (&"duplicate rows".to_string(), &1),
                (&"for chains tokenql does not know".to_string(), &2)
            ]
        );
        assert_eq!(list.report.malformed, 0);
    }

    #[test]
    fn malformed_rows_are_counted_with_their_line() {
        let text = format!(
            "chain_id,address,spam_score\n1,0x12,12\n\n1,{A}\n1,{A},high\nsolana,{A},1\n\"1,{A},1\n1,{B},3\n"
        );
        let list = parse(&text, "x.csv").unwrap();
        assert_eq!(list.report.malformed, 5, "{:?}", list.report.problems);
        assert!(list.report.problems[0].starts_with("x.csv:2: '0x12' is not an address"));
        assert!(list.report.problems[1].starts_with("x.csv:4: 2 fields"));
        assert!(list.report.problems[2].contains("x.csv:5: spam_score 'high'"));
        assert!(list.report.problems[3].starts_with("x.csv:6: unknown chain 'solana'"));
        assert_eq!(list.contracts[&Chain::ETH].len(), 1);
    }

    #[test]
    fn header_is_required() {
        let e = parse(&format!("1,{A},12\n"), "x.csv").unwrap_err();
        assert!(
            e.to_string().starts_with("x.csv:1: expected a header"),
            "{e}"
        );
        let e = parse("\n\n", "x.csv").unwrap_err();
        assert!(e.to_string().contains("empty file"), "{e}");
        // Columns in another order, no score.
        let list = parse(&format!("address,chain_id\n{A},0x1\n"), "x.csv").unwrap();
        assert_eq!(list.contracts[&Chain::ETH].len(), 1);
    }
}
