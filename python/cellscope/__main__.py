"""``python -m cellscope …`` runs the installed ``cellscope`` executable with the same arguments."""

from __future__ import annotations

import os
import subprocess
import sys

from ._binary import find_binary
from ._errors import CellscopeError


def main() -> int:
    """Runs the binary in place of this interpreter where the platform allows, else as a child."""
    try:
        binary = find_binary()
    except CellscopeError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if sys.platform == "win32":
        return subprocess.run([binary, *sys.argv[1:]], check=False).returncode
    os.execv(binary, [binary, *sys.argv[1:]])
    return 0


if __name__ == "__main__":
    sys.exit(main())
