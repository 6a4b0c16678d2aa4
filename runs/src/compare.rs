//! Two agents (or two runs) compared on the same tasks: a paired test over
//! units, overall, per cell of the surface (ε, fault profile) and per
//! domain, each difference with its 95 % interval and a p-value adjusted
//! across the rows of its table (Holm).
//!
//! A pair is a unit of pass^k: one task under one configuration (task,
//! seed, ε, λ, fault profile). Both sides played it under the same seed, so
//! they saw the same description and fault schedule, and the pair is a fair
//! one. Per unit each side has a pass^j term (C(c, j)/C(n, j)). The units of
//! one task (its seeds and cells) are not independent, so the task is the
//! unit of inference: the test is the sign-flip permutation test of the
//! per-task sums of differences ([`stats::sign_flip_test`]; for 0/1 sums,
//! as with pass^k over k trials in one cell, the exact McNemar test) and
//! the interval is Newcombe's hybrid score interval with the task as the
//! unit ([`stats::newcombe_difference`]), which, unlike a t interval of the
//! differences, never leaves [−100, +100] points.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use serde::Serialize;

use crate::{
    metrics::stats::{self, DifferenceInterval, PairedTask, PairedTest},
    metrics::{EpisodeResult, InfraConvention, Interval, Level, MetricsError, Ratio, Tally, task_pass_hat_k},
};

/// Why two sets of episodes cannot be compared.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CompareError {
    /// An agent label was not found where it was asked for.
    #[error("{run} has no episodes of agent '{agent}'; its agents are: {agents}")]
    UnknownAgent {
        /// The run.
        run: String,
        /// The label asked for.
        agent: String,
        /// The run's labels, comma-separated.
        agents: String,
    },
    /// Which agents to compare is ambiguous or incomplete.
    #[error("{0}")]
    Agents(String),
    /// The two sides were not measured on the same grid.
    #[error("{a} and {b} differ in grid: {difference}; compare runs of the same grid")]
    GridMismatch {
        /// Side A's name.
        a: String,
        /// Side B's name.
        b: String,
        /// What differs.
        difference: String,
    },
    /// The two sides share no unit (task × seed × ε × fault profile).
    #[error(
        "{a} and {b} share no task: no task was played by both under the same seed, ε and fault profile \
         ({only_a} units only in A, {only_b} only in B)"
    )]
    NoSharedTasks {
        /// Side A's name.
        a: String,
        /// Side B's name.
        b: String,
        /// Units only A played.
        only_a: u64,
        /// Units only B played.
        only_b: u64,
    },
    /// Exact arithmetic overflowed.
    #[error(transparent)]
    Metrics(#[from] MetricsError),
}

/// One side of a comparison: a run's episodes of one agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Contender {
    /// The run's id.
    pub run: String,
    /// The agent's label.
    pub agent: String,
}

impl Contender {
    fn name(&self) -> String {
        format!("{} {}", self.run, self.agent)
    }
}

/// Which agents to compare: `requested` labels (none, one for both runs, or
/// two: A's then B's) among the labels of run A and, when there is a
/// second run, of run B. With one run, two labels are needed; with two
/// runs and no labels, each run must have exactly one agent.
pub fn select_agents(
    run_a: (&str, &[String]),
    run_b: Option<(&str, &[String])>,
    requested: &[String],
) -> Result<(Contender, Contender), CompareError> {
    let check = |(run, agents): (&str, &[String]), agent: &str| {
        if agents.iter().any(|a| a == agent) {
            Ok(Contender { run: run.to_owned(), agent: agent.to_owned() })
        } else {
            Err(CompareError::UnknownAgent { run: run.to_owned(), agent: agent.to_owned(), agents: agents.join(", ") })
        }
    };
    let only = |(run, agents): (&str, &[String])| match agents {
        [agent] => Ok(agent.clone()),
        _ => Err(CompareError::Agents(format!(
            "{run} has {} agents ({}): name the ones to compare with --agents A,B",
            agents.len(),
            agents.join(", ")
        ))),
    };
    match (run_b, requested) {
        (None, [a, b]) => Ok((check(run_a, a)?, check(run_a, b)?)),
        (None, _) => Err(CompareError::Agents(format!(
            "comparing agents inside {} needs two labels: --agents A,B (its agents are: {})",
            run_a.0,
            run_a.1.join(", ")
        ))),
        (Some(run_b), []) => Ok((check(run_a, &only(run_a)?)?, check(run_b, &only(run_b)?)?)),
        (Some(run_b), [both]) => Ok((check(run_a, both)?, check(run_b, both)?)),
        (Some(run_b), [a, b]) => Ok((check(run_a, a)?, check(run_b, b)?)),
        (Some(_), more) => Err(CompareError::Agents(format!("--agents takes one or two labels, got {}", more.len()))),
    }
}

