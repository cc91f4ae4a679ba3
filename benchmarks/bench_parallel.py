"""Benchmark: sweeps and audits on worker processes (issue #12) — speed-up of N jobs over one.

Sweep: PPCA (k = 5, T = 1000 scans, one chain) and IT-U on digits (d = 64), ε ∈ {0.5, 1, 2}, 4 trials: 12 PPCA cells
of about 2 s and 12 IT-U cells of a few ms. It runs with ``n_jobs=1`` (in this process) and ``n_jobs=N`` (worker
processes), interleaved, wall-clock time, and the speed-up is the median over repeats of the per-repeat ratio.
Both runs must give the same frame (all columns but ``runtime_s``); the benchmark checks it. Both run as a user runs
them (issue #22): default thread settings, nothing forced through the environment — in this process PPCA's sampler
limits its own small linear algebra, and every pool worker runs BLAS on one thread (``dpcore.runtime.protocol``); the
BLAS libraries and thread counts of this process are recorded. The first parallel call of a process also starts the
forkserver (it imports dpcore once); it is reported separately ("cold") and not in the ratio. Goal: ≥ 1.8× with 2
jobs on a 2-core machine.

Audit: ``run_audit("laplace", ε = 1)`` with 10,000 releases per side, 1 vs N jobs, the same way.

Other processes: a wall-clock speed-up needs free cores. On a shared Linux machine with autogroup scheduling
(``/proc/sys/kernel/sched_autogroup_enabled``) CPU time is shared between *sessions*, so while other sessions keep
the cores busy this session gets the same share with one process or two, and no implementation can speed up. So
before each pair of runs the benchmark waits (up to ``--wait`` seconds) until the machine is idle (under
``--idle-below`` busy cores over two seconds, from ``/proc/stat``), records how many cores were busy during each run,
and reports the speed-up over all pairs and over the *clean* pairs (the 1-job run kept at most 1.15 cores busy, i.e.
nothing else ran). It also reports a CPU-time estimate that other sessions do not distort: the 1-job run's CPU time
over the largest CPU time of one worker (read from ``/proc`` while the workers run), i.e. the speed-up the same runs
would have on free cores (parent overhead and start-up not included).

Ceiling: after each pair the same work runs once more as N separate Python processes started together, each running
1/N of the trials on one job (no pool, nothing shared; imports and warm-up before the common start). Their speed-up
over the 1-job run is what this machine allows for this work at all — two busy vCPUs run slower than one — and the
pool's speed-up is reported as a fraction of it.

Usage: ``python benchmarks/bench_parallel.py [--jobs 2] [--repeats 3] [--quick] [--sweep-only] [--no-write]``.
Writes ``benchmarks/results/parallel.json``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _util import environment, write_json

from dpcore.audit import run_audit
from dpcore.data import load_dataset, preprocess
from dpcore.evaluation.sweep import SweepConfig, run_sweep

GOAL_SPEEDUP = 1.8
CLEAN_SERIAL_CORES = 1.15


def _busy_jiffies() -> tuple[int, int]:
    """(busy, total) jiffies of all CPUs since boot, from /proc/stat (0, 0 where it does not exist)."""
    try:
        with open("/proc/stat") as fh:
            fields = [int(x) for x in fh.readline().split()[1:]]
    except OSError:  # pragma: no cover - not Linux
        return 0, 0
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return sum(fields) - idle, sum(fields)


def busy_cores_during(fn):
    """(result of fn(), busy cores of the whole machine while it ran, wall seconds)."""
    b0, _ = _busy_jiffies()
    t0 = time.perf_counter()
    out = fn()
    wall = time.perf_counter() - t0
    b1, _ = _busy_jiffies()
    return out, (b1 - b0) / (os.sysconf("SC_CLK_TCK") * wall) if wall > 0 else float("nan"), wall


class WorkerCpu:
    """CPU seconds of each worker process (children of the forkserver), sampled from /proc every 50 ms."""

    def __init__(self) -> None:
        self.seen: dict[int, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> WorkerCpu:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        import multiprocessing.forkserver as fs

        tick = os.sysconf("SC_CLK_TCK")
        while not self._stop.is_set():
            server = getattr(fs._forkserver, "_forkserver_pid", None)
            for entry in Path("/proc").iterdir():
                if server is None or not entry.name.isdigit():
                    continue
                try:
                    stat = (entry / "stat").read_text()
                except OSError:
                    continue
                fields = stat[stat.rindex(")") + 2:].split()
                if int(fields[1]) == server:  # ppid
                    self.seen[int(entry.name)] = (int(fields[11]) + int(fields[12])) / tick
            self._stop.wait(0.05)


def wait_until_idle(below: float, max_wait: float) -> float:
    """Wait until the machine keeps fewer than ``below`` cores busy over 2 s (at most ``max_wait`` s); returns the
    busy cores of the last window."""
    end = time.monotonic() + max_wait
    while True:
        _, busy, _ = busy_cores_during(lambda: time.sleep(2.0))
        if busy < below or time.monotonic() > end:
            return busy


def sweep_config(quick: bool) -> SweepConfig:
    return SweepConfig(mechanisms=["ppca", "itu"], epsilons=[0.5, 1.0, 2.0], ks=[5], trials=2 if quick else 4,
                       seed=0, time_cap=300.0, mechanism_options={"ppca": {"burn_in": 200 if quick else 1000}})


def independent_processes(jobs: int, quick: bool) -> float:
    """Wall seconds for ``jobs`` separate Python processes, started together, each running 1/``jobs`` of the
    sweep's trials on one job — no pool, nothing shared: the speed-up the hardware itself allows (the *ceiling*).
    Each child imports and warms up first and starts on a common signal; the time is the slowest child's run."""
    cfg = sweep_config(quick)
    if cfg.trials % jobs:
        return float("nan")
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child-trials", str(cfg.trials // jobs)]
    if quick:
        cmd.append("--quick")
    children = [subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
                for _ in range(jobs)]
    for child in children:
        if child.stdout.readline().strip() != "ready":
            raise RuntimeError("a child of the ceiling measurement did not start")
    for child in children:
        child.stdin.write("go\n")
        child.stdin.flush()
    walls = [json.loads(child.communicate()[0])["wall_s"] for child in children]
    return max(walls)


