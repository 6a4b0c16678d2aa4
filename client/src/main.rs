//! `toolenv`: serve the environments, browse tasks, play episodes with the
//! built-in agents, run the suite, and self-check the oracles.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context as _, bail};
use clap::{Parser, Subcommand, ValueEnum};
use toolenv::pb;
use toolenv_client::metrics::{EpisodeResult, InfraConvention};
use toolenv_client::store::{RunId, Store, StoreError};
use toolenv_client::{Agent, Client, EpisodeOutcome, Grid, PlannedEpisode, play};
use toolenv_domains::Domain;
use toolenv_runs::trials_of;
use toolenv_server::{Config, RunningServer};

/// Deterministic simulated tool environments for measuring LLM agent reliability.
#[derive(Debug, Parser)]
#[command(name = "toolenv", version)]
struct Cli {
    /// Server to talk to; without it, an embedded server is started on a
    /// loopback port for the duration of the command.
    #[arg(long, global = true, env = "TOOLENV_URL")]
    url: Option<String>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve the environments over gRPC until SIGINT or SIGTERM.
    Serve(ServeArgs),
    /// Check every task's oracle: the reference solution passes, doing
    /// nothing fails, a seeded random agent fails. Runs in-process.
    Selfcheck,
    /// List the runs in the store (or, with --url, the server's): id,
    /// episodes finished of planned, status.
    Runs {
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Print a stored run's report (the paper's Tables 5–9), or its summary
    /// as JSON; with --url, a run hosted by that server.
    Report {
        /// The run's id, e.g. run-0003.
        run: String,
        /// Write a machine-readable JSON summary instead of tables.
        #[arg(long)]
        json: bool,
        /// Leave infrastructure errors out of every rate (they are still
        /// counted and shown); by default they count as failed trials.
        #[arg(long)]
        exclude_infra_errors: bool,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Write a stored run's episodes to stdout as JSON lines: one object per
    /// episode with its plan entry, result and trajectory.
    Export {
        /// The run's id, e.g. run-0003.
        run: String,
        #[command(flatten)]
        store: StoreArgs,
    },
    #[command(flatten)]
    Client(ClientCommand),
}

#[derive(Debug, Clone, clap::Args)]
struct StoreArgs {
    /// The SQLite file runs are stored in.
    #[arg(long, value_name = "PATH", default_value = toolenv_client::store::DEFAULT_PATH, env = "TOOLENV_STORE")]
    store: std::path::PathBuf,
}

#[derive(Debug, Clone, clap::Args)]
struct RunStoreArgs {
    #[command(flatten)]
    store: StoreArgs,
    /// Do not store the run.
    #[arg(long, conflicts_with = "resume")]
    no_store: bool,
    /// Continue a stored run: play its episodes that have no verdict yet (never
    /// played, or ended in an infrastructure error), then print the report of
    /// all its episodes. The plan is the stored one; only --concurrency and
    /// --json apply.
    #[arg(
        long,
        value_name = "RUN",
        conflicts_with_all = ["domain", "level", "agents", "epsilons", "faults", "trials", "grid", "seed", "in_band", "time_scale"]
    )]
    resume: Option<String>,
}

