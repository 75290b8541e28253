//! Bulk inserts that skip rows whose key exists, in as few statements as each backend allows.
//!
//! - PostgreSQL: one `INSERT ... SELECT ... FROM UNNEST($1::int8[], $2::bytea[], ...)` per
//!   [`PG_ROWS`] rows: one bind parameter per column whatever the row count, and one SQL text,
//!   prepared once per connection.
//! - MySQL/MariaDB and SQLite: multi-row `INSERT ... VALUES (?, ...), ...` filling each
//!   backend's bind-parameter limit (65,535 and 32,766). Chunk sizes come from a short ladder
//!   (full chunks, then powers of two) so that a few SQL texts serve every batch and stay in the
//!   driver's prepared-statement cache.
//!
//! Existing keys are skipped exactly as [`super::skip_existing`] does: `ON CONFLICT (key) DO
//! NOTHING`, and on MySQL `ON DUPLICATE KEY UPDATE k = k`; or replaced ([`Rows::replacing`]);
//! or, for keys the caller knows are new ([`Rows::known_new`]), not looked for at all. The
//! statements run on whatever connection they are given: the caller's transaction.

use sea_orm::sea_query::ArrayType;
use sea_orm::{ConnectionTrait, DbErr, Statement, Value};

use super::dialect::Dialect;
use super::pg_copy::CopyWriter;

/// Rows per `UNNEST` statement on PostgreSQL.
const PG_ROWS: usize = 20_000;

/// One column's values.
pub(crate) enum Values {
    BigInt(Vec<i64>),
    Int(Vec<i32>),
    Text(Vec<String>),
    /// Binary values (addresses, hashes, uint256s: their storage form).
    Bytes(Vec<Vec<u8>>),
    /// Nullable binary values. Never `Some(empty)`: on PostgreSQL the array carries an empty
    /// value for NULL.
    OptBytes(Vec<Option<Vec<u8>>>),
}

impl Values {
    fn len(&self) -> usize {
        match self {
            Values::BigInt(v) => v.len(),
            Values::Int(v) => v.len(),
            Values::Text(v) => v.len(),
            Values::Bytes(v) => v.len(),
            Values::OptBytes(v) => v.len(),
        }
    }

    /// Keeps the values whose flag in `keep` is true.
    fn retain(&mut self, keep: &[bool]) {
        fn by<T>(v: &mut Vec<T>, keep: &[bool]) {
            let mut flags = keep.iter();
            v.retain(|_| flags.next().copied().unwrap_or(false));
        }
        match self {
            Values::BigInt(v) => by(v, keep),
            Values::Int(v) => by(v, keep),
            Values::Text(v) => by(v, keep),
            Values::Bytes(v) => by(v, keep),
            Values::OptBytes(v) => by(v, keep),
        }
    }

    fn pg_type(&self) -> &'static str {
        match self {
            Values::BigInt(_) => "int8[]",
            Values::Int(_) => "int4[]",
            Values::Text(_) => "text[]",
            Values::Bytes(_) | Values::OptBytes(_) => "bytea[]",
        }
    }

    /// The values, moved into bind values (an empty value for NULL when they go into a
    /// PostgreSQL array), with the array type they make.
    fn into_values(self, pg: bool) -> (ArrayType, std::vec::IntoIter<Value>) {
        let (ty, v): (_, Vec<Value>) = match self {
            Values::BigInt(v) => (ArrayType::BigInt, v.into_iter().map(Value::from).collect()),
            Values::Int(v) => (ArrayType::Int, v.into_iter().map(Value::from).collect()),
            Values::Text(v) => (ArrayType::String, v.into_iter().map(Value::from).collect()),
            Values::Bytes(v) => (ArrayType::Bytes, v.into_iter().map(Value::from).collect()),
            Values::OptBytes(v) => (
                ArrayType::Bytes,
                v.into_iter()
                    .map(|b| match (b, pg) {
                        (None, true) => Value::from(Vec::<u8>::new()),
                        (b, _) => Value::Bytes(b),
                    })
                    .collect(),
            ),
        };
        (ty, v.into_iter())
    }
}

