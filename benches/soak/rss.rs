//! The server's resident memory over time: samples from `/proc`, and what the report says about
//! them (levels, the least-squares slope after warm-up, and two windows compared).

use std::fmt::Write as _;

/// One sample.
#[derive(Debug, Clone, Copy)]
pub struct Sample {
    /// Seconds since the measured phase began (negative: before it).
    pub t: f64,
    /// VmRSS, MiB.
    pub rss: f64,
    /// Requests answered so far (server mode).
    pub requests: u64,
    /// The indexer's last indexed block.
    pub block: Option<i64>,
    /// ERC20 transfers stored (indexer mode).
    pub logs: Option<i64>,
}

/// The first sample at or after `t` seconds.
pub fn at(samples: &[Sample], t: f64) -> Option<Sample> {
    samples.iter().find(|s| s.t >= t).copied()
}

/// Mean RSS over samples in `[a, b)` seconds.
pub fn mean(samples: &[Sample], a: f64, b: f64) -> Option<f64> {
    let v: Vec<f64> = samples
        .iter()
        .filter(|s| s.t >= a && s.t < b)
        .map(|s| s.rss)
        .collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// Least-squares slope of RSS over the samples from `from` seconds on, in MiB per minute.
pub fn slope(samples: &[Sample], from: f64) -> Option<f64> {
    let pts: Vec<(f64, f64)> = samples
        .iter()
        .filter(|s| s.t >= from)
        .map(|s| (s.t / 60.0, s.rss))
        .collect();
    if pts.len() < 3 {
        return None;
    }
    let n = pts.len() as f64;
    let mx = pts.iter().map(|p| p.0).sum::<f64>() / n;
    let my = pts.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = pts.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    (sxx > 0.0).then(|| sxy / sxx)
}

/// The verdict on a series: what the issue asks of a soak.
pub struct Flatness {
    pub lines: Vec<String>,
    pub slope_ok: bool,
    pub windows_ok: bool,
}

/// Reports RSS at `start` (the last sample before 0 s, or the first), after `warmup` seconds
/// and at the end; the slope from `warmup` on (limit 0.1 MiB/min); and the mean of the last ten
/// minutes against minutes 5–10 after `origin` seconds (limit 5%).
pub fn flatness(samples: &[Sample], origin: f64, warmup: f64) -> Flatness {
    let mut lines = Vec::new();
    let Some(last) = samples.last().copied() else {
        return Flatness {
            lines: vec!["no RSS samples".into()],
            slope_ok: false,
            windows_ok: false,
        };
    };
    let start = samples
        .iter()
        .rev()
        .find(|s| s.t <= 0.0)
        .or(samples.first())
        .copied()
        .unwrap_or(last);
    let warm = at(samples, warmup).unwrap_or(last);
    let peak = samples.iter().map(|s| s.rss).fold(0.0, f64::max);
    lines.push(format!(
        "RSS: start {:.1} MiB | after warm-up ({:.0} min) {:.1} MiB | end ({:.1} min) {:.1} MiB | peak {:.1} MiB",
        start.rss,
        warmup / 60.0,
        warm.rss,
        last.t / 60.0,
        last.rss,
        peak
    ));
    let s = slope(samples, warmup);
    let slope_ok = s.is_some_and(|s| s < 0.1);
    lines.push(match s {
        Some(s) => format!(
            "slope after warm-up: {s:+.3} MiB/min (limit 0.1): {}",
            if slope_ok { "PASS" } else { "FAIL" }
        ),
        None => "slope after warm-up: too few samples: FAIL".into(),
    });
    let (a0, a1) = (origin + 300.0, origin + 600.0);
    let (b0, b1) = (last.t - 600.0, last.t + 1.0);
    let mut windows_ok = false;
    match (mean(samples, a0, a1), mean(samples, b0, b1)) {
        (Some(a), Some(b)) => {
            let pct = 100.0 * (b - a) / a;
            windows_ok = pct.abs() <= 5.0;
            let overlap = if b0 < a1 {
                " (the windows overlap: the run is shorter than 20 min)"
            } else {
                ""
            };
            lines.push(format!(
                "mean RSS minutes 5-10: {a:.1} MiB | last 10 minutes: {b:.1} MiB | {pct:+.1}% (limit 5%): {}{overlap}",
                if windows_ok { "PASS" } else { "FAIL" }
            ));
        }
        _ => lines.push("windows: the run is shorter than 10 minutes: FAIL".into()),
    }
    Flatness {
        lines,
        slope_ok,
        windows_ok,
    }
}

/// RSS once a minute (the sample nearest each whole minute), as a table.
pub fn per_minute(samples: &[Sample], from: f64) -> String {
    let mut out = String::from("  min |  RSS MiB | requests | indexed block | transfers stored\n");
    let Some(last) = samples.last() else {
        return out;
    };
    let mut m = (from / 60.0).ceil() as i64;
    while (m as f64) * 60.0 <= last.t {
        if let Some(s) = at(samples, m as f64 * 60.0) {
            let _ = writeln!(
                out,
                "{m:>5} | {:>8.1} | {:>8} | {:>13} | {:>16}",
                s.rss,
                s.requests,
                s.block.map_or("-".into(), |b| b.to_string()),
                s.logs.map_or("-".into(), |b| b.to_string()),
            );
        }
        m += 1;
    }
    out
}

/// The samples as CSV.
pub fn csv(samples: &[Sample]) -> String {
    let mut out = String::from("seconds,rss_mib,requests,indexed_block,transfers_stored\n");
    for s in samples {
        let _ = writeln!(
            out,
            "{:.1},{:.2},{},{},{}",
            s.t,
            s.rss,
            s.requests,
            s.block.map_or(String::new(), |b| b.to_string()),
            s.logs.map_or(String::new(), |b| b.to_string()),
        );
    }
    out
}
