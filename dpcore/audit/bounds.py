"""Confidence bounds of an audit: Clopper–Pearson intervals, the ε lower bound and the δ lower bound.

For an (ε, δ)-DP mechanism M, neighbours D, D′ and any event S on the output,

    P[M(D) ∈ S] ≤ e^ε · P[M(D′) ∈ S] + δ.

With p₀ = P[M(D) ∈ S] and p₁ = P[M(D′) ∈ S] estimated from counts, a lower confidence bound p₀⁻ on p₀ and an upper
bound p₁⁺ on p₁ give

    ε ≥ ln((p₀⁻ − δ) / p₁⁺)          (the ε lower bound; finite, since p₁⁺ > 0)
    δ ≥ p₀⁻ − e^ε · p₁⁺              (the δ lower bound at the claimed ε)

and both statements refute the claim (ε, δ) under the same condition. When S is *structurally* impossible under D′
(p₁ = 0 exactly, e.g. an output outside the support of M(D′)), the second bound becomes δ ≥ p₀⁻ for every ε: this
is the only way an audit can refute a claim with a large ε, because p₁⁺ never drops below ≈ ln(1/α)/N with N
releases, which caps the ε bound near ln(N / ln(1/α)) (:func:`max_certifiable_epsilon`).

Scalar intervals come from :func:`scipy.stats.binomtest` (``proportion_ci(method="exact")``); the event search
scores thousands of candidate events at once with the equivalent closed form (beta quantiles), vectorised.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from ..core._validation import check_delta, check_epsilon, check_fraction, check_int
from ..exceptions import InvalidParameterError

__all__ = [
    "clopper_pearson",
    "cp_lower",
    "cp_one_sided",
    "cp_upper",
    "delta_lower_bound",
    "epsilon_from_bounds",
    "epsilon_lower_bound",
    "max_certifiable_epsilon",
    "trials_to_certify",
]

#: exp(ε) is evaluated at min(ε, this) so that huge claims do not overflow.
_MAX_EXPONENT = 700.0


def clopper_pearson(k: int, n: int, alpha: float = 0.05) -> tuple[float, float]:
    """Exact two-sided (1 − α) Clopper–Pearson interval for k successes in n trials.

    Each one-sided end holds alone with confidence 1 − α/2; the interval is [0, ·] for k = 0 and [·, 1] for k = n.
    Computed by :meth:`scipy.stats.binomtest(k, n).proportion_ci(method="exact")`.
    """
    n = check_int(n, "n (number of trials)", 1)
    k = check_int(k, "k (number of successes)", 0, n)
    alpha = check_fraction(alpha, "alpha")
    ci = stats.binomtest(k, n).proportion_ci(confidence_level=1.0 - alpha, method="exact")
    lo = 0.0 if k == 0 else float(ci.low)
    hi = 1.0 if k == n else float(ci.high)
    return lo, hi


def cp_lower(k: np.ndarray | int, n: np.ndarray | int, a: float) -> np.ndarray:
    """One-sided lower Clopper–Pearson bound at level 1 − a, vectorised (0 where k = 0)."""
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    with np.errstate(invalid="ignore"):
        lo = stats.beta.ppf(a, np.maximum(k, 1), n - k + 1)
    return np.where(k <= 0, 0.0, lo)


def cp_upper(k: np.ndarray | int, n: np.ndarray | int, a: float) -> np.ndarray:
    """One-sided upper Clopper–Pearson bound at level 1 − a, vectorised (1 where k = n)."""
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    with np.errstate(invalid="ignore"):
        hi = stats.beta.ppf(1 - a, k + 1, np.maximum(n - k, 1))
    return np.where(k >= n, 1.0, hi)


def cp_one_sided(k: int, n: int, a: float) -> tuple[float, float]:
    """(lower, upper) one-sided Clopper–Pearson bounds, each at level 1 − a (scalar, via ``binomtest``)."""
    return clopper_pearson(k, n, 2.0 * a)


def epsilon_from_bounds(p_lower: np.ndarray | float, q_upper: np.ndarray | float, delta: float) -> np.ndarray:
    """ln((p⁻ − δ)/q⁺), clamped at 0 (0 when p⁻ ≤ δ); vectorised."""
    num = np.asarray(p_lower, dtype=float) - delta
    q = np.asarray(q_upper, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log(np.where(num > 0, num, 1.0) / np.where(q > 0, q, 1.0))
    out = np.where(q > 0, out, np.inf)
    return np.where(num > 0, np.maximum(out, 0.0), 0.0)


def delta_from_bounds(p_lower: np.ndarray | float, q_upper: np.ndarray | float, epsilon: float) -> np.ndarray:
    """max(0, p⁻ − e^ε·q⁺); vectorised. With q⁺ = 0 (a structural witness) this is p⁻."""
    factor = math.exp(min(epsilon, _MAX_EXPONENT))
    return np.maximum(np.asarray(p_lower, dtype=float) - factor * np.asarray(q_upper, dtype=float), 0.0)


def epsilon_lower_bound(k0: int, n0: int, k1: int, n1: int, delta: float = 0.0, alpha: float = 0.05) -> float:
    """Lower bound on ε from event counts: S occurred k0 of n0 times under D and k1 of n1 times under D′.

    ε_lb = ln((p₀⁻ − δ) / p₁⁺) with one-sided Clopper–Pearson bounds at level 1 − α/2 each, so the bound holds
    with confidence 1 − α (union bound). Returns 0 when nothing can be concluded; always finite (p₁⁺ > 0).
    """
    n0, n1 = check_int(n0, "n0", 1), check_int(n1, "n1", 1)
    k0, k1 = check_int(k0, "k0", 0, n0), check_int(k1, "k1", 0, n1)
    delta = check_delta(delta)
    alpha = check_fraction(alpha, "alpha")
    p_lo = cp_one_sided(k0, n0, alpha / 2)[0]
    q_hi = cp_one_sided(k1, n1, alpha / 2)[1]
    return float(epsilon_from_bounds(p_lo, q_hi, delta))


def delta_lower_bound(k0: int, n0: int, k1: int, n1: int, epsilon: float, alpha: float = 0.05, *,
                      structural: bool = False) -> float:
    """Lower bound on the δ that the claim "ε-DP" needs, from event counts (k0 of n0 under D, k1 of n1 under D′).

    δ_lb = p₀⁻ − e^ε·p₁⁺ (one-sided Clopper–Pearson bounds at level 1 − α/2 each). With ``structural=True`` the
    event is known to be impossible under D′ (p₁ = 0; then k1 must be 0) and δ_lb = p₀⁻ at level 1 − α, for every ε.
    """
    n0, n1 = check_int(n0, "n0", 1), check_int(n1, "n1", 1)
    k0, k1 = check_int(k0, "k0", 0, n0), check_int(k1, "k1", 0, n1)
    epsilon = check_epsilon(epsilon, allow_zero=True)
    alpha = check_fraction(alpha, "alpha")
    if structural:
        if k1:
            raise InvalidParameterError("a structural witness has no hits on the other side (k1 must be 0).")
        return float(cp_one_sided(k0, n0, alpha)[0])
    p_lo = cp_one_sided(k0, n0, alpha / 2)[0]
    q_hi = cp_one_sided(k1, n1, alpha / 2)[1]
    return float(delta_from_bounds(p_lo, q_hi, epsilon))


def max_certifiable_epsilon(n: int, delta: float = 0.0, a: float = 0.0125) -> float:
    """The largest ε lower bound any event could give with n held-out releases per side (all hits vs none).

    ln((p⁻(n, n) − δ) / p⁺(0, n)) ≈ ln(n / ln(1/a)) with one-sided level 1 − a: a claim with a larger ε cannot be
    refuted by a ratio of frequencies, only by a structural witness.
    """
    n = check_int(n, "n", 1)
    p_lo = float(cp_lower(n, n, a))
    q_hi = float(cp_upper(0, n, a))
    return float(epsilon_from_bounds(p_lo, q_hi, delta))


def trials_to_certify(epsilon: float, delta: float = 0.0, a: float = 0.0125) -> int:
    """About how many held-out releases per side a ratio event needs to certify ε (all hits vs none)."""
    epsilon = check_epsilon(epsilon)
    if epsilon > 40:  # beyond any feasible number of releases (e^40 ≈ 2·10¹⁷)
        return 10**18
    n = max(1, math.ceil(math.log(1.0 / a) * math.exp(epsilon) / max(1.0 - delta, 1e-12)))
    while max_certifiable_epsilon(n, delta, a) <= epsilon and n < 10**18:
        n = int(n * 1.05) + 1
    return n
