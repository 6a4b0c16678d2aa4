//! Raw arguments → validated plans: what a command will do, checked once
//! ([`Grid::validate`]) before any server is started or asked, so that a bad
//! ε, fault profile or time scale is refused with the flag named instead of
//! failing episode after episode.

use std::path::PathBuf;

use toolenv::pb;
use toolenv_core::Domain;
use toolenv_domains::generate::Suite;
use toolenv_runs::{Grid, GridError};

use super::args::{DeliveryArgs, EpisodeArgs, Filter, GridArgs, GridPreset, HostArgs, RunArgs};

/// Which fault profile names the server playing the episodes knows beyond
/// the presets and ablations: an embedded server knows none; a server at
/// --url may have a profile file, and checks those names itself.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Server {
    Embedded,
    Remote,
}

impl Server {
    /// The server a command with this --url talks to.
    pub(crate) fn of(url: Option<&str>) -> Server {
        if url.is_some() { Server::Remote } else { Server::Embedded }
    }

    fn knows_profile(self, _name: &str) -> bool {
        matches!(self, Server::Remote)
    }
}

/// Which tasks of which suite a command is about.
#[derive(Debug, Clone)]
pub(crate) struct Tasks {
    pub(crate) suite: Suite,
    pub(crate) domain: Option<Domain>,
    pub(crate) level: Option<u8>,
}

impl From<&Filter> for Tasks {
    fn from(filter: &Filter) -> Self {
        Tasks { suite: filter.suite(), domain: filter.domain.map(Into::into), level: filter.level }
    }
}

/// What `toolenv run` plays, and where it is stored.
#[derive(Debug, Clone)]
pub(crate) struct RunPlan {
    pub(crate) episodes: Episodes,
    /// Episodes played at once.
    pub(crate) concurrency: usize,
    /// One JSON object per episode instead of tables.
    pub(crate) json: bool,
    /// The LLM agents of a new run's labels.
    pub(crate) llm: toolenv_agents::llm::LlmAgents,
    /// The LLM agents' flags, for the labels of a resumed run.
    pub(crate) llm_args: super::llm::LlmArgs,
    /// The simulated user's flags.
    pub(crate) user_args: super::llm::UserArgs,
    /// Where each episode's trace is sent live (`/v1/traces` of a collector).
    pub(crate) otlp: Option<String>,
}

/// Where a run's episodes come from.
#[derive(Debug, Clone)]
pub(crate) enum Episodes {
    /// A new run: this grid over the tasks (a single configuration is a
    /// grid of one), recorded in this store (none for --no-store).
    New { grid: Grid, tasks: Tasks, store: Option<PathBuf> },
    /// The episodes of a stored run that have no verdict yet.
    Resume { run: String, store: PathBuf },
}

/// `toolenv run`'s arguments as a plan.
pub(crate) fn run(args: &RunArgs, server: Server) -> anyhow::Result<RunPlan> {
    if args.concurrency == 0 {
        anyhow::bail!("invalid --concurrency: 0 episodes at once would play nothing; give at least 1");
    }
    let store = &args.store;
    let episodes = match &store.resume {
        Some(run) => Episodes::Resume { run: run.clone(), store: store.store.store.clone() },
        None => {
            let agents = args.agents.iter().map(|agent| agent.0.clone()).collect();
            Episodes::New {
                grid: grid(&args.grid, agents, server, "--agent")?,
                tasks: Tasks::from(&args.filter),
                store: (!store.no_store).then(|| store.store.store.clone()),
            }
        }
    };
    // Checked now (endpoints, prices), before any episode is played.
    let llm = super::llm::agents(args.agents.iter().map(|a| a.0.as_str()), &args.llm, &args.user)?;
    let otlp = args.otlp_endpoint.as_deref().map(super::otlp::traces_url).transpose()?;
    let (llm_args, user_args) = ((*args.llm).clone(), args.user.clone());
    Ok(RunPlan { episodes, concurrency: args.concurrency, json: args.json, llm, llm_args, user_args, otlp })
}

/// What `toolenv host` asks the server to plan.
pub(crate) fn host(args: &HostArgs) -> anyhow::Result<pb::CreateRunRequest> {
    let grid = grid(&args.grid, args.labels.clone(), Server::Remote, "--label")?;
    Ok(pb::CreateRunRequest {
        description: if args.description.is_empty() { super::command_line() } else { args.description.clone() },
        agents: grid.agents,
        preset: String::new(),
        epsilons: grid.epsilons,
        fault_profiles: grid.fault_profiles,
        trials: grid.trials,
        seed: grid.seed,
        seeds: grid.seeds,
        domain: args.filter.domain.map_or(pb::Domain::Unspecified, |d| Domain::from(d).into()).into(),
        level: args.filter.level.map_or(0, u32::from),
        fault_delivery: grid.fault_delivery.into(),
        time_scale: grid.time_scale,
        lease_timeout_ms: args.lease_timeout_secs.saturating_mul(1000),
        roles: args.roles.iter().map(|name| pb::Role::from(&toolenv_core::RoleSpec::standard(name))).collect(),
        suite: args.filter.suite().to_string(),
    })
}

