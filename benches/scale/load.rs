//! Load generation: a fixed-duration closed loop of `c` workers, each sending its next request
//! as soon as the previous one answered, over HTTP (the real server) or straight to the
//! database (the statements the server issues, replayed).

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use sea_orm::{ConnectionTrait, DatabaseConnection, Statement};

/// One HTTP request of a shape.
#[derive(Debug, Clone)]
pub enum Req {
    Get(String),
    Post(String, Arc<String>),
}

/// What a run measured.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Measure {
    pub requests: u64,
    pub errors: u64,
    pub seconds: f64,
    pub rps: f64,
    pub p50_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    /// Highest server VmRSS seen during the run, MiB (HTTP runs only).
    pub rss_mib: Option<f64>,
    /// Where the machine's CPU went during the measured window.
    pub cpu: Option<CpuSplit>,
}

/// CPU time over a measured window: the server's and this load driver's per request, and how
/// busy the whole machine was (the database is most of the rest).
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct CpuSplit {
    pub server_ms_per_req: Option<f64>,
    pub driver_ms_per_req: f64,
    /// CPU time of everything else (the database, mostly), per request.
    pub other_ms_per_req: f64,
    /// Share of all cores busy, 0–100.
    pub machine_busy_pct: f64,
}

/// `/proc` counts CPU time in clock ticks of 1/100 s (USER_HZ on Linux).
const TICK_MS: f64 = 10.0;

/// CPU ticks (user + system) of a process.
fn process_ticks(pid: &str) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name (which may hold spaces) start at `) `.
    let rest = &s[s.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
}

/// (busy, total) ticks of all cores.
fn machine_ticks() -> Option<(u64, u64)> {
    let s = std::fs::read_to_string("/proc/stat").ok()?;
    let line = s.lines().next()?;
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .filter_map(|x| x.parse().ok())
        .collect();
    let total: u64 = v.iter().take(8).sum();
    let idle = v.get(3)? + v.get(4)?;
    Some((total - idle, total))
}

/// A reading of the counters [`CpuSplit`] is computed from.
#[derive(Clone, Copy)]
struct CpuReading {
    server: Option<u64>,
    driver: u64,
    busy: u64,
    total: u64,
}

impl CpuReading {
    fn now(server_pid: Option<u32>) -> Option<Self> {
        let (busy, total) = machine_ticks()?;
        Some(Self {
            server: server_pid.and_then(|p| process_ticks(&p.to_string())),
            driver: process_ticks("self")?,
            busy,
            total,
        })
    }

    fn split(self, end: Self, requests: u64) -> CpuSplit {
        let per_req = |ticks: u64| ticks as f64 * TICK_MS / requests.max(1) as f64;
        let server = match (self.server, end.server) {
            (Some(a), Some(b)) => Some(b.saturating_sub(a)),
            _ => None,
        };
        let driver = end.driver.saturating_sub(self.driver);
        let busy = end.busy.saturating_sub(self.busy);
        CpuSplit {
            server_ms_per_req: server.map(per_req),
            driver_ms_per_req: per_req(driver),
            other_ms_per_req: per_req(busy.saturating_sub(driver + server.unwrap_or(0))),
            machine_busy_pct: 100.0 * busy as f64
                / end.total.saturating_sub(self.total).max(1) as f64,
        }
    }
}

impl Measure {
    fn from(mut lat_us: Vec<u32>, errors: u64, seconds: f64, rss: Option<f64>) -> Self {
        lat_us.sort_unstable();
        let pct = |q: f64| -> f64 {
            if lat_us.is_empty() {
                return 0.0;
            }
            let i = ((lat_us.len() as f64 * q).ceil() as usize).clamp(1, lat_us.len()) - 1;
            f64::from(lat_us[i]) / 1000.0
        };
        let n = lat_us.len() as u64;
        Self {
            requests: n,
            errors,
            seconds,
            rps: n as f64 / seconds,
            p50_ms: pct(0.50),
            p95_ms: pct(0.95),
            p99_ms: pct(0.99),
            rss_mib: rss,
            cpu: None,
        }
    }
}

