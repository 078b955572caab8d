"""The nightly demo root's Histories as numpy and Apache Otava compute them, for server/tests/suite/history.rs.

For every configuration × workload × load of `data/demo-nightly` (`cargo xtask demo-data` writes it), this reads
each run's `manifest.json` (`started_at`) and `metrics.csv` with the standard library, takes each cell's median
time to first token of its ok rows with numpy (linear interpolation, numpy's default), averages a run's reps, orders
the runs by their start time, and runs Otava's `compute_change_points` with its defaults (window 50, p ≤ 0.001)
after `fill_missing`, as Otava's own analysis of a metric does. Same environment as changepoint_otava.py; run from
the repository's root:

    target/otava-venv/bin/python model/tests/vectors/nightly_otava.py data/demo-nightly > model/tests/vectors/nightly_otava.json
"""

import csv
import json
import sys
from collections import defaultdict
from importlib.metadata import version
from pathlib import Path

import numpy as np
from otava.analysis import compute_change_points, fill_missing

assert version("apache-otava") == "0.8.0", version("apache-otava")

root = Path(sys.argv[1])
cells = defaultdict(list)
started = {}
for manifest_path in sorted(root.glob("**/manifest.json")):
    run_dir = manifest_path.parent
    run_id = run_dir.name
    started[run_id] = json.loads(manifest_path.read_text())["started_at"]
    with open(run_dir / "metrics.csv", newline="") as handle:
        for row in csv.DictReader(handle):
            if row["status"] != "ok":
                continue
            key = (row["backend"], row["model"], row["workload"], int(row["n_agents"]))
            cells[(key, run_id, int(row["rep"]))].append(float(row["ttft_ms"]))

per_run = defaultdict(lambda: defaultdict(list))
for (key, run_id, rep), ttfts in cells.items():
    per_run[key][run_id].append(float(np.median(np.array(ttfts))))

series = []
for key in sorted(per_run):
    runs = sorted(per_run[key], key=lambda run_id: (started[run_id], run_id))
    values = [float(np.mean(per_run[key][run_id])) for run_id in runs]
    filled = list(values)
    fill_missing(filled)
    change_points, _ = compute_change_points(filled, window_len=50, max_pvalue=0.001, min_magnitude=0.0)
    backend, model, workload, n = key
    series.append(
        {
            "backend": backend,
            "model": model,
            "workload": workload,
            "n": n,
            "runs": runs,
            "values": values,
            "change_points": [
                {
                    "index": int(c.index),
                    "run": runs[int(c.index)],
                    "p_value": float(c.stats.pvalue),
                    "mean_before": float(c.stats.mean_before()),
                    "mean_after": float(c.stats.mean_after()),
                }
                for c in change_points
            ],
        }
    )

json.dump({"otava": version("apache-otava"), "series": series}, sys.stdout, indent=1, allow_nan=False)
print()
