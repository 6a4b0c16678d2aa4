//! The statistics that say how far a figure can be trusted and when two
//! agents really differ: the minimum detectable difference of a figure
//! ([`mde`], [`effective_units`]), paired tests over tasks ([`sign_flip_test`],
//! which on 0/1 outcomes is the exact McNemar test), the interval of a
//! difference of two agents' figures ([`newcombe_difference`]) and Holm's
//! correction ([`holm`]), on top of the distributions they need (normal, Student t,
//! binomial), written out here so the crate stays free of numeric
//! dependencies.
//!
//! Every function is checked against scipy and statsmodels on fixed data;
//! the script that produced the pinned numbers is `runs/tests/stats_reference.py`.

/// The two-sided significance level every test and interval uses.
pub const ALPHA: f64 = 0.05;

/// The power a minimum detectable difference assumes.
pub const POWER: f64 = 0.8;

/// z_{0.8}, the normal quantile of [`POWER`].
pub const Z_POWER: f64 = 0.841_621_233_572_914_3;

/// The z value of a two-sided 95 % normal interval.
pub const Z_95: f64 = 1.959964;

/// A closed interval within [0, 1].
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Interval {
    /// The lower bound.
    pub lower: f64,
    /// The upper bound.
    pub upper: f64,
}

/// The 95 % Wilson score interval of a proportion p̂ measured over n units,
/// or `None` when n = 0 or p̂ is not within [0, 1].
///
/// With z = [`Z_95`]:
///
/// ```text
///            p̂ + z²/(2n)              z       ┌ p̂(1 − p̂)     z²  ┐½
/// centre = ───────────── ,  half = ────────── │ ───────── + ──── │
///            1 + z²/n              1 + z²/n  └     n        4n²  ┘
/// ```
///
/// and the interval is centre ± half, clamped to [0, 1]. Unlike the normal
/// (Wald) interval it stays inside [0, 1] and is not degenerate at p̂ = 0 or 1,
/// which matter here: pass rates near 100 % over a few dozen tasks are the
/// common case. E.g. 8/10 → [0.4902, 0.9433].
pub fn wilson(p_hat: f64, n: u64) -> Option<Interval> {
    wilson_over(p_hat, n as f64)
}

/// [`wilson`] over an effective number of units that need not be whole
/// (e.g. Kish's effective number of tasks when tasks weigh unequally), or
/// `None` when n is not positive or p̂ is not within [0, 1].
pub fn wilson_over(p_hat: f64, n: f64) -> Option<Interval> {
    if n.is_nan() || n <= 0.0 || !(0.0..=1.0).contains(&p_hat) {
        return None;
    }
    let z2 = Z_95 * Z_95;
    let denominator = 1.0 + z2 / n;
    let centre = (p_hat + z2 / (2.0 * n)) / denominator;
    let half = Z_95 / denominator * (p_hat * (1.0 - p_hat) / n + z2 / (4.0 * n * n)).sqrt();
    Some(Interval { lower: (centre - half).max(0.0), upper: (centre + half).min(1.0) })
}

/// Above this many steps (units × width of the sum's range) the exact
/// sign-flip distribution gives way to its normal approximation.
const EXACT_BUDGET: u128 = 50_000_000;

/// The widest sum the exact distribution is kept for (two vectors of
/// 2·range + 1 floats: 32 MB at most).
const MAX_RANGE: u128 = 1_000_000;

/// ln Γ(x) for x > 0 (Lanczos, g = 7, 9 terms; relative error below 1e-14).
pub fn ln_gamma(x: f64) -> f64 {
    const COEFFICIENTS: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x)Γ(1 − x) = π / sin(πx).
        return (std::f64::consts::PI / (std::f64::consts::PI * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let t = x + 7.5;
    let series = COEFFICIENTS[1..].iter().enumerate().fold(COEFFICIENTS[0], |sum, (i, c)| sum + c / (x + i as f64 + 1.0));
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + series.ln()
}

/// Smallest magnitude the continued fractions divide by.
const TINY: f64 = 1e-300;

/// The regularized upper incomplete gamma function Q(a, x), for a > 0, x ≥ 0.
fn gamma_q(a: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 1.0;
    }
    let front = (-x + a * x.ln() - ln_gamma(a)).exp();
    if x < a + 1.0 {
        // The series of P(a, x).
        let (mut term, mut sum, mut ap) = (1.0 / a, 1.0 / a, a);
        for _ in 0..1000 {
            ap += 1.0;
            term *= x / ap;
            sum += term;
            if term.abs() < sum.abs() * 1e-16 {
                break;
            }
        }
        1.0 - sum * front
    } else {
        // Lentz's continued fraction of Q(a, x).
        let mut b = x + 1.0 - a;
        let (mut c, mut d) = (1.0 / TINY, 1.0 / b);
        let mut h = d;
        for i in 1..1000 {
            let an = -(i as f64) * (i as f64 - a);
            b += 2.0;
            d = an * d + b;
            d = if d.abs() < TINY { TINY } else { d };
            c = b + an / c;
            c = if c.abs() < TINY { TINY } else { c };
            d = 1.0 / d;
            let step = d * c;
            h *= step;
            if (step - 1.0).abs() < 1e-16 {
                break;
            }
        }
        front * h
    }
}

