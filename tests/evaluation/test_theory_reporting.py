"""Unit tests of dpcore.evaluation.theory (Chaudhuri et al. 2013 Theorems 7–9) and dpcore.evaluation.reporting."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import yaml

from dpcore import DPCoreError
from dpcore.data import PreparedData
from dpcore.evaluation.metrics import captured_variance_ratio
from dpcore.evaluation.reporting import (
    band_table,
    config_yaml,
    explained_variance,
    k_for_fraction,
    reference_levels,
    results_table,
)
from dpcore.evaluation.theory import (
    dp_lower_bound,
    dp_lower_bound_min_rho,
    eigengap,
    family_for,
    mod_sulq_scaling,
    ppca_sample_complexity,
    sample_size_guides,
    scaling_guide,
)
from dpcore.mechanisms import get_mechanism
from pages.ui import state as ui_state


def test_theorem7_value_and_scalings():
    d, eps, gap, rho, eta, lam = 10, 0.5, 0.2, 0.9, 0.05, 0.6
    expected = d / (eps * gap * (1 - rho)) * (4 * math.log(1 / eta) / d + 2 * math.log(8 * lam / ((1 - rho**2) * gap)))
    assert ppca_sample_complexity(d, eps, gap, rho, eta, lam) == pytest.approx(expected, rel=1e-12)
    # halving ε doubles n; the bound grows with d
    assert ppca_sample_complexity(d, eps / 2, gap, rho, eta, lam) == pytest.approx(2 * expected, rel=1e-12)
    assert ppca_sample_complexity(2 * d, eps, gap, rho, eta, lam) > expected


def test_theorem8_and_9():
    rho = dp_lower_bound_min_rho(50)
    n8 = dp_lower_bound(50, 1.0, 0.1, rho)
    assert n8 >= 50 / (1.0 * 0.1)  # max{1, ·} ≥ 1
    assert dp_lower_bound(50, 2.0, 0.1, rho) == pytest.approx(n8 / 2)
    assert mod_sulq_scaling(100, 1.0, 1e-5) == pytest.approx(100**1.5 * math.sqrt(math.log(100 / 1e-5)))
    # d^{3/2} vs d: MOD-SULQ's scaling overtakes PPCA's as d grows
    assert mod_sulq_scaling(400, 1, 1e-5) / mod_sulq_scaling(100, 1, 1e-5) > 7.9
    with pytest.raises(DPCoreError):
        ppca_sample_complexity(10, 1.0, 0.1, rho=1.5)
    with pytest.raises(DPCoreError):
        mod_sulq_scaling(10, -1.0, 1e-5)


def test_scaling_guide_passes_through_anchor_and_approaches_optimum():
    ns = np.array([100.0, 200.0, 400.0, 1e6])
    g = scaling_guide(ns, anchor_n=200, anchor_value=0.6, optimum=1.0)
    assert g[1] == pytest.approx(0.6)
    assert g[2] == pytest.approx(0.8) and g[0] == pytest.approx(0.2)
    assert g[-1] == pytest.approx(1.0, abs=1e-3)
    assert scaling_guide(ns, 200, 0.6, 1.0, floor=0.3)[0] == pytest.approx(0.3)


def test_theorem8_only_within_its_hypotheses():
    """Thm 8 needs ρ ≥ 1 − (1 − φ)/16 and Δ ≤ 1/2: at ρ = 0.9 it gives no bound (the page showed n = 43.3)."""
    assert dp_lower_bound_min_rho(13) == pytest.approx(0.99597, abs=1e-5)
    assert all(dp_lower_bound_min_rho(d) > 0.9375 for d in (3, 10, 100, 1000))
    with pytest.raises(DPCoreError, match="ρ ≥"):
        dp_lower_bound(13, 1.0, 0.3, 0.9)
    with pytest.raises(DPCoreError, match="Δ ≤ 1/2"):
        dp_lower_bound(13, 1.0, 0.6, 0.9999)
    assert dp_lower_bound(13, 1.0, 0.3, 0.999) == pytest.approx(43.33, abs=0.01)
    assert dp_lower_bound(13, 1.0, 0.3, 0.9999) == pytest.approx(123.0, abs=0.01)


def test_eigengap_and_guides():
    w = np.array([50.0, 30.0, 10.0, 5.0])
    lam1, gap = eigengap(w, n=100)
    assert (lam1, gap) == (pytest.approx(0.5), pytest.approx(0.2))
    rows = sample_size_guides(w, 100, 4, 1.0, 1e-5, rho=0.9)
    assert [r["kind"] for r in rows] == ["bound", "bound", "bound", "scaling"]
    thm8, thm8_min = rows[1], rows[2]
    assert thm8["n"] is None and "not shown" in thm8["note"]  # ρ = 0.9 is outside the theorem
    assert "smallest ρ" in thm8_min["name"] and thm8_min["n"] > 0
    assert all(r["hypotheses"] for r in rows)


def _shortfall(mid: str, n: int, epsilon: float, d: int = 8, trials: int = 100) -> float:
    scales = np.linspace(1.0, 0.2, d)
    X = np.random.default_rng(1).standard_normal((n, d)) * scales / (3 * math.sqrt(d))
    data = PreparedData(X / np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None])
    mech, rng = get_mechanism(mid), np.random.default_rng(2)
    return float(np.mean([1 - captured_variance_ratio(
        data.C, mech.release(data, 1, epsilon, 1e-5 if mech.uses_delta else 0.0, random_state=rng).subspace,
        data.eigenvalues) for _ in range(trials)]))


@pytest.mark.parametrize(("mid", "epsilon", "n"), [("mod_sulq", 4.0, 40_000), ("analyze_gauss", 1.0, 20_000),
                                                   ("laplace", 4.0, 40_000), ("ppca", 1.0, 20_000),
                                                   ("itu", 1.0, 20_000)])
def test_scaling_guides_use_the_rate_each_family_has(mid, epsilon, n):
    """Simulated: 4× the rows cut the shortfall ≈ 16× for noise added to C, ≈ 4× for the exponential mechanism
    (the guides used 1/n for every mechanism; MOD-SULQ falls like 1/n²)."""
    family = family_for(get_mechanism(mid))
    measured = math.log(_shortfall(mid, n, epsilon) / _shortfall(mid, 4 * n, epsilon), 4)
    assert abs(measured - family.power) < 0.25, (mid, measured, family.power)


def _frame() -> pd.DataFrame:
    rows = []
    for eps, vals in ((0.1, [0.2, 0.4]), (1.0, [0.8, 1.0])):
        for t, v in enumerate(vals):
            rows.append({"mechanism": "m", "guarantee": "pure", "neighbouring": "replace", "epsilon": eps,
                         "delta": 0.0, "k": 1, "n": 10, "trial": t, "captured_variance_ratio": v,
                         "frobenius_error": np.nan, "runtime_s": 0.01, "status": "ok", "message": ""})
    rows.append({**rows[-1], "trial": 2, "status": "timeout", "captured_variance_ratio": np.nan, "message": "cap"})
    return pd.DataFrame(rows)


def test_band_table_sd_and_minmax():
    f = _frame()
    sd = band_table(f, band="sd")
    assert set(sd["metric"]) == {"captured_variance_ratio"}  # all-NaN metric dropped
    r = sd[sd["epsilon"] == 1.0].iloc[0]
    assert r["mean"] == pytest.approx(0.9) and r["count"] == 2  # the timed-out row is excluded
    assert r["hi"] - r["lo"] == pytest.approx(2 * np.std([0.8, 1.0], ddof=1))
    mm = band_table(f, band="minmax")
    r = mm[mm["epsilon"] == 0.1].iloc[0]
    assert (r["lo"], r["hi"]) == (pytest.approx(0.2), pytest.approx(0.4))
    with pytest.raises(DPCoreError):
        band_table(f, band="iqr")


def test_results_table_counts_statuses():
    t = results_table(_frame())
    row = t[t["epsilon"] == 1.0].iloc[0]
    assert row["status"] == "ok 2, timeout 1" and row["trials"] == 3 and row["message"] == "cap"
    assert row["captured_variance_ratio"] == pytest.approx(0.9)


def test_explained_variance_and_yaml():
    ev = explained_variance([3.0, 1.0, 0.0])
    assert list(ev["cumulative"]) == pytest.approx([0.75, 1.0, 1.0])
    assert k_for_fraction([3.0, 1.0, 0.0], 0.7) == 1 and k_for_fraction([3.0, 1.0, 0.0], 0.8) == 2
    text = config_yaml({"mechanisms": ["a"], "epsilons": (0.1, np.float64(1.0))}, dataset="wine")
    doc = yaml.safe_load(text)
    assert doc == {"dataset": "wine", "sweep": {"mechanisms": ["a"], "epsilons": [0.1, 1.0]}}


def _messy_frame(seed: int = 3) -> pd.DataFrame:
    """A sweep-like frame with every status, missing metrics, a missing key and attrs (as run_sweep sets them)."""
    rng = np.random.default_rng(seed)
    rows = []
    for mech, guarantee in (("zeta", "pure"), ("alpha", "approx"), ("mid", "approx")):
        for eps in (10.0, 0.1, 1.0):
            for t in range(4):
                status = rng.choice(["ok", "ok", "ok", "timeout", "bottom", "error"])
                vals = {m: (rng.normal() if status == "ok" and rng.random() > 0.15 else np.nan)
                        for m in ("captured_variance_ratio", "frobenius_error", "svm_accuracy")}
                if mech == "mid":
                    vals["frobenius_error"] = np.nan  # a subspace-only mechanism
                rows.append({"mechanism": mech, "guarantee": guarantee, "neighbouring": "replace", "epsilon": eps,
                             "delta": 0.0 if guarantee == "pure" else 1e-5, "k": 2, "n": 50, "trial": t, **vals,
                             "runtime_s": rng.random() if rng.random() > 0.1 else np.nan, "status": status,
                             "message": "" if status == "ok" else f"{status} in trial {t}"})
    rows.append({**rows[0], "delta": np.nan, "status": "ok", "captured_variance_ratio": 0.5})  # missing key
    frame = pd.DataFrame(rows)
    frame.attrs["config"] = {"mechanisms": ["zeta", "alpha", "mid"]}
    return frame


def _band_reference(frame, band, x="epsilon", by=("mechanism",)):
    """Straightforward per-metric groupby (the definition the vectorised band_table must reproduce)."""
    keys, out = [*by, x], []
    ok = frame[frame["status"] == "ok"]
    for metric in ("captured_variance_ratio", "frobenius_error", "svm_accuracy"):
        agg = ok[[*keys, metric]].dropna().groupby(keys)[metric].agg(["mean", "std", "min", "max", "count"])
        agg = agg.reset_index()
        sd = agg["std"].fillna(0.0)
        agg["lo"], agg["hi"] = (agg["mean"] - sd, agg["mean"] + sd) if band == "sd" else (agg["min"], agg["max"])
        agg["metric"] = metric
        out.append(agg[[*keys, "metric", "mean", "lo", "hi", "count"]])
    return pd.concat(out, ignore_index=True)


@pytest.mark.parametrize("band", ["sd", "minmax"])
@pytest.mark.parametrize("by", [("mechanism",), ("mechanism", "delta")])
def test_band_table_matches_groupby_definition(band, by):
    f = _messy_frame()
    got = band_table(f, band=band, by=by, metrics=("captured_variance_ratio", "frobenius_error", "svm_accuracy"))
    want = _band_reference(f, band, by=by)
    pd.testing.assert_frame_equal(got, want, check_exact=False, rtol=1e-12, atol=1e-12)
    assert list(got["mechanism"].unique()) == ["alpha", "mid", "zeta"]  # sorted keys within each metric
    assert not ((got["mechanism"] == "mid") & (got["metric"] == "frobenius_error")).any()


def test_results_table_matches_per_group_definition():
    f = _messy_frame(5)
    t = results_table(f)
    keys = ["mechanism", "guarantee", "neighbouring", "epsilon", "delta", "k", "n"]
    groups = list(f.groupby(keys, sort=False, dropna=False))
    assert len(t) == len(groups)
    assert list(t["mechanism"][:3]) == ["zeta"] * 3 and list(t["epsilon"][:3]) == [10.0, 0.1, 1.0]  # first appearance
    for (_, grp), (_, row) in zip(groups, t.iterrows()):
        counts = grp["status"].value_counts()
        assert row["trials"] == len(grp)
        assert row["status"] == ", ".join(f"{s} {counts[s]}" for s in ("ok", "bottom", "timeout", "error")
                                          if s in counts)
        ok = grp[grp["status"] == "ok"]
        for m in ("captured_variance_ratio", "frobenius_error", "svm_accuracy"):
            vals = ok[m].dropna()
            assert (np.isnan(row[m]) and vals.empty) or row[m] == pytest.approx(vals.mean(), rel=1e-12)
        rt = grp["runtime_s"].dropna()
        assert (np.isnan(row["runtime_s"]) and rt.empty) or row["runtime_s"] == pytest.approx(rt.mean(), rel=1e-12)
        msgs = [m for m in grp["message"] if m]
        assert row["message"] == (msgs[0] if msgs else "")
    assert results_table(f.iloc[:0]).empty


def test_reference_levels_means_per_mechanism():
    f = _messy_frame(7)
    levels = reference_levels(f, ["mid", "zeta"], metrics=("captured_variance_ratio", "frobenius_error"))
    ok = f[f["status"] == "ok"]
    for metric in ("captured_variance_ratio", "frobenius_error"):
        want = ok[ok["mechanism"].isin(["mid", "zeta"])].groupby("mechanism")[metric].mean().dropna()
        assert list(levels[metric]) == list(want.index)
        assert list(levels[metric].values()) == pytest.approx(list(want.values), rel=1e-12)
    assert "mid" not in levels["frobenius_error"]  # no value at all: no reference line


# ------------------------------------------------------------------ issue 20: where a guide holds, release warnings
def test_noise_spectral_norm_of_analyze_gauss_is_the_wigner_edge():
    """AG adds a symmetric Gaussian matrix with entry sd σ: its spectral norm is ≈ 2σ√d (semicircle edge)."""
    from dpcore.evaluation.theory import noise_spectral_norm

    d = 60
    sigma = get_mechanism("analyze_gauss").release(np.zeros((d + 2, d)), 2, 1.0, 1e-5,
                                                   random_state=0).diagnostics["sigma"]
    norm = noise_spectral_norm("analyze_gauss", d, 2, 1.0, 1e-5)
    assert norm == pytest.approx(2 * sigma * math.sqrt(d), rel=0.1)
    assert noise_spectral_norm("analyze_gauss", d, 2, 4.0, 1e-5) < norm / 3  # noise ∝ 1/ε
    assert noise_spectral_norm("ppca", d, 2, 1.0, 0.0) is None  # no covariance released


def _spectrum(gaps: list[float], n: int) -> np.ndarray:
    """Eigenvalues of C = n·A for A with the given eigenvalues."""
    return n * np.asarray(gaps, dtype=float)


def test_guide_range_additive_needs_the_noise_below_the_eigengap():
    from dpcore.evaluation.theory import guide_range, noise_spectral_norm

    w = _spectrum([0.3, 0.1, 0.05, 0.04, 0.01, 0.005], 1000)
    ag = get_mechanism("analyze_gauss")
    for k in (1, 2):
        gap = eigengap(w, 1000, k)[1]
        where = guide_range(ag, w, 1000, k=k, epsilon=1.0, delta=1e-5)
        assert where.n_min == pytest.approx(noise_spectral_norm("analyze_gauss", 6, k, 1.0, 1e-5) / gap)
        assert "eigengap" in where.condition and f"{where.n_min:,.0f}" in where.condition
    # a smaller gap needs more rows; the exponential family's regime is d/(ε·Δ)
    assert guide_range(ag, w, 1000, k=2, epsilon=1.0, delta=1e-5).n_min > \
        guide_range(ag, w, 1000, k=1, epsilon=1.0, delta=1e-5).n_min
    ppca = guide_range(get_mechanism("ppca"), w, 1000, k=1, epsilon=0.5)
    assert ppca.n_min == pytest.approx(6 / (0.5 * 0.2))
    assert guide_range(get_mechanism("ppm"), w, 1000, k=1, epsilon=1.0).n_min is None  # no known rate
    flat = _spectrum([0.2, 0.2, 0.1], 100)
    assert guide_range(ag, flat, 100, k=1, epsilon=1.0, delta=1e-5).n_min is None  # zero gap: no guide


@pytest.mark.slow
def test_a_guide_drawn_where_it_holds_matches_the_measured_curve():
    """css_synthetic, k = 2: anchored inside its valid range (n ≥ ‖E‖₂/Δ₂), the 1/n² guide of Analyze Gauss lies
    inside the measured band at every valid size; below the range it is not drawn (there it misses)."""
    from dpcore.data.datasets import load_dataset
    from dpcore.data.preprocess import preprocess
    from dpcore.evaluation.sweep import run_sweep
    from dpcore.evaluation.theory import guide_range

    data = preprocess(load_dataset("css_synthetic"))
    sizes = [100, 200, 400, 800, 1600, 3200]
    frame = run_sweep(data, mechanisms=["analyze_gauss", "random"], epsilons=(1.0,), deltas=(1e-5,), ks=(2,),
                      trials=5, seed=0, sample_sizes=sizes)
    sub = band_table(frame, x="n").query("metric == 'captured_variance_ratio'")
    curve = sub[sub["mechanism"] == "analyze_gauss"].sort_values("n")
    floor = float(sub[sub["mechanism"] == "random"]["mean"].min())
    where = guide_range(get_mechanism("analyze_gauss"), data.eigenvalues, data.n, k=2, epsilon=1.0, delta=1e-5)
    valid = curve[curve["n"] >= where.n_min]
    assert 100 < where.n_min < 3200 and len(valid) >= 3
    anchor = valid.iloc[len(valid) // 2]
    guide = scaling_guide(valid["n"].to_numpy(float), anchor["n"], anchor["mean"], 1.0, floor, power=2)
    slack = np.maximum(valid["hi"] - valid["lo"], 0.02).to_numpy()
    assert np.all(np.abs(guide - valid["mean"].to_numpy()) <= slack), (guide, valid)


def _sweep_rows() -> pd.DataFrame:
    rows = []
    for eps in (0.1, 1.0):
        for trial in range(4):
            rows.append({"mechanism": "ppca", "epsilon": eps, "trial": trial, "status": "ok",
                         "message": "MCMC not converged (burn-in diagnostic above 0.01)"})
            rows.append({"mechanism": "analyze_gauss", "epsilon": eps, "trial": trial, "status": "ok", "message": ""})
            status = "timeout" if eps == 0.1 else ("bottom" if trial == 0 else "ok")
            rows.append({"mechanism": "itu", "epsilon": eps, "trial": trial, "status": status,
                         "message": "time cap" if status == "timeout" else ""})
    return pd.DataFrame(rows)


def test_release_warnings_count_every_warning_status_per_point_and_mechanism():
    from dpcore.evaluation.reporting import release_warning_kind, release_warnings, warning_counts

    assert release_warning_kind("ok", "") is None and release_warning_kind("ok", float("nan")) is None
    assert release_warning_kind("ok", "MCMC not converged (x)") == "not converged"
    assert release_warning_kind("bottom") == "⊥ (no output)" and release_warning_kind("timeout").startswith("capped")
    frame = _sweep_rows()
    table = release_warnings(frame).set_index(["mechanism", "epsilon"])
    assert "analyze_gauss" not in table.index.get_level_values(0)  # clean releases are not listed
    assert table.loc[("ppca", 1.0), ["releases", "ok", "warned"]].tolist() == [4, 4, 4]
    assert table.loc[("ppca", 1.0), "text"] == "not converged in 4 of 4 releases"
    assert table.loc[("itu", 0.1), ["ok", "warned"]].tolist() == [0, 4]
    assert table.loc[("itu", 1.0), "text"] == "⊥ (no output) in 1 of 4 releases"
    counts = warning_counts(frame)
    assert counts["ppca"] == ({"not converged": 8}, 8)
    assert counts["itu"] == ({"capped (time limit)": 4, "⊥ (no output)": 1}, 8)
    assert release_warnings(frame[frame["mechanism"] == "analyze_gauss"]).empty


@pytest.mark.slow
def test_sample_size_page_draws_a_guide_only_where_it_holds():
    """css_synthetic, k = 2: AG's guide starts at n ≥ ‖E‖₂/Δ₂, says so in its legend and in the caption."""
    import json
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    from dpcore.evaluation.theory import guide_range

    at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"), default_timeout=120)
    at.run()
    at.session_state["dp_dataset"] = "css_synthetic"
    at.session_state["dp_ss_k"] = 2  # Sample size's own k (issue #33 item 4)
    at.switch_page("pages/sample_size.py").run()
    at.session_state["dp_ss_mechs"] = ["analyze_gauss"]
    at.session_state["dp_ss_trials"] = 3
    at.run()
    at.button(key="ss_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    fig = {el.key: json.loads(el.proto.spec) for el in at.get("plotly_chart")}["ss_chart"]
    guides = [t for t in fig["data"] if (t.get("name") or "").startswith("scaling guide: Analyze Gauss")]
    assert len(guides) == 1
    data = ui_state.stored("ss_result", at.session_state).frame
    assert set(data["k"]) == {2}
    from dpcore.data.datasets import load_dataset
    from dpcore.data.preprocess import preprocess

    prepared = preprocess(load_dataset("css_synthetic"))
    where = guide_range(get_mechanism("analyze_gauss"), prepared.eigenvalues, prepared.n, k=2, epsilon=1.0,
                        delta=at.session_state["dp_delta"])
    xs = guides[0]["x"]
    xs = np.frombuffer(__import__("base64").b64decode(xs["bdata"]), xs["dtype"]) if isinstance(xs, dict) else xs
    assert min(xs) >= where.n_min * (1 - 1e-9) and f"n ≥ {where.n_min:,.0f}" in guides[0]["name"]
    assert any("drawn where noise on C/n below the eigengap" in c.value for c in at.caption)


def test_guide_range_outside_a_mechanisms_domain_is_no_guide_not_an_error():
    from dpcore.evaluation.theory import guide_range

    w = _spectrum([0.3, 0.1, 0.05], 1000)
    where = guide_range(get_mechanism("analyze_gauss"), w, 1000, k=1, epsilon=1.0, delta=0.0)  # AG needs δ > 0
    assert where.n_min is None and "does not run at these settings" in where.condition
