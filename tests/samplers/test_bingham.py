"""Exact Kent–Ganeiber–Mardia Bingham sampler: reference constants and goodness of fit against the exact density.

Every statistical test uses a fixed seed and α = 1e-6; the "always accept" variant (the OpenDP bug, opendp#2416)
is run through the same statistic to show that the test can fail.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import integrate, special, stats

from dpcore.core.timing import Deadline
from dpcore.exceptions import MechanismTimeout, SamplerError
from dpcore.samplers.bingham import KentBinghamSampler, kent_b, kent_log_m, sample_bingham, sample_bingham_score

ALPHA = 1e-6


class AlwaysAccept(KentBinghamSampler):
    """Deliberately broken: accepts every ACG proposal (never registered anywhere)."""

    def _accept(self, log_u, log_r):
        return np.ones_like(log_r, dtype=bool)


def _rotation(q: int, seed: int) -> np.ndarray:
    return np.linalg.qr(np.random.default_rng(seed).standard_normal((q, q)))[0]


# --------------------------------------------------------------------------------------------------
# reference values (spec Appendix A)
# --------------------------------------------------------------------------------------------------

def test_kent_reference_values():
    b = kent_b([0.0, 1.0, 5.0])
    assert b == pytest.approx(1.577118, abs=1e-6)
    assert math.exp(kent_log_m(3, b)) == pytest.approx(1.287985, abs=1e-6)
    assert kent_b(np.zeros(4)) == pytest.approx(4.0)
    assert math.exp(kent_log_m(4, 4.0)) == pytest.approx(1.0)
    # b solves Σ 1/(b + 2λ) = 1 and shifting Ψ by a constant does not change it
    lam = np.array([3.0, 0.5, 7.0, 2.0, 0.0])
    b = kent_b(lam)
    assert np.sum(1.0 / (b + 2.0 * lam)) == pytest.approx(1.0, abs=1e-12)
    assert kent_b(lam + 11.0) == pytest.approx(b, rel=1e-12)


def test_sampler_attributes_and_stats():
    s = KentBinghamSampler(np.diag([2.0, 3.0, 7.0]))  # shifted internally to diag(0, 1, 5)
    assert s.b == pytest.approx(1.577118, abs=1e-6)
    X = s.sample_many(2000, np.random.default_rng(0))
    assert X.shape == (2000, 3)
    assert np.allclose(np.linalg.norm(X, axis=1), 1.0)
    assert s.stats.accepted == 2000
    # acceptance rate of Kent's envelope is at least 1/M*
    assert s.stats.proposals <= 1.5 * 2000 * math.exp(s.log_m)
    x, st = sample_bingham(np.diag([0.0, 1.0]), np.random.default_rng(1))
    assert x.shape == (2,) and st.accepted == 1 and st.proposals >= 1


def test_uniform_target_always_accepts():
    s = KentBinghamSampler(np.zeros((4, 4)))
    s.sample_many(500, np.random.default_rng(2))
    assert s.stats.proposals == 500  # M* = 1 and f*/g* ≡ 1


def test_q1_is_a_fair_sign():
    s = KentBinghamSampler(np.array([[3.0]]))
    rng = np.random.default_rng(3)
    X = s.sample_many(20000, rng)
    assert set(np.unique(X)) == {-1.0, 1.0}
    assert stats.binomtest(int((X > 0).sum()), 20000, 0.5).pvalue > ALPHA
    assert s.sample(rng).shape == (1,)


def test_from_score_is_the_shifted_target():
    C = np.array([[5.0, 1.0], [1.0, 2.0]])
    a = KentBinghamSampler.from_score(C, 0.7)
    w = np.linalg.eigvalsh(C)
    b = KentBinghamSampler(0.7 * (w.max() * np.eye(2) - C))
    assert a.b == pytest.approx(b.b, rel=1e-12)
    assert np.sort(a.eigenvalues) == pytest.approx(np.sort(b.eigenvalues), abs=1e-12)
    x, _ = sample_bingham_score(C, 0.7, np.random.default_rng(0))
    assert np.linalg.norm(x) == pytest.approx(1.0)


# --------------------------------------------------------------------------------------------------
# goodness of fit against the exact density
# --------------------------------------------------------------------------------------------------

def _chi2_pvalue(values: np.ndarray, edges: np.ndarray, density) -> float:
    """Chi-square p-value of ``values`` against a 1-D density on [edges[0], edges[-1]] (numerical integration)."""
    mass = np.array([integrate.quad(density, lo, hi, limit=200)[0] for lo, hi in itertools.pairwise(edges)])
    expected = mass / mass.sum() * len(values)
    observed, _ = np.histogram(values, bins=edges)
    return float(stats.chisquare(observed, expected).pvalue)


def _q2_pvalue(sampler_cls, seed: int) -> float:
    """q = 2, Ψ = R diag(0, 3) Rᵀ: histogram of the angle φ of Rᵀx against ∝ exp(−3 sin²φ) on [0, 2π)."""
    R = _rotation(2, 10)
    sampler = sampler_cls(R @ np.diag([0.0, 3.0]) @ R.T)
    Y = sampler.sample_many(60000, np.random.default_rng(seed)) @ R
    phi = np.mod(np.arctan2(Y[:, 1], Y[:, 0]), 2 * np.pi)
    return _chi2_pvalue(phi, np.linspace(0.0, 2 * np.pi, 41), lambda p: math.exp(-3.0 * math.sin(p) ** 2))


def _q3_pvalue(sampler_cls, seed: int) -> float:
    """q = 3, Ψ = R diag(0, 1, 5) Rᵀ: histogram of t = (Rᵀx)₃ (uniform measure on the sphere is dt·dφ).

    Marginal density ∝ ∫₀^{2π} exp(−(1−t²)sin²φ − 5t²) dφ = 2π·exp(−(1−t²)/2 − 5t²)·I₀((1−t²)/2).
    """
    R = _rotation(3, 11)
    sampler = sampler_cls(R @ np.diag([0.0, 1.0, 5.0]) @ R.T)
    Y = sampler.sample_many(60000, np.random.default_rng(seed)) @ R

    def density(t: float) -> float:
        s = (1.0 - t * t) / 2.0
        return math.exp(-5.0 * t * t) * float(special.ive(0, s))  # ive = e^{−s} I₀(s)

    return _chi2_pvalue(Y[:, 2], np.linspace(-1.0, 1.0, 41), density)


@pytest.mark.parametrize("pvalue_fn", [_q2_pvalue, _q3_pvalue], ids=["q2-angle", "q3-marginal"])
def test_kent_matches_exact_density(pvalue_fn):
    assert pvalue_fn(KentBinghamSampler, seed=20) > ALPHA


@pytest.mark.parametrize("pvalue_fn", [_q2_pvalue, _q3_pvalue], ids=["q2-angle", "q3-marginal"])
def test_same_statistic_rejects_always_accept_sampler(pvalue_fn):
    """Regression for opendp#2416: a sampler that skips the accept/reject test must fail this statistic."""
    assert pvalue_fn(AlwaysAccept, seed=20) < ALPHA


