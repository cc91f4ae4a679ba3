"""Calibration formulas against the reference values of spec Appendix A, plus their validation errors."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from dpcore.core.privacy import (
    SCORE_SENSITIVITY,
    gaussian_sigma,
    gaussian_sigma_analytic,
    gaussian_sigma_classical,
    l1_sensitivity_eigenvalues,
    l1_sensitivity_upper_triangle,
    l2_sensitivity_projection,
    l2_sensitivity_upper_triangle,
    wishart_support_violation_probability,
    zcdp_epsilon,
    zcdp_rho,
)
from dpcore.exceptions import InvalidParameterError
from dpcore.mechanisms import get_mechanism
from dpcore.mechanisms.laplace import laplace_scale
from dpcore.mechanisms.mod_sulq import mod_sulq_beta
from dpcore.mechanisms.wishart_sheffet import sheffet_degrees_of_freedom

SQRT2 = math.sqrt(2.0)


def gaussian_delta_exact(sigma: float, epsilon: float, sensitivity: float) -> float:
    """Exact privacy profile of N(0, σ²) noise (Balle & Wang 2018, Thm 8), written independently with scipy."""
    a, b = sensitivity / (2 * sigma), epsilon * sigma / sensitivity
    return float(stats.norm.cdf(a - b) - math.exp(epsilon) * stats.norm.cdf(-a - b))


# --------------------------------------------------------------------------------------------------
# MOD-SULQ β (spec §3.1)
# --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("d", "n", "delta", "epsilon", "beta", "beta_star"),
    [
        (10, 5000, 0.05, 0.1, 0.0773751, 0.0767479),
        (10, 5000, 0.05, 1.0, 0.00787427, 0.00767947),
        (116, 494021, 0.01, 0.1, 0.0118522, None),
    ],
)
def test_mod_sulq_beta_reference_values(d, n, delta, epsilon, beta, beta_star):
    assert mod_sulq_beta(d, n, epsilon, delta) == pytest.approx(beta, rel=1e-5)
    if beta_star is not None:
        assert mod_sulq_beta(d, n, epsilon, delta, exact=True) == pytest.approx(beta_star, rel=1e-5)


@pytest.mark.parametrize(("d", "n", "epsilon", "delta"), [(10, 5000, 0.1, 0.05), (116, 494021, 0.1, 0.01),
                                                          (3, 50, 2.0, 1e-6), (200, 1000, 0.5, 1e-5)])
def test_mod_sulq_exact_beta_is_the_root_of_the_privacy_condition(d, n, epsilon, delta):
    """β* is the positive root of nε·β² − p·β − 1/n = 0, p = (d+1)√(2L); eq. (5) relaxes it upwards."""
    L = math.log((d * d + d) / (2 * delta * math.sqrt(2 * math.pi)))
    p = (d + 1) * math.sqrt(2 * L)
    b_star = mod_sulq_beta(d, n, epsilon, delta, exact=True)
    b = mod_sulq_beta(d, n, epsilon, delta)
    assert n * epsilon * b_star**2 - p * b_star - 1 / n == pytest.approx(0.0, abs=1e-12 * max(1.0, p * b_star))
    assert b_star <= b
    assert b == pytest.approx(p / (n * epsilon) + 1 / (n * math.sqrt(epsilon)), rel=1e-12)


def test_mod_sulq_beta_validates():
    with pytest.raises(InvalidParameterError, match="delta"):
        mod_sulq_beta(10, 100, 1.0, 0.0)
    with pytest.raises(InvalidParameterError, match="epsilon"):
        mod_sulq_beta(10, 100, 0.0, 0.1)
    with pytest.raises(InvalidParameterError):
        mod_sulq_beta(0, 100, 1.0, 0.1)


# --------------------------------------------------------------------------------------------------
# Gaussian calibration (spec §3.2)
# --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("sens", "epsilon", "delta", "sigma"), [(1.0, 1.0, 1e-5, 4.84481), (1.0, 0.5, 0.01, 6.21502)])
def test_classical_gaussian_sigma(sens, epsilon, delta, sigma):
    assert gaussian_sigma_classical(epsilon, delta, sens) == pytest.approx(sigma, rel=1e-5)
    assert gaussian_sigma(epsilon, delta, sens, "classical") == pytest.approx(sigma, rel=1e-5)
    # the classical σ is (ε, δ)-DP (ε ≤ 1): its exact δ is at most the target
    assert gaussian_delta_exact(sigma, epsilon, sens) <= delta


@pytest.mark.parametrize(
    ("sens", "epsilon", "delta", "sigma"),
    [(1.0, 1.0, 1e-5, 3.73063), (SQRT2, 1.0, 1e-5, 5.27591), (1.0, 4.0, 1e-10, 1.57532)],
)
def test_analytic_gaussian_sigma_reference_values(sens, epsilon, delta, sigma):
    assert gaussian_sigma_analytic(epsilon, delta, sens) == pytest.approx(sigma, rel=1e-5)
    assert gaussian_sigma(epsilon, delta, sens) == pytest.approx(sigma, rel=1e-5)  # analytic is the default


@pytest.mark.parametrize(
    ("sens", "epsilon", "delta"),
    list(itertools.product([1.0, SQRT2, 3.0], [0.05, 0.5, 1.0, 3.0, 10.0], [1e-3, 1e-6, 1e-10])),
)
def test_analytic_sigma_hits_the_exact_privacy_profile(sens, epsilon, delta):
    sigma = gaussian_sigma_analytic(epsilon, delta, sens)
    assert gaussian_delta_exact(sigma, epsilon, sens) == pytest.approx(delta, rel=1e-6)
    # smallest such σ: 1 % less noise violates the target; δ(σ) is decreasing in σ
    assert gaussian_delta_exact(0.99 * sigma, epsilon, sens) > delta
    assert gaussian_delta_exact(1.01 * sigma, epsilon, sens) < delta
    # linear in the sensitivity
    assert sigma == pytest.approx(sens * gaussian_sigma_analytic(epsilon, delta, 1.0), rel=1e-9)
    if epsilon <= 1.0:  # the classical bound is never tighter than the exact one
        assert gaussian_sigma_classical(epsilon, delta, sens) >= sigma


def test_classical_gaussian_refuses_epsilon_above_one():
    with pytest.raises(InvalidParameterError, match="analytic"):
        gaussian_sigma_classical(1.5, 1e-5)
    with pytest.raises(InvalidParameterError, match="epsilon <= 1"):
        gaussian_sigma(2.0, 1e-5, 1.0, "classical")
    assert gaussian_sigma_classical(1.0, 1e-5) > 0  # ε = 1 is allowed


@pytest.mark.parametrize("fn", [gaussian_sigma_classical, gaussian_sigma_analytic])
@pytest.mark.parametrize(
    ("epsilon", "delta", "sens", "match"),
    [
        (0.0, 1e-5, 1.0, "epsilon"),
        (-1.0, 1e-5, 1.0, "epsilon"),
        (float("nan"), 1e-5, 1.0, "epsilon"),
        (float("inf"), 1e-5, 1.0, "epsilon"),
        ("1", 1e-5, 1.0, "epsilon"),
        (0.5, 0.0, 1.0, "delta"),
        (0.5, 1.0, 1.0, "delta"),
        (0.5, -1e-5, 1.0, "delta"),
        (0.5, 1.5, 1.0, "delta"),
        (0.5, 1e-5, 0.0, "l2_sensitivity"),
        (0.5, 1e-5, -1.0, "l2_sensitivity"),
    ],
)
def test_gaussian_calibration_validates(fn, epsilon, delta, sens, match):
    with pytest.raises(InvalidParameterError, match=match):
        fn(epsilon, delta, sens)


def test_gaussian_sigma_unknown_calibration():
    with pytest.raises(InvalidParameterError, match="calibration"):
        gaussian_sigma(1.0, 1e-5, 1.0, "magic")


def test_zero_delta_error_suggests_a_value():
    with pytest.raises(InvalidParameterError, match=r"delta must be > 0.*try delta=1e-5"):
        gaussian_sigma_analytic(1.0, 0.0)


# --------------------------------------------------------------------------------------------------
# zCDP (spec §1.4)
# --------------------------------------------------------------------------------------------------

def test_zcdp_reference_value_and_ppm_sigma():
    rho = zcdp_rho(1.0, 1e-5)
    assert rho == pytest.approx(0.0208199, rel=1e-5)
    # corrected PPM: L = 20 Gaussian releases of sensitivity √2, each Δ²/(2σ²)-zCDP, total ρ
    L, sens = 20, SQRT2
    sigma = sens * math.sqrt(L / (2 * rho))
    assert sigma == pytest.approx(30.9938, rel=1e-5)


@pytest.mark.parametrize(("epsilon", "delta"), list(itertools.product([0.01, 0.5, 1.0, 8.0], [1e-2, 1e-5, 1e-12])))
def test_zcdp_conversion_round_trip(epsilon, delta):
    rho = zcdp_rho(epsilon, delta)
    assert rho > 0
    assert zcdp_epsilon(rho, delta) == pytest.approx(epsilon, rel=1e-10)
    assert zcdp_epsilon(1.01 * rho, delta) > epsilon  # ρ is the largest admissible value


def test_zcdp_validates():
    with pytest.raises(InvalidParameterError, match="delta"):
        zcdp_rho(1.0, 0.0)
    with pytest.raises(InvalidParameterError, match="epsilon"):
        zcdp_rho(0.0, 1e-5)
    with pytest.raises(InvalidParameterError, match="rho"):
        zcdp_epsilon(-0.1, 1e-5)
    assert zcdp_epsilon(0.0, 1e-5) == 0.0


# --------------------------------------------------------------------------------------------------
# Sheffet degrees of freedom (spec §3.11)
# --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("epsilon", "delta", "m14", "m28"),
    [(1.0, 1e-5, 180, 361), (0.5, 1e-5, 722, 1444), (1.0, 1e-3, 116, 232), (2.0, 1e-5, 45, 90),
     (0.1, 1e-3, 11611, 23223)],
)
def test_sheffet_degrees_of_freedom(epsilon, delta, m14, m28):
    # the spec's table uses the floor of the public implementation ...
    assert math.floor(14 * math.log(4 / delta) / epsilon**2) == m14
    assert math.floor(28 * math.log(4 / delta) / epsilon**2) == m28
    # ... dpcore rounds up (never fewer degrees of freedom than the bound asks for); none of these is an integer
    for d in (1, 10, 50):
        assert sheffet_degrees_of_freedom(d, epsilon, delta) == d + m28 + 1
        assert sheffet_degrees_of_freedom(d, epsilon, delta, constant=14.0) == d + m14 + 1
        assert sheffet_degrees_of_freedom(d, epsilon, delta, 28.0) == d + math.ceil(
            28 * math.log(4 / delta) / epsilon**2)


def test_sheffet_degrees_of_freedom_decrease_with_budget():
    assert sheffet_degrees_of_freedom(5, 2.0, 1e-5) < sheffet_degrees_of_freedom(5, 1.0, 1e-5)
    assert sheffet_degrees_of_freedom(5, 1.0, 1e-3) < sheffet_degrees_of_freedom(5, 1.0, 1e-5)


# --------------------------------------------------------------------------------------------------
# Invalid Wishart counterexamples (spec §3.9, §3.10)
# --------------------------------------------------------------------------------------------------

EPS = (0.1, 0.5, 1.0, 2.0)


@pytest.mark.parametrize(
    ("mechanism", "options", "table", "formula"),
    [
        ("sn_imtiaz", {}, (0.0952, 0.3935, 0.6321, 0.8647), lambda e: 1 - math.exp(-e)),
        ("sn_imtiaz", {"variant": "paper"}, (0.0952, 0.3935, 0.6321, 0.8647), lambda e: 1 - math.exp(-e)),
        ("sn_imtiaz", {"variant": "code"}, (0.0198, 0.3935, 0.8647, 0.9997), lambda e: 1 - math.exp(-2 * e * e)),
        ("wishart_jiang", {}, (0.0328, 0.1535, 0.2835, 0.4866), lambda e: 1 - math.exp(-e / 3)),
    ],
)
def test_counterexample_delta_tables(mechanism, options, table, formula):
    mech = get_mechanism(mechanism)
    for eps, expected in zip(EPS, table):
        value = mech.counterexample_delta(eps, options)
        assert value == pytest.approx(expected, abs=5e-5)
        assert value == pytest.approx(formula(eps), rel=1e-12)
        assert mech.noise_scale(eps, options) > 0


def test_support_violation_probability_formula():
    # scale s: 1 − e^{−1/(2s)}
    assert wishart_support_violation_probability(0.5) == pytest.approx(1 - math.exp(-1), rel=1e-12)
    assert wishart_support_violation_probability(1.5) == pytest.approx(1 - math.exp(-1 / 3), rel=1e-12)
    assert wishart_support_violation_probability(1e-9) == pytest.approx(1.0)
    assert wishart_support_violation_probability(1e12) == pytest.approx(0.5e-12, rel=1e-6)  # no cancellation
    with pytest.raises(InvalidParameterError):
        wishart_support_violation_probability(0.0)


def test_valid_mechanisms_have_no_counterexample_delta():
    for mid in ("mod_sulq", "analyze_gauss", "laplace", "wishart_sheffet", "pca", "random"):
        assert get_mechanism(mid).counterexample_delta(1.0) is None


# --------------------------------------------------------------------------------------------------
# Laplace scale (spec §3.3)
# --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("d", [1, 10, 57])
@pytest.mark.parametrize("epsilon", [0.1, 1.0, 3.0])
def test_laplace_scale(d, epsilon):
    assert laplace_scale(d, epsilon) == pytest.approx(2 * d / epsilon)  # the paper default, replace-one
    assert laplace_scale(d, epsilon, "replace", "paper") == pytest.approx(2 * d / epsilon)
    assert laplace_scale(d, epsilon, "add_remove", "paper") == pytest.approx(d / epsilon)
    assert laplace_scale(d, epsilon, "replace", "tight") == pytest.approx((d + 1) / epsilon)
    assert laplace_scale(d, epsilon, "add_remove", "tight") == pytest.approx((d + 1) / (2 * epsilon))
    # the tight bound is never looser than the paper's (equal only at d = 1)
    assert laplace_scale(d, epsilon, "replace", "tight") <= laplace_scale(d, epsilon, "replace", "paper")


# --------------------------------------------------------------------------------------------------
# Sensitivities (spec §1.2), checked by brute force over random and extremal neighbours
# --------------------------------------------------------------------------------------------------

def test_sensitivity_values():
    assert l2_sensitivity_upper_triangle("replace") == pytest.approx(SQRT2)
    assert l2_sensitivity_upper_triangle("add_remove") == 1.0
    assert l2_sensitivity_upper_triangle() == pytest.approx(SQRT2)
    for d in (1, 5, 30):
        assert l1_sensitivity_upper_triangle(d, "replace") == d + 1
        assert l1_sensitivity_upper_triangle(d, "add_remove") == (d + 1) / 2
    assert l1_sensitivity_eigenvalues("replace") == 2.0
    assert l1_sensitivity_eigenvalues("add_remove") == 1.0
    assert l2_sensitivity_projection("replace") == pytest.approx(SQRT2)
    assert l2_sensitivity_projection("add_remove") == 1.0
    assert SCORE_SENSITIVITY == 1.0
    with pytest.raises(InvalidParameterError, match="neighbouring"):
        l2_sensitivity_upper_triangle("swap")


def _unit_ball(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    """Points in the unit ball, half of them on the sphere, a few sparse (where the L1 bounds are nearly tight)."""
    x = rng.standard_normal((n, d))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    x[: n // 2] *= rng.random((n // 2, 1))
    x[-5:] = np.sign(x[-5:]) / math.sqrt(d)
    return x


def test_sensitivities_bound_every_neighbour_pair_and_are_attained():
    d = 6
    rng = np.random.default_rng(0)
    iu = np.triu_indices(d)
    xs, ys = _unit_ball(rng, 400, d), _unit_ball(rng, 400, d)
    C = rng.standard_normal((d, d))
    C = C @ C.T
    V = np.linalg.qr(rng.standard_normal((d, 3)))[0]
    worst = dict.fromkeys(("l2_rep", "l2_ar", "l1_rep", "l1_ar", "eig", "proj", "score"), 0.0)
    for x, y in zip(xs, ys):
        D = np.outer(x, x) - np.outer(y, y)  # replace-one
        A = np.outer(x, x)  # add/remove-one
        worst["l2_rep"] = max(worst["l2_rep"], float(np.linalg.norm(D[iu])))
        worst["l2_ar"] = max(worst["l2_ar"], float(np.linalg.norm(A[iu])))
        worst["l1_rep"] = max(worst["l1_rep"], float(np.abs(D[iu]).sum()))
        worst["l1_ar"] = max(worst["l1_ar"], float(np.abs(A[iu]).sum()))
        lam = np.linalg.eigvalsh(C + np.outer(x, x))
        lam2 = np.linalg.eigvalsh(C + np.outer(y, y))
        worst["eig"] = max(worst["eig"], float(np.abs(lam - lam2).sum()))
        worst["proj"] = max(worst["proj"], float(np.linalg.norm(D @ V)))
        u = V[:, 0]
        worst["score"] = max(worst["score"], abs(float(u @ D @ u)))
    tol = 1e-12
    assert worst["l2_rep"] <= l2_sensitivity_upper_triangle("replace") + tol
    assert worst["l2_ar"] <= l2_sensitivity_upper_triangle("add_remove") + tol
    assert worst["l1_rep"] <= l1_sensitivity_upper_triangle(d, "replace") + tol
    assert worst["l1_ar"] <= l1_sensitivity_upper_triangle(d, "add_remove") + tol
    assert worst["eig"] <= l1_sensitivity_eigenvalues("replace") + tol
    assert worst["proj"] <= l2_sensitivity_projection("replace") + tol
    assert worst["score"] <= SCORE_SENSITIVITY + tol

    e = np.eye(d)
    # attained: L2 at x = e1, x' = e2; add/remove L1 at x = 1/√d; eigenvalues with C = diag(0, 5, 0, ...)
    D = np.outer(e[0], e[0]) - np.outer(e[1], e[1])
    assert np.linalg.norm(D[iu]) == pytest.approx(SQRT2)
    assert np.linalg.norm(D @ e[:, :2]) == pytest.approx(SQRT2)
    ones = np.ones(d) / math.sqrt(d)
    assert np.abs(np.outer(ones, ones)[iu]).sum() == pytest.approx((d + 1) / 2)
    C0 = np.diag([0.0, 5.0] + [0.0] * (d - 2))
    gap = np.abs(np.linalg.eigvalsh(C0 + np.outer(e[0], e[0])) - np.linalg.eigvalsh(C0 + np.outer(e[1], e[1])))
    assert gap.sum() == pytest.approx(2.0)
    # the papers' loose L1 bound 2d is indeed ≥ the tight one
    assert 2 * d >= l1_sensitivity_upper_triangle(d, "replace")
