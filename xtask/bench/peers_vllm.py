"""Per-run aggregation of `vllm bench serve --save-result --save-detailed` JSON files by pandas or polars.

Usage: python peers_vllm.py PEER ROOT OUT.json        (PEER: pandas or polars)

One run of one peer in a fresh process: imports happen before the clock starts; the timed part finds every
`*.json` under ROOT, reads each file and computes, per file (one file = one cell), every statistic cellscope
computes from its per-request arrays (`FIGURES`), all over the ok requests (a request failed when its `errors`
text is non-empty or it has no latency): the request and ok-request counts; the mean and p50/p95/p99 (linear
interpolation) of wall ms = latencies × 1000, of TTFT ms = ttfts × 1000 and of the per-request TPOT =
(wall − TTFT) / (output_lens − 1), defined for a request with a TTFT and more than one output token; the same of
ITL ms, every gap of every ok request's `itls` × 1000 pooled; the mean prompt and completion tokens; the median of
1000 / TPOT over positive TPOTs; and, over the span max(start_times + latencies) − min(start_times) when it is
positive (these files carry per-request start times, so cellscope does not fall back on the tool's `duration`),
output tokens (aggregate tps), all tokens (total tps), ok requests and ok requests within TTFT ≤ 2000 ms and TPOT
≤ 100 ms (goodput, only where every ok request has a TTFT) per second. Throughput per accelerator is null, as in
cellscope: neither the files nor the sweep's cellscope.toml state an accelerator count. The per-file values (a
missing figure as null), the seconds and the peak RSS are written to OUT.json for the xtask, which checks them
against cellscope's `cells --format json`.
"""
import glob
import json
import math
import os
import resource
import sys
import time

COLUMNS = ["input_lens", "output_lens", "ttfts", "latencies", "start_times", "errors", "itls"]
# Every per-cell figure besides the counts, named as in cellscope's cells; each peer returns them all.
FIGURES = [
    "mean_wall_ms", "p50_wall_ms", "p95_wall_ms", "p99_wall_ms",
    "mean_ttft_ms", "p50_ttft_ms", "p95_ttft_ms", "p99_ttft_ms",
    "mean_tpot_ms", "p50_tpot_ms", "p95_tpot_ms", "p99_tpot_ms",
    "mean_itl_ms", "p50_itl_ms", "p95_itl_ms", "p99_itl_ms",
    "mean_prompt_tokens", "mean_completion_tokens", "p50_interactivity_tps",
    "aggregate_tps", "total_tps", "request_throughput_rps", "goodput_rps",
]
LEVELS = [0.5, 0.95, 0.99]
# The goodput bounds of cellscope's default SLO, ms.
GOODPUT_TTFT_MS, GOODPUT_TPOT_MS = 2000.0, 100.0


def files(root):
    return sorted(glob.glob(os.path.join(root, "**", "*.json"), recursive=True))


def pandas_peer(root):
    """orjson reads each file (the result is one JSON object of parallel arrays, which `pd.read_json` cannot
    take whole); the arrays become one long DataFrame with a file column, the per-request figures are columns
    computed over it, and grouped aggregations do the rest; the pooled gaps come from exploding `itls`."""
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
    wall = ok["latencies"] * 1000.0
    ttft = ok["ttfts"] * 1000.0
    # NaN where a request has no TPOT (or no positive one), which the group aggregations below skip.
    tpot = ((wall - ttft) / (ok["output_lens"] - 1)).where(ttft.notna() & (ok["output_lens"] > 1))
    ok = ok.assign(
        wall_ms=wall,
        ttft_ms=ttft,
        tpot_ms=tpot,
        interactivity=(1000.0 / tpot).where(tpot > 0),
        good=(ttft <= GOODPUT_TTFT_MS) & ~(tpot > GOODPUT_TPOT_MS),
        unjudged=ttft.isna(),
        end_s=ok["start_times"] + ok["latencies"],
    )
    grouped = ok.groupby("file", sort=True)
    # One groupby quantile for the three levels of the three per-request latencies, unstacked into columns.
    quantiles = grouped[["wall_ms", "ttft_ms", "tpot_ms"]].quantile(LEVELS).unstack()
    quantiles.columns = [f"p{round(level * 100)}_{column}" for column, level in quantiles.columns]
    # Each ok request's gaps as rows under its file (an empty list explodes to a NaN, which is skipped).
    itl = ok["itls"].set_axis(ok["file"]).explode().astype("float64").mul(1000.0).groupby(level="file")
    itl_quantiles = itl.quantile(LEVELS).unstack()
    itl_quantiles.columns = [f"p{round(level * 100)}_itl_ms" for level in itl_quantiles.columns]
    result = (
        rows.rename("rows")
        .to_frame()
        .join(
            grouped.agg(
                ok_rows=("wall_ms", "size"),
                mean_wall_ms=("wall_ms", "mean"),
                mean_ttft_ms=("ttft_ms", "mean"),
                mean_tpot_ms=("tpot_ms", "mean"),
                mean_prompt_tokens=("input_lens", "mean"),
                mean_completion_tokens=("output_lens", "mean"),
                p50_interactivity_tps=("interactivity", "median"),
                prompt=("input_lens", "sum"),
                completion=("output_lens", "sum"),
                good=("good", "sum"),
                unjudged=("unjudged", "sum"),
                first=("start_times", "min"),
                last=("end_s", "max"),
            )
        )
        .join(quantiles)
        .join(itl.mean().rename("mean_itl_ms"))
        .join(itl_quantiles)
    )
    result["ok_rows"] = result["ok_rows"].fillna(0)
    # A throughput over a span that is not positive is missing, as in cellscope.
    span = (result["last"] - result["first"]).where(lambda span: span > 0)
    result["aggregate_tps"] = result["completion"] / span
    result["total_tps"] = (result["prompt"] + result["completion"]) / span
    result["request_throughput_rps"] = result["ok_rows"] / span
    result["goodput_rps"] = (result["good"] / span).where(result["unjudged"] == 0)
    out = []
    for file, row in zip(result.index, result[["rows", "ok_rows"] + FIGURES].to_dict("records")):
        out.append({"path": os.path.relpath(paths[file], root), **row})
    return out


