//! Addresses, hashes and uint256 values in binary columns: `bytea` on PostgreSQL, `BINARY(n)`
//! on MySQL/MariaDB, `BLOB` on SQLite. An address takes 20 bytes instead of 42 characters, a
//! hash 32 instead of 66, a uint256 32 big-endian bytes instead of 64 hex digits (byte order
//! is numeric order, as text order was).
//!
//! An existing database is converted in place, table by table, without holding it all in one
//! transaction:
//! 1. a copy of the table's definition with the new column types, `<table>__conv`;
//! 2. the rows copied into it in batches (of [`BATCH`], or `TOKENQL_MIGRATE_BATCH`) along the primary key, converted by the
//!    database itself; each batch commits with its position in `binary_conversion`, so a
//!    conversion killed at any point resumes at the batch it was in;
//! 3. the old table dropped and the copy renamed in its place (one transaction on PostgreSQL
//!    and SQLite, one atomic `RENAME TABLE` on MySQL), with the old table's indexes built again
//!    on the copy.
//!
//! Progress goes to standard error (`tokenql migrate` shows it). `down` converts back to text
//! the same way.

use std::time::Instant;

use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::{ConnectionTrait, DbBackend, QueryResult, Statement, Value};

#[derive(DeriveMigrationName)]
pub struct Migration;

/// Rows per copied batch, unless `TOKENQL_MIGRATE_BATCH` says otherwise.
const BATCH: u64 = 50_000;

/// Rows per copied batch: `TOKENQL_MIGRATE_BATCH` (a positive number) or [`BATCH`].
fn batch() -> u64 {
    std::env::var("TOKENQL_MIGRATE_BATCH")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(BATCH)
}

/// The table that records each table's conversion while it runs.
const PROGRESS: &str = "binary_conversion";

/// The index this migration drops (table, name): a prefix of another.
const REDUNDANT: (&str, &str) = ("nft_holdings", "idx_nft_holdings_token");

/// What a converted column holds.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `0x` and 40 hex digits / 20 bytes.
    Address,
    /// `0x` and 64 hex digits / 32 bytes.
    Hash,
    /// 64 hex digits / 32 big-endian bytes.
    Uint,
}

impl Kind {
    fn bytes(self) -> u32 {
        match self {
            Kind::Address => 20,
            Kind::Hash | Kind::Uint => 32,
        }
    }

    fn chars(self) -> u32 {
        match self {
            Kind::Address => 42,
            Kind::Hash => 66,
            Kind::Uint => 64,
        }
    }

    /// Whether the text form starts with `0x`.
    fn prefixed(self) -> bool {
        self != Kind::Uint
    }
}

/// One converted column: its name, what it holds, whether it may be NULL.
type Col = (&'static str, Kind, bool);

/// A table with converted columns, and its primary key (the order of the copy).
struct Spec {
    table: &'static str,
    key: &'static [&'static str],
    columns: &'static [Col],
}

use Kind::{Address as A, Hash as H, Uint as U};

