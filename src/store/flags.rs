//! The spam and verified flags of contracts, with where each came from (see [`FlagSource`]: an
//! admin's choice beats a list, which beats the heuristics).

use sea_orm::sea_query::{Expr, OnConflict};
use sea_orm::{
    ColumnTrait, Condition, ConnectionTrait, DbErr, EntityTrait, PaginatorTrait, QueryFilter,
};

use super::contracts::{bare, ContractMeta};
use crate::entity::contract;
use crate::types::{Address, Chain};

/// Sets the spam / verified flags of one contract (creating its row if needed), recording no
/// source: a raw write (it also registers a contract known only by address). Imports and
/// admins go through [`list_flag`] and [`admin_flag`], which keep the precedence.
pub async fn set_flags<C: ConnectionTrait>(
    db: &C,
    chain: Chain,
    address: Address,
    possible_spam: bool,
    verified: bool,
) -> Result<(), DbErr> {
    let mut m = bare(chain, address, ContractMeta::default());
    m.possible_spam = possible_spam;
    m.verified = verified;
    let row: contract::ActiveModel = m.into();
    contract::Entity::insert(row)
        .on_conflict(
            OnConflict::columns([contract::Column::ChainId, contract::Column::Address])
                .update_columns([contract::Column::PossibleSpam, contract::Column::Verified])
                .to_owned(),
        )
        .exec_without_returning(db)
        .await?;
    Ok(())
}

/// Where a spam or verified flag came from. The stronger source wins: `Admin` > `List` >
/// `Heuristic`; no source means nobody has decided (the flag is false).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum FlagSource {
    /// The spam heuristics (`lists::heuristics`); spam only.
    Heuristic,
    /// An imported spam list or verified allow-list.
    List,
    /// `tokenql contract set`: never overwritten by an import or the heuristics.
    Admin,
}

impl FlagSource {
    /// As stored in `contracts.spam_source` / `verified_source`.
    pub fn as_str(self) -> &'static str {
        match self {
            FlagSource::Heuristic => "heuristic",
            FlagSource::List => "list",
            FlagSource::Admin => "admin",
        }
    }

    /// From the stored value; `None` for NULL or an unknown value.
    pub fn parse(s: Option<&str>) -> Option<Self> {
        match s? {
            "heuristic" => Some(FlagSource::Heuristic),
            "list" => Some(FlagSource::List),
            "admin" => Some(FlagSource::Admin),
            _ => None,
        }
    }
}

/// A contract's flag: `possible_spam` or `verified`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flag {
    Spam,
    Verified,
}

impl Flag {
    /// The flag's column and its source column.
    fn columns(self) -> (contract::Column, contract::Column) {
        match self {
            Flag::Spam => (contract::Column::PossibleSpam, contract::Column::SpamSource),
            Flag::Verified => (contract::Column::Verified, contract::Column::VerifiedSource),
        }
    }
}

/// What a list import did to the database.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ListOutcome {
    /// Contracts whose flag the list set.
    pub applied: u64,
    /// Contracts left alone because an admin decided their flag.
    pub kept_admin: u64,
}