/// The standard normal distribution function Φ(x).
pub fn normal_cdf(x: f64) -> f64 {
    // Φ(x) = erfc(−x/√2)/2, and erfc(y) = Q(1/2, y²) for y ≥ 0.
    let y = -x / std::f64::consts::SQRT_2;
    let erfc = if y >= 0.0 { gamma_q(0.5, y * y) } else { 2.0 - gamma_q(0.5, y * y) };
    erfc / 2.0
}

/// The continued fraction of the regularized incomplete beta function (Lentz).
fn beta_fraction(a: f64, b: f64, x: f64) -> f64 {
    let clamp = |v: f64| if v.abs() < TINY { TINY } else { v };
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 / clamp(1.0 - qab * x / qap);
    let mut h = d;
    for m in 1..1000 {
        let m = f64::from(m);
        let m2 = 2.0 * m;
        let even = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 / clamp(1.0 + even * d);
        c = clamp(1.0 + even / c);
        h *= d * c;
        let odd = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 / clamp(1.0 + odd * d);
        c = clamp(1.0 + odd / c);
        let step = d * c;
        h *= step;
        if (step - 1.0).abs() < 1e-16 {
            break;
        }
    }
    h
}

/// The regularized incomplete beta function I_x(a, b), for a, b > 0.
fn incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front = (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    if x < (a + 1.0) / (a + b + 2.0) { front * beta_fraction(a, b, x) / a } else { 1.0 - front * beta_fraction(b, a, 1.0 - x) / b }
}

/// The distribution function of Student's t with `df` degrees of freedom.
pub fn t_cdf(t: f64, df: f64) -> f64 {
    let tail = 0.5 * incomplete_beta(df / 2.0, 0.5, df / (df + t * t));
    if t > 0.0 { 1.0 - tail } else { tail }
}

/// The quantile of Student's t with `df` degrees of freedom at probability
/// `p` in (0, 1), by bisection of [`t_cdf`] to full precision.
pub fn t_quantile(p: f64, df: f64) -> f64 {
    if p < 0.5 {
        return -t_quantile(1.0 - p, df);
    }
    let (mut low, mut high) = (0.0_f64, 1.0_f64);
    while t_cdf(high, df) < p && high < 1e12 {
        high *= 2.0;
    }
    for _ in 0..200 {
        let mid = (low + high) / 2.0;
        if t_cdf(mid, df) < p {
            low = mid;
        } else {
            high = mid;
        }
    }
    (low + high) / 2.0
}

/// The exact two-sided p-value of `successes` out of `trials` under a fair
/// coin (scipy's `binomtest(successes, trials, 0.5)`): twice the smaller
/// tail, at most 1. 1 when there are no trials.
pub fn binomial_two_sided(successes: u64, trials: u64) -> f64 {
    if trials == 0 {
        return 1.0;
    }
    let smaller = successes.min(trials.saturating_sub(successes));
    let n = trials as f64;
    let ln_choose = |i: f64| ln_gamma(n + 1.0) - ln_gamma(i + 1.0) - ln_gamma(n - i + 1.0);
    let tail: f64 = (0..=smaller).map(|i| (ln_choose(i as f64) - n * std::f64::consts::LN_2).exp()).sum();
    (2.0 * tail).min(1.0)
}

/// How a paired test's p-value was computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PairedTest {
    /// Every difference is −1, 0 or +1 (times one common size): the exact
    /// McNemar test, a binomial test on the discordant units.
    #[serde(rename = "mcnemar_exact")]
    McNemarExact,
    /// The exact distribution of the sum of differences under random signs.
    SignFlipExact,
    /// The sign-flip distribution's normal approximation (too many units
    /// for the exact one): z = Σd / √Σd².
    SignFlipNormal,
    /// No unit differs: nothing to test (p = 1).
    NoDifference,
}

