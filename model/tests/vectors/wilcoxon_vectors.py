"""Test vectors for cellscope's Wilcoxon signed-rank test and Holm step-down.

Run with SciPy 1.17 (`python3 wilcoxon_vectors.py > wilcoxon_vectors.json`). The Rust tests compare against the
committed JSON, so CI needs no Python. Each Wilcoxon case is `scipy.stats.wilcoxon(d)` with its defaults
(zero_method "wilcox", correction False, method "auto"); each Holm case is the step-down adjustment written out
below from its definition (statsmodels' `multipletests(p, method="holm")` gives the same numbers).
"""

import json

import numpy as np
import scipy
from scipy import stats

assert scipy.__version__.startswith("1.17"), scipy.__version__

rng = np.random.default_rng(164)
cases = []


def add(name, d):
    d = np.asarray(d, dtype=np.float64)
    try:
        result = stats.wilcoxon(d)
        statistic, p_value = float(result.statistic), float(result.pvalue)
    except ValueError:
        # SciPy refuses a permutation test on one observation: no p-value.
        statistic, p_value = None, None
    cases.append(
        {
            "name": name,
            "d": [float(x) for x in d],
            # NaN (no non-zero delta left, n > 13) is written as null too.
            "statistic": None if statistic is None or np.isnan(statistic) else statistic,
            "p_value": None if p_value is None or np.isnan(p_value) else p_value,
        }
    )


# Continuous deltas (no ties, no zeros): the exact distribution up to n = 50, the normal approximation above.
for n in range(1, 61):
    add(f"continuous n={n}", rng.normal(0.02, 0.05, n))
# Shifted far from zero: tiny exact p-values.
for n in (5, 13, 14, 25, 50, 51, 60):
    add(f"all positive n={n}", np.abs(rng.normal(0.1, 0.02, n)) + 0.01)
# Ties (rounded deltas): sign-flip permutation up to n = 13, tie-corrected normal approximation above.
for n in (2, 3, 5, 8, 12, 13, 14, 20, 50, 51):
    add(f"ties n={n}", np.round(rng.normal(0.0, 3.0, n)) + 0.5 * (rng.random(n) < 0.3))
# Zeros (dropped, but they still count towards n for the method choice).
for n in (3, 6, 13, 14, 30, 50, 51):
    d = np.round(rng.normal(0.5, 2.0, n), 1)
    d[: max(1, n // 5)] = 0.0
    add(f"zeros n={n}", d)
add("all zero n=5", [0.0] * 5)
add("one zero n=1", [0.0])
add("single positive n=1", [0.3])
add("single negative n=1", [-0.3])
add("two equal n=2", [0.2, 0.2])
add("symmetric ties n=6", [-1.0, 1.0, -2.0, 2.0, -3.0, 3.0])
add("efficiency-like n=25", np.round(rng.normal(0.012, 0.02, 25), 3))
add("efficiency-like n=20 with zeros", np.round(rng.normal(-0.004, 0.01, 20), 3))


def holm(p):
    p = np.asarray(p, dtype=np.float64)
    m = len(p)
    order = np.argsort(p, kind="stable")
    adjusted = np.empty(m)
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[index]))
        adjusted[index] = running
    return adjusted


holm_cases = []
for name, p in [
    ("five workloads", [0.0001, 0.02, 0.3, 0.004, 0.04]),
    ("ties in p", [0.01, 0.01, 0.03, 0.03, 0.2]),
    ("clamped at 1", [0.4, 0.5, 0.9, 0.35]),
    ("single", [0.03]),
    ("empty", []),
    ("already monotone violation", [0.001, 0.0105, 0.011, 0.5]),
]:
    holm_cases.append({"name": name, "p": p, "adjusted": [float(x) for x in holm(p)]})

MASK = (1 << 64) - 1


def splitmix64(seed):
    state = seed
    while True:
        state = (state + 0x9E3779B97F4A7C15) & MASK
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        yield z ^ (z >> 31)


def bootstrap_ci(d, resamples=10_000, seed=164):
    """The specified bootstrap, written independently: Lemire indices, means summed in draw order."""
    draws = splitmix64(seed)
    n = len(d)
    means = []
    for _ in range(resamples):
        total = 0.0
        for _ in range(n):
            total += d[(next(draws) * n) >> 64]
        means.append(total / n)
    low, high = np.percentile(np.array(means), [2.5, 97.5])
    return [float(low), float(high)]


bootstrap_cases = []
for name, d in [
    ("three deltas", [0.01, -0.02, 0.03]),
    ("efficiency-like n=25", [c for c in cases if c["name"] == "efficiency-like n=25"][0]["d"]),
    ("constant", [0.5] * 7),
]:
    bootstrap_cases.append({"name": name, "d": d, "ci": bootstrap_ci(d)})
first = splitmix64(164)
splitmix_first = [next(first) for _ in range(3)]

print(
    json.dumps(
        {
            "scipy": scipy.__version__,
            "wilcoxon": cases,
            "holm": holm_cases,
            "bootstrap": bootstrap_cases,
            "splitmix64_seed_164": splitmix_first,
        },
        indent=1,
    )
)
