//! Related data fetched for a whole page at once: contract metadata, token rows, labels. The
//! GraphQL DataLoaders and the REST shims call these, one statement per kind per page.

use std::collections::{BTreeSet, HashMap};
use std::sync::LazyLock;

use sea_orm::{
    ColumnTrait, DbErr, EntityTrait, FromQueryResult, IdenStatic, QueryFilter, QueryResult,
    QuerySelect,
};

use super::{columns, ContractInfo, QueryError, QueryService, TokenInfo};
use crate::entity::{address_label, contract, nft_token};
use crate::store::dialect::{any_pair_of_chain, by_addresses, by_keys, key_join, Dialect, OR_ARMS};
use crate::store::lists::padded;
use crate::types::{Address, Chain, Uint256};

use address_label::Column as L;
use contract::Column as C;
use nft_token::Column as T;

/// (contract, token id) keys per read of [`QueryService::tokens`] on SQLite and MySQL: the
/// largest power of two within [`OR_ARMS`], which padding (`store/lists.rs`) keeps.
const KEYS_PER_READ: usize = 1 << (usize::BITS - 1 - OR_ARMS.leading_zeros());

impl QueryService {
    /// Metadata of these contracts; unknown contracts are absent from the map.
    pub async fn contracts(
        &self,
        chain: Chain,
        addresses: &[Address],
    ) -> Result<HashMap<Address, ContractInfo>, QueryError> {
        let rows: Vec<ContractRow> = self.by_address(chain, addresses).await?;
        Ok(rows.into_iter().map(|r| (r.address, r.info)).collect())
    }

    /// Token rows (mint, uri, metadata) of these NFTs; unknown ones are absent.
    pub async fn tokens(
        &self,
        chain: Chain,
        keys: &[(Address, Uint256)],
    ) -> Result<HashMap<(Address, Uint256), TokenInfo>, QueryError> {
        let keys: BTreeSet<(Address, Uint256)> = keys.iter().copied().collect();
        if keys.is_empty() {
            return Ok(HashMap::new());
        }
        let rows = if Dialect::of(&self.db).takes_key_arrays() {
            let stmt = by_keys(&TOKENS_BY_KEYS, chain.db_id(), keys.iter().copied());
            TokenRow::find_by_statement(stmt).all(&self.db).await?
        } else {
            // A dataloader's batch may hold more keys than an `OR` may (`OR_ARMS`): parts of a
            // power of two, so that padding keeps each within it.
            let keys: Vec<_> = keys.iter().copied().collect();
            let mut rows = Vec::with_capacity(keys.len());
            for part in keys.chunks(KEYS_PER_READ) {
                let read = nft_token::Entity::find()
                    .select_only()
                    .columns(TokenRow::COLUMNS)
                    .filter(any_pair_of_chain(
                        T::ChainId,
                        chain.db_id(),
                        (T::ContractAddress, T::TokenId),
                        padded(part.to_vec()),
                    ))
                    .into_model::<TokenRow>()
                    .all(&self.db)
                    .await?;
                rows.extend(read);
            }
            rows
        };
        Ok(rows
            .into_iter()
            .map(|r| ((r.contract_address, r.token_id), r.info))
            .collect())
    }

    /// Labels of these addresses; unlabelled ones are absent.
    pub async fn labels(
        &self,
        chain: Chain,
        addresses: &[Address],
    ) -> Result<HashMap<Address, String>, QueryError> {
        let rows: Vec<LabelRow> = self.by_address(chain, addresses).await?;
        Ok(rows.into_iter().map(|r| (r.address, r.label)).collect())
    }

    /// The rows of `R`'s table for these addresses on `chain` (each address once): on
    /// PostgreSQL one statement with the addresses as an array, elsewhere a padded `IN` list.
    async fn by_address<R: AddressRow>(
        &self,
        chain: Chain,
        addresses: &[Address],
    ) -> Result<Vec<R>, QueryError> {
        let keys: BTreeSet<Address> = addresses.iter().copied().collect();
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        Ok(if Dialect::of(&self.db).takes_key_arrays() {
            let stmt = by_addresses(R::by_address_sql(), chain.db_id(), keys);
            R::find_by_statement(stmt).all(&self.db).await?
        } else {
            R::Entity::find()
                .select_only()
                .columns(R::COLUMNS.iter().copied())
                .filter(R::CHAIN.eq(chain.db_id()))
                .filter(R::ADDRESS.is_in(padded(keys.into_iter().collect())))
                .into_model::<R>()
                .all(&self.db)
                .await?
        })
    }
}

/// A row read by address ([`QueryService::by_address`]): its columns, read by position.
trait AddressRow: FromQueryResult + Send + Sync {
    /// The table.
    type Entity: EntityTrait;
    /// The columns selected, in the order they are read.
    const COLUMNS: &'static [Column<Self>];
    /// The chain column.
    const CHAIN: Column<Self>;
    /// The address column.
    const ADDRESS: Column<Self>;

