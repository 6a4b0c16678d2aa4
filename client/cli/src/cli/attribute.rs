//! `toolenv attribute RUN` and `toolenv score-attribution PREDICTIONS --run RUN`:
//! counterfactual failure attribution of a stored run, its exports, and the
//! scoring of another method's predictions against it.

use std::io::Write as _;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context as _;
use toolenv_runs::attribution::{self, EpisodeAttribution};
use toolenv_runs::attribution_score::{self, Gold, Prediction, Taxonomy};
use toolenv_store::AnyStore;

use super::args::ReplayArgs;

/// The run's failed episodes, attributed; episodes that could not be are reported on stderr.
fn attributed(replay: &ReplayArgs, run: &str) -> anyhow::Result<(Vec<toolenv_store::StoredEpisode>, Vec<EpisodeAttribution>)> {
    let tasks = super::filter::catalogue(&replay.tasks)?;
    let store = AnyStore::open_existing(&replay.store.store)?;
    let run = store.find_run(run)?;
    let episodes = store.episodes(&run)?;
    let (attributed, unattributed) = attribution::attribute_run(&tasks, &episodes, replay.max_calls);
    for failed in &unattributed {
        eprintln!("episode #{} not attributed: {}", failed.plan_index, failed.error);
    }
    if needs_tasks(&unattributed) {
        eprintln!("(a task file's task: give the file with --tasks FILE|DIR)");
    }
    Ok((episodes, attributed))
}

/// Whether some episodes were not attributed for want of their task file.
pub(crate) fn needs_tasks(unattributed: &[attribution::Unattributed]) -> bool {
    unattributed.iter().any(|f| matches!(&f.error, toolenv_core::ForkError::UnknownTask(id) if id.contains('@')))
}

/// `toolenv attribute RUN`.
pub(crate) fn attribute(
    replay: &ReplayArgs,
    run: &str,
    json: bool,
    who_when: Option<&Path>,
    hypotheses: Option<&Path>,
) -> anyhow::Result<ExitCode> {
    let (episodes, attributed) = attributed(replay, run)?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    if json {
        for episode in &attributed {
            writeln!(out, "{}", episode.to_json())?;
        }
    } else {
        for e in &attributed {
            let a = &e.attribution;
            let step = match a.decisive_step {
                Some(s) if s == a.steps => format!("step {s} (the stop)"),
                Some(s) => format!("step {s}"),
                None => "infeasible from the start".to_owned(),
            };
            writeln!(
                out,
                "#{} {} [{}, faults {}, ε {}]: {step} of {} calls",
                e.plan_index, e.task_id, e.agent, e.fault_profile, e.epsilon, a.steps
            )?;
            for (party, error) in e.pairs() {
                let mast = error.mast.map_or("-", |m| m.name());
                writeln!(out, "    step {:>3}  {:<20} {:<7} {:<38} {}", error.step, party, mast, error.error.name(), error.reason)?;
            }
        }
        writeln!(out)?;
        write!(out, "{}", attribution::table(&attributed))?;
    }
    out.flush()?;
    let trajectory = |plan_index: usize| episodes.iter().find(|e| e.plan_index == plan_index).and_then(|e| e.trajectory.as_ref());
    if let Some(file) = who_when {
        let items: Vec<_> = attributed.iter().filter_map(|e| Some(attribution::who_when(e, trajectory(e.plan_index)?))).collect();
        std::fs::write(file, serde_json::to_string_pretty(&items)?).with_context(|| format!("writing {}", file.display()))?;
    }
    if let Some(file) = hypotheses {
        let mut writer = std::io::BufWriter::new(std::fs::File::create(file).with_context(|| format!("creating {}", file.display()))?);
        for e in &attributed {
            for line in attribution::hypotheses(e) {
                writeln!(writer, "{line}")?;
            }
        }
        writer.flush()?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `toolenv score-attribution PREDICTIONS --run RUN`.
pub(crate) fn score(
    replay: &ReplayArgs,
    run: &str,
    predictions: &Path,
    k: u32,
    toolenv_types: bool,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let text = std::fs::read_to_string(predictions).with_context(|| format!("reading {}", predictions.display()))?;
    let predictions: Vec<Prediction> = text
        .lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(i, line)| serde_json::from_str(line).with_context(|| format!("{} line {}", predictions.display(), i + 1)))
        .collect::<anyhow::Result<_>>()?;
    let (_, attributed) = attributed(replay, run)?;
    let taxonomy = if toolenv_types { Taxonomy::Toolenv } else { Taxonomy::Mast };
    let gold: Vec<Gold> = attributed.iter().map(|e| Gold::of(e, taxonomy)).collect();
    let s = attribution_score::score(&gold, &predictions, k);
    if json {
        println!("{}", serde_json::to_string_pretty(&s)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!("{} failed episodes scored ({} predictions for no failed episode ignored)", s.episodes, s.unmatched_predictions);
    println!(
        "accuracy: agent {:.3}  step {:.3}  step ±{} {:.3}  error {:.3}",
        s.agent_accuracy, s.step_accuracy, s.k, s.step_accuracy_within_k, s.error_accuracy
    );
    println!("{:<8} {:>8} {:>8} {:>8}   {:>8} {:>8} {:>8}", "level", "μP", "μR", "μF1", "MP", "MR", "MF1");
    for (name, level) in [("pair", s.pair), ("agent", s.agent), ("error", s.error)] {
        let (m, c) = (level.micro, level.macro_);
        println!("{name:<8} {:>8.3} {:>8.3} {:>8.3}   {:>8.3} {:>8.3} {:>8.3}", m.precision, m.recall, m.f1, c.precision, c.recall, c.f1);
    }
    Ok(ExitCode::SUCCESS)
}
