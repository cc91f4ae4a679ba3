"""Clipping advisor: utility vs candidate norm bound B (dpcore.evaluation.advisor)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import dpcore
from dpcore.data import Dataset, clip_fraction_curve, suggest_norm_bounds
from dpcore.evaluation.advisor import (
    CURVE_COLUMNS,
    advisor_mechanisms,
    best_norm_bound,
    clipping_utility_curve,
    default_candidates,
)
from dpcore.exceptions import DPCoreError, InvalidParameterError, UnknownNameError


def _ring(rng: np.random.Generator, n: int, d: int, axes: tuple[int, int], radius: float) -> np.ndarray:
    """n points on a circle of the given radius in the plane of two coordinate axes."""
    theta = rng.uniform(0.0, 2.0 * np.pi, n)
    X = np.zeros((n, d))
    X[:, axes[0]] = radius * np.cos(theta)
    X[:, axes[1]] = radius * np.sin(theta)
    return X


def outlier_dataset(seed: int = 0) -> Dataset:
    """d = 10, top-2 subspace span(e1, e2), with a few huge outliers.

    400 rows of norm 1 in span(e1, e2), 1600 rows of norm 0.25 in span(e3, e4), and 5 outliers of norm 20 in
    span(e1, e2). Unclipped, span(e1, e2) dominates (energy 2400 vs 100). Clipping every row to B ≤ 0.25 makes the
    1600 small rows dominate instead (bias: the released subspace is span(e3, e4)), while B = 20 (the largest norm,
    nothing clipped) leaves almost no signal for the noise, which is calibrated to ‖x‖ ≤ B. B ≈ 1 is best.
    """
    rng = np.random.default_rng(seed)
    d = 10
    X = np.vstack([_ring(rng, 400, d, (0, 1), 1.0), _ring(rng, 1600, d, (2, 3), 0.25),
                   _ring(rng, 5, d, (0, 1), 20.0)])
    X += 0.01 * rng.standard_normal(X.shape)
    return Dataset(id="outliers", name="outliers", X=X)


@pytest.fixture(scope="module")
def outliers() -> Dataset:
    return outlier_dataset()


@pytest.fixture(scope="module")
def outlier_curve(outliers) -> pd.DataFrame:
    return clipping_utility_curve(outliers, feature_scaling="none", epsilon=1.0, delta=1e-5, k=2, trials=5, seed=3)


def test_columns_and_shape(outlier_curve):
    assert tuple(outlier_curve.columns) == CURVE_COLUMNS
    assert len(outlier_curve) == 12
    assert np.all(np.diff(outlier_curve["norm_bound"]) > 0)
    assert (outlier_curve["n_ok"] == 5).all()
    assert outlier_curve.attrs["complete"] and outlier_curve.attrs["private"] is False
    assert outlier_curve["captured_variance_ratio"].between(0.0, 1.0 + 1e-9).all()
    assert outlier_curve["principal_angle_max_deg"].between(0.0, 90.0 + 1e-9).all()
    assert (outlier_curve["captured_variance_ratio_std"] >= 0).all()


def test_best_bound_is_strictly_inside_the_grid(outlier_curve):
    cvr = outlier_curve["captured_variance_ratio"].to_numpy()
    best = int(np.argmax(cvr))
    assert 0 < best < len(cvr) - 1, outlier_curve
    assert best_norm_bound(outlier_curve) == outlier_curve["norm_bound"].iloc[best]
    # clearly, not by a hair: both ends lose more than 0.4 of the optimum (bias at small B, noise at large B)
    assert cvr[best] > 0.95
    assert cvr[best] - cvr[0] > 0.4 and cvr[best] - cvr[-1] > 0.4
    # the largest principal angle tells the same story
    angle = outlier_curve["principal_angle_max_deg"].to_numpy()
    assert angle[best] < 20 and angle[0] > 60 and angle[-1] > 45


def test_clip_fraction_decreasing_and_matches_the_data_layer(outliers, outlier_curve):
    frac = outlier_curve["clip_fraction"].to_numpy()
    assert np.all(np.diff(frac) <= 0)
    assert frac[0] == pytest.approx(0.95, abs=0.01)  # the grid starts at the 5 % norm quantile
    assert frac[-1] == 0.0  # ... and ends at the largest norm: nothing clipped
    direct = clip_fraction_curve(outliers, outlier_curve["norm_bound"], feature_scaling="none")
    np.testing.assert_array_equal(direct["clip_fraction"].to_numpy(), frac)


def test_deterministic_with_a_seed(outliers):
    kw = {"feature_scaling": "none", "trials": 2, "candidates": [0.3, 1.0, 5.0]}
    a = clipping_utility_curve(outliers, seed=11, **kw)
    b = clipping_utility_curve(outliers, seed=11, **kw)
    c = clipping_utility_curve(outliers, seed=12, **kw)
    pd.testing.assert_frame_equal(a, b)
    assert not np.allclose(a["captured_variance_ratio"], c["captured_variance_ratio"])
    # candidates are sorted, and a candidate's result does not depend on the rest of the grid (same seeds per trial)
    d = clipping_utility_curve(outliers, seed=11, feature_scaling="none", trials=2, candidates=[5.0, 1.0])
    np.testing.assert_allclose(d["captured_variance_ratio"].to_numpy(), a["captured_variance_ratio"].to_numpy()[1:])


def test_reference_is_the_unclipped_data(outliers):
    """Non-private PCA has no noise: its only loss is the clipping bias, which vanishes once nothing is clipped."""
    top = float(suggest_norm_bounds(outliers, (1.0,), feature_scaling="none")["norm_bound"].iloc[0])
    curve = clipping_utility_curve(outliers, [0.2, 1.0, top * 1.01], mechanism="pca", feature_scaling="none",
                                   trials=1)
    cvr = curve["captured_variance_ratio"].to_numpy()
    assert cvr[-1] == pytest.approx(1.0, abs=1e-9)
    assert curve["principal_angle_max_deg"].iloc[-1] == pytest.approx(0.0, abs=1e-4)
    assert cvr[0] < 0.1  # B = 0.2 clips every row: span(e3, e4) wins, far from the true top-2 subspace
    assert cvr[1] > 0.99  # B = 1 clips the outliers only: their direction agrees with the bulk's


def test_default_grid_reaches_the_public_bound():
    rng = np.random.default_rng(0)
    X = rng.uniform(0.0, 0.5, size=(300, 4))  # inside the public box [0, 1]^4, far from its corner
    ds = Dataset(id="box", name="box", X=X, feature_ranges=np.tile([0.0, 1.0], (4, 1)))
    grid = default_candidates(ds, 8)
    assert grid[-1] == pytest.approx(2.0)  # √d: the largest possible norm in [0, 1]^4
    q05 = np.quantile(np.linalg.norm(X, axis=1), 0.05)
    assert grid[0] == pytest.approx(q05)
    assert np.allclose(np.diff(np.log(grid)), np.log(grid[1] / grid[0]))  # log-spaced
    curve = clipping_utility_curve(ds, num_candidates=8, trials=1)
    np.testing.assert_allclose(curve["norm_bound"], grid)


def test_dp_centring_and_pure_mechanism_run(outliers):
    ds = Dataset(id="box", name="box", X=np.clip(outliers.X / 40 + 0.5, 0, 1), feature_ranges=np.tile([0.0, 1.0],
                                                                                                     (10, 1)))
    a = clipping_utility_curve(ds, [0.05, 0.5, 1.0], centering="dp", trials=2, seed=1)
    b = clipping_utility_curve(ds, [0.05, 0.5, 1.0], centering="dp", trials=2, seed=1)
    pd.testing.assert_frame_equal(a, b)
    assert (a["n_ok"] == 2).all()
    lap = clipping_utility_curve(ds, [0.5, 1.0], mechanism="laplace", epsilon=5.0, trials=1)
    assert lap.attrs["delta"] == 0.0 and (lap["n_ok"] == 1).all()


def test_progress_can_stop_and_time_limit(outliers):
    calls = []

    def progress(done, total, text):
        calls.append((done, total, text))
        return done < 2

    curve = clipping_utility_curve(outliers, [0.5, 1.0, 2.0], feature_scaling="none", trials=2, progress=progress)
    assert calls[0][1] == 6 and "B = 0.5" in calls[0][2] and len(calls) == 2
    assert not curve.attrs["complete"]
    assert list(curve["n_ok"]) == [2, 0, 0]
    assert math.isnan(curve["captured_variance_ratio"].iloc[2])
    assert (curve["clip_fraction"].notna()).all()  # clip fractions are known without releases
    empty = clipping_utility_curve(outliers, [0.5, 1.0], feature_scaling="none", time_limit=1e-9)
    assert not empty.attrs["complete"] and (empty["n_ok"] == 0).all()
    assert best_norm_bound(empty) is None


def test_advisor_mechanisms_are_fast_private_covariance_mechanisms():
    mechs = advisor_mechanisms()
    ids = [m.id for m in mechs]
    assert "analyze_gauss" in ids
    for m in mechs:
        assert m.output == "covariance" and m.guarantee in ("pure", "approx")
    assert not {"ppca", "itu", "ss_exact", "pca", "sn_imtiaz"} & set(ids)
    assert ids == [m for m in dpcore.mechanism_ids() if m in ids]  # registry order


@pytest.mark.parametrize(("kwargs", "exc", "words"), [
    ({"mechanism": "nope"}, UnknownNameError, "unknown mechanism"),
    ({"epsilon": 0}, InvalidParameterError, "epsilon"),
    ({"delta": 0.0}, InvalidParameterError, "delta"),
    ({"k": 11}, InvalidParameterError, "k (number of components)"),
    ({"trials": 0}, InvalidParameterError, "trials"),
    ({"seed": -1}, InvalidParameterError, "seed"),
    ({"candidates": []}, InvalidParameterError, "candidates"),
    ({"candidates": [1.0, -2.0]}, InvalidParameterError, "candidates"),
    ({"candidates": [1.0, float("nan")]}, InvalidParameterError, "candidates"),
    ({"candidates": "big"}, InvalidParameterError, "candidates"),
    ({"feature_scaling": "zscore"}, InvalidParameterError, "feature_scaling"),
    ({"centering": "median"}, InvalidParameterError, "centering"),
    ({"time_limit": 0}, InvalidParameterError, "time_limit"),
    ({"num_candidates": 1}, InvalidParameterError, "number of candidates"),
    ({"calibraton": "analytic"}, InvalidParameterError, "unknown option"),
    ({"mechanism": "sn_imtiaz"}, InvalidParameterError, "claimed-invalid"),
])
def test_bad_arguments_raise_clear_errors(outliers, kwargs, exc, words):
    kwargs = {"feature_scaling": "none", **kwargs}
    with pytest.raises(exc) as info:
        clipping_utility_curve(outliers, **kwargs)
    assert isinstance(info.value, DPCoreError)
    assert words in str(info.value)


def test_no_public_bound_without_scaling_uses_the_largest_norm(outliers):
    grid = default_candidates(outliers, 5, feature_scaling="none")
    assert grid[-1] == pytest.approx(np.linalg.norm(outliers.X, axis=1).max())
    with pytest.raises(InvalidParameterError, match="candidates"):
        default_candidates(outliers, 1, feature_scaling="none")
