//! ERC20 token metadata by address or by symbol (`getTokenMetadata`,
//! `getTokenMetadataBySymbol`): what the contract row holds — the name, symbol and decimals the
//! contract answered by `eth_call` or a token list gave, the token list's logo, the spam and
//! verified flags — and the address's label. NFT contracts (ERC721, ERC1155) are not tokens
//! here.

use sea_orm::sea_query::{Expr, ExprTrait, Func};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect};

use super::{ContractInfo, QueryError, QueryService};
use crate::entity::contract;
use crate::types::{Address, Chain, TokenStandard};

/// Most contracts a symbol lookup answers per symbol.
pub const MAX_PER_SYMBOL: u64 = 100;

/// What tokenql knows of one ERC20 token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenMeta {
    /// The token contract.
    pub address: Address,
    /// Its metadata and flags.
    pub info: ContractInfo,
    /// The address's label, if it has one.
    pub label: Option<String>,
}

/// Whether a contract row can be an ERC20 token's (a contract of unknown standard can: a token
/// list names it, or its transfers are not decoded yet).
fn is_token(info: &ContractInfo) -> bool {
    matches!(info.standard, None | Some(TokenStandard::Erc20))
}

impl QueryService {
    /// The metadata of each of `addresses`, in their order; `None` for an address tokenql holds
    /// no token row of.
    pub async fn token_metadata(
        &self,
        chain: Chain,
        addresses: &[Address],
    ) -> Result<Vec<Option<TokenMeta>>, QueryError> {
        let (contracts, labels) = futures_util::try_join!(
            self.contracts(chain, addresses),
            self.labels(chain, addresses),
        )?;
        Ok(addresses
            .iter()
            .map(|a| {
                let info = contracts.get(a).filter(|i| is_token(i))?;
                Some(TokenMeta {
                    address: *a,
                    info: info.clone(),
                    label: labels.get(a).cloned(),
                })
            })
            .collect())
    }

    /// The tokens whose symbol is one of `symbols` (compared without regard to letter case), in
    /// the order of `symbols`, then by address; at most [`MAX_PER_SYMBOL`] per symbol.
    pub async fn tokens_by_symbol(
        &self,
        chain: Chain,
        symbols: &[String],
    ) -> Result<Vec<TokenMeta>, QueryError> {
        let mut addresses: Vec<Address> = Vec::new();
        for symbol in symbols {
            let found: Vec<Address> = contract::Entity::find()
                .select_only()
                .column(contract::Column::Address)
                .filter(contract::Column::ChainId.eq(chain.db_id()))
                .filter(
                    Expr::expr(Func::lower(Expr::col(contract::Column::Symbol)))
                        .eq(symbol.to_lowercase()),
                )
                .order_by_asc(contract::Column::Address)
                .limit(MAX_PER_SYMBOL)
                .into_tuple()
                .all(&self.db)
                .await?;
            for a in found {
                if !addresses.contains(&a) {
                    addresses.push(a);
                }
            }
        }
        let found = self.token_metadata(chain, &addresses).await?;
        Ok(found.into_iter().flatten().collect())
    }
}
