"""AD with the authors' code's budget split (issue 34 item 4): weights, ε₀, total ε, relation.

The formulas are written out here from google-research/google-research private_covariance_estimation/mechanisms.py
(``utility_bound``, ``split_privacy_between_eigenvalues_and_vectors``, ``get_vector_privacy_parameters``), not
imported from dpcore, so a wrong constant in dpcore fails these tests.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpcore.core.privacy import ledger_total
from dpcore.exceptions import InvalidParameterError
from dpcore.mechanisms import get_mechanism
from dpcore.mechanisms.itu import authors_eigenvalue_budget, authors_vector_weights


def their_utility_bound(t: float, d: int, n: int, epsilon: float, draws: int | None = None) -> float:
    """Their bound; ``draws`` < d (our k < d extension) sums over the vectors drawn."""
    terms = d if draws is None else draws
    return math.sqrt(d) / t + sum(math.sqrt(d - i) for i in range(terms)) * math.sqrt(n) / math.sqrt(epsilon - t)


def their_eigenvalue_budget(n: int, d: int, epsilon: float, draws: int | None = None) -> tuple[float, float]:
    """(argmin on a fine grid of [ε/d², ε − ε/d²], tolerance)."""
    lo, hi = epsilon / d**2, epsilon - epsilon / d**2
    grid = np.linspace(lo, hi, 200_001)
    best = grid[np.argmin([their_utility_bound(t, d, n, epsilon, draws) for t in grid])]
    return float(best), 2 * (hi - lo) / 200_000 + 1e-5 * epsilon


def their_vector_budgets(eigvals: np.ndarray, epsilon: float) -> np.ndarray:
    d = len(eigvals)
    weights = np.sqrt(eigvals * np.arange(d)[::-1])  # λ̂ᵢ·(d−1−i), i = 0..d−1
    return weights / weights.sum() * epsilon


def data(n: int = 300, d: int = 5) -> np.ndarray:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, d)) * np.array([3.0, 2.0, 1.0, 0.5, 0.2])[:d]
    return X / np.linalg.norm(X, axis=1).max()


@pytest.mark.parametrize("n, d, epsilon", [(178, 13, 1.0), (1797, 64, 10.0), (200, 2, 0.1), (48842, 108, 4.0)])
def test_eigenvalue_budget_minimises_their_utility_bound(n, d, epsilon):
    best, tol = their_eigenvalue_budget(n, d, epsilon)
    assert authors_eigenvalue_budget(n, d, epsilon, d) == pytest.approx(best, abs=tol)


def test_vector_weights_are_the_square_root_of_eigenvalue_times_sphere_dimension():
    lam = np.array([40.0, 12.0, 5.0, 1.0, 0.0])
    w = np.array(authors_vector_weights(lam, 5, 4))  # k = d = 5: 4 paid draws, the last is free
    np.testing.assert_allclose(w / w.sum() * 0.7, their_vector_budgets(lam, 0.7)[:4], rtol=1e-14)
    np.testing.assert_allclose(w, np.sqrt(lam[:4] * np.array([4, 3, 2, 1])), rtol=1e-14)
    assert authors_vector_weights(np.zeros(3), 3, 2) == [1.0, 1.0]  # all zero: uniform, not 0/0


@pytest.mark.parametrize("k", [5, 2])
def test_release_spends_exactly_epsilon_with_the_authors_shares(k):
    X = data()
    eps = 3.0
    r = get_mechanism("ad").release(X, k, eps, split="authors", exponent="tight", random_state=1)
    spent, delta = ledger_total(r.ledger)
    assert spent == pytest.approx(eps, rel=1e-12) and delta == 0.0
    eps0 = r.ledger[0].epsilon
    draws = min(k, 5)
    best, tol = their_eigenvalue_budget(300, 5, eps, draws)
    assert eps0 == pytest.approx(best, abs=tol)
    paid = min(k, 4)
    vec = np.array([e.epsilon for e in r.ledger[1:1 + paid]])
    lam = r.eigenvalues  # the private λ̂ (sorted, clipped) the weights were computed from
    expected = (eps - eps0) * np.sqrt(lam[:paid] * (5 - 1 - np.arange(paid)))
    expected /= np.sqrt(lam[:paid] * (5 - 1 - np.arange(paid))).sum()
    np.testing.assert_allclose(vec, expected, rtol=1e-10)
    if k == 5:
        np.testing.assert_allclose(vec, their_vector_budgets(lam, eps - eps0)[:4], rtol=1e-10)
        assert r.ledger[-1].epsilon == 0.0  # the d-th draw, on S⁰


def test_authors_split_is_replace_one_only_and_the_default_is_unchanged():
    X = data()
    with pytest.raises(InvalidParameterError, match="private under add/remove"):
        get_mechanism("ad").release(X, 2, 1.0, split="authors", neighbouring="add_remove", random_state=1)
    r = get_mechanism("ad").release(X, 2, 1.0, random_state=1)
    assert r.options["split"] == "corollary1" and r.ledger[0].epsilon == 0.5
    r2 = get_mechanism("ad").release(X, 2, 1.0, neighbouring="add_remove", random_state=1)
    assert r2.ledger[0].epsilon == 0.5
