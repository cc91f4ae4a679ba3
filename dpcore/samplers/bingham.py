"""Exact Bingham sampler on the unit sphere: Kent, Ganeiber & Mardia (2018), ACG-envelope rejection.

Target on S^{q−1}: f*(x) ∝ exp(−xᵀΨx) with Ψ symmetric PSD and λ_min(Ψ) = 0 (any Ψ is shifted to that; the
shift only changes the normaliser). Envelope: the angular central Gaussian ACG(Ω), Ω = I + 2Ψ/b, with b the root
of Σᵢ 1/(b + 2λᵢ) = 1; the ratio f*/g* is bounded by M* = exp(−(q − b)/2)·(q/b)^{q/2} (spec §3.5).

Unlike diffprivlib (which re-factorises the covariance inside ``multivariate_normal`` for every proposal), the
target is factorised once and proposals are drawn in vectorised batches in Ψ's eigenbasis, where a proposal
costs O(q). The acceptance test is done in log space. The number of proposals is data dependent (a timing side
channel, documented limitation). An iteration or time cap raises — it never returns a non-sample.

The accept/reject decision is isolated in :meth:`KentBinghamSampler._accept` so an audit can subclass the
sampler into a deliberately broken "always accept" variant (the OpenDP bug, opendp#2416). Such a variant must
never be registered as a mechanism.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..core.timing import Deadline
from ..exceptions import InvalidParameterError, SamplerError

#: Default cap on the number of ACG proposals for one sample (raise instead of looping forever).
DEFAULT_MAX_PROPOSALS = 200_000_000
#: Largest number of floats drawn in one proposal batch (memory bound: 8 MB).
_MAX_BATCH_FLOATS = 1 << 20
#: Numerical slack for the envelope bound log r ≤ 0.
_BOUND_SLACK = 1e-7


def kent_b(eigenvalues: np.ndarray | list[float]) -> float:
    """Root b ∈ [1, q] of Σᵢ 1/(b + 2λᵢ) = 1 for the eigenvalues of Ψ (shifted so that min λ = 0).

    Ψ = diag(0, 1, 5) gives b = 1.577118; Ψ = 0 in q dimensions gives b = q.
    """
    lam = np.asarray(eigenvalues, dtype=float).ravel()
    if lam.size == 0 or not np.all(np.isfinite(lam)):
        raise InvalidParameterError("kent_b needs a non-empty vector of finite eigenvalues.")
    lam = lam - lam.min()
    q = lam.size
    if q == 1 or lam.max() == 0.0:
        return float(q)

    def f(b: float) -> float:
        return float(np.sum(1.0 / (b + 2.0 * lam))) - 1.0

    # f is decreasing; f(1) ≥ 0 (the λ = 0 term alone is 1) and f(q) ≤ 0. Bisection then Newton polish.
    lo, hi = 1.0, float(q)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if f(mid) > 0.0:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-15 * hi:
            break
    b = 0.5 * (lo + hi)
    for _ in range(3):  # Newton steps (f' = −Σ 1/(b+2λ)²), kept inside the bracket
        fp = -float(np.sum(1.0 / (b + 2.0 * lam) ** 2))
        nb = b - f(b) / fp
        if not (1.0 <= nb <= q):
            break
        b = nb
    return float(b)


def kent_log_m(q: int, b: float) -> float:
    """log M* = −(q − b)/2 + (q/2)·ln(q/b), the log of the Kent envelope bound (M* = 1.287985 for diag(0,1,5))."""
    if q < 1 or not (0.0 < b <= q + 1e-12):
        raise InvalidParameterError(f"kent_log_m needs q >= 1 and 0 < b <= q; got q={q}, b={b}.")
    return -(q - b) / 2.0 + (q / 2.0) * math.log(q / b)


@dataclass
class SamplerStats:
    """Acceptance statistics of a rejection sampler (non-private diagnostics)."""

    proposals: int = 0
    accepted: int = 0

    @property
    def acceptance_rate(self) -> float:
        return self.accepted / self.proposals if self.proposals else float("nan")


class KentBinghamSampler:
    """Exact sampler for the density ∝ exp(−xᵀΨx) on the unit sphere S^{q−1}.

    Build it once per target (one eigendecomposition), then call :meth:`sample` or :meth:`sample_many`.
    Use :meth:`from_score` for the exponential-mechanism form ∝ exp(c·xᵀCx). ``stats`` accumulates the
    number of proposals and accepted samples.

    Subclass hook: :meth:`_accept` decides acceptance from log U and log r (log r ≤ 0 is the log ratio
    f*/(M*·g*)). The correct rule is ``log_u < log_r``.
    """

    def __init__(self, Psi: np.ndarray, *, max_proposals: int = DEFAULT_MAX_PROPOSALS,
                 eig: tuple[np.ndarray, np.ndarray] | None = None) -> None:
        Psi = np.asarray(Psi, dtype=float)
        if Psi.ndim != 2 or Psi.shape[0] != Psi.shape[1] or Psi.shape[0] < 1:
            raise InvalidParameterError(f"Psi must be a square matrix, got shape {Psi.shape}.")
        if not np.all(np.isfinite(Psi)):
            raise InvalidParameterError("Psi contains NaN or infinite values.")
        if max_proposals < 1:
            raise InvalidParameterError(f"max_proposals must be >= 1, got {max_proposals}.")
        self.q = Psi.shape[0]
        if eig is None:
            lam, U = np.linalg.eigh(0.5 * (Psi + Psi.T))
        else:
            lam, U = (np.asarray(a, dtype=float) for a in eig)
        lam = np.maximum(lam - lam.min(), 0.0)  # shift so λ_min = 0 (changes only the normaliser)
        self.eigenvalues = lam
        self.eigenvectors = U
        self.b = kent_b(lam)
        self.log_m = kent_log_m(self.q, self.b)
        self._omega = 1.0 + 2.0 * lam / self.b  # eigenvalues of Ω = I + 2Ψ/b
        self._scale = 1.0 / np.sqrt(self._omega)  # z = U diag(Ω^{−1/2}) g ~ N(0, Ω⁻¹)
        self._slack = _BOUND_SLACK + 1e-12 * (float(lam.max()) + self.q)  # rounding in log r
        self.max_proposals = int(max_proposals)
        self.stats = SamplerStats()

    @classmethod
    def from_score(cls, C: np.ndarray, c: float, **kwargs) -> KentBinghamSampler:
        """Sampler for the density ∝ exp(c·xᵀCx), c ≥ 0: Ψ = c(λ_max(C)·I − C), factorised once."""
        C = np.asarray(C, dtype=float)
        if not (math.isfinite(c) and c >= 0.0):
            raise InvalidParameterError(f"the exponent c must be a finite number >= 0, got {c!r}.")
        w, U = np.linalg.eigh(0.5 * (C + C.T))
        lam = c * (w.max() - w)
        return cls(np.zeros_like(C), eig=(lam, U), **kwargs)

    # --- hooks ----------------------------------------------------------------------------------
    def _accept(self, log_u: np.ndarray, log_r: np.ndarray) -> np.ndarray:
        """Boolean mask of accepted proposals (override only to build deliberately broken test variants)."""
        return log_u < log_r

    # --- sampling -------------------------------------------------------------------------------
    def _log_ratio(self, y: np.ndarray) -> np.ndarray:
        """log r = −xᵀΨx + (q/2)·ln(xᵀΩx) − log M* for unit rows y in Ψ's eigenbasis."""
        y2 = y * y
        return -(y2 @ self.eigenvalues) + 0.5 * self.q * np.log(y2 @ self._omega) - self.log_m

    def _draw(self, n: int, rng: np.random.Generator, deadline: Deadline | None,
              what: str) -> np.ndarray:
        """n independent exact samples (rows, in Ψ's eigenbasis)."""
        q = self.q
        out = np.empty((n, q))
        got = 0
        used = 0
        batch = max(8, min(4 * n, _MAX_BATCH_FLOATS // q))
        max_batch = max(8, _MAX_BATCH_FLOATS // q)
        while got < n:
            if deadline is not None:
                deadline.check(what)
            if used >= self.max_proposals:
                raise SamplerError(
                    f"{what}: no sample after {used:,} proposals (cap {self.max_proposals:,}); the target is "
                    "too concentrated for exact rejection sampling — lower epsilon or n, or raise the cap."
                )
            size = min(batch, self.max_proposals - used)
            z = rng.standard_normal((size, q)) * self._scale
            y = z / np.linalg.norm(z, axis=1, keepdims=True)
            log_r = self._log_ratio(y)
            if log_r.max() > self._slack:
                raise SamplerError(f"{what}: the Kent envelope bound was violated (log r > 0); numerical problem in "
                                   "the target matrix.")  # log r is a function of the data: never shown
            ok = np.flatnonzero(self._accept(np.log(rng.random(size)), log_r))
            take = ok[: n - got]
            if take.size:
                out[got:got + take.size] = y[take]
                got += take.size
                # Proposals consumed: up to and including the last one kept (later ones are discarded unseen).
                consumed = int(take[-1]) + 1 if got == n else size
            else:
                consumed = size
            used += consumed
            self.stats.proposals += consumed
            if take.size == 0:
                batch = min(2 * batch, max_batch)
        self.stats.accepted += n
        return out

    def sample(self, rng: np.random.Generator, deadline: Deadline | None = None,
               what: str = "the Bingham sampler") -> np.ndarray:
        """One exact sample x ∈ S^{q−1} (q = 1: ±1 with probability ½)."""
        if self.q == 1:
            self.stats.proposals += 1
            self.stats.accepted += 1
            return np.array([1.0 if rng.random() < 0.5 else -1.0])
        y = self._draw(1, rng, deadline, what)[0]
        return self.eigenvectors @ y

    def sample_many(self, n: int, rng: np.random.Generator, deadline: Deadline | None = None,
                    what: str = "the Bingham sampler") -> np.ndarray:
        """n i.i.d. exact samples as rows of an (n, q) array."""
        if n < 0:
            raise InvalidParameterError(f"n must be >= 0, got {n}.")
        if self.q == 1:
            self.stats.proposals += n
            self.stats.accepted += n
            return np.where(rng.random(n) < 0.5, -1.0, 1.0)[:, None]
        if n == 0:
            return np.empty((0, self.q))
        return self._draw(n, rng, deadline, what) @ self.eigenvectors.T


def sample_bingham(Psi: np.ndarray, rng: np.random.Generator, deadline: Deadline | None = None,
                   max_proposals: int = DEFAULT_MAX_PROPOSALS) -> tuple[np.ndarray, SamplerStats]:
    """One exact draw from ∝ exp(−xᵀΨx) on the sphere; returns (x, stats)."""
    sampler = KentBinghamSampler(Psi, max_proposals=max_proposals)
    return sampler.sample(rng, deadline), sampler.stats


def sample_bingham_score(C: np.ndarray, c: float, rng: np.random.Generator, deadline: Deadline | None = None,
                         max_proposals: int = DEFAULT_MAX_PROPOSALS) -> tuple[np.ndarray, SamplerStats]:
    """One exact draw from ∝ exp(c·xᵀCx) on the sphere (exponential mechanism); returns (x, stats)."""
    sampler = KentBinghamSampler.from_score(C, c, max_proposals=max_proposals)
    return sampler.sample(rng, deadline), sampler.stats


__all__ = [
    "DEFAULT_MAX_PROPOSALS",
    "KentBinghamSampler",
    "SamplerStats",
    "kent_b",
    "kent_log_m",
    "sample_bingham",
    "sample_bingham_score",
]
