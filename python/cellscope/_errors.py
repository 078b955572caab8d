"""The exception and the warning category the package raises and issues."""

from __future__ import annotations

from typing import Optional, Sequence


class CellscopeError(Exception):
    """The ``cellscope`` binary failed, or could not be found or started.

    ``str(error)`` is the binary's own message (its ``error: …`` text without the prefix), which says what to
    change.

    Attributes:
        message: that message.
        returncode: the binary's exit code (2 for an error, 1 for a failed ``audit --strict``); ``None`` when it
            did not run or did not exit (a missing binary, a server that never answered).
        command: the command line that was run, the binary first.
        stderr: everything the binary wrote on standard error.
    """

    def __init__(
        self,
        message: str,
        *,
        returncode: Optional[int] = None,
        command: Sequence[str] = (),
        stderr: str = "",
    ) -> None:
        super().__init__(message)
        self.message = message
        self.returncode = returncode
        self.command = list(command)
        self.stderr = stderr

    def __str__(self) -> str:
        return self.message


class CellscopeWarning(UserWarning):
    """One warning of the index (a malformed row, an unreadable file, …), as the binary printed it.

    The text names the warning's kind, run, file and line: ``warning[unknown_status] run … metrics.csv:5: …``.
    """
