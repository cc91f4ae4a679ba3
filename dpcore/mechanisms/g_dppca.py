"""g-DPPCA: directions from a noisy spatial Kendall's tau matrix of paired differences ((ε, δ)-DP, replace-one).

Kim & Jung, "Robust and Differentially Private PCA for non-Gaussian data" (arXiv 2507.15232, 2025): under an
elliptical law the (generalised) multivariate Kendall's tau matrix E[(x − x′)(x − x′)ᵀ/‖x − x′‖²] has the
covariance's eigenvectors in the same order, and each term has unit trace whatever the scale of the data, so no
norm bound and no centring are needed and one outlier moves the estimate by a bounded amount. We use the O(nd²)
variant with a public random pairing: m = ⌊n/2⌋ disjoint pairs (π₂ⱼ₋₁, π₂ⱼ) of a uniform permutation π drawn from
the mechanism's stream (a function of the seed and the public n only), uⱼ = (x_a − x_b)/‖x_a − x_b‖ (0 for a tie),

    K = (1/m) Σⱼ uⱼuⱼᵀ,   K̂ = K + E,   E symmetric, upper triangle i.i.d. N(0, σ²),   σ = σ(ε, δ, √2/m),

and release the top-k eigenvectors of K̂ only. Δ₂ = √2/m is the L2 sensitivity of the upper triangle (incl. the
diagonal) of K under replace-one, attained by one row moved from e₁ to e₂ paired with a zero row
(docs/g_dppca.md has the proof; for even n it is 2√2/n — an R package's 2/n under-noises by √2, the audit's
:class:`dpcore.audit.mutants.GDPPCATwoOverN` mutant). Under add/remove n is private and the pairing and m would
depend on it, so the mechanism claims replace-one only.
"""

from __future__ import annotations

import math

import numpy as np

from ..core.linalg import top_k_eigenpairs
from ..core.noise import symmetric_gaussian
from ..core.privacy import LedgerEntry, gaussian_rho, gaussian_sigma
from ..exceptions import InvalidParameterError
from ..vocabulary import Guarantee, Neighbouring
from . import register
from .base import Mechanism, MechanismOutput, Param

#: Fewest rows with at least one pair (n is public under replace-one, so refusing n < 2 reveals nothing).
MIN_ROWS = 2


def pair_count(n: int) -> int:
    """m = ⌊n/2⌋, the number of disjoint pairs of the public pairing."""
    return n // 2


