"""Privacy vocabulary, budget ledger, sensitivities and noise calibration.

Conventions (spec §1): data rows satisfy ``‖x‖₂ ≤ 1`` after preprocessing (divide by the public bound B),
C = Σ xᵢxᵢᵀ is the unnormalised second-moment ("scatter") matrix, and the neighbouring relation is
``"replace"`` (replace one record; all five source papers) or ``"add_remove"``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from ..exceptions import InvalidParameterError
from ..vocabulary import GUARANTEE_LABELS, NEIGHBOURING_LABELS, Guarantee, Neighbouring  # noqa: F401 (re-exported)
from ._validation import check_delta, check_epsilon, check_neighbouring, check_positive

#: Guarantees a mechanism can declare, strongest first (:class:`~dpcore.vocabulary.Guarantee`); the labels are the
#: vocabulary's, re-exported here for the old import path.
GUARANTEES = tuple(Guarantee)


@dataclass(frozen=True)
class LedgerEntry:
    """One step of a privacy budget ledger.

    ``private=False`` marks a data-dependent step that is *not* differentially private (e.g. empirical
    centring); such a step voids the end-to-end guarantee and the UI shows it in red. ``rho`` is the step's exact
    zCDP cost where the mechanism knows it (a Gaussian step: Δ²/(2σ²); a step calibrated in zCDP: its ρ); the
    session odometer composes those in zCDP (:mod:`dpcore.core.odometer`). (ε, δ) stays the step's guarantee.
    """

    step: str
    epsilon: float = 0.0
    delta: float = 0.0
    private: bool = True
    note: str = ""
    rho: float | None = None

    def as_dict(self) -> dict:
        out = {"step": self.step, "epsilon": self.epsilon, "delta": self.delta,
               "private": self.private, "note": self.note}
        if self.rho is not None:
            out["rho"] = self.rho
        return out


class Diagnostics(dict):
    """Exact, data-dependent values that come with a release or a preprocessing step: NOT private.

    A plain mapping, kept apart from the private output so that nothing non-private is reachable through the
    private fields; :meth:`as_dict` labels it for JSON and the UI shows it under a "not private" heading.
    """

    private = False
    label = "non-private diagnostics (exact values computed from the data; do not publish)"

    def as_dict(self) -> dict:
        return {"private": False, "label": self.label, "values": jsonable(dict(self))}


def jsonable(x):
    """Numbers, arrays and nested containers as JSON-ready Python values (NaN/inf → None)."""
    if isinstance(x, dict):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return jsonable(x.tolist())
    if isinstance(x, (np.bool_, bool)):
        return bool(x)
    if isinstance(x, (np.integer, int)):
        return int(x)
    if isinstance(x, (np.floating, float)):
        return float(x) if math.isfinite(x) else None
    if x is None or isinstance(x, str):
        return x
    return str(x)


def ledger_total(entries: Iterable[LedgerEntry]) -> tuple[float, float]:
    """Basic composition (Σε, Σδ) of the private steps of a ledger."""
    eps = delta = 0.0
    for e in entries:
        eps += e.epsilon
        delta += e.delta
    return eps, delta


def ledger_is_private(entries: Iterable[LedgerEntry]) -> bool:
    """True when no step is flagged non-private."""
    return all(e.private for e in entries)


# --------------------------------------------------------------------------------------------------
# Sensitivities (spec §1.2), for rows with ‖x‖ ≤ 1. Multiply by B² for a bound B.
# --------------------------------------------------------------------------------------------------

def l2_sensitivity_upper_triangle(neighbouring: str = Neighbouring.REPLACE) -> float:
    """L2 sensitivity of the upper triangle (incl. diagonal) of C: √2 (replace) or 1 (add/remove)."""
    return math.sqrt(2.0) if check_neighbouring(neighbouring) == Neighbouring.REPLACE else 1.0


def l1_sensitivity_upper_triangle(d: int, neighbouring: str = Neighbouring.REPLACE) -> float:
    """Tight L1 sensitivity of the upper triangle of C: d+1 (replace) or (d+1)/2 (add/remove)."""
    return (d + 1.0) if check_neighbouring(neighbouring) == Neighbouring.REPLACE else (d + 1.0) / 2.0


def l1_sensitivity_eigenvalues(neighbouring: str = Neighbouring.REPLACE) -> float:
    """L1 sensitivity of the eigenvalue vector λ(C) (Lidskii): 2 (replace) or 1 (add/remove)."""
    return 2.0 if check_neighbouring(neighbouring) == Neighbouring.REPLACE else 1.0


def l2_sensitivity_projection(neighbouring: str = Neighbouring.REPLACE) -> float:
    """Frobenius sensitivity of (C − C')V for orthonormal V: √2 (replace) or 1 (add/remove)."""
    return math.sqrt(2.0) if check_neighbouring(neighbouring) == Neighbouring.REPLACE else 1.0


#: Sensitivity of the quadratic score uᵀCu (unit u) and of tr(VᵀCV): 1 under both relations.
SCORE_SENSITIVITY = 1.0


# --------------------------------------------------------------------------------------------------
# Gaussian mechanism calibration
# --------------------------------------------------------------------------------------------------

def gaussian_sigma_classical(epsilon: float, delta: float, l2_sensitivity: float = 1.0) -> float:
    """Classical calibration σ = Δ₂·√(2 ln(1.25/δ))/ε (Dwork–Roth Thm A.1; valid for ε ≤ 1)."""
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta, required=True)
    l2_sensitivity = check_positive(l2_sensitivity, "l2_sensitivity")
    if epsilon > 1.0:
        raise InvalidParameterError(
            f"the classical Gaussian calibration is only valid for epsilon <= 1 (got {epsilon:g}); "
            "use calibration='analytic'."
        )
    return l2_sensitivity * math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon


