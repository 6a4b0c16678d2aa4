//! The PostgreSQL backend of the store, for several servers (replicas) that
//! share one database: runs, plans, verdicts and trajectories as in the
//! SQLite file, plus what replicas share at run time: the leases of hosted
//! runs and the durable call log of live episodes (`log`).
//!
//! The client is `tokio-postgres` behind a `deadpool-postgres` pool, on a
//! small runtime of the store's own, so the same store serves a synchronous
//! caller (the CLI, a server's blocking thread: [`PgStore`]'s methods wait)
//! and an asynchronous one ([`PgStore::spawn`] returns a future any runtime
//! can await). Connecting checks the database at once: an unreachable
//! server, a refused password or a schema newer than this build's is one
//! clear [`StoreError::Postgres`] or [`StoreError::SchemaVersion`] when the
//! store is opened, never a hang (connections time out after
//! [`CONNECT_TIMEOUT`]).

mod leases;
mod log;
mod read;
mod schema;
mod write;

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use tokio_postgres::NoTls;

use super::{RunId, StoreError};
pub use leases::Claim;
pub use log::{Appended, LogPosition, LoggedEpisode};
pub use schema::PG_SCHEMA_VERSION;

/// How long opening a connection may take before the store gives up.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Connections a store keeps open at most.
const POOL_SIZE: usize = 16;

/// Whether `location` names a PostgreSQL database rather than a SQLite file.
pub fn is_url(location: &str) -> bool {
    location.starts_with("postgres://") || location.starts_with("postgresql://")
}

/// A PostgreSQL store: a pool of connections to one database.
pub struct PgStore {
    pool: Pool,
    /// The URL without its password, for messages.
    url: String,
    runtime: Option<tokio::runtime::Runtime>,
    handle: tokio::runtime::Handle,
    /// The log writer's queue ([`log::write_log`]).
    log_writer: tokio::sync::mpsc::UnboundedSender<log::Waiting>,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore").field("url", &self.url).finish_non_exhaustive()
    }
}

impl Drop for PgStore {
    fn drop(&mut self) {
        // Dropped from async code too (a server shutting down): never block.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

impl PgStore {
    /// Connects to the database at `url` (`postgres://user:password@host:port/db`),
    /// brings its schema to [`PG_SCHEMA_VERSION`] and returns the store.
    pub fn connect(url: &str) -> Result<PgStore, StoreError> {
        let shown = redact(url);
        let mut config: tokio_postgres::Config =
            url.parse().map_err(|error| StoreError::Postgres { url: shown.clone(), message: format!("not a PostgreSQL URL: {error}") })?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        config.application_name("toolenv");
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("toolenv-store")
            .enable_all()
            .build()
            .map_err(StoreError::Io)?;
        let manager = Manager::from_config(config, NoTls, ManagerConfig { recycling_method: RecyclingMethod::Fast });
        let pool = Pool::builder(manager)
            .max_size(POOL_SIZE)
            .runtime(Runtime::Tokio1)
            .create_timeout(Some(CONNECT_TIMEOUT))
            .recycle_timeout(Some(CONNECT_TIMEOUT))
            .wait_timeout(Some(Duration::from_secs(30)))
            .build()
            .map_err(|error| StoreError::Postgres { url: shown.clone(), message: error.to_string() })?;
        let handle = runtime.handle().clone();
        let (log_writer, waiting) = tokio::sync::mpsc::unbounded_channel();
        handle.spawn(log::write_log(pool.clone(), shown.clone(), waiting));
        let store = PgStore { pool, url: shown, runtime: Some(runtime), handle, log_writer };
        let (pool, url) = (store.pool.clone(), store.url.clone());
        store.block(async move { schema::migrate(&pool, &url).await })?;
        Ok(store)
    }

    /// The database's URL, without its password.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Runs `future` on the store's runtime; the handle resolves to its
    /// output and may be awaited from any runtime.
    pub fn spawn<T: Send + 'static>(&self, future: impl Future<Output = T> + Send + 'static) -> tokio::task::JoinHandle<T> {
        self.handle.spawn(future)
    }

    /// Runs `future` on the store's runtime and waits for it: for
    /// synchronous callers (never call it from async code).
    fn block<T: Send + 'static>(&self, future: impl Future<Output = Result<T, StoreError>> + Send + 'static) -> Result<T, StoreError> {
        let (sender, receiver) = std::sync::mpsc::sync_channel(1);
        self.handle.spawn(async move {
            let _ = sender.send(future.await);
        });
        receiver.recv().map_err(|_| StoreError::Postgres { url: self.url.clone(), message: "the store's runtime stopped".into() })?
    }

