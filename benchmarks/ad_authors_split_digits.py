"""AD's budget splits on digits at ε = 10 (issue 34 item 4): Corollary 1 (ours) vs the authors' code's default.

Digits with the default preprocessing (schema scaling, B = √d, no centring, replace-one), ``--trials`` releases per
cell (seeds 0…trials−1, the same seeds for every cell), captured variance / optimum of the released k-subspace
(:func:`dpcore.evaluation.metrics.captured_variance_ratio`, on the true data: not private) and the normalised
Frobenius error of the rank-k covariance. Cells: split × exponent ('paper' εᵢ/4, 'tight' εᵢ/2) × k.

Usage: ``python benchmarks/ad_authors_split_digits.py [--trials 20] [--epsilon 10] [--ks 2,10]``; writes
``benchmarks/results/ad_authors_split_digits.json``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _util import environment, write_json

from dpcore.data.datasets import load_dataset
from dpcore.data.preprocess import preprocess
from dpcore.evaluation.metrics import captured_variance_ratio
from dpcore.mechanisms import get_mechanism


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--epsilon", type=float, default=10.0)
    ap.add_argument("--ks", default="2,10")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    data = preprocess(load_dataset("digits"))
    C = data.C
    ad = get_mechanism("ad")
    rows = []
    for k in (int(x) for x in args.ks.split(",")):
        for exponent in ("paper", "tight"):
            for split in ("corollary1", "authors"):
                cap, frob, eps0, secs = [], [], [], []
                for seed in range(args.trials):
                    t0 = time.perf_counter()
                    r = ad.release(data, k, args.epsilon, split=split, exponent=exponent, random_state=seed)
                    secs.append(time.perf_counter() - t0)
                    cap.append(captured_variance_ratio(C, r.subspace, data.eigenvalues))
                    frob.append(float(np.linalg.norm(r.covariance_post - C) / np.linalg.norm(C)))
                    eps0.append(r.ledger[0].epsilon)
                row = {"k": k, "exponent": exponent, "split": split, "trials": args.trials,
                       "captured_mean": float(np.mean(cap)), "captured_sd": float(np.std(cap, ddof=1)),
                       "captured_min": float(np.min(cap)), "captured_max": float(np.max(cap)),
                       "frobenius_mean": float(np.mean(frob)), "epsilon_eigenvalues": float(np.mean(eps0)),
                       "median_s": float(np.median(secs))}
                rows.append(row)
                print(f"k={k:3d} {exponent:5s} {split:10s} captured {row['captured_mean']:.3f} ± "
                      f"{row['captured_sd'] / np.sqrt(args.trials):.3f} (sd {row['captured_sd']:.3f}, "
                      f"{row['captured_min']:.3f}–{row['captured_max']:.3f}) frob {row['frobenius_mean']:.3f} "
                      f"ε₀ {row['epsilon_eigenvalues']:.3f} {row['median_s']:.2f} s", flush=True)
    if not args.no_write:
        write_json("ad_authors_split_digits", {"epsilon": args.epsilon, "n": data.n, "d": data.d,
                                                   "rows": rows, "environment": environment()})


if __name__ == "__main__":
    main()
