//! The PostgreSQL schema as numbered migrations: a new database gets them
//! all, an older one the ones it lacks, each in the transaction that bumps
//! `schema_version`; a database from a newer build is refused. Replicas that
//! start together take an advisory lock, so one migrates and the others
//! find it done.

use deadpool_postgres::Pool;

use super::client;
use crate::StoreError;

/// The schema this code reads and writes.
pub const PG_SCHEMA_VERSION: i64 = 5;

/// The migrations, in order: `MIGRATIONS[n]` brings version `n` to `n + 1`.
const MIGRATIONS: [&str; PG_SCHEMA_VERSION as usize] = [
    "
CREATE TABLE runs (
    seq         BIGINT  PRIMARY KEY,            -- run-0001 is seq 1
    id          TEXT    NOT NULL UNIQUE,
    description TEXT    NOT NULL,
    planned     BIGINT  NOT NULL,
    sessions    INTEGER NOT NULL DEFAULT 1,
    created_at  TEXT    NOT NULL DEFAULT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'),
    lease_timeout_ms BIGINT                     -- hosted for workers; NULL: played by the CLI
);
CREATE TABLE planned_episodes (
    run_id        TEXT    NOT NULL REFERENCES runs (id),
    plan_index    BIGINT  NOT NULL,
    agent         TEXT    NOT NULL,
    task_id       TEXT    NOT NULL,
    epsilon       DOUBLE PRECISION NOT NULL,
    trial         BIGINT  NOT NULL,
    fault_profile TEXT    NOT NULL,
    lambda        DOUBLE PRECISION,             -- NULL: unknown (NaN)
    request       BYTEA   NOT NULL,             -- toolenv.v1.CreateEpisodeRequest
    PRIMARY KEY (run_id, plan_index)
);
-- At most one row per plan entry (the key); a row with a verdict is never
-- replaced (the writers' upsert only replaces infrastructure errors).
CREATE TABLE episodes (
    run_id               TEXT    NOT NULL,
    plan_index           BIGINT  NOT NULL,
    session              INTEGER NOT NULL,
    passed               BOOLEAN,               -- NULL for an infrastructure error
    infra_error          TEXT,
    replaced_infra_errors INTEGER NOT NULL DEFAULT 0,
    result               TEXT    NOT NULL,      -- metrics::EpisodeResult as JSON
    trajectory           BYTEA,                 -- toolenv.v1.Trajectory
    PRIMARY KEY (run_id, plan_index),
    FOREIGN KEY (run_id, plan_index) REFERENCES planned_episodes (run_id, plan_index),
    CHECK ((passed IS NULL) = (infra_error IS NOT NULL))
);
-- The lease of a hosted run's planned episode: which live episode plays it
-- and when a call last renewed it.
CREATE TABLE leases (
    run_id      TEXT        NOT NULL,
    plan_index  BIGINT      NOT NULL,
    episode_id  TEXT        NOT NULL,
    renewed_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (run_id, plan_index),
    FOREIGN KEY (run_id, plan_index) REFERENCES planned_episodes (run_id, plan_index)
);
CREATE INDEX leases_episode ON leases (episode_id);
-- The durable log of live episodes: how each was created (a trajectory
-- without calls) and every call it accepted, in order. Any replica rebuilds
-- an episode from it by replay.
CREATE TABLE episode_log (
    episode_id  TEXT        PRIMARY KEY,
    header      BYTEA       NOT NULL,           -- toolenv.v1.Trajectory, no calls
    in_band     BOOLEAN     NOT NULL,
    time_scale  DOUBLE PRECISION NOT NULL,
    run_id      TEXT,                           -- a hosted run's episode: its plan entry
    plan_index  BIGINT,
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE TABLE call_log (
    episode_id  TEXT    NOT NULL REFERENCES episode_log (episode_id),
    call_index  INTEGER NOT NULL,
    record      BYTEA   NOT NULL,               -- toolenv.v1.ToolCallRecord
    PRIMARY KEY (episode_id, call_index)
);
",
    "
-- Version 2: a plan entry knows it has a verdict, so that a lease claim
-- reads only the entries still pending (a partial index), not the plan
-- from its start.
ALTER TABLE planned_episodes ADD COLUMN done BOOLEAN NOT NULL DEFAULT false;
UPDATE planned_episodes p SET done = true FROM episodes e
    WHERE e.run_id = p.run_id AND e.plan_index = p.plan_index AND e.infra_error IS NULL;
CREATE INDEX planned_pending ON planned_episodes (run_id, plan_index) WHERE NOT done;
",
    "
-- Version 3: a plan entry holds until when it is leased, so that a claim
-- locks and rechecks one row (FOR UPDATE SKIP LOCKED on the entry itself):
-- two claimers never race for the same entry and retry. `leases` keeps
-- only which episode plays it (renewals find the entry by episode id).
ALTER TABLE planned_episodes ADD COLUMN leased_until TIMESTAMPTZ;
UPDATE planned_episodes p SET leased_until = l.renewed_at + r.lease_timeout_ms * INTERVAL '1 millisecond'
    FROM leases l, runs r
    WHERE l.run_id = p.run_id AND l.plan_index = p.plan_index AND r.id = p.run_id AND r.lease_timeout_ms IS NOT NULL;
ALTER TABLE leases DROP COLUMN renewed_at;
",
    "
-- Version 4: the call log checks no foreign key per call. Its one writer
-- (a replica's log writer) inserts an episode's row before or with its
-- first calls, and the check was a sixth of the database's time per call.
ALTER TABLE call_log DROP CONSTRAINT IF EXISTS call_log_episode_id_fkey;
",
    "
-- Version 5: an episode's finish is in the log, so that every replica
-- answers for it as finished: a row of call_log in the place of its next
-- call (no call goes in after it, and a call racing it is ordered by the
-- key), whose record is the episode's trajectory with its verdict (without
-- its calls) and whose finished_at is set. The log of an episode finished
-- longer ago than the idle timeout is dropped; the index finds them.
ALTER TABLE call_log ADD COLUMN finished_at TIMESTAMPTZ;
CREATE INDEX call_log_finished ON call_log (finished_at) WHERE finished_at IS NOT NULL;
",
];

/// An arbitrary key for `pg_advisory_xact_lock`: migrations run one at a time.
const MIGRATION_LOCK: i64 = 0x0074_6f6f_6c65_6e76;

/// Brings the database to [`PG_SCHEMA_VERSION`], or refuses a newer one.
pub(super) async fn migrate(pool: &Pool, url: &str) -> Result<(), StoreError> {
    let mut client = client(pool, url).await?;
    let pg = client.errors(url);
    let tx = client.transaction().await.map_err(&pg)?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK]).await.map_err(&pg)?;
    tx.batch_execute("CREATE TABLE IF NOT EXISTS schema_version (version BIGINT NOT NULL)").await.map_err(&pg)?;
    let found: Option<i64> = tx.query_opt("SELECT version FROM schema_version", &[]).await.map_err(&pg)?.map(|row| row.get(0));
    let found = match found {
        Some(found) if found > PG_SCHEMA_VERSION => {
            return Err(StoreError::PgSchemaVersion { url: url.to_owned(), found });
        }
        Some(found) => found,
        None => {
            tx.execute("INSERT INTO schema_version (version) VALUES (0)", &[]).await.map_err(&pg)?;
            0
        }
    };
    for (from, migration) in MIGRATIONS.iter().enumerate().skip(usize::try_from(found).unwrap_or(0)) {
        tx.batch_execute(migration).await.map_err(&pg)?;
        tx.execute("UPDATE schema_version SET version = $1", &[&(from as i64 + 1)]).await.map_err(&pg)?;
    }
    tx.commit().await.map_err(&pg)
}
