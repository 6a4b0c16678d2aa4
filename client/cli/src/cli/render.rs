//! What the commands print: tables for people, JSON behind `--json`, and
//! progress bars on stderr. Nothing here decides or fetches anything.

use toolenv::pb;
use toolenv_core::Domain;
use toolenv_domains::taskfile::Catalogue;
use toolenv_runs::PlannedEpisode;
use toolenv_runs::metrics::{EpisodeOutcome, EpisodeResult, InfraConvention, Population};
use toolenv_runs::report::counted;
use toolenv_runs::trials_of;
use toolenv_store::RunSummary;

/// One planned episode as played: its result, and what the tables show of
/// its trajectory (the trajectory itself goes to the store, not memory).
#[derive(Debug, Clone)]
pub(crate) struct PlayedEpisode {
    /// The planned episode's seed.
    pub(crate) seed: u64,
    pub(crate) result: EpisodeResult,
    /// The verdict's final state hash, when the episode reached one.
    pub(crate) final_state_hash: Option<String>,
    /// The names of the verdict's failed checks.
    pub(crate) failed_checks: Vec<String>,
}

impl PlayedEpisode {
    pub(crate) fn new(planned: &PlannedEpisode, result: EpisodeResult, trajectory: Option<&pb::Trajectory>) -> PlayedEpisode {
        let verdict = trajectory.and_then(|t| t.verdict.as_ref());
        PlayedEpisode {
            seed: planned.request.seed,
            result,
            final_state_hash: verdict.map(|v| v.final_state_hash.clone()),
            failed_checks: verdict.map_or_else(Vec::new, |v| v.checks.iter().filter(|c| !c.passed).map(|c| c.name.clone()).collect()),
        }
    }

    pub(crate) fn passed(&self) -> bool {
        self.result.outcome == EpisodeOutcome::Passed
    }
}

/// A progress bar on stderr over `len` things (`unit`: "episodes").
pub(crate) fn progress_bar(len: u64, unit: &str) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new(len);
    bar.set_style(
        indicatif::ProgressStyle::with_template(&format!("{{bar:40}} {{pos}}/{{len}} {unit}  {{msg}}  [{{elapsed}}, eta {{eta}}]"))
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    bar
}

/// How a run's results are shown as tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    /// One configuration (one agent, ε and fault profile, one trial): a
    /// verdict per task.
    Verdicts,
    /// A grid: the paper's tables per agent, with this k of pass^k.
    Report { k: u32 },
}

impl Shape {
    /// The shape of a plan's results.
    pub(crate) fn of(plan: &[PlannedEpisode]) -> Shape {
        let k = trials_of(plan);
        fn configuration(p: &PlannedEpisode) -> (&str, u64, &str, u64) {
            (p.agent.as_str(), p.request.epsilon.to_bits(), p.fault_profile.as_str(), p.request.seed)
        }
        let one = plan.first().is_some_and(|first| plan.iter().all(|p| configuration(p) == configuration(first)));
        if one && k == 1 { Shape::Verdicts } else { Shape::Report { k } }
    }
}

/// One line of `toolenv run --json`: the episode's result, plus its seed,
/// whether it passed and its final state hash (null without a verdict).
#[derive(serde::Serialize)]
struct EpisodeLine<'a> {
    #[serde(flatten)]
    result: &'a EpisodeResult,
    seed: u64,
    passed: bool,
    final_state_hash: Option<&'a str>,
}

/// Prints a run's results: one JSON object per episode, or tables in the
/// plan's shape (a verdict per task, or the report); the tasks' levels come from `tasks`.
pub(crate) fn results(tasks: &Catalogue, played: &[PlayedEpisode], shape: Shape, json: bool) -> anyhow::Result<()> {
    if json {
        for episode in played {
            let line = EpisodeLine {
                result: &episode.result,
                seed: episode.seed,
                passed: episode.passed(),
                final_state_hash: episode.final_state_hash.as_deref(),
            };
            println!("{}", serde_json::to_string(&line)?);
        }
        return Ok(());
    }
    match shape {
        Shape::Verdicts => verdicts(tasks, played),
        Shape::Report { k } => {
            let results: Vec<EpisodeResult> = played.iter().map(|p| p.result.clone()).collect();
            print!("{}", toolenv_runs::report::render(&results, k, InfraConvention::CountAsFailure, Population::AllEpisodes)?);
        }
    }
    Ok(())
}

