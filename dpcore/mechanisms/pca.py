"""Non-private PCA: the reference every metric is measured against (spec §3.14)."""

from __future__ import annotations

from ..core.privacy import LedgerEntry
from ..vocabulary import Guarantee
from . import register
from .base import Mechanism, MechanismOutput


@register
class NonPrivatePCA(Mechanism):
    id = "pca"
    name = "Non-private PCA"
    summary = "Exact top-k eigenvectors of the true second-moment matrix: the utility ceiling, no privacy."
    description = (
        "The textbook eigendecomposition of C = Σ xᵢxᵢᵀ. It reveals the data exactly and is shown only as the "
        "reference that every private mechanism is compared to."
    )
    reference = "Baseline (Chaudhuri, Sarwate & Sinha 2013, §6)"
    formula = r"\hat V = V_k(C),\quad \hat C = C"
    cost = "O(nd² + d³)"
    guarantee = Guarantee.NONE
    output = "covariance"
    order = 0
    domain = ("none: not private at any ε (the non-private reference)")

    def _release(self, data, k, epsilon, delta, *, neighbouring, rng, deadline, **options):
        ledger = [LedgerEntry("exact eigendecomposition of C", private=False, note="reference, not private")]
        return MechanismOutput(ledger=ledger, covariance=data.C.copy(), subspace=data.eigenvectors[:, :k].copy())
