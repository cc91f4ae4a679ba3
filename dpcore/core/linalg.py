"""Small linear-algebra helpers shared by mechanisms and metrics."""

from __future__ import annotations

import numpy as np


def symmetrize(M: np.ndarray) -> np.ndarray:
    """(M + Mᵀ)/2."""
    return 0.5 * (M + M.T)


def eigh_desc(M: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Eigen-decomposition of a symmetric matrix with eigenvalues in decreasing (algebraic) order."""
    w, V = np.linalg.eigh(symmetrize(M))
    return w[::-1].copy(), V[:, ::-1].copy()


def top_k_eigenvectors(M: np.ndarray, k: int) -> np.ndarray:
    """The d×k eigenvectors of the k algebraically largest eigenvalues of symmetric M."""
    return eigh_desc(M)[1][:, :k]


def _psd_from_spectrum(w: np.ndarray, V: np.ndarray, upper: float | None) -> np.ndarray:
    """V·diag(clip(w, 0, upper))·Vᵀ as G·Gᵀ with G = V·diag(√clip(w)): a ``syrk`` (half a GEMM's flops, exactly
    symmetric); eigenvectors whose clipped eigenvalue is 0 are left out of G."""
    w = np.clip(w, 0.0, upper)
    keep = w > 0.0
    G = V[:, keep] * np.sqrt(w[keep]) if not keep.all() else V * np.sqrt(w)
    return G @ G.T


def clip_spectrum(M: np.ndarray, upper: float | None = None) -> np.ndarray:
    """Post-processing (free): project onto PSD matrices and clip eigenvalues to [0, upper]."""
    w, V = np.linalg.eigh(symmetrize(M))
    return _psd_from_spectrum(w, V, upper)


def clip_spectrum_and_top_k(M: np.ndarray, k: int, upper: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(clip_spectrum(M, upper), top_k_eigenvectors(M, k))`` from a single eigendecomposition (same values)."""
    w, V = np.linalg.eigh(symmetrize(M))
    return _psd_from_spectrum(w, V, upper), V[:, ::-1][:, :k].copy()


def orthonormalize(V: np.ndarray) -> np.ndarray:
    """Orthonormal basis (QR, signs fixed by diag(R) ≥ 0) of the column span of V."""
    Q, R = np.linalg.qr(V)
    signs = np.sign(np.diag(R))
    signs[signs == 0] = 1.0
    return Q * signs
