//! The one seam between tokenql and the three SQL dialects it runs on. Everything that differs
//! between SQLite, PostgreSQL and MySQL/MariaDB is decided here — quoting, conflict clauses,
//! bind limits, the PostgreSQL key join over arrays, keyset comparisons, row locks, replicas —
//! so the rest of `store/` and `query/` asks a question ("does this dialect take key arrays?")
//! instead of branching on the backend.

use sea_orm::sea_query::{ArrayType, Expr, SimpleExpr};
use sea_orm::{ColumnTrait, Condition, ConnectionTrait, DbBackend, Statement, Value};

use crate::types::{Address, Uint256};

/// Bind parameters per statement: SQLite's `SQLITE_MAX_VARIABLE_NUMBER` (32,766 since 3.32).
const SQLITE_PARAMS: usize = 32_766;
/// Bind parameters per statement on MySQL/MariaDB (a 16-bit count in the protocol).
const MYSQL_PARAMS: usize = 65_535;

/// A SQL dialect tokenql runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    Postgres,
    MySql,
}

impl From<DbBackend> for Dialect {
    fn from(b: DbBackend) -> Self {
        match b {
            DbBackend::Postgres => Dialect::Postgres,
            DbBackend::MySql => Dialect::MySql,
            _ => Dialect::Sqlite,
        }
    }
}

impl Dialect {
    /// The dialect of a connection.
    pub fn of(db: &impl ConnectionTrait) -> Self {
        db.get_database_backend().into()
    }

    /// sea-orm's name for it.
    pub fn backend(self) -> DbBackend {
        match self {
            Dialect::Sqlite => DbBackend::Sqlite,
            Dialect::Postgres => DbBackend::Postgres,
            Dialect::MySql => DbBackend::MySql,
        }
    }

    /// An identifier, quoted.
    pub fn quote(self, name: &str) -> String {
        match self {
            Dialect::MySql => format!("`{name}`"),
            _ => format!("\"{name}\""),
        }
    }

