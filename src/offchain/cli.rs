//! Off-chain settings from `serve` flags and environment variables.

use std::path::PathBuf;
use std::time::Duration;

use clap::builder::BoolishValueParser;
use clap::ArgAction;

use super::OffchainConfig;

/// Off-chain flags of `serve` (see the README's configuration table).
#[derive(Debug, Clone, clap::Args)]
pub struct OffchainArgs {
    /// Run the metadata and media workers in this process (`false` to leave them to another
    /// one; the API then serves what is stored).
    #[arg(long, env = "TOKENQL_OFFCHAIN_WORKERS", value_name = "BOOL", default_value_t = true,
          action = ArgAction::Set, value_parser = BoolishValueParser::new())]
    pub offchain_workers: bool,
    /// An IPFS gateway for ipfs:// URIs and /ipfs/ gateway URLs, tried in the order given
    /// (repeatable; env: comma-separated). Default: https://ipfs.io, https://dweb.link.
    #[arg(
        long = "ipfs-gateway",
        env = "TOKENQL_IPFS_GATEWAYS",
        value_name = "URL",
        value_delimiter = ','
    )]
    pub ipfs_gateways: Vec<String>,
    /// The Arweave gateway for ar:// URIs.
    #[arg(
        long,
        env = "TOKENQL_ARWEAVE_GATEWAY",
        value_name = "URL",
        default_value = "https://arweave.net"
    )]
    pub arweave_gateway: String,
    /// Seconds one off-chain request may take, connection to last byte.
    #[arg(long, env = "TOKENQL_FETCH_TIMEOUT_SECS", default_value_t = 10,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub fetch_timeout_secs: u64,
    /// Largest metadata document fetched, in bytes (at most 16 MiB: the column's size on
    /// MySQL/MariaDB).
    #[arg(long, env = "TOKENQL_MAX_METADATA_BYTES", default_value_t = 2 * 1024 * 1024,
          value_parser = clap::value_parser!(u64).range(1..=16 * 1024 * 1024 - 1))]
    pub max_metadata_bytes: u64,
    /// Largest media file fetched for previews, in bytes.
    #[arg(long, env = "TOKENQL_MAX_MEDIA_BYTES", default_value_t = 20 * 1024 * 1024,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub max_media_bytes: u64,
    /// Fetches in flight at once, per worker.
    #[arg(long, env = "TOKENQL_FETCH_CONCURRENCY", default_value_t = 16,
          value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub fetch_concurrency: u64,
    /// Fetches in flight at once to one host.
    #[arg(long, env = "TOKENQL_FETCH_PER_HOST", default_value_t = 4,
          value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub fetch_per_host: u64,
    /// Directory of the media previews.
    #[arg(long, env = "TOKENQL_MEDIA_DIR", default_value = "tokenql-media")]
    pub media_dir: PathBuf,
    /// Base URL under which this server is reached, for preview links (e.g.
    /// https://tokenql.example.com); default: each request's Host.
    #[arg(long, env = "TOKENQL_PUBLIC_URL", value_name = "URL")]
    pub public_url: Option<String>,
}

/// `s` as an http(s) base URL without a trailing `/`, or a message naming `flag`.
fn base_url(flag: &str, s: &str) -> Result<String, String> {
    let t = s.trim().trim_end_matches('/');
    match reqwest::Url::parse(t) {
        Ok(u) if matches!(u.scheme(), "http" | "https") && u.host_str().is_some() => {
            Ok(t.to_string())
        }
        _ => Err(format!("{flag}: '{s}' is not an http(s) URL")),
    }
}

