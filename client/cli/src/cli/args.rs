//! The command line as clap parses it: raw arguments, with no judgement
//! beyond what clap checks itself (see `plan.rs` for the rest).

use std::net::SocketAddr;
use std::sync::Arc;

use clap::{Parser, Subcommand, ValueEnum};
use toolenv_domains::taskfile::TaskSet;

pub(crate) use super::filter::{Filter, parse_tasks};
pub(crate) use super::grid_args::{DeliveryArgs, EpisodeArgs, GridArgs, GridPreset};
pub(crate) use super::values::AgentArg;
use toolenv_server::Config;

/// Deterministic simulated tool environments for measuring LLM agent reliability.
#[derive(Debug, Parser)]
#[command(name = "toolenv", version)]
pub(crate) struct Cli {
    /// Server to talk to. Without it, tasks, play, run and mcp start an
    /// embedded server on a loopback port for the command; runs, report and
    /// compare read the local store (--store); host and work need a server.
    #[arg(long, global = true, env = "TOOLENV_URL")]
    pub(crate) url: Option<String>,
    /// How log lines on stderr are written: text for people, or JSON
    /// objects (one per line, with the span and fields) for log pipelines.
    /// RUST_LOG sets the level (info for serve, warn otherwise).
    #[arg(long, global = true, value_enum, default_value = "text", env = "TOOLENV_LOG_FORMAT")]
    pub(crate) log_format: LogFormat,
    /// Bearer token: sent to a --url server; with `serve`, required of every
    /// request but health checks (16 to 1024 printable ASCII characters).
    /// Prefer the environment variable, which `ps` does not show.
    #[arg(long, global = true, env = "TOOLENV_TOKEN", hide_env_values = true)]
    pub(crate) token: Option<String>,
    /// PEM certificate to trust for an https:// --url server: its private
    /// CA, or its own self-signed certificate (trusted as exactly that
    /// certificate); public web roots are trusted anyway.
    #[arg(long, global = true, env = "TOOLENV_CA_CERT")]
    pub(crate) ca_cert: Option<std::path::PathBuf>,
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Serve the environments over gRPC until SIGINT or SIGTERM.
    Serve(ServeArgs),
    /// Check every task's oracle: the reference solution and the solver
    /// pass; doing nothing, seeded random agents and every cheat fail. Runs
    /// in-process, over a suite (--suite), and reports rejects by cause.
    Selfcheck(SelfcheckArgs),
    /// List the runs in the store (or, with --url, the server's): id,
    /// episodes finished of planned, status.
    Runs {
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Print a stored run's report (the paper's Tables 5–9), or its summary
    /// as JSON, or write it as an HTML page with figures (--html, also two
    /// runs side by side); with --url, a run hosted by that server.
    Report {
        /// The run's id, e.g. run-0003.
        #[arg(
            required = false,
            required_unless_present = "chaos_ledger",
            default_value_if("chaos_ledger", clap::builder::ArgPredicate::IsPresent, Some(""))
        )]
        run: String,
        /// Read `toolenv chaos` ledgers instead of a run: fault recovery by
        /// kind (injected, encountered, recovered, extra calls, retried) over
        /// their sessions.
        #[arg(long, value_name = "FILE", num_args = 1.., conflicts_with_all = ["other", "feasible_only"])]
        chaos_ledger: Vec<std::path::PathBuf>,
        /// With --chaos-ledger: how each session ended, as JSON lines
        /// {"session": S, "passed": true|false, "task": T, "agent": A,
        /// "fault_profile": P} (task, agent and, for a session in a ledger,
        /// fault_profile optional); adds the run's report (pass^k by fault
        /// profile and agent, the surface over λ; also as a page with
        /// --html), the sessions of one task, agent and profile being its trials.
        #[arg(long, value_name = "FILE", requires = "chaos_ledger")]
        verdicts: Option<std::path::PathBuf>,
        /// A second run to compare with the first, side by side (needs --html).
        #[arg(requires = "html")]
        other: Option<String>,
        /// Write a machine-readable JSON summary instead of tables.
        #[arg(long, conflicts_with = "html")]
        json: bool,
        #[command(flatten)]
        infra: InfraArgs,
        /// Compute every rate over feasible episodes only (an ideal agent
        /// could have passed them); infeasible ones are still counted and
        /// shown, and each rate's ceiling is shown either way.
        #[arg(long)]
        feasible_only: bool,
        /// Write the report as one self-contained HTML page (inline SVG
        /// figures, no script, nothing fetched) to this file, for one run or
        /// two side by side; reads the store (for a hosted run, pass the
        /// server's --store file instead of --url).
        #[arg(long, value_name = "FILE")]
        html: Option<std::path::PathBuf>,
        /// The store, and what the failed episodes' attribution replays
        /// them with (the tables end with it, as `toolenv attribute RUN`).
        #[command(flatten)]
        replay: ReplayArgs,
    },
    /// Write a stored run's episodes to stdout as JSON lines: one object per
    /// episode with its plan entry, result and trajectory, or (--format
    /// otlp-json) one OpenTelemetry trace per episode with the GenAI
    /// semantic conventions' spans, as OTLP/JSON (an
    /// ExportTraceServiceRequest a line).
    Export {
        /// The run's id, e.g. run-0003.
        run: String,
        /// What each line is.
        #[arg(long, value_enum, default_value = "jsonl")]
        format: ExportFormat,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Write a static results site of stored runs into a directory: a
    /// leaderboard per suite, generator version and k, each run's report page,
    /// and comparisons; open DIR/index.html.
    Site(SiteArgs),
    /// Copy every run of a store (--store, a SQLite file) into a PostgreSQL
    /// store, as new runs there (their ids are printed old → new), so that
    /// replicas (`toolenv serve --store postgres://…`) and reports read them.
    CopyStore {
        /// The PostgreSQL store to copy into: postgres://user:password@host:port/db.
        #[arg(long, value_name = "URL")]
        to: String,
        #[command(flatten)]
        store: StoreArgs,
    },
    #[command(flatten)]
    Client(ClientCommand),
    /// Serve an episode, or a hosted run's episodes, to an MCP client over
    /// stdio or streamable HTTP.
    Mcp(McpArgs),
    /// Run any MCP server (the command after `--`, or its streamable-HTTP
    /// URL) behind a proxy that injects seeded faults into its tool calls,
    /// served over stdio (or streamable HTTP with --listen).
    Chaos(super::chaos::ChaosArgs),
    /// An MCP server at a streamable-HTTP URL as a stdio server: what
    /// `toolenv chaos -- URL` runs as its upstream.
    #[command(hide = true)]
    ChaosConnect {
        /// The server's URL, e.g. http://127.0.0.1:8000/mcp.
        url: String,
    },
    /// Play your own agent k times per fault profile against an MCP server
    /// through the chaos proxy, judge each session with your checker, and
    /// report pass^k by fault profile.
    ChaosRun(super::chaos::ChaosRunArgs),
    /// Compare two agents on the same tasks: paired tests over tasks (exact
    /// McNemar on pass^k, a sign-flip permutation test on pass^1), overall,
    /// per cell (ε, fault profile) and per domain, each difference with a 95%
    /// interval and a Holm-adjusted p-value. Two runs of one agent each, two
    /// runs with --agents, or two agents of one run with --agents A,B.
    Compare(CompareArgs),
    /// Attribute a stored run's failed episodes by counterfactual replay:
    /// each trajectory is replayed (every call checked against its record)
    /// and forked backwards until the solver can still pass from the fork;
    /// prints the decisive step, the responsible agent (or the environment)
    /// and the error types of each, then the attribution table.
    Attribute {
        /// The run's id, e.g. run-0003.
        run: String,
        /// Print one JSON object per failed episode instead of text.
        #[arg(long)]
        json: bool,
        /// Also write the failed episodes in Who&When's JSON shape (one
        /// array) to this file.
        #[arg(long, value_name = "PATH")]
        who_when: Option<std::path::PathBuf>,
        /// Also write VerifyMAS training hypotheses (one per failed episode
        /// and MAST failure mode, labelled entail/neutral/contradict) as JSON
        /// lines to this file.
        #[arg(long, value_name = "PATH")]
        hypotheses: Option<std::path::PathBuf>,
        #[command(flatten)]
        replay: ReplayArgs,
    },
    /// Score another attribution method's predictions (JSON lines:
    /// plan_index, mistake_agent, mistake_step, errors [{agent, error}])
    /// against a stored run's counterfactual ground truth: agent-, step-
    /// (exact and ±k) and error-level accuracy, and pair/agent/error micro-
    /// and macro-F1 as VerifyMAS reports them.
    ScoreAttribution {
        /// The predictions file (JSON lines).
        predictions: std::path::PathBuf,
        /// The run the predictions are about.
        #[arg(long)]
        run: String,
        /// The step tolerance of the ±k step accuracy.
        #[arg(long, default_value_t = 1)]
        k: u32,
        /// Compare errors as toolenv's finer types instead of MAST modes (FM-1.1 …).
        #[arg(long)]
        toolenv_types: bool,
        /// Print the scores as JSON.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        replay: ReplayArgs,
    },
}

