"""The Python package against the binary it drives, on the demo data.

Every expectation is the binary's own output read independently of the package: its CSV parsed with the ``csv``
module, its JSON with ``json``, its error messages from its standard error, and the Arrow stream of a real
``cellscope serve`` over HTTP.

Environment:
    CELLSCOPE_BINARY: the executable under test (else the one installed with the package).
    CELLSCOPE_DEMO_DATA: the demo root (default ``data/demo`` of the repository).
    CELLSCOPE_DEMO_MIXED_DATA: the mixed-formats demo root (default ``data/demo-mixed``); its tests are skipped
        when it is absent.
"""

from __future__ import annotations

import csv
import gc
import io
import json
import math
import os
import shutil
import socket
import subprocess
import urllib.request
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

import pyarrow as pa
import pyarrow.ipc
import pytest

import cellscope
from cellscope import CellscopeError, CellscopeWarning

REPOSITORY = Path(__file__).resolve().parent.parent.parent
DEMO = Path(os.environ.get("CELLSCOPE_DEMO_DATA", REPOSITORY / "data" / "demo"))
DEMO_MIXED = Path(os.environ.get("CELLSCOPE_DEMO_MIXED_DATA", REPOSITORY / "data" / "demo-mixed"))

# The key columns of the cells table, in key order.
KEY_COLUMNS = ["run_id", "suite", "phase", "backend", "model", "workload", "n", "rep"]

# A text field the CSV export guards against spreadsheet formulas starts with one of these, behind a `'`.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


@pytest.fixture(scope="module")
def demo() -> str:
    if not (DEMO / "exclusions.toml").is_file():
        pytest.fail(f"no demo data at {DEMO}: run `cargo xtask demo-data` or set CELLSCOPE_DEMO_DATA")
    return str(DEMO)


@pytest.fixture(scope="module")
def mixed() -> str:
    if not (DEMO_MIXED / "cellscope.toml").is_file():
        pytest.skip(f"no mixed demo data at {DEMO_MIXED} (set CELLSCOPE_DEMO_MIXED_DATA)")
    return str(DEMO_MIXED)


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> str:
    """One cache directory for every command of the tests, kept out of the user's."""
    return str(tmp_path_factory.mktemp("cellscope-cache"))


@pytest.fixture(scope="module")
def binary() -> str:
    return cellscope.find_binary()


def cli(binary: str, *arguments: str, check: bool = True) -> subprocess.CompletedProcess:
    """The binary run directly, as the oracle of what the package returns."""
    completed = subprocess.run(
        [binary, *arguments],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        env={**os.environ, "CELLSCOPE_LOG": "warn"},
        check=False,
    )
    if check:
        assert completed.returncode == 0, completed.stderr.decode()
    return completed


def cli_error(completed: subprocess.CompletedProcess) -> str:
    """The message of the binary's `error: …` line (and what follows it)."""
    text = completed.stderr.decode()
    start = text.index("error: ")
    return text[start + len("error: ") :].strip()


def csv_rows(data: bytes) -> List[Dict[str, str]]:
    return list(csv.DictReader(io.StringIO(data.decode("utf-8"), newline="")))


def unguarded(text: str) -> str:
    """A CSV text field without the `'` the export puts before a formula-like start."""
    if len(text) > 1 and text[0] == "'" and text[1:].startswith(FORMULA_STARTS):
        return text[1:]
    return text


def csv_value(text: str, kind: pa.DataType) -> Any:
    """A CSV field read as the Arrow column's type gives it: empty is null, numbers by Python's own parsers."""
    if pa.types.is_dictionary(kind):
        kind = kind.value_type
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        return unguarded(text)
    if text == "":
        return None
    if pa.types.is_boolean(kind):
        assert text in ("true", "false"), text
        return text == "true"
    if pa.types.is_integer(kind):
        return int(text)
    if pa.types.is_floating(kind):
        return float(text)
    raise AssertionError(f"a column of type {kind} the test does not read")


def same_value(expected: Any, actual: Any, kind: pa.DataType) -> bool:
    if pa.types.is_dictionary(kind):
        kind = kind.value_type
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        # CSV writes an empty text and a null text alike.
        return expected == (actual if actual is not None else "")
    if isinstance(expected, float) and isinstance(actual, float) and math.isnan(expected):
        return math.isnan(actual)
    return bool(expected == actual)


