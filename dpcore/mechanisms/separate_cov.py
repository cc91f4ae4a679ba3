"""SeparateCov: eigenvectors from a noisy covariance, eigenvalues privatised separately (ρ-zCDP ⇒ (ε, δ)).

Dong, Liang & Yi, "Differentially Private Covariance Revisited" (NeurIPS 2022), SeparateCov (§1.1, the
trace-sensitive algorithm). Ĉ = C + W₁ with W₁ symmetric Gaussian (ρ/2, Δ₂ = √2 replace-one / 1 add/remove);
λ̃ = λ(C) + N(0, σ²I) (ρ/2, ‖λ(C) − λ(C′)‖₂ ≤ ‖C − C′‖_F by Hoffman–Wielandt: the same Δ₂); output
P[Ĉ]·diag(λ̃)·P[Ĉ]ᵀ. Only Gaussian noise, so ρ = μ²/2 with μ from the exact (ε, δ) profile of the Gaussian
(:func:`~dpcore.core.privacy.gaussian_mu_rho_for`). Derivation: docs/dong_liang_yi.md.
"""

from __future__ import annotations

from ..core.privacy import gaussian_mu_rho_for
from ..vocabulary import Guarantee
from . import register
from ._dong_liang_yi import SEPARATE_SPLIT, clip_to_ceiling, separate_cov, zcdp_ledger
from .base import Mechanism, MechanismOutput

#: How the ledger names the (ε, δ) → ρ step.
GDP_CONVERSION = ("ρ = μ²/2, μ from the exact Gaussian (ε, δ) profile (Balle & Wang 2018; adaptive composition of "
                  "Gaussians is μ-GDP, Dong, Roth & Su 2022)")


@register
class SeparateCov(Mechanism):
    id = "separate_cov"
    name = "SeparateCov (Dong–Liang–Yi)"
    summary = ("Eigenvectors from C plus Gaussian noise, eigenvalues of C plus their own Gaussian noise "
               "(half of ρ each).")
    description = (
        "Two Gaussian releases of the same covariance, each with half the zCDP budget: a noisy matrix, from which "
        "only the eigenvectors are kept, and the d eigenvalues with their own noise. The eigenvalue vector moves by "
        "no more than the matrix does when one record changes, but it has d numbers instead of d(d+1)/2, so its "
        "noise is much smaller in total: the error grows with √(trace) rather than with d. The output is the noisy "
        "eigenvectors with the separately noised eigenvalues, projected to PSD."
    )
    reference = ("Dong, Liang & Yi, \"Differentially Private Covariance Revisited\" (NeurIPS 2022), SeparateCov; "
                 "authors' code hkustDB/PrivateCovariance, adaptive/algos.py")
    formula = (r"\hat C = P[C+W]\,\mathrm{diag}(\lambda(C)+z)\,P[C+W]^\top,\; "
               r"W_{ij}\sim\mathcal N(0,\tfrac{\Delta^2}{\rho}),\; z\sim\mathcal N(0,\tfrac{\Delta^2}{\rho}I)")
    cost = "O(nd² + d³) (two eigendecompositions)"
    guarantee = Guarantee.APPROX
    output = "covariance"
    uses_delta = True
    utility_family = "additive"
    order = 25
    domain = ("every ε > 0 and 0 < δ < 1 (ρ-zCDP, ρ = μ²/2 from the exact Gaussian profile); both relations "
              "(Δ₂ = √2 replace-one, 1 add/remove, for the matrix and the eigenvalue vector alike)")

    def zcdp_rho(self, epsilon, delta, *, n, d, neighbouring, options):
        """Its two Gaussian releases share ρ = gaussian_mu_rho_for(ε, δ)."""
        return gaussian_mu_rho_for(epsilon, delta)

    def _release(self, data, k, epsilon, delta, *, neighbouring, rng, deadline):
        rho = gaussian_mu_rho_for(epsilon, delta)
        step = separate_cov(data.C, rho, 1.0, neighbouring, rng)
        ledger = zcdp_ledger(
            [("noisy covariance, eigenvectors kept (Gaussian)", SEPARATE_SPLIT, f"σ = {step.sigma_matrix:.4g}"),
             ("eigenvalues of C + Gaussian noise", 1 - SEPARATE_SPLIT, f"σ = {step.sigma_eigenvalues:.4g}")],
            rho, epsilon, delta, GDP_CONVERSION)
        covariance = clip_to_ceiling(step.covariance, data.n, 1.0, neighbouring)
        return MechanismOutput(ledger=ledger, covariance=covariance,
                               diagnostics={"rho": rho, "sigma_matrix": step.sigma_matrix,
                                            "sigma_eigenvalues": step.sigma_eigenvalues})