/// A verdict per task of one configuration, then the pass count and the
/// ceiling. An episode the verdict found infeasible (no agent could pass it
/// under its fault schedule) is marked `FAIL (infeasible)`.
fn verdicts(tasks: &Catalogue, played: &[PlayedEpisode]) {
    println!("{:<36} {:>5}  {:<17} {:>5} {:>6}  FAILED CHECKS", "TASK", "LEVEL", "RESULT", "CALLS", "FAULTS");
    for episode in played {
        let result = &episode.result;
        let (mark, detail) = match &result.outcome {
            EpisodeOutcome::Passed => ("pass", String::new()),
            EpisodeOutcome::Failed if result.feasible == Some(false) => ("FAIL (infeasible)", episode.failed_checks.join("; ")),
            EpisodeOutcome::Failed => ("FAIL", episode.failed_checks.join("; ")),
            EpisodeOutcome::InfraError(reason) => ("ERROR", format!("infrastructure error: {reason}")),
        };
        let level = tasks.domain_and_level(&result.task_id).map_or(0, |(_, level)| level);
        println!("{:<36} {:>5}  {:<17} {:>5} {:>6}  {}", result.task_id, level, mark, result.calls, result.fault_stats.encountered, detail);
    }
    let Some(first) = played.first() else { return };
    let passed = played.iter().filter(|p| p.passed()).count();
    let infra = played.iter().filter(|p| p.result.is_infra_error()).count();
    let infra = if infra == 0 { String::new() } else { format!(", {}", counted(infra as u64, "infrastructure error")) };
    println!(
        "\n{passed}/{} passed{infra} ({} agent, seed {}, trial 0); {}",
        played.len(),
        first.result.agent,
        first.seed,
        ceiling_line(played.iter().map(|p| &p.result))
    );
    print!("{}", toolenv_runs::report::judged_lines("", &toolenv_runs::report::answer_judges(played.iter().map(|p| &p.result))));
}

/// The ceiling of one configuration's episodes as a count, by the report's
/// definition ([`toolenv_runs::metrics::ceiling`] with infrastructure
/// errors as failures): an ideal agent passes every episode not found
/// infeasible and fails the infrastructure errors. `n/a` when no episode's
/// feasibility was decided.
fn ceiling_line<'a>(results: impl Iterator<Item = &'a EpisodeResult> + Clone) -> String {
    if !results.clone().any(|r| r.feasible.is_some()) {
        return "ceiling n/a (feasibility not decided)".to_owned();
    }
    let total = results.clone().count();
    let infeasible = results.clone().filter(|r| r.feasible == Some(false)).count();
    let reachable = results.filter(|r| !r.is_infra_error() && r.feasible != Some(false)).count();
    let why = match infeasible {
        0 => "no episode infeasible".to_owned(),
        1 => "1 episode infeasible: no agent could pass it".to_owned(),
        n => format!("{n} episodes infeasible: no agent could pass them"),
    };
    format!("ceiling {reachable}/{total} ({why})")
}

/// The suite's tasks, one per line.
pub(crate) fn tasks(tasks: &[pb::TaskSummary]) {
    println!("{:<40} {:<11} {:>5} {:>5}  SUMMARY", "TASK", "DOMAIN", "LEVEL", "CALLS");
    for task in tasks {
        println!("{:<40} {:<11} {:>5} {:>5}  {}", task.id, domain_name(task.domain), task.level, task.reference_calls, task.summary);
    }
    // Difficulty per domain and level: the reference solution's calls.
    let mut cells: std::collections::BTreeMap<(i32, u32), Vec<u32>> = std::collections::BTreeMap::new();
    for task in tasks {
        cells.entry((task.domain, task.level)).or_default().push(task.reference_calls);
    }
    println!("\n{:<11} {:>5} {:>6}  REFERENCE CALLS (min / median / mean / max)", "DOMAIN", "LEVEL", "TASKS");
    for ((domain, level), mut calls) in cells {
        calls.sort_unstable();
        let mean = calls.iter().map(|&c| f64::from(c)).sum::<f64>() / calls.len() as f64;
        let (min, median, max) = (calls[0], calls[calls.len() / 2], calls[calls.len() - 1]);
        println!("{:<11} {level:>5} {:>6}  {min} / {median} / {mean:.1} / {max}", domain_name(domain), calls.len());
    }
}