#[derive(Debug, Clone, clap::Args)]
pub(crate) struct CompareArgs {
    /// Run A's id, e.g. run-0003.
    pub(crate) run_a: String,
    /// Run B's id; leave it out to compare two agents of run A (--agents A,B).
    pub(crate) run_b: Option<String>,
    /// The agents to compare: A's label and B's (comma-separated), or one
    /// label for both runs; needed when a run has several agents.
    #[arg(long, value_delimiter = ',', num_args = 1..=2, value_name = "A,B")]
    pub(crate) agents: Vec<String>,
    /// Write the comparison as JSON instead of tables.
    #[arg(long)]
    pub(crate) json: bool,
    #[command(flatten)]
    pub(crate) infra: InfraArgs,
    #[command(flatten)]
    pub(crate) store: StoreArgs,
}

/// How infrastructure errors count (`report`, `compare`).
#[derive(Debug, Clone, Copy, clap::Args)]
pub(crate) struct InfraArgs {
    /// Leave infrastructure errors out of every rate (they are not trials,
    /// and are still counted and shown); by default they count as failed trials.
    #[arg(long)]
    pub(crate) exclude_infra_errors: bool,
}

impl InfraArgs {
    /// The convention the flag asks for.
    pub(crate) fn convention(self) -> toolenv_runs::metrics::InfraConvention {
        toolenv_runs::metrics::InfraConvention::excluding(self.exclude_infra_errors)
    }
}

