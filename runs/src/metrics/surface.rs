//! The reliability surface R(k, ε, λ) (ReliabilityBench §3.3) over the
//! measured grid, and what is derived from it: surface volume, degradation
//! gradient, critical threshold, and R_fault / R_prompt.
//!
//! Everything is over *measured* points only: the paper defines the surface
//! on [0, 1]² × [1, k_max], but a run measures a few levels per axis, and
//! values between or beyond them would be invented. Pass only the main
//! grid's episodes: ablation profiles share λ = 0.2 with the main grid and
//! would otherwise be pooled into its cells.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::{EpisodeResult, InfraConvention, Level, MetricsError, PassK, Ratio, pass_hat_k};

/// A point of the measured grid.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct GridPoint {
    /// Trials k.
    pub k: u32,
    /// Perturbation level ε.
    pub epsilon: f64,
    /// Fault intensity λ.
    pub lambda: f64,
}

/// R at one grid point: pass^k over the tasks of the (ε, λ) cell.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SurfacePoint {
    /// Where.
    pub point: GridPoint,
    /// pass^k over the cell's tasks; its value is `None` when no task of the
    /// cell has k trials.
    pub pass: PassK,
}

/// The measured reliability surface, points ordered by (k, ε, λ).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Surface {
    /// How infrastructure errors were counted.
    pub convention: InfraConvention,
    /// Every measured point: each requested k at each (ε, λ) cell that has episodes.
    pub points: Vec<SurfacePoint>,
    /// Infrastructure errors among all the episodes.
    pub infra_errors: u64,
}

impl Surface {
    /// R at a point, exactly, when measured and defined.
    pub fn get(&self, k: u32, epsilon: f64, lambda: f64) -> Option<Ratio> {
        let key = (k, Level::new(epsilon), Level::new(lambda));
        let i = self.points.binary_search_by(|p| (p.point.k, Level::new(p.point.epsilon), Level::new(p.point.lambda)).cmp(&key)).ok()?;
        self.points[i].pass.value
    }

    /// The measured values of k, ascending.
    pub fn ks(&self) -> Vec<u32> {
        self.points.iter().map(|p| p.point.k).collect::<BTreeSet<_>>().into_iter().collect()
    }

    /// The measured values of ε, ascending.
    pub fn epsilons(&self) -> Vec<f64> {
        self.levels(|p| p.epsilon)
    }

    /// The measured values of λ, ascending.
    pub fn lambdas(&self) -> Vec<f64> {
        self.levels(|p| p.lambda)
    }

    fn levels(&self, axis: impl Fn(&GridPoint) -> f64) -> Vec<f64> {
        self.points.iter().map(|p| Level::new(axis(&p.point))).collect::<BTreeSet<_>>().into_iter().map(|l| l.0).collect()
    }

    fn value(&self, k: u32, epsilon: f64, lambda: f64) -> Option<f64> {
        self.get(k, epsilon, lambda).map(Ratio::to_f64)
    }
}

/// R(k, ε, λ) = pass^k over the tasks of each measured (ε, λ) cell, for each
/// requested k (duplicates ignored). A cell is every episode with that ε and
/// λ, whatever its agent or profile; pass one agent's main-grid episodes.
pub fn reliability_surface<'a>(
    episodes: impl IntoIterator<Item = &'a EpisodeResult>,
    ks: &[u32],
    convention: InfraConvention,
) -> Result<Surface, MetricsError> {
    let mut cells: BTreeMap<(Level, Level), Vec<&EpisodeResult>> = BTreeMap::new();
    let mut infra_errors = 0;
    for e in episodes {
        infra_errors += u64::from(e.is_infra_error());
        cells.entry((Level::new(e.epsilon), Level::new(e.lambda))).or_default().push(e);
    }
    let ks: BTreeSet<u32> = ks.iter().copied().collect();
    let mut points = Vec::with_capacity(ks.len() * cells.len());
    for &k in &ks {
        for ((epsilon, lambda), cell) in &cells {
            let pass = pass_hat_k(cell.iter().copied(), k, convention)?;
            points.push(SurfacePoint { point: GridPoint { k, epsilon: epsilon.0, lambda: lambda.0 }, pass });
        }
    }
    Ok(Surface { convention, points, infra_errors })
}