/// Every table with an address, hash or uint256 column.
const TABLES: &[Spec] = &[
    Spec {
        table: "blocks",
        key: &["chain_id", "number"],
        columns: &[("hash", H, false), ("parent_hash", H, true)],
    },
    Spec {
        table: "erc20_transfers",
        key: &["chain_id", "block_number", "log_index"],
        columns: &[
            ("block_hash", H, false),
            ("transaction_hash", H, false),
            ("contract_address", A, false),
            ("from_address", A, false),
            ("to_address", A, false),
            ("value", U, false),
        ],
    },
    Spec {
        table: "nft_transfers",
        key: &["chain_id", "block_number", "log_index", "batch_index"],
        columns: &[
            ("block_hash", H, false),
            ("transaction_hash", H, false),
            ("contract_address", A, false),
            ("operator", A, true),
            ("from_address", A, false),
            ("to_address", A, false),
            ("token_id", U, false),
            ("amount", U, false),
        ],
    },
    Spec {
        table: "nft_holdings",
        key: &["chain_id", "owner_address", "contract_address", "token_id"],
        columns: &[
            ("owner_address", A, false),
            ("contract_address", A, false),
            ("token_id", U, false),
            ("amount", U, false),
        ],
    },
    Spec {
        table: "nft_tokens",
        key: &["chain_id", "contract_address", "token_id"],
        columns: &[("contract_address", A, false), ("token_id", U, false)],
    },
    Spec {
        table: "contracts",
        key: &["chain_id", "address"],
        columns: &[("address", A, false)],
    },
    Spec {
        table: "erc20_balances",
        key: &["chain_id", "owner_address", "contract_address"],
        columns: &[
            ("owner_address", A, false),
            ("contract_address", A, false),
            ("balance", U, false),
        ],
    },
    Spec {
        table: "erc20_token_totals",
        key: &["chain_id", "contract_address"],
        columns: &[("contract_address", A, false), ("supply", U, false)],
    },
    Spec {
        table: "address_labels",
        key: &["chain_id", "address"],
        columns: &[("address", A, false)],
    },
    Spec {
        table: "scope_sync",
        key: &["chain_id", "scope", "address"],
        columns: &[("address", A, false)],
    },
    Spec {
        table: "stream_addresses",
        key: &["stream_id", "address"],
        columns: &[("address", A, false)],
    },
];

/// Which way a conversion goes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Way {
    ToBinary,
    ToText,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    /// Each batch commits on its own, so that a killed conversion resumes.
    fn use_transaction(&self) -> Option<bool> {
        Some(false)
    }

    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        convert_all(m, Way::ToBinary).await?;
        // `(chain_id, contract_address, token_id)` is a prefix of the collection index
        // `(…, owner_address)` (m20261125_000008): every query it served, that one serves.
        if m.has_index(REDUNDANT.0, REDUNDANT.1).await? {
            m.drop_index(
                Index::drop()
                    .name(REDUNDANT.1)
                    .table(Alias::new(REDUNDANT.0))
                    .to_owned(),
            )
            .await?;
        }
        Ok(())
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        if !m.has_index(REDUNDANT.0, REDUNDANT.1).await? {
            m.create_index(
                Index::create()
                    .name(REDUNDANT.1)
                    .table(Alias::new(REDUNDANT.0))
                    .col(Alias::new("chain_id"))
                    .col(Alias::new("contract_address"))
                    .col(Alias::new("token_id"))
                    .to_owned(),
            )
            .await?;
        }
        convert_all(m, Way::ToText).await
    }
}

async fn convert_all(m: &SchemaManager<'_>, way: Way) -> Result<(), DbErr> {
    let db = m.get_connection();
    let backend = m.get_database_backend();
    db.execute_unprepared(&format!(
        "CREATE TABLE IF NOT EXISTS {PROGRESS} (tbl VARCHAR(64) NOT NULL PRIMARY KEY, \
         last_key VARCHAR(400) NULL, copied BIGINT NOT NULL)"
    ))
    .await?;
    for spec in TABLES {
        Conversion {
            m,
            backend,
            spec,
            way,
        }
        .run()
        .await?;
    }
    db.execute_unprepared(&format!("DROP TABLE {PROGRESS}"))
        .await?;
    Ok(())
}

/// One table's conversion.
struct Conversion<'a, 'c> {
    m: &'a SchemaManager<'c>,
    backend: DbBackend,
    spec: &'a Spec,
    way: Way,
}

impl Conversion<'_, '_> {
    fn copy_name(&self) -> String {
        format!("{}__conv", self.spec.table)
    }

