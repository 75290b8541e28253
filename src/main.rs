//! The `tokenql` command line: wiring only. See README "Configuration" for every flag and
//! environment variable.
#![warn(clippy::too_many_lines)]

use std::process::ExitCode;

use clap::Parser;
use tokenql::startup::cli::Cli;
use tokenql::telemetry;

/// mimalloc rather than the system allocator: a page of records is thousands of small
/// allocations, and glibc's malloc (its arenas and consolidation) took a third of the server's
/// CPU time under load (`perf record`, `benches/scale`; see docs/BENCHMARKS.md). Built without
/// transparent huge pages (`no_thp`): its regions advised as huge pages took the server's RSS
/// from 67 to 85 MiB at 64 concurrent requests.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    telemetry::init(cli.log_format);
    match tokenql::startup::run(cli).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
