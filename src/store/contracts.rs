//! Contract rows: reads for the indexer's metadata worker, the spam heuristics and `tokenql
//! contract show`; the writes of names, symbols, decimals and logos, from `eth_call` (what
//! the contract answered wins) or from token lists (fallbacks, [`fill_contract_meta`]). The
//! spam / verified flags are written by [`super::flags`]; the APIs read contracts through
//! [`crate::query`].

use sea_orm::sea_query::{Expr, OnConflict};
use sea_orm::{
    ColumnTrait, Condition, ConnectionTrait, DbErr, EntityTrait, QueryFilter, QueryOrder,
    QuerySelect,
};

use crate::entity::contract;
use crate::types::{Address, Chain, TokenStandard};

/// A stored contract. Flag sources are as stored: callers decide what an unreadable one means.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredContract {
    /// The chain's id as stored.
    pub chain_id: i64,
    /// The contract's address.
    pub address: Address,
    /// `ERC20`, `ERC721` or `ERC1155` once known.
    pub standard: Option<TokenStandard>,
    /// `name()`, or a token list's name.
    pub name: Option<String>,
    /// `symbol()`, or a token list's symbol.
    pub symbol: Option<String>,
    /// `decimals()`, or a token list's decimals.
    pub decimals: Option<i32>,
    /// A token list's logo URL.
    pub logo: Option<String>,
    /// Flagged as possible spam (by a list, the heuristics or an admin).
    pub possible_spam: bool,
    /// Flagged as a verified collection (by a list or an admin).
    pub verified: bool,
    /// Where `possible_spam` came from (see [`super::flags::FlagSource`]), as stored.
    pub spam_source: Option<String>,
    /// Where `verified` came from, as stored.
    pub verified_source: Option<String>,
}

impl From<contract::Model> for StoredContract {
    fn from(m: contract::Model) -> Self {
        StoredContract {
            chain_id: m.chain_id,
            address: m.address,
            standard: m.standard,
            name: m.name,
            symbol: m.symbol,
            decimals: m.decimals,
            logo: m.logo,
            possible_spam: m.possible_spam,
            verified: m.verified,
            spam_source: m.spam_source,
            verified_source: m.verified_source,
        }
    }
}

fn rows(models: Vec<contract::Model>) -> Vec<StoredContract> {
    models.into_iter().map(StoredContract::from).collect()
}

/// One contract, if stored.
pub async fn get<C: ConnectionTrait>(
    db: &C,
    chain: Chain,
    address: Address,
) -> Result<Option<StoredContract>, DbErr> {
    Ok(contract::Entity::find_by_id((chain.db_id(), address))
        .one(db)
        .await?
        .map(StoredContract::from))
}

/// The stored contracts among `addresses` of `chain` (one statement: callers keep the list
/// short).
pub async fn among<C: ConnectionTrait>(
    db: &C,
    chain: Chain,
    addresses: &[Address],
) -> Result<Vec<StoredContract>, DbErr> {
    Ok(rows(
        contract::Entity::find()
            .filter(contract::Column::ChainId.eq(chain.db_id()))
            .filter(contract::Column::Address.is_in(addresses.iter().copied()))
            .all(db)
            .await?,
    ))
}

/// Up to `limit` contracts of every chain, by (chain id, address), after `after` (a previous
/// page's last row's `(chain_id, address)`).
pub async fn page<C: ConnectionTrait>(
    db: &C,
    after: Option<(i64, Address)>,
    limit: u64,
) -> Result<Vec<StoredContract>, DbErr> {
    let mut find = contract::Entity::find();
    if let Some((c, a)) = after {
        find = find.filter(
            Condition::any().add(contract::Column::ChainId.gt(c)).add(
                Condition::all()
                    .add(contract::Column::ChainId.eq(c))
                    .add(contract::Column::Address.gt(a)),
            ),
        );
    }
    Ok(rows(
        find.order_by_asc(contract::Column::ChainId)
            .order_by_asc(contract::Column::Address)
            .limit(limit)
            .all(db)
            .await?,
    ))
}

/// Up to `limit` contracts of `chain` never read by `eth_call`.
pub async fn unread<C: ConnectionTrait>(
    db: &C,
    chain: Chain,
    limit: u64,
) -> Result<Vec<StoredContract>, DbErr> {
    Ok(rows(
        contract::Entity::find()
            .filter(contract::Column::ChainId.eq(chain.db_id()))
            .filter(contract::Column::MetadataFetchedAt.is_null())
            .limit(limit)
            .all(db)
            .await?,
    ))
}

