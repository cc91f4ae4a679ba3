"""PPM: private (noisy) power method with a public iteration count and zCDP calibration ((ε, δ)-DP).

Hardt & Price, "The noisy power method", NIPS 2014; baseline of Imtiaz & Sarwate (ICASSP 2016); spec §3.8.
The published use is not DP under the data-point relation (L chosen from the exact spectrum; entry-level noise
scaled by ‖X‖_∞). Corrected: L is public; each iteration releases CX + N(0, σ²) where the L2 sensitivity of CX
(X orthonormal, public given earlier outputs) is Δ = √2 (replace-one) or 1 (add/remove); L Gaussian releases are
L·Δ²/(2σ²)-zCDP, so σ = Δ·√(L/(2ρ)) with ρ = (√(ε + ln(1/δ)) − √(ln(1/δ)))². The pure-ε variant is not
implemented (its constant is not recoverable from the seed).
"""

from __future__ import annotations

import math

from ..core._validation import check_delta, check_epsilon, check_int
from ..core.linalg import orthonormalize
from ..core.noise import uniform_stiefel
from ..core.privacy import LedgerEntry, l2_sensitivity_projection, zcdp_rho
from ..vocabulary import Guarantee, Neighbouring
from . import register
from .base import Mechanism, MechanismOutput, Param

#: Default iteration count L = ⌈c·ln d⌉ with c = 3, a public guess of the gap ratio σ_k/(σ_k − σ_{k+1}).
ITERATION_FACTOR = 3.0


def default_iterations(d: int) -> int:
    """L = max(1, ⌈3·ln d⌉) (public; does not look at the data)."""
    return max(1, math.ceil(ITERATION_FACTOR * math.log(max(d, 2))))


def ppm_sigma(epsilon: float, delta: float, L: int, neighbouring: str = Neighbouring.REPLACE) -> float:
    """Per-entry noise σ = Δ·√(L/(2ρ)) (ε = 1, δ = 1e−5, L = 20, replace-one → ρ = 0.0208199, σ = 30.9938)."""
    L = check_int(L, "iterations", 1)
    return l2_sensitivity_projection(neighbouring) * math.sqrt(L / (2.0 * zcdp_rho(epsilon, delta)))


def hardt_price_sigma(epsilon: float, delta: float, p: int, L: int) -> float:
    """Hardt–Price entry-model σ = √(4pL ln(1/δ))/ε (× ‖X‖_∞); 67.8614 for ε = 1, δ = 1e−5, p = 5, L = 20.

    For comparison only: this calibration is for entry-level neighbours, not the data-point relation.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta, required=True)
    p = check_int(p, "p", 1)
    L = check_int(L, "iterations", 1)
    return math.sqrt(4.0 * p * L * math.log(1.0 / delta)) / epsilon


@register
class PrivatePowerMethod(Mechanism):
    id = "ppm"
    name = "Private power method"
    summary = "L noisy power iterations X ← QR(CX + G), Gaussian noise calibrated by zCDP ((ε, δ)-DP)."
    description = (
        "Start from a random orthonormal d×k matrix and repeat L times: multiply by C, add Gaussian noise, "
        "re-orthonormalise. L is a public parameter (the published baseline chose it from the exact singular "
        "values, which is not private); each step's noise is calibrated to the data-point sensitivity √2 of CX and "
        "the L steps are composed with zero-concentrated DP. More iterations converge further but need more noise."
    )
    reference = ("Hardt & Price (NIPS 2014), noisy power method; baseline PPM of Imtiaz & Sarwate (ICASSP 2016); "
                 "calibration corrected per spec §3.8 (zCDP, Bun & Steinke 2016)")
    formula = (r"X_\ell=\mathrm{QR}(C X_{\ell-1}+G_\ell),\; G_\ell\sim\mathcal N(0,\sigma^2)^{d\times k},\; "
               r"\sigma=\Delta\sqrt{L/(2\rho)},\; \rho=(\sqrt{\varepsilon+\ln(1/\delta)}-\sqrt{\ln(1/\delta)})^2")
    cost = "O(L·d²·k)"
    one_shot = False  # L power iterations
    guarantee = Guarantee.APPROX
    output = "subspace"
    uses_delta = True
    order = 30
    domain = ("every ε > 0 and 0 < δ < 1 (zCDP accounting over the public number of iterations L); both relations")
    params = (
        Param("iterations", 0, "Number of power iterations L (public). 0 = automatic ⌈3·ln d⌉ (c = 3 is a public "
              "guess of the gap ratio σ_k/(σ_k − σ_{k+1})).", kind="int", low=0, high=10_000),
    )

    def zcdp_rho(self, epsilon, delta, *, n, d, neighbouring, options):
        """Calibrated in zCDP: the L Gaussian steps together are ρ-zCDP with ρ = zcdp_rho(ε, δ) (σ = Δ·√(L/(2ρ)):
        free of L and of the relation's Δ)."""
        return zcdp_rho(epsilon, delta)

    def _release(self, data, k, epsilon, delta, *, neighbouring, rng, deadline, iterations=0):
        L = iterations or default_iterations(data.d)
        sigma = ppm_sigma(epsilon, delta, L, neighbouring)
        C = data.C
        X = uniform_stiefel(data.d, k, rng)
        for _ in range(L):
            deadline.check("the private power method")
            Y = C @ X + sigma * rng.standard_normal(X.shape)
            X = orthonormalize(Y)
        rho = zcdp_rho(epsilon, delta)
        ledger = [LedgerEntry(f"{L} noisy power iterations (Gaussian, zCDP)", epsilon, delta,
                              note=f"σ = {sigma:.4g}, Δ₂ = {l2_sensitivity_projection(neighbouring):.4g}, "
                                   f"ρ = {rho:.4g} → (ε, δ)")]
        return MechanismOutput(ledger=ledger, subspace=X,
                               diagnostics={"iterations": L, "sigma": sigma, "rho": rho})

