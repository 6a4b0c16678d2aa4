//! How often [`newcombe_difference`]'s 95 % interval holds the true
//! difference, and that it never leaves [−1, 1], over a grid of true rates
//! (0.05–0.95 on each side) and numbers of tasks (5–100):
//!
//! - exactly, every outcome enumerated, for 0/1 task figures with the sides
//!   independent (the setting Newcombe's method is made for);
//! - by a seeded simulation of what a comparison measures: pass^1 and
//!   pass^k of tasks with several units of several trials, the sides' hard
//!   tasks drawn apart or opposite (negatively correlated), and the 0/1
//!   setting again, which checks the simulation against the exact figures.
//!
//! It also measures the two alternatives the method's documentation
//! rejects, so that what it says of them stays true.

use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{Rng, SeedableRng};

use super::*;
use crate::metrics::{Interval, stats::wilson_over};

/// True rates of each side.
const RATES: [f64; 5] = [0.05, 0.2, 0.5, 0.8, 0.95];

/// Numbers of tasks.
const SIZES: [u32; 5] = [5, 10, 20, 50, 100];

/// A bound equal to the true difference up to rounding holds it.
const TOUCH: f64 = 1e-12;

fn holds(ci: Interval, truth: f64) -> bool {
    ci.lower <= truth + TOUCH && truth - TOUCH <= ci.upper
}

fn within_range(ci: Interval) -> bool {
    (-1.0..=1.0).contains(&ci.lower) && (-1.0..=1.0).contains(&ci.upper) && ci.lower <= ci.upper
}

/// Every pair of true rates (A's, B's).
fn rate_pairs() -> Vec<(f64, f64)> {
    RATES.iter().flat_map(|&a| RATES.iter().map(move |&b| (a, b))).collect()
}

/// Every 2×2 table of n tasks with 0/1 figures: (both pass, only A, only B, neither).
fn tables(n: u32) -> impl Iterator<Item = [u32; 4]> {
    (0..=n).flat_map(move |both| (0..=n - both).flat_map(move |a| (0..=n - both - a).map(move |b| [both, a, b, n - both - a - b])))
}

/// The tasks of a table, in the order of its cells.
fn table_tasks(table: [u32; 4]) -> Vec<PairedTask> {
    let figures = [(1.0, 1.0), (1.0, 0.0), (0.0, 1.0), (0.0, 0.0)];
    table.into_iter().zip(figures).flat_map(|(cell, (a, b))| (0..cell).map(move |_| PairedTask { a, b, units: 1.0 })).collect()
}

/// Newcombe's square-and-add interval of a table's difference with `r` as
/// the correlation of the sides: `correlation` gets the table's phi
/// coefficient (0 when a margin is empty).
fn square_and_add(table: [u32; 4], correlation: impl Fn(f64) -> f64) -> Interval {
    let [both, a_only, b_only, neither] = table.map(f64::from);
    let n = both + a_only + b_only + neither;
    let (a, b) = ((both + a_only) / n, (both + b_only) / n);
    let (wa, wb) = (wilson_over(a, n).unwrap(), wilson_over(b, n).unwrap());
    let margins = (both + a_only) * (b_only + neither) * (both + b_only) * (a_only + neither);
    let r = correlation(if margins > 0.0 { (both * neither - a_only * b_only) / margins.sqrt() } else { 0.0 });
    let root = |x: f64, y: f64| (x * x + y * y - 2.0 * r * x * y).max(0.0).sqrt();
    Interval { lower: a - b - root(a - wa.lower, wb.upper - b), upper: a - b + root(wa.upper - a, b - wb.lower) }
}

/// [`newcombe_difference`] of a table in closed form: for 0/1 tasks the
/// correlation of the residuals is the phi coefficient, kept when negative.
fn ours(table: [u32; 4]) -> Interval {
    square_and_add(table, |phi| phi.min(0.0))
}

