"""Small linear-algebra helpers shared by mechanisms and metrics."""

from __future__ import annotations

import numpy as np

from .threads import blas_threads_for

#: The partial eigensolver (:func:`top_k_eigenpairs`) is used from this dimension on, for k ≤ d/10: LAPACK's
#: ``dsyevr`` reduces to tridiagonal form as a full ``eigh`` does but computes and back-transforms only k
#: eigenvectors (d = 200, k = 2: 0.3× a full ``eigh``; below d ≈ 48 or for larger k the call costs more than it saves).
PARTIAL_EIGH_FROM_D = 48


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


def top_k_eigenpairs(M: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The k algebraically largest eigenvalues of symmetric M (decreasing) and their d×k eigenvectors.

    A partial solver (``scipy.linalg.eigh(..., subset_by_index, driver="evr")``) where it is cheaper than a full
    ``eigh`` (d ≥ :data:`PARTIAL_EIGH_FROM_D`, k ≤ d/10), else :func:`eigh_desc`. The span is that of
    :func:`top_k_eigenvectors`; the vectors agree with it up to rounding and sign.
    """
    d = M.shape[0]
    if d < PARTIAL_EIGH_FROM_D or 10 * k > d:
        w, V = eigh_desc(M)
        return w[:k], V[:, :k]
    from scipy.linalg import eigh

    # scipy's OpenBLAS is not numpy's: its threads, left spinning, would slow numpy's next call (XᵀX) down
    with blas_threads_for(d):
        w, V = eigh(symmetrize(M), subset_by_index=[d - k, d - 1], driver="evr", check_finite=False)
    return w[::-1].copy(), V[:, ::-1].copy()


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