    fn unknown(&self, run: &RunId) -> StoreError {
        StoreError::UnknownRun { run: run.0.clone(), path: PathBuf::from(&self.url) }
    }
}

/// A pooled connection, or the error that says why there is none.
async fn client(pool: &Pool, url: &str) -> Result<Conn, StoreError> {
    let object = pool.get().await.map_err(|error| {
        let message = match error {
            deadpool_postgres::PoolError::Backend(error) => describe(&error),
            deadpool_postgres::PoolError::Timeout(_) => format!("no connection within {}s (is the server up?)", CONNECT_TIMEOUT.as_secs()),
            other => other.to_string(),
        };
        StoreError::Postgres { url: url.to_owned(), message }
    })?;
    Ok(Conn { object: Some(object), cut: Arc::new(AtomicBool::new(false)) })
}

/// A pooled connection, given back to the pool when dropped unless a
/// statement on it failed for the connection's sake (cut by the server, or
/// closed): the pool would hand a connection whose end it has not noticed
/// yet to the next caller, a repeat sent at once say, which would fail for
/// nothing. Every statement's error goes through [`Conn::errors`], which
/// notes that.
struct Conn {
    /// `None` only while dropped.
    object: Option<deadpool_postgres::Object>,
    cut: Arc<AtomicBool>,
}

impl Conn {
    /// Maps a statement's error to the store's, naming the database, and
    /// notes one that ended the connection. It borrows nothing of the
    /// connection, so a transaction's statements use it too.
    fn errors<'u>(&self, url: &'u str) -> impl Fn(tokio_postgres::Error) -> StoreError + use<'u> {
        let cut = Arc::clone(&self.cut);
        move |error| {
            // Class 08: connection exception; 57P: the server shut down or ended the connection.
            let code = error.code().map(|code| code.code());
            if error.is_closed() || code.is_some_and(|code| code.starts_with("08") || code.starts_with("57P")) {
                cut.store(true, Ordering::Relaxed);
            }
            StoreError::Postgres { url: url.to_owned(), message: describe(&error) }
        }
    }
}

impl std::ops::Deref for Conn {
    type Target = deadpool_postgres::Object;

    fn deref(&self) -> &Self::Target {
        self.object.as_ref().expect("a connection until dropped")
    }
}

impl std::ops::DerefMut for Conn {
    fn deref_mut(&mut self) -> &mut Self::Target {
        self.object.as_mut().expect("a connection until dropped")
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        if self.cut.load(Ordering::Relaxed)
            && let Some(object) = self.object.take()
        {
            drop(deadpool_postgres::Object::take(object));
        }
    }
}

/// A PostgreSQL error with its cause, as one line.
fn describe(error: &tokio_postgres::Error) -> String {
    if let Some(db) = error.as_db_error() {
        return format!("{}: {}", db.severity(), db.message());
    }
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// `url` with its password (if any) replaced by `***`.
pub fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return url.to_owned() };
    let (authority, tail) = rest.split_once('/').map_or((rest, ""), |(a, t)| (a, t));
    let Some((userinfo, host)) = authority.rsplit_once('@') else { return url.to_owned() };
    let user = userinfo.split_once(':').map_or(userinfo, |(user, _)| user);
    let masked = if userinfo.contains(':') { format!("{user}:***") } else { user.to_owned() };
    let slash = if rest.contains('/') { "/" } else { "" };
    format!("{scheme}://{masked}@{host}{slash}{tail}")
}

/// A plan index or count as PostgreSQL's BIGINT.
fn big(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// A BIGINT read back as an index, or a corrupt row.
fn index(value: i64) -> Result<usize, StoreError> {
    usize::try_from(value).map_err(|_| StoreError::Corrupt(format!("negative index {value}")))
}

#[cfg(test)]
mod tests {
    #[test]
    fn passwords_are_not_shown() {
        assert_eq!(super::redact("postgres://toolenv:secret@127.0.0.1:5432/runs"), "postgres://toolenv:***@127.0.0.1:5432/runs");
        assert_eq!(super::redact("postgres://toolenv@db/runs"), "postgres://toolenv@db/runs");
        assert_eq!(super::redact("postgresql://u:p@h"), "postgresql://u:***@h");
        assert!(super::is_url("postgres://h/db") && super::is_url("postgresql://h") && !super::is_url("toolenv.db"));
    }
}
