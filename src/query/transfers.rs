//! Which ERC20 transfers touched these wallets or contracts?

use sea_orm::sea_query::{Alias, Asterisk, Order, Query, SelectStatement, UnionType};
use sea_orm::{
    ColumnTrait, Condition, ConnectionTrait, DbErr, EntityTrait, FromQueryResult, IdenStatic,
    QueryFilter, QueryOrder, QueryResult, QuerySelect, QueryTrait,
};

use super::answer::{Answer, Include};
use super::columns;
use super::cursor::{query_digest, CursorKind};
use super::transfer_filter::TransferFilter;
use super::walk::Walk;
use super::{
    DateRange, Edge, Erc20Transfer, Key, KeyPart, Page, QueryError, QueryService, TransferQuery,
};
use crate::entity::erc20_transfer;
use crate::types::{Hash32, SortOrder};

use erc20_transfer::Column as T;

/// The columns of the output order.
fn order_by() -> [&'static str; 2] {
    [T::BlockNumber.as_str(), T::LogIndex.as_str()]
}

impl TransferQuery {
    fn digest(&self) -> String {
        let b = |x: Option<crate::types::BlockNumber>| x.map_or(String::new(), |b| b.0.to_string());
        let d = |x: Option<u64>| x.map_or(String::new(), |s| s.to_string());
        let mut text = format!(
            "erc20|{}|{}|{}|{}|{}|{}|{}",
            self.chain.id(),
            self.wallets.texts().join(","),
            self.contracts.texts().join(","),
            self.exclude_wallets.texts().join(","),
            self.exclude_contracts.texts().join(","),
            b(self.blocks.from),
            b(self.blocks.to),
        );
        // Dates and order only when asked for, so that a v2 cursor reads the same in every
        // version of the server (API processes are upgraded one by one behind a balancer).
        if self.dates != DateRange::default() || self.order != SortOrder::Desc {
            text.push_str(&format!(
                "|{}|{}|{}",
                d(self.dates.from),
                d(self.dates.to),
                self.order.as_str()
            ));
        }
        query_digest(&text)
    }

    /// Which transfers the question selects.
    fn transfer_filter(&self) -> TransferFilter {
        TransferFilter {
            chain: self.chain,
            wallets: self.wallets.clone(),
            contracts: self.contracts.clone(),
            exclude_wallets: self.exclude_wallets.clone(),
            exclude_contracts: self.exclude_contracts.clone(),
            blocks: self.blocks,
            dates: self.dates,
        }
    }
}

/// Rows strictly after (`block`, `log`) in `order`, written so that every backend turns
/// `block_number <= block` (or `>=`) into an index range (a row-value comparison or a bare
/// `OR` is not, on all of them): the rest only filters the rows of one block.
fn past(order: SortOrder, block: i64, log: i32) -> Condition {
    match order {
        SortOrder::Desc => Condition::all().add(T::BlockNumber.lte(block)).add(
            Condition::any()
                .add(T::BlockNumber.lt(block))
                .add(T::LogIndex.lt(log)),
        ),
        SortOrder::Asc => Condition::all().add(T::BlockNumber.gte(block)).add(
            Condition::any()
                .add(T::BlockNumber.gt(block))
                .add(T::LogIndex.gt(log)),
        ),
    }
}

/// `order` as SQL's.
pub(super) fn sql_order(order: SortOrder) -> Order {
    match order {
        SortOrder::Asc => Order::Asc,
        SortOrder::Desc => Order::Desc,
    }
}

/// `SELECT * FROM (arm 0) a0 UNION SELECT * FROM (arm 1) a1 ... ORDER BY ... LIMIT n`: the
/// union (not `UNION ALL`: a transfer between two named wallets is in two arms) of ranges that
/// are each already cut at `limit` rows in output order. Exact: a row among the first `limit`
/// of the union is among the first `limit` of its own arm.
pub(super) fn union_of(
    arms: Vec<SelectStatement>,
    by: &[&str],
    order: SortOrder,
    limit: u64,
) -> Option<SelectStatement> {
    let mut arms = arms.into_iter().enumerate().map(|(i, arm)| {
        Query::select()
            .column(Asterisk)
            .from_subquery(arm, Alias::new(format!("a{i}")))
            .to_owned()
    });
    let mut outer = arms.next()?;
    for arm in arms {
        outer.union(UnionType::Distinct, arm);
    }
    for col in by {
        outer.order_by(Alias::new(*col), sql_order(order));
    }
    outer.limit(limit);
    Some(outer)
}

impl QueryService {
    /// One page of ERC20 transfers in `q.order` (newest first by default), after `after`.
    ///
    /// The answer carries the related rows `include` asks for ([`Answer`]).
    pub async fn erc20_transfers(
        &self,
        q: &TransferQuery,
        after: Option<&str>,
        include: Include,
    ) -> Result<Answer<Erc20Transfer>, QueryError> {
        let page = self.erc20_transfers_page(q, after).await?;
        self.answer(q.chain, page, include).await
    }

