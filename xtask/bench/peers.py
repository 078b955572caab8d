"""Per-cell aggregation of TR164 metrics.csv files by pandas, polars and DuckDB, timed in-process.

Usage: python peers.py OUT.json REPEAT FILE...

For each peer: read the files, keep ok rows that are not skip sentinels, and per (file, suite, phase, backend,
model, workload, n_agents, rep) compute the ok-row count, p50/p95/p99 of wall_ms (linear interpolation) and
aggregate tps = sum(completion_tokens) / (max(complete_time_s) - min(submit_time_s)). Imports happen before
timing; each repetition reads the files from scratch. The per-cell values are written out so the xtask can
check them against cellscope's.
"""
import json
import statistics
import sys
import time

KEY = ["suite", "phase", "backend", "model", "workload", "n_agents", "rep"]


def pandas_peer(files):
    import pandas as pd

    frames = []
    for index, path in enumerate(files):
        frame = pd.read_csv(path, engine="pyarrow")
        frame["file"] = index
        frames.append(frame)
    df = pd.concat(frames, ignore_index=True)
    sentinel = (df.wall_ms == 0) & (df.agent_id == 0) & (df.request_id == 0) & (df.request_sequence == 0)
    ok = df[(df.status == "ok") & ~sentinel]
    grouped = ok.groupby(["file"] + KEY, sort=False)
    # Vectorised: one groupby quantile for the three levels (linear interpolation, numpy's default), unstacked
    # into columns, beside one agg for the counts and sums; no Python function per group.
    quantiles = grouped["wall_ms"].quantile([0.5, 0.95, 0.99]).unstack()
    quantiles.columns = ["p50", "p95", "p99"]
    result = grouped.agg(
        ok_rows=("wall_ms", "size"),
        tokens=("completion_tokens", "sum"),
        first=("submit_time_s", "min"),
        last=("complete_time_s", "max"),
    ).join(quantiles).reset_index()
    result["tps"] = result.tokens / (result["last"] - result["first"])
    return [
        (int(r.file), tuple(str(getattr(r, k)) for k in KEY), int(r.ok_rows), r.p50, r.p95, r.p99, r.tps)
        for r in result.itertuples()
    ]


def polars_peer(files):
    import polars as pl

    frames = [pl.read_csv(path).with_columns(pl.lit(index).alias("file")) for index, path in enumerate(files)]
    df = pl.concat(frames, how="diagonal_relaxed")
    sentinel = (
        (pl.col("wall_ms") == 0) & (pl.col("agent_id") == 0) & (pl.col("request_id") == 0)
        & (pl.col("request_sequence") == 0)
    )
    result = (
        df.filter((pl.col("status") == "ok") & ~sentinel)
        .group_by(["file"] + KEY)
        .agg(
            pl.len().alias("ok_rows"),
            pl.col("wall_ms").quantile(0.5, interpolation="linear").alias("p50"),
            pl.col("wall_ms").quantile(0.95, interpolation="linear").alias("p95"),
            pl.col("wall_ms").quantile(0.99, interpolation="linear").alias("p99"),
            (pl.col("completion_tokens").sum() / (pl.col("complete_time_s").max() - pl.col("submit_time_s").min())).alias("tps"),
        )
    )
    return [
        (r["file"], tuple(str(r[k]) for k in KEY), r["ok_rows"], r["p50"], r["p95"], r["p99"], r["tps"])
        for r in result.iter_rows(named=True)
    ]


def duckdb_peer(files):
    import duckdb

    con = duckdb.connect()
    union = " UNION ALL BY NAME ".join(
        f"SELECT *, {index} AS file FROM read_csv('{path}', header = true)" for index, path in enumerate(files)
    )
    rows = con.execute(
        f"""
        SELECT file, {', '.join(KEY)}, count(*) AS ok_rows,
               quantile_cont(wall_ms, 0.5), quantile_cont(wall_ms, 0.95), quantile_cont(wall_ms, 0.99),
               sum(completion_tokens) / (max(complete_time_s) - min(submit_time_s))
        FROM ({union})
        WHERE status = 'ok' AND NOT (wall_ms = 0 AND agent_id = 0 AND request_id = 0 AND request_sequence = 0)
        GROUP BY ALL
        """
    ).fetchall()
    return [(r[0], tuple(str(v) for v in r[1:8]), r[8], r[9], r[10], r[11], r[12]) for r in rows]


PEERS = {"pandas": pandas_peer, "polars": polars_peer, "duckdb": duckdb_peer}


def main():
    out, repeat, files = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    import duckdb, pandas, polars, pyarrow  # noqa: F401  (imports are not timed)

    report = {"files": files, "peers": {}}
    for name, peer in PEERS.items():
        seconds = []
        for _ in range(repeat):
            started = time.perf_counter()
            cells = peer(files)
            seconds.append(time.perf_counter() - started)
        version = sys.modules[name].__version__
        report["peers"][name] = {
            "version": version,
            "median_s": statistics.median(seconds),
            "min_s": min(seconds),
            "seconds": seconds,
            "cells": [
                {"file": f, "key": list(k), "ok_rows": n, "p50_wall_ms": a, "p95_wall_ms": b, "p99_wall_ms": c, "aggregate_tps": t}
                for f, k, n, a, b, c, t in cells
            ],
        }
        print(f"{name} {version}: median {statistics.median(seconds) * 1e3:.1f} ms, fastest {min(seconds) * 1e3:.1f} ms, {len(cells)} cells", file=sys.stderr)
    with open(out, "w") as handle:
        json.dump(report, handle)


if __name__ == "__main__":
    main()
