"""The head-to-head's JSON body (``cellscope compare --json``) as a table of its groups."""

from __future__ import annotations

import json
from typing import Any, Dict, List, Mapping, Optional

import pyarrow as pa

from ._args import number_text

#: The schema metadata key holding the whole JSON body the table was made from.
METADATA_KEY = b"cellscope.compare"

#: One row per group: each column, its type, and how it is read from the group's JSON object.
SCHEMA = pa.schema(
    [
        pa.field("group", pa.string()),
        pa.field("n_pairs", pa.int64()),
        pa.field("mean_delta", pa.float64()),
        pa.field("median_delta", pa.float64()),
        pa.field("ci_low", pa.float64()),
        pa.field("ci_high", pa.float64()),
        pa.field("wilcoxon_statistic", pa.float64()),
        pa.field("rank_sum_positive", pa.float64()),
        pa.field("rank_sum_negative", pa.float64()),
        pa.field("p_value", pa.float64()),
        pa.field("wilcoxon_method", pa.string()),
        pa.field("holm_p", pa.float64()),
        pa.field("effect_size", pa.float64()),
        pa.field("ratio", pa.float64()),
        pa.field("wins", pa.int64()),
        pa.field("losses", pa.int64()),
        pa.field("ties", pa.int64()),
        pa.field("verdict", pa.string()),
        pa.field("n_dropped", pa.int64()),
    ]
)


def _group_text(value: Any) -> Optional[str]:
    """The group's value as text: a dimension's text as it is, a number as the binary writes it."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return number_text(value)
    return json.dumps(value, sort_keys=True)


def _row(group: Mapping[str, Any]) -> Dict[str, Any]:
    """One group's columns."""
    ci = group.get("ci") or (None, None)
    wilcoxon = group.get("wilcoxon") or {}
    return {
        "group": _group_text(group.get("group")),
        "n_pairs": group["n_pairs"],
        "mean_delta": group.get("mean_delta"),
        "median_delta": group.get("median_delta"),
        "ci_low": ci[0],
        "ci_high": ci[1],
        "wilcoxon_statistic": wilcoxon.get("statistic"),
        "rank_sum_positive": wilcoxon.get("rank_sum_positive"),
        "rank_sum_negative": wilcoxon.get("rank_sum_negative"),
        "p_value": wilcoxon.get("p_value"),
        "wilcoxon_method": wilcoxon.get("method"),
        "holm_p": group.get("holm_p"),
        "effect_size": group.get("effect_size"),
        "ratio": group.get("ratio"),
        "wins": group["wins"],
        "losses": group["losses"],
        "ties": group["ties"],
        "verdict": group["verdict"],
        "n_dropped": len(group.get("dropped") or ()),
    }


def table(body: Mapping[str, Any], text: str) -> pa.Table:
    """The groups of a ``CompareBody`` as a table, with ``text`` (the body as the binary wrote it) under
    :data:`METADATA_KEY` in the schema's metadata."""
    rows: List[Dict[str, Any]] = [_row(group) for group in body.get("groups", ())]
    columns = {field.name: [row[field.name] for row in rows] for field in SCHEMA}
    return pa.Table.from_pydict(columns, schema=SCHEMA.with_metadata({METADATA_KEY: text.encode("utf-8")}))


def body_of(compared: pa.Table) -> Dict[str, Any]:
    """The whole JSON body behind a table :func:`cellscope.compare` returned."""
    metadata = compared.schema.metadata or {}
    if METADATA_KEY not in metadata:
        raise ValueError("this table carries no comparison (it was not made by cellscope.compare)")
    body: Dict[str, Any] = json.loads(metadata[METADATA_KEY])
    return body
