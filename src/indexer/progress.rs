//! Progress of catch-up: blocks/s, logs/s and ETA, logged every few seconds (and, when stderr
//! is a terminal, drawn as one `indicatif` bar per chain while it is behind:
//! [`crate::telemetry::terminal`]), and the per-chain indexer series of
//! [`crate::ops::metrics`] (head, indexed block, lag, blocks/logs ingested), set on every step.

use std::time::{Duration, Instant};

use indicatif::ProgressBar;

use crate::telemetry::metrics::{
    INDEXER_BLOCKS, INDEXER_HEAD, INDEXER_INDEXED, INDEXER_LAG, INDEXER_LOGS, INDEXER_SKIPPED,
};
use crate::telemetry::terminal;
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
    /// The terminal's bar while catching up (never when stderr is not a terminal).
    bar: Option<ProgressBar>,
}

impl Progress {
    /// Nothing counted yet.
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
            bar: None,
        }
    }

    /// Sets the position gauges.
    fn gauges(&self, indexed: Option<u64>, head: u64) {
        let chain = self.chain.name();
        metrics::gauge!(INDEXER_HEAD, "chain" => chain).set(head as f64);
        if let Some(indexed) = indexed {
            metrics::gauge!(INDEXER_INDEXED, "chain" => chain).set(indexed as f64);
            metrics::gauge!(INDEXER_LAG, "chain" => chain).set(head.saturating_sub(indexed) as f64);
        }
    }

    /// Records a stored range `[from, to]` with the head at `head`.
    pub fn advanced(&mut self, from: u64, to: u64, head: u64, logs: u64, skipped: u64) {
        self.blocks += to - from + 1;
        self.logs += logs;
        self.skipped += skipped;
        let chain = self.chain.name();
        metrics::counter!(INDEXER_BLOCKS, "chain" => chain).increment(to - from + 1);
        metrics::counter!(INDEXER_LOGS, "chain" => chain).increment(logs);
        metrics::counter!(INDEXER_SKIPPED, "chain" => chain).increment(skipped);
        self.gauges(Some(to), head);
        self.was_caught_up = false;
        if let Some(bar) = &self.bar {
            bar.set_length(head);
            bar.set_position(to);
        }
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
        if remaining > 0 {
            self.draw(
                to,
                head,
                format!("{bps:.0} blocks/s | {lps:.0} logs/s | ETA {eta:.0}s"),
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

    /// Shows the position and the pace on the terminal's bar (made on first use; none when
    /// stderr is not a terminal).
    fn draw(&mut self, to: u64, head: u64, pace: String) {
        if self.bar.is_none() {
            self.bar = terminal::block_bar(self.chain.to_string());
        }
        if let Some(bar) = &self.bar {
            bar.set_length(head);
            bar.set_position(to);
            bar.set_message(pace);
        }
    }

    /// Notes that the follower reached the head.
    pub fn caught_up(&mut self, indexed: Option<u64>, head: u64) {
        self.gauges(indexed, head);
        if !self.was_caught_up {
            self.was_caught_up = true;
            if let Some(bar) = self.bar.take() {
                terminal::remove(&bar);
            }
            tracing::info!(chain = %self.chain, indexed = indexed.map_or(-1, |b| b as i64), head, logs = self.logs, "caught up with the chain head");
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(bar) = self.bar.take() {
            terminal::remove(&bar);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_the_chain_series() {
        let recorder = metrics_exporter_prometheus::PrometheusBuilder::new().build_recorder();
        let handle = recorder.handle();
        metrics::with_local_recorder(&recorder, || {
            let mut p = Progress::new(Chain::parse("polygon").expect("chain"));
            p.advanced(100, 109, 120, 7, 1);
            p.advanced(110, 114, 120, 3, 0);
            p.caught_up(Some(118), 121);
        });
        let text = handle.render();
        for want in [
            "tokenql_indexer_head_block{chain=\"polygon\"} 121",
            "tokenql_indexer_indexed_block{chain=\"polygon\"} 118",
            "tokenql_indexer_lag_blocks{chain=\"polygon\"} 3",
            "tokenql_indexer_blocks_ingested_total{chain=\"polygon\"} 15",
            "tokenql_indexer_logs_ingested_total{chain=\"polygon\"} 10",
            "tokenql_indexer_logs_skipped_total{chain=\"polygon\"} 1",
        ] {
            assert!(text.contains(want), "no `{want}` in:\n{text}");
        }
    }
}
