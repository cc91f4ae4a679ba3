"""DPPCA: scikit-learn compatibility, budget accounting, parameter pass-through."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.pipeline import make_pipeline
from sklearn.svm import LinearSVC
from sklearn.utils.estimator_checks import check_estimator

from dpcore import DPPCA, InvalidMechanismError, InvalidParameterError, PrivacyLeakWarning


def test_sklearn_estimator_checks():
    # Every check that applies must pass; none is declared "expected to fail".
    results = check_estimator(DPPCA(random_state=0, norm_bound=5.0), on_fail=None, on_skip=None)
    failures = [f"{r['check_name']}: {r['exception']}" for r in results if r["status"] == "failed"]
    assert len(results) > 30
    assert not failures, "\n".join(failures)


def _data(seed=0, n=600, d=5):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, d)) * np.array([3.0, 1.0, 0.5, 0.2, 0.1])[:d]


def test_fit_transform_and_components():
    X = _data()
    model = DPPCA(epsilon=5.0, n_components=2, norm_bound=8.0, random_state=1).fit(X)
    assert model.components_.shape == (2, 5)
    np.testing.assert_allclose(model.components_ @ model.components_.T, np.eye(2), atol=1e-10)
    assert model.transform(X).shape == (600, 2)
    assert abs(model.components_[0, 0]) > 0.9  # the dominant axis survives at ε = 5
    np.testing.assert_allclose(model.fit_transform(X), model.transform(X))


def test_same_seed_same_fit_and_options_pass_through():
    X = _data()
    a = DPPCA(mechanism="laplace", sensitivity="tight", random_state=3, norm_bound=8.0).fit(X)
    b = clone(a).fit(X)
    np.testing.assert_array_equal(a.components_, b.components_)
    assert a.get_params()["sensitivity"] == "tight"
    assert a.release_.options["sensitivity"] == "tight"
    a.set_params(sensitivity="paper")
    assert a.get_params()["sensitivity"] == "paper"
    with pytest.raises(InvalidParameterError, match="unknown option"):
        DPPCA(mechanism="laplace", bogus=1).fit(X)


def test_budget_accounting_with_dp_centering():
    X = _data(n=5000) + 10.0  # row norms ≈ 22.6 < B = 30, so clipping does not bias the mean
    model = DPPCA(epsilon=5.0, delta=1e-5, centering="dp", norm_bound=30.0, random_state=0).fit(X)
    eps, delta = model.privacy_spent
    assert eps == pytest.approx(5.0) and delta == pytest.approx(1e-5)
    assert all(e.private for e in model.ledger_)
    assert np.allclose(model.mean_, X.mean(axis=0), atol=0.6)  # DP noise σ ≈ 0.12


def test_empirical_centering_is_flagged():
    with pytest.warns(PrivacyLeakWarning):
        model = DPPCA(centering="empirical", norm_bound=8.0, random_state=0).fit(_data())
    assert any(not e.private for e in model.ledger_)


def test_pure_mechanism_spends_no_delta_and_invalid_refused():
    model = DPPCA(mechanism="laplace", delta=1e-5, norm_bound=8.0, random_state=0).fit(_data())
    assert model.privacy_spent[1] == 0.0
    with pytest.raises(InvalidMechanismError):
        DPPCA(mechanism="sn_imtiaz").fit(_data())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        DPPCA(mechanism="sn_imtiaz", allow_invalid=True, random_state=0).fit(_data())


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"epsilon": 0}, "epsilon"), ({"n_components": 9}, "n_features = 5"), ({"centering": "x"}, "centering"),
    ({"norm_bound": -1}, "norm_bound"), ({"mechanism": "nope"}, "unknown mechanism"),
])
def test_bad_parameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        DPPCA(**kwargs).fit(_data())


def test_in_a_pipeline():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 800)
    X = _data(n=800)
    X[:, 0] = 0.3 * X[:, 0] + 4 * y  # separable along the dominant axis
    pipe = make_pipeline(DPPCA(epsilon=5.0, n_components=1, norm_bound=10.0, random_state=0), LinearSVC())
    assert pipe.fit(X, y).score(X, y) > 0.9


def test_fit_shortcut_for_float64_arrays_records_what_validate_data_records():
    """A C-/F-ordered float64 ndarray skips validate_data's overhead; the fitted record and the fit are the same."""
    pd = pytest.importorskip("pandas")
    X = _data()
    model = DPPCA(norm_bound=8.0, random_state=0).fit(pd.DataFrame(X, columns=list("abcde")))
    assert list(model.feature_names_in_) == list("abcde")
    model.fit(np.asfortranarray(X))  # the shortcut forgets the old feature names, as validate_data does
    assert model.n_features_in_ == 5 and not hasattr(model, "feature_names_in_")
    through_sklearn = DPPCA(norm_bound=8.0, random_state=0).fit(X.tolist())  # a list goes through validate_data
    np.testing.assert_array_equal(model.fit(X).components_, through_sklearn.components_)
    with pytest.raises(ValueError, match="expecting 5 features"):
        model.transform(X[:, :4])


@pytest.mark.parametrize(("bad", "match"), [
    (lambda X: X[:1], "minimum of 2 is required"),
    (lambda X: X[:, :0], "0 feature"),
    (lambda X: X.reshape(2, 300, 5), "dim 3"),
    (lambda X: X + 1j, "Complex data not supported"),
    (lambda X: np.where(np.arange(600)[:, None] == 7, np.inf, X), "NaN or infinite"),
    (lambda X: np.where(np.arange(600)[:, None] == 7, np.nan, X).astype(np.float32), "NaN or infinite"),
])
def test_bad_input_is_refused_with_the_same_messages(bad, match):
    with pytest.raises(ValueError, match=match):
        DPPCA(norm_bound=8.0, random_state=0).fit(bad(_data()))
