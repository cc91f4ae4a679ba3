"""Review of the zCDP conversions at the edges of their domain: every answer is a number, and a valid bound.

Before: zcdp_delta overflowed for a huge ρ (exp of (α−1)(αρ−ε)) and, for a tiny ρ, its linear bisection over
[1, (ε+1)/(2ρ)] had not converged after 200 halvings (an α ~1e239 overflowed; ρ subnormal gave NaN);
gaussian_sigma_analytic's bracket stopped at σ = e²⁰·Δ, so a tiny ε with a tiny δ raised scipy's ValueError.
"""

from __future__ import annotations

import math

import pytest

from dpcore.core.privacy import _gaussian_delta, gaussian_mu_rho_for, gaussian_sigma_analytic, zcdp_delta, zcdp_rho_for


def _gaussian_delta_at_rho(rho: float, epsilon: float) -> float:
    """Exact δ(ε) of one Gaussian mechanism with Δ/σ = √(2ρ): a ρ-zCDP mechanism, so a floor for any valid bound."""
    return max(0.0, _gaussian_delta(1.0 / math.sqrt(2.0 * rho), epsilon, 1.0))


@pytest.mark.parametrize(("rho", "epsilon"), [(1e20, 1.0), (1e300, 1.0), (40.0, 0.0), (1e-300, 0.0),
                                              (1e-300, 1e-6), (1e-320, 1.0), (5e-324, 0.0), (1e-60, 1e-20)])
def test_zcdp_delta_is_a_valid_bound_at_extreme_rho(rho, epsilon):
    delta = zcdp_delta(rho, epsilon)
    assert 0.0 <= delta <= 1.0  # a number: no OverflowError, no NaN
    if rho > 1e-300:
        assert delta >= _gaussian_delta_at_rho(rho, epsilon) * (1 - 1e-9)


def test_zcdp_delta_for_a_tiny_rho_is_the_optimum_not_a_loose_alpha():
    # ε = 0, ρ = 1e-300: one Gaussian with μ = √(2ρ) has δ(0) = 2Φ(μ/2) − 1 ≈ μ/√(2π) ≈ 5.6e-151; the CKS bound's
    # optimum α ≈ 1/√(2ρ) gives 8.6e-151. The linear bisection stopped at α ~ 1e239 (OverflowError).
    floor = math.erf(math.sqrt(2e-300) / (2 * math.sqrt(2)))  # 2Φ(μ/2) − 1, without the cancellation
    assert floor <= zcdp_delta(1e-300, 0.0) <= 2 * floor


@pytest.mark.parametrize(("epsilon", "delta"), [(1e-8, 1e-100), (1e-8, 1e-300), (1e-300, 0.5)])
def test_conversions_answer_for_a_tiny_epsilon(epsilon, delta):
    sigma = gaussian_sigma_analytic(epsilon, delta, 1.0)
    # (the profile's two terms cancel to ~1e-11 here: its own rounding is ~1e-4 of δ)
    assert _gaussian_delta(sigma, epsilon, 1.0) <= delta * (1 + 1e-3)
    rho_g = gaussian_mu_rho_for(epsilon, delta)
    rho = zcdp_rho_for(epsilon, delta)
    assert 0.0 < rho <= rho_g * (1 + 1e-9)
    assert zcdp_delta(rho, epsilon) <= delta
