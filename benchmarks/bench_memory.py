"""Benchmark: the lean in-memory path — ``DPPCA.fit`` against its floor, and the peak memory of ``dpcore sweep`` on
the real datasets (issue #13, item 1).

1. **fit / floor.** Floor: what any fit must do, ``eigh(X.T @ X)`` (n = 4,000, d = 200). ``DPPCA().fit(X)`` (defaults:
   Analyze Gauss, k = 2, B = 1) and, for the breakdown, the mechanism's release alone on a fresh ``PreparedData`` (C
   formed inside) are timed interleaved with the floor, in a shuffled order, best of 3 calls per repeat; the
   statistic is the median over repeats of the ratio to the floor of the same repeat. BLAS single-threaded and
   process CPU time by default, as in ``bench_input_perturbation.py`` (wall-clock on a shared 2-core machine is
   dominated by the other processes). Goal ≤ 1.5.
2. **sweep peak memory.** ``dpcore sweep --dataset census|kddcup99 --feature-scaling minmax --mechanisms
   analyze_gauss,laplace --epsilons 0.5,1 --trials 1`` in a subprocess; the resident set of its whole process tree
   (worker processes included) is sampled every 50 ms. Reported against the float64 data matrix (n·d·8 bytes), also
   after subtracting the resident set of an interpreter that has only imported what the sweep imports; with
   ``--jobs 1`` (one process: where the data lives) and with the default worker processes (each worker holds an
   interpreter and C, not the data). Goal on census: main-process peak − interpreter ≤ 2 × matrix + O(d²) (16 d × d
   matrices allowed).

``--src DIR`` runs both parts against the dpcore in DIR (e.g. an export of an older commit: ``git archive HEAD |
tar -x -C /tmp/old``) for before/after numbers measured in the same session.

Usage: ``python benchmarks/bench_memory.py [--repeats 25] [--datasets census kddcup99] [--src DIR] [--quick]
[--no-write]``. Writes ``benchmarks/results/memory.json``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

GOAL_FIT_RATIO = 1.5
GOAL_MEMORY_RATIO = 2.0
N, D = 4000, 200
DATASETS = {"census": (199_523, 510), "kddcup99": (494_021, 116)}
SWEEP_ARGS = ["--feature-scaling", "minmax", "--mechanisms", "analyze_gauss,laplace", "--epsilons", "0.5,1",
              "--trials", "1", "--quiet"]


def fit_benchmark(repeats: int, clock: str) -> dict:
    import numpy as np
    from _util import summarize, time_once

    from dpcore import DPPCA
    from dpcore.data.prepared import PreparedData
    from dpcore.mechanisms import get_mechanism

    rng = np.random.default_rng(0)
    X = rng.standard_normal((N, D)) * np.linspace(2.0, 0.2, D)
    U = X / np.linalg.norm(X, axis=1, keepdims=True)  # unit rows for the release-alone measurement
    mech = get_mechanism("analyze_gauss")

    def floor():
        np.linalg.eigh(X.T @ X)

    def fit():
        DPPCA(random_state=0).fit(X)

    def release(data):
        mech.release(data, 2, 1.0, 1e-5, random_state=0)

    for _ in range(3):
        floor(), fit(), release(PreparedData(U))
    timings: dict[str, list[float]] = {"floor": [], "fit": [], "release": []}
    order = np.random.default_rng(1)
    for _ in range(repeats):
        tasks = list(timings)
        order.shuffle(tasks)
        for task in tasks:
            if task == "release":
                t = min(time_once(release, setup=lambda: PreparedData(U), clock=clock) for _ in range(3))
            else:
                t = min(time_once(floor if task == "floor" else fit, clock=clock) for _ in range(3))
            timings[task].append(t)
    floor_t = np.array(timings["floor"])
    out = {"n": N, "d": D, "floor": summarize(timings["floor"])}
    for task in ("fit", "release"):
        s = summarize(timings[task])
        s["ratio_median"] = float(np.median(np.array(timings[task]) / floor_t))
        s["ratio_best"] = s["best_ms"] / out["floor"]["best_ms"]
        out[task] = s
    return out


def memory_benchmark(datasets: list[str], src: Path) -> dict:
    from _memory import gib, measure

    from dpcore.data.datasets import shared_data_dir

    if shared_data_dir() is None:
        print("shared data directory not found: sweep memory not measured")
        return {}
    baseline = measure([sys.executable, "-c", "import dpcore.cli, dpcore.evaluation.sweep, dpcore.evaluation.metrics, "
                        "sklearn.svm, scipy.linalg, pandas, time; time.sleep(1)"], cwd=str(src))
    interpreter = baseline["peak_rss_tree"]
    results = {"interpreter_rss_bytes": interpreter}
    usage = measure([sys.executable, "-m", "dpcore.cli", "sweep", "--help"], cwd=str(src))["stdout"]
    variants = {"jobs_1": ["--jobs", "1"], "jobs_default": []} if "--jobs" in usage else {"one_process": []}
    for name in datasets:
        n, d = DATASETS[name]
        matrix = n * d * 8
        allowance = GOAL_MEMORY_RATIO * matrix + 16 * 8 * d * d
        results[name] = {"n": n, "d": d, "matrix_bytes": matrix}
        for variant, extra in variants.items():
            with tempfile.TemporaryDirectory() as tmp:
                r = measure([sys.executable, "-m", "dpcore.cli", "sweep", "--dataset", name, *SWEEP_ARGS, *extra,
                             "--out", str(Path(tmp) / "sweep.csv")], cwd=str(src))
            if r["returncode"] != 0:
                print(f"{name}: sweep failed: {r['stderr_tail']}")
                continue
            peak, main_peak = r["peak_rss_tree"], r["peak_rss_main"]
            results[name][variant] = {
                "seconds": r["seconds"], "peak_rss_tree_bytes": peak, "peak_rss_main_bytes": main_peak,
                "ratio_to_matrix": peak / matrix, "main_ratio_to_matrix": main_peak / matrix,
                "main_ratio_to_matrix_above_interpreter": (main_peak - interpreter) / matrix,
                "goal_met_main_process": bool(main_peak - interpreter <= allowance),
            }
            above = (main_peak - interpreter) / matrix
            print(f"{name:>9} {variant:>12}: {n:,} × {d} (matrix {gib(matrix):.2f} GiB): main process peak "
                  f"{gib(main_peak):.2f} GiB = {main_peak / matrix:.2f} × matrix ({above:.2f}"
                  f" × above the interpreter's {gib(interpreter):.2f} GiB); whole process tree "
                  f"{gib(peak):.2f} GiB; {r['seconds']:.1f} s")
        first = next((v for v in results[name].values() if isinstance(v, dict)), None)
        results[name]["goal_met"] = None if first is None else first["goal_met_main_process"]
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=25)
    parser.add_argument("--datasets", nargs="*", default=list(DATASETS), choices=list(DATASETS))
    parser.add_argument("--src", type=Path, default=ROOT, help="root of the dpcore to measure (default: this one)")
    parser.add_argument("--threads", type=int, default=1, help="BLAS threads of the fit part (0 = library default)")
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu")
    parser.add_argument("--quick", action="store_true", help="5 repeats, census only")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    src = args.src.resolve()
    sys.path.insert(0, str(HERE))
    sys.path.insert(0, str(src))
    from _util import environment, write_json

    repeats = 5 if args.quick else args.repeats
    datasets = ["census"] if args.quick else args.datasets
    if args.threads > 0:
        from threadpoolctl import threadpool_limits

        with threadpool_limits(limits=args.threads, user_api="blas"):
            fit = fit_benchmark(repeats, args.clock)
    else:
        fit = fit_benchmark(repeats, args.clock)
    goal_fit = fit["fit"]["ratio_median"] <= GOAL_FIT_RATIO
    print(f"DPPCA().fit at n = {N}, d = {D} ({repeats} repeats, BLAS threads {args.threads or 'default'}, "
          f"{args.clock} clock): floor {fit['floor']['median_ms']:.2f} ms; fit {fit['fit']['ratio_median']:.2f}× "
          f"(best-of {fit['fit']['ratio_best']:.2f}×), the release alone {fit['release']['ratio_median']:.2f}× — "
          f"goal ≤ {GOAL_FIT_RATIO}: {'met' if goal_fit else 'MISSED'}")
    memory = memory_benchmark(datasets, src)
    payload = {
        "benchmark": "memory",
        "description": "DPPCA.fit / eigh(XᵀX) (median paired ratio) and peak RSS of `dpcore sweep` on real data",
        "settings": {"repeats": repeats, "blas_threads": args.threads or "default", "clock": args.clock,
                     "sweep_args": SWEEP_ARGS, "src": "this checkout" if src == ROOT else str(src)},
        "goals": {"fit_ratio": GOAL_FIT_RATIO, "fit_met": goal_fit, "memory_ratio_census": GOAL_MEMORY_RATIO,
                  "memory_met_main_process": memory.get("census", {}).get("goal_met")},
        "environment": environment(),
        "fit": fit,
        "sweep_memory": memory,
    }
    if not args.no_write:
        print(f"wrote {write_json('memory', payload)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
