//! The JSON-RPC client of one chain (alloy's `RpcClient` over HTTP), with failures classified
//! and transient ones retried under a budget.
//!
//! | failure | class |
//! |---|---|
//! | timeout, connection refused/reset, HTTP 408/5xx, malformed or empty response | [`RpcFailure::Transient`]: retried with backoff, then reported |
//! | HTTP 429, "rate limit" errors | [`RpcFailure::Transient`]: the endpoint pauses ([`super::pacing`]) and the call is asked again, outside the retry budget |
//! | "more than N results", "range too large", HTTP 413, response-size errors, an `eth_getLogs` that timed out | [`RpcFailure::TooLarge`]: the caller asks for a smaller range; a block range limit the refusal names is kept for every later call ([`Rpc::limits`]) |
//! | anything else (bad params, method missing, execution reverted) | [`RpcFailure::Permanent`] |
//!
//! Every request and every failed attempt is counted ([`crate::telemetry::metrics::RPC_REQUESTS`],
//! [`crate::telemetry::metrics::RPC_ERRORS`] by class), labelled with the chain the endpoint reported
//! in its first successful `eth_chainId` (`unknown` before that); a reverted `eth_call` is an
//! answer, not an error.
//!
//! Every request goes through the endpoint's [`Pacing`] (its rate, calls in flight, pauses a
//! refusal for rate asks for); the clients of one endpoint share it, the live follower's
//! ([`Lane::Live`]) before the history fetches' ([`Rpc::for_history`]).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use alloy::rpc::client::{ClientBuilder, RpcClient};
use alloy::transports::{RpcError, TransportErrorKind};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::pacing::{Lane, Pacing};
use super::range::{is_range_error, range_limit_of, results_limit_of, suggested_span, Limits};
use super::retry::{jitter, RetryPolicy};
use super::transport::{PacedHttp, TIMED_OUT};
use crate::decode::{self, RpcLog, TRANSFER_BATCH_TOPIC, TRANSFER_SINGLE_TOPIC, TRANSFER_TOPIC};
use crate::store::BlockHeader;
use crate::telemetry::metrics::{RPC_ERRORS, RPC_REQUESTS};
use crate::types::{Address, Chain, Uint256};

/// A classified RPC failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RpcFailure {
    #[error("transient RPC failure: {0}")]
    Transient(String),
    #[error("the provider refused the call for rate: {0}")]
    RateLimited(String),
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
            RpcFailure::Transient(_) | RpcFailure::RateLimited(_) => "transient",
            RpcFailure::TooLarge { .. } => "too_large",
            RpcFailure::Permanent(_) => "permanent",
        }
    }
}

/// One chain's RPC endpoint.
#[derive(Debug, Clone)]
pub struct Rpc {
    client: RpcClient,
    http: reqwest::Client,
    url: reqwest::Url,
    pacing: Pacing,
    lane: Lane,
    policy: RetryPolicy,
    endpoint: String,
    /// The chain the endpoint serves, learnt from `eth_chainId`; shared by clones.
    chain: Arc<OnceLock<&'static str>>,
    /// The provider's largest `eth_getLogs` block range, configured or named by a refusal
    /// (0: none known); shared by clones.
    range_limit: Arc<AtomicU64>,
    /// The most logs one of its `eth_getLogs` answers holds, named by a refusal (0: none
    /// known); shared by clones.
    results_limit: Arc<AtomicU64>,
}

/// What is known of a provider before it is called: its rate, the calls it takes at once and
/// its largest `eth_getLogs` block range.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProviderProfile {
    /// Calls per second (`None`: learnt from its refusals for rate).
    pub max_rps: Option<u32>,
    /// History calls in flight at once (0: as many as asked).
    pub concurrency: usize,
    /// Largest `eth_getLogs` block range (`None`: learnt from its refusals).
    pub max_log_range: Option<u64>,
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
                RpcFailure::RateLimited(m)
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
            429 => RpcFailure::RateLimited(format!("HTTP {}", h.status)),
            408 | 425 | 500..=599 => RpcFailure::Transient(format!("HTTP {}", h.status)),
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

