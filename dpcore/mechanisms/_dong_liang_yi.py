"""Shared steps of Dong, Liang & Yi (NeurIPS 2022), "Differentially Private Covariance Revisited".

SeparateCov, AdaptiveCov and their pure-DP twins (``separate_cov``, ``adaptive_cov``, ``separate_lap_cov``,
``adaptive_lap_cov``) are built from the functions here. Units are ours, not the paper's: C = Σ xᵢxᵢᵀ (unnormalised;
the paper's Σ = C/n) with ‖xᵢ‖ ≤ 1, so every noise scale below is the paper's times n and none depends on n.
The derivation of every constant is in ``docs/dong_liang_yi.md``; the authors' code (hkustDB/PrivateCovariance,
``adaptive/algos.py``, ``adaptive/utils.py``) is the test oracle (``tests/oracles/dong_liang_yi_reference.py``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..core.linalg import clip_spectrum, eigh_desc, symmetrize
from ..core.noise import symmetric_gaussian, symmetric_laplace
from ..core.privacy import l1_sensitivity_eigenvalues, l2_sensitivity_upper_triangle
from ..vocabulary import Neighbouring

# --- the zCDP budget split of AdaptiveCov (ρ = ρ/8 + ρ/8 + 3ρ/4) -------------------------------------------------
#: Share of ρ spent on the noisy trace (Gaussian, Δ = 1).
TRACE_SHARE = 1.0 / 8.0
#: Share of ρ spent on AboveThreshold over the norm levels (pure ε-DP with ε = √(2·ρ/8) = √ρ/2, hence ρ/8-zCDP).
SVT_SHARE = 1.0 / 8.0
#: Share of ρ spent on the covariance of the clipped rows (Gaussian mechanism or SeparateCov).
COVARIANCE_SHARE = 3.0 / 4.0
#: SeparateCov's split of its own budget: the noisy matrix (eigenvectors) and the noisy eigenvalues, half each.
SEPARATE_SPLIT = 0.5

# --- the pure-DP split of AdaptiveLapCov (ε = ε/8 + ε/8 + 3ε/4) ----------------------------------------------------
LAP_TRACE_SHARE = 1.0 / 8.0
LAP_SVT_SHARE = 1.0 / 8.0
LAP_COVARIANCE_SHARE = 3.0 / 4.0

#: Sensitivity of tr(C) = Σ‖xᵢ‖² (one record moves it by at most 1, either relation).
TRACE_SENSITIVITY = 1.0
#: Sensitivity of every AboveThreshold query (one record's clipping-bias weight lies in [0, 1)).
SVT_QUERY_SENSITIVITY = 1.0
#: Norm levels the radius search walks: radii 2⁰, 2⁻¹, …, 2⁻⁷⁹ (the authors' code: −log₂(1e-24) ≈ 79.7).
NORM_LEVELS = 80
#: The authors' code divides the eigenvector part of SeparateCov's predicted error by 6 (14 in the Laplace
#: version); a utility heuristic of theirs (not in the paper's bound) that only moves the chosen radius.
SEPARATE_ERROR_DIVISOR = 6.0
LAP_SEPARATE_ERROR_DIVISOR = 14.0
#: The radius search predicts the Gaussian branch's error at radius 2ᵏ as 2^(e·k)·(error at radius 1) with e = 1,
#: as the authors' code does (their final choice, and the Gaussian mechanism's σ ∝ r², would give e = 2). A
#: utility heuristic: it moves the chosen radius, never the privacy. Measured against e = 2 in docs/dong_liang_yi.md.
SEARCH_DIRECT_EXPONENT = 1.0


def eigenvalue_l2_sensitivity(neighbouring: str) -> float:
    """L2 sensitivity of the sorted eigenvalue vector λ(C): √2 (replace-one), 1 (add/remove).

    Hoffman–Wielandt: ‖λ(A) − λ(B)‖₂ ≤ ‖A − B‖_F; ‖xxᵀ − yyᵀ‖_F ≤ √2 (attained: C = a·e₁e₁ᵀ + b·e₂e₂ᵀ + e₁e₁ᵀ,
    e₁ replaced by e₂, a > b + 1), ‖xxᵀ‖_F ≤ 1 for add/remove.
    """
    return math.sqrt(2.0) if neighbouring == Neighbouring.REPLACE else 1.0


def eigenvalue_l1_sensitivity(neighbouring: str) -> float:
    """L1 sensitivity of λ(C) (Lidskii: removing x moves every eigenvalue down, by ‖x‖² in all): 2 or 1."""
    return l1_sensitivity_eigenvalues(neighbouring)


def gaussian_sigma_for_rho(l2_sensitivity: float, rho: float) -> float:
    """σ of a Gaussian mechanism that is ρ-zCDP for this L2 sensitivity: Δ²/(2σ²) = ρ."""
    return l2_sensitivity / math.sqrt(2.0 * rho)


def svt_epsilon(rho: float) -> float:
    """The pure ε of AboveThreshold that costs SVT_SHARE·ρ in zCDP (ε-DP ⇒ ε²/2-zCDP): ε = √ρ/2."""
    return math.sqrt(2.0 * SVT_SHARE * rho)


# ==================================================================================================
# Covariance steps (C units; ``scale`` = r², the squared clipping radius of the rows)
# ==================================================================================================

@dataclass(frozen=True)
class CovarianceStep:
    """One noisy covariance and the public noise scales that made it."""

    covariance: np.ndarray
    sigma_matrix: float
    sigma_eigenvalues: float | None = None


def gauss_cov(C: np.ndarray, rho: float, scale: float, neighbouring: str, rng: np.random.Generator) -> CovarianceStep:
    """The Gaussian mechanism on C at ρ-zCDP for rows of norm ≤ √scale (Δ₂ = √2·scale or scale)."""
    sigma = gaussian_sigma_for_rho(l2_sensitivity_upper_triangle(neighbouring) * scale, rho)
    return CovarianceStep(C + symmetric_gaussian(C.shape[0], sigma, rng), sigma)


def noisy_eigenvalues(C: np.ndarray, sigma: float, rng: np.random.Generator) -> np.ndarray:
    """λ(C) in descending order plus i.i.d. N(0, σ²)."""
    return np.sort(np.linalg.eigvalsh(symmetrize(C)))[::-1] + rng.normal(0.0, sigma, size=C.shape[0])


def combine(noisy_matrix: np.ndarray, eigenvalues: np.ndarray) -> np.ndarray:
    """P[Ĉ]·diag(λ̃)·P[Ĉ]ᵀ: the noisy matrix's eigenvectors (descending) with the separately noised eigenvalues."""
    _, V = eigh_desc(noisy_matrix)
    return (V * eigenvalues) @ V.T


