//! The statistics against scipy 1.17.1 and statsmodels 0.15.0 on fixed
//! data: every expected number below was printed by
//! `runs/tests/stats_reference.py` (which says how to run it).

use super::*;
use crate::metrics::{Rate, wilson};

fn assert_close(actual: f64, expected: f64, tolerance: f64, what: &str) {
    assert!((actual - expected).abs() <= tolerance, "{what}: {actual} vs the reference {expected}");
}

#[test]
fn normal_and_t_distributions_match_scipy() {
    let normal = [
        (-3.0, 0.0013498980316300933),
        (-1.959964, 0.024999999096442398),
        (-0.5, 0.3085375387259869),
        (0.0, 0.5),
        (1.2, 0.8849303297782918),
        (4.0, 0.9999683287581669),
    ];
    for (x, expected) in normal {
        assert_close(normal_cdf(x), expected, 1e-12, &format!("Φ({x})"));
    }
    let quantiles = [
        (1.0, 12.706204736174694),
        (2.0, 4.302652729749462),
        (5.0, 2.5705818356363146),
        (19.0, 2.0930240544083087),
        (39.0, 2.022690920036761),
        (199.0, 1.9719565442517533),
    ];
    for (df, expected) in quantiles {
        assert_close(t_quantile(0.975, df), expected, 1e-9, &format!("t_0.975({df})"));
        assert_close(t_quantile(0.025, df), -expected, 1e-9, &format!("t_0.025({df})"));
    }
    assert_close(t_cdf(2.1, 7.0), 0.9630644018935387, 1e-12, "T_7(2.1)");
    assert_close(t_cdf(-0.7, 3.0), 0.2671634991523818, 1e-12, "T_3(-0.7)");
    // ln Γ of integers is ln of a factorial.
    assert_close(ln_gamma(11.0), (3_628_800.0_f64).ln(), 1e-12, "ln Γ(11)");
}

#[test]
fn binomial_and_mcnemar_p_values_match_scipy_and_statsmodels() {
    let cases = [
        (3, 12, 0.14599609375),
        (0, 5, 0.0625),
        (7, 14, 1.0),
        (40, 100, 0.05688793364098089),
        (1, 1, 1.0),
        (480, 1000, 0.2174482932041415),
    ];
    for (k, n, expected) in cases {
        assert_close(binomial_two_sided(k, n), expected, 1e-12, &format!("binomtest({k}, {n})"));
    }
    assert_eq!(binomial_two_sided(0, 0), 1.0);
    // statsmodels' exact McNemar on [[20, 9], [2, 9]]: 9 units only A
    // passes, 2 only B passes; the 29 concordant units are differences of 0.
    let differences: Vec<i64> = [vec![1; 9], vec![-1; 2], vec![0; 29]].concat();
    let result = sign_flip_test(&differences);
    assert_eq!(result.test, PairedTest::McNemarExact);
    assert_close(result.p_value, 0.0654296875, 1e-12, "McNemar");
    // Any common size of the differences is the same test.
    let doubled: Vec<i64> = differences.iter().map(|d| d * 2).collect();
    assert_eq!(sign_flip_test(&doubled), result);
}

