"""A correct (ε, δ) Wishart mechanism: add m = d + ⌈28 ln(4/δ)/ε²⌉ fictitious Gaussian records.

Sheffet, "Old techniques in differentially private linear regression" (ALT 2019; arXiv 1507.00056); spec §3.11.
The constant 28 follows the only public implementation found and is marked [R]; a Monte Carlo check (spec
§3.11) shows it, and 14, to be conservative.
"""

from __future__ import annotations

import math

import numpy as np

from ..core.noise import wishart_bartlett
from ..core.privacy import LedgerEntry
from ..exceptions import InvalidParameterError
from ..vocabulary import Guarantee
from . import register
from .base import Mechanism, MechanismOutput, Param

#: Largest ε for which the mechanism is offered: Sheffet's analysis is for ε ≤ 1, and at large ε the extra degrees
#: of freedom m = df − d become so few that the support event below exceeds δ (e.g. ε = 6, δ = 1e-5, c = 28: m = 11).
MAX_EPSILON = 1.0


def support_event_probability(extra_df: int) -> float:
    """P(Ĉ − C(D′) is not positive definite) under D for neighbours D, D′ = D ∪ {x}, ‖x‖ = 1, with m = df − d
    extra degrees of freedom: uᵀW⁻¹u ~ 1/χ²_{m+1}, so the event {uᵀW⁻¹u ≥ 1} has probability P(χ²_{m+1} ≤ 1).
    It is impossible under D′, so a proof can only hold when this is at most δ."""
    from scipy import special  # the χ² CDF as a ufunc (scipy.stats' distribution machinery costs ~0.1 ms a call)

    return float(special.chdtr(extra_df + 1, 1.0))


def sheffet_degrees_of_freedom(d: int, epsilon: float, delta: float, constant: float = 28.0) -> int:
    """Wishart degrees of freedom d + ⌈constant·ln(4/δ)/ε²⌉."""
    return d + math.ceil(constant * math.log(4.0 / delta) / epsilon**2)


@register
class SheffetWishart(Mechanism):
    id = "wishart_sheffet"
    name = "Wishart (Sheffet, correct)"
    summary = "Adds a Wishart matrix with d + O(ln(1/δ)/ε²) degrees of freedom: a provably (ε, δ)-DP Wishart."
    description = (
        "Equivalent to appending many fictitious Gaussian records to the data. With enough degrees of freedom "
        "the smallest eigenvalue of the noise is far above one record's contribution, so the support problem "
        "that breaks the SN and Jiang mechanisms happens with probability below δ. The output is positive "
        "definite but biased by m·I (it acts like ridge regularisation); optionally subtract it."
    )
    reference = "Sheffet (ALT 2019), Wishart mechanism; constant 28·ln(4/δ)/ε² [R]"
    formula = r"\hat C = XX^\top + W,\; W\sim\mathcal W_d(I, m),\; m = d + \lceil 28\ln(4/\delta)/\varepsilon^2\rceil"
    cost = "O(nd² + d³) (Bartlett sampling, independent of m)"
    guarantee = Guarantee.APPROX
    output = "covariance"
    uses_delta = True
    order = 40
    utility_family = "additive"
    domain = (f"ε ≤ {MAX_EPSILON:g} (Sheffet's setting; beyond it the extra degrees of freedom m = df − d shrink "
              "until the output's support gives the data away: P(χ²_{m+1} ≤ 1) > δ already at ε = 6, δ = 1e-5); "
              "0 < δ < 1; both neighbouring relations")
    params = (
        Param("constant", 28.0, "c in m = d + ⌈c·ln(4/δ)/ε²⌉ (28 as implemented publicly; 14 also checked "
              "conservative numerically).", kind="float", low=14.0, high=1000.0),
        Param("debias", False, "Subtract the noise mean m·I (post-processing; the result may lose PSD).",
              kind="bool"),
    )

    def check_domain(self, *, d, k, epsilon, delta, neighbouring, options):
        if epsilon > MAX_EPSILON:
            raise InvalidParameterError(
                f"wishart_sheffet is only proven private for ε ≤ {MAX_EPSILON:g} (got ε = {epsilon:g}): with few "
                "extra degrees of freedom the release can be impossible under a neighbouring dataset. Use "
                "ε ≤ 1, or analyze_gauss (any ε).")
        extra = sheffet_degrees_of_freedom(d, epsilon, delta, options["constant"]) - d
        p = support_event_probability(extra)
        if p > delta:  # cannot happen for ε ≤ 1 and constant ≥ 14; kept as a guard on the proof's premise
            raise InvalidParameterError(
                f"wishart_sheffet with m = {extra} extra degrees of freedom has a support event of probability "
                f"{p:.3g} > δ = {delta:g}; raise the constant or lower ε.")

    def _release(self, data, k, epsilon, delta, *, neighbouring, rng, deadline, constant=28.0, debias=False):
        df = sheffet_degrees_of_freedom(data.d, epsilon, delta, constant)
        W = wishart_bartlett(data.d, df, 1.0, rng)
        covariance = data.C + W
        if debias:
            covariance = covariance - df * np.eye(data.d)
        ledger = [LedgerEntry("Wishart noise W_d(I, m)", epsilon, delta, note=f"m = {df}")]
        return MechanismOutput(ledger=ledger, covariance=covariance, diagnostics={"degrees_of_freedom": df})