def test_concentrated_target_in_log_space():
    """High concentration (exp(−xᵀΨx) underflows in linear space) still gives valid unit samples near ±e₁."""
    q = 40
    lam = np.concatenate([[0.0], np.linspace(200.0, 5000.0, q - 1)])
    s = KentBinghamSampler(np.diag(lam))
    X = s.sample_many(200, np.random.default_rng(4))
    assert np.all(np.isfinite(X)) and np.allclose(np.linalg.norm(X, axis=1), 1.0)
    assert np.all(np.abs(X[:, 0]) > 0.9)


# --------------------------------------------------------------------------------------------------
# caps: never return a non-sample
# --------------------------------------------------------------------------------------------------

def test_envelope_violation_message_carries_no_data_statistic():
    """privacy-review item 7: log r is computed from the data's matrix; the error names the violation, not its value."""

    class Broken(KentBinghamSampler):
        def _log_ratio(self, y):
            return np.full(y.shape[0], 0.123456)

    with pytest.raises(SamplerError) as err:
        Broken(np.diag([0.0, 1.0, 5.0])).sample(np.random.default_rng(0))
    assert "0.123" not in str(err.value) and "log r > 0" in str(err.value)


def test_proposal_cap_raises_sampler_error():
    s = KentBinghamSampler(np.diag([0.0, 1.0, 5.0]), max_proposals=1)
    rng = np.random.default_rng(5)
    with pytest.raises(SamplerError, match="proposals"):
        for _ in range(1000):  # each call may use one proposal; about 1 in 5 is rejected
            x = s.sample(rng)
            assert np.linalg.norm(x) == pytest.approx(1.0)  # a returned value is always a real sample


def test_deadline_raises_timeout():
    s = KentBinghamSampler(np.diag([0.0, 1.0, 2.0]))
    deadline = Deadline(1e-9)
    import time

    time.sleep(0.01)
    with pytest.raises(MechanismTimeout):
        s.sample(np.random.default_rng(6), deadline)
