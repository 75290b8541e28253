//! The SQL text of a conversion, per backend: column types, the expressions that convert a
//! value either way, and the key comparisons a batch is cut by.

use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::{DbBackend, Value};

use super::conversion::Conversion;
use super::{Kind, Way};

impl Conversion<'_, '_> {
    pub(super) fn q(&self, name: &str) -> String {
        match self.backend {
            DbBackend::MySql => format!("`{name}`"),
            _ => format!("\"{name}\""),
        }
    }

    /// `?` placeholders as the backend writes them.
    pub(super) fn ph(&self, sql: &str) -> String {
        crate::placeholders(self.backend, sql)
    }

    /// The column type a converted column takes.
    pub(super) fn target_type(&self, kind: Kind) -> String {
        match (self.way, self.backend) {
            (Way::ToBinary, DbBackend::Postgres) => "bytea".into(),
            (Way::ToBinary, DbBackend::MySql) => format!("BINARY({})", kind.bytes()),
            (Way::ToBinary, _) => "blob".into(),
            (Way::ToText, _) => format!("varchar({})", kind.chars()),
        }
    }

    /// The table's `CREATE TABLE` renamed to the copy, with the converted columns retyped.
    pub(super) fn sqlite_copy_sql(&self, sql: &str) -> Result<String, DbErr> {
        let open = sql
            .find('(')
            .ok_or_else(|| DbErr::Migration(format!("unexpected table definition: {sql}")))?;
        let mut body = sql[open..].to_string();
        for (name, kind, _) in self.spec.columns {
            let quoted = format!("\"{name}\" ");
            let start = body.find(&quoted).ok_or_else(|| {
                DbErr::Migration(format!("no column {name} in the definition: {sql}"))
            })? + quoted.len();
            // The type: a word, and its length in parentheses if it has one (`varchar(42)`).
            let word = body[start..]
                .find(|c: char| !c.is_ascii_alphanumeric() && c != '_')
                .map_or(body.len(), |i| start + i);
            let end = match body[word..].strip_prefix('(') {
                Some(rest) => rest.find(')').map_or(word, |i| word + i + 2),
                None => word,
            };
            body.replace_range(start..end, &self.target_type(*kind));
        }
        Ok(format!("CREATE TABLE {} {body}", self.q(&self.copy_name())))
    }

    /// The expression that converts column `name` of the source table (NULL stays NULL:
    /// SQLite's `hex(NULL)` is an empty text).
    pub(super) fn convert(&self, name: &str, kind: Kind) -> String {
        let c = self.q(name);
        format!(
            "CASE WHEN {c} IS NULL THEN NULL ELSE {} END",
            self.convert_value(&c, kind)
        )
    }

    /// The expression that converts a non-NULL value of column `c` (quoted).
    pub(super) fn convert_value(&self, c: &str, kind: Kind) -> String {
        match (self.way, self.backend, kind.prefixed()) {
            (Way::ToBinary, DbBackend::Postgres, true) => format!("decode(substr({c}, 3), 'hex')"),
            (Way::ToBinary, DbBackend::Postgres, false) => format!("decode({c}, 'hex')"),
            (Way::ToBinary, DbBackend::MySql, true) => format!("UNHEX(SUBSTRING({c}, 3))"),
            (Way::ToBinary, DbBackend::MySql, false) => format!("UNHEX({c})"),
            (Way::ToBinary, _, true) => format!("unhex(substr({c}, 3))"),
            (Way::ToBinary, _, false) => format!("unhex({c})"),
            (Way::ToText, DbBackend::Postgres, true) => format!("'0x' || encode({c}, 'hex')"),
            // A uint256 back to its 64 digits: a transfer's amount may be stored without its
            // leading zero bytes (since `m20261128_000013`'s release).
            (Way::ToText, DbBackend::Postgres, false) => {
                format!("lpad(encode({c}, 'hex'), 64, '0')")
            }
            (Way::ToText, DbBackend::MySql, true) => format!("CONCAT('0x', LOWER(HEX({c})))"),
            (Way::ToText, DbBackend::MySql, false) => format!("LPAD(LOWER(HEX({c})), 64, '0')"),
            (Way::ToText, _, true) => format!("'0x' || lower(hex({c}))"),
            (Way::ToText, _, false) => {
                format!("substr('{}' || lower(hex({c})), -64)", "0".repeat(64))
            }
        }
    }

    /// A key column as text (to carry a position between batches).
    pub(super) fn key_text(&self, name: &str) -> String {
        let c = self.q(name);
        match (self.spec.kind_of(name), self.way, self.backend) {
            // The source holds bytes: read them as the text whose order they keep.
            (Some(_), Way::ToText, DbBackend::Postgres) => format!("encode({c}, 'hex')"),
            (Some(_), Way::ToText, DbBackend::MySql) => format!("LOWER(HEX({c}))"),
            (Some(_), Way::ToText, _) => format!("lower(hex({c}))"),
            (_, _, DbBackend::MySql) => format!("CAST({c} AS CHAR)"),
            _ => format!("CAST({c} AS TEXT)"),
        }
    }

    /// A key position as bind values for the source table (binary keys from their hex).
    pub(super) fn key_values(&self, last: &[String]) -> Result<Vec<Value>, DbErr> {
        self.spec
            .key
            .iter()
            .zip(last)
            .map(|(name, text)| {
                Ok(match (self.spec.kind_of(name), self.way) {
                    (Some(_), Way::ToText) => Value::from(unhex(text)?),
                    (Some(_), Way::ToBinary) => Value::from(text.clone()),
                    (None, _) => match text.parse::<i64>() {
                        Ok(n) if !self.spec.is_text_key(name) => Value::from(n),
                        _ => Value::from(text.clone()),
                    },
                })
            })
            .collect()
    }

    /// `key > ?` (`after`) or `key <= ?`, as the backend uses an index for it: a row value on
    /// PostgreSQL and SQLite, the expanded form on MySQL.
    pub(super) fn compare(&self, after: bool) -> String {
        let key: Vec<String> = self.spec.key.iter().map(|k| self.q(k)).collect();
        let n = key.len();
        if self.backend != DbBackend::MySql {
            let op = if after { ">" } else { "<=" };
            return format!("({}) {op} ({})", key.join(", "), vec!["?"; n].join(", "));
        }
        let (strict, last) = if after { (">", ">") } else { ("<", "<=") };
        let mut ors = Vec::new();
        for i in 0..n {
            let mut ands: Vec<String> = key[..i].iter().map(|k| format!("{k} = ?")).collect();
            let op = if i + 1 == n { last } else { strict };
            ands.push(format!("{} {op} ?", key[i]));
            ors.push(format!("({})", ands.join(" AND ")));
        }
        format!("({})", ors.join(" OR "))
    }

    /// The bind values of [`Self::compare`].
    pub(super) fn after_values(&self, last: &[Value]) -> Vec<Value> {
        if self.backend != DbBackend::MySql {
            return last.to_vec();
        }
        let mut out = Vec::new();
        for i in 0..last.len() {
            out.extend(last[..=i].iter().cloned());
        }
        out
    }
}

/// Bytes from lowercase hex.
fn unhex(text: &str) -> Result<Vec<u8>, DbErr> {
    let bad = || DbErr::Migration(format!("'{text}' is not hex"));
    if !text.len().is_multiple_of(2) {
        return Err(bad());
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).map_err(|_| bad()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    pub(super) fn hex_reads_back() {
        assert_eq!(unhex("00ff10").ok(), Some(vec![0, 255, 16]));
        assert!(unhex("0").is_err());
        assert!(unhex("zz").is_err());
    }
}
