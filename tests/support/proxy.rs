//! A fault-injecting JSON-RPC proxy for the indexer suites: a small HTTP/1.1 server on
//! `127.0.0.1:0` that forwards POST bodies to an upstream node (anvil) and, on a schedule or
//! with fixed probabilities drawn from a deterministic PRNG, answers instead:
//!
//! - [`Fault::Delay`]: waits longer than the client's timeout, then forwards;
//! - [`Fault::TooManyRequests`]: HTTP 429 with `Retry-After`;
//! - [`Fault::Unavailable`]: HTTP 503;
//! - [`Fault::Drop`]: closes the connection without answering;
//! - [`Fault::Malformed`]: HTTP 200 with a body that is not valid JSON;
//!
//! plus a provider-style limit: an `eth_getLogs` spanning more than `max_log_span` blocks gets
//! the JSON-RPC error `-32005 query returned more than 10000 results`. It can also go down
//! (drop every connection, or refuse them by closing its listener) and come back on the same
//! port, and hold matching `eth_getLogs` requests until released, so that a test can observe
//! the state in between. It counts requests per JSON-RPC method, records the `eth_getLogs`
//! calls that name a wallet in a topic (a wallet's history), and can answer chosen
//! `eth_getLogs` calls with a JSON-RPC error.
//!
//! A [`Profile`] ([`Proxy::set_profile`]) makes it behave like a hosted provider's plan, in
//! this order for each HTTP request:
//!
//! 1. **rate**: at most `max_rps` JSON-RPC calls (a batch counts one per item) admitted in any
//!    sliding second; an excess request is not forwarded but answered HTTP 429 `Too Many
//!    Requests` (with `Retry-After: 1` when `retry_after`), body
//!    `{"jsonrpc":"2.0","id":<id>,"error":{"code":429,"message":"Too Many Requests"}}` (an array
//!    of those for a batch). Refused calls do not use up the window. A batch larger than
//!    `max_rps` is admitted only into an empty window (it then fills it for a second);
//! 2. the faults, holds and failures above, and `max_log_span`, unchanged;
//! 3. **range**: a single `eth_getLogs` whose `toBlock - fromBlock + 1 > max_block_range` is
//!    answered HTTP 200 with `-32005 eth_getLogs is limited to a 10,000 range` (QuickNode's
//!    wording, the limit with thousands commas);
//! 4. **results**: a single `eth_getLogs` whose upstream answer holds more than `max_results`
//!    logs is answered with `-32005 query returned more than 10000 results. Try with this block
//!    range [0x1A, 0x2F].` (Infura's wording): from the request's `fromBlock` to the block
//!    before the one of the (`max_results` + 1)-th log (at least `fromBlock`), a range that
//!    holds at most `max_results` of the logs;
//! 5. **latency**: every answer (forwarded or refused) is sent no sooner than `latency` after
//!    the request arrived, as over a network with that round trip.
//!
//! Refusals are counted per reason: `refused:range`, `refused:results`, `refused:rate` (calls),
//! plus `refused:<reason>~<wallet>` and `refused:<reason>@<address>` for `eth_getLogs` calls
//! naming a wallet in a topic or a contract address ([`Proxy::refused`] sums the reasons). The
//! per-method counters go on counting every call the proxy received, refused or not.
#![allow(dead_code)]

use std::collections::{BTreeMap, VecDeque};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// One injected failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Answer only after this long (longer than the client's timeout).
    Delay(Duration),
    /// HTTP 429 with `Retry-After: 1`.
    TooManyRequests,
    /// HTTP 503.
    Unavailable,
    /// Close the socket without answering.
    Drop,
    /// HTTP 200 whose body is not JSON (alternately truncated JSON and an HTML page).
    Malformed,
}

impl Fault {
    fn key(self) -> &'static str {
        match self {
            Fault::Delay(_) => "fault:delay",
            Fault::TooManyRequests => "fault:429",
            Fault::Unavailable => "fault:503",
            Fault::Drop => "fault:drop",
            Fault::Malformed => "fault:malformed",
        }
    }
}