def _gaussian_delta(sigma: float, epsilon: float, l2_sensitivity: float) -> float:
    """Exact δ of the Gaussian mechanism (Balle & Wang 2018, Thm 8)."""
    a = l2_sensitivity / (2.0 * sigma)
    b = epsilon * sigma / l2_sensitivity
    # Φ(a − b) − e^ε Φ(−a − b), computed in log space for the second term.
    from scipy import special  # imported on use: `dpcore mechanisms` and --help stay fast

    first = special.ndtr(a - b)
    second = math.exp(epsilon + special.log_ndtr(-a - b))
    return first - second


def gaussian_sigma_analytic(epsilon: float, delta: float, l2_sensitivity: float = 1.0) -> float:
    """Smallest σ for which N(0, σ²) noise is (ε, δ)-DP (analytic Gaussian mechanism, Balle & Wang 2018).

    Valid for every ε > 0. Solved by root finding on the exact privacy profile (monotone in σ).
    """
    return _analytic_sigma(check_epsilon(epsilon), check_delta(delta, required=True),
                           check_positive(l2_sensitivity, "l2_sensitivity"))


@functools.lru_cache(maxsize=256)
def _analytic_sigma(epsilon: float, delta: float, l2_sensitivity: float) -> float:
    """:func:`gaussian_sigma_analytic` on validated public parameters (cached: a sweep asks for the same σ often)."""

    def excess(log_sigma: float) -> float:
        return _gaussian_delta(math.exp(log_sigma), epsilon, l2_sensitivity) - delta

    lo, hi = math.log(l2_sensitivity) - 20.0, math.log(l2_sensitivity) + 20.0
    while excess(lo) < 0:  # pragma: no cover - only for absurd inputs
        lo -= 20.0
    while excess(hi) > 0:  # a tiny ε with a tiny δ needs σ > e²⁰·Δ (ε = 1e-8, δ = 1e-100: σ ≈ 2e9·Δ)
        hi += 20.0
    from scipy import optimize

    log_sigma = optimize.brentq(excess, lo, hi, xtol=1e-13, rtol=1e-13, maxiter=500)
    return math.exp(log_sigma)


def gaussian_sigma(epsilon: float, delta: float, l2_sensitivity: float, calibration: str = "analytic") -> float:
    """Dispatch to the classical or analytic calibration."""
    if calibration == "analytic":
        return gaussian_sigma_analytic(epsilon, delta, l2_sensitivity)
    if calibration == "classical":
        return gaussian_sigma_classical(epsilon, delta, l2_sensitivity)
    raise InvalidParameterError(f"calibration must be 'analytic' or 'classical', got {calibration!r}.")


# --------------------------------------------------------------------------------------------------
# zCDP conversions (spec §1.4)
# --------------------------------------------------------------------------------------------------

def zcdp_rho(epsilon: float, delta: float) -> float:
    """Largest ρ such that ρ-zCDP implies (ε, δ)-DP: ρ = (√(ε + ln(1/δ)) − √(ln(1/δ)))²."""
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta, required=True)
    log_inv = math.log(1.0 / delta)
    return (math.sqrt(epsilon + log_inv) - math.sqrt(log_inv)) ** 2


def zcdp_epsilon(rho: float, delta: float) -> float:
    """ε such that ρ-zCDP implies (ε, δ)-DP: ρ + 2√(ρ ln(1/δ))."""
    rho = check_positive(rho, "rho", allow_zero=True)
    delta = check_delta(delta, required=True)
    return rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))


def zcdp_delta(rho: float, epsilon: float) -> float:
    """δ such that ρ-zCDP implies (ε, δ)-DP: the tight conversion of Canonne, Kamath & Steinke (2020, Cor. 13).

    δ = inf over α > 1 of exp((α−1)(αρ − ε)) / (α − 1) · (1 − 1/α)^α. Every α gives a valid bound; the optimum
    solves (2α − 1)ρ − ε + ln(1 − 1/α) = 0 (the derivative of the log), found by bisection. Never worse than the
    bound behind :func:`zcdp_epsilon`.
    """
    rho = check_positive(rho, "rho", allow_zero=True)
    epsilon = check_positive(epsilon, "epsilon", allow_zero=True)
    if rho == 0.0:
        return 0.0
    lo, hi = 1.0 + 1e-9, min((epsilon + 1.0) / (2.0 * rho) + 2.0, 1e300)  # any α > 1 gives a valid bound
    for _ in range(200):  # bisection on log(α − 1): the bracket spans up to ~1e300 when ρ is tiny
        alpha = 1.0 + math.sqrt(lo - 1.0) * math.sqrt(hi - 1.0)
        if (2.0 * alpha - 1.0) * rho - epsilon + math.log1p(-1.0 / alpha) < 0.0:
            lo = alpha
        else:
            hi = alpha
    alpha = hi
    log_delta = (alpha - 1.0) * (alpha * rho - epsilon) + alpha * math.log1p(-1.0 / alpha) - math.log(alpha - 1.0)
    return math.exp(log_delta) if log_delta < 0.0 else 1.0  # exp would overflow for a huge ρ


