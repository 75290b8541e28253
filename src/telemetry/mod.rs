//! Tracing, set up once by `main`: an env filter (`RUST_LOG`, default `info`) and either
//! human-readable or JSON lines (`TOKENQL_LOG_FORMAT=json`), always on stderr so that stdout
//! stays for command output (and above the progress bars of [`terminal`], when stderr is a
//! terminal).

pub mod metrics;
pub mod terminal;

use axum::http::HeaderName;
use tracing_subscriber::{fmt, EnvFilter};

/// The header carrying a request's id, both ways (`crate::ops::request_id`), and exposed to
/// browsers by CORS.
pub const REQUEST_ID_HEADER: HeaderName = HeaderName::from_static("x-request-id");

/// Log line format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

/// Installs the global subscriber. Safe to call more than once (later calls do nothing).
pub fn init(format: LogFormat) {
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new("info,sqlx=warn,sea_orm=warn"));
    let builder = fmt()
        .with_env_filter(filter)
        .with_writer(|| terminal::LogWriter);
    let _ = match format {
        LogFormat::Json => builder.json().try_init(),
        LogFormat::Text => builder.try_init(),
    };
}
