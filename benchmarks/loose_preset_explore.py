"""The "loose public bounds" preset as Explore runs it: AdaptiveCov vs Analyze Gauss on ``wine_loose``.

Explore's own code path (:func:`dpcore.evaluation.workspace.run_view`, one BLAS thread, the page's seed policy:
seed 0, every cell's releases seeded from it as in a sweep), at the page's defaults except the preset's k and trials:
ε = 0.1 … 10 (Explore's grid), δ = 1e-4 (Wine's default), replace-one neighbours, schema scaling, B = √d, no
centring. Prints the captured variance ratio per (k, mechanism, ε) as mean ± s.e. over the trials, and the random
subspace's k/d.

Usage: ``python benchmarks/loose_preset_explore.py [--k 2] [--trials 40] [--seed 0]``.
"""

from __future__ import annotations

import argparse

from dpcore.evaluation.workspace import ExploreView, epsilons_in, run_view

DATA_SETTINGS = {"dp_scaling": "schema", "dp_norm_auto": True, "dp_norm_bound": 1.0, "dp_norm_mode": "clip",
                 "dp_centering": "none"}


def measure(k: int, trials: int, seed: int = 0, delta: float = 1e-4):
    """Frame of (mechanism, ε, mean, s.e., share of trials where AdaptiveCov's release beats AG's)."""
    view = ExploreView(dataset="wine_loose", upload=False, seed=seed, mechanisms=("analyze_gauss", "adaptive_cov"),
                       epsilons=epsilons_in((0.1, 10.0)), delta=delta, k=k, trials=trials, time_cap=20.0,
                       neighbouring="replace", data_settings=DATA_SETTINGS)
    frame = run_view(view).frame
    g = frame.groupby(["mechanism", "epsilon"])["captured_variance_ratio"]
    out = g.agg(["mean", "std", "count"])
    out["se"] = out["std"] / out["count"] ** 0.5
    return out.reset_index()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--k", type=int, nargs="+", default=[2])
    ap.add_argument("--trials", type=int, default=40)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    for k in args.k:
        out = measure(k, args.trials, args.seed)
        print(f"k = {k}, trials = {args.trials}, seed = {args.seed}; random subspace k/d = {k / 13:.3f}")
        wide = out.pivot(index="epsilon", columns="mechanism", values=["mean", "se"])
        for eps, row in wide.iterrows():
            ag, ad = row[("mean", "analyze_gauss")], row[("mean", "adaptive_cov")]
            sag, sad = row[("se", "analyze_gauss")], row[("se", "adaptive_cov")]
            z = (ad - ag) / (sag ** 2 + sad ** 2) ** 0.5
            print(f"| {eps:g} | {ag:.3f} ± {sag:.3f} | {ad:.3f} ± {sad:.3f} | {z:+.1f} |")


if __name__ == "__main__":
    main()
