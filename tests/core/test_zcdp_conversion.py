"""The zCDP → (ε, δ) conversions: Canonne–Kamath–Steinke's tight bound, its inverse, and the exact Gaussian ρ."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpcore.core.privacy import (
    _gaussian_delta,
    gaussian_mu_rho_for,
    zcdp_delta,
    zcdp_epsilon,
    zcdp_rho,
    zcdp_rho_for,
)

CASES = [(0.01, 0.1), (0.125, 1.0), (0.5, 2.0), (1.0, 5.0), (3.0, 10.0), (1e-4, 0.05)]


def _cks_by_grid(rho: float, epsilon: float) -> float:
    """The CKS bound minimised over a dense grid of α (independent of the bisection)."""
    alpha = 1.0 + np.logspace(-8, 4, 400_001)
    log_delta = (alpha - 1) * (alpha * rho - epsilon) + alpha * np.log1p(-1 / alpha) - np.log(alpha - 1)
    return float(min(1.0, np.exp(log_delta.min())))


@pytest.mark.parametrize(("rho", "epsilon"), CASES)
def test_cks_delta_is_the_minimum_over_alpha(rho, epsilon):
    assert zcdp_delta(rho, epsilon) == pytest.approx(_cks_by_grid(rho, epsilon), rel=1e-6)


@pytest.mark.parametrize(("rho", "epsilon"), CASES)
def test_cks_delta_is_tighter_than_the_simple_bound_and_looser_than_one_gaussian(rho, epsilon):
    # ρ-zCDP ⇒ (ρ + 2√(ρ ln 1/δ), δ): at that ε the tight δ is no larger.
    delta = 1e-6
    assert zcdp_delta(rho, zcdp_epsilon(rho, delta)) <= delta * (1 + 1e-9)
    # A Gaussian mechanism with Δ/σ = √(2ρ) is ρ-zCDP, so its exact δ lies below the bound for every ρ-zCDP one.
    sigma = 1.0 / math.sqrt(2.0 * rho)
    assert _gaussian_delta(sigma, epsilon, 1.0) <= zcdp_delta(rho, epsilon) * (1 + 1e-9)


def test_cks_reference_value():
    # ρ = 0.5, ε = 3 (pinned; equal to the grid minimum to 1e-6). The simple bound needs ε ≈ 3.8 for this δ.
    assert zcdp_delta(0.5, 3.0) == pytest.approx(0.0051431841, rel=1e-6)
    assert zcdp_epsilon(0.5, 0.0051431841) > 3.0
    assert zcdp_delta(0.0, 1.0) == 0.0


@pytest.mark.parametrize(("epsilon", "delta"), [(0.1, 1e-6), (1.0, 1e-5), (5.0, 1e-8), (20.0, 1e-6)])
def test_rho_for_inverts_the_tight_delta(epsilon, delta):
    rho = zcdp_rho_for(epsilon, delta)
    assert zcdp_delta(rho, epsilon) <= delta
    assert zcdp_delta(rho * (1 + 1e-6), epsilon) > delta
    assert rho >= zcdp_rho(epsilon, delta)  # never worse than the simple conversion


@pytest.mark.parametrize(("epsilon", "delta"), [(0.1, 1e-6), (1.0, 1e-5), (5.0, 1e-8)])
def test_gaussian_rho_is_exact_and_at_least_the_zcdp_one(epsilon, delta):
    rho = gaussian_mu_rho_for(epsilon, delta)
    # One Gaussian with Δ/σ = √(2ρ) is exactly (ε, δ)-DP.
    assert _gaussian_delta(1.0 / math.sqrt(2.0 * rho), epsilon, 1.0) == pytest.approx(delta, rel=1e-6)
    assert rho >= zcdp_rho_for(epsilon, delta)
