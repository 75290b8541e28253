//! Progress drawn on the terminal with `indicatif`, and only when stderr is one: the indexer's
//! catch-up bars (one line per chain) and the spinner of `tokenql sync --wait`. When stderr is
//! not a terminal nothing is drawn; the log lines, written either way, are the record, so CI
//! logs stay plain text. A log line written while bars show goes above them ([`LogWriter`]
//! hides the bars for the moment it writes).

use std::io::{IsTerminal, Write};
use std::sync::OnceLock;
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressStyle};

/// How often a spinner turns.
const TICK: Duration = Duration::from_millis(120);

/// The bars of this process, drawn on stderr; `None` when stderr is not a terminal.
pub fn bars() -> Option<&'static MultiProgress> {
    static BARS: OnceLock<Option<MultiProgress>> = OnceLock::new();
    BARS.get_or_init(|| std::io::stderr().is_terminal().then(MultiProgress::new))
        .as_ref()
}

/// A bar of blocks, `PREFIX: block POS of LEN [bar] MESSAGE`, added to [`bars`]; `None` when
/// stderr is not a terminal.
pub fn block_bar(prefix: String) -> Option<ProgressBar> {
    let style = ProgressStyle::with_template("{prefix}: block {pos} of {len} [{bar:30}] {msg}")
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ");
    bars().map(|b| b.add(ProgressBar::new(0).with_style(style).with_prefix(prefix)))
}

/// A spinner showing `message` and the time elapsed, added to [`bars`]; `None` when stderr is
/// not a terminal.
pub fn spinner(message: String) -> Option<ProgressBar> {
    let style = ProgressStyle::with_template("{spinner} {msg} ({elapsed})")
        .unwrap_or_else(|_| ProgressStyle::default_spinner());
    bars().map(|b| {
        let s = b.add(
            ProgressBar::new_spinner()
                .with_style(style)
                .with_message(message),
        );
        s.enable_steady_tick(TICK);
        s
    })
}

/// Clears `bar` from the terminal and forgets it.
pub fn remove(bar: &ProgressBar) {
    bar.finish_and_clear();
    if let Some(b) = bars() {
        b.remove(bar);
    }
}

/// Writes log lines to stderr, above any bars (which are hidden while it writes).
#[derive(Debug, Clone, Copy, Default)]
pub struct LogWriter;

impl Write for LogWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match bars() {
            Some(b) => b.suspend(|| std::io::stderr().write(buf)),
            None => std::io::stderr().write(buf),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        match bars() {
            Some(b) => b.suspend(|| std::io::stderr().write_all(buf)),
            None => std::io::stderr().write_all(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}
