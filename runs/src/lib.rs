//! Runs of the suite: the grid a run plays ([`Grid`] → [`PlannedEpisode`]s),
//! the metrics of its results ([`metrics`]) and the paper-shaped reports
//! ([`report`], [`html`], [`compare`], [`otlp`]). Pure: what keeps runs
//! across processes is `toolenv-store`, a floor up.
//!
//! Shared by the command-line tool, which plays runs with built-in agents,
//! and the server, which hosts runs as work queues for external workers.
#![forbid(unsafe_code)]

pub mod attribution;
pub mod attribution_score;
pub mod compare;
pub mod cost;
pub mod fork;
pub mod html;
pub mod masfire;
pub mod metrics;
pub mod otlp;
pub mod report;
pub mod taskfiles;

use toolenv::pb;
use toolenv_core::chaos::FaultProfile;

/// One planned episode of a run: who plays, and the episode to create.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedEpisode {
    /// The agent's label: a built-in agent's name, or whatever an external
    /// worker's agent is called (a model name, say).
    pub agent: String,
    /// The episode (task, seed, trial, ε, fault profile, delivery, time scale).
    pub request: pb::CreateEpisodeRequest,
    /// The fault profile's name for reports ("none" without faults).
    pub fault_profile: String,
    /// The fault level λ for the surface (ablations sit at their profile's
    /// λ); NaN when unknown, which keeps the episode off the surface.
    pub lambda: f64,
}

impl PlannedEpisode {
    /// The result of this episode when it could not be played to a verdict
    /// for a reason outside the agent (the server or the network).
    pub fn infra_error(&self, reason: String) -> metrics::EpisodeResult {
        metrics::EpisodeResult::planned(self, metrics::EpisodeOutcome::InfraError(reason))
    }

    /// The result of this episode from its trajectory, with the usage the
    /// agent reported (if any) as its tokens and cost
    /// ([`metrics::EpisodeResult::from_wire`]). A trajectory this version
    /// cannot read (a fault kind it does not know) is an infrastructure
    /// error: the episode was played, but cannot be scored here.
    pub fn result(&self, trajectory: &pb::Trajectory) -> metrics::EpisodeResult {
        metrics::EpisodeResult::from_wire(self, trajectory)
            .unwrap_or_else(|error| self.infra_error(format!("unreadable trajectory: {error}")))
    }
}

/// One recorded episode of a run, as a store keeps it (`toolenv-store`).
#[derive(Debug, Clone, PartialEq)]
pub struct StoredEpisode {
    /// Its index in the run's plan.
    pub plan_index: usize,
    /// The run's session (1 for the first process, 2 after one resume, …) that played it.
    pub session: u32,
    /// Infrastructure errors this row replaced (attempts before the recorded one).
    pub replaced_infra_errors: u32,
    /// Its result.
    pub result: metrics::EpisodeResult,
    /// Its trajectory, when it reached the server's.
    pub trajectory: Option<pb::Trajectory>,
}

/// A trajectory as readable JSON ([`pb::Trajectory::to_json`]): what
/// `toolenv play --json` prints and `toolenv export` writes; a judged one's
/// verdict has the fault ledger by kind (`faults_by_kind`, the same ledger
/// as a run's records), whose sums are its `fault_stats`.
pub fn trajectory_json(trajectory: &pb::Trajectory) -> serde_json::Value {
    let mut json = trajectory.to_json();
    if let (Some(verdict), Ok(calls)) =
        (json.get_mut("verdict").and_then(serde_json::Value::as_object_mut), metrics::ledger_calls(trajectory))
    {
        let kinds = metrics::fault_ledger(&calls);
        verdict.insert("faults_by_kind".to_owned(), serde_json::to_value(kinds).unwrap_or_default());
    }
    json
}

/// The paper's ablation profiles, each at λ = 0.2 (Table 9).
pub const ABLATION_PROFILES: [&str; 4] = ["timeout-only", "rate-limit-only", "partial-response-only", "mixed"];

/// Most trials per configuration of a grid (the largest k of pass^k).
pub const MAX_TRIALS: u32 = 100;

/// Most perturbation samples (seeds) per task a grid may draw.
pub const MAX_SEEDS: u32 = 1000;

/// Longest agent label, in bytes.
pub const MAX_LABEL: usize = 100;

/// The time scales an episode accepts: real milliseconds per simulated
/// millisecond of fault delays, from 0 (never sleep) to 1000.
pub const TIME_SCALE_RANGE: std::ops::RangeInclusive<f64> = 0.0..=1000.0;

/// Checks a time scale against [`TIME_SCALE_RANGE`]: the one check every
/// place that takes a time scale (episodes, grids, the server's default) uses.
pub fn check_time_scale(time_scale: f64) -> Result<f64, GridError> {
    if TIME_SCALE_RANGE.contains(&time_scale) { Ok(time_scale) } else { Err(GridError::TimeScale(time_scale)) }
}

