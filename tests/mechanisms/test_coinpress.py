"""CoinPress covariance (dpcore.mechanisms.coinpress): the per-step noise against its exact law, the per-step
sensitivity on worst-case neighbours, the public clip radii, the budget split and the exact (ε, δ) conversion.

Statistical tests use fixed seeds and ALPHA = 1e-6, and show their power on a deliberately wrong σ (× 1.1).
The reproduction of the authors' tables is in ``tests/evaluation/test_coinpress_repro.py``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpcore.core.privacy import _gaussian_delta, gaussian_mu_rho_for
from dpcore.exceptions import InvalidParameterError
from dpcore.mechanisms import coinpress as cp
from dpcore.mechanisms import get_mechanism

ALPHA = 1e-6


def _variance_pvalue(x: np.ndarray, sigma: float) -> float:
    stat = float(np.sum(np.square(x)) / sigma**2)
    cdf = stats.chi2.cdf(stat, df=x.size)
    return 2.0 * min(cdf, 1.0 - cdf)


def _unit_rows(n: int, d: int, seed: int, scales=None) -> np.ndarray:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * (np.ones(d) if scales is None else np.asarray(scales))
    return X / np.linalg.norm(X, axis=1).max()


def _expected_gram(X: np.ndarray, M: np.ndarray, radius: float) -> np.ndarray:
    """(1/n)Σ clip(Mx)clip(Mx)ᵀ, written out row by row (independent of the module's vectorised version)."""
    out = np.zeros((X.shape[1], X.shape[1]))
    for x in X:
        w = M @ x
        norm = np.linalg.norm(w)
        if norm > radius:
            w = w * (radius / norm)
        out += np.outer(w, w)
    return out / X.shape[0]


# --------------------------------------------------------------------------------------------------
# the law of one step's noise
# --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("radius", [0.8, 3.0])  # 0.8: most preconditioned rows are clipped; 3.0: none is
def test_step_noise_has_the_exact_law(radius):
    n, d, rho = 50, 4, 0.05
    X = _unit_rows(n, d, 1)
    M = np.array([[2.0, 0.3, 0.0, 0.0], [0.0, 1.5, 0.0, 0.2], [0.1, 0.0, 1.0, 0.0], [0.0, 0.0, 0.4, 2.5]])
    gram = _expected_gram(X, M, radius)
    sigma = math.sqrt(2.0) * radius**2 / n / math.sqrt(2.0 * rho)  # Δ = √2·r²/n, σ = Δ/√(2ρ)
    rng = np.random.default_rng(11)
    draws = []
    for _ in range(4000):
        noisy, s, _ = cp.noisy_step(X, M, rho, radius, rng)
        assert s == pytest.approx(sigma, rel=1e-12)
        draws.append(noisy - gram)
    E = np.stack(draws)
    assert np.allclose(E, np.swapaxes(E, 1, 2))  # symmetric
    diag = E[:, np.arange(d), np.arange(d)].ravel()
    off = E[:, *np.triu_indices(d, 1)].ravel()
    for x in (diag, off):
        assert _variance_pvalue(x, sigma) > ALPHA
        assert stats.kstest(x / sigma, stats.norm.cdf).pvalue > ALPHA
        assert abs(x.mean()) / (sigma / math.sqrt(x.size)) < stats.norm.isf(ALPHA / 2)
    # upper-triangle entries uncorrelated (two pairs checked; |r|·√N ~ N(0, 1))
    for a, b in ((0, 1), (0, 4)):
        r = np.corrcoef(E[:, *np.triu_indices(d)][:, a], E[:, *np.triu_indices(d)][:, b])[0, 1]
        assert abs(r) * math.sqrt(E.shape[0]) < stats.norm.isf(ALPHA / 2)
    # power: σ × 1.1 is rejected by the same test
    assert _variance_pvalue(off, 1.1 * sigma) < ALPHA


def test_the_authors_orientation_multiplies_by_m_not_its_transpose():
    X = _unit_rows(30, 3, 2)
    M = np.array([[1.0, 2.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    a, _, _ = cp.noisy_step(X, M, 1e20, 10.0, np.random.default_rng(0))
    b, _, _ = cp.noisy_step(X, M, 1e20, 10.0, np.random.default_rng(0), as_in_authors_code=True)
    np.testing.assert_allclose(a, _expected_gram(X, M, 10.0), atol=1e-9)
    np.testing.assert_allclose(b, _expected_gram(X, M.T, 10.0), atol=1e-9)


# --------------------------------------------------------------------------------------------------
# sensitivity and the public clip radii
# --------------------------------------------------------------------------------------------------

def test_step_sensitivity_is_attained_and_never_exceeded_on_replace_one_neighbours():
    """Δ = √2·r²/n bounds the upper triangle's move when one row is replaced; w ⊥ w′ at the radius attains it."""
    n, d, rho, radius = 40, 3, 0.1, 1.5
    M = np.diag([3.0, 2.0, 2.5])
    X = _unit_rows(n, d, 3)
    delta_claimed = cp.step_sigma(radius, rho, n) * math.sqrt(2.0 * rho)
    worst = 0.0
    candidates = [np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0]), *_unit_rows(200, d, 5)]
    for j in range(5):
        for x_new in candidates:
            Y = X.copy()
            X0 = X.copy()
            X0[j], Y[j] = candidates[0], x_new  # the pair differs in row j only
            diff = cp.clipped_gram(X0 @ M.T, radius)[0] - cp.clipped_gram(Y @ M.T, radius)[0]
            worst = max(worst, float(np.linalg.norm(diff[np.triu_indices(d)])))
    assert worst <= delta_claimed * (1 + 1e-12)
    assert worst == pytest.approx(delta_claimed, rel=1e-9)  # e₁ vs e₂ (both clipped to r, orthogonal) attain it


def test_clip_radii_are_functions_of_the_settings_and_the_earlier_private_outputs():
    """r₁ = min(γ, λ^{-1/2}) for every data set; rᵢ₊₁ = min(γ, ‖(Zᵢ + ηI)^{-1/2}Mᵢ‖₂) from the released Zᵢ."""
    n, d, lam = 600, 4, 0.04
    gamma, eta = cp.tail_radius(d), cp.regulariser(d, n)
    rhos = (0.1, 0.1, 0.1, 0.5)
    radii_first = set()
    for seed in range(3):
        X = _unit_rows(n, d, 10 + seed, scales=[1.0, 0.5, 0.2, 0.05])
        res = cp.coinpress_covariance(X, rhos, lam, np.random.default_rng(seed))
        radii_first.add(res.radii[0])
        M = np.eye(d) / math.sqrt(lam)
        for i, Z in enumerate(res.step_outputs[:-1]):
            w, V = np.linalg.eigh(Z + eta * np.eye(d))
            M = (V / np.sqrt(w)) @ V.T @ M
            assert res.radii[i + 1] == pytest.approx(min(gamma, np.linalg.norm(M, 2)), rel=1e-9)
    assert radii_first == {min(gamma, 1 / math.sqrt(lam))}


def test_the_norm_bound_caps_the_first_radius_and_nothing_is_clipped_there():
    X = _unit_rows(500, 6, 6)
    res = cp.coinpress_covariance(X, (0.2, 0.6), 1.0, np.random.default_rng(0))
    assert res.radii[0] == 1.0 < cp.tail_radius(6)  # ‖x‖ ≤ 1 and M₁ = I: r₁ = 1, not γ ≈ 4.5
    assert res.clipped_rows[0] == 0


def test_tail_radius_matches_the_authors_constant():
    assert cp.tail_radius(10) == pytest.approx(math.sqrt(10 + 2 * math.sqrt(10 * math.log(10)) + 2 * math.log(10)))
    assert cp.regulariser(10, 8000) == pytest.approx(0.5 * (2 * math.sqrt(10 / 8000) + 10 / 8000))


# --------------------------------------------------------------------------------------------------
# the budget
# --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("steps", "expected"), [
    (1, (1.0,)), (2, (1 / 4, 3 / 4)), (3, (1 / 8, 1 / 8, 3 / 4)), (4, (1 / 12,) * 3 + (3 / 4,)),
    (5, (1 / 16,) * 4 + (3 / 4,))])  # the authors' Ps1…Ps5 (cov_estimation.py)
