"""Gibbs sampler for the matrix Bingham distribution BMF_k(M) on the Stiefel manifold (Hoff 2009).

Target: density ∝ etr(VᵀMV) on {V ∈ R^{d×k}: VᵀV = I}, k < d (PPCA uses M = (ε/2)·C; spec §3.4). Every scan
updates the columns in random order (``pdhoff/rstiefel``'s ``rbing.matrix.gibbs``); column r is redrawn on the unit
sphere of the null space of the other columns, where its conditional is the vector Bingham ∝ exp(xᵀSx), S the
restriction of M to that null space (the m×m block, m = d − k + 1). Two column updates, both leaving BMF_k(M)
invariant (so the chain's stationary law is the same):

* ``kernel="exact"`` (the default since issue #33): the column is an *exact* draw from its conditional, by Kent,
  Ganeiber & Mardia's ACG rejection sampler written on a Cholesky factor of the block (:class:`_ExactColumn`) —
  no eigendecomposition. Per column: a 5-step Krylov/Rayleigh–Ritz estimate of the block's top eigenvalue, one
  Cholesky factorisation (m³/3 flops), and 7–13 proposals (triangular solves) on adult. A release on adult takes
  about a third of the CPU time of Hoff's kernel (docs/benchmarks.md, "Issue #33").
* ``kernel="hoff"``: one coordinate sweep of ``ry_bing`` in the eigenbasis of the block (rstiefel's
  ``rbing.vector.gibbs``, ``ry_bing``, ``rtheta_bing``) — a Gibbs sweep *within* the conditional, which needs the
  block's eigendecomposition per column. Kept for comparison (the tests check that both scans have the same law).

Implementation notes for Hoff's kernel (performance and the numerical guards of spec §3.4 pitfall iii); the first
bullet (Q, B and the Householder rotation) serves both kernels:

* A complete orthonormal basis Q = [V, V⊥] and B = QᵀMQ are kept; the null space of the other columns is then
  {current column} ∪ V⊥, so the restricted matrix is a sub-block of B — no QR per column. After the column update
  the block's basis is rotated by an orthogonal W whose first column is the new column. Q and B are rebuilt from a
  re-orthonormalised V every few scans (rounding control). The reference floor per scan is k ``eigh`` calls of
  size m = d − k + 1 (``benchmarks/bench_ppca.py``); the linear algebra below costs less than that from m ≈ 24
  on, and the scalar sweep comes on top.
* From m = 24 on, the eigendecomposition is never formed: the block is reduced to tridiagonal form (``dsytrd``),
  the tridiagonal eigenproblem is solved by divide and conquer (``dstevd``), and the new column E·y is mapped back
  through the Householder reflectors of the reduction (``dormqr``) — the sweep needs only the eigenvalues, the
  current column's eigen-coordinates and one E·y. W is then a single Householder reflection (times a sign), so Q
  and B get rank-1/rank-2 updates (O(d·m + m²)) instead of GEMMs with an eigenvector matrix. A column updated twice
  in a row reuses its block's decomposition (see :func:`_gibbs_chain`). Below m = 24 a dense ``eigh`` and small
  GEMMs are faster (fewer numpy calls).
* ``ry_bing`` runs one scalar sweep with lazy rescaling (O(1) work per coordinate; the first proposal of a θ draw
  is made inline from proposals pre-drawn per sweep in vector calls); Σ_{j≠i} y_j² is recomputed exactly when
  cancellation threatens; ``a`` is a mean-difference (stable form) and |a| ≤ max(l) − min(l) is
  checked (else :class:`SamplerError`); the sweep output is renormalised.
* ``rtheta_bing`` uses rstiefel's Beta(1/2, g) envelope with g ← min(g, h) and 0·ln 0 → 0; after a few scalar
  proposals it draws vectorised batches (first accepted proposal of an i.i.d. stream — exact). For strongly
  negative a (conditional concentrated near θ = 0, where the Beta envelope accepts ~√(h/|a|) of proposals) it
  switches to the exact envelope θ^{−1/2}e^{aθ}; the law of θ is unchanged (tested against quadrature).

* The chains run with BLAS limited to one thread (:mod:`dpcore.core.threads`, in-process): every call here is small
  dense linear algebra (m×m blocks, d×m rank-1 updates) for which OpenBLAS's thread start-up and synchronisation cost
  more than they save — with the default threads a release on Adult (d = 108, k = 5) took 3.6× the wall time of the
  same release on one thread (issue #22). The d×d eigendecomposition of M done once per call stays on all cores only
  from d = :data:`~dpcore.core.threads.SMALL_DENSE_BELOW` on (:func:`~dpcore.core.threads.blas_threads_for`).

MCMC has no convergence certificate: PPCA built on this sampler is heuristic-DP. Per recorded scan the chain keeps
sign-invariant statistics of its state — the score tr(VᵀMV) and the principal angles between span(V) and the
top-k eigenvectors of M (functions of the subspace VVᵀ; :data:`STAT_NAMES`) — which :mod:`.convergence` judges
by rank-normalised split-R̂ and bulk-ESS (:attr:`GibbsResult.verdict`). The burn-in statistic of Chaudhuri et al.
(JMLR 2013) §6.2, F_k(T) = ‖(1/T)Σ_t X(t)‖_F/√k, is still recorded per chain: it measures whether the columns'
*signs* have averaged out (≈ 1/√T for a chain of nearly independent states, so it needs T ≳ 10,000 to go under
0.01 — seed 000 ran 20,000 scans), and is reported, not used as the verdict. All of these are computed from the
data: non-private.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from ..core.noise import uniform_stiefel
from ..core.threads import SMALL_DENSE_BELOW, SMALL_DENSE_THREADS, blas_threads_for, single_threaded_blas
from ..core.timing import Deadline
from ..exceptions import InvalidParameterError, SamplerError
from .convergence import ConvergenceVerdict, judge_convergence

#: Cap on the number of Beta proposals for one θ draw.
RTHETA_MAX_PROPOSALS = 10_000_000
#: Seed 000 §6.2's F_k threshold (a reported statistic: F_k ≤ 0.01 needs T ≳ 10,000; no longer the verdict).
CONVERGENCE_THRESHOLD = 0.01
#: BLAS threads used by the chains (small dense linear algebra; see the module docstring).
SAMPLER_BLAS_THREADS = SMALL_DENSE_THREADS
#: Scalar proposals tried in rtheta_bing before switching to vectorised batches.
_SCALAR_TRIES = 12
#: Block size m from which the column update goes through the tridiagonal form (fewer flops); below it a dense
#: ``eigh`` and a few small GEMMs are faster (fewer numpy calls).
_TRIDIAGONAL_FROM = 24
#: a/h from which θ's draw for a > 0 uses the envelope of :func:`_rtheta_near_one` (valid for a > 2(h − 1); from
#: a = 4h on, the Gamma piece's mean h/a is at most ¼, so most of its proposals fall below φ = ½).
_NEAR_ONE_FROM = 4.0
_LN2 = math.log(2.0)
_SQRT2 = math.sqrt(2.0)
#: Column updates of :func:`bmf_gibbs`: an exact draw from the column's conditional, or Hoff's one-sweep kernel.
KERNELS = ("exact", "hoff")
#: Q = [V, V⊥] and B = QᵀMQ are rebuilt from V (re-orthonormalised) every this many scans.
_REFRESH_EVERY = 8


# --------------------------------------------------------------------------------------------------
# θ = y_i² conditional and one coordinate sweep
# --------------------------------------------------------------------------------------------------

def _gamma_threshold(h: float) -> float:
    """a below which the truncated-Gamma envelope beats Beta(1/2, h): a < −π/B(1/2, h)² (needs h ≥ 1)."""
    if h < 1.0:
        return -math.inf
    log_b = math.lgamma(0.5) + math.lgamma(h) - math.lgamma(h + 0.5)
    return -math.pi * math.exp(-2.0 * log_b)


def _rtheta_near_one(h: float, a: float, rng: np.random.Generator, u0: float) -> float:
    """Draw θ ∝ θ^{−1/2}(1−θ)^{h−1}e^{aθ} for large a > 0 (needs h ≥ 1 and a > 2(h − 1)) by exact rejection in
    φ = 1 − θ, where the target is f(φ) ∝ (1−φ)^{−1/2}·φ^{h−1}e^{−aφ} on (0, 1).

    Two envelope pieces, each dominating its part of f: on φ ≤ ½, (1−φ)^{−1/2} ≤ √2, so g_A = √2·φ^{h−1}e^{−aφ}
    (a Gamma(h, rate a) density, mass √2·Γ(h)/a^h; its proposals above ½ are rejected); on φ > ½, φ^{h−1}e^{−aφ}
    decreases (a > 2(h − 1)), so g_B = c_B·(1−φ)^{−1/2} with c_B = 2^{1−h}e^{−a/2} (mass √2·c_B; 1 − φ = U²/2).
    A piece is chosen with probability ∝ its mass and its proposal accepted with probability f/g of that piece:
    53–55 % of proposals are accepted at a = 4h and 61–81 % beyond, where rstiefel's Beta(1/2, g) envelope accepts
    ≈ 1 % at adult's a (issue #22). ``u0`` is a pre-drawn uniform for the first choice of piece.
    """
    if not (h >= 1.0 and a > 2.0 * (h - 1.0)):  # c_B bounds φ^{h−1}e^{−aφ} on (½, 1) only there
        raise InvalidParameterError(f"the near-one envelope needs h >= 1 and a > 2(h - 1); got h={h!r}, a={a!r}.")
    log_mass_a = math.lgamma(h) - h * math.log(a)
    log_c_b = (1.0 - h) * _LN2 - 0.5 * a
    p_b = 1.0 / (1.0 + math.exp(min(log_mass_a - log_c_b, 700.0)))
    gamma, random, log, log1p = rng.standard_gamma, rng.random, math.log, math.log1p
    u = u0
    for _ in range(RTHETA_MAX_PROPOSALS):
        if u < p_b:  # θ = 1 − φ = V²/2 (φ on (½, 1) from ∝ (1−φ)^{−1/2}), accepted w.p. φ^{h−1}e^{−aφ} / c_B
            v = random()
            theta = 0.5 * v * v  # θ itself, not 1 − φ: no rounding near θ = 0
            w = random()
            if theta > 0.0 and (w == 0.0 or log(w) < (h - 1.0) * log1p(-theta) - a * (1.0 - theta) - log_c_b):
                return theta
        else:  # φ ~ Gamma(h, rate a), accepted on φ ≤ ½ w.p. (1−φ)^{−1/2}/√2
            phi = gamma(h) / a
            if 0.0 < phi <= 0.5 and random() * _SQRT2 * math.sqrt(1.0 - phi) < 1.0:
                return 1.0 - phi
        u = random()
    raise SamplerError(f"rtheta_bing: no acceptance after {RTHETA_MAX_PROPOSALS:,} proposals (h = {h:g}); "
                       "lower epsilon.")  # h is public (the block size); a is a function of the data: never shown


def _rtheta(h: float, a: float, rng: np.random.Generator, u0: float, a_gamma: float = -math.inf,
            scalar_tries: int = 1 + _SCALAR_TRIES) -> float:
    """Draw θ ∝ θ^{−1/2}(1−θ)^{h−1}e^{aθ} on (0, 1); ``u0`` is a pre-drawn uniform for the first try.

    Envelope: Beta(1/2, g) as in rstiefel; when a < ``a_gamma`` (strongly negative a, h ≥ 1) the envelope
    θ^{−1/2}e^{aθ} (θ = Z²/(2|a|), accepted w.p. (1−θ)^{h−1}) is used instead — same target, far fewer
    rejections when the conditional is concentrated near 0. The Beta envelope switches to vectorised batches after
    ``scalar_tries`` scalar proposals (one fewer when the caller has made the first proposal itself).
    """
    if a < a_gamma:
        normal, log1p, scale = rng.standard_normal, math.log1p, -0.5 / a
        hm1 = h - 1.0
        u = u0
        for _ in range(RTHETA_MAX_PROPOSALS):
            z = normal()
            theta = z * z * scale
            if theta < 1.0 and (hm1 == 0.0 or (u > 0.0 and math.log(u) < hm1 * log1p(-theta))):
                return theta
            u = rng.random()
        raise SamplerError(f"rtheta_bing: no acceptance after {RTHETA_MAX_PROPOSALS:,} proposals "
                           f"(h = {h:g}); lower epsilon.")
    if a >= _NEAR_ONE_FROM * h and h >= 1.0:  # concentrated near θ = 1: the exact envelope in φ = 1 − θ
        return _rtheta_near_one(h, a, rng, u0)
    if a > 0.0:
        g = min(h, max(1.0 / (1.0 + math.log(2.0 + a)), h - a))
        hg = h - g
        lrmx = a - hg + (hg * math.log(hg / a) if hg > 0.0 else 0.0)  # 0·ln 0 → 0
    else:
        g, hg, lrmx = h, 0.0, 0.0
    beta, log1p, exp = rng.beta, math.log1p, math.exp
    u = u0
    for _ in range(scalar_tries):  # a few scalar proposals, then vectorised batches
        theta = beta(0.5, g)
        if hg == 0.0:
            lr = a * theta - lrmx
        elif theta < 1.0:
            lr = a * theta + hg * log1p(-theta) - lrmx
        else:
            lr = -math.inf
        if u < exp(lr):  # lr ≤ 0 up to rounding
            return float(theta)
        u = rng.random()
    used, batch = 1 + _SCALAR_TRIES, 64
    while used < RTHETA_MAX_PROPOSALS:
        th = rng.beta(0.5, g, size=batch)
        with np.errstate(divide="ignore"):
            lr_v = a * th + (hg * np.log1p(-th) if hg > 0.0 else 0.0) - lrmx
        ok = np.flatnonzero(rng.random(batch) < np.exp(np.minimum(lr_v, 0.0)))
        if ok.size:
            return float(th[ok[0]])
        used += batch
        batch = min(4 * batch, 65536)
    raise SamplerError(f"rtheta_bing: no acceptance after {RTHETA_MAX_PROPOSALS:,} proposals (h = {h:g}); "
                       "the target is numerically degenerate — lower epsilon.")


def rtheta_bing(h: float, a: float, rng: np.random.Generator) -> float:
    """One draw of θ ∈ (0, 1) with density ∝ θ^{−1/2}(1−θ)^{h−1}e^{aθ} (rstiefel ``rtheta_bing``), h > 0."""
    if not (h > 0.0 and math.isfinite(h) and math.isfinite(a)):
        raise InvalidParameterError(f"rtheta_bing needs h > 0 and finite a; got h={h!r}, a={a!r}.")
    return _rtheta(float(h), float(a), rng, float(rng.random()), _gamma_threshold(float(h)))


def _ry_bing_sweep(y: list[float], l: list[float], rng: np.random.Generator) -> list[float]:
    """One coordinate sweep targeting ∝ exp(Σ l_j y_j²) on the sphere; ``l`` must satisfy min(l) = 0.

    The state is kept as w with y ∝ w (lazy rescaling: updating coordinate i rescales the others only
    implicitly), so a sweep costs O(m) scalar work plus the θ draws. The first proposal of every θ draw with a ≤ 0
    is made inline, from proposals of both envelopes pre-drawn for all coordinates in two vector calls; a rejected
    one (and every draw with a > 0, whose envelope depends on a) continues in :func:`_rtheta`.
    """
    m = len(y)
    h = 0.5 * (m - 1)
    hm1 = h - 1.0
    a_gamma = _gamma_threshold(h)
    spread = max(l)
    tol = 1e-6 * spread + 1e-300
    w = list(y)
    w2 = [v * v for v in w]
    W2 = math.fsum(w2)
    LW2 = math.fsum([lj * vj for lj, vj in zip(l, w2)])
    u = rng.random(2 * m).tolist()
    # first proposals of both envelopes for every coordinate, drawn in two vector calls (a scalar Generator call
    # costs ≈ 1.5 µs, a sweep makes m of them); which one a coordinate uses depends on the state only, never on
    # the drawn values, so the unused ones are discarded without changing any θ's law
    first_beta = rng.beta(0.5, h, m).tolist()
    first_normal = rng.standard_normal(m).tolist()
    random = rng.random
    log, log1p, exp, sqrt = math.log, math.log1p, math.exp, math.sqrt
    for i in range(m):
        li = l[i]
        wi2 = w2[i]
        others = W2 - wi2
        if others < 1e-6 * W2:  # cancellation: recompute Σ_{j≠i} exactly
            others = math.fsum(w2[:i] + w2[i + 1:])
            lothers = math.fsum([l[j] * w2[j] for j in range(m) if j != i])
            if not others > 0.0:  # y_{−i} = 0: replace it by a uniform direction (rstiefel)
                z = rng.standard_normal(m)
                z[i] = 0.0
                z /= np.linalg.norm(z)
                w = z.tolist()
                w2 = [v * v for v in w]
                others = 1.0
                lothers = math.fsum([lj * vj for lj, vj in zip(l, w2)])
        else:
            lothers = LW2 - li * wi2
        a = li - lothers / others  # l_i minus a weighted mean of the other l_j
        if not abs(a) <= spread + tol:
            raise SamplerError(
                "Gibbs sampler: numerical failure (a coordinate's conditional left the range of the block's "
                "eigenvalues); the state left the sphere. Lower epsilon or n."
            )
        if a > li:  # clip rounding: a ∈ [l_i − max l, l_i − min l]
            a = li
        elif a < li - spread:
            a = li - spread
        ui = u[i]
        if a < a_gamma:  # first proposal θ = Z²/(2|a|) of _rtheta's truncated-Gamma envelope
            zi = first_normal[i]
            theta = zi * zi * (-0.5 / a)
            if not (theta < 1.0 and (hm1 == 0.0 or (ui > 0.0 and log(ui) < hm1 * log1p(-theta)))):
                theta = _rtheta(h, a, rng, random(), a_gamma)
        elif a <= 0.0:  # first proposal θ ~ Beta(1/2, h) of _rtheta's Beta envelope, accepted w.p. e^{aθ}
            theta = first_beta[i]
            if not ui < exp(a * theta):
                theta = _rtheta(h, a, rng, random(), a_gamma, _SCALAR_TRIES)
        else:  # a > 0: the envelope's shape depends on a
            theta = _rtheta(h, a, rng, ui, a_gamma)
        one_minus = 1.0 - theta
        sign = -1.0 if u[m + i] < 0.5 else 1.0
        if one_minus <= 0.0:  # θ = 1 exactly: y = ±e_i
            w = [0.0] * m
            w2 = [0.0] * m
            w[i], w2[i] = sign, 1.0
            W2, LW2 = 1.0, li
            continue
        wi2n = theta * others / one_minus  # new w_i² in the scale where the other w_j are unchanged
        w[i] = sign * sqrt(wi2n)
        w2[i] = wi2n
        W2 = others + wi2n
        LW2 = lothers + li * wi2n
        if W2 > 1e200:  # keep the lazy scale in range (W2 only grows during a sweep)
            f = 1.0 / sqrt(W2)
            w = [v * f for v in w]
            w2 = [v * v for v in w]
            W2 = math.fsum(w2)
            LW2 = math.fsum([lj * vj for lj, vj in zip(l, w2)])
    norm = sqrt(math.fsum(w2))
    return [v / norm for v in w]


def ry_bing(y: np.ndarray, l: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One Gibbs sweep (rstiefel ``ry_bing``) leaving ∝ exp(Σ_j l_j y_j²) on the unit sphere invariant."""
    y = np.asarray(y, dtype=float).ravel()
    l = np.asarray(l, dtype=float).ravel()
    if y.shape != l.shape or y.size < 1:
        raise InvalidParameterError("ry_bing needs y and l of the same non-zero length.")
    if y.size == 1:
        return np.array([1.0 if rng.random() < 0.5 else -1.0])
    nrm = np.linalg.norm(y)
    if not (np.isfinite(nrm) and nrm > 0):
        raise InvalidParameterError("ry_bing needs a finite non-zero starting vector.")
    return np.array(_ry_bing_sweep((y / nrm).tolist(), (l - l.min()).tolist(), rng))


