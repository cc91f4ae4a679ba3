"""Theoretical sample-complexity results of Chaudhuri, Sarwate & Sinha (JMLR 2013, seed ``000``), §3.

All statements are for k = 1, rows with ‖x‖ ≤ 1, A = XᵀX / n with top eigenvalue λ₁ and eigengap Δ = λ₁ − λ₂,
and the utility measure ρ = |⟨v̂₁, v₁⟩|.

* Theorem 7 (PPCA upper bound, explicit constants):
  n > d / (ε Δ (1 − ρ)) · (4 log(1/η) / d + 2 log(8 λ₁ / ((1 − ρ²) Δ)))  ⇒  P(|⟨v₁, v̂₁⟩| > ρ) ≥ 1 − η.
* Theorem 8 (lower bound for every ε-DP algorithm, explicit constants): for d ≥ 3, Δ ≤ 1/2 and
  ρ ≥ 1 − (1 − φ)/16, utility ρ is impossible when
  n < d / (ε Δ) · max{1, √((1 − φ) / (80 (1 − ρ)))},  1 − φ = exp(−2 (ln 8 + ln(1 + e^d)) / (d − 2)).
  Outside those hypotheses the theorem says nothing (ρ_min = 0.99597 at d = 13, always above 0.9375).
* Theorem 9 (MOD-SULQ lower bound, *unknown* constants c, c′): n < c d^{3/2} √(log(d/δ)) / ε · (1 − c′(1 − ρ)).
  Only the scaling is known, so :func:`mod_sulq_scaling` returns d^{3/2} √(log(d/δ)) / ε (c = 1, c′ = 0).

:func:`scaling_guide` turns a rate into a curve of utility versus n anchored at one empirical point: a *scaling
guide*, not a bound. The rate depends on the mechanism's family (:data:`FAMILIES`, checked by simulation in the
tests): for the exponential mechanism the shortfall from the optimum falls like 1/n (Theorem 7: 1 − ρ ∝ 1/n); for
noise added to C it falls like 1/n² (the noise on A = C/n shrinks like 1/n, the lost variance like its square).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..core._validation import check_delta, check_epsilon, check_int, check_positive
from ..exceptions import DPCoreError, InvalidParameterError
from ..vocabulary import Neighbouring


@dataclass(frozen=True)
class Family:
    """A family of mechanisms whose utility shortfall falls like n^(−power) at fixed d, ε, Δ."""

    id: str
    power: float
    label: str


#: Families for the scaling guides; a mechanism names its family in ``Mechanism.utility_family`` (None: no guide).
FAMILIES: dict[str, Family] = {
    "exponential": Family("exponential", 1.0, "exponential mechanism (PPCA, IT-U, AD, KT): shortfall ∝ 1/n "
                          "once n ≥ d/(ε·Δ) (Thm 7)"),
    "additive": Family("additive", 2.0, "noise added to C (MOD-SULQ, Laplace, Analyze Gauss, Wishart): shortfall "
                       "∝ 1/n² once the noise on C/n is below the eigengap; n ∝ d·√d·√log(d/δ)/ε for MOD-SULQ "
                       "(Thm 9), √d·√log(1/δ)/ε for Analyze Gauss"),
}
FAMILY_LABELS = {f.id: f.label for f in FAMILIES.values()}


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


def _one_minus_phi(d: int) -> float:
    """1 − φ = exp(−2 (ln 8 + ln(1 + e^d)) / (d − 2)) of Theorem 8 (d ≥ 3; ln(1 + e^d) computed stably)."""
    return math.exp(-2.0 * (math.log(8.0) + np.logaddexp(0.0, d)) / (d - 2))


def dp_lower_bound_min_rho(d: int) -> float:
    """The smallest ρ Theorem 8 covers: 1 − (1 − φ)/16 (0.99597 at d = 13; always above 0.9375)."""
    return 1.0 - _one_minus_phi(check_int(d, "d", 3)) / 16.0


def dp_lower_bound_hypotheses(d: int, gap: float, rho: float) -> list[str]:
    """The hypotheses of Theorem 8 that fail for (d, Δ, ρ) (empty when the theorem applies)."""
    failed = []
    if d < 3:
        failed.append(f"d ≥ 3 (d = {d})")
    if gap > 0.5:
        failed.append(f"Δ ≤ 1/2 (Δ = {gap:.3g})")
    if d >= 3 and rho < dp_lower_bound_min_rho(d):
        failed.append(f"ρ ≥ 1 − (1 − φ)/16 = {dp_lower_bound_min_rho(d):.5f} (ρ = {rho:g})")
    return failed


def dp_lower_bound(d: int, epsilon: float, gap: float, rho: float) -> float:
    """Theorem 8: below this n no ε-DP algorithm reaches expected utility ρ on all data with gap Δ.

    Raises :class:`InvalidParameterError` outside the theorem's hypotheses (d ≥ 3, Δ ≤ 1/2,
    ρ ≥ :func:`dp_lower_bound_min_rho`), where it gives no bound at all.
    """
    d = check_int(d, "d", 3)
    epsilon = check_epsilon(epsilon)
    gap = check_positive(gap, "eigengap Δ")
    rho = _check_rho(rho)
    failed = dp_lower_bound_hypotheses(d, gap, rho)
    if failed:
        raise InvalidParameterError("Theorem 8 does not apply: it needs " + "; ".join(failed) + ".")
    return d / (epsilon * gap) * max(1.0, math.sqrt(_one_minus_phi(d) / (80.0 * (1.0 - rho))))


def mod_sulq_scaling(d: int, epsilon: float, delta: float) -> float:
    """Theorem 9's scaling d^{3/2} √(log(d/δ)) / ε (constants unknown: c = 1, c′ = 0)."""
    d = check_int(d, "d", 1)
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta, required=True)
    return d**1.5 * math.sqrt(max(math.log(d / delta), 0.0)) / epsilon


