"""Per-cell aggregation of TR164 metrics.csv files by pandas, polars or DuckDB: one peer, one run, timed in-process.

Usage: python peers.py [--timed N] PEER OUT.json FILE...

The peer reads the files, keeps ok rows that are not skip sentinels, and per (file, suite, phase, backend, model,
workload, n_agents, rep) computes every statistic cellscope computes from these rows (`FIGURES`): the ok-row
count; the mean and p50/p95/p99 (linear interpolation) of wall_ms, of ttft_ms over the rows that have one, and of
the per-request TPOT = (wall_ms - ttft_ms) / (completion_tokens - 1), defined for a row with a TTFT and more than
one completion token; the mean prompt and completion tokens; the median of 1000 / TPOT over positive TPOTs; and,
over the span max(complete_time_s) - min(submit_time_s) when it is positive, the completion tokens (aggregate
tps), all tokens (total tps), ok rows and ok rows within TTFT <= 2000 ms and TPOT <= 100 ms (goodput, only where
every ok row has a TTFT) per second. Each is written the way its users write fast code: only the needed columns
are read (`usecols`, a lazy scan's projection, DuckDB's own pushdown), all files in one query where the library
allows it, one grouped aggregation, no Python function per group.
Imports happen before timing, and the aggregation runs once untimed before the timed runs (each library's
first call pays for lazy initialisation that a long-lived user session would have paid already; timing only the
later calls gives the peer its best case). With `--timed N` it is timed N times and the median is reported
(`seconds`), with every run's figure (`seconds_each`). The per-cell values are written out so the xtask can check them against
cellscope's (a missing figure as null); the peak RSS is the process's own.
"""
import json
import math
import resource
import sys
import time

KEY = ["suite", "phase", "backend", "model", "workload", "n_agents", "rep"]
COLUMNS = KEY + [
    "agent_id", "request_id", "request_sequence", "wall_ms", "ttft_ms", "prompt_tokens", "completion_tokens",
    "submit_time_s", "complete_time_s", "status",
]
# Every per-cell figure besides ok_rows, named as in cellscope's cells; each peer returns them in this order.
FIGURES = [
    "mean_wall_ms", "p50_wall_ms", "p95_wall_ms", "p99_wall_ms",
    "mean_ttft_ms", "p50_ttft_ms", "p95_ttft_ms", "p99_ttft_ms",
    "mean_tpot_ms", "p50_tpot_ms", "p95_tpot_ms", "p99_tpot_ms",
    "mean_prompt_tokens", "mean_completion_tokens", "p50_interactivity_tps",
    "aggregate_tps", "total_tps", "request_throughput_rps", "goodput_rps",
]
# The goodput bounds of cellscope's default SLO, ms.
GOODPUT_TTFT_MS, GOODPUT_TPOT_MS = 2000, 100