/// The surface's volume, two ways.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SurfaceVolume {
    /// The normalized trapezoidal integral over the measured box (see [`surface_volume`]).
    pub trapezoid: f64,
    /// The plain mean of R over the grid points, for comparison with figures
    /// computed that way; equal to `trapezoid` only on special grids.
    pub grid_mean: f64,
    /// Grid points used: |k| × |ε| × |λ|.
    pub points: usize,
}

/// The trapezoid weights of sorted nodes, normalized to sum to 1; a single node weighs 1.
fn trapezoid_weights(nodes: &[f64]) -> Vec<f64> {
    let n = nodes.len();
    if n == 1 {
        return vec![1.0];
    }
    let range = nodes[n - 1] - nodes[0];
    (0..n)
        .map(|i| {
            let left = if i == 0 { nodes[0] } else { nodes[i - 1] };
            let right = if i + 1 == n { nodes[n - 1] } else { nodes[i + 1] };
            (right - left) / 2.0 / range
        })
        .collect()
}

/// The surface volume: the normalized integral of R over the measured grid.
///
/// Method: the trapezoidal rule along each axis, with the measured levels
/// as nodes. For levels x_0 < … < x_m, node i weighs
/// (x_{i+1} − x_{i−1}) / 2 / (x_m − x_0), with x_{−1} = x_0 and x_{m+1} = x_m;
/// an axis measured at one level weighs it 1. Then
/// V = Σ w_k(k) · w_ε(ε) · w_λ(λ) · R(k, ε, λ): the integral of the
/// multilinear interpolation of the measured points over the box
/// [k_min, k_max] × [ε_min, ε_max] × [λ_min, λ_max], divided by the box's
/// volume. Why: the paper's V integrates over [0, 1]² × [1, k_max], but R is
/// known only at the measured levels; normalizing by the measured box keeps
/// V a mean reliability in [0, 1], comparable across runs with the same
/// grid, and trapezoid weights keep a densely measured region from counting
/// more than a sparse one (which a plain mean of points does).
///
/// `None` unless every point of the product grid (every k at every measured
/// ε and λ) is measured and defined, or when the surface is empty.
pub fn surface_volume(surface: &Surface) -> Option<SurfaceVolume> {
    let (ks, epsilons, lambdas) = (surface.ks(), surface.epsilons(), surface.lambdas());
    if ks.is_empty() {
        return None;
    }
    let k_nodes: Vec<f64> = ks.iter().map(|&k| f64::from(k)).collect();
    let (wk, we, wl) = (trapezoid_weights(&k_nodes), trapezoid_weights(&epsilons), trapezoid_weights(&lambdas));
    let (mut trapezoid, mut sum) = (0.0, 0.0);
    for (i, &k) in ks.iter().enumerate() {
        for (j, &epsilon) in epsilons.iter().enumerate() {
            for (l, &lambda) in lambdas.iter().enumerate() {
                let r = surface.value(k, epsilon, lambda)?;
                trapezoid += wk[i] * we[j] * wl[l] * r;
                sum += r;
            }
        }
    }
    let points = ks.len() * epsilons.len() * lambdas.len();
    Some(SurfaceVolume { trapezoid, grid_mean: sum / points as f64, points })
}

/// An axis of the surface.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Axis {
    /// Trials k (consistency).
    K,
    /// Perturbation level ε (robustness).
    Epsilon,
    /// Fault intensity λ (fault tolerance).
    Lambda,
}

