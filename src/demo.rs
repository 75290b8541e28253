//! `tokenql serve --demo`: the bundled real mainnet sample, ready to query.
//!
//! The sample, the token list, the Ethereum spam list and the address labels (see
//! `data/README.md` for their sources and licenses) are compiled into the binary, so the demo
//! works from any directory.

use std::collections::BTreeMap;

use sea_orm::DatabaseConnection;

use crate::import::{self, ImportError, ImportReport};
use crate::lists::{self, ListReport};
use crate::store;
use crate::types::Chain;

/// The recorded logs.
pub const LOGS: &str = include_str!("../data/demo-mainnet/logs.jsonl");
/// The recorded block headers.
pub const BLOCKS: &str = include_str!("../data/demo-mainnet/blocks.jsonl");
/// The token list giving names, symbols, decimals and logos.
pub const TOKENLIST: &str = include_str!("../data/tokenlists/superchain.tokenlist.json");

/// Covalent's spam list of Ethereum mainnet token contracts.
pub const SPAM_LIST: &str =
    include_str!("../data/spam/covalent_eth_mainnet_token_spam_contracts_maybe.csv");
/// Etherscan's address labels of Ethereum mainnet.
pub const LABELS: &str = include_str!("../data/labels/etherscan-labels-eth.json");

/// A wallet of the sample that holds NFTs, for the example URLs.
pub const EXAMPLE_NFT_WALLET: &str = "0x430d5dde0cd48989737a95b4c46e1801a9a08531";

/// Loads the sample into `db` (already migrated) unless it is there, and the bundled spam list
/// and labels unless labels are there (so a demo database made before they were bundled gets
/// them too). Idempotent.
pub async fn load(db: &DatabaseConnection) -> Result<Option<ImportReport>, ImportError> {
    let report = if store::chain::state(db, Chain::ETH).await?.is_some() {
        None
    } else {
        Some(load_into(db).await?)
    };
    let labelled = store::labels::count(db, Chain::ETH).await?;
    if labelled == 0 {
        for r in load_lists(db).await? {
            tracing::info!(summary = %r, "demo list loaded");
        }
    }
    Ok(report)
}

/// Imports the bundled Ethereum spam list and address labels (always).
pub async fn load_lists(db: &DatabaseConnection) -> Result<Vec<ListReport>, ImportError> {
    Ok(vec![
        lists::spam::import_str(db, SPAM_LIST, "demo spam list").await?,
        lists::labels::import_str(db, LABELS, "demo labels.json", Chain::ETH).await?,
    ])
}

/// Imports the sample and its token list (always; not the spam list and labels, see
/// [`load_lists`]).
pub async fn load_into(db: &DatabaseConnection) -> Result<ImportReport, ImportError> {
    let headers: BTreeMap<_, _> = import::read_blocks_str(BLOCKS, "demo blocks")?;
    let lines = LOGS.lines().map(|l| Ok(l.to_string()));
    let report = import::import_lines(db, Chain::ETH, lines, headers).await?;
    // The sample stands on its own: its answers are complete (API.md, SYNCED).
    store::mark_history_complete(db, Chain::ETH).await?;
    lists::tokenlist::import_str(db, TOKENLIST, "demo token list", Some(Chain::ETH)).await?;
    Ok(report)
}
