//! Which NFTs does this wallet own?

use std::sync::Arc;

use sea_orm::sea_query::{Expr, ExprTrait, Query};
use sea_orm::{
    ColumnTrait, Condition, DbBackend, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder,
    QuerySelect,
};

use super::cursor::{query_digest, CursorKind, CursorMint};
use super::lists::padded;
use super::{Edge, NftHolding, NftQuery, Page, QueryError, QueryService};
use crate::entity::{contract, nft_holding};
use crate::types::{Address, Uint256};

use nft_holding::Column as H;

impl NftQuery {
    /// The filters a cursor is bound to (not the page size, nor whether a total is counted).
    fn digest(&self) -> String {
        query_digest(&format!(
            "nft|{}|{}|{}|{}",
            self.chain.id(),
            self.owner,
            self.token_addresses.db_strings().join(","),
            self.exclude_spam
        ))
    }

    fn filter(&self) -> Condition {
        let mut c = Condition::all()
            .add(H::ChainId.eq(self.chain.db_id()))
            .add(H::OwnerAddress.eq(self.owner.to_string()));
        if !self.token_addresses.is_empty() {
            c = c.add(H::ContractAddress.is_in(padded(self.token_addresses.db_strings())));
        }
        if self.exclude_spam {
            c = c.add(
                H::ContractAddress.not_in_subquery(
                    Query::select()
                        .column(contract::Column::Address)
                        .from(contract::Entity)
                        .and_where(contract::Column::ChainId.eq(self.chain.db_id()))
                        .and_where(contract::Column::PossibleSpam.eq(true))
                        .to_owned(),
                ),
            );
        }
        c
    }
}

impl QueryService {
    /// One page of the wallet's NFTs, after `after` (a cursor from a previous page).
    pub async fn nfts_by_wallet(
        &self,
        q: &NftQuery,
        after: Option<&str>,
    ) -> Result<Page<NftHolding>, QueryError> {
        let digest = q.digest();
        let start = after
            .map(|c| self.cursors.decode(c, CursorKind::Nft, &digest))
            .transpose()?;
        let page = start.as_ref().map_or(1, |p| p.p);

        let mut find = nft_holding::Entity::find().filter(q.filter());
        if let Some(p) = &start {
            let [contract, token] = p.a.as_slice() else {
                return Err(super::CursorError::Invalid.into());
            };
            find = find.filter(if self.db.get_database_backend() == DbBackend::Postgres {
                // A row comparison bounds PostgreSQL's primary-key range at the cursor itself:
                // none of the cursor's contract's earlier tokens is read (the `OR` form below
                // filters them, 1,900 rows on the whale's page 1,000).
                Condition::all().add(
                    Expr::tuple([Expr::col(H::ContractAddress), Expr::col(H::TokenId)]).gt(
                        Expr::tuple([Expr::val(contract.clone()), Expr::val(token.clone())]),
                    ),
                )
            } else {
                // `contract >= c` is the index range on every backend (a row-value comparison
                // is not, on all MariaDB versions); the rest only filters within contract `c`.
                Condition::all()
                    .add(H::ContractAddress.gte(contract.clone()))
                    .add(
                        Condition::any()
                            .add(H::ContractAddress.gt(contract.clone()))
                            .add(H::TokenId.gt(token.clone())),
                    )
            });
        }
        let limit = q.page_size.get();
        // The chain's status does not depend on the page: both are read at once.
        let page_rows = find
            .order_by_asc(H::ContractAddress)
            .order_by_asc(H::TokenId)
            .limit(limit + 1)
            .all(&self.db);
        let (mut rows, chain_status) =
            futures_util::try_join!(async { Ok(page_rows.await?) }, self.chain_status(q.chain))?;
        let has_more = rows.len() as u64 > limit;
        rows.truncate(limit as usize);

        // Counted once per walk: the first page asking for it counts, its cursors carry the
        // figure on (as of that page; the cursor is signed, so it cannot be forged).
        let counted = start.as_ref().and_then(|p| p.t);
        let total = match (q.with_total, counted) {
            (true, Some(t)) => Some(t),
            (true, None) => Some(
                nft_holding::Entity::find()
                    .filter(q.filter())
                    .count(&self.db)
                    .await?,
            ),
            (false, _) => None,
        };
        let carried = total.or(counted);

        let mint = Arc::new(CursorMint::new(
            &self.cursors,
            CursorKind::Nft,
            digest,
            page + 1,
            carried,
        ));
        let edges = rows
            .into_iter()
            .map(holding)
            .collect::<Result<Vec<_>, QueryError>>()?;
        let next_cursor = if has_more {
            edges.last().map(|e| mint.cursor(&e.key))
        } else {
            None
        };

        let contracts: Vec<Address> = edges.iter().map(|e| e.node.contract).collect();
        let status = self
            .collection_status(
                q.chain,
                chain_status,
                &q.token_addresses.iter().copied().collect::<Vec<_>>(),
                &contracts,
            )
            .await?;
        Ok(Page {
            edges,
            mint,
            next_cursor,
            page,
            page_size: limit,
            total,
            status,
        })
    }
}

/// A row as a record, keyed by its (contract, token id) position.
fn holding(r: nft_holding::Model) -> Result<Edge<NftHolding>, QueryError> {
    let addr = |s: &str| Address::parse(s).map_err(|e| QueryError::Corrupt(e.0));
    let num = |s: &str| Uint256::from_db(s).map_err(|e| QueryError::Corrupt(e.0));
    let node = NftHolding {
        contract: addr(&r.contract_address)?,
        token_id: num(&r.token_id)?,
        owner: addr(&r.owner_address)?,
        amount: num(&r.amount)?,
        contract_type: r.contract_type,
        block_number: u64::try_from(r.block_number).unwrap_or(0),
    };
    Ok(Edge {
        key: vec![r.contract_address, r.token_id],
        node,
    })
}