def test_budget_split_is_the_authors(steps, expected):
    shares = cp.budget_split(steps)
    assert shares == pytest.approx(expected, rel=1e-15) and math.fsum(shares) == pytest.approx(1.0, abs=1e-15)


@pytest.mark.parametrize("bad", [0, cp.MAX_STEPS + 1, 2.5, True, "3"])
def test_budget_split_refuses_bad_step_counts(bad):
    with pytest.raises(InvalidParameterError, match="steps"):
        cp.budget_split(bad)


@pytest.mark.parametrize(("epsilon", "delta", "steps"), [(1.0, 1e-5, 3), (0.1, 1e-8, 1), (8.0, 1e-6, 5)])
def test_steps_compose_to_exactly_the_budget(epsilon, delta, steps):
    """Σ(Δᵢ/σᵢ)² = 2ρ with ρ = gaussian_mu_rho_for(ε, δ), and one Gaussian with Δ/σ = √(2ρ) has δ(ε) = δ."""
    X = _unit_rows(800, 5, 7)
    rel = get_mechanism("coinpress").release(X, 2, epsilon, delta, random_state=1, steps=steps)
    diag = rel.diagnostics
    rho = gaussian_mu_rho_for(epsilon, delta)
    assert diag["rho"] == pytest.approx(rho)
    assert diag["rho_steps"] == pytest.approx([s * rho for s in cp.budget_split(steps)])
    n = X.shape[0]
    mu2 = sum((math.sqrt(2.0) * r**2 / n / s) ** 2 for r, s in zip(diag["radii"], diag["sigmas"], strict=True))
    assert mu2 == pytest.approx(2.0 * rho, rel=1e-9)
    assert _gaussian_delta(1.0 / math.sqrt(mu2), epsilon, 1.0) == pytest.approx(delta, rel=1e-6)
    # the ledger: one entry carrying (ε, δ), its note listing ρ and every ρᵢ
    assert len(rel.ledger) == 1 and rel.budget_spent == pytest.approx((epsilon, delta))
    note = rel.ledger[0].note
    assert f"ρ = {rho:.4g}" in note and all(f"{r:.4g}" in note for r in diag["rho_steps"])


