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

use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::ConnectionTrait;

mod conversion;
mod sql;

use conversion::Conversion;

pub struct Migration;

/// Named explicitly: the derived name is the file's, and this file is a folder's `mod.rs`.
/// The release that introduced it recorded it as `mod` ([`crate::repair_recorded_names`]).
impl MigrationName for Migration {
    fn name(&self) -> &str {
        crate::BINARY_COLUMNS
    }
}

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

impl Spec {
    /// What column `name` holds, if it is converted.
    fn kind_of(&self, name: &str) -> Option<Kind> {
        self.columns
            .iter()
            .find(|(n, ..)| *n == name)
            .map(|(_, kind, _)| *kind)
    }

    /// Whether key column `name` holds text that is not converted (the other unconverted key
    /// columns are integers).
    fn is_text_key(&self, name: &str) -> bool {
        TEXT_KEYS.contains(&name)
    }
}

/// The unconverted key columns that hold text, in every table of [`TABLES`].
const TEXT_KEYS: &[&str] = &["scope", "stream_id"];

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
