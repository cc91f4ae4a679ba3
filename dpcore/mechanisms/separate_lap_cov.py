"""SeparateLapCov: the pure ε-DP SeparateCov (Laplace noise on the matrix and, separately, on the eigenvalues).

Dong, Liang & Yi (NeurIPS 2022), Appendix I (pure DP); authors' code hkustDB/PrivateCovariance,
``adaptive/algos.py`` (SeparateLapCov). ε/2 on the upper triangle of C (L1 sensitivity d + 1 replace-one,
(d + 1)/2 add/remove — valid bounds, attained under add/remove only; the authors' code uses √2·d), ε/2 on λ(C)
(L1 sensitivity 2 / 1, Lidskii); output P[Ĉ]·diag(λ̃)·P[Ĉ]ᵀ, projected to PSD. Derivation: docs/dong_liang_yi.md.
"""

from __future__ import annotations

from ..core.privacy import LedgerEntry
from ..vocabulary import Guarantee
from . import register
from ._dong_liang_yi import SEPARATE_SPLIT, clip_to_ceiling, separate_lap_cov
from .base import Mechanism, MechanismOutput


@register
class SeparateLapCov(Mechanism):
    id = "separate_lap_cov"
    name = "SeparateLapCov (Dong–Liang–Yi, pure)"
    summary = "Pure-DP SeparateCov: eigenvectors from C plus Laplace noise, eigenvalues with their own Laplace noise."
    description = (
        "The pure ε-DP version of SeparateCov: half of ε on a Laplace-noised covariance whose eigenvectors are kept, "
        "half on the d eigenvalues of C with their own Laplace noise."
    )
    reference = ("Dong, Liang & Yi, \"Differentially Private Covariance Revisited\" (NeurIPS 2022), Appendix I, "
                 "SeparateLapCov; authors' code hkustDB/PrivateCovariance, adaptive/algos.py")
    formula = (r"\hat C = P[C+L]\,\mathrm{diag}(\lambda(C)+l)\,P[C+L]^\top,\; L_{ij}\sim\mathrm{Lap}(\tfrac{2(d+1)}"
               r"{\varepsilon}),\; l_i\sim\mathrm{Lap}(\tfrac{4}{\varepsilon})")
    cost = "O(nd² + d³) (two eigendecompositions)"
    guarantee = Guarantee.PURE
    output = "covariance"
    utility_family = "additive"
    order = 35
    domain = "every ε > 0; both relations (L1 sensitivities d + 1 and 2 replace-one, (d + 1)/2 and 1 add/remove)"

    def _release(self, data, k, epsilon, delta, *, neighbouring, rng, deadline):
        step = separate_lap_cov(data.C, epsilon, 1.0, neighbouring, rng)
        half = SEPARATE_SPLIT * epsilon
        ledger = [LedgerEntry("noisy covariance, eigenvectors kept (Laplace)", half,
                              note=f"b = {step.sigma_matrix:.4g}"),
                  LedgerEntry("eigenvalues of C + Laplace noise", epsilon - half,
                              note=f"b = {step.sigma_eigenvalues:.4g}")]
        return MechanismOutput(ledger=ledger, covariance=clip_to_ceiling(step.covariance, data.n, 1.0, neighbouring),
                               diagnostics={"scale_matrix": step.sigma_matrix,
                                            "scale_eigenvalues": step.sigma_eigenvalues})
