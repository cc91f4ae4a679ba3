"""Analyze Gauss: symmetric Gaussian noise on C = XXᵀ calibrated to the L2 sensitivity of its upper triangle.

Dwork, Talwar, Thakurta & Zhang (STOC 2014); Imtiaz & Sarwate (ICASSP 2016) "AG"; Amin et al. (NeurIPS 2019)
"G"; spec §3.2. Δ₂ = √2 under replace-one, 1 under add/remove; classical or analytic (Balle & Wang 2018) σ.
"""

from __future__ import annotations

from ..core.noise import symmetric_gaussian
from ..core.privacy import LedgerEntry, gaussian_rho, gaussian_sigma, l2_sensitivity_upper_triangle
from ..vocabulary import Guarantee
from . import register
from .base import Mechanism, MechanismOutput, Param


@register
class AnalyzeGauss(Mechanism):
    id = "analyze_gauss"
    name = "Analyze Gauss (AG)"
    summary = "Adds symmetric Gaussian noise to C = XXᵀ, calibrated to its L2 sensitivity (√2 for replace-one)."
    description = (
        "Release C plus a symmetric Gaussian matrix. The noise level comes from the Gaussian mechanism: "
        "the analytic calibration (valid for every ε) is the default, the classical √(2 ln(1.25/δ))/ε formula "
        "(valid for ε ≤ 1) is an option. The released matrix is symmetric but not PSD; post-processing "
        "projects it to PSD and clips eigenvalues to [0, n] for free."
    )
    reference = ("Dwork, Talwar, Thakurta & Zhang (STOC 2014); used as AG in Imtiaz & Sarwate (2016) and as G in "
                 "Amin et al. (2019); analytic σ from Balle & Wang (ICML 2018)")
    formula = (r"\hat C = XX^\top + E,\; E_{ij}=E_{ji}\sim\mathcal N(0,\sigma^2),\; "
               r"\sigma=\sigma(\varepsilon,\delta,\Delta_2)")
    cost = "O(nd² + d³)"
    guarantee = Guarantee.APPROX
    output = "covariance"
    uses_delta = True
    utility_family = "additive"
    order = 20
    domain = ("every ε > 0 with the analytic calibration; ε ≤ 1 with the classical one (Dwork–Roth Thm A.1); "
              "0 < δ < 1; both relations (Δ₂ = √2 replace-one, 1 add/remove)")
    params = (
        Param("calibration", "analytic", "Gaussian noise calibration: 'analytic' (Balle & Wang, any ε) or "
              "'classical' (√(2 ln(1.25/δ))·Δ₂/ε, ε ≤ 1 only).", kind="choice", choices=("analytic", "classical")),
    )

    def zcdp_rho(self, epsilon, delta, *, n, d, neighbouring, options):
        """One Gaussian step: ρ = Δ²/(2σ²), scale-free in Δ."""
        return gaussian_rho(epsilon, delta, options.get("calibration", "analytic"))

    def _release(self, data, k, epsilon, delta, *, neighbouring, rng, deadline, calibration="analytic"):
        l2 = l2_sensitivity_upper_triangle(neighbouring)
        sigma = gaussian_sigma(epsilon, delta, l2, calibration)
        covariance = data.C + symmetric_gaussian(data.d, sigma, rng)
        ledger = [LedgerEntry("symmetric Gaussian noise on C", epsilon, delta,
                              note=f"σ = {sigma:.4g}, Δ₂ = {l2:.4g} ({calibration})")]
        return MechanismOutput(ledger=ledger, covariance=covariance, diagnostics={"sigma": sigma})
