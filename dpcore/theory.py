"""Theoretical sample-complexity results of Chaudhuri, Sarwate & Sinha (JMLR 2013, seed ``000``), §3.

All statements are for k = 1, rows with ‖x‖ ≤ 1, A = XᵀX / n with top eigenvalue λ₁ and eigengap Δ = λ₁ − λ₂,
and the utility measure ρ = |⟨v̂₁, v₁⟩|.

* Theorem 7 (PPCA upper bound, explicit constants):
  n > d / (ε Δ (1 − ρ)) · (4 log(1/η) / d + 2 log(8 λ₁ / ((1 − ρ²) Δ)))  ⇒  P(|⟨v₁, v̂₁⟩| > ρ) ≥ 1 − η.
* Theorem 8 (lower bound for every ε-DP algorithm, explicit constants): utility ρ is impossible when
  n < d / (ε Δ) · max{1, √((1 − φ) / (80 (1 − ρ)))},  1 − φ = exp(−2 (ln 8 + ln(1 + e^d)) / (d − 2)).
* Theorem 9 (MOD-SULQ lower bound, *unknown* constants c, c′): n < c d^{3/2} √(log(d/δ)) / ε · (1 − c′(1 − ρ)).
  Only the scaling is known, so :func:`mod_sulq_scaling` returns d^{3/2} √(log(d/δ)) / ε (c = 1, c′ = 0).

:func:`scaling_guide` turns a scaling into a curve of utility versus n anchored at one empirical point
(shortfall from the optimum ∝ 1/n at fixed d, ε, Δ): a *scaling guide*, not a bound.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ._validation import check_delta, check_epsilon, check_int, check_positive
from .exceptions import InvalidParameterError

FAMILIES = ("ppca", "mod_sulq")
FAMILY_LABELS = {
    "ppca": "exponential-mechanism type (PPCA): n ∝ d / (ε·Δ)",
    "mod_sulq": "input-perturbation type (MOD-SULQ): n ∝ d^{3/2}·√log(d/δ) / ε",
}


def _check_rho(rho: float) -> float:
    rho = float(rho)
    if not 0.0 < rho < 1.0:
        raise InvalidParameterError(f"rho (target correlation) must lie in (0, 1), got {rho!r}.")
    return rho


def ppca_sample_complexity(d: int, epsilon: float, gap: float, rho: float = 0.9, eta: float = 0.05,
                           lambda1: float = 1.0) -> float:
    """Theorem 7: the n above which PPCA reaches correlation ρ with probability ≥ 1 − η."""
    d = check_int(d, "d", 1)
    epsilon = check_epsilon(epsilon)
    gap = check_positive(gap, "eigengap Δ")
    lambda1 = check_positive(lambda1, "λ₁")
    rho = _check_rho(rho)
    if not 0.0 < eta < 1.0:
        raise InvalidParameterError(f"eta must lie in (0, 1), got {eta!r}.")
    inner = 4.0 * math.log(1.0 / eta) / d + 2.0 * math.log(8.0 * lambda1 / ((1.0 - rho**2) * gap))
    return d / (epsilon * gap * (1.0 - rho)) * max(inner, 0.0)


def dp_lower_bound(d: int, epsilon: float, gap: float, rho: float = 0.9) -> float:
    """Theorem 8: below this n no ε-DP algorithm reaches utility ρ on all data with gap Δ (d ≥ 3)."""
    d = check_int(d, "d", 3)
    epsilon = check_epsilon(epsilon)
    gap = check_positive(gap, "eigengap Δ")
    rho = _check_rho(rho)
    # ln(1 + e^d) computed stably
    one_minus_phi = math.exp(-2.0 * (math.log(8.0) + np.logaddexp(0.0, d)) / (d - 2))
    return d / (epsilon * gap) * max(1.0, math.sqrt(one_minus_phi / (80.0 * (1.0 - rho))))


def mod_sulq_scaling(d: int, epsilon: float, delta: float) -> float:
    """Theorem 9's scaling d^{3/2} √(log(d/δ)) / ε (constants unknown: c = 1, c′ = 0)."""
    d = check_int(d, "d", 1)
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta, required=True)
    return d**1.5 * math.sqrt(max(math.log(d / delta), 0.0)) / epsilon


