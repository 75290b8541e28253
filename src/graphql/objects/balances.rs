//! `Wallet.tokenBalances`: the `TokenBalance` node (a wallet's balance of one ERC20 token) and
//! its page builder ([`balances`]).

use async_graphql::{Context, Object};

use super::token::{Token, CONTRACT_FIELDS};
use crate::graphql::connection::{Connection, Listed};
use crate::graphql::error::GqlError;
use crate::graphql::fast_path::plain::PlainNode;
use crate::graphql::loaders::{selects, Primed};
use crate::graphql::scalars::Uint256;
use crate::query::{self, Include, QueryService, TokenBalanceQuery};

/// The `TokenBalance` object.
pub struct TokenBalance {
    held: query::TokenBalance,
    token: Token,
}

impl Listed for TokenBalance {
    const CONNECTION: &'static str = "TokenBalanceConnection";
    const EDGE: &'static str = "TokenBalanceEdge";
}

/// Every field goes through the ordinary resolvers.
impl PlainNode for TokenBalance {}

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
    let node = ctx.look_ahead().field("edges").field("node");
    let wants = Include {
        contracts: node.field("balanceDecimal").exists()
            || selects(&node.field("token"), CONTRACT_FIELDS),
        ..Include::NONE
    };
    let answer = service.token_balances(&q, after, wants).await?;
    let primed = Primed::new(service, q.chain, answer.related);
    Ok(Connection::from_page(answer.page, |held| TokenBalance {
        token: Token::new(q.chain, held.contract, primed.clone()),
        held,
    }))
}