/// Probabilities, in per mille of HTTP requests, of each random fault.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Rates {
    pub delay: u32,
    pub too_many_requests: u32,
    pub unavailable: u32,
    pub drop: u32,
    pub malformed: u32,
}

/// How the proxy treats connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Serve.
    Up,
    /// Accept connections and close them; close kept-alive ones on their next request.
    Drop,
    /// Close the listener (connections are refused) and kept-alive connections.
    Refuse,
}

/// Which `eth_getLogs` requests [`Proxy::hold`] keeps waiting.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hold {
    /// Address-filtered logs of this contract (a collection backfill).
    LogsOf(String),
    /// Unfiltered logs (the live follower) starting at or after this block.
    LiveLogsFrom(u64),
    /// Logs filtered by this wallet in a topic position after the first (a wallet's history).
    WalletLogs(String),
    /// [`Hold::WalletLogs`] starting at or after this block.
    WalletLogsFrom(String, u64),
    /// Every history fetch: address-filtered logs, or logs filtered by an address topic.
    History,
    /// Any of these.
    Any(Vec<Hold>),
}

/// The addresses (lowercase `0x` + 40 hex) a log filter names in its topic positions after the
/// first: 32-byte words with 12 leading zero bytes, alone or in an OR-list.
pub fn wallet_topics(filter: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let Some(topics) = filter["topics"].as_array() else {
        return out;
    };
    for t in topics.iter().skip(1) {
        let words: Vec<&Value> = match t {
            Value::Array(a) => a.iter().collect(),
            v => vec![v],
        };
        for w in words {
            if let Some(s) = w.as_str() {
                let s = s.to_ascii_lowercase();
                if s.len() == 66 && s.starts_with("0x") && s[2..26].bytes().all(|b| b == b'0') {
                    let a = format!("0x{}", &s[26..]);
                    if !out.contains(&a) {
                        out.push(a);
                    }
                }
            }
        }
    }
    out
}

/// One `eth_getLogs` call naming a wallet in a topic, as the proxy saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogCall {
    /// The filter with the wallet's word written `W` (its address field, and its topics).
    pub shape: String,
    pub from: Option<u64>,
    pub to: Option<u64>,
}

impl Hold {
    fn matches(&self, call: &Value) -> bool {
        if call["method"] != "eth_getLogs" {
            return false;
        }
        let filter = &call["params"][0];
        match self {
            Hold::LogsOf(a) => filter["address"]
                .as_str()
                .is_some_and(|x| x.eq_ignore_ascii_case(a)),
            Hold::LiveLogsFrom(b) => {
                filter["address"].is_null()
                    && quantity(&filter["fromBlock"]).is_some_and(|f| f >= *b)
            }
            Hold::WalletLogs(w) => wallet_topics(filter).contains(&w.to_ascii_lowercase()),
            Hold::WalletLogsFrom(w, b) => {
                wallet_topics(filter).contains(&w.to_ascii_lowercase())
                    && quantity(&filter["fromBlock"]).is_some_and(|f| f >= *b)
            }
            Hold::History => !filter["address"].is_null() || !wallet_topics(filter).is_empty(),
            Hold::Any(hs) => hs.iter().any(|h| h.matches(call)),
        }
    }
}

/// A provider's plan: its limits and the network round trip (see the module's doc). The
/// default is no limit and no added latency: the proxy's behaviour without a profile.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Profile {
    /// Every answer is sent no sooner than this after its request arrived.
    pub latency: Duration,
    /// Largest `eth_getLogs` range, in blocks (`toBlock - fromBlock + 1`).
    pub max_block_range: Option<u64>,
    /// Most logs one `eth_getLogs` answer may hold.
    pub max_results: Option<usize>,
    /// Most JSON-RPC calls admitted in any sliding second.
    pub max_rps: Option<u32>,
    /// Whether a rate refusal carries `Retry-After: 1`.
    pub retry_after: bool,
}