/// Commands that talk gRPC, to --url or to an embedded server.
#[derive(Debug, Subcommand)]
enum ClientCommand {
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
        episode: EpisodeArgs,
        /// Print the trajectory as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Host a run on the server (--url) for agent workers in any language:
    /// plan the grid, print the run's id, then follow it until every episode
    /// has a verdict and print its report. Workers lease episodes with
    /// Runs.NextEpisode (see examples/python/worker.py, or `toolenv work`).
    Host {
        #[command(flatten)]
        filter: Filter,
        #[command(flatten)]
        grid: GridArgs,
        /// Labels of the agents that will play the run, one per agent
        /// (comma-separated); workers ask for episodes by label.
        #[arg(long = "label", value_delimiter = ',', required = true)]
        labels: Vec<String>,
        /// What the run is for, shown in listings.
        #[arg(long, default_value = "")]
        description: String,
        /// Seconds a leased episode may go without a call before it is
        /// handed to another worker.
        #[arg(long, default_value_t = toolenv_server::DEFAULT_LEASE_TIMEOUT.as_secs(), value_parser = clap::value_parser!(u64).range(1..=604_800))]
        lease_timeout_secs: u64,
        /// Print the run's id and return at once, without following it.
        #[arg(long)]
        no_wait: bool,
    },
    /// Work on a run hosted by the server (--url): lease its episodes, play
    /// each with a built-in agent and finish it, until none is left.
    Work {
        /// The run's id, e.g. run-0003.
        run: String,
        /// The built-in agent to play with.
        #[arg(long, value_enum, default_value = "reference")]
        agent: AgentArg,
        /// Play the episodes planned for this label (default: the agent's name).
        #[arg(long)]
        label: Option<String>,
        /// Workers in this process, each leasing its own episodes.
        #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=256))]
        workers: u32,
    },
    /// Play the suite with built-in agents, over a grid of ε, fault profiles
    /// and trials, and print a verdict table (one configuration) or the
    /// paper-shaped report (a grid). Each finished episode is stored at once
    /// (--store, toolenv.db by default), so a killed run loses only the
    /// episodes in flight and `--resume RUN` continues it.
    Run {
        #[command(flatten)]
        filter: Filter,
        #[command(flatten)]
        grid: GridArgs,
        #[command(flatten)]
        store: RunStoreArgs,
        /// Print one JSON object per episode instead of tables.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
enum TasksCommand {
    /// List tasks (the default).
    List,
    /// Show one task: description, today, initial state and tool schemas.
    Show {
        /// The task id.
        task_id: String,
    },
}

#[derive(Debug, clap::Args)]
struct ServeArgs {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:50051")]
    addr: SocketAddr,
    /// Most episodes held at once.
    #[arg(long, default_value_t = Config::default().max_episodes)]
    max_episodes: usize,
    /// Most tool calls per episode.
    #[arg(long, default_value_t = Config::default().max_calls_per_episode)]
    max_calls: u32,
    /// Most bytes of argument JSON per call.
    #[arg(long, default_value_t = Config::default().max_argument_bytes)]
    max_argument_bytes: usize,
    /// Seconds after which an untouched episode is dropped.
    #[arg(long, default_value_t = Config::default().episode_idle_timeout.as_secs())]
    idle_timeout_secs: u64,
    /// Real milliseconds per simulated millisecond of fault delays (0: never
    /// sleep), unless an episode asks for another.
    #[arg(long, default_value_t = Config::default().time_scale)]
    time_scale: f64,
    /// A JSON file of named fault profiles: {"name": {"failure_rate": 0.1,
    /// "fault_weights": {"TransientTimeout": 1.0}, "params": {...}}}.
    #[arg(long)]
    fault_profiles: Option<std::path::PathBuf>,
    /// A JSON file of alternative descriptions per task, used at ε ≥ 0.2:
    /// {"task id": ["description", ...]}; every slot value must appear.
    #[arg(long)]
    paraphrases: Option<std::path::PathBuf>,
    /// Where hosted runs are kept (see `toolenv host`).
    #[command(flatten)]
    store: StoreArgs,
    /// Keep hosted runs in memory only: they are lost when the server stops.
    #[arg(long)]
    no_store: bool,
}

#[derive(Debug, Clone, clap::Args)]
struct Filter {
    /// Only tasks of this domain.
    #[arg(long, value_enum)]
    domain: Option<DomainArg>,
    /// Only tasks of this level (1 or 2).
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=2))]
    level: Option<u8>,
}

#[derive(Debug, Clone, clap::Args)]
struct EpisodeArgs {
    /// The built-in agent to play with.
    #[arg(long, value_enum, default_value = "reference")]
    agent: AgentArg,
    /// Episode seed.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Trial index.
    #[arg(long, default_value_t = 0)]
    trial: u32,
    /// Perturbation level ε of the description: 0, 0.1, 0.2 or 0.3.
    #[arg(long, default_value_t = 0.0)]
    epsilon: f64,
    /// Fault profile: a λ preset (0.0, 0.1, 0.2, 0.3), an ablation
    /// (timeout-only, rate-limit-only, partial-response-only, mixed) or a
    /// name from the server's profile file.
    #[arg(long, value_name = "PROFILE")]
    faults: Option<String>,
    /// Keep only these fault types of the profile (comma-separated, e.g.
    /// TransientTimeout,SoftRateLimit).
    #[arg(long, value_delimiter = ',', requires = "faults")]
    only: Vec<String>,
    /// Deliver faults in-band, as error objects in OK replies.
    #[arg(long)]
    in_band: bool,
    /// Real milliseconds per simulated millisecond of fault delays; the
    /// built-in agents need no real waiting, so 0 by default.
    #[arg(long, default_value_t = 0.0)]
    time_scale: f64,
}

impl EpisodeArgs {
    fn request(&self, task_id: &str) -> pb::CreateEpisodeRequest {
        pb::CreateEpisodeRequest {
            task_id: task_id.to_owned(),
            seed: self.seed,
            trial: self.trial,
            epsilon: self.epsilon,
            fault_profile: self.faults.as_ref().map(|name| pb::FaultProfile {
                name: name.clone(),
                only: self.only.clone(),
                ..Default::default()
            }),
            fault_delivery: if self.in_band { pb::FaultDelivery::InBand } else { pb::FaultDelivery::Status }.into(),
            time_scale: Some(self.time_scale),
        }
    }
}

