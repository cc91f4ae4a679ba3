"""Singhal–Steinke boosting: r disjoint runs of Algorithm 2, return one close to most others (spec §3.13).

Singhal & Steinke, "Privately Learning Subspaces" (NeurIPS 2021, arXiv 2106.00001), §4.3, Algorithm 3, Theorem
4.10. The rows are split into r data-independent chunks; Algorithm 2 runs on each with the full (ε, δ) (parallel
composition under replace-one: one record touches one chunk); the output is a Π̂_i with
#{j : Π̂_j ≠ ⊥, ‖Π̂_i − Π̂_j‖₂ ≤ 2α} ≥ 0.6·r (itself included), else ⊥ — post-processing of the r releases.
"""

from __future__ import annotations

import hashlib

import numpy as np

from ..core.privacy import LedgerEntry
from ..exceptions import InvalidParameterError
from ..vocabulary import Guarantee, Neighbouring
from . import register
from ._subspace_learning import boost_select, dpase, draw_approx_plan, grid_relative_error, hopeless_grid_reason
from .base import Mechanism, MechanismOutput, Param
from .ss_approx import APPROX_PARAMS, public_settings_note, resolve_approx_options


def default_alpha(ell: float, d: int, k: int) -> float:
    """Automatic accuracy α = max(0.1, 2.5ρ): two accurate runs are each off by sin θ ≈ 1.2ρ (ρ the grid's relative
    error, public), so they lie within 2α of each other."""
    return max(0.1, 2.5 * grid_relative_error(ell, d, k))


@register
class SinghalSteinkeBoost(Mechanism):
    id = "ss_boost"
    name = "Singhal–Steinke boosted subspace (r runs)"
    summary = ("Runs the approximate-case algorithm on r disjoint parts of the data and returns a result that agrees "
               "with at least 60% of the runs, or ⊥ — boosting the success probability at the same (ε, δ).")
    description = (
        "The approximate-case algorithm succeeds only with constant probability. Splitting the data into r "
        "disjoint parts (chosen without looking at the data) and running it on each costs no extra privacy, "
        "because one person is in only one part. If at least 60% of the runs are accurate, some output lies within "
        "2α of 60% of the runs, and any such output is within 3α of the truth; the selection only looks at the "
        "private outputs, so it is free post-processing. Each run sees n/r rows."
    )
    reference = "Singhal & Steinke, Privately Learning Subspaces (NeurIPS 2021), §4.3 Algorithm 3, Thm 4.10"
    formula = (r"\hat\Pi=\hat\Pi_i \text{ with } \#\{j:\|\hat\Pi_i-\hat\Pi_j\|_2\le 2\alpha\}\ge 0.6\,r,"
               r"\ \text{else}\ \bot")
    cost = "r × the approximate case on n/r rows, plus O(r²k²d) comparisons"
    guarantee = Guarantee.APPROX
    output = "subspace"
    uses_delta = True
    needs_rows = True
    neighbourings = (Neighbouring.REPLACE,)
    order = 62
    domain = ("every ε > 0 and 0 < δ < 1; replace-one (the r runs use disjoint chunks of public size n // r)")
    params = (
        Param("r", 5, "Number of disjoint runs (the paper takes r = O(log(1/β)) for failure probability β).",
              kind="int", low=1, high=100),
        Param("alpha", 0.0, "Target accuracy α: two runs agree when ‖Π̂_i − Π̂_j‖₂ ≤ 2α. 0 = automatic "
              "max(0.1, 2.5ρ) from the grid's relative error ρ (public).", kind="float", low=0.0, high=1.0),
        *APPROX_PARAMS,
    )

    def _release(self, data, k, epsilon, delta, *, neighbouring, rng, deadline, r=5, alpha=0.0, t=0, q=0, ell=0.0,
                 gamma_pub=0.0, point="centre"):
        chunk = data.n // r
        if chunk < 1:
            raise InvalidParameterError(f"r = {r} runs need at least r rows; n = {data.n}. Lower r.")
        t, q, ell = resolve_approx_options(chunk, data.d, k, epsilon, delta, t, q, ell, gamma_pub)
        alpha = alpha or default_alpha(ell, data.d, k)
        perm = rng.permutation(data.n)  # data-independent chunks
        plans = [draw_approx_plan(chunk, data.d, k, t, q, ell, rng) for _ in range(r)]
        ledger = [LedgerEntry(f"{r} runs of Algorithm 2 on disjoint chunks (parallel composition)", epsilon, delta,
                              note=f"{chunk} rows per run, α = {alpha:.3g}; "
                                   + public_settings_note(chunk, data.d, k, epsilon, delta, t, q, ell))]
        hopeless = hopeless_grid_reason(ell, data.d, k)  # public values only: ⊥ before the data is looked at
        if hopeless:
            return MechanismOutput(ledger=ledger, bottom_reason=f"boosting returned ⊥: {hopeless}")
        bases, reasons = [], []
        for i, plan in enumerate(plans):
            deadline.check("the boosted runs")
            res = dpase(data.X[perm[i * chunk:(i + 1) * chunk]], k, epsilon, delta, plan, rng, point=point,
                        deadline=deadline)
            bases.append(res.basis)
            reasons.append(res.reason)
        chosen, support = boost_select(bases, alpha)
        n_ok = sum(b is not None for b in bases)
        diagnostics = {"r": r, "rows_per_run": chunk, "t": t, "q": q, "ell": ell, "alpha": alpha,
                       "runs_not_bottom": n_ok, "support": support,
                       "chunk_fingerprint": hashlib.blake2b(perm.astype(np.int64).tobytes(), digest_size=8).hexdigest(),
                       "plan_fingerprints": [p.fingerprint() for p in plans]}
        if chosen is None:
            need = 0.6 * r
            best = max(support) if support else 0
            first = next((x for x in reasons if x), "")
            return MechanismOutput(ledger=ledger, diagnostics=diagnostics, bottom_reason=(
                f"boosting returned ⊥: no run agreed (within 2α = {2 * alpha:g}) with at least 0.6·r = {need:g} of "
                f"the r = {r} runs (best support {max(best, 0)}; {r - n_ok} runs returned ⊥"
                + (f", e.g. {first}" if first else "") + ")."))
        return MechanismOutput(ledger=ledger, subspace=bases[chosen], diagnostics=diagnostics)