def pandas_peer(files):
    import pandas as pd

    frames = []
    for index, path in enumerate(files):
        # A float TTFT whatever the file holds, so that a file whose TTFTs are all empty still reads as numbers.
        frame = pd.read_csv(path, engine="pyarrow", usecols=COLUMNS, dtype={"ttft_ms": "float64"})
        frame["file"] = index
        frames.append(frame)
    df = pd.concat(frames, ignore_index=True)
    sentinel = (df.wall_ms == 0) & (df.agent_id == 0) & (df.request_id == 0) & (df.request_sequence == 0)
    ok = df[(df.status == "ok") & ~sentinel]
    # Per-row columns, vectorised: NaN where a row has no TPOT (or no positive one), which the group
    # aggregations below skip.
    tpot = ((ok.wall_ms - ok.ttft_ms) / (ok.completion_tokens - 1)).where(
        ok.ttft_ms.notna() & (ok.completion_tokens > 1)
    )
    ok = ok.assign(
        tpot_ms=tpot,
        interactivity=(1000 / tpot).where(tpot > 0),
        good=(ok.ttft_ms <= GOODPUT_TTFT_MS) & ~(tpot > GOODPUT_TPOT_MS),
        unjudged=ok.ttft_ms.isna(),
    )
    grouped = ok.groupby(["file"] + KEY, sort=False)
    # Vectorised: one groupby quantile for the three levels of the three latencies (linear interpolation,
    # numpy's default), unstacked into columns, beside one agg for the counts, means and sums.
    quantiles = grouped[["wall_ms", "ttft_ms", "tpot_ms"]].quantile([0.5, 0.95, 0.99]).unstack()
    quantiles.columns = [f"p{round(level * 100)}_{column}" for column, level in quantiles.columns]
    result = grouped.agg(
        ok_rows=("wall_ms", "size"),
        mean_wall_ms=("wall_ms", "mean"),
        mean_ttft_ms=("ttft_ms", "mean"),
        mean_tpot_ms=("tpot_ms", "mean"),
        mean_prompt_tokens=("prompt_tokens", "mean"),
        mean_completion_tokens=("completion_tokens", "mean"),
        p50_interactivity_tps=("interactivity", "median"),
        prompt=("prompt_tokens", "sum"),
        completion=("completion_tokens", "sum"),
        good=("good", "sum"),
        unjudged=("unjudged", "sum"),
        first=("submit_time_s", "min"),
        last=("complete_time_s", "max"),
    ).join(quantiles).reset_index()
    # A throughput over a span that is not positive is missing, as in cellscope.
    span = (result["last"] - result["first"]).where(lambda span: span > 0)
    result["aggregate_tps"] = result.completion / span
    result["total_tps"] = (result.prompt + result.completion) / span
    result["request_throughput_rps"] = result.ok_rows / span
    result["goodput_rps"] = (result.good / span).where(result.unjudged == 0)
    return [
        (int(r[0]), tuple(str(v) for v in r[1:8]), int(r[8]), r[9:])
        for r in result[["file"] + KEY + ["ok_rows"] + FIGURES].itertuples(index=False, name=None)
    ]


def polars_peer(files):
    import polars as pl

    # One lazy scan of every file (read in parallel, only the projected columns parsed), the file as a column; a
    # float TTFT whatever the files hold, so that a file whose TTFTs are all empty still reads as numbers.
    scan = pl.scan_csv(files, include_file_paths="path", schema_overrides={"ttft_ms": pl.Float64}).select(
        COLUMNS + ["path"]
    )
    sentinel = (
        (pl.col("wall_ms") == 0) & (pl.col("agent_id") == 0) & (pl.col("request_id") == 0)
        & (pl.col("request_sequence") == 0)
    )
    ttft = pl.col("ttft_ms")
    tpot = pl.col("tpot_ms")
    span = pl.col("complete_time_s").max() - pl.col("submit_time_s").min()

    def per_second(count):
        # A throughput over a span that is not positive is missing (null), as in cellscope.
        return pl.when(span > 0).then(count / span)

    def quantiles(column, name):
        return [
            column.quantile(level, interpolation="linear").alias(f"p{round(level * 100)}_{name}")
            for level in (0.5, 0.95, 0.99)
        ]

    result = (
        scan.filter((pl.col("status") == "ok") & ~sentinel)
        .with_columns(
            pl.when(ttft.is_not_null() & (pl.col("completion_tokens") > 1))
            .then((pl.col("wall_ms") - ttft) / (pl.col("completion_tokens") - 1))
            .alias("tpot_ms")
        )
        .group_by(["path"] + KEY)
        .agg(
            pl.len().alias("ok_rows"),
            pl.col("wall_ms").mean().alias("mean_wall_ms"),
            *quantiles(pl.col("wall_ms"), "wall_ms"),
            ttft.mean().alias("mean_ttft_ms"),
            *quantiles(ttft, "ttft_ms"),
            tpot.mean().alias("mean_tpot_ms"),
            *quantiles(tpot, "tpot_ms"),
            pl.col("prompt_tokens").mean().alias("mean_prompt_tokens"),
            pl.col("completion_tokens").mean().alias("mean_completion_tokens"),
            (1000 / tpot).filter(tpot > 0).quantile(0.5, interpolation="linear").alias("p50_interactivity_tps"),
            per_second(pl.col("completion_tokens").sum()).alias("aggregate_tps"),
            per_second(pl.col("prompt_tokens").sum() + pl.col("completion_tokens").sum()).alias("total_tps"),
            per_second(pl.len()).alias("request_throughput_rps"),
            pl.when(ttft.null_count() == 0)
            .then(per_second(((ttft <= GOODPUT_TTFT_MS) & ((tpot <= GOODPUT_TPOT_MS) | tpot.is_null())).sum()))
            .alias("goodput_rps"),
        )
        .select(["path"] + KEY + ["ok_rows"] + FIGURES)
        .collect()
    )
    index_of = {path: index for index, path in enumerate(files)}
    return [
        (index_of[r[0]], tuple(str(v) for v in r[1:8]), r[8], r[9:])
        for r in result.iter_rows()
    ]


