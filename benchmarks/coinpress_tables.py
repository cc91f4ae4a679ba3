"""CoinPress (Biswas et al., NeurIPS 2020): its two stored synthetic covariance tables, reproduced, and its time.

Writes ``benchmarks/results/coinpress_tables.json``, which the Papers page reads (it runs nothing itself):
for each cell of the paper's table "n" (ρ = 0.5, n = 3000…8000, t = 1…5) and table "ρ" (n = 8000, ρ = 0.005…0.5,
t = 1…4), the 10 %-trimmed mean Mahalanobis error over 100 trials (the paper's count) of dpcore's CoinPress steps
as in the authors' code and as dpcore releases it, the non-private error, the paper's number and the verdict
(:func:`dpcore.evaluation.coinpress_repro.compare`, |ours − paper| ≤ 4·√(se² + se_paper²)).

``--timing`` also times one release (``get_mechanism("coinpress").release``) against its floor — the t passes
any implementation makes over the rows (X·Mᵀ and the Gram matrix WᵀW) and t d×d eigendecompositions, in CPU
time on one BLAS thread.

    python benchmarks/coinpress_tables.py [--trials 100] [--timing] [--tables n,rho]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._util import environment
from dpcore.evaluation import coinpress_repro as cp


def _cells(table: str) -> list[tuple[int, float, object, float]]:
    """(n, ρ, t or "non-private", paper's value) for every cell of one table."""
    if table == "n":
        grid, paper = [(int(n), 0.5) for n in cp.PAPER_N_GRID], cp.PAPER_TABLE_N
    else:
        grid, paper = [(8000, rho) for rho in cp.PAPER_RHO_GRID], cp.PAPER_TABLE_RHO
    return [(n, rho, t, values[j]) for t, values in paper.items() for j, (n, rho) in enumerate(grid)]


def run_table(table: str, trials: int) -> dict:
    cells = []
    for idx, (n, rho, t, paper) in enumerate(_cells(table)):
        variants = ("non-private",) if t == "non-private" else cp.VARIANTS
        for variant in variants:
            errors = cp.trial_errors(n, rho, 1 if t == "non-private" else int(t), trials,
                                     random_state=(7, 0 if table == "n" else 1, idx), variant=variant)
            v = cp.compare(errors, paper)
            cells.append({"n": n, "rho": rho, "t": t, "variant": variant, "paper": paper, "ours": v.ours,
                          "se": v.se, "tolerance": v.tolerance, "reproduced": v.reproduced, "trials": trials})
        print(f"table {table}: n = {n}, ρ = {rho:.4g}, t = {t}: paper {paper:.4g}; "
              + ", ".join(f"{c['variant']} {c['ours']:.4g}" for c in cells[-len(variants):]), flush=True)
    return {"cells": cells}


def _floor_once(X: np.ndarray, steps: int) -> None:
    d = X.shape[1]
    M = np.eye(d)
    for _ in range(steps):
        W = X @ M.T
        G = W.T @ W
        np.linalg.eigh(G)


def timing(repeats: int = 25) -> list[dict]:
    """Median paired ratio release/floor at a few sizes, in CPU time on one BLAS thread (insensitive to the other
    processes on a shared machine), interleaved floor/release per repeat."""
    from threadpoolctl import threadpool_limits

    from dpcore.mechanisms import get_mechanism

    mech = get_mechanism("coinpress")
    out = []
    rng = np.random.default_rng(0)
    with threadpool_limits(limits=1, user_api="blas"):
        for n, d, steps in ((8000, 10, 3), (4000, 100, 3), (20000, 50, 5)):
            X = rng.standard_normal((n, d))
            X /= np.linalg.norm(X, axis=1).max()
            ratios, rel_s, floor_s = [], [], []
            for r in range(repeats):
                t0 = time.process_time()
                _floor_once(X, steps)
                t1 = time.process_time()
                mech.release(X, 2, 1.0, 1e-6, random_state=r, steps=steps)
                t2 = time.process_time()
                floor_s.append(t1 - t0)
                rel_s.append(t2 - t1)
                ratios.append((t2 - t1) / max(t1 - t0, 1e-9))
            row = {"n": n, "d": d, "steps": steps, "clock": "cpu, 1 BLAS thread",
                   "release_ms": 1e3 * statistics.median(rel_s), "floor_ms": 1e3 * statistics.median(floor_s),
                   "ratio_of_medians": statistics.median(rel_s) / statistics.median(floor_s),
                   "ratio_median": statistics.median(ratios), "repeats": repeats}
            print(row, flush=True)
            out.append(row)
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--trials", type=int, default=cp.PAPER_TRIALS)
    ap.add_argument("--tables", default="n,rho")
    ap.add_argument("--timing", action="store_true")
    ap.add_argument("--out", type=Path, default=cp.RESULTS_PATH)
    args = ap.parse_args(argv)
    try:
        result = json.loads(args.out.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        result = {}
    result.update({"source": cp.SOURCE, "d": cp.D, "prior_K": cp.PRIOR_K, "norm_bound": cp.NORM_BOUND,
                   "trim": cp.TRIM, "z_tolerance": cp.Z_TOL, "environment": environment()})
    started = time.perf_counter()
    for table in filter(None, args.tables.split(",")):
        result[f"table_{table}"] = run_table(table, args.trials)
    if args.timing:
        result["timing"] = timing()
    result["seconds"] = time.perf_counter() - started
    args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out} in {result['seconds']:.0f} s")


if __name__ == "__main__":
    main()
