#!/usr/bin/env python3
"""Compares two golden.sh output directories where the newer one may only ADD columns and figures.

Usage: golden_added_columns.py <base dir> <new dir>   (needs pyarrow for the Arrow files)

Columns of a cells table (CSV, JSON, Arrow IPC) that the new output has and the base has not are projected out,
and their names are taken out of the `;`-lists that mark columns (`reported_metrics`, `derived_metrics`) and of
the per-column maps of other tools' figures (`reported`); the per-record maps of every figure a tool wrote
(`reported_figures`) may be new. Everything else must be equal, except the snapshot id, which hashes the table
and so changes with any added column (it is listed). Exits 1 on any other difference.
"""

import csv
import io
import json
import sys
from pathlib import Path

MARK_LISTS = ("reported_metrics", "derived_metrics")
NEW_MAPS = ("reported_figures",)

added = set()
notes = []


def filter_marks(text):
    return ";".join(name for name in text.split(";") if name and name not in added) if text else text


def same_json(base, new, where):
    """Problems between two JSON values; keys the base lacks are allowed when they are added columns or new maps."""
    problems = []
    if isinstance(base, dict) and isinstance(new, dict):
        for key in new.keys() - base.keys():
            if key in added or key in NEW_MAPS:
                continue
            problems.append(f"{where}.{key}: only in the new output")
        for key in base.keys() - new.keys():
            problems.append(f"{where}.{key}: missing from the new output")
        for key in base.keys() & new.keys():
            b, n = base[key], new[key]
            if key in MARK_LISTS and isinstance(n, str):
                n = filter_marks(n)
            if key == "reported" and isinstance(n, dict):
                n = {k: v for k, v in n.items() if k not in added}
            if key == "snapshot" and b != n:
                notes.append(f"{where}.snapshot: {b} -> {n}")
                continue
            problems += same_json(b, n, f"{where}.{key}")
    elif isinstance(base, list) and isinstance(new, list):
        if len(base) != len(new):
            return [f"{where}: {len(base)} items != {len(new)}"]
        for i, (b, n) in enumerate(zip(base, new)):
            problems += same_json(b, n, f"{where}[{i}]")
    elif base != new and not (base != base and new != new):  # NaN equals NaN here
        problems.append(f"{where}: {base!r} != {new!r}")
    return problems


def rows_as_dicts_csv(text):
    lines = [line for line in text.splitlines(keepends=True) if not line.startswith("#")]
    reader = csv.DictReader(io.StringIO("".join(lines)))
    return reader.fieldnames or [], list(reader)


def compare_csv(base_text, new_text, name):
    base_fields, base_rows = rows_as_dicts_csv(base_text)
    new_fields, new_rows = rows_as_dicts_csv(new_text)
    added.update(set(new_fields) - set(base_fields))
    problems = []
    if [f for f in new_fields if f in base_fields] != base_fields:
        problems.append(f"{name}: the base columns are not in their order")
    comments = [l for l in base_text.splitlines() if l.startswith("#")], [l for l in new_text.splitlines() if l.startswith("#")]
    if comments[0] != comments[1]:
        problems.append(f"{name}: comment lines differ")
    if len(base_rows) != len(new_rows):
        return problems + [f"{name}: {len(base_rows)} rows != {len(new_rows)}"]
    for i, (b, n) in enumerate(zip(base_rows, new_rows)):
        for field in base_fields:
            value = filter_marks(n[field]) if field in MARK_LISTS else n[field]
            if b[field] != value:
                problems.append(f"{name} row {i} {field}: {b[field]!r} != {n[field]!r}")
    return problems


def compare_arrow(base_bytes, new_bytes, name):
    import pyarrow.ipc as ipc

    base = ipc.open_stream(base_bytes).read_all()
    new = ipc.open_stream(new_bytes).read_all()
    added.update(set(new.column_names) - set(base.column_names))
    problems = []
    if [c for c in new.column_names if c in base.column_names] != base.column_names:
        problems.append(f"{name}: the base columns are not in their order")
    for column in base.column_names:
        if base.schema.field(column).type != new.schema.field(column).type:
            problems.append(f"{name} {column}: type {base.schema.field(column).type} != {new.schema.field(column).type}")
        b, n = base.column(column).to_pylist(), new.column(column).to_pylist()
        if column in MARK_LISTS:
            n = [filter_marks(v) if isinstance(v, str) else v for v in n]
        if b != n:
            problems.append(f"{name} {column}: values differ")
    return problems


def kind_of(path, data):
    name = path.name
    if name.endswith(".cells.arrow") or data[:4] == b"\xff\xff\xff\xff":
        return "arrow"
    if name.endswith(".cells.csv"):
        return "csv"
    stripped = data.lstrip()[:1]
    if stripped in (b"{", b"["):
        return "json"
    if name.endswith(".body") and data.startswith(b"run_id,"):
        return "csv"
    return "text"


def main(base_dir, new_dir):
    base_dir, new_dir = Path(base_dir), Path(new_dir)
    names = sorted({p.name for p in base_dir.iterdir()} | {p.name for p in new_dir.iterdir()})
    # Cells tables first, so that the added columns are known when the other outputs are compared.
    names.sort(key=lambda name: (not (name.endswith(".cells.csv") or name.endswith(".cells.arrow")), name))
    problems, differing = [], 0
    for name in names:
        b, n = base_dir / name, new_dir / name
        if not b.exists() or not n.exists():
            problems.append(f"{name}: only in {'new' if n.exists() else 'base'}")
            continue
        base, new = b.read_bytes(), n.read_bytes()
        if base == new:
            continue
        differing += 1
        kind = kind_of(b, base)
        if kind == "arrow":
            problems += compare_arrow(base, new, name)
        elif kind == "csv":
            problems += compare_csv(base.decode(), new.decode(), name)
        elif kind == "json":
            problems += same_json(json.loads(base), json.loads(new), name)
        else:
            problems.append(f"{name}: text differs")
    print(f"{differing} files differ; columns added: {', '.join(sorted(added)) or 'none'}")
    for note in sorted(set(notes)):
        print(f"note: {note}")
    for problem in problems:
        print(f"DIFFERENCE: {problem}")
    print("only added columns and figures differ" if not problems else f"{len(problems)} other differences")
    return 1 if problems else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2]))
