//! Progress of catch-up: blocks/s, logs/s and ETA, logged every few seconds (and drawn on one
//! updating line when stderr is a terminal).

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use crate::types::Chain;

const EVERY: Duration = Duration::from_secs(5);

/// Progress of one chain.
#[derive(Debug)]
pub struct Progress {
    chain: Chain,
    since: Instant,
    last_report: Instant,
    blocks: u64,
    logs: u64,
    skipped: u64,
    was_caught_up: bool,
    tty: bool,
}

impl Progress {
    pub fn new(chain: Chain) -> Self {
        let now = Instant::now();
        Self {
            chain,
            since: now,
            last_report: now,
            blocks: 0,
            logs: 0,
            skipped: 0,
            was_caught_up: false,
            tty: std::io::stderr().is_terminal(),
        }
    }

    /// Records a stored range `[from, to]` with the head at `head`.
    pub fn advanced(&mut self, from: u64, to: u64, head: u64, logs: u64, skipped: u64) {
        self.blocks += to - from + 1;
        self.logs += logs;
        self.skipped += skipped;
        self.was_caught_up = false;
        if self.last_report.elapsed() < EVERY {
            return;
        }
        self.last_report = Instant::now();
        let secs = self.since.elapsed().as_secs_f64().max(0.001);
        let bps = self.blocks as f64 / secs;
        let lps = self.logs as f64 / secs;
        let remaining = head.saturating_sub(to);
        let eta = if bps > 0.0 {
            remaining as f64 / bps
        } else {
            f64::INFINITY
        };
        if self.tty {
            eprint!(
                "\r{}: block {to} of {head} | {bps:.0} blocks/s | {lps:.0} logs/s | ETA {eta:.0}s   ",
                self.chain
            );
        }
        tracing::info!(
            chain = %self.chain,
            block = to,
            head,
            blocks_per_s = format!("{bps:.0}"),
            logs_per_s = format!("{lps:.0}"),
            eta_s = format!("{eta:.0}"),
            skipped_logs = self.skipped,
            "catching up"
        );
    }

    /// Notes that the follower reached the head.
    pub fn caught_up(&mut self, indexed: Option<u64>, head: u64) {
        if !self.was_caught_up {
            self.was_caught_up = true;
            if self.tty && self.blocks > 0 {
                eprintln!();
            }
            tracing::info!(chain = %self.chain, indexed = indexed.map_or(-1, |b| b as i64), head, logs = self.logs, "caught up with the chain head");
        }
    }
}
