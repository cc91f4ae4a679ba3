"""Benchmark: the peers as Explore and ``dpcore sweep --peers`` run them (issue 36), beside IT-U, on digits.

Same rows (digits as ``dpcore.data.preprocess`` prepares it with the app's defaults: schema scaling, B = 8, no
centring; every row ‖x‖ ≤ 1 after division by B), same total ε (each spends exactly ε, replace-one), k = 5: IT-U
(ours, the same Amin et al. algorithm), OpenDP 0.16 ``make_private_pca`` (origin 0: no DP mean) and diffprivlib
0.6.6 ``PCA(centered=True)``, each through :meth:`dpcore.mechanisms.Mechanism.release` (the peers in their own
Python, :mod:`dpcore.peers`), each release capped at ``--cap`` seconds (a capped release is reported as capped, not
as a number). Utility: captured-variance ratio tr(V̂ᵀCV̂)/Σ top-k eigenvalues of C = XᵀX (Explore's metric, all
rows). Time: the release's wall time as a sweep cell sees it (for a peer: its Python's start-up + imports + fit) and,
for the peers, the fit alone (measured inside the child). The law verdicts are the stored ones
(``dpcore/peers/law_verdicts.json``, ``python -m dpcore.peers.law --write``).

Usage: ``python benchmarks/bench_peers.py [--epsilons 0.1,0.2,0.5,1] [--trials 3] [--cap 60] [--no-write]``.
Writes ``benchmarks/results/peers.json``. Without the peers' Python (``make peers``) it says so and exits 0.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))


def run(epsilons: list[float], trials: int, cap: float, k: int) -> dict:
    from dpcore.data import load_dataset, preprocess
    from dpcore.evaluation.metrics import captured_variance_ratio
    from dpcore.exceptions import MechanismTimeout
    from dpcore.mechanisms import get_mechanism
    from dpcore.peers import PEER_IDS

    data = preprocess(load_dataset("digits"))
    rows = []
    print(f"digits: n = {data.n}, d = {data.d}, k = {k}, B = {data.norm_bound:g}; cap {cap:g} s per release")
    for mid in ("itu", *PEER_IDS):
        mech = get_mechanism(mid)
        for eps in epsilons:
            got, capped = [], 0
            for t in range(trials):
                t0 = time.perf_counter()
                try:
                    rel = mech.release(data, k, eps, allow_invalid=True, random_state=1000 + t, time_limit=cap)
                except MechanismTimeout:
                    capped += 1
                    break  # a capped ε is capped again: do not spend the cap every trial
                wall = time.perf_counter() - t0
                got.append({"captured": captured_variance_ratio(data.C, rel.subspace), "wall_s": wall,
                            "fit_s": rel.diagnostics.get("peer_fit_s")})
            row = {"mechanism": mid, "epsilon": eps, "ok": len(got), "capped": capped,
                   "captured_median": statistics.median([g["captured"] for g in got]) if got else None,
                   "wall_s_median": statistics.median([g["wall_s"] for g in got]) if got else None,
                   "fit_s_median": (statistics.median([g["fit_s"] for g in got])
                                    if got and got[0]["fit_s"] is not None else None),
                   "runs": got}
            rows.append(row)
            if got:
                fit = f"{row['fit_s_median']:8.2f}" if row["fit_s_median"] is not None else f"{'—':>8}"
                print(f"  {mid:18s} ε = {eps:<5g} captured {row['captured_median']:.4f}  "
                      f"wall {row['wall_s_median']:7.2f} s  fit {fit} s  ({len(got)} ok"
                      f"{', 1 capped' if capped else ''})", flush=True)
            else:
                print(f"  {mid:18s} ε = {eps:<5g} capped at {cap:g} s", flush=True)
    return {"n": data.n, "d": data.d, "k": k, "rows": rows}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epsilons", default="0.1,0.2,0.5,1")
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--cap", type=float, default=60.0)
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    from dpcore.peers import peers_status
    from dpcore.peers.law import stored_verdict

    status = peers_status()
    if status.python is None:
        print(f"peers not available: {status.reason}")
        return 0
    from _util import environment, write_json

    results = run([float(e) for e in args.epsilons.split(",")], args.trials, args.cap, args.k)
    law = {key: {f: stored_verdict(key)[f] for f in ("chi2", "dof", "p_value", "z_mean_t", "mean_t", "exact_mean_t",
                                                     "draws", "verdict")} for key in ("opendp", "diffprivlib")}
    for key, v in law.items():
        print(f"law test {key}: χ² = {v['chi2']:.0f} on {v['dof']} d.f., z = {v['z_mean_t']:+.1f}: {v['verdict']}")
    if not args.no_write:
        payload = {"benchmark": "peers", "settings": vars(args), "versions": status.versions,
                   "environment": environment(), "results": results, "law": law}
        print(f"wrote {write_json('peers', payload)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
