"""SLO capacities computed independently of the Rust code, for model/tests/slo_capacity.rs.

Run with a Python that has numpy: `python model/tests/vectors/slo_capacity.py > model/tests/vectors/slo_capacity.json`.
The rule (docs/definitions.md, "SLO capacity"): judge each load on the rep-mean of each statistic over the reps that
have every statistic there; the capacity lies between the highest load where every bound holds and the next
measured load, where each violated statistic is interpolated linearly in load (np.interp of the bound) and the
smallest crossing is taken. An infinite load ("inf" in the JSON) is all requests at once and is not interpolated.
"""

import json
import math

import numpy as np

INF = math.inf


def complete(values):
    return all(v is not None and not math.isnan(v) for v in values)


def judge(levels, nbounds, rep=None):
    """[(load, means)] in increasing load, levels without a complete rep left out."""
    out = []
    for load in sorted({load for load, _ in levels}):
        rows = [
            values
            for lvl_load, reps in levels
            if lvl_load == load
            for rep_id, values in reps
            if (rep is None or rep_id == rep) and len(values) == nbounds and complete(values)
        ]
        if rows:
            out.append((load, np.mean(np.array(rows, dtype=float), axis=0)))
    return out


def outcome(judged, maxes, no_levels=False):
    if not judged:
        return {"kind": "unjudged"}
    holds = [bool(np.all(means <= maxes)) for _, means in judged]
    where = np.flatnonzero(holds)
    if where.size == 0:
        return {"kind": "never_met", "lowest": judged[0][0]}
    h = int(where[-1])
    non_monotone = not all(holds[: h + 1])
    if h == len(judged) - 1:
        return {"kind": "not_reached", "up_to": judged[h][0], "non_monotone": non_monotone}
    (lh, mh), (lf, mf) = judged[h], judged[h + 1]
    if math.isinf(lf):
        load = lh
    else:
        crossings = [
            float(np.interp(maxes[b], [mh[b], mf[b]], [lh, lf]))
            for b in range(len(maxes))
            if mf[b] > maxes[b]
        ]
        load = min(crossings)
    return {"kind": "capacity", "load": load, "bracket": [lh, lf], "non_monotone": non_monotone}


def rep_range(levels, maxes):
    nb = len(maxes)
    reps = sorted({rep for _, reps in levels for rep, _ in reps})
    loads = {load for load, _ in levels}
    full = [
        rep
        for rep in reps
        if all(
            any(r == rep and len(v) == nb and complete(v) for l2, rs in levels if l2 == load for r, v in rs)
            for load in loads
        )
    ]
    if len(full) < 2:
        return None
    caps = []
    for rep in full:
        o = outcome(judge(levels, nb, rep), maxes)
        caps.append({"capacity": o.get("load"), "not_reached": o.get("up_to"), "never_met": o.get("lowest")}[o["kind"]])
    return {"low": min(caps), "high": max(caps), "reps": len(caps)}


def expected(levels, maxes):
    maxes = np.array(maxes, dtype=float)
    o = outcome(judge(levels, len(maxes)), maxes)
    if o["kind"] == "capacity":
        o["interval"] = rep_range(levels, maxes)
    return o


def curve(loads, ttft, tpot, rep=1):
    return [(load, [(rep, [a, b])]) for load, a, b in zip(loads, ttft, tpot)]


def merge(*curves):
    """Per load, the reps of every curve."""
    out = {}
    for c in curves:
        for load, reps in c:
            out.setdefault(load, []).extend(reps)
    return sorted(out.items())