def _bisect(admissible, lo: float, hi: float, steps: int) -> tuple[float, float]:
    """Halve [lo, hi] ``steps`` times, keeping ``admissible`` false at one end and true at the other (which end is
    which is the caller's: ``admissible(lo)`` decides); returns the final (lo, hi)."""
    lo_ok = admissible(lo)
    for _ in range(steps):
        mid = 0.5 * (lo + hi)
        if admissible(mid) == lo_ok:
            lo = mid
        else:
            hi = mid
    return lo, hi


@functools.lru_cache(maxsize=256)
def _zcdp_rho_for(epsilon: float, delta: float) -> float:
    lo = zcdp_rho(epsilon, delta)  # the simple conversion's ρ is always admissible
    hi = max(2.0 * lo, 1e-300)
    while zcdp_delta(hi, epsilon) <= delta:
        lo, hi = hi, 2.0 * hi
    return _bisect(lambda rho: zcdp_delta(rho, epsilon) <= delta, lo, hi, 200)[0]  # the largest admissible ρ


def zcdp_rho_for(epsilon: float, delta: float) -> float:
    """Largest ρ whose ρ-zCDP implies (ε, δ)-DP by :func:`zcdp_delta` (bisection; ≥ :func:`zcdp_rho`).

    Use it for a mechanism composed in zCDP whose steps are not all Gaussian (e.g. a sparse-vector or exponential
    step); for one whose only noise is Gaussian, :func:`gaussian_mu_rho_for` is exact and larger.
    """
    return _zcdp_rho_for(check_epsilon(epsilon), check_delta(delta, required=True))


def zcdp_epsilon_tight(rho: float, delta: float) -> float:
    """The smallest ε at which ρ-zCDP implies (ε, δ)-DP by :func:`~dpcore.core.privacy.zcdp_delta` (Canonne, Kamath
    & Steinke 2020, Prop. 12), by bisection on ε (δ(ρ, ε) decreases in ε); at most :func:`zcdp_epsilon`. Returned
    from above: δ(ρ, ε) ≤ δ holds at the ε returned."""
    high = zcdp_epsilon(rho, delta)  # valid: the tight δ there is at most δ
    if rho == 0.0 or zcdp_delta(rho, 0.0) <= delta:  # a tiny ρ: (0, δ)-DP already
        return 0.0
    return _bisect(lambda eps: zcdp_delta(rho, eps) <= delta, 0.0, high, 100)[1]  # the smallest admissible ε


def gaussian_mu_rho_for(epsilon: float, delta: float) -> float:
    """Largest ρ for a composition of Gaussian mechanisms (ρ = Σ Δᵢ²/(2σᵢ²)) that is (ε, δ)-DP — exactly.

    Adaptive composition of Gaussian mechanisms is μ-GDP with μ² = Σ (Δᵢ/σᵢ)² = 2ρ (Dong, Roth & Su 2022,
    Cor. 3.3), and μ-GDP is (ε, δ)-DP exactly when one Gaussian mechanism with Δ/σ = μ is (Balle & Wang 2018):
    ρ = 1/(2σ₁²) with σ₁ the analytic σ for Δ = 1.
    """
    return gaussian_rho(epsilon, delta)


def gaussian_rho(epsilon: float, delta: float, calibration: str = "analytic") -> float:
    """ρ = Δ²/(2σ²) of a Gaussian mechanism calibrated to (ε, δ) (σ for Δ = 1: the calibrations are scale-free)."""
    sigma = gaussian_sigma(epsilon, delta, 1.0, calibration)
    return 1.0 / (2.0 * sigma * sigma)


# --------------------------------------------------------------------------------------------------
# Counterexample lower bounds for the invalid Wishart mechanisms (spec §3.9, §3.10)
# --------------------------------------------------------------------------------------------------

def wishart_support_violation_probability(scale: float) -> float:
    """P(Y − C' is not PD) for Y = C + W, W ~ W_d(scale·I, d+1), C' − C = uuᵀ with unit u.

    uᵀW⁻¹u·scale ~ 1/χ²₂, so the event {uᵀW⁻¹u ≥ 1} has probability P(χ²₂ ≤ 1/scale) = 1 − e^{−1/(2·scale)}.
    """
    scale = check_positive(scale, "scale")
    return -math.expm1(-1.0 / (2.0 * scale))