def test_release_is_the_core_function_at_the_converted_rho():
    X = _unit_rows(700, 4, 8)
    rel = get_mechanism("coinpress").release(X, 2, 2.0, 1e-6, random_state=np.random.default_rng(3), steps=4,
                                             prior_upper=0.5)
    rho = gaussian_mu_rho_for(2.0, 1e-6)
    res = cp.coinpress_covariance(X, tuple(s * rho for s in cp.budget_split(4)), 0.5, np.random.default_rng(3))
    np.testing.assert_allclose(rel.covariance, X.shape[0] * res.covariance, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(rel.covariance, rel.covariance.T)


def test_more_budget_gets_closer_to_the_second_moment():
    X = _unit_rows(3000, 5, 9, scales=[1.0, 0.7, 0.4, 0.2, 0.1])
    C = X.T @ X
    errs = []
    for eps in (0.3, 3.0, 30.0):
        rels = [get_mechanism("coinpress").release(X, 2, eps, 1e-6, random_state=s) for s in range(5)]
        errs.append(np.median([np.linalg.norm(r.covariance - C) / np.linalg.norm(C) for r in rels]))
    assert errs[0] > errs[1] > errs[2] and errs[2] < 0.05


# --------------------------------------------------------------------------------------------------
# settings and the proof's domain
# --------------------------------------------------------------------------------------------------

def test_add_remove_is_refused_with_the_reason():
    with pytest.raises(InvalidParameterError, match="neighbouring"):
        get_mechanism("coinpress").release(_unit_rows(50, 3, 0), 1, 1.0, 1e-5, neighbouring="add_remove")
    assert "replace-one only" in get_mechanism("coinpress").domain


@pytest.mark.parametrize(("option", "value"), [("steps", 0), ("steps", 11), ("prior_upper", 0.0),
                                               ("prior_upper", 1.5), ("prior_upper", float("nan"))])
def test_bad_options_are_refused_naming_the_option(option, value):
    with pytest.raises(InvalidParameterError, match=option):
        get_mechanism("coinpress").release(_unit_rows(50, 3, 0), 1, 1.0, 1e-5, **{option: value})


@pytest.mark.parametrize(("epsilon", "delta", "d", "k"), [(50.0, 1e-5, 4, 4), (0.01, 1e-12, 3, 1), (1.0, 1e-5, 1, 1)])
def test_extremes_of_the_domain_release_a_finite_psd_covariance(epsilon, delta, d, k):
    rel = get_mechanism("coinpress").release(_unit_rows(200, d, 1), k, epsilon, delta, random_state=0, steps=3)
    assert np.isfinite(rel.covariance).all() and rel.subspace.shape == (d, k)
    assert np.linalg.eigvalsh(rel.covariance_post).min() >= -1e-9