/// A paired test's result.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct TestResult {
    /// How it was computed.
    pub test: PairedTest,
    /// The two-sided p-value.
    pub p_value: f64,
}

/// The paired sign-flip permutation test of integer differences (one per
/// unit, e.g. per-task pass counts of agent A minus agent B on a common
/// scale): under the null hypothesis each difference is as likely positive
/// as negative, and the p-value is P(|Σ ±d_t| ≥ |Σ d_t|), two-sided.
///
/// Differences that are all ±c (or 0) make it the exact McNemar test;
/// otherwise the distribution is computed exactly by convolution while
/// units × range ≤ 5·10⁷ and range ≤ 10⁶ (after dividing out a common
/// factor), and by its normal approximation beyond.
pub fn sign_flip_test(differences: &[i64]) -> TestResult {
    let nonzero: Vec<u64> = differences.iter().filter(|d| **d != 0).map(|d| d.unsigned_abs()).collect();
    let observed: i128 = differences.iter().map(|&d| i128::from(d)).sum();
    let Some(&first) = nonzero.first() else {
        return TestResult { test: PairedTest::NoDifference, p_value: 1.0 };
    };
    if nonzero.iter().all(|&d| d == first) {
        let positive = differences.iter().filter(|d| **d > 0).count() as u64;
        return TestResult { test: PairedTest::McNemarExact, p_value: binomial_two_sided(positive, nonzero.len() as u64) };
    }
    // A common factor does not change the test: divide it out to keep the range small.
    let common = nonzero.iter().fold(0u128, |g, &d| super::gcd(g, u128::from(d))).max(1) as u64;
    let nonzero: Vec<u64> = nonzero.iter().map(|d| d / common).collect();
    let observed = observed / i128::from(common);
    let range: u128 = nonzero.iter().map(|&d| u128::from(d)).sum();
    if range <= MAX_RANGE && range.saturating_mul(nonzero.len() as u128) <= EXACT_BUDGET {
        // probability[s + range] = P(Σ ±d = s) over the units so far.
        let range = range as usize;
        let mut probability = vec![0.0_f64; 2 * range + 1];
        probability[range] = 1.0;
        let mut reach = 0usize;
        for &d in &nonzero {
            let d = d as usize;
            let mut next = vec![0.0_f64; 2 * range + 1];
            for s in range - reach..=range + reach {
                let p = probability[s];
                if p != 0.0 {
                    next[s - d] += p / 2.0;
                    next[s + d] += p / 2.0;
                }
            }
            probability = next;
            reach += d;
        }
        let observed = observed.unsigned_abs() as usize;
        let p: f64 = probability.iter().enumerate().filter(|(s, _)| s.abs_diff(range) >= observed).map(|(_, p)| p).sum();
        return TestResult { test: PairedTest::SignFlipExact, p_value: p.min(1.0) };
    }
    let variance: f64 = nonzero.iter().map(|&d| (d as f64).powi(2)).sum();
    let z = observed as f64 / variance.sqrt();
    TestResult { test: PairedTest::SignFlipNormal, p_value: (2.0 * normal_cdf(-z.abs())).min(1.0) }
}

/// One task's part in a difference A − B of two figures measured on the
/// same units: each side's per-unit figures (each within [0, 1]) summed
/// over the task's units, and how many units the task has.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PairedTask {
    /// A's figures of the task's units, summed.
    pub a: f64,
    /// B's figures of the same units, summed.
    pub b: f64,
    /// The task's units.
    pub units: f64,
}

/// How the interval of a difference between two sides is computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DifferenceInterval {
    /// [`newcombe_difference`]: Newcombe's hybrid score interval (method
    /// 10) over tasks, for pass^1 and for pass^k alike.
    NewcombeHybridScore,
}

impl DifferenceInterval {
    /// One line that names the method, for a report.
    pub fn describe(self) -> &'static str {
        match self {
            DifferenceInterval::NewcombeHybridScore => {
                "Newcombe hybrid score (method 10, tasks as units) for pass^1 and for pass^k (the share of units passing all \
                 k trials), with the paired correction only where A and B are negatively correlated"
            }
        }
    }
}

