"""Synthetic data generators used by the papers' experiments (spec §5).

* :func:`make_css_synthetic` — Chaudhuri, Sarwate & Sinha (JMLR 2013, seed ``000``) Fig. 5: N(0, Σ) in d = 10 with
  the eigenvalues of eq. (27) and a random orthogonal eigenbasis drawn from a fixed seed.
* :func:`make_is_synthetic` — Imtiaz & Sarwate (ICASSP 2016, seed ``001``) style: two Gaussian classes with different
  means and a shared covariance diag(linspace(10, 1, k), 0.5·U(0,1)^{d−k}) (the generator in
  ``hafizimtiaz/capePCA/datasets/synth_data_generation_code.m``), rescaled so E‖x‖² = 1.
* :func:`make_subspace_synthetic` — Singhal & Steinke (NeurIPS 2021, seed ``004``) style: Gaussian points near a
  planted k-dimensional subspace of R^d (k eigenvalues 1/k, d − k eigenvalues noise_ratio/k).

All generators are deterministic given their ``seed`` and return public, synthetic data.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from ..core._validation import check_int, check_positive

#: Eigenvalues of Σ in Chaudhuri et al. (2013) eq. (27).
CSS_EIGENVALUES = (0.5, 0.30, 0.04, 0.03, 0.02, 0.01, 0.004, 0.003, 0.001, 0.001)

#: Seed of the fixed eigenbasis of the css_synthetic covariance (the population Σ does not change with ``seed``).
CSS_BASIS_SEED = 27

#: Seed of the fixed covariance spectrum and class means of is_synthetic.
IS_COVARIANCE_SEED = 1

#: Bayes error of the is_synthetic two-class problem (≈ the 5.65 % SVD error of Imtiaz & Sarwate Table 1).
IS_BAYES_ERROR = 0.0565


def _random_orthogonal(d: int, rng: np.random.Generator) -> np.ndarray:
    """Haar-distributed d×d orthogonal matrix (QR of a Gaussian matrix with sign correction)."""
    Q, R = np.linalg.qr(rng.standard_normal((d, d)))
    return Q * np.sign(np.diag(R))


def css_covariance() -> np.ndarray:
    """The population covariance Σ = U diag(eq. 27) Uᵀ of :func:`make_css_synthetic`."""
    U = _random_orthogonal(len(CSS_EIGENVALUES), np.random.default_rng(CSS_BASIS_SEED))
    return (U * np.asarray(CSS_EIGENVALUES)) @ U.T


def make_css_synthetic(n: int = 5000, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """n points from N(0, Σ) in d = 10, Σ's eigenvalues from Chaudhuri et al. eq. (27).

    Returns ``(X, Sigma)``. E‖x‖² = tr Σ = 0.909, so rows are *not* guaranteed ‖x‖ ≤ 1; the paper uses B = 1 and
    dpcore clips (recording the clip fraction).
    """
    n = check_int(n, "n", 2, 10_000_000)
    seed = check_int(seed, "seed", 0)
    sigma = css_covariance()
    L = np.linalg.cholesky(sigma)
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, sigma.shape[0])) @ L.T
    return X, sigma


def is_population(d: int = 100, k: int = 10) -> tuple[np.ndarray, np.ndarray, float]:
    """(diagonal of the shared covariance, class mean μ (classes at ±μ), scale) of :func:`make_is_synthetic`.

    The raw covariance is diag(linspace(10, 1, k), 0.5·U(0,1)^{d−k}) with U from a fixed seed; the means are
    ±c·1_k/√k with c chosen so the Bayes (LDA) error is :data:`IS_BAYES_ERROR`; ``scale`` makes E‖x‖² = 1.
    """
    d = check_int(d, "d", 2)
    k = check_int(k, "k", 1, d)
    rng = np.random.default_rng(IS_COVARIANCE_SEED)
    diag = np.concatenate([np.linspace(10.0, 1.0, k), 0.5 * rng.uniform(0.0, 1.0, d - k)])
    direction = np.zeros(d)
    direction[:k] = 1.0 / math.sqrt(k)
    # Bayes (LDA) error for classes at ±μ with shared Σ is Φ(−√(μᵀΣ⁻¹μ)); μ = c·direction.
    c = -special.ndtri(IS_BAYES_ERROR) / math.sqrt(float(direction**2 @ (1.0 / diag)))
    mean = c * direction
    scale = 1.0 / math.sqrt(diag.sum() + c**2)
    return diag * scale**2, mean * scale, scale


def make_is_synthetic(n: int = 5000, d: int = 100, k: int = 10, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Two-class Gaussian data (Imtiaz & Sarwate style): returns ``(X, y)`` with y ∈ {0, 1} (balanced)."""
    n = check_int(n, "n", 2, 10_000_000)
    seed = check_int(seed, "seed", 0)
    var, mean, _ = is_population(d, k)
    rng = np.random.default_rng(seed)
    y = np.zeros(n, dtype=np.int64)
    y[n // 2:] = 1
    y = rng.permutation(y)
    X = rng.standard_normal((n, var.shape[0])) * np.sqrt(var) + np.where(y[:, None] == 1, mean, -mean)
    return X, y


def make_subspace_synthetic(n: int = 20000, d: int = 200, k: int = 3, noise_ratio: float = 1e-4,
                            seed: int = 4) -> tuple[np.ndarray, np.ndarray]:
    """Gaussian points near a planted k-dimensional subspace of R^d (Singhal & Steinke style).

    x = U z + e with U a uniformly random d×k orthonormal basis (from ``seed``), z ~ N(0, I_k/k) and
    e ~ N(0, (noise_ratio/k)·I_d) projected off span(U); the covariance has k eigenvalues 1/k and d − k eigenvalues
    noise_ratio/k (noise_ratio = γ² = off-subspace / in-subspace variance), and E‖x‖² = 1 + (d − k)·noise_ratio/k.

    Returns ``(X, basis)`` with ``basis`` the d×k planted orthonormal basis.
    """
    n = check_int(n, "n", 2, 10_000_000)
    d = check_int(d, "d", 2, 100_000)
    k = check_int(k, "k", 1, d - 1)
    noise_ratio = check_positive(noise_ratio, "noise_ratio", allow_zero=True)
    seed = check_int(seed, "seed", 0)
    rng = np.random.default_rng(seed)
    basis, _ = np.linalg.qr(rng.standard_normal((d, k)))
    Z = rng.standard_normal((n, k)) / math.sqrt(k)
    X = Z @ basis.T
    if noise_ratio > 0:
        E = rng.standard_normal((n, d)) * math.sqrt(noise_ratio / k)
        E -= (E @ basis) @ basis.T
        X += E
    return X, basis


def subspace_expected_sq_norm(d: int, k: int, noise_ratio: float) -> float:
    """E‖x‖² of :func:`make_subspace_synthetic` (exact: the off-subspace noise lives in d − k dimensions)."""
    return 1.0 + (d - k) * noise_ratio / k