def ppca_scaling(d: int, epsilon: float, gap: float) -> float:
    """The d / (ε Δ) scaling shared by Theorems 7 and 8 (constants dropped)."""
    return check_int(d, "d", 1) / (check_epsilon(epsilon) * check_positive(gap, "eigengap Δ"))


def family_for(mechanism) -> Family | None:
    """The scaling-guide family of a mechanism (its ``utility_family``), or None when no rate is known."""
    return FAMILIES.get(getattr(mechanism, "utility_family", None) or "")


def scaling_guide(ns: Sequence[float], anchor_n: float, anchor_value: float, optimum: float = 1.0,
                  floor: float | None = None, power: float = 1.0) -> np.ndarray:
    """Utility vs n when the shortfall from ``optimum`` scales as n^(−power), through (anchor_n, anchor_value).

    Use the mechanism family's ``power`` (:data:`FAMILIES`). The d, ε, Δ factors are constant along one curve;
    they are absorbed by the anchor. ``floor`` (e.g. the random-subspace level) bounds the curve from below.
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
    """Reference sample sizes for the data's spectrum, each with the hypotheses it needs.

    Items: ``name``, ``n`` (None where the hypotheses fail: the row is then shown with a note, not a number),
    ``kind`` ("bound" | "scaling"), ``hypotheses`` (what the result assumes), ``note``. Theorem 8 is reported at
    the requested ρ when it applies there, and at the smallest ρ it covers otherwise.
    """
    lam1, gap = eigengap(eigenvalues, n, 1)
    out: list[dict] = []
    if gap <= 0:
        return out
    out.append({"name": f"PPCA upper bound (Thm 7, ρ = {rho:g}, η = {eta:g})",
                "n": ppca_sample_complexity(d, epsilon, gap, rho, eta, lam1), "kind": "bound",
                "hypotheses": "k = 1, ‖x‖ ≤ 1; λ₁ and eigengap Δ of A = XᵀX/n",
                "note": "enough samples for PPCA to reach correlation ρ with probability ≥ 1 − η"})
    hyp8 = "d ≥ 3, Δ ≤ 1/2, ρ ≥ 1 − (1 − φ)/16; expected utility, worst case over data with gap Δ"
    if d >= 3:
        failed = dp_lower_bound_hypotheses(d, gap, rho)
        if not failed:
            out.append({"name": f"Any ε-DP lower bound (Thm 8, ρ = {rho:g})", "n": dp_lower_bound(d, epsilon, gap, rho),
                        "kind": "bound", "hypotheses": hyp8,
                        "note": "no ε-DP algorithm reaches this utility on all such data below this n"})
        else:
            out.append({"name": f"Any ε-DP lower bound (Thm 8, ρ = {rho:g})", "n": None, "kind": "bound",
                        "hypotheses": hyp8,
                        "note": "not shown: the theorem needs " + "; ".join(failed) + ", so it gives no bound here"})
            rho_min = dp_lower_bound_min_rho(d)
            if gap <= 0.5 and rho < rho_min:
                out.append({"name": f"Any ε-DP lower bound (Thm 8 at its smallest ρ = {rho_min:.5f})",
                            "n": dp_lower_bound(d, epsilon, gap, rho_min), "kind": "bound", "hypotheses": hyp8,
                            "note": "the theorem only speaks about near-perfect utility"})
    if delta > 0:
        out.append({"name": "MOD-SULQ scaling (Thm 9, constants unknown)", "n": mod_sulq_scaling(d, epsilon, delta),
                    "kind": "scaling", "hypotheses": "MOD-SULQ only; unknown constants c, c′ (set to 1 and 0)",
                    "note": "d·√d·√log(d/δ)/ε: a scaling guide, not a bound"})
    return out


@functools.lru_cache(maxsize=256)
def noise_spectral_norm(mechanism_id: str, d: int, k: int, epsilon: float, delta: float,
                        neighbouring: str = Neighbouring.REPLACE, draws: int = 5, seed: int = 0) -> float | None:
    """The median spectral norm ‖E‖₂ of the noise E a covariance-perturbation mechanism adds to C = Σ xxᵀ (rows
    with ‖x‖ ≤ 1), measured on all-zero data: Ĉ = E there, and the noise of these mechanisms does not depend on
    the data. Public settings only (no data goes in); None for a mechanism that releases no covariance."""
    from ..mechanisms import get_mechanism

    mech = get_mechanism(mechanism_id)
    d = check_int(d, "d", 2)
    zero = np.zeros((d + 2, d))
    norms = []
    for i in range(check_int(draws, "draws", 1)):
        release = mech.release(zero, k, epsilon, delta if mech.uses_delta else 0.0, neighbouring=neighbouring,
                               random_state=seed + i)
        if release.covariance is None:
            return None
        norms.append(float(np.linalg.norm(release.covariance, 2)))
    return float(np.median(norms))


@dataclass(frozen=True)
class GuideRange:
    """Where a family's rate holds for one mechanism on one dataset: from ``n_min`` rows on (None: no known
    range), with ``condition`` saying which assumption that is, in words and numbers."""

    n_min: float | None
    condition: str


def guide_range(mechanism, eigenvalues: Sequence[float], n: int, *, k: int, epsilon: float, delta: float = 0.0,
                neighbouring: str = Neighbouring.REPLACE) -> GuideRange:
    """The sample sizes where ``mechanism``'s scaling guide may be drawn on data with this spectrum (C's
    eigenvalues over ``n`` rows, so A = C/n has the k-th eigengap Δ = λ_k − λ_{k+1}):

    * noise added to C (1/n²): the perturbation argument holds once the noise on A, ‖E‖₂/n, is below Δ, i.e.
      n ≥ ‖E‖₂/Δ (‖E‖₂ from :func:`noise_spectral_norm`); below that the top-k subspace is mostly noise;
    * exponential mechanism (1/n): Theorem 7's regime n ≥ d/(ε·Δ) (its leading factor, constants dropped).
    """
    family = family_for(mechanism)
    w = np.asarray(eigenvalues, dtype=float)
    d = w.size
    if family is None or d < 2 or k >= d:
        return GuideRange(None, "no known rate for this mechanism")
    _, gap = eigengap(w, n, k)
    if gap <= 0:
        return GuideRange(None, f"the eigengap Δ{_sub(k)} of this data is zero")
    if family.id == "additive":
        try:
            noise = noise_spectral_norm(mechanism.id, d, k, float(epsilon), float(delta), neighbouring)
        except DPCoreError as exc:  # settings outside the mechanism's domain: no release, so no guide
            return GuideRange(None, f"this mechanism does not run at these settings ({exc})")
        if noise is None:
            return GuideRange(None, "this mechanism releases no covariance")
        return GuideRange(noise / gap, f"noise on C/n below the eigengap: ‖E‖₂/n < Δ{_sub(k)} = {gap:.3g} "
                                       f"(‖E‖₂ ≈ {noise:.3g}), i.e. n ≥ {noise / gap:,.0f}")
    n_min = d / (check_epsilon(epsilon) * gap)
    return GuideRange(n_min, f"n ≥ d/(ε·Δ{_sub(k)}) = {d}/({epsilon:g}·{gap:.3g}) = {n_min:,.0f} (Thm 7's regime)")


def _sub(k: int) -> str:
    """k as a subscript (Δ₅)."""
    return str(k).translate(str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉"))


__all__ = [
    "FAMILIES", "FAMILY_LABELS", "Family", "GuideRange", "dp_lower_bound", "dp_lower_bound_hypotheses",
    "dp_lower_bound_min_rho", "eigengap", "family_for", "guide_range", "mod_sulq_scaling", "noise_spectral_norm",
    "ppca_sample_complexity", "ppca_scaling", "sample_size_guides", "scaling_guide",
]
