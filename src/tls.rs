//! TLS for outgoing HTTPS (RPC endpoints, token URIs): rustls with the `ring` provider, the
//! one the database drivers already use, and the platform's trust store.

/// Installs `ring` as the process-wide rustls provider, once. Every HTTP client is built after
/// this; reqwest is compiled without a provider of its own, so building one without it fails.
pub fn ensure_crypto_provider() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // Err means another part of the process installed one first: that one is used.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

#[cfg(test)]
mod tests {
    #[test]
    fn https_clients_can_be_built() {
        super::ensure_crypto_provider();
        let client = reqwest::Client::builder().build();
        assert!(client.is_ok(), "{:?}", client.err());
    }
}
