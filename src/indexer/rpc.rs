//! The JSON-RPC client of one chain (alloy's `RpcClient` over HTTP), with failures classified
//! and transient ones retried under a budget.
//!
//! | failure | class |
//! |---|---|
//! | timeout, connection refused/reset, HTTP 408/429/5xx, malformed or empty response, "rate limit" errors | [`RpcFailure::Transient`]: retried with backoff, then reported |
//! | "more than N results", "range too large", HTTP 413, response-size errors | [`RpcFailure::TooLarge`]: the caller asks for a smaller range |
//! | anything else (bad params, method missing, execution reverted) | [`RpcFailure::Permanent`] |
//!
//! Every request and every failed attempt is counted ([`crate::telemetry::metrics::RPC_REQUESTS`],
//! [`crate::telemetry::metrics::RPC_ERRORS`] by class), labelled with the chain the endpoint reported
//! in its first successful `eth_chainId` (`unknown` before that); a reverted `eth_call` is an
//! answer, not an error.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use alloy::rpc::client::{ClientBuilder, RpcClient};
use alloy::transports::{RpcError, TransportErrorKind};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::range::{is_range_error, suggested_span};
use super::retry::{jitter, RetryPolicy};
use crate::decode::{self, RpcLog, TRANSFER_BATCH_TOPIC, TRANSFER_SINGLE_TOPIC, TRANSFER_TOPIC};
use crate::store::BlockHeader;
use crate::telemetry::metrics::{RPC_ERRORS, RPC_REQUESTS};
use crate::types::{Address, Chain, Uint256};

/// A classified RPC failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RpcFailure {
    #[error("transient RPC failure: {0}")]
    Transient(String),
    #[error("the provider refused the range as too large: {message}")]
    TooLarge {
        message: String,
        suggested: Option<u64>,
    },
    #[error("RPC error: {0}")]
    Permanent(String),
}

impl RpcFailure {
    /// The `class` label of the error series.
    pub fn class(&self) -> &'static str {
        match self {
            RpcFailure::Transient(_) => "transient",
            RpcFailure::TooLarge { .. } => "too_large",
            RpcFailure::Permanent(_) => "permanent",
        }
    }
}

/// One chain's RPC endpoint.
#[derive(Debug, Clone)]
pub struct Rpc {
    client: RpcClient,
    policy: RetryPolicy,
    endpoint: String,
    /// The chain the endpoint serves, learnt from `eth_chainId`; shared by clones.
    chain: Arc<OnceLock<&'static str>>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RpcBlock {
    number: String,
    hash: String,
    parent_hash: String,
    timestamp: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct LogFilter {
    from_block: String,
    to_block: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    address: Option<String>,
    /// Per position: any of these values, or `None` (JSON `null`) for any value.
    topics: Vec<Option<Vec<String>>>,
}

fn classify(e: RpcError<TransportErrorKind>) -> RpcFailure {
    match e {
        RpcError::ErrorResp(p) => {
            let m = format!("{} (code {})", p.message, p.code);
            let lower = p.message.to_ascii_lowercase();
            if lower.contains("rate limit") || lower.contains("too many requests") || p.code == 429
            {
                RpcFailure::Transient(m)
            } else if is_range_error(&p.message) || p.code == -32005 {
                RpcFailure::TooLarge {
                    suggested: suggested_span(&p.message),
                    message: m,
                }
            } else {
                RpcFailure::Permanent(m)
            }
        }
        RpcError::Transport(TransportErrorKind::HttpError(h)) => match h.status {
            413 => RpcFailure::TooLarge {
                message: format!("HTTP {}", h.status),
                suggested: None,
            },
            408 | 425 | 429 | 500..=599 => RpcFailure::Transient(format!("HTTP {}", h.status)),
            s => RpcFailure::Permanent(format!("HTTP {s}: {}", truncate(&h.body))),
        },
        RpcError::Transport(k) => RpcFailure::Transient(k.to_string()),
        RpcError::DeserError { err, text } => {
            RpcFailure::Transient(format!("malformed response ({err}): {}", truncate(&text)))
        }
        RpcError::NullResp => RpcFailure::Transient("empty response".into()),
        other => RpcFailure::Permanent(other.to_string()),
    }
}

fn truncate(s: &str) -> String {
    s.chars().take(200).collect()
}

fn hex(n: u64) -> String {
    format!("{n:#x}")
}

impl Rpc {
    /// A client for `url` with a per-request timeout.
    pub fn new(url: &str, timeout: Duration, policy: RetryPolicy) -> Result<Self, RpcFailure> {
        let parsed: alloy::transports::http::reqwest::Url = url
            .parse()
            .map_err(|e| RpcFailure::Permanent(format!("bad RPC URL '{url}': {e}")))?;
        crate::tls::ensure_crypto_provider();
        let http = alloy::transports::http::reqwest::Client::builder()
            .timeout(timeout)
            .build()
            .map_err(|e| RpcFailure::Permanent(format!("HTTP client: {e}")))?;
        let transport = alloy::transports::http::Http::with_client(http, parsed);
        let client = ClientBuilder::default().transport(transport, true);
        Ok(Self {
            client,
            policy,
            endpoint: url.to_string(),
            chain: Arc::default(),
        })
    }