#[derive(Debug, Clone, clap::Args)]
struct GridArgs {
    /// Built-in agents to compare (comma-separated).
    #[arg(long = "agent", value_enum, value_delimiter = ',', default_value = "reference")]
    agents: Vec<AgentArg>,
    /// Perturbation levels ε (comma-separated): 0, 0.1, 0.2, 0.3.
    #[arg(long = "epsilon", value_delimiter = ',', default_value = "0")]
    epsilons: Vec<f64>,
    /// Fault profiles (comma-separated): λ presets (0.0, 0.1, 0.2, 0.3),
    /// ablations (timeout-only, rate-limit-only, partial-response-only,
    /// mixed) or names from the server's profile file. None by default.
    #[arg(long = "faults", value_delimiter = ',')]
    faults: Vec<String>,
    /// Trials per configuration: the k of pass^k.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100))]
    trials: u32,
    /// A preset grid, replacing --epsilon, --faults and --trials: "paper"
    /// (ε 0, 0.1, 0.2 × λ 0.0, 0.2 × 2 trials) or "ablation"
    /// (timeout-only, rate-limit-only, partial-response-only, mixed × 2 trials).
    #[arg(long, value_enum)]
    grid: Option<GridPreset>,
    /// Episode seed (trials of a configuration share it and differ by trial index).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Deliver faults in-band, as error objects in OK replies.
    #[arg(long)]
    in_band: bool,
    /// Real milliseconds per simulated millisecond of fault delays.
    #[arg(long, default_value_t = 0.0)]
    time_scale: f64,
    /// Episodes played at once.
    #[arg(long, default_value_t = 16)]
    concurrency: usize,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum GridPreset {
    /// The paper's main grid: ε 0, 0.1, 0.2 × λ 0.0, 0.2 × 2 trials.
    Paper,
    /// The paper's ablation grid at λ = 0.2: one fault type at a time, and mixed.
    Ablation,
}

impl GridArgs {
    /// The grid these flags describe, for the given agent labels.
    fn grid(&self, agents: Vec<String>) -> Grid {
        let mut grid = match self.grid {
            Some(GridPreset::Paper) => Grid::paper(agents),
            Some(GridPreset::Ablation) => Grid::ablation(agents),
            None => {
                Grid { epsilons: self.epsilons.clone(), fault_profiles: self.faults.clone(), trials: self.trials, ..Grid::single(agents) }
            }
        };
        grid.seed = self.seed;
        grid.fault_delivery = if self.in_band { pb::FaultDelivery::InBand } else { pb::FaultDelivery::Status };
        grid.time_scale = Some(self.time_scale);
        grid
    }

    /// The run's episodes with the built-in agents: agents × ε × fault profiles × tasks × trials.
    fn plan(&self, tasks: &[pb::TaskSummary]) -> Vec<PlannedEpisode> {
        let agents = self.agents.iter().map(|&agent| Agent::from(agent).name().to_owned()).collect();
        self.grid(agents).plan(tasks.iter().map(|t| t.id.as_str()))
    }
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum DomainArg {
    Scheduling,
    Travel,
    Support,
    Ecommerce,
}

impl From<DomainArg> for Domain {
    fn from(arg: DomainArg) -> Self {
        match arg {
            DomainArg::Scheduling => Domain::Scheduling,
            DomainArg::Travel => Domain::Travel,
            DomainArg::Support => Domain::Support,
            DomainArg::Ecommerce => Domain::Ecommerce,
        }
    }
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum AgentArg {
    /// The task's reference solution, retrying faults.
    Reference,
    /// The reference solution without retries.
    ReferenceNoRetry,
    /// Reads the description with fixed patterns for the canonical phrasing.
    Brittle,
    /// Seeded random calls.
    Random,
    /// No calls at all.
    Idle,
}

impl From<AgentArg> for Agent {
    fn from(arg: AgentArg) -> Self {
        match arg {
            AgentArg::Reference => Agent::Reference,
            AgentArg::ReferenceNoRetry => Agent::ReferenceNoRetry,
            AgentArg::Brittle => Agent::Brittle,
            AgentArg::Random => Agent::Random,
            AgentArg::Idle => Agent::Idle,
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let default_level = if matches!(cli.command, Command::Serve(_)) { "info" } else { "warn" };
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| default_level.into()))
        .with_writer(std::io::stderr)
        .init();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("error: cannot start the async runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(cli)) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::from(2)
        }
    }
}

async fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Serve(args) => serve(args).await,
        Command::Selfcheck => Ok(selfcheck()),
        Command::Runs { store } => match &cli.url {
            Some(url) => list_server_runs(url).await,
            None => list_runs(&store),
        },
        Command::Report { run, json, exclude_infra_errors, store } => match &cli.url {
            Some(url) => server_report(url, &run, json, exclude_infra_errors).await,
            None => report(&store, &run, json, InfraConvention::excluding(exclude_infra_errors)),
        },
        Command::Export { run, store } => export(&store, &run),
        Command::Client(command @ (ClientCommand::Host { .. } | ClientCommand::Work { .. })) => {
            let Some(url) = &cli.url else {
                bail!("hosted runs live on a server: start one with `toolenv serve` and pass its address with --url (or TOOLENV_URL)");
            };
            let mut client = Client::connect(url).await?;
            client_command(command, &mut client).await
        }
        Command::Client(command) => {
            let embedded = match &cli.url {
                Some(_) => None,
                None => Some(RunningServer::start(Config::default()).await.context("starting the embedded server")?),
            };
            let url = cli.url.clone().or_else(|| embedded.as_ref().map(RunningServer::url)).unwrap_or_default();
            let mut client = Client::connect(&url).await?;
            let code = client_command(command, &mut client).await;
            if let Some(server) = embedded {
                server.shutdown().await?;
            }
            code
        }
    }
}