/// Exact coverage, for each n and each pair of rates, of an interval
/// computed from the table, the sides independent; every table's interval
/// is checked to be within [−1, 1].
fn exact_coverage(interval: impl Fn([u32; 4]) -> Interval, sizes: &[u32]) -> Vec<(u32, f64, f64, f64)> {
    let pairs = rate_pairs();
    let mut coverage = Vec::new();
    for &n in sizes {
        let ln_factorial: Vec<f64> = (0..=n).map(|c| ln_gamma(f64::from(c) + 1.0)).collect();
        // ln_terms[pair][cell][c] = c · ln P(cell): a table's log-probability is ln C + four look-ups.
        let ln_terms: Vec<[Vec<f64>; 4]> = pairs
            .iter()
            .map(|&(a, b)| {
                [a * b, a * (1.0 - b), (1.0 - a) * b, (1.0 - a) * (1.0 - b)].map(|p| (0..=n).map(|c| f64::from(c) * p.ln()).collect())
            })
            .collect();
        let mut held = vec![0.0; pairs.len()];
        for table in tables(n) {
            let ci = interval(table);
            assert!(within_range(ci), "{table:?}: {ci:?}");
            let [x, y, z, w] = table.map(|c| c as usize);
            let ln_count = ln_factorial[n as usize] - ln_factorial[x] - ln_factorial[y] - ln_factorial[z] - ln_factorial[w];
            for i in 0..pairs.len() {
                if holds(ci, pairs[i].0 - pairs[i].1) {
                    let t = &ln_terms[i];
                    held[i] += (ln_count + t[0][x] + t[1][y] + t[2][z] + t[3][w]).exp();
                }
            }
        }
        coverage.extend(pairs.iter().zip(held).map(|(&(a, b), held)| (n, a, b, held)));
    }
    coverage
}

#[test]
fn the_closed_form_is_the_method_on_every_table() {
    // Every table of up to 50 tasks: the closed form the exact coverage is
    // computed with is newcombe_difference itself, and both stay in range.
    for n in [1, 2, 3, 5, 10, 20, 50] {
        for table in tables(n) {
            let (got, want) = (newcombe_difference(&table_tasks(table)).unwrap(), ours(table));
            assert!(within_range(got), "{table:?}: {got:?}");
            assert!((got.lower - want.lower).abs() < 1e-12 && (got.upper - want.upper).abs() < 1e-12, "{table:?}: {got:?} vs {want:?}");
        }
    }
}

#[test]
fn exact_coverage_with_independent_sides_over_the_grid() {
    let coverage = exact_coverage(ours, &SIZES);
    let (n, a, b, worst) = coverage.iter().copied().min_by(|x, y| x.3.total_cmp(&y.3)).unwrap();
    // At least 94 % at nominal 95 % everywhere but in Newcombe's known weak
    // corner: very few tasks and rates far apart (and 5 tasks at 50 % each,
    // just under). These are exact probabilities, not estimates: the list
    // is what the method does, pinned so that any change to it shows.
    let below: Vec<(u32, f64, f64, f64)> =
        coverage.iter().filter(|c| c.3 < 0.94).map(|&(n, a, b, c)| (n, a, b, (c * 1e4).round() / 1e4)).collect();
    assert_eq!(
        below,
        [(5, 0.05, 0.95, 0.9222), (5, 0.5, 0.5, 0.9395), (5, 0.95, 0.05, 0.9222), (10, 0.05, 0.95, 0.9339), (10, 0.95, 0.05, 0.9339)],
        "the worst is {worst} at n = {n}, {a} vs {b}"
    );
    assert!(coverage.iter().filter(|c| c.0 >= 20).all(|c| c.3 >= 0.94));
    assert!(worst > 0.922, "{worst}");
    // Not needlessly wide either: on average close to the nominal 95 %.
    let mean = coverage.iter().map(|c| c.3).sum::<f64>() / coverage.len() as f64;
    assert!((0.95..0.97).contains(&mean), "{mean}");
}

