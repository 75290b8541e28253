//! JSON-RPC over HTTP for [`super::rpc::Rpc`], paced ([`super::pacing`]): every request is
//! admitted before it is sent, and a refusal for rate (HTTP 429, or a JSON-RPC error that says
//! so) pauses the endpoint for the `Retry-After` it names. Otherwise it is plain JSON-RPC over
//! HTTP POST: a non-success status without a JSON-RPC answer is an HTTP error.

use std::task::{Context, Poll};
use std::time::Duration;

use alloy::rpc::json_rpc::{RequestPacket, ResponsePacket};
use alloy::transports::{TransportError, TransportErrorKind, TransportFut};

use super::pacing::{Lane, Pacing};

/// The HTTP transport of one endpoint, for one lane.
#[derive(Debug, Clone)]
pub struct PacedHttp {
    client: reqwest::Client,
    url: reqwest::Url,
    pacing: Pacing,
    lane: Lane,
}

impl PacedHttp {
    /// A transport to `url` through `client`, admitted by `pacing` as `lane`.
    pub fn new(client: reqwest::Client, url: reqwest::Url, pacing: Pacing, lane: Lane) -> Self {
        Self {
            client,
            url,
            pacing,
            lane,
        }
    }

    async fn send(self, req: RequestPacket) -> Result<ResponsePacket, TransportError> {
        let calls = u32::try_from(req.len()).unwrap_or(u32::MAX);
        let body = serde_json::to_vec(&req).map_err(TransportError::ser_err)?;
        let _admitted = self.pacing.admit(self.lane, calls).await;
        let resp = self
            .client
            .post(self.url.clone())
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body)
            .send()
            .await
            .map_err(sent_err)?;
        let status = resp.status();
        let retry_after = resp
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s >= 0.0)
            .map(|s| Duration::from_secs_f64(s.min(600.0)));
        let body = resp.bytes().await.map_err(sent_err)?;
        if status.as_u16() == 429 {
            self.pacing.refused_for_rate(retry_after);
            return Err(TransportErrorKind::http_error(
                429,
                String::from_utf8_lossy(&body).into_owned(),
            ));
        }
        let parsed = serde_json::from_slice::<ResponsePacket>(&body);
        match parsed {
            Ok(packet) if status.is_success() || packet.is_error() => {
                if refused_for_rate(&packet) {
                    self.pacing.refused_for_rate(retry_after);
                } else {
                    self.pacing.accepted();
                }
                Ok(packet)
            }
            Ok(_) | Err(_) if !status.is_success() => Err(TransportErrorKind::http_error(
                status.as_u16(),
                String::from_utf8_lossy(&body).into_owned(),
            )),
            Ok(packet) => Ok(packet),
            Err(e) => Err(TransportError::deser_err(e, String::from_utf8_lossy(&body))),
        }
    }
}

/// What a failed request says: [`TIMED_OUT`] when it ran out of time, else the client's error.
fn sent_err(e: reqwest::Error) -> TransportError {
    if e.is_timeout() {
        TransportErrorKind::custom_str(TIMED_OUT)
    } else {
        TransportErrorKind::custom(e)
    }
}

/// The error of a request that ran out of time (for `eth_getLogs`: too wide a range for the
/// node to answer in time).
pub const TIMED_OUT: &str = "the request timed out";

/// Whether a JSON-RPC answer is a refusal for rate (code 429, or a message that says so).
fn refused_for_rate(packet: &ResponsePacket) -> bool {
    packet.iter_errors().any(|e| {
        let m = e.message.to_ascii_lowercase();
        e.code == 429 || m.contains("rate limit") || m.contains("too many requests")
    })
}

impl tower::Service<RequestPacket> for PacedHttp {
    type Response = ResponsePacket;
    type Error = TransportError;
    type Future = TransportFut<'static>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: RequestPacket) -> Self::Future {
        Box::pin(self.clone().send(req))
    }
}