def assert_equals_csv(table: pa.Table, data: bytes) -> None:
    """Every column and row of ``table`` equals the CSV ``data``, numbers exactly as printed."""
    rows = csv_rows(data)
    header = next(csv.reader(io.StringIO(data.decode("utf-8"), newline="")))
    assert table.column_names == header
    assert table.num_rows == len(rows)
    for field in table.schema:
        values = table.column(field.name).to_pylist()
        for index, (row, actual) in enumerate(zip(rows, values)):
            expected = csv_value(row[field.name], field.type)
            assert same_value(expected, actual, field.type), (field.name, index, expected, actual)


def keys(table: pa.Table) -> List[tuple]:
    return list(zip(*(table.column(name).to_pylist() for name in KEY_COLUMNS)))


def csv_keys(rows: Sequence[Dict[str, str]]) -> List[tuple]:
    return [
        tuple(int(row[name]) if name in ("n", "rep") and row[name] else row[name] or None for name in KEY_COLUMNS)
        for row in rows
    ]


@pytest.fixture(scope="module")
def all_cells(demo: str, cache: str) -> pa.Table:
    return cellscope.cells(demo, cache=cache)


@pytest.fixture(scope="module")
def all_cells_csv(binary: str, demo: str, cache: str) -> bytes:
    return cli(binary, "cells", demo, "--format", "csv", "--cache", cache).stdout


# ---------------------------------------------------------------------------------------------------- cells


def test_cells_equal_the_cli_csv_in_every_column(all_cells: pa.Table, all_cells_csv: bytes) -> None:
    assert all_cells.num_rows > 0
    assert_equals_csv(all_cells, all_cells_csv)


def test_cells_are_the_binary_arrow_stream_unchanged(binary: str, demo: str, cache: str, all_cells: pa.Table) -> None:
    stream = cli(binary, "cells", demo, "--format", "arrow", "--cache", cache).stdout
    assert all_cells.equals(pa.ipc.open_stream(stream).read_all(), check_metadata=True)


def test_cells_to_pandas_keeps_names_and_numbers(all_cells: pa.Table, all_cells_csv: bytes) -> None:
    pytest.importorskip("pandas")
    frame = all_cells.to_pandas()
    assert list(frame.columns) == all_cells.column_names
    rows = csv_rows(all_cells_csv)
    assert len(frame) == len(rows)
    for name in ("p95_wall_ms", "efficiency", "aggregate_tps"):
        for row, value in zip(rows, frame[name]):
            assert (row[name] == "" and math.isnan(value)) or float(row[name]) == value


def test_cells_without_a_cache_equal_those_with_one(demo: str, all_cells: pa.Table) -> None:
    assert cellscope.cells(demo, cache=False).equals(all_cells)


FILTERS = [
    ({"backend": ["vllm", "sglang"]}, ["--backend", "vllm,sglang"], {"backend": {"vllm", "sglang"}}),
    (
        {"load": 16, "workload": "long_decode"},
        ["--load", "16", "--workload", "long_decode"],
        {"n": {"16"}, "workload": {"long_decode"}},
    ),
    ({"n": 16}, ["--load", "16"], {"n": {"16"}}),
    (
        {"model": "llama3.1-8b", "rep": [0, 2]},
        ["--model", "llama3.1-8b", "--rep", "0,2"],
        {"model": {"llama3.1-8b"}, "rep": {"0", "2"}},
    ),
    ({"status": "partial"}, ["--status", "partial"], {"status": {"partial"}}),
    (
        {"status": ["clean", "skipped"], "phase": "ttft"},
        ["--status", "clean,skipped", "--phase", "ttft"],
        {"status": {"clean", "skipped"}, "phase": {"ttft"}},
    ),
    ({"suite": "local_core", "backend": None}, ["--suite", "local_core"], {"suite": {"local_core"}}),
]


@pytest.mark.parametrize("filters, flags, selected", FILTERS, ids=[" ".join(flags) for _, flags, _ in FILTERS])
def test_filters_give_the_cells_the_cli_gives(
    binary: str,
    demo: str,
    cache: str,
    all_cells_csv: bytes,
    filters: Dict[str, Any],
    flags: List[str],
    selected: Dict[str, set],
) -> None:
    table = cellscope.cells(demo, cache=cache, **filters)
    assert_equals_csv(table, cli(binary, "cells", demo, "--format", "csv", "--cache", cache, *flags).stdout)
    subset = [row for row in csv_rows(all_cells_csv) if all(row[name] in values for name, values in selected.items())]
    assert 0 < len(subset) < len(csv_rows(all_cells_csv))
    assert keys(table) == csv_keys(subset)


