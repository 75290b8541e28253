//! The one-shot commands: migrations, keys, imports, history fetches and the status report.
//! Each returns the lines it prints; [`super::run`] writes them to stdout.

use std::io::IsTerminal;
use std::path::Path;

use anyhow::Context;
use migration::MigratorTrait;
use sea_orm::DatabaseConnection;

use super::cli::KeysAction;
use crate::types::{Address, Chain, ScopeKind};

/// `tokenql migrate`: applies pending migrations.
pub async fn migrate(url: &str) -> anyhow::Result<()> {
    let db = crate::store::database::connect(url, 2)
        .await
        .context("connecting to the database")?;
    migration::repair_recorded_names(&db)
        .await
        .context("renaming misrecorded migrations")?;
    migration::Migrator::up(&db, None)
        .await
        .context("applying migrations")?;
    tracing::info!("migrations applied");
    Ok(())
}

/// Connects with a pool of `pool` and checks that no migration is pending.
pub async fn open_migrated(url: &str, pool: u32) -> anyhow::Result<DatabaseConnection> {
    let db = crate::store::database::connect(url, pool)
        .await
        .context("connecting to the database")?;
    anyhow::ensure!(
        crate::store::database::migrations_current(&db).await?,
        "the database has pending migrations: run `tokenql migrate` first"
    );
    Ok(db)
}

/// `tokenql keys …`.
pub async fn keys(db: &DatabaseConnection, action: KeysAction) -> anyhow::Result<Vec<String>> {
    Ok(match action {
        KeysAction::Create { name, rate } => {
            let (info, secret) = crate::keys::create_with_rate(db, &name, rate.key_rate())
                .await
                .context("creating the key")?;
            vec![
                format!(
                    "created key {} ({}, rate limit {}); store it now, it is not shown again:",
                    info.id,
                    info.name,
                    info.rate.describe()
                ),
                secret,
            ]
        }
        KeysAction::List => {
            let mut lines = vec!["id\tname\tprefix\tcreated_ms\trevoked_ms\trate_limit".into()];
            for k in crate::keys::list(db).await? {
                lines.push(format!(
                    "{}\t{}\t{}…\t{}\t{}\t{}",
                    k.id,
                    k.name,
                    k.prefix,
                    k.created_at,
                    k.revoked_at.map_or("-".to_string(), |r| r.to_string()),
                    k.rate.describe()
                ));
            }
            lines
        }
        KeysAction::SetRate { id_or_name, rate } => {
            let rate = rate.key_rate();
            let n = crate::keys::set_rate(db, &id_or_name, rate).await?;
            anyhow::ensure!(n > 0, "no active key with id or name '{id_or_name}'");
            vec![format!(
                "rate limit of {n} key(s) set to {}",
                rate.describe()
            )]
        }
        KeysAction::Revoke { id_or_name } => {
            let n = crate::keys::revoke(db, &id_or_name).await?;
            anyhow::ensure!(n > 0, "no active key with id or name '{id_or_name}'");
            vec![format!("revoked {n} key(s)")]
        }
    })
}

/// What `tokenql import` loads.
pub struct ImportFiles<'a> {
    pub logs: Option<(&'a Path, &'a Path)>,
    pub tokenlist: Option<&'a Path>,
    pub complete_history: bool,
}

/// `tokenql import`: recorded logs with their block headers, and/or a token list.
pub async fn import(
    db: &DatabaseConnection,
    chain: Chain,
    files: ImportFiles<'_>,
) -> anyhow::Result<Vec<String>> {
    let mut lines = Vec::new();
    if let Some((logs, blocks)) = files.logs {
        let r = crate::import::import_logs(db, chain, logs, blocks).await?;
        lines.push(format!(
            "imported {} lines: {} ERC20 transfers, {} NFT transfers, {} blocks; skipped {} non-transfer and {} malformed",
            r.lines, r.erc20_transfers, r.nft_transfers, r.blocks, r.skipped_not_transfer, r.skipped_malformed
        ));
        if files.complete_history {
            crate::store::mark_history_complete(db, chain).await?;
            lines.push(format!("{chain}: the stored history is declared complete"));
        }
    }
    if let Some(list) = files.tokenlist {
        let r = crate::lists::tokenlist::import_file(db, list, Some(chain)).await?;
        lines.push(r.to_string());
    }
    Ok(lines)
}

/// `tokenql sync`: queues the history fetch of `addresses`, and with `wait` reports progress
/// until each is complete or failed: through `out`, a line every few seconds; or, when stdout
/// and stderr are both terminals, on a spinner, `out` getting only the last line.
pub async fn sync(
    db: &DatabaseConnection,
    chain: Chain,
    scope: ScopeKind,
    addresses: &[Address],
    wait: bool,
    out: fn(String),
) -> anyhow::Result<()> {
    let n = crate::indexer::history::schedule_addresses(db, chain, scope, addresses).await?;
    out(format!(
        "{chain}: {n} {scope} history fetch(es) queued, {} already known",
        addresses.len() as u64 - n.min(addresses.len() as u64)
    ));
    if !wait {
        return Ok(());
    }
    let spinner = std::io::stdout()
        .is_terminal()
        .then(|| {
            crate::telemetry::terminal::spinner(format!(
                "{chain}: waiting for {} {scope} history fetch(es)",
                addresses.len()
            ))
        })
        .flatten();
    let Some(spinner) = spinner else {
        return crate::indexer::history::wait(db, chain, scope, addresses, out).await;
    };
    let mut last = None;
    let waited = crate::indexer::history::wait(db, chain, scope, addresses, |line: String| {
        spinner.set_message(line.clone());
        last = Some(line);
    })
    .await;
    crate::telemetry::terminal::remove(&spinner);
    last.into_iter().for_each(out);
    waited
}
