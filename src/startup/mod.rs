//! Startup: what `tokenql`'s subcommands do, as library functions. `main` only parses the
//! command line ([`cli::Cli`]) and calls [`run`]; tests and embedders can call the same
//! functions (e.g. [`serve::serve`] with their own shutdown future).
//!
//! - [`cli`]: the subcommands and their settings.
//! - [`commands`]: the one-shot commands (migrate, keys, import, sync).
//! - [`serve`]: the server with the indexer, the workers and the replica monitor under one
//!   stop signal.
//! - [`chain_reads`]: the chains' RPC endpoints as the query service's chain readers (native
//!   balances, block headers).

pub mod chain_reads;
pub mod cli;
pub mod commands;
pub mod serve;

use cli::{Cli, Command};
use commands::{open_migrated, ImportFiles};

/// Writes a line to stdout (command output, as opposed to logs).
pub fn out(line: String) {
    use std::io::Write;
    let _ = writeln!(std::io::stdout(), "{line}");
}

/// Runs the parsed command line, printing command output on stdout.
pub async fn run(cli: Cli) -> anyhow::Result<()> {
    let url = cli.database_url.as_str();
    let lines = match cli.command {
        Command::Migrate => {
            commands::migrate(url).await?;
            Vec::new()
        }
        Command::Keys { action } => commands::keys(&open_migrated(url, 2).await?, action).await?,
        Command::Import {
            chain,
            logs,
            blocks,
            tokenlist,
            complete_history,
        } => {
            anyhow::ensure!(
                logs.is_some() || tokenlist.is_some(),
                "nothing to import: give --logs and --blocks, and/or --tokenlist"
            );
            let files = ImportFiles {
                logs: logs.as_deref().zip(blocks.as_deref()),
                tokenlist: tokenlist.as_deref(),
                complete_history,
            };
            commands::import(&open_migrated(url, 2).await?, chain, files).await?
        }
        Command::Lists { action } => {
            crate::lists::cli::run_lists(&open_migrated(url, 2).await?, action).await?
        }
        Command::Contract { action } => {
            crate::lists::cli::run_contract(&open_migrated(url, 2).await?, action).await?
        }
        Command::Index { indexer } => {
            let config = indexer.config().map_err(anyhow::Error::msg)?;
            anyhow::ensure!(
                !config.chains.is_empty(),
                "no chain to follow: give --rpc CHAIN=URL or set TOKENQL_RPC_<CHAIN>"
            );
            let db = open_migrated(url, 8).await?;
            crate::indexer::run(db, config, crate::server::shutdown_signal()).await?;
            Vec::new()
        }
        Command::Sync {
            scope,
            addresses,
            chain,
            wait,
        } => {
            let db = open_migrated(url, 2).await?;
            commands::sync(&db, chain, scope, &addresses, wait, out).await?;
            Vec::new()
        }
        Command::Status => crate::indexer::status::report(&open_migrated(url, 2).await?).await?,
        Command::Serve(args) => {
            let ready = |addr, key: Option<&str>| {
                key.into_iter()
                    .flat_map(|k| serve::demo_banner(addr, k))
                    .for_each(out);
            };
            serve::serve(*args, url, crate::server::shutdown_signal(), ready).await?;
            Vec::new()
        }
    };
    lines.into_iter().for_each(out);
    Ok(())
}
