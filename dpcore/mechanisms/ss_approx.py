"""Singhal–Steinke approximate case: subsample-and-aggregate with a stability-based DP histogram (spec §3.13).

Singhal & Steinke, "Privately Learning Subspaces" (NeurIPS 2021, arXiv 2106.00001), §4, Algorithm 2, Lemma 4.4,
Theorem 4.3. Data-independent partition into t blocks of m = ⌊n/t⌋ rows; non-private top-k PCA Π_j of each block;
z_j = vec(Π_j P) for q public Gaussian reference points P; random-offset grid of side ℓ on R^{dq}; stability
histogram (Lap(2/ε) on non-empty cells, threshold τ_h = 1 + 2 ln(2/δ)/ε); a point of the heaviest cell, reshaped to
d×q; Π̂ = its top-k left singular vectors. Constants t, q, ℓ are the spec's privacy-neutral reconstructions [R].
"""

from __future__ import annotations

from ..privacy import LedgerEntry
from ..subspace_learning import (
    coarse_grid_warning,
    default_cell_side,
    default_num_blocks,
    dpase,
    draw_approx_plan,
    histogram_threshold,
)
from . import register
from .base import Mechanism, MechanismOutput, Param

APPROX_PARAMS = (
    Param("t", 0, "Number of disjoint blocks (subsample-and-aggregate). 0 = automatic ⌈2τ_h + (4/ε)·ln 10⌉, the "
          "smallest t for which a histogram cell holding every block survives with probability ≥ 0.95 (70 at ε = 1, "
          "δ = 1e-6). Each block has m = ⌊n/t⌋ rows; larger m makes the block subspaces agree more closely.",
          kind="int", low=0),
    Param("q", 0, "Number of public Gaussian reference points projected onto each block subspace (0 = 2k; must be "
          "≥ k). The released point lives in R^{d·q}.", kind="int", low=0),
    Param("ell", 0.0, "Histogram cell side ℓ, the main utility knob: too small and the t block projections fall in "
          "different cells (⊥), too large and the released point is coarse (error grows like ℓ·√(d/q)). "
          "0 = automatic from gamma_pub: ℓ = 10·q·d·w, w = 2γ_pub·√(d/m)·√(2k/d)·√(2 ln t).", kind="float", low=0.0),
    Param("gamma_pub", 1e-4, "Public guess of the gap γ (λ_{k+1}/λ_k = γ²), used only to set ℓ automatically. "
          "Must not be computed from the data.", kind="float", low=1e-15, high=1.0),
    Param("point", "centre", "Which point of the released cell to output: its centre or a uniformly random point "
          "(the paper's 'arbitrary point'); both are post-processing.", kind="choice", choices=("centre", "random")),
)


def resolve_approx_options(n: int, d: int, k: int, epsilon: float, delta: float, t: int, q: int, ell: float,
                           gamma_pub: float) -> tuple[int, int, float]:
    """(t, q, ℓ) with the automatic defaults filled in — functions of public quantities only."""
    t = t or default_num_blocks(epsilon, delta)
    q = q or 2 * k
    if q < k:
        from ..exceptions import InvalidParameterError

        raise InvalidParameterError(f"q (reference points) must be ≥ k = {k} to span a k-dim subspace; got {q}.")
    m = max(n // t, 1)
    ell = ell or default_cell_side(gamma_pub, d, k, m, t, q)
    return t, q, ell


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
    guarantee = "approx"
    output = "subspace"
    uses_delta = True
    needs_rows = True
    neighbourings = ("replace",)
    order = 61
    domain = "every ε > 0 and 0 < δ < 1; replace-one (block sizes n/t are public)"
    params = APPROX_PARAMS

    def _release(self, data, k, epsilon, delta, *, neighbouring, rng, deadline, t=0, q=0, ell=0.0, gamma_pub=1e-4,
                 point="centre"):
        t, q, ell = resolve_approx_options(data.n, data.d, k, epsilon, delta, t, q, ell, gamma_pub)
        plan = draw_approx_plan(data.n, data.d, k, t, q, ell, rng)  # all public randomness, before the data
        result = dpase(data.X, k, epsilon, delta, plan, rng, point=point, deadline=deadline)
        coarse = coarse_grid_warning(ell, data.d, k)  # public values only
        ledger = [LedgerEntry("stability-based DP histogram over t block subspaces", epsilon, delta,
                              note=f"t = {t}, q = {q}, ℓ = {ell:.3g}, τ_h = {histogram_threshold(epsilon, delta):.4g}, "
                                   "Lap(2/ε) on non-empty cells" + (f"; {coarse}" if coarse else ""))]
        if result.basis is None:
            return MechanismOutput(ledger=ledger, diagnostics=result.diagnostics, bottom_reason=result.reason)
        return MechanismOutput(ledger=ledger, subspace=result.basis, diagnostics=result.diagnostics)
