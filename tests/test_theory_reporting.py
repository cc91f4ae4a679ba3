"""Unit tests of dpcore.theory (Chaudhuri et al. 2013 Theorems 7–9) and dpcore.reporting."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import yaml

from dpcore import DPCoreError
from dpcore.reporting import band_table, config_yaml, explained_variance, k_for_fraction, results_table
from dpcore.theory import (
    dp_lower_bound,
    eigengap,
    mod_sulq_scaling,
    ppca_sample_complexity,
    sample_size_guides,
    scaling_guide,
)


def test_theorem7_value_and_scalings():
    d, eps, gap, rho, eta, lam = 10, 0.5, 0.2, 0.9, 0.05, 0.6
    expected = d / (eps * gap * (1 - rho)) * (4 * math.log(1 / eta) / d + 2 * math.log(8 * lam / ((1 - rho**2) * gap)))
    assert ppca_sample_complexity(d, eps, gap, rho, eta, lam) == pytest.approx(expected, rel=1e-12)
    # halving ε doubles n; the bound grows with d
    assert ppca_sample_complexity(d, eps / 2, gap, rho, eta, lam) == pytest.approx(2 * expected, rel=1e-12)
    assert ppca_sample_complexity(2 * d, eps, gap, rho, eta, lam) > expected


def test_theorem8_and_9():
    n8 = dp_lower_bound(50, 1.0, 0.1, 0.9)
    assert n8 >= 50 / (1.0 * 0.1)  # max{1, ·} ≥ 1
    assert dp_lower_bound(50, 2.0, 0.1, 0.9) == pytest.approx(n8 / 2)
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


def test_eigengap_and_guides():
    w = np.array([50.0, 30.0, 10.0, 5.0])
    lam1, gap = eigengap(w, n=100)
    assert (lam1, gap) == (pytest.approx(0.5), pytest.approx(0.2))
    rows = sample_size_guides(w, 100, 4, 1.0, 1e-5)
    assert [r["kind"] for r in rows] == ["bound", "bound", "scaling"]
    assert all(r["n"] > 0 for r in rows)


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