    async fn run(&self) -> Result<(), DbErr> {
        let db = self.m.get_connection();
        let copy = self.copy_name();
        let progress = self.progress().await?;
        if progress.is_none() && self.converted().await? {
            return Ok(());
        }
        let copy_exists = self.m.has_table(&copy).await?;
        match (progress, copy_exists) {
            // Not started (or converted and then swapped: the row is gone with the swap).
            (None, _) => {
                if copy_exists {
                    db.execute_unprepared(&format!("DROP TABLE {}", self.q(&copy)))
                        .await?;
                }
                self.create_copy().await?;
                self.set_progress(db, None, 0).await?;
                self.copy_rows(None, 0).await?;
                self.swap().await
            }
            (Some((last, copied)), true) => {
                self.copy_rows(last, copied).await?;
                self.swap().await
            }
            // Swapped, but killed before its progress row went (MySQL: the rename commits
            // alone).
            (Some(_), false) => self.forget(db).await,
        }
    }

    fn q(&self, name: &str) -> String {
        match self.backend {
            DbBackend::MySql => format!("`{name}`"),
            _ => format!("\"{name}\""),
        }
    }

    /// The stored position: the last copied key (`\u{1}`-separated texts) and the rows copied.
    async fn progress(&self) -> Result<Option<(Option<Vec<String>>, u64)>, DbErr> {
        let row = self
            .m
            .get_connection()
            .query_one_raw(Statement::from_sql_and_values(
                self.backend,
                self.ph(&format!(
                    "SELECT last_key, copied FROM {PROGRESS} WHERE tbl = ?"
                )),
                [Value::from(self.spec.table)],
            ))
            .await?;
        let Some(row) = row else { return Ok(None) };
        let last: Option<String> = row.try_get("", "last_key")?;
        let copied: i64 = row.try_get("", "copied")?;
        Ok(Some((
            last.map(|l| l.split('\u{1}').map(str::to_string).collect()),
            copied as u64,
        )))
    }

    async fn set_progress<C: ConnectionTrait>(
        &self,
        db: &C,
        last: Option<&[String]>,
        copied: u64,
    ) -> Result<(), DbErr> {
        let last = last.map(|l| l.join("\u{1}"));
        db.execute_raw(Statement::from_sql_and_values(
            self.backend,
            self.ph(&format!("DELETE FROM {PROGRESS} WHERE tbl = ?")),
            [Value::from(self.spec.table)],
        ))
        .await?;
        db.execute_raw(Statement::from_sql_and_values(
            self.backend,
            self.ph(&format!(
                "INSERT INTO {PROGRESS} (tbl, last_key, copied) VALUES (?, ?, ?)"
            )),
            [
                Value::from(self.spec.table),
                Value::from(last),
                Value::from(copied as i64),
            ],
        ))
        .await?;
        Ok(())
    }

    async fn forget<C: ConnectionTrait>(&self, db: &C) -> Result<(), DbErr> {
        db.execute_raw(Statement::from_sql_and_values(
            self.backend,
            self.ph(&format!("DELETE FROM {PROGRESS} WHERE tbl = ?")),
            [Value::from(self.spec.table)],
        ))
        .await
        .map(|_| ())
    }

    /// `?` placeholders as the backend writes them.
    fn ph(&self, sql: &str) -> String {
        if self.backend != DbBackend::Postgres {
            return sql.to_string();
        }
        let mut n = 0;
        let mut out = String::with_capacity(sql.len() + 8);
        for c in sql.chars() {
            if c == '?' {
                n += 1;
                out.push_str(&format!("${n}"));
            } else {
                out.push(c);
            }
        }
        out
    }

    /// The column type a converted column takes.
    fn target_type(&self, kind: Kind) -> String {
        match (self.way, self.backend) {
            (Way::ToBinary, DbBackend::Postgres) => "bytea".into(),
            (Way::ToBinary, DbBackend::MySql) => format!("BINARY({})", kind.bytes()),
            (Way::ToBinary, _) => "blob".into(),
            (Way::ToText, _) => format!("varchar({})", kind.chars()),
        }
    }

