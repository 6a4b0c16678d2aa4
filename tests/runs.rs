//! Grids of episodes over gRPC and their reports.

use toolenv::pb;
use toolenv_client::metrics::{self, Breakdown, InfraConvention, Outcome};
use toolenv_client::{Agent, PlannedEpisode, run_plan};
use toolenv_tests::start;

fn plan(agents: &[Agent], epsilons: &[f64], profiles: &[&str], trials: u32) -> Vec<PlannedEpisode> {
    let mut plan = Vec::new();
    for &agent in agents {
        for &epsilon in epsilons {
            for &profile in profiles {
                for task in toolenv_domains::suite() {
                    for trial in 0..trials {
                        plan.push(PlannedEpisode {
                            agent,
                            request: pb::CreateEpisodeRequest {
                                task_id: task.id.clone(),
                                seed: 7,
                                trial,
                                epsilon,
                                fault_profile: Some(pb::FaultProfile { name: profile.into(), ..Default::default() }),
                                time_scale: Some(0.0),
                                ..Default::default()
                            },
                            fault_profile: profile.into(),
                            lambda: profile.parse().unwrap_or(0.2),
                        });
                    }
                }
            }
        }
    }
    plan
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_paper_grid_runs_and_its_report_is_consistent() {
    let (server, client) = start().await;
    let agents = [Agent::Reference, Agent::ReferenceNoRetry, Agent::Brittle];
    let plan = plan(&agents, &[0.0, 0.1, 0.2], &["0.0", "0.2"], 2);
    assert_eq!(plan.len(), 3 * 3 * 2 * 20 * 2);
    let mut seen = 0;
    let results = run_plan(&client, &plan, 32, |_, _, _| seen += 1).await;
    assert_eq!((results.len(), seen), (plan.len(), plan.len()), "every episode reported once");
    assert!(results.iter().all(|r| !r.is_infra_error()));
    for (result, planned) in results.iter().zip(&plan) {
        assert_eq!(
            (result.task_id.as_str(), result.trial, result.epsilon),
            (planned.request.task_id.as_str(), planned.request.trial, planned.request.epsilon)
        );
    }

    let conv = InfraConvention::CountAsFailure;
    let by = |agent: Agent, keep: &dyn Fn(&metrics::EpisodeResult) -> bool| {
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
    assert_eq!(by(Agent::Reference, &|_| true), 1.0, "the retrying reference agent passes everything at λ ≤ 0.2");
    let at = |lambda: f64| move |r: &metrics::EpisodeResult| r.lambda == lambda;
    assert!(by(Agent::ReferenceNoRetry, &at(0.2)) < by(Agent::Reference, &at(0.2)), "no retries score lower under faults");
    assert_eq!(by(Agent::ReferenceNoRetry, &at(0.0)), 1.0);
    let eps = |e: f64| move |r: &metrics::EpisodeResult| r.epsilon == e;
    assert!(by(Agent::Brittle, &eps(0.2)) < by(Agent::Brittle, &eps(0.0)), "the brittle agent falls with ε");
    assert!(results.iter().any(|r| r.outcome == Outcome::Passed && r.fault_stats.encountered > 0));

    let report = toolenv_client::report::render(&results, 2).unwrap();
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
    let plan = plan(&[Agent::ReferenceNoRetry], &[0.0], &["timeout-only", "rate-limit-only", "partial-response-only", "mixed"], 2);
    let results = run_plan(&client, &plan, 32, |_, _, _| {}).await;
    let rows = metrics::ablation(&results, "mixed", InfraConvention::CountAsFailure);
    assert_eq!(rows.len(), 4);
    assert!(rows.iter().all(|r| r.pass.rate.total == 40));
    let report = toolenv_client::report::render(&results, 2).unwrap();
    assert!(report.contains("fault-type ablation (vs mixed)") && report.contains("timeout-only"), "{report}");
    server.shutdown().await.unwrap();
}