def separate_cov(C: np.ndarray, rho: float, scale: float, neighbouring: str,
                 rng: np.random.Generator) -> CovarianceStep:
    """SeparateCov at ρ-zCDP: eigenvectors of C + Gaussian noise (ρ/2), eigenvalues λ(C) + Gaussian noise (ρ/2)."""
    matrix = gauss_cov(C, SEPARATE_SPLIT * rho, scale, neighbouring, rng)
    sigma_eig = gaussian_sigma_for_rho(eigenvalue_l2_sensitivity(neighbouring) * scale, (1 - SEPARATE_SPLIT) * rho)
    values = noisy_eigenvalues(C, sigma_eig, rng)
    return CovarianceStep(combine(matrix.covariance, values), matrix.sigma_matrix, sigma_eig)


def lap_cov(C: np.ndarray, epsilon: float, scale: float, neighbouring: str,
            rng: np.random.Generator) -> CovarianceStep:
    """The Laplace mechanism on the upper triangle of C (L1 sensitivity (d+1)·scale or (d+1)/2·scale), ε-DP."""
    from ..core.privacy import l1_sensitivity_upper_triangle

    b = l1_sensitivity_upper_triangle(C.shape[0], neighbouring) * scale / epsilon
    return CovarianceStep(C + symmetric_laplace(C.shape[0], b, rng), b)