# --------------------------------------------------------------------------------------------------
# Matrix Bingham Gibbs sampler
# --------------------------------------------------------------------------------------------------

def f_statistic(running_sum: np.ndarray, t: int) -> float:
    """F_k(t) = ‖running_sum / t‖_F / √k for the sum of t states X(1..t) (seed 000 §6.2)."""
    k = running_sum.shape[1]
    return float(np.linalg.norm(running_sum) / (t * math.sqrt(k)))


#: Sign-invariant statistics recorded per scan (columns of ``GibbsResult.stat_traces``): the score, and the sum and
#: the smallest of cos²θ_i over the principal angles θ_i between span(V) and the top-k eigenvectors of M.
STAT_NAMES = ("score tr(VᵀMV)", "Σ cos² principal angles to top-k", "cos² largest principal angle to top-k")


@dataclass
class GibbsResult:
    """Output of :func:`bmf_gibbs`: final state of every chain plus the (non-private) diagnostics."""

    states: list[np.ndarray]
    f_traces: np.ndarray  # (chains, len(trace_scans))
    trace_scans: np.ndarray  # scan index t of each recorded F value
    scans: int
    seconds: float
    samples: np.ndarray | None = None  # (chains, n_kept, d, k) when keep_every > 0
    info: dict = field(default_factory=dict)
    stat_traces: np.ndarray | None = None  # (chains, len(trace_scans), len(STAT_NAMES)) per record

    @property
    def final_f(self) -> np.ndarray:
        return self.f_traces[:, -1] if self.f_traces.size else np.full(len(self.states), np.nan)

    def f_below(self, threshold: float = CONVERGENCE_THRESHOLD) -> bool:
        """True when every chain ends with F_k(T) ≤ threshold (sign mixing; seed 000's check, not the verdict)."""
        return bool(np.all(self.final_f <= threshold))

    @property
    def verdict(self) -> ConvergenceVerdict:
        """Split-R̂ / bulk-ESS verdict on the sign-invariant statistics (:func:`.convergence.judge_convergence`)."""
        return judge_convergence(self.stat_traces, STAT_NAMES)

    @property
    def converged(self) -> bool:
        """The verdict (a non-private heuristic, never a privacy proof)."""
        return self.verdict.converged