#[test]
fn the_rejected_alternatives_cover_less() {
    // Newcombe's paired interval as published (1998b, method 10), with a
    // positive phi too, over 5 tasks at 50 % each: exactly 90.0 % (ours: 93.95 %).
    let coverage = exact_coverage(|table| square_and_add(table, |phi| phi), &[5]);
    let at = |a: f64, b: f64| coverage.iter().find(|c| (c.1, c.2) == (a, b)).unwrap().3;
    assert!((at(0.5, 0.5) - 0.9004).abs() < 1e-4, "{}", at(0.5, 0.5));
    // A percentile bootstrap over tasks (500 resamples) of the difference
    // over 5 tasks at 95 % vs 5 %: most samples have every task differ alike,
    // and the interval collapses to that one point.
    let mut draws = Draws::new(47);
    let (replications, resamples, n) = (200u32, 500, 5);
    let mut held = 0u32;
    for _ in 0..replications {
        let differences: Vec<f64> =
            (0..n).map(|_| f64::from(u8::from(draws.below(0.95))) - f64::from(u8::from(draws.below(0.05)))).collect();
        let mut means: Vec<f64> = (0..resamples).map(|_| (0..n).map(|_| differences[draws.index(n)]).sum::<f64>() / n as f64).collect();
        means.sort_by(f64::total_cmp);
        held += u32::from(holds(Interval { lower: means[resamples / 40], upper: means[resamples - 1 - resamples / 40] }, 0.9));
    }
    // About 40 % (1 − 0.95^5 + …); 0.6 is 5 standard errors of 200 replications above it.
    let coverage = f64::from(held) / f64::from(replications);
    assert!(coverage < 0.6, "{coverage}");
}

/// Uniform draws from a seeded ChaCha8, four 16-bit draws per word (the
/// simulations need many, and precision to 2⁻¹⁶ is plenty).
struct Draws {
    rng: ChaCha8Rng,
    word: u64,
    left: u32,
}

impl Draws {
    fn new(seed: u64) -> Self {
        Draws { rng: ChaCha8Rng::seed_from_u64(seed), word: 0, left: 0 }
    }

    fn next(&mut self) -> u32 {
        if self.left == 0 {
            (self.word, self.left) = (self.rng.next_u64(), 4);
        }
        self.left -= 1;
        let draw = (self.word & 0xffff) as u32;
        self.word >>= 16;
        draw
    }

    /// True with probability p (to 2⁻¹⁶).
    fn below(&mut self, p: f64) -> bool {
        f64::from(self.next()) < p * 65536.0
    }

    /// An index below n (n ≤ 2¹⁶; the modulo bias is below n·2⁻¹⁶).
    fn index(&mut self, n: usize) -> usize {
        self.next() as usize % n
    }
}

/// What a simulated comparison looks like.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Design {
    /// One unit of one trial per task: 0/1 figures, the sides independent
    /// (the setting of the exact coverage).
    Binary,
    /// Two units of two trials per task; half of each side's tasks hard, its
    /// per-trial rate p − h, half easy, p + h (h = 0.6·min(p, 1 − p)), the
    /// sides' hard halves drawn apart.
    Clustered,
    /// As `Clustered`, but what is hard for A is easy for B: the sides
    /// negatively correlated, where the paired correction matters.
    Opposite,
}

impl Design {
    fn units_trials(self) -> (u32, u32) {
        if self == Design::Binary { (1, 1) } else { (2, 2) }
    }

    fn spread(self, p: f64) -> f64 {
        if self == Design::Binary { 0.0 } else { 0.6 * p.min(1.0 - p) }
    }

    /// pass^k's truth: E[q^k] over the hard and easy halves.
    fn pass_k(self, p: f64) -> f64 {
        let (h, k) = (self.spread(p), self.units_trials().1 as i32);
        ((p - h).powi(k) + (p + h).powi(k)) / 2.0
    }