/// The episode `toolenv play` or `toolenv mcp` asks for: its
/// configuration is checked as a grid of one, for the agent labelled `agent`.
pub(crate) fn episode(args: &EpisodeArgs, agent: &str, task_id: &str, server: Server) -> anyhow::Result<pb::CreateEpisodeRequest> {
    let delivery = &args.delivery;
    let configuration = Grid {
        epsilons: vec![args.epsilon],
        fault_profiles: args.faults.iter().cloned().collect(),
        time_scale: Some(delivery.time_scale),
        ..Grid::single(vec![agent.to_owned()])
    };
    configuration.validate(|name| server.knows_profile(name)).map_err(|error| flagged(error, "--agent"))?;
    // A MAS-FIRE label (`mas:NAME@RATE`) is the episode's MAS-FIRE profile, as in a grid.
    let labelled = args.faults.as_deref().and_then(toolenv_runs::masfire::wire_profile);
    let flagged_mas = mas_profile(&delivery.mas_faults, delivery)?.map(|p| pb::MasFaultProfile::from(&p));
    if labelled.is_some() && flagged_mas.is_some() {
        anyhow::bail!(
            "--faults {} and --mas-faults both name MAS-FIRE faults: give one of them",
            args.faults.as_deref().unwrap_or_default()
        );
    }
    Ok(pb::CreateEpisodeRequest {
        task_id: task_id.to_owned(),
        seed: args.seed,
        trial: args.trial,
        epsilon: args.epsilon,
        fault_profile: args.faults.as_ref().filter(|_| labelled.is_none()).map(|name| pb::FaultProfile {
            name: name.clone(),
            only: args.only.clone(),
            ..Default::default()
        }),
        fault_delivery: delivery_of(delivery.in_band).into(),
        time_scale: Some(delivery.time_scale),
        roles: Vec::new(),
        mas_faults: labelled.or(flagged_mas),
    })
}

/// The grid the flags describe for these agent labels, validated.
fn grid(args: &GridArgs, agents: Vec<String>, server: Server, agents_flag: &str) -> anyhow::Result<Grid> {
    let mut grid = match args.grid {
        Some(GridPreset::Paper) => Grid::paper(agents),
        Some(GridPreset::Ablation) => Grid::ablation(agents),
        Some(GridPreset::MasFire) => Grid::mas_fire(agents),
        None => Grid { epsilons: args.epsilons.clone(), fault_profiles: args.faults.clone(), trials: args.trials, ..Grid::single(agents) },
    };
    let delivery = &args.delivery;
    if !delivery.mas_faults.is_empty() {
        // Each MAS-FIRE fault type its own profile, measured against the fault-free one.
        if !grid.fault_profiles.iter().any(|p| p == toolenv_runs::masfire::BASELINE_PROFILE) {
            grid.fault_profiles.insert(0, toolenv_runs::masfire::BASELINE_PROFILE.to_owned());
        }
        for name in &delivery.mas_faults {
            let profile = mas_profile(std::slice::from_ref(name), delivery)?;
            grid.fault_profiles.extend(profile.map(|p| p.label()));
        }
    }
    grid.seed = args.seed;
    grid.seeds = args.seeds;
    grid.fault_delivery = delivery_of(delivery.in_band);
    grid.time_scale = Some(delivery.time_scale);
    grid.validate(|name| server.knows_profile(name)).map_err(|error| flagged(error, agents_flag))?;
    Ok(grid)
}

fn delivery_of(in_band: bool) -> pb::FaultDelivery {
    if in_band { pb::FaultDelivery::InBand } else { pb::FaultDelivery::Status }
}

/// A grid error with the flag that set the refused value.
fn flagged(error: GridError, agents_flag: &str) -> anyhow::Error {
    let flag = match &error {
        GridError::NoAgents | GridError::AgentLabel(_) => agents_flag,
        GridError::NoEpsilons | GridError::Epsilon(_) => "--epsilon",
        GridError::FaultProfile(_) => "--faults",
        GridError::Trials(_) => "--trials",
        GridError::TimeScale(_) => "--time-scale",
        GridError::Seeds(_) => "--seeds",
        GridError::MasProfile(_) => "--faults",
    };
    anyhow::Error::new(error).context(format!("invalid {flag}"))
}

/// The MAS-FIRE profile of `faults` at `--mas-rate` (else `default_rate`)
/// for `--mas-roles`; `None` without faults.
fn mas_profile(faults: &[String], delivery: &DeliveryArgs) -> anyhow::Result<Option<toolenv_core::masfire::MasProfile>> {
    if faults.is_empty() {
        return Ok(None);
    }
    let rate = delivery.mas_rate;
    let mut profile =
        toolenv_core::masfire::MasProfile::new(faults, rate).map_err(|e| anyhow::Error::new(e).context("invalid --mas-faults"))?;
    profile.roles = delivery.mas_roles.clone();
    profile.validate().map_err(|e| anyhow::Error::new(e).context("invalid --mas-roles"))?;
    Ok(Some(profile))
}