def test_pre_refill_cells_are_those_the_cli_gives(binary: str, demo: str, cache: str, all_cells: pa.Table) -> None:
    table = cellscope.cells(demo, cache=cache, include="pre_refill")
    assert_equals_csv(
        table, cli(binary, "cells", demo, "--format", "csv", "--cache", cache, "--include", "pre_refill").stdout
    )
    assert not table.equals(all_cells)


@pytest.mark.filterwarnings("ignore::cellscope.CellscopeWarning")
def test_deployment_parameters_filter_as_the_cli_param(binary: str, mixed: str, cache: str) -> None:
    expected = cli(binary, "cells", mixed, "--format", "csv", "--cache", cache, "--param", "tp=1,2").stdout
    table = cellscope.cells(mixed, cache=cache, params={"tp": [1, 2]})
    assert_equals_csv(table, expected)
    every = csv_rows(cli(binary, "cells", mixed, "--format", "csv", "--cache", cache).stdout)

    def tp(row: Dict[str, str]) -> Optional[str]:
        pairs = dict(part.split("=", 1) for part in row["config"].split(",") if part)
        return pairs.get("tp")

    subset = [row for row in every if tp(row) in ("1", "2")]
    assert 0 < len(subset) < len(every)
    assert table.num_rows == len(subset)
    assert table.column("config").to_pylist() == [row["config"] for row in subset]


def test_a_keyword_that_is_no_filter_is_refused_before_the_binary_runs(demo: str) -> None:
    # The binary selects nothing for a parameter no cell states, so a mistyped dimension would go unnoticed.
    with pytest.raises(TypeError, match=r"unknown filter `bakend`.*params=\{'bakend'"):
        cellscope.cells(demo, bakend="vllm")
    with pytest.raises(TypeError, match="unknown filter `tp`"):
        cellscope.compare(demo, a="vllm", b="sglang", tp=4)


# ------------------------------------------------------------------------------------------------- requests


def current_rows(table: pa.Table) -> int:
    return sum(1 for lineage in table.column("lineage").to_pylist() if lineage == "current")


def test_requests_of_a_cell_are_its_rows_and_the_cli_csv(
    binary: str, demo: str, cache: str, all_cells: pa.Table
) -> None:
    # A partial cell and a refilled one (whose replaced rows come from the backup) beside a clean one.
    statuses = all_cells.column("status").to_pylist()
    refilled = all_cells.column("refilled").to_pylist()
    chosen = [statuses.index("clean"), statuses.index("partial"), refilled.index(True)]
    for index in chosen:
        row = all_cells.slice(index, 1)
        rows = cellscope.requests(demo, row, cache=cache)
        assert rows.num_rows > 0
        assert current_rows(rows) == row.column("rows")[0].as_py()
        key = cellscope.cell_key(row)
        expected = cli(binary, "requests", demo, "--cell", key, "--format", "csv", "--cache", cache).stdout
        assert_equals_csv(rows, expected)


def test_a_cell_named_as_text_mapping_series_or_table_gives_the_same_rows(
    demo: str, cache: str, all_cells: pa.Table
) -> None:
    index = all_cells.column("status").to_pylist().index("partial")
    row = all_cells.slice(index, 1)
    expected = cellscope.requests(demo, row, cache=cache)
    fields = row.to_pylist()[0]
    key = "/".join([*(fields[name] for name in KEY_COLUMNS[:6]), f"n={fields['n']}", f"rep={fields['rep']}"])
    assert cellscope.cell_key(row) == key
    assert cellscope.requests(demo, key, cache=cache).equals(expected)
    assert cellscope.requests(demo, fields, cache=cache).equals(expected)
    pandas = pytest.importorskip("pandas")
    frame = row.to_pandas()
    assert isinstance(frame, pandas.DataFrame)
    assert cellscope.requests(demo, frame.iloc[0], cache=cache).equals(expected)
    assert cellscope.requests(demo, frame, cache=cache).equals(expected)