/// The reasons a [`Profile`] refuses a request, as counted (`refused:<reason>`).
pub const REFUSALS: [&str; 3] = ["range", "results", "rate"];

/// `n` with a comma every three digits (`10,000`), as providers write their limits.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The range a result-limited provider suggests for a refused `eth_getLogs` from block `from`
/// whose answer had logs in `blocks` (any order): `from` up to the block before the one of the
/// (`max` + 1)-th log, at least `from`; it holds at most `max` of the logs.
pub fn suggested_range(from: u64, blocks: &[u64], max: usize) -> (u64, u64) {
    let mut sorted = blocks.to_vec();
    sorted.sort_unstable();
    let to = sorted
        .get(max)
        .map_or(from, |b| b.saturating_sub(1).max(from));
    (from, to)
}

/// The proxy's configuration, changeable while it runs.
#[derive(Debug, Clone)]
struct Config {
    rates: Rates,
    delay: Duration,
    /// Faults for the next requests, in order, before any random one.
    script: VecDeque<Fault>,
    max_log_span: Option<u64>,
    hold: Option<Hold>,
    /// Matching `eth_getLogs` requests are answered with a JSON-RPC error (false) or an HTTP
    /// 503 (true).
    fail: Vec<(Hold, bool)>,
    profile: Profile,
}

/// The state shared by the proxy's tasks.
struct Inner {
    upstream: String,
    client: reqwest::Client,
    config: Mutex<Config>,
    rng: Mutex<u64>,
    counts: Mutex<BTreeMap<String, u64>>,
    mode: watch::Sender<Mode>,
    /// Bumped by [`Proxy::release`]; held requests wait for a change.
    released: watch::Sender<u64>,
    malformed_flip: Mutex<bool>,
    /// Every `eth_getLogs` call naming a wallet in a topic: (wallet, call).
    wallet_calls: Mutex<Vec<(String, LogCall)>>,
    /// When the calls admitted by the profile's rate limit arrived, oldest first (the last
    /// second's).
    admitted: Mutex<VecDeque<Instant>>,
}

/// A running proxy; its tasks stop when it is dropped.
pub struct Proxy {
    pub url: String,
    pub addr: SocketAddr,
    inner: Arc<Inner>,
    accept: tokio::task::JoinHandle<()>,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.accept.abort();
        self.inner.mode.send_replace(Mode::Refuse);
    }
}

/// A `0x` quantity (or a decimal number) as u64.
fn quantity(v: &Value) -> Option<u64> {
    match v {
        Value::String(s) => match s.strip_prefix("0x") {
            Some(h) => u64::from_str_radix(h, 16).ok(),
            None => s.parse().ok(),
        },
        Value::Number(n) => n.as_u64(),
        _ => None,
    }
}

