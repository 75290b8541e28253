//! The `Subscription` root: a chain's ERC20 transfers and NFT moves as they are indexed,
//! confirmed and taken away by reorgs ([`crate::query::changes`] defines the sequence,
//! [`crate::app::live`] reads it). Served over WebSocket on `/graphql`
//! (`graphql-transport-ws` and the older `graphql-ws`), see [`crate::graphql::http`].

use async_graphql::{Context, Enum, Object, Subscription};
use futures_util::{Stream, StreamExt};

use crate::app::live::{Live, LiveError};
use crate::app::Caller;
use crate::graphql::args;
use crate::graphql::enums::TokenIdFormat;
use crate::graphql::error::GqlError;
use crate::graphql::loaders::Primed;
use crate::graphql::objects::nft_transfer::NftTransfer;
use crate::graphql::objects::transfer::Erc20Transfer;
use crate::graphql::scalars::Address;
use crate::query::changes::{self, Change, Watch, Watched, MAX_CONFIRMATIONS};
use crate::query::{self, QueryService};

/// What happened to a transfer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Enum)]
pub enum ChangeKind {
    /// Indexed at the head of the chain.
    Added,
    /// Buried under the subscription's `confirmations` blocks (never sent with 0).
    Confirmed,
    /// Taken away by a reorg: undo its `ADDED`.
    Removed,
}

impl From<changes::ChangeKind> for ChangeKind {
    fn from(k: changes::ChangeKind) -> Self {
        match k {
            changes::ChangeKind::Added => ChangeKind::Added,
            changes::ChangeKind::Confirmed => ChangeKind::Confirmed,
            changes::ChangeKind::Removed => ChangeKind::Removed,
        }
    }
}

/// A change of an ERC20 transfer.
pub struct Erc20TransferEvent {
    kind: ChangeKind,
    position: String,
    transfer: Erc20Transfer,
}

/// A change of an ERC20 transfer.
#[Object]
impl Erc20TransferEvent {
    /// What happened.
    async fn kind(&self) -> ChangeKind {
        self.kind
    }

    /// Where this change sits in the chain's sequence of changes: opaque, unique, ordered as
    /// text. Pass the last one seen as `after` to resume exactly after it.
    async fn position(&self) -> &str {
        &self.position
    }

    /// The transfer.
    async fn transfer(&self) -> &Erc20Transfer {
        &self.transfer
    }
}

/// A change of an NFT move.
pub struct NftTransferEvent {
    kind: ChangeKind,
    position: String,
    transfer: NftTransfer,
}

/// A change of an NFT move.
#[Object]
impl NftTransferEvent {
    /// What happened.
    async fn kind(&self) -> ChangeKind {
        self.kind
    }

    /// Where this change sits in the chain's sequence of changes: opaque, unique, ordered as
    /// text. Pass the last one seen as `after` to resume exactly after it.
    async fn position(&self) -> &str {
        &self.position
    }

    /// The move.
    async fn transfer(&self) -> &NftTransfer {
        &self.transfer
    }
}

/// The root of subscriptions.
pub struct SubscriptionRoot;

