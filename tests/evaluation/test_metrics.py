"""Metric definitions on hand-made cases (spec §4)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpcore.data import PreparedData
from dpcore.evaluation import metrics
from dpcore.mechanisms import get_mechanism


def _diag_case():
    C = np.diag([5.0, 3.0, 1.0, 0.5])
    return C, np.eye(4)


def test_optimal_subspace_has_ratio_one_and_zero_angle():
    C, I = _diag_case()
    V = I[:, :2]
    assert metrics.captured_variance_ratio(C, V) == pytest.approx(1.0)
    assert metrics.principal_angle_max_deg(V, V) == pytest.approx(0.0, abs=1e-6)
    assert metrics.sin_theta_max(V, V) == pytest.approx(0.0, abs=1e-7)


@pytest.mark.parametrize("theta", [0.0, 1e-10, 1e-6])
def test_identical_and_nearly_identical_subspaces_keep_all_digits(theta):
    """arccos of a singular value loses half the digits (identical subspaces gave 2.1e-6° and sin θ = 3.7e-8);
    the angles must be right to rounding, like scipy.linalg.subspace_angles."""
    rng = np.random.default_rng(1)
    Q = np.linalg.qr(rng.standard_normal((12, 12)))[0]
    V = Q[:, :3]
    W = V.copy()
    W[:, 0] = math.cos(theta) * Q[:, 0] + math.sin(theta) * Q[:, 7]  # turn one axis by θ out of span(V)
    assert metrics.principal_angles(V, W).max() == pytest.approx(theta, abs=1e-15, rel=1e-6)
    assert metrics.sin_theta_max(V, W) == pytest.approx(math.sin(theta), abs=1e-15, rel=1e-6)
    assert metrics.principal_angle_max_deg(V, W) == pytest.approx(math.degrees(theta), abs=1e-13, rel=1e-6)


def test_orthogonal_subspace_is_90_degrees():
    C, I = _diag_case()
    V, W = I[:, :2], I[:, 2:]
    assert metrics.principal_angle_max_deg(V, W) == pytest.approx(90.0)
    assert metrics.sin_theta_max(V, W) == pytest.approx(1.0)
    assert metrics.captured_variance_ratio(C, W) == pytest.approx(1.5 / 8.0)
    assert metrics.projection_frobenius_distance(V, W) == pytest.approx(2.0)


def test_known_angle_and_rotation_invariance():
    theta = math.radians(30)
    V = np.array([[1.0], [0.0]])
    W = np.array([[math.cos(theta)], [math.sin(theta)]])
    assert metrics.principal_angle_max_deg(V, W) == pytest.approx(30.0)
    assert metrics.sin_theta_max(V, W) == pytest.approx(0.5)
    # q_F is invariant to V ↦ VQ
    rng = np.random.default_rng(0)
    C = np.cov(rng.standard_normal((50, 5)).T)
    V2 = np.linalg.qr(rng.standard_normal((5, 2)))[0]
    Q = np.linalg.qr(rng.standard_normal((2, 2)))[0]
    assert metrics.captured_variance(C, V2 @ Q) == pytest.approx(metrics.captured_variance(C, V2))


def test_frobenius_error():
    C = np.diag([4.0, 3.0])
    assert metrics.frobenius_error(C, C) == 0.0
    assert metrics.frobenius_error(C, np.zeros((2, 2))) == pytest.approx(1.0)
    assert math.isnan(metrics.frobenius_error(C, None))
    assert metrics.spectral_error(C, np.diag([4.0, 0.0])) == pytest.approx(0.75)


def test_eigengap_ratio():
    assert metrics.eigengap_ratio(np.array([4.0, 2.0, 1.0]), 1) == pytest.approx(0.5)
    assert math.isnan(metrics.eigengap_ratio(np.array([4.0, 2.0]), 2))


def test_evaluate_nonprivate_pca_is_perfect(small_data):
    release = get_mechanism("pca").release(small_data, 2, 1.0)
    m = metrics.evaluate(release, small_data)
    assert m["captured_variance_ratio"] == pytest.approx(1.0)
    assert m["frobenius_error"] == pytest.approx(0.0, abs=1e-12)
    assert m["principal_angle_max_deg"] == pytest.approx(0.0, abs=1e-5)
    assert math.isnan(m["svm_accuracy"])  # no split given


def test_svm_metric_separates_good_from_bad_subspace():
    rng = np.random.default_rng(3)
    n = 2000
    y = rng.integers(0, 2, n)
    X = rng.standard_normal((n, 4)) * [0.05, 0.3, 0.3, 0.3]
    X[:, 0] += np.where(y == 1, 0.5, -0.5)
    X /= np.linalg.norm(X, axis=1).max()
    data = PreparedData(X, y=y)
    rest, split = metrics.evaluation_split(data, seed=1)
    assert split is not None and rest.n + len(split.y_train) + len(split.y_test) == n
    good = metrics.svm_accuracy(np.eye(4)[:, :1], split)
    bad = metrics.svm_accuracy(np.eye(4)[:, 1:2], split)
    assert good > 0.95 and bad < 0.65


def test_evaluation_split_is_deterministic_and_disjoint(small_data):
    a, sa = metrics.evaluation_split(small_data, seed=7)
    b, sb = metrics.evaluation_split(small_data, seed=7)
    np.testing.assert_array_equal(a.X, b.X)
    np.testing.assert_array_equal(sa.X_test, sb.X_test)
    c, _ = metrics.evaluation_split(small_data, seed=8)
    assert not np.array_equal(a.X, c.X)
    unlabeled = PreparedData(small_data.X)
    same, none = metrics.evaluation_split(unlabeled, seed=7)
    assert same is unlabeled and none is None


def test_svm_accuracy_equals_the_sklearn_pipeline():
    """The lean implementation must give exactly what StandardScaler + LinearSVC + score gives."""
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import LinearSVC

    rng = np.random.default_rng(5)
    for n_classes in (2, 3):
        n = 900
        y = rng.integers(0, n_classes, n)
        X = rng.standard_normal((n, 5)) * 0.3
        X[:, 0] += y * 0.4
        X /= np.linalg.norm(X, axis=1).max()
        _, split = metrics.evaluation_split(PreparedData(X, y=y), seed=n_classes)
        V = np.linalg.qr(rng.standard_normal((5, 2)))[0]
        ref = make_pipeline(StandardScaler(), LinearSVC(C=1.0, max_iter=5000))
        ref.fit(split.X_train @ V, split.y_train)
        assert metrics.svm_accuracy(V, split) == ref.score(split.X_test @ V, split.y_test)