def polars_peer(root):
    """Each file is one line of JSON, so polars' lazy NDJSON scan reads them all (in parallel, only the columns
    selected), the arrays are exploded into rows (each keeping its list of gaps), the per-request figures are
    columns, and one group_by does the rest; the pooled gaps come from exploding each group's lists."""
    import polars as pl

    paths = files(root)
    ok = pl.col("ok")
    wall = pl.col("wall_ms").filter(ok)
    ttft = pl.col("ttft_ms").filter(ok)
    tpot = pl.col("tpot_ms").filter(ok)
    itl = pl.col("itls").filter(ok).explode() * 1000.0
    span = (pl.col("start_times") + pl.col("latencies")).filter(ok).max() - pl.col("start_times").filter(ok).min()

    def per_second(count):
        # A throughput over a span that is not positive is missing (null), as in cellscope.
        return pl.when(span > 0).then(count / span)

    def stats(column, name):
        return [column.mean().alias(f"mean_{name}")] + [
            column.quantile(level, interpolation="linear").alias(f"p{round(level * 100)}_{name}")
            for level in LEVELS
        ]

    result = (
        pl.scan_ndjson(paths, include_file_paths="path")
        .select(["path"] + COLUMNS)
        .explode(COLUMNS)
        .with_columns(
            ((pl.col("errors") == "") & pl.col("latencies").is_not_null()).alias("ok"),
            (pl.col("latencies") * 1000.0).alias("wall_ms"),
            (pl.col("ttfts") * 1000.0).alias("ttft_ms"),
        )
        .with_columns(
            pl.when(pl.col("ttft_ms").is_not_null() & (pl.col("output_lens") > 1))
            .then((pl.col("wall_ms") - pl.col("ttft_ms")) / (pl.col("output_lens") - 1))
            .alias("tpot_ms")
        )
        .group_by("path")
        .agg(
            pl.len().alias("rows"),
            ok.sum().alias("ok_rows"),
            *stats(wall, "wall_ms"),
            *stats(ttft, "ttft_ms"),
            *stats(tpot, "tpot_ms"),
            *stats(itl, "itl_ms"),
            pl.col("input_lens").filter(ok).mean().alias("mean_prompt_tokens"),
            pl.col("output_lens").filter(ok).mean().alias("mean_completion_tokens"),
            (1000.0 / tpot).filter(tpot > 0).quantile(0.5, interpolation="linear").alias("p50_interactivity_tps"),
            per_second(pl.col("output_lens").filter(ok).sum()).alias("aggregate_tps"),
            per_second(pl.col("input_lens").filter(ok).sum() + pl.col("output_lens").filter(ok).sum()).alias(
                "total_tps"
            ),
            per_second(ok.sum()).alias("request_throughput_rps"),
            pl.when(ttft.null_count() == 0)
            .then(per_second(((ttft <= GOODPUT_TTFT_MS) & (tpot.is_null() | (tpot <= GOODPUT_TPOT_MS))).sum()))
            .alias("goodput_rps"),
        )
        .select(["path", "rows", "ok_rows"] + FIGURES)
        .sort("path")
        .collect()
    )
    rows = result.to_dicts()
    for row in rows:
        row["path"] = os.path.relpath(row["path"], root)
    return rows


PEERS = {"pandas": pandas_peer, "polars": polars_peer}


def figure(value):
    """A figure as JSON takes it: a float, or None for a missing one (NaN in pandas, null in polars)."""
    if value is None:
        return None
    value = float(value)
    return None if math.isnan(value) else value


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
        "cells": [
            {
                "path": cell["path"],
                "rows": int(cell["rows"]),
                "ok_rows": int(cell["ok_rows"]),
                **{column: figure(cell[column]) for column in FIGURES},
                # cellscope divides output throughput by the deployment's accelerator count, which is not known
                # here, so its figure is empty; the peer's is too.
                "output_tps_per_accelerator": None,
            }
            for cell in cells
        ],
    }
    with open(out, "w") as handle:
        json.dump(report, handle)
    print(f"{name}: {seconds:.2f} s, {len(cells)} cells, peak RSS {report['max_rss_kb'] / 1024:.0f} MB", file=sys.stderr)


if __name__ == "__main__":
    main()
