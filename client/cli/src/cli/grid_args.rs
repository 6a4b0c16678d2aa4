//! The arguments that configure episodes and grids (`--epsilon`, `--faults`,
//! delivery, trials and seeds), shared by `play`, `mcp`, `run` and `host`:
//! the commands (`args.rs`) flatten them in.

use clap::ValueEnum;

/// One episode's configuration (`play`, `mcp`).
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct EpisodeArgs {
    /// Episode seed.
    #[arg(long, default_value_t = 0)]
    pub(crate) seed: u64,
    /// Trial index.
    #[arg(long, default_value_t = 0)]
    pub(crate) trial: u32,
    /// Perturbation level ε of the description: 0, 0.1, 0.2 or 0.3.
    #[arg(long, default_value_t = 0.0)]
    pub(crate) epsilon: f64,
    /// Fault profile: a λ preset (0.0, 0.1, 0.2, 0.3), an ablation
    /// (timeout-only, rate-limit-only, partial-response-only, mixed) or a
    /// name from the server's profile file.
    #[arg(long, value_name = "PROFILE")]
    pub(crate) faults: Option<String>,
    /// Keep only these fault types of the profile (comma-separated, e.g.
    /// TransientTimeout,SoftRateLimit).
    #[arg(long, value_delimiter = ',', requires = "faults")]
    pub(crate) only: Vec<String>,
    #[command(flatten)]
    pub(crate) delivery: DeliveryArgs,
}

/// The MAS-FIRE fault rate of a profile, unless --mas-rate says: the
/// rate of MAS-FIRE's presets (and of the `mas-fire` grid).
pub(crate) const MAS_RATE: f64 = toolenv_core::masfire::PRESET_RATE;

/// How faults reach the agents (`play`, `run`, `host`, `mcp`): in-band or
/// as statuses, at what time scale, and which MAS-FIRE faults.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct DeliveryArgs {
    /// Deliver faults in-band, as error objects in OK replies (for `mcp`:
    /// in the tool's text result instead of as MCP tool errors, isError).
    #[arg(long)]
    pub(crate) in_band: bool,
    /// Real milliseconds per simulated millisecond of fault delays; the
    /// built-in agents need no real waiting, so 0 by default (then a
    /// client declares the waits it honours, e.g. an MCP call's `_meta`
    /// "toolenv/waited_ms").
    #[arg(long, default_value_t = 0.0)]
    pub(crate) time_scale: f64,
    /// MAS-FIRE fault types to inject (comma-separated); the help lists
    /// them (`help::command`).
    #[arg(long, value_delimiter = ',', value_name = "FAULT")]
    pub(crate) mas_faults: Vec<String>,
    /// Probability that each tool call, message or inbox read of a targeted
    /// agent meets one of the --mas-faults (prompt faults always apply):
    /// MAS-FIRE's rate, for one episode as for a grid.
    #[arg(long, requires = "mas_faults", default_value_t = MAS_RATE)]
    pub(crate) mas_rate: f64,
    /// Roles whose agents the --mas-faults target (comma-separated); all by default.
    #[arg(long, value_delimiter = ',', requires = "mas_faults")]
    pub(crate) mas_roles: Vec<String>,
}

#[derive(Debug, Clone, clap::Args)]
pub(crate) struct GridArgs {
    /// Perturbation levels ε (comma-separated): 0, 0.1, 0.2, 0.3.
    #[arg(long = "epsilon", value_delimiter = ',', default_value = "0")]
    pub(crate) epsilons: Vec<f64>,
    /// Fault profiles (comma-separated): λ presets (0.0, 0.1, 0.2, 0.3),
    /// ablations (timeout-only, rate-limit-only, partial-response-only,
    /// mixed) or names from the server's profile file. None by default.
    #[arg(long = "faults", value_delimiter = ',')]
    pub(crate) faults: Vec<String>,
    /// Trials per configuration: the k of pass^k.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub(crate) trials: u32,
    /// A preset grid, replacing --epsilon, --faults and --trials: "paper"
    /// (ε 0, 0.1, 0.2 × λ 0.0, 0.2 × 2 trials), "ablation"
    /// (timeout-only, rate-limit-only, partial-response-only, mixed × 2 trials)
    /// or "mas-fire" (0.0 and each MAS-FIRE fault type alone × 2 trials).
    #[arg(long, value_enum)]
    pub(crate) grid: Option<GridPreset>,
    /// Episode seed (trials of a configuration share it and differ by trial index).
    #[arg(long, default_value_t = 0)]
    pub(crate) seed: u64,
    /// Perturbation samples per task: seeds --seed, --seed + 1, … each give
    /// the task another perturbed description and fault schedule, each its
    /// own unit of pass^k.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub(crate) seeds: u32,
    #[command(flatten)]
    pub(crate) delivery: DeliveryArgs,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum GridPreset {
    /// The paper's main grid: ε 0, 0.1, 0.2 × λ 0.0, 0.2 × 2 trials.
    Paper,
    /// The paper's ablation grid at λ = 0.2: one fault type at a time, and mixed.
    Ablation,
    /// MAS-FIRE: the fault-free profile 0.0 and each of the 15 MAS-FIRE fault
    /// types alone (rate 0.3 on the planner and executor) × 2 trials; use it
    /// with team agents (team-pipeline, team-closed-loop).
    MasFire,
}
