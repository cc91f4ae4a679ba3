"""The per-record transform: the one code path for scaling, centring and clipping (spec §6.2).

* :func:`clip_rows` — x ← x·min(1, B/‖x‖) (and x/B): the only clipping step in dpcore (with its two parts
  :func:`row_norms` and :func:`unit_factors`; :func:`clipped_row_sum` sums clipped rows without copying them).
* :class:`RowTransform` — raw row → unit row with public (or declared) parameters only; its
  :meth:`~RowTransform.unit_moments` fuses the transform with the accumulation of C = Σ uᵢuᵢᵀ and Σ uᵢ in
  bounded memory.

Applied by :func:`dpcore.data.preprocess.run_preprocessing` to in-memory arrays, streamed files and Dask partitions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..exceptions import DataError

#: Bytes of one block of unit rows in the fused pass (:meth:`RowTransform.unit_moments`): the most that pass holds
#: at once. Blocks are large on purpose: each block is one (multi-threaded) BLAS call, and on a loaded machine every
#: such call pays OpenBLAS's thread synchronisation; cache-sized blocks (L2) were measured slower (issue #22).
BLOCK_BYTES = 8 * 2**20
#: Fewest rows per block: fewer would make each ``syrk``'s update of the whole d×d sum dominate its flops.
MIN_BLOCK_ROWS = 256


def clip_rows(X: np.ndarray, bound: float, *, divide: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """x ← x·min(1, B/‖x‖) — and x ← x/B as well with ``divide=True``; returns (rows, mask of clipped rows).

    The only clipping step in dpcore (preprocessing, streamed statistics, Dask partitions; the fused pass of
    :meth:`RowTransform.unit_moments` uses the same :func:`row_norms` and :func:`unit_factors`). Each row's norm is
    computed once; ``X`` is never modified (a new array is returned where anything changes).
    """
    norms = row_norms(X)
    clipped = norms > bound
    if divide:
        return X * unit_factors(norms, bound)[:, None], clipped
    if clipped.any():
        X = X.copy()
        X[clipped] *= (bound / norms[clipped])[:, None]
    return X, clipped


def row_norms(X: np.ndarray) -> np.ndarray:
    """‖xᵢ‖ of every row (one read of ``X``); a row with NaN/inf raises :class:`DataError`."""
    norms = np.sqrt(np.einsum("ij,ij->i", X, X))
    if not np.isfinite(norms.sum()):
        norms = _finite_norms(X, norms)
    return norms


def unit_factors(norms: np.ndarray, bound: float) -> np.ndarray:
    """1/max(‖x‖, B) per row: the factor that clips a row to B and divides it by B (1/B for a row within B)."""
    return 1.0 / np.maximum(norms, bound)


def clipped_row_sum(X: np.ndarray, bound: float) -> np.ndarray:
    """Σᵢ xᵢ·min(1, B/‖xᵢ‖) — the sum of the rows :func:`clip_rows` returns — without a clipped copy (one ``gemv``
    with the clipping weights: 1 exactly for a row within B, B/‖x‖ otherwise)."""
    return (bound / np.maximum(row_norms(X), bound)) @ X


def block_rows(d: int) -> int:
    """Rows per block of the fused pass: about :data:`BLOCK_BYTES` of float64, at least :data:`MIN_BLOCK_ROWS`."""
    return max(MIN_BLOCK_ROWS, BLOCK_BYTES // (8 * d))


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
        if self.center is not None:  # in place when an earlier step already made a new array
            Y = Y - self.center if Y is raw else np.subtract(Y, self.center, out=Y)
        return Y, clamped, pre

    def unit(self, raw: np.ndarray, out: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, int]:
        """All steps: (unit rows, mask of clipped rows, number of clamped entries); ``out`` receives the rows.

        ``raw`` is never modified; an array that an earlier step made anew is reused in place (same values).
        """
        Y, clamped, pre = self.scaled(raw)
        if out is None and Y is not raw:
            out = Y
        if self.clip:
            norms = row_norms(Y)
            clipped = norms > self.bound
            U = np.multiply(Y, unit_factors(norms, self.bound)[:, None], out=out)
        else:
            U, clipped = np.multiply(Y, 1.0 / self.bound, out=out), np.zeros(Y.shape[0], dtype=bool)
        if pre is not None:
            clipped |= pre
        return U, clipped, clamped

    def unit_moments(self, raw: np.ndarray) -> tuple[np.ndarray, np.ndarray, int, int]:
        """(C = Σ uᵢuᵢᵀ, Σ uᵢ, clipped rows, clamped entries) of the unit rows uᵢ of ``raw``, never holding more
        than :func:`block_rows` of them.

        The same rows as :meth:`unit` (bit for bit), written block by block into one reused buffer; each block adds
        its ``UᵀU`` (numpy's ``syrk``) and ``1ᵀU``. With a single block (n ≤ :func:`block_rows`) the result is
        bit for bit ``Moments.of_rows(unit(raw)[0])``; with several, equal up to the order of the sums.
        """
        n, d = raw.shape
        step = block_rows(d)
        buffer = np.empty((min(step, n), d))
        C, total = np.zeros((d, d)), np.zeros(d)
        clipped = clamped = 0
        for a in range(0, n, step):
            U, hit, block_clamped = self.unit(raw[a:a + step], out=buffer[:min(step, n - a)])
            clipped += int(np.count_nonzero(hit))
            clamped += block_clamped
            if a == 0:
                C, total = U.T @ U, np.ones(U.shape[0]) @ U
            else:
                C += U.T @ U
                total += np.ones(U.shape[0]) @ U
        return C, total, clipped, clamped


__all__ = ["RowTransform", "block_rows", "clip_rows", "clipped_row_sum", "row_norms", "unit_factors"]