/// One agent's episodes among a run's results: one side of [`compare`].
pub fn episodes_of<'a>(results: &'a [EpisodeResult], agent: &str) -> Vec<&'a EpisodeResult> {
    results.iter().filter(|e| e.agent == agent).collect()
}

/// A unit of pass^k without its agent: task, seed, ε, λ, fault profile.
type Unit<'a> = (&'a str, u64, Level, Level, &'a str);

/// Per unit: the domain's name and the trials and passes.
type Tallies<'a> = BTreeMap<Unit<'a>, (&'static str, Tally)>;

fn tally<'a>(episodes: &[&'a EpisodeResult], convention: InfraConvention) -> (Tallies<'a>, u32) {
    let mut units: Tallies<'a> = BTreeMap::new();
    let mut trials = 0;
    for e in episodes {
        let key = (e.task_id.as_str(), e.seed, Level::new(e.epsilon), Level::new(e.lambda), e.fault_profile.as_str());
        let (_, tally) = units.entry(key).or_insert((e.domain_name(), Tally::default()));
        trials = trials.max(e.trial.saturating_add(1));
        if let Some(passed) = convention.judge(&e.outcome) {
            tally.trials += 1;
            tally.passes += u64::from(passed);
        }
    }
    (units, trials)
}

/// One difference between the two sides.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// The group: `overall`, a cell (`ε 0.1, faults 0.2`) or a domain.
    pub group: String,
    /// The cell's ε, for a cell.
    pub epsilon: Option<f64>,
    /// The cell's λ, for a cell (NaN for a profile off the λ scale: `null`).
    pub lambda: Option<f64>,
    /// The cell's fault profile, for a cell.
    pub fault_profile: Option<String>,
    /// The domain, for a domain.
    pub domain: Option<String>,
    /// The figure's k: pass^k.
    pub k: u32,
    /// Tasks (by id) among those units: the unit of the test and interval.
    pub tasks: u64,
    /// Units both sides have at least k trials of.
    pub units: u64,
    /// A's pass^k over those units.
    pub a: Option<f64>,
    /// B's pass^k over those units.
    pub b: Option<f64>,
    /// A − B.
    pub difference: Option<f64>,
    /// The 95 % interval of A − B ([`Comparison::interval_method`]).
    pub ci: Option<Interval>,
    /// Tasks where A's terms sum above B's.
    pub a_better: u64,
    /// Tasks where B's terms sum above A's.
    pub b_better: u64,
    /// How the p-value was computed.
    pub test: PairedTest,
    /// The two-sided p-value of the paired test.
    pub p_value: f64,
    /// The p-value adjusted (Holm) across the rows of its table with the same k.
    pub p_holm: f64,
    /// Whether the adjusted p-value is below α = 0.05.
    pub significant: bool,
}

/// A paired comparison of two agents on their shared units.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// Side A.
    pub a: Contender,
    /// Side B.
    pub b: Contender,
    /// Trials per unit: the k of pass^k.
    pub k: u32,
    /// How infrastructure errors count.
    pub convention: InfraConvention,
    /// The two-sided significance level.
    pub alpha: f64,
    /// How every row's interval (`ci`) is computed.
    pub interval_method: DifferenceInterval,
    /// Tasks (by id) both sides played.
    pub tasks: u64,
    /// Units both sides played.
    pub units: u64,
    /// Units only A played (left out).
    pub only_a: u64,
    /// Units only B played (left out).
    pub only_b: u64,
    /// pass^1 and pass^k over every shared unit.
    pub overall: Vec<Row>,
    /// Per cell of the surface (ε × fault profile), when there is more than one.
    pub by_cell: Vec<Row>,
    /// Per domain.
    pub by_domain: Vec<Row>,
}

