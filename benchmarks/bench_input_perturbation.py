"""Benchmark: release time of the input-perturbation mechanisms relative to the O(nd² + d³) floor.

The floor is what any of these mechanisms must do: form C = XᵀX and run one symmetric eigendecomposition
(``np.linalg.eigh``). Each mechanism is timed on a fresh :class:`PreparedData` (built outside the timer), so its
time includes forming C too — the ratio is apples to apples. Floor and mechanisms are measured interleaved, in a
shuffled order, in the same run; each repeat takes the best of 3 calls per task. We report the median over repeats
of the ratio to the floor of the same repeat (the goal statistic: ≤ 1.5 at d ≥ 100) and the best-of ratio.
BLAS runs single-threaded by default (``--threads``) and the clock is this process's CPU time (``--clock cpu``): on a
shared, loaded machine wall-clock and multi-threaded OpenBLAS timings are dominated by contention with other
processes, and the ratio is what matters. ``--threads 0 --clock wall`` measures the default configuration.

Usage: ``python benchmarks/bench_input_perturbation.py [--n 5000] [--dims 50 100 200] [--repeats 25] [--threads 1]
[--clock cpu|wall] [--quick] [--no-write]``
Writes ``benchmarks/results/input_perturbation.json``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _util import environment, summarize, time_once, write_json

from dpcore.data.prepared import PreparedData
from dpcore.mechanisms import get_mechanism

MECHANISMS = ("mod_sulq", "analyze_gauss", "laplace", "wishart_sheffet", "sn_imtiaz", "wishart_jiang")
GOAL_RATIO = 1.5
GOAL_MIN_D = 100
K, EPSILON, DELTA = 10, 1.0, 1e-5


def make_rows(n: int, d: int, seed: int = 0) -> np.ndarray:
    """n Gaussian rows with a decaying spectrum, scaled so the largest norm is 1."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * np.linspace(2.0, 0.2, d)
    return np.ascontiguousarray(X / np.linalg.norm(X, axis=1).max())


def floor_once(X: np.ndarray) -> None:
    C = X.T @ X
    np.linalg.eigh(C)


def release_once(mechanism_id: str, data: PreparedData, seed: int) -> None:
    mech = get_mechanism(mechanism_id)
    mech.release(data, K, EPSILON, DELTA if mech.uses_delta else 0.0, random_state=seed,
                 allow_invalid=mech.invalid)


def bench_dimension(n: int, d: int, repeats: int, inner: int = 3, seed: int = 0, clock: str = "wall") -> dict:
    """Time the floor and every mechanism ``repeats`` times (each a best of ``inner`` calls), interleaved."""
    X = make_rows(n, d, seed)
    X.setflags(write=False)
    # warm-up: BLAS threads, caches, lazy imports
    for _ in range(3):
        floor_once(X)
        for mid in MECHANISMS:
            release_once(mid, PreparedData(X), 0)
    timings: dict[str, list[float]] = {"floor": [], **{mid: [] for mid in MECHANISMS}}
    build: list[float] = []
    order_rng = np.random.default_rng(seed + 1)
    for rep in range(repeats):
        tasks = ["floor", *MECHANISMS]
        order_rng.shuffle(tasks)
        for task in tasks:
            if task == "floor":
                best = min(time_once(lambda X=X: floor_once(X), clock=clock) for _ in range(inner))
            else:
                build.append(time_once(lambda X=X: PreparedData(X)))
                best = min(time_once(lambda data, t=task, r=rep: release_once(t, data, r),
                                     setup=lambda X=X: PreparedData(X), clock=clock) for _ in range(inner))
            timings[task].append(best)
    floor_t = np.array(timings["floor"])
    floor = summarize(timings["floor"])
    rows = {}
    for mid in MECHANISMS:
        s = summarize(timings[mid])
        # ratio to the floor measured in the same repeat (cancels slow changes of the machine's load)
        s["ratio_median"] = float(np.median(np.array(timings[mid]) / floor_t))
        s["ratio_best"] = s["best_ms"] / floor["best_ms"]
        rows[mid] = s
    return {"n": n, "d": d, "floor": floor, "prepared_data_build": summarize(build), "mechanisms": rows}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=5000)
    parser.add_argument("--dims", type=int, nargs="+", default=[50, 100, 200])
    parser.add_argument("--repeats", type=int, default=25)
    parser.add_argument("--threads", type=int, default=1, help="BLAS threads (0 = library default)")
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu",
                        help="cpu: process CPU time (default; needs --threads 1), wall: wall-clock time")
    parser.add_argument("--quick", action="store_true", help="5 repeats (smoke run)")
    parser.add_argument("--no-write", action="store_true", help="print only, do not write the JSON file")
    args = parser.parse_args(argv)
    repeats = 5 if args.quick else args.repeats
    if args.clock == "cpu" and args.threads != 1:
        parser.error("--clock cpu needs --threads 1 (CPU time of several BLAS threads adds up)")

    if args.threads > 0:
        from threadpoolctl import threadpool_limits

        with threadpool_limits(limits=args.threads, user_api="blas"):
            env = environment()
            results = [bench_dimension(args.n, d, repeats, clock=args.clock) for d in args.dims]
    else:
        env = environment()
        results = [bench_dimension(args.n, d, repeats, clock=args.clock) for d in args.dims]

    header = f"{'d':>5} {'floor ms':>9} | " + " ".join(f"{m:>15}" for m in MECHANISMS)
    threads = args.threads or "default"
    print(f"n = {args.n}, k = {K}, ε = {EPSILON}, δ = {DELTA}, {repeats} repeats, BLAS threads {threads}, "
          f"{args.clock} clock; cells: median paired ratio to floor (best-of ratio)")
    print(header)
    print("-" * len(header))
    goal_met = True
    for r in results:
        cells = []
        for mid in MECHANISMS:
            m = r["mechanisms"][mid]
            cells.append(f"{m['ratio_median']:>6.2f} ({m['ratio_best']:.2f})")
            if r["d"] >= GOAL_MIN_D and m["ratio_median"] > GOAL_RATIO:
                goal_met = False
        print(f"{r['d']:>5} {r['floor']['median_ms']:>9.2f} | " + " ".join(f"{c:>15}" for c in cells))
    print(f"goal (median ratio ≤ {GOAL_RATIO} at d ≥ {GOAL_MIN_D}): {'met' if goal_met else 'MISSED'}")

    payload = {
        "benchmark": "input_perturbation",
        "description": ("release() time / (C = XᵀX + one np.linalg.eigh) measured in the same repeat; fresh "
                        "PreparedData per call (C is formed inside the timed release); best of 3 calls per repeat"),
        "settings": {"n": args.n, "k": K, "epsilon": EPSILON, "delta": DELTA, "repeats": repeats, "inner_best_of": 3,
                     "blas_threads": args.threads or "default", "clock": args.clock, "mechanisms": list(MECHANISMS)},
        "goal": {"ratio": GOAL_RATIO, "min_d": GOAL_MIN_D, "statistic": "median", "met": goal_met},
        "environment": env,
        "results": results,
    }
    if not args.no_write:
        print(f"wrote {write_json('input_perturbation', payload)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
