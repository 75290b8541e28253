//! Off-chain enrichment: what token URIs point at. The web → offchain → database flow beside
//! the chain → indexer → database one.
//!
//! - [`fetch`]: one HTTP/IPFS/Arweave/`data:` fetcher with timeouts, a size cap, per-host
//!   limits and redirect control, shared by both workers;
//! - [`documents`]: the metadata worker: fetches each token's metadata JSON and stores it raw,
//!   with its sync time, or records the failure and when to retry;
//! - [`media`]: the media worker: turns an image named by metadata into 100/250/500 px
//!   previews in a [`media::MediaStore`]; the API asks for them and never waits.
//!
//! Both workers claim work from the database, so any number of processes can run them.

pub mod cli;
pub mod config;
pub mod documents;
pub mod fetch;
pub mod media;

pub use config::OffchainConfig;

use sea_orm::DatabaseConnection;
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// Starts the off-chain workers of this process (none when `config.enabled` is off), sharing
/// one [`fetch::Fetcher`]. They stop when `stop` turns true or its sender is dropped; await
/// the handles to wait for them.
pub fn spawn(
    db: DatabaseConnection,
    config: OffchainConfig,
    stop: watch::Receiver<bool>,
) -> Vec<JoinHandle<()>> {
    if !config.enabled {
        return Vec::new();
    }
    let fetcher = fetch::Fetcher::new(config);
    let metadata = tokio::spawn(documents::run(
        db.clone(),
        fetcher.clone(),
        documents::Schedule::default(),
        stop.clone(),
    ));
    let media = media::worker::MediaWorker::new(db, fetcher.clone(), fetcher.config().clone());
    let mut media_stop = stop;
    let media = tokio::spawn(media.run(async move {
        // Completes when `stop` turns true or its sender is dropped.
        let _ = media_stop.wait_for(|stopped| *stopped).await;
    }));
    vec![metadata, media]
}
