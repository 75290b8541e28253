//! What the ERC20 and the NFT transfer questions share: which transfers they select, which
//! scopes an answer depends on, and the index ranges a page reads. Each question reads its own
//! table ([`erc20_transfer`], [`nft_transfer`]) through the columns [`TransferColumns`] names.

use sea_orm::{ColumnTrait, Condition};

use super::status::Needs;
use super::{BlockRange, DateRange};
use crate::entity::{erc20_transfer, nft_transfer};
use crate::store::lists::padded;
use crate::types::{AddressList, Chain, Scope};

/// The columns every transfer table has.
pub(super) trait TransferColumns: ColumnTrait + Copy {
    const CHAIN: Self;
    const CONTRACT: Self;
    const FROM: Self;
    const TO: Self;
    const BLOCK: Self;
    /// The block's time, Unix seconds.
    const TIME: Self;
    /// The log's index in its block.
    const LOG: Self;
    /// The transaction's hash.
    const TX: Self;
}

/// Implements [`TransferColumns`] for transfer tables, whose columns have the same names.
macro_rules! transfer_columns {
    ($($table:ident),+) => {$(
        impl TransferColumns for $table::Column {
            const CHAIN: Self = Self::ChainId;
            const CONTRACT: Self = Self::ContractAddress;
            const FROM: Self = Self::FromAddress;
            const TO: Self = Self::ToAddress;
            const BLOCK: Self = Self::BlockNumber;
            const TIME: Self = Self::BlockTimestamp;
            const LOG: Self = Self::LogIndex;
            const TX: Self = Self::TransactionHash;
        }
    )+};
}

transfer_columns!(erc20_transfer, nft_transfer);

/// Which transfers a question selects.
#[derive(Debug, Clone)]
pub(super) struct TransferFilter {
    pub chain: Chain,
    /// Sent or received by one of these; empty: any wallet.
    pub wallets: AddressList,
    /// Of one of these tokens or collections; empty: any.
    pub contracts: AddressList,
    /// Neither sent nor received by any of these.
    pub exclude_wallets: AddressList,
    /// Of none of these.
    pub exclude_contracts: AddressList,
    pub blocks: BlockRange,
    pub dates: DateRange,
}

impl TransferFilter {
    /// Every condition but the wallets' (which [`TransferFilter::arms`] splits into ranges).
    pub fn condition<C: TransferColumns>(&self) -> Condition {
        let mut c = Condition::all().add(C::CHAIN.eq(self.chain.db_id()));
        if !self.contracts.is_empty() {
            c = c.add(C::CONTRACT.is_in(padded(self.contracts.to_vec())));
        }
        if !self.exclude_contracts.is_empty() {
            c = c.add(C::CONTRACT.is_not_in(padded(self.exclude_contracts.to_vec())));
        }
        if !self.exclude_wallets.is_empty() {
            let w = padded(self.exclude_wallets.to_vec());
            c = c.add(C::FROM.is_not_in(w.clone())).add(C::TO.is_not_in(w));
        }
        if let Some(f) = self.blocks.from {
            c = c.add(C::BLOCK.gte(f.db()));
        }
        if let Some(t) = self.blocks.to {
            c = c.add(C::BLOCK.lte(t.db()));
        }
        let secs = |s: u64| i64::try_from(s).unwrap_or(i64::MAX);
        if let Some(f) = self.dates.from {
            c = c.add(C::TIME.gte(secs(f)));
        }
        if let Some(t) = self.dates.to {
            c = c.add(C::TIME.lte(secs(t)));
        }
        c
    }

    /// The scopes the answer depends on (API.md): every named wallet, or every named contract
    /// (either set suffices), or else the chain; none when the range starts at or after the
    /// live start block. An incomplete answer schedules the wallets' history, or else the
    /// contracts'.
    pub fn needs(&self, start_block: Option<u64>) -> Needs {
        let live = matches!((self.blocks.from, start_block), (Some(f), Some(s)) if f.0 >= s);
        let wallets: Vec<Scope> = self.wallets.iter().map(|&a| Scope::wallet(a)).collect();
        let contracts: Vec<Scope> = self.contracts.iter().map(|&a| Scope::contract(a)).collect();
        let schedule = if wallets.is_empty() {
            contracts.clone()
        } else {
            wallets.clone()
        };
        Needs {
            alternatives: [wallets, contracts]
                .into_iter()
                .filter(|a| !a.is_empty())
                .collect(),
            schedule,
            none: live,
            up_to: self.blocks.to.map(|b| b.0),
            as_of: false,
            kept_balances: false,
        }
    }

    /// The index ranges whose union is the answer, each already in output order: one per
    /// wallet and side (sender, recipient) when wallets are named, one per contract when
    /// several contracts are; none (a single range of the filter) otherwise. An `OR` across
    /// columns or an `IN` list would make the databases collect every match and sort it; a
    /// range per value, each cut at the page size, reads at most `arms × (page + 1)` rows.
    pub fn arms<C: TransferColumns>(&self) -> Vec<Condition> {
        if !self.wallets.is_empty() {
            self.wallets
                .to_vec()
                .into_iter()
                .flat_map(|w| {
                    [
                        Condition::all().add(C::FROM.eq(w)),
                        Condition::all().add(C::TO.eq(w)),
                    ]
                })
                .collect()
        } else if self.contracts.iter().nth(1).is_some() {
            self.contracts
                .to_vec()
                .into_iter()
                .map(|c| Condition::all().add(C::CONTRACT.eq(c)))
                .collect()
        } else {
            Vec::new()
        }
    }
}