/// Rows of one table, column by column.
pub(crate) struct Rows {
    table: &'static str,
    /// The unique key whose existing rows are skipped (or updated, [`Rows::replacing`]).
    key: Vec<&'static str>,
    columns: Vec<(&'static str, Values)>,
    /// The columns an existing key's row takes from the new one; none: it is skipped.
    replace: Vec<&'static str>,
    /// No conflict clause: every key is new ([`Rows::known_new`]).
    known_new: bool,
}

impl Rows {
    pub(crate) fn new(table: &'static str, key: Vec<&'static str>) -> Self {
        Self {
            table,
            key,
            columns: Vec::new(),
            replace: Vec::new(),
            known_new: false,
        }
    }

    /// The caller has read, under the chain's lock (`write::lock_chain`), that none of these
    /// keys is stored, and no key repeats: a plain `INSERT`, without the conflict check
    /// (PostgreSQL inserts 20,000 transfers ~35% faster without `ON CONFLICT`). A stored key
    /// then fails the statement, and the transaction with it, instead of being skipped.
    pub(crate) fn known_new(mut self) -> Self {
        self.known_new = true;
        self
    }

    /// Only the rows whose `keep` is true (`keep` has one flag per row).
    pub(crate) fn only(mut self, keep: &[bool]) -> Self {
        if keep.iter().all(|k| *k) {
            return self;
        }
        for (_, values) in &mut self.columns {
            values.retain(keep);
        }
        self
    }

