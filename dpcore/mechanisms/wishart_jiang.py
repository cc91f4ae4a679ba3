"""Jiang, Xie & Zhang's Wishart mechanism, as published (claimed (ε, 0)-DP; NOT private).

Jiang, Xie & Zhang, "Wishart mechanism for differentially private principal components analysis", AAAI 2016,
Algorithm 2, Theorem 4: Â = A + W, W ~ W_d(d+1, 3/(2nε)·I), i.e. W_d(3/(2ε)·I, d+1) on C. Spec §3.10:
counterexample δ = 1 − e^{−ε/3}.
"""

from __future__ import annotations

from . import register
from ._wishart_invalid import InvalidWishart


@register
class JiangWishart(InvalidWishart):
    id = "wishart_jiang"
    name = "Wishart (Jiang–Xie–Zhang) — invalid"
    summary = "Adds Wishart noise W_d(3/(2ε)·I, d+1) to C; published as (ε, 0)-DP but not private."
    description = (
        "Same construction and same flaw as SN, with a larger scale 3/(2ε) (the proof's loose nuclear-norm bound "
        "3 instead of 2). The support attack succeeds with probability 1 − e^{−ε/3} (0.28 at ε = 1)."
    )
    reference = "Jiang, Xie & Zhang (AAAI 2016), Algorithm 2, Theorem 4 — refuted: support attack (spec §3.10)"
    formula = r"\hat C = XX^\top + W,\; W\sim\mathcal W_d\!\left(\tfrac{3}{2\varepsilon}I,\; d+1\right)"
    cost = "O(nd² + d³)"
    order = 20

    def noise_scale(self, epsilon, options):
        return 3.0 / (2.0 * epsilon)
