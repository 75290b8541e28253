//! What a token URI names, and where to read it.
//!
//! - `data:…` — decoded in place ([`super::data_uri`]);
//! - `ipfs://<cid>[/<path>]` and `ipfs://ipfs/<cid>[/<path>]` — `{gateway}/ipfs/<cid>[/<path>]`
//!   for each configured gateway, in order;
//! - `http(s)://` URLs whose path holds `/ipfs/<cid>` (any host: `https://gateway.pinata.cloud/
//!   ipfs/Qm…/1.json`, `https://ipfs.io/ipfs/…`) and subdomain gateways
//!   (`https://<cid>.ipfs.dweb.link/…`) — rewritten the same way, so one slow public gateway
//!   named in a contract does not decide for us;
//! - `ar://<txid>[/<path>]` — `{arweave gateway}/<txid>[/<path>]`;
//! - other `http(s)://` URLs — as they are.
//!
//! Anything else (empty, relative, `javascript:`, …) is refused.

use reqwest::Url;

use super::{FetchError, OffchainConfig};

/// Where a URI is read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Target {
    /// A `data:` URI (the whole URI).
    Data(String),
    /// URLs to try in order until one answers (several for IPFS gateways).
    Http(Vec<Url>),
}

fn invalid(why: &str, uri: &str) -> FetchError {
    let shown: String = uri.chars().take(80).collect();
    FetchError::InvalidUrl(format!("{why}: {shown}"))
}

/// Whether `s` looks like an IPFS CID: CIDv0 (`Qm` + 44 base58 characters) or CIDv1 in
/// base32 (`b` + at least 50 lowercase letters and digits 2-7) or base36 (`k…`).
pub(super) fn is_cid(s: &str) -> bool {
    let base58 = |c: char| c.is_ascii_alphanumeric() && !matches!(c, '0' | 'O' | 'I' | 'l');
    if s.len() == 46 && s.starts_with("Qm") && s.chars().all(base58) {
        return true;
    }
    let lower = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    s.len() >= 50 && (s.starts_with('b') || s.starts_with('k')) && s.chars().all(lower)
}

/// `{gateway}/ipfs/{rest}` for every gateway.
fn gateways(config: &OffchainConfig, rest: &str, uri: &str) -> Result<Vec<Url>, FetchError> {
    if config.ipfs_gateways.is_empty() {
        return Err(invalid("no IPFS gateway configured for", uri));
    }
    config
        .ipfs_gateways
        .iter()
        .map(|g| {
            Url::parse(&format!("{}/ipfs/{rest}", g.trim_end_matches('/')))
                .map_err(|_| invalid("cannot build a gateway URL for", uri))
        })
        .collect()
}

/// Strips a case-insensitive scheme prefix.
fn strip_scheme<'a>(s: &'a str, scheme: &str) -> Option<&'a str> {
    let n = scheme.len();
    (s.len() >= n && s.is_char_boundary(n) && s[..n].eq_ignore_ascii_case(scheme)).then(|| &s[n..])
}

/// Classifies `uri` and lists where to read it.
pub(super) fn target(uri: &str, config: &OffchainConfig) -> Result<Target, FetchError> {
    let uri = uri.trim();
    if uri.is_empty() {
        return Err(FetchError::InvalidUrl("empty URI".into()));
    }
    if strip_scheme(uri, "data:").is_some() {
        return Ok(Target::Data(uri.to_string()));
    }
    if let Some(rest) = strip_scheme(uri, "ipfs://") {
        let rest = rest.trim_start_matches('/');
        let rest = strip_scheme(rest, "ipfs/").unwrap_or(rest);
        let cid = rest.split(['/', '?', '#']).next().unwrap_or_default();
        if cid.is_empty() || !cid.chars().all(|c| c.is_ascii_alphanumeric()) {
            return Err(invalid("bad IPFS CID in", uri));
        }
        return gateways(config, rest, uri).map(Target::Http);
    }
    if let Some(rest) = strip_scheme(uri, "ar://") {
        let tx = rest.split(['/', '?', '#']).next().unwrap_or_default();
        if tx.is_empty()
            || !tx
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return Err(invalid("bad Arweave id in", uri));
        }
        let url = format!("{}/{rest}", config.arweave_gateway.trim_end_matches('/'));
        return Url::parse(&url)
            .map(|u| Target::Http(vec![u]))
            .map_err(|_| invalid("cannot build an Arweave URL for", uri));
    }
    if strip_scheme(uri, "http://").is_none() && strip_scheme(uri, "https://").is_none() {
        return Err(invalid("unsupported URI", uri));
    }
    let url = Url::parse(uri).map_err(|_| invalid("malformed URL", uri))?;
    let Some(host) = url.host_str() else {
        return Err(invalid("URL without a host", uri));
    };
    // Path gateways: …/ipfs/<cid>/<path>.
    let path = url.path();
    if let Some(i) = path.find("/ipfs/") {
        let rest = &path[i + "/ipfs/".len()..];
        let cid = rest.split('/').next().unwrap_or_default();
        if is_cid(cid) && !config.ipfs_gateways.is_empty() {
            return gateways(config, rest, uri).map(Target::Http);
        }
    }
    // Subdomain gateways: <cid>.ipfs.<domain>/<path>.
    if let Some((cid, _)) = host.split_once(".ipfs.") {
        if is_cid(cid) && !config.ipfs_gateways.is_empty() {
            let rest = format!("{cid}{path}");
            return gateways(config, rest.trim_end_matches('/'), uri).map(Target::Http);
        }
    }
    Ok(Target::Http(vec![url]))
}

