"""Singhal–Steinke approximate case: subsample-and-aggregate with a stability-based DP histogram (spec §3.13).

Singhal & Steinke, "Privately Learning Subspaces" (NeurIPS 2021, arXiv 2106.00001), §4, Algorithm 2, Lemma 4.4,
Theorem 4.3. Data-independent partition into t blocks of m = ⌊n/t⌋ rows; non-private top-k PCA Π_j of each block;
z_j = vec(Π_j P) for q public Gaussian reference points P; random-offset grid of side ℓ on R^{dq}; stability
histogram (Lap(2/ε) on non-empty cells, threshold τ_h = 1 + 2 ln(2/δ)/ε); a point of the heaviest cell, reshaped to
d×q; Π̂ = its top-k left singular vectors. Constants t, q, ℓ are the spec's privacy-neutral reconstructions [R].
"""

from __future__ import annotations

from ..core.privacy import LedgerEntry
from ..exceptions import InvalidParameterError
from ..vocabulary import Guarantee, Neighbouring
from . import register
from ._subspace_learning import (
    TARGET_GRID_ERROR,
    cell_side_for_error,
    coarse_grid_warning,
    default_cell_side,
    default_num_blocks,
    dpase,
    draw_approx_plan,
    grid_relative_error,
    histogram_threshold,
    hopeless_grid_reason,
    tolerated_gap,
)
from .base import Mechanism, MechanismOutput, Param

APPROX_PARAMS = (
    Param("t", 0, "Number of disjoint blocks (subsample-and-aggregate). 0 = automatic ⌈2τ_h + (4/ε)·ln 10⌉, the "
          "smallest t for which a histogram cell holding every block survives with probability ≥ 0.95 (70 at ε = 1, "
          "δ = 1e-6). Each block has m = ⌊n/t⌋ rows; larger m makes the block subspaces agree more closely.",
          kind="int", low=0),
    Param("q", 0, "Number of public Gaussian reference points projected onto each block subspace (0 = 2k; must be "
          "≥ k). The released point lives in R^{d·q}.", kind="int", low=0),
    Param("ell", 0.0, "Histogram cell side ℓ, the main utility knob: too small and the t block projections fall in "
          "different cells (⊥), too large and the released point is coarse (relative error ρ = ℓ·√(d/(12k)), "
          "sin θ ≈ 1.2ρ). 0 = automatic: from gamma_pub when it is given (ℓ = 10·q·d·w, "
          "w = 2γ_pub·√(d/m)·√(2k/d)·√(2 ln t)), else ℓ = 0.05·√(12k/d) (ρ = 0.05). A grid with ρ ≥ 0.5 returns ⊥ "
          "without looking at the data.", kind="float", low=0.0),
    Param("gamma_pub", 0.0, "Public bound on the gap γ (λ_{k+1}/λ_k = γ²), used only to set ℓ. 0 = automatic: the "
          "grid aims at ρ = 0.05 and tolerates the gap that grid allows (stated in the ledger; it shrinks like "
          "d^-1.5, the paper's assumption). Must not be computed from the data.", kind="float", low=0.0, high=1.0),
    Param("point", "centre", "Which point of the released cell to output: its centre or a uniformly random point "
          "(the paper's 'arbitrary point'); both are post-processing.", kind="choice", choices=("centre", "random")),
)


