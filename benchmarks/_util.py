"""Small helpers shared by the benchmark scripts (timing, environment record, JSON output)."""

from __future__ import annotations

import json
import os
import platform
import statistics
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

RESULTS_DIR = Path(__file__).resolve().parent / "results"


def time_once(fn: Callable[[], object], setup: Callable[[], object] | None = None, clock: str = "wall") -> float:
    """Seconds of one ``fn(state)`` call (``fn()`` without setup); ``setup`` runs outside the timer.

    ``clock="cpu"`` measures this process's CPU time (``time.process_time``): with single-threaded BLAS it is
    insensitive to other processes competing for the cores, unlike wall-clock time.
    """
    timer = time.process_time if clock == "cpu" else time.perf_counter
    state = setup() if setup is not None else None
    t0 = timer()
    fn(state) if setup is not None else fn()
    return timer() - t0


def summarize(seconds: list[float]) -> dict:
    """Median, best and spread of a list of timings, in milliseconds."""
    ms = [1e3 * s for s in seconds]
    return {
        "median_ms": statistics.median(ms),
        "best_ms": min(ms),
        "q75_ms": float(np.percentile(ms, 75)),
        "repeats": len(ms),
    }


def environment() -> dict:
    """Where the numbers were measured (shared 2-core machines make them approximate)."""
    info = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
    }
    try:
        from threadpoolctl import threadpool_info

        info["blas"] = [{k: p.get(k) for k in ("internal_api", "version", "num_threads")} for p in threadpool_info()]
    except Exception:  # pragma: no cover - optional dependency
        pass
    return info


def write_json(name: str, payload: dict) -> Path:
    """Write ``benchmarks/results/<name>.json`` (benchmark figures only, never user data)."""
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    path = RESULTS_DIR / f"{name}.json"
    path.write_text(json.dumps(payload, indent=2, sort_keys=False) + "\n", encoding="utf-8")
    return path
