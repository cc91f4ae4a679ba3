"""preprocess(): ledger per mode, ‖x‖ ≤ 1, clip fraction, DP-mean budget, PrivacyLeakWarning, clipping advisor."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from dpcore.core.privacy import gaussian_sigma, ledger_total
from dpcore.data import Dataset, PreparedData, clip_fraction_curve, load_csv, load_dataset, preprocess
from dpcore.data import datasets as dsmod
from dpcore.data.preprocess import suggest_norm_bounds
from dpcore.exceptions import InvalidParameterError, PrivacyLeakWarning

needs_shared = pytest.mark.skipif(dsmod.shared_data_dir() is None, reason="shared data directory not present")


def _no_leak_warnings(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        return fn(*args, **kwargs)


def _norms(p: PreparedData) -> np.ndarray:
    return np.linalg.norm(p.X, axis=1)


def _toy(n=400, d=6, seed=0, bound=None, ranges=True) -> Dataset:
    rng = np.random.default_rng(seed)
    X = rng.uniform(-3, 5, size=(n, d))
    fr = np.tile([-2.0, 4.0], (d, 1)) if ranges else None  # deliberately narrower than the data → clamping
    return Dataset(id="toy", name="toy", X=X, feature_ranges=fr, suggested_norm_bound=bound)


def test_schema_scaling_default_bound_is_private_and_free():
    ds = _toy()
    p = _no_leak_warnings(preprocess, ds)
    d = ds.d
    assert p.norm_bound == pytest.approx(math.sqrt(d)) and p.clip_fraction == 0.0
    scaled = p.X * p.norm_bound
    expected = (np.clip(ds.X, -2, 4) + 2) / 6
    np.testing.assert_allclose(scaled, expected, atol=1e-12)
    assert p.is_private and ledger_total(p.ledger) == (0.0, 0.0)
    steps = [e.step for e in p.ledger]
    assert "schema scaling" in steps and "clip rows to ‖x‖ ≤ B" in steps
    assert "√d" in p.ledger[-1].note
    assert p.info["clamped_fraction"] == pytest.approx(np.mean((ds.X < -2) | (ds.X > 4)))


def test_clip_fraction_and_clipped_rows():
    ds = load_dataset("css_synthetic")
    raw_norms = np.linalg.norm(ds.X, axis=1)
    p = _no_leak_warnings(preprocess, ds)  # no schema → raw units, public suggested B = 1 (the paper's)
    assert p.norm_bound == 1.0
    over = raw_norms > 1.0
    assert 0.05 < over.mean() < 0.9
    assert p.clip_fraction == pytest.approx(over.mean())
    np.testing.assert_allclose(p.X[~over], ds.X[~over])                 # untouched rows
    np.testing.assert_allclose(_norms(p)[over], 1.0, rtol=1e-12)        # clipped onto the sphere
    cos = np.sum(p.X[over] * ds.X[over], axis=1) / raw_norms[over]      # direction preserved
    np.testing.assert_allclose(cos, 1.0, rtol=1e-12)
    # the exact clip fraction is a non-private diagnostic, never in a (private) ledger note
    assert f"{over.mean():.2%}" not in p.ledger[-1].note and p.ledger[-1].private
    assert p.diagnostics["clip_fraction"] == pytest.approx(over.mean())
    assert p.ledger[0].step == "no public schema"


def test_explicit_norm_bound_divides():
    ds = load_dataset("css_synthetic")
    p = preprocess(ds, feature_scaling="none", norm_bound=3.0)
    assert p.norm_bound == 3.0 and _norms(p).max() <= 1 + 1e-12
    small = np.linalg.norm(ds.X, axis=1) <= 3.0
    np.testing.assert_allclose(p.X[small] * 3.0, ds.X[small])


@pytest.mark.parametrize("kwargs,step", [
    ({"feature_scaling": "minmax"}, "min–max scaling from the data"),
    ({"norm_mode": "max_norm"}, "divide by the maximum row norm"),
    ({"centering": "empirical"}, "empirical centring"),
])
def test_non_private_steps_warn_and_are_recorded(kwargs, step):
    ds = _toy()
    with pytest.warns(PrivacyLeakWarning, match=step):
        p = preprocess(ds, **kwargs)
    entry = next(e for e in p.ledger if e.step == step)
    assert not entry.private
    assert not p.is_private
    assert _norms(p).max() <= 1 + 1e-9


def test_minmax_maps_to_unit_box():
    ds = _toy(ranges=False)
    with pytest.warns(PrivacyLeakWarning):
        p = preprocess(ds, feature_scaling="minmax")
    scaled = p.X * p.norm_bound
    assert scaled.min() == pytest.approx(0.0) and scaled.max() == pytest.approx(1.0)


def test_max_norm_sets_bound_to_largest_norm():
    ds = _toy()
    with pytest.warns(PrivacyLeakWarning):
        p = preprocess(ds, feature_scaling="none", norm_mode="max_norm")
    assert p.norm_bound == pytest.approx(np.linalg.norm(ds.X, axis=1).max())
    assert _norms(p).max() == pytest.approx(1.0)


def test_empirical_centring_zero_mean():
    ds = _toy()
    with pytest.warns(PrivacyLeakWarning):
        p = preprocess(ds, centering="empirical", norm_bound=100.0)
    np.testing.assert_allclose(p.X.mean(axis=0), 0.0, atol=1e-12)


def test_public_centring_is_free():
    ds = _toy()
    c = np.full(ds.d, 0.5)
    p = _no_leak_warnings(preprocess, ds, centering="public", center=c)
    expected = (np.clip(ds.X, -2, 4) + 2) / 6 - 0.5
    np.testing.assert_allclose(p.X * p.norm_bound, expected, atol=1e-12)  # ‖x − c‖ ≤ √d/2: nothing clipped
    assert p.norm_bound == pytest.approx(math.sqrt(ds.d) / 2) and p.clip_fraction == 0.0
    off = preprocess(ds, centering="public", center=np.full(ds.d, 0.25))
    assert off.norm_bound == pytest.approx(math.sqrt(ds.d) * 0.75)  # farthest corner of [0, 1]^d from c
    assert p.is_private and any(e.step == "public centring" for e in p.ledger)
    p2 = preprocess(ds, centering="public", center=0.5)  # scalar broadcast
    np.testing.assert_allclose(p2.X, p.X)
    p3 = preprocess(ds, centering="public")  # default: midpoint of the public ranges
    np.testing.assert_allclose(p3.X, p.X)
    assert "midpoint" in next(e.note for e in p3.ledger if e.step == "public centring")
    with pytest.raises(InvalidParameterError, match="center"):
        preprocess(_toy(ranges=False), centering="public", norm_bound=1.0)  # no public ranges → centre required


@pytest.mark.slow
def test_dp_centring_budget_and_noise_scale():
    n, d = 2000, 3000
    rng = np.random.default_rng(7)
    X = rng.uniform(0, 1, size=(n, d)) * 0.02  # norms ≈ 0.63 < B = 1: nothing clipped before the mean
    ds = Dataset(id="dp", name="dp", X=X, suggested_norm_bound=1.0)
    eps, delta = 0.5, 1e-6
    p = _no_leak_warnings(preprocess, ds, centering="dp", centering_epsilon=eps, centering_delta=delta,
                          random_state=123)
    entry = next(e for e in p.ledger if e.step == "DP mean for centring")
    assert entry.private and entry.epsilon == eps and entry.delta == delta
    assert ledger_total(p.ledger) == (eps, delta)
    sigma = gaussian_sigma(eps, delta, 2.0 / n)
    assert p.info["centering_sigma"] == pytest.approx(sigma)
    noise = p.info["center"] - X.mean(axis=0)
    # noise ~ N(0, σ² I_d): mean(z²) has sd sqrt(2/d) ≈ 0.026; ±0.2 is > 7 sd, and a 10 % error in σ fails it
    z2 = np.mean((noise / sigma) ** 2)
    assert abs(z2 - 1.0) < 0.2
    assert abs(np.mean(noise / sigma)) < 7 / math.sqrt(d)
    assert _norms(p).max() <= 1 + 1e-12
    again = preprocess(ds, centering="dp", centering_epsilon=eps, centering_delta=delta, random_state=123)
    np.testing.assert_array_equal(again.X, p.X)


def test_dp_centring_reclips():
    ds = load_dataset("wine")
    p = _no_leak_warnings(preprocess, ds, centering="dp", centering_epsilon=1.0, random_state=0)
    assert _norms(p).max() <= 1 + 1e-12
    assert 0.0 <= p.clip_fraction <= 1.0


@pytest.mark.parametrize("kwargs", [
    {"feature_scaling": "zscore"},
    {"norm_mode": "sphere"},
    {"centering": "median"},
    {"norm_bound": -1.0},
    {"norm_bound": 0.0},
    {"norm_bound": 2.0, "norm_mode": "max_norm"},
    {"centering": "none", "center": [0.0] * 6},                # centre given but unused
    {"centering": "public", "center": [0.0, 1.0]},             # wrong length
    {"centering": "dp", "centering_epsilon": 0.0},
    {"centering": "dp", "centering_delta": 0.0},
    {"centering": "dp", "norm_mode": "max_norm"},
    {"centering": "dp", "neighbouring": "add_remove"},
    {"neighbouring": "swap"},
    {"random_state": -3},
])
def test_invalid_arguments(kwargs):
    with pytest.raises(InvalidParameterError):
        preprocess(_toy(), **kwargs)


def test_no_public_bound_asks_for_one():
    ds = _toy(ranges=False)
    with pytest.raises(InvalidParameterError, match="norm_bound"):
        preprocess(ds)
    p = preprocess(ds, norm_bound=5.0)
    assert p.norm_bound == 5.0 and p.is_private


def test_csv_load_steps_copied_into_ledger_with_warning():
    ds = load_csv(b"a,b,colour\n1,,red\n2,4,blue\n3,6,red\n5,8,green\n", missing="mean")
    with pytest.warns(PrivacyLeakWarning) as record:
        p = preprocess(ds, norm_bound=10.0)
    steps = {e.step: e for e in p.ledger}
    assert not steps["mean imputation of missing values"].private
    assert not steps["one-hot encoding, vocabulary from the data"].private
    assert not steps["file format and column roles read off the data"].private
    assert len(record) == 3 and not p.is_private


def test_adult_prepared_shape_and_private():
    p = _no_leak_warnings(preprocess, load_dataset("adult"))
    assert p.X.shape == (48_842, 108)
    # the bound its public schema implies: 6 numeric columns + 8 one-hot groups (issue 20 item 3; was √d = √108)
    assert p.is_private and p.norm_bound == pytest.approx(math.sqrt(14))
    assert p.y is not None and p.has_labels
    assert _norms(p).max() <= 1 + 1e-12


def test_clip_fraction_curve_matches_direct_count():
    ds = load_dataset("css_synthetic")
    norms = np.linalg.norm(ds.X, axis=1)
    cands = [2.0, 0.5, 1.0, 0.25]
    df = clip_fraction_curve(ds, cands)
    assert list(df.columns) == ["norm_bound", "clip_fraction"]
    assert df["norm_bound"].tolist() == sorted(cands)
    for b, f in zip(df["norm_bound"], df["clip_fraction"]):
        assert f == pytest.approx(np.mean(norms > b))
    auto = clip_fraction_curve(ds)
    assert len(auto) == 25 and np.all(np.diff(auto["clip_fraction"]) <= 0) and auto["clip_fraction"].iloc[-1] == 0
    # agrees with preprocess's own clip fraction
    assert clip_fraction_curve(ds, [1.0])["clip_fraction"].iloc[0] == pytest.approx(preprocess(ds).clip_fraction)
    centred = clip_fraction_curve(_toy(), [1.0], centering="empirical")
    assert 0.0 <= centred["clip_fraction"].iloc[0] <= 1.0
    with pytest.raises(InvalidParameterError):
        clip_fraction_curve(ds, [0.0, 1.0])


def test_suggest_norm_bounds():
    ds = load_dataset("wine")
    df = suggest_norm_bounds(ds, quantiles=(0.5, 0.9, 1.0))
    assert list(df.columns) == ["quantile", "norm_bound", "clip_fraction"]
    assert df["clip_fraction"].iloc[-1] == 0.0
    assert np.all(np.diff(df["norm_bound"]) >= 0)
    assert df["clip_fraction"].iloc[0] == pytest.approx(0.5, abs=1 / ds.n)
    with pytest.raises(InvalidParameterError):
        suggest_norm_bounds(ds, quantiles=(0.0, 1.5))


@needs_shared
def test_shared_dataset_preprocess():
    ds = load_dataset("kddcup99", max_rows=5000)
    with pytest.warns(PrivacyLeakWarning, match="one-hot vocabulary"), \
            pytest.warns(PrivacyLeakWarning, match="min–max scaling"):
        p = preprocess(ds, feature_scaling="minmax")
    assert p.X.shape[0] == 5000 and _norms(p).max() <= 1 + 1e-12 and not p.is_private
    mn = _no_leak_warnings(preprocess, load_dataset("mnist"))
    assert mn.X.shape == (5000, 784) and mn.is_private