    /// The PostgreSQL statement reading the rows of an array of addresses ([`by_addresses`]).
    fn by_address_sql() -> &'static str;
}

/// A column of an [`AddressRow`]'s table.
type Column<R> = <<R as AddressRow>::Entity as EntityTrait>::Column;

/// The columns of `contracts` a page shows, read by position ([`columns`]).
struct ContractRow {
    address: Address,
    info: ContractInfo,
}

impl AddressRow for ContractRow {
    type Entity = contract::Entity;
    const COLUMNS: &'static [C] = &[
        C::Address,
        C::Standard,
        C::Name,
        C::Symbol,
        C::Decimals,
        C::Logo,
        C::PossibleSpam,
        C::Verified,
    ];
    const CHAIN: C = C::ChainId;
    const ADDRESS: C = C::Address;

    fn by_address_sql() -> &'static str {
        static SQL: LazyLock<String> =
            LazyLock::new(|| by_address_sql("contracts", ContractRow::COLUMNS));
        &SQL
    }
}

impl FromQueryResult for ContractRow {
    fn from_query_result(row: &QueryResult, _pre: &str) -> Result<Self, DbErr> {
        Ok(Self {
            address: columns::typed(row, 0)?,
            info: ContractInfo {
                standard: columns::typed(row, 1)?,
                name: columns::column(row, 2)?,
                symbol: columns::column(row, 3)?,
                decimals: columns::column::<i32>(row, 4)?.and_then(|d| u32::try_from(d).ok()),
                logo: columns::column(row, 5)?,
                possible_spam: columns::typed(row, 6)?,
                verified: columns::typed(row, 7)?,
            },
        })
    }
}

/// The columns of `address_labels` a page shows, read by position.
struct LabelRow {
    address: Address,
    label: String,
}

impl AddressRow for LabelRow {
    type Entity = address_label::Entity;
    const COLUMNS: &'static [L] = &[L::Address, L::Label];
    const CHAIN: L = L::ChainId;
    const ADDRESS: L = L::Address;

    fn by_address_sql() -> &'static str {
        static SQL: LazyLock<String> =
            LazyLock::new(|| by_address_sql("address_labels", LabelRow::COLUMNS));
        &SQL
    }
}

impl FromQueryResult for LabelRow {
    fn from_query_result(row: &QueryResult, _pre: &str) -> Result<Self, DbErr> {
        Ok(Self {
            address: columns::typed(row, 0)?,
            label: columns::typed(row, 1)?,
        })
    }
}

/// `SELECT <columns> FROM <table> WHERE chain_id = $1 AND address = ANY($2::bytea[])`
/// ([`by_addresses`]).
fn by_address_sql(table: &str, columns: &[impl IdenStatic]) -> String {
    let columns: Vec<&str> = columns.iter().map(IdenStatic::as_str).collect();
    format!(
        "SELECT {} FROM {table} WHERE chain_id = $1 AND address = ANY($2::bytea[])",
        columns.join(", ")
    )
}

/// The columns of `nft_tokens` a page shows, read by position ([`columns`]).
struct TokenRow {
    contract_address: Address,
    token_id: Uint256,
    info: TokenInfo,
}

impl TokenRow {
    /// The columns selected, in the order they are read.
    const COLUMNS: [T; 8] = [
        T::ContractAddress,
        T::TokenId,
        T::TokenUri,
        T::Metadata,
        T::BlockNumberMinted,
        T::MinterAddress,
        T::LastTokenUriSync,
        T::LastMetadataSync,
    ];
}

/// The PostgreSQL statement reading the token rows of a page's keys.
static TOKENS_BY_KEYS: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT {} FROM nft_tokens t {} WHERE t.chain_id = $1",
        TokenRow::COLUMNS
            .map(|c| format!("t.{}", c.as_str()))
            .join(", "),
        key_join("t", "contract_address", "token_id")
    )
});

impl FromQueryResult for TokenRow {
    fn from_query_result(row: &QueryResult, _pre: &str) -> Result<Self, DbErr> {
        Ok(Self {
            contract_address: columns::typed(row, 0)?,
            token_id: columns::typed(row, 1)?,
            info: TokenInfo {
                token_uri: columns::column(row, 2)?,
                metadata: columns::column(row, 3)?,
                block_number_minted: columns::column::<i64>(row, 4)?.map(|b| b.max(0) as u64),
                minter_address: columns::column(row, 5)?,
                last_token_uri_sync: columns::column(row, 6)?,
                last_metadata_sync: columns::column(row, 7)?,
            },
        })
    }
}