/// Live changes: each transfer `ADDED` when indexed, `CONFIRMED` once buried under
/// `confirmations` blocks, `REMOVED` when a reorg takes it away; in order, each with a
/// `position` to resume from after a disconnect or a restart.
#[Subscription]
impl SubscriptionRoot {
    /// A chain's ERC20 transfers as they happen.
    #[allow(clippy::too_many_arguments)]
    async fn erc20_transfers(
        &self,
        ctx: &Context<'_>,
        #[graphql(
            default = "eth",
            desc = "The chain: a name (`eth`, `polygon`, ...) or a hex id (`0x1`, ...)."
        )]
        chain: String,
        #[graphql(desc = "Only transfers sent or received by one of these wallets (at most 100).")]
        wallet_addresses: Option<Vec<Address>>,
        #[graphql(desc = "Only transfers of these token contracts (at most 100).")]
        contract_addresses: Option<Vec<Address>>,
        #[graphql(
            default = 0,
            desc = "Send `CONFIRMED` once a transfer is buried under this many blocks (0 to \
                    1000; 0: never)."
        )]
        confirmations: i32,
        #[graphql(desc = "Resume just after this `position` (from an earlier event).")]
        after: Option<String>,
    ) -> Result<impl Stream<Item = Result<Erc20TransferEvent, GqlError>>, GqlError> {
        let watch = watch(&chain, wallet_addresses, contract_addresses, confirmations)?;
        let chain = watch.chain;
        let (service, changes) = start::<query::Erc20Transfer>(ctx, watch, after).await?;
        Ok(changes.map(move |c| {
            let c = c.map_err(live_error)?;
            let primed = Primed::new(&service, chain, query::Related::default());
            Ok(Erc20TransferEvent {
                kind: c.kind.into(),
                position: c.position.encode(),
                transfer: Erc20Transfer::single(c.record, primed),
            })
        }))
    }

    /// A chain's NFT moves (ERC721 and ERC1155) as they happen.
    #[allow(clippy::too_many_arguments)]
    async fn nft_transfers(
        &self,
        ctx: &Context<'_>,
        #[graphql(
            default = "eth",
            desc = "The chain: a name (`eth`, `polygon`, ...) or a hex id (`0x1`, ...)."
        )]
        chain: String,
        #[graphql(desc = "Only moves from or to one of these wallets (at most 100).")]
        wallet_addresses: Option<Vec<Address>>,
        #[graphql(desc = "Only moves of these collections (at most 100).")]
        contract_addresses: Option<Vec<Address>>,
        #[graphql(
            default = 0,
            desc = "Send `CONFIRMED` once a move is buried under this many blocks (0 to \
                    1000; 0: never)."
        )]
        confirmations: i32,
        #[graphql(desc = "Resume just after this `position` (from an earlier event).")]
        after: Option<String>,
        #[graphql(default, desc = "How token ids are written.")] token_id_format: TokenIdFormat,
    ) -> Result<impl Stream<Item = Result<NftTransferEvent, GqlError>>, GqlError> {
        let watch = watch(&chain, wallet_addresses, contract_addresses, confirmations)?;
        let chain = watch.chain;
        let (service, changes) = start::<query::NftTransfer>(ctx, watch, after).await?;
        Ok(changes.map(move |c| {
            let c = c.map_err(live_error)?;
            let primed = Primed::new(&service, chain, query::Related::default());
            Ok(NftTransferEvent {
                kind: c.kind.into(),
                position: c.position.encode(),
                transfer: NftTransfer::single(c.record, token_id_format.into(), primed),
            })
        }))
    }
}

/// The arguments, parsed.
fn watch(
    chain: &str,
    wallets: Option<Vec<Address>>,
    contracts: Option<Vec<Address>>,
    confirmations: i32,
) -> Result<Watch, GqlError> {
    let confirmations = u64::try_from(confirmations)
        .ok()
        .filter(|c| *c <= MAX_CONFIRMATIONS)
        .ok_or_else(|| {
            GqlError::bad_input(
                "confirmations",
                format!("must be 0 to {MAX_CONFIRMATIONS}, not {confirmations}"),
            )
        })?;
    Ok(Watch {
        chain: args::chain("chain", chain)?,
        wallets: args::address_list("walletAddresses", wallets.as_deref())?
            .iter()
            .copied()
            .collect(),
        contracts: args::address_list("contractAddresses", contracts.as_deref())?
            .iter()
            .copied()
            .collect(),
        confirmations,
    })
}

/// Admits the caller's subscription and opens its changes.
async fn start<T: Watched>(
    ctx: &Context<'_>,
    watch: Watch,
    after: Option<String>,
) -> Result<
    (
        QueryService,
        impl Stream<Item = Result<Change<T>, LiveError>> + Send + 'static,
    ),
    GqlError,
> {
    let (Some(live), Some(caller)) = (ctx.data_opt::<Live>(), ctx.data_opt::<Caller>()) else {
        return Err(GqlError::bad_input(
            "subscription",
            "subscriptions are served over WebSocket on /graphql \
             (graphql-transport-ws or graphql-ws)",
        ));
    };
    let service = crate::graphql::service(ctx)?.clone();
    let admitted = live.admit(caller.key_id).map_err(live_error)?;
    let changes = live
        .changes::<T>(watch, after.as_deref(), admitted)
        .await
        .map_err(live_error)?;
    Ok((service, changes))
}

fn live_error(e: LiveError) -> GqlError {
    match e {
        e @ LiveError::TooMany(_) => GqlError::limited(e.to_string()),
        e @ (LiveError::Gone(_) | LiveError::BadPosition(_)) => {
            GqlError::bad_input("after", e.to_string().trim_start_matches("after: "))
        }
        LiveError::Query(q) => q.into(),
    }
}
