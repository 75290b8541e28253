//! Two real PostgreSQL servers in streaming replication, on free ports, for one test: a primary
//! made by `initdb` and a hot standby made from it by `pg_basebackup -R`. The server programs
//! are Debian's (`/usr/lib/postgresql/<version>/bin`, or `$TOKENQL_PG_BIN`) and run as the
//! `postgres` user (through `runuser` when the test runs as root). Everything lives in one
//! temporary directory, removed with the servers when the [`Cluster`] is dropped.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use std::time::{Duration, Instant};

/// The directory of PostgreSQL's server programs.
fn bin_dir() -> PathBuf {
    if let Ok(dir) = std::env::var("TOKENQL_PG_BIN") {
        return PathBuf::from(dir);
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let v = e.file_name().to_string_lossy().parse::<u32>().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").exists().then_some((v, bin))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, b)| b).expect(
        "PostgreSQL's server programs (initdb, pg_ctl, pg_basebackup) not found under \
         /usr/lib/postgresql: install Debian's postgresql package or set TOKENQL_PG_BIN",
    )
}

/// Whether this process runs as root (and must switch to `postgres`).
fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// `program` (a PostgreSQL server program) to be run as the `postgres` user.
fn postgres_cmd(program: &str) -> Command {
    let path = bin_dir().join(program);
    let mut cmd = if is_root() {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--"]).arg(&path);
        c
    } else {
        Command::new(&path)
    };
    cmd.current_dir("/tmp");
    cmd
}

/// `program args…` as the `postgres` user; panics with its output when it fails.
fn as_postgres(program: &str, args: &[&str]) -> String {
    let out = postgres_cmd(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {program}: {e}"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success(),
        "{program} {args:?} failed ({}):\n{text}",
        out.status
    );
    text
}

/// A free TCP port on 127.0.0.1 (free when asked; the servers bind it right after).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// One server of the pair.
pub struct Server {
    pub data: PathBuf,
    pub port: u16,
    log: PathBuf,
    socket_dir: PathBuf,
}

impl Server {
    /// `postgres://postgres@127.0.0.1:PORT/DB`.
    pub fn url(&self, db: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{db}", self.port)
    }

    /// Starts the server and waits until it accepts connections.
    pub fn start(&self) {
        let opts = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1",
            self.port,
            self.socket_dir.display()
        );
        let data = self.data.display().to_string();
        let log = self.log.display().to_string();
        as_postgres(
            "pg_ctl",
            &[
                "-D", &data, "-l", &log, "-o", &opts, "-w", "-t", "60", "start",
            ],
        );
    }

    /// Stops the server (`fast`: clients are disconnected, no new ones are accepted).
    pub fn stop(&self) {
        let data = self.data.display().to_string();
        as_postgres("pg_ctl", &["-D", &data, "-m", "fast", "-w", "stop"]);
    }

    /// Appends `text` to the server's `postgresql.conf` and has the running server reload it.
    pub fn configure(&self, text: &str) {
        append(&self.data.join("postgresql.conf"), text);
        let data = self.data.display().to_string();
        as_postgres("pg_ctl", &["-D", &data, "reload"]);
    }

    /// Stops the server at once, whatever its state (cleanup).
    fn kill(&self) {
        let data = self.data.display().to_string();
        let _ = postgres_cmd("pg_ctl")
            .args(["-D", &data, "-m", "immediate", "-w", "stop"])
            .output();
    }

    /// The server's log, for failure messages.
    pub fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    }
}

/// A primary and its streaming replica.
pub struct Cluster {
    root: PathBuf,
    pub primary: Server,
    pub replica: Server,
}

impl Cluster {
    /// Creates, configures and starts both servers.
    pub fn start() -> Cluster {
        let root = std::env::temp_dir().join(format!(
            "tq_repl_{}_{}",
            std::process::id(),
            Instant::now().elapsed().as_nanos() ^ u128::from(free_port())
        ));
        std::fs::create_dir_all(&root).expect("create the cluster directory");
        std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o777))
            .expect("open the cluster directory to postgres");
        let server = |name: &str, port: u16| Server {
            data: root.join(name),
            port,
            log: root.join(format!("{name}.log")),
            socket_dir: root.clone(),
        };
        let primary = server("primary", free_port());
        let replica = server("replica", free_port());
        let data = primary.data.display().to_string();
        as_postgres(
            "initdb",
            &["-D", &data, "-U", "postgres", "--auth=trust", "-E", "UTF8"],
        );
        append(
            &primary.data.join("postgresql.conf"),
            "wal_level = replica\nmax_wal_senders = 4\nhot_standby = on\nfsync = off\n\
             shared_buffers = 32MB\nwal_keep_size = 256MB\nmax_connections = 200\n",
        );
        primary.start();
        let port = primary.port.to_string();
        let rdata = replica.data.display().to_string();
        as_postgres(
            "pg_basebackup",
            &[
                "-h",
                "127.0.0.1",
                "-p",
                &port,
                "-U",
                "postgres",
                "-D",
                &rdata,
                "-R",
                "-X",
                "stream",
                "-c",
                "fast",
            ],
        );
        replica.start();
        Cluster {
            root,
            primary,
            replica,
        }
    }

    /// Waits until the replica has replayed everything the primary has written.
    pub async fn wait_replayed(&self, limit: Duration) {
        let p = connect(&self.primary.url("postgres")).await;
        let r = connect(&self.replica.url("postgres")).await;
        let target = scalar(&p, "SELECT pg_current_wal_lsn()::text").await;
        let deadline = Instant::now() + limit;
        loop {
            let sql = format!("SELECT (pg_last_wal_replay_lsn() >= '{target}'::pg_lsn)::text");
            if scalar(&r, &sql).await == "true" {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "the replica did not replay {target} within {limit:?}:\n{}",
                self.replica.log_tail()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.replica.kill();
        self.primary.kill();
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

fn append(path: &Path, text: &str) {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .unwrap_or_else(|e| panic!("open {}: {e}", path.display()));
    f.write_all(text.as_bytes()).expect("append");
}

/// A small pool on `url`.
pub async fn connect(url: &str) -> sea_orm::DatabaseConnection {
    tokenql::store::database::connect(url, 2)
        .await
        .unwrap_or_else(|e| panic!("connect to {url}: {e}"))
}

/// The first column of the first row of `sql`, as text.
pub async fn scalar(db: &sea_orm::DatabaseConnection, sql: &str) -> String {
    use sea_orm::ConnectionTrait;
    let row = db
        .query_one_raw(sea_orm::Statement::from_string(
            sea_orm::DbBackend::Postgres,
            sql,
        ))
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .unwrap_or_else(|| panic!("{sql}: no row"));
    row.try_get_by_index::<Option<String>>(0)
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .unwrap_or_default()
}

/// Runs `sql` (no result).
pub async fn exec(db: &sea_orm::DatabaseConnection, sql: &str) {
    use sea_orm::ConnectionTrait;
    db.execute_unprepared(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
}
