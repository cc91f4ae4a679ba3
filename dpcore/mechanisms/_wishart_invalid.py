"""Shared body of the two published Wishart mechanisms whose privacy claim is false (spec §3.9, §3.10).

Both add W ~ W_d(s·I, d+1) to C. The output's support {Y : Y − C ≻ 0} depends on C: for neighbours that
differ by a unit vector u, the event {Y − C' not PD} has probability 1 − e^{−1/(2s)} under one input and 0
under the other, so neither is (ε, δ)-DP for any δ below that value.
"""

from __future__ import annotations

from ..core.noise import wishart_bartlett
from ..core.privacy import LedgerEntry, wishart_support_violation_probability
from ..explain.statements import delta_statement
from ..vocabulary import Guarantee, Neighbouring
from .base import Mechanism, MechanismOutput


class InvalidWishart(Mechanism):
    """Base for SN and Jiang: subclasses define ``noise_scale(epsilon, options)`` on the C scale."""

    guarantee = Guarantee.CLAIMED_INVALID
    output = "covariance"
    utility_family = "additive"
    domain = ("none: the claimed guarantee fails for every δ below the counterexample δ (the output's support "
              "depends on the data); shown only as a labelled exhibit")
    neighbourings = (Neighbouring.REPLACE,)

    def noise_scale(self, epsilon: float, options: dict) -> float:  # pragma: no cover - abstract
        raise NotImplementedError

    def counterexample_delta(self, epsilon, options=None):
        return wishart_support_violation_probability(self.noise_scale(epsilon, options or {}))

    def _release(self, data, k, epsilon, delta, *, neighbouring, rng, deadline, **options):
        scale = self.noise_scale(epsilon, options)
        W = wishart_bartlett(data.d, data.d + 1, scale, rng)
        bound = wishart_support_violation_probability(scale)
        ledger = [LedgerEntry(
            "Wishart noise W_d(s·I, d+1) (claimed ε-DP)", epsilon, 0.0, private=False,
            note=f"NOT private (support attack). {delta_statement(epsilon, bound)}",
        )]
        return MechanismOutput(ledger=ledger, covariance=data.C + W,
                               diagnostics={"noise_scale": scale, "counterexample_delta": bound})