/// Refusals for rate in a row before a call gives up (a transient failure): the endpoint
/// pauses between them, so this is minutes of refusals.
const MAX_RATE_REFUSALS: u32 = 64;

/// A JSON-RPC client over `http` to `url`, paced by `pacing` as `lane`.
fn client(http: &reqwest::Client, url: &reqwest::Url, pacing: &Pacing, lane: Lane) -> RpcClient {
    let transport = PacedHttp::new(http.clone(), url.clone(), pacing.clone(), lane);
    let local = matches!(
        url.host_str(),
        Some("localhost" | "127.0.0.1" | "::1" | "[::1]")
    );
    ClientBuilder::default().transport(transport, local)
}

fn truncate(s: &str) -> String {
    s.chars().take(200).collect()
}

fn hex(n: u64) -> String {
    format!("{n:#x}")
}

impl Rpc {
    /// A client for `url` with a per-request timeout, unpaced (see [`Rpc::with_profile`]).
    pub fn new(url: &str, timeout: Duration, policy: RetryPolicy) -> Result<Self, RpcFailure> {
        let parsed: reqwest::Url = url
            .parse()
            .map_err(|e| RpcFailure::Permanent(format!("bad RPC URL '{url}': {e}")))?;
        crate::tls::ensure_crypto_provider();
        let http = reqwest::Client::builder()
            .timeout(timeout)
            .build()
            .map_err(|e| RpcFailure::Permanent(format!("HTTP client: {e}")))?;
        let pacing = Pacing::unlimited();
        Ok(Self {
            client: client(&http, &parsed, &pacing, Lane::Live),
            http,
            url: parsed,
            pacing,
            lane: Lane::Live,
            policy,
            endpoint: url.to_string(),
            chain: Arc::default(),
            range_limit: Arc::default(),
            results_limit: Arc::default(),
        })
    }

    /// The same endpoint called as `profile` says: paced at its rate, its history calls at
    /// most `concurrency` at once, its ranges within its block range limit.
    pub fn with_profile(mut self, profile: ProviderProfile) -> Self {
        let concurrency = match profile.concurrency {
            0 => usize::MAX >> 4,
            n => n,
        };
        self.pacing = Pacing::new(profile.max_rps, concurrency);
        self.range_limit = Arc::new(AtomicU64::new(profile.max_log_range.unwrap_or(0)));
        self.client = client(&self.http, &self.url, &self.pacing, self.lane);
        self
    }

    /// A client of the same endpoint for history fetches: it shares the endpoint's pacing
    /// and what is learnt of its limits, and gives way to the live follower.
    pub fn for_history(&self) -> Self {
        self.in_lane(Lane::History)
    }

    /// A client of the same endpoint for calls nothing waits for (contract reads): it gives
    /// way to the live follower and to history fetches.
    pub fn for_background(&self) -> Self {
        self.in_lane(Lane::Background)
    }

    fn in_lane(&self, lane: Lane) -> Self {
        let mut r = self.clone();
        r.lane = lane;
        r.client = client(&self.http, &self.url, &self.pacing, lane);
        r
    }

    /// The endpoint's pacing.
    pub fn pacing(&self) -> &Pacing {
        &self.pacing
    }

    /// The provider's limits as known now: configured, or named by its refusals.
    pub fn limits(&self) -> Limits {
        let known = |a: &AtomicU64| Some(a.load(Ordering::Relaxed)).filter(|n| *n > 0);
        Limits {
            range: known(&self.range_limit),
            results: known(&self.results_limit),
        }
    }