/// The stored run a replay reads, and the call limit it replays under
/// (`attribute`, `score-attribution`).
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct ReplayArgs {
    /// The call limit the run's episodes had (the server's --max-calls).
    #[arg(long, default_value_t = toolenv_core::DEFAULT_MAX_CALLS)]
    pub(crate) max_calls: u32,
    /// Task files (or folders) the run's tasks come from: a replay needs
    /// each episode's task (repeatable).
    #[arg(long, value_name = "FILE|DIR", value_parser = parse_tasks)]
    pub(crate) tasks: Vec<Arc<TaskSet>>,
    #[command(flatten)]
    pub(crate) store: StoreArgs,
}

#[derive(Debug, Clone, clap::Args)]
pub(crate) struct StoreArgs {
    /// Where runs are stored: a SQLite file, or a PostgreSQL database
    /// shared by replicas (postgres://user:password@host:port/db).
    #[arg(long, value_name = "PATH|URL", default_value = toolenv_store::DEFAULT_PATH, env = "TOOLENV_STORE")]
    pub(crate) store: std::path::PathBuf,
}

#[derive(Debug, Clone, clap::Args)]
pub(crate) struct RunStoreArgs {
    #[command(flatten)]
    pub(crate) store: StoreArgs,
    /// Do not store the run.
    #[arg(long, conflicts_with = "resume")]
    pub(crate) no_store: bool,
    /// Continue a stored run: play its episodes that have no verdict yet (never
    /// played, or ended in an infrastructure error), then print the results of
    /// all its episodes as the run prints them. The plan is the stored one;
    /// only --concurrency and --json apply.
    #[arg(
        long,
        value_name = "RUN",
        conflicts_with_all = ["suite", "domain", "level", "agents", "epsilons", "faults", "trials", "grid", "seed", "seeds", "in_band", "time_scale"]
    )]
    pub(crate) resume: Option<String>,
}