    /// One comparison of n tasks: the tasks' pass^1 and pass^k figures.
    fn simulate(self, draws: &mut Draws, n: u32, (a, b): (f64, f64)) -> [Vec<PairedTask>; 2] {
        let (units, trials) = self.units_trials();
        let rate = |p: f64, hard: bool| if hard { p - self.spread(p) } else { p + self.spread(p) };
        let mut figures = [Vec::new(), Vec::new()];
        for _ in 0..n {
            let hard_a = draws.below(0.5);
            let hard_b = if self == Design::Opposite { !hard_a } else { draws.below(0.5) };
            let (qa, qb) = (rate(a, hard_a), rate(b, hard_b));
            let mut task = [PairedTask { units: f64::from(units), ..PairedTask::default() }; 2];
            for _ in 0..units {
                let (x, y) = ((0..trials).filter(|_| draws.below(qa)).count(), (0..trials).filter(|_| draws.below(qb)).count());
                task[0].a += x as f64 / f64::from(trials);
                task[0].b += y as f64 / f64::from(trials);
                task[1].a += f64::from(u8::from(x == trials as usize));
                task[1].b += f64::from(u8::from(y == trials as usize));
            }
            figures[0].push(task[0]);
            figures[1].push(task[1]);
        }
        figures
    }
}

#[test]
fn simulated_coverage_of_pass_1_and_pass_k() {
    // Replications per grid point: more for fewer tasks, where coverage is at
    // risk (and each is cheaper).
    let replications = |n: u32| 2000 / n;
    let exact = exact_coverage(ours, &SIZES);
    let mut draws = Draws::new(2024);
    let mut report = Vec::new();
    for design in [Design::Binary, Design::Clustered, Design::Opposite] {
        for &n in &SIZES {
            let r = replications(n);
            // Pooled over the 25 pairs of rates, per figure (pass^1, pass^k).
            let mut pooled = [0u32; 2];
            for (a, b) in rate_pairs() {
                let mut held = [0u32; 2];
                for _ in 0..r {
                    for (figure, tasks) in design.simulate(&mut draws, n, (a, b)).iter().enumerate() {
                        let ci = newcombe_difference(tasks).unwrap();
                        assert!(within_range(ci), "{design:?}, n = {n}, {a} vs {b}: {ci:?}");
                        let truth = if figure == 0 { a - b } else { design.pass_k(a) - design.pass_k(b) };
                        held[figure] += u32::from(holds(ci, truth));
                    }
                }
                for figure in 0..2 {
                    pooled[figure] += held[figure];
                    let coverage = f64::from(held[figure]) / f64::from(r);
                    // One point's estimate: within 4.5 standard errors of 95 %
                    // or above (of the exact figure, in the 0/1 design).
                    let expected =
                        if design == Design::Binary { exact.iter().find(|c| (c.0, c.1, c.2) == (n, a, b)).unwrap().3 } else { 0.95 };
                    let error = (expected * (1.0 - expected) / f64::from(r)).sqrt();
                    assert!(coverage > expected - 4.5 * error, "{design:?}, n = {n}, {a} vs {b}, figure {figure}: {coverage}");
                }
            }
            let pooled = pooled.map(|held| f64::from(held) / f64::from(r * 25));
            report.push((design, n, pooled));
        }
    }
    // Over the 25 pairs of rates (25·2000/n replications: 500 at 100 tasks, a
    // standard error of 1 point at 95 %) at least 94 % for every design, size
    // and figure. Measured: 95.6–96.5 % in the 0/1 design, 98–100 % with units
    // and trials (where tasks as units are conservative).
    for &(design, n, pooled) in &report {
        assert!(pooled.iter().all(|&c| c >= 0.94), "{design:?}, n = {n}: {pooled:?}");
    }
}