    /// The page of [`QueryService::erc20_transfers`], without its related rows.
    async fn erc20_transfers_page(
        &self,
        q: &TransferQuery,
        after: Option<&str>,
    ) -> Result<Page<Erc20Transfer>, QueryError> {
        let mut walk = Walk::<(i64, i32)>::begin(self, CursorKind::Erc20, q.digest(), after)?;
        let filter = q.transfer_filter();
        let mut base = filter.condition::<T>();
        if let Some(pin) = walk.pinned() {
            base = base.add(T::BlockNumber.lte(pin as i64));
        }
        if let Some(&(block, log)) = walk.position() {
            base = base.add(past(q.order, block, log));
        }
        let limit = q.page_size.get();
        let range = |arm: Option<Condition>| {
            let mut find = erc20_transfer::Entity::find()
                .select_only()
                .columns(TransferRow::COLUMNS)
                .filter(base.clone());
            if let Some(arm) = arm {
                find = find.filter(arm);
            }
            find.order_by(T::BlockNumber, sql_order(q.order))
                .order_by(T::LogIndex, sql_order(q.order))
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
                TransferRow::find_by_statement(stmt).all(db).await?
            }
            None => range(None).into_model::<TransferRow>().all(db).await?,
        };
        let (view, done) = snap.settle(q.chain, |start| filter.needs(start)).await?;
        walk.hold(db, q.chain, view.indexed_block).await?;
        snap.close().await?;
        // A walk begun incomplete stays so (see `Walk::incomplete`).
        let incomplete = walk.incomplete(done.complete);
        // A pinned walk's page is as of its pinned block.
        let block = walk.pinned().or(view.indexed_block);
        walk.at(block)
            .finish(self, rows, limit, incomplete, done.status, |r| Ok(r.0))
    }
}

/// A row of a page as a record, keyed by its (block number, log index) position.
struct TransferRow(Edge<Erc20Transfer>);

impl TransferRow {
    /// The columns selected, in the order they are read (by position: a page reads ten
    /// columns of a hundred rows, and a lookup by name hashes the name each time).
    const COLUMNS: [T; 10] = [
        T::BlockNumber,
        T::LogIndex,
        T::ContractAddress,
        T::FromAddress,
        T::ToAddress,
        T::Value,
        T::BlockHash,
        T::BlockTimestamp,
        T::TransactionHash,
        T::TransactionIndex,
    ];
}

impl FromQueryResult for TransferRow {
    fn from_query_result(row: &QueryResult, _pre: &str) -> Result<Self, DbErr> {
        let block_number: i64 = columns::typed(row, 0)?;
        let log_index: i32 = columns::typed(row, 1)?;
        let key = Key::new([KeyPart::Int(block_number), KeyPart::Int(log_index.into())]);
        let node = Erc20Transfer {
            contract: columns::typed(row, 2)?,
            from: columns::typed(row, 3)?,
            to: columns::typed(row, 4)?,
            value: columns::typed(row, 5)?,
            block_number: block_number.max(0) as u64,
            block_hash: columns::typed::<Hash32>(row, 6)?.to_string(),
            block_timestamp: columns::typed::<i64>(row, 7)?.max(0) as u64,
            transaction_hash: columns::typed::<Hash32>(row, 8)?.to_string(),
            transaction_index: columns::typed::<i32>(row, 9)?.max(0) as u32,
            log_index: log_index.max(0) as u32,
        };
        Ok(Self(Edge { key, node }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::BlockRange;
    use crate::types::{AddressList, Chain, PageSize};

    fn v2(wallet: &str) -> TransferQuery {
        TransferQuery {
            chain: Chain::ETH,
            wallets: AddressList::parse(&[wallet]).unwrap_or_default(),
            contracts: AddressList::default(),
            exclude_wallets: AddressList::default(),
            exclude_contracts: AddressList::default(),
            blocks: BlockRange::default(),
            dates: DateRange::default(),
            order: SortOrder::Desc,
            page_size: PageSize::default(),
        }
    }

    #[test]
    fn a_v2_cursor_is_bound_as_before_and_order_and_dates_bind_too() {
        let w = "0x430d5dde0cd48989737a95b4c46e1801a9a08531";
        let q = v2(w);
        // The digest of a query without dates or order is the one servers before them wrote,
        // so cursors stay valid while API processes are upgraded one by one.
        assert_eq!(q.digest(), query_digest(&format!("erc20|1|{w}|||||")));
        let asc = TransferQuery {
            order: SortOrder::Asc,
            ..q.clone()
        };
        let dated = TransferQuery {
            dates: DateRange {
                from: Some(1),
                to: None,
            },
            ..q.clone()
        };
        assert_ne!(asc.digest(), q.digest());
        assert_ne!(dated.digest(), q.digest());
        assert_ne!(dated.digest(), asc.digest());
    }
}