/// Commands that talk gRPC, to --url or to an embedded server.
#[derive(Debug, Subcommand)]
pub(crate) enum ClientCommand {
    /// List the suite's tasks, or show one with its tools' schemas.
    Tasks {
        #[command(subcommand)]
        command: Option<TasksCommand>,
        #[command(flatten)]
        filter: Filter,
    },
    /// Play one episode with a built-in agent; print its trajectory and verdict.
    Play {
        /// The task id, e.g. travel/cheapest-flight/001.
        task_id: String,
        #[command(flatten)]
        play: PlayArgs,
        /// Print the trajectory as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Host a run on the server (--url) for agent workers in any language:
    /// plan the grid, print the run's id, then follow it until every episode
    /// has a verdict and print its report. Workers lease episodes with
    /// Runs.NextEpisode (see examples/python/worker.py, or `toolenv work`).
    Host(HostArgs),
    /// Work on a run hosted by the server (--url): lease its episodes, play
    /// each with a built-in agent and finish it, until none is left.
    Work {
        /// The run's id, e.g. run-0003.
        run: String,
        /// The agent to play with; the help lists them (`help::command`).
        #[arg(long, default_value = "reference", value_parser = super::llm::parse_agent_spec)]
        agent: super::llm::AgentSpec,
        /// Play the episodes planned for this label (default: the agent's name).
        #[arg(long)]
        label: Option<String>,
        /// Workers in this process, each leasing its own episodes.
        #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=256))]
        workers: u32,
        /// Real milliseconds the agent waits before each call, as a model's
        /// latency would (load tests; slow but live workers).
        #[arg(long, value_name = "MS", default_value_t = 0, value_parser = clap::value_parser!(u64).range(0..=600_000))]
        think_ms: u64,
        /// Task files (or folders) the run's tasks come from, which a built-in
        /// agent needs here too (repeatable).
        #[arg(long, value_name = "FILE|DIR", value_parser = parse_tasks)]
        tasks: Vec<Arc<TaskSet>>,
        #[command(flatten)]
        llm: Box<super::llm::LlmArgs>,
        #[command(flatten)]
        user: super::llm::UserArgs,
    },
    /// Play the suite with built-in agents, over a grid of ε, fault profiles
    /// and trials, and print a verdict table (one configuration) or the
    /// paper-shaped report (a grid). Each finished episode is stored at once
    /// (--store, toolenv.db by default), so a killed run loses only the
    /// episodes in flight and `--resume RUN` continues it.
    Run(RunArgs),
}

#[derive(Debug, Clone, clap::Args)]
pub(crate) struct HostArgs {
    #[command(flatten)]
    pub(crate) filter: Filter,
    #[command(flatten)]
    pub(crate) grid: GridArgs,
    /// Labels of the agents that will play the run, one per agent
    /// (comma-separated); workers ask for episodes by label.
    #[arg(long = "label", value_delimiter = ',', required = true)]
    pub(crate) labels: Vec<String>,
    /// What the run is for, shown in listings.
    #[arg(long, default_value = "")]
    pub(crate) description: String,
    /// Seconds a leased episode may go without a call before it is
    /// handed to another worker.
    #[arg(long, default_value_t = toolenv_server::DEFAULT_LEASE_TIMEOUT.as_secs(), value_parser = clap::value_parser!(u64).range(1..=604_800))]
    pub(crate) lease_timeout_secs: u64,
    /// Print the run's id and return at once, without following it.
    #[arg(long)]
    pub(crate) no_wait: bool,
    /// Roles every planned episode declares (comma-separated, e.g.
    /// planner,executor), each with its standard prompt: a multi-agent run,
    /// whose workers ask for episodes by role and join them.
    #[arg(long, value_delimiter = ',')]
    pub(crate) roles: Vec<String>,
}

#[derive(Debug, Clone, clap::Args)]
pub(crate) struct RunArgs {
    /// Agents to compare (comma-separated); the help lists them (`help::command`).
    #[arg(long = "agent", value_delimiter = ',', default_value = "reference", value_parser = super::llm::parse_agent_spec)]
    pub(crate) agents: Vec<super::llm::AgentSpec>,
    /// Episodes played at once.
    #[arg(long, default_value_t = 16)]
    pub(crate) concurrency: usize,
    #[command(flatten)]
    pub(crate) filter: Filter,
    #[command(flatten)]
    pub(crate) grid: GridArgs,
    #[command(flatten)]
    pub(crate) store: RunStoreArgs,
    /// Print one JSON object per episode instead of tables.
    #[arg(long)]
    pub(crate) json: bool,
    /// Send each episode's trace, as it ends, to this OpenTelemetry
    /// collector (OTLP/HTTP JSON, a POST to URL/v1/traces).
    #[arg(long, value_name = "URL")]
    pub(crate) otlp_endpoint: Option<String>,
    #[command(flatten)]
    pub(crate) llm: Box<super::llm::LlmArgs>,
    #[command(flatten)]
    pub(crate) user: super::llm::UserArgs,
    #[command(flatten)]
    pub(crate) judge: super::llm::JudgeArgs,
}

#[derive(Debug, Subcommand)]
pub(crate) enum TasksCommand {
    /// List tasks (the default).
    List,
    /// Show one task: description, today, initial state and tool schemas.
    Show {
        /// The task id.
        task_id: String,
    },
    /// Write the suite's tasks as a task file (JSON, version 1) to stdout:
    /// a start for tasks of one's own (see examples/tasks/).
    Export {
        #[command(flatten)]
        filter: Filter,
    },
}

#[derive(Debug, clap::Args)]
pub(crate) struct ServeArgs {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:50051")]
    pub(crate) addr: SocketAddr,
    /// Most episodes held at once.
    #[arg(long, default_value_t = Config::default().max_episodes)]
    pub(crate) max_episodes: usize,
    /// Most tool calls per episode.
    #[arg(long, default_value_t = Config::default().max_calls_per_episode)]
    pub(crate) max_calls: u32,
    /// Most bytes of argument JSON per call.
    #[arg(long, default_value_t = Config::default().max_argument_bytes)]
    pub(crate) max_argument_bytes: usize,
    /// Seconds after which an untouched episode is dropped.
    #[arg(long, default_value_t = Config::default().episode_idle_timeout.as_secs())]
    pub(crate) idle_timeout_secs: u64,
    /// With a PostgreSQL --store (replicas): when live episodes' calls are
    /// logged. `call`: each one before its reply, so an episode outlives its
    /// replica and continues on another. `finish`: an episode's first call
    /// and its finish only (two commits an episode, for RL rollouts and
    /// scripted agents); an episode whose replica is lost mid-play is lost
    /// with it (DATA_LOSS, an infrastructure error: a worker drops it and
    /// its lease expires, so it is played again).
    #[arg(long, value_enum, default_value = "call")]
    pub(crate) durability: DurabilityArg,
    /// With a PostgreSQL --store (replicas): seconds the log of an
    /// unfinished episode may go without a call before it is dropped (every
    /// replica then answers NOT_FOUND for it, as one process does past
    /// --idle-timeout-secs). At least --idle-timeout-secs: replicas drop
    /// idle copies from memory then and rebuild them from the log.
    #[arg(long, default_value_t = Config::default().abandoned_after.as_secs())]
    pub(crate) abandoned_after_secs: u64,
    /// Real milliseconds per simulated millisecond of fault delays (0: never
    /// sleep), unless an episode asks for another.
    #[arg(long, default_value_t = Config::default().time_scale)]
    pub(crate) time_scale: f64,
    /// A JSON file of named fault profiles: {"name": {"failure_rate": 0.1,
    /// "fault_weights": {"TransientTimeout": 1.0}, "params": {...}}}.
    #[arg(long)]
    pub(crate) fault_profiles: Option<std::path::PathBuf>,
    /// A JSON file of alternative descriptions per task, used at ε ≥ 0.2:
    /// {"task id": ["description", ...]}; every slot value must appear.
    #[arg(long)]
    pub(crate) paraphrases: Option<std::path::PathBuf>,
    /// Task files (or folders) whose tasks the server offers besides the
    /// built-in ones (`ListTasks` with suite `file:<hash>`, `CreateRun`,
    /// `CreateEpisode` by id); each validated first (repeatable).
    #[arg(long, value_name = "FILE|DIR", value_parser = parse_tasks)]
    pub(crate) tasks: Vec<Arc<TaskSet>>,
    /// Where hosted runs are kept (see `toolenv host`).
    #[command(flatten)]
    pub(crate) store: StoreArgs,
    /// Keep hosted runs in memory only: they are lost when the server stops.
    #[arg(long)]
    pub(crate) no_store: bool,
    /// Send the trace of each episode workers record in the store, as it is
    /// recorded, to this OpenTelemetry collector (OTLP/HTTP JSON, URL/v1/traces).
    #[arg(long, value_name = "URL", conflicts_with = "no_store")]
    pub(crate) otlp_endpoint: Option<String>,
    /// Serve TLS with this PEM certificate chain (with --tls-key).
    #[arg(long, requires = "tls_key")]
    pub(crate) tls_cert: Option<std::path::PathBuf>,
    /// The PEM private key of --tls-cert.
    #[arg(long, requires = "tls_cert")]
    pub(crate) tls_key: Option<std::path::PathBuf>,
    /// Serve Prometheus metrics over HTTP at http://ADDR/metrics: live
    /// episodes, tool calls by tool, outcome and fault kind, call latency,
    /// hosted runs' progress. Off by default (no metrics are kept).
    #[arg(long, value_name = "ADDR")]
    pub(crate) metrics_addr: Option<SocketAddr>,
    #[command(flatten)]
    pub(crate) judge: super::llm::JudgeArgs,
}

/// `serve --durability`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum DurabilityArg {
    Call,
    Finish,
}

