"""cellscope from Python: the cells, request rows and head-to-heads of a folder of benchmark results as Arrow
tables, and the app in a notebook.

Every function runs the ``cellscope`` executable installed with this package (or the one ``CELLSCOPE_BINARY``
names), so every number is the binary's own: nothing is recomputed here.

    import cellscope
    cells = cellscope.cells("results/", backend=["vllm", "sglang"], load=16)
    frame = cells.to_pandas()
    rows = cellscope.requests("results/", cells.slice(0, 1))
    head_to_head = cellscope.compare("results/", a="vllm", b="sglang", per="workload")

The full reference is docs/python.md in the repository.
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict, Iterable, List, Mapping, Optional, Union

import pyarrow as pa
import pyarrow.ipc

from . import _args, _binary, _compare
from ._args import cell_key
from ._binary import find_binary
from ._errors import CellscopeError, CellscopeWarning
from ._server import Server, serve, show

__all__ = [
    "CellscopeError",
    "CellscopeWarning",
    "Server",
    "cell_key",
    "cells",
    "compare",
    "compare_body",
    "compare_json",
    "find_binary",
    "requests",
    "serve",
    "show",
]

PathOrUrl = Union[str, "os.PathLike[str]"]
Values = Union[str, int, float, Iterable[Union[str, int, float]]]


def __getattr__(name: str) -> Any:
    """``__version__``: the installed distribution's version, else the binary's (``cellscope --version``)."""
    if name == "__version__":
        from importlib import metadata

        try:
            found = metadata.version("cellscope")
        except metadata.PackageNotFoundError:
            found = _binary.version()
        globals()["__version__"] = found
        return found
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _read_stream(data: bytes) -> pa.Table:
    """An Arrow IPC stream as a table."""
    return pa.ipc.open_stream(pa.py_buffer(data)).read_all()


def cells(
    path_or_url: PathOrUrl,
    *,
    cache: _args.Cache = None,
    status: Optional[Values] = None,
    include: Optional[Values] = None,
    params: Optional[Mapping[str, Values]] = None,
    **filters: Optional[Values],
) -> pa.Table:
    """One row per cell of a data root: ``cellscope cells PATH --format arrow`` with the filters as flags.

    Args:
        path_or_url: a directory of results, or a bucket prefix (``s3://…``, ``gs://…``, ``az://…``).
        cache: ``None`` for the user's cache directory, ``False`` for none (``--no-cache``), or a directory or
            bucket prefix (``--cache``).
        status: cell statuses to keep (``clean``, ``partial``, ``failed``, ``skipped``, ``not_run``).
        include: ``"pre_refill"``: the refilled cells as they were before the refill. (The table lists every
            cell with its status and exclusions whatever the other toggles, so the binary refuses those here.)
        params: deployment parameters by name or alias, each one value or a list (``{"tp": [4, 8]}`` is
            ``--param tp=4,8``).
        **filters: dimension filters ``run``, ``suite``, ``phase``, ``backend``, ``model``, ``workload``,
            ``load`` (or ``n``) and ``rep``, each one value or a list (``backend=["vllm", "sglang"]`` is
            ``--backend vllm,sglang``). ``None`` is no filter.

    Returns:
        The cells table with the binary's columns, names and types (``*_ms`` in milliseconds, ``*_tps`` in
        tokens per second, ``*_rps`` in requests per second; text columns dictionary-encoded, which pandas reads
        as categoricals). ``.to_pandas()`` makes a data frame.

    Raises:
        CellscopeError: the binary refused (an unknown value, a missing directory, …) with its message.
        TypeError: a keyword that is no filter.

    Warns:
        CellscopeWarning: once per indexing warning (a malformed row, an unreadable file, …).
    """
    arguments = [
        "cells",
        _args.root_arg(path_or_url),
        "--format",
        "arrow",
        *_args.filter_args({**filters, "status": status, "include": include}, params),
        *_args.cache_args(cache),
    ]
    return _read_stream(_binary.run(arguments, stacklevel=2))


def requests(path_or_url: PathOrUrl, cell: Any, *, cache: _args.Cache = None) -> pa.Table:
    """The request rows of one cell: ``cellscope requests PATH --cell KEY --format arrow``.

    Args:
        path_or_url: the data root.
        cell: the cell's key in its text form (``run/suite/phase/backend/model/workload/n=16/rep=0``), or a row of
            the cells table naming it: a mapping, a pandas Series, a one-row data frame, or a one-row Arrow table
            (see :func:`cell_key`).
        cache: as for :func:`cells`.

    Returns:
        The cell's rows, current and replaced by a refill, each with its line and ``lineage``, in the binary's
        columns (those of ``GET /api/requests``).

    Raises:
        CellscopeError: no such cell, or the binary refused otherwise.
    """
    arguments = [
        "requests",
        _args.root_arg(path_or_url),
        "--cell",
        cell_key(cell),
        "--format",
        "arrow",
        *_args.cache_args(cache),
    ]
    return _read_stream(_binary.run(arguments, stacklevel=2))


def _compare_arguments(
    path_or_url: PathOrUrl,
    by: str,
    a: Any,
    b: Any,
    per: Optional[str],
    metric: Optional[str],
    slo: Optional[str],
    alpha: Optional[float],
    cache: _args.Cache,
    include: Optional[Values],
    omit_partial: bool,
    params: Optional[Mapping[str, Values]],
    filters: Dict[str, Any],
) -> List[str]:
    arguments = [
        "compare",
        _args.root_arg(path_or_url),
        "--by",
        by,
        "--a",
        _args.value_text(a),
        "--b",
        _args.value_text(b),
    ]
    if per is not None:
        arguments += ["--per", per]
    if metric is not None:
        arguments += ["--metric", metric]
    if slo is not None:
        arguments += ["--slo", slo]
    if alpha is not None:
        arguments += ["--alpha", _args.number_text(alpha)]
    arguments += _args.filter_args({**filters, "include": include}, params, omit_partial=omit_partial)
    arguments += [*_args.cache_args(cache), "--json"]
    return arguments


def compare_json(
    path_or_url: PathOrUrl,
    *,
    a: Any,
    b: Any,
    by: str = "backend",
    per: Optional[str] = None,
    metric: Optional[str] = None,
    slo: Optional[str] = None,
    alpha: Optional[float] = None,
    cache: _args.Cache = None,
    include: Optional[Values] = None,
    omit_partial: bool = False,
    params: Optional[Mapping[str, Values]] = None,
    **filters: Optional[Values],
) -> Dict[str, Any]:
    """The head-to-head as the binary's JSON body (``cellscope compare --json``), parsed: ``spec``, ``groups``
    (each with its ``pairs`` and ``dropped`` pairs) and ``confounders``. Arguments as for :func:`compare`."""
    arguments = _compare_arguments(
        path_or_url, by, a, b, per, metric, slo, alpha, cache, include, omit_partial, params, filters
    )
    body: Dict[str, Any] = json.loads(_binary.run(arguments, stacklevel=2))
    return body


def compare(
    path_or_url: PathOrUrl,
    *,
    a: Any,
    b: Any,
    by: str = "backend",
    per: Optional[str] = None,
    metric: Optional[str] = None,
    slo: Optional[str] = None,
    alpha: Optional[float] = None,
    cache: _args.Cache = None,
    include: Optional[Values] = None,
    omit_partial: bool = False,
    params: Optional[Mapping[str, Values]] = None,
    **filters: Optional[Values],
) -> pa.Table:
    """The head-to-head of two values of one dimension, one row per group: ``cellscope compare --json``.

    Args:
        path_or_url: the data root.
        a: the first side's value of ``by``.
        b: the second side's value.
        by: the dimension compared: ``backend`` (default), ``model``, ``run``, ``suite``, ``phase``,
            ``workload``, or a deployment parameter (``tp``).
        per: one group per value of this dimension, or ``"none"`` for one group; ``None`` is the binary's
            default (``workload``).
        metric: a per-cell metric (``efficiency``, the default, ``p95_wall_ms``, ``aggregate_tps``, …) or
            ``slo_capacity``.
        slo: the SLO of ``slo_capacity`` (``"p99_ttft_ms<=2000,p99_tpot_ms<=100"`` or a preset's name).
        alpha: the significance level of the verdict (default 0.05).
        cache: as for :func:`cells`.
        include: what-if toggles (``excluded``, ``pre_refill``, ``partial``).
        omit_partial: leave partial cells out.
        params: deployment-parameter filters, as for :func:`cells`.
        **filters: dimension filters, as for :func:`cells`.

    Returns:
        One row per group: ``group`` (the value of ``per``, as text; null for one group), ``n_pairs``,
        ``mean_delta`` and ``median_delta`` (a − b, in the metric's unit), ``ci_low``/``ci_high`` (the bootstrap
        95% interval of the mean delta), ``wilcoxon_statistic``, ``rank_sum_positive``, ``rank_sum_negative``,
        ``p_value``, ``wilcoxon_method``, ``holm_p``, ``effect_size`` (rank-biserial r), ``ratio`` (geometric mean
        of a / b, for absolute metrics), ``wins``, ``losses``, ``ties``, ``verdict`` and ``n_dropped``. The whole
        JSON body, with every pair, is in the schema's metadata: :func:`compare_body` reads it back.

    Raises:
        CellscopeError: the comparison cannot be made (an absent value, an unknown metric, …), with the binary's
            message.
    """
    arguments = _compare_arguments(
        path_or_url, by, a, b, per, metric, slo, alpha, cache, include, omit_partial, params, filters
    )
    text = _binary.run(arguments, stacklevel=2).decode("utf-8")
    return _compare.table(json.loads(text), text)


def compare_body(compared: pa.Table) -> Dict[str, Any]:
    """The whole JSON body (spec, groups with their pairs and dropped pairs, confounders) behind a table
    :func:`compare` returned."""
    return _compare.body_of(compared)
