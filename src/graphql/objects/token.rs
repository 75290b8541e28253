//! One ERC20 token: the `Token` object (`token(...)`, and the `token` of a balance), with its
//! metadata and transfers.

use std::borrow::Cow;
use std::sync::Arc;

use async_graphql::{Context, Object};

use super::stats::{self, TokenHolder};
use super::transfer_fields::{TokenTransfers, TransferScope};
use crate::graphql::connection::{nested_page_cost, Connection};
use crate::graphql::enums::Order;
use crate::graphql::error::GqlError;
use crate::graphql::loaders::{contract_key, include, Primed};
use crate::graphql::scalars::{Address, BlockNumber};
use crate::query::{ContractInfo, QueryService};
use crate::types::{self, Chain};

/// `Token` fields answered from the contract's metadata.
pub const CONTRACT_FIELDS: &[&str] = &[
    "name",
    "symbol",
    "decimals",
    "logo",
    "possibleSpam",
    "verifiedContract",
];

/// The `Token` object.
pub struct Token {
    chain: Chain,
    address: types::Address,
    primed: Arc<Primed>,
}

impl Token {
    /// `token(...)`: one statement for the metadata, when `ctx` selects it.
    pub async fn load(
        ctx: &Context<'_>,
        service: &QueryService,
        chain: Chain,
        address: types::Address,
    ) -> Result<Self, GqlError> {
        let wants = include(&ctx.look_ahead(), CONTRACT_FIELDS, &[], &[]);
        let primed = Primed::load(service, chain, contract_key(address), wants).await?;
        Ok(Self::new(chain, address, primed))
    }

    /// The token at `address`, its metadata read through `primed`.
    pub fn new(chain: Chain, address: types::Address, primed: Arc<Primed>) -> Self {
        Self {
            chain,
            address,
            primed,
        }
    }

    /// The token's metadata, when known.
    pub async fn contract(&self) -> Result<Option<Cow<'_, ContractInfo>>, GqlError> {
        self.primed.contract(self.address).await
    }
}

/// An ERC20 token contract: its metadata and its transfers. Metadata tokenql does not have is
/// `null`.
#[Object]
impl Token {
    /// The token's contract.
    async fn address(&self) -> Address {
        self.address.into()
    }

    /// The token's name, when known.
    async fn name(&self) -> Result<Option<String>, GqlError> {
        Ok(self.contract().await?.and_then(|c| c.name.clone()))
    }

    /// The token's symbol, when known.
    async fn symbol(&self) -> Result<Option<String>, GqlError> {
        Ok(self.contract().await?.and_then(|c| c.symbol.clone()))
    }

    /// The token's decimals, when known.
    async fn decimals(&self) -> Result<Option<i32>, GqlError> {
        let d = self.contract().await?.and_then(|c| c.decimals);
        Ok(d.and_then(|d| i32::try_from(d).ok()))
    }

    /// The URL of the token's logo, when known.
    async fn logo(&self) -> Result<Option<String>, GqlError> {
        Ok(self.contract().await?.and_then(|c| c.logo.clone()))
    }

    /// Whether the token is flagged as possible spam.
    async fn possible_spam(&self) -> Result<bool, GqlError> {
        Ok(self.contract().await?.is_some_and(|c| c.possible_spam))
    }

    /// Whether the token is verified.
    async fn verified_contract(&self) -> Result<bool, GqlError> {
        Ok(self.contract().await?.is_some_and(|c| c.verified))
    }

    /// Who holds the token, largest balance first unless `order: ASC` (ties by address), from
    /// the balances the indexer keeps (`getTokenOwners`). `SYNCED` once the token's whole
    /// history is indexed; before, only holders whose own history is complete are listed.
    #[graphql(complexity = "nested_page_cost(first, child_complexity)")]
    async fn holders(
        &self,
        ctx: &Context<'_>,
        #[graphql(default = 100, desc = "How many holders per page: 1 to 100.")] first: i32,
        #[graphql(desc = "The `endCursor` of the previous page, to get the next one.")]
        after: Option<String>,
        #[graphql(
            default,
            desc = "`DESC` (largest balance first, the default) or `ASC`."
        )]
        order: Order,
        #[graphql(
            desc = "The holders and balances after this block (after its last log); default: now. `SYNCED` only once the token's history is complete and the indexer has stored the block; a block above the chain's head is an error."
        )]
        at_block: Option<BlockNumber>,
    ) -> Result<Connection<TokenHolder>, GqlError> {
        let page = (first, after, at_block.as_ref());
        stats::token_holders(ctx, self.chain, self.address, order.into(), page).await
    }

    /// How many transfers the token has had (`getTokenStats`).
    async fn stats(&self, ctx: &Context<'_>) -> Result<stats::TokenStats, GqlError> {
        stats::token_counts(ctx, self.chain, self.address).await
    }

    /// `transfers`, declared with the other transfer fields: [`TokenTransfers`].
    #[graphql(flatten)]
    async fn transfers_field(&self) -> TokenTransfers {
        TokenTransfers(TransferScope::contract(self.chain, self.address))
    }
}