/// One task: description, today, initial state and its tools' schemas.
pub(crate) fn task(task: &pb::Task) {
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

/// A trajectory and its verdict, a call per line.
pub(crate) fn trajectory(trajectory: &pb::Trajectory) {
    use pb::tool_call_record::Outcome;
    println!("task:        {}", trajectory.task_id);
    println!("description: {}", trajectory.description);
    println!("today:       {}  seed: {}  trial: {}  ε: {}", trajectory.today, trajectory.seed, trajectory.trial, trajectory.epsilon);
    for applied in &trajectory.perturbations {
        let params: Vec<String> = applied.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
        println!("perturbation: {} {}", applied.relation, params.join(" "));
    }
    for injected in &trajectory.prompt_faults {
        println!("MAS-FIRE fault in the description: {}", injected.detail_json);
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
        let agent = if call.agent_id.is_empty() { String::new() } else { format!("{}: ", call.agent_id) };
        println!("#{:<3} {agent}{}({}) {outcome}{fault}", call.index, call.tool_name, call.arguments_json);
        for injected in &call.mas_faults {
            println!("       [MAS-FIRE: {}]", injected.detail_json);
        }
    }
    let Some(verdict) = &trajectory.verdict else { return };
    let mark = match (verdict.passed, verdict.feasible) {
        (true, _) => "PASS",
        (false, Some(false)) => "FAIL (infeasible: no agent could pass it under its fault schedule)",
        (false, _) => "FAIL",
    };
    println!("\nverdict: {mark}");
    for check in &verdict.checks {
        let mark = if check.passed { "ok  " } else { "FAIL" };
        println!("  {mark} {} (expected {}, actual {})", check.name, check.expected_json, check.actual_json);
    }
    println!("state diff:\n{}", indent(if verdict.state_diff_text.is_empty() { "(none)" } else { verdict.state_diff_text.trim_end() }, 2));
    println!("final state hash: {}", verdict.final_state_hash);
    if let Some(stats) = &verdict.fault_stats {
        // The verdict's totals, then the per-kind ledger they sum (the same
        // definitions: toolenv_core::fault_ledger), from the calls above.
        let kinds = toolenv_runs::metrics::ledger_calls(trajectory).map(|calls| toolenv_runs::metrics::fault_ledger(&calls));
        let kinds = kinds.unwrap_or_default();
        let (hits, retried) = kinds.values().fold((0, 0), |(h, r), c| (h + c.hits, r + c.retried));
        let line = |injected, encountered, recovered, extra_calls, hits, retried| {
            format!(
                "{injected} injected, {encountered} encountered, {recovered} recovered, {extra_calls} extra calls; {hits} calls met, {retried} retried"
            )
        };
        println!("faults: {}", line(stats.injected, stats.encountered, stats.recovered, stats.extra_calls, hits, retried));
        for (kind, c) in &kinds {
            println!("  {}: {}", kind.name(), line(c.injected, c.encountered, c.recovered, c.extra_calls, c.hits, c.retried));
        }
    }
    for note in &verdict.fault_notes {
        println!("  {note}");
    }
    for outcome in &verdict.mas_faults {
        let at = outcome.call_index.map_or("the description".to_owned(), |i| format!("call {i}"));
        println!(
            "MAS-FIRE {} at {at}: {}, {}",
            outcome.fault,
            if outcome.detected { "detected" } else { "not detected" },
            if outcome.fixed { "fixed" } else { "not fixed" }
        );
    }
}

/// The runs of a store, one per line.
pub(crate) fn stored_runs(runs: &[RunSummary]) {
    println!(
        "{:<10} {:<10} {:>16} {:>7} {:>7} {:>6} {:>8}  {:<20}  COMMAND",
        "RUN", "STATUS", "FINISHED/PLANNED", "PASSED", "FAILED", "INFRA", "SESSIONS", "CREATED"
    );
    for run in runs {
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
}

/// A stored run's report: its progress, then the paper's tables; or both as JSON.
pub(crate) fn stored_report(
    summary: &RunSummary,
    results: &[EpisodeResult],
    k: u32,
    json: bool,
    conv: InfraConvention,
    population: Population,
) -> anyhow::Result<()> {
    let report = toolenv_runs::report::summary(results, k, summary.planned, conv, population)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&serde_json::json!({"run": summary, "report": report}))?);
    } else {
        println!(
            "{}: {}/{} episodes finished ({}), {} infrastructure errors, {} session(s)\n{}\n",
            summary.id,
            summary.finished(),
            summary.planned,
            summary.status(),
            summary.infra_errors,
            summary.sessions,
            summary.description
        );
        print!("{}", toolenv_runs::report::render_summary(&report));
    }
    Ok(())
}

/// A server's runs, one per line.
pub(crate) fn server_runs(runs: &[pb::Run]) {
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
}

/// A hosted run's report as the server rendered it, as `toolenv report` prints a stored one.
pub(crate) fn server_report(report: &pb::RunReport, json: bool) {
    if json {
        println!("{}", pretty(&report.summary_json));
        return;
    }
    let progress = report.run.clone().unwrap_or_default();
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
}

fn domain_name(domain: i32) -> &'static str {
    pb::Domain::try_from(domain).ok().and_then(|d| d.to_domain(&toolenv_domains::registry::ALL)).map_or("?", Domain::name)
}

fn pretty(json: &str) -> String {
    serde_json::from_str::<serde_json::Value>(json).and_then(|v| serde_json::to_string_pretty(&v)).unwrap_or_else(|_| json.to_owned())
}

fn indent(text: &str, spaces: usize) -> String {
    let pad = " ".repeat(spaces);
    text.lines().map(|l| format!("{pad}{l}")).collect::<Vec<_>>().join("\n")
}
