//! `toolenv run`: play a plan's episodes with built-in agents, record each
//! in the store as it ends, and show the results. A single configuration
//! and a grid take the same path; only the rendering differs
//! ([`render::Shape`]).

use std::path::Path;
use std::process::ExitCode;

use anyhow::bail;
use toolenv::pb;
use toolenv_client::Client;
use toolenv_runs::PlannedEpisode;
use toolenv_runs::metrics::{EpisodeOutcome, EpisodeResult};
use toolenv_runs::report::counted;
use toolenv_store::{AnyStore, RunId, StoreError};

use super::otlp;
use super::plan::{Episodes, RunPlan};
use super::render::{self, PlayedEpisode, Shape};

/// Runs the plan: a new run of its grid, or the rest of a stored run.
pub(crate) async fn run(client: &mut Client, plan: RunPlan) -> anyhow::Result<ExitCode> {
    match &plan.episodes {
        Episodes::New { grid, tasks, store } => {
            let listed = client.list_suite_tasks(&tasks.suite.to_string(), tasks.domain, tasks.level).await?;
            if listed.is_empty() {
                bail!("no task matches the filter");
            }
            let episodes = grid.plan(listed.iter().map(|t| t.id.as_str()));
            let mut recording = match &store {
                Some(path) => Some(Recording::create(path, &episodes)?),
                None => None,
            };
            let exporter = plan.otlp.clone().map(otlp::Exporter::start).transpose()?;
            let run_id = recording.as_ref().map_or_else(|| "unstored".to_owned(), |r| r.run.to_string());
            let played = play_episodes(client, &episodes, plan.concurrency, &plan.llm, |index, result, trajectory| {
                if let Some(recording) = &mut recording {
                    recording.record(index, result, trajectory);
                }
                if let Some(exporter) = &exporter {
                    exporter.send(&run_id, index, episodes.get(index), result, trajectory);
                }
            })
            .await;
            if let Some(exporter) = exporter {
                exporter.finish().await;
            }
            render::results(client.tasks(), &played, Shape::of(&episodes), plan.json)?;
            let stored = match recording {
                Some(recording) => recording.finish()?,
                None => ExitCode::SUCCESS,
            };
            Ok(all_infra_errors(&played).unwrap_or(stored))
        }
        Episodes::Resume { run, store } => resume(client, store, run, &plan).await,
    }
}

/// Continues a stored run: plays its pending episodes, then shows the results of all of them.
async fn resume(client: &Client, path: &Path, run: &str, plan: &RunPlan) -> anyhow::Result<ExitCode> {
    let (concurrency, json) = (plan.concurrency, plan.json);
    let store = AnyStore::open_existing(path)?;
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
    let episodes: Vec<PlannedEpisode> = pending.iter().map(|(_, planned)| planned.clone()).collect();
    let llm = super::llm::agents(episodes.iter().map(|e| e.agent.as_str()), &plan.llm_args, &plan.user_args)?;
    let exporter = plan.otlp.clone().map(otlp::Exporter::start).transpose()?;
    let run_id = run.to_string();
    let mut recording = Recording { store, run, error: None, recorded: 0 };
    play_episodes(client, &episodes, concurrency, &llm, |index, result, trajectory| {
        recording.record(pending[index].0, result, trajectory);
        if let Some(exporter) = &exporter {
            exporter.send(&run_id, pending[index].0, episodes.get(index), result, trajectory);
        }
    })
    .await;
    if let Some(exporter) = exporter {
        exporter.finish().await;
    }
    eprintln!("played {} in this session", counted(episodes.len() as u64, "episode"));
    let plan = recording.store.plan(&recording.run)?;
    let played: Vec<PlayedEpisode> = recording
        .store
        .episodes(&recording.run)?
        .into_iter()
        .filter_map(|stored| {
            let planned = plan.get(stored.plan_index)?;
            Some(PlayedEpisode::new(planned, stored.result, stored.trajectory.as_ref()))
        })
        .collect();
    render::results(client.tasks(), &played, Shape::of(&plan), json)?;
    let stored = recording.finish()?;
    Ok(all_infra_errors(&played).unwrap_or(stored))
}

/// Exit status 3, with a line saying why, when every episode ended in an
/// infrastructure error: the run measured nothing about the agent.
fn all_infra_errors(played: &[PlayedEpisode]) -> Option<ExitCode> {
    let errors: Vec<&str> = played
        .iter()
        .map(|p| match &p.result.outcome {
            EpisodeOutcome::InfraError(message) => Some(message.as_str()),
            _ => None,
        })
        .collect::<Option<_>>()?;
    let first = errors.first()?;
    eprintln!("error: all {} episodes ended in an infrastructure error, so the run measured nothing; the first: {first}", errors.len());
    Some(ExitCode::from(3))
}

/// Plays planned episodes concurrently with a progress bar; returns them as
/// played, in plan order, calling `on_result` as each ends (to record it).
async fn play_episodes(
    client: &Client,
    plan: &[PlannedEpisode],
    concurrency: usize,
    llm: &toolenv_agents::llm::LlmAgents,
    mut on_result: impl FnMut(usize, &EpisodeResult, Option<&pb::Trajectory>),
) -> Vec<PlayedEpisode> {
    let bar = render::progress_bar(plan.len() as u64, "episodes");
    let (mut passed, mut infra) = (0u64, 0u64);
    let mut played: Vec<Option<PlayedEpisode>> = vec![None; plan.len()];
    let results = toolenv_client::run_plan(client, plan, concurrency, &|label| llm.agent(label), |index, result, trajectory| {
        on_result(index, result, trajectory);
        played[index] = Some(PlayedEpisode::new(&plan[index], result.clone(), trajectory));
        passed += u64::from(result.outcome == EpisodeOutcome::Passed);
        infra += u64::from(result.is_infra_error());
        bar.inc(1);
        bar.set_message(format!("{passed} passed, {}", counted(infra, "infrastructure error")));
    })
    .await;
    bar.finish_and_clear();
    // `run_plan` returns every planned episode; one that never reached
    // `on_result` (its task panicked) is an infrastructure error there.
    played
        .into_iter()
        .zip(results)
        .zip(plan)
        .map(|((played, result), planned)| played.unwrap_or_else(|| PlayedEpisode::new(planned, result, None)))
        .collect()
}

/// A run being recorded in the store as its episodes finish.
struct Recording {
    store: AnyStore,
    run: RunId,
    /// The first failure to record, reported when the run ends; playing goes on.
    error: Option<StoreError>,
    recorded: u64,
}

impl Recording {
    /// Stores a new run of `plan` and says how to resume it.
    fn create(path: &Path, plan: &[PlannedEpisode]) -> anyhow::Result<Recording> {
        let store = AnyStore::open(path)?;
        let run = store.create_run(plan, &super::command_line())?;
        eprintln!("run {run}: {}; resume with `toolenv run --resume {run}{}`", counted(plan.len() as u64, "episode"), store_flag(path));
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
        let location = self.store.location();
        let path = Path::new(&location);
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
                store_flag(path)
            );
        }
        Ok(ExitCode::SUCCESS)
    }
}

/// ` --store PATH`, unless PATH is the default.
fn store_flag(path: &Path) -> String {
    if path == Path::new(toolenv_store::DEFAULT_PATH) { String::new() } else { format!(" --store {}", path.display()) }
}
