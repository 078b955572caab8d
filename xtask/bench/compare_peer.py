"""The peer of `cargo xtask bench compare`: the same head-to-head as cellscope's Compare view, written the way a
pandas + SciPy user writes it (vectorised groupby and pivot, scipy.stats.wilcoxon, a NumPy bootstrap drawn as one
(10,000 x n) index matrix).

Usage: compare_peer.py CELLS_CSV OUT_JSON REPEAT
Reads the cells table (`cellscope cells DIR --format csv`), then times REPEAT computations of vllm vs sglang on
efficiency per workload over all cells (one pair per configuration: matched on suite, model, workload and N > 1,
each side the mean over its phases and reps; cells excluded by a `comparison` or `all` ledger entry left out), and writes the timings and
the numbers (n_pairs, mean delta, Wilcoxon p, Holm p per workload) for the cross-check.
"""
import json
import sys
import time

import numpy as np
import pandas as pd
import scipy
import scipy.stats

RESAMPLES = 10_000
SEED = 164


def holm(p):
    p = np.asarray(p, dtype=float)
    order = np.argsort(p, kind="stable")
    scaled = (len(p) - np.arange(len(p))) * p[order]
    adjusted = np.minimum(np.maximum.accumulate(scaled), 1.0)
    out = np.empty_like(adjusted)
    out[order] = adjusted
    return out


def compare(cells, rng):
    sides = cells[cells["backend"].isin(["vllm", "sglang"]) & (cells["n"] > 1)]
    sides = sides[~sides["exclusion_scope"].isin(["comparison", "all"])]
    means = (
        sides.groupby(["suite", "model", "workload", "n", "backend"], sort=True)["efficiency"]
        .mean()
        .unstack("backend")
        .dropna()
    )
    deltas = (means["vllm"] - means["sglang"]).rename("delta").reset_index()
    rows = []
    for workload, group in deltas.groupby("workload", sort=True):
        d = group["delta"].to_numpy()
        test = scipy.stats.wilcoxon(d)
        draws = rng.integers(0, len(d), size=(RESAMPLES, len(d)))
        boot = d[draws].mean(axis=1)
        low, high = np.percentile(boot, [2.5, 97.5])
        rows.append({"group": workload, "n_pairs": int(len(d)), "mean_delta": float(d.mean()),
                     "median_delta": float(np.median(d)), "p_value": float(test.pvalue),
                     "ci": [float(low), float(high)]})
    for row, adjusted in zip(rows, holm([row["p_value"] for row in rows])):
        row["holm_p"] = float(adjusted)
    return rows


def main():
    cells_csv, out_json, repeat = sys.argv[1], sys.argv[2], int(sys.argv[3])
    cells = pd.read_csv(cells_csv, dtype={"exclusion_scope": "string"})
    seconds = []
    result = None
    for _ in range(repeat):
        rng = np.random.default_rng(SEED)
        start = time.perf_counter()
        result = compare(cells, rng)
        seconds.append(time.perf_counter() - start)
    json.dump({"seconds": seconds, "groups": result, "version": f"pandas {pd.__version__}, scipy {scipy.__version__}, "
               f"numpy {np.__version__}"}, open(out_json, "w"))


if __name__ == "__main__":
    main()