impl OffchainArgs {
    /// The configuration, or a message naming the bad value.
    pub fn config(&self) -> Result<OffchainConfig, String> {
        let defaults = OffchainConfig::default();
        let gateways: Vec<&String> = self
            .ipfs_gateways
            .iter()
            .filter(|g| !g.trim().is_empty())
            .collect();
        let ipfs_gateways = if gateways.is_empty() {
            defaults.ipfs_gateways.clone()
        } else {
            gateways
                .into_iter()
                .map(|g| base_url("--ipfs-gateway", g))
                .collect::<Result<_, _>>()?
        };
        Ok(OffchainConfig {
            enabled: self.offchain_workers,
            ipfs_gateways,
            arweave_gateway: base_url("--arweave-gateway", &self.arweave_gateway)?,
            timeout: Duration::from_secs(self.fetch_timeout_secs),
            max_metadata_bytes: self.max_metadata_bytes,
            max_media_bytes: self.max_media_bytes,
            concurrency: self.fetch_concurrency as usize,
            per_host: self.fetch_per_host as usize,
            media_dir: self.media_dir.clone(),
            public_url: self
                .public_url
                .as_deref()
                .filter(|u| !u.trim().is_empty())
                .map(|u| base_url("--public-url", u))
                .transpose()?,
            ..defaults
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        offchain: OffchainArgs,
    }

    fn config(args: &[&str]) -> Result<OffchainConfig, String> {
        let cli = Cli::try_parse_from(std::iter::once("tokenql").chain(args.iter().copied()))
            .map_err(|e| e.to_string())?;
        cli.offchain.config()
    }

    #[test]
    fn defaults_match_the_config_defaults() {
        let c = config(&[]).unwrap_or_else(|e| panic!("{e}"));
        let d = OffchainConfig::default();
        assert!(c.enabled);
        assert_eq!(c.ipfs_gateways, d.ipfs_gateways);
        assert_eq!(c.arweave_gateway, d.arweave_gateway);
        assert_eq!(c.timeout, d.timeout);
        assert_eq!(
            (c.max_metadata_bytes, c.max_media_bytes),
            (d.max_metadata_bytes, d.max_media_bytes)
        );
        assert_eq!((c.concurrency, c.per_host), (d.concurrency, d.per_host));
        assert_eq!(c.media_dir, d.media_dir);
        assert_eq!(c.public_url, None);
    }

    #[test]
    fn flags() {
        let c = config(&[
            "--offchain-workers",
            "false",
            "--ipfs-gateway",
            "http://127.0.0.1:8081/",
            "--ipfs-gateway",
            "https://gw.test",
            "--arweave-gateway",
            "https://ar.test/",
            "--fetch-timeout-secs",
            "3",
            "--max-metadata-bytes",
            "1000",
            "--max-media-bytes",
            "2000",
            "--fetch-concurrency",
            "5",
            "--fetch-per-host",
            "2",
            "--media-dir",
            "/tmp/m",
            "--public-url",
            "https://tq.example.com/",
        ])
        .unwrap_or_else(|e| panic!("{e}"));
        assert!(!c.enabled);
        assert_eq!(
            c.ipfs_gateways,
            ["http://127.0.0.1:8081", "https://gw.test"]
        );
        assert_eq!(c.arweave_gateway, "https://ar.test");
        assert_eq!(c.timeout, Duration::from_secs(3));
        assert_eq!((c.max_metadata_bytes, c.max_media_bytes), (1000, 2000));
        assert_eq!((c.concurrency, c.per_host), (5, 2));
        assert_eq!(c.media_dir, PathBuf::from("/tmp/m"));
        assert_eq!(c.public_url.as_deref(), Some("https://tq.example.com"));
        assert!(config(&["--offchain-workers", "no"]).is_ok_and(|c| !c.enabled));
    }

    #[test]
    fn bad_values_are_named() {
        for (args, flag) in [
            (&["--ipfs-gateway", "ipfs.io"][..], "--ipfs-gateway"),
            (&["--arweave-gateway", "ftp://x"], "--arweave-gateway"),
            (&["--public-url", "not a url"], "--public-url"),
            (&["--fetch-timeout-secs", "0"], "--fetch-timeout-secs"),
            (&["--fetch-concurrency", "0"], "--fetch-concurrency"),
            (&["--fetch-per-host", "0"], "--fetch-per-host"),
            (&["--max-metadata-bytes", "0"], "--max-metadata-bytes"),
            (&["--offchain-workers", "maybe"], "--offchain-workers"),
        ] {
            let e = config(args).err().unwrap_or_default();
            assert!(e.contains(flag), "{args:?}: {e}");
        }
    }
}
