//! Grids of episodes over gRPC and their reports.

use crate::support::start;
use toolenv_agents::Builtin;
use toolenv_client::run_plan;
use toolenv_runs::metrics::{self, Breakdown, EpisodeOutcome, InfraConvention};
use toolenv_runs::{Grid, PlannedEpisode};

/// A grid of built-in agents at seed 7 and time scale 0, over the whole suite.
fn plan(agents: &[Builtin], grid: fn(Vec<String>) -> Grid) -> Vec<PlannedEpisode> {
    let grid = Grid { seed: 7, time_scale: Some(0.0), ..grid(agents.iter().map(|a| a.name().to_owned()).collect()) };
    grid.plan(toolenv_domains::suite().iter().map(|t| t.id.as_str()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_paper_grid_runs_and_its_report_is_consistent() {
    let (server, client) = start().await;
    let agents = [Builtin::Reference, Builtin::ReferenceNoRetry, Builtin::Brittle];
    let plan = plan(&agents, Grid::paper);
    assert_eq!(plan.len(), 3 * 3 * 2 * toolenv_domains::suite().len() * 2);
    let mut seen = 0;
    let results = run_plan(&client, &plan, 32, &toolenv_agents::builtin::agent, |_, _, _| seen += 1).await;
    assert_eq!((results.len(), seen), (plan.len(), plan.len()), "every episode reported once");
    assert!(results.iter().all(|r| !r.is_infra_error()));
    for (result, planned) in results.iter().zip(&plan) {
        assert_eq!(
            (result.task_id.as_str(), result.trial, result.epsilon),
            (planned.request.task_id.as_str(), planned.request.trial, planned.request.epsilon)
        );
    }

    let conv = InfraConvention::CountAsFailure;
    let by = |agent: Builtin, keep: &dyn Fn(&metrics::EpisodeResult) -> bool| {
        let rows: Vec<_> = results.iter().filter(|r| r.agent == agent.name() && keep(r)).collect();
        metrics::pass_rate(rows, conv).rate.value.unwrap()
    };
    // Counts add up: the per-domain rows partition each agent's episodes.
    for agent in agents {
        let mine: Vec<_> = results.iter().filter(|r| r.agent == agent.name()).collect();
        let domains = metrics::breakdown(mine.iter().copied(), Breakdown::Domain, 2, conv).unwrap();
        assert_eq!(domains.iter().map(|d| d.episodes).sum::<u64>(), mine.len() as u64);
        assert_eq!(domains.len(), 4);
    }
    assert_eq!(by(Builtin::Reference, &|_| true), 1.0, "the retrying reference agent passes everything at λ ≤ 0.2");
    let at = |lambda: f64| move |r: &metrics::EpisodeResult| r.lambda == lambda;
    assert!(by(Builtin::ReferenceNoRetry, &at(0.2)) < by(Builtin::Reference, &at(0.2)), "no retries score lower under faults");
    assert_eq!(by(Builtin::ReferenceNoRetry, &at(0.0)), 1.0);
    let eps = |e: f64| move |r: &metrics::EpisodeResult| r.epsilon == e;
    assert!(by(Builtin::Brittle, &eps(0.2)) < by(Builtin::Brittle, &eps(0.0)), "the brittle agent falls with ε");
    assert!(results.iter().any(|r| r.outcome == EpisodeOutcome::Passed && r.fault_stats.encountered > 0));

    let report = toolenv_runs::report::render(&results, 2, InfraConvention::CountAsFailure, Default::default()).unwrap();
    for expected in [
        "== agent reference ",
        "== agent reference-no-retry",
        "== agent brittle",
        "by perturbation ε",
        "by fault level λ",
        "fault recovery",
        "surface volume",
    ] {
        assert!(report.contains(expected), "{expected}:\n{report}");
    }
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ablation_grid_reports_each_fault_type_against_mixed() {
    let (server, client) = start().await;
    let plan = plan(&[Builtin::ReferenceNoRetry], Grid::ablation);
    let results = run_plan(&client, &plan, 32, &toolenv_agents::builtin::agent, |_, _, _| {}).await;
    let rows = metrics::ablation(&results, "mixed", InfraConvention::CountAsFailure);
    assert_eq!(rows.len(), 4);
    assert!(rows.iter().all(|r| r.pass.rate.total == 2 * toolenv_domains::suite().len() as u64));
    let report = toolenv_runs::report::render(&results, 2, InfraConvention::CountAsFailure, Default::default()).unwrap();
    assert!(
        report.contains("fault-type ablation (Table 9; pooled pass rate of the episodes, vs mixed)") && report.contains("timeout-only"),
        "{report}"
    );
    server.shutdown().await.unwrap();
}