#[test]
fn sign_flip_test_matches_scipys_exact_permutation_test() {
    let cases: [(&[i64], f64); 2] = [(&[2, -1, 1, 2, 0, 1, 2, -2, 1, 1], 0.1953125), (&[3, 1, -2, 0, 0, 1, 1, 2, -1, 3, 2, 1], 0.08984375)];
    for (differences, expected) in cases {
        let result = sign_flip_test(differences);
        assert_eq!(result.test, PairedTest::SignFlipExact);
        assert_close(result.p_value, expected, 1e-12, &format!("{differences:?}"));
        // The test is two-sided: B's view of the same data gives the same p.
        let negated: Vec<i64> = differences.iter().map(|d| -d).collect();
        assert_close(sign_flip_test(&negated).p_value, expected, 1e-12, "negated");
    }
    assert_eq!(sign_flip_test(&[0, 0, 0]), TestResult { test: PairedTest::NoDifference, p_value: 1.0 });
    // A common factor changes nothing, however large.
    let scaled: Vec<i64> = [2, -1, 1, 2, 0, 1, 2, -2, 1, 1].iter().map(|d| d * 3_000_000).collect();
    assert_eq!(sign_flip_test(&scaled), sign_flip_test(&[2, -1, 1, 2, 0, 1, 2, -2, 1, 1]));
    // Two wide differences with nothing in common: the normal approximation, not 2·10⁷ floats.
    assert_eq!(sign_flip_test(&[10_000_001, -10_000_000]).test, PairedTest::SignFlipNormal);
    assert_eq!(sign_flip_test(&[]).test, PairedTest::NoDifference);
    // Past the exact budget: the normal approximation, z = Σd/√Σd².
    // 20,000 units of ±1..3 with Σd = 600 and Σd² = 20,000·14/3 (rounded).
    let large: Vec<i64> = (0..20_000).map(|i| [3, -3, 2, -2, 1, -1][i % 6] + i64::from(i < 300)).collect();
    let result = sign_flip_test(&large);
    assert_eq!(result.test, PairedTest::SignFlipNormal);
    let sum: i64 = large.iter().sum();
    let squares: i64 = large.iter().map(|d| d * d).sum();
    assert_close(result.p_value, 2.0 * normal_cdf(-(sum as f64) / (squares as f64).sqrt()), 1e-15, "normal approximation");
}

/// One task per unit, with 0/1 figures.
fn binary_tasks(a: &[u8], b: &[u8]) -> Vec<PairedTask> {
    a.iter().zip(b).map(|(&a, &b)| PairedTask { a: f64::from(a), b: f64::from(b), units: 1.0 }).collect()
}

#[test]
fn newcombe_difference_matches_statsmodels() {
    // statsmodels' confint_proportions_2indep(method="newcomb"): x of n for A,
    // then for B. With 0/1 tasks that are not negatively correlated the
    // interval is exactly Newcombe's for independent proportions, whatever the
    // pairing: here A's successes come first and B's too (r ≥ 0).
    let cases = [
        (9, 3, 10, 0.1705227239345029, 0.809017973535488),
        (20, 2, 20, 0.6423649032616103, 0.9721335187862319),
        (0, 5, 5, -1.0, -0.38554900569034356),
        (17, 11, 20, 0.015282314886274295, 0.529696248558545),
    ];
    for (x, y, n, lower, upper) in cases {
        let side = |passes: usize| (0..n).map(|i| u8::from(i < passes)).collect::<Vec<_>>();
        let ci = newcombe_difference(&binary_tasks(&side(x), &side(y))).unwrap();
        // Z_95 has 7 significant digits, so the bounds agree to about 1e-7.
        assert_close(ci.lower, lower, 1e-7, &format!("{x}/{n} − {y}/{n} lower"));
        assert_close(ci.upper, upper, 1e-7, &format!("{x}/{n} − {y}/{n} upper"));
    }
    // Negatively correlated tasks (B passes where A fails): Newcombe's paired
    // correction with r = φ = −0.7454 widens it (independent: [−0.0919, 0.6726]).
    let ci = newcombe_difference(&binary_tasks(&[1, 1, 1, 1, 1, 0, 0, 1], &[0, 0, 0, 1, 0, 1, 1, 0])).unwrap();
    assert_close(ci.lower, -0.24158468694365798, 1e-7, "paired lower");
    assert_close(ci.upper, 0.7648288690762919, 1e-7, "paired upper");
    // Unequal units per task: the figures are means over units, and the Wilson
    // limits are over Kish's effective number of tasks, 7²/15.
    let tasks = [(2.0, 1.0, 2.0), (1.0, 1.0, 1.0), (3.0, 1.0, 3.0), (0.5, 0.0, 1.0)].map(|(a, b, units)| PairedTask { a, b, units });
    let ci = newcombe_difference(&tasks).unwrap();
    assert_close(ci.lower, -0.16729633534107247, 1e-7, "unequal lower");
    assert_close(ci.upper, 0.8341365207534867, 1e-7, "unequal upper");
    assert_eq!(newcombe_difference(&[]), None);
    assert_eq!(newcombe_difference(&[PairedTask::default()]), None);
    // One task: its units are the only information; the interval is wide but valid.
    let one = newcombe_difference(&[PairedTask { a: 1.0, b: 0.0, units: 1.0 }]).unwrap();
    assert!(one.lower > -1.0 && one.upper == 1.0 && one.lower < 0.0, "{one:?}");
}