    /// The `chain` label of this endpoint's series.
    fn chain_label(&self) -> &'static str {
        self.chain.get().copied().unwrap_or("unknown")
    }

    /// Counts one request and, if it failed, its failure.
    fn record<T>(&self, method: &'static str, r: &Result<T, RpcFailure>) {
        let chain = self.chain_label();
        metrics::counter!(RPC_REQUESTS, "chain" => chain, "method" => method).increment(1);
        if let Err(e) = r {
            let reverted = method == "eth_call" && matches!(e, RpcFailure::Permanent(_));
            if !reverted {
                metrics::counter!(RPC_ERRORS, "chain" => chain, "method" => method, "class" => e.class())
                    .increment(1);
            }
        }
    }

    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// One attempt, classified.
    async fn once<R: DeserializeOwned + std::fmt::Debug + Send + Sync + Unpin + 'static>(
        &self,
        method: &'static str,
        params: Value,
    ) -> Result<R, RpcFailure> {
        let r = self.client.request(method, params).await.map_err(classify);
        self.record(method, &r);
        r
    }

    /// Retries transient failures under the policy's budget; logs the episode once.
    async fn call<R: DeserializeOwned + std::fmt::Debug + Send + Sync + Unpin + 'static>(
        &self,
        method: &'static str,
        params: Value,
    ) -> Result<R, RpcFailure> {
        let mut attempt = 1;
        loop {
            match self.once::<R>(method, params.clone()).await {
                Err(RpcFailure::Transient(why)) if attempt < self.policy.max_attempts => {
                    if attempt == 1 {
                        tracing::warn!(endpoint = %self.endpoint, method, %why, "RPC trouble; retrying with backoff");
                    }
                    tokio::time::sleep(self.policy.delay(attempt, jitter())).await;
                    attempt += 1;
                }
                other => {
                    if attempt > 1 {
                        match &other {
                            Ok(_) => {
                                tracing::info!(endpoint = %self.endpoint, method, retries = attempt - 1, "RPC recovered")
                            }
                            Err(e) => {
                                tracing::warn!(endpoint = %self.endpoint, method, retries = attempt - 1, error = %e, "RPC retries exhausted")
                            }
                        }
                    }
                    return other;
                }
            }
        }
    }

    pub async fn chain_id(&self) -> Result<u64, RpcFailure> {
        let s: String = self.call("eth_chainId", json!([])).await?;
        let id = decode::parse_quantity(&s).map_err(|e| RpcFailure::Transient(e.to_string()))?;
        if let Some(chain) = Chain::from_id(id) {
            let _ = self.chain.set(chain.name());
        }
        Ok(id)
    }

    pub async fn block_number(&self) -> Result<u64, RpcFailure> {
        let s: String = self.call("eth_blockNumber", json!([])).await?;
        decode::parse_quantity(&s).map_err(|e| RpcFailure::Transient(e.to_string()))
    }

    /// Headers of these blocks, fetched in JSON-RPC batches. A block the node does not have
    /// (yet, or any more) is a transient failure.
    pub async fn headers(&self, numbers: &[u64]) -> Result<BTreeMap<u64, BlockHeader>, RpcFailure> {
        let mut out = BTreeMap::new();
        for chunk in numbers.chunks(100) {
            let mut attempt = 1;
            loop {
                let r = self.headers_once(chunk).await;
                self.record("eth_getBlockByNumber", &r);
                match r {
                    Ok(h) => {
                        out.extend(h);
                        break;
                    }
                    Err(RpcFailure::Transient(why)) if attempt < self.policy.max_attempts => {
                        if attempt == 1 {
                            tracing::warn!(endpoint = %self.endpoint, %why, "RPC trouble fetching headers; retrying");
                        }
                        tokio::time::sleep(self.policy.delay(attempt, jitter())).await;
                        attempt += 1;
                    }
                    Err(e) => return Err(e),
                }
            }
        }
        Ok(out)
    }

    async fn headers_once(
        &self,
        numbers: &[u64],
    ) -> Result<BTreeMap<u64, BlockHeader>, RpcFailure> {
        let mut batch = self.client.new_batch();
        let mut futs = Vec::with_capacity(numbers.len());
        for n in numbers {
            let f = batch
                .add_call::<_, Option<RpcBlock>>("eth_getBlockByNumber", &(hex(*n), false))
                .map_err(|e| RpcFailure::Permanent(e.to_string()))?;
            futs.push((*n, f));
        }
        batch.send().await.map_err(classify)?;
        let mut out = BTreeMap::new();
        for (n, f) in futs {
            let b = f
                .await
                .map_err(classify)?
                .ok_or_else(|| RpcFailure::Transient(format!("block {n} not available")))?;
            let bad = |e: decode::Skip| RpcFailure::Transient(format!("block {n}: {e}"));
            let h = BlockHeader {
                number: decode::parse_quantity(&b.number).map_err(bad)?,
                hash: decode::parse_b256(&b.hash).map_err(bad)?,
                parent_hash: Some(decode::parse_b256(&b.parent_hash).map_err(bad)?),
                timestamp: decode::parse_quantity(&b.timestamp).map_err(bad)?,
            };
            out.insert(n, h);
        }
        Ok(out)
    }

    /// Transfer-type logs (ERC20/721 `Transfer`, ERC1155 `TransferSingle`/`TransferBatch`) in
    /// `[from, to]`, optionally of one contract.
    pub async fn transfer_logs(
        &self,
        from: u64,
        to: u64,
        address: Option<Address>,
    ) -> Result<Vec<RpcLog>, RpcFailure> {
        let filter = LogFilter {
            from_block: hex(from),
            to_block: hex(to),
            address: address.map(|a| a.to_string()),
            topics: vec![Some(vec![
                format!("{TRANSFER_TOPIC:#x}"),
                format!("{TRANSFER_SINGLE_TOPIC:#x}"),
                format!("{TRANSFER_BATCH_TOPIC:#x}"),
            ])],
        };
        self.call("eth_getLogs", json!([filter])).await
    }

    /// Transfer-type logs in `[from, to]` that `wallet` sent or received, on any contract: three
    /// topic-filtered `eth_getLogs` calls (ERC20/721 `Transfer` has the sender in topic 1 and
    /// the recipient in topic 2; ERC1155's events have the operator in topic 1, the sender in
    /// topic 2 and the recipient in topic 3). A log matched twice is returned once, in chain
    /// order. The first call also matches ERC1155 events the wallet operated: transfers too,
    /// stored like any other.
    pub async fn wallet_logs(
        &self,
        from: u64,
        to: u64,
        wallet: Address,
    ) -> Result<Vec<RpcLog>, RpcFailure> {
        let t = format!("{TRANSFER_TOPIC:#x}");
        let single = format!("{TRANSFER_SINGLE_TOPIC:#x}");
        let batch = format!("{TRANSFER_BATCH_TOPIC:#x}");
        let w = Some(vec![format!(
            "0x000000000000000000000000{}",
            &wallet.to_string()[2..]
        )]);
        let filter = |topics: Vec<Option<Vec<String>>>| LogFilter {
            from_block: hex(from),
            to_block: hex(to),
            address: None,
            topics,
        };
        let queries = [
            filter(vec![
                Some(vec![t.clone(), single.clone(), batch.clone()]),
                w.clone(),
            ]),
            filter(vec![
                Some(vec![t, single.clone(), batch.clone()]),
                None,
                w.clone(),
            ]),
            filter(vec![Some(vec![single, batch]), None, None, w]),
        ];
        let mut all: Vec<(u64, u64, RpcLog)> = Vec::new();
        for q in queries {
            let logs: Vec<RpcLog> = self.call("eth_getLogs", json!([q])).await?;
            for l in logs {
                let pos = |s: &str| decode::parse_quantity(s).unwrap_or(u64::MAX);
                all.push((pos(&l.block_number), pos(&l.log_index), l));
            }
        }
        all.sort_by_key(|(b, i, _)| (*b, *i));
        all.dedup_by_key(|(b, i, _)| (*b, *i));
        Ok(all.into_iter().map(|(_, _, l)| l).collect())
    }

    /// `wallet`'s native balance at block `number` (`eth_getBalance`), in wei.
    pub async fn balance(&self, wallet: Address, number: u64) -> Result<Uint256, RpcFailure> {
        let s: String = self
            .call("eth_getBalance", json!([wallet.to_string(), hex(number)]))
            .await?;
        let digits = s.strip_prefix("0x").unwrap_or(&s);
        alloy::primitives::U256::from_str_radix(digits, 16)
            .map(Uint256)
            .map_err(|e| RpcFailure::Transient(format!("eth_getBalance returned '{s}': {e}")))
    }

    /// `eth_call` at the latest block. A revert or a missing function is `Ok(None)`.
    pub async fn eth_call(&self, to: Address, data: &[u8]) -> Result<Option<Vec<u8>>, RpcFailure> {
        let data = crate::types::hex::lower0x(data);
        let r: Result<String, RpcFailure> = self
            .call(
                "eth_call",
                json!([{ "to": to.to_string(), "data": data }, "latest"]),
            )
            .await;
        match r {
            Ok(s) => {
                let h = s.strip_prefix("0x").unwrap_or(&s);
                let bytes = (0..h.len() / 2)
                    .map(|i| u8::from_str_radix(&h[2 * i..2 * i + 2], 16))
                    .collect::<Result<Vec<u8>, _>>()
                    .map_err(|_| RpcFailure::Transient("eth_call returned bad hex".into()))?;
                Ok(if bytes.is_empty() { None } else { Some(bytes) })
            }
            Err(RpcFailure::Permanent(_)) => Ok(None),
            Err(e) => Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_requests_and_errors_by_class() {
        let recorder = metrics_exporter_prometheus::PrometheusBuilder::new().build_recorder();
        let handle = recorder.handle();
        let rpc = Rpc::new(
            "http://127.0.0.1:1",
            Duration::from_secs(1),
            RetryPolicy::default(),
        )
        .expect("client");
        metrics::with_local_recorder(&recorder, || {
            rpc.record::<()>("eth_blockNumber", &Err(RpcFailure::Transient("x".into())));
            // The chain is learnt once, and clones share it.
            let _ = rpc.clone().chain.set("eth");
            rpc.record("eth_blockNumber", &Ok(()));
            rpc.record::<()>(
                "eth_getLogs",
                &Err(RpcFailure::TooLarge {
                    message: "x".into(),
                    suggested: None,
                }),
            );
            // A reverted eth_call is an answer; another permanent failure is an error.
            rpc.record::<()>("eth_call", &Err(RpcFailure::Permanent("reverted".into())));
            rpc.record::<()>("eth_getLogs", &Err(RpcFailure::Permanent("bad".into())));
        });
        let text = handle.render();
        for want in [
            r#"tokenql_rpc_errors_total{chain="unknown",method="eth_blockNumber",class="transient"} 1"#,
            r#"tokenql_rpc_requests_total{chain="eth",method="eth_blockNumber"} 1"#,
            r#"tokenql_rpc_errors_total{chain="eth",method="eth_getLogs",class="too_large"} 1"#,
            r#"tokenql_rpc_errors_total{chain="eth",method="eth_getLogs",class="permanent"} 1"#,
            r#"tokenql_rpc_requests_total{chain="eth",method="eth_call"} 1"#,
        ] {
            assert!(text.contains(want), "no `{want}` in:\n{text}");
        }
        assert!(!text.contains(r#"method="eth_call",class"#), "{text}");
    }
}