def duckdb_peer(files):
    import duckdb

    con = duckdb.connect()
    key = ", ".join(KEY)
    # The latencies' three levels each come from one list-valued quantile_cont, unpacked outside; the
    # throughputs divide sums by the cell's span outside the aggregation, NULL where the span is not positive.
    # The TTFT is read as a number whatever the files hold, so that all-empty TTFTs still read as NULLs.
    rows = con.execute(
        f"""
        WITH ok AS (
            SELECT *, CASE WHEN completion_tokens > 1 THEN (wall_ms - ttft_ms) / (completion_tokens - 1) END AS tpot_ms
            FROM read_csv(?, header = true, filename = true, types = {{'ttft_ms': 'DOUBLE'}})
            WHERE status = 'ok' AND NOT (wall_ms = 0 AND agent_id = 0 AND request_id = 0 AND request_sequence = 0)
        ), cells AS (
            SELECT filename, {key}, count(*) AS ok_rows,
                   avg(wall_ms) AS mean_wall_ms, quantile_cont(wall_ms, [0.5, 0.95, 0.99]) AS wall,
                   avg(ttft_ms) AS mean_ttft_ms, quantile_cont(ttft_ms, [0.5, 0.95, 0.99]) AS ttft,
                   avg(tpot_ms) AS mean_tpot_ms, quantile_cont(tpot_ms, [0.5, 0.95, 0.99]) AS tpot,
                   avg(prompt_tokens) AS mean_prompt_tokens, avg(completion_tokens) AS mean_completion_tokens,
                   quantile_cont(1000 / tpot_ms, 0.5) FILTER (WHERE tpot_ms > 0) AS interactivity,
                   sum(prompt_tokens) AS prompt, sum(completion_tokens) AS completion,
                   count(*) FILTER (
                       WHERE ttft_ms <= {GOODPUT_TTFT_MS} AND (tpot_ms IS NULL OR tpot_ms <= {GOODPUT_TPOT_MS})
                   ) AS good,
                   count(*) - count(ttft_ms) AS unjudged,
                   max(complete_time_s) - min(submit_time_s) AS span
            FROM ok
            GROUP BY ALL
        )
        SELECT filename, {key}, ok_rows,
               mean_wall_ms, wall[1], wall[2], wall[3], mean_ttft_ms, ttft[1], ttft[2], ttft[3],
               mean_tpot_ms, tpot[1], tpot[2], tpot[3], mean_prompt_tokens, mean_completion_tokens, interactivity,
               CASE WHEN span > 0 THEN completion / span END,
               CASE WHEN span > 0 THEN (prompt + completion) / span END,
               CASE WHEN span > 0 THEN ok_rows / span END,
               CASE WHEN span > 0 AND unjudged = 0 THEN good / span END
        FROM cells
        """,
        [files],
    ).fetchall()
    index_of = {path: index for index, path in enumerate(files)}
    return [(index_of[r[0]], tuple(str(v) for v in r[1:8]), r[8], r[9:]) for r in rows]


PEERS = {"pandas": pandas_peer, "polars": polars_peer, "duckdb": duckdb_peer}


def figure(value):
    """A figure as JSON takes it: a float, or None for a missing one (NaN in pandas, null elsewhere)."""
    if value is None:
        return None
    value = float(value)
    return None if math.isnan(value) else value


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
            {"file": f, "key": list(k), "ok_rows": int(n), **{c: figure(v) for c, v in zip(FIGURES, values, strict=True)}}
            for f, k, n, values in cells
        ],
    }
    with open(out, "w") as handle:
        json.dump(report, handle)
    print(f"{name} {report['version']}: {seconds * 1e3:.1f} ms, {len(cells)} cells", file=sys.stderr)


if __name__ == "__main__":
    main()
