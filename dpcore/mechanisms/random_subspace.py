"""Uniformly random k-dimensional subspace: the data-independent (0-DP) floor (spec §3.14, seed 000 §6.3)."""

from __future__ import annotations

from ..core.noise import uniform_stiefel
from ..core.privacy import LedgerEntry
from ..vocabulary import Guarantee
from . import register
from .base import Mechanism, MechanismOutput


@register
class RandomSubspace(Mechanism):
    id = "random"
    name = "Random subspace"
    summary = "A Haar-uniform random k-dimensional subspace; ignores the data, so it spends no privacy budget."
    description = (
        "Draw a d×k Gaussian matrix and orthonormalise it. Any private mechanism that does no better than this "
        "has learned nothing from the data (Chaudhuri et al. found MOD-SULQ close to it on most real data)."
    )
    reference = "Chaudhuri, Sarwate & Sinha (JMLR 2013), §6.3 'random projection' baseline"
    formula = r"\hat V = Q,\quad QR = G,\; G_{ij}\sim N(0,1)"
    cost = "O(dk²)"
    guarantee = Guarantee.PURE
    output = "subspace"
    order = 0
    domain = ("every ε (it never reads the data and spends nothing); both relations")

    def _release(self, data, k, epsilon, delta, *, neighbouring, rng, deadline, **options):
        ledger = [LedgerEntry("random subspace (data-independent)", epsilon=0.0, note="0-DP")]
        return MechanismOutput(ledger=ledger, subspace=uniform_stiefel(data.d, k, rng))