/// Compares A's and B's episodes (each one agent's) on the units both
/// played: pass^1 and pass^k overall, per cell and per domain.
pub fn compare(
    a: (Contender, &[&EpisodeResult]),
    b: (Contender, &[&EpisodeResult]),
    convention: InfraConvention,
) -> Result<Comparison, CompareError> {
    let ((a, a_episodes), (b, b_episodes)) = (a, b);
    let (a_units, a_trials) = tally(a_episodes, convention);
    let (b_units, b_trials) = tally(b_episodes, convention);
    let mismatch = |difference: String| CompareError::GridMismatch { a: a.name(), b: b.name(), difference };
    if a_trials != b_trials {
        return Err(mismatch(format!("{a_trials} trials per task in A, {b_trials} in B (pass^k needs the same k)")));
    }
    // Generated task ids carry their generator's version, so no task of one
    // version is shared with another; name the cause instead of "no task".
    let version = |episodes: &[&EpisodeResult]| toolenv_domains::generate::suite_of(episodes.iter().map(|e| e.task_id.as_str())).1;
    // A task file's ids carry its hash: an edited file shares no task with the file before.
    let suite = |episodes: &[&EpisodeResult]| toolenv_domains::generate::suite_of(episodes.iter().map(|e| e.task_id.as_str())).0;
    let (a_suite, b_suite) = (suite(a_episodes), suite(b_episodes));
    if a_suite.starts_with("file:") && b_suite.starts_with("file:") && a_suite != b_suite {
        return Err(mismatch(format!("tasks of {a_suite} in A, {b_suite} in B (an edited task file: the same ids may name other tasks)")));
    }
    let (a_version, b_version) = (version(a_episodes), version(b_episodes));
    if a_version != 0 && b_version != 0 && a_version != b_version {
        return Err(mismatch(format!(
            "generated tasks of generator version {a_version} in A, {b_version} in B (the same ids name other tasks)"
        )));
    }
    fn cells<'a>(units: &Tallies<'a>) -> BTreeSet<(Level, Level, &'a str)> {
        units.keys().map(|u| (u.2, u.3, u.4)).collect()
    }
    let (a_cells, b_cells) = (cells(&a_units), cells(&b_units));
    if a_cells != b_cells {
        let show = |cells: &BTreeSet<(Level, Level, &str)>, other: &BTreeSet<(Level, Level, &str)>| {
            let names: Vec<String> = cells.difference(other).map(|(e, _, p)| cell_name(e.0, p)).collect();
            if names.is_empty() { "none".to_owned() } else { names.join("; ") }
        };
        return Err(mismatch(format!("cells only in A: {}; only in B: {}", show(&a_cells, &b_cells), show(&b_cells, &a_cells))));
    }
    let shared: Vec<(Unit, &'static str, Tally, Tally)> =
        a_units.iter().filter_map(|(unit, (domain, ta))| b_units.get(unit).map(|(_, tb)| (*unit, *domain, *ta, *tb))).collect();
    let only_a = (a_units.len() - shared.len()) as u64;
    let only_b = (b_units.len() - shared.len()) as u64;
    if shared.is_empty() {
        return Err(CompareError::NoSharedTasks { a: a.name(), b: b.name(), only_a, only_b });
    }
    let ks: Vec<u32> = if a_trials > 1 { vec![1, a_trials] } else { vec![1] };
    let table = |groups: Vec<(Group, Vec<Pair>)>| -> Result<Vec<Row>, CompareError> {
        // One family per k (Holm within it); shown group by group.
        let mut families = Vec::new();
        for &k in &ks {
            let mut family = groups.iter().map(|(group, pairs)| row(group, pairs, k)).collect::<Result<Vec<Row>, _>>()?;
            let adjusted = stats::holm(&family.iter().map(|r| Some(r.p_value)).collect::<Vec<_>>());
            for (row, p) in family.iter_mut().zip(adjusted) {
                row.p_holm = p.unwrap_or(1.0);
                row.significant = row.p_holm < stats::ALPHA;
            }
            families.push(family.into_iter());
        }
        Ok((0..groups.len()).flat_map(|_| families.iter_mut().filter_map(Iterator::next).collect::<Vec<_>>()).collect())
    };
    let pairs = |keep: &dyn Fn(&Unit, &str) -> bool| -> Vec<Pair> {
        shared.iter().filter(|(unit, domain, _, _)| keep(unit, domain)).map(|(unit, _, ta, tb)| (unit.0, *ta, *tb)).collect()
    };
    let overall = table(vec![(Group::Overall, pairs(&|_, _| true))])?;
    let by_cell = if a_cells.len() > 1 {
        let groups = a_cells.iter().map(|&(e, l, p)| (Group::Cell(e.0, l.0, p), pairs(&|u, _| (u.2, u.3, u.4) == (e, l, p)))).collect();
        table(groups)?
    } else {
        Vec::new()
    };
    let domains: BTreeSet<&str> = shared.iter().map(|s| s.1).collect();
    let by_domain = table(domains.into_iter().map(|d| (Group::Domain(d), pairs(&|_, domain| domain == d))).collect())?;
    Ok(Comparison {
        a,
        b,
        k: a_trials,
        convention,
        alpha: stats::ALPHA,
        interval_method: DifferenceInterval::NewcombeHybridScore,
        tasks: shared.iter().map(|s| s.0.0).collect::<BTreeSet<_>>().len() as u64,
        units: shared.len() as u64,
        only_a,
        only_b,
        overall,
        by_cell,
        by_domain,
    })
}

