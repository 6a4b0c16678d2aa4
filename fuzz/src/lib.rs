//! A fuzz harness that runs on the stable toolchain: structure-aware
//! mutations of valid inputs, driven through the same entry points the
//! server uses, with every panic caught and reported with its input.
//!
//! Targets ([`Target`]):
//! - `args`: argument text and tool names through `Episode::deliver_call`
//!   (argument decoding, validation and tool dispatch, under faults);
//! - `profiles`: fault profiles (the `--fault-profiles` JSON and custom
//!   figures), grids (`Grid::validate` and `plan`) and paraphrase files;
//! - `wire`: protobuf bytes decoded as each request and passed to the
//!   server's handlers in-process (validation, limits, conversions both
//!   ways), and trajectories decoded and read back as a run records them.
//!
//! `cargo test` runs each target for a bounded number of executions (the
//! end-to-end crate's `fuzz` tests); `toolenv-fuzz` runs them for as long as
//! asked (see docs/benchmarks.md).
#![forbid(unsafe_code)]

use std::collections::BTreeMap;
use std::panic::AssertUnwindSafe;

use prost::Message;
use toolenv::pb;
use toolenv::pb::runs_server::Runs as _;
use toolenv::pb::tool_env_server::ToolEnv as _;
use toolenv_core::{
    CallOptions, Episode,
    chaos::{Chaos, FaultProfile, PRESETS},
};
use toolenv_domains::{Finish, suite};

/// A fuzz target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// Argument decoding and tool dispatch.
    Args,
    /// Fault profiles, grids and paraphrase files.
    Profiles,
    /// Protobuf requests through the server's handlers.
    Wire,
}

impl Target {
    /// Every target.
    pub const ALL: [Target; 3] = [Target::Args, Target::Profiles, Target::Wire];

    /// The target's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Target::Args => "args",
            Target::Profiles => "profiles",
            Target::Wire => "wire",
        }
    }
}

/// A panic the harness caught: the target, the execution and its input.
#[derive(Debug, Clone)]
pub struct Crash {
    pub target: Target,
    pub execution: u64,
    pub message: String,
    pub input: String,
}

/// SplitMix64: a tiny deterministic generator (the harness needs speed and
/// reproducibility, not statistical quality).
#[derive(Debug, Clone)]
pub struct Gen(u64);

impl Gen {
    pub fn new(seed: u64) -> Self {
        Gen(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// A number below `n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }
    pub fn chance(&mut self, one_in: usize) -> bool {
        self.below(one_in) == 0
    }
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
    /// An interesting float: edge values more often than not.
    pub fn float(&mut self) -> f64 {
        const EDGES: [f64; 12] =
            [0.0, -0.0, 0.1, 0.2, 0.3, 1.0, -1.0, 1e300, f64::NAN, f64::INFINITY, f64::NEG_INFINITY, f64::MIN_POSITIVE];
        if self.chance(2) { *self.pick(&EDGES) } else { f64::from_bits(self.next_u64()) }
    }

    /// `seed`, mutated a few times: bytes flipped, inserted, deleted,
    /// duplicated, tokens spliced in, cut short.
    pub fn mutate(&mut self, seed: &[u8]) -> Vec<u8> {
        const TOKENS: [&[u8]; 16] = [
            b"\"",
            b"{",
            b"}",
            b"[",
            b"]",
            b",",
            b":",
            b"null",
            b"1e999",
            b"-0",
            b"\\u0000",
            b"\\ud800",
            b"\xff\xfe",
            "\u{10FFFF}".as_bytes(),
            b"\"date\": \"2026-01-01\"",
            b"{\"a\": 1, \"a\": 2}",
        ];
        let mut data = seed.to_vec();
        for _ in 0..=self.below(4) {
            let at = self.below(data.len() + 1);
            match self.below(7) {
                0 if !data.is_empty() => {
                    let i = at.min(data.len() - 1);
                    data[i] ^= 1 << self.below(8);
                }
                1 => data.insert(at, self.next_u64() as u8),
                2 if !data.is_empty() => {
                    let end = (at + 1 + self.below(8)).min(data.len());
                    data.drain(at.min(end)..end);
                }
                3 if !data.is_empty() => {
                    let start = self.below(data.len());
                    let end = (start + 1 + self.below(16)).min(data.len());
                    let piece = data[start..end].to_vec();
                    data.splice(at..at, piece);
                }
                4 => {
                    let token = self.pick(&TOKENS);
                    data.splice(at..at, token.iter().copied());
                }
                5 => data.truncate(at),
                _ => {
                    // A long run: limits and cuts.
                    let byte = *self.pick(b"x\"\\{[9");
                    let longest = if self.chance(50) { 70_000 } else { 300 };
                    let run = vec![byte; 1 + self.below(longest)];
                    data.splice(at..at, run);
                }
            }
        }
        data
    }
}

/// Runs `executions` of `target` from `seed`, catching panics; returns the
/// crashes (at most `max_crashes`).
pub fn run(target: Target, seed: u64, executions: u64, max_crashes: usize) -> Vec<Crash> {
    let mut crashes = Vec::new();
    let mut state = State::new(target, seed);
    for execution in 0..executions {
        let mut input = String::new();
        let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| state.step(&mut input)));
        if let Err(payload) = outcome {
            let message = payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_default();
            crashes.push(Crash { target, execution, message, input });
            if crashes.len() >= max_crashes {
                break;
            }
            state = State::new(target, seed.wrapping_add(execution));
        }
    }
    crashes
}