impl From<DurabilityArg> for toolenv_server::Durability {
    fn from(arg: DurabilityArg) -> Self {
        match arg {
            DurabilityArg::Call => toolenv_server::Durability::Call,
            DurabilityArg::Finish => toolenv_server::Durability::Finish,
        }
    }
}

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

#[derive(Debug, Clone, clap::Args)]
pub(crate) struct SelfcheckArgs {
    #[command(flatten)]
    pub(crate) filter: Filter,
    /// Random-agent episodes per task (the paper suite's default is 20; a
    /// generated suite's is 4, to check thousands of tasks quickly).
    #[arg(long, value_parser = clap::value_parser!(u64).range(0..=1000))]
    pub(crate) random_seeds: Option<u64>,
    /// Print a row per task (the default for the paper suite only).
    #[arg(long)]
    pub(crate) verbose: bool,
    /// With --answer-judge llm: measure the judge on this many answers of
    /// the prose corpus (spread over answer kinds, right and wrong), beside
    /// the rule-based reader on the same answers.
    #[arg(long, default_value_t = 80, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub(crate) judge_sample: u64,
    #[command(flatten)]
    pub(crate) judge: super::llm::JudgeArgs,
}

#[derive(Debug, Clone, clap::Args)]
pub(crate) struct PlayArgs {
    /// The built-in agent to play with.
    #[arg(long, value_enum, default_value = "reference")]
    pub(crate) agent: AgentArg,
    /// A task file (or folder) to load first: the task id may be one of its
    /// tasks', with or without its `@hash`.
    #[arg(long, value_name = "FILE|DIR", value_parser = parse_tasks)]
    pub(crate) tasks: Option<Arc<TaskSet>>,
    #[command(flatten)]
    pub(crate) episode: EpisodeArgs,
    #[command(flatten)]
    pub(crate) user: super::llm::UserArgs,
    #[command(flatten)]
    pub(crate) llm: Box<super::llm::LlmArgs>,
}

