//! Opaque, tamper-evident keyset cursors bound to the query that produced them.
//!
//! A cursor is `base64url(payload) "." base64url(HMAC-SHA256(secret, payload)[..16])`. The
//! payload names the endpoint (`nft` / `erc20`), a digest of the query's filters, the page
//! number that follows, and the keyset position of the last record returned. Editing any
//! character breaks the MAC; reusing a cursor with other filters or on the other endpoint
//! changes the digest or kind. Each is refused with a [`CursorError`], the user's fault.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::Key;

type HmacSha256 = Hmac<Sha256>;

/// Which connection a cursor belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CursorKind {
    Nft,
    Erc20,
    /// NFT transfers (`nftx` in the payload).
    #[serde(rename = "nftx")]
    NftTransfer,
    /// A collection's owners.
    #[serde(rename = "owners")]
    NftOwner,
    /// A wallet's collections.
    #[serde(rename = "collections")]
    Collections,
    /// A wallet's ERC20 balances.
    #[serde(rename = "balances")]
    Balances,
    /// A collection's NFTs.
    #[serde(rename = "cnfts")]
    CollectionNfts,
    /// A collection's traits.
    #[serde(rename = "traits")]
    Traits,
    /// A collection's NFTs that have the traits asked for.
    #[serde(rename = "tnfts")]
    TraitNfts,
    /// A collection's distinct holders.
    #[serde(rename = "uowners")]
    UniqueOwners,
    /// An ERC20 token's holders.
    #[serde(rename = "holders")]
    TokenHolders,
}

/// The decoded content of a cursor. On the wire each field keeps the one-letter name the first
/// servers wrote (`k q p a t i`), so cursors stay short and every server version reads every
/// other's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CursorPayload {
    /// The question the cursor walks.
    #[serde(rename = "k")]
    pub kind: CursorKind,
    /// Digest of the query's filters.
    #[serde(rename = "q")]
    pub digest: String,
    /// The page number this cursor opens (1-based).
    #[serde(rename = "p")]
    pub page: u64,
    /// Keyset position of the last record before it, as text ([`super::walk::Position`]
    /// parses it).
    #[serde(rename = "a")]
    pub after: Vec<String>,
    /// The total an earlier page of this walk counted, so that later pages asking for it
    /// do not count again: a walk counts at most once, however deep it goes.
    #[serde(rename = "t", default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// An earlier page of this walk was incomplete (`SYNCING`): so is every later page, or a
    /// walk begun incomplete could end on a page saying `SYNCED` though its earlier pages
    /// missed records.
    #[serde(rename = "i", default, skip_serializing_if = "std::ops::Not::not")]
    pub incomplete: bool,
    /// The block the walk is pinned to (its first page's indexed block) and the first 16 hex
    /// digits of that block's hash: later pages answer as of it, and fail once a reorg has
    /// replaced it (see [`super::walk::Walk::hold`]). Absent on cursors of older servers.
    #[serde(rename = "b", default, skip_serializing_if = "Option::is_none")]
    pub pinned: Option<(u64, String)>,
}

/// Why a cursor was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CursorError {
    #[error("is malformed or has been tampered with")]
    Invalid,
    #[error("belongs to another endpoint")]
    OtherEndpoint,
    #[error(
        "was issued for a query with other filters; repeat the original filters or drop the cursor"
    )]
    OtherQuery,
    #[error(
        "walks the chain as of block {0}, and the chain reorganized at or below it since; start \
         again from the first page"
    )]
    Reorganized(u64),
}

/// Signs and checks cursors with one secret.
#[derive(Clone)]
pub struct CursorCodec {
    secret: std::sync::Arc<[u8]>,
}

impl std::fmt::Debug for CursorCodec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CursorCodec(..)")
    }
}

/// A digest of a query's canonical filter description.
pub fn query_digest(canonical: &str) -> String {
    let d = Sha256::digest(canonical.as_bytes());
    crate::types::hex::lower(&d[..12])
}

impl CursorCodec {
    pub fn new(secret: Vec<u8>) -> Self {
        Self {
            secret: secret.into(),
        }
    }

    fn mac(&self, payload: &[u8]) -> Vec<u8> {
        // HMAC accepts keys of any length.
        let mut m = match HmacSha256::new_from_slice(&self.secret) {
            Ok(m) => m,
            Err(_) => return Vec::new(),
        };
        m.update(payload);
        m.finalize().into_bytes()[..16].to_vec()
    }

    pub fn encode(&self, p: &CursorPayload) -> String {
        let json = serde_json::to_vec(p).unwrap_or_default();
        format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(&json),
            URL_SAFE_NO_PAD.encode(self.mac(&json))
        )
    }

    /// Checks the MAC, the kind and the query digest.
    pub fn decode(
        &self,
        s: &str,
        kind: CursorKind,
        digest: &str,
    ) -> Result<CursorPayload, CursorError> {
        let (body, tag) = s.trim().split_once('.').ok_or(CursorError::Invalid)?;
        let json = URL_SAFE_NO_PAD
            .decode(body)
            .map_err(|_| CursorError::Invalid)?;
        let tag = URL_SAFE_NO_PAD
            .decode(tag)
            .map_err(|_| CursorError::Invalid)?;
        let mut m = HmacSha256::new_from_slice(&self.secret).map_err(|_| CursorError::Invalid)?;
        m.update(&json);
        m.verify_truncated_left(&tag)
            .map_err(|_| CursorError::Invalid)?;
        if tag.len() != 16 {
            return Err(CursorError::Invalid);
        }
        let p: CursorPayload = serde_json::from_slice(&json).map_err(|_| CursorError::Invalid)?;
        if p.kind != kind {
            return Err(CursorError::OtherEndpoint);
        }
        if p.digest != digest {
            return Err(CursorError::OtherQuery);
        }
        Ok(p)
    }
}

