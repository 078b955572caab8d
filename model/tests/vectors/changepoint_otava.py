"""Change points computed by Apache Otava itself, for model/tests/changepoint_otava.rs.

Otava's `compute_change_points` is the published reference implementation of the method cellscope implements
(docs/definitions.md, "Change points"). Pinned: Python 3.11, apache-otava 0.8.0, numpy 2.2.0, scipy 1.16.3 (the
versions Otava 0.8.0 requires on Python 3.11). Make the environment under target/, never in the repository, and
run the script from the repository's root:

    python3 -m venv target/otava-venv
    target/otava-venv/bin/pip install numpy==2.2.0 scipy==1.16.3
    target/otava-venv/bin/pip install --no-deps apache-otava==0.8.0
    target/otava-venv/bin/python model/tests/vectors/changepoint_otava.py > model/tests/vectors/changepoint_otava.json

Each case runs a series through `fill_missing` and then `compute_change_points(series, window_len, max_pvalue,
min_magnitude)`, exactly as Otava's own analysis of a metric does, and records every change point it returns with
the figures of its `TTestStats`. The Rust test needs no Python.
"""

import json
import sys
from importlib.metadata import version

import numpy as np
import scipy
from otava.analysis import TTestSignificanceTester, compute_change_points, fill_missing, split

assert version("apache-otava") == "0.8.0", version("apache-otava")
assert np.__version__ == "2.2.0", np.__version__
assert scipy.__version__ == "1.16.3", scipy.__version__

cases = []


def add(name, series, window_len=50, max_pvalue=0.001, min_magnitude=0.0):
    series = [None if x is None else float(x) for x in series]
    values = list(series)
    fill_missing(values)
    change_points, _ = compute_change_points(
        values, window_len=window_len, max_pvalue=max_pvalue, min_magnitude=min_magnitude
    )
    # `compute_change_points` returns its weak change points after the merge step has dropped some in place:
    # the split step is run again for the candidates it found.
    first_pass = max_pvalue * 10 if max_pvalue < 0.05 else (max_pvalue * 2 if max_pvalue < 0.5 else max_pvalue)
    weak = split(values, window_len, first_pass)
    cases.append(
        {
            "name": name,
            "window_len": window_len,
            "max_pvalue": max_pvalue,
            "min_magnitude": min_magnitude,
            "series": series,
            "weak": [int(c.index) for c in weak],
            "change_points": [
                {
                    "index": int(c.index),
                    "p_value": float(c.stats.pvalue),
                    "mean_before": float(c.stats.mean_before()),
                    "mean_after": float(c.stats.mean_after()),
                    "stddev_before": float(c.stats.stddev_before()),
                    "stddev_after": float(c.stats.stddev_after()),
                    "forward_rel_change": float(c.stats.forward_rel_change()),
                    "magnitude": float(c.stats.change_magnitude()),
                }
                for c in change_points
            ],
        }
    )
    return values, change_points


def stale(values, change_points):
    """How many returned change points carry figures other than their current pieces give (see the test)."""
    tester = TTestSignificanceTester(0.0)
    intervals = tester.get_intervals(change_points)
    count = 0
    for c in change_points:
        fresh = tester.change_point(c.to_candidate(), values, intervals).stats
        count += (fresh.mean_1, fresh.mean_2, fresh.std_1, fresh.std_2) != (
            c.stats.mean_1,
            c.stats.mean_2,
            c.stats.std_1,
            c.stats.std_2,
        )
    return count


def noise(seed, n, scale):
    return np.round(np.random.default_rng(seed).normal(0.0, scale, n), 3)


def steps(levels, lengths, seed, scale):
    base = np.concatenate([np.full(length, float(level)) for level, length in zip(levels, lengths)])
    return [float(x) for x in np.round(base + noise(seed, len(base), scale), 3)]


# Flat and constant series: no change point, whatever the value's binary rounding.
for value in [100.0, 0.1, 0.3, 1 / 3, 0.0, -7.25]:
    add(f"constant {value!r} x 60", [value] * 60)
add("constant 0.1 x 130 window 10", [0.1] * 130, window_len=10)
add("empty", [])
add("one run", [5.0])
add("two runs", [1.0, 2.0])
add("three runs", [1.0, 1.0, 9.0])
add("flat with noise", steps([100], [80], 1, 0.5))

# Steps.
add("one step", steps([100, 120], [40, 40], 2, 1.0))
add("one step down", steps([50, 40], [30, 45], 3, 1.0))
add("one step without noise", [5.0] * 20 + [7.0] * 20)
add("two steps", steps([100, 120, 90], [30, 30, 30], 4, 1.5))
add("step in the last three runs", steps([100, 130], [47, 3], 5, 1.0))
add("step in the last run", steps([100, 160], [49, 1], 6, 1.0))
add("step in the first three runs", steps([130, 100], [3, 47], 7, 1.0))
add("small step in noise", steps([100, 101], [60, 60], 8, 1.0))
add("step from zero", steps([0, 10], [25, 25], 9, 0.5))
add("negative values crossing zero", steps([-5, 5, -5], [20, 20, 20], 10, 0.5))