/// Serve one episode, or a hosted run's episodes one after another, to an
/// MCP client (Claude, Cursor, agent SDKs) over stdio, or over streamable
/// HTTP with --http. The episode's tools are MCP tools with their JSON
/// schemas unchanged, the task description is the server's instructions and
/// the prompt "task", faults come back as tool errors (isError) or in-band
/// text as --in-band says, and the tool "finish" ends the episode and
/// returns the verdict. Every call goes to the gRPC server (--url, or an
/// embedded one), which records the trajectory as for any other client.
#[derive(Debug, Clone, clap::Args)]
#[command(group = clap::ArgGroup::new("what").required(true).args(["task_id", "run"]))]
pub(crate) struct McpArgs {
    /// The task of the episode to serve, e.g. travel/cheapest-flight/001.
    pub(crate) task_id: Option<String>,
    /// Serve a run hosted by the server at --url instead: lease its next
    /// episode, and the next one after each finish, until none is left.
    #[arg(long, value_name = "RUN", conflicts_with_all = ["seed", "trial", "epsilon", "faults", "only", "in_band", "time_scale", "mas_faults"])]
    pub(crate) run: Option<String>,
    /// With --run: play the episodes planned for this agent label (default: any).
    #[arg(long, requires = "run", default_value = "")]
    pub(crate) label: String,
    /// Serve streamable HTTP on this loopback address (e.g. 127.0.0.1:8000;
    /// port 0 picks one) at the path /mcp, instead of stdio. The endpoint's
    /// URL is printed on stdout.
    #[arg(long, value_name = "ADDR")]
    pub(crate) http: Option<SocketAddr>,
    #[command(flatten)]
    pub(crate) episode: EpisodeArgs,
}

/// `toolenv site`'s arguments.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct SiteArgs {
    /// The runs to show, e.g. run-0001 run-0002 (every run of the store when none is given).
    pub(crate) runs: Vec<String>,
    /// The directory to write the site into (created; its pages are replaced).
    #[arg(long, value_name = "DIR")]
    pub(crate) out: std::path::PathBuf,
    #[command(flatten)]
    pub(crate) infra: InfraArgs,
    #[command(flatten)]
    pub(crate) store: StoreArgs,
}

/// What `toolenv export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ExportFormat {
    /// One object per episode: plan entry, result, trajectory.
    Jsonl,
    /// One OTLP/JSON ExportTraceServiceRequest per episode.
    OtlpJson,
}