    /// A row whose key exists replaces these columns of the stored one (an upsert).
    pub(crate) fn replacing(mut self, columns: &[&'static str]) -> Self {
        self.replace = columns.to_vec();
        self
    }

    pub(crate) fn col(mut self, name: &'static str, values: Values) -> Self {
        self.columns.push((name, values));
        self
    }

    fn len(&self) -> usize {
        self.columns.first().map_or(0, |(_, v)| v.len())
    }

    /// The row count, which every column must have.
    fn checked_len(&self) -> Result<usize, DbErr> {
        let n = self.len();
        if self.columns.iter().any(|(_, v)| v.len() != n) {
            return Err(DbErr::Custom(format!(
                "rows of {}: columns of different lengths",
                self.table
            )));
        }
        Ok(n)
    }

    /// Inserts every row, skipping existing keys.
    pub(crate) async fn insert<C: ConnectionTrait>(mut self, db: &C) -> Result<(), DbErr> {
        let n = self.checked_len()?;
        if n == 0 {
            return Ok(());
        }
        let dialect = Dialect::of(db);
        let backend = dialect.backend();
        let pg = dialect.takes_key_arrays();
        let sql = if pg { self.unnest_sql() } else { String::new() };
        let width = self.columns.len();
        let full = dialect.bind_limit().map_or(PG_ROWS, |p| p / width).max(1);
        // Move the values out (the names stay, for the SQL).
        let mut columns: Vec<_> = self
            .columns
            .iter_mut()
            .map(|(_, v)| std::mem::replace(v, Values::BigInt(Vec::new())).into_values(pg))
            .collect();
        let mut left = n;
        while left > 0 {
            let stmt = if pg {
                let rows = left.min(full);
                left -= rows;
                let arrays = columns.iter_mut().map(|(ty, it)| {
                    Value::Array(ty.clone(), Some(Box::new(it.take(rows).collect())))
                });
                Statement::from_sql_and_values(backend, &sql, arrays)
            } else {
                let rows = chunk_rows(left, full);
                left -= rows;
                let mut values = Vec::with_capacity(rows * width);
                for _ in 0..rows {
                    values.extend(columns.iter_mut().filter_map(|(_, it)| it.next()));
                }
                Statement::from_sql_and_values(backend, self.values_sql(dialect, rows), values)
            };
            db.execute_raw(stmt).await?;
        }
        Ok(())
    }

    /// The rows as one binary `COPY` into the table: the statement and its data, or `None`
    /// without rows. `COPY` checks no conflict: for keys known new ([`Rows::known_new`]) only.
    pub(crate) fn copy_in(&self) -> Result<Option<(String, Vec<u8>)>, DbErr> {
        let n = self.checked_len()?;
        if n == 0 {
            return Ok(None);
        }
        let fields = i16::try_from(self.columns.len())
            .map_err(|_| DbErr::Custom(format!("copy into {}: too many columns", self.table)))?;
        let mut w = CopyWriter::default();
        for i in 0..n {
            w.row(fields);
            for (_, values) in &self.columns {
                match values {
                    Values::BigInt(v) => w.int8(v[i]),
                    Values::Int(v) => w.int4(v[i]),
                    Values::Text(v) => w.bytes(v[i].as_bytes()),
                    Values::Bytes(v) => w.bytes(&v[i]),
                    Values::OptBytes(v) => match &v[i] {
                        Some(b) => w.bytes(b),
                        None => w.null(),
                    },
                };
            }
        }
        let b = Dialect::Postgres;
        let sql = format!(
            "COPY {} ({}) FROM STDIN (FORMAT binary)",
            b.quote(self.table),
            self.column_list(b)
        );
        Ok(Some((sql, w.finish())))
    }

    fn column_list(&self, dialect: Dialect) -> String {
        self.columns
            .iter()
            .map(|(c, _)| dialect.quote(c))
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn on_conflict(&self, dialect: Dialect) -> String {
        if self.known_new {
            return String::new();
        }
        if self.replace.is_empty() {
            return dialect.insert_ignore(&self.key);
        }
        let set = self
            .replace
            .iter()
            .map(|c| {
                format!(
                    "{} = {}",
                    dialect.quote(c),
                    dialect.upsert_values(self.table, c).1
                )
            })
            .collect::<Vec<_>>()
            .join(", ");
        match dialect {
            Dialect::MySql => format!(" ON DUPLICATE KEY UPDATE {set}"),
            _ => format!(
                " ON CONFLICT ({}) DO UPDATE SET {set}",
                self.key
                    .iter()
                    .map(|c| dialect.quote(c))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }

    /// `INSERT INTO t (a, b) SELECT a, NULLIF(b, ''::bytea) FROM UNNEST($1::int8[], $2::bytea[]) AS
    /// u(a, b) ON CONFLICT (k) DO NOTHING`
    fn unnest_sql(&self) -> String {
        let b = Dialect::Postgres;
        let select = self
            .columns
            .iter()
            .map(|(c, v)| match v {
                Values::OptBytes(_) => format!("NULLIF({}, ''::bytea)", b.quote(c)),
                _ => b.quote(c),
            })
            .collect::<Vec<_>>()
            .join(", ");
        let arrays = self
            .columns
            .iter()
            .enumerate()
            .map(|(i, (_, v))| format!("${}::{}", i + 1, v.pg_type()))
            .collect::<Vec<_>>()
            .join(", ");
        format!(
            "INSERT INTO {table} ({cols}) SELECT {select} FROM UNNEST({arrays}) AS u({cols}){conflict}",
            table = b.quote(self.table),
            cols = self.column_list(b),
            conflict = self.on_conflict(b),
        )
    }

    /// `INSERT INTO t (a, b) VALUES (?, ?), (?, ?) ...` for `rows` rows.
    fn values_sql(&self, dialect: Dialect, rows: usize) -> String {
        let tuple = format!("({})", vec!["?"; self.columns.len()].join(", "));
        let mut sql = format!(
            "INSERT INTO {} ({}) VALUES ",
            dialect.quote(self.table),
            self.column_list(dialect)
        );
        sql.reserve(rows * (tuple.len() + 2) + 100);
        for i in 0..rows {
            if i > 0 {
                sql.push_str(", ");
            }
            sql.push_str(&tuple);
        }
        sql.push_str(&self.on_conflict(dialect));
        sql
    }
}

/// Rows for the next statement: a full chunk, or else the largest power of two that fits (so
/// that only a few distinct statements exist).
fn chunk_rows(remaining: usize, full: usize) -> usize {
    if remaining >= full {
        full
    } else {
        1 << (usize::BITS - 1 - remaining.leading_zeros())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunk_ladder() {
        assert_eq!(chunk_rows(10_000, 2978), 2978);
        assert_eq!(chunk_rows(2978, 2978), 2978);
        assert_eq!(chunk_rows(2977, 2978), 2048);
        assert_eq!(chunk_rows(3, 2978), 2);
        assert_eq!(chunk_rows(1, 2978), 1);
        let (mut n, mut statements) = (10_000usize, 0);
        while n > 0 {
            n -= chunk_rows(n, 2978);
            statements += 1;
        }
        assert_eq!(
            statements,
            3 + 4,
            "3 full chunks, then 1024 + 32 + 8 + 2 rows"
        );
    }

    /// `COPY`'s data holds the rows field by field in the columns' binary forms, a NULL for
    /// an absent optional value; its statement names the columns in order.
    #[test]
    fn copied_rows_read_back() {
        let (sql, data) = rows()
            .col("d", Values::Text(vec!["x".into(), "yz".into()]))
            .copy_in()
            .expect("rows of one length")
            .expect("two rows");
        assert_eq!(
            sql,
            r#"COPY "t" ("a", "b", "c", "d") FROM STDIN (FORMAT binary)"#
        );
        let mut r = super::super::pg_copy::CopyReader::default();
        r.push(&data);
        let mut read = Vec::new();
        while let Some(row) = r.next_row().expect("a row") {
            read.push(
                row.iter()
                    .map(|f| f.map(<[u8]>::to_vec))
                    .collect::<Vec<_>>(),
            );
        }
        assert!(r.ended());
        let some = |b: &[u8]| Some(b.to_vec());
        assert_eq!(
            read,
            vec![
                vec![
                    some(&1i64.to_be_bytes()),
                    some(&3i32.to_be_bytes()),
                    None,
                    some(b"x")
                ],
                vec![
                    some(&2i64.to_be_bytes()),
                    some(&4i32.to_be_bytes()),
                    some(b"x"),
                    some(b"yz")
                ],
            ]
        );
        assert!(Rows::new("t", vec!["a"])
            .copy_in()
            .expect("no rows")
            .is_none());
        let uneven = Rows::new("t", vec!["a"])
            .col("a", Values::BigInt(vec![1, 2]))
            .col("b", Values::Int(vec![3]));
        assert!(uneven.copy_in().is_err(), "columns of different lengths");
    }

    fn rows() -> Rows {
        Rows::new("t", vec!["a", "b"])
            .col("a", Values::BigInt(vec![1, 2]))
            .col("b", Values::Int(vec![3, 4]))
            .col("c", Values::OptBytes(vec![None, Some(b"x".to_vec())]))
    }

    #[test]
    fn upserts() {
        assert!(rows()
            .replacing(&["c"])
            .unnest_sql()
            .ends_with(" ON CONFLICT (\"a\", \"b\") DO UPDATE SET \"c\" = \"excluded\".\"c\""));
        assert!(rows()
            .values_sql(Dialect::MySql, 1)
            .ends_with(" ON DUPLICATE KEY UPDATE `a` = `a`"));
        assert!(rows()
            .replacing(&["c"])
            .values_sql(Dialect::MySql, 1)
            .ends_with(" ON DUPLICATE KEY UPDATE `c` = VALUES(`c`)"));
        assert!(rows().values_sql(Dialect::Sqlite, 1).contains("DO NOTHING"));
    }

    #[test]
    fn known_new_keys_are_inserted_without_a_conflict_clause() {
        assert!(rows()
            .known_new()
            .unnest_sql()
            .ends_with(" AS u(\"a\", \"b\", \"c\")"));
        assert!(rows()
            .known_new()
            .values_sql(Dialect::MySql, 1)
            .ends_with("VALUES (?, ?, ?)"));
    }

    #[test]
    fn only_keeps_the_flagged_rows_of_every_column() {
        let kept = rows().only(&[false, true]);
        assert_eq!(kept.len(), 1);
        assert!(kept.columns.iter().all(|(_, v)| v.len() == 1));
        assert!(matches!(&kept.columns[0].1, Values::BigInt(v) if v == &[2]));
        assert!(matches!(&kept.columns[2].1, Values::OptBytes(v) if v == &[Some(b"x".to_vec())]));
    }

    #[test]
    fn statements() {
        assert_eq!(
            rows().unnest_sql(),
            "INSERT INTO \"t\" (\"a\", \"b\", \"c\") SELECT \"a\", \"b\", NULLIF(\"c\", ''::bytea) \
             FROM UNNEST($1::int8[], $2::int4[], $3::bytea[]) AS u(\"a\", \"b\", \"c\") \
             ON CONFLICT (\"a\", \"b\") DO NOTHING"
        );
        assert_eq!(
            rows().values_sql(Dialect::MySql, 2),
            "INSERT INTO `t` (`a`, `b`, `c`) VALUES (?, ?, ?), (?, ?, ?) \
             ON DUPLICATE KEY UPDATE `a` = `a`"
        );
        assert_eq!(
            rows().values_sql(Dialect::Sqlite, 1),
            "INSERT INTO \"t\" (\"a\", \"b\", \"c\") VALUES (?, ?, ?) \
             ON CONFLICT (\"a\", \"b\") DO NOTHING"
        );
    }
}
