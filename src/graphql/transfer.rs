//! `erc20Transfers`' types: `Erc20TransferConnection`, `Erc20TransferEdge`, `Erc20Transfer`.

use std::sync::Arc;

use async_graphql::futures_util::future::try_join;
use async_graphql::{Context, Object, SimpleObject};

use super::connection::{PageInfo, SyncStatus};
use super::error::GqlError;
use super::loaders::{ContractKey, LabelKey, Preloaded, Related};
use super::scalars::{Address, BlockNumber, Uint256};
use crate::query::{self, ContractInfo, CursorMint, QueryService, TransferQuery};
use crate::types::{self, iso8601_secs};

/// One page of ERC20 transfers, newest first: ordered by `blockNumber` descending, ties broken
/// by `logIndex` descending.
#[derive(SimpleObject)]
pub struct Erc20TransferConnection {
    /// The transfers of this page, each with the cursor that resumes right after it.
    edges: Vec<Erc20TransferEdge>,
    /// Whether more pages follow, and the cursors to get them.
    page_info: PageInfo,
    /// `SYNCED` once every named wallet's history is complete (or every named contract's; with
    /// neither, the chain's; none is needed from the live start block on) and the indexer is
    /// caught up; otherwise `SYNCING`, and the first such request schedules the missing
    /// history.
    status: SyncStatus,
}

/// The `Erc20TransferEdge` object.
pub struct Erc20TransferEdge {
    key: Vec<String>,
    mint: Arc<CursorMint>,
    node: Erc20Transfer,
}

/// A transfer with its cursor.
#[Object]
impl Erc20TransferEdge {
    /// Pass as `after` to get the transfers that follow this one.
    async fn cursor(&self) -> String {
        self.mint.cursor(&self.key)
    }

    /// The transfer.
    async fn node(&self) -> &Erc20Transfer {
        &self.node
    }
}

/// The `Erc20Transfer` object: a transfer, with the loader of its related data.
pub struct Erc20Transfer {
    transfer: query::Erc20Transfer,
    related: Arc<Related>,
    contract: Preloaded<ContractInfo>,
    from_label: Preloaded<String>,
    to_label: Preloaded<String>,
}

impl Erc20Transfer {
    async fn contract(&self) -> Result<Option<Arc<ContractInfo>>, GqlError> {
        match &self.contract {
            Some(c) => Ok(c.clone()),
            None => self.related.contract(self.transfer.contract).await,
        }
    }

    async fn label(
        &self,
        preloaded: &Preloaded<String>,
        a: types::Address,
    ) -> Result<Option<String>, GqlError> {
        let l = match preloaded {
            Some(l) => l.clone(),
            None => self.related.label(a).await?,
        };
        Ok(l.map(|l| l.as_str().to_string()))
    }
}

/// One ERC20 `Transfer` event, with its token's metadata and its wallets' labels.
#[Object]
impl Erc20Transfer {
    /// The token contract that emitted the event.
    async fn contract_address(&self) -> Address {
        self.transfer.contract.into()
    }

    /// The sender (the zero address for a mint).
    #[graphql(name = "fromWallet")]
    async fn sender(&self) -> Address {
        self.transfer.from.into()
    }

    /// The recipient (the zero address for a burn).
    #[graphql(name = "toWallet")]
    async fn recipient(&self) -> Address {
        self.transfer.to.into()
    }

    /// A human-readable label of the sender, when known (e.g. an exchange's hot wallet).
    #[graphql(name = "fromWalletLabel")]
    async fn sender_label(&self) -> Result<Option<String>, GqlError> {
        self.label(&self.from_label, self.transfer.from).await
    }

    /// A human-readable label of the recipient, when known.
    #[graphql(name = "toWalletLabel")]
    async fn recipient_label(&self) -> Result<Option<String>, GqlError> {
        self.label(&self.to_label, self.transfer.to).await
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

    /// The block that contains the transfer.
    async fn block_number(&self) -> BlockNumber {
        self.transfer.block_number.into()
    }

    /// The hash of that block.
    async fn block_hash(&self) -> &str {
        &self.transfer.block_hash
    }

    /// The block's timestamp: ISO 8601 UTC with milliseconds (`2023-03-20T08:37:35.000Z`).
    async fn block_timestamp(&self) -> String {
        iso8601_secs(self.transfer.block_timestamp)
    }

    /// The hash of the transaction that emitted the event.
    async fn transaction_hash(&self) -> &str {
        &self.transfer.transaction_hash
    }

    /// The position of that transaction in its block.
    async fn transaction_index(&self) -> i32 {
        i32::try_from(self.transfer.transaction_index).unwrap_or(i32::MAX)
    }

    /// The position of the event among the block's logs.
    async fn log_index(&self) -> i32 {
        i32::try_from(self.transfer.log_index).unwrap_or(i32::MAX)
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

/// Runs `erc20Transfers`: one page from the query service, then one batch per kind of related
/// data the selection needs.
pub async fn resolve(
    ctx: &Context<'_>,
    service: &QueryService,
    q: TransferQuery,
    after: Option<&str>,
) -> Result<Erc20TransferConnection, GqlError> {
    let page = service.erc20_transfers(&q, after).await?;

    let related = Related::new(service.clone(), q.chain);
    let node = ctx.look_ahead().field("edges").field("node");
    let wants = |f: &str| node.field(f).exists();
    let contracts: Vec<ContractKey> = if CONTRACT_FIELDS.iter().any(|f| wants(f)) {
        page.edges
            .iter()
            .map(|e| ContractKey(e.node.contract))
            .collect()
    } else {
        Vec::new()
    };
    let mut labels = Vec::new();
    if wants("fromWalletLabel") {
        labels.extend(page.edges.iter().map(|e| LabelKey(e.node.from)));
    }
    if wants("toWalletLabel") {
        labels.extend(page.edges.iter().map(|e| LabelKey(e.node.to)));
    }
    let (contracts, labels) = try_join(related.prime(contracts), related.prime(labels)).await?;
    // A key the page did not prime is absent (`None`): the node then asks the loader.
    let label_of = |a| labels.get(&LabelKey(a)).cloned();

    let page_info = PageInfo::from(&page);
    let edges = page
        .edges
        .into_iter()
        .map(|e| Erc20TransferEdge {
            key: e.key,
            mint: page.mint.clone(),
            node: Erc20Transfer {
                contract: contracts.get(&ContractKey(e.node.contract)).cloned(),
                from_label: label_of(e.node.from),
                to_label: label_of(e.node.to),
                transfer: e.node,
                related: related.clone(),
            },
        })
        .collect();
    Ok(Erc20TransferConnection {
        edges,
        page_info,
        status: page.status.into(),
    })
}
