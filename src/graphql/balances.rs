//! `Wallet.tokenBalances`: the `TokenBalance` node (a wallet's balance of one ERC20 token) and
//! its page builder ([`balances`]).

use async_graphql::{Context, Object};

use super::connection::{Connection, Listed};
use super::error::GqlError;
use super::loaders::{selects, ContractKey, Keys, Primed, Related};
use super::scalars::Uint256;
use super::token::{Token, CONTRACT_FIELDS};
use crate::query::{self, QueryService, TokenBalanceQuery};

/// The `TokenBalance` object.
pub struct TokenBalance {
    held: query::TokenBalance,
    token: Token,
}

impl Listed for TokenBalance {
    const CONNECTION: &'static str = "TokenBalanceConnection";
    const EDGE: &'static str = "TokenBalanceEdge";
}

/// A wallet's balance of one ERC20 token, from the wallet's whole transfer history.
#[Object]
impl TokenBalance {
    /// The token, to walk to its metadata and transfers.
    async fn token(&self) -> &Token {
        &self.token
    }

    /// The balance, exact, in the token's smallest unit.
    async fn balance(&self) -> Uint256 {
        self.held.balance.into()
    }

    /// The balance in whole tokens (`balance / 10^decimals`), written exactly; `null` when
    /// the token's decimals are unknown.
    async fn balance_decimal(&self) -> Result<Option<String>, GqlError> {
        let decimals = self.token.contract().await?.and_then(|c| c.decimals);
        Ok(decimals.map(|d| self.held.balance.to_decimal_scaled(d)))
    }
}

/// Runs `Wallet.tokenBalances`: one page, and the tokens' metadata in one batch when the
/// selection needs it.
pub async fn balances(
    ctx: &Context<'_>,
    service: &QueryService,
    q: TokenBalanceQuery,
    after: Option<&str>,
) -> Result<Connection<TokenBalance>, GqlError> {
    let page = service.token_balances(&q, after).await?;
    let node = ctx.look_ahead().field("edges").field("node");
    let mut keys = Keys::default();
    if node.field("balanceDecimal").exists() || selects(&node.field("token"), CONTRACT_FIELDS) {
        keys.contracts = page
            .edges
            .iter()
            .map(|e| ContractKey(e.node.contract))
            .collect();
    }
    let primed = Primed::load(Related::new(service.clone(), q.chain), keys).await?;
    Ok(Connection::from_page(page, |held| TokenBalance {
        token: Token::new(q.chain, held.contract, primed.clone()),
        held,
    }))
}
