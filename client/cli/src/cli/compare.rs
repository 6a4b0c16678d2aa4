//! `toolenv compare`: two agents (in two runs, or two labels of one run)
//! on the same tasks, with paired tests over tasks ([`toolenv_runs::compare`]).

use std::path::Path;
use std::process::ExitCode;

use toolenv_runs::compare;
use toolenv_runs::metrics::InfraConvention;
use toolenv_store::AnyStore;

/// What to compare and how to print it.
pub(crate) struct CompareRequest<'a> {
    /// Run A's id.
    pub(crate) run_a: &'a str,
    /// Run B's id; without it, two agents of run A.
    pub(crate) run_b: Option<&'a str>,
    /// The agent labels asked for (none, one for both runs, or A's and B's).
    pub(crate) agents: &'a [String],
    /// Print JSON instead of tables.
    pub(crate) json: bool,
    /// How infrastructure errors count.
    pub(crate) convention: InfraConvention,
}

/// `toolenv compare RUN_A [RUN_B]` over the local store.
pub(crate) fn compare_stored(path: &Path, request: &CompareRequest) -> anyhow::Result<ExitCode> {
    let store = AnyStore::open_existing(path)?;
    let run_a = store.find_run(request.run_a)?;
    let run_b = request.run_b.map(|id| store.find_run(id)).transpose()?;
    if run_b.as_ref() == Some(&run_a) {
        anyhow::bail!(
            "compare {run_a} {run_a}: a run compared with itself differs in nothing; \
             give two runs, or one run and two of its agents (`toolenv compare {run_a} --agents A,B`)"
        );
    }
    let agents_a = store.agents(&run_a)?;
    let agents_b = run_b.as_ref().map(|run| store.agents(run)).transpose()?;
    let (a, b) = compare::select_agents(
        (run_a.as_str(), &agents_a),
        run_b.as_ref().zip(agents_b.as_deref()).map(|(run, agents)| (run.as_str(), agents)),
        request.agents,
    )?;
    let results_a = store.results(&run_a)?;
    let results_b = match &run_b {
        Some(run) => store.results(run)?,
        None => Vec::new(),
    };
    let episodes_a = compare::episodes_of(&results_a, &a.agent);
    let episodes_b = compare::episodes_of(if run_b.is_some() { &results_b } else { &results_a }, &b.agent);
    let comparison = compare::compare((a, &episodes_a), (b, &episodes_b), request.convention)?;
    print(&comparison, request.json)
}

/// Prints a comparison as tables or as JSON.
pub(crate) fn print(comparison: &compare::Comparison, json: bool) -> anyhow::Result<ExitCode> {
    if json {
        println!("{}", serde_json::to_string_pretty(comparison)?);
    } else {
        print!("{}", compare::render(comparison));
    }
    Ok(ExitCode::SUCCESS)
}
