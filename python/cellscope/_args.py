"""Python arguments as the binary's: filters as command-line flags, a cell as its key's text form."""

from __future__ import annotations

import math
import os
from decimal import Decimal
from typing import Any, List, Mapping, Optional, Union

#: The keyword filters, by keyword, and their flags. Deployment parameters are given apart, in ``params``, so that
#: a mistyped dimension is never taken for a parameter.
DIMENSION_FLAGS = {
    "run": "--run",
    "suite": "--suite",
    "phase": "--phase",
    "backend": "--backend",
    "model": "--model",
    "workload": "--workload",
    "load": "--load",
    "n": "--load",
    "rep": "--rep",
    "status": "--status",
    "include": "--include",
}

Cache = Union[None, bool, str, "os.PathLike[str]"]


def number_text(value: float) -> str:
    """A number as the binary writes one: whole numbers without a fraction, no exponent, ``inf`` for infinity.

    This is Rust's ``Display`` of a float (the shortest text that reads back to the same value), which the key's
    ``rate=R`` uses: ``2.0`` is ``2``, ``2.5`` is ``2.5``, ``1e-07`` is ``0.0000001``.
    """
    if isinstance(value, bool):
        raise TypeError("a boolean is not a number here")
    if isinstance(value, int):
        return str(value)
    value = float(value)
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if math.isnan(value):
        return "NaN"
    if value.is_integer():
        return str(int(value))
    return format(Decimal(repr(value)), "f")


def value_text(value: Any) -> str:
    """One filter value as text: strings as they are, numbers as the binary writes them."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        raise TypeError(f"{value!r} is not a filter value (use the value's text)")
    if isinstance(value, (int, float)):
        return number_text(value)
    if hasattr(value, "item"):
        # A numpy scalar, as a pandas column yields.
        return value_text(value.item())
    return str(value)


def values_text(name: str, values: Any) -> str:
    """A filter's values, comma-separated: one value, or a list, tuple or set of them."""
    if isinstance(values, (list, tuple, set, frozenset)):
        items = [value_text(value) for value in values]
        if isinstance(values, (set, frozenset)):
            items.sort()
        if not items:
            raise ValueError(f"`{name}`: an empty list selects no cell; leave the filter out (or pass None) for all")
        return ",".join(items)
    return value_text(values)


def cache_args(cache: Cache) -> List[str]:
    """``cache`` as flags: ``None`` for the user's cache, ``False`` for ``--no-cache``, a directory or bucket
    prefix for ``--cache DIR``."""
    if cache is None or cache is True:
        return []
    if cache is False:
        return ["--no-cache"]
    return ["--cache", os.fspath(cache)]


def root_arg(path_or_url: Union[str, "os.PathLike[str]"]) -> str:
    """The data root as the binary takes it: a local path, or a bucket URL passed as it is."""
    return os.fspath(path_or_url)


def filter_args(
    filters: Mapping[str, Any],
    params: Optional[Mapping[str, Any]] = None,
    *,
    omit_partial: bool = False,
) -> List[str]:
    """The flags of dimension filters, the what-if toggles and deployment parameters.

    A keyword of :data:`DIMENSION_FLAGS` is its flag (``backend=["vllm", "sglang"]`` is ``--backend
    vllm,sglang``), and each entry of ``params`` a deployment parameter (``{"tp": [4, 8]}`` is ``--param
    tp=4,8``). A value of ``None`` is no filter.

    Raises:
        TypeError: a keyword that is no filter.
    """
    arguments: List[str] = []
    for name, values in filters.items():
        flag = DIMENSION_FLAGS.get(name)
        if flag is None:
            known = ", ".join(sorted(set(DIMENSION_FLAGS) - {"n"}))
            raise TypeError(
                f"unknown filter `{name}`: the filters are {known} (and n for load); a deployment parameter goes "
                f"in params, as params={{{name!r}: ...}}"
            )
        if values is not None:
            arguments += [flag, values_text(name, values)]
    for name, values in (params or {}).items():
        if values is not None:
            arguments += ["--param", f"{name}={values_text(name, values)}"]
    if omit_partial:
        arguments += ["--omit", "partial"]
    return arguments


# The characters a key's text component escapes, and those a configuration's names and values escape.
_KEY_SPECIAL = "%/"
_CONFIG_SPECIAL = "%,=/"


