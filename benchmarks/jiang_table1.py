"""Jiang, Xie & Zhang (AAAI 2016), Table 1: spectral norm of the input-perturbation noise matrix vs d (issue 21 item 4).

Table 1 of the paper gives the orders of ‖Ĉ − C‖₂ (C = XᵀX/n): Laplace O(d√d/(nε)) at (ε, 0), the Wishart
mechanism O(d log d/(nε)) at (ε, 0), and the Gaussian (Analyze Gauss) O(√d/(nε)) at (ε, δ). We measure ‖Ĉ − C‖₂/n
for dpcore's `laplace`, `wishart_jiang` and `analyze_gauss` on n = 5,000 Gaussian rows scaled to max norm 1, d from
10 to 400, 5 trials, ε = 1, δ = 1e-6, and fit the log–log slope against d. `wishart_jiang` is NOT differentially
private (its output's support depends on the data; dpcore runs it only as a labelled exhibit), so the paper's
"Wishart adds less noise than Laplace at (ε, 0)" compares against a mechanism without the guarantee.

Run through ``dpcore reproduce jiang_table1`` (benchmarks/reproduce_papers.py calls :func:`reproduce`).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

N, EPS, DELTA, K = 5000, 1.0, 1e-6, 2
DIMS = (10, 20, 50, 100, 200, 400)
TRIALS = 5
MECHANISMS = (("laplace", "Laplace (ε, 0)", "d^1.5"), ("wishart_jiang", "Wishart, Jiang et al. (NOT private)",
                                                         "d log d"),
              ("analyze_gauss", f"Gaussian / Analyze Gauss (ε, δ = {DELTA:g})", "√d"))
COLOURS = {"laplace": "#17becf", "wishart_jiang": "#d62728", "analyze_gauss": "#bcbd22"}


def noise_norms(d: int, trial: int) -> list[dict]:
    """‖Ĉ − C‖₂/n of each mechanism on one draw of the data (seeded by d and trial)."""
    from dpcore.data.prepared import PreparedData
    from dpcore.mechanisms import get_mechanism

    rng = np.random.default_rng(1000 * d + trial)
    X = rng.standard_normal((N, d))
    X /= np.linalg.norm(X, axis=1).max()
    data = PreparedData.from_unit_rows(X, name=f"gaussian d={d}")
    rows = []
    for mech_id, _, _ in MECHANISMS:
        rel = get_mechanism(mech_id).release(data, K, EPS, DELTA, random_state=trial, allow_invalid=True)
        norm = float(np.linalg.norm(rel.covariance - data.C, 2)) / N
        rows.append({"d": d, "trial": trial, "mechanism": mech_id, "epsilon": EPS, "delta": DELTA, "n": N,
                     "guarantee": rel.guarantee, "status": "ok", "noise_spectral_norm": norm})
    return rows


def slopes(summary: pd.DataFrame) -> dict[str, float]:
    """Least-squares slope of log(mean noise norm) against log d, per mechanism."""
    out = {}
    for mech_id, g in summary.groupby("mechanism"):
        out[mech_id] = float(np.polyfit(np.log(g.d), np.log(g.noise_spectral_norm_mean), 1)[0])
    return out


def figure(summary: pd.DataFrame, fitted: dict[str, float]):
    import plotly.graph_objects as go

    fig = go.Figure()
    for mech_id, label, order in MECHANISMS:
        s = summary[summary.mechanism == mech_id].sort_values("d")
        fig.add_trace(go.Scatter(
            x=s.d, y=s.noise_spectral_norm_mean, mode="lines+markers",
            name=f"{label}: slope {fitted[mech_id]:.2f} (paper: {order})",
            line={"color": COLOURS[mech_id], "dash": "dash" if mech_id == "wishart_jiang" else "solid", "width": 2},
            error_y={"type": "data", "array": s.noise_spectral_norm_std, "visible": True, "thickness": 1}))
    fig.update_xaxes(type="log", title_text="dimension d", tickvals=list(DIMS))
    fig.update_yaxes(type="log", dtick=1, title_text="‖Ĉ − C‖₂ / n (mean ± sd of 5 runs)")
    fig.update_layout(title={"text": f"Jiang et al. (2016) Table 1 — noise spectral norm vs d, n = {N}, ε = {EPS:g}",
                             "font": {"size": 16}}, height=520, width=1000, template="plotly_white",
                      font={"size": 13}, legend={"orientation": "h", "yanchor": "top", "y": -0.16, "xanchor": "center",
                                                 "x": 0.5}, margin={"l": 70, "r": 30, "t": 80, "b": 130})
    return fig


def reproduce(quick: bool, save) -> pd.DataFrame:
    """Run the experiment and store it through ``save(name, raw, summary, facts, fig)`` (reproduce_papers.py)."""
    dims, trials = (DIMS[:3], 2) if quick else (DIMS, TRIALS)
    raw = pd.DataFrame([row for d in dims for t in range(trials) for row in noise_norms(d, t)])
    summary = raw.groupby(["mechanism", "d"], sort=False).agg(
        releases=("trial", "size"), noise_spectral_norm_mean=("noise_spectral_norm", "mean"),
        noise_spectral_norm_std=("noise_spectral_norm", "std")).reset_index()
    fitted = slopes(summary)
    facts = [{"dataset": f"Gaussian rows, max norm 1, d = {d}", "n": N, "d": d, "norm_bound": 1.0,
              "clip_fraction": 0.0, "preprocessing_private": True, "epsilon": EPS, "delta": DELTA,
              "slopes": fitted, "log_d_over_sqrt_d": math.log(d) / math.sqrt(d)} for d in dims]
    save("jiang_table1", raw, summary, facts, figure(summary, fitted))
    print(summary.to_string(index=False))
    print("log-log slopes:", {k: round(v, 3) for k, v in fitted.items()})
    return summary