/// A shared unit: its task id and both sides' tallies.
type Pair<'a> = (&'a str, Tally, Tally);

/// What a row is over.
enum Group<'a> {
    Overall,
    Cell(f64, f64, &'a str),
    Domain(&'a str),
}

fn cell_name(epsilon: f64, profile: &str) -> String {
    format!("ε {epsilon}, faults {profile}")
}

/// The largest common denominator the exact test works on; beyond it the
/// differences are rounded to 1e-9 (and the normal approximation takes over).
const MAX_DENOMINATOR: u128 = 1_000_000;

/// One row: pass^k of both sides over the group's units with k trials
/// each, tested and bounded with the task as the unit.
fn row(group: &Group, pairs: &[Pair], k: u32) -> Result<Row, CompareError> {
    let mut terms: Vec<(&str, Ratio, Ratio)> = Vec::new();
    for (task, a, b) in pairs {
        if let (Some(x), Some(y)) = (task_pass_hat_k(a.passes, a.trials, k), task_pass_hat_k(b.passes, b.trials, k)) {
            terms.push((task, x?, y?));
        }
    }
    let units = terms.len();
    let denominator = terms.iter().try_fold(1u128, |l, (_, x, y)| {
        let l = lcm(l, x.denom())?;
        lcm(l, y.denom()).filter(|&l| l <= MAX_DENOMINATOR)
    });
    // Per task: the sum of its units' differences, exactly on the common
    // denominator (or to 1e-9 beyond it), and both sides' sums and its unit
    // count in floats.
    let mut tasks: BTreeMap<&str, (i64, PairedTask)> = BTreeMap::new();
    for (task, x, y) in &terms {
        let scaled = match denominator {
            Some(l) => scale(*x, l) - scale(*y, l),
            None => ((x.to_f64() - y.to_f64()) * 1e9).round() as i64,
        };
        let (sum, figures) = tasks.entry(task).or_default();
        *sum = sum.saturating_add(scaled);
        *figures = PairedTask { a: figures.a + x.to_f64(), b: figures.b + y.to_f64(), units: figures.units + 1.0 };
    }
    let sums: Vec<i64> = tasks.values().map(|t| t.0).collect();
    let test = stats::sign_flip_test(&sums);
    let mean = |values: &mut dyn Iterator<Item = f64>| (units > 0).then(|| values.sum::<f64>() / units as f64);
    let (a, b) = (mean(&mut terms.iter().map(|t| t.1.to_f64())), mean(&mut terms.iter().map(|t| t.2.to_f64())));
    let (label, epsilon, lambda, fault_profile, domain) = match group {
        Group::Overall => ("overall".to_owned(), None, None, None, None),
        Group::Cell(e, l, p) => (cell_name(*e, p), Some(*e), Some(*l).filter(|l| !l.is_nan()), Some((*p).to_owned()), None),
        Group::Domain(d) => ((*d).to_owned(), None, None, None, Some((*d).to_owned())),
    };
    Ok(Row {
        group: label,
        epsilon,
        lambda,
        fault_profile,
        domain,
        k,
        tasks: tasks.len() as u64,
        units: units as u64,
        a,
        b,
        difference: a.zip(b).map(|(a, b)| a - b),
        ci: stats::newcombe_difference(&tasks.values().map(|t| t.1).collect::<Vec<_>>()),
        a_better: sums.iter().filter(|d| **d > 0).count() as u64,
        b_better: sums.iter().filter(|d| **d < 0).count() as u64,
        test: test.test,
        p_value: test.p_value,
        p_holm: test.p_value,
        significant: false,
    })
}

/// x · l as an integer, for a common denominator l of x.
fn scale(x: Ratio, l: u128) -> i64 {
    i64::try_from(x.numer() * (l / x.denom())).unwrap_or(i64::MAX)
}

fn lcm(a: u128, b: u128) -> Option<u128> {
    (a / crate::metrics::gcd(a, b)).checked_mul(b)
}

/// The comparison as text: a header, then a table per grouping.
pub fn render(comparison: &Comparison) -> String {
    let mut out = String::new();
    let c = comparison;
    let counted = match c.convention {
        InfraConvention::CountAsFailure => "counted as failures",
        InfraConvention::Exclude => "excluded",
    };
    let _ = writeln!(out, "A = {}  vs  B = {}", c.a.name(), c.b.name());
    let _ = writeln!(
        out,
        "{} shared units (task × seed × ε × fault profile) of {} tasks, {} trials each; left out: {} units only in A, {} \
         only in B; infrastructure errors {counted}",
        c.units, c.tasks, c.k, c.only_a, c.only_b
    );
    let _ = writeln!(
        out,
        "paired over tasks (a task's units summed): exact McNemar test when every task's difference is ±1, else an exact \
         sign-flip permutation test (normal approximation when very large); p(Holm) adjusted across the rows of each table; \
         * = significant at α = {}",
        c.alpha
    );
    let _ = writeln!(out, "intervals: {}; conservative where A and B fail alike, the exact test decides", c.interval_method.describe());
    let line = |group: &str,
                figure: &str,
                tasks: &str,
                units: &str,
                a: &str,
                b: &str,
                diff: &str,
                split: &str,
                p: &str,
                holm: &str,
                test: &str| {
        format!("  {group:<24} {figure:<7} {tasks:>5} {units:>6} {a:>7} {b:>7}  {diff:<24} {split:>9} {p:>8} {holm:>9}  {test}")
    };
    let _ = writeln!(out, "\n{}", line("", "", "tasks", "units", "A", "B", "A − B [95% CI] pp", "A>B/B>A", "p", "p(Holm)", "test"));
    for (title, rows) in [("overall", &c.overall), ("by cell (ε, fault profile)", &c.by_cell), ("by domain", &c.by_domain)] {
        if rows.is_empty() {
            continue;
        }
        if title != "overall" {
            let _ = writeln!(out, "{title}:");
        }
        for row in rows.iter() {
            let pct = |v: Option<f64>| v.map_or("-".to_owned(), |v| format!("{:.1}%", v * 100.0));
            let diff = match (row.difference, row.ci) {
                (Some(d), Some(ci)) => format!("{:+.1} [{:+.1}, {:+.1}]", d * 100.0, ci.lower * 100.0, ci.upper * 100.0),
                (Some(d), None) => format!("{:+.1}", d * 100.0),
                (None, _) => "-".to_owned(),
            };
            // Half up: an exact 0.03125 and a binomial 0.0312500000000001 print alike.
            let p = |p: f64| if p < 1e-4 { "<0.0001".to_owned() } else { format!("{:.4}", p * (1.0 + 1e-12)) };
            let test = match row.test {
                PairedTest::McNemarExact => "McNemar",
                PairedTest::SignFlipExact => "sign-flip",
                PairedTest::SignFlipNormal => "sign-flip (normal)",
                PairedTest::NoDifference => "no difference",
            };
            let holm = format!("{}{}", p(row.p_holm), if row.significant { " *" } else { "  " });
            let _ = writeln!(
                out,
                "{}",
                line(
                    &row.group,
                    &format!("pass^{}", row.k),
                    &row.tasks.to_string(),
                    &row.units.to_string(),
                    &pct(row.a),
                    &pct(row.b),
                    &diff,
                    &format!("{}/{}", row.a_better, row.b_better),
                    &p(row.p_value),
                    &holm,
                    test
                )
            );
        }
    }
    let significant: Vec<String> = [&c.overall, &c.by_cell, &c.by_domain]
        .into_iter()
        .flatten()
        .filter(|r| r.significant)
        .map(|r| format!("{} pass^{} ({:+.1} pp)", r.group, r.k, r.difference.unwrap_or(0.0) * 100.0))
        .collect();
    let verdict = if significant.is_empty() {
        "no difference is significant at α = 0.05 after adjustment".to_owned()
    } else {
        format!("significant after adjustment: {}", significant.join("; "))
    };
    let _ = writeln!(out, "\n{verdict}");
    out
}

#[cfg(test)]
#[path = "compare_tests.rs"]
mod tests;
