"""The audit's per-release fast path gives what the public path gives, bit for bit.

``Mechanism.prepare_release(...).run(rng)`` (validated once, as the audit collects) against ``Mechanism.release``;
``Mutant.derive_many`` (one stacked eigendecomposition) against the mutant's own release on the same draws.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpcore.audit.mutants import mutants_for
from dpcore.data.prepared import PreparedData
from dpcore.exceptions import InvalidParameterError
from dpcore.mechanisms import get_mechanism

MECHANISMS = ("sn_imtiaz", "analyze_gauss", "laplace", "wishart_jiang", "mod_sulq", "random")


def _data(d: int = 5, n: int = 40) -> PreparedData:
    X = np.random.default_rng(3).standard_normal((n, d))
    return PreparedData.from_unit_rows(X / np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True)))


def _same(a, b, settings: tuple[str, ...] = ("counterexample_delta",)) -> None:
    for name in ("status", "reason", "mechanism", "guarantee", "neighbouring", "k", "n", "d", "options", "ledger",
                 "preprocessing", *settings):
        assert getattr(a, name) == getattr(b, name), name
    for name in ("subspace", "covariance", "covariance_post", "eigenvalues"):
        x, y = getattr(a, name), getattr(b, name)
        assert (x is None) == (y is None), name
        if x is not None:
            assert np.asarray(x).tobytes() == np.asarray(y).tobytes(), name


@pytest.mark.parametrize("mech_id", MECHANISMS)
def test_prepared_run_is_the_public_release(mech_id: str) -> None:
    mech = get_mechanism(mech_id)
    data = _data()
    delta = 1e-5 if mech.uses_delta else 0.0
    prepared = mech.prepare_release(data, 2, 1.0, delta, allow_invalid=True)
    fast, public = np.random.default_rng(7), np.random.default_rng(7)
    for _ in range(10):
        _same(prepared.run(fast), mech.release(data, 2, 1.0, delta, random_state=public, allow_invalid=True))
    assert fast.random() == public.random()  # the same draws, in the same order


def test_prepare_validates_like_release() -> None:
    mech = get_mechanism("laplace")
    with pytest.raises(InvalidParameterError):
        mech.prepare_release(_data(), 1, -1.0)
    with pytest.raises(InvalidParameterError):
        mech.prepare_release(_data(), 1, 1.0, time_limit=-2)


def test_each_prepared_release_owns_its_options() -> None:
    prepared = get_mechanism("laplace").prepare_release(_data(), 1, 1.0)
    a, b = prepared.run(1), prepared.run(1)
    a.options["tampered"] = True
    assert "tampered" not in b.options


@pytest.mark.parametrize("mech_id", ("sn_imtiaz", "analyze_gauss", "laplace"))
def test_derive_many_is_the_mutants_own_release(mech_id: str) -> None:
    mech = get_mechanism(mech_id)
    data = _data()
    delta = 1e-5 if mech.uses_delta else 0.0
    rng = np.random.default_rng(11)
    releases = [mech.release(data, 2, 1.0, delta, random_state=rng, allow_invalid=True) for _ in range(8)]
    for mutant in mutants_for(mech):
        derived = mutant.derive_many(releases, data)
        rng = np.random.default_rng(11)
        for rel, got in zip(releases, derived):
            own = mutant.release(data, 2, 1.0, delta, random_state=rng, allow_invalid=True)
            _same(got, own, ())  # a derived release keeps the base's counterexample δ (as before)
            _same(mutant.derive(rel, data), own, ())