def separate_lap_cov(C: np.ndarray, epsilon: float, scale: float, neighbouring: str,
                     rng: np.random.Generator) -> CovarianceStep:
    """SeparateLapCov at ε-DP: eigenvectors from the Laplace mechanism (ε/2), eigenvalues + Laplace (ε/2)."""
    matrix = lap_cov(C, SEPARATE_SPLIT * epsilon, scale, neighbouring, rng)
    b_eig = eigenvalue_l1_sensitivity(neighbouring) * scale / ((1 - SEPARATE_SPLIT) * epsilon)
    values = np.sort(np.linalg.eigvalsh(symmetrize(C)))[::-1] + rng.laplace(0.0, b_eig, size=C.shape[0])
    return CovarianceStep(combine(matrix.covariance, values), matrix.sigma_matrix, b_eig)


def spectrum_ceiling(n: int, scale: float, neighbouring: str) -> float | None:
    """Upper clip of released eigenvalues: n·r² where n is public (replace-one), none under add/remove."""
    return n * scale if neighbouring == Neighbouring.REPLACE else None


def clip_to_ceiling(M: np.ndarray, n: int, scale: float, neighbouring: str) -> np.ndarray:
    """Post-processing: PSD projection with eigenvalues clipped to [0, n·r²] (replace-one) or [0, ∞)."""
    return clip_spectrum(M, upper=spectrum_ceiling(n, scale, neighbouring))


# ==================================================================================================
# The private radius: norm levels, clipping-bias queries, AboveThreshold
# ==================================================================================================

def norm_level_counts(norms: np.ndarray, levels: int = NORM_LEVELS) -> np.ndarray:
    """counts[l] = #rows with ‖x‖ in (2⁻ˡ, 2⁻ˡ⁺¹] for 1 ≤ l < levels (level 1 also holds ‖x‖ = 1); counts[0] = 0.

    Rows at or below 2⁻⁽ˡᵉᵛᵉˡˢ⁻¹⁾ (zero rows included) fall off the end: no radius in the search clips them.
    """
    norms = np.asarray(norms, dtype=float)
    counts = np.zeros(levels)
    positive = norms[norms > 0]
    level = np.maximum(np.floor(-np.log2(positive)).astype(np.int64) + 1, 1)
    np.add.at(counts, level[level < levels], 1.0)
    return counts


def clipping_bias_bounds(counts: np.ndarray) -> np.ndarray:
    """b[i] = Σ_{l ≤ i} counts[l]·(4⁻ˡ⁺¹ − 4⁻ⁱ): an upper bound on ‖C − C(clip at 2⁻ⁱ)‖_F (‖x‖² − 4⁻ⁱ ≤ 4⁻ˡ⁺¹ − 4⁻ⁱ).

    One record adds a weight in [0, 1 − 4⁻ⁱ) to each b[i] (it sits in one level l ≥ 1), so each query built on b has
    sensitivity 1 under replace-one and add/remove alike.
    """
    levels = counts.size
    l = np.arange(levels)
    upper_sq = 4.0 ** (-(l - 1.0))  # (2⁻ˡ⁺¹)²
    i = np.arange(levels)[:, None]
    weights = np.where(l[None, :] <= i, upper_sq[None, :] - 4.0 ** (-i), 0.0)
    weights[:, 0] = 0.0
    return weights @ counts


def above_threshold(queries: np.ndarray, epsilon: float, rng: np.random.Generator, threshold: float = 0.0,
                    sensitivity: float = SVT_QUERY_SENSITIVITY) -> int:
    """AboveThreshold (Dwork & Roth 2014, Alg. 1; Thm 3.23): ε-DP index of the first query above the threshold.

    T̃ = threshold + Lap(2Δ/ε); returns the first i with qᵢ + Lap(4Δ/ε) ≥ T̃, or len(queries) when none is. All noise
    is drawn up front (same law as drawing on demand; the stream consumed does not depend on the data).
    """
    t_noisy = threshold + rng.laplace(0.0, 2.0 * sensitivity / epsilon)
    noisy = np.asarray(queries, dtype=float) + rng.laplace(0.0, 4.0 * sensitivity / epsilon, size=len(queries))
    above = np.flatnonzero(noisy >= t_noisy)
    return int(above[0]) if above.size else len(queries)


