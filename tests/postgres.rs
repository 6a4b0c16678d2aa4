//! A real PostgreSQL for the tests: a fresh cluster made by `initdb` in a
//! temporary directory, listening on a loopback port, with a password
//! (SCRAM), stopped when dropped. Debian's `postgresql` package provides the
//! binaries (under /usr/lib/postgresql/*/bin); a test never installs it:
//! `.ci/run` does, and sets `TOOLENV_REQUIRE_POSTGRES=1` so that a missing
//! PostgreSQL fails there instead of skipping. PostgreSQL refuses to run as
//! root, so as root the cluster runs as the `postgres` user (`runuser`).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The password of the `toolenv` superuser of every test cluster.
pub const PASSWORD: &str = "toolenv-test-password";

/// A running test cluster.
#[derive(Debug)]
pub struct TempPostgres {
    bin: PathBuf,
    dir: tempfile::TempDir,
    port: u16,
    /// Holds the port while the server is down too (see [`crate::held_port`]).
    _held: socket2::Socket,
    child: Option<Child>,
    as_postgres: bool,
}

/// The directory of PostgreSQL's server binaries.
fn binaries() -> Result<PathBuf, String> {
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path().join("bin"))
        .filter(|bin| bin.join("initdb").is_file() && bin.join("postgres").is_file())
        .collect();
    found.sort();
    found.pop().ok_or_else(|| "PostgreSQL is not installed (apt-get install postgresql; .ci/run installs it)".into())
}

fn is_root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|out| out.stdout.starts_with(b"0\n"))
}