impl Proxy {
    /// Starts a fault-free proxy in front of `upstream`; `seed` drives its random faults.
    pub async fn start(upstream: &str, seed: u64) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("proxy: bind a loopback port");
        let addr = listener.local_addr().expect("proxy address");
        let inner = Arc::new(Inner {
            upstream: upstream.to_string(),
            client: {
                tokenql::tls::ensure_crypto_provider();
                reqwest::Client::builder()
            }
            .timeout(Duration::from_secs(30))
            .build()
            .expect("proxy: HTTP client"),
            config: Mutex::new(Config {
                rates: Rates::default(),
                delay: Duration::from_millis(700),
                script: VecDeque::new(),
                max_log_span: None,
                hold: None,
                fail: Vec::new(),
                profile: Profile::default(),
            }),
            rng: Mutex::new(seed.max(1)),
            counts: Mutex::new(BTreeMap::new()),
            mode: watch::channel(Mode::Up).0,
            released: watch::channel(0).0,
            malformed_flip: Mutex::new(false),
            wallet_calls: Mutex::new(Vec::new()),
            admitted: Mutex::new(VecDeque::new()),
        });
        let accept = tokio::spawn(accept_loop(listener, addr, inner.clone()));
        Proxy {
            url: format!("http://{addr}"),
            addr,
            inner,
            accept,
        }
    }

    /// Random faults from now on.
    pub fn set_rates(&self, rates: Rates) {
        self.inner.config.lock().expect("config").rates = rates;
    }

    /// How long a [`Fault::Delay`] of the random rates waits.
    pub fn set_delay(&self, d: Duration) {
        self.inner.config.lock().expect("config").delay = d;
    }

    /// Injects these faults into the next requests, in order.
    pub fn script(&self, faults: impl IntoIterator<Item = Fault>) {
        self.inner
            .config
            .lock()
            .expect("config")
            .script
            .extend(faults);
    }

    /// Refuses `eth_getLogs` spanning more than `blocks` blocks with `-32005`.
    pub fn set_max_log_span(&self, blocks: Option<u64>) {
        self.inner.config.lock().expect("config").max_log_span = blocks;
    }

    /// Behaves as this provider plan from now on (see the module's doc); the rate window
    /// starts empty. `Profile::default()` lifts every limit.
    pub fn set_profile(&self, p: Profile) {
        self.inner.config.lock().expect("config").profile = p;
        self.inner.admitted.lock().expect("admitted").clear();
    }

    /// Calls refused by the profile so far, per reason (`range`, `results`, `rate`; each
    /// present, zero if none).
    pub fn refused(&self) -> BTreeMap<String, u64> {
        REFUSALS
            .iter()
            .map(|r| (r.to_string(), self.count(&format!("refused:{r}"))))
            .collect()
    }

    pub fn set_mode(&self, mode: Mode) {
        self.inner.mode.send_replace(mode);
    }

    /// Keeps matching `eth_getLogs` requests waiting until [`Proxy::release`].
    pub fn hold(&self, h: Hold) {
        self.inner.config.lock().expect("config").hold = Some(h);
        self.inner.released.send_modify(|n| *n += 1);
    }

    /// Lets held requests (and later matching ones) through.
    pub fn release(&self) {
        self.inner.config.lock().expect("config").hold = None;
        self.inner.released.send_modify(|n| *n += 1);
    }

    /// Answers matching `eth_getLogs` requests (from now on, until [`Proxy::heal`]) with the
    /// JSON-RPC error `-32000 history unavailable (proxy)`, counted as `failed_logs`.
    pub fn fail(&self, h: Hold) {
        self.inner
            .config
            .lock()
            .expect("config")
            .fail
            .push((h, false));
    }

    /// Answers matching `eth_getLogs` requests (from now on, until [`Proxy::heal`]) with HTTP
    /// 503, counted as `failed_logs`.
    pub fn fail_unavailable(&self, h: Hold) {
        self.inner
            .config
            .lock()
            .expect("config")
            .fail
            .push((h, true));
    }

    /// Ends [`Proxy::fail`] and [`Proxy::fail_unavailable`].
    pub fn heal(&self) {
        self.inner.config.lock().expect("config").fail.clear();
    }

    /// The `eth_getLogs` calls that named `wallet` in a topic, in the order they arrived.
    pub fn wallet_calls(&self, wallet: &str) -> Vec<LogCall> {
        let w = wallet.to_ascii_lowercase();
        self.inner
            .wallet_calls
            .lock()
            .expect("wallet calls")
            .iter()
            .filter(|(x, _)| *x == w)
            .map(|(_, c)| c.clone())
            .collect()
    }

    /// A counter: a JSON-RPC method name (one per call, batches counted per call),
    /// `eth_getLogs@<address>` for address-filtered logs, `http` for HTTP requests and
    /// `http:<method>` for those by their (first) method, `held`,
    /// `dropped` (connections closed while down), `fault:*`, `span_refused`, and the profile's
    /// refusals `refused:<reason>` (per call; `~<wallet>` and `@<address>` for the
    /// `eth_getLogs` calls naming them).
    pub fn count(&self, key: &str) -> u64 {
        self.inner
            .counts
            .lock()
            .expect("counts")
            .get(key)
            .copied()
            .unwrap_or(0)
    }

    /// All counters.
    pub fn counts(&self) -> BTreeMap<String, u64> {
        self.inner.counts.lock().expect("counts").clone()
    }

    /// Waits until counter `key` reaches `n`.
    pub async fn wait_count(&self, key: &str, n: u64, limit: Duration) {
        let deadline = Instant::now() + limit;
        while self.count(key) < n {
            assert!(
                Instant::now() < deadline,
                "proxy: counter {key} did not reach {n} within {limit:?} (counters: {:?})",
                self.counts()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

impl Inner {
    fn bump(&self, key: &str, n: u64) {
        *self
            .counts
            .lock()
            .expect("counts")
            .entry(key.to_string())
            .or_default() += n;
    }

    /// Counts a refusal of these calls for `reason`, also per wallet and per address.
    fn refuse(&self, reason: &str, calls: &[Value]) {
        self.bump(&format!("refused:{reason}"), calls.len().max(1) as u64);
        for c in calls.iter().filter(|c| c["method"] == "eth_getLogs") {
            let filter = &c["params"][0];
            if let Some(a) = filter["address"].as_str() {
                self.bump(&format!("refused:{reason}@{}", a.to_ascii_lowercase()), 1);
            }
            for w in wallet_topics(filter) {
                self.bump(&format!("refused:{reason}~{w}"), 1);
            }
        }
    }

    /// Whether `n` more calls fit the last second's `max` (and if so, counts them in).
    fn admit(&self, n: usize, max: u32) -> bool {
        let now = Instant::now();
        let mut w = self.admitted.lock().expect("admitted");
        while w
            .front()
            .is_some_and(|t| now.duration_since(*t) >= Duration::from_secs(1))
        {
            w.pop_front();
        }
        let n = n.max(1);
        if w.len() + n > max as usize && !(w.is_empty() && n > max as usize) {
            return false;
        }
        w.extend(std::iter::repeat_n(now, n));
        true
    }

    /// xorshift64*: a uniform draw in [0, 1000).
    fn per_mille(&self) -> u32 {
        let mut s = self.rng.lock().expect("rng");
        *s ^= *s >> 12;
        *s ^= *s << 25;
        *s ^= *s >> 27;
        (s.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as u32 % 1000
    }

    fn mode(&self) -> Mode {
        *self.mode.borrow()
    }

    /// The fault for this request, if any: the script first, then the random rates.
    fn pick_fault(&self) -> Option<Fault> {
        let mut c = self.config.lock().expect("config");
        if let Some(f) = c.script.pop_front() {
            return Some(f);
        }
        let r = c.rates;
        let delay = c.delay;
        drop(c);
        let total = r.delay + r.too_many_requests + r.unavailable + r.drop + r.malformed;
        if total == 0 {
            return None;
        }
        let mut x = self.per_mille();
        for (rate, fault) in [
            (r.delay, Fault::Delay(delay)),
            (r.too_many_requests, Fault::TooManyRequests),
            (r.unavailable, Fault::Unavailable),
            (r.drop, Fault::Drop),
            (r.malformed, Fault::Malformed),
        ] {
            if x < rate {
                return Some(fault);
            }
            x -= rate;
        }
        None
    }
}

async fn accept_loop(first: TcpListener, addr: SocketAddr, inner: Arc<Inner>) {
    let mut listener = Some(first);
    let mut mode_rx = inner.mode.subscribe();
    loop {
        let mode = *mode_rx.borrow_and_update();
        if mode == Mode::Refuse {
            listener = None;
            if mode_rx.changed().await.is_err() {
                return;
            }
            continue;
        }
        let l = match &listener {
            Some(l) => l,
            None => {
                // Back up: listen on the same port again.
                let mut bound = None;
                for _ in 0..100 {
                    if let Ok(l) = TcpListener::bind(addr).await {
                        bound = Some(l);
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                listener =
                    Some(bound.unwrap_or_else(|| panic!("proxy: cannot listen on {addr} again")));
                continue;
            }
        };
        tokio::select! {
            r = l.accept() => {
                let Ok((stream, _)) = r else { continue };
                if inner.mode() != Mode::Up {
                    inner.bump("dropped", 1);
                    drop(stream);
                    continue;
                }
                tokio::spawn(serve(stream, inner.clone()));
            }
            r = mode_rx.changed() => {
                if r.is_err() {
                    return;
                }
            }
        }
    }
}

/// One parsed request.
struct Request {
    body: Vec<u8>,
    close: bool,
}

/// Reads one HTTP/1.1 request; `None` at end of stream or on a request it cannot parse.
async fn read_request(r: &mut BufReader<TcpStream>) -> Option<Request> {
    let mut line = String::new();
    if r.read_line(&mut line).await.ok()? == 0 {
        return None;
    }
    if !line.starts_with("POST ") {
        return None;
    }
    let mut len = None;
    let mut close = false;
    loop {
        line.clear();
        if r.read_line(&mut line).await.ok()? == 0 {
            return None;
        }
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        let (name, value) = l.split_once(':')?;
        let (name, value) = (name.trim().to_ascii_lowercase(), value.trim());
        if name == "content-length" {
            len = value.parse::<usize>().ok();
        } else if name == "connection" && value.eq_ignore_ascii_case("close") {
            close = true;
        }
    }
    let mut body = vec![0u8; len?];
    r.read_exact(&mut body).await.ok()?;
    Some(Request { body, close })
}

async fn respond(
    w: &mut BufReader<TcpStream>,
    status: u16,
    extra: &str,
    body: &[u8],
) -> std::io::Result<()> {
    let reason = match status {
        200 => "OK",
        429 => "Too Many Requests",
        503 => "Service Unavailable",
        _ => "Error",
    };
    let head = format!(
        "HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n{extra}\r\n",
        body.len()
    );
    let s = w.get_mut();
    s.write_all(head.as_bytes()).await?;
    s.write_all(body).await?;
    s.flush().await
}

/// Serves one connection, request after request (keep-alive).
async fn serve(stream: TcpStream, inner: Arc<Inner>) {
    let mut conn = BufReader::new(stream);
    let mut mode_rx = inner.mode.subscribe();
    loop {
        let req = tokio::select! {
            r = read_request(&mut conn) => match r {
                Some(r) => r,
                None => return,
            },
            // Going down closes idle kept-alive connections too.
            _ = async {
                loop {
                    if *mode_rx.borrow_and_update() != Mode::Up {
                        return;
                    }
                    if mode_rx.changed().await.is_err() {
                        return;
                    }
                }
            } => {
                inner.bump("dropped", 1);
                return;
            }
        };
        if inner.mode() != Mode::Up {
            inner.bump("dropped", 1);
            return;
        }
        if !handle(&mut conn, &inner, req.body).await || req.close {
            return;
        }
    }
}

/// An answer: status, extra header lines (each ending `\r\n`), body.
struct Reply {
    status: u16,
    extra: &'static str,
    body: Vec<u8>,
}

impl Reply {
    fn ok(body: Vec<u8>) -> Option<Reply> {
        Some(Reply {
            status: 200,
            extra: "",
            body,
        })
    }
}

/// Answers one request, no sooner than the profile's latency after it arrived; false when the
/// connection must be closed.
async fn handle(conn: &mut BufReader<TcpStream>, inner: &Inner, body: Vec<u8>) -> bool {
    let arrived = Instant::now();
    let reply = answer(inner, body).await;
    let latency = inner.config.lock().expect("config").profile.latency;
    if !latency.is_zero() {
        tokio::time::sleep_until((arrived + latency).into()).await;
    }
    match reply {
        Some(r) => respond(conn, r.status, r.extra, &r.body).await.is_ok(),
        None => false,
    }
}

/// The answer to one request; `None` to close the connection without one.
async fn answer(inner: &Inner, body: Vec<u8>) -> Option<Reply> {
    inner.bump("http", 1);
    let parsed: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let calls: Vec<Value> = match &parsed {
        Value::Array(a) => a.clone(),
        Value::Null => vec![],
        v => vec![v.clone()],
    };
    let first = calls
        .first()
        .and_then(|c| c["method"].as_str())
        .unwrap_or("?");
    inner.bump(&format!("http:{first}"), 1);
    for c in &calls {
        let m = c["method"].as_str().unwrap_or("?");
        inner.bump(m, 1);
        if m == "eth_getLogs" {
            if let Some(a) = c["params"][0]["address"].as_str() {
                inner.bump(&format!("eth_getLogs@{}", a.to_ascii_lowercase()), 1);
            }
            let filter = &c["params"][0];
            for w in wallet_topics(filter) {
                inner.bump(&format!("eth_getLogs~{w}"), 1);
                let word = format!("0x{:0>64}", &w[2..]);
                let mut shape = json!({"address": filter["address"], "topics": filter["topics"]})
                    .to_string()
                    .to_ascii_lowercase();
                shape = shape.replace(&word, "W");
                let call = LogCall {
                    shape,
                    from: quantity(&filter["fromBlock"]),
                    to: quantity(&filter["toBlock"]),
                };
                inner
                    .wallet_calls
                    .lock()
                    .expect("wallet calls")
                    .push((w, call));
            }
        }
    }

    let profile = inner.config.lock().expect("config").profile.clone();

    // The profile's rate limit: refused calls are not forwarded.
    if let Some(max) = profile.max_rps {
        if !inner.admit(calls.len(), max) {
            inner.refuse("rate", &calls);
            let err = |id: &Value| {
                json!({"jsonrpc": "2.0", "id": id,
                       "error": {"code": 429, "message": "Too Many Requests"}})
            };
            let b = match &parsed {
                Value::Array(a) => Value::Array(a.iter().map(|c| err(&c["id"])).collect()),
                v => err(&v["id"]),
            };
            return Some(Reply {
                status: 429,
                extra: if profile.retry_after {
                    "retry-after: 1\r\n"
                } else {
                    ""
                },
                body: b.to_string().into_bytes(),
            });
        }
    }

    // Failed on purpose: a JSON-RPC error or HTTP 503.
    let fail = inner.config.lock().expect("config").fail.clone();
    if let Some((_, unavailable)) = fail
        .iter()
        .find(|(f, _)| calls.iter().any(|c| f.matches(c)))
    {
        inner.bump("failed_logs", 1);
        if *unavailable {
            return Some(Reply {
                status: 503,
                extra: "",
                body: b"Service Unavailable".to_vec(),
            });
        }
        let err = |id: &Value| {
            json!({"jsonrpc": "2.0", "id": id,
                   "error": {"code": -32000, "message": "history unavailable (proxy)"}})
        };
        let b = match &parsed {
            Value::Array(a) => Value::Array(a.iter().map(|c| err(&c["id"])).collect()),
            v => err(&v["id"]),
        };
        return Reply::ok(b.to_string().into_bytes());
    }

    // Held until released.
    let hold = inner.config.lock().expect("config").hold.clone();
    if let Some(h) = hold {
        if calls.iter().any(|c| h.matches(c)) {
            inner.bump("held", 1);
            let mut rx = inner.released.subscribe();
            loop {
                let still = inner.config.lock().expect("config").hold.clone();
                if !still.is_some_and(|h| calls.iter().any(|c| h.matches(c))) {
                    break;
                }
                if rx.changed().await.is_err() {
                    return None;
                }
            }
        }
    }

    if let Some(f) = inner.pick_fault() {
        inner.bump(f.key(), 1);
        // Which collections' log requests a fault hit (`fault:429@0x…`): a test can show that
        // faults reached a backfill, not only the live follower.
        for c in &calls {
            if let Some(a) = c["params"][0]["address"].as_str() {
                inner.bump(&format!("{}@{}", f.key(), a.to_ascii_lowercase()), 1);
            }
        }
        match f {
            Fault::Delay(d) => tokio::time::sleep(d).await,
            Fault::TooManyRequests => {
                let b = br#"{"jsonrpc":"2.0","error":{"code":429,"message":"Too Many Requests"}}"#;
                return Some(Reply {
                    status: 429,
                    extra: "retry-after: 1\r\n",
                    body: b.to_vec(),
                });
            }
            Fault::Unavailable => {
                return Some(Reply {
                    status: 503,
                    extra: "",
                    body: b"Service Unavailable".to_vec(),
                });
            }
            Fault::Drop => return None,
            Fault::Malformed => {
                let flip = {
                    let mut f = inner.malformed_flip.lock().expect("flip");
                    *f = !*f;
                    *f
                };
                let b: &[u8] = if flip {
                    br#"{"jsonrpc":"2.0","id":1,"result":[{"address":"0x"#
                } else {
                    b"<html><body>502 Bad Gateway</body></html>"
                };
                return Reply::ok(b.to_vec());
            }
        }
    }

    // The provider's range limit (single requests only; the indexer batches only headers).
    let span = inner.config.lock().expect("config").max_log_span;
    if let (Some(max), Value::Object(_)) = (span, &parsed) {
        if parsed["method"] == "eth_getLogs" {
            let f = &parsed["params"][0];
            if let (Some(a), Some(b)) = (quantity(&f["fromBlock"]), quantity(&f["toBlock"])) {
                if b >= a && b - a + 1 > max {
                    inner.bump("span_refused", 1);
                    let e = json!({"jsonrpc": "2.0", "id": parsed["id"],
                        "error": {"code": -32005, "message": "query returned more than 10000 results"}});
                    return Reply::ok(e.to_string().into_bytes());
                }
            }
        }
    }

    // The profile's range limit (single requests, as above).
    let single_logs = matches!(parsed, Value::Object(_)) && parsed["method"] == "eth_getLogs";
    let from_block = quantity(&parsed["params"][0]["fromBlock"]);
    if let (Some(max), true) = (profile.max_block_range, single_logs) {
        if let (Some(a), Some(b)) = (from_block, quantity(&parsed["params"][0]["toBlock"])) {
            if b >= a && b - a + 1 > max {
                inner.refuse("range", &calls);
                let message = format!("eth_getLogs is limited to a {} range", thousands(max));
                let e = json!({"jsonrpc": "2.0", "id": parsed["id"],
                    "error": {"code": -32005, "message": message}});
                return Reply::ok(e.to_string().into_bytes());
            }
        }
    }

    let upstream = inner
        .client
        .post(&inner.upstream)
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await;
    let (status, bytes) = match upstream {
        Ok(r) => {
            let s = r.status().as_u16();
            match r.bytes().await {
                Ok(b) => (s, b.to_vec()),
                Err(_) => return None,
            }
        }
        Err(_) => return None,
    };

    // The profile's result limit: the answer is known only once the upstream has given it.
    if let (Some(max), true, 200) = (profile.max_results, single_logs, status) {
        let v: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        if let Some(logs) = v["result"].as_array().filter(|l| l.len() > max) {
            inner.refuse("results", &calls);
            let blocks: Vec<u64> = logs
                .iter()
                .filter_map(|l| quantity(&l["blockNumber"]))
                .collect();
            let first = from_block.unwrap_or_else(|| blocks.iter().copied().min().unwrap_or(0));
            let (a, b) = suggested_range(first, &blocks, max);
            let message = format!(
                "query returned more than {max} results. Try with this block range [0x{a:X}, 0x{b:X}]."
            );
            let e = json!({"jsonrpc": "2.0", "id": parsed["id"],
                "error": {"code": -32005, "message": message}});
            return Reply::ok(e.to_string().into_bytes());
        }
    }
    Some(Reply {
        status,
        extra: "",
        body: bytes,
    })
}
