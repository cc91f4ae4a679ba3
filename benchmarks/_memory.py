"""Peak memory of a command: the resident set of its whole process tree, sampled from /proc (Linux).

``ru_maxrss`` sees one process at a time; a sweep with worker processes (``--jobs``) or a Dask LocalCluster holds
memory in several, so the tree's total is sampled every ``interval`` seconds while the command runs.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import tempfile
import time
from pathlib import Path


def _children(pid: int) -> list[int]:
    out: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError):
            out += [int(c) for c in (task / "children").read_text().split()]
    return out


def _rss_bytes(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def tree_rss(pid: int) -> tuple[int, int]:
    """(RSS of ``pid``, RSS of ``pid`` and all its descendants), in bytes."""
    own = _rss_bytes(pid)
    total, stack, seen = 0, [pid], set()
    while stack:
        p = stack.pop()
        if p in seen:
            continue
        seen.add(p)
        total += _rss_bytes(p)
        stack += _children(p)
    return own, total


def measure(cmd: list[str], *, interval: float = 0.05, env: dict | None = None, cwd: str | None = None) -> dict:
    """Run ``cmd``; return wall seconds, exit code, its stdout and the end of its stderr, and the peak RSS of the
    main process and of the whole process tree (sampled), in bytes."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                env={**os.environ, **(env or {})}, cwd=cwd)
        peak_own = peak_tree = 0
        while proc.poll() is None:
            own, tree = tree_rss(proc.pid)
            peak_own, peak_tree = max(peak_own, own), max(peak_tree, tree)
            time.sleep(interval)
        wall = time.perf_counter() - t0
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    return {"seconds": wall, "returncode": proc.returncode, "peak_rss_main": peak_own, "peak_rss_tree": peak_tree,
            "stdout": stdout, "stderr_tail": stderr[-2000:]}


def gib(x: float) -> float:
    return x / 2**30