def clip_rows(X: np.ndarray, norms: np.ndarray, radius: float) -> np.ndarray:
    """Rows scaled to norm ≤ radius (a per-record map once the radius is chosen)."""
    factor = np.minimum(1.0, radius / np.where(norms > 0, norms, 1.0))
    return X * factor[:, None]


# ==================================================================================================
# Tail bounds the authors use to predict each noise's Frobenius error (utility planning only; no privacy role)
# ==================================================================================================

def gaussian_tailbound(d: int, beta: float) -> float:
    """‖z‖₂ for z ~ N(0, I_d) with probability ≥ 1 − β (Laurent–Massart)."""
    log_b = math.log(1.0 / beta)
    return math.sqrt(d + 2.0 * math.sqrt(d * log_b) + 2.0 * log_b)


def wigner_gauss_tailbound(d: int, beta: float) -> float:
    """Spectral norm of a d×d Gaussian Wigner matrix with probability ≥ 1 − β (the authors' constants)."""
    theta = min((math.log(d) / d) ** 0.3, 0.5) if d > 1 else 0.5
    log_term = math.sqrt(math.log(d)) / math.sqrt(math.log(1.0 + theta)) if d > 1 else 0.0
    return (1.0 + theta) * (2.0 * math.sqrt(d) + 6.0 * log_term) + math.sqrt(2.0 * math.log(2.0 / beta))


def wigner_gauss_fnormbound(d: int, beta: float) -> float:
    """Frobenius norm of a d×d Gaussian Wigner matrix with probability ≥ 1 − β (the authors' constants)."""
    log_b = math.log(2.0 / beta)
    return math.sqrt(d * d + 2.0 * math.sqrt(d * log_b) * (1.0 + math.sqrt(2.0 * (d - 1))) + 6.0 * log_b)


def _lap_k(count: float) -> float:
    return 2.0 * max((math.sqrt(2.0) + 1.0) / (math.sqrt(2.0) - 1.0), 2.0 * math.log(count) / math.log(2.0))


def laplace_tailbound(d: int, beta: float) -> float:
    """‖z‖₂ for z with i.i.d. Laplace(1) entries with probability ≥ 1 − β (the authors' constants)."""
    return 1.5 * math.sqrt(d) + math.log(2.0 / beta) * _lap_k(max(d, 1))


def wigner_lap_tailbound(d: int, beta: float) -> float:
    """Spectral norm of a d×d Laplace Wigner matrix with probability ≥ 1 − β (the authors' constants)."""
    theta = min((math.log(d) / d) ** 0.3, 0.5) if d > 1 else 0.5
    log_term = math.log(d) / math.sqrt(math.log(1.0 + theta)) if d > 1 else 0.0
    bound = (1.0 + theta) * (2.0 * math.sqrt(d) + 6.0 * log_term)
    return bound + math.sqrt(2.0) * math.log(2.0 / beta) * _lap_k(0.5 * (d * d + d))


def wigner_lap_fnormbound(d: int, beta: float) -> float:
    """Frobenius norm of a d×d Laplace Wigner matrix with probability ≥ 1 − β (the authors' constants)."""
    return 1.5 * d + math.log(2.0 / beta) * _lap_k(0.5 * (d * d + d))


@dataclass(frozen=True)
class ErrorModel:
    """Predicted Frobenius errors (C units) at radius 1 of the two covariance steps; at radius 2ᵏ they scale as
    ``separate(k) = 2ᵏ·sep_linear + 4ᵏ·sep_square`` and ``direct(k) = 4ᵏ·direct``. Public once T̃ is released."""

    sep_linear: float
    sep_square: float
    direct: float

    def separate(self, k: np.ndarray | float) -> np.ndarray | float:
        return 2.0 ** k * self.sep_linear + 4.0 ** k * self.sep_square

    def direct_at(self, k: np.ndarray | float) -> np.ndarray | float:
        return 4.0 ** k * self.direct

    def queries(self, bias: np.ndarray) -> np.ndarray:
        """The AboveThreshold queries: clipping bias bound minus the smaller predicted noise error, level by level.

        As in the authors' code (``get_diff2``), the search scales the Gaussian branch's error by 2ᵏ
        (:data:`SEARCH_DIRECT_EXPONENT`), the final choice by 4ᵏ; docs/dong_liang_yi.md has the measurement.
        """
        k = -np.arange(bias.size, dtype=float)
        direct = 2.0 ** (SEARCH_DIRECT_EXPONENT * k) * self.direct
        return bias - np.minimum(direct, self.separate(k))