LOADS = [1, 2, 4, 8, 16]
CASES = {
    "monotone_one_rep": (curve(LOADS, [300, 450, 900, 2600, 6000], [20, 25, 40, 70, 140]), [2000, 100]),
    "monotone_tpot_binds": (curve(LOADS, [300, 450, 900, 1500, 1900], [20, 25, 40, 90, 160]), [2000, 100]),
    "both_violated_smaller_crossing": (curve(LOADS, [300, 450, 900, 3100, 6000], [20, 25, 40, 190, 300]), [2000, 100]),
    "exactly_at_the_bound": (curve(LOADS, [300, 450, 2000, 2600, 6000], [20, 25, 40, 70, 140]), [2000, 100]),
    "three_reps": (
        merge(
            curve(LOADS, [300, 450, 900, 2600, 6000], [20, 25, 40, 70, 140], 1),
            curve(LOADS, [310, 470, 1100, 2200, 5000], [21, 26, 45, 80, 150], 2),
            curve(LOADS, [290, 430, 800, 3400, 7000], [19, 24, 38, 66, 130], 3),
        ),
        [2000, 100],
    ),
    "three_reps_one_not_reached_one_never_met": (
        merge(
            curve(LOADS, [300, 450, 900, 2600, 6000], [20, 25, 40, 70, 140], 1),
            curve(LOADS, [300, 450, 900, 1200, 1900], [20, 25, 40, 70, 90], 2),
            curve(LOADS, [2300, 2450, 2900, 3600, 6000], [20, 25, 40, 70, 140], 3),
        ),
        [2000, 100],
    ),
    "non_monotone": (curve(LOADS, [300, 450, 2500, 1800, 6000], [20, 25, 40, 70, 140]), [2000, 100]),
    "non_monotone_not_reached": (curve(LOADS, [2300, 450, 900, 1200, 1900], [20, 25, 40, 70, 90]), [2000, 100]),
    "infinite_level_fails": (curve([1, 2, 4, INF], [300, 450, 900, 9000], [20, 25, 40, 300]), [2000, 100]),
    "infinite_level_holds": (curve([1, 2, 4, INF], [300, 450, 900, 1900], [20, 25, 40, 60]), [2000, 100]),
    "never_met": (curve(LOADS, [2300, 2450, 2900, 3600, 6000], [20, 25, 40, 70, 140]), [2000, 100]),
    "not_reached": (curve(LOADS, [300, 450, 900, 1200, 1900], [20, 25, 40, 70, 90]), [2000, 100]),
    "fractional_rates": (curve([0.5, 1.5, 3.25, 7.0], [400, 700, 1600, 2600], [30, 45, 80, 130]), [2000, 100]),
    "missing_level_skipped": (
        curve(LOADS, [300, 450, None, 2600, 6000], [20, 25, 40, 70, 140]),
        [2000, 100],
    ),
    "missing_value_in_one_rep": (
        merge(
            curve(LOADS, [300, 450, 900, 2600, 6000], [20, 25, 40, 70, 140], 1),
            curve(LOADS, [310, 470, 1100, None, 5000], [21, 26, 45, 80, 150], 2),
            curve(LOADS, [290, 430, 800, 3400, 7000], [19, 24, 38, 66, 130], 3),
        ),
        [2000, 100],
    ),
    "rep_missing_a_level": (
        merge(
            curve(LOADS, [300, 450, 900, 2600, 6000], [20, 25, 40, 70, 140], 1),
            curve([1, 2, 4, 16], [310, 470, 1100, 5000], [21, 26, 45, 150], 2),
        ),
        [2000, 100],
    ),
    "all_missing": (curve(LOADS, [None] * 5, [20, 25, 40, 70, 140]), [2000, 100]),
    "one_bound_p99_wall": (curve(LOADS, [1000, 1200, 1800, 4000, 9000], [0, 0, 0, 0, 0]), [3000, 1e9]),
    "unordered_and_pooled_levels": (
        [(8, [(1, [2600, 70])]), (1, [(1, [300, 20])]), (4, [(1, [900, 40])]), (8, [(2, [2200, 80])]), (4, [(2, [1100, 45])])],
        [2000, 100],
    ),
}


def encode(x):
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        return "inf" if math.isinf(x) else float(x)
    if isinstance(x, dict):
        return {k: encode(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [encode(v) for v in x]
    return x


def main():
    cases = []
    for name, (levels, maxes) in CASES.items():
        cases.append(
            {
                "name": name,
                "maxes": [float(m) for m in maxes],
                "levels": [
                    {"load": encode(float(load)), "reps": [{"rep": rep, "values": values} for rep, values in reps]}
                    for load, reps in levels
                ],
                "expected": encode(expected(levels, maxes)),
            }
        )
    print(json.dumps({"numpy": np.__version__, "cases": cases}, indent=1))


if __name__ == "__main__":
    main()
