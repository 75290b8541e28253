//! Related data fetched for a whole page at once: contract metadata, token rows, labels. The
//! GraphQL DataLoaders and the REST shims call these, one statement per kind per page.

use std::collections::{BTreeSet, HashMap};
use std::sync::LazyLock;

use sea_orm::{
    ColumnTrait, Condition, DbErr, EntityTrait, FromQueryResult, IdenStatic, QueryFilter,
    QueryResult, QuerySelect,
};

use super::{columns, ContractInfo, QueryError, QueryService, TokenInfo};
use crate::entity::{address_label, contract, nft_token};
use crate::store::dialect::{by_keys, key_join, Dialect};
use crate::store::lists::padded;
use crate::types::{Address, Chain, Uint256};

use nft_token::Column as T;

impl QueryService {
    /// Metadata of these contracts; unknown contracts are absent from the map.
    pub async fn contracts(
        &self,
        chain: Chain,
        addresses: &[Address],
    ) -> Result<HashMap<Address, ContractInfo>, QueryError> {
        let keys: BTreeSet<String> = addresses.iter().map(|a| a.to_string()).collect();
        if keys.is_empty() {
            return Ok(HashMap::new());
        }
        let rows = contract::Entity::find()
            .filter(contract::Column::ChainId.eq(chain.db_id()))
            .filter(contract::Column::Address.is_in(padded(keys.into_iter().collect())))
            .all(&self.db)
            .await?;
        rows.into_iter()
            .map(|r| {
                Ok((
                    r.address,
                    ContractInfo {
                        standard: r.standard,
                        name: r.name,
                        symbol: r.symbol,
                        decimals: r.decimals.and_then(|d| u32::try_from(d).ok()),
                        logo: r.logo,
                        possible_spam: r.possible_spam,
                        verified: r.verified,
                    },
                ))
            })
            .collect()
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
            let mut any = Condition::any();
            for (a, t) in &padded(keys.iter().copied().collect()) {
                any = any.add(
                    Condition::all()
                        .add(T::ContractAddress.eq(*a))
                        .add(T::TokenId.eq(*t)),
                );
            }
            nft_token::Entity::find()
                .select_only()
                .columns(TokenRow::COLUMNS)
                .filter(T::ChainId.eq(chain.db_id()))
                .filter(any)
                .into_model::<TokenRow>()
                .all(&self.db)
                .await?
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
        let keys: BTreeSet<String> = addresses.iter().map(|a| a.to_string()).collect();
        if keys.is_empty() {
            return Ok(HashMap::new());
        }
        let rows = address_label::Entity::find()
            .filter(address_label::Column::ChainId.eq(chain.db_id()))
            .filter(address_label::Column::Address.is_in(padded(keys.into_iter().collect())))
            .all(&self.db)
            .await?;
        rows.into_iter().map(|r| Ok((r.address, r.label))).collect()
    }
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
