//! `tokenql lists …` (imports and the heuristics) and `tokenql contract show|set` (an admin's
//! view and overrides of one contract). Each returns the lines to print.

use std::path::PathBuf;

use sea_orm::DatabaseConnection;

use super::{heuristics, labels, spam, tokenlist, verified, ListError, ListReport};
use crate::store::flags::{admin_flag, Flag, FlagSource};
use crate::store::{self, contracts};
use crate::types::{Address, Chain};

fn parse_chain(s: &str) -> Result<Chain, String> {
    Chain::parse(s).map_err(|e| e.0)
}

fn parse_address(s: &str) -> Result<Address, String> {
    Address::parse(s).map_err(|e| e.0)
}

/// `tokenql lists …`
#[derive(Debug, Clone, clap::Subcommand)]
pub enum ListsAction {
    /// Import spam lists (CSV `chain_id,address,spam_score`, header required): the listed
    /// contracts become possible spam, except where an admin decided.
    Spam {
        /// Spam list files (each gets a summary line).
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Import a verified allow-list (CSV `chain_id,address`, or `address` rows with --chain).
    Verified {
        /// The allow-list file.
        file: PathBuf,
        /// Chain of rows without a chain_id.
        #[arg(long, value_parser = parse_chain)]
        chain: Option<Chain>,
    },
    /// Import address labels (etherscan-labels JSON, or CSV `address,label`).
    Labels {
        /// A `.json` (etherscan-labels) or `.csv` (`address,label`) file.
        file: PathBuf,
        /// Chain the labels belong to.
        #[arg(long, value_parser = parse_chain, default_value = "eth")]
        chain: Chain,
    },
    /// Import a token list (tokenlists.org): logos, and names/symbols/decimals where unknown.
    Tokens {
        /// The token list (JSON).
        file: PathBuf,
        /// Import only this chain's entries (default: every chain tokenql knows).
        #[arg(long, value_parser = parse_chain)]
        chain: Option<Chain>,
    },
    /// Re-run the spam heuristics over every stored contract.
    Heuristics,
}

/// An admin's setting of one flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Setting {
    /// Set the flag, whatever lists (and heuristics) say.
    Yes,
    /// Clear the flag, whatever lists (and heuristics) say.
    No,
    /// Remove the override: the flag is cleared and left to lists (and heuristics) again.
    Auto,
}

impl Setting {
    fn value(self) -> Option<bool> {
        match self {
            Setting::Yes => Some(true),
            Setting::No => Some(false),
            Setting::Auto => None,
        }
    }
}

/// `tokenql contract …`
#[derive(Debug, Clone, clap::Subcommand)]
pub enum ContractAction {
    /// Show a contract's metadata, flags and where each flag came from.
    Show {
        /// The contract's chain.
        #[arg(long, value_parser = parse_chain, default_value = "eth")]
        chain: Chain,
        /// The contract's address.
        #[arg(value_parser = parse_address)]
        address: Address,
    },
    /// Override a contract's spam or verified flag (an admin's choice survives list imports).
    Set {
        /// The contract's chain.
        #[arg(long, value_parser = parse_chain, default_value = "eth")]
        chain: Chain,
        /// The contract's address.
        #[arg(value_parser = parse_address)]
        address: Address,
        /// possible_spam: yes, no, or auto (back to lists and heuristics).
        #[arg(long, value_enum)]
        spam: Option<Setting>,
        /// verified_collection: yes, no, or auto (back to lists).
        #[arg(long, value_enum)]
        verified: Option<Setting>,
    },
}

/// Runs a `lists` command; one summary line per file.
pub async fn run_lists(
    db: &DatabaseConnection,
    action: ListsAction,
) -> Result<Vec<String>, ListError> {
    let reports: Vec<ListReport> = match action {
        ListsAction::Spam { files } => {
            let mut out = Vec::new();
            for f in files {
                out.push(spam::import_file(db, &f).await?);
            }
            out
        }
        ListsAction::Verified { file, chain } => {
            vec![verified::import_file(db, &file, chain).await?]
        }
        ListsAction::Labels { file, chain } => vec![labels::import_file(db, &file, chain).await?],
        ListsAction::Tokens { file, chain } => {
            vec![tokenlist::import_file(db, &file, chain).await?]
        }
        ListsAction::Heuristics => {
            return Ok(vec![heuristics::apply(db, None).await?.to_string()]);
        }
    };
    for r in &reports {
        for p in &r.problems {
            tracing::warn!(problem = %p, "malformed row skipped");
        }
        if r.malformed > r.problems.len() as u64 {
            tracing::warn!(
                more = r.malformed - r.problems.len() as u64,
                "more malformed rows skipped"
            );
        }
    }
    Ok(reports.iter().map(ToString::to_string).collect())
}

/// Errors of `tokenql contract`.
#[derive(Debug, thiserror::Error)]
pub enum ContractError {
    #[error("nothing to set: give --spam and/or --verified (yes, no or auto)")]
    NothingToSet,
    #[error("no contract {address} on {chain} is stored")]
    Unknown {
        chain: &'static str,
        address: Address,
    },
    #[error(transparent)]
    Db(#[from] sea_orm::DbErr),
}

/// Runs a `contract` command.
pub async fn run_contract(
    db: &DatabaseConnection,
    action: ContractAction,
) -> Result<Vec<String>, ContractError> {
    match action {
        ContractAction::Show { chain, address } => show(db, chain, address).await,
        ContractAction::Set {
            chain,
            address,
            spam,
            verified,
        } => {
            if spam.is_none() && verified.is_none() {
                return Err(ContractError::NothingToSet);
            }
            if let Some(s) = spam {
                admin_flag(db, chain, address, Flag::Spam, s.value()).await?;
                if s == Setting::Auto {
                    heuristics::apply(db, Some((chain, &[address]))).await?;
                }
            }
            if let Some(v) = verified {
                admin_flag(db, chain, address, Flag::Verified, v.value()).await?;
            }
            show(db, chain, address).await
        }
    }
}

/// A contract as the admin sees it.
async fn show(
    db: &DatabaseConnection,
    chain: Chain,
    address: Address,
) -> Result<Vec<String>, ContractError> {
    let row = contracts::get(db, chain, address)
        .await?
        .ok_or(ContractError::Unknown {
            chain: chain.name(),
            address,
        })?;
    let label = store::labels::label(db, chain, address).await?;
    let opt = |v: Option<String>| v.unwrap_or_else(|| "-".into());
    let source = |s: Option<String>| match FlagSource::parse(s.as_deref()) {
        Some(FlagSource::Heuristic) => format!(
            "heuristic: {}",
            heuristics::check(row.name.as_deref(), row.symbol.as_deref()).unwrap_or("no match now")
        ),
        Some(src) => src.as_str().to_string(),
        None => s.map_or("not set".into(), |s| format!("unknown source '{s}'")),
    };
    Ok(vec![
        format!("contract       {} on {}", row.address, chain.name()),
        format!(
            "standard       {}",
            opt(row.standard.map(|s| s.as_str().to_string()))
        ),
        format!("name           {}", opt(row.name.clone())),
        format!("symbol         {}", opt(row.symbol.clone())),
        format!(
            "decimals       {}",
            opt(row.decimals.map(|d| d.to_string()))
        ),
        format!("logo           {}", opt(row.logo.clone())),
        format!("label          {}", opt(label)),
        format!(
            "possible_spam  {} ({})",
            row.possible_spam,
            source(row.spam_source.clone())
        ),
        format!(
            "verified       {} ({})",
            row.verified,
            source(row.verified_source.clone())
        ),
    ])
}