#[test]
fn holm_matches_statsmodels_multipletests() {
    let adjusted = holm(&[Some(0.01), Some(0.04), None, Some(0.03), Some(0.005), Some(0.2)]);
    let expected = [Some(0.04), Some(0.09), None, Some(0.09), Some(0.025), Some(0.2)];
    for (got, want) in adjusted.iter().zip(expected) {
        match (got, want) {
            (Some(got), Some(want)) => assert_close(*got, want, 1e-12, "holm"),
            _ => assert_eq!(*got, want),
        }
    }
    assert!(holm(&[]).is_empty());
    assert_eq!(holm(&[Some(0.6), Some(0.7)]), [Some(1.0), Some(1.0)], "capped at 1");
}

#[test]
fn wilson_intervals_match_statsmodels() {
    let cases = [
        (8, 10, 0.49016247153664183, 0.9433178485456247),
        (0, 10, 0.0, 0.27753279986288926),
        (38, 47, 0.6745599542033822, 0.8958406730145774),
        (19, 20, 0.7638688065532577, 0.9911185511992044),
    ];
    // Z_95 has 7 significant digits, so the bounds agree to about 1e-7.
    for (k, n, lower, upper) in cases {
        let ci = wilson(k as f64 / n as f64, n).unwrap();
        assert_close(ci.lower, lower, 1e-7, &format!("{k}/{n} lower"));
        assert_close(ci.upper, upper, 1e-7, &format!("{k}/{n} upper"));
        assert_eq!(Rate::new(k, n).ci, Some(ci));
    }
}

#[test]
fn mde_matches_statsmodels_normal_ind_power() {
    let cases = [
        (0.5, 20.0, 0.38725434767906985),
        (0.95, 20.0, 0.3341467886619114),
        (1.0, 20.0, 0.183718368848809),
        (0.0, 100.0, 0.03873362506694574),
        (0.8, 1000.0, 0.05233669521526607),
        (0.25, 40.0, 0.20639248583107778),
    ];
    for (p, n, expected) in cases {
        assert_close(mde(p, n).unwrap(), expected, 1e-6, &format!("MDE({p}, {n})"));
    }
    // More units, a smaller MDE; none at all from one unit or none.
    assert!(mde(0.5, 80.0).unwrap() < 0.6 * mde(0.5, 20.0).unwrap(), "four times the units, about half the MDE");
    assert_eq!(mde(0.5, 1.0), None);
    assert_eq!(mde(0.5, 0.0), None);
    assert_eq!(mde(1.5, 10.0), None);
    assert_eq!(Rate::new(19, 20).mde, mde(0.95, 20.0));
}

#[test]
fn effective_units_match_the_one_way_anova() {
    // ICC from scipy's f_oneway F: (F − 1)/(F + n₀ − 1), clamped to [0, 1].
    let cases: [(&[(u64, u64)], f64); 3] = [
        (&[(2, 2), (0, 2), (1, 2), (2, 2), (2, 2), (1, 2)], 8.999999999999998),
        (&[(4, 4), (3, 4), (0, 4), (2, 4), (4, 4)], 7.499999999999999),
        (&[(1, 3), (2, 3), (1, 3), (2, 3)], 12.0),
    ];
    for (tallies, expected) in cases {
        assert_close(effective_units(tallies), expected, 1e-9, &format!("{tallies:?}"));
    }
    // A deterministic agent: every task all or nothing, trials worth one.
    assert_eq!(effective_units(&[(3, 3), (0, 3), (3, 3)]), 3.0);
    // Everything passed: the ICC is undefined and taken as 1.
    assert_eq!(effective_units(&[(2, 2), (2, 2)]), 2.0);
    // One trial per task, or one task: the tasks.
    assert_eq!(effective_units(&[(1, 1), (0, 1)]), 2.0);
    assert_eq!(effective_units(&[(1, 4)]), 1.0);
    assert_eq!(effective_units(&[]), 0.0);
}