impl TempPostgres {
    /// Starts a fresh cluster, or says on stderr why PostgreSQL cannot be had
    /// here and returns `None` (the caller skips).
    pub fn start() -> Option<TempPostgres> {
        let bin = match binaries() {
            Ok(bin) => bin,
            Err(why) => {
                crate::skipped_unless_required("TOOLENV_REQUIRE_POSTGRES", &format!("no PostgreSQL for this test: {why}"));
                return None;
            }
        };
        let as_postgres = is_root();
        let dir = tempfile::Builder::new().prefix("toolenv-pg").tempdir().expect("a temporary directory");
        if as_postgres {
            let status = Command::new("chown").args(["-R", "postgres:postgres"]).arg(dir.path()).status().expect("chown");
            assert!(status.success(), "chown of the cluster's directory failed");
        }
        std::fs::write(dir.path().join("pwfile"), PASSWORD).expect("the password file");
        let (held, addr) = crate::held_port();
        let mut cluster = TempPostgres { bin, dir, port: addr.port(), _held: held, child: None, as_postgres };
        if as_postgres {
            let _ = Command::new("chown").args(["postgres:postgres"]).arg(cluster.dir.path().join("pwfile")).status();
        }
        let data = cluster.data();
        let initdb = cluster
            .command("initdb")
            .args(["-U", "toolenv", "--auth=scram-sha-256", "--no-sync", "-E", "UTF8", "--locale=C.UTF-8"])
            .arg(format!("--pwfile={}", cluster.dir.path().join("pwfile").display()))
            .arg("-D")
            .arg(&data)
            .stdout(Stdio::null())
            .output()
            .expect("initdb runs");
        assert!(initdb.status.success(), "initdb failed: {}", String::from_utf8_lossy(&initdb.stderr));
        cluster.launch();
        Some(cluster)
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// A command for one of the server binaries, as the cluster's owner.
    fn command(&self, name: &str) -> Command {
        let program = self.bin.join(name);
        if self.as_postgres {
            let mut command = Command::new("runuser");
            command.args(["-u", "postgres", "--"]).arg(program);
            command
        } else {
            Command::new(program)
        }
    }

    /// Starts the server on the cluster and waits until it accepts connections.
    fn launch(&mut self) {
        let log = std::fs::File::create(self.dir.path().join("postgres.log")).expect("the server's log");
        let child = self
            .command("postgres")
            .arg("-D")
            .arg(self.data())
            .args(["-p", &self.port.to_string(), "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "max_connections=200"])
            .arg("-k")
            .arg(self.dir.path())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("postgres starts");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let ready = Command::new(self.bin.join("pg_isready"))
                .args(["-q", "-h", "127.0.0.1", "-p", &self.port.to_string()])
                .status()
                .is_ok_and(|s| s.success());
            if ready {
                return;
            }
            // Exited, or too slow.
            let exited = self.child.as_mut().is_some_and(|child| child.try_wait().is_ok_and(|status| status.is_some()));
            if exited || Instant::now() >= deadline {
                if let Some(mut child) = self.child.take() {
                    let _ = child.kill();
                    let _ = child.wait();
                }
                panic!("PostgreSQL did not start: {}", self.log());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The server's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("postgres.log")).unwrap_or_default()
    }

    /// The loopback port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The URL of database `name` as the `toolenv` superuser.
    pub fn url(&self, name: &str) -> String {
        format!("postgres://toolenv:{PASSWORD}@127.0.0.1:{}/{name}", self.port)
    }

    /// Creates an empty database and returns its URL.
    pub fn database(&self, name: &str) -> String {
        self.psql("postgres", &format!("CREATE DATABASE \"{name}\""));
        self.url(name)
    }

    /// Runs SQL in database `name` with psql and returns its output (unaligned, no headers).
    pub fn psql(&self, name: &str, sql: &str) -> String {
        let out = self.psql_command(name).args(["-c", sql]).output().expect("psql runs");
        assert!(out.status.success(), "psql {sql:?} failed: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    /// Locks `table` of database `name` in `mode` (`ACCESS EXCLUSIVE`,
    /// say) from a psql session of its own, in a transaction held until
    /// [`Locked::release`]; returns once the lock is granted.
    pub fn lock(&self, name: &str, table: &str, mode: &str) -> Locked {
        use std::io::Write as _;
        let mut session = self.psql_command(name).stdin(Stdio::piped()).stdout(Stdio::null()).spawn().expect("psql runs");
        let mut sql = session.stdin.take().expect("psql's stdin");
        writeln!(sql, "BEGIN; LOCK TABLE {table} IN {mode} MODE;").expect("psql reads");
        // pg_locks names the mode as, for ACCESS EXCLUSIVE, AccessExclusiveLock.
        let named: String = mode.split_whitespace().map(|word| word[..1].to_owned() + &word[1..].to_lowercase()).collect();
        let granted = format!("SELECT COUNT(*) FROM pg_locks WHERE relation = '{table}'::regclass AND granted AND mode = '{named}Lock'");
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.psql(name, &granted) != "1" {
            assert!(Instant::now() < deadline, "{table} was never locked in {mode} mode");
            std::thread::sleep(Duration::from_millis(20));
        }
        Locked { session, sql }
    }

    fn psql_command(&self, name: &str) -> Command {
        let mut command = Command::new(self.bin.join("psql"));
        command
            .args([
                "-X",
                "-q",
                "-A",
                "-t",
                "-v",
                "ON_ERROR_STOP=1",
                "-h",
                "127.0.0.1",
                "-p",
                &self.port.to_string(),
                "-U",
                "toolenv",
                "-d",
                name,
            ])
            .env("PGPASSWORD", PASSWORD);
        command
    }

    /// Stops the server (fast shutdown: clients are disconnected).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = self.command("pg_ctl").arg("stop").arg("-D").arg(self.data()).args(["-m", "fast", "-w"]).stdout(Stdio::null()).status();
            let _ = child.wait();
        }
    }

    /// Stops and starts the server again on the same port and data.
    pub fn restart(&mut self) {
        self.stop();
        self.launch();
    }

    /// The cluster's directory.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }
}

/// A table locked by a psql session of its own ([`TempPostgres::lock`]).
#[derive(Debug)]
pub struct Locked {
    session: Child,
    sql: std::process::ChildStdin,
}

impl Locked {
    /// Ends the session's transaction, and with it the lock.
    pub fn release(self) {
        use std::io::Write as _;
        let Locked { mut session, mut sql } = self;
        writeln!(sql, "ROLLBACK;").expect("psql reads");
        drop(sql);
        session.wait().expect("psql ends");
    }
}

impl Drop for TempPostgres {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = self
                .command("pg_ctl")
                .arg("stop")
                .arg("-D")
                .arg(self.data())
                .args(["-m", "immediate", "-w"])
                .stdout(Stdio::null())
                .status();
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