# ==================================================================================================
# Ledger
# ==================================================================================================

def zcdp_ledger(steps: list[tuple[str, float, str]], rho: float, epsilon: float, delta: float,
                conversion: str) -> list:
    """One row per zCDP step (its share of ρ as the row's ``rho`` and in the note, charged in the last row) and the
    conversion row, which carries the whole (ε, δ): ρ-zCDP ⇒ (ε, δ)-DP. A step row has ε = δ = 0 (the odometer
    counts it as free and charges the conversion row's ρ once) but spends ``rho``: the ledger shows that cost, never
    "no privacy cost". Notes hold public values only."""
    from ..core.privacy import LedgerEntry

    rows = [LedgerEntry(name, 0.0, 0.0, note=f"ρ·{share:g} = {share * rho:.4g} of ρ = {rho:.4g} (charged in the "
                        f"conversion below); {note}", rho=share * rho) for name, share, note in steps]
    rows.append(LedgerEntry("ρ-zCDP ⇒ (ε, δ)-DP", epsilon, delta,
                            note=f"ρ = {rho:.6g} = sum of the steps above; {conversion}", rho=rho))
    return rows


def private_radius(norms: np.ndarray, model: ErrorModel, svt_eps: float,
                   rng: np.random.Generator) -> tuple[int, int, float]:
    """(j, level k = −j, radius r̃ = min(2ᵏ⁺¹, 1)) from AboveThreshold over the norm levels (ε = ``svt_eps``)."""
    j = above_threshold(model.queries(clipping_bias_bounds(norm_level_counts(norms, NORM_LEVELS))), svt_eps, rng)
    return j, -j, min(2.0 ** (-j + 1), 1.0)


def clipped_second_moment(data, norms: np.ndarray, radius: float) -> np.ndarray:
    """Σ clip(x)clip(x)ᵀ for rows clipped to ``radius`` (C itself when nothing can be clipped)."""
    if radius >= 1.0:
        return data.C
    Y = clip_rows(data.X, norms, radius)
    return Y.T @ Y


def laplace_error_model(noisy_trace: float, d: int, epsilon: float, beta: float, neighbouring: str) -> ErrorModel:
    """AdaptiveLapCov's predicted Frobenius errors (C units, radius 1) at 3ε/4 (the authors' Laplace bounds).

    The direct term is b·ω with b = (L1 sensitivity of the upper triangle)/(3ε/4), the Laplace mechanism's scale
    (the authors' code omits the 1/ε here and uses √2·d for the sensitivity); the SeparateLapCov terms are theirs
    (eigenvalue scale 2/(3ε/8) → ×η; eigenvector term ÷ 14), scaled to add/remove by the sensitivity ratio.
    """
    from ..core.privacy import l1_sensitivity_upper_triangle

    eps1, beta1 = LAP_COVARIANCE_SHARE * epsilon, LAP_COVARIANCE_SHARE * beta
    rel = 1.0 if neighbouring == Neighbouring.REPLACE else 0.5
    nu = wigner_lap_tailbound(d, 0.5 * beta1)
    return ErrorModel(
        sep_linear=math.sqrt(8.0 * math.sqrt(2.0) * d * noisy_trace * nu / eps1) / LAP_SEPARATE_ERROR_DIVISOR
        * math.sqrt(rel),
        sep_square=4.0 * laplace_tailbound(d, 0.5 * beta1) / eps1 * rel,
        direct=l1_sensitivity_upper_triangle(d, neighbouring) / eps1 * wigner_lap_fnormbound(d, beta1))