/// The 95 % interval of the difference A − B of two figures measured on
/// the same tasks, each side's figure being the mean of per-unit figures
/// within [0, 1] (`Σ a / Σ units`): Newcombe's hybrid score interval
/// (square-and-add, method 10 of Newcombe, Stat. Med. 17:873, 1998), which
/// stays within [−1, 1] by construction. `None` when there is no unit.
///
/// With each side's Wilson interval (lᵢ, uᵢ) around its figure pᵢ, a
/// correlation r between the sides and d = p_A − p_B,
///
/// ```text
/// lower = d − √((p_A − l_A)² + (u_B − p_B)² − 2r·(p_A − l_A)(u_B − p_B))
/// upper = d + √((u_A − p_A)² + (p_B − l_B)² − 2r·(u_A − p_A)(p_B − l_B))
/// ```
///
/// Choices, and why:
///
/// - **Tasks are the units of the Wilson intervals** (Kish's effective
///   number (Σ m)²/Σ m² when tasks have unequal numbers m of units: the
///   task count when they are equal), since a task's units and trials are
///   not independent. A task's figure is then a share within [0, 1]; when
///   it is 0 or 1 (one unit per task, pass^k over k trials, or pass^1 of one
///   trial) this is exactly Newcombe's interval, and a share that can be
///   fractional varies no more than a 0/1 outcome of the same mean, so the
///   interval is conservative there, never too narrow.
/// - **pass^k** is in general not a proportion (its unbiased terms
///   C(c, k)/C(n, k) are fractions when n > k), but a comparison takes k to
///   be the trials per unit, so a unit's term is 1 when all k trials passed
///   and 0 otherwise and the figure is a proportion of units: the same
///   score interval applies. A percentile bootstrap over tasks was rejected:
///   with 5–10 tasks it covers far less than 95 % (about 40 % at 95 % vs 5 %
///   over 5 tasks in a simulation) and collapses to a point whenever every
///   task differs alike.
/// - **Pairing.** Both sides play the same units, so the figures are
///   correlated; Newcombe's paired method (Stat. Med. 17:2635, 1998) puts
///   the phi coefficient of the sides in r. A positive r narrows the
///   interval and, estimated from a few tasks, makes it too narrow (exactly
///   90.0 % coverage over 5 tasks at 50 % each, against 93.95 % here); a
///   negative one widens it, which the independent-samples interval
///   (r = 0) would miss. So r is the
///   correlation of the two sides' task residuals (a_t − m_t·p_A and
///   b_t − m_t·p_B, which is the phi coefficient for 0/1 outcomes) when it is
///   negative and 0 otherwise: the wider of Newcombe's independent and paired
///   intervals. Agents usually fail the same hard tasks (r > 0), where this
///   is conservative; whether A and B really differ is decided by the exact
///   paired test ([`sign_flip_test`]), not by this interval.
///
/// Exact coverage with independent sides, 0/1 task figures and true rates
/// of 0.05–0.95 (`stats_coverage_tests.rs`): at least 94 % from 20 tasks
/// on; below it only at 5–10 tasks with rates far apart (92.2 % at 0.05 vs
/// 0.95 over 5 tasks) and just under at 5 tasks of 50 % each (93.95 %),
/// Newcombe's known weak corner. With two units of two trials per task the
/// simulated coverage is 98–100 % (conservative, as said above).
pub fn newcombe_difference(tasks: &[PairedTask]) -> Option<super::Interval> {
    let units: f64 = tasks.iter().map(|t| t.units).sum();
    if units.is_nan() || units <= 0.0 {
        return None;
    }
    let squares: f64 = tasks.iter().map(|t| t.units * t.units).sum();
    let effective_tasks = units * units / squares;
    // Within [0, 1] when the per-unit figures are; the clamp only absorbs rounding in the sums.
    let figure = |sum: f64| (sum / units).clamp(0.0, 1.0);
    let (a, b) = (figure(tasks.iter().map(|t| t.a).sum()), figure(tasks.iter().map(|t| t.b).sum()));
    let (wa, wb) = (wilson_over(a, effective_tasks)?, wilson_over(b, effective_tasks)?);
    let (mut aa, mut bb, mut ab) = (0.0, 0.0, 0.0);
    for t in tasks {
        let (ra, rb) = (t.a - t.units * a, t.b - t.units * b);
        (aa, bb, ab) = (aa + ra * ra, bb + rb * rb, ab + ra * rb);
    }
    // No spread on a side (every task alike): no correlation to speak of.
    let r = if aa > 0.0 && bb > 0.0 { (ab / (aa * bb).sqrt()).clamp(-1.0, 0.0) } else { 0.0 };
    // With r in [−1, 0] the root is at most x + y, so lower ≥ l_A − u_B ≥ −1 and upper ≤ u_A − l_B ≤ 1.
    let root = |x: f64, y: f64| (x * x + y * y - 2.0 * r * x * y).max(0.0).sqrt();
    let d = a - b;
    Some(super::Interval { lower: d - root(a - wa.lower, wb.upper - b), upper: d + root(wa.upper - a, b - wb.lower) })
}