@pytest.mark.filterwarnings("ignore::cellscope.CellscopeWarning")
def test_cells_with_a_configuration_a_rate_and_a_slash_in_the_run_are_named(mixed: str, cache: str) -> None:
    table = cellscope.cells(mixed, cache=cache)
    columns = {name: table.column(name).to_pylist() for name in ("rate_rps", "config", "run_id", "rows")}
    reported = table.column("reported_metrics").to_pylist()
    wanted = [
        i
        for i in range(table.num_rows)
        if columns["rate_rps"][i] is not None and columns["config"][i] and "/" in columns["run_id"][i]
    ]
    # A whole rate, a fractional one and an unbounded one, each with request rows where there are some.
    picked: Dict[str, int] = {}
    for i in sorted(wanted, key=lambda i: reported[i] != ""):
        rate = columns["rate_rps"][i]
        kind = "inf" if math.isinf(rate) else "whole" if rate.is_integer() else "fraction"
        picked.setdefault(kind, i)
    assert set(picked) == {"inf", "whole", "fraction"}
    measured = 0
    for i in picked.values():
        key = cellscope.cell_key(table.slice(i, 1))
        assert "%2F" in key and f"/{columns['config'][i]}/rate=" in key
        # The binary reads the key back as a cell (an unknown one is an error); a cell of a tool's aggregate
        # figures has no request rows, the others have their `rows`.
        rows = cellscope.requests(mixed, key, cache=cache)
        if reported[i] == "":
            assert current_rows(rows) == columns["rows"][i] > 0
            measured += 1
    assert measured >= 2


def test_an_unknown_cell_is_the_binary_error(binary: str, demo: str, cache: str) -> None:
    key = "no-such-run/local_core/scaling/vllm/llama3.2-1b/balanced_2k/n=1/rep=0"
    expected = cli(binary, "requests", demo, "--cell", key, "--format", "csv", "--cache", cache, check=False)
    assert expected.returncode == 2
    with pytest.raises(CellscopeError) as raised:
        cellscope.requests(demo, key, cache=cache)
    assert str(raised.value) == cli_error(expected)
    assert raised.value.returncode == 2


# -------------------------------------------------------------------------------------------------- compare

COMPARISONS = [
    ({"a": "vllm", "b": "sglang"}, ["--a", "vllm", "--b", "sglang"]),
    (
        {
            "a": "vllm",
            "b": "sglang",
            "per": "none",
            "metric": "p95_wall_ms",
            "model": ["llama3.1-8b", "mistral-7b"],
            "omit_partial": True,
        },
        [
            "--a",
            "vllm",
            "--b",
            "sglang",
            "--per",
            "none",
            "--metric",
            "p95_wall_ms",
            "--model",
            "llama3.1-8b,mistral-7b",
            "--omit",
            "partial",
        ],
    ),
    (
        {
            "a": "vllm",
            "b": "sglang",
            "per": "model",
            "metric": "aggregate_tps",
            "alpha": 0.1,
            "include": "excluded",
            "workload": "long_prefill_8k",
        },
        [
            "--a",
            "vllm",
            "--b",
            "sglang",
            "--per",
            "model",
            "--metric",
            "aggregate_tps",
            "--alpha",
            "0.1",
            "--include",
            "excluded",
            "--workload",
            "long_prefill_8k",
        ],
    ),
]


@pytest.mark.parametrize("options, flags", COMPARISONS, ids=[" ".join(flags) for _, flags in COMPARISONS])
def test_compare_numbers_are_the_cli_json(
    binary: str, demo: str, cache: str, options: Dict[str, Any], flags: List[str]
) -> None:
    body = json.loads(cli(binary, "compare", demo, *flags, "--json", "--cache", cache).stdout)
    table = cellscope.compare(demo, cache=cache, **options)
    assert table.num_rows == len(body["groups"]) > 0
    assert cellscope.compare_body(table) == body
    assert cellscope.compare_json(demo, cache=cache, **options) == body
    for row, group in zip(table.to_pylist(), body["groups"]):
        wilcoxon = group["wilcoxon"] or {}
        ci = group["ci"] or [None, None]
        assert row == {
            "group": group["group"],
            "n_pairs": group["n_pairs"],
            "mean_delta": group["mean_delta"],
            "median_delta": group["median_delta"],
            "ci_low": ci[0],
            "ci_high": ci[1],
            "wilcoxon_statistic": wilcoxon.get("statistic"),
            "rank_sum_positive": wilcoxon.get("rank_sum_positive"),
            "rank_sum_negative": wilcoxon.get("rank_sum_negative"),
            "p_value": wilcoxon.get("p_value"),
            "wilcoxon_method": wilcoxon.get("method"),
            "holm_p": group["holm_p"],
            "effect_size": group["effect_size"],
            "ratio": group["ratio"],
            "wins": group["wins"],
            "losses": group["losses"],
            "ties": group["ties"],
            "verdict": group["verdict"],
            "n_dropped": len(group["dropped"]),
        }