# Noise only, seeded.
for seed, n, scale in [(11, 100, 1.0), (12, 200, 5.0), (13, 60, 0.01), (14, 300, 2.0)]:
    add(f"noise only seed {seed} n {n}", [float(x) for x in 1000.0 + noise(seed, n, scale)])

# Missing runs: forward fill, then the leading ones back-filled.
with_gaps = steps([100, 120], [30, 30], 15, 1.0)
for i in [0, 1, 2, 10, 29, 30, 31, 45, 59]:
    with_gaps[i] = None
add("missing runs", with_gaps)
add("missing runs only", [None] * 12)
add("missing run alone", [None])
add("one value among missing runs", [None, None, 3.0, None, None])
add("missing runs at the step", [10.0] * 15 + [None] * 5 + [20.0] * 15)

# Shorter than one window, longer than two.
add("shorter than one window", steps([10, 14], [12, 8], 16, 0.5))
add("150 runs three steps", steps([100, 110, 95, 125], [40, 35, 40, 35], 17, 2.0))
add("300 runs five steps", steps([100, 90, 105, 130, 120, 80], [50, 60, 40, 50, 60, 40], 18, 3.0))
add("1000 runs", steps([200, 230, 210, 260, 240, 180, 190], [150, 120, 160, 170, 140, 160, 100], 19, 6.0))

# Ties: integer values, where the Q-hat matrix and the p-values tie exactly.
add("ties up and down", [0.0] * 10 + [5.0] * 10 + [0.0] * 10)
add("ties alternating", [0.0, 1.0] * 20)
add("ties blocks of three", ([1.0] * 3 + [2.0] * 3) * 8, window_len=10)
add("ties symmetric plateaus", [1.0] * 8 + [3.0] * 8 + [1.0] * 8 + [3.0] * 8 + [1.0] * 8, window_len=20)
add("ties small integers", [float(x) for x in np.random.default_rng(20).integers(0, 3, 90)])
add("ties a spike", [4.0] * 20 + [9.0] + [4.0] * 20)
add("ties two spikes", [4.0] * 15 + [9.0] + [4.0] * 15 + [9.0] + [4.0] * 15, window_len=10, max_pvalue=0.05)

# Other parameters.
add("window 10 p 0.05", steps([100, 104, 99], [25, 25, 25], 21, 2.0), window_len=10, max_pvalue=0.05)
add("window 10 default p", steps([100, 110, 95, 125], [40, 35, 40, 35], 17, 2.0), window_len=10)
add("window 2", steps([1, 3, 2], [6, 6, 6], 22, 0.2), window_len=2, max_pvalue=0.05)
add("window 3", steps([1, 3, 2], [6, 6, 6], 22, 0.2), window_len=3, max_pvalue=0.05)
add("window 5 p 0.2", steps([10, 11, 10], [15, 15, 15], 23, 0.5), window_len=5, max_pvalue=0.2)
add("window 30 p 0.6", steps([10, 11], [30, 30], 24, 1.0), window_len=30, max_pvalue=0.6)
add("p 0.01", steps([100, 103, 100], [40, 40, 40], 25, 2.0), max_pvalue=0.01)
add("min magnitude 0.05", steps([100, 103, 120, 118], [40, 40, 40, 40], 26, 1.0), min_magnitude=0.05)
add("min magnitude 0.2 window 20", steps([100, 130, 140], [30, 30, 30], 27, 2.0), window_len=20, min_magnitude=0.2)
add("window longer than the series", steps([1, 2], [10, 10], 28, 0.1), window_len=500)

# A battery of random piecewise series, parameters drawn too.
rng = np.random.default_rng(164)
for k in range(60):
    pieces = int(rng.integers(1, 7))
    lengths = [int(x) for x in rng.integers(1, 60, pieces)]
    levels = [float(x) for x in rng.choice([10.0, 11.0, 12.0, 15.0, 20.0, 40.0], pieces)]
    scale = float(rng.choice([0.0, 0.2, 1.0, 3.0]))
    series = steps(levels, lengths, 1000 + k, scale)
    if rng.random() < 0.3:
        series = [float(round(x)) for x in series]
    if rng.random() < 0.2:
        for i in rng.integers(0, len(series), 3):
            series[int(i)] = None
    window_len = int(rng.choice([2, 3, 5, 8, 10, 16, 20, 30, 50]))
    max_pvalue = float(rng.choice([0.001, 0.01, 0.05, 0.1, 0.3]))
    min_magnitude = float(rng.choice([0.0, 0.0, 0.0, 0.02, 0.1]))
    add(f"random {k}", series, window_len, max_pvalue, min_magnitude)

# The merge step recomputes the change point after a dropped one, not the one before it, so that one keeps the
# figures of its former pieces: the vectors must hold such cases for the test to cover the rule.
stale_cases = 0
for case in cases:
    values = list(case["series"])
    fill_missing(values)
    kept, _ = compute_change_points(values, case["window_len"], case["max_pvalue"], case["min_magnitude"])
    stale_cases += stale(values, kept) > 0
print(f"{len(cases)} cases, {stale_cases} with figures kept from former pieces", file=sys.stderr)
assert stale_cases >= 3, stale_cases

json.dump(
    {
        "otava": version("apache-otava"),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "cases": cases,
    },
    sys.stdout,
    allow_nan=False,
)
print()