/// One finite difference between adjacent measured levels of an axis.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct GradientStep {
    /// The axis stepped along.
    pub axis: Axis,
    /// The lower point.
    pub from: GridPoint,
    /// The next measured point along the axis, the others held fixed.
    pub to: GridPoint,
    /// R(to) − R(from).
    pub delta: f64,
    /// delta per unit of the axis (per trial for k).
    pub slope: f64,
}

/// The degradation gradient ∇R = (∂R/∂k, ∂R/∂ε, ∂R/∂λ), as finite differences.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Gradient {
    /// Every step, ordered by axis, then by the lower point (k, ε, λ).
    pub steps: Vec<GradientStep>,
    /// The mean slope of the k steps, if any.
    pub k: Option<f64>,
    /// The mean slope of the ε steps, if any.
    pub epsilon: Option<f64>,
    /// The mean slope of the λ steps, if any.
    pub lambda: Option<f64>,
}

/// The degradation gradient: forward differences between adjacent measured
/// levels along each axis with the other two held fixed,
/// (R(x_{i+1}) − R(x_i)) / (x_{i+1} − x_i), and per axis the mean of those
/// slopes. Why finite differences: with two to four levels per axis nothing
/// smoother is supported by the data. A pair with an undefined end is
/// skipped. The paper's ∂R/∂λ of −0.38 (ReAct) and −0.50 (Reflexion) are
/// this slope per unit λ of their 7.5 and 10.0 point drops from λ = 0 to 0.2.
pub fn degradation_gradient(surface: &Surface) -> Gradient {
    let (ks, epsilons, lambdas) = (surface.ks(), surface.epsilons(), surface.lambdas());
    let mut steps = Vec::new();
    let mut push = |axis, from: GridPoint, to: GridPoint, run: f64| {
        if let (Some(a), Some(b)) = (surface.value(from.k, from.epsilon, from.lambda), surface.value(to.k, to.epsilon, to.lambda)) {
            steps.push(GradientStep { axis, from, to, delta: b - a, slope: (b - a) / run });
        }
    };
    for pair in ks.windows(2) {
        for &epsilon in &epsilons {
            for &lambda in &lambdas {
                let from = GridPoint { k: pair[0], epsilon, lambda };
                push(Axis::K, from, GridPoint { k: pair[1], ..from }, f64::from(pair[1] - pair[0]));
            }
        }
    }
    for &k in &ks {
        for pair in epsilons.windows(2) {
            for &lambda in &lambdas {
                let from = GridPoint { k, epsilon: pair[0], lambda };
                push(Axis::Epsilon, from, GridPoint { epsilon: pair[1], ..from }, pair[1] - pair[0]);
            }
        }
    }
    for &k in &ks {
        for &epsilon in &epsilons {
            for pair in lambdas.windows(2) {
                let from = GridPoint { k, epsilon, lambda: pair[0] };
                push(Axis::Lambda, from, GridPoint { lambda: pair[1], ..from }, pair[1] - pair[0]);
            }
        }
    }
    let mean = |axis| {
        let slopes: Vec<f64> = steps.iter().filter(|s| s.axis == axis).map(|s| s.slope).collect();
        (!slopes.is_empty()).then(|| slopes.iter().sum::<f64>() / slopes.len() as f64)
    };
    let (k, epsilon, lambda) = (mean(Axis::K), mean(Axis::Epsilon), mean(Axis::Lambda));
    Gradient { steps, k, epsilon, lambda }
}

/// Where R first drops below an acceptable level θ.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CriticalThreshold {
    /// The acceptable level.
    pub theta: f64,
    /// k*: the smallest measured k with R(k, ε_min, λ_min) < θ.
    pub k: Option<u32>,
    /// ε*: the smallest measured ε with R(k_min, ε, λ_min) < θ.
    pub epsilon: Option<f64>,
    /// λ*: the smallest measured λ with R(k_min, ε_min, λ) < θ.
    pub lambda: Option<f64>,
    /// The minimal failing points: every measured point with R < θ that no
    /// other such point precedes on all three axes, in (k, ε, λ) order.
    /// Empty when R ≥ θ everywhere.
    pub frontier: Vec<GridPoint>,
}

