"""Reference values for runs/src/metrics/stats_tests.rs and runs/src/compare_tests.rs, from scipy and statsmodels.

Run once in a throwaway venv (`python3 -m venv /tmp/v && /tmp/v/bin/pip install scipy statsmodels`,
then `/tmp/v/bin/python runs/tests/stats_reference.py`); the Rust tests pin what it prints
(scipy 1.17.1, statsmodels 0.15.0). Nothing in the build runs it.
"""
import math

import numpy as np
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.power import NormalIndPower
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint

print("# normal_cdf")
for x in [-3.0, -1.959964, -0.5, 0.0, 1.2, 4.0]:
    print(f"({x!r}, {stats.norm.cdf(x)!r}),")

print("# t_quantile(0.975, df)")
for df in [1, 2, 5, 19, 39, 199]:
    print(f"({df}.0, {stats.t.ppf(0.975, df)!r}),")
print("# t_cdf(2.1, 7), t_cdf(-0.7, 3)")
print(repr(stats.t.cdf(2.1, 7)), repr(stats.t.cdf(-0.7, 3)))

print("# binomtest two-sided, p = 0.5")
for k, n in [(3, 12), (0, 5), (7, 14), (40, 100), (1, 1), (480, 1000)]:
    print(f"({k}, {n}, {stats.binomtest(k, n, 0.5).pvalue!r}),")

print("# McNemar exact: A passes / B fails 9, A fails / B passes 2, 29 both-pass and both-fail")
table = [[20, 9], [2, 9]]
print(repr(mcnemar(table, exact=True).pvalue))

print("# sign-flip permutation test, exact (scipy permutation_test, samples)")
for d in [[2, -1, 1, 2, 0, 1, 2, -2, 1, 1], [3, 1, -2, 0, 0, 1, 1, 2, -1, 3, 2, 1]]:
    res = stats.permutation_test((np.array(d),), np.sum, permutation_type="samples", n_resamples=np.inf,
                                 alternative="two-sided")
    print(d, repr(res.pvalue))

print("# Newcombe's hybrid score interval of a difference (confint_proportions_2indep method='newcomb')")
for x1, n1, x2, n2 in [(9, 10, 3, 10), (20, 20, 2, 20), (0, 5, 5, 5), (17, 20, 11, 20)]:
    lo, hi = confint_proportions_2indep(x1, n1, x2, n2, method="newcomb", compare="diff")
    print(f"({x1}, {x2}, {n1}, {lo!r}, {hi!r}),")


def newcombe_tasks(a, b, units):
    """Newcombe's square-and-add interval over tasks (each task's figures summed over its units), from statsmodels'
    Wilson limits at Kish's effective number of tasks, with the paired correction (Newcombe 1998b) kept only when
    the task residuals of the two sides are negatively correlated."""
    a, b, units = (np.asarray(v, dtype=float) for v in (a, b, units))
    n = units.sum() ** 2 / (units ** 2).sum()
    pa, pb = a.sum() / units.sum(), b.sum() / units.sum()
    la, ua = proportion_confint(pa * n, n, alpha=0.05, method="wilson")
    lb, ub = proportion_confint(pb * n, n, alpha=0.05, method="wilson")
    ra, rb = a - units * pa, b - units * pb
    r = 0.0
    if (ra ** 2).sum() > 0 and (rb ** 2).sum() > 0:
        r = min(0.0, float(np.corrcoef(ra, rb)[0, 1]) if len(a) > 1 else 0.0)
    lower = pa - pb - math.sqrt((pa - la) ** 2 + (ub - pb) ** 2 - 2 * r * (pa - la) * (ub - pb))
    upper = pa - pb + math.sqrt((ua - pa) ** 2 + (pb - lb) ** 2 - 2 * r * (ua - pa) * (pb - lb))
    return lower, upper


print("# the same over tasks: negatively correlated 0/1 tasks (the paired correction), and unequal units per task")
print(newcombe_tasks([1, 1, 1, 1, 1, 0, 0, 1], [0, 0, 0, 1, 0, 1, 1, 0], [1] * 8))
print(newcombe_tasks([2, 1, 3, 0.5], [1, 1, 1, 0], [2, 1, 3, 1]))

print("# Holm")
print([repr(p) for p in multipletests([0.01, 0.04, 0.03, 0.005, 0.2], method="holm")[1]])

print("# Wilson (proportion_confint method='wilson')")
for k, n in [(8, 10), (0, 10), (38, 47), (19, 20)]:
    lo, hi = proportion_confint(k, n, alpha=0.05, method="wilson")
    print(f"({k}, {n}, {lo!r}, {hi!r}),")

print("# MDE: h from NormalIndPower, then the drop (or rise) on the arcsine scale")
for p, n in [(0.5, 20), (0.95, 20), (1.0, 20), (0.0, 100), (0.8, 1000), (0.25, 40)]:
    h = NormalIndPower().solve_power(effect_size=None, nobs1=n, alpha=0.05, power=0.8, ratio=1.0)
    phi = math.asin(math.sqrt(p))
    other = phi - h / 2 if phi - h / 2 >= 0 else phi + h / 2
    print(f"({p!r}, {n}.0, {abs(p - math.sin(other) ** 2)!r}),")

print("# effective units: ICC from the one-way ANOVA F (f_oneway over per-trial 0/1 outcomes)")
for tallies in [[(2, 2), (0, 2), (1, 2), (2, 2), (2, 2), (1, 2)], [(4, 4), (3, 4), (0, 4), (2, 4), (4, 4)], [(1, 3), (2, 3), (1, 3), (2, 3)]]:
    groups = [np.array([1.0] * c + [0.0] * (n - c)) for c, n in tallies]
    f = stats.f_oneway(*groups).statistic
    trials = sum(n for _, n in tallies)
    tasks = len(tallies)
    n0 = (trials - sum(n * n for _, n in tallies) / trials) / (tasks - 1)
    icc = min(1.0, max(0.0, (f - 1) / (f + n0 - 1)))
    units = min(trials, max(tasks, trials / (1 + (trials / tasks - 1) * icc)))
    print(tallies, repr(icc), repr(units))

print("# compare fixture: per task, pass^1 (of 2 trials) and pass^2 (both passed), A then B")
a = np.array([2, 1, 2, 2, 1, 1, 2, 0, 2, 1]) / 2
b = np.array([0, 2, 1, 0, 1, 0, 0, 2, 1, 0]) / 2
a2, b2 = (a == 1).astype(float), (b == 1).astype(float)
print("ε 0 cell: pass^1", newcombe_tasks(a, b, [1] * 10), "pass^2", newcombe_tasks(a2, b2, [1] * 10))
print("McNemar of pass^2", repr(mcnemar([[0, 5], [2, 3]], exact=True).pvalue))
print("# overall: each task has two units (ε 0: the fixture; ε 0.1: both score A's figures), summed per task")
print("pass^1", newcombe_tasks(2 * a, a + b, [2] * 10), "pass^2", newcombe_tasks(2 * a2, a2 + b2, [2] * 10))
print("# support tasks (6..10) alone")
print("pass^1", newcombe_tasks(2 * a[6:], a[6:] + b[6:], [2] * 4))
print("# the issue's finding: pass^2 over 20 tasks, A passes all, B 2; the old t interval went past +100")
fa, fb = np.ones(20), np.array([1.0] * 2 + [0.0] * 18)
ci = stats.ttest_rel(fa, fb).confidence_interval(0.95)
print("t interval", repr(ci.low), repr(ci.high), "Newcombe", newcombe_tasks(fa, fb, [1] * 20))
