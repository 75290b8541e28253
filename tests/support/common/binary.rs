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

/// The path of `p` under the repository's `data/` folder.
pub fn data(p: &str) -> String {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("data")
        .join(p)
        .display()
        .to_string()
}

/// `tokenql import` of the bundled mainnet sample (1,205 ERC20 and 147 NFT transfers) with the
/// superchain token list.
pub fn sample_import() -> Vec<String> {
    let mut args: Vec<String> = ["import", "--chain", "eth", "--logs"]
        .map(String::from)
        .into();
    args.push(data("demo-mainnet/logs.jsonl"));
    args.push("--blocks".into());
    args.push(data("demo-mainnet/blocks.jsonl"));
    args.push("--tokenlist".into());
    args.push(data("tokenlists/superchain.tokenlist.json"));
    args
}