def _child(trials: int, quick: bool) -> None:
    """One process of :func:`independent_processes`: warm up, wait for "go" on stdin, run, print the wall time."""
    data = preprocess(load_dataset("digits"))
    data.C  # noqa: B018
    cfg = sweep_config(quick)
    warm = SweepConfig(mechanisms=list(cfg.mechanisms), epsilons=[1.0], ks=list(cfg.ks), trials=1, seed=0,
                       mechanism_options={"ppca": {"burn_in": 2}})
    run_sweep(data, warm, n_jobs=1)  # lazy imports, as the in-process 1-job run has done before its timer
    half = dataclasses.replace(cfg, trials=trials)
    print("ready", flush=True)
    sys.stdin.readline()
    t0 = time.perf_counter()
    run_sweep(data, half, n_jobs=1)
    print(json.dumps({"wall_s": time.perf_counter() - t0}), flush=True)


def pairs(run, jobs: int, repeats: int, idle_below: float, max_wait: float,
          ceiling=None) -> tuple[list[dict], list]:
    """``repeats`` pairs (1 job, then ``jobs``), each started on an idle machine when possible; with ``ceiling``
    (a function returning wall seconds) a third run per repeat measures the same work on independent processes."""
    out, results = [], []
    for r in range(repeats):
        before = wait_until_idle(idle_below, max_wait)
        c0 = time.process_time()
        a, busy_1, t_1 = busy_cores_during(lambda r=r: run(r, 1))
        cpu_1 = time.process_time() - c0
        with WorkerCpu() as workers:
            b, busy_n, t_n = busy_cores_during(lambda r=r: run(r, jobs))
        cpu_workers = sorted(workers.seen.values(), reverse=True)
        cpu_speedup = cpu_1 / cpu_workers[0] if cpu_workers and cpu_workers[0] > 0 else float("nan")
        t_ind = ceiling() if ceiling is not None else float("nan")
        out.append({"serial_s": t_1, "parallel_s": t_n, "speedup": t_1 / t_n, "busy_cores_serial": busy_1,
                    "busy_cores_parallel": busy_n, "busy_cores_before": before,
                    "clean": busy_1 <= CLEAN_SERIAL_CORES, "serial_cpu_s": cpu_1, "worker_cpu_s": cpu_workers,
                    "cpu_speedup": cpu_speedup, "independent_s": t_ind, "ceiling": t_1 / t_ind})
        results.append((a, b))
        print(f"  pair {r + 1}: 1 job {t_1:.2f} s ({busy_1:.2f} cores busy), {jobs} jobs {t_n:.2f} s "
              f"({busy_n:.2f} cores busy) → {t_1 / t_n:.2f}×{'' if busy_1 <= CLEAN_SERIAL_CORES else ' (not clean)'}; "
              f"CPU: 1 job {cpu_1:.2f} s, workers {[round(c, 2) for c in cpu_workers]} s → {cpu_speedup:.2f}×"
              + (f"; {jobs} independent processes {t_ind:.2f} s → ceiling {t_1 / t_ind:.2f}×"
                 if ceiling is not None else ""), flush=True)
    return out, results


def summarise_pairs(rows: list[dict]) -> dict:
    clean = [p for p in rows if p["clean"]]
    return {"speedup_median": statistics.median(p["speedup"] for p in rows),
            "serial_s_median": statistics.median(p["serial_s"] for p in rows),
            "parallel_s_median": statistics.median(p["parallel_s"] for p in rows),
            "clean_pairs": len(clean),
            "speedup_median_clean": statistics.median(p["speedup"] for p in clean) if clean else None,
            "cpu_speedup_median": statistics.median(p["cpu_speedup"] for p in rows),
            "ceiling_median": statistics.median(p["ceiling"] for p in rows),
            "pairs": rows}


