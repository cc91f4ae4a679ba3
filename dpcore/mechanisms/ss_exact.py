"""Singhal–Steinke exact case: GAP-MAX over spans of k data points (spec §3.12).

Singhal & Steinke, "Privately Learning Subspaces" (NeurIPS 2021, arXiv 2106.00001), §3, Algorithm 1, Theorem 3.2;
GAP-MAX of Bun, Dwork, Rothblum & Steinke (STOC 2018) with truncated-Laplace noise (Geng et al. 2020). Score
q(X, S) = #{x_i ∈ S} − max_{T ⊂ S, dim T = k−1} #{x_i ∈ T} (sensitivity 1), gap g = max(0, q(S₁) − s₂ − 1)
(sensitivity 2, positive for at most one S), release S₁ iff g + TLap(2/ε, A_T) > A_T,
A_T = (2/ε)·ln(1 + (e^ε − 1)/(2δ)). Default ⊥ scored q(⊥) = ℓ + 1 [R]. Succeeds with probability 1 when
n > 3ℓ + 2 + 2A_T on data with all but ℓ points in S* and ≤ ℓ points in any (k−1)-dim subspace.
The released basis of S₁ is orth(Π_{S₁}G) with fresh Gaussian G: it depends on S₁ only (spec errata §3.12).

Tolerance (issue 18 item 2): the privacy proof is for exact membership. With a tolerance > 0 the member rows only lie
*near* a k-dimensional subspace, and the released plane is fitted to them: a row 10⁻⁷ off the plane moves the
output by a fixed multiple of its offset (an event of probability 1 vs 0). No function of the member rows is
covered by the proof, and the candidate spans themselves are spans of data points, so such a release is labelled
NOT private (guarantee "none", a non-private ledger step). Tolerance 0 (exact membership) keeps (ε, δ)-DP; in
floating point it finds a subspace only when the points lie in it exactly (e.g. a coordinate subspace).
"""

from __future__ import annotations

from ..core.privacy import LedgerEntry
from ..exceptions import InvalidParameterError
from ..vocabulary import Guarantee, Neighbouring
from . import register
from ._subspace_learning import (
    DEFAULT_MAX_WORK,
    DEFAULT_TOLERANCE,
    check_exact_work,
    exact_select,
    exact_subsample_size,
    gap_max_step,
    gap_max_success_probability,
    random_basis_of_span,
    truncated_laplace_half_width,
)
from .base import Mechanism, MechanismOutput, Param


def tolerance_ledger_entry(tolerance: float) -> LedgerEntry:
    """The non-private step a tolerance > 0 adds: the released plane is fitted to rows merely near it."""
    if not tolerance > 0:
        raise InvalidParameterError("tolerance_ledger_entry is for a tolerance > 0.")
    return LedgerEntry(
        "membership within a tolerance (plane fitted to the member rows)", private=False,
        note=(f"tolerance {tolerance:g} > 0: rows up to {tolerance:g}·‖x‖ off the selected subspace count as "
              "members and the released plane is fitted to them, so one row's offset moves the output — outside "
              "the privacy proof, which needs exact membership (tolerance 0)."))


