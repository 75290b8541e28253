//! ERC20 transfers: the `Erc20Transfer` node of `erc20Transfers`, `Wallet.erc20Transfers` and
//! `Token.transfers`, and the page builder they share ([`resolve`]).

use std::borrow::Cow;
use std::sync::Arc;

use async_graphql::{Context, Object};

use super::event_fields::{self, LogFields, Parties};
use crate::graphql::connection::{Connection, Listed};
use crate::graphql::error::GqlError;
use crate::graphql::fast_path::plain::{nullable, text, Leaf, PlainNode};
use crate::graphql::loaders::Primed;
use crate::graphql::scalars::{Address, Uint256};
use crate::query::{self, ContractInfo, QueryService, TransferQuery};

/// The `Erc20Transfer` object: a transfer, with the related rows of its page.
pub struct Erc20Transfer {
    transfer: query::Erc20Transfer,
    primed: Arc<Primed>,
}

impl Listed for Erc20Transfer {
    const CONNECTION: &'static str = "Erc20TransferConnection";
    const EDGE: &'static str = "Erc20TransferEdge";
}

impl PlainNode for Erc20Transfer {
    /// Every field, as the resolvers below answer it, once its rows were read with the page.
    fn plain(&self, name: &str) -> Option<Leaf<'_>> {
        let t = &self.transfer;
        let rows = self.primed.rows();
        let contract = || rows.contract_read(t.contract);
        let label = |a| rows.label_read(a).map(|l| nullable(l, text));
        let index = |i: u32| Leaf::from(i32::try_from(i).unwrap_or(i32::MAX));
        Some(match name {
            "contractAddress" => Leaf::from(t.contract),
            "fromWallet" => Leaf::from(t.from),
            "toWallet" => Leaf::from(t.to),
            "fromWalletLabel" => label(t.from)?,
            "toWalletLabel" => label(t.to)?,
            "value" => Leaf::Decimal(t.value),
            "valueDecimal" => nullable(contract()?.and_then(|c| c.decimals), |d| {
                Leaf::Scaled(t.value, d)
            }),
            "blockNumber" => Leaf::from(t.block_number),
            "blockHash" => text(t.block_hash.as_str()),
            "blockTimestamp" => Leaf::Time(t.block_timestamp),
            "transactionHash" => text(t.transaction_hash.as_str()),
            "transactionIndex" => index(t.transaction_index),
            "logIndex" => index(t.log_index),
            "tokenName" => nullable(contract()?.and_then(|c| c.name.as_deref()), text),
            "tokenSymbol" => nullable(contract()?.and_then(|c| c.symbol.as_deref()), text),
            "tokenLogo" => nullable(contract()?.and_then(|c| c.logo.as_deref()), text),
            "tokenDecimals" => nullable(
                contract()?
                    .and_then(|c| c.decimals)
                    .and_then(|d| i32::try_from(d).ok()),
                Leaf::from,
            ),
            "possibleSpam" => Leaf::from(contract()?.is_some_and(|c| c.possible_spam)),
            "verifiedCollection" => Leaf::from(contract()?.is_some_and(|c| c.verified)),
            _ => return None,
        })
    }
}

impl Erc20Transfer {
    /// A transfer outside a page (a live change), its related rows loaded through `primed`.
    pub(crate) fn single(transfer: query::Erc20Transfer, primed: Arc<Primed>) -> Self {
        Self { transfer, primed }
    }

    async fn contract(&self) -> Result<Option<Cow<'_, ContractInfo>>, GqlError> {
        self.primed.contract(self.transfer.contract).await
    }
}

/// One ERC20 `Transfer` event, with its token's metadata and its wallets' labels.
#[Object]
impl Erc20Transfer {
    /// The token contract that emitted the event.
    async fn contract_address(&self) -> Address {
        self.transfer.contract.into()
    }

    /// `fromWallet`, `toWallet` and their labels: [`Parties`].
    #[graphql(flatten)]
    async fn parties(&self) -> Parties<'_> {
        Parties::new(self.transfer.from, self.transfer.to, &self.primed)
    }

    /// The amount, exact, in the token's smallest unit.
    async fn value(&self) -> Uint256 {
        self.transfer.value.into()
    }

    /// The amount in whole tokens (`value / 10^tokenDecimals`), written exactly: no exponent, no
    /// trailing zeros. `null` when the token's decimals are unknown.
    async fn value_decimal(&self) -> Result<Option<String>, GqlError> {
        let decimals = self.contract().await?.and_then(|c| c.decimals);
        Ok(decimals.map(|d| self.transfer.value.to_decimal_scaled(d)))
    }

    /// `blockNumber` ... `logIndex`: [`LogFields`].
    #[graphql(flatten)]
    async fn log_fields(&self) -> LogFields<'_> {
        LogFields::from(&self.transfer)
    }

    /// The token's name, when known.
    async fn token_name(&self) -> Result<Option<String>, GqlError> {
        Ok(self.contract().await?.and_then(|c| c.name.clone()))
    }

    /// The token's symbol, when known.
    async fn token_symbol(&self) -> Result<Option<String>, GqlError> {
        Ok(self.contract().await?.and_then(|c| c.symbol.clone()))
    }

    /// The URL of the token's logo, when known.
    async fn token_logo(&self) -> Result<Option<String>, GqlError> {
        Ok(self.contract().await?.and_then(|c| c.logo.clone()))
    }

    /// The token's decimals, when known.
    async fn token_decimals(&self) -> Result<Option<i32>, GqlError> {
        Ok(self
            .contract()
            .await?
            .and_then(|c| c.decimals)
            .and_then(|d| i32::try_from(d).ok()))
    }

    /// Whether the token is flagged as possible spam.
    async fn possible_spam(&self) -> Result<bool, GqlError> {
        Ok(self.contract().await?.is_some_and(|c| c.possible_spam))
    }

    /// Whether the token is verified.
    async fn verified_collection(&self) -> Result<bool, GqlError> {
        Ok(self.contract().await?.is_some_and(|c| c.verified))
    }
}

/// Node fields answered from the contract's metadata.
const CONTRACT_FIELDS: &[&str] = &[
    "tokenName",
    "tokenSymbol",
    "tokenLogo",
    "tokenDecimals",
    "valueDecimal",
    "possibleSpam",
    "verifiedCollection",
];

/// Runs a list of ERC20 transfers: one answer from the query service, with the related rows the
/// selection of `edges.node` shows.
pub async fn resolve(
    ctx: &Context<'_>,
    service: &QueryService,
    q: TransferQuery,
    after: Option<&str>,
) -> Result<Connection<Erc20Transfer>, GqlError> {
    let wants = event_fields::wants(ctx, CONTRACT_FIELDS);
    let answer = service.erc20_transfers(&q, after, wants).await?;
    let primed = Primed::new(service, q.chain, answer.related);
    Ok(Connection::from_page(answer.page, |transfer| {
        Erc20Transfer {
            transfer,
            primed: primed.clone(),
        }
    }))
}