    /// `<table>__conv`: the table's definition with the converted columns' new types, no rows.
    async fn create_copy(&self) -> Result<(), DbErr> {
        let db = self.m.get_connection();
        let (t, c) = (self.q(self.spec.table), self.q(&self.copy_name()));
        match self.backend {
            DbBackend::Postgres => {
                db.execute_unprepared(&format!("CREATE TABLE {c} (LIKE {t} INCLUDING DEFAULTS)"))
                    .await?;
                let alters: Vec<String> = self
                    .spec
                    .columns
                    .iter()
                    .map(|(name, kind, _)| {
                        let ty = self.target_type(*kind);
                        format!("ALTER COLUMN {} TYPE {ty} USING NULL::{ty}", self.q(name))
                    })
                    .collect();
                db.execute_unprepared(&format!("ALTER TABLE {c} {}", alters.join(", ")))
                    .await?;
                let key: Vec<String> = self.spec.key.iter().map(|k| self.q(k)).collect();
                db.execute_unprepared(&format!(
                    "ALTER TABLE {c} ADD CONSTRAINT {} PRIMARY KEY ({})",
                    self.q(&format!("{}__conv_pkey", self.spec.table)),
                    key.join(", ")
                ))
                .await?;
            }
            DbBackend::MySql => {
                db.execute_unprepared(&format!("CREATE TABLE {c} LIKE {t}"))
                    .await?;
                let alters: Vec<String> = self
                    .spec
                    .columns
                    .iter()
                    .map(|(name, kind, null)| {
                        format!(
                            "MODIFY {} {} {}",
                            self.q(name),
                            self.target_type(*kind),
                            if *null { "NULL" } else { "NOT NULL" }
                        )
                    })
                    .collect();
                db.execute_unprepared(&format!("ALTER TABLE {c} {}", alters.join(", ")))
                    .await?;
            }
            _ => {
                let sql = self.sqlite_sql("table", self.spec.table).await?;
                let sql = sql.first().ok_or_else(|| {
                    DbErr::Migration(format!("no table {} to convert", self.spec.table))
                })?;
                db.execute_unprepared(&self.sqlite_copy_sql(sql)?).await?;
            }
        }
        Ok(())
    }

    /// The `CREATE` statements SQLite keeps for `name`'s table or its indexes.
    async fn sqlite_sql(&self, kind: &str, table: &str) -> Result<Vec<String>, DbErr> {
        let rows = self
            .m
            .get_connection()
            .query_all_raw(Statement::from_sql_and_values(
                self.backend,
                "SELECT sql FROM sqlite_master WHERE type = ? AND tbl_name = ? AND sql IS NOT NULL",
                [Value::from(kind), Value::from(table)],
            ))
            .await?;
        rows.iter()
            .map(|r| r.try_get::<String>("", "sql"))
            .collect()
    }

