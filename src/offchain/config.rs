//! Settings of the off-chain workers (`serve` flags; see the README's configuration table).

use std::path::PathBuf;
use std::time::Duration;

/// Settings of the fetcher and both workers.
#[derive(Debug, Clone)]
pub struct OffchainConfig {
    /// Run the metadata and media workers in this process.
    pub enabled: bool,
    /// IPFS gateways tried in order for `ipfs://` URIs and `/ipfs/` gateway URLs, each a base
    /// URL such as `https://ipfs.io` (the path `/ipfs/<cid>/…` is appended).
    pub ipfs_gateways: Vec<String>,
    /// Arweave gateway for `ar://` URIs, e.g. `https://arweave.net`.
    pub arweave_gateway: String,
    /// Time limit of one fetch, connection to last byte.
    pub timeout: Duration,
    /// Largest metadata document accepted.
    pub max_metadata_bytes: u64,
    /// Largest media file accepted.
    pub max_media_bytes: u64,
    /// Fetches in flight at once, per worker.
    pub concurrency: usize,
    /// Fetches in flight at once to one host.
    pub per_host: usize,
    /// Redirects followed before giving up.
    pub max_redirects: usize,
    /// Where previews are stored.
    pub media_dir: PathBuf,
    /// Base URL under which this server is reachable, for preview URLs
    /// (e.g. `https://tokenql.example.com`); `None`: taken from each request's `Host`.
    pub public_url: Option<String>,
    /// How often idle workers look for new work.
    pub poll_interval: Duration,
}

impl Default for OffchainConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            ipfs_gateways: vec!["https://ipfs.io".into(), "https://dweb.link".into()],
            arweave_gateway: "https://arweave.net".into(),
            timeout: Duration::from_secs(10),
            max_metadata_bytes: 2 * 1024 * 1024,
            max_media_bytes: 20 * 1024 * 1024,
            concurrency: 16,
            per_host: 4,
            max_redirects: 5,
            media_dir: PathBuf::from("tokenql-media"),
            public_url: None,
            poll_interval: Duration::from_millis(500),
        }
    }
}
