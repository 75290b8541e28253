//! Importable lists: spam lists, verified allow-lists, address labels and token lists, plus the
//! transparent spam heuristics and the admin's per-contract overrides.
//!
//! - [`spam`]: Covalent-style CSV `chain_id,address,spam_score` → `possible_spam`.
//! - [`verified`]: allow-list CSV (`chain_id,address`, or `address` with `--chain`) →
//!   `verified_collection`.
//! - [`labels`]: etherscan-labels JSON `{address: {name, labels[]}}` or a plain `address,label`
//!   CSV → `from_wallet_label` / `to_wallet_label`.
//! - [`tokenlist`]: token lists (tokenlists.org schema) → logos, and names, symbols and decimals
//!   where `eth_call` has not given them.
//! - [`heuristics`]: spam rules on a contract's name and symbol, each with a stable reason.
//! - [`cli`]: `tokenql lists …` and `tokenql contract show|set`.
//!
//! # Precedence
//!
//! A flag remembers where it came from (`contracts.spam_source` / `verified_source`):
//! `admin` > `list` > `heuristic`. A list import sets its flag everywhere except where an admin
//! decided; the heuristics only flag contracts whose flag has no source yet (and clear their own
//! flags when a name no longer matches); an admin's `yes`/`no` is never overwritten by either,
//! and `auto` hands the contract back to them.
//!
//! # Errors
//!
//! A file that cannot be read or parsed as a whole (no header, invalid JSON) stops its import
//! with a message naming the file and line ([`ListError`]). A bad row only counts as malformed:
//! the good rows are still imported, and the report names the first bad ones by file and line.

pub mod cli;
pub mod heuristics;
pub mod labels;
pub mod spam;
pub mod tokenlist;
pub mod verified;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::Path;

use crate::types::Chain;

/// Malformed rows named individually in a report; the rest are only counted.
const MAX_PROBLEMS: usize = 10;

/// What one list import did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListReport {
    /// What was imported, e.g. `spam list data/spam/x.csv`.
    pub what: String,
    /// Rows applied to the database.
    pub imported: u64,
    /// Well-formed rows deliberately left out, counted by reason.
    pub skipped: BTreeMap<String, u64>,
    /// Ids of the chains tokenql does not know that rows were skipped for.
    pub unknown_chains: BTreeSet<String>,
    /// Rows that could not be read.
    pub malformed: u64,
    /// The first malformed rows, as `file:line: message`.
    pub problems: Vec<String>,
}

impl ListReport {
    pub(crate) fn new(what: impl Into<String>) -> Self {
        Self {
            what: what.into(),
            ..Self::default()
        }
    }

    /// Rows skipped, all reasons together.
    pub fn skipped_total(&self) -> u64 {
        self.skipped.values().sum()
    }

    pub(crate) fn skip(&mut self, why: impl Into<String>) {
        self.skip_n(why, 1);
    }

    pub(crate) fn skip_n(&mut self, why: impl Into<String>, n: u64) {
        if n > 0 {
            *self.skipped.entry(why.into()).or_default() += n;
        }
    }

    /// Skips a row of a chain tokenql does not know.
    pub(crate) fn skip_unknown_chain(&mut self, id: &str) {
        self.skip(UNKNOWN_CHAINS);
        self.unknown_chains.insert(id.trim().to_string());
    }

    /// The value of `r`, or `None` with the row at `at` reported malformed by its error.
    pub(crate) fn check<T, E: fmt::Display>(
        &mut self,
        at: impl fmt::Display,
        r: Result<T, E>,
    ) -> Option<T> {
        r.map_err(|e| self.bad(at, e)).ok()
    }

    pub(crate) fn bad(&mut self, at: impl fmt::Display, message: impl fmt::Display) {
        self.malformed += 1;
        if self.problems.len() < MAX_PROBLEMS {
            self.problems.push(format!("{at}: {message}"));
        }
    }
}

impl fmt::Display for ListReport {
    /// The one-line summary the commands print.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} imported, {} skipped",
            self.what,
            self.imported,
            self.skipped_total()
        )?;
        if !self.skipped.is_empty() {
            let why: Vec<String> = self
                .skipped
                .iter()
                .map(|(k, n)| {
                    if k == UNKNOWN_CHAINS {
                        let ids: Vec<&str> =
                            self.unknown_chains.iter().map(String::as_str).collect();
                        format!("{n} {k}: {}", ids.join(" "))
                    } else {
                        format!("{n} {k}")
                    }
                })
                .collect();
            write!(f, " ({})", why.join("; "))?;
        }
        write!(f, ", {} malformed", self.malformed)
    }
}

