"""``cellscope serve`` as a child process on loopback, and the app shown in a notebook."""

from __future__ import annotations

import collections
import logging
import os
import re
import subprocess
import threading
import time
import urllib.error
import urllib.request
import weakref
from typing import Any, Deque, Dict, List, Optional, Union
from urllib.parse import urlsplit, urlunsplit

from . import _args, _binary
from ._errors import CellscopeError

_log = logging.getLogger("cellscope.serve")

# The log line `serve` writes once it listens and has indexed, and the address it names.
_SERVING = re.compile(r"cellscope serving url=(\S+)")

# How many of the server's last log lines are kept for the message of a server that dies.
_TAIL_LINES = 40


class _Drain:
    """Reads the server's standard error to its end in a thread, so that a full pipe never blocks the server,
    keeping the last lines and the address the server announces."""

    def __init__(self, stream: Any) -> None:
        self.lines: Deque[str] = collections.deque(maxlen=_TAIL_LINES)
        self.url: Optional[str] = None
        self.announced = threading.Event()
        self.thread = threading.Thread(target=self._read, args=(stream,), name="cellscope-serve-log", daemon=True)
        self.thread.start()

    def _read(self, stream: Any) -> None:
        try:
            for raw in iter(stream.readline, b""):
                line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
                self.lines.append(line)
                _log.debug("%s", line)
                if self.url is None:
                    match = _SERVING.search(line)
                    if match:
                        self.url = match.group(1)
                        self.announced.set()
        finally:
            stream.close()
            # The end of the log wakes a caller waiting for the address of a server that died first.
            self.announced.set()