/// Why a grid (or one of its values) was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GridError {
    /// The grid names no agent.
    #[error("a grid needs at least one agent")]
    NoAgents,
    /// An agent label is empty, too long or not printable.
    #[error("an agent label is 1 to {MAX_LABEL} printable characters, got {0:?}")]
    AgentLabel(String),
    /// The grid has no perturbation level.
    #[error("a grid needs at least one perturbation level ε")]
    NoEpsilons,
    /// An ε is not a perturbation level.
    #[error(transparent)]
    Epsilon(#[from] toolenv_core::phrasing::EpsilonError),
    /// A fault profile name is neither a preset, an ablation nor a named profile.
    #[error(transparent)]
    FaultProfile(#[from] toolenv_core::chaos::ProfileError),
    /// Trials outside 1 to [`MAX_TRIALS`].
    #[error("trials must be 1 to {MAX_TRIALS}, got {0}")]
    Trials(u32),
    /// A time scale outside [`TIME_SCALE_RANGE`].
    #[error("time scale {0} is not within [0, 1000] (real milliseconds per simulated millisecond)")]
    TimeScale(f64),
    /// Seeds per task outside 1 to [`MAX_SEEDS`].
    #[error("seeds must be 1 to {MAX_SEEDS}, got {0}")]
    Seeds(u32),
    /// A `mas:` fault profile name that is not a valid MAS-FIRE profile.
    #[error(transparent)]
    MasProfile(#[from] toolenv_core::masfire::MasProfileError),
}

impl GridError {
    /// The request field the problem is about, as `CreateRunRequest` names it.
    pub fn field(&self) -> &'static str {
        match self {
            GridError::NoAgents | GridError::AgentLabel(_) => "agents",
            GridError::NoEpsilons | GridError::Epsilon(_) => "epsilons",
            GridError::FaultProfile(_) | GridError::MasProfile(_) => "fault_profiles",
            GridError::Trials(_) => "trials",
            GridError::TimeScale(_) => "time_scale",
            GridError::Seeds(_) => "seeds",
        }
    }
}

/// A grid of episodes: agents × ε × fault profiles × tasks × trials.
#[derive(Debug, Clone, PartialEq)]
pub struct Grid {
    /// Agent labels.
    pub agents: Vec<String>,
    /// Perturbation levels ε.
    pub epsilons: Vec<f64>,
    /// Fault profile names (presets, ablations or named profiles); empty
    /// for no faults.
    pub fault_profiles: Vec<String>,
    /// Trials per configuration: the k of pass^k.
    pub trials: u32,
    /// The first seed; trials of a configuration share their seed and
    /// differ by their index.
    pub seed: u64,
    /// Perturbation samples per task: seeds `seed`, `seed + 1`, … each give
    /// the task another perturbed description (and fault schedule), and each
    /// is its own unit of pass^k, so ε cells are not measured on one fixed
    /// text per task.
    pub seeds: u32,
    /// How faults reach the agent.
    pub fault_delivery: pb::FaultDelivery,
    /// Real milliseconds per simulated millisecond of fault delays; `None`
    /// for the server's default.
    pub time_scale: Option<f64>,
}

impl Grid {
    /// One configuration: ε 0, no faults, one trial.
    pub fn single(agents: Vec<String>) -> Grid {
        Grid {
            agents,
            epsilons: vec![0.0],
            fault_profiles: Vec::new(),
            trials: 1,
            seed: 0,
            seeds: 1,
            fault_delivery: pb::FaultDelivery::Status,
            time_scale: None,
        }
    }

    /// The paper's main grid: ε 0, 0.1, 0.2 × λ 0.0, 0.2 × 2 trials.
    pub fn paper(agents: Vec<String>) -> Grid {
        Grid { epsilons: vec![0.0, 0.1, 0.2], fault_profiles: vec!["0.0".into(), "0.2".into()], trials: 2, ..Grid::single(agents) }
    }

    /// The paper's ablation grid: one fault type at a time, and mixed, at
    /// λ = 0.2 × 2 trials.
    pub fn ablation(agents: Vec<String>) -> Grid {
        Grid { fault_profiles: ABLATION_PROFILES.map(String::from).to_vec(), trials: 2, ..Grid::single(agents) }
    }

    /// Checks every value of the grid, so that a bad one is refused before
    /// any episode is played: agent labels, ε levels, fault profile names
    /// (presets and ablations, or names `is_named_profile` accepts), trials
    /// and time scale.
    pub fn validate(&self, is_named_profile: impl Fn(&str) -> bool) -> Result<(), GridError> {
        if self.agents.is_empty() {
            return Err(GridError::NoAgents);
        }
        if let Some(label) =
            self.agents.iter().find(|label| label.trim().is_empty() || label.len() > MAX_LABEL || label.chars().any(char::is_control))
        {
            return Err(GridError::AgentLabel(label.clone()));
        }
        if self.epsilons.is_empty() {
            return Err(GridError::NoEpsilons);
        }
        for &epsilon in &self.epsilons {
            toolenv_core::phrasing::Level::from_epsilon(epsilon)?;
        }
        for name in self.fault_profiles.iter().filter(|name| !is_named_profile(name)) {
            if masfire::is_mas(name) {
                masfire::check_label(name)?;
            } else {
                toolenv_core::chaos::FaultProfile::preset(name)?;
            }
        }
        if !(1..=MAX_TRIALS).contains(&self.trials) {
            return Err(GridError::Trials(self.trials));
        }
        if !(1..=MAX_SEEDS).contains(&self.seeds) {
            return Err(GridError::Seeds(self.seeds));
        }
        if let Some(time_scale) = self.time_scale {
            check_time_scale(time_scale)?;
        }
        Ok(())
    }

    /// The grid's episodes over the given tasks, in the order agents × ε ×
    /// profiles × tasks × seeds × trials.
    pub fn plan<'a>(&self, task_ids: impl IntoIterator<Item = &'a str> + Clone) -> Vec<PlannedEpisode> {
        let profiles: Vec<Option<&str>> =
            if self.fault_profiles.is_empty() { vec![None] } else { self.fault_profiles.iter().map(|p| Some(p.as_str())).collect() };
        let mut plan = Vec::new();
        for agent in &self.agents {
            for &epsilon in &self.epsilons {
                for &profile in &profiles {
                    for task_id in task_ids.clone() {
                        for (seed, trial) in (0..self.seeds).flat_map(|s| (0..self.trials).map(move |t| (s, t))) {
                            plan.push(PlannedEpisode {
                                agent: agent.clone(),
                                request: pb::CreateEpisodeRequest {
                                    task_id: task_id.to_owned(),
                                    seed: self.seed.wrapping_add(u64::from(seed)),
                                    trial,
                                    epsilon,
                                    fault_profile: profile
                                        .filter(|name| !masfire::is_mas(name))
                                        .map(|name| pb::FaultProfile { name: name.to_owned(), ..Default::default() }),
                                    fault_delivery: self.fault_delivery.into(),
                                    time_scale: self.time_scale,
                                    roles: Vec::new(),
                                    mas_faults: profile.and_then(masfire::wire_profile),
                                },
                                fault_profile: profile.unwrap_or("none").to_owned(),
                                lambda: profile.map_or(0.0, |name| if masfire::is_mas(name) { f64::NAN } else { lambda_of(name) }),
                            });
                        }
                    }
                }
            }
        }
        plan
    }
}