/// Sets `flag` on these contracts as a list says, except where an admin decided (creating rows
/// for contracts not seen yet, so they are flagged as soon as their transfers arrive).
pub async fn list_flag<C: ConnectionTrait>(
    db: &C,
    chain: Chain,
    flag: Flag,
    addresses: &[Address],
) -> Result<ListOutcome, DbErr> {
    let (value_col, source_col) = flag.columns();
    let addresses: std::collections::BTreeSet<Address> = addresses.iter().copied().collect();
    let addresses: Vec<Address> = addresses.into_iter().collect();
    let mut out = ListOutcome::default();
    for chunk in addresses.chunks(super::CHUNK) {
        let rows: Vec<contract::ActiveModel> = chunk
            .iter()
            .map(|a| {
                let mut m = bare(chain, *a, ContractMeta::default());
                match flag {
                    Flag::Spam => {
                        m.possible_spam = true;
                        m.spam_source = Some(FlagSource::List.as_str().to_string());
                    }
                    Flag::Verified => {
                        m.verified = true;
                        m.verified_source = Some(FlagSource::List.as_str().to_string());
                    }
                }
                m.into()
            })
            .collect();
        contract::Entity::insert_many(rows)
            .on_conflict(super::skip_existing([
                contract::Column::ChainId,
                contract::Column::Address,
            ]))
            .exec_without_returning(db)
            .await?;
        let admin = contract::Entity::find()
            .filter(contract::Column::ChainId.eq(chain.db_id()))
            .filter(contract::Column::Address.is_in(chunk.to_vec()))
            .filter(source_col.eq(FlagSource::Admin.as_str()))
            .count(db)
            .await?;
        contract::Entity::update_many()
            .col_expr(value_col, Expr::value(true))
            .col_expr(source_col, Expr::value(FlagSource::List.as_str()))
            .filter(contract::Column::ChainId.eq(chain.db_id()))
            .filter(contract::Column::Address.is_in(chunk.to_vec()))
            .filter(
                Condition::any()
                    .add(source_col.is_null())
                    .add(source_col.ne(FlagSource::Admin.as_str())),
            )
            .exec(db)
            .await?;
        out.kept_admin += admin;
        out.applied += chunk.len() as u64 - admin;
    }
    Ok(out)
}

/// Applies the heuristics' verdicts: `flag` marks possible spam where nobody decided yet;
/// `clear` removes the heuristics' own flag (lists' and admins' flags are never touched).
pub async fn heuristic_spam<C: ConnectionTrait>(
    db: &C,
    chain: Chain,
    flag: &[Address],
    clear: &[Address],
) -> Result<(), DbErr> {
    for chunk in flag.chunks(super::CHUNK) {
        contract::Entity::update_many()
            .col_expr(contract::Column::PossibleSpam, Expr::value(true))
            .col_expr(
                contract::Column::SpamSource,
                Expr::value(FlagSource::Heuristic.as_str()),
            )
            .filter(contract::Column::ChainId.eq(chain.db_id()))
            .filter(contract::Column::Address.is_in(chunk.to_vec()))
            .filter(contract::Column::SpamSource.is_null())
            .exec(db)
            .await?;
    }
    for chunk in clear.chunks(super::CHUNK) {
        contract::Entity::update_many()
            .col_expr(contract::Column::PossibleSpam, Expr::value(false))
            .col_expr(contract::Column::SpamSource, Expr::value(None::<String>))
            .filter(contract::Column::ChainId.eq(chain.db_id()))
            .filter(contract::Column::Address.is_in(chunk.to_vec()))
            .filter(contract::Column::SpamSource.eq(FlagSource::Heuristic.as_str()))
            .exec(db)
            .await?;
    }
    Ok(())
}

/// An admin's decision on one contract's flag (creating its row if needed): `Some(v)` sets it
/// to `v` for good; `None` ("auto") removes any decision: the flag is false with no source
/// until a list or the heuristics set it again.
pub async fn admin_flag<C: ConnectionTrait>(
    db: &C,
    chain: Chain,
    address: Address,
    flag: Flag,
    value: Option<bool>,
) -> Result<(), DbErr> {
    let (value_col, source_col) = flag.columns();
    contract::Entity::insert(contract::ActiveModel::from(bare(
        chain,
        address,
        ContractMeta::default(),
    )))
    .on_conflict(super::skip_existing([
        contract::Column::ChainId,
        contract::Column::Address,
    ]))
    .exec_without_returning(db)
    .await?;
    contract::Entity::update_many()
        .col_expr(value_col, Expr::value(value.unwrap_or(false)))
        .col_expr(
            source_col,
            Expr::value(value.map(|_| FlagSource::Admin.as_str().to_string())),
        )
        .filter(contract::Column::ChainId.eq(chain.db_id()))
        .filter(contract::Column::Address.eq(address))
        .exec(db)
        .await?;
    Ok(())
}
