"""Outside check of PPCA's samplers against Yun & Dudeja (2025)'s closed form (issue #25).

"An independent 2025 theory predicts this curve; our sampler lands on it": on a public spiked covariance (p = 200,
spikes 6, 4, 3 above a bulk spread evenly over [0, 1]) the exponential mechanism with A = (pβ/2)·Σ_X — PPCA at
ε = βp²/n — has squared projector errors ‖P̂ − P‖²_F → 2·Σ_{i≤k} min(1, H_i/β), H_i = (1/p)·Σ_{j>k} 1/(λ_i − λ_j)
(and ‖P̂ − P‖²_op → min(1, H_k/β)). The k = 1 exact Kent sampler (i.i.d. draws) and the k = 2 Gibbs scan (4 chains,
the first 50 scans discarded) are drawn on the same matrix at several β; see dpcore/samplers/asymptotics.py.

Run through ``benchmarks/reproduce_papers.py --only yun_dudeja`` (or ``dpcore reproduce yun_dudeja``).
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from dpcore.samplers.asymptotics import (
    DEFAULT_P,
    DEFAULT_SPIKES,
    FINITE_P_TOLERANCE,
    NOMINAL_N,
    check_sampler,
    epsilon_for,
    predicted_errors,
    spiked_spectrum,
    yun_dudeja_h,
)

BETAS_K1 = (0.1, 0.15, 0.25, 0.35, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0)
BETAS_K2 = (0.35, 0.5, 1.0, 2.0)
GIBBS = {"chains": 4, "scans": 150, "warmup": 50}
COLOURS = {1: "#1f77b4", 2: "#ff7f0e"}


def _settings(quick: bool) -> tuple[tuple[float, ...], tuple[float, ...], int, dict]:
    if quick:
        return (0.25, 1.0), (1.0,), 30, {"chains": 2, "scans": 40, "warmup": 20}
    return BETAS_K1, BETAS_K2, 200, GIBBS


def _figure(summary: pd.DataFrame, lam: np.ndarray):
    import plotly.graph_objects as go

    fig = go.Figure()
    grid = np.geomspace(0.08, 4.0, 200)
    for k in (1, 2):
        fig.add_trace(go.Scatter(x=grid, y=[predicted_errors(lam, k, b)[0] for b in grid], mode="lines",
                                 name=f"Yun–Dudeja limit, k = {k}", line={"color": COLOURS[k], "dash": "dash"}))
        s = summary[summary.k == k]
        fig.add_trace(go.Scatter(x=s.beta, y=s.frobenius_mean, mode="markers", name=s.sampler.iloc[0] if len(s) else "",
                                 marker={"color": COLOURS[k], "size": 10, "symbol": "circle" if k == 1 else "diamond"},
                                 error_y={"type": "data", "array": 4 * s.frobenius_se, "visible": True}))
    fig.update_layout(title={"text": f"PPCA's samplers vs Yun & Dudeja (2025): spiked Σ, p = {lam.size}, spikes "
                                     f"{', '.join(f'{x:g}' for x in DEFAULT_SPIKES)}; ε = βp²/n = "
                                     f"{epsilon_for(1.0, lam.size):g}·β at n = {NOMINAL_N:,}", "font": {"size": 15}},
                      template="plotly_white", font={"size": 13}, height=520, width=1000,
                      legend={"orientation": "h", "yanchor": "top", "y": -0.18, "xanchor": "center", "x": 0.5},
                      margin={"l": 70, "r": 30, "t": 70, "b": 120})
    fig.update_xaxes(type="log", title_text="β (inverse temperature; ε = βp²/n)")
    fig.update_yaxes(title_text="‖P̂ − P‖²_F (mean ± 4 SE)")
    return fig


def reproduce(quick: bool, save) -> pd.DataFrame:
    """Run the check and store it through ``save(name, raw, summary, facts, fig)`` (reproduce_papers.py)."""
    lam = spiked_spectrum()
    betas1, betas2, draws, gibbs = _settings(quick)
    rows = []
    for k, betas in ((1, betas1), (2, betas2)):
        for beta in betas:
            t0 = time.perf_counter()
            c = check_sampler(lam, k, beta, draws=draws, seed=int(1000 * beta) + k, **gibbs)
            rows.append({"k": k, "beta": beta, "epsilon": c.epsilon, "sampler": c.sampler, "releases": c.draws,
                         "frobenius_mean": c.frobenius_mean, "frobenius_se": c.frobenius_se,
                         "frobenius_predicted": c.frobenius_predicted, "relative_gap": c.relative_gap,
                         "operator_mean": c.operator_mean, "operator_se": c.operator_se,
                         "operator_predicted": c.operator_predicted, "agrees": c.agrees(),
                         "seconds": time.perf_counter() - t0})
            print(f"  k={k} β={beta:<5g} ε={c.epsilon:<6g} ‖P̂−P‖²_F {c.frobenius_mean:.4f} ± {c.frobenius_se:.4f}"
                  f" vs {c.frobenius_predicted:.4f} ({100 * c.relative_gap:+.2f} %) {rows[-1]['seconds']:.1f} s",
                  flush=True)
    summary = pd.DataFrame(rows)
    facts = [{"dataset": "spiked synthetic Σ (public)", "n": NOMINAL_N, "d": DEFAULT_P, "spikes": list(DEFAULT_SPIKES),
              "bulk": "p − 3 values evenly spread over [0, 1]", "mapping": "ε = β·p²/n",
              "H_k1": yun_dudeja_h(lam, 1).tolist(), "H_k2": yun_dudeja_h(lam, 2).tolist(),
              "tolerance": f"{FINITE_P_TOLERANCE:.0%} of the prediction + 4 SE", "gibbs": gibbs,
              "kent_draws": draws, "private_preprocessing": True}]
    save("yun_dudeja", summary, summary, facts, _figure(summary, lam))
    print(summary[["k", "beta", "epsilon", "frobenius_mean", "frobenius_predicted", "relative_gap", "agrees"]]
          .to_string(index=False))
    return summary
