//! The `tokenql` binary built for these tests, run on a database (the CLI suite,
//! `tests/api/cli.rs`, uses it and nothing else of the harness).

pub const BIN: &str = env!("CARGO_BIN_EXE_tokenql");

/// Runs the binary on `url` with `args`: (success, stdout, stderr).
pub fn tokenql(url: &str, args: &[&str]) -> (bool, String, String) {
    let out = std::process::Command::new(BIN)
        .args(args)
        .env("DATABASE_URL", url)
        .env("RUST_LOG", "warn")
        .output()
        .expect("run tokenql");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}