/// The critical threshold (k*, ε*, λ*) for θ.
///
/// A point fails when R < θ. In three dimensions "the smallest failing
/// point" has no single answer, so both readings are given: per axis, the
/// first failing level with the other two axes at their least stressful
/// measured level (the paper's (k*, ε*, λ*)); and the frontier of failing
/// points that are minimal in every coordinate together. `None` / empty
/// where nothing measured fails.
pub fn critical_threshold(surface: &Surface, theta: f64) -> CriticalThreshold {
    let (ks, epsilons, lambdas) = (surface.ks(), surface.epsilons(), surface.lambdas());
    let fails = |k, epsilon, lambda| surface.value(k, epsilon, lambda).is_some_and(|r| r < theta);
    let (k0, e0, l0) = (ks.first().copied(), epsilons.first().copied(), lambdas.first().copied());
    let mut threshold = CriticalThreshold { theta, k: None, epsilon: None, lambda: None, frontier: Vec::new() };
    if let (Some(k0), Some(e0), Some(l0)) = (k0, e0, l0) {
        threshold.k = ks.iter().copied().find(|&k| fails(k, e0, l0));
        threshold.epsilon = epsilons.iter().copied().find(|&e| fails(k0, e, l0));
        threshold.lambda = lambdas.iter().copied().find(|&l| fails(k0, e0, l));
    }
    let failing: Vec<GridPoint> =
        surface.points.iter().filter(|p| p.pass.value.is_some_and(|r| r.to_f64() < theta)).map(|p| p.point).collect();
    let precedes = |a: &GridPoint, b: &GridPoint| a != b && a.k <= b.k && a.epsilon <= b.epsilon && a.lambda <= b.lambda;
    threshold.frontier = failing.iter().filter(|b| !failing.iter().any(|a| precedes(a, b))).copied().collect();
    threshold
}

/// One level's reliability relative to the baseline.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Relative {
    /// The level of the varied axis.
    pub level: f64,
    /// R at that level, exactly.
    pub r: Option<Ratio>,
    /// R(level)/R(baseline), exactly; `None` when either is undefined or the baseline is 0.
    pub ratio: Option<Ratio>,
}

/// R_fault and R_prompt: reliability under stress relative to none.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RelativeReliability {
    /// The k of the pass^k compared (1: the pass rate).
    pub k: u32,
    /// R(k, 0, 0).
    pub baseline: Option<Ratio>,
    /// R_fault(λ) = R(k, 0, λ)/R(k, 0, 0) for every λ measured at ε = 0.
    pub fault: Vec<Relative>,
    /// R_prompt(ε) = R(k, ε, 0)/R(k, 0, 0) for every ε measured at λ = 0.
    pub prompt: Vec<Relative>,
}