def resolve_approx_options(n: int, d: int, k: int, epsilon: float, delta: float, t: int, q: int, ell: float,
                           gamma_pub: float) -> tuple[int, int, float]:
    """(t, q, ℓ) with the automatic defaults filled in — functions of public quantities only.

    t = ⌈2τ_h + (4/ε)·ln 10⌉ (a cell holding every block survives w.p. ≥ 0.95), q = 2k, and ℓ from the public gap
    bound γ_pub when given, else the cell side of relative grid error :data:`TARGET_GRID_ERROR`.
    """
    t = t or default_num_blocks(epsilon, delta)
    q = q or 2 * k
    if q < k:
        raise InvalidParameterError(f"q (reference points) must be ≥ k = {k} to span a k-dim subspace; got {q}.")
    m = max(n // t, 1)
    if not ell:
        ell = (default_cell_side(gamma_pub, d, k, m, t, q) if gamma_pub
               else cell_side_for_error(TARGET_GRID_ERROR, d, k))
    return t, q, ell


def public_settings_note(n: int, d: int, k: int, epsilon: float, delta: float, t: int, q: int, ell: float) -> str:
    """Ledger note of the public settings: t, q, ℓ, τ_h, the grid's relative error and the gap it tolerates."""
    tau = histogram_threshold(epsilon, delta)
    m = max(n // t, 1)
    note = (f"t = {t} blocks of m = {m} rows, q = {q}, ℓ = {ell:.3g} (relative grid error "
            f"ρ = {grid_relative_error(ell, d, k):.2g}, tolerates a gap γ ≲ {tolerated_gap(ell, d, k, m, t, q):.2g}), "
            f"τ_h = {tau:.4g}, Lap(2/ε) on non-empty cells")
    if t < tau:
        note += (f"; WARNING: t = {t} < τ_h = {tau:.1f}, so even a cell holding every block rarely passes the "
                 "threshold (⊥ is likely); leave t at 0 (automatic)")
    coarse = coarse_grid_warning(ell, d, k)
    return note + (f"; {coarse}" if coarse else "")


@register
class SinghalSteinkeApprox(Mechanism):
    id = "ss_approx"
    name = "Singhal–Steinke approximate subspace (DP histogram)"
    summary = ("Subsample-and-aggregate: PCA on t disjoint blocks, aggregate projected public reference points with "
               "a stability-based DP histogram; returns a k-subspace or ⊥. No norm bound; needs a large eigen-gap.")
    description = (
        "Split the rows (at random, independently of the data) into t blocks and run ordinary PCA on each. If the "
        "data is close to a k-dimensional subspace, every block finds almost the same subspace. To compare them, "
        "project q public random Gaussian points onto each block's subspace and concatenate the projections into "
        "one long vector per block; then place a grid with cells of side ℓ and a random offset over these vectors. "
        "A stability-based DP histogram (Laplace noise on the non-empty cells only, released above a threshold) "
        "finds a cell holding most blocks — one person changes one block, so at most two counts by one. A point of "
        "that cell gives q approximate projections, whose top-k singular vectors are the output. The sample size "
        "does not grow with d, but the eigenvalue ratio λ_{k+1}/λ_k = γ² must be tiny; otherwise the blocks "
        "disagree and the result is ⊥."
    )
    reference = ("Singhal & Steinke, Privately Learning Subspaces (NeurIPS 2021), §4 Algorithm 2, Lemma 4.4, "
                 "Thm 4.3; stability histogram: Bun, Nissim & Stemmer (2016), Vadhan (2017)")
    formula = (r"z_j=\mathrm{vec}(\Pi_j P),\ \mathrm{cell}(z)=\lfloor (z-\lambda\ell)/\ell\rfloor,\ "
               r"\tilde c=c+\mathrm{Lap}(2/\varepsilon)\ge \tau_h=1+\tfrac{2}{\varepsilon}\ln\tfrac{2}{\delta},\ "
               r"\hat\Pi=\mathrm{top}_k\,\mathrm{SVD}(\hat P)")
    cost = "O(t·(m²d + m³) + t·q·d·k) (per-block PCA via the m×m Gram matrix when m < d)"
    guarantee = Guarantee.APPROX
    output = "subspace"
    uses_delta = True
    needs_rows = True
    neighbourings = (Neighbouring.REPLACE,)
    order = 61
    domain = "every ε > 0 and 0 < δ < 1; replace-one (block sizes n/t are public)"
    params = APPROX_PARAMS

    def _release(self, data, k, epsilon, delta, *, neighbouring, rng, deadline, t=0, q=0, ell=0.0, gamma_pub=0.0,
                 point="centre"):
        t, q, ell = resolve_approx_options(data.n, data.d, k, epsilon, delta, t, q, ell, gamma_pub)
        plan = draw_approx_plan(data.n, data.d, k, t, q, ell, rng)  # all public randomness, before the data
        ledger = [LedgerEntry("stability-based DP histogram over t block subspaces", epsilon, delta,
                              note=public_settings_note(data.n, data.d, k, epsilon, delta, t, q, ell))]
        hopeless = hopeless_grid_reason(ell, data.d, k)  # public values only: ⊥ before the data is looked at
        if hopeless:
            return MechanismOutput(ledger=ledger, bottom_reason=f"Algorithm 2 returned ⊥: {hopeless}")
        result = dpase(data.X, k, epsilon, delta, plan, rng, point=point, deadline=deadline)
        if result.basis is None:
            return MechanismOutput(ledger=ledger, diagnostics=result.diagnostics, bottom_reason=result.reason)
        return MechanismOutput(ledger=ledger, subspace=result.basis, diagnostics=result.diagnostics)