def bench_sweep(jobs: int, repeats: int, quick: bool, idle_below: float, max_wait: float) -> dict:
    data = preprocess(load_dataset("digits"))
    cfg = sweep_config(quick)
    data.C  # noqa: B018 - outside the timers
    t0 = time.perf_counter()
    run_sweep(data, cfg, n_jobs=jobs)
    cold = time.perf_counter() - t0
    rows, results = pairs(lambda r, n: run_sweep(data, cfg, n_jobs=n), jobs, repeats, idle_below, max_wait,
                          ceiling=lambda: independent_processes(jobs, quick))
    identical = True
    for a, b in results:
        try:
            pd.testing.assert_frame_equal(a.drop(columns="runtime_s"), b.drop(columns="runtime_s"))
        except AssertionError:
            identical = False
    frame = results[-1][0]
    row = {"data": f"digits (n = {data.n}, d = {data.d})", "cells": len(frame),
           "mechanisms": list(cfg.mechanisms), "ppca_burn_in": cfg.mechanism_options["ppca"]["burn_in"],
           "k": list(cfg.ks), "epsilons": list(cfg.epsilons), "trials": cfg.trials, "jobs": jobs,
           "cold_parallel_s": cold, "cell_seconds_sum_last_serial": float(frame.runtime_s.sum()),
           "identical_frames": identical, "statuses": frame.status.value_counts().to_dict(), "goal": GOAL_SPEEDUP,
           **summarise_pairs(rows)}
    clean = row["speedup_median_clean"]
    print(f"sweep {row['cells']} cells ({', '.join(cfg.mechanisms)}): speed-up {row['speedup_median']:.2f} over "
          f"{len(rows)} pairs (CPU-time estimate {row['cpu_speedup_median']:.2f}); {row['clean_pairs']} clean pairs"
          f"{f' → {clean:.2f}' if clean is not None else ''}; cold first call {cold:.2f} s; identical frames: "
          f"{identical}; ceiling ({jobs} independent processes, no pool) {row['ceiling_median']:.2f}: the pool "
          f"reaches {row['speedup_median'] / row['ceiling_median']:.0%} of it", flush=True)
    return row


def bench_audit(jobs: int, repeats: int, quick: bool, idle_below: float, max_wait: float) -> dict:
    trials = 2000 if quick else 10_000
    rows, results = pairs(lambda r, n: run_audit("laplace", 1.0, trials=trials, seed=r, n_jobs=n), jobs, repeats,
                          idle_below, max_wait)
    row = {"mechanism": "laplace", "epsilon": 1.0, "trials_per_side": trials, "jobs": jobs,
           "verdict_last": results[-1][1].verdict, **summarise_pairs(rows)}
    clean = row["speedup_median_clean"]
    print(f"audit laplace, {trials} releases per side: speed-up {row['speedup_median']:.2f} over {len(rows)} pairs "
          f"(CPU-time estimate {row['cpu_speedup_median']:.2f}); {row['clean_pairs']} clean pairs"
          f"{f' → {clean:.2f}' if clean is not None else ''}", flush=True)
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--sweep-only", action="store_true", help="skip the audit part")
    ap.add_argument("--idle-below", type=float, default=0.3, help="busy cores that count as an idle machine")
    ap.add_argument("--wait", type=float, default=300.0, help="seconds to wait for an idle machine before each pair")
    ap.add_argument("--child-trials", type=int, default=0, help=argparse.SUPPRESS)  # a ceiling process
    args = ap.parse_args()
    if args.child_trials:
        _child(args.child_trials, args.quick)
        return
    repeats = 1 if args.quick else args.repeats
    wait = 0.0 if args.quick else args.wait
    load_before = os.getloadavg()
    sweep = bench_sweep(args.jobs, repeats, args.quick, args.idle_below, wait)
    audit = None if args.sweep_only else bench_audit(args.jobs, repeats, args.quick, args.idle_below, wait)
    load_after = os.getloadavg()
    print(f"load average (1, 5, 15 min) before {load_before}, after {load_after}")
    payload = {"benchmark": "parallel", "environment": environment(), "clock": "wall", "blas": _blas_threads(),
               "thread_variables": {k: os.environ.get(k) for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                                                                    "MKL_NUM_THREADS")},
               "sweep": sweep,
               "audit": audit, "load_average_before": load_before, "load_average_after": load_after,
               "autogroup_scheduling": _autogroup(),
               "note": "wall-clock speed-up on a machine shared with other sessions; 'clean' pairs are those whose "
                       "1-job run kept at most 1.15 cores busy (nothing else ran)"}
    if not args.no_write:
        print("wrote", write_json("parallel", payload))


def _blas_threads() -> list[dict]:
    """BLAS/OpenMP libraries of this process and their thread counts (the 1-job run's)."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:  # pragma: no cover
        return []
    return [{k: info.get(k) for k in ("user_api", "internal_api", "num_threads", "filepath")}
            for info in threadpool_info()]


def _autogroup() -> str | None:
    try:
        return Path("/proc/sys/kernel/sched_autogroup_enabled").read_text().strip()
    except OSError:
        return None


if __name__ == "__main__":
    main()