/// R_fault = pass(λ)/pass(0) and R_prompt = pass(ε)/pass(0), where pass is
/// pass^k and the other axis is held at 0, so each ratio isolates one kind
/// of stress. Both are 1 at level 0 and may exceed 1.
pub fn relative_reliability(surface: &Surface, k: u32) -> RelativeReliability {
    let baseline = surface.get(k, 0.0, 0.0);
    let relative = |r: Option<Ratio>| baseline.zip(r).and_then(|(b, r)| r.checked_div(b));
    let at = |axis: Axis| -> Vec<Relative> {
        surface
            .points
            .iter()
            .filter(|p| p.point.k == k)
            .filter_map(|p| match axis {
                Axis::Lambda if Level::new(p.point.epsilon) == Level(0.0) => Some(p.point.lambda),
                Axis::Epsilon if Level::new(p.point.lambda) == Level(0.0) => Some(p.point.epsilon),
                _ => None,
            })
            .map(|level| {
                let r = if axis == Axis::Lambda { surface.get(k, 0.0, level) } else { surface.get(k, level, 0.0) };
                Relative { level, r, ratio: relative(r) }
            })
            .collect()
    };
    RelativeReliability { k, baseline, fault: at(Axis::Lambda), prompt: at(Axis::Epsilon) }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{r, task};
    use super::super::{EpisodeResult, InfraConvention};
    use super::*;

    /// One cell: `tasks` tasks at (ε, λ), each of 2 trials, `both` of which
    /// pass both and the rest pass one (pass^2 = both/tasks, pass^1 = (both + tasks)/(2·tasks)).
    fn cell(epsilon: f64, lambda: f64, both: u32, tasks: u32) -> Vec<EpisodeResult> {
        (0..tasks)
            .flat_map(|i| task(&format!("x/{i:03}"), if i < both { 2 } else { 1 }, 2))
            .map(|mut e| {
                e.epsilon = epsilon;
                e.lambda = lambda;
                e
            })
            .collect()
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn surface_points_are_pass_k_per_cell() {
        // (0, 0): 4 of 5 tasks pass both → pass^2 = 4/5, pass^1 = 9/10.
        // (0, 0.2): 3 of 5 → 3/5 and 8/10.
        let episodes = [cell(0.0, 0.0, 4, 5), cell(0.0, 0.2, 3, 5)].concat();
        let s = reliability_surface(&episodes, &[2, 1, 2], InfraConvention::default()).unwrap();
        assert_eq!(s.ks(), [1, 2]);
        assert_eq!(s.epsilons(), [0.0]);
        assert_eq!(s.lambdas(), [0.0, 0.2]);
        assert_eq!(s.points.len(), 4);
        assert_eq!(s.get(2, 0.0, 0.0), Some(r(4, 5)));
        assert_eq!(s.get(2, 0.0, 0.2), Some(r(3, 5)));
        assert_eq!(s.get(1, 0.0, 0.2), Some(r(4, 5)));
        assert_eq!(s.get(3, 0.0, 0.0), None);
        // k = 3 has no task with 3 trials: a point with no value.
        let s = reliability_surface(&episodes, &[3], InfraConvention::default()).unwrap();
        assert_eq!((s.points.len(), s.points[0].pass.tasks_excluded), (2, 5));
        assert_eq!(surface_volume(&s), None);
    }

    #[test]
    fn empty_surface() {
        let s = reliability_surface(&[], &[1, 2], InfraConvention::default()).unwrap();
        assert!(s.points.is_empty());
        assert_eq!(surface_volume(&s), None);
        assert!(degradation_gradient(&s).steps.is_empty());
        let t = critical_threshold(&s, 0.9);
        assert_eq!((t.k, t.epsilon, t.lambda, t.frontier.len()), (None, None, None, 0));
        let rel = relative_reliability(&s, 2);
        assert_eq!((rel.baseline, rel.fault.len(), rel.prompt.len()), (None, 0, 0));
    }

    #[test]
    fn volume_by_hand_on_an_uneven_grid() {
        // k = 2; ε ∈ {0, 0.1, 0.3}, λ ∈ {0, 0.2}; R (pass^2 = both/10):
        //            λ=0   λ=0.2
        //   ε=0      1.0   0.8
        //   ε=0.1    0.9   0.6
        //   ε=0.3    0.5   0.3
        // ε weights: (0.1−0)/2/0.3 = 1/6, (0.3−0)/2/0.3 = 1/2, (0.3−0.1)/2/0.3 = 1/3.
        // λ weights: 1/2, 1/2. Row means over λ: 0.9, 0.75, 0.4.
        // V = 0.9/6 + 0.75/2 + 0.4/3 = 0.15 + 0.375 + 0.13333… = 0.658333…
        // The plain mean is (1.0+0.8+0.9+0.6+0.5+0.3)/6 = 4.1/6 = 0.683333…
        let episodes = [
            cell(0.0, 0.0, 10, 10),
            cell(0.0, 0.2, 8, 10),
            cell(0.1, 0.0, 9, 10),
            cell(0.1, 0.2, 6, 10),
            cell(0.3, 0.0, 5, 10),
            cell(0.3, 0.2, 3, 10),
        ]
        .concat();
        let s = reliability_surface(&episodes, &[2], InfraConvention::default()).unwrap();
        let v = surface_volume(&s).unwrap();
        assert!(close(v.trapezoid, 0.9 / 6.0 + 0.75 / 2.0 + 0.4 / 3.0), "{v:?}");
        assert!(close(v.trapezoid, 0.658_333_333_333), "{v:?}");
        assert!(close(v.grid_mean, 4.1 / 6.0), "{v:?}");
        assert_eq!(v.points, 6);
        // Adding k = 1 makes the k axis [1, 2] with weights ½, ½. pass^1 of a
        // cell is (both + 10)/20: 1.0, 0.9 / 0.95, 0.8 / 0.75, 0.65; its
        // volume is 1/6·0.95 + 1/2·0.875 + 1/3·0.7 = 0.829166…, so
        // V = (0.829166… + 0.658333…)/2 = 0.74375.
        let s = reliability_surface(&episodes, &[1, 2], InfraConvention::default()).unwrap();
        let v = surface_volume(&s).unwrap();
        assert!(close(v.trapezoid, 0.74375), "{v:?}");
        assert_eq!(v.points, 12);
        // A missing cell makes the grid incomplete: no volume.
        let s = reliability_surface(&episodes[..episodes.len() - 20], &[2], InfraConvention::default()).unwrap();
        assert_eq!(surface_volume(&s), None);
        // A single point's volume is its value.
        let s = reliability_surface(&cell(0.0, 0.0, 7, 10), &[2], InfraConvention::default()).unwrap();
        assert!(close(surface_volume(&s).unwrap().trapezoid, 0.7));
    }

    #[test]
    fn gradient_reproduces_the_papers_lambda_slopes() {
        // Figure 2 / §5.4: ReAct 97.5 % → 90.0 % from λ = 0 to 0.2 (40 tasks:
        // 39 → 36 pass both): slope −0.075/0.2 = −0.375. Reflexion 95 % → 85 %
        // (38 → 34): −0.10/0.2 = −0.5.
        for (at_0, at_2, slope) in [(39, 36, -0.375), (38, 34, -0.5)] {
            let episodes = [cell(0.0, 0.0, at_0, 40), cell(0.0, 0.2, at_2, 40)].concat();
            let s = reliability_surface(&episodes, &[2], InfraConvention::default()).unwrap();
            let g = degradation_gradient(&s);
            assert_eq!(g.steps.len(), 1);
            assert!(close(g.lambda.unwrap(), slope), "{g:?}");
            assert_eq!((g.k, g.epsilon), (None, None));
        }
    }

    /// ε ∈ {0, 0.1, 0.2} × λ ∈ {0, 0.2}, 10 tasks of 2 trials per cell, with
    /// `both` tasks passing both trials (the rest pass one): 10, 8 / 8, 6 / 6, 6.
    fn three_by_two_grid() -> Vec<EpisodeResult> {
        [
            cell(0.0, 0.0, 10, 10),
            cell(0.0, 0.2, 8, 10),
            cell(0.1, 0.0, 8, 10),
            cell(0.1, 0.2, 6, 10),
            cell(0.2, 0.0, 6, 10),
            cell(0.2, 0.2, 6, 10),
        ]
        .concat()
    }

    #[test]
    fn gradient_along_every_axis() {
        // ε ∈ {0, 0.1, 0.2} at λ = 0 and λ = 0.2, k ∈ {1, 2}; pass^2 = both/10:
        //            λ=0   λ=0.2
        //   ε=0      1.0   0.8
        //   ε=0.1    0.8   0.6
        //   ε=0.2    0.6   0.6
        // ε steps at k = 2: λ=0: −0.2/0.1 = −2 twice; λ=0.2: −2, 0 → mean −1.5.
        // λ steps at k = 2: −0.2/0.2 = −1, −1, 0 → mean −2/3.
        // k steps (1 → 2): pass^1 = (both + 10)/20, so pass^2 − pass^1 =
        // (both − 10)/20: 0, −0.1, −0.1, −0.2, −0.2, −0.2 → mean −0.8/6.
        let episodes = three_by_two_grid();
        let s = reliability_surface(&episodes, &[1, 2], InfraConvention::default()).unwrap();
        let g = degradation_gradient(&s);
        // 6 k steps; ε: 2 steps × 2 λ × 2 k = 8; λ: 1 step × 3 ε × 2 k = 6.
        assert_eq!(g.steps.len(), 20);
        assert!(close(g.k.unwrap(), -0.8 / 6.0), "{g:?}");
        let at_k2 = |axis| -> Vec<f64> { g.steps.iter().filter(|s| s.axis == axis && s.from.k == 2).map(|s| s.slope).collect() };
        let eps = at_k2(Axis::Epsilon);
        assert_eq!(eps.len(), 4);
        for (got, want) in eps.iter().zip([-2.0, -2.0, -2.0, 0.0]) {
            assert!(close(*got, want), "{eps:?}");
        }
        let lam = at_k2(Axis::Lambda);
        for (got, want) in lam.iter().zip([-1.0, -1.0, 0.0]) {
            assert!(close(*got, want), "{lam:?}");
        }
        let first = g.steps.iter().find(|s| s.axis == Axis::Epsilon && s.from.k == 2).unwrap();
        assert_eq!((first.from.epsilon, first.to.epsilon, first.from.lambda, first.to.lambda), (0.0, 0.1, 0.0, 0.0));
    }

    #[test]
    fn critical_threshold_by_hand() {
        // The grid of `gradient_along_every_axis`, pass^2:
        //            λ=0   λ=0.2
        //   ε=0      1.0   0.8
        //   ε=0.1    0.8   0.6
        //   ε=0.2    0.6   0.6
        // and pass^1 = (both + 10)/20: 1.0, 0.9 / 0.9, 0.8 / 0.8, 0.8.
        let episodes = three_by_two_grid();
        let s = reliability_surface(&episodes, &[1, 2], InfraConvention::default()).unwrap();
        // θ = 0.85: along k at (ε 0, λ 0) R is 1.0, 1.0 → no k*; along ε at k = 1,
        // λ = 0: 1.0, 0.9, 0.8 → ε* = 0.2; along λ at k = 1, ε = 0: 1.0, 0.9 → none.
        // Failing points: at k = 1, (0.1, 0.2), (0.2, 0), (0.2, 0.2); at k = 2,
        // every cell but (0, 0). Minimal among them: (1, 0.1, 0.2), (1, 0.2, 0),
        // (2, 0, 0.2), (2, 0.1, 0); the others each have one of these below them.
        let t = critical_threshold(&s, 0.85);
        assert_eq!((t.k, t.epsilon, t.lambda), (None, Some(0.2), None));
        let frontier: Vec<_> = t.frontier.iter().map(|p| (p.k, p.epsilon, p.lambda)).collect();
        assert_eq!(frontier, [(1, 0.1, 0.2), (1, 0.2, 0.0), (2, 0.0, 0.2), (2, 0.1, 0.0)]);
        // θ = 0.95: pass^1 at (0, 0.2) is 0.9 → λ* = 0.2; ε* = 0.1; k* none (1.0, 1.0).
        let t = critical_threshold(&s, 0.95);
        assert_eq!((t.k, t.epsilon, t.lambda), (None, Some(0.1), Some(0.2)));
        // θ = 0.5: nothing fails.
        let t = critical_threshold(&s, 0.5);
        assert_eq!((t.k, t.epsilon, t.lambda), (None, None, None));
        assert!(t.frontier.is_empty());
        // A surface whose baseline fails along k only: 4 of 5 tasks pass
        // both trials; pass^1 = 9/10, pass^2 = 4/5; θ = 0.85 → k* = 2.
        let s = reliability_surface(&cell(0.0, 0.0, 4, 5), &[1, 2], InfraConvention::default()).unwrap();
        assert_eq!(critical_threshold(&s, 0.85).k, Some(2));
    }

    #[test]
    fn relative_reliability_by_hand() {
        // pass^2: (0,0) = 4/5, (0,0.2) = 3/5, (0.2,0) = 2/5, (0.2,0.2) = 1/5.
        // R_fault(0.2) = (3/5)/(4/5) = 3/4; R_prompt(0.2) = (2/5)/(4/5) = 1/2.
        let episodes = [cell(0.0, 0.0, 4, 5), cell(0.0, 0.2, 3, 5), cell(0.2, 0.0, 2, 5), cell(0.2, 0.2, 1, 5)].concat();
        let s = reliability_surface(&episodes, &[2], InfraConvention::default()).unwrap();
        let rel = relative_reliability(&s, 2);
        assert_eq!(rel.baseline, Some(r(4, 5)));
        let fault: Vec<_> = rel.fault.iter().map(|x| (x.level, x.ratio)).collect();
        let prompt: Vec<_> = rel.prompt.iter().map(|x| (x.level, x.ratio)).collect();
        assert_eq!(fault, [(0.0, Some(Ratio::ONE)), (0.2, Some(r(3, 4)))]);
        assert_eq!(prompt, [(0.0, Some(Ratio::ONE)), (0.2, Some(r(1, 2)))]);
        // A zero baseline gives no ratio.
        let episodes = [cell(0.0, 0.0, 0, 5), cell(0.0, 0.2, 3, 5)].concat();
        let rel = relative_reliability(&reliability_surface(&episodes, &[2], InfraConvention::default()).unwrap(), 2);
        assert_eq!(rel.baseline, Some(Ratio::ZERO));
        assert_eq!(rel.fault[1].ratio, None);
        assert_eq!(rel.fault[1].r, Some(r(3, 5)));
    }

    #[test]
    fn figure_3_slice() {
        // Figure 3's shape (k = 2) from made-up counts over 32 tasks per cell:
        // (ε 0, λ 0) 31/32 = 96.875 % (the paper's "96.88"), (0, 0.2) 29/32,
        // (0.1, 0) 28/32 = 87.5 %, (0.1, 0.2) 27/32 = 84.375 %.
        let episodes = [cell(0.0, 0.0, 31, 32), cell(0.1, 0.0, 28, 32), cell(0.0, 0.2, 29, 32), cell(0.1, 0.2, 27, 32)].concat();
        let s = reliability_surface(&episodes, &[2], InfraConvention::default()).unwrap();
        assert_eq!(s.get(2, 0.0, 0.0).unwrap().to_f64(), 0.96875);
        // Volume on a 2 × 2 grid: every weight ¼, so trapezoid = mean =
        // (31 + 28 + 29 + 27)/128 = 115/128 = 0.8984375.
        let v = surface_volume(&s).unwrap();
        assert!(close(v.trapezoid, 115.0 / 128.0) && close(v.grid_mean, 115.0 / 128.0));
        // 8.8-point-style drop along ε: (28 − 31)/32 / 0.1 = −0.9375 per unit ε at λ = 0.
        let g = degradation_gradient(&s);
        let step = g.steps.iter().find(|s| s.axis == Axis::Epsilon && s.from.lambda == 0.0).unwrap();
        assert!(close(step.delta, -3.0 / 32.0) && close(step.slope, -0.9375));
    }
}
