//! `tokenql status`: each chain's start, indexed block, head and lag, and every history fetch
//! (scope, state, progress, logs, ETA, last error), and who holds each chain's leader lease.

use sea_orm::{DatabaseConnection, DbErr};

use crate::store::now_ms;
use crate::store::scopes::{self, ScopeRow};
use crate::types::{Chain, ScopeState};

/// Lines of the report.
pub async fn report(db: &DatabaseConnection) -> Result<Vec<String>, DbErr> {
    let mut out = vec![format!(
        "{:<12} {:>12} {:>12} {:>12} {:>8}  history",
        "chain", "start", "indexed", "head", "lag"
    )];
    let states = crate::store::chain::states(db).await?;
    if states.is_empty() {
        out.push("(nothing indexed yet)".into());
    }
    let opt = |v: Option<u64>| v.map_or("-".to_string(), |b| b.to_string());
    for s in &states {
        let lag = match (s.indexed_block, s.head_block) {
            (Some(i), Some(h)) => h.saturating_sub(i).to_string(),
            (None, Some(_)) => "all".into(),
            _ => "-".into(),
        };
        let history = if s.history_complete || s.start_block == Some(0) {
            "complete"
        } else {
            "on demand"
        };
        out.push(format!(
            "{:<12} {:>12} {:>12} {:>12} {lag:>8}  {history}",
            chain_name(s.chain_id),
            opt(s.start_block),
            opt(s.indexed_block),
            opt(s.head_block)
        ));
    }
    out.extend(lease_lines(&crate::store::lease::list(db).await?, now_ms()));
    let rows = scopes::list(db).await?;
    if !rows.is_empty() {
        out.push(String::new());
        out.push(format!(
            "{:<12} {:<8} {:<42} {:<8} {:>9} {:>10} {:>8}  error",
            "chain", "scope", "address", "state", "progress", "logs", "eta"
        ));
        let now = now_ms();
        for (chain, r) in rows {
            out.push(scope_line(chain, &r, now));
        }
    }
    Ok(out)
}

/// The leader lease of each chain an indexer has led: its holder and how long it has left
/// (an expired one is free for a standby to take).
fn lease_lines(leases: &[crate::store::lease::LeaseInfo], now: i64) -> Vec<String> {
    if leases.is_empty() {
        return Vec::new();
    }
    let mut out = vec![
        String::new(),
        format!(
            "{:<12} {:<40} {:>12} {:>10}",
            "chain", "leader", "lease", "takeovers"
        ),
    ];
    for l in leases {
        let (holder, left) = match &l.holder {
            None => ("(none: released)".to_string(), "-".to_string()),
            Some(h) if l.expires_at <= now => (h.clone(), "expired".to_string()),
            Some(h) => (h.clone(), format!("{} ms", l.expires_at - now)),
        };
        out.push(format!(
            "{:<12} {holder:<40} {left:>12} {:>10}",
            chain_name(l.chain_id),
            l.takeovers
        ));
    }
    out
}

fn chain_name(id: i64) -> String {
    u64::try_from(id)
        .ok()
        .and_then(Chain::from_id)
        .map_or(format!("0x{id:x}"), |c| c.name().to_string())
}

/// One scope's line: progress as the share of `[0, target)` stored, and an ETA from the pace
/// since it was first asked for.
fn scope_line(chain: Chain, r: &ScopeRow, now: i64) -> String {
    let done = r.synced_to_block.map_or(0, |b| b + 1);
    let (progress, eta) = match (r.state, r.target_block) {
        (ScopeState::Synced, _) => ("100%".to_string(), "-".to_string()),
        (_, Some(target)) if target > 0 => {
            let share = done.min(target) as f64 / target as f64;
            let elapsed = (now - r.requested_at).max(1) as f64 / 1000.0;
            let eta = if done > 0 && r.state == ScopeState::Syncing {
                let left = (target - done.min(target)) as f64 / (done as f64 / elapsed);
                format!("{}s", left.ceil() as u64)
            } else {
                "-".to_string()
            };
            (format!("{:.1}%", share * 100.0), eta)
        }
        _ => ("-".to_string(), "-".to_string()),
    };
    format!(
        "{:<12} {:<8} {:<42} {:<8} {progress:>9} {:>10} {eta:>8}  {}",
        chain.name(),
        r.scope.kind.as_str(),
        r.scope.address.to_string(),
        r.state.as_str(),
        r.logs,
        r.error.as_deref().unwrap_or("")
    )
    .trim_end()
    .to_string()
}
