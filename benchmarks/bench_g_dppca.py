"""g-DPPCA release time against its floor (issue 34 item 3).

Floor: what any covariance-type release must do — form C = XᵀX and one `eigh` — as in
``bench_input_perturbation.py`` (n = 5000, k = 10; single-threaded BLAS, process CPU time, interleaved repeats,
statistic = median of the per-repeat ratio). g-DPPCA forms the m = n/2 pair differences, their spatial signs and
UᵀU/m (half the rows of XᵀX), draws the permutation and the noise, and takes the top-k eigenvectors; Analyze Gauss
is timed beside it for scale.

Usage: ``python benchmarks/bench_g_dppca.py [--repeats 31] [--ds 50,100,200] [--no-write]``; writes
``benchmarks/results/g_dppca.json``.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import random  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _util import environment, time_once, write_json  # noqa: E402

from dpcore.data.prepared import PreparedData  # noqa: E402
from dpcore.mechanisms import get_mechanism  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=31)
    ap.add_argument("--ds", default="50,100,200")
    ap.add_argument("--n", type=int, default=5000)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    rows = []
    for d in (int(x) for x in args.ds.split(",")):
        rng = np.random.default_rng(d)
        X = rng.normal(size=(args.n, d))
        X /= np.linalg.norm(X, axis=1).max()
        k = 10
        def release(mid: str, k: int = k):
            return lambda data: get_mechanism(mid).release(data, k, 1.0, 1e-5, random_state=1)

        def fresh(X: np.ndarray = X) -> PreparedData:
            return PreparedData.from_unit_rows(X)  # built outside the timer; C is formed inside (not cached)

        tasks = {"floor": (lambda X=X: np.linalg.eigh(X.T @ X), None),
                 "g_dppca": (release("g_dppca"), fresh), "analyze_gauss": (release("analyze_gauss"), fresh)}
        times: dict[str, list[float]] = {name: [] for name in tasks}
        for _ in range(args.repeats):
            order = list(tasks)
            random.shuffle(order)
            for name in order:
                fn, setup = tasks[name]
                times[name].append(min(time_once(fn, setup=setup, clock="cpu") for _ in range(3)))
        ratios = {name: statistics.median(t / f for t, f in zip(times[name], times["floor"]))
                  for name in tasks if name != "floor"}
        row = {"d": d, "n": args.n, "k": k, "floor_ms": 1e3 * statistics.median(times["floor"]),
               **{f"{name}_ms": 1e3 * statistics.median(times[name]) for name in tasks if name != "floor"},
               **{f"{name}_ratio": r for name, r in ratios.items()}}
        rows.append(row)
        print(f"d={d}: floor {row['floor_ms']:.2f} ms, g_dppca {row['g_dppca_ms']:.2f} ms "
              f"({ratios['g_dppca']:.2f}×), analyze_gauss {row['analyze_gauss_ms']:.2f} ms "
              f"({ratios['analyze_gauss']:.2f}×)", flush=True)
    if not args.no_write:
        write_json("g_dppca", {"rows": rows, "repeats": args.repeats, "environment": environment()})


if __name__ == "__main__":
    main()
