//! The indexes a backfill of a fresh database leaves out and builds once at the end: the
//! transfer tables' address indexes and the ERC20 holders index.
//!
//! Each stored transfer costs an entry in the primary key and in three address indexes (by
//! token, by sender, by recipient; `docs/ARCHITECTURE.md`), and each balance it moves a new
//! entry in the holders index (by token and balance). Kept up row by row, those are most of a
//! batch's write time, and pages split half-full by inserts in random address order leave them
//! about 45% larger than built in one sorted pass (`docs/BENCHMARKS.md`). A backfill of
//! finalized blocks into a database that holds nothing else has no reader that needs them fast:
//! every answer says `SYNCING` until it reaches the head. So the follower drops them before
//! such a backfill ([`defer`]) and rebuilds them ([`restore`]) before it writes a block within
//! reach of a reorg. The write path never reads them (it reads by primary key, and the NFT
//! holdings' replay by the NFT token index, which stays), and an index changes how fast a row
//! is found, never which rows are: every answer is the same either way, only slower.
//!
//! Whether they are deferred is what the catalog says ([`missing`]), so the state survives a
//! crash and a change of leader: the follower that takes over either goes on deferring (still
//! far behind) or rebuilds them first. Only the indexer and bulk loaders touch them.

use std::time::Instant;

use sea_orm::sea_query::{
    Alias, ConditionalStatement, Expr, ExprTrait, Index, IndexCreateStatement,
};
use sea_orm::{ConnectionTrait, DbErr, Statement};

use super::dialect::Dialect;

/// One index that a backfill may leave out: its name, table and columns, exactly as the
/// migrations create it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deferrable {
    pub name: &'static str,
    pub table: &'static str,
    pub columns: &'static [&'static str],
    /// Of the rows with `wraps = 0` only: a partial index on PostgreSQL and SQLite; MySQL,
    /// which has none, takes `wraps` as its third column instead.
    pub real_balances_only: bool,
}

const ERC20: &str = "erc20_transfers";
const NFT: &str = "nft_transfers";
const BALANCES: &str = "erc20_balances";
const TABLES: &str = "('erc20_transfers', 'nft_transfers', 'erc20_balances')";

/// The deferrable indexes: the address indexes of both transfer tables
/// (`m20261121_000001_create_tables`, `m20261125_000007_nft_transfer_indexes`) and the holders
/// index (`m20261126_000009_erc20_balances`).
pub const DEFERRABLE: [Deferrable; 7] = [
    Deferrable {
        name: "idx_erc20_contract",
        table: ERC20,
        columns: &["chain_id", "contract_address", "block_number", "log_index"],
        real_balances_only: false,
    },
    Deferrable {
        name: "idx_erc20_from",
        table: ERC20,
        columns: &["chain_id", "from_address", "block_number", "log_index"],
        real_balances_only: false,
    },
    Deferrable {
        name: "idx_erc20_to",
        table: ERC20,
        columns: &["chain_id", "to_address", "block_number", "log_index"],
        real_balances_only: false,
    },
    Deferrable {
        name: "idx_nft_transfers_from",
        table: NFT,
        columns: &[
            "chain_id",
            "from_address",
            "block_number",
            "log_index",
            "batch_index",
        ],
        real_balances_only: false,
    },
    Deferrable {
        name: "idx_nft_transfers_to",
        table: NFT,
        columns: &[
            "chain_id",
            "to_address",
            "block_number",
            "log_index",
            "batch_index",
        ],
        real_balances_only: false,
    },
    Deferrable {
        name: "idx_nft_transfers_contract",
        table: NFT,
        columns: &[
            "chain_id",
            "contract_address",
            "block_number",
            "log_index",
            "batch_index",
        ],
        real_balances_only: false,
    },
    Deferrable {
        name: "idx_erc20_balances_token",
        table: BALANCES,
        columns: &["chain_id", "contract_address", "balance", "owner_address"],
        real_balances_only: true,
    },
];

/// The names of the tables' indexes, as the catalog lists them.
async fn present<C: ConnectionTrait>(db: &C) -> Result<Vec<String>, DbErr> {
    let dialect = Dialect::of(db);
    let sql = match dialect {
        Dialect::Postgres => format!(
            "SELECT indexname::text AS name FROM pg_indexes \
             WHERE schemaname = current_schema() AND tablename IN {TABLES}"
        ),
        Dialect::Sqlite => {
            format!("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name IN {TABLES}")
        }
        Dialect::MySql => format!(
            "SELECT DISTINCT CAST(index_name AS CHAR) AS name FROM information_schema.statistics \
             WHERE table_schema = DATABASE() AND table_name IN {TABLES}"
        ),
    };
    let rows = db
        .query_all_raw(Statement::from_string(dialect.backend(), sql))
        .await?;
    rows.iter()
        .map(|r| r.try_get::<String>("", "name"))
        .collect()
}