/// What to store after reading a contract by `eth_call`: the values written, whole (the
/// caller merges them with what was stored).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContractRead {
    /// `ERC20`, `ERC721` or `ERC1155`, when known.
    pub standard: Option<TokenStandard>,
    /// The contract's name.
    pub name: Option<String>,
    /// The contract's symbol.
    pub symbol: Option<String>,
    /// The contract's decimals.
    pub decimals: Option<i32>,
    /// When it was read (Unix ms): the contract is not read again.
    pub read_at: i64,
}

/// Records a contract's read (`chain_id` as [`StoredContract`] has it).
pub async fn record_read<C: ConnectionTrait>(
    db: &C,
    chain_id: i64,
    address: Address,
    read: ContractRead,
) -> Result<(), DbErr> {
    contract::Entity::update_many()
        .col_expr(contract::Column::Standard, Expr::value(read.standard))
        .col_expr(contract::Column::Name, Expr::value(read.name))
        .col_expr(contract::Column::Symbol, Expr::value(read.symbol))
        .col_expr(contract::Column::Decimals, Expr::value(read.decimals))
        .col_expr(
            contract::Column::MetadataFetchedAt,
            Expr::value(read.read_at),
        )
        .filter(contract::Column::ChainId.eq(chain_id))
        .filter(contract::Column::Address.eq(address))
        .exec(db)
        .await?;
    Ok(())
}

/// Metadata of one token contract, as a token list or `eth_call` gives it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContractMeta {
    pub name: Option<String>,
    pub symbol: Option<String>,
    pub decimals: Option<u8>,
    pub logo: Option<String>,
}

/// Upserts names, symbols, decimals and logos, overwriting what is stored (values known to be
/// right; a token list's go through [`fill_contract_meta`]). Returns the number of rows given.
pub async fn upsert_contract_meta<C: ConnectionTrait>(
    db: &C,
    chain: Chain,
    metas: &[(Address, ContractMeta)],
) -> Result<usize, DbErr> {
    let update = OnConflict::columns([contract::Column::ChainId, contract::Column::Address])
        .update_columns([
            contract::Column::Name,
            contract::Column::Symbol,
            contract::Column::Decimals,
            contract::Column::Logo,
        ])
        .to_owned();
    write_contract_meta(db, chain, metas, update).await
}

/// Fills in names, symbols and decimals where none is known yet (values read by `eth_call`
/// win), and sets logos — what a token list is trusted for. Creates unknown contracts' rows.
/// Returns the number of rows given.
pub async fn fill_contract_meta<C: ConnectionTrait>(
    db: &C,
    chain: Chain,
    metas: &[(Address, ContractMeta)],
) -> Result<usize, DbErr> {
    let dialect = super::dialect::Dialect::of(db);
    // The stored value unless NULL, else the new one; `new_first` the other way round.
    let keep = |col: &str, new_first: bool| -> Expr {
        let (old, new) = dialect.upsert_values("contracts", col);
        let (a, b) = if new_first { (new, old) } else { (old, new) };
        Expr::cust(format!("COALESCE({a}, {b})"))
    };
    let fill = OnConflict::columns([contract::Column::ChainId, contract::Column::Address])
        .value(contract::Column::Name, keep("name", false))
        .value(contract::Column::Symbol, keep("symbol", false))
        .value(contract::Column::Decimals, keep("decimals", false))
        .value(contract::Column::Logo, keep("logo", true))
        .to_owned();
    write_contract_meta(db, chain, metas, fill).await
}

/// Writes one row per address of `metas` (the last entry wins: PostgreSQL refuses to upsert a
/// row twice in one statement), settling conflicts with `on_conflict`. Returns the number of
/// rows written.
async fn write_contract_meta<C: ConnectionTrait>(
    db: &C,
    chain: Chain,
    metas: &[(Address, ContractMeta)],
    on_conflict: OnConflict,
) -> Result<usize, DbErr> {
    let metas: std::collections::BTreeMap<&Address, &ContractMeta> =
        metas.iter().map(|(a, m)| (a, m)).collect();
    let rows: Vec<contract::ActiveModel> = metas
        .into_iter()
        .map(|(a, m)| bare(chain, *a, (*m).clone()).into())
        .collect();
    for chunk in rows.chunks(super::CHUNK) {
        contract::Entity::insert_many(chunk.to_vec())
            .on_conflict(on_conflict.clone())
            .exec_without_returning(db)
            .await?;
    }
    Ok(rows.len())
}

/// A contract row with nothing known but these metadata.
pub(super) fn bare(chain: Chain, address: Address, m: ContractMeta) -> contract::Model {
    contract::Model {
        chain_id: chain.db_id(),
        address,
        standard: None,
        name: m.name,
        symbol: m.symbol,
        decimals: m.decimals.map(i32::from),
        logo: m.logo,
        possible_spam: false,
        verified: false,
        metadata_fetched_at: None,
        spam_source: None,
        verified_source: None,
    }
}
