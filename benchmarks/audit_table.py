"""Privacy-audit table: ε lower bounds for the Wishart exhibits and three valid mechanisms at ε ∈ {0.5, 1, 2}.

Usage: ``python benchmarks/audit_table.py [--trials N] [--seed S] [--out PATH]``; writes
``benchmarks/results/audit_table.csv`` by default. Run time ≈ 15 audits × 2–4 s on one core.
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dpcore.audit import DEFAULT_TRIALS, run_audit

MECHANISMS = ("sn_imtiaz", "wishart_jiang", "laplace", "analyze_gauss", "mod_sulq")
EPSILONS = (0.5, 1.0, 2.0)
FIELDS = ("mechanism", "guarantee", "claimed_epsilon", "delta", "statistic", "neighbours", "epsilon_lower_bound",
          "confidence", "verdict", "trials_per_side", "held_out_hits_num", "held_out_hits_den", "held_out_n",
          "event", "counterexample_delta", "runtime_s")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=DEFAULT_TRIALS)
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--out", default=str(Path(__file__).resolve().parent / "results" / "audit_table.csv"))
    args = parser.parse_args(argv)
    rows = []
    for mid in MECHANISMS:
        for eps in EPSILONS:
            r = run_audit(mid, eps, trials=args.trials, seed=args.seed)
            c = r.counts
            rows.append({
                "mechanism": mid, "guarantee": r.guarantee, "claimed_epsilon": eps, "delta": r.delta,
                "statistic": r.statistic, "neighbours": r.neighbours["name"],
                "epsilon_lower_bound": round(r.epsilon_lower_bound, 4), "confidence": r.confidence,
                "verdict": r.verdict, "trials_per_side": r.completed[0],
                "held_out_hits_num": c["held_out_hits"][0], "held_out_hits_den": c["held_out_hits"][1],
                "held_out_n": c["held_out_n"][0], "event": r.event["description"],
                "counterexample_delta": "" if r.counterexample_delta is None else round(r.counterexample_delta, 4),
                "runtime_s": round(r.runtime_s, 2),
            })
            print(f"{mid:14s} ε={eps:<4g} ε_lb={r.epsilon_lower_bound:7.3f} {r.verdict:10s} "
                  f"hits {c['held_out_hits']} / {c['held_out_n']}  {r.runtime_s:5.1f} s", flush=True)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=FIELDS)
        writer.writeheader()
        writer.writerows(rows)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