@pytest.mark.filterwarnings("ignore::cellscope.CellscopeWarning")
def test_compare_of_a_deployment_parameter_names_it_by_number(binary: str, mixed: str, cache: str) -> None:
    body = json.loads(
        cli(
            binary,
            "compare",
            mixed,
            "--by",
            "tp",
            "--a",
            "1",
            "--b",
            "2",
            "--per",
            "none",
            "--metric",
            "output_tps_per_accelerator",
            "--json",
            "--cache",
            cache,
        ).stdout
    )
    table = cellscope.compare(mixed, by="tp", a=1, b=2, per="none", metric="output_tps_per_accelerator", cache=cache)
    assert cellscope.compare_body(table) == body
    assert table.column("n_pairs").to_pylist() == [group["n_pairs"] for group in body["groups"]]


def test_a_comparison_the_binary_refuses_is_its_error(binary: str, demo: str, cache: str) -> None:
    expected = cli(binary, "compare", demo, "--a", "vllm", "--b", "vlm", "--json", "--cache", cache, check=False)
    assert expected.returncode == 2
    with pytest.raises(CellscopeError) as raised:
        cellscope.compare(demo, a="vllm", b="vlm", cache=cache)
    assert str(raised.value) == cli_error(expected)
    assert "vlm" in str(raised.value)


# ------------------------------------------------------------------------------------------ errors, warnings


def test_a_missing_root_is_the_binary_error(binary: str, tmp_path: Path, cache: str) -> None:
    missing = str(tmp_path / "absent")
    expected = cli(binary, "cells", missing, "--format", "arrow", "--cache", cache, check=False)
    assert expected.returncode == 2
    with pytest.raises(CellscopeError) as raised:
        cellscope.cells(missing, cache=cache)
    error = raised.value
    assert str(error) == cli_error(expected)
    assert missing in str(error)
    assert error.returncode == 2
    assert error.command[1:] == ["cells", missing, "--format", "arrow", "--cache", cache]
    assert error.stderr.strip().endswith(cli_error(expected))


def test_an_unknown_filter_value_is_the_binary_error(binary: str, demo: str, cache: str) -> None:
    expected = cli(binary, "cells", demo, "--format", "arrow", "--cache", cache, "--backend", "vlm", check=False)
    assert expected.returncode == 2
    with pytest.raises(CellscopeError) as raised:
        cellscope.cells(demo, cache=cache, backend="vlm")
    assert str(raised.value) == cli_error(expected)


def test_a_missing_binary_says_how_to_install(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, demo: str) -> None:
    monkeypatch.setenv("CELLSCOPE_BINARY", str(tmp_path / "cellscope"))
    with pytest.raises(CellscopeError) as raised:
        cellscope.cells(demo)
    assert "CELLSCOPE_BINARY" in str(raised.value) and "install" in str(raised.value)
    assert raised.value.returncode is None


