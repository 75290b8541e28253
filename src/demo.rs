//! `tokenql serve --demo`: the bundled real mainnet sample, ready to query.
//!
//! The sample (see `data/README.md` for its source and license) is compiled into the binary, so
//! the demo works from any directory.

use std::collections::BTreeMap;

use sea_orm::{DatabaseConnection, EntityTrait};

use crate::import::{self, ImportError, ImportReport};
use crate::types::Chain;

/// The recorded logs.
pub const LOGS: &str = include_str!("../data/demo-mainnet/logs.jsonl");
/// The recorded block headers.
pub const BLOCKS: &str = include_str!("../data/demo-mainnet/blocks.jsonl");
/// The token list giving names, symbols, decimals and logos.
pub const TOKENLIST: &str = include_str!("../data/tokenlists/superchain.tokenlist.json");

/// A wallet of the sample that holds NFTs, for the example URLs.
pub const EXAMPLE_NFT_WALLET: &str = "0x430d5dde0cd48989737a95b4c46e1801a9a08531";

/// Loads the sample into `db` (already migrated) unless it is there. Idempotent.
pub async fn load(db: &DatabaseConnection) -> Result<Option<ImportReport>, ImportError> {
    if crate::entity::chain_state::Entity::find_by_id(Chain::ETH.db_id())
        .one(db)
        .await?
        .is_some()
    {
        return Ok(None);
    }
    let report = load_into(db).await?;
    Ok(Some(report))
}

/// Imports the sample and its token list (always).
pub async fn load_into(db: &DatabaseConnection) -> Result<ImportReport, ImportError> {
    let headers: BTreeMap<_, _> = import::read_blocks_str(BLOCKS, "demo blocks")?;
    let lines = LOGS.lines().map(|l| Ok(l.to_string()));
    let report = import::import_lines(db, Chain::ETH, lines, headers).await?;
    import::import_tokenlist_str(db, Chain::ETH, TOKENLIST, "demo token list").await?;
    Ok(report)
}
