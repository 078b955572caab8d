"""Per-run aggregation of `vllm bench serve --save-result --save-detailed` JSON files by pandas or polars.

Usage: python peers_vllm.py PEER ROOT OUT.json        (PEER: pandas or polars)

One run of one peer in a fresh process: imports happen before the clock starts; the timed part finds every
`*.json` under ROOT, reads each file and computes, per file (one file = one cell), what cellscope computes:
requests, ok requests (a request failed when its `errors` text is non-empty or it has no latency), mean and
p50/p95/p99 of wall ms = latencies × 1000 (linear interpolation), p50/p95 of TTFT ms, mean prompt and completion
tokens, and aggregate tps = Σ output_lens / (max(start_times + latencies) − min(start_times)), all over the ok
requests. The per-file values, the seconds and the peak RSS are written to OUT.json for the xtask, which checks
them against cellscope's `cells --format json`.
"""
import glob
import json
import os
import resource
import sys
import time

COLUMNS = ["input_lens", "output_lens", "ttfts", "latencies", "start_times", "errors"]


def files(root):
    return sorted(glob.glob(os.path.join(root, "**", "*.json"), recursive=True))


def pandas_peer(root):
    """orjson reads each file (the result is one JSON object of parallel arrays, which `pd.read_json` cannot
    take whole); the arrays become one long DataFrame with a file column; one groupby does the rest."""
    import numpy as np
    import orjson
    import pandas as pd

    paths = files(root)
    frames = []
    for index, path in enumerate(paths):
        with open(path, "rb") as handle:
            run = orjson.loads(handle.read())
        frame = pd.DataFrame({column: run[column] for column in COLUMNS})
        frame["file"] = np.int32(index)
        frames.append(frame)
    df = pd.concat(frames, ignore_index=True)
    rows = df.groupby("file", sort=True).size()
    ok = df[(df["errors"] == "") & df["latencies"].notna()]
    ok = ok.assign(
        wall_ms=ok["latencies"] * 1000.0,
        ttft_ms=ok["ttfts"] * 1000.0,
        end_s=ok["start_times"] + ok["latencies"],
    )
    grouped = ok.groupby("file", sort=True)
    result = grouped.agg(
        ok_rows=("wall_ms", "size"),
        mean_wall_ms=("wall_ms", "mean"),
        mean_prompt_tokens=("input_lens", "mean"),
        mean_completion_tokens=("output_lens", "mean"),
        tokens=("output_lens", "sum"),
        first=("start_times", "min"),
        last=("end_s", "max"),
    )
    wall = grouped["wall_ms"].quantile([0.5, 0.95, 0.99]).unstack()
    ttft = grouped["ttft_ms"].quantile([0.5, 0.95]).unstack()
    result["aggregate_tps"] = result["tokens"] / (result["last"] - result["first"])
    result["rows"] = rows
    out = []
    for file, row in result.iterrows():
        out.append(
            {
                "path": os.path.relpath(paths[file], root),
                "rows": int(row["rows"]),
                "ok_rows": int(row["ok_rows"]),
                "mean_wall_ms": row["mean_wall_ms"],
                "p50_wall_ms": wall.at[file, 0.5],
                "p95_wall_ms": wall.at[file, 0.95],
                "p99_wall_ms": wall.at[file, 0.99],
                "p50_ttft_ms": ttft.at[file, 0.5],
                "p95_ttft_ms": ttft.at[file, 0.95],
                "mean_prompt_tokens": row["mean_prompt_tokens"],
                "mean_completion_tokens": row["mean_completion_tokens"],
                "aggregate_tps": row["aggregate_tps"],
            }
        )
    return out


def polars_peer(root):
    """Each file is one line of JSON, so polars' lazy NDJSON scan reads them all (in parallel, only the columns
    selected), the arrays are exploded into rows and one group_by does the rest."""
    import polars as pl

    paths = files(root)
    ok = (pl.col("errors") == "") & pl.col("latencies").is_not_null()
    wall = pl.col("latencies").filter(ok) * 1000.0
    ttft = pl.col("ttfts").filter(ok) * 1000.0
    start = pl.col("start_times").filter(ok)
    end = (pl.col("start_times") + pl.col("latencies")).filter(ok)
    result = (
        pl.scan_ndjson(paths, include_file_paths="path")
        .select(["path"] + COLUMNS)
        .explode(COLUMNS)
        .group_by("path")
        .agg(
            pl.len().alias("rows"),
            ok.sum().alias("ok_rows"),
            wall.mean().alias("mean_wall_ms"),
            wall.quantile(0.5, interpolation="linear").alias("p50_wall_ms"),
            wall.quantile(0.95, interpolation="linear").alias("p95_wall_ms"),
            wall.quantile(0.99, interpolation="linear").alias("p99_wall_ms"),
            ttft.quantile(0.5, interpolation="linear").alias("p50_ttft_ms"),
            ttft.quantile(0.95, interpolation="linear").alias("p95_ttft_ms"),
            pl.col("input_lens").filter(ok).mean().alias("mean_prompt_tokens"),
            pl.col("output_lens").filter(ok).mean().alias("mean_completion_tokens"),
            (pl.col("output_lens").filter(ok).sum() / (end.max() - start.min())).alias("aggregate_tps"),
        )
        .sort("path")
        .collect()
    )
    rows = result.to_dicts()
    for row in rows:
        row["path"] = os.path.relpath(row["path"], root)
    return rows


PEERS = {"pandas": pandas_peer, "polars": polars_peer}


def main():
    name, root, out = sys.argv[1], sys.argv[2], sys.argv[3]
    import numpy, orjson, pandas, polars  # noqa: F401  (imports are not timed)

    started = time.perf_counter()
    cells = PEERS[name](root)
    seconds = time.perf_counter() - started
    report = {
        "peer": name,
        "version": sys.modules[name].__version__,
        "seconds": seconds,
        # Linux reports kilobytes.
        "max_rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
        "cells": cells,
    }
    with open(out, "w") as handle:
        json.dump(report, handle)
    print(f"{name}: {seconds:.2f} s, {len(cells)} cells, peak RSS {report['max_rss_kb'] / 1024:.0f} MB", file=sys.stderr)


if __name__ == "__main__":
    main()
