//! Posting a delivery: the compact JSON body, `Content-Type: application/json` and
//! `x-signature`, with a timeout; any 2xx is accepted.

use std::time::Duration;

use super::body::{signature, WebhookBody};

/// The HTTP client of deliveries.
#[derive(Debug, Clone)]
pub struct Sender {
    client: reqwest::Client,
}

impl Sender {
    /// A client whose requests give up after `timeout`.
    pub fn new(timeout: Duration) -> Result<Self, String> {
        crate::tls::ensure_crypto_provider();
        let client = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout)
            .user_agent(concat!("tokenql-webhooks/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| format!("webhook HTTP client: {e}"))?;
        Ok(Self { client })
    }

    /// Posts `body` to `url`, signed with `secret`; `Err` says why it was not accepted.
    pub async fn post(&self, url: &str, body: &WebhookBody, secret: &str) -> Result<(), String> {
        let bytes = serde_json::to_vec(body).map_err(|e| format!("encoding the body: {e}"))?;
        let sig = signature(&bytes, secret);
        let resp = self
            .client
            .post(url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header("x-signature", sig)
            .body(bytes)
            .send()
            .await
            .map_err(|e| format!("request failed: {e}"))?;
        let status = resp.status();
        if status.is_success() {
            Ok(())
        } else {
            Err(format!("the webhook answered HTTP {}", status.as_u16()))
        }
    }
}