/// Mints the cursors of one page's records. A cursor is signed only when asked for: a REST
/// answer returns one of a page's hundred, a GraphQL answer those its query selects.
#[derive(Debug, Clone)]
pub struct CursorMint {
    codec: CursorCodec,
    kind: CursorKind,
    digest: String,
    /// The page the cursors open.
    page: u64,
    /// The total carried on (see [`CursorPayload::t`]).
    total: Option<u64>,
    /// The walk was incomplete (see [`CursorPayload::i`]).
    incomplete: bool,
    /// The block the walk is pinned to (see [`CursorPayload::pinned`]).
    pinned: Option<(u64, String)>,
}

impl CursorMint {
    pub(super) fn new(
        codec: &CursorCodec,
        kind: CursorKind,
        digest: String,
        page: u64,
        total: Option<u64>,
        incomplete: bool,
        pinned: Option<(u64, String)>,
    ) -> Self {
        Self {
            codec: codec.clone(),
            kind,
            digest,
            page,
            total,
            incomplete,
            pinned,
        }
    }

    /// The cursor resuming right after the record at keyset position `key`.
    pub fn cursor(&self, key: &Key) -> String {
        self.codec.encode(&CursorPayload {
            kind: self.kind,
            digest: self.digest.clone(),
            page: self.page,
            after: key.texts(),
            total: self.total,
            incomplete: self.incomplete,
            pinned: self.pinned.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codec() -> CursorCodec {
        CursorCodec::new(b"secret".to_vec())
    }

    fn sample() -> CursorPayload {
        CursorPayload {
            kind: CursorKind::Nft,
            digest: query_digest("q1"),
            page: 2,
            after: vec!["0xabc".into(), "00ff".into()],
            total: None,
            incomplete: false,
            pinned: None,
        }
    }

    #[test]
    fn the_wire_keeps_the_first_servers_field_names() {
        // A cursor minted by a server before the fields were named reads the same.
        let old = r#"{"k":"nft","q":"d","p":2,"a":["0xabc","00ff"],"t":7,"i":true}"#;
        let p: CursorPayload = serde_json::from_str(old).unwrap();
        assert_eq!(
            (p.kind, p.digest.as_str(), p.page, p.total, p.incomplete),
            (CursorKind::Nft, "d", 2, Some(7), true)
        );
        assert_eq!(p.after, vec!["0xabc".to_string(), "00ff".to_string()]);
        assert_eq!(serde_json::to_string(&p).unwrap(), old);
    }

    #[test]
    fn round_trip() {
        let c = codec().encode(&sample());
        assert_eq!(
            codec()
                .decode(&c, CursorKind::Nft, &query_digest("q1"))
                .unwrap(),
            sample()
        );
    }

    #[test]
    fn an_incomplete_walk_is_carried_and_absent_means_complete() {
        let incomplete = CursorPayload {
            incomplete: true,
            ..sample()
        };
        let c = codec().encode(&incomplete);
        let d = query_digest("q1");
        assert!(codec().decode(&c, CursorKind::Nft, &d).unwrap().incomplete);
        // Written only when set: cursors minted before the flag existed read as complete.
        let json = serde_json::to_string(&sample()).unwrap();
        assert!(!json.contains("\"i\""), "{json}");
    }

    #[test]
    fn every_one_character_edit_is_refused() {
        let c = codec().encode(&sample());
        for i in 0..c.len() {
            let mut b = c.clone().into_bytes();
            b[i] = if b[i] == b'A' { b'B' } else { b'A' };
            let edited = String::from_utf8(b).unwrap();
            if edited == c {
                continue;
            }
            assert!(
                codec()
                    .decode(&edited, CursorKind::Nft, &query_digest("q1"))
                    .is_err(),
                "edit at {i}"
            );
        }
    }

    #[test]
    fn foreign_and_garbage_cursors() {
        let c = codec().encode(&sample());
        assert_eq!(
            codec().decode(&c, CursorKind::Erc20, &query_digest("q1")),
            Err(CursorError::OtherEndpoint)
        );
        assert_eq!(
            codec().decode(&c, CursorKind::Nft, &query_digest("q2")),
            Err(CursorError::OtherQuery)
        );
        assert_eq!(
            CursorCodec::new(b"other".to_vec()).decode(&c, CursorKind::Nft, &query_digest("q1")),
            Err(CursorError::Invalid)
        );
        for g in ["", ".", "abc", "abc.def", "eyJ9.xx", "💥"] {
            assert_eq!(
                codec().decode(g, CursorKind::Nft, "x"),
                Err(CursorError::Invalid),
                "{g}"
            );
        }
    }
}