def _escaped(text: str, special: str) -> str:
    """``text`` with each character of ``special`` written ``%XX`` (upper-case hex), as the key's text form does."""
    return "".join(f"%{ord(char):02X}" if char in special else char for char in text)


def _present(value: Any) -> bool:
    """Whether a field holds a value: not missing, ``None``, NaN or pandas' NA."""
    if value is None:
        return False
    try:
        return not bool(value != value)
    except (TypeError, ValueError):
        # pandas.NA compares to NA, whose truth value is an error.
        return False


def _whole(value: Any, field: str) -> int:
    """A whole number from a field (pandas turns an integer column with nulls into floats)."""
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    raise ValueError(f"the cell's `{field}` is {value!r}, not a whole number")


def _config_text(config: Any) -> str:
    """The configuration's text form: as the cells table's ``config`` column holds it, or built from a mapping
    of parameter names to values."""
    if not _present(config):
        return ""
    if isinstance(config, str):
        return config
    if isinstance(config, Mapping):
        return ",".join(
            f"{_escaped(str(name), _CONFIG_SPECIAL)}={_escaped(value_text(value), _CONFIG_SPECIAL)}"
            for name, value in sorted(config.items())
        )
    raise TypeError(f"the cell's `config` is {config!r}: expected its text form or a mapping")


def _load_text(fields: Mapping[str, Any]) -> str:
    """The key's load: ``n=N`` from ``n``, else ``rate=R`` from ``rate_rps``, else a ``load`` field's text form,
    else ``load=unstated``."""
    n = fields.get("n")
    if _present(n):
        return f"n={_whole(n, 'n')}"
    rate: Any = fields.get("rate_rps")
    if _present(rate):
        if isinstance(rate, str):
            return f"rate={rate}"
        if hasattr(rate, "item"):
            rate = rate.item()
        return f"rate={number_text(rate)}"
    load = fields.get("load")
    if _present(load):
        text = str(load)
        return text if "=" in text else f"n={text}"
    return "load=unstated"


def _row(cell: Any) -> Mapping[str, Any]:
    """One row's fields from a mapping, a pandas Series, a one-row DataFrame, or a one-row pyarrow Table or
    RecordBatch."""
    if isinstance(cell, Mapping):
        return cell
    if hasattr(cell, "to_pylist"):
        rows = cell.to_pylist()
        if len(rows) != 1:
            raise ValueError(f"a table naming one cell must have one row, this one has {len(rows)}")
        return dict(rows[0])
    if hasattr(cell, "columns") and hasattr(cell, "to_dict"):
        rows = cell.to_dict("records")
        if len(rows) != 1:
            raise ValueError(f"a data frame naming one cell must have one row, this one has {len(rows)}")
        return dict(rows[0])
    if hasattr(cell, "to_dict"):
        return dict(cell.to_dict())
    raise TypeError(
        f"cannot read a cell from {type(cell).__name__}: pass its key's text, a mapping, a pandas Series or a "
        "one-row table"
    )


def cell_key(cell: Any) -> str:
    """The text form of a cell's key, ``run/suite/phase/backend/model/workload[/config]/n=N/rep=R``.

    ``cell`` is that text already, or a row of the cells table (see :func:`_row`) from which it is built: its
    ``run_id`` (or ``run``), ``suite``, ``phase``, ``backend``, ``model``, ``workload``, ``config`` when present
    and not empty, the load (``n``, else ``rate_rps``, else unstated) and ``rep``.
    """
    if isinstance(cell, str):
        return cell
    fields = _row(cell)
    run = fields.get("run_id", fields.get("run"))
    texts = [run, *(fields.get(name) for name in ("suite", "phase", "backend", "model", "workload"))]
    names = ["run_id", "suite", "phase", "backend", "model", "workload"]
    missing = [name for name, text in zip(names, texts) if not _present(text)]
    if missing or "rep" not in fields:
        raise ValueError(f"the cell lacks {', '.join(missing + ([] if 'rep' in fields else ['rep']))}")
    parts = [_escaped(str(text), _KEY_SPECIAL) for text in texts]
    config = _config_text(fields.get("config"))
    if config:
        parts.append(config)
    parts.append(_load_text(fields))
    parts.append(f"rep={_whole(fields['rep'], 'rep')}")
    return "/".join(parts)
