"""Review of the peers' subprocess (issue 36): what reaches the child, and how its failures read.

Each test fails on fde6aff/0fb3f88: the seed travelled in argv (readable by any local user in ``ps``); a peer
killed by any signal (a segfault) was reported as "ran past its CPU-time cap"; a last stdout line that was valid JSON
but not the worker's answer escaped as a TypeError; a probe answer of the wrong shape raised AttributeError from
``peers_status`` (a traceback on Explore); a worker whose parent is pid 1 (a container's entry point) always exited;
and a worker without ``resource`` (Windows) failed every fit. The fakes are tiny shell scripts, not the peers.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import dpcore.peers as peers
from dpcore.exceptions import MechanismTimeout
from dpcore.peers import adapters
from dpcore.peers.adapters import PeerError, run_worker

pytestmark = pytest.mark.skipif(sys.platform.startswith("win"), reason="fake peers are POSIX shell scripts")


def _fake_python(tmp_path, body: str) -> str:
    path = tmp_path / "fake-python"
    path.write_text("#!/bin/sh\n" + body + "\n", encoding="utf-8")
    path.chmod(0o755)
    return str(path)


def _worker_module():
    spec = importlib.util.spec_from_file_location("_dpcore_peer_worker_under_test", peers.WORKER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_seed_and_the_settings_never_travel_in_argv(monkeypatch):
    seen = {}

    def fake_run(args, **kwargs):
        seen["args"], seen["input"] = args, kwargs.get("input", b"")
        return subprocess.CompletedProcess(args, 0, b'{"basis": [[1.0]], "fit_s": 0, "fit_cpu_s": 0}\n', b"")

    monkeypatch.setattr(adapters, "_python", lambda: "python-of-the-peers")
    monkeypatch.setattr(adapters.subprocess, "run", fake_run)
    run_worker({"task": "fit", "peer": "diffprivlib", "epsilon": 0.5, "k": 1, "seed": 1234567891},
               np.full((3, 1), 0.25), timeout=5, what="diffprivlib PCA")
    assert not any("1234567891" in str(a) or "seed" in str(a) for a in seen["args"])
    head, _, rest = seen["input"].partition(b"\n")
    assert json.loads(head)["seed"] == 1234567891 and rest.startswith(b"\x93NUMPY")


def test_a_peer_that_crashes_is_an_error_not_a_capped_fit(tmp_path, monkeypatch):
    monkeypatch.setattr(adapters, "_python", lambda: _fake_python(tmp_path, "cat >/dev/null; kill -SEGV $$"))
    with pytest.raises(PeerError, match="crashed") as info:
        run_worker({"task": "fit"}, np.zeros((2, 2)), timeout=30, what="OpenDP PCA")
    assert not isinstance(info.value, MechanismTimeout)


def test_a_peer_stopped_by_its_cpu_cap_is_still_a_timeout(tmp_path, monkeypatch):
    monkeypatch.setattr(adapters, "_python", lambda: _fake_python(tmp_path, "cat >/dev/null; kill -XCPU $$"))
    with pytest.raises(MechanismTimeout, match="CPU-time cap"):
        run_worker({"task": "fit"}, np.zeros((2, 2)), timeout=30, what="OpenDP PCA")


@pytest.mark.parametrize("garbage", ["[0.25, 0.5]", "0.125", '"text"', "null"])
def test_a_last_line_that_is_not_the_workers_answer_is_a_clear_error(tmp_path, monkeypatch, garbage):
    monkeypatch.setattr(adapters, "_python", lambda: _fake_python(tmp_path, f"cat >/dev/null; echo '{garbage}'"))
    with pytest.raises(PeerError, match="ended without an answer") as info:
        run_worker({"task": "fit"}, np.zeros((2, 2)), timeout=30, what="OpenDP PCA")
    assert garbage not in str(info.value)


def test_a_probe_answer_of_the_wrong_shape_is_no_answer(tmp_path, monkeypatch):
    fake = _fake_python(tmp_path, 'echo \'{"opendp": [1], "diffprivlib": "x"}\'')
    monkeypatch.setattr(peers, "peer_candidates", lambda: [fake])
    peers._status.cache_clear()
    try:
        status = peers.peers_status()
        assert status.python is None and "did not answer" in status.reason and "make peers" in status.reason
    finally:
        peers._status.cache_clear()


def test_a_worker_whose_parent_is_pid_1_runs(monkeypatch):
    """A container's entry point is pid 1: its child's getppid() is 1 while the parent lives."""
    worker = _worker_module()
    import ctypes

    class _NoPrctl:
        def __init__(self, *args, **kwargs):
            self.prctl = lambda *a: 0

    monkeypatch.setattr(ctypes, "CDLL", _NoPrctl)  # never set PDEATHSIG on the test process
    monkeypatch.setattr(worker, "_no_core_dump", lambda: None)  # nor its core limit
    monkeypatch.setattr(worker.os, "getppid", lambda: 1)
    monkeypatch.setattr(worker.sys, "platform", "linux")
    worker._limit({"task": "probe", "parent": 1})  # no SystemExit
    worker._limit({"task": "probe", "parent": os.getpid()})  # a wrapper between us and a living parent
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    with pytest.raises(SystemExit):
        worker._limit({"task": "probe", "parent": gone.pid})  # reparented: the parent died


def test_a_worker_without_resource_runs_without_its_cpu_cap(monkeypatch):
    worker = _worker_module()
    monkeypatch.setattr(worker.sys, "platform", "win32")
    monkeypatch.setitem(sys.modules, "resource", None)  # `import resource` raises ImportError
    monkeypatch.setattr(worker, "_no_core_dump", lambda: None)
    worker._limit({"task": "fit", "cpu_cap": 5})


def test_a_peers_legend_entry_says_not_private():
    """The legend is what a reader of an exported chart sees without hovering: it said "OpenDP · fails law test"
    where our claimed-invalid exhibits say "SN · NOT PRIVATE"."""
    from dpcore.explain.figures import trace_style

    for pid in peers.PEER_IDS:
        style = trace_style(pid)
        assert "NOT PRIVATE" in style.legend and style.not_private


MARKER = 0.123456789012345678  # a "private" cell: its 8 bytes must not reach the disk


def _core_dumps_possible() -> bool:
    try:
        import resource

        hard = resource.getrlimit(resource.RLIMIT_CORE)[1]
        pattern = Path("/proc/sys/kernel/core_pattern").read_text(encoding="ascii").strip()
    except (ImportError, OSError):
        return False
    return hard != 0 and not pattern.startswith("|") and "/" not in pattern


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_DUMPABLE and /proc are Linux's")
def test_the_worker_holding_the_rows_never_dumps_core(tmp_path):
    """SIGXCPU (the CPU cap stops a fit with it) dumps core by default: where core dumps are on, the worker wrote
    its memory, the private rows with it, to a file in its working directory. The worker is stopped while it holds
    the rows (blocked reading the rest of stdin); no core file appears, and the worker is not dumpable."""
    import resource
    import signal
    import time

    rows = np.full((64, 4), MARKER)
    buf = __import__("io").BytesIO()
    np.save(buf, rows, allow_pickle=False)
    head = json.dumps({"task": "fit", "peer": "opendp", "epsilon": 1.0, "k": 1, "parent": os.getpid()}).encode()

    def allow_cores():  # the child may dump core as far as the machine allows (the test's own limit stays)
        hard = resource.getrlimit(resource.RLIMIT_CORE)[1]
        resource.setrlimit(resource.RLIMIT_CORE, (hard, hard))

    proc = subprocess.Popen([sys.executable, "-I", str(peers.WORKER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=tmp_path, preexec_fn=allow_cores)
    try:
        proc.stdin.write(head + b"\n" + buf.getvalue()[:-8])  # the rows but the last cell: the worker waits
        proc.stdin.flush()
        for _ in range(200):  # until the worker has set its limits
            limits = Path(f"/proc/{proc.pid}/limits").read_text(encoding="ascii")
            core_line = next(line for line in limits.splitlines() if line.startswith("Max core file size"))
            if core_line.split()[4] == "0":
                break
            time.sleep(0.05)
        assert core_line.split()[4:6] == ["0", "0"], core_line
        time.sleep(0.2)  # inside the read of stdin
        proc.send_signal(signal.SIGXCPU)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.stdin.close()
        proc.stdout.close()
        proc.stderr.close()
    assert proc.returncode == -signal.SIGXCPU
    if _core_dumps_possible():
        dumped = [p for p in tmp_path.iterdir() if p.name.startswith("core")]
        assert dumped == [], "the worker dumped core (its memory holds the rows)"


def test_a_peer_that_hangs_is_stopped_at_the_wall_cap(tmp_path, monkeypatch):
    monkeypatch.setattr(adapters, "_python", lambda: _fake_python(tmp_path, "exec sleep 60"))
    with pytest.raises(MechanismTimeout, match="time cap; the peer process was stopped"):
        run_worker({"task": "fit"}, np.zeros((2, 2)), timeout=0.5, what="OpenDP PCA")


def test_a_missing_peers_python_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setattr(adapters, "_python", lambda: str(tmp_path / "no-such-python"))
    with pytest.raises(PeerError, match="could not start \\(FileNotFoundError\\)"):
        run_worker({"task": "fit"}, np.zeros((2, 2)), timeout=5, what="OpenDP PCA")


def test_a_worker_runs_the_probed_python_not_a_broken_first_candidate(monkeypatch):
    """Review: a pool worker took the first candidate unprobed, so a broken $DPCORE_PEERS_PYTHON failed every peer
    row while the page (which probed) offered the peers from .venv-peers."""
    from test_peers import _peers_python

    from dpcore.peers import _status, adapters, peers_status

    good = _peers_python()
    monkeypatch.setenv("DPCORE_PEERS_PYTHON", "/bin/false")
    _status.cache_clear()  # a fresh pool worker: no probe has run in it
    try:
        assert adapters._python() == good != "/bin/false"
    finally:
        monkeypatch.delenv("DPCORE_PEERS_PYTHON")
        peers_status(refresh=True)
    assert peers_status().python == good