#[cfg(test)]
mod tests {
    use super::*;

    const CID0: &str = "QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG";
    const CID1: &str = "bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi";

    fn config() -> OffchainConfig {
        OffchainConfig {
            ipfs_gateways: vec!["http://gw1.test".into(), "https://gw2.test/".into()],
            arweave_gateway: "https://ar.test/".into(),
            ..OffchainConfig::default()
        }
    }

    fn urls(uri: &str) -> Vec<String> {
        match target(uri, &config()) {
            Ok(Target::Http(u)) => u.into_iter().map(String::from).collect(),
            other => panic!("{uri}: {other:?}"),
        }
    }

    #[test]
    fn cids() {
        assert!(is_cid(CID0));
        assert!(is_cid(CID1));
        assert!(!is_cid("QmX"));
        assert!(!is_cid("ipfs"));
        assert!(!is_cid(&CID1.to_uppercase()));
    }

    #[test]
    fn ipfs_uris_go_to_every_gateway_in_order() {
        let want = vec![
            format!("http://gw1.test/ipfs/{CID0}/7.json"),
            format!("https://gw2.test/ipfs/{CID0}/7.json"),
        ];
        assert_eq!(urls(&format!("ipfs://{CID0}/7.json")), want);
        assert_eq!(urls(&format!("ipfs://ipfs/{CID0}/7.json")), want);
        assert_eq!(urls(&format!("IPFS://{CID0}/7.json")), want);
        assert_eq!(
            urls(&format!("ipfs://{CID1}")),
            vec![
                format!("http://gw1.test/ipfs/{CID1}"),
                format!("https://gw2.test/ipfs/{CID1}")
            ]
        );
        // Any CID-ish name is accepted for ipfs:// (the gateway decides).
        assert_eq!(
            urls("ipfs://QmX/meta/png")[0],
            "http://gw1.test/ipfs/QmX/meta/png"
        );
    }

    #[test]
    fn gateway_urls_are_rewritten() {
        let want = vec![
            format!("http://gw1.test/ipfs/{CID0}/1.json"),
            format!("https://gw2.test/ipfs/{CID0}/1.json"),
        ];
        assert_eq!(
            urls(&format!("https://gateway.pinata.cloud/ipfs/{CID0}/1.json")),
            want
        );
        assert_eq!(urls(&format!("http://ipfs.io/ipfs/{CID0}/1.json")), want);
        assert_eq!(
            urls(&format!("https://{CID1}.ipfs.dweb.link/a/b.png"))[0],
            format!("http://gw1.test/ipfs/{CID1}/a/b.png")
        );
        // Not a CID: left alone.
        assert_eq!(
            urls("https://example.com/ipfs/notacid/1.json"),
            vec!["https://example.com/ipfs/notacid/1.json"]
        );
    }

    #[test]
    fn arweave_and_plain_http() {
        assert_eq!(
            urls("ar://abc-DEF_123"),
            vec!["https://ar.test/abc-DEF_123"]
        );
        assert_eq!(urls("ar://abc/x.json"), vec!["https://ar.test/abc/x.json"]);
        assert_eq!(
            urls("https://api.example.com/meta/1?x=y"),
            vec!["https://api.example.com/meta/1?x=y"]
        );
        assert_eq!(
            urls("  http://127.0.0.1:8080/a  "),
            vec!["http://127.0.0.1:8080/a"]
        );
    }

    #[test]
    fn data_uris_are_kept_whole() {
        assert_eq!(
            target("data:application/json,{}", &config()),
            Ok(Target::Data("data:application/json,{}".into()))
        );
    }

    #[test]
    fn the_rest_is_invalid() {
        for uri in [
            "",
            "   ",
            "not a url",
            "/relative/path.json",
            "1.json",
            "javascript:alert(1)",
            "ftp://example.com/x",
            "file:///etc/passwd",
            "ipfs://",
            "ipfs://ipfs/",
            "ipfs://bad cid/x",
            "ar://",
            "ar://a b",
            "http://",
            "http://:80/x",
            "Qm",
        ] {
            assert!(
                matches!(target(uri, &config()), Err(FetchError::InvalidUrl(_))),
                "{uri:?}: {:?}",
                target(uri, &config())
            );
        }
        let none = OffchainConfig {
            ipfs_gateways: vec![],
            ..config()
        };
        assert!(matches!(
            target(&format!("ipfs://{CID0}"), &none),
            Err(FetchError::InvalidUrl(_))
        ));
        // With no gateway, a gateway URL is read where it points.
        assert!(matches!(
            target(&format!("https://ipfs.io/ipfs/{CID0}"), &none),
            Ok(Target::Http(_))
        ));
    }
}