def ppca_scaling(d: int, epsilon: float, gap: float) -> float:
    """The d / (ε Δ) scaling shared by Theorems 7 and 8 (constants dropped)."""
    return check_int(d, "d", 1) / (check_epsilon(epsilon) * check_positive(gap, "eigengap Δ"))


def family_for(output: str) -> str:
    """Scaling family of a mechanism by its output kind: subspace samplers ~ PPCA, covariance noise ~ MOD-SULQ."""
    return "ppca" if output == "subspace" else "mod_sulq"


def scaling_guide(ns: Sequence[float], anchor_n: float, anchor_value: float, optimum: float = 1.0,
                  floor: float | None = None, power: float = 1.0) -> np.ndarray:
    """Utility vs n when the shortfall from ``optimum`` scales as n^(−power), through (anchor_n, anchor_value).

    The d, ε, Δ (or d^{3/2}, ε, δ) factors of Theorems 7–9 are constant along one curve; they are absorbed by the
    anchor. ``floor`` (e.g. the random-subspace level) bounds the curve from below.
    """
    ns = np.asarray(ns, dtype=float)
    anchor_n = check_positive(anchor_n, "anchor_n")
    if np.any(ns <= 0):
        raise InvalidParameterError("sample sizes must be positive.")
    shortfall = (optimum - float(anchor_value)) * (anchor_n / ns) ** power
    out = optimum - shortfall
    if floor is not None:
        out = np.maximum(out, floor)
    return out


def eigengap(eigenvalues: Sequence[float], n: int, k: int = 1) -> tuple[float, float]:
    """(λ₁, Δ = λ_k − λ_{k+1}) of A = C / n from the eigenvalues of C = XᵀX (decreasing order)."""
    w = np.asarray(eigenvalues, dtype=float) / check_int(n, "n", 1)
    k = check_int(k, "k", 1, max(w.size - 1, 1))
    if w.size < 2:
        return float(w[0]), float(w[0])
    return float(w[0]), float(w[k - 1] - w[k])


def sample_size_guides(eigenvalues: Sequence[float], n: int, d: int, epsilon: float, delta: float = 1e-5,
                       rho: float = 0.9, eta: float = 0.05) -> list[dict]:
    """Reference sample sizes for the data's spectrum: Theorem 7 and 8 values (explicit constants) and the
    Theorem 9 scaling (no constants). Each item: name, n, kind ("bound" | "scaling"), note."""
    lam1, gap = eigengap(eigenvalues, n, 1)
    out: list[dict] = []
    if gap <= 0:
        return out
    out.append({"name": f"PPCA upper bound (Thm 7, ρ = {rho:g}, η = {eta:g})",
                "n": ppca_sample_complexity(d, epsilon, gap, rho, eta, lam1), "kind": "bound",
                "note": "enough samples for PPCA (k = 1)"})
    if d >= 3:
        out.append({"name": f"Any ε-DP lower bound (Thm 8, ρ = {rho:g})", "n": dp_lower_bound(d, epsilon, gap, rho),
                    "kind": "bound", "note": "no ε-DP algorithm succeeds on all such data below this n"})
    if delta > 0:
        out.append({"name": "MOD-SULQ scaling (Thm 9, constants unknown)", "n": mod_sulq_scaling(d, epsilon, delta),
                    "kind": "scaling", "note": "d^{3/2}·√log(d/δ)/ε with c = 1: a scaling guide, not a bound"})
    return out


__all__ = [
    "FAMILIES", "FAMILY_LABELS", "dp_lower_bound", "eigengap", "family_for", "mod_sulq_scaling",
    "ppca_sample_complexity", "ppca_scaling", "sample_size_guides", "scaling_guide",
]