def test_the_binary_is_found_on_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, binary: str) -> None:
    import sysconfig

    installed = Path(sysconfig.get_path("scripts")) / ("cellscope" + (sysconfig.get_config_var("EXE") or ""))
    if installed.is_file():
        pytest.skip("a cellscope executable is installed in this environment, which is found before PATH")
    (tmp_path / "cellscope").symlink_to(binary)
    monkeypatch.delenv("CELLSCOPE_BINARY", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PYTHONUSERBASE", str(tmp_path / "user"))
    assert cellscope.find_binary() == str(tmp_path / "cellscope")


def test_each_index_warning_is_one_cellscope_warning(binary: str, demo: str, tmp_path: Path) -> None:
    # The smallest demo run with a malformed row appended: one `ragged_row` warning at its line.
    runs = sorted(path.parent for path in Path(demo).glob("**/metrics.csv") if "_BACKUP_" not in path.parent.name)
    smallest = min(runs, key=lambda run: (run / "metrics.csv").stat().st_size)
    copy = tmp_path / "root" / smallest.name
    shutil.copytree(smallest, copy)
    with open(copy / "metrics.csv", "ab") as metrics:
        metrics.write(b"not,a,row\r\n")
    expected = cli(binary, "cells", str(tmp_path / "root"), "--format", "csv", "--no-cache")
    lines = expected.stderr.decode().splitlines()
    assert lines and any("ragged_row" in line for line in lines)
    with pytest.warns(CellscopeWarning) as caught:
        table = cellscope.cells(tmp_path / "root", cache=False)
    assert [str(warning.message) for warning in caught] == lines
    assert all(warning.filename == __file__ for warning in caught)
    assert issubclass(CellscopeWarning, UserWarning)
    assert_equals_csv(table, expected.stdout)


def test_the_version_is_the_binary_version(binary: str) -> None:
    printed = cli(binary, "--version").stdout.decode().split()
    assert printed[0] == "cellscope"
    assert cellscope.__version__ == printed[1]


# ---------------------------------------------------------------------------------------------------- serve


def refused(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=10):
            return False
    except ConnectionRefusedError:
        return True


def test_serve_answers_the_cells_then_closes(demo: str, cache: str, all_cells: pa.Table) -> None:
    with cellscope.serve(demo, cache=cache) as server:
        assert server.url == f"http://127.0.0.1:{server.port}/"
        assert server.process.poll() is None
        with urllib.request.urlopen(server.url + "api/cells") as answer:
            assert answer.headers["Content-Type"] == "application/vnd.apache.arrow.stream"
            served = pa.ipc.open_stream(answer.read()).read_all()
        assert served.equals(all_cells)
        with urllib.request.urlopen(server.url + "api/index") as answer:
            assert json.load(answer)["cells"] == all_cells.num_rows
        with urllib.request.urlopen(server.url) as page:
            assert page.headers["Content-Security-Policy"].endswith("; frame-ancestors 'none'")
        # The log is read as it comes, so the server's start line is there.
        assert any("cellscope serving" in line for line in server.log)
    assert server.closed
    assert server.process.returncode is not None
    assert refused(server.port)
    server.close()


def test_a_server_is_stopped_when_collected(demo: str, cache: str) -> None:
    server = cellscope.serve(demo, cache=cache)
    process, port = server.process, server.port
    del server
    gc.collect()
    assert process.returncode is not None
    assert refused(port)


def test_a_server_that_cannot_start_is_the_binary_error(binary: str, tmp_path: Path, cache: str) -> None:
    missing = str(tmp_path / "absent")
    expected = cli(binary, "serve", missing, "--addr", "127.0.0.1:0", "--cache", cache, check=False)
    assert expected.returncode == 2
    with pytest.raises(CellscopeError) as raised:
        cellscope.serve(missing, cache=cache)
    assert str(raised.value) == cli_error(expected)
    assert raised.value.returncode == 2


@pytest.fixture
def shown() -> Any:
    """Stops the servers :func:`cellscope.show` starts in a test."""
    from cellscope import _server

    yield _server._shown
    for server in list(_server._shown.values()):
        server.close()
    _server._shown.clear()


def test_show_frames_the_app_at_the_view(demo: str, cache: str, shown: Dict[str, Any]) -> None:
    display = pytest.importorskip("IPython.display")
    view = "/?view=compare&by=backend&a=vllm&b=sglang&per=workload"
    frame = cellscope.show(demo, view, height=480, cache=cache)
    assert isinstance(frame, display.IFrame)
    (server,) = shown.values()
    assert frame.src == f"http://127.0.0.1:{server.port}{view}"
    assert (frame.width, frame.height) == ("100%", 480)
    with urllib.request.urlopen(frame.src) as answer:
        assert answer.status == 200
        # The notebook's page, wherever it is served from, may frame the app.
        assert answer.headers["Content-Security-Policy"].endswith("; frame-ancestors *")
    # The same root reuses its server; a link copied from another host opens the same view here.
    again = cellscope.show(Path(demo) / ".", "http://example.org:8080" + view, cache=cache)
    assert again.src == frame.src
    assert cellscope.show(demo, cache=cache).src == server.url
    assert len(shown) == 1
