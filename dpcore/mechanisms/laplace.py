"""Laplace input perturbation of C = XXᵀ (pure ε-DP).

Jiang, Xie & Zhang (AAAI 2016) Algorithm 1 (scale 2d/(nε) on A); Amin et al. (NeurIPS 2019) "L" (2d/ε on C);
spec §3.3. The tight replace-one L1 sensitivity of the upper triangle is d+1 (option ``sensitivity='tight'``).
"""

from __future__ import annotations

from ..core.noise import symmetric_laplace
from ..core.privacy import LedgerEntry, l1_sensitivity_upper_triangle
from ..vocabulary import Guarantee, Neighbouring
from . import register
from .base import Mechanism, MechanismOutput, Param


def laplace_scale(d: int, epsilon: float, neighbouring: str = Neighbouring.REPLACE,
                  sensitivity: str = "paper") -> float:
    """Laplace scale b on C: paper 2d/ε (d/ε for add/remove), tight (d+1)/ε ((d+1)/(2ε) for add/remove)."""
    if sensitivity == "paper":
        l1 = 2.0 * d if neighbouring == Neighbouring.REPLACE else float(d)
    else:
        l1 = l1_sensitivity_upper_triangle(d, neighbouring)
    return l1 / epsilon


@register
class LaplaceInputPerturbation(Mechanism):
    id = "laplace"
    name = "Laplace input perturbation"
    summary = "Adds symmetric Laplace noise of scale ≈ 2d/ε to every entry of C = XXᵀ (pure ε-DP)."
    description = (
        "The pure-DP counterpart of Analyze Gauss: Laplace noise calibrated to the L1 sensitivity of the upper "
        "triangle of C. The papers use the loose bound 2d; the tight replace-one bound is d+1. Its noise grows "
        "like d^1.5/ε in spectral norm, so it degrades quickly with the dimension."
    )
    reference = "Jiang, Xie & Zhang (AAAI 2016), Algorithm 1; Amin et al. (NeurIPS 2019), baseline L"
    formula = r"\hat C = XX^\top + L,\; L_{ij}=L_{ji}\sim\mathrm{Lap}(2d/\varepsilon)"
    cost = "O(nd² + d³)"
    guarantee = Guarantee.PURE
    output = "covariance"
    order = 30
    utility_family = "additive"
    domain = ("every ε > 0; both relations (upper-triangle L1 sensitivity 2d paper / d+1 tight under replace-one, "
              "(d+1)/2 under add/remove)")
    params = (
        Param("sensitivity", "paper", "L1 sensitivity used for the scale: 'paper' (2d, as published) or 'tight' "
              "(d+1, the exact replace-one bound).", kind="choice", choices=("paper", "tight")),
    )

    def _release(self, data, k, epsilon, delta, *, neighbouring, rng, deadline, sensitivity="paper"):
        scale = laplace_scale(data.d, epsilon, neighbouring, sensitivity)
        covariance = data.C + symmetric_laplace(data.d, scale, rng)
        ledger = [LedgerEntry("symmetric Laplace noise on C", epsilon, 0.0, note=f"scale = {scale:.4g}")]
        return MechanismOutput(ledger=ledger, covariance=covariance, diagnostics={"scale": scale})
