//! One table's conversion: the copy, its batches and their recorded position, the swap.

use std::time::Instant;

use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::{ConnectionTrait, DbBackend, QueryResult, Statement, Value};

use super::{batch, Kind, Spec, Way, PROGRESS};

/// One table's conversion.
pub(super) struct Conversion<'a, 'c> {
    pub(super) m: &'a SchemaManager<'c>,
    pub(super) backend: DbBackend,
    pub(super) spec: &'a Spec,
    pub(super) way: Way,
}

impl Conversion<'_, '_> {
    pub(super) fn copy_name(&self) -> String {
        format!("{}__conv", self.spec.table)
    }

    /// Where MySQL's swap moves the old table before dropping it.
    fn old_name(&self) -> String {
        format!("{}__old", self.spec.table)
    }

    pub(super) async fn run(&self) -> Result<(), DbErr> {
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
            // alone, and the old table may still be there).
            (Some(_), false) => {
                db.execute_unprepared(&format!(
                    "DROP TABLE IF EXISTS {}",
                    self.q(&self.old_name())
                ))
                .await?;
                self.forget(db).await
            }
        }
    }

    /// The stored position: the last copied key (`\u{1}`-separated texts) and the rows copied.
    pub(super) async fn progress(&self) -> Result<Option<(Option<Vec<String>>, u64)>, DbErr> {
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

    pub(super) async fn set_progress<C: ConnectionTrait>(
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

    pub(super) async fn forget<C: ConnectionTrait>(&self, db: &C) -> Result<(), DbErr> {
        db.execute_raw(Statement::from_sql_and_values(
            self.backend,
            self.ph(&format!("DELETE FROM {PROGRESS} WHERE tbl = ?")),
            [Value::from(self.spec.table)],
        ))
        .await
        .map(|_| ())
    }

    /// `<table>__conv`: the table's definition with the converted columns' new types, no rows.
    pub(super) async fn create_copy(&self) -> Result<(), DbErr> {
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
    pub(super) async fn sqlite_sql(&self, kind: &str, table: &str) -> Result<Vec<String>, DbErr> {
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

    /// Copies the rows after `last` in batches, each committed with its position.
    pub(super) async fn copy_rows(
        &self,
        mut last: Option<Vec<String>>,
        mut copied: u64,
    ) -> Result<(), DbErr> {
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

    pub(super) async fn count(&self, table: &str) -> Result<u64, DbErr> {
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
    pub(super) async fn columns(&self) -> Result<Vec<(String, Option<Kind>)>, DbErr> {
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
                let kind = self.spec.kind_of(&name);
                Ok((name, kind))
            })
            .collect()
    }

    /// Whether the table's columns already have their target types (a conversion killed after
    /// its last swap, before the migration was recorded, runs again).
    pub(super) async fn converted(&self) -> Result<bool, DbErr> {
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
    pub(super) async fn swap(&self) -> Result<(), DbErr> {
        let (t, c) = (self.q(self.spec.table), self.q(&self.copy_name()));
        match self.backend {
            DbBackend::MySql => {
                // `LIKE` copied the indexes; the rename is atomic.
                let db = self.m.get_connection();
                let old = self.q(&self.old_name());
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
    pub(super) async fn pg_indexes(&self) -> Result<Vec<String>, DbErr> {
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