def _rebuild(M: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Q = [V, V⊥] with V re-orthonormalised (column signs kept) and B = QᵀMQ."""
    k = V.shape[1]
    Q, R = np.linalg.qr(V, mode="complete")
    sgn = np.sign(np.diag(R))
    sgn[sgn == 0] = 1.0
    Q[:, :k] *= sgn
    B = Q.T @ M @ Q
    return Q, 0.5 * (B + B.T)


class _BlockEigen:
    """Eigenvalues of a symmetric m×m block S, and the map from its eigen-coordinates back to the block's basis.

    The sampler needs only l (ascending), the current column's eigen-coordinates Eᵀe₀ and one vector E·y per
    column update, never E itself. So S = Q_T·T·Q_Tᵀ is reduced to tridiagonal form (LAPACK ``dsytrd``, lower: its
    reflectors leave e₀ fixed, so Eᵀe₀ = Zᵀe₀), T = Z·diag(l)·Zᵀ is solved by divide and conquer (``dstevd``), and
    E·y = Q_T·(Z·y) applies the reflectors to one vector (``dormqr``): the O(m³) back-transformation of a full
    ``eigh`` is skipped. If LAPACK reports a failure, ``numpy.linalg.eigh`` is used.
    """

    def __init__(self, m: int) -> None:
        from scipy.linalg import lapack  # on first use: importing the samplers stays light

        self._lapack = lapack
        self.m = m
        self._trd_lwork = int(lapack.dsytrd_lwork(m, lower=1)[0])
        self._refl: np.ndarray | None = None
        self._tau: np.ndarray | None = None
        self._dense = False

    def decompose(self, S: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(l ascending, Z) with Z's first row the eigen-coordinates of e₀; :meth:`to_block` then maps y back."""
        refl, dd, e, tau, info = self._lapack.dsytrd(S, lower=1, lwork=self._trd_lwork)
        if info == 0:
            l, Z, info = self._lapack.dstevd(dd, e, compute_v=1)
            if info == 0:
                self._refl, self._tau, self._dense = refl[1:, :-1], tau, False
                return l, Z
        l, E = np.linalg.eigh(S)  # pragma: no cover - LAPACK failure fallback (Z is then E itself)
        self._dense = True
        return l, E

    def to_block(self, Z: np.ndarray, y: np.ndarray) -> np.ndarray:
        """E·y in the block's basis."""
        z = Z @ y
        if self._dense:  # pragma: no cover - fallback path
            return z
        cq, _, info = self._lapack.dormqr("L", "N", self._refl, self._tau, z[1:, None], self.m)
        if info != 0:  # pragma: no cover
            raise SamplerError(f"Gibbs sampler: LAPACK dormqr failed (info = {info}).")
        z[1:] = cq[:, 0]
        return z


def _rotate_block(Q: np.ndarray, B: np.ndarray, lo: int, x: np.ndarray) -> tuple[np.ndarray, float, float]:
    """Rotate the block basis Q[:, lo:] by an orthogonal W with W e₀ = x (x: unit vector in block coordinates).

    W = H·D with H = I − c·v·vᵀ the Householder reflection e₀ ↦ −s·x (s = sign x₀, the stable choice) and
    D = diag(−s, 1, …), so the block's first basis vector becomes the new column and the others span its complement
    in the block. Q_S ← Q_S·W is a rank-1 update, B_SS ← WᵀB_SS·W a rank-2 update and B_S,other ← Wᵀ·B_S,other a
    rank-1 update: O(d·m + m²). Returns (v, c, s), which define W. ``x`` is overwritten (it becomes v).
    """
    s = 1.0 if x[0] >= 0.0 else -1.0
    v = x
    v[0] += s
    c = 2.0 / float(v @ v)
    cv = c * v
    QS = Q[:, lo:]
    QS -= np.outer(QS @ v, cv)
    QS[:, 0] *= -s
    Bss = B[lo:, lo:]
    p = Bss @ cv
    p -= (0.5 * float(v @ p)) * cv  # H·B_SS·H = B_SS − v·pᵀ − p·vᵀ with this p
    U = np.outer(v, p)
    U += U.T
    Bss -= U
    Bss[0] *= -s
    Bss[:, 0] *= -s
    if lo > 0:
        X = B[lo:, :lo]
        X -= np.outer(cv, v @ X)
        X[0] *= -s
        B[:lo, lo:] = X.T
    return v, c, s


def _rotate_block_dense(Q: np.ndarray, B: np.ndarray, lo: int, l: np.ndarray, E: np.ndarray, y: np.ndarray,
                        diag: np.ndarray) -> None:
    """Small blocks: rotate the block basis by W = E·H·D (H: Householder y ↦ −s·e₀, D = diag(−s, 1, …)), an
    orthogonal matrix with W e₀ = E y, with dense m×m products; then WᵀB_SS·W = D H diag(l) H D."""
    s = 1.0 if y[0] >= 0.0 else -1.0
    v = y
    v[0] += s
    c = 2.0 / float(v @ v)
    DH = np.outer(-c * v, v)  # D·H, built in place
    DH.flat[diag] += 1.0
    DH[0] *= -s
    G = E @ DH.T  # = W
    Q[:, lo:] = Q[:, lo:] @ G
    B[lo:, lo:] = (DH * l) @ DH.T
    if lo > 0:
        X = G.T @ B[lo:, :lo]
        B[lo:, :lo] = X
        B[:lo, lo:] = X.T


#: Krylov steps that locate the block's top eigenvalue for the exact column draw.
_KRYLOV_STEPS = 5
#: First batch of ACG proposals of an exact column draw (later batches grow ×4 up to 4,096).
_ACG_BATCH = 16
#: Cap on the ACG proposals of one exact column draw.
ACG_MAX_PROPOSALS = 10_000_000


class _ExactColumn:
    """Exact draw of one column from its Gibbs conditional: x ∝ exp(xᵀSx) on the unit sphere of the block
    (S = B[lo:, lo:], the restriction of M to the null space of the other columns, m × m).

    Kent, Ganeiber & Mardia's (2018) rejection sampler with an angular central Gaussian envelope ACG(Ω),
    Ω = I + 2Ψ/b, Ψ = λ̂·I − S, written without any eigendecomposition. On the sphere t = xᵀΨx = λ̂ − xᵀSx and
    xᵀΩx = 1 + 2t/b; e^{−t} ≤ M*(b)·(1 + 2t/b)^{−m/2}, M*(b) = e^{−(m−b)/2}(m/b)^{m/2}, holds for every t > −b/2
    (e^{−t}(1 + 2t/b)^{m/2} increases up to t = (m − b)/2, where it equals M*), i.e. whenever Ω is positive definite —
    which its Cholesky factorisation Ω = LLᵀ (LAPACK ``dpotrf``) checks. A proposal is z = L^{−T}g, g ~ N(0, I)
    (so z ~ N(0, Ω⁻¹) and x = z/‖z‖ ~ ACG(Ω)), with xᵀΩx = ‖g‖²/‖z‖², accepted with probability
    e^{−t}(xᵀΩx)^{m/2}/M*. The draw is therefore exact for *any* λ̂ and b > 0 that make Ω positive definite; they
    only set the acceptance rate, and are chosen as follows. At stationarity λ_max(S) − S₀₀ ≈ (m − 1)/2 (each
    eigen-direction of the block holds ≈ 1/(2·gap) of the column's mass), so Ω at S₀₀ + (m − 1)/2 + 4√((m − 1)/2) + b
    is positive definite; a few Lanczos steps on Ω⁻¹ (whose top eigenvalue is well separated) then give λ_max(S) to
    a small fraction of b, and Ω is refactorised at λ̂ = that estimate + b/4. b approximates Kent's optimum
    Σᵢ 1/(b + 2ψᵢ) = 1 with ψ = λ̂ − (the m − 1 smallest eigenvalues of M), which the block's spectrum interlaces.
    If a factorisation fails, λ̂ comes from the block's exact eigenvalues (``eigvalsh``; rare, mostly in the
    first scans from a random start). Cost: two Cholesky factorisations (m³/3 flops each) and a few triangular
    solves, where Hoff's kernel needs the block's eigendecomposition. Adult (m = 104): 7–13 proposals per draw.
    """

    def __init__(self, M: np.ndarray, m: int) -> None:
        from scipy.linalg import lapack  # on first use: importing the samplers stays light

        self._potrf, self._trtrs, self._geqrf, self._orgqr = lapack.dpotrf, lapack.dtrtrs, lapack.dgeqrf, lapack.dorgqr
        self._syevd = lapack.dsyevd
        self.m = m
        mu = np.linalg.eigvalsh(M)
        self._low = mu[: m - 1].copy()  # the m − 1 smallest eigenvalues of M (proxy for the block's lower spectrum)
        self._diag = np.arange(m) * (m + 1)
        self._sig = math.sqrt(0.5 * (m - 1))
        self._b = 1.0
        self.proposals = 0
        self.draws = 0

    def _kent_b(self, lam_hat: float, b: float) -> float:
        """Kent's b: the root in [1, m] of f(b) = 1/b + Σ 1/(b + 2ψᵢ) − 1, ψ = max(λ̂ − low, 0), by Newton from the
        last b (f is convex and decreasing with f(1) ≥ 0, so after at most one step the iterates approach the root
        monotonically from below; warm-started, two or three steps). b only sets the acceptance rate — but a b far
        from the root makes it collapse on a flat spectrum, so it is solved, not guessed."""
        two_psi = 2.0 * np.maximum(lam_hat - self._low, 0.0)
        hi = float(self.m)
        for _ in range(100):
            r1 = 1.0 / (b + two_psi)
            f = 1.0 / b + float(r1.sum()) - 1.0
            if abs(f) <= 1e-9 or (f > 0.0 and b >= hi):
                break
            b = min(max(b + f / (1.0 / (b * b) + float(r1 @ r1)), 1.0), hi)
        return b

    def _factor(self, S: np.ndarray, lam_hat: float, b: float) -> np.ndarray | None:
        """Lower Cholesky factor of Ω = I + 2(λ̂I − S)/b (Fortran order, upper part not cleaned), None if Ω ≱ 0."""
        Om = (-2.0 / b) * S  # S is symmetric (and C-contiguous): Om.T is the Fortran-ordered Ω, factorised in place
        Om.flat[self._diag] += 1.0 + 2.0 * lam_hat / b
        L, info = self._potrf(Om.T, lower=1, clean=0, overwrite_a=1)
        return L if info == 0 else None

    def _top(self, S: np.ndarray) -> float:
        """Largest Ritz value of S on the Krylov space span(e₀, Se₀, …, S^p e₀) (Rayleigh–Ritz; a lower bound on
        λ_max(S)). e₀ is the current column, which at stationarity lies close to the block's top eigenvector."""
        m, p = self.m, min(_KRYLOV_STEPS, self.m - 1)
        K = np.zeros((m, p + 1), order="F")
        K[0, 0] = 1.0
        w = S[:, 0]
        for j in range(p):
            nrm = math.sqrt(float(w @ w))
            if not nrm > 0.0:  # an invariant subspace (e.g. S = 0): the columns left at 0 do no harm to the QR
                break
            K[:, j + 1] = w * (1.0 / nrm)
            if j + 1 < p:
                w = S @ K[:, j + 1]
        qr, tau, _, _ = self._geqrf(K, overwrite_a=1)
        Qk = self._orgqr(qr, tau, overwrite_a=1)[0]
        w, info = self._syevd(Qk.T @ (S @ Qk), compute_v=0)[0::2]
        return float(w[-1]) if info == 0 else float(np.linalg.eigvalsh(Qk.T @ (S @ Qk))[-1])

    def _accept(self, log_u: np.ndarray, log_r: np.ndarray) -> np.ndarray:
        """Accepted proposals (a hook for the tests' mutants, as in :class:`~.bingham.KentBinghamSampler`)."""
        return log_u < log_r

    def draw(self, S: np.ndarray, rng: np.random.Generator, deadline: Deadline | None = None,
             what: str = "the Gibbs sampler") -> np.ndarray:
        """One exact draw x (unit vector in the block's coordinates) from ∝ exp(xᵀSx); ``deadline`` is checked
        before every batch of proposals after the first."""
        m = self.m
        S = np.ascontiguousarray(S)  # a view into B: one copy, then contiguous GEMVs
        b = self._b
        lam_hat = self._top(S) + 0.25 * b
        b = self._kent_b(lam_hat, b)
        L = self._factor(S, lam_hat, b)
        if L is None:  # far from stationarity (e.g. the first scans from a random start): the exact top eigenvalue
            lam_hat = float(np.linalg.eigvalsh(S)[-1])
            b = self._kent_b(lam_hat, 1.0)
            lam_hat += 0.25 * b
            L = self._factor(S, lam_hat, b)
            if L is None:  # pragma: no cover - only for a non-finite block
                raise SamplerError("Gibbs sampler: numerical failure (a column's envelope could not be factorised); "
                                   "lower epsilon or n.")
        self._b = b
        log_m = -0.5 * (m - b) + 0.5 * m * math.log(m / b)
        half_m, half_b = 0.5 * m, 0.5 * b
        slack = 1e-7 + 1e-12 * m
        batch, used = _ACG_BATCH, 0
        trtrs, normal, random = self._trtrs, rng.standard_normal, rng.random
        while used < ACG_MAX_PROPOSALS:
            g = normal((m, batch))
            Z = trtrs(L, g, lower=1, trans=1)[0]  # z = L^{−T} g ~ N(0, Ω⁻¹)
            zz = np.einsum("ij,ij->j", Z, Z)
            q = np.einsum("ij,ij->j", g, g) / zz  # xᵀΩx = gᵀg / zᵀz for x = z/‖z‖
            log_r = -half_b * (q - 1.0) + half_m * np.log(q) - log_m  # t = (b/2)(xᵀΩx − 1)
            if not np.max(log_r) <= slack:  # pragma: no cover - the bound holds for every x when Ω > 0
                raise SamplerError("Gibbs sampler: numerical failure (a column's envelope was violated); lower "
                                   "epsilon or n.")
            ok = np.flatnonzero(self._accept(np.log(random(batch)), log_r))
            if ok.size:
                i = int(ok[0])
                self.proposals += used + i + 1
                self.draws += 1
                return Z[:, i] / math.sqrt(float(zz[i]))
            used += batch
            batch = min(4 * batch, 4096)
            if deadline is not None:
                deadline.check(what)
        raise SamplerError(f"Gibbs sampler: no acceptance after {ACG_MAX_PROPOSALS:,} proposals for one column "
                           f"(block size {m}); lower epsilon.")


def _gibbs_chain(M: np.ndarray, V: np.ndarray, scans: int, rng: np.random.Generator, deadline: Deadline | None,
                 record_every: int, keep_every: int, what: str, top: np.ndarray,
                 kernel: str = "exact") -> tuple[np.ndarray, list[float], list[np.ndarray], list[list[float]]]:
    """Run one chain for ``scans`` scans from V; returns the final state, its F trace, the kept states and the
    sign-invariant statistics :data:`STAT_NAMES` (principal angles to span(``top``)) per record.

    When a column is updated twice in a row (the last column of one scan's random order is the first of the next,
    and every update when k = 1), its block is the previous block rotated by the reflections W applied since, so its
    eigendecomposition is reused: l is unchanged, the eigen-coordinates of the column are the previous sweep's
    output y, and E_new·y' = Wᵀ·E_old·y'.
    """
    d, k = V.shape
    m = d - k + 1
    running = np.zeros((d, k))
    trace: list[float] = []
    stats: list[list[float]] = []
    kept: list[np.ndarray] = []
    lo = k - 1  # the block S = [current column, V⊥] occupies positions lo..d−1
    order = list(range(k))  # order[p] = column of V stored at position p (p < k)
    pos = list(range(k))
    exact = kernel == "exact"
    sampler = _ExactColumn(M, m) if exact else None
    dense = m < _TRIDIAGONAL_FROM
    eig = None if (dense or exact) else _BlockEigen(m)
    diag = np.arange(m) * (m + 1)
    Q = B = Z = None
    l_list: list[float] = []
    y: list[float] = []
    last = -1  # column whose block was decomposed last (−1: none valid)
    since: list[tuple[np.ndarray, float, float]] = []  # reflections (v, c, s) applied to that block since
    for t in range(1, scans + 1):
        if deadline is not None:
            deadline.check(what)
        if (t - 1) % _REFRESH_EVERY == 0:
            Q, B = _rebuild(M, V)
            order = list(range(k))
            pos = list(range(k))
            last = -1
        for r in rng.permutation(k).tolist():
            p = pos[r]
            if p != lo:  # move column r to position lo (swap columns of Q, rows+columns of B; basic slicing)
                tmp = Q[:, p].copy()
                Q[:, p] = Q[:, lo]
                Q[:, lo] = tmp
                tmp = B[p].copy()
                B[p] = B[lo]
                B[lo] = tmp
                tmp = B[:, p].copy()
                B[:, p] = B[:, lo]
                B[:, lo] = tmp
                c_lo = order[lo]
                order[p], order[lo] = c_lo, r
                pos[c_lo], pos[r] = p, lo
            if exact:  # an exact draw from the column's conditional (no eigendecomposition)
                _rotate_block(Q, B, lo, sampler.draw(B[lo:, lo:], rng, deadline, what))
                continue
            if dense:
                l, E = np.linalg.eigh(B[lo:, lo:])
                y = _ry_bing_sweep(E[0].tolist(), (l - l[0]).tolist(), rng)
                _rotate_block_dense(Q, B, lo, l, E, np.array(y), diag)
                continue
            if r != last:
                l, Z = eig.decompose(B[lo:, lo:])
                l_list = (l - l[0]).tolist()
                y = Z[0].tolist()
                since = []
                last = r
            y = _ry_bing_sweep(y, l_list, rng)
            x = eig.to_block(Z, np.array(y))
            for v, c, s in since:  # x ← Wᵀx = D·H·x for every rotation of the block since its decomposition
                x -= (c * float(v @ x)) * v
                x[0] *= -s
            since.append(_rotate_block(Q, B, lo, x))
        V = np.empty((d, k))
        V[:, order] = Q[:, :k]
        running += V
        if t % record_every == 0 or t == scans:
            trace.append(f_statistic(running, t))
            cos2 = np.linalg.svd(top.T @ V, compute_uv=False) ** 2  # cos² of the principal angles to span(top)
            stats.append([float(np.trace(B[:k, :k])), float(cos2.sum()), float(cos2[-1])])  # B[:k,:k] ~ VᵀMV
        if keep_every and t % keep_every == 0:
            kept.append(V)
    return V, trace, kept, stats


def bmf_gibbs(
    M: np.ndarray,
    k: int,
    scans: int,
    rng: np.random.Generator,
    *,
    chains: int = 1,
    V0: np.ndarray | None = None,
    record_every: int = 1,
    keep_every: int = 0,
    deadline: Deadline | None = None,
    kernel: str = "exact",
) -> GibbsResult:
    """Run ``chains`` independent Gibbs chains for BMF_k(M) ∝ etr(VᵀMV), ``scans`` scans each.

    Chain 0 starts from ``V0`` (default: Haar-uniform), the others from independent uniform frames.
    The F_k trace is recorded every ``record_every`` scans and at the last scan; with ``keep_every > 0`` the
    states after every ``keep_every``-th scan are kept in ``result.samples`` (chains, n_kept, d, k) for tests.
    """
    M = np.asarray(M, dtype=float)
    if M.ndim != 2 or M.shape[0] != M.shape[1] or not np.all(np.isfinite(M)):
        raise InvalidParameterError("M must be a finite square matrix.")
    d = M.shape[0]
    if not (1 <= k < d):
        raise InvalidParameterError(f"the Gibbs sampler needs 1 <= k < d; got k={k}, d={d}.")
    if kernel not in KERNELS:
        raise InvalidParameterError(f"kernel must be one of {', '.join(KERNELS)}; got {kernel!r}.")
    if scans < 1 or chains < 1 or record_every < 1 or keep_every < 0:
        raise InvalidParameterError("scans, chains and record_every must be >= 1 and keep_every >= 0.")
    M = 0.5 * (M + M.T)
    if V0 is not None:
        V0 = np.array(V0, dtype=float)
        if V0.shape != (d, k) or not np.allclose(V0.T @ V0, np.eye(k), atol=1e-8):
            raise InvalidParameterError(f"V0 must be a {d}×{k} matrix with orthonormal columns.")
    start = time.perf_counter()
    with blas_threads_for(d):  # d×d: all cores only when d is large; reference directions of the diagnostic
        top = np.linalg.eigh(M)[1][:, ::-1][:, :k].copy()
    states, traces, kept, stats = [], [], [], []
    with single_threaded_blas():
        for c in range(chains):
            V = V0 if c == 0 and V0 is not None else uniform_stiefel(d, k, rng)
            Vc, tr, kp, st = _gibbs_chain(M, V, scans, rng, deadline, record_every, keep_every,
                                          f"the Gibbs sampler (chain {c + 1} of {chains})", top, kernel)
            states.append(Vc)
            traces.append(tr)
            kept.append(kp)
            stats.append(st)
    t_scans = [t for t in range(1, scans + 1) if t % record_every == 0 or t == scans]
    samples = np.array(kept) if keep_every else None
    return GibbsResult(states=states, f_traces=np.array(traces), trace_scans=np.array(t_scans), scans=scans,
                       seconds=time.perf_counter() - start, samples=samples, stat_traces=np.array(stats),
                       info={"kernel": kernel})


__all__ = [
    "CONVERGENCE_THRESHOLD",
    "KERNELS",
    "SAMPLER_BLAS_THREADS",
    "SMALL_DENSE_BELOW",
    "STAT_NAMES",
    "GibbsResult",
    "blas_threads_for",
    "bmf_gibbs",
    "f_statistic",
    "rtheta_bing",
    "ry_bing",
    "single_threaded_blas",
]