    /// Keeps the block range or results limit a refusal names (the smallest one seen).
    fn learn(&self, failure: &RpcFailure) {
        let RpcFailure::TooLarge { message, .. } = failure else {
            return;
        };
        let keep = |a: &AtomicU64, limit: u64, what: &str| {
            let before = a.load(Ordering::Relaxed);
            if before == 0 || limit < before {
                a.store(limit, Ordering::Relaxed);
                tracing::info!(endpoint = %self.endpoint, limit, "the provider limits eth_getLogs to this many {what}");
            }
        };
        if let Some(limit) = range_limit_of(message) {
            keep(&self.range_limit, limit, "blocks");
        }
        if let Some(limit) = results_limit_of(message) {
            keep(&self.results_limit, limit, "logs");
        }
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
        if let Err(e) = &r {
            self.learn(e);
        }
        r
    }

    /// Retries transient failures under the policy's budget; logs the episode once.
    async fn call<R: DeserializeOwned + std::fmt::Debug + Send + Sync + Unpin + 'static>(
        &self,
        method: &'static str,
        params: Value,
    ) -> Result<R, RpcFailure> {
        let mut attempt = 1;
        let mut refused = 0u32;
        loop {
            match self.once::<R>(method, params.clone()).await {
                // The pacing waits out the pause the refusal asked for.
                Err(RpcFailure::RateLimited(why)) if refused < MAX_RATE_REFUSALS => {
                    if refused == 0 {
                        tracing::debug!(endpoint = %self.endpoint, method, %why, "refused for rate; asking again after the pause");
                    }
                    refused += 1;
                }
                Err(RpcFailure::RateLimited(why)) => return Err(RpcFailure::Transient(why)),
                // A node that cannot answer a range in time is asked for a smaller one.
                Err(RpcFailure::Transient(why))
                    if method == "eth_getLogs" && why.contains(TIMED_OUT) =>
                {
                    return Err(RpcFailure::TooLarge {
                        message: why,
                        suggested: None,
                    })
                }
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
            let (mut attempt, mut refused) = (1, 0u32);
            loop {
                let r = self.headers_once(chunk).await;
                self.record("eth_getBlockByNumber", &r);
                match r {
                    Ok(h) => {
                        out.extend(h);
                        break;
                    }
                    Err(RpcFailure::RateLimited(_)) if refused < MAX_RATE_REFUSALS => refused += 1,
                    Err(RpcFailure::RateLimited(why)) => return Err(RpcFailure::Transient(why)),
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
    /// topic-filtered `eth_getLogs` calls, at once (ERC20/721 `Transfer` has the sender in topic 1 and
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
        // The three filters at once: the endpoint's pacing spaces them.
        let [a, b, c] = queries.map(|q| self.call::<Vec<RpcLog>>("eth_getLogs", json!([q])));
        let (a, b, c) = tokio::try_join!(a, b, c)?;
        let mut all: Vec<(u64, u64, RpcLog)> = Vec::new();
        for l in a.into_iter().chain(b).chain(c) {
            let pos = |s: &str| decode::parse_quantity(s).unwrap_or(u64::MAX);
            all.push((pos(&l.block_number), pos(&l.log_index), l));
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
                let bytes = crate::types::hex::decode(h)
                    .ok_or_else(|| RpcFailure::Transient("eth_call returned bad hex".into()))?;
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

    #[tokio::test]
    async fn a_log_query_that_times_out_asks_for_a_smaller_range() {
        // A node that takes requests and never answers.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        let held = tokio::spawn(async move {
            let mut open = Vec::new();
            while let Ok((socket, _)) = listener.accept().await {
                open.push(socket);
            }
        });
        let rpc = Rpc::new(&url, Duration::from_millis(200), RetryPolicy::default()).expect("rpc");
        let got = rpc.transfer_logs(0, 1_000_000, None).await;
        assert!(
            matches!(
                got,
                Err(RpcFailure::TooLarge {
                    suggested: None,
                    ..
                })
            ),
            "{got:?}"
        );
        held.abort();
    }

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