def public_pairing(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """The two index arrays (a, b) of m = ⌊n/2⌋ disjoint pairs of a uniform permutation of range(n).

    Draws only from ``rng`` and n (public under replace-one): never from the data, so neighbours with the same seed
    get the same pairing and exactly one pair (or none, the odd row out) sees the replaced record.
    """
    perm = rng.permutation(n)
    m = pair_count(n)
    return perm[0:2 * m:2], perm[1:2 * m:2]


def kendall_pairs(X: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """K = (1/m) Σⱼ uⱼuⱼᵀ with uⱼ = (X[aⱼ] − X[bⱼ])/‖·‖ (a zero vector for a tie): the paired spatial Kendall's tau."""
    diff = X[a] - X[b]
    # Divide by the largest entry first: a difference of tiny (even subnormal) entries keeps its direction and
    # unit norm; squaring it directly would underflow (norm 0, or a norm rounded by ~1e-5).
    peak = np.max(np.abs(diff), axis=1, keepdims=True)
    diff = np.divide(diff, peak, out=np.zeros_like(diff), where=peak > 0)
    norms = np.linalg.norm(diff, axis=1)
    scale = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)
    U = diff * scale[:, None]
    K = U.T @ U / a.size
    return 0.5 * (K + K.T)


def kendall_l2_sensitivity(m: int) -> float:
    """L2 sensitivity of the upper triangle (incl. diagonal) of K under replace-one: √2/m (docs/g_dppca.md)."""
    return math.sqrt(2.0) / m


def noisy_kendall(X: np.ndarray, epsilon: float, delta: float, rng: np.random.Generator,
                  calibration: str = "analytic", sensitivity=kendall_l2_sensitivity) -> tuple[np.ndarray, float]:
    """(K̂, σ): the public pairing, then K plus symmetric Gaussian noise calibrated to ``sensitivity(m)``."""
    n, d = X.shape
    if n < MIN_ROWS:
        raise InvalidParameterError(f"g-DPPCA pairs rows, so it needs at least {MIN_ROWS} rows (n is public "
                                    "under replace-one); use a larger table.")
    a, b = public_pairing(n, rng)
    sigma = gaussian_sigma(epsilon, delta, sensitivity(a.size), calibration)
    return kendall_pairs(X, a, b) + symmetric_gaussian(d, sigma, rng), sigma


@register
class GDPPCA(Mechanism):
    id = "g_dppca"
    name = "g-DPPCA (noisy spatial Kendall's tau)"
    summary = ("Directions from the spatial Kendall's tau matrix of randomly paired differences plus symmetric "
               "Gaussian noise: no norm bound, no centring, robust to outliers ((ε, δ), replace-one).")
    description = (
        "Pairs the rows at random (a public pairing that depends only on the seed and n), turns each pair's "
        "difference into a unit vector (its spatial sign) and averages their outer products: every pair adds a "
        "matrix of trace 1 however far apart its rows are, so an outlier or a loose bound cannot inflate it. "
        "Symmetric Gaussian noise calibrated to the matrix's sensitivity √2/m (m = ⌊n/2⌋ pairs) makes it "
        "(ε, δ)-DP, and the top-k eigenvectors are released — directions only: the matrix is not the "
        "covariance (its eigenvalues are not variances). For elliptical data (Gaussian, Student t, …) its "
        "eigenvectors are the covariance's, in the same order. It is location invariant: it estimates the "
        "centred covariance's directions, so metrics against the uncentred C (no centring chosen) understate it."
    )
    reference = ("Kim & Jung, 'Robust and Differentially Private PCA for non-Gaussian data' (arXiv 2507.15232, "
                 "2025), g-DPPCA with the spatial sign; pair variant and sensitivity √2/m in docs/g_dppca.md")
    formula = (r"K=\tfrac1m\sum_{j\le m}u_ju_j^\top,\; u_j=\tfrac{x_{a_j}-x_{b_j}}{\|x_{a_j}-x_{b_j}\|},\; "
               r"\hat K=K+E,\; \sigma=\sigma(\varepsilon,\delta,\sqrt2/m),\; \hat V=\mathrm{top}_k(\hat K)")
    cost = "O(nd² + d³)"
    guarantee = Guarantee.APPROX
    output = "subspace"
    uses_delta = True
    needs_rows = True
    neighbourings = (Neighbouring.REPLACE,)
    utility_family = "additive"
    order = 22
    location_invariant = True
    domain = ("every ε > 0 with the analytic calibration; ε ≤ 1 with the classical one; 0 < δ < 1; replace-one only "
              "(the pairing and m = ⌊n/2⌋ use the public n); n ≥ 2")
    params = (
        Param("calibration", "analytic", "Gaussian noise calibration: 'analytic' (Balle & Wang, any ε) or "
              "'classical' (√(2 ln(1.25/δ))·Δ₂/ε, ε ≤ 1 only).", kind="choice", choices=("analytic", "classical")),
    )

    def check_domain(self, *, d, k, epsilon, delta, neighbouring, options):
        if options.get("calibration") == "classical" and epsilon > 1.0:
            raise InvalidParameterError("the classical Gaussian calibration holds only for ε ≤ 1 (Dwork–Roth "
                                        "Thm A.1); use calibration='analytic' for a larger ε.")

    #: Sensitivity of K's upper triangle for m pairs (overridden only by the audit's under-noised mutant).
    sensitivity = staticmethod(kendall_l2_sensitivity)

    def zcdp_rho(self, epsilon, delta, *, n, d, neighbouring, options):
        """One Gaussian step: ρ = Δ²/(2σ²), scale-free in Δ."""
        return gaussian_rho(epsilon, delta, options.get("calibration", "analytic"))

    def _release(self, data, k, epsilon, delta, *, neighbouring, rng, deadline, calibration="analytic"):
        deadline.check("g-DPPCA pairing")
        K_hat, sigma = noisy_kendall(data.X, epsilon, delta, rng, calibration, self.sensitivity)
        _, V = top_k_eigenpairs(K_hat, k)
        m = pair_count(data.n)
        l2 = self.sensitivity(m)
        ledger = [LedgerEntry("symmetric Gaussian noise on the paired Kendall's tau matrix", epsilon, delta,
                              note=f"m = {m} pairs (public pairing), σ = {sigma:.4g}, Δ₂ = {l2:.4g} ({calibration})")]
        return MechanismOutput(ledger=ledger, subspace=V, diagnostics={"sigma": sigma, "pairs": m})
