"""The first chart of a warm restart, as a user sees it: `cellscope serve` is spawned, headless Chromium opens the
matrix at once, and the app's own `first-chart` performance mark gives the time from spawn to the first drawing.
Alternating runs: with the answers kept for a start (`inputs/` in the cache's snapshot folder), and with them
moved aside, so the start answers only from its own index (as every start did before it kept answers).

Run by `cargo xtask bench start --chart`; only the standard library (WebDriver over HTTP to Debian's chromedriver).

usage: first_chart.py CELLSCOPE DATA CACHE RUNS CHROMEDRIVER CHROMIUM
"""

import glob
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request


def call(method, url, body=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        url, data=data, method=method, headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=120) as response:
        return json.loads(response.read())["value"]


def free_port():
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    return port


def wait_for_port(port, process, limit_s=60):
    started = time.monotonic()
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if process.poll() is not None:
                sys.exit(f"cellscope serve ended ({process.returncode}) before listening")
            if time.monotonic() - started > limit_s:
                sys.exit(f"cellscope serve did not listen within {limit_s} s")
            time.sleep(0.001)


def main():
    binary, data, cache, runs, chromedriver, chromium = sys.argv[1:7]
    runs = int(runs)
    driver_port = free_port()
    driver = subprocess.Popen(
        [chromedriver, f"--port={driver_port}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{driver_port}"
    for _ in range(500):
        try:
            call("GET", base + "/status")
            break
        except OSError:
            time.sleep(0.01)
    options = {
        "binary": chromium,
        "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1400,900"],
    }
    capabilities = {
        "capabilities": {"alwaysMatch": {"browserName": "chrome", "goog:chromeOptions": options}}
    }
    session = base + "/session/" + call("POST", base + "/session", capabilities)["sessionId"]
    rows = []
    try:
        for run in range(1, runs + 1):
            for kind in ("kept answers", "own index only"):
                hidden = []
                if kind == "own index only":
                    for folder in glob.glob(os.path.join(cache, "snapshots", "*", "inputs")):
                        shutil.move(folder, folder + ".aside")
                        hidden.append(folder)
                try:
                    port = free_port()
                    spawned_wall_ms = time.time() * 1000
                    server = subprocess.Popen(
                        [binary, "serve", data, "--addr", f"127.0.0.1:{port}", "--cache", cache],
                        env=dict(os.environ, CELLSCOPE_LOG="warn"),
                    )
                    try:
                        wait_for_port(port, server)
                        call("POST", session + "/url", {"url": f"http://127.0.0.1:{port}/?view=matrix"})
                        mark = None
                        waited = time.monotonic()
                        while mark is None:
                            mark = call(
                                "POST",
                                session + "/execute/sync",
                                {
                                    "script": "const e = performance.getEntriesByName('first-chart');"
                                    " return e.length ? e[0].startTime + performance.timeOrigin : null;",
                                    "args": [],
                                },
                            )
                            if mark is None:
                                if time.monotonic() - waited > 120:
                                    sys.exit("no first chart within 120 s")
                                time.sleep(0.01)
                        rows.append((run, kind, mark - spawned_wall_ms))
                    finally:
                        server.kill()
                        server.wait()
                finally:
                    for folder in hidden:
                        shutil.move(folder + ".aside", folder)
    finally:
        try:
            call("DELETE", session)
        finally:
            driver.kill()
    print("| run | kept answers | own index only |\n|---|---|---|")
    for run in range(1, runs + 1):
        kept, own = (next(ms for r, k, ms in rows if r == run and k == kind) for kind in ("kept answers", "own index only"))
        print(f"| {run} | {kept:.0f} ms | {own:.0f} ms |")
    medians = []
    for kind in ("kept answers", "own index only"):
        values = sorted(ms for _, k, ms in rows if k == kind)
        medians.append(values[len(values) // 2])
    print(f"| median | {medians[0]:.0f} ms | {medians[1]:.0f} ms |")


if __name__ == "__main__":
    main()