@register
class SinghalSteinkeExact(Mechanism):
    id = "ss_exact"
    name = "Singhal–Steinke exact subspace (GAP-MAX)"
    summary = ("Recovers a k-dimensional subspace that holds almost all points exactly, or returns ⊥; needs no norm "
               "bound and its sample size does not depend on d.")
    description = (
        "For data lying exactly in an unknown k-dimensional subspace (up to ℓ outliers), score every subspace S "
        "spanned by k data points by the number of points in S minus the largest number in any (k−1)-dimensional "
        "subspace of S. One point changes every score by at most 1, and only the true subspace can score high, so "
        "GAP-MAX releases the top subspace when its lead over the runner-up (and over a default ⊥ scored ℓ + 1), "
        "plus truncated-Laplace noise, clears the half-width A_T — otherwise it outputs ⊥. The output is exact (no "
        "noise on the subspace), which is only possible under (ε, δ)-DP. The search scores all C(n, k) spans, so "
        "it runs on a random subsample of public size (a few hundred rows at k = 3). Private only with exact "
        "membership (tolerance 0); the default tolerance 1e-4 makes it a labelled NOT-private exhibit, because the "
        "released plane is then fitted to rows that merely lie near it."
    )
    reference = ("Singhal & Steinke, Privately Learning Subspaces (NeurIPS 2021), §3 Algorithm 1, Thm 3.2; GAP-MAX: "
                 "Bun, Dwork, Rothblum & Steinke (STOC 2018); truncated Laplace: Geng, Ding, Guo & Kumar (2020)")
    formula = (r"q(X,S)=|X\cap S|-\max_{T\subset S,\,\dim T=k-1}|X\cap T|,\quad "
               r"\hat S = S_1 \text{ iff } \max(0,q(S_1)-s_2-1)+\mathrm{TLap}(2/\varepsilon, A_T) > A_T,\ "
               r"A_T=\tfrac{2}{\varepsilon}\ln\!\big(1+\tfrac{e^\varepsilon-1}{2\delta}\big)")
    cost = "O(C(n, k−1)·(n² + nd)) — exponential in k (teaching sizes only)"
    one_shot = False
    guarantee = Guarantee.APPROX
    output = "subspace"
    uses_delta = True
    needs_rows = True
    order = 60
    domain = ("every ε > 0 and 0 < δ < 1; no norm bound (scores are counts); replace-one only (n public: the "
              "search-size limit refuses large n, which would reveal n under add/remove). Utility (not privacy) "
              "needs n > 3ℓ + 2 + 2A_T")
    neighbourings = (Neighbouring.REPLACE,)
    params = (
        Param("ell", 0, "Public robustness ℓ: how many points may lie off the true subspace and in any (k−1)-dim "
              "subspace. Values below k−1 are raised to k−1 (points in general position). ⊥ gets the default score "
              "ℓ + 1; success is certain when n > 3ℓ + 2 + 2A_T.", kind="int", low=0),
        Param("tolerance", DEFAULT_TOLERANCE, "Relative membership tolerance: x ∈ S iff ‖x − Π_S x‖ ≤ tol·‖x‖. "
              "Only tolerance 0 (exact membership) is private; any tolerance > 0 fits the released plane to rows "
              "that lie merely near it, so the release is labelled NOT private (a teaching exhibit of the exact "
              "case on floating-point data).", kind="float", low=0.0, high=0.1),
        Param("max_work", DEFAULT_MAX_WORK, "Limit on the search size m·C(m, k) for the m rows searched; 3e8 ≈ "
              "m = 200 at k = 3 (a few seconds).", kind="float", low=1.0),
        Param("subsample", 0, "Rows the search uses: 0 = automatic, all n rows when n·C(n, k) ≤ max_work, else the "
              "largest m with m·C(m, k) ≤ max_work (at most 2,000) — a uniformly random subset drawn without looking "
              "at the data, so its size is public and one record still changes at most one searched row.",
              kind="int", low=0),
    )

    def guarantee_for(self, k: int, options: dict) -> str:
        """(ε, δ)-DP only with exact membership (tolerance 0); a tolerance > 0 is outside the proof."""
        return self.guarantee if float(options.get("tolerance", DEFAULT_TOLERANCE)) == 0 else Guarantee.NONE

    def _release(self, data, k, epsilon, delta, *, neighbouring, rng, deadline, ell=0, tolerance=DEFAULT_TOLERANCE,
                 max_work=DEFAULT_MAX_WORK, subsample=0):
        m = min(int(subsample), data.n) if subsample else exact_subsample_size(data.n, k, max_work)
        work = check_exact_work(m, k, max_work)
        # a data-independent subset of public size m (replace-one: neighbours' subsets differ in ≤ 1 row)
        X = data.X if m == data.n else data.X[rng.choice(data.n, size=m, replace=False)]
        ell_eff = max(int(ell), k - 1)
        A_T = truncated_laplace_half_width(epsilon, delta)
        sel = exact_select(X, k, ell_eff, tol=tolerance, deadline=deadline)
        released, noisy_gap = gap_max_step(sel.gap, epsilon, delta, rng)
        note = f"gap sensitivity 2, A_T = {A_T:.4g}, q(⊥) = ℓ + 1 = {ell_eff + 1}"
        if m < data.n:
            note += f"; searched a uniformly random subsample of m = {m} of the n = {data.n} rows (public)"
        ledger = [LedgerEntry("GAP-MAX over spans of k points (truncated Laplace)", epsilon, delta, note=note)]
        if tolerance > 0:
            ledger.append(tolerance_ledger_entry(tolerance))
        diagnostics = {
            "A_T": A_T, "ell": ell_eff, "bottom_score": sel.bottom_score, "work": work, "rows_searched": m,
            "success_threshold_n": 3 * ell_eff + 2 + 2 * A_T,
            "nonprivate_top_score": sel.top_score, "nonprivate_second_score": sel.second_score,
            "nonprivate_gap": sel.gap, "nonprivate_candidates_above_bottom": sel.n_heavy,
            "nonprivate_success_probability": gap_max_success_probability(sel.gap, epsilon, delta),
        }
        # ⊥ is the private output; which test produced it (⊥ on top, or a noisy gap below A_T) is not, so both
        # give the same public reason and the exact scores stay in the non-private diagnostics.
        bottom_reason = (
            f"GAP-MAX returned ⊥: no {k}-dimensional subspace's noisy score gap cleared the threshold "
            f"A_T = {A_T:.1f}. Success is certain when all but ℓ = {ell_eff} points lie in one {k}-dimensional "
            f"subspace and the m = {m} searched rows exceed 3ℓ + 2 + 2A_T = {3 * ell_eff + 2 + 2 * A_T:.0f}; "
            "otherwise check k or centre the data (the exact case needs points exactly in the subspace).")
        if sel.top_mask is None:
            diagnostics["bottom_detail"] = (f"no span of {k} points scores above ⊥ (best score {sel.top_score}, "
                                            f"q(⊥) = {ell_eff + 1})")
            return MechanismOutput(ledger=ledger, diagnostics=diagnostics, bottom_reason=bottom_reason)
        if not released:
            diagnostics["bottom_detail"] = (f"top score {sel.top_score}, runner-up {sel.second_score}, gap "
                                            f"g = {sel.gap}; success is certain once g > 2A_T = {2 * A_T:.1f}")
            return MechanismOutput(ledger=ledger, diagnostics=diagnostics, bottom_reason=bottom_reason)
        # Release S₁ through a basis that depends only on S₁ and fresh randomness (never the member rows' own
        # singular vectors, which describe how the points spread inside S₁).
        basis = random_basis_of_span(X[sel.top_mask], k, rng)
        diagnostics["noisy_gap"] = noisy_gap
        return MechanismOutput(ledger=ledger, subspace=basis, diagnostics=diagnostics)