/// Holm's step-down adjustment of some p-values (`None`s are not tests and
/// stay `None`): sorted ascending, the i-th (from 0) of m becomes
/// max over j ≤ i of min(1, (m − j)·p_(j)). It controls the family-wise
/// error rate at α with no assumption about how the tests depend.
pub fn holm(p_values: &[Option<f64>]) -> Vec<Option<f64>> {
    let mut order: Vec<(usize, f64)> = p_values.iter().enumerate().filter_map(|(i, p)| p.map(|p| (i, p))).collect();
    order.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
    let m = order.len();
    let mut adjusted = vec![None; p_values.len()];
    let mut running = 0.0_f64;
    for (rank, (index, p)) in order.into_iter().enumerate() {
        running = running.max(((m - rank) as f64 * p).min(1.0));
        adjusted[index] = Some(running);
    }
    adjusted
}

/// The minimum detectable difference of a proportion `p` measured over
/// `units` independent units: the smallest change a two-sided test at
/// α = 0.05 detects with 80 % power when the figure is compared with
/// another measurement of the same size.
///
/// On the arcsine scale (Cohen's h, which statsmodels' `NormalIndPower`
/// solves): h = (z_{0.975} + z_{0.8})·√(2/n), and the detectable figure is
/// p′ = sin²(asin √p − h/2), a drop, or sin²(asin √p + h/2), a rise, when
/// no drop that large is possible; the MDE is |p − p′|. Unlike p(1 − p)/n
/// it stays positive at p = 0 or 1. `None` when n = 0, p is not within
/// [0, 1], or no change within [0, 1] is large enough to be detected.
pub fn mde(p: f64, units: f64) -> Option<f64> {
    if units.is_nan() || units <= 0.0 || !(0.0..=1.0).contains(&p) {
        return None;
    }
    let h = (Z_95 + Z_POWER) * (2.0 / units).sqrt();
    let phi = p.sqrt().asin();
    let other = if phi - h / 2.0 >= 0.0 {
        phi - h / 2.0
    } else if phi + h / 2.0 <= std::f64::consts::FRAC_PI_2 {
        phi + h / 2.0
    } else {
        return None;
    };
    Some((p - other.sin().powi(2)).abs())
}

/// The effective number of independent units of a mean of per-trial 0/1
/// outcomes clustered by task (`(passes, trials)` per task): the trials
/// N = Σ n_t divided by the design effect 1 + (n̄ − 1)·ICC, within
/// [tasks, N]. The intraclass correlation is the one-way ANOVA estimate
///
/// ```text
/// ICC = (MSB − MSW) / (MSB + (n₀ − 1)·MSW),   n₀ = (N − Σ n_t²/N)/(T − 1),
/// MSB = Σ n_t (p_t − p̄)² / (T − 1),           MSW = Σ n_t p_t (1 − p_t) / (N − T),
/// ```
///
/// clamped to [0, 1], and 1 (trials add nothing) when it is undefined. A
/// deterministic agent has ICC = 1: its repeated trials are worth one.
pub fn effective_units(tallies: &[(u64, u64)]) -> f64 {
    let tallies: Vec<(f64, f64)> = tallies.iter().filter(|(_, n)| *n > 0).map(|&(c, n)| (c as f64, n as f64)).collect();
    let tasks = tallies.len() as f64;
    let trials: f64 = tallies.iter().map(|(_, n)| n).sum();
    if tallies.len() < 2 || trials <= tasks {
        return tasks;
    }
    let mean = tallies.iter().map(|(c, _)| c).sum::<f64>() / trials;
    let between = tallies.iter().map(|(c, n)| n * (c / n - mean).powi(2)).sum::<f64>() / (tasks - 1.0);
    let within = tallies.iter().map(|(c, n)| c * (1.0 - c / n)).sum::<f64>() / (trials - tasks);
    let n0 = (trials - tallies.iter().map(|(_, n)| n * n).sum::<f64>() / trials) / (tasks - 1.0);
    let denominator = between + (n0 - 1.0) * within;
    let icc = if denominator > 0.0 { ((between - within) / denominator).clamp(0.0, 1.0) } else { 1.0 };
    let design_effect = 1.0 + (trials / tasks - 1.0) * icc;
    (trials / design_effect).clamp(tasks, trials)
}

#[cfg(test)]
#[path = "stats_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "stats_coverage_tests.rs"]
mod coverage_tests;