/// What a target keeps between executions.
struct State {
    target: Target,
    rng: Gen,
    /// Args: the episode played and the argument corpus.
    episode: Option<Episode>,
    calls: Vec<(&'static str, Vec<u8>)>,
    /// Profiles: profile texts.
    profiles: Vec<Vec<u8>>,
    /// Wire: the services, a runtime, encoded requests and trajectories.
    wire: Option<Wire>,
    executions: u64,
}

struct Wire {
    runtime: tokio::runtime::Runtime,
    env: toolenv_server::ToolEnvService,
    runs: toolenv_server::RunsService,
    /// (rpc, encoded request)
    corpus: Vec<(u8, Vec<u8>)>,
    trajectories: Vec<Vec<u8>>,
}

impl State {
    fn new(target: Target, seed: u64) -> Self {
        let calls = suite()
            .iter()
            .flat_map(|task| task.reference.iter().map(|call| (call.tool, call.arguments.to_string().into_bytes())))
            .collect();
        let mut profiles: Vec<Vec<u8>> =
            PRESETS.iter().filter_map(|name| FaultProfile::preset(name).ok()).filter_map(|p| serde_json::to_vec(&p).ok()).collect();
        profiles
            .push(br#"{"slow": {"failure_rate": 0.1, "fault_weights": {"TransientTimeout": 1.0}, "params": {"timeout_ms": 10}}}"#.to_vec());
        let wire = (target == Target::Wire).then(|| Wire::new(seed));
        State { target, rng: Gen::new(seed), episode: None, calls, profiles, wire, executions: 0 }
    }

    fn step(&mut self, input: &mut String) {
        self.executions += 1;
        match self.target {
            Target::Args => self.args(input),
            Target::Profiles => self.profiles(input),
            Target::Wire => self.wire(input),
        }
    }

    fn args(&mut self, input: &mut String) {
        let rng = &mut self.rng;
        if self.episode.as_ref().is_none_or(|e| e.verdict().is_some() || rng.chance(16)) {
            let task = rng.pick(suite());
            let profile = FaultProfile::preset(rng.pick::<&str>(&PRESETS)).unwrap_or_else(|_| FaultProfile::none());
            let chaos = Chaos::new(profile).unwrap_or_default();
            self.episode = Some(Episode::new(task, rng.next_u64(), rng.below(4) as u32).with_chaos(chaos));
        }
        let Some(episode) = self.episode.as_mut() else { return };
        let (tool, arguments) = rng.pick(&self.calls);
        let arguments = String::from_utf8_lossy(&rng.mutate(arguments)).into_owned();
        let tool = if rng.chance(10) { String::from_utf8_lossy(&rng.mutate(tool.as_bytes())).into_owned() } else { (*tool).to_owned() };
        let key = rng.chance(3).then(|| format!("k{}", rng.below(4)));
        let waited_ms = rng.chance(4).then(|| rng.next_u64() >> rng.below(64));
        *input = format!("task {} tool {tool:?} key {key:?} waited {waited_ms:?} arguments {arguments:?}", episode.task().id);
        let options = CallOptions { agent: None, idempotency_key: key.as_deref(), waited_ms, user_answer: None };
        let _ = episode.call_with(&tool, &arguments, &options);
        if rng.chance(12) {
            let verdict = episode.finish();
            let _ = toolenv::pb::Verdict::from(verdict);
            let _ = toolenv::pb::Trajectory::from(episode.trajectory()).to_json();
        }
    }

    fn profiles(&mut self, input: &mut String) {
        let rng = &mut self.rng;
        match rng.below(4) {
            0 => {
                let i = rng.below(self.profiles.len());
                let text = rng.mutate(&self.profiles[i]);
                let text = String::from_utf8_lossy(&text).into_owned();
                *input = format!("profile file {text:?}");
                let parsed = serde_json::from_str::<BTreeMap<String, FaultProfile>>(&text)
                    .map(|m| m.into_values().collect::<Vec<_>>())
                    .or_else(|_| serde_json::from_str::<FaultProfile>(&text).map(|p| vec![p]));
                for profile in parsed.into_iter().flatten() {
                    if profile.validate().is_ok()
                        && let Ok(chaos) = Chaos::new(profile)
                    {
                        let task = rng.pick(suite());
                        let mut episode = Episode::new(task, rng.next_u64(), 0).with_chaos(chaos);
                        for call in &task.reference {
                            let _ = episode.call_with(call.tool, &call.arguments.to_string(), &CallOptions::default());
                        }
                        let _ = episode.finish();
                    }
                }
            }
            1 => {
                let names = ["TransientTimeout", "HighLatency", "SchemaDrift", "Nope", "", "AmbiguousCommit"];
                let weights: BTreeMap<String, f64> = (0..rng.below(4)).map(|_| ((*rng.pick(&names)).to_owned(), rng.float())).collect();
                let rate = rng.float();
                *input = format!("custom rate {rate} weights {weights:?}");
                if let Ok(profile) = FaultProfile::custom(rate, &weights, Default::default()) {
                    let kinds = profile.fault_weights.keys().copied().take(rng.below(3)).collect::<Vec<_>>();
                    let _ = profile.restricted_to(&kinds).map(Chaos::new);
                }
            }
            2 => {
                let labels = ["reference", "", "a b", "x\u{0}", "é", "gpt-4o"];
                let mut grid = toolenv_runs::Grid::single((0..rng.below(3)).map(|_| (*rng.pick(&labels)).to_owned()).collect());
                grid.epsilons = (0..rng.below(3)).map(|_| rng.float()).collect();
                grid.fault_profiles = (0..rng.below(3)).map(|_| (*rng.pick(&PRESETS[..])).to_owned()).collect();
                if rng.chance(4) {
                    grid.fault_profiles.push("no-such".into());
                }
                grid.trials = rng.below(4) as u32;
                grid.seeds = rng.below(3) as u32;
                grid.time_scale = rng.chance(2).then(|| rng.float());
                *input = format!("grid {grid:?}");
                if grid.validate(|name| name == "slow").is_ok() {
                    let plan = grid.plan(suite().iter().take(2).map(|t| t.id.as_str()));
                    assert!(!plan.is_empty(), "a valid grid plans episodes");
                }
            }
            _ => {
                let seed = br#"{"scheduling/book-meeting/001": ["Book Review on 2026-01-01 at 09:00."]}"#;
                let text = String::from_utf8_lossy(&rng.mutate(seed)).into_owned();
                *input = format!("paraphrases {text:?}");
                let _ = toolenv_domains::perturb::ParaphraseBank::from_json(&text);
            }
        }
    }

    fn wire(&mut self, input: &mut String) {
        let Some(wire) = self.wire.as_mut() else { return };
        if self.executions.is_multiple_of(20_000) {
            // Fresh services now and then, so held episodes stay bounded.
            *wire = Wire::new(self.rng.next_u64());
        }
        let rng = &mut self.rng;
        if rng.chance(20) && !wire.trajectories.is_empty() {
            let i = rng.below(wire.trajectories.len());
            let bytes = rng.mutate(&wire.trajectories[i]);
            *input = format!("trajectory bytes {bytes:02x?}");
            if let Ok(trajectory) = pb::Trajectory::decode(bytes.as_slice()) {
                let _ = trajectory.to_json();
                let planned = toolenv_runs::Grid::single(vec!["a".into()]).plan([trajectory.task_id.as_str()]);
                if let Some(planned) = planned.first() {
                    let _ = planned.result(&trajectory);
                }
            }
            return;
        }
        let (rpc, seed) = rng.pick(&wire.corpus).clone();
        let bytes = rng.mutate(&seed);
        *input = format!("rpc {rpc} bytes {bytes:02x?}");
        let Wire { runtime, env, runs, corpus, trajectories } = wire;
        runtime.block_on(async {
            let bytes = bytes.as_slice();
            match rpc {
                0 => drop(pb::ListTasksRequest::decode(bytes).map(|r| env.list_tasks(tonic::Request::new(r)))),
                1 => {
                    if let Ok(r) = pb::GetTaskRequest::decode(bytes) {
                        let _ = env.get_task(tonic::Request::new(r)).await;
                    }
                }
                2 => {
                    if let Ok(r) = pb::CreateEpisodeRequest::decode(bytes)
                        && let Ok(reply) = env.create_episode(tonic::Request::new(r)).await
                    {
                        let id = reply.into_inner().episode_id;
                        remember(corpus, id);
                    }
                }
                3 => {
                    if let Ok(r) = pb::CallToolRequest::decode(bytes) {
                        let _ = env.call_tool(tonic::Request::new(r)).await;
                    }
                }
                4 => {
                    if let Ok(r) = pb::FinishEpisodeRequest::decode(bytes) {
                        let _ = env.finish_episode(tonic::Request::new(r)).await;
                    }
                }
                5 => {
                    if let Ok(r) = pb::GetTrajectoryRequest::decode(bytes)
                        && let Ok(reply) = env.get_trajectory(tonic::Request::new(r)).await
                        && trajectories.len() < 64
                    {
                        trajectories.push(reply.into_inner().encode_to_vec());
                    }
                }
                6 => {
                    if let Ok(r) = pb::CreateRunRequest::decode(bytes) {
                        // Keep plans small: the store writes every planned episode.
                        let size = [r.agents.len(), r.epsilons.len(), r.fault_profiles.len(), r.trials as usize, r.seeds as usize]
                            .iter()
                            .fold(20usize, |acc, &n| acc.saturating_mul(n.max(1)));
                        if size <= 2_000 {
                            let _ = runs.create_run(tonic::Request::new(r)).await;
                        }
                    }
                }
                7 => {
                    if let Ok(r) = pb::GetRunRequest::decode(bytes) {
                        let _ = runs.get_run(tonic::Request::new(r)).await;
                    }
                }
                8 => {
                    if let Ok(r) = pb::NextEpisodeRequest::decode(bytes) {
                        let _ = runs.next_episode(tonic::Request::new(r)).await;
                    }
                }
                9 => {
                    if let Ok(r) = pb::GetRunReportRequest::decode(bytes) {
                        let _ = runs.get_run_report(tonic::Request::new(r)).await;
                    }
                }
                10 => {
                    if let Ok(r) = pb::JoinEpisodeRequest::decode(bytes) {
                        let _ = env.join_episode(tonic::Request::new(r)).await;
                    }
                }
                11 => {
                    if let Ok(r) = pb::ForkEpisodeRequest::decode(bytes) {
                        let _ = env.fork_episode(tonic::Request::new(r)).await;
                    }
                }
                _ => {
                    if let Ok(r) = pb::CompareRunsRequest::decode(bytes) {
                        let _ = runs.compare_runs(tonic::Request::new(r)).await;
                    }
                }
            }
        });
    }
}

/// Adds requests naming a live episode to the corpus (bounded).
fn remember(corpus: &mut Vec<(u8, Vec<u8>)>, episode_id: String) {
    if corpus.len() > 400 {
        return;
    }
    let call = |tool: &str, arguments: &str| pb::CallToolRequest {
        episode_id: episode_id.clone(),
        tool_name: tool.to_owned(),
        arguments_json: arguments.to_owned(),
        idempotency_key: "k".into(),
        waited_ms: Some(10),
        ..Default::default()
    };
    corpus.push((3, call("check_calendar", r#"{"date": "2026-01-01"}"#).encode_to_vec()));
    corpus.push((3, call("book_meeting", r#"{"date": "2026-01-01", "time": "09:00", "topic": "Review"}"#).encode_to_vec()));
    let usage = pb::Usage { input_tokens: 5, output_tokens: 7, cost_usd: Some(0.01) };
    let answer = Some("The cheapest flight is FL-101.".to_owned());
    corpus.push((
        4,
        pb::FinishEpisodeRequest { episode_id: episode_id.clone(), usage: Some(usage), answer, ..Default::default() }.encode_to_vec(),
    ));
    corpus.push((10, pb::JoinEpisodeRequest { episode_id: episode_id.clone(), role: "executor".into() }.encode_to_vec()));
    corpus.push((11, pb::ForkEpisodeRequest { episode_id: episode_id.clone(), calls: 1, ..Default::default() }.encode_to_vec()));
    corpus.push((5, pb::GetTrajectoryRequest { episode_id }.encode_to_vec()));
}

impl Wire {
    fn new(seed: u64) -> Self {
        // Paused time: fault delays and long polls pass at once.
        let runtime = tokio::runtime::Builder::new_current_thread().enable_time().start_paused(true).build().expect("a runtime");
        let slow = FaultProfile::preset("0.3").unwrap_or_else(|_| FaultProfile::none());
        let config = toolenv_server::Config {
            max_episodes: 5_000,
            fault_profiles: BTreeMap::from([("slow".to_owned(), slow)]),
            ..toolenv_server::Config::default()
        };
        let (env, runs) = toolenv_server::in_process(config).expect("in-memory services");
        let mut corpus: Vec<(u8, Vec<u8>)> = vec![
            (0, pb::ListTasksRequest { domain: 2, level: 1, ..Default::default() }.encode_to_vec()),
            (
                0,
                pb::ListTasksRequest { domain: 3, level: 3, suite: "generated:7:3".into(), page_size: 2, ..Default::default() }
                    .encode_to_vec(),
            ),
            (1, pb::GetTaskRequest { task_id: "travel/cheapest-flight/001".into() }.encode_to_vec()),
            (9, pb::GetRunReportRequest { run_id: "run-0001".into(), exclude_infra_errors: true, feasible_only: true }.encode_to_vec()),
            (7, pb::GetRunRequest { run_id: "run-0001".into() }.encode_to_vec()),
            (
                8,
                pb::NextEpisodeRequest {
                    run_id: "run-0001".into(),
                    agent: "a".into(),
                    worker: "w".into(),
                    team_roles: vec!["planner".into()],
                    ..Default::default()
                }
                .encode_to_vec(),
            ),
            (
                12,
                pb::CompareRunsRequest { run_a: "run-0001".into(), agents: vec!["a".into(), "b".into()], ..Default::default() }
                    .encode_to_vec(),
            ),
        ];
        for (i, task) in suite().iter().enumerate().step_by(3) {
            let profile = pb::FaultProfile {
                name: if i % 2 == 0 { "0.2".into() } else { String::new() },
                failure_rate: if i % 2 == 0 { 0.0 } else { 0.3 },
                fault_weights: if i % 2 == 0 { Default::default() } else { [("SoftRateLimit".to_owned(), 1.0)].into_iter().collect() },
                only: Vec::new(),
                params: Some(pb::FaultParams { timeout_ms: Some(5), ..Default::default() }),
            };
            let request = pb::CreateEpisodeRequest {
                task_id: task.id.clone(),
                seed: seed ^ i as u64,
                trial: 1,
                epsilon: [0.0, 0.1, 0.2, 0.3][i % 4],
                fault_profile: Some(profile),
                fault_delivery: (i % 2) as i32,
                time_scale: Some(0.0),
                // Every third episode has a team, so joins and bus calls are reached.
                roles: match i % 3 {
                    0 => ["planner", "executor"].map(|r| pb::Role::from(&toolenv_core::RoleSpec::standard(r))).to_vec(),
                    _ => Vec::new(),
                },
                ..Default::default()
            };
            corpus.push((2, request.encode_to_vec()));
        }
        let run = pb::CreateRunRequest {
            description: "fuzz".into(),
            agents: vec!["a".into(), "b".into()],
            epsilons: vec![0.0, 0.2],
            fault_profiles: vec!["0.2".into(), "slow".into()],
            trials: 2,
            domain: 1,
            level: 1,
            lease_timeout_ms: 50,
            time_scale: Some(0.0),
            ..Default::default()
        };
        corpus.push((6, run.encode_to_vec()));
        Wire { runtime, env, runs, corpus, trajectories: Vec::new() }
    }
}
