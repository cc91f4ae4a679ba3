"""The dashboard's real server for browser tests and benchmarks: ``streamlit run app.py`` (headless, local only, no
file watcher) on a free port, handed over once ``/_stcore/health`` answers, stopped afterwards.

One helper for ``tests/e2e`` (``from benchmarks._server import serve``; the tests have the repository root on their
path) and the server benchmarks (``benchmarks/bench_server.py``, which ``bench_classroom.py`` imports it through).
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: Headless, bound to 127.0.0.1, no usage statistics, no file watcher (a test or a measurement must not rerun on an
#: edit made by someone else in the same checkout).
STREAMLIT_FLAGS: tuple[str, ...] = (
    "--server.headless=true", "--server.address=127.0.0.1", "--browser.serverAddress=localhost",
    "--browser.gatherUsageStats=false", "--server.fileWatcherType=none", "--server.runOnSave=false")
HEALTH_PATH = "/_stcore/health"
POLL_S = 0.2
STOP_TIMEOUT_S = 15.0


def free_port(preferred: int | None = None) -> int:
    """``preferred`` when it is free, else any free local port."""
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", preferred or 0))
        except OSError:
            s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def server_command(port: int, python_args: tuple[str, ...] = ()) -> list[str]:
    """The command line of ``streamlit run app.py`` on ``port`` (``python_args`` go before ``-m streamlit``, e.g. a
    profiling wrapper)."""
    return [sys.executable, *python_args, "-m", "streamlit", "run", str(ROOT / "app.py"), f"--server.port={port}",
            *STREAMLIT_FLAGS]


def wait_healthy(url: str, proc: subprocess.Popen, timeout: float, log: Path | None = None) -> None:
    """Return once ``url``'s health check answers 200; raises RuntimeError (naming the log) when the server exits
    or ``timeout`` seconds pass first."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(f"{url}{HEALTH_PATH}", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        code = proc.poll()
        if code is not None or time.monotonic() > deadline:
            why = f"exited with code {code}" if code is not None else f"was not healthy within {timeout:g} s"
            raise RuntimeError(f"streamlit {why}; its log: {log or 'not kept (pass log=…)'}")
        time.sleep(POLL_S)


def stop(proc: subprocess.Popen, timeout: float = STOP_TIMEOUT_S) -> None:
    """Terminate the server, killing it when it does not stop within ``timeout`` seconds."""
    proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@contextlib.contextmanager
def serve(port: int | None = None, env: dict[str, str] | None = None, log: Path | None = None,
          python_args: tuple[str, ...] = (), start_timeout: float = 90.0) -> Iterator[tuple[str, int]]:
    """``streamlit run app.py`` on ``port`` (default: a free one); yields ``(URL, server pid)`` once healthy and
    stops the server afterwards (also when starting fails). ``env`` is added to this process's environment; the
    server's output goes to ``log`` (default: discarded)."""
    port = free_port() if port is None else port
    if log is not None:
        log.parent.mkdir(parents=True, exist_ok=True)
    out = open(log or os.devnull, "w")  # noqa: SIM115 (closed below)
    proc = subprocess.Popen(server_command(port, python_args), cwd=ROOT, stdin=subprocess.DEVNULL, stdout=out,
                            stderr=subprocess.STDOUT, env={**os.environ, **(env or {})})
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, proc, start_timeout, log)
        yield url, proc.pid
    finally:
        stop(proc)
        out.close()