    /// ` ON CONFLICT (key) DO NOTHING`, or MySQL's no-op `ON DUPLICATE KEY UPDATE`.
    pub fn insert_ignore(self, key: &[&str]) -> String {
        match self {
            Dialect::MySql => {
                let k = self.quote(key[0]);
                format!(" ON DUPLICATE KEY UPDATE {k} = {k}")
            }
            _ => format!(
                " ON CONFLICT ({}) DO NOTHING",
                key.iter()
                    .map(|c| self.quote(c))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }

    /// In an upsert of `table`, the stored value of `col` and the one being inserted.
    pub fn upsert_values(self, table: &str, col: &str) -> (String, String) {
        match self {
            // In ON DUPLICATE KEY UPDATE a bare column is the stored value.
            Dialect::MySql => (format!("`{col}`"), format!("VALUES(`{col}`)")),
            _ => (
                format!("\"{table}\".\"{col}\""),
                format!("\"excluded\".\"{col}\""),
            ),
        }
    }

    /// How many bind parameters one statement may carry; `None` where lists travel as arrays
    /// (PostgreSQL: [`Dialect::takes_key_arrays`]).
    pub fn bind_limit(self) -> Option<usize> {
        match self {
            Dialect::Sqlite => Some(SQLITE_PARAMS),
            Dialect::MySql => Some(MYSQL_PARAMS),
            Dialect::Postgres => None,
        }
    }

    /// Whether lists of keys travel as arrays joined with `UNNEST` ([`by_keys`]): planned in
    /// well under a millisecond and run as one index probe per key, where an `OR` of 200
    /// `(contract AND id)` pairs costs ~10 ms of planning alone (`benches/scale`). PostgreSQL.
    pub fn takes_key_arrays(self) -> bool {
        self == Dialect::Postgres
    }

    /// Whether a row-value comparison `(a, b) > (x, y)` bounds an index range (PostgreSQL);
    /// elsewhere a keyset is written `a >= x AND (a > x OR b > y)` (not every MariaDB version
    /// uses an index for row values).
    pub fn row_keysets(self) -> bool {
        self == Dialect::Postgres
    }

    /// Whether writers must lock rows to serialize (SQLite has one writer at a time).
    pub fn locks_rows(self) -> bool {
        self != Dialect::Sqlite
    }

    /// `MIN(column)` (`least`) or `MAX(column)` of a binary column in a grouped select:
    /// PostgreSQL has no `min(bytea)`, so there the first of the group's values in that order.
    pub fn binary_extreme(self, column: &str, least: bool) -> SimpleExpr {
        let c = self.quote(column);
        match (self, least) {
            (Dialect::Postgres, true) => Expr::cust(format!("(array_agg({c} ORDER BY {c}))[1]")),
            (Dialect::Postgres, false) => {
                Expr::cust(format!("(array_agg({c} ORDER BY {c} DESC))[1]"))
            }
            (_, true) => Expr::cust(format!("MIN({c})")),
            (_, false) => Expr::cust(format!("MAX({c})")),
        }
    }

    /// A transfer amount's stored bytes (`erc20_transfers.value`, `nft_transfers.amount`):
    /// without leading zero bytes where a binary column has a variable length (PostgreSQL's
    /// `bytea`, SQLite's `BLOB`: a typical amount saves ~20 of its 32 bytes), all 32 in
    /// MySQL's fixed `BINARY(32)`, which would pad a shorter value on the right. Amounts are
    /// never compared or ordered in SQL; balances and token ids, which are, keep 32 bytes.
    pub fn amount_bytes(self, v: &Uint256) -> Vec<u8> {
        match self {
            Dialect::MySql => v.to_be_bytes().to_vec(),
            _ => v.to_compact_bytes(),
        }
    }

    /// Whether streaming read replicas are supported (PostgreSQL).
    pub fn has_replicas(self) -> bool {
        self == Dialect::Postgres
    }
}

/// Arms of an `OR` per statement ([`any_of_chain`]): SQLite parses an `OR` of n arms as an
/// expression n deep and refuses one deeper than 1,000 ("Expression tree is too large",
/// `SQLITE_MAX_EXPR_DEPTH`).
pub const OR_ARMS: usize = 500;

/// Rows of chain `chain_id` that match any of `arms`, written `(chain = c AND arm) OR (chain = c
/// AND arm) ...`: the chain's condition inside every arm. SQLite does not distribute `chain = c
/// AND (arm OR arm ...)` into the arms, so that form reads every row of the chain (an index range
/// on the chain alone), while each whole arm is an index search of its own (a `MULTI-INDEX OR`).
/// MySQL/MariaDB make a range of each arm either way. No arms: no rows; at most [`OR_ARMS`].
/// The result is a conjunction (of the one `OR`): what a caller `add`s to it narrows it.
pub fn any_of_chain(
    chain: impl ColumnTrait,
    chain_id: i64,
    arms: impl IntoIterator<Item = Condition>,
) -> Condition {
    let (any, n) = arms
        .into_iter()
        .fold((Condition::any(), 0), |(any, n), arm| {
            (
                any.add(Condition::all().add(chain.eq(chain_id)).add(arm)),
                n + 1,
            )
        });
    debug_assert!(n <= OR_ARMS, "{n} arms: SQLite refuses an OR this deep");
    Condition::all().add(any)
}

/// [`any_of_chain`] over (a, b) pairs: rows of the chain whose `a` and `b` are one of `pairs`.
pub fn any_pair_of_chain<A: Into<Value>, B: Into<Value>>(
    chain: impl ColumnTrait,
    chain_id: i64,
    (a, b): (impl ColumnTrait, impl ColumnTrait),
    pairs: impl IntoIterator<Item = (A, B)>,
) -> Condition {
    any_of_chain(
        chain,
        chain_id,
        pairs
            .into_iter()
            .map(|(x, y)| Condition::all().add(a.eq(x)).add(b.eq(y))),
    )
}

/// `JOIN UNNEST($2::bytea[], $3::bytea[]) AS k(c, i) ON {t}.{contract} = k.c AND {t}.{id} = k.i`:
/// the key join of [`by_keys`] statements, over table alias `t`.
pub fn key_join(t: &str, contract: &str, id: &str) -> String {
    format!(
        "JOIN UNNEST($2::bytea[], $3::bytea[]) AS k(c, i) ON {t}.{contract} = k.c AND {t}.{id} = k.i"
    )
}

/// A PostgreSQL statement over a list of (contract, token id) keys: `$1` the chain, `$2`/`$3`
/// the contracts and token ids as arrays (see [`key_join`]).
pub fn by_keys(
    sql: &str,
    chain_id: i64,
    keys: impl IntoIterator<Item = (Address, Uint256)>,
) -> Statement {
    let (contracts, ids): (Vec<Value>, Vec<Value>) = keys
        .into_iter()
        .map(|(c, t)| (Value::from(c), Value::from(t)))
        .unzip();
    Statement::from_sql_and_values(
        DbBackend::Postgres,
        sql,
        [
            Value::from(chain_id),
            Value::Array(ArrayType::Bytes, Some(Box::new(contracts))),
            Value::Array(ArrayType::Bytes, Some(Box::new(ids))),
        ],
    )
}

/// A PostgreSQL statement over a list of addresses: `$1` the chain, `$2` the addresses as a
/// `text[]` array (`address = ANY($2::bytea[])`): one statement text and one parameter whatever
/// the list's length.
pub fn by_addresses(
    sql: &str,
    chain_id: i64,
    addresses: impl IntoIterator<Item = Address>,
) -> Statement {
    let addresses: Vec<Value> = addresses.into_iter().map(Value::from).collect();
    Statement::from_sql_and_values(
        DbBackend::Postgres,
        sql,
        [
            Value::from(chain_id),
            Value::Array(ArrayType::Bytes, Some(Box::new(addresses))),
        ],
    )
}

/// A PostgreSQL statement over (holder, token) address pairs: `$1` the chain, `$2`/`$3` the
/// holders and tokens as arrays (`UNNEST($2::bytea[], $3::bytea[]) AS k(o, c)`).
pub fn by_address_pairs(sql: &str, chain_id: i64, pairs: &[(Address, Address)]) -> Statement {
    let (owners, tokens): (Vec<Value>, Vec<Value>) = pairs
        .iter()
        .map(|(o, t)| (Value::from(*o), Value::from(*t)))
        .unzip();
    Statement::from_sql_and_values(
        DbBackend::Postgres,
        sql,
        [
            Value::from(chain_id),
            Value::Array(ArrayType::Bytes, Some(Box::new(owners))),
            Value::Array(ArrayType::Bytes, Some(Box::new(tokens))),
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entity::{erc20_balance, nft_holding, nft_token, nft_transfer};
    use crate::store::testing::{close, sqlite};
    use sea_orm::{EntityTrait, QueryFilter, QueryTrait, Select};

    /// SQLite's plan of `select`, one line per step.
    async fn sqlite_plan<E: EntityTrait>(db: &impl ConnectionTrait, select: Select<E>) -> String {
        let stmt = select.build(DbBackend::Sqlite);
        let explain = Statement {
            sql: format!("EXPLAIN QUERY PLAN {}", stmt.sql),
            ..stmt
        };
        let rows = db.query_all_raw(explain).await.expect("explain");
        rows.iter()
            .map(|r| r.try_get::<String>("", "detail").expect("detail"))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// SQLite's plan of reading the rows of `E` that match `cond`.
    async fn plan<E: EntityTrait>(db: &impl ConnectionTrait, cond: Condition) -> String {
        sqlite_plan(db, E::find().filter(cond)).await
    }

    /// The (contract, token id) and (holder, token) lookups of the write path and the query
    /// service, and a wallet's NFT moves (sent or received), search an index for every arm on
    /// SQLite (as freshly migrated, without statistics, as a new database is); the chain's
    /// condition outside the `OR`, the form [`any_of_chain`] replaces, reads every row of the
    /// chain.
    #[tokio::test]
    async fn sqlite_searches_an_index_for_every_arm() {
        use nft_transfer::Column as T;
        let (db, path) = sqlite("any_of_chain").await;
        let id = Uint256::from_u64;
        let tokens = [(Address::ZERO, id(1)), (Address::ZERO, id(2))];
        let pairs = [(Address::ZERO, Address::ZERO); 2];
        let wallet = [
            Condition::all().add(T::FromAddress.eq(Address::ZERO)),
            Condition::all().add(T::ToAddress.eq(Address::ZERO)),
        ];
        use {erc20_balance::Column as b, nft_holding::Column as h, nft_token::Column as k};
        fn pair<X: Into<Value>, Y: Into<Value>>(
            (chain, a, b): (impl ColumnTrait, impl ColumnTrait, impl ColumnTrait),
            keys: [(X, Y); 2],
        ) -> Condition {
            any_pair_of_chain(chain, 1, (a, b), keys)
        }
        let plans = [
            plan::<nft_transfer::Entity>(
                &db,
                pair((T::ChainId, T::ContractAddress, T::TokenId), tokens),
            )
            .await,
            plan::<nft_transfer::Entity>(&db, any_of_chain(T::ChainId, 1, wallet)).await,
            plan::<nft_holding::Entity>(
                &db,
                pair((h::ChainId, h::ContractAddress, h::TokenId), tokens),
            )
            .await,
            plan::<nft_token::Entity>(
                &db,
                pair((k::ChainId, k::ContractAddress, k::TokenId), tokens),
            )
            .await,
            plan::<erc20_balance::Entity>(
                &db,
                pair((b::ChainId, b::OwnerAddress, b::ContractAddress), pairs),
            )
            .await,
        ];
        for plan in plans {
            assert!(plan.starts_with("MULTI-INDEX OR"), "{plan}");
            assert!(!plan.contains("(chain_id=?)"), "{plan}");
        }
        let outside = tokens.iter().fold(Condition::any(), |any, (c, t)| {
            any.add(
                Condition::all()
                    .add(T::ContractAddress.eq(*c))
                    .add(T::TokenId.eq(*t)),
            )
        });
        let select = nft_transfer::Entity::find()
            .filter(T::ChainId.eq(1))
            .filter(outside);
        let plan = sqlite_plan(&db, select).await;
        assert!(plan.contains("(chain_id=?)"), "{plan}");
        close(db, &path).await;
    }

    /// No arms match no row; one arm without a condition matches the chain's rows; [`OR_ARMS`]
    /// arms run on SQLite, twice as many do not.
    #[tokio::test]
    async fn no_arms_match_nothing() {
        use crate::entity::contract::{Column as C, Entity as Contract};
        let (db, path) = sqlite("no_arms").await;
        db.execute_unprepared(
            "INSERT INTO contracts (chain_id, address, possible_spam, verified) \
             VALUES (1, zeroblob(20), 0, 0)",
        )
        .await
        .expect("a row");
        let count = |arms: Vec<Condition>| {
            let db = &db;
            async move {
                Contract::find()
                    .filter(any_of_chain(C::ChainId, 1, arms))
                    .all(db)
                    .await
                    .expect("read")
                    .len()
            }
        };
        assert_eq!(count(vec![]).await, 0);
        assert_eq!(count(vec![Condition::all()]).await, 1);
        // As many arms as a statement may hold run; twice as many are refused.
        let arms = |n| vec![Condition::all().add(C::Address.eq(Address::ZERO)); n];
        assert_eq!(count(arms(OR_ARMS)).await, 1);
        let deep = (0..2 * OR_ARMS).fold(Condition::any(), |any, _| {
            any.add(
                Condition::all()
                    .add(C::ChainId.eq(1))
                    .add(C::Address.eq(Address::ZERO)),
            )
        });
        let refused = Contract::find().filter(deep).all(&db).await;
        assert!(refused.is_err_and(|e| e.to_string().contains("too large")));
        close(db, &path).await;
    }

    #[test]
    fn conflict_clauses_per_dialect() {
        assert_eq!(
            Dialect::MySql.insert_ignore(&["a", "b"]),
            " ON DUPLICATE KEY UPDATE `a` = `a`"
        );
        assert_eq!(
            Dialect::Sqlite.insert_ignore(&["a", "b"]),
            " ON CONFLICT (\"a\", \"b\") DO NOTHING"
        );
        assert_eq!(
            Dialect::Postgres.upsert_values("contracts", "name"),
            (
                "\"contracts\".\"name\"".to_string(),
                "\"excluded\".\"name\"".to_string()
            )
        );
    }

    #[test]
    fn the_key_join_binds_the_chain_and_two_arrays() {
        let sql = format!(
            "SELECT t.* FROM nft_tokens t {}",
            key_join("t", "contract_address", "token_id")
        );
        let t = |n: u64| (Address::ZERO, Uint256::from_u64(n));
        let stmt = by_keys(&sql, 1, [t(1), t(2)]);
        assert!(stmt.sql.contains("k.c AND t.token_id = k.i"));
        assert_eq!(stmt.values.map(|v| v.0.len()), Some(3));
    }
}
