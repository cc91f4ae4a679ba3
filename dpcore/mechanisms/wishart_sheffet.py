"""A correct (ε, δ) Wishart mechanism: add m = d + ⌈28 ln(4/δ)/ε²⌉ fictitious Gaussian records.

Sheffet, "Old techniques in differentially private linear regression" (ALT 2019; arXiv 1507.00056); spec §3.11.
The constant 28 follows the only public implementation found and is marked [R]; a Monte Carlo check (spec
§3.11) shows it, and 14, to be conservative.
"""

from __future__ import annotations

import math

import numpy as np

from ..noise import wishart_bartlett
from ..privacy import LedgerEntry
from . import register
from .base import Mechanism, MechanismOutput, Param


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
    guarantee = "approx"
    output = "covariance"
    uses_delta = True
    order = 40
    params = (
        Param("constant", 28.0, "c in m = d + ⌈c·ln(4/δ)/ε²⌉ (28 as implemented publicly; 14 also checked "
              "conservative numerically).", kind="float", low=14.0, high=1000.0),
        Param("debias", False, "Subtract the noise mean m·I (post-processing; the result may lose PSD).",
              kind="bool"),
    )

    def _release(self, data, k, epsilon, delta, *, neighbouring, rng, deadline, constant=28.0, debias=False):
        df = sheffet_degrees_of_freedom(data.d, epsilon, delta, constant)
        W = wishart_bartlett(data.d, df, 1.0, rng)
        covariance = data.C + W
        if debias:
            covariance = covariance - df * np.eye(data.d)
        ledger = [LedgerEntry("Wishart noise W_d(I, m)", epsilon, delta, note=f"m = {df}")]
        return MechanismOutput(ledger=ledger, covariance=covariance, diagnostics={"degrees_of_freedom": df})


