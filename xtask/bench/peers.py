"""Per-cell aggregation of TR164 metrics.csv files by pandas, polars or DuckDB: one peer, one run, timed in-process.

Usage: python peers.py [--timed N] PEER OUT.json FILE...

The peer reads the files, keeps ok rows that are not skip sentinels, and per (file, suite, phase, backend, model,
workload, n_agents, rep) computes the ok-row count, p50/p95/p99 of wall_ms (linear interpolation) and aggregate
tps = sum(completion_tokens) / (max(complete_time_s) - min(submit_time_s)). Each is written the way its users
write fast code: only the needed columns are read (`usecols`, a lazy scan's projection, DuckDB's own pushdown),
all files in one query where the library allows it, one grouped aggregation, no Python function per group.
Imports happen before timing, and the aggregation runs once untimed before the timed runs (each library's
first call pays for lazy initialisation that a long-lived user session would have paid already; timing only the
later calls gives the peer its best case). With `--timed N` it is timed N times and the median is reported
(`seconds`), with every run's figure (`seconds_each`). The per-cell values are written out so the xtask can check them against
cellscope's; the peak RSS is the process's own.
"""
import json
import resource
import sys
import time

KEY = ["suite", "phase", "backend", "model", "workload", "n_agents", "rep"]
COLUMNS = KEY + [
    "agent_id", "request_id", "request_sequence", "wall_ms", "completion_tokens", "submit_time_s",
    "complete_time_s", "status",
]


def pandas_peer(files):
    import pandas as pd

    frames = []
    for index, path in enumerate(files):
        frame = pd.read_csv(path, engine="pyarrow", usecols=COLUMNS)
        frame["file"] = index
        frames.append(frame)
    df = pd.concat(frames, ignore_index=True)
    sentinel = (df.wall_ms == 0) & (df.agent_id == 0) & (df.request_id == 0) & (df.request_sequence == 0)
    ok = df[(df.status == "ok") & ~sentinel]
    grouped = ok.groupby(["file"] + KEY, sort=False)
    # Vectorised: one groupby quantile for the three levels (linear interpolation, numpy's default), unstacked
    # into columns, beside one agg for the counts and sums.
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

    # One lazy scan of every file (read in parallel, only the projected columns parsed), the file as a column.
    scan = pl.scan_csv(files, include_file_paths="path").select(COLUMNS + ["path"])
    sentinel = (
        (pl.col("wall_ms") == 0) & (pl.col("agent_id") == 0) & (pl.col("request_id") == 0)
        & (pl.col("request_sequence") == 0)
    )
    result = (
        scan.filter((pl.col("status") == "ok") & ~sentinel)
        .group_by(["path"] + KEY)
        .agg(
            pl.len().alias("ok_rows"),
            pl.col("wall_ms").quantile(0.5, interpolation="linear").alias("p50"),
            pl.col("wall_ms").quantile(0.95, interpolation="linear").alias("p95"),
            pl.col("wall_ms").quantile(0.99, interpolation="linear").alias("p99"),
            (pl.col("completion_tokens").sum() / (pl.col("complete_time_s").max() - pl.col("submit_time_s").min())).alias("tps"),
        )
        .collect()
    )
    index_of = {path: index for index, path in enumerate(files)}
    return [
        (index_of[r["path"]], tuple(str(r[k]) for k in KEY), r["ok_rows"], r["p50"], r["p95"], r["p99"], r["tps"])
        for r in result.iter_rows(named=True)
    ]


def duckdb_peer(files):
    import duckdb

    con = duckdb.connect()
    rows = con.execute(
        f"""
        SELECT filename, {', '.join(KEY)}, count(*) AS ok_rows,
               quantile_cont(wall_ms, 0.5), quantile_cont(wall_ms, 0.95), quantile_cont(wall_ms, 0.99),
               sum(completion_tokens) / (max(complete_time_s) - min(submit_time_s))
        FROM read_csv(?, header = true, filename = true)
        WHERE status = 'ok' AND NOT (wall_ms = 0 AND agent_id = 0 AND request_id = 0 AND request_sequence = 0)
        GROUP BY ALL
        """,
        [files],
    ).fetchall()
    index_of = {path: index for index, path in enumerate(files)}
    return [(index_of[r[0]], tuple(str(v) for v in r[1:8]), r[8], r[9], r[10], r[11], r[12]) for r in rows]


PEERS = {"pandas": pandas_peer, "polars": polars_peer, "duckdb": duckdb_peer}


def main():
    args = sys.argv[1:]
    timed = 1
    if args[0] == "--timed":
        timed, args = int(args[1]), args[2:]
    name, out, files = args[0], args[1], args[2:]
    import duckdb, pandas, polars, pyarrow  # noqa: F401  (imports are not timed)

    PEERS[name](files)
    each = []
    for _ in range(timed):
        started = time.perf_counter()
        cells = PEERS[name](files)
        each.append(time.perf_counter() - started)
    seconds = sorted(each)[len(each) // 2]
    report = {
        "peer": name,
        "version": sys.modules[name].__version__,
        "seconds": seconds,
        "seconds_each": each,
        # Linux reports kilobytes.
        "max_rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
        "cells": [
            {"file": f, "key": list(k), "ok_rows": n, "p50_wall_ms": a, "p95_wall_ms": b, "p99_wall_ms": c, "aggregate_tps": t}
            for f, k, n, a, b, c, t in cells
        ],
    }
    with open(out, "w") as handle:
        json.dump(report, handle)
    print(f"{name} {report['version']}: {seconds * 1e3:.1f} ms, {len(cells)} cells", file=sys.stderr)


if __name__ == "__main__":
    main()
