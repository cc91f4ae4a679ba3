"""MOD-SULQ: symmetric Gaussian input perturbation of A = XXᵀ/n.

Chaudhuri, Sarwate & Sinha, "A near-optimal algorithm for differentially-private principal components",
JMLR 2013, Algorithm 1 and eq. (5); spec §3.1.
"""

from __future__ import annotations

import math

from ..core._validation import check_delta, check_epsilon, check_int
from ..core.noise import symmetric_gaussian
from ..core.privacy import LedgerEntry, l2_sensitivity_upper_triangle
from ..exceptions import InvalidParameterError
from ..vocabulary import Guarantee, Neighbouring
from . import register
from .base import Mechanism, MechanismOutput, Param


def mod_sulq_beta(d: int, n: int, epsilon: float, delta: float, exact: bool = False) -> float:
    """Noise standard deviation β on A = XXᵀ/n (seed 000 eq. 5), or the exact root β* it relaxes.

    β = (d+1)/(nε)·√(2 ln((d²+d)/(2δ√(2π)))) + 1/(n√ε).
    """
    d = check_int(d, "d", 1)
    n = check_int(n, "n", 1)
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta, required=True)
    log_term = math.log((d * d + d) / (2.0 * delta * math.sqrt(2.0 * math.pi)))
    if exact:
        return ((d + 1) / (2 * n * epsilon) * math.sqrt(2 * log_term)
                + math.sqrt(2 * (d + 1) ** 2 * log_term + 4 * epsilon) / (2 * n * epsilon))
    return (d + 1) / (n * epsilon) * math.sqrt(2.0 * log_term) + 1.0 / (n * math.sqrt(epsilon))


@register
class ModSulq(Mechanism):
    id = "mod_sulq"
    name = "MOD-SULQ"
    summary = ("Adds symmetric Gaussian noise of scale β = (d+1)/(nε)·√(2 ln((d²+d)/(2δ√(2π)))) + 1/(n√ε) to the "
               "normalised second-moment matrix.")
    description = (
        "Perturb A = XXᵀ/n with a symmetric matrix whose upper-triangle entries are i.i.d. N(0, β²), then take "
        "the top-k eigenvectors. Symmetrising fixes the complex eigenvectors of the original SULQ. The noise "
        "grows like d/(nε), so in high dimension it behaves much like a random subspace."
    )
    reference = "Chaudhuri, Sarwate & Sinha (JMLR 2013), Algorithm 1, eq. (5), Theorem 5"
    formula = (r"\hat A = \tfrac1n XX^\top + N,\; N_{ij}=N_{ji}\sim\mathcal N(0,\beta^2),\; "
               r"\beta=\frac{d+1}{n\varepsilon}\sqrt{2\ln\frac{d^2+d}{2\delta\sqrt{2\pi}}}+\frac{1}{n\sqrt\varepsilon}")
    cost = "O(nd² + d³)"
    guarantee = Guarantee.APPROX
    output = "covariance"
    uses_delta = True
    neighbourings = (Neighbouring.REPLACE,)
    order = 10
    utility_family = "additive"
    domain = ("d ≥ 2 and (d² + d)/(2δ√(2π)) ≥ e² (Theorem 5's tail bound; true for every practical δ), any ε > 0; "
              "replace-one only (n public)")
    params = (
        Param("exact_beta", False, "Use the exact root β* of the privacy condition instead of the relaxed eq. (5) "
              "(slightly less noise, same proof).", kind="bool"),
    )

    def check_domain(self, *, d, k, epsilon, delta, neighbouring, options):
        if d < 2:
            raise InvalidParameterError(
                "MOD-SULQ's proof (Theorem 5) needs d ≥ 2 features; use analyze_gauss for d = 1.")
        if (d * d + d) / (2.0 * delta * math.sqrt(2.0 * math.pi)) < math.e**2:
            raise InvalidParameterError(
                f"MOD-SULQ's tail bound needs (d² + d)/(2δ√(2π)) ≥ e²; with d = {d} lower δ below "
                f"{(d * d + d) / (2.0 * math.sqrt(2.0 * math.pi) * math.e**2):.3g}.")

    def zcdp_rho(self, epsilon, delta, *, n, d, neighbouring, options):
        """Gaussian noise of s.d. nβ on C: ρ = Δ₂²/(2(nβ)²), Δ₂ the L2 sensitivity of C's upper triangle."""
        if n is None:
            return None
        sigma = n * mod_sulq_beta(d, n, epsilon, delta, exact=bool(options.get("exact_beta", False)))
        return l2_sensitivity_upper_triangle(neighbouring) ** 2 / (2.0 * sigma * sigma)

    def _release(self, data, k, epsilon, delta, *, neighbouring, rng, deadline, exact_beta=False):
        beta = mod_sulq_beta(data.d, data.n, epsilon, delta, exact=exact_beta)
        # Noise β on A = C/n is noise nβ on C.
        covariance = data.C + symmetric_gaussian(data.d, data.n * beta, rng)
        ledger = [LedgerEntry("symmetric Gaussian noise on A", epsilon, delta,
                              note=f"β = {beta:.4g} on A = C/n")]
        return MechanismOutput(ledger=ledger, covariance=covariance, diagnostics={"beta": beta})