/// Reads VmRSS (or another `Vm*` field) of `pid` in MiB.
pub fn vm_mib(pid: u32, field: &str) -> Option<f64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = s.lines().find(|l| l.starts_with(field))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// Runs `work(i)` in `c` workers for `warmup` then `duration`; only the second phase counts.
async fn closed_loop<F, Fut>(
    c: usize,
    n_items: usize,
    warmup: Duration,
    duration: Duration,
    rss_pid: Option<u32>,
    work: F,
) -> Measure
where
    F: Fn(usize) -> Fut + Send + Sync + Clone + 'static,
    Fut: std::future::Future<Output = bool> + Send,
{
    let start = Instant::now();
    let measure_from = start + warmup;
    let end = measure_from + duration;
    let mut tasks = Vec::with_capacity(c);
    for w in 0..c {
        let work = work.clone();
        tasks.push(tokio::spawn(async move {
            let mut lat = Vec::with_capacity(4096);
            let mut errors = 0u64;
            let mut i = w;
            loop {
                let t = Instant::now();
                if t >= end {
                    break;
                }
                let ok = work(i % n_items.max(1)).await;
                let done = Instant::now();
                if t >= measure_from && done <= end {
                    if ok {
                        lat.push(done.duration_since(t).as_micros().min(u32::MAX as u128) as u32);
                    } else {
                        errors += 1;
                    }
                }
                i += c;
            }
            (lat, errors)
        }));
    }
    let cpu = tokio::spawn(async move {
        tokio::time::sleep_until(measure_from.into()).await;
        let from = CpuReading::now(rss_pid);
        tokio::time::sleep_until(end.into()).await;
        from.zip(CpuReading::now(rss_pid))
    });
    let sampler = rss_pid.map(|pid| {
        tokio::spawn(async move {
            let mut max: f64 = 0.0;
            while Instant::now() < end {
                if Instant::now() >= measure_from {
                    if let Some(v) = vm_mib(pid, "VmRSS:") {
                        max = max.max(v);
                    }
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            max
        })
    });
    let mut lat = Vec::new();
    let mut errors = 0;
    for t in tasks {
        if let Ok((l, e)) = t.await {
            lat.extend(l);
            errors += e;
        }
    }
    let rss = match sampler {
        Some(s) => s.await.ok(),
        None => None,
    };
    let mut m = Measure::from(lat, errors, duration.as_secs_f64(), rss);
    if let Ok(Some((from, to))) = cpu.await {
        m.cpu = Some(from.split(to, m.requests));
    }
    m
}

/// The server under load: where it listens, the key to send, its process (for RSS).
pub struct Target<'a> {
    pub client: &'a reqwest::Client,
    pub base: &'a str,
    pub key: &'a str,
    pub pid: u32,
}

/// Drives the server with `reqs` (round robin) at concurrency `c`.
pub async fn http(
    target: &Target<'_>,
    reqs: &[Req],
    c: usize,
    warmup: Duration,
    duration: Duration,
) -> Measure {
    let Target {
        client,
        base,
        key,
        pid,
    } = *target;
    let reqs: Arc<Vec<Req>> = Arc::new(reqs.to_vec());
    let n = reqs.len();
    let client = client.clone();
    let base: Arc<str> = base.into();
    let key: Arc<str> = key.into();
    closed_loop(c, n, warmup, duration, Some(pid), move |i| {
        let (client, base, key, reqs) = (client.clone(), base.clone(), key.clone(), reqs.clone());
        async move {
            let rb = match &reqs[i] {
                Req::Get(path) => client.get(format!("{base}{path}")),
                Req::Post(path, body) => client
                    .post(format!("{base}{path}"))
                    .header("content-type", "application/json")
                    .body(body.as_str().to_owned()),
            };
            match rb.header("x-api-key", &*key).send().await {
                Ok(r) if r.status().is_success() => r.bytes().await.is_ok(),
                _ => false,
            }
        }
    })
    .await
}

/// Replays statement sets (one set per request of a shape, executed in order) on `db` at
/// concurrency `c`; a "request" is one whole set.
pub async fn raw_sql(
    db: &DatabaseConnection,
    sets: &[Vec<Statement>],
    c: usize,
    warmup: Duration,
    duration: Duration,
) -> Measure {
    let sets: Arc<Vec<Vec<Statement>>> = Arc::new(sets.to_vec());
    let n = sets.len();
    let db = db.clone();
    closed_loop(c, n, warmup, duration, None, move |i| {
        let (db, sets) = (db.clone(), sets.clone());
        async move {
            for s in &sets[i] {
                if db.query_all_raw(s.clone()).await.is_err() {
                    return false;
                }
            }
            true
        }
    })
    .await
}

/// Runs pgbench with one script per statement set (literal values), returns its tps.
pub fn pgbench(
    db_url: &str,
    dir: &std::path::Path,
    shape: &str,
    sets: &[Vec<Statement>],
    c: usize,
    duration: Duration,
) -> anyhow::Result<f64> {
    std::fs::create_dir_all(dir)?;
    let mut args: Vec<String> = vec![
        "-n".into(),
        "-c".into(),
        c.to_string(),
        "-j".into(),
        "2".into(),
        "-T".into(),
        duration.as_secs().max(1).to_string(),
    ];
    for (i, set) in sets.iter().enumerate() {
        let path = dir.join(format!("{shape}-{i}.sql"));
        let text: String = set.iter().map(|s| format!("{s};\n")).collect();
        std::fs::write(&path, text)?;
        args.push("-f".into());
        args.push(path.display().to_string());
    }
    args.push(db_url.to_string());
    let out = std::process::Command::new("pgbench")
        .args(&args)
        .output()
        .context("running pgbench")?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let tps = stdout
        .lines()
        .find(|l| l.starts_with("tps = "))
        .and_then(|l| l.split_whitespace().nth(2))
        .and_then(|v| v.parse::<f64>().ok())
        .with_context(|| {
            format!(
                "pgbench gave no tps: {stdout} {}",
                String::from_utf8_lossy(&out.stderr)
            )
        })?;
    Ok(tps)
}

/// A `tokenql serve` process; killed on drop.
pub struct Server {
    child: std::process::Child,
    /// `http://127.0.0.1:PORT`
    pub base: String,
}

impl Server {
    /// The server's process id (for `/proc`).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `tokenql --database-url URL serve --bind 127.0.0.1:PORT EXTRA...` (`bin`, or the
/// `tokenql` built with the bench) on a free port, logging to `log` with `RUST_LOG=warn`, and
/// waits for `/healthz`.
pub async fn start_server(
    bin: Option<&Path>,
    url: &str,
    extra: &[String],
    log: &Path,
) -> anyhow::Result<Server> {
    let bin = bin.unwrap_or(Path::new(env!("CARGO_BIN_EXE_tokenql")));
    start_server_under(bin, &[], url, extra, log).await
}

/// [`start_server`] as `program PREFIX... --database-url URL serve ...`: `program` is the
/// tokenql binary (no prefix) or a wrapper such as a profiler, given the binary in `prefix`.
pub async fn start_server_under(
    program: &Path,
    prefix: &[String],
    url: &str,
    extra: &[String],
    log: &Path,
) -> anyhow::Result<Server> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let log_file = std::fs::File::create(log)?;
    let bin = program;
    let child = std::process::Command::new(bin)
        .args(prefix)
        .args(["--database-url", url, "serve", "--bind"])
        .arg(format!("127.0.0.1:{port}"))
        .args(extra)
        .env("RUST_LOG", "warn")
        .stdout(log_file.try_clone()?)
        .stderr(log_file)
        .spawn()
        .with_context(|| format!("starting {}", bin.display()))?;
    let server = Server {
        child,
        base: format!("http://127.0.0.1:{port}"),
    };
    let client = reqwest::Client::new();
    for _ in 0..300 {
        if let Ok(r) = client.get(format!("{}/healthz", server.base)).send().await {
            if r.status().is_success() {
                return Ok(server);
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    bail!(
        "the server did not answer /healthz within 30 s (log: {})",
        log.display()
    )
}
