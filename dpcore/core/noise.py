"""Noise primitives, written once and shared by every mechanism.

Every function takes a :class:`numpy.random.Generator`; use :func:`make_rng` to build one. Seeded
generators are for reproducible demos only: real releases should use ``random_state=None`` (OS entropy).
Floating-point samplers are not hardened against the Mironov (2012) attack — a documented limitation.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ..exceptions import InvalidParameterError
from ._validation import check_int, check_positive
from .seeding import RandomState, check_random_state


def make_rng(random_state: RandomState = None) -> np.random.Generator:
    """A Generator from None (OS entropy), an int seed, a SeedSequence or an existing Generator.

    For a stage of a run (centring, a mechanism, a sweep cell) use :func:`dpcore.core.seeding.stage_rng` instead, so
    that one integer never seeds two noise stages.
    """
    check_random_state(random_state)
    if isinstance(random_state, np.random.Generator):
        return random_state
    return np.random.default_rng(random_state)


@functools.lru_cache(maxsize=16)
def _triangle_positions(d: int) -> tuple[np.ndarray, np.ndarray]:
    """Flat positions in a d×d array of the upper triangle (incl. diagonal, row by row) and of its mirror image."""
    rows, cols = np.triu_indices(d)
    upper, lower = rows * d + cols, cols * d + rows
    upper.setflags(write=False)
    lower.setflags(write=False)
    return upper, lower


def _symmetric_from_triangle(values: np.ndarray, d: int) -> np.ndarray:
    """The symmetric d×d matrix whose upper triangle (incl. diagonal, row by row) is ``values``.

    Only the d(d+1)/2 entries that are independent draws are generated (half the random numbers of drawing a
    full d×d matrix and discarding its lower triangle; the law of the result is the same).
    """
    upper, lower = _triangle_positions(d)
    out = np.empty(d * d)
    out[upper] = values
    out[lower] = values
    return out.reshape(d, d)


def symmetric_gaussian(d: int, sigma: float, rng: np.random.Generator) -> np.ndarray:
    """Symmetric d×d matrix, upper triangle incl. diagonal i.i.d. N(0, σ²), mirrored below."""
    return _symmetric_from_triangle(rng.normal(0.0, sigma, size=d * (d + 1) // 2), d)


def symmetric_laplace(d: int, scale: float, rng: np.random.Generator) -> np.ndarray:
    """Symmetric d×d matrix, upper triangle incl. diagonal i.i.d. Laplace(0, scale), mirrored below."""
    return _symmetric_from_triangle(rng.laplace(0.0, scale, size=d * (d + 1) // 2), d)


def laplace(scale: float, rng: np.random.Generator, size: int | tuple[int, ...] | None = None):
    """Laplace(0, scale) draws."""
    return rng.laplace(0.0, scale, size=size)


def truncated_laplace(scale: float, half_width: float, rng: np.random.Generator,
                      size: int | tuple[int, ...] | None = None):
    """Laplace(0, scale) conditioned on [−half_width, half_width], by inverse CDF of |Z|.

    Density ∝ exp(−|z|/scale) on the interval (Geng, Ding, Guo & Kumar 2020).
    """
    scale = check_positive(scale, "scale")
    half_width = check_positive(half_width, "half_width")
    u = rng.random(size)
    mass = -math.expm1(-half_width / scale)  # 1 − e^{−A/λ}
    magnitude = -scale * np.log1p(-u * mass)
    sign = np.where(rng.random(size) < 0.5, -1.0, 1.0)
    return sign * magnitude


def wishart_bartlett(d: int, df: float, scale: float, rng: np.random.Generator) -> np.ndarray:
    """W ~ W_d(scale·I, df) by the Bartlett decomposition W = scale·LLᵀ, in O(d³) whatever df is.

    L is lower triangular with L_ii² ~ χ²_{df − i} (i = 0..d−1) and L_ij ~ N(0, 1) for i > j.
    """
    d = check_int(d, "d", 1)
    df = check_positive(df, "df")
    if df <= d - 1:
        raise InvalidParameterError(f"Wishart degrees of freedom must exceed d − 1 = {d - 1}, got {df}.")
    L = np.where(_strictly_lower_mask(d), rng.standard_normal((d, d)), 0.0)  # np.tril(·, −1), same array
    L.flat[::d + 1] = np.sqrt(rng.chisquare(df - np.arange(d)))  # the diagonal
    return scale * (L @ L.T)


@functools.lru_cache(maxsize=64)
def _strictly_lower_mask(d: int) -> np.ndarray:
    """The d×d mask of the entries below the diagonal (what ``np.tril(·, −1)`` keeps), built once per d."""
    mask = np.tri(d, d, -1, dtype=bool)
    mask.flags.writeable = False
    return mask


def wishart_gram(d: int, df: int, scale: float, rng: np.random.Generator) -> np.ndarray:
    """W = ZZᵀ with Z a d×df matrix of i.i.d. N(0, scale) entries (the papers' literal construction)."""
    Z = rng.normal(0.0, math.sqrt(scale), size=(d, df))
    return Z @ Z.T


def uniform_stiefel(d: int, k: int, rng: np.random.Generator) -> np.ndarray:
    """A Haar-uniform d×k matrix with orthonormal columns (QR of a Gaussian matrix, signs fixed)."""
    Q, R = np.linalg.qr(rng.standard_normal((d, k)))
    signs = np.sign(np.diag(R))
    signs[signs == 0] = 1.0
    return Q * signs


def uniform_sphere(q: int, rng: np.random.Generator, size: int | None = None) -> np.ndarray:
    """Uniform unit vectors in R^q (one vector, or ``size`` rows)."""
    shape = (q,) if size is None else (size, q)
    z = rng.standard_normal(shape)
    return z / np.linalg.norm(z, axis=-1, keepdims=True)
