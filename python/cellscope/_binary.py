"""Finding the ``cellscope`` executable and running one command of it.

The wheel installs the executable into the environment's scripts directory beside this package; it is looked up
there, then in the user scheme's scripts directory (``pip install --user``), then on ``PATH``. The environment
variable ``CELLSCOPE_BINARY`` names another executable and is used before any of them.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
import warnings
from typing import Dict, List, Optional, Sequence, Tuple

from ._errors import CellscopeError, CellscopeWarning

#: The environment variable that names the executable to run instead of the installed one.
BINARY_ENV = "CELLSCOPE_BINARY"

#: The binary's log filter; a command reading the index logs only warnings unless the caller chose otherwise.
LOG_ENV = "CELLSCOPE_LOG"

_INSTALL_HINT = (
    "install the cellscope wheel into this environment (`pip install cellscope-<version>-<platform>.whl`, which "
    "puts the `cellscope` executable beside this package), put a `cellscope` executable on PATH, or set "
    f"{BINARY_ENV} to its path"
)

# A line of the binary's log (tracing's format without colours): a timestamp, then the level.
_LOG_LINE = re.compile(r"^\d{4}-\d{2}-\d{2}T\S+\s+(TRACE|DEBUG|INFO|WARN|ERROR)\s")

# Colour escapes, in case a terminal-like standard error ever gets them.
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _user_scripts_dir() -> Optional[str]:
    """The scripts directory of the user scheme (``pip install --user``), when the platform has one."""
    if sys.version_info >= (3, 10):
        scheme = sysconfig.get_preferred_scheme("user")
    elif os.name == "nt":
        scheme = "nt_user"
    elif sys.platform == "darwin" and getattr(sys, "_framework", None):
        scheme = "osx_framework_user"
    else:
        scheme = "posix_user"
    try:
        return sysconfig.get_path("scripts", scheme=scheme)
    except KeyError:
        return None


def find_binary() -> str:
    """The path of the ``cellscope`` executable this package runs.

    Raises:
        CellscopeError: ``CELLSCOPE_BINARY`` names no file, or no executable was found; the message says how to
            install one.
    """
    chosen = os.environ.get(BINARY_ENV)
    if chosen:
        if os.path.isfile(chosen):
            return os.path.abspath(chosen)
        raise CellscopeError(f"{BINARY_ENV} is set to {chosen!r}, which is not a file; {_INSTALL_HINT}")
    name = "cellscope" + (sysconfig.get_config_var("EXE") or "")
    candidates = [sysconfig.get_path("scripts"), _user_scripts_dir()]
    for directory in candidates:
        if directory:
            path = os.path.join(directory, name)
            if os.path.isfile(path):
                return path
    found = shutil.which(name)
    if found:
        return found
    raise CellscopeError(f"the cellscope executable was not found; {_INSTALL_HINT}")


def command_env(log_filter: str) -> Dict[str, str]:
    """The environment for the binary: this process's, with ``CELLSCOPE_LOG`` set to ``log_filter`` unless the
    caller set it."""
    env = dict(os.environ)
    env.setdefault(LOG_ENV, log_filter)
    return env


def is_log_line(line: str) -> Optional[str]:
    """The level of one line of the binary's log (``INFO``, ``WARN``, …), or ``None`` for any other line."""
    match = _LOG_LINE.match(line)
    return match.group(1) if match else None


def split_stderr(stderr: str) -> Tuple[List[str], Optional[str]]:
    """The warnings and the error message in what a command wrote on standard error.

    Each index warning is one line; a log line at ``WARN`` or ``ERROR`` is a warning too, and lower levels are
    dropped. The error is the text from the line starting ``error: `` to the end (a usage error carries a usage
    block after its first line).
    """
    lines = [_ANSI.sub("", line) for line in stderr.splitlines()]
    error_at = next((i for i, line in enumerate(lines) if line.startswith("error: ")), None)
    before = lines if error_at is None else lines[:error_at]
    found = []
    for line in before:
        if not line.strip():
            continue
        level = is_log_line(line)
        if level is None or level in ("WARN", "ERROR"):
            found.append(line)
    error = None
    if error_at is not None:
        error = "\n".join(lines[error_at:])[len("error: ") :].strip()
    return found, error


def run(arguments: Sequence[str], *, stacklevel: int = 2) -> bytes:
    """Runs ``cellscope ARGUMENTS`` and returns its standard output.

    Each warning it prints is issued as a :class:`CellscopeWarning` (``stacklevel`` as for
    :func:`warnings.warn`, counted from the caller of this function).

    Raises:
        CellscopeError: the binary is missing or exited with a non-zero code; the error carries its message.
    """
    command = [find_binary(), *arguments]
    try:
        completed = subprocess.run(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=command_env("warn"),
            check=False,
        )
    except OSError as failure:
        raise CellscopeError(f"cannot run {command[0]}: {failure}", command=command) from failure
    stderr = completed.stderr.decode("utf-8", errors="replace")
    found, message = split_stderr(stderr)
    for line in found:
        warnings.warn(line, CellscopeWarning, stacklevel=stacklevel + 1)
    if completed.returncode != 0:
        if message is None:
            tail = "\n".join(stderr.strip().splitlines()[-5:])
            message = f"cellscope exited with code {completed.returncode}" + (f": {tail}" if tail else "")
        raise CellscopeError(message, returncode=completed.returncode, command=command, stderr=stderr)
    output: bytes = completed.stdout
    return output


def version() -> str:
    """The binary's version (``cellscope --version`` prints ``cellscope 0.1.0``)."""
    text = run(["--version"]).decode("utf-8", errors="replace").strip()
    return text.split()[-1] if text else text