/// How the catalog defines each index of the three tables, by name, in a form comparable across
/// the ways an index is created (quotes, case and spaces left out): PostgreSQL's `indexdef`,
/// SQLite's `CREATE INDEX` text, MySQL's columns in order with uniqueness. The test of the
/// backfill compares it before a deferral and after the rebuild, so that [`DEFERRABLE`] cannot
/// drift from the migrations.
pub async fn definitions<C: ConnectionTrait>(
    db: &C,
) -> Result<std::collections::BTreeMap<String, String>, DbErr> {
    let dialect = Dialect::of(db);
    let sql = match dialect {
        Dialect::Postgres => format!(
            "SELECT indexname::text AS name, indexdef::text AS def FROM pg_indexes \
             WHERE schemaname = current_schema() AND tablename IN {TABLES}"
        ),
        Dialect::Sqlite => format!(
            "SELECT name, COALESCE(sql, '') AS def FROM sqlite_master \
             WHERE type = 'index' AND tbl_name IN {TABLES}"
        ),
        Dialect::MySql => format!(
            "SELECT CAST(index_name AS CHAR) AS name, CAST(CONCAT(table_name, ' ', MIN(non_unique), \
             ' ', GROUP_CONCAT(column_name ORDER BY seq_in_index)) AS CHAR) AS def \
             FROM information_schema.statistics \
             WHERE table_schema = DATABASE() AND table_name IN {TABLES} \
             GROUP BY table_name, index_name"
        ),
    };
    let rows = db
        .query_all_raw(Statement::from_string(dialect.backend(), sql))
        .await?;
    rows.iter()
        .map(|r| {
            let def: String = r.try_get("", "def")?;
            let def = def
                .chars()
                .filter(|c| !c.is_whitespace() && !matches!(c, '"' | '`' | '\''))
                .collect::<String>()
                .to_lowercase();
            Ok((r.try_get("", "name")?, def))
        })
        .collect()
}

/// The deferrable indexes the database lacks now: empty unless a backfill deferred them.
pub async fn missing<C: ConnectionTrait>(db: &C) -> Result<Vec<Deferrable>, DbErr> {
    let present = present(db).await?;
    Ok(DEFERRABLE
        .into_iter()
        .filter(|d| !present.iter().any(|p| p == d.name))
        .collect())
}

/// Whether the transfer tables hold rows of no chain but `chain_id`: only then may its
/// backfill leave the indexes out (another chain's readers and reorgs need them).
pub async fn only_chain<C: ConnectionTrait>(db: &C, chain_id: i64) -> Result<bool, DbErr> {
    let dialect = Dialect::of(db);
    for table in [ERC20, NFT] {
        let sql = format!(
            "SELECT 1 AS one FROM {} WHERE chain_id <> {chain_id} LIMIT 1",
            dialect.quote(table)
        );
        let other = db
            .query_one_raw(Statement::from_string(dialect.backend(), sql))
            .await?;
        if other.is_some() {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The statement that creates `d` on `dialect`, as its migration does.
fn create_statement(d: &Deferrable, dialect: Dialect) -> IndexCreateStatement {
    let mut stmt = Index::create();
    stmt.name(d.name).table(Alias::new(d.table));
    for (i, c) in d.columns.iter().enumerate() {
        if d.real_balances_only && i == 2 && dialect == Dialect::MySql {
            stmt.col(Alias::new("wraps"));
        }
        stmt.col(Alias::new(*c));
    }
    if d.real_balances_only && dialect != Dialect::MySql {
        stmt.and_where(Expr::col(Alias::new("wraps")).eq(Expr::cust("0")));
    }
    stmt
}

/// Drops the deferrable indexes that exist. Returns how many it dropped.
pub async fn defer<C: ConnectionTrait>(db: &C) -> Result<usize, DbErr> {
    let dialect = Dialect::of(db);
    let present = present(db).await?;
    let mut dropped = 0;
    for d in DEFERRABLE {
        if !present.iter().any(|p| p == d.name) {
            continue;
        }
        let stmt = Index::drop()
            .name(d.name)
            .table(Alias::new(d.table))
            .to_owned();
        db.execute_raw(dialect.backend().build(&stmt)).await?;
        dropped += 1;
    }
    Ok(dropped)
}

/// Builds the deferrable indexes the database lacks, one at a time, logging each. Returns how
/// many it built.
pub async fn restore<C: ConnectionTrait>(db: &C) -> Result<usize, DbErr> {
    restore_where(db, |_| true).await
}

/// Builds the deferrable indexes of the transfer tables the database lacks (not the holders
/// index, built after the balances are summed: `super::backfill_balances`). Returns how many
/// it built.
pub async fn restore_transfer_indexes<C: ConnectionTrait>(db: &C) -> Result<usize, DbErr> {
    restore_where(db, |d| d.table != BALANCES).await
}

/// [`restore`] for the lacking indexes `wanted` accepts.
async fn restore_where<C: ConnectionTrait>(
    db: &C,
    wanted: impl Fn(&Deferrable) -> bool,
) -> Result<usize, DbErr> {
    let dialect = Dialect::of(db);
    let mut lacking = missing(db).await?;
    lacking.retain(|d| wanted(d));
    for (i, d) in lacking.iter().enumerate() {
        let started = Instant::now();
        tracing::info!(
            index = d.name,
            table = d.table,
            step = i + 1,
            of = lacking.len(),
            "backfill: building an index"
        );
        db.execute_raw(dialect.backend().build(&create_statement(d, dialect)))
            .await?;
        tracing::info!(
            index = d.name,
            seconds = started.elapsed().as_secs_f64(),
            "backfill: index built"
        );
    }
    Ok(lacking.len())
}