/// The paper's fault intensities λ (Appendix B), whose presets are named by them.
pub const LAMBDA_LEVELS: [f64; 4] = [0.0, 0.1, 0.2, 0.3];

/// The fault intensity λ of a fault profile: the level of the paper's
/// Appendix B table whose preset has the profile's failure rate, so that
/// `0.2`, `lambda-0.2` and the ablations at its rate (`timeout-only`, …,
/// `mixed`) are all λ = 0.2. Unknown (NaN, kept off the surface) for a
/// profile that is not a preset: its rate is not one of the table's.
pub fn lambda_of(profile: &str) -> f64 {
    let Ok(profile) = FaultProfile::preset(profile) else { return f64::NAN };
    LAMBDA_LEVELS
        .into_iter()
        .find(|level| FaultProfile::preset(&level.to_string()).is_ok_and(|preset| preset.failure_rate == profile.failure_rate))
        .unwrap_or(f64::NAN)
}

/// The k of pass^k of a plan: its number of trials.
pub fn trials_of(plan: &[PlannedEpisode]) -> u32 {
    plan.iter().map(|p| p.request.trial + 1).max().unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_paper_grids_have_the_papers_sizes() {
        let tasks: Vec<&str> = toolenv_domains::suite().iter().map(|t| t.id.as_str()).collect();
        let paper = Grid::paper(vec!["a".into(), "b".into()]).plan(tasks.iter().copied());
        assert_eq!(paper.len(), 2 * 3 * 2 * tasks.len() * 2);
        assert_eq!(Grid::ablation(vec!["a".into()]).plan(tasks.iter().copied()).len(), 4 * tasks.len() * 2);
        assert_eq!(trials_of(&paper), 2);
        let last = paper.last().unwrap();
        assert_eq!((last.agent.as_str(), last.request.epsilon, last.fault_profile.as_str(), last.lambda), ("b", 0.2, "0.2", 0.2));
        assert_eq!(paper[0].fault_profile, "0.0");
        let single = Grid::single(vec!["a".into()]).plan(tasks.iter().copied());
        assert_eq!(
            (single.len(), single[0].fault_profile.as_str(), single[0].request.fault_profile.is_none()),
            (tasks.len(), "none", true)
        );
    }

    #[test]
    fn validation_refuses_each_bad_value_and_names_its_field() {
        let good = Grid::paper(vec!["a".into()]);
        assert_eq!(good.validate(|_| false), Ok(()));
        assert_eq!(Grid::ablation(vec!["a".into()]).validate(|_| false), Ok(()));
        let refused = |grid: Grid| grid.validate(|name| name == "mine").unwrap_err();
        let cases = [
            (Grid { agents: vec![], ..good.clone() }, "agents", "a grid needs at least one agent"),
            (Grid { agents: vec![" ".into()], ..good.clone() }, "agents", "an agent label is 1 to 100 printable characters, got \" \""),
            (Grid { epsilons: vec![], ..good.clone() }, "epsilons", "a grid needs at least one perturbation level ε"),
            (
                Grid { epsilons: vec![0.0, 0.5], ..good.clone() },
                "epsilons",
                "epsilon 0.5 is not a perturbation level: use 0, 0.1, 0.2 or 0.3",
            ),
            (Grid { fault_profiles: vec!["0.2".into(), "0.7".into()], ..good.clone() }, "fault_profiles", "unknown fault profile '0.7'"),
            (Grid { trials: 0, ..good.clone() }, "trials", "trials must be 1 to 100, got 0"),
            (Grid { trials: 101, ..good.clone() }, "trials", "trials must be 1 to 100, got 101"),
            (Grid { seeds: 0, ..good.clone() }, "seeds", "seeds must be 1 to 1000, got 0"),
            (Grid { time_scale: Some(-1.0), ..good.clone() }, "time_scale", "time scale -1 is not within [0, 1000]"),
            (Grid { time_scale: Some(f64::NAN), ..good.clone() }, "time_scale", "time scale NaN is not within"),
        ];
        for (grid, field, message) in cases {
            let error = refused(grid);
            assert_eq!(error.field(), field, "{error}");
            assert!(error.to_string().starts_with(message), "{error} does not start with {message}");
        }
        let named = Grid { fault_profiles: vec!["mine".into(), "mixed".into()], time_scale: Some(1000.0), ..good.clone() };
        assert_eq!(named.validate(|name| name == "mine"), Ok(()));
        assert!(named.validate(|_| false).is_err(), "a named profile is known only to whoever names it");
        assert_eq!(check_time_scale(0.0), Ok(0.0));
        assert_eq!(check_time_scale(1000.5), Err(GridError::TimeScale(1000.5)));
    }

    #[test]
    fn lambda_is_known_for_presets_and_ablations_only() {
        assert_eq!(lambda_of("0.3"), 0.3);
        assert_eq!(lambda_of("lambda-0.1"), 0.1);
        assert_eq!(lambda_of("rate-limit-only"), 0.2);
        assert_eq!(lambda_of("0"), 0.0);
        assert_eq!(lambda_of("mixed"), 0.2);
        assert!(lambda_of("my-profile").is_nan());
        // A number is not a profile: only presets have a λ.
        assert!(lambda_of("0.5").is_nan());
    }

    #[test]
    fn several_seeds_per_task_are_each_a_unit_of_pass_k() {
        let grid = Grid { seeds: 3, trials: 2, seed: 10, ..Grid::single(vec!["a".into()]) };
        let plan = grid.plan(["travel/cheapest-flight/001"]);
        let seeds: Vec<(u64, u32)> = plan.iter().map(|p| (p.request.seed, p.request.trial)).collect();
        assert_eq!(seeds, [(10, 0), (10, 1), (11, 0), (11, 1), (12, 0), (12, 1)]);
        // Seed 10 passes both trials, 11 one, 12 none: pass^2 is the mean over the three units.
        let results: Vec<metrics::EpisodeResult> = plan
            .iter()
            .map(|p| {
                let passed = p.request.seed == 10 || (p.request.seed == 11 && p.request.trial == 0);
                p.result(&pb::Trajectory {
                    task_id: p.request.task_id.clone(),
                    seed: p.request.seed,
                    trial: p.request.trial,
                    verdict: Some(pb::Verdict { passed, ..Default::default() }),
                    ..Default::default()
                })
            })
            .collect();
        let pass_2 = metrics::pass_hat_k(&results, 2, metrics::InfraConvention::CountAsFailure).unwrap();
        assert_eq!((pass_2.tasks, pass_2.value.map(|v| v.to_f64())), (3, Some(1.0 / 3.0)));
    }
}