def _stop(process: "subprocess.Popen[bytes]", drain: _Drain) -> None:
    """Ends the server and waits for it and for its log's reader (the finaliser of :class:`Server`)."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    drain.thread.join()


class Server:
    """A running ``cellscope serve`` on loopback, made by :func:`serve`.

    Use it as a context manager, or call :meth:`close`; it is also closed when it is garbage-collected and when
    the interpreter exits.

    Attributes:
        url: the app's address, ``http://127.0.0.1:PORT/``.
        root: the data root it serves, as given.
        process: the server's :class:`subprocess.Popen`.
    """

    def __init__(self, url: str, root: str, process: "subprocess.Popen[bytes]", drain: _Drain) -> None:
        self.url = url
        self.root = root
        self.process = process
        self._drain = drain
        self._finalizer = weakref.finalize(self, _stop, process, drain)

    @property
    def port(self) -> int:
        """The port it listens on."""
        port = urlsplit(self.url).port
        assert port is not None, "the server announces its port"
        return port

    @property
    def log(self) -> List[str]:
        """The server's last log lines (its standard error)."""
        return list(self._drain.lines)

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` has run or the process has exited."""
        return not self._finalizer.alive or self.process.poll() is not None

    def link(self, view: str = "") -> str:
        """The address of the app at ``view`` on this server.

        ``view`` is an app link's path and query (``/?view=compare&by=backend&a=vllm&b=sglang``), its query alone
        (``?view=curves`` or ``view=curves``), or a whole app link from any host, whose host is replaced by this
        server's. An empty view is the app's first page.
        """
        base = urlsplit(self.url)
        if not view:
            return self.url
        if not view.startswith(("/", "?")) and "://" not in view:
            view = "/?" + view
        parts = urlsplit(view)
        return urlunsplit((base.scheme, base.netloc, parts.path or "/", parts.query, parts.fragment))

    def close(self) -> None:
        """Stops the server (SIGTERM, then SIGKILL after 10 s) and waits for it to exit. Calling it again does
        nothing."""
        self._finalizer()

    def __enter__(self) -> "Server":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else "running"
        return f"<cellscope.Server {self.url} root={self.root!r} {state}>"


def _died(process: "subprocess.Popen[bytes]", drain: _Drain, command: List[str]) -> CellscopeError:
    """The error for a server that exited before it answered, with its own message or its last lines."""
    drain.thread.join()
    text = "\n".join(drain.lines)
    _, error = _binary.split_stderr(text)
    message = error or (
        f"cellscope serve exited with code {process.returncode} before it answered; its last lines:\n{text}"
    )
    return CellscopeError(message, returncode=process.returncode, command=command, stderr=text)


def _answers(url: str) -> bool:
    """Whether ``GET /api/index`` answers 200; ``False`` while the server is not ready (503) or not reachable."""
    try:
        with urllib.request.urlopen(url + "api/index", timeout=60) as answer:
            answer.read()
            return bool(answer.status == 200)
    except urllib.error.HTTPError as error:
        if error.code == 503:
            return False
        raise
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return False


def serve(
    path: Union[str, "os.PathLike[str]"],
    *,
    port: int = 0,
    cache: _args.Cache = None,
    timeout: Optional[float] = None,
    frame_ancestors: Optional[str] = None,
) -> Server:
    """Starts ``cellscope serve PATH`` on ``127.0.0.1:PORT`` and returns once it answers.

    Args:
        path: the data root: a directory, or a bucket prefix (``s3://…``, ``gs://…``, ``az://…``).
        port: the port; 0 (the default) lets the system choose a free one, read back from the server's log.
        cache: ``None`` for the user's cache directory, ``False`` for none (``--no-cache``), or a directory or
            bucket prefix (``--cache``).
        timeout: seconds to wait for the first index before giving up; ``None`` waits as long as it takes.
        frame_ancestors: the pages that may show the app in a frame (``--frame-ancestors``: ``"*"``, or
            origins such as ``"http://localhost:8888"``); ``None``, the default, lets no page.

    Returns:
        The running :class:`Server`; ``GET /api/index`` has answered 200.

    Raises:
        CellscopeError: the binary is missing, the server exited before it answered (with its message), or
            ``timeout`` passed (the server is then stopped).
    """
    root = _args.root_arg(path)
    command = [
        _binary.find_binary(),
        "serve",
        root,
        "--addr",
        f"127.0.0.1:{int(port)}",
        *_args.cache_args(cache),
        *(["--frame-ancestors", frame_ancestors] if frame_ancestors is not None else []),
    ]
    env = _binary.command_env("info")
    # The address is read from this line, so it is logged whatever filter the caller chose.
    env[_binary.LOG_ENV] = env[_binary.LOG_ENV] + ",cellscope::http::start=info"
    try:
        process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=env,
            # Its own process group on POSIX: interrupting a notebook's cell does not stop the server too.
            start_new_session=os.name == "posix",
        )
    except OSError as error:
        raise CellscopeError(f"cannot run {command[0]}: {error}", command=command) from error
    drain = _Drain(process.stderr)
    deadline = None if timeout is None else time.monotonic() + timeout

    def remaining() -> Optional[float]:
        return None if deadline is None else max(0.0, deadline - time.monotonic())

    def give_up() -> CellscopeError:
        _stop(process, drain)
        return CellscopeError(
            f"cellscope serve did not answer within {timeout} s; its last lines:\n" + "\n".join(drain.lines),
            command=command,
            stderr="\n".join(drain.lines),
        )

    drain.announced.wait(remaining())
    if drain.url is None:
        if process.poll() is None and drain.thread.is_alive():
            raise give_up()
        process.wait()
        raise _died(process, drain, command)
    url = drain.url if drain.url.endswith("/") else drain.url + "/"
    while not _answers(url):
        if process.poll() is not None:
            raise _died(process, drain, command)
        left = remaining()
        if left is not None and left <= 0:
            raise give_up()
        time.sleep(0.1)
    return Server(url, root, process, drain)


# One server per data root that :func:`show` started, reused while it runs.
_shown: Dict[str, Server] = {}
_shown_lock = threading.Lock()


def _root_identity(path: Union[str, "os.PathLike[str]"]) -> str:
    """The data root as one text per root: a local directory resolved, a bucket URL as it is."""
    root = _args.root_arg(path)
    if "://" in root:
        return root
    return os.path.realpath(root)


def show(
    path: Union[str, "os.PathLike[str]"],
    view: str = "",
    *,
    width: Union[int, str] = "100%",
    height: Union[int, str] = 600,
    cache: _args.Cache = None,
) -> Any:
    """The app at ``view`` in a notebook: an ``IPython.display.IFrame`` of a server of ``path``.

    The first call for a data root starts a server (:func:`serve` on a free port, ``frame_ancestors="*"`` so that
    the notebook's page may frame it); later calls for the same root reuse it while it runs. It stops when the interpreter (the notebook's kernel) exits.

    Args:
        path: the data root.
        view: an app link's path and query (``/?view=compare&by=backend&a=vllm&b=sglang``), its query alone, or a
            whole app link copied from another server (its host is replaced); empty for the app's first page.
        width: the frame's width (pixels or a CSS length).
        height: the frame's height.
        cache: as for :func:`serve`, used when a server is started.

    Raises:
        ImportError: IPython is not installed.
        CellscopeError: the server could not be started.
    """
    try:
        from IPython.display import IFrame
    except ImportError as error:
        raise ImportError(
            "cellscope.show() displays the app in Jupyter and needs IPython (`pip install ipython`, which "
            "Jupyter installs); outside a notebook, use cellscope.serve(path).url in a browser"
        ) from error
    identity = _root_identity(path)
    with _shown_lock:
        server = _shown.get(identity)
        if server is None or server.closed:
            # A notebook's page frames the app, from whatever origin the notebook is served: the server, on
            # loopback and read-only, lets any page frame it.
            server = serve(path, cache=cache, frame_ancestors="*")
            _shown[identity] = server
    return IFrame(server.link(view), width=width, height=height)
