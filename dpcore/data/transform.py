"""The per-record transform: the one code path for scaling, centring and clipping (spec §6.2).

* :func:`clip_rows` — x ← x·min(1, B/‖x‖) (and x/B): the only clipping step in dpcore.
* :class:`RowTransform` — raw row → unit row with public (or declared) parameters only.

Applied by :func:`dpcore.data.preprocess.run_preprocessing` to in-memory arrays, streamed files and Dask partitions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..exceptions import DataError


def clip_rows(X: np.ndarray, bound: float, *, divide: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """x ← x·min(1, B/‖x‖) — and x ← x/B as well with ``divide=True``; returns (rows, mask of clipped rows).

    The only clipping step in dpcore (preprocessing, streamed statistics, Dask partitions). Each row's norm is
    computed once; ``X`` is never modified (a new array is returned where anything changes).
    """
    norms = np.sqrt(np.einsum("ij,ij->i", X, X))
    if not np.isfinite(norms.sum()):
        norms = _finite_norms(X, norms)
    clipped = norms > bound
    if divide:
        factor = 1.0 / np.maximum(norms, bound)  # 1/B, or (B/‖x‖)/B for a clipped row
        return X * factor[:, None], clipped
    if clipped.any():
        X = X.copy()
        X[clipped] *= (bound / norms[clipped])[:, None]
    return X, clipped


def _finite_norms(X: np.ndarray, norms: np.ndarray) -> np.ndarray:
    """Norms of rows whose squared norm overflowed, computed after scaling; NaN/inf entries raise."""
    bad = ~np.isfinite(norms)
    rows = X[bad]
    if not np.all(np.isfinite(rows)):
        raise DataError("data contains NaN or infinite values; impute or drop them first.")
    scale = np.abs(rows).max(axis=1)
    norms = norms.copy()
    norms[bad] = scale * np.linalg.norm(rows / scale[:, None], axis=1)
    return norms


@dataclass(frozen=True, eq=False)
class RowTransform:
    """Raw row → unit row, record by record, with public (or declared) parameters only.

    1. scaling: ``(clamp(x, lo, hi) − lo)/width`` (``clamp`` for a public schema; min–max ranges need no clamp);
    2. DP centring only: clip to ``pre_clip`` = B before the centre is subtracted (the rows the DP mean saw);
    3. subtract ``center``;
    4. clip to ``bound`` = B (``clip=False``: the bound is the largest norm, nothing to clip) and divide by B.
    """

    bound: float
    lo: np.ndarray | None = None
    hi: np.ndarray | None = None
    width: np.ndarray | None = None
    clamp: bool = False
    pre_clip: float | None = None
    center: np.ndarray | None = None
    clip: bool = True

    def scaled(self, raw: np.ndarray) -> tuple[np.ndarray, int, np.ndarray | None]:
        """Steps 1–3: (rows, number of clamped entries, mask of rows clipped before centring or None)."""
        Y, clamped, pre = raw, 0, None
        if self.lo is not None:
            if self.clamp:
                Y = np.clip(raw, self.lo, self.hi)
                clamped = int(np.count_nonzero(raw != Y))
                Y -= self.lo
            else:
                Y = raw - self.lo
            Y /= self.width
        if self.pre_clip is not None:
            Y, pre = clip_rows(Y, self.pre_clip)
        if self.center is not None:
            Y = Y - self.center
        return Y, clamped, pre

    def unit(self, raw: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
        """All steps: (unit rows, mask of clipped rows, number of clamped entries)."""
        Y, clamped, pre = self.scaled(raw)
        if self.clip:
            U, clipped = clip_rows(Y, self.bound, divide=True)
        else:
            U, clipped = Y * (1.0 / self.bound), np.zeros(Y.shape[0], dtype=bool)
        if pre is not None:
            clipped |= pre
        return U, clipped, clamped


__all__ = ["RowTransform", "clip_rows"]
