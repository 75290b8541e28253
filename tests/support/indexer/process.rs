//! Processes of the `tokenql` binary in black-box suites: a fresh database they can reach by
//! URL, the binary pinned for the whole run, and the command line they run with.

use std::fs::OpenOptions;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};

use sea_orm::ConnectionTrait;

use super::super::common::Backend;

/// A fresh database for processes of the binary (which need its URL), dropped by
/// [`FreshDb::drop_db`]: `common`'s approach (a uniquely named database per run).
pub struct FreshDb {
    pub url: String,
    pub backend: Backend,
    pub name: String,
    /// PostgreSQL, MySQL: the server's admin URL.
    admin_url: Option<String>,
    /// SQLite: the file.
    path: Option<PathBuf>,
}

impl FreshDb {
    pub async fn create(backend: Backend) -> FreshDb {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let secs = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        let mut r = [0u8; 4];
        getrandom::fill(&mut r).expect("no randomness for a test database name");
        let r: String = r.iter().map(|b| format!("{b:02x}")).collect();
        let count = COUNTER.fetch_add(1, Ordering::Relaxed);
        let name = format!("tq_test_{secs}_{}_{count}_{r}", std::process::id());
        let (var, example) = match backend {
            Backend::Sqlite => {
                let path = std::env::temp_dir().join(format!("{name}.db"));
                let url = format!("sqlite://{}?mode=rwc", path.display());
                return FreshDb {
                    url,
                    backend,
                    name,
                    admin_url: None,
                    path: Some(path),
                };
            }
            Backend::Postgres => (
                "TOKENQL_TEST_POSTGRES_URL",
                "postgres://postgres@127.0.0.1:5432",
            ),
            Backend::Mysql => ("TOKENQL_TEST_MYSQL_URL", "mysql://root@127.0.0.1:3306"),
        };
        let url = std::env::var(var)
            .ok()
            .filter(|v| !v.trim().is_empty())
            .unwrap_or_else(|| {
                panic!("{var} is not set: the {backend:?} tests need a server URL such as {example} (see tests/support/common/mod.rs)")
            });
        let (url, query) = match url.trim().split_once('?') {
            Some((u, q)) => (u.to_string(), format!("?{q}")),
            None => (url.trim().to_string(), String::new()),
        };
        let after_scheme = url.find("://").map_or(0, |i| i + 3);
        let server = match url[after_scheme..].find('/') {
            Some(i) => &url[..after_scheme + i],
            None => &url,
        };
        // On loopback, TLS adds nothing to what is tested here and, with a debug build's
        // unoptimised crypto, costs about half of PostgreSQL's ingest time.
        let query = match backend {
            Backend::Postgres if !query.contains("sslmode") => {
                let sep = if query.is_empty() { '?' } else { '&' };
                format!("{query}{sep}sslmode=disable")
            }
            _ => query,
        };
        let admin_url = match backend {
            Backend::Postgres => format!("{server}/postgres{query}"),
            _ => format!("{server}{query}"),
        };
        let admin = tokenql::store::database::connect(&admin_url, 1)
            .await
            .unwrap_or_else(|e| panic!("cannot connect to {admin_url}: {e}"));
        admin
            .execute_unprepared(&format!("CREATE DATABASE {name}"))
            .await
            .unwrap_or_else(|e| panic!("cannot create database {name}: {e}"));
        let _ = admin.close().await;
        FreshDb {
            url: format!("{server}/{name}{query}"),
            backend,
            name,
            admin_url: Some(admin_url),
            path: None,
        }
    }

    pub async fn drop_db(self) {
        if let Some(path) = &self.path {
            for suffix in ["", "-wal", "-shm"] {
                let mut p = path.clone().into_os_string();
                p.push(suffix);
                let _ = std::fs::remove_file(p);
            }
        }
        if let Some(admin_url) = &self.admin_url {
            let admin = tokenql::store::database::connect(admin_url, 1)
                .await
                .unwrap_or_else(|e| panic!("cannot connect to {admin_url}: {e}"));
            let force = if self.backend == Backend::Postgres {
                " WITH (FORCE)"
            } else {
                ""
            };
            admin
                .execute_unprepared(&format!("DROP DATABASE IF EXISTS {}{force}", self.name))
                .await
                .unwrap_or_else(|e| panic!("cannot drop database {}: {e}", self.name));
            let _ = admin.close().await;
        }
    }
}

/// The last 40 lines of a log.
pub fn tail(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(40)..].join("\n")
}

/// The binary under test, pinned: a hard link next to it, so that a build that replaces
/// `target/debug/tokenql` while the test runs (another `cargo` in the same target directory)
/// cannot swap binaries between two lives of one run. Links of finished test processes are
/// removed.
pub fn pinned_binary() -> &'static Path {
    static PINNED: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    PINNED.get_or_init(|| {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if let Some(pid) = name.strip_prefix("tokenql-pinned-") {
                if !Path::new(&format!("/proc/{pid}")).exists() {
                    let _ = std::fs::remove_file(entry.path());
                }
            }
        }
        let original = PathBuf::from(env!("CARGO_BIN_EXE_tokenql"));
        let pinned = dir.join(format!("tokenql-pinned-{}", std::process::id()));
        let _ = std::fs::remove_file(&pinned);
        match std::fs::hard_link(&original, &pinned) {
            Ok(()) => pinned,
            Err(_) => original,
        }
    })
}

/// `tokenql ARGS` on `db_url`, stderr appended to `log`, no `TOKENQL_*` setting inherited.
pub fn tokenql_cmd(db_url: &str, log: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(pinned_binary());
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("TOKENQL_") {
            c.env_remove(k);
        }
    }
    let stderr = OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .expect("log file");
    c.args(args)
        .env("DATABASE_URL", db_url)
        .env("TOKENQL_POLL_INTERVAL_MS", "50")
        .env("RUST_LOG", "info,sqlx=warn,sea_orm=warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::from(stderr));
    c
}