/// Errors that stop a list import (as opposed to malformed rows, which are counted).
#[derive(Debug, thiserror::Error)]
pub enum ListError {
    #[error("cannot read {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    /// The file as a whole is not in the expected format (the user's fault).
    #[error("{path}:{line}: {message}")]
    Format {
        path: String,
        line: usize,
        message: String,
    },
    #[error(transparent)]
    Db(#[from] sea_orm::DbErr),
}

impl ListError {
    pub(crate) fn format(path: &str, line: usize, message: impl Into<String>) -> Self {
        ListError::Format {
            path: path.to_string(),
            line,
            message: message.into(),
        }
    }
}

/// Reads a whole file as text (a leading byte-order mark removed).
/// Sets `flag` (source `list`) on every listed contract, in one transaction, except where an
/// admin decided; adds the counts to `report`.
pub(crate) async fn apply_flag_list(
    db: &sea_orm::DatabaseConnection,
    flag: crate::store::flags::Flag,
    contracts: &std::collections::HashMap<Chain, BTreeSet<crate::types::Address>>,
    mut report: ListReport,
) -> Result<ListReport, ListError> {
    let txn = crate::store::begin_write(db).await?;
    for (chain, listed) in contracts {
        let listed: Vec<crate::types::Address> = listed.iter().copied().collect();
        let done = crate::store::flags::list_flag(&txn, *chain, flag, &listed).await?;
        report.imported += done.applied;
        report.skip_n("kept by an admin override", done.kept_admin);
    }
    txn.commit().await?;
    Ok(report)
}

pub(crate) fn read_text(path: &Path) -> Result<String, ListError> {
    let text = std::fs::read_to_string(path).map_err(|source| ListError::Io {
        path: path.display().to_string(),
        source,
    })?;
    Ok(match text.strip_prefix('\u{feff}') {
        Some(t) => t.to_string(),
        None => text,
    })
}

/// The non-blank lines of a text that are not `#` comments, numbered from 1.
pub(crate) fn data_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'))
}

/// Splits one CSV line into fields: separated by commas; a field in double quotes may hold
/// commas, and `""` inside it is one quote. Unquoted fields are trimmed.
pub(crate) fn csv_fields(line: &str) -> Result<Vec<String>, String> {
    let mut fields = Vec::new();
    let mut chars = line.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| *c == ' ' || *c == '\t') {
            chars.next();
        }
        let mut field = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            loop {
                match chars.next() {
                    Some('"') if chars.peek() == Some(&'"') => {
                        chars.next();
                        field.push('"');
                    }
                    Some('"') => break,
                    Some(c) => field.push(c),
                    None => return Err("a quoted field is not closed".into()),
                }
            }
            while chars.peek().is_some_and(|c| *c == ' ' || *c == '\t') {
                chars.next();
            }
            match chars.next() {
                None => {
                    fields.push(field);
                    return Ok(fields);
                }
                Some(',') => fields.push(field),
                Some(c) => return Err(format!("unexpected '{c}' after a quoted field")),
            }
        } else {
            loop {
                match chars.next() {
                    None => {
                        fields.push(field.trim().to_string());
                        return Ok(fields);
                    }
                    Some(',') => break,
                    Some('"') => return Err("a quote inside an unquoted field".into()),
                    Some(c) => field.push(c),
                }
            }
            fields.push(field.trim().to_string());
        }
    }
}

/// A chain id as lists write it: decimal (`1`, `137`), hex (`0x89`) or a name (`polygon`).
/// `Ok(None)` for a well-formed id of a chain tokenql does not know.
pub(crate) fn parse_chain_id(s: &str) -> Result<Option<Chain>, String> {
    let s = s.trim();
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        return s
            .parse::<u64>()
            .map(Chain::from_id)
            .map_err(|_| format!("chain id '{s}' is out of range"));
    }
    if let Some(hex) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        return u64::from_str_radix(hex, 16)
            .map(Chain::from_id)
            .map_err(|_| format!("'{s}' is not a chain id"));
    }
    Chain::parse(s).map(Some).map_err(|e| e.0)
}

/// The skip reason of rows of chains tokenql does not know.
const UNKNOWN_CHAINS: &str = "for chains tokenql does not know";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_fields_plain_quoted_and_broken() {
        assert_eq!(csv_fields("a,b , c").unwrap(), ["a", "b", "c"]);
        assert_eq!(
            csv_fields(r#"0xab,"Binance, Hot ""8""""#).unwrap(),
            ["0xab", r#"Binance, Hot "8""#]
        );
        assert_eq!(csv_fields(r#""x" , y"#).unwrap(), ["x", "y"]);
        assert_eq!(csv_fields("a,").unwrap(), ["a", ""]);
        assert!(csv_fields(r#"a,"open"#).is_err());
        assert!(csv_fields(r#"a,"x"y"#).is_err());
        assert!(csv_fields(r#"a,b"c"#).is_err());
    }

    #[test]
    fn chain_ids() {
        assert_eq!(parse_chain_id("1").unwrap(), Some(Chain::ETH));
        assert_eq!(parse_chain_id("0x1").unwrap(), Some(Chain::ETH));
        assert_eq!(parse_chain_id("eth").unwrap(), Some(Chain::ETH));
        assert_eq!(
            parse_chain_id("137").unwrap().map(|c| c.name()),
            Some("polygon")
        );
        assert_eq!(parse_chain_id("8453").unwrap(), None);
        assert!(parse_chain_id("solana").is_err());
        assert!(parse_chain_id("99999999999999999999999").is_err());
        assert!(parse_chain_id("0xzz").is_err());
    }

    #[test]
    fn report_summary() {
        let mut r = ListReport::new("spam list x.csv");
        r.imported = 3;
        r.skip_unknown_chain("8453");
        r.skip_unknown_chain("10");
        r.skip("duplicate");
        r.bad("x.csv:4", "not an address");
        assert_eq!(
            r.to_string(),
            "spam list x.csv: 3 imported, 3 skipped (1 duplicate; 2 for chains tokenql does not know: 10 8453), 1 malformed"
        );
        assert_eq!(r.problems, ["x.csv:4: not an address"]);
    }

    #[test]
    fn data_lines_skip_blanks_and_comments() {
        let lines: Vec<_> = data_lines("a\n\n# c\n  b  \r\n").collect();
        assert_eq!(lines, [(1, "a"), (4, "b")]);
    }
}
