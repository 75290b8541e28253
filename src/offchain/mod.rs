//! Off-chain enrichment: what token URIs point at. The web → offchain → database flow beside
//! the chain → indexer → database one.
//!
//! - [`fetch`]: one HTTP/IPFS/Arweave/`data:` fetcher with timeouts, a size cap, per-host
//!   limits and redirect control, shared by both workers;
//! - [`metadata`]: the metadata worker: fetches each token's metadata JSON and stores it raw,
//!   with its sync time, or records the failure and when to retry;
//! - [`media`]: the media worker: turns an image named by metadata into 100/250/500 px
//!   previews in a [`media::MediaStore`]; the API asks for them and never waits.
//!
//! Both workers claim work from the database, so any number of processes can run them.

pub mod config;
pub mod fetch;
pub mod media;
pub mod metadata;

pub use config::OffchainConfig;