    /// The table's `CREATE TABLE` renamed to the copy, with the converted columns retyped.
    fn sqlite_copy_sql(&self, sql: &str) -> Result<String, DbErr> {
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
    fn convert(&self, name: &str, kind: Kind) -> String {
        let c = self.q(name);
        format!(
            "CASE WHEN {c} IS NULL THEN NULL ELSE {} END",
            self.convert_value(&c, kind)
        )
    }

    /// The expression that converts a non-NULL value of column `c` (quoted).
    fn convert_value(&self, c: &str, kind: Kind) -> String {
        match (self.way, self.backend, kind.prefixed()) {
            (Way::ToBinary, DbBackend::Postgres, true) => format!("decode(substr({c}, 3), 'hex')"),
            (Way::ToBinary, DbBackend::Postgres, false) => format!("decode({c}, 'hex')"),
            (Way::ToBinary, DbBackend::MySql, true) => format!("UNHEX(SUBSTRING({c}, 3))"),
            (Way::ToBinary, DbBackend::MySql, false) => format!("UNHEX({c})"),
            (Way::ToBinary, _, true) => format!("unhex(substr({c}, 3))"),
            (Way::ToBinary, _, false) => format!("unhex({c})"),
            (Way::ToText, DbBackend::Postgres, true) => format!("'0x' || encode({c}, 'hex')"),
            (Way::ToText, DbBackend::Postgres, false) => format!("encode({c}, 'hex')"),
            (Way::ToText, DbBackend::MySql, true) => format!("CONCAT('0x', LOWER(HEX({c})))"),
            (Way::ToText, DbBackend::MySql, false) => format!("LOWER(HEX({c}))"),
            (Way::ToText, _, true) => format!("'0x' || lower(hex({c}))"),
            (Way::ToText, _, false) => format!("lower(hex({c}))"),
        }
    }

    /// A key column as text (to carry a position between batches).
    fn key_text(&self, name: &str) -> String {
        let c = self.q(name);
        let converted = self
            .spec
            .columns
            .iter()
            .find(|(n, ..)| *n == name)
            .map(|(_, kind, _)| *kind);
        match (converted, self.way, self.backend) {
            // The source holds bytes: read them as the text whose order they keep.
            (Some(_), Way::ToText, DbBackend::Postgres) => format!("encode({c}, 'hex')"),
            (Some(_), Way::ToText, DbBackend::MySql) => format!("LOWER(HEX({c}))"),
            (Some(_), Way::ToText, _) => format!("lower(hex({c}))"),
            (_, _, DbBackend::MySql) => format!("CAST({c} AS CHAR)"),
            (_, _, DbBackend::Postgres) => format!("CAST({c} AS TEXT)"),
            _ => format!("CAST({c} AS TEXT)"),
        }
    }

    /// A key position as bind values for the source table (binary keys from their hex).
    fn key_values(&self, last: &[String]) -> Result<Vec<Value>, DbErr> {
        self.spec
            .key
            .iter()
            .zip(last)
            .map(|(name, text)| {
                let kind = self
                    .spec
                    .columns
                    .iter()
                    .find(|(n, ..)| n == name)
                    .map(|(_, k, _)| *k);
                Ok(match (kind, self.way) {
                    (Some(_), Way::ToText) => Value::from(unhex(text)?),
                    (Some(_), Way::ToBinary) => Value::from(text.clone()),
                    (None, _) => match text.parse::<i64>() {
                        Ok(n) if !self.is_text_key(name) => Value::from(n),
                        _ => Value::from(text.clone()),
                    },
                })
            })
            .collect()
    }

    /// The key columns that hold text (not integers) and are not converted.
    fn is_text_key(&self, name: &str) -> bool {
        matches!(name, "scope" | "stream_id")
    }

    /// `key > ?` (`after`) or `key <= ?`, as the backend uses an index for it: a row value on
    /// PostgreSQL and SQLite, the expanded form on MySQL.
    fn compare(&self, after: bool) -> String {
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
    fn after_values(&self, last: &[Value]) -> Vec<Value> {
        if self.backend != DbBackend::MySql {
            return last.to_vec();
        }
        let mut out = Vec::new();
        for i in 0..last.len() {
            out.extend(last[..=i].iter().cloned());
        }
        out
    }

    /// Copies the rows after `last` in batches, each committed with its position.
    async fn copy_rows(&self, mut last: Option<Vec<String>>, mut copied: u64) -> Result<(), DbErr> {
        let db = self.m.get_connection();
        let (t, c) = (self.q(self.spec.table), self.q(&self.copy_name()));
        let order: Vec<String> = self.spec.key.iter().map(|k| self.q(k)).collect();
        let order = order.join(", ");
        let all: Vec<(String, Option<Kind>)> = self.columns().await?;
        let names: Vec<String> = all.iter().map(|(n, _)| self.q(n)).collect();
        let select: Vec<String> = all
            .iter()
            .map(|(n, k)| match k {
                Some(kind) => self.convert(n, *kind),
                None => self.q(n),
            })
            .collect();
        let keys: Vec<String> = self.spec.key.iter().map(|k| self.key_text(k)).collect();
        let total = self.count(&t).await?;
        let batch = batch();
        let started = Instant::now();
        loop {
            let lower = match &last {
                Some(l) => self.key_values(l)?,
                None => Vec::new(),
            };
            let filter = if lower.is_empty() {
                String::new()
            } else {
                format!("WHERE {}", self.compare(true))
            };
            // The batch's last key, read from the source.
            let bound = db
                .query_one_raw(Statement::from_sql_and_values(
                    self.backend,
                    self.ph(&format!(
                        "SELECT {} FROM {t} {filter} ORDER BY {order} LIMIT 1 OFFSET {}",
                        keys.iter()
                            .enumerate()
                            .map(|(i, k)| format!("{k} AS k{i}"))
                            .collect::<Vec<_>>()
                            .join(", "),
                        batch - 1
                    )),
                    self.after_values(&lower),
                ))
                .await?;
            let upper = bound.map(|row| key_texts(&row, keys.len())).transpose()?;
            let txn = self.m.begin().await?;
            let tdb = txn.get_connection();
            let mut values = self.after_values(&lower);
            let mut conds = Vec::new();
            if !lower.is_empty() {
                conds.push(self.compare(true));
            }
            if let Some(u) = &upper {
                conds.push(self.compare(false));
                values.extend(self.after_values(&self.key_values(u)?));
            }
            let filter = if conds.is_empty() {
                String::new()
            } else {
                format!("WHERE {}", conds.join(" AND "))
            };
            let done = tdb
                .execute_raw(Statement::from_sql_and_values(
                    self.backend,
                    self.ph(&format!(
                        "INSERT INTO {c} ({}) SELECT {} FROM {t} {filter}",
                        names.join(", "),
                        select.join(", ")
                    )),
                    values,
                ))
                .await?;
            copied += done.rows_affected();
            self.set_progress(tdb, upper.as_deref(), copied).await?;
            txn.commit().await?;
            if total > batch {
                eprintln!(
                    "migrate: {}: {copied} of {total} rows converted ({:.0} s)",
                    self.spec.table,
                    started.elapsed().as_secs_f64()
                );
            }
            match upper {
                Some(u) => last = Some(u),
                None => return Ok(()),
            }
        }
    }

    async fn count(&self, table: &str) -> Result<u64, DbErr> {
        let row = self
            .m
            .get_connection()
            .query_one_raw(Statement::from_string(
                self.backend,
                format!("SELECT COUNT(*) AS n FROM {table}"),
            ))
            .await?;
        Ok(row
            .map(|r| r.try_get::<i64>("", "n"))
            .transpose()?
            .unwrap_or(0) as u64)
    }

    /// Every column of the table, with its kind where it is converted.
    async fn columns(&self) -> Result<Vec<(String, Option<Kind>)>, DbErr> {
        let sql = match self.backend {
            DbBackend::Postgres => format!(
                "SELECT column_name::text AS name FROM information_schema.columns \
                 WHERE table_schema = current_schema() AND table_name = '{}' \
                 ORDER BY ordinal_position",
                self.spec.table
            ),
            DbBackend::MySql => format!(
                "SELECT CAST(column_name AS CHAR) AS name FROM information_schema.columns \
                 WHERE table_schema = DATABASE() AND table_name = '{}' \
                 ORDER BY ordinal_position",
                self.spec.table
            ),
            _ => format!(
                "SELECT name FROM pragma_table_info('{}') ORDER BY cid",
                self.spec.table
            ),
        };
        let rows = self
            .m
            .get_connection()
            .query_all_raw(Statement::from_string(self.backend, sql))
            .await?;
        rows.iter()
            .map(|r| {
                let name: String = r.try_get("", "name")?;
                let kind = self
                    .spec
                    .columns
                    .iter()
                    .find(|(n, ..)| *n == name)
                    .map(|(_, k, _)| *k);
                Ok((name, kind))
            })
            .collect()
    }

    /// Whether the table's columns already have their target types (a conversion killed after
    /// its last swap, before the migration was recorded, runs again).
    async fn converted(&self) -> Result<bool, DbErr> {
        let (first, ..) = self.spec.columns[0];
        let sql = match self.backend {
            DbBackend::Postgres => format!(
                "SELECT data_type::text AS ty FROM information_schema.columns \
                 WHERE table_schema = current_schema() AND table_name = '{}' \
                 AND column_name = '{first}'",
                self.spec.table
            ),
            DbBackend::MySql => format!(
                "SELECT CAST(data_type AS CHAR) AS ty FROM information_schema.columns \
                 WHERE table_schema = DATABASE() AND table_name = '{}' \
                 AND column_name = '{first}'",
                self.spec.table
            ),
            _ => format!(
                "SELECT type AS ty FROM pragma_table_info('{}') WHERE name = '{first}'",
                self.spec.table
            ),
        };
        let row = self
            .m
            .get_connection()
            .query_one_raw(Statement::from_string(self.backend, sql))
            .await?;
        let ty = row
            .map(|r| r.try_get::<String>("", "ty"))
            .transpose()?
            .unwrap_or_default()
            .to_lowercase();
        let binary = ty == "bytea" || ty.starts_with("binary") || ty.starts_with("blob");
        Ok(binary == (self.way == Way::ToBinary))
    }

    /// Drops the old table and renames the copy in its place, with the old table's indexes.
    async fn swap(&self) -> Result<(), DbErr> {
        let (t, c) = (self.q(self.spec.table), self.q(&self.copy_name()));
        match self.backend {
            DbBackend::MySql => {
                // `LIKE` copied the indexes; the rename is atomic.
                let db = self.m.get_connection();
                let old = self.q(&format!("{}__old", self.spec.table));
                db.execute_unprepared(&format!("DROP TABLE IF EXISTS {old}"))
                    .await?;
                db.execute_unprepared(&format!("RENAME TABLE {t} TO {old}, {c} TO {t}"))
                    .await?;
                db.execute_unprepared(&format!("DROP TABLE {old}")).await?;
                self.forget(db).await
            }
            DbBackend::Postgres => {
                let indexes = self.pg_indexes().await?;
                let txn = self.m.begin().await?;
                let db = txn.get_connection();
                db.execute_unprepared(&format!("DROP TABLE {t}")).await?;
                db.execute_unprepared(&format!("ALTER TABLE {c} RENAME TO {t}"))
                    .await?;
                db.execute_unprepared(&format!(
                    "ALTER TABLE {t} RENAME CONSTRAINT {} TO {}",
                    self.q(&format!("{}__conv_pkey", self.spec.table)),
                    self.q(&format!("{}_pkey", self.spec.table)),
                ))
                .await?;
                for sql in indexes {
                    db.execute_unprepared(&sql).await?;
                }
                self.forget(db).await?;
                txn.commit().await
            }
            _ => {
                let indexes = self.sqlite_sql("index", self.spec.table).await?;
                let txn = self.m.begin().await?;
                let db = txn.get_connection();
                db.execute_unprepared(&format!("DROP TABLE {t}")).await?;
                db.execute_unprepared(&format!("ALTER TABLE {c} RENAME TO {t}"))
                    .await?;
                for sql in indexes {
                    db.execute_unprepared(&sql).await?;
                }
                self.forget(db).await?;
                txn.commit().await
            }
        }
    }

    /// The `CREATE INDEX` statements of the table's indexes but its primary key.
    async fn pg_indexes(&self) -> Result<Vec<String>, DbErr> {
        let rows = self
            .m
            .get_connection()
            .query_all_raw(Statement::from_sql_and_values(
                self.backend,
                "SELECT indexdef FROM pg_indexes WHERE schemaname = current_schema() \
                 AND tablename = $1 AND indexname <> $2",
                [
                    Value::from(self.spec.table),
                    Value::from(format!("{}_pkey", self.spec.table)),
                ],
            ))
            .await?;
        rows.iter()
            .map(|r| r.try_get::<String>("", "indexdef"))
            .collect()
    }
}

/// The `n` key texts `k0..` of a row.
fn key_texts(row: &QueryResult, n: usize) -> Result<Vec<String>, DbErr> {
    (0..n)
        .map(|i| row.try_get::<String>("", &format!("k{i}")))
        .collect()
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
    fn hex_reads_back() {
        assert_eq!(unhex("00ff10").ok(), Some(vec![0, 255, 16]));
        assert!(unhex("0").is_err());
        assert!(unhex("zz").is_err());
    }
}
