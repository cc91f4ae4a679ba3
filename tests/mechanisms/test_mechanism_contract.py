"""The contract every registered mechanism keeps, checked over the registry (not a hand-kept list).

Like scikit-learn's ``parametrize_with_checks``: a mechanism added with ``@register`` is covered automatically.
The neighbouring-pair privacy checks over the same registry are in ``test_privacy_regression.py``.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from dpcore.core.privacy import GUARANTEES, Diagnostics
from dpcore.exceptions import InvalidParameterError
from dpcore.mechanisms import get_mechanism, mechanism_ids
from dpcore.mechanisms.base import OUTPUT_KINDS, PRIVATE_OUTPUT_FIELDS, PUBLIC_SETTING_FIELDS, Release

RELATIONS = ("replace", "add_remove")
CASES = [(mid, nb) for mid in mechanism_ids() for nb in RELATIONS]


@pytest.fixture(scope="module")
def rows() -> np.ndarray:
    rng = np.random.default_rng(0)
    X = rng.standard_normal((1500, 4)) * [1.0, 0.6, 0.3, 0.1]
    return X / np.linalg.norm(X, axis=1).max()


def _release(mid: str, rows: np.ndarray, neighbouring: str = "replace", **kw) -> Release:
    mech = get_mechanism(mid)
    X = rows[:60] if mid == "ss_exact" else rows  # its exhaustive search is for teaching sizes
    k = 1 if mid == "ppca" else 2  # PPCA is exact (and fast) for k = 1
    kw.setdefault("random_state", 0)
    return mech.release(X, k, 1.0, 1e-5 if mech.uses_delta else 0.0, neighbouring=neighbouring,
                        allow_invalid=mech.invalid, **kw)


@pytest.mark.parametrize("mid", mechanism_ids())
def test_metadata(mid):
    mech = get_mechanism(mid)
    assert mech.guarantee in GUARANTEES and mech.output in OUTPUT_KINDS
    assert mech.neighbourings and set(mech.neighbourings) <= set(RELATIONS)
    for text in (mech.name, mech.summary, mech.reference, mech.domain):
        assert isinstance(text, str) and text.strip()
    json.dumps(mech.describe())  # the CLI's `mechanisms --json` and the Learn page read it
    assert mech.validate_options({}) == mech.default_options()


@pytest.mark.parametrize(("mid", "neighbouring"), CASES)
def test_release_contract(mid, neighbouring, rows):
    mech = get_mechanism(mid)
    if neighbouring not in mech.neighbourings:
        with pytest.raises(InvalidParameterError, match="neighbouring"):
            _release(mid, rows, neighbouring)
        return
    rel = _release(mid, rows, neighbouring)
    assert rel.status in ("ok", "bottom") and rel.neighbouring == neighbouring
    # n is released only where it is public
    assert rel.n == (rel.diagnostics["n_rows"] if neighbouring == "replace" else None)
    assert isinstance(rel.diagnostics, Diagnostics) and not rel.diagnostics.private
    # the budget: never more than given; private guarantees spend exactly what they were given
    eps, delta = rel.budget_spent
    assert eps <= rel.epsilon * (1 + 1e-12) and delta <= rel.delta * (1 + 1e-12)
    if rel.guarantee in ("pure", "approx", "heuristic-mcmc") and mid != "random":
        assert eps == pytest.approx(rel.epsilon) and delta == pytest.approx(rel.delta)
    assert rel.total_budget == rel.budget_spent  # no preprocessing ledger on raw unit rows
    if rel.is_bottom:
        assert rel.subspace is None and rel.reason
    else:
        assert rel.subspace.shape == (rel.d, rel.k)
        np.testing.assert_allclose(rel.subspace.T @ rel.subspace, np.eye(rel.k), atol=1e-10)
        if mech.output == "covariance":
            assert rel.covariance_post is not None and np.linalg.eigvalsh(rel.covariance_post).min() >= -1e-8
    # the JSON record keeps the two parts apart
    record = rel.as_dict()
    json.dumps(record)
    assert set(record["private_output"]) <= set(PRIVATE_OUTPUT_FIELDS)
    assert record["nonprivate_diagnostics"]["private"] is False
    assert set(PRIVATE_OUTPUT_FIELDS) | set(PUBLIC_SETTING_FIELDS) | {"diagnostics"} == {
        f.name for f in Release.__dataclass_fields__.values()}


@pytest.mark.parametrize("mid", mechanism_ids())
def test_reproducible_with_an_integer_seed(mid, rows):
    a, b = _release(mid, rows, random_state=5), _release(mid, rows, random_state=5)
    assert a.status == b.status and a.reason == b.reason
    if not a.is_bottom:
        np.testing.assert_array_equal(a.subspace, b.subspace)


@pytest.mark.parametrize("mid", mechanism_ids())
def test_bad_arguments_are_refused(mid, rows):
    mech = get_mechanism(mid)
    with pytest.raises(InvalidParameterError, match="unknown option"):
        _release(mid, rows, bogus=1)
    for bad_eps in (0.0, -1.0, float("nan")):
        with pytest.raises(InvalidParameterError, match="epsilon"):
            mech.release(rows[:60], 1, bad_eps, 1e-5, allow_invalid=True)
    with pytest.raises(InvalidParameterError, match="k"):
        mech.release(rows[:60], 5, 1.0, 1e-5, allow_invalid=True)
    with pytest.raises(InvalidParameterError, match="random_state"):
        _release(mid, rows, random_state=-3)