async fn client_command(command: ClientCommand, client: &mut Client) -> anyhow::Result<ExitCode> {
    match command {
        ClientCommand::Tasks { command: Some(TasksCommand::Show { task_id }), .. } => {
            let task = client.get_task(&task_id).await?;
            print_task(&task);
        }
        ClientCommand::Tasks { filter, .. } => {
            let tasks = client.list_tasks(filter.domain.map(Into::into), filter.level).await?;
            println!("{:<36} {:<11} {:>5}  DESCRIPTION", "TASK", "DOMAIN", "LEVEL");
            for task in &tasks {
                println!("{:<36} {:<11} {:>5}  {}", task.id, domain_name(task.domain), task.level, task.description);
            }
        }
        ClientCommand::Play { task_id, episode, json } => {
            let outcome = play(client, episode.agent.into(), episode.request(&task_id)).await?;
            if json {
                println!("{}", toolenv_client::trajectory_json(&outcome.trajectory));
            } else {
                print_trajectory(&outcome.trajectory);
            }
        }
        ClientCommand::Host { filter, grid, labels, description, lease_timeout_secs, no_wait } => {
            return host(client, &filter, &grid, labels, description, lease_timeout_secs, no_wait).await;
        }
        ClientCommand::Work { run, agent, label, workers } => return work(client, &run, agent.into(), label, workers).await,
        ClientCommand::Run { store, grid, json, .. } if store.resume.is_some() => {
            return resume(client, &store.store.store, store.resume.as_deref().unwrap_or_default(), grid.concurrency, json).await;
        }
        ClientCommand::Run { filter, grid, json, store } => {
            let tasks = client.list_tasks(filter.domain.map(Into::into), filter.level).await?;
            if tasks.is_empty() {
                bail!("no task matches the filter");
            }
            let plan = grid.plan(&tasks);
            let mut recording = if store.no_store { None } else { Some(Recording::create(&store.store.store, &plan)?) };
            if plan.len() > tasks.len() {
                let results = play_grid(client, &plan, grid.concurrency, |index, result, trajectory| {
                    if let Some(recording) = &mut recording {
                        recording.record(index, result, trajectory);
                    }
                })
                .await;
                print_results(&results, trials_of(&plan), json)?;
                return match recording {
                    Some(recording) => recording.finish(),
                    None => Ok(ExitCode::SUCCESS),
                };
            }
            // One configuration: a verdict per task, played in order.
            let agent = plans_agent(&plan[0])?;
            if !json {
                println!("{:<36} {:>5}  {:<6} {:>5} {:>6}  FAILED CHECKS", "TASK", "LEVEL", "RESULT", "CALLS", "FAULTS");
            }
            let mut passed = 0;
            for (index, (task, planned)) in tasks.iter().zip(&plan).enumerate() {
                let outcome = play(client, agent, planned.request.clone()).await?;
                if let Some(recording) = &mut recording {
                    recording.record(index, &planned.result(&outcome.trajectory), Some(&outcome.trajectory));
                }
                passed += usize::from(outcome.verdict.passed);
                if json {
                    println!(
                        "{}",
                        serde_json::json!({"task_id": task.id, "agent": agent.name(), "seed": planned.request.seed, "trial": planned.request.trial, "passed": outcome.verdict.passed, "calls": outcome.trajectory.calls.len(), "final_state_hash": outcome.verdict.final_state_hash})
                    );
                } else {
                    print_row(task, &outcome);
                }
            }
            if !json {
                println!("\n{passed}/{} passed ({} agent, seed {}, trial 0)", tasks.len(), agent.name(), grid.seed);
            }
            if let Some(recording) = recording {
                return recording.finish();
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// A run being recorded in the store as its episodes finish.
struct Recording {
    store: Store,
    run: RunId,
    /// The first failure to record, reported when the run ends; playing goes on.
    error: Option<StoreError>,
    recorded: u64,
}

impl Recording {
    /// Stores a new run of `plan` and says how to resume it.
    fn create(path: &std::path::Path, plan: &[PlannedEpisode]) -> anyhow::Result<Recording> {
        let store = Store::open(path)?;
        let run = store.create_run(plan, &command_line())?;
        eprintln!("run {run}: {} episodes; resume with `toolenv run --resume {run}{}`", plan.len(), store_flag(path));
        Ok(Recording { store, run, error: None, recorded: 0 })
    }

    /// Records one episode; a failure is kept for [`Recording::finish`].
    fn record(&mut self, index: usize, result: &EpisodeResult, trajectory: Option<&pb::Trajectory>) {
        match self.store.record(&self.run, index, result, trajectory) {
            Ok(()) => self.recorded += 1,
            // Another process resuming the same run got there first: its verdict stands.
            Err(error @ StoreError::AlreadyRecorded { .. }) => tracing::warn!(%error, "episode not stored"),
            Err(error) => {
                tracing::error!(%error, "episode not stored");
                self.error.get_or_insert(error);
            }
        }
    }

    /// Says where the run is stored and what is left of it; fails if an episode could not be stored.
    fn finish(self) -> anyhow::Result<ExitCode> {
        let path = self.store.path().to_path_buf();
        if let Some(error) = self.error {
            return Err(anyhow::Error::new(error).context(format!("storing episodes of {} in {}", self.run, path.display())));
        }
        let summary = self.store.summary(&self.run)?;
        eprintln!(
            "stored {} episodes of {} in {}: {}/{} finished, {}",
            self.recorded,
            self.run,
            path.display(),
            summary.finished(),
            summary.planned,
            summary.status()
        );
        if summary.infra_errors > 0 {
            eprintln!(
                "{} episodes ended in an infrastructure error; `toolenv run --resume {}{}` plays them again",
                summary.infra_errors,
                self.run,
                store_flag(&path)
            );
        }
        Ok(ExitCode::SUCCESS)
    }
}

/// The command line, stored as the run's description.
fn command_line() -> String {
    std::iter::once("toolenv".to_owned()).chain(std::env::args().skip(1)).collect::<Vec<_>>().join(" ")
}

/// ` --store PATH`, unless PATH is the default.
fn store_flag(path: &std::path::Path) -> String {
    if path == std::path::Path::new(toolenv_client::store::DEFAULT_PATH) { String::new() } else { format!(" --store {}", path.display()) }
}

/// The built-in agent a planned episode names.
fn plans_agent(planned: &PlannedEpisode) -> anyhow::Result<Agent> {
    Agent::from_name(&planned.agent).with_context(|| format!("'{}' is not a built-in agent", planned.agent))
}

/// Plays planned episodes concurrently with a progress bar.
async fn play_grid(
    client: &Client,
    plan: &[PlannedEpisode],
    concurrency: usize,
    mut on_result: impl FnMut(usize, &EpisodeResult, Option<&pb::Trajectory>),
) -> Vec<EpisodeResult> {
    let bar = progress_bar(plan.len() as u64);
    let (mut passed, mut infra) = (0u64, 0u64);
    let results = toolenv_client::run_plan(client, plan, concurrency, |index, result, trajectory| {
        on_result(index, result, trajectory);
        passed += u64::from(result.outcome == toolenv_client::metrics::Outcome::Passed);
        infra += u64::from(result.is_infra_error());
        bar.inc(1);
        bar.set_message(format!("{passed} passed, {infra} infrastructure errors"));
    })
    .await;
    bar.finish_and_clear();
    results
}

/// Prints a grid's results: one JSON object per episode, or the report.
fn print_results(results: &[EpisodeResult], k: u32, json: bool) -> anyhow::Result<()> {
    if json {
        for result in results {
            println!("{}", serde_json::to_string(result)?);
        }
    } else {
        print!("{}", toolenv_client::report::render(results, k, InfraConvention::CountAsFailure)?);
    }
    Ok(())
}

/// Continues a stored run: plays its pending episodes, then prints the report of all of them.
async fn resume(client: &Client, path: &std::path::Path, run: &str, concurrency: usize, json: bool) -> anyhow::Result<ExitCode> {
    let store = Store::open_existing(path)?;
    let run = store.find_run(run)?;
    let before = store.summary(&run)?;
    if before.lease_timeout.is_some() {
        bail!("{run} is hosted by a server for workers; `toolenv work {run} --url URL` plays it there");
    }
    let pending = store.pending(&run)?;
    let session = store.begin_session(&run)?;
    eprintln!(
        "resuming {run} (session {session}): {}/{} episodes finished; playing {} ({} after an infrastructure error)",
        before.finished(),
        before.planned,
        pending.len(),
        before.infra_errors
    );
    let plan: Vec<PlannedEpisode> = pending.iter().map(|(_, planned)| planned.clone()).collect();
    let mut recording = Recording { store, run, error: None, recorded: 0 };
    play_grid(client, &plan, concurrency, |index, result, trajectory| recording.record(pending[index].0, result, trajectory)).await;
    eprintln!("played {} episodes in this session", plan.len());
    let results = recording.store.results(&recording.run)?;
    let k = trials_of(&recording.store.plan(&recording.run)?);
    print_results(&results, k, json)?;
    recording.finish()
}

/// Plans a hosted run on the server, then follows it to its report.
async fn host(
    client: &mut Client,
    filter: &Filter,
    grid: &GridArgs,
    labels: Vec<String>,
    description: String,
    lease_timeout_secs: u64,
    no_wait: bool,
) -> anyhow::Result<ExitCode> {
    let planned = grid.grid(labels.clone());
    let request = pb::CreateRunRequest {
        description: if description.is_empty() { command_line() } else { description },
        agents: labels,
        preset: String::new(),
        epsilons: planned.epsilons,
        fault_profiles: planned.fault_profiles,
        trials: planned.trials,
        seed: planned.seed,
        domain: filter.domain.map_or(pb::Domain::Unspecified, |d| Domain::from(d).into()).into(),
        level: filter.level.map_or(0, u32::from),
        fault_delivery: planned.fault_delivery.into(),
        time_scale: planned.time_scale,
        lease_timeout_ms: lease_timeout_secs.saturating_mul(1000),
    };
    let run = client.runs().create_run(request).await.map_err(toolenv_client::ClientError::from)?.into_inner();
    println!("{}", run.run_id);
    eprintln!(
        "hosting {}: {} episodes for {}; workers lease them with Runs.NextEpisode (e.g. `toolenv work {} --url URL`)",
        run.run_id,
        run.planned,
        run.agents.join(", "),
        run.run_id
    );
    if no_wait {
        return Ok(ExitCode::SUCCESS);
    }
    let bar = progress_bar(run.planned);
    let mut run = run;
    while !run.complete {
        bar.set_position(run.passed + run.failed);
        bar.set_message(format!("{} passed, {} leased", run.passed, run.leased));
        tokio::time::sleep(Duration::from_millis(500)).await;
        let request = pb::GetRunRequest { run_id: run.run_id.clone() };
        run = client.runs().get_run(request).await.map_err(toolenv_client::ClientError::from)?.into_inner();
    }
    bar.finish_and_clear();
    print_server_report(client, &run.run_id, false, false).await
}

/// Works on a hosted run with built-in agents until nothing is left for the label.
async fn work(client: &mut Client, run: &str, agent: Agent, label: Option<String>, workers: u32) -> anyhow::Result<ExitCode> {
    let label = label.unwrap_or_else(|| agent.name().to_owned());
    let first = client.runs().get_run(pb::GetRunRequest { run_id: run.to_owned() }).await.map_err(toolenv_client::ClientError::from)?;
    let first = first.into_inner();
    if !first.agents.contains(&label) {
        bail!("{run} plans no episode for '{label}'; its agents are: {} (choose one with --label)", first.agents.join(", "));
    }
    let bar = progress_bar(first.planned);
    bar.set_position(first.passed + first.failed);
    let mut tasks = tokio::task::JoinSet::new();
    for index in 0..workers {
        let mut client = client.clone();
        let (run, label, bar) = (run.to_owned(), label.clone(), bar.clone());
        let name = format!("{}-{}-{index}", label, std::process::id());
        tasks.spawn(async move {
            toolenv_client::worker::work(&mut client, &run, agent, &label, &name, |_, _, progress| {
                if let Some(progress) = progress {
                    bar.set_position((progress.passed + progress.failed).max(bar.position()));
                    bar.set_message(format!("{} passed, {} leased", progress.passed, progress.leased));
                }
            })
            .await
        });
    }
    let mut total = toolenv_client::worker::WorkSummary::default();
    let mut failure = None;
    while let Some(joined) = tasks.join_next().await {
        match joined {
            Ok(Ok(summary)) => {
                total.played += summary.played;
                total.passed += summary.passed;
                total.lost_leases += summary.lost_leases;
            }
            Ok(Err(error)) => failure = Some(anyhow::Error::new(error)),
            Err(error) => failure = Some(anyhow::Error::new(error)),
        }
    }
    bar.finish_and_clear();
    eprintln!(
        "played {} episodes of {run} as '{label}' ({} passed); {} lost to expired leases",
        total.played, total.passed, total.lost_leases
    );
    match failure {
        Some(error) => Err(error.context(format!("a worker on {run} stopped"))),
        None => Ok(ExitCode::SUCCESS),
    }
}

fn progress_bar(len: u64) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new(len);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} episodes  {msg}  [{elapsed}, eta {eta}]")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    bar
}

async fn list_server_runs(url: &str) -> anyhow::Result<ExitCode> {
    let mut client = Client::connect(url).await?;
    let runs = client.runs().list_runs(pb::ListRunsRequest {}).await.map_err(toolenv_client::ClientError::from)?.into_inner().runs;
    println!(
        "{:<10} {:<10} {:>16} {:>7} {:>7} {:>6}  {:<20}  {:<24}  DESCRIPTION",
        "RUN", "STATUS", "FINISHED/PLANNED", "PASSED", "FAILED", "LEASED", "CREATED", "AGENTS"
    );
    for run in runs {
        println!(
            "{:<10} {:<10} {:>16} {:>7} {:>7} {:>6}  {:<20}  {:<24}  {}",
            run.run_id,
            if run.complete { "complete" } else { "incomplete" },
            format!("{}/{}", run.passed + run.failed, run.planned),
            run.passed,
            run.failed,
            run.leased,
            run.created_at,
            run.agents.join(","),
            run.description
        );
    }
    Ok(ExitCode::SUCCESS)
}

async fn server_report(url: &str, run: &str, json: bool, exclude_infra_errors: bool) -> anyhow::Result<ExitCode> {
    let mut client = Client::connect(url).await?;
    print_server_report(&mut client, run, json, exclude_infra_errors).await
}

/// Prints a hosted run's report, as `toolenv report` prints a stored one.
async fn print_server_report(client: &mut Client, run: &str, json: bool, exclude_infra_errors: bool) -> anyhow::Result<ExitCode> {
    let request = pb::GetRunReportRequest { run_id: run.to_owned(), exclude_infra_errors };
    let report = client.runs().get_run_report(request).await.map_err(toolenv_client::ClientError::from)?.into_inner();
    if json {
        println!("{}", pretty(&report.summary_json));
        return Ok(ExitCode::SUCCESS);
    }
    let progress = report.run.unwrap_or_default();
    println!(
        "{}: {}/{} episodes finished ({}), {} leased now\n{}\n",
        progress.run_id,
        progress.passed + progress.failed,
        progress.planned,
        if progress.complete { "complete" } else { "incomplete" },
        progress.leased,
        progress.description
    );
    print!("{}", report.text);
    Ok(ExitCode::SUCCESS)
}

fn list_runs(args: &StoreArgs) -> anyhow::Result<ExitCode> {
    let store = Store::open_existing(&args.store)?;
    println!(
        "{:<10} {:<10} {:>16} {:>7} {:>7} {:>6} {:>8}  {:<20}  COMMAND",
        "RUN", "STATUS", "FINISHED/PLANNED", "PASSED", "FAILED", "INFRA", "SESSIONS", "CREATED"
    );
    for run in store.runs()? {
        println!(
            "{:<10} {:<10} {:>16} {:>7} {:>7} {:>6} {:>8}  {:<20}  {}",
            run.id,
            run.status(),
            format!("{}/{}", run.finished(), run.planned),
            run.passed,
            run.failed,
            run.infra_errors,
            run.sessions,
            run.created_at,
            run.description
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn report(args: &StoreArgs, run: &str, json: bool, conv: InfraConvention) -> anyhow::Result<ExitCode> {
    let store = Store::open_existing(&args.store)?;
    let run = store.find_run(run)?;
    let summary = store.summary(&run)?;
    let results = store.results(&run)?;
    let k = trials_of(&store.plan(&run)?);
    if json {
        let report = toolenv_client::report::summary(&results, k, summary.planned, conv)?;
        println!("{}", serde_json::to_string_pretty(&serde_json::json!({"run": summary, "report": report}))?);
    } else {
        println!(
            "{run}: {}/{} episodes finished ({}), {} infrastructure errors, {} session(s)\n{}\n",
            summary.finished(),
            summary.planned,
            summary.status(),
            summary.infra_errors,
            summary.sessions,
            summary.description
        );
        print!("{}", toolenv_client::report::render(&results, k, conv)?);
    }
    Ok(ExitCode::SUCCESS)
}

fn export(args: &StoreArgs, run: &str) -> anyhow::Result<ExitCode> {
    let store = Store::open_existing(&args.store)?;
    let run = store.find_run(run)?;
    let stdout = std::io::BufWriter::new(std::io::stdout().lock());
    match store.export_jsonl(&run, stdout) {
        Ok(_) => Ok(ExitCode::SUCCESS),
        // `toolenv export RUN | head` is not an error.
        Err(StoreError::Io(error)) if error.kind() == std::io::ErrorKind::BrokenPipe => Ok(ExitCode::SUCCESS),
        Err(StoreError::Json(error)) if error.io_error_kind() == Some(std::io::ErrorKind::BrokenPipe) => Ok(ExitCode::SUCCESS),
        Err(error) => Err(error.into()),
    }
}

async fn serve(args: ServeArgs) -> anyhow::Result<ExitCode> {
    if !(0.0..=1000.0).contains(&args.time_scale) {
        bail!("--time-scale must be within [0, 1000], got {}", args.time_scale);
    }
    let fault_profiles = match &args.fault_profiles {
        None => Default::default(),
        Some(path) => {
            let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
            let profiles: std::collections::BTreeMap<String, toolenv_domains::chaos::FaultProfile> =
                serde_json::from_str(&text).with_context(|| format!("parsing fault profiles in {}", path.display()))?;
            for (name, profile) in &profiles {
                profile.validate().with_context(|| format!("fault profile '{name}' in {}", path.display()))?;
            }
            profiles
        }
    };
    let paraphrases = match &args.paraphrases {
        None => None,
        Some(path) => {
            let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
            let bank =
                toolenv_domains::perturb::ParaphraseBank::from_json(&text).with_context(|| format!("paraphrases in {}", path.display()))?;
            Some(std::sync::Arc::new(bank))
        }
    };
    let config = Config {
        paraphrases,
        max_episodes: args.max_episodes,
        max_calls_per_episode: args.max_calls,
        max_argument_bytes: args.max_argument_bytes,
        episode_idle_timeout: Duration::from_secs(args.idle_timeout_secs.max(1)),
        time_scale: args.time_scale,
        fault_profiles,
        store: (!args.no_store).then(|| args.store.store.clone()),
    };
    let server = RunningServer::bind(args.addr, config).await?;
    let kept = if args.no_store { "in memory only".to_owned() } else { format!("in {}", args.store.store.display()) };
    eprintln!("toolenv listening on {} (Ctrl-C to stop); hosted runs are kept {kept}", server.url());
    shutdown_signal().await?;
    tracing::info!("shutting down: finishing requests in flight");
    server.shutdown().await?;
    Ok(ExitCode::SUCCESS)
}

async fn shutdown_signal() -> anyhow::Result<()> {
    #[cfg(unix)]
    {
        let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
        tokio::select! {
            result = tokio::signal::ctrl_c() => result?,
            _ = terminate.recv() => {}
        }
    }
    #[cfg(not(unix))]
    tokio::signal::ctrl_c().await?;
    Ok(())
}

fn selfcheck() -> ExitCode {
    use toolenv_domains::agent::{RANDOM_AGENT_SEEDS, SelfCheck};
    println!("{:<36} {:<9} {:<9} {:<13}", "TASK", "REFERENCE", "INACTION", "RANDOM AGENT");
    let mut problems = Vec::new();
    for task in toolenv_domains::suite() {
        let check = SelfCheck::run(task);
        let random = format!("{}/{RANDOM_AGENT_SEEDS} fail", RANDOM_AGENT_SEEDS as usize - check.random_passes.len());
        println!(
            "{:<36} {:<9} {:<9} {:<13}",
            task.id,
            if check.reference.passed { "pass" } else { "FAIL" },
            if check.inaction.passed { "PASS" } else { "fail" },
            random
        );
        problems.extend(check.problems().into_iter().map(|p| format!("{}: {p}", task.id)));
    }
    if problems.is_empty() {
        println!("\nevery oracle passes its reference solution and fails inaction and random agents");
        ExitCode::SUCCESS
    } else {
        println!();
        for problem in &problems {
            println!("problem: {problem}");
        }
        ExitCode::FAILURE
    }
}

fn domain_name(domain: i32) -> &'static str {
    pb::Domain::try_from(domain).ok().and_then(pb::Domain::to_domain).map_or("?", Domain::name)
}

fn print_row(task: &pb::TaskSummary, outcome: &EpisodeOutcome) {
    let failed: Vec<&str> = outcome.verdict.checks.iter().filter(|c| !c.passed).map(|c| c.name.as_str()).collect();
    let encountered = outcome.verdict.fault_stats.map_or(0, |s| s.encountered);
    println!(
        "{:<36} {:>5}  {:<6} {:>5} {:>6}  {}",
        task.id,
        task.level,
        if outcome.verdict.passed { "pass" } else { "FAIL" },
        outcome.trajectory.calls.len(),
        encountered,
        failed.join("; ")
    );
}

fn print_task(task: &pb::Task) {
    let summary = task.summary.clone().unwrap_or_default();
    println!("{}  ({}, level {})", summary.id, domain_name(summary.domain), summary.level);
    println!("description: {}", summary.description);
    println!("today:       {}", task.today);
    println!("initial state:\n{}", pretty(&task.initial_state_json));
    println!("tools:");
    for tool in &task.tools {
        let kind = if tool.mutates_state { "changes state" } else { "read-only" };
        println!("\n  {} ({kind}): {}", tool.name, tool.description);
        println!("{}", indent(&pretty(&tool.parameters_json_schema), 4));
    }
}

fn print_trajectory(trajectory: &pb::Trajectory) {
    use pb::tool_call_record::Outcome;
    println!("task:        {}", trajectory.task_id);
    println!("description: {}", trajectory.description);
    println!("today:       {}  seed: {}  trial: {}  ε: {}", trajectory.today, trajectory.seed, trajectory.trial, trajectory.epsilon);
    for applied in &trajectory.perturbations {
        let params: Vec<String> = applied.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
        println!("perturbation: {} {}", applied.relation, params.join(" "));
    }
    println!();
    for call in &trajectory.calls {
        let outcome = match &call.outcome {
            Some(Outcome::ResultJson(json)) => format!("-> {json}"),
            Some(Outcome::Error(error)) => format!("-> domain error {}: {}", error.code, error.message),
            Some(Outcome::Invalid(invalid)) => format!("-> rejected ({}): {}", invalid.field, invalid.message),
            Some(Outcome::RawResult(text)) => format!("-> (cut short) {text}"),
            Some(Outcome::Failure(f)) => format!("-> {} {}: {}", f.code, f.reason, f.message),
            None => "-> (no outcome)".to_owned(),
        };
        let fault =
            call.fault.as_ref().map_or(String::new(), |f| format!("  [fault: {}{}]", f.kind, if f.new { "" } else { ", carried over" }));
        println!("#{:<3} {}({}) {outcome}{fault}", call.index, call.tool_name, call.arguments_json);
    }
    let Some(verdict) = &trajectory.verdict else { return };
    println!("\nverdict: {}", if verdict.passed { "PASS" } else { "FAIL" });
    for check in &verdict.checks {
        let mark = if check.passed { "ok  " } else { "FAIL" };
        println!("  {mark} {} (expected {}, actual {})", check.name, check.expected_json, check.actual_json);
    }
    println!("state diff:\n{}", indent(if verdict.state_diff_text.is_empty() { "(none)" } else { verdict.state_diff_text.trim_end() }, 2));
    println!("final state hash: {}", verdict.final_state_hash);
    if let Some(stats) = &verdict.fault_stats {
        println!(
            "faults: {} injected, {} encountered, {} recovered, {} extra calls",
            stats.injected, stats.encountered, stats.recovered, stats.extra_calls
        );
    }
    for note in &verdict.fault_notes {
        println!("  {note}");
    }
}

fn pretty(json: &str) -> String {
    serde_json::from_str::<serde_json::Value>(json).and_then(|v| serde_json::to_string_pretty(&v)).unwrap_or_else(|_| json.to_owned())
}

fn indent(text: &str, spaces: usize) -> String {
    let pad = " ".repeat(spaces);
    text.lines().map(|l| format!("{pad}{l}")).collect::<Vec<_>>().join("\n")
}
