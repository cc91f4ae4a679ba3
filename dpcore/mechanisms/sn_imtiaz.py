"""SN — Imtiaz & Sarwate's "symmetric noise" Wishart mechanism, as published (claimed ε-DP; NOT private).

Imtiaz & Sarwate, "Symmetric matrix perturbation for differentially-private principal component analysis",
ICASSP 2016, Algorithm 1, Theorem 1: Ĉ = C + W, W ~ W_d(I/(2ε), d+1). Spec §3.9 gives the counterexample
δ = 1 − e^{−ε}; Amin et al. (2019) §1.2 and diffprivlib issues #23/#42 record its withdrawal.
"""

from __future__ import annotations

from . import register
from ._wishart_invalid import InvalidWishart
from .base import Param


@register
class ImtiazSarwateSN(InvalidWishart):
    id = "sn_imtiaz"
    name = "SN Wishart (Imtiaz–Sarwate) — invalid"
    summary = "Adds Wishart noise W_d(I/(2ε), d+1) to C; published as ε-DP but not private at all."
    description = (
        "The proof compares the Wishart densities at Y − C and Y − C' but forgets that the density is zero "
        "outside the positive-definite cone, which moves with the data. Replacing a zero row by a unit vector "
        "u makes the output impossible under one input with probability 1 − e^{−ε}, so no δ below that "
        "rescues the claim. Shown here only as a labelled exhibit. The 'code' variant uses standard deviation "
        "1/(2ε) as in the public dp_stats code, which fails with δ = 1 − e^{−2ε²}."
    )
    reference = "Imtiaz & Sarwate (ICASSP 2016), Algorithm 1, Theorem 1 — refuted: Amin et al. (2019) §1.2"
    formula = r"\hat C = XX^\top + W,\; W\sim\mathcal W_d\!\left(\tfrac{1}{2\varepsilon}I,\; d+1\right)"
    cost = "O(nd² + d³)"
    order = 10
    params = (
        Param("variant", "paper", "'paper': variance 1/(2ε) per entry of Z; 'code': standard deviation 1/(2ε), "
              "as in the public dp_stats implementation.", kind="choice", choices=("paper", "code")),
    )

    def noise_scale(self, epsilon, options):
        if options.get("variant", "paper") == "code":
            return 1.0 / (4.0 * epsilon**2)
        return 1.0 / (2.0 * epsilon)
