"""Reference values for runs/src/metrics/stats_tests.rs, from scipy and statsmodels.

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
from statsmodels.stats.proportion import proportion_confint

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

print("# paired t interval of per-task pass^1 differences (ttest_rel)")
a = np.array([1, 1, 0.5, 1, 0, 1, 1, 0.5, 1, 1, 0.5, 1])
b = np.array([1, 0.5, 0.5, 0, 0, 1, 0.5, 0.5, 1, 0, 0.5, 1])
ci = stats.ttest_rel(a, b).confidence_interval(0.95)
print(repr(ci.low), repr(ci.high))

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

print("# compare fixture: pass^1 differences (of 2 trials) and pass^2 (all-pass) per task")
a = np.array([2, 1, 2, 2, 1, 1, 2, 0, 2, 1]) / 2
b = np.array([0, 2, 1, 0, 1, 0, 0, 2, 1, 0]) / 2
ci = stats.ttest_rel(a, b).confidence_interval(0.95)
print("pass^1 CI", repr(ci.low), repr(ci.high))
a2, b2 = (a == 1).astype(float), (b == 1).astype(float)
ci = stats.ttest_rel(a2, b2).confidence_interval(0.95)
print("pass^2 CI", repr(ci.low), repr(ci.high), "McNemar", repr(mcnemar([[0, 5], [2, 3]], exact=True).pvalue))

print("# compare fixture, overall: each task has two units (ε 0: the fixture; ε 0.1: no difference);")
print("# the interval clusters by task: OLS on a constant with cluster-robust errors (CR1, t with G - 1 df)")
import statsmodels.api as sm
d1 = np.concatenate([a - b, np.zeros(10)])
d2 = np.concatenate([a2 - b2, np.zeros(10)])
groups = np.concatenate([np.arange(10), np.arange(10)])
for name, d in [("pass^1", d1), ("pass^2", d2)]:
    fit = sm.OLS(d, np.ones(len(d))).fit(cov_type="cluster", cov_kwds={"groups": groups}, use_t=True)
    lo, hi = fit.conf_int(0.05)[0]
    print(name, repr(lo), repr(hi))
