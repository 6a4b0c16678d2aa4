//! Paired comparisons on fixed data, against the scipy/statsmodels numbers
//! printed by `runs/tests/stats_reference.py` ("compare fixture").

use super::*;
use crate::{metrics::EpisodeOutcome, metrics::tests::episode};

/// Passes out of 2 trials per task for A and B: A − B is
/// [2, −1, 1, 2, 0, 1, 2, −2, 1, 1]. The first six tasks are travel, the
/// rest support.
const A: [u32; 10] = [2, 1, 2, 2, 1, 1, 2, 0, 2, 1];
const B: [u32; 10] = [0, 2, 1, 0, 1, 0, 0, 2, 1, 0];

fn side(agent: &str, passes: &[u32], epsilon: f64) -> Vec<EpisodeResult> {
    let mut episodes = Vec::new();
    for (i, &passed) in passes.iter().enumerate() {
        let domain = if i < 6 { "travel" } else { "support" };
        for trial in 0..2 {
            let mut e =
                episode(&format!("{domain}/t/{i:03}"), trial, if trial < passed { EpisodeOutcome::Passed } else { EpisodeOutcome::Failed });
            e.agent = agent.to_owned();
            e.epsilon = epsilon;
            episodes.push(e);
        }
    }
    episodes
}

fn contender(agent: &str) -> Contender {
    Contender { run: "run-0001".into(), agent: agent.into() }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

/// Whether an interval is the reference's: statsmodels' Wilson limits use
/// the exact z, Z_95 has 7 significant digits, so they agree to about 1e-7.
fn same_interval(ci: Option<Interval>, (lower, upper): (f64, f64)) -> bool {
    ci.is_some_and(|ci| (ci.lower - lower).abs() < 1e-7 && (ci.upper - upper).abs() < 1e-7)
}

#[test]
fn overall_cells_and_domains_against_the_reference() {
    // At ε 0 the fixture; at ε 0.1 both agents score A's numbers, so that
    // cell has no difference at all.
    let a = [side("a", &A, 0.0), side("a", &A, 0.1)].concat();
    let b = [side("b", &B, 0.0), side("b", &A, 0.1)].concat();
    let (a, b): (Vec<&EpisodeResult>, Vec<&EpisodeResult>) = (a.iter().collect(), b.iter().collect());
    let c = compare((contender("a"), &a), (contender("b"), &b), InfraConvention::CountAsFailure).unwrap();
    assert_eq!((c.k, c.tasks, c.units, c.only_a, c.only_b), (2, 10, 20, 0, 0));

    // Overall, a task's sum of differences is its ε 0 difference (at ε 0.1
    // it is 0): scipy's exact permutation test of the ten differences gives
    // 0.1953125, and statsmodels' exact McNemar (5 vs 2 discordant) 0.453125.
    let [one, two] = &c.overall[..] else { panic!("{:?}", c.overall) };
    assert_eq!((one.k, one.test, one.tasks, one.units, one.a_better, one.b_better), (1, PairedTest::SignFlipExact, 10, 20, 7, 2));
    assert!(close(one.p_value, 0.1953125) && close(one.p_holm, one.p_value) && !one.significant, "{one:?}");
    assert!(close(one.difference.unwrap(), 7.0 / 40.0), "{one:?}");
    assert_eq!((two.k, two.test, two.a_better, two.b_better), (2, PairedTest::McNemarExact, 5, 2));
    assert!(close(two.p_value, 0.453125), "{two:?}");
    // The interval is Newcombe's hybrid score interval with the task as the
    // unit, each task's figure the mean of its two units (the reference's
    // newcombe_tasks, from statsmodels' Wilson limits). It was a t interval,
    // cluster-robust by task: [−6.4, +41.4] and [−14.4, +44.4] points.
    assert_eq!(c.interval_method, DifferenceInterval::NewcombeHybridScore);
    assert!(same_interval(one.ci, (-0.22198565967056227, 0.506514886283278)), "{one:?}");
    assert!(same_interval(two.ci, (-0.24647728821474307, 0.48879460554872906)), "{two:?}");

    // The ε 0 cell alone is the fixture, one unit per task (the t intervals
    // were [−12.8, +82.8] and [−28.9, +88.9]).
    let cell = |k: u32, epsilon: f64| c.by_cell.iter().find(|r| r.k == k && r.epsilon == Some(epsilon)).unwrap();
    assert!(same_interval(cell(1, 0.0).ci, (-0.176193605214507, 0.7058242517201425)), "{:?}", cell(1, 0.0));
    assert!(same_interval(cell(2, 0.0).ci, (-0.19698676021174183, 0.657315151144281)), "{:?}", cell(2, 0.0));
    assert_eq!((cell(1, 0.1).test, cell(1, 0.1).p_value), (PairedTest::NoDifference, 1.0));
    // Holm over the two cells: 2 · 0.1953125, then max(that, 1 · 1).
    assert!(close(cell(1, 0.0).p_holm, 0.390625) && close(cell(1, 0.1).p_holm, 1.0));
    assert_eq!(cell(1, 0.0).group, "ε 0, faults 0.0");
    assert_eq!((cell(1, 0.0).lambda, cell(1, 0.0).fault_profile.as_deref()), (Some(0.0), Some("0.0")));
    // Rows come group by group, k = 1 before k = 2.
    let order: Vec<(Option<f64>, u32)> = c.by_cell.iter().map(|r| (r.epsilon, r.k)).collect();
    assert_eq!(order, [(Some(0.0), 1), (Some(0.0), 2), (Some(0.1), 1), (Some(0.1), 2)]);

    // Domains: support tasks are 6..10 (A − B = 2, −2, 1, 1 at ε 0).
    let domains: Vec<(&str, u32, u64, u64)> = c.by_domain.iter().map(|r| (r.group.as_str(), r.k, r.tasks, r.units)).collect();
    assert_eq!(domains, [("support", 1, 4, 8), ("support", 2, 4, 8), ("travel", 1, 6, 12), ("travel", 2, 6, 12)]);
    assert!(same_interval(c.by_domain[0].ci, (-0.41068886187780773, 0.5751319312746951)), "{:?}", c.by_domain[0]);
    for k in [1, 2] {
        let family: Vec<&Row> = c.by_domain.iter().filter(|r| r.k == k).collect();
        let adjusted = stats::holm(&family.iter().map(|r| Some(r.p_value)).collect::<Vec<_>>());
        assert_eq!(family.iter().map(|r| Some(r.p_holm)).collect::<Vec<_>>(), adjusted);
    }

    let text = render(&c);
    assert!(
        text.starts_with("A = run-0001 a  vs  B = run-0001 b\n20 shared units (task × seed × ε × fault profile) of 10 tasks"),
        "{text}"
    );
    assert!(text.contains("overall                  pass^1     10     20   70.0%   52.5%  +17.5 [-22.2, +50.7]"), "{text}");
    assert!(text.contains("\nintervals: Newcombe hybrid score (method 10, tasks as units) for pass^1 and for pass^k"), "{text}");
    let json = serde_json::to_value(&c).unwrap();
    assert_eq!(json["interval_method"], "newcombe_hybrid_score");
    assert!(text.contains("7/2   0.1953  0.1953    sign-flip"), "{text}");
    assert!(text.contains("no difference is significant at α = 0.05 after adjustment"), "{text}");
    // The same comparison from B's side mirrors every difference.
    let mirrored = compare((contender("b"), &b), (contender("a"), &a), InfraConvention::CountAsFailure).unwrap();
    for (x, y) in c.overall.iter().zip(&mirrored.overall) {
        assert!(close(x.difference.unwrap(), -y.difference.unwrap()) && close(x.p_value, y.p_value));
    }
}

#[test]
fn a_clear_difference_is_significant() {
    // 10 tasks A passes and B fails: McNemar p = 2 / 2^10.
    let a = side("a", &[2; 10], 0.0);
    let b = side("b", &[0; 10], 0.0);
    let (a, b): (Vec<&EpisodeResult>, Vec<&EpisodeResult>) = (a.iter().collect(), b.iter().collect());
    let c = compare((contender("a"), &a), (contender("b"), &b), InfraConvention::CountAsFailure).unwrap();
    let pass_2 = &c.overall[1];
    assert_eq!((pass_2.test, pass_2.a_better, pass_2.b_better), (PairedTest::McNemarExact, 10, 0));
    assert!(close(pass_2.p_value, 2.0 / 1024.0) && pass_2.significant, "{pass_2:?}");
    assert!(render(&c).contains("significant after adjustment: overall pass^1 (+100.0 pp); overall pass^2 (+100.0 pp)"));
    // 10 of 10 against 0 of 10: Newcombe's [1 − √2·0.2775, 1], not a point.
    assert!(same_interval(pass_2.ci, (1.0 - 2.0_f64.sqrt() * 0.27753279986288926, 1.0)), "{pass_2:?}");
}

#[test]
fn a_large_difference_over_few_tasks_stays_within_100_points() {
    // The shape of the finding (`pass^2 … +90.0 [+75.6, +104.4]`):
    // over 20 tasks A passes both trials of every task and B of two. The t
    // interval of the differences (eighteen 1s, two 0s) was scipy's
    // [0.7559, 1.0441], past +100 points; Newcombe's stays below.
    let a = side("a", &[2; 20], 0.0);
    let b = side("b", &[[2, 2].as_slice(), &[1; 18]].concat(), 0.0);
    let (a, b): (Vec<&EpisodeResult>, Vec<&EpisodeResult>) = (a.iter().collect(), b.iter().collect());
    let c = compare((contender("a"), &a), (contender("b"), &b), InfraConvention::CountAsFailure).unwrap();
    let pass_2 = &c.overall[1];
    assert!(close(pass_2.difference.unwrap(), 0.9), "{pass_2:?}");
    // statsmodels' Newcombe interval of 20/20 − 2/20.
    assert!(same_interval(pass_2.ci, (0.6423649032616103, 0.9721335187862319)), "{pass_2:?}");
    assert!(render(&c).contains("+90.0 [+64.2, +97.2]"), "{}", render(&c));
    // The same both ways round, and for every row.
    let mirrored = compare((contender("b"), &b), (contender("a"), &a), InfraConvention::CountAsFailure).unwrap();
    let upper = mirrored.overall[1].ci.unwrap().upper;
    assert!((upper + 0.6423649032616103).abs() < 1e-7, "{:?}", mirrored.overall[1]);
    for row in [&c, &mirrored].into_iter().flat_map(|c| c.overall.iter().chain(&c.by_cell).chain(&c.by_domain)) {
        let ci = row.ci.unwrap();
        assert!(-1.0 <= ci.lower && ci.lower <= ci.upper && ci.upper <= 1.0, "{row:?}");
    }
}

#[test]
fn runs_that_cannot_be_compared_are_refused_clearly() {
    let a = side("a", &A, 0.0);
    fn refs(v: &[EpisodeResult]) -> Vec<&EpisodeResult> {
        v.iter().collect()
    }
    let compare_with = |b: &[EpisodeResult]| {
        compare((contender("a"), &refs(&a)), (contender("b"), &refs(b)), InfraConvention::CountAsFailure).unwrap_err().to_string()
    };
    // Another ε: a different grid.
    let error = compare_with(&side("b", &B, 0.1));
    assert_eq!(
        error,
        "run-0001 a and run-0001 b differ in grid: cells only in A: ε 0, faults 0.0; only in B: ε 0.1, faults 0.0; \
         compare runs of the same grid"
    );
    // One trial instead of two.
    let one_trial: Vec<EpisodeResult> = side("b", &B, 0.0).into_iter().filter(|e| e.trial == 0).collect();
    assert!(compare_with(&one_trial).contains("differ in grid: 2 trials per task in A, 1 in B"), "{}", compare_with(&one_trial));
    // Other tasks (another seed): nothing shared.
    let other_seed: Vec<EpisodeResult> = side("b", &B, 0.0).into_iter().map(|e| EpisodeResult { seed: 7, ..e }).collect();
    assert_eq!(
        compare_with(&other_seed),
        "run-0001 a and run-0001 b share no task: no task was played by both under the same seed, ε and fault profile \
         (10 units only in A, 10 only in B)"
    );
    // Generated tasks of another generator version: the same ids would name other tasks.
    let versioned = |version: u32, agent: &str| -> Vec<EpisodeResult> {
        let id = |e: &EpisodeResult| e.task_id.replace("/t/", &format!("/k/g{version}-1-7-"));
        side(agent, &A, 0.0).into_iter().map(|e| EpisodeResult { task_id: id(&e), ..e }).collect()
    };
    let (v1, v2) = (versioned(1, "a"), versioned(2, "b"));
    let error = compare((contender("a"), &refs(&v1)), (contender("b"), &refs(&v2)), InfraConvention::CountAsFailure).unwrap_err();
    assert!(error.to_string().contains("generated tasks of generator version 1 in A, 2 in B"), "{error}");
    // Some tasks shared: compared on those, the rest counted.
    let fewer: Vec<EpisodeResult> = side("b", &B, 0.0).into_iter().filter(|e| e.task_id.starts_with("travel")).collect();
    let c = compare((contender("a"), &refs(&a)), (contender("b"), &refs(&fewer)), InfraConvention::CountAsFailure).unwrap();
    assert_eq!((c.units, c.only_a, c.only_b), (6, 4, 0));
}

#[test]
fn agents_are_selected_or_the_choice_is_explained() {
    let two = ["reference".to_owned(), "brittle".to_owned()];
    let one = ["solver".to_owned()];
    let pick = |a: &[String], b: Option<&[String]>, requested: &[&str]| {
        let requested: Vec<String> = requested.iter().map(|s| (*s).to_owned()).collect();
        select_agents(("run-0001", a), b.map(|b| ("run-0002", b)), &requested).map(|(a, b)| (a.name(), b.name())).map_err(|e| e.to_string())
    };
    assert_eq!(pick(&two, None, &["brittle", "reference"]), Ok(("run-0001 brittle".into(), "run-0001 reference".into())));
    assert_eq!(
        pick(&two, None, &[]),
        Err("comparing agents inside run-0001 needs two labels: --agents A,B (its agents are: reference, brittle)".into())
    );
    assert_eq!(pick(&one, Some(&one), &[]), Ok(("run-0001 solver".into(), "run-0002 solver".into())));
    assert_eq!(
        pick(&two, Some(&one), &[]),
        Err("run-0001 has 2 agents (reference, brittle): name the ones to compare with --agents A,B".into())
    );
    assert_eq!(pick(&two, Some(&two), &["brittle"]), Ok(("run-0001 brittle".into(), "run-0002 brittle".into())));
    assert_eq!(pick(&two, Some(&one), &["reference", "solver"]), Ok(("run-0001 reference".into(), "run-0002 solver".into())));
    assert_eq!(
        pick(&two, Some(&one), &["reference", "random"]),
        Err("run-0002 has no episodes of agent 'random'; its agents are: solver".into())
    );
    assert_eq!(pick(&two, Some(&two), &["a", "b", "c"]), Err("--agents takes one or two labels, got 3".into()));
}
