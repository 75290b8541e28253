//! Lookups of one wallet: its counts (`getWalletStats`) and its first and last activity on
//! each chain (`getWalletActiveChains`), from the indexed ERC20 and NFT transfers.
//!
//! Each chain's answer is read in one snapshot ([`super::snapshot`]) and is complete once the
//! wallet's history is stored (its wallet scope, or the chain's whole history); an incomplete
//! answer schedules that history and says `SYNCING`.

use sea_orm::sea_query::{Expr, ExprTrait};
use sea_orm::{
    ColumnTrait, Condition, ConnectionTrait, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder,
    QuerySelect,
};

use super::nft_lookups::Stated;
use super::status::Needs;
use super::transfer_filter::TransferColumns;
use super::{QueryError, QueryService};
use crate::entity::{chain_state, erc20_transfer, nft_holding, nft_transfer};
use crate::types::{Address, Chain, Hash32, Scope};

/// What a wallet counts on one chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WalletStats {
    /// NFTs it holds (token ids; an ERC1155 id counts once whatever the amount).
    pub nfts: u64,
    /// Collections it holds at least one token of.
    pub collections: u64,
    /// NFT transfers it sent or received (a transfer to itself counts once).
    pub nft_transfers: u64,
    /// ERC20 transfers it sent or received (a transfer to itself counts once).
    pub token_transfers: u64,
}

/// One transfer that marks a wallet's activity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Activity {
    pub block_number: u64,
    /// Unix seconds.
    pub block_timestamp: u64,
    pub transaction_hash: String,
}

/// A wallet's first and last transfer on a chain; `None` when it has none.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ChainActivity {
    pub first: Option<Activity>,
    pub last: Option<Activity>,
}

/// The answer depends on the wallet's whole history, and schedules it when incomplete.
fn wallet_needs(wallet: Address) -> Needs {
    let scopes = vec![Scope::wallet(wallet)];
    Needs {
        alternatives: vec![scopes.clone()],
        schedule: scopes,
        ..Needs::default()
    }
}

/// A transfer's position and facts, as read for an [`Activity`].
type Mark = (i64, i32, i64, Hash32);

impl QueryService {
    /// The chains this database indexes (those with an indexing state), by chain id.
    pub async fn indexed_chains(&self) -> Result<Vec<Chain>, QueryError> {
        let ids: Vec<i64> = chain_state::Entity::find()
            .select_only()
            .column(chain_state::Column::ChainId)
            .order_by_asc(chain_state::Column::ChainId)
            .into_tuple()
            .all(&self.db)
            .await?;
        Ok(ids
            .into_iter()
            .filter_map(|id| u64::try_from(id).ok().and_then(Chain::from_id))
            .collect())
    }

    /// The wallet's counts on `chain`.
    pub async fn wallet_stats(
        &self,
        chain: Chain,
        wallet: Address,
    ) -> Result<Stated<WalletStats>, QueryError> {
        let needs = wallet_needs(wallet);
        let snap = self.snapshot().await?;
        let (view, done) = snap.settle(chain, |_| needs.clone()).await?;
        let db = snap.db();
        let held = Condition::all()
            .add(nft_holding::Column::ChainId.eq(chain.db_id()))
            .add(nft_holding::Column::OwnerAddress.eq(wallet));
        let nfts = nft_holding::Entity::find()
            .filter(held.clone())
            .count(db)
            .await?;
        let collections: Option<i64> = nft_holding::Entity::find()
            .filter(held)
            .select_only()
            .column_as(
                Expr::col(nft_holding::Column::ContractAddress).count_distinct(),
                "n",
            )
            .into_tuple()
            .one(db)
            .await?;
        let nft_transfers = moves::<nft_transfer::Entity>(db, chain, wallet).await?;
        let token_transfers = moves::<erc20_transfer::Entity>(db, chain, wallet).await?;
        snap.close().await?;
        Ok(Stated {
            value: WalletStats {
                nfts,
                collections: collections.and_then(|n| u64::try_from(n).ok()).unwrap_or(0),
                nft_transfers,
                token_transfers,
            },
            status: done.status,
            block: view.indexed_block,
        })
    }

    /// The wallet's first and last transfer (ERC20 or NFT) on `chain`.
    pub async fn wallet_activity(
        &self,
        chain: Chain,
        wallet: Address,
    ) -> Result<Stated<ChainActivity>, QueryError> {
        let needs = wallet_needs(wallet);
        let snap = self.snapshot().await?;
        let (view, done) = snap.settle(chain, |_| needs.clone()).await?;
        let db = snap.db();
        let mut marks = Vec::new();
        for newest in [false, true] {
            marks.extend(marks_of::<erc20_transfer::Entity>(db, chain, wallet, newest).await?);
            marks.extend(marks_of::<nft_transfer::Entity>(db, chain, wallet, newest).await?);
        }
        snap.close().await?;
        let first = marks.iter().min_by_key(|m| (m.0, m.1)).map(activity);
        let last = marks.iter().max_by_key(|m| (m.0, m.1)).map(activity);
        Ok(Stated {
            value: ChainActivity { first, last },
            status: done.status,
            block: view.indexed_block,
        })
    }
}

fn activity(m: &Mark) -> Activity {
    Activity {
        block_number: u64::try_from(m.0).unwrap_or(0),
        block_timestamp: u64::try_from(m.2).unwrap_or(0),
        transaction_hash: m.3.to_string(),
    }
}

/// Transfers (of the table of `E`) the wallet sent, plus those it received from another wallet.
async fn moves<E>(
    db: &impl ConnectionTrait,
    chain: Chain,
    wallet: Address,
) -> Result<u64, QueryError>
where
    E: EntityTrait,
    E::Column: TransferColumns,
    E::Model: Sync,
{
    let of_chain = || E::find().filter(<E::Column as TransferColumns>::CHAIN.eq(chain.db_id()));
    let (from, to) = (
        <E::Column as TransferColumns>::FROM,
        <E::Column as TransferColumns>::TO,
    );
    let sent = of_chain().filter(from.eq(wallet)).count(db).await?;
    let received = of_chain()
        .filter(to.eq(wallet))
        .filter(from.ne(wallet))
        .count(db)
        .await?;
    Ok(sent + received)
}

/// The wallet's oldest (or `newest`) transfer in the table of `E`, sent and received.
async fn marks_of<E>(
    db: &impl ConnectionTrait,
    chain: Chain,
    wallet: Address,
    newest: bool,
) -> Result<Vec<Mark>, QueryError>
where
    E: EntityTrait,
    E::Column: TransferColumns,
{
    use TransferColumns as C;
    let mut out = Vec::new();
    for side in [<E::Column as C>::FROM, <E::Column as C>::TO] {
        let (block, log) = (<E::Column as C>::BLOCK, <E::Column as C>::LOG);
        let mut q = E::find()
            .filter(<E::Column as C>::CHAIN.eq(chain.db_id()))
            .filter(side.eq(wallet))
            .select_only()
            .columns([block, log, <E::Column as C>::TIME, <E::Column as C>::TX]);
        q = if newest {
            q.order_by_desc(block).order_by_desc(log)
        } else {
            q.order_by_asc(block).order_by_asc(log)
        };
        out.extend(q.into_tuple::<Mark>().one(db).await?);
    }
    Ok(out)
}
