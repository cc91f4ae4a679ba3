"""Dataset registry: ids, options, shapes, public schemas, synthetic generators, shared-data datasets."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import special

from dpcore.data import Dataset, DatasetInfo, list_datasets, load_dataset, synthetic
from dpcore.data import datasets as dsmod
from dpcore.exceptions import InvalidParameterError, UnknownNameError

CORE_IDS = ["wine", "breast_cancer", "digits", "css_synthetic", "is_synthetic", "subspace_synthetic", "adult"]
SHARED = dsmod.shared_data_dir()
needs_shared = pytest.mark.skipif(SHARED is None, reason="shared data directory not present")


def test_registry_lists_core_ids_with_metadata():
    infos = {i.id: i for i in list_datasets()}
    for ds_id in CORE_IDS:
        assert ds_id in infos
        info = infos[ds_id]
        assert isinstance(info, DatasetInfo)
        assert info.n > 0 and info.d > 0 and info.suggested_k >= 1
        assert info.source and info.description
    json.dumps([i.as_dict() for i in infos.values()])  # serialisable for the dashboard


@pytest.mark.parametrize("ds_id", ["wine", "breast_cancer", "digits", "css_synthetic", "is_synthetic", "adult"])
def test_info_matches_loaded_shape(ds_id):
    info = next(i for i in list_datasets() if i.id == ds_id)
    ds = load_dataset(ds_id)
    assert isinstance(ds, Dataset)
    assert ds.X.shape == (info.n, info.d)
    assert ds.labels == info.labels == (ds.y is not None)
    assert len(ds.feature_names) == ds.d
    assert ds.suggested_k == info.suggested_k


def test_unknown_id_lists_available_ids():
    with pytest.raises(UnknownNameError) as exc:
        load_dataset("no_such_dataset")
    assert "wine" in str(exc.value) and "adult" in str(exc.value)


@pytest.mark.parametrize("ds_id,options", [
    ("wine", {"n": 10}),                       # option the dataset does not take
    ("css_synthetic", {"n": -5}),              # out of range
    ("css_synthetic", {"n": 1.5}),             # not whole
    ("css_synthetic", {"sed": 1}),             # typo
    ("subspace_synthetic", {"noise_ratio": "big"}),
    ("subspace_synthetic", {"noise_ratio": -1.0}),
    ("subspace_synthetic", {"d": 5, "k": 5}),  # k must be < d
])
def test_bad_options_raise_invalid_parameter(ds_id, options):
    with pytest.raises(InvalidParameterError):
        load_dataset(ds_id, **options)


def test_cache_returns_same_read_only_object():
    a = load_dataset("css_synthetic", n=300, seed=3)
    b = load_dataset("css_synthetic", seed=3, n=300)
    assert a is b
    assert not a.X.flags.writeable
    with pytest.raises(ValueError):
        a.X[0, 0] = 1.0
    c = load_dataset("css_synthetic", n=300, seed=4)
    assert not np.array_equal(a.X, c.X)
    assert a.options == {"n": 300, "seed": 3}


def test_documented_ranges_wine_breast_cancer_digits():
    for ds_id, d in [("wine", 13), ("breast_cancer", 30), ("digits", 64)]:
        ds = load_dataset(ds_id)
        r = ds.feature_ranges
        assert r.shape == (d, 2) and np.all(r[:, 0] <= r[:, 1])
        x = ds.X
        outside = np.mean(np.clip(x, r[:, 0], r[:, 1]) != x)
        assert outside < 0.002  # documented (rounded) ranges: only a handful of entries clamp
        assert "DESCR" in ds.source or "[0, 16]" in ds.source


def test_css_population_and_sample_covariance():
    sigma = synthetic.css_covariance()
    np.testing.assert_allclose(np.sort(np.linalg.eigvalsh(sigma))[::-1], synthetic.CSS_EIGENVALUES, atol=1e-12)
    X, sigma2 = synthetic.make_css_synthetic(200_000, seed=11)
    np.testing.assert_array_equal(sigma, sigma2)
    S = X.T @ X / X.shape[0]
    # entrywise sd of S_ij ≤ sqrt(2)·λ_max/sqrt(n) ≈ 0.0016; 0.012 is > 7 sd
    assert np.max(np.abs(S - sigma)) < 0.012
    ds = load_dataset("css_synthetic")
    assert ds.X.shape == (5000, 10) and ds.suggested_k == 2 and ds.suggested_norm_bound == 1.0


def test_is_synthetic_bayes_accuracy_and_scale():
    X, y = synthetic.make_is_synthetic(40_000, seed=5)
    var, mean, _ = synthetic.is_population()
    assert X.shape == (40_000, 100) and set(np.unique(y)) == {0, 1} and abs(y.mean() - 0.5) < 1e-9
    assert abs(np.mean(np.sum(X**2, axis=1)) - 1.0) < 0.02  # E‖x‖² = 1 by construction
    # Bayes rule for equal covariances: sign of xᵀΣ⁻¹μ
    pred = (X @ (mean / var) > 0).astype(int)
    err = np.mean(pred != y)
    assert abs(err - synthetic.IS_BAYES_ERROR) < 0.008  # sd ≈ 0.0012
    assert abs(float(special.ndtr(-np.linalg.norm(mean / np.sqrt(var)))) - synthetic.IS_BAYES_ERROR) < 1e-9


def test_make_subspace_synthetic_planted_structure():
    n, d, k, ratio = 20_000, 50, 3, 1e-2
    X, U = synthetic.make_subspace_synthetic(n, d, k, ratio, seed=2)
    assert X.shape == (n, d) and U.shape == (d, k)
    np.testing.assert_allclose(U.T @ U, np.eye(k), atol=1e-12)
    inside = X @ U
    resid = X - inside @ U.T
    # in-subspace variance 1/k per direction, off-subspace noise_ratio/k per direction
    np.testing.assert_allclose(inside.var(axis=0), 1 / k, rtol=0.06)
    assert abs(np.mean(np.sum(resid**2, axis=1)) / ((d - k) * ratio / k) - 1) < 0.03
    ds = load_dataset("subspace_synthetic", n=500, d=20, k=2, noise_ratio=1e-3, seed=1)
    assert ds.X.shape == (500, 20) and ds.suggested_k == 2
    assert math.isclose(ds.suggested_norm_bound, 2 * math.sqrt(synthetic.subspace_expected_sq_norm(20, 2, 1e-3)))
    default = load_dataset("subspace_synthetic")
    assert default.X.shape == (20000, 200) and default.options["noise_ratio"] == 1e-4


def test_adult_encoding():
    ds = load_dataset("adult")
    assert ds.X.shape == (48_842, 108)
    assert int(ds.y.sum()) == 11_687  # '>50K' and '>50K.' (trailing dot stripped)
    names = ds.feature_names
    assert names[:6] == ("age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week")
    for col in ["workclass", "occupation", "native-country"]:
        assert f"{col}=?" in names
    for col in dsmod.ADULT_VOCABULARY:
        block = [j for j, nm in enumerate(names) if nm.startswith(col + "=")]
        np.testing.assert_array_equal(ds.X[:, block].sum(axis=1), 1.0)  # exactly one category per row
    r = ds.feature_ranges
    x = ds.X
    np.testing.assert_array_equal(np.clip(x, r[:, 0], r[:, 1]), x)
    assert all(e.private for e in ds.load_ledger)  # public vocabulary from adult.names
    assert "CC BY 4.0" in ds.source


def test_shared_datasets_hidden_without_data_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("DPCORE_DATA_DIR", str(tmp_path / "missing"))
    monkeypatch.setattr(dsmod, "DEFAULT_SHARED_DATA_DIR", tmp_path / "also_missing")
    ids = [i.id for i in list_datasets()]
    assert "kddcup99" not in ids and "wine" in ids and "adult" in ids
    with pytest.raises(UnknownNameError):
        load_dataset("kddcup99")


@needs_shared
def test_shared_ids_registered():
    ids = {i.id for i in list_datasets()}
    assert {"kddcup99", "census", "insurance", "airfoil", "covertype", "mnist", "localization"} <= ids


@pytest.mark.slow
@needs_shared
def test_kddcup99_full_116_dims():
    ds = load_dataset("kddcup99")
    assert ds.X.shape == (494_021, 116)
    assert int((ds.y == 0).sum()) == 97_278  # 'normal.' rows
    assert "num_outbound_cmds" not in ds.feature_names
    assert not all(e.private for e in ds.load_ledger)  # vocabulary from the data is flagged
    small = load_dataset("kddcup99", max_rows=1000)
    assert small.X.shape[0] == 1000


@needs_shared
def test_census_prefix():
    ds = load_dataset("census", max_rows=3000)
    assert ds.X.shape[0] == 3000 and ds.X.shape[1] <= 510
    assert "instance weight" not in ds.feature_names
    assert set(np.unique(ds.y)) <= {0, 1}


@needs_shared
@pytest.mark.parametrize("ds_id,shape,extra", [
    ("insurance", (9822, 134), lambda ds: int(ds.y.sum()) == 586),
    ("airfoil", (1503, 6), lambda ds: ds.y is None),
    ("covertype", (15000, 54), lambda ds: set(np.unique(ds.y)) == set(range(1, 8))),
    ("mnist", (5000, 784), lambda ds: np.all(np.bincount(ds.y) == 500) and ds.X.max() <= 255),
    ("localization", (16486, 44), lambda ds: int(ds.y.sum()) == 270),
])
def test_shared_dataset_shapes(ds_id, shape, extra):
    ds = load_dataset(ds_id)
    assert ds.X.shape == shape
    assert extra(ds)
    assert np.all(np.isfinite(ds.X))


@needs_shared
def test_mnist_test_subset_option():
    ds = load_dataset("mnist", subset="test10k")
    assert ds.X.shape == (10_000, 784)
    assert np.bincount(ds.y).tolist() == [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009]
    with pytest.raises(InvalidParameterError):
        load_dataset("mnist", subset="train60k")
