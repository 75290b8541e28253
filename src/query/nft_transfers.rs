//! Which NFTs did this wallet send or receive, and how did this collection's NFTs move?

use sea_orm::sea_query::SelectStatement;
use sea_orm::{
    ColumnTrait, Condition, ConnectionTrait, EntityTrait, IdenStatic, QueryFilter, QueryOrder,
    QuerySelect, QueryTrait,
};

use super::answer::{Answer, Include};
use super::cursor::{query_digest, CursorKind};
use super::transfer_filter::TransferFilter;
use super::transfers::{sql_order, union_of};
use super::walk::Walk;
use super::{Edge, Key, KeyPart, NftTransfer, NftTransferQuery, Page, QueryError, QueryService};
use crate::entity::nft_transfer;
use crate::types::{AddressList, SortOrder, Uint256};

use nft_transfer::Column as T;

/// The columns of the output order (a move between the wallet and itself is in both arms of
/// the union, so `UNION`, not `UNION ALL`).
fn order_by() -> [&'static str; 3] {
    [
        T::BlockNumber.as_str(),
        T::LogIndex.as_str(),
        T::BatchIndex.as_str(),
    ]
}

impl NftTransferQuery {
    fn digest(&self) -> String {
        let n = |x: Option<u64>| x.map_or(String::new(), |v| v.to_string());
        query_digest(&format!(
            "nftx|{}|{}|{}|{}|{}|{}|{}|{}",
            self.chain.id(),
            self.wallet.map_or(String::new(), |w| w.to_string()),
            self.contracts.texts().join(","),
            n(self.blocks.from.map(|b| b.0)),
            n(self.blocks.to.map(|b| b.0)),
            n(self.dates.from),
            n(self.dates.to),
            self.order.as_str(),
        ))
    }

    /// Which moves the question selects.
    fn transfer_filter(&self) -> TransferFilter {
        TransferFilter {
            chain: self.chain,
            wallets: self.wallet.map(AddressList::one).unwrap_or_default(),
            contracts: self.contracts.clone(),
            exclude_wallets: AddressList::default(),
            exclude_contracts: AddressList::default(),
            blocks: self.blocks,
            dates: self.dates,
        }
    }
}

/// Rows strictly after (`block`, `log`, `batch`) in `order`, with `block_number` bounded on its
/// own so that every backend reads an index range.
fn past(order: SortOrder, block: i64, log: i32, batch: i32) -> Condition {
    let same_log = |c: Condition| c.add(T::BlockNumber.eq(block)).add(T::LogIndex.eq(log));
    match order {
        SortOrder::Desc => Condition::all().add(T::BlockNumber.lte(block)).add(
            Condition::any()
                .add(T::BlockNumber.lt(block))
                .add(
                    Condition::all()
                        .add(T::BlockNumber.eq(block))
                        .add(T::LogIndex.lt(log)),
                )
                .add(same_log(Condition::all()).add(T::BatchIndex.lt(batch))),
        ),
        SortOrder::Asc => Condition::all().add(T::BlockNumber.gte(block)).add(
            Condition::any()
                .add(T::BlockNumber.gt(block))
                .add(
                    Condition::all()
                        .add(T::BlockNumber.eq(block))
                        .add(T::LogIndex.gt(log)),
                )
                .add(same_log(Condition::all()).add(T::BatchIndex.gt(batch))),
        ),
    }
}

impl QueryService {
    /// One page of NFT transfers in `q.order` (newest first by default), after `after`.
    pub async fn nft_transfers(
        &self,
        q: &NftTransferQuery,
        after: Option<&str>,
        include: Include,
    ) -> Result<Answer<NftTransfer>, QueryError> {
        let page = self.nft_moves(q, None, after).await?;
        self.answer(q.chain, page, include).await
    }

    /// One page of one token's transfers (`q.contracts` names its collection; its scopes
    /// decide `status`), as [`QueryService::nft_transfers`].
    pub async fn token_nft_transfers(
        &self,
        q: &NftTransferQuery,
        token_id: Uint256,
        after: Option<&str>,
        include: Include,
    ) -> Result<Answer<NftTransfer>, QueryError> {
        let page = self.nft_moves(q, Some(token_id), after).await?;
        self.answer(q.chain, page, include).await
    }

    async fn nft_moves(
        &self,
        q: &NftTransferQuery,
        token_id: Option<Uint256>,
        after: Option<&str>,
    ) -> Result<Page<NftTransfer>, QueryError> {
        let digest = match token_id {
            None => q.digest(),
            Some(t) => query_digest(&format!("{}|{}", q.digest(), t.to_hex64())),
        };
        let mut walk =
            Walk::<(i64, i32, i32)>::begin(self, CursorKind::NftTransfer, digest, after)?;
        let filter = q.transfer_filter();
        let mut base = filter.condition::<T>();
        if let Some(pin) = walk.pinned() {
            base = base.add(T::BlockNumber.lte(pin as i64));
        }
        if let Some(t) = token_id {
            base = base.add(T::TokenId.eq(t));
        }
        if let Some(&(block, log, batch)) = walk.position() {
            base = base.add(past(q.order, block, log, batch));
        }
        let limit = q.page_size.get();
        let range = |arm: Option<Condition>| {
            let mut find = nft_transfer::Entity::find().filter(base.clone());
            if let Some(arm) = arm {
                find = find.filter(arm);
            }
            find.order_by(T::BlockNumber, sql_order(q.order))
                .order_by(T::LogIndex, sql_order(q.order))
                .order_by(T::BatchIndex, sql_order(q.order))
                .limit(limit + 1)
        };
        let arms: Vec<SelectStatement> = filter
            .arms::<T>()
            .into_iter()
            .map(|a| range(Some(a)).into_query())
            .collect();
        // The page and the state it is judged by, as of one moment.
        let snap = self.snapshot().await?;
        let db = snap.db();
        let rows = match union_of(arms, &order_by(), q.order, limit + 1) {
            Some(union) => {
                let stmt = db.get_database_backend().build(&union);
                nft_transfer::Entity::find()
                    .from_raw_sql(stmt)
                    .all(db)
                    .await?
            }
            None => range(None).all(db).await?,
        };
        let (view, done) = snap.settle(q.chain, |start| filter.needs(start)).await?;
        walk.hold(db, q.chain, view.indexed_block).await?;
        snap.close().await?;
        let incomplete = walk.incomplete(done.complete);
        // A pinned walk's page is as of its pinned block.
        let block = walk.pinned().or(view.indexed_block);
        walk.at(block)
            .finish(self, rows, limit, incomplete, done.status, nft_move)
    }
}

/// A row as a record, keyed by its (block number, log index, batch index) position.
fn nft_move(r: nft_transfer::Model) -> Result<Edge<NftTransfer>, QueryError> {
    let key = Key::new([
        KeyPart::Int(r.block_number),
        KeyPart::Int(r.log_index.into()),
        KeyPart::Int(r.batch_index.into()),
    ]);
    let node = NftTransfer {
        contract: r.contract_address,
        token_id: r.token_id,
        contract_type: r.contract_type,
        operator: r.operator,
        from: r.from_address,
        to: r.to_address,
        amount: r.amount,
        block_number: r.block_number.max(0) as u64,
        block_hash: r.block_hash.to_string(),
        block_timestamp: r.block_timestamp.max(0) as u64,
        transaction_hash: r.transaction_hash.to_string(),
        transaction_index: r.transaction_index.max(0) as u32,
        log_index: r.log_index.max(0) as u32,
        batch_index: r.batch_index.max(0) as u32,
    };
    Ok(Edge { key, node })
}
