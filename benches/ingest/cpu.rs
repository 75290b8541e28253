//! CPU seconds (user + system, read from `/proc`) that an ingest run costs each of the three
//! processes it keeps busy: this program (the indexer runs in it, and SQLite with it), the
//! node it started (`anvil`, a child of this program), and the database server (every process
//! named `postgres`, `mariadbd` or `mysqld`; run the bench alone on its server). Sampled every
//! [`EVERY`] while the ingest runs, so that a server process that ends meanwhile still counts up
//! to its last sample. The sampling itself is counted as this program's (a few ms a sample).
//! Linux only; elsewhere every figure is zero.
//!
//! Two cores give at most two CPU seconds per second of wall time, so these say how far any
//! overlap of the three could take a run (`docs/BENCHMARKS.md`).

use std::collections::HashMap;
use std::time::Duration;

use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// How often the processes are sampled.
const EVERY: Duration = Duration::from_millis(250);

/// Clock ticks per second of the times in `/proc/<pid>/stat` (`USER_HZ`, 100 on Linux).
const TICKS_PER_SECOND: f64 = 100.0;

/// Process names of the database servers.
const SERVERS: [&str; 3] = ["postgres", "mariadbd", "mysqld"];

/// CPU seconds spent by each side over a window.
#[derive(Debug, Default, Clone, Copy)]
pub struct Spent {
    pub tokenql: f64,
    pub node: f64,
    pub server: f64,
}

impl Spent {
    /// All three together.
    pub fn total(&self) -> f64 {
        self.tokenql + self.node + self.server
    }
}

/// Which side a process is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Tokenql,
    Node,
    Server,
}

/// A running sample of the three sides, from [`Meter::start`] to [`Meter::stop`].
pub struct Meter {
    stop: oneshot::Sender<()>,
    task: JoinHandle<Spent>,
}

impl Meter {
    /// Starts sampling.
    pub fn start() -> Self {
        let me = std::process::id();
        let (stop, mut stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let first = sample(me);
            let mut last = first.clone();
            loop {
                tokio::select! {
                    _ = &mut stopped => break,
                    _ = tokio::time::sleep(EVERY) => {}
                }
                // A process that ended keeps its last sample.
                last.extend(sample(me));
            }
            last.extend(sample(me));
            spent_between(&first, &last)
        });
        Self { stop, task }
    }

    /// Stops sampling; what each side spent since [`Meter::start`].
    pub async fn stop(self) -> Spent {
        let _ = self.stop.send(());
        self.task.await.unwrap_or_default()
    }
}

/// What each side spent from `first` to `last` (a process not in `first` started meanwhile).
fn spent_between(first: &HashMap<u32, (Side, u64)>, last: &HashMap<u32, (Side, u64)>) -> Spent {
    let mut spent = Spent::default();
    for (pid, (side, ticks)) in last {
        let before = first.get(pid).map_or(0, |(_, t)| *t);
        let secs = ticks.saturating_sub(before) as f64 / TICKS_PER_SECOND;
        match side {
            Side::Tokenql => spent.tokenql += secs,
            Side::Node => spent.node += secs,
            Side::Server => spent.server += secs,
        }
    }
    spent
}

/// The side and CPU ticks (user + system, all threads) of every process on one of the sides.
fn sample(me: u32) -> HashMap<u32, (Side, u64)> {
    let mut out = HashMap::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return out;
    };
    for entry in dir.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|s| s.parse().ok()) else {
            continue;
        };
        if let Some(found) = process(me, pid) {
            out.insert(pid, found);
        }
    }
    out
}

/// The side and ticks of process `pid`, when it is on a side.
fn process(me: u32, pid: u32) -> Option<(Side, u64)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // "pid (name) state ppid ...": the name may hold spaces and parentheses.
    let name = &stat[stat.find('(')? + 1..stat.rfind(')')?];
    let fields: Vec<&str> = stat[stat.rfind(')')? + 2..].split(' ').collect();
    let ppid: u32 = fields.get(1)?.parse().ok()?;
    let ticks = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    let side = if pid == me {
        Side::Tokenql
    } else if name == "anvil" && ppid == me {
        Side::Node
    } else if SERVERS.iter().any(|s| name.starts_with(s)) {
        Side::Server
    } else {
        return None;
    };
    Some((side, ticks))
}
