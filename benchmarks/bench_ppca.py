"""Benchmark: PPCA's matrix Bingham Gibbs sampler — time per scan relative to its floor, and the Fig. 5 setting.

Floor: one scan must eigendecompose the restricted (d−k+1)×(d−k+1) matrix once per column, i.e. k ``eigh`` calls
(Hoff 2009; rstiefel additionally runs a QR per column). Gibbs scans and the floor are timed interleaved in the
same process on the same matrix sizes (M = (ε/2)·C of synthetic data, n = 5000, ε = 1); each repeat times a block
of scans. Goal: ratio ≤ 1.5. Also times one PPCA release in Chaudhuri et al.'s Fig. 5 setting (d = 10, k = 2,
T = 1000 scans) with 1 and 3 chains. BLAS single-threaded (``--threads``).

Usage: ``python benchmarks/bench_ppca.py [--repeats 7] [--quick] [--no-write]``.
Writes ``benchmarks/results/ppca.json``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

for _key in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_key, "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _util import environment, write_json  # noqa: E402

from dpcore.data.prepared import PreparedData  # noqa: E402
from dpcore.mechanisms import get_mechanism  # noqa: E402
from dpcore.samplers.gibbs import bmf_gibbs  # noqa: E402

SETTINGS = ((10, 2), (54, 10), (100, 10))
GOAL_RATIO = 1.5


def synthetic(n: int, d: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * np.linspace(2.0, 0.2, d)
    return X / np.linalg.norm(X, axis=1).max()


def scans_for(d: int) -> int:
    return {10: 400, 54: 12, 100: 6}.get(d, 10)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    repeats = 3 if args.quick else args.repeats
    rows = []
    print(f"{'d':>4} {'k':>3} {'scan (ms)':>10} {'floor (ms)':>11} {'ratio med':>9} {'ratio best':>10}")
    for d, k in SETTINGS:
        X = synthetic(5000, d)
        M = (args.epsilon / 2.0) * (X.T @ X)
        m = d - k + 1
        block = M[:m, :m].copy()
        T = scans_for(d)
        rng = np.random.default_rng(1)
        V = bmf_gibbs(M, k, 20, rng).states[0]  # start near stationarity
        scan_t, floor_t = [], []
        for _ in range(repeats):
            t0 = time.perf_counter()
            res = bmf_gibbs(M, k, T, rng, V0=V)
            scan_t.append((time.perf_counter() - t0) / T)
            V = res.states[0]
            t0 = time.perf_counter()
            for _ in range(T * k):
                np.linalg.eigh(block)
            floor_t.append((time.perf_counter() - t0) / T)
        ratios = [s / f for s, f in zip(scan_t, floor_t)]
        row = {"d": d, "k": k, "m": m, "scans_per_repeat": T, "scan_ms_median": 1e3 * statistics.median(scan_t),
               "floor_ms_median": 1e3 * statistics.median(floor_t), "ratio_median": statistics.median(ratios),
               "ratio_best": min(scan_t) / min(floor_t), "goal": GOAL_RATIO}
        rows.append(row)
        print(f"{d:4d} {k:3d} {row['scan_ms_median']:10.3f} {row['floor_ms_median']:11.3f} "
              f"{row['ratio_median']:9.2f} {row['ratio_best']:10.2f}", flush=True)

    # Fig. 5 setting: one PPCA sample, d = 10, k = 2, T = 1000
    data = PreparedData(synthetic(5000, 10, seed=2))
    mech = get_mechanism("ppca")
    fig5 = {}
    for chains in (1, 3):
        secs = []
        for r in range(3 if args.quick else 5):
            t0 = time.perf_counter()
            rel = mech.release(data, 2, args.epsilon, random_state=r, burn_in=1000, chains=chains)
            secs.append(time.perf_counter() - t0)
        fig5[f"chains={chains}"] = {"median_s": statistics.median(secs), "best_s": min(secs),
                                    "converged_last": rel.diagnostics["converged"],
                                    "final_f_last": rel.diagnostics["final_f"].tolist()}
        print(f"Fig. 5 setting (d=10, k=2, T=1000, {chains} chain(s)): median {statistics.median(secs):.3f} s "
              f"per sample, best {min(secs):.3f} s; final F = {np.round(rel.diagnostics['final_f'], 4)}")
    payload = {"benchmark": "ppca", "environment": environment(), "epsilon": args.epsilon, "n": 5000,
               "floor": "k numpy.linalg.eigh calls of size (d−k+1) per scan", "rows": rows, "fig5": fig5}
    if not args.no_write:
        print("wrote", write_json("ppca", payload))


if __name__ == "__main__":
    main()
