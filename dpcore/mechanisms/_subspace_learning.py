"""Shared primitives of Singhal & Steinke, "Privately Learning Subspaces" (NeurIPS 2021, arXiv 2106.00001).

Spec §3.12–3.13 and Appendix A. The seed text lost its formulas; the constants below are the privacy-safe
reconstructions marked [R] in the spec, checked here against the seed's prose:

* truncated-Laplace half-width (Geng, Ding, Guo & Kumar 2020; seed Lemma 2.14)
  ``A_T = (Δ/ε)·ln(1 + (e^ε − 1)/(2δ))`` — Appendix A: A_T(Δ=2, ε=1, δ=1e−6) = 27.3274;
* GAP-MAX (Bun, Dwork, Rothblum & Steinke 2018; seed Lemma 2.16 and the proof of Lemma 3.3): the gap
  ``g(X, S) = max(0, q(X, S) − max_{S'≠S} q(X, S') − 1)`` is positive for at most one S (the top one), has
  sensitivity 2, and the top candidate is released iff ``g + TLap(2/ε, A_T) > A_T``;
* stability-based histogram (Bun, Nissim & Stemmer 2016; Vadhan 2017; seed Lemma 2.15): every non-empty cell gets
  ``count + Lap(2/ε)`` and is released iff that is ≥ ``τ_h = 1 + 2·ln(2/δ)/ε`` (replace-one: two counts change by
  1; a cell present in only one of two neighbours has count 1 and crosses τ_h with probability exactly δ/4) —
  Appendix A: τ_h(ε=1, δ=1e−6) = 30.0173;
* the exact-case score ``q(X, S) = #{x_i ∈ S} − max_{T ⊂ S, dim T = k−1} #{x_i ∈ T}`` (seed §1.4, §3), computed
  exactly over spans of data points with Gram-matrix deflation (no ``d`` factor after ``G = XXᵀ``);
* Algorithm 2 (approximate case, subsample-and-aggregate): data-independent partition into t blocks, top-k PCA
  per block, projections of q public Gaussian reference points, a random-offset grid of side ℓ, the stability
  histogram, a point of the heaviest cell, and the top-k left singular vectors of that point reshaped to d×q;
* Algorithm 3 (boosting): r disjoint runs, return one that is within 2α of at least 0.6·r runs, else ⊥.

Membership is tested with a fixed, data-independent relative tolerance: ``x ∈ S`` iff ``‖x − Π_S x‖ ≤ tol·‖x‖``
(monotone under inclusion, so the sensitivity argument of the score carries over). The privacy proofs are for
exact arithmetic; floating point and the tolerance are a documented limitation (as for all float samplers):
adversarial configurations with points within ``tol`` of degenerate positions are not covered.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from math import comb

import numpy as np

from ..core._validation import check_delta, check_epsilon, check_int, check_positive
from ..core.linalg import orthonormalize
from ..core.noise import truncated_laplace
from ..core.timing import NO_DEADLINE, Deadline
from ..exceptions import InvalidParameterError

#: Sensitivity of the GAP-MAX gap g (seed Lemma 3.3 proof: two sensitivity-1 terms, triangle inequality).
GAP_SENSITIVITY = 2.0
#: L1 sensitivity of a histogram under replace-one (one point moves: two counts change by 1).
HISTOGRAM_SENSITIVITY = 2.0
#: Default relative membership tolerance ‖x − Π_S x‖ ≤ tol·‖x‖ (data-independent). The membership test's
#: rounding error is ≲ 1e−15/tol ≈ 1e−11, far below tol² = 1e−8.
DEFAULT_TOLERANCE = 1e-4
#: Default cap on the exact-case work n·C(n, k) (3e8 ≈ n = 200, k = 3: a few seconds).
DEFAULT_MAX_WORK = 3e8


# ==================================================================================================
# Calibration (Appendix A)
# ==================================================================================================

def truncated_laplace_half_width(epsilon: float, delta: float, sensitivity: float = GAP_SENSITIVITY) -> float:
    """A_T = (Δ/ε)·ln(1 + (e^ε − 1)/(2δ)): TLap(Δ/ε) on [−A_T, A_T] added to a Δ-sensitive value is (ε, δ)-DP."""
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta, required=True)
    sensitivity = check_positive(sensitivity, "sensitivity")
    return sensitivity / epsilon * math.log1p(math.expm1(epsilon) / (2.0 * delta))


def histogram_threshold(epsilon: float, delta: float) -> float:
    """τ_h = 1 + 2·ln(2/δ)/ε: release threshold of the replace-one stability histogram with Lap(2/ε) noise."""
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta, required=True)
    return 1.0 + HISTOGRAM_SENSITIVITY * math.log(2.0 / delta) / epsilon


def default_num_blocks(epsilon: float, delta: float, beta: float = 0.05) -> int:
    """t = ⌈2τ_h + (4/ε)·ln(1/(2β))⌉: a cell holding all t block points survives the histogram w.p. ≥ 1 − β.

    Spec §3.13 [R]; 70 at ε = 1, δ = 1e−6. The paper has t = Θ(log(1/δ)/ε) with an unrecoverable constant.
    """
    tau = histogram_threshold(epsilon, delta)
    return math.ceil(2.0 * tau + 2.0 * HISTOGRAM_SENSITIVITY / epsilon * math.log(1.0 / (2.0 * beta)))


def default_cell_side(gamma_pub: float, d: int, k: int, m: int, t: int, q: int) -> float:
    """Heuristic cell side ℓ from a *public* gap guess γ_pub (spec §3.13 [R]; data-independent).

    s = γ_pub·√(d/m) (subspace error of one block's PCA), w = 2s·√(2k/d)·√(2 ln t) (per-coordinate spread of
    the t projections of one reference point), ℓ = 10·q·d·w (so a random grid cuts the cluster in one of the
    q·d coordinates with probability ≈ 1/10). The output error grows like ℓ·√(d/q).
    """
    gamma_pub = check_positive(gamma_pub, "gamma_pub")
    s = gamma_pub * math.sqrt(d / m)
    w = 2.0 * s * math.sqrt(2.0 * k / d) * math.sqrt(2.0 * math.log(max(t, 2)))
    return 10.0 * q * d * w


#: Relative grid error ρ (:func:`grid_relative_error`) above which the public settings of Algorithm 2 draw a
#: warning. Measured on exact planted 3-dim subspaces (n = 5,000, d = 1,000, ε = 1, δ = 1e−6, 3 seeds): an ok output
#: is off by sin θ ≈ 1.2ρ (ρ = 0.02 → 0.019–0.026, 0.05 → 0.047–0.065, 0.1 → 0.10–0.13, 0.2 → 0.18–0.25).
COARSE_GRID_LIMIT = 0.1
#: At d = 50 (n = 20,000, γ = 1e−6) the spread is wider: sin θ ≈ 1–4ρ (σ_k of the q = 2k projected reference points
#: varies).
#: ρ at or above which Algorithm 2 returns ⊥ without looking at the data (sin θ ≈ 1–4ρ ≥ 0.3–1: an ok output could
#: be close to a random subspace, so it is not offered as an answer).
HOPELESS_GRID_LIMIT = 0.25
#: The relative grid error the automatic cell side aims at (sin θ ≈ 0.06 on exact data).
TARGET_GRID_ERROR = 0.05


def cell_side_for_error(rho: float, d: int, k: int) -> float:
    """The cell side ℓ with relative grid error ρ (inverse of :func:`grid_relative_error`): ℓ = ρ·√(12k/d)."""
    return float(rho) * math.sqrt(12.0 * k / d)


def tolerated_gap(ell: float, d: int, k: int, m: int, t: int, q: int) -> float:
    """The largest gap γ for which the block projections still fit one cell of side ℓ (inverse of
    :func:`default_cell_side`, which is linear in γ): the regime a given grid covers."""
    return float(ell) / default_cell_side(1.0, d, k, m, t, q)


def hopeless_grid_reason(ell: float, d: int, k: int) -> str | None:
    """A public ⊥ reason when the grid is so coarse that an ok output would be near-random (None otherwise)."""
    rho = grid_relative_error(ell, d, k)
    if rho < HOPELESS_GRID_LIMIT:
        return None
    return (f"the histogram grid is too coarse for an informative answer: its cell side ℓ = {ell:.3g} is "
            f"ρ = ℓ·√(d/(12k)) = {rho:.2g} of the scale of the projected reference points (an ok output would be off "
            f"by sin θ ≈ 1.2ρ, i.e. close to a random subspace), so no cell was looked at. Leave gamma_pub and ell at "
            f"0 (automatic: ρ = {TARGET_GRID_ERROR:g}), or give a smaller public gap guess gamma_pub or ell; data "
            "farther from a k-dimensional subspace than that grid tolerates suit a noise-adding mechanism such as "
            "Analyze Gauss better.")


def grid_relative_error(ell: float, d: int, k: int) -> float:
    """ρ = ℓ·√(d/(12k)): the expected relative error of the point Algorithm 2 releases, from public values only.

    The projections Π_j P of q Gaussian reference points onto a k-dim subspace have Frobenius norm ≈ √(k·q),
    spread over the d·q coordinates (each ≈ √(k/d)). Releasing a point of a grid cell of side ℓ moves every
    coordinate by up to ℓ/2 (sd ℓ/√12), an error of ≈ ℓ·√(d·q/12) in norm, i.e. ρ relative to √(k·q).
    """
    return float(ell) * math.sqrt(d / (12.0 * k))


def coarse_grid_warning(ell: float, d: int, k: int) -> str | None:
    """A public note when the grid is too coarse for an ok output to be informative (None otherwise)."""
    rho = grid_relative_error(ell, d, k)
    if rho < COARSE_GRID_LIMIT:
        return None
    effect = ("an ok output is about as good as a random subspace" if rho >= 1
              else "even an ok output is off by sin θ ≳ ρ")
    return (f"coarse grid: the cell side ℓ = {ell:.3g} is ρ = ℓ·√(d/(12k)) = {rho:.2g} of the scale of the projected "
            f"reference points, so {effect}; a smaller gamma_pub (the public gap guess) or ell gives a finer grid, "
            "at the risk of ⊥ when the data are not that close to a k-dimensional subspace")


# ==================================================================================================
# Noise steps
# ==================================================================================================

def gap_max_step(gap: float, epsilon: float, delta: float, rng: np.random.Generator) -> tuple[bool, float]:
    """The GAP-MAX release test: True iff ``gap + Z > A_T`` with Z ~ TLap(2/ε) on [−A_T, A_T].

    Returns (released, noisy gap). With ``gap ≤ 0`` it never releases (noise is still drawn, so the number of
    random draws does not depend on the data).
    """
    half_width = truncated_laplace_half_width(epsilon, delta, GAP_SENSITIVITY)
    z = float(truncated_laplace(GAP_SENSITIVITY / epsilon, half_width, rng))
    noisy = float(gap) + z
    return bool(gap > 0 and noisy > half_width), noisy


def gap_max_success_probability(gap: float, epsilon: float, delta: float) -> float:
    """P(gap + Z > A_T) for Z ~ TLap(2/ε, A_T): the exact-case success probability for a given gap."""
    A = truncated_laplace_half_width(epsilon, delta, GAP_SENSITIVITY)
    lam = GAP_SENSITIVITY / epsilon
    if gap <= 0:
        return 0.0
    if gap >= 2 * A:
        return 1.0
    c = A - gap  # need Z > c, c ∈ (−A, A)
    mass = -math.expm1(-A / lam)
    tail = 0.5 * (math.exp(-abs(c) / lam) - math.exp(-A / lam)) / mass  # P(|Z| > |c|, sign fixed)
    return tail if c >= 0 else 1.0 - tail


def stability_histogram(counts: np.ndarray, epsilon: float, delta: float,
                        rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Stability-based DP histogram over the *non-empty* cells (replace-one).

    ``counts`` are the positive counts of the non-empty cells. Returns (noisy counts, released mask): a cell is
    released iff ``count + Lap(2/ε) ≥ τ_h``. Empty cells are never released (that is what makes the number of
    cells, i.e. the domain, irrelevant).
    """
    counts = np.asarray(counts, dtype=float)
    if counts.size and counts.min() < 1:
        raise InvalidParameterError("stability_histogram takes the counts of non-empty cells only (all ≥ 1).")
    tau = histogram_threshold(epsilon, delta)
    noisy = counts + rng.laplace(0.0, HISTOGRAM_SENSITIVITY / epsilon, size=counts.shape)
    return noisy, noisy >= tau


# ==================================================================================================
# Exact case: spans, membership and the score q(X, S)
# ==================================================================================================

def membership_mask(X: np.ndarray, basis: np.ndarray, tol: float = DEFAULT_TOLERANCE) -> np.ndarray:
    """Rows x with ‖x − Π_S x‖ ≤ tol·‖x‖ for S = span(basis) (basis d×j, any full column rank; j = 0 → {0})."""
    X = np.asarray(X, dtype=float)
    if basis.size == 0 or basis.shape[1] == 0:
        resid = X
    else:
        Q, _ = np.linalg.qr(basis)
        resid = X - (X @ Q) @ Q.T
    return np.linalg.norm(resid, axis=1) <= tol * np.linalg.norm(X, axis=1)


def _unit_rows(X: np.ndarray, tol: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rows scaled to unit length — zero rows stay 0 —, their Gram matrix, squared thresholds tol²·[x ≠ 0]).

    Membership in a subspace through the origin is scale-invariant, so working with unit rows loses nothing.
    """
    X = np.asarray(X, dtype=float)
    norms = np.linalg.norm(X, axis=1)
    nonzero = norms > 0
    U = np.zeros_like(X)
    U[nonzero] = X[nonzero] / norms[nonzero, None]
    return U, U @ U.T, tol * tol * nonzero.astype(float)


def _deflate(R: np.ndarray, G: np.ndarray, j: int) -> tuple[np.ndarray, np.ndarray]:
    """Project every residual row off residual row j: (R', G' = R'R'ᵀ).

    The unit direction û = r_j/‖r_j‖ is computed in R^d (accurate even for small r_j), and G' = G − ccᵀ with
    c = Rû, so G' only carries absolute rounding errors (~1e−16 per level) — dividing by a tiny Gram diagonal,
    which would lose all relative accuracy, is avoided.
    """
    u = R[j] / np.linalg.norm(R[j])
    c = R @ u
    return R - np.outer(c, u), G - np.outer(c, c)


def _last_level(R: np.ndarray, G: np.ndarray, thr: np.ndarray, start: int,
                min_members: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Spans ``current ⊕ x_l`` for every row l ≥ start independent of the current span.

    Returns (the l whose span holds ≥ ``min_members`` rows, their member masks as an n×|l| array, the largest
    member count over all l, 0 if none).
    """
    diag = np.einsum("ij,ij->i", R, R)  # ‖r_m‖², accurate (computed in R^d)
    cols = np.arange(start, R.shape[0])
    cols = cols[diag[cols] > thr[cols]]
    if cols.size == 0:
        return cols, np.zeros((R.shape[0], 0), dtype=bool), 0
    # x_m ∈ span ⊕ x_l  ⇔  ‖r_m‖² − (r_m·û_l)² ≤ tol²‖x_m‖²,  r_m·û_l = G[m, l]/‖r_l‖ (‖r_l‖ > tol)
    proj = G[:, cols] / np.sqrt(diag[cols])[None, :]
    M = (diag[:, None] - proj**2) <= thr[:, None]
    counts = M.sum(axis=0)
    keep = counts >= min_members
    return cols[keep], M[:, keep], int(counts.max())


def _enumerate_spans(R: np.ndarray, G: np.ndarray, thr: np.ndarray, k: int, deadline: Deadline,
                     min_members: int = 0, prefix: tuple[int, ...] = (), start: int = 0
                     ) -> Iterator[tuple[tuple[int, ...], np.ndarray, np.ndarray, int]]:
    """Spans of k tolerance-independent rows, by increasing index tuples (prefix, l), grouped by prefix.

    Yields (prefix of k−1 indices, last indices l with ≥ ``min_members`` members, member masks n×|l|, the
    largest member count of any span with this prefix). Every span of k independent rows arises at least once.
    """
    if k == 1:
        cols, masks, best = _last_level(R, G, thr, start, min_members)
        yield prefix, cols, masks, best
        return
    diag = np.einsum("ij,ij->i", R, R)
    for j in range(start, R.shape[0] - k + 1):
        if diag[j] <= thr[j]:
            continue  # x_j already in the span: not a new basis vector
        deadline.check("the exact-case subspace search")
        R2, G2 = _deflate(R, G, j)
        yield from _enumerate_spans(R2, G2, thr, k - 1, deadline, min_members, (*prefix, j), j + 1)


#: Largest automatic subsample of the exact case (its n×n Gram matrix: 2,000 rows = 32 MB).
EXACT_ROW_CAP = 2000


def exact_subsample_size(n: int, k: int, max_work: float, cap: int = EXACT_ROW_CAP) -> int:
    """The largest m ≤ min(n, cap) with m·C(m, k) ≤ max_work (public: n, k, max_work); at least k."""
    m = min(int(n), int(cap))
    if exact_work(m, k) <= max_work:
        return m
    lo, hi = k, m  # exact_work is increasing in m: bisect for the last m within the limit
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if exact_work(mid, k) <= max_work else (lo, mid - 1)
    return lo


def exact_work(n: int, k: int) -> int:
    """The work measure n·C(n, k) the exact case is limited by."""
    return n * comb(n, k)


def check_exact_work(n: int, k: int, max_work: float) -> int:
    """Raise a clear :class:`InvalidParameterError` when n·C(n, k) exceeds ``max_work``."""
    work = exact_work(n, k)
    if work > max_work:
        n_ok = n
        while n_ok > k and exact_work(n_ok, k) > max_work:
            n_ok -= max(1, n_ok // 50)
        raise InvalidParameterError(
            f"the exact-case search scores every span of k = {k} data points: work n·C(n, k) = {work:.3g} exceeds "
            f"the limit max_work = {max_work:.3g}. Use a subsample of at most n ≈ {n_ok} rows, a smaller k, or raise "
            "max_work (runtime grows like n·C(n, k))."
        )
    return work


def span_member_sets(X: np.ndarray, k: int, *, tol: float = DEFAULT_TOLERANCE, min_members: int = 0,
                     deadline: Deadline = NO_DEADLINE) -> dict[bytes, tuple[np.ndarray, tuple[int, ...]]]:
    """Distinct spans of k independent rows holding ≥ ``min_members`` rows: key → (member mask, a basis tuple).

    Spans are deduplicated by their member sets (a set of rank k determines its span).
    """
    U, G, thr = _unit_rows(X, tol)
    out: dict[bytes, tuple[np.ndarray, tuple[int, ...]]] = {}
    for prefix, cols, masks, _ in _enumerate_spans(U, G, thr, k, deadline, max(int(min_members), 1)):
        for idx, l in enumerate(cols):
            mask = masks[:, idx]
            key = np.packbits(mask).tobytes()
            if key not in out:
                out[key] = (mask.copy(), (*prefix, int(l)))
    return out


def _max_subspace_count(U: np.ndarray, G: np.ndarray, thr: np.ndarray, j: int, deadline: Deadline) -> int:
    """max over j-dim spans T of the rows of #rows in T (j = 0: T = {0}, the zero rows); 0 if rank < j."""
    n = U.shape[0]
    if j == 0:
        return int(np.sum(thr == 0))
    best = 0
    for _, _, _, count in _enumerate_spans(U, G, thr, j, deadline, min_members=n + 1):
        best = max(best, count)
        if best == n:
            break
    return best


def score_of_members(X_members: np.ndarray, k: int, *, tol: float = DEFAULT_TOLERANCE,
                     deadline: Deadline = NO_DEADLINE) -> int:
    """q(X, S) given the rows of X inside S (S of dimension k spanned by them): #members − max_T #(members in T)."""
    U, G, thr = _unit_rows(X_members, tol)
    return int(X_members.shape[0]) - _max_subspace_count(U, G, thr, k - 1, deadline)


def subspace_score(X: np.ndarray, basis: np.ndarray, *, tol: float = DEFAULT_TOLERANCE,
                   deadline: Deadline = NO_DEADLINE) -> int:
    """q(X, S) for an arbitrary k-dim S = span(basis): #{x ∈ S} − max_{T⊂S, dim k−1} #{x ∈ T}.

    If the members of S span less than k dimensions the score is 0 (some (k−1)-dim T ⊂ S holds them all).
    """
    X = np.asarray(X, dtype=float)
    k = basis.shape[1]
    members = X[membership_mask(X, basis, tol)]
    if members.shape[0] == 0:
        return 0
    U, G, thr = _unit_rows(members, tol)
    if _max_subspace_count(U, G, thr, k, deadline) == 0:
        return 0  # the members have rank < k: some (k−1)-dim T ⊂ S holds them all
    return score_of_members(members, k, tol=tol, deadline=deadline)


@dataclass
class ExactSelection:
    """Result of the (deterministic) GAP-MAX selection step of the exact case, before noise."""

    top_mask: np.ndarray | None  # members of S₁ (None when ⊥ is on top)
    top_score: int  # q(S₁) (or q(⊥))
    second_score: int  # s₂ over all candidates ∪ {⊥}
    gap: int  # g(X, S₁) = max(0, q(S₁) − s₂ − 1)
    bottom_score: int
    n_heavy: int  # candidates that can beat ⊥ (≥ ℓ + k + 1 members)
    scores: list[int] = field(default_factory=list)


def exact_select(X: np.ndarray, k: int, ell: int, *, tol: float = DEFAULT_TOLERANCE,
                 deadline: Deadline = NO_DEADLINE, prune: bool = True) -> ExactSelection:
    """Score the spans of k data points and compute (S₁, s₂, g) with the default ⊥ scored q(⊥) = ℓ + 1.

    With ``prune`` only spans with ≥ ℓ + k + 1 members are scored: every other span has q ≤ #members − (k−1)
    ≤ ℓ + 1 = q(⊥), so it can neither beat ⊥ nor change s₂ ≥ q(⊥) — an exact reduction, not a heuristic.
    """
    X = np.asarray(X, dtype=float)
    if X.shape[1] > X.shape[0]:  # rotate into the row space (≤ n dims): an isometry, memberships unchanged
        _, _, Vt = np.linalg.svd(X, full_matrices=False)
        X = X @ Vt.T
    bottom = int(ell) + 1
    min_members = int(ell) + k + 1 if prune else 0
    spans = span_member_sets(X, k, tol=tol, min_members=min_members, deadline=deadline)
    masks, scores = [], []
    for mask, _ in spans.values():
        masks.append(mask)
        scores.append(score_of_members(X[mask], k, tol=tol, deadline=deadline))
    all_scores = [*scores, bottom]
    order = np.argsort(all_scores, kind="stable")[::-1]
    top_idx = int(order[0])
    top = all_scores[top_idx]
    second = all_scores[int(order[1])] if len(all_scores) > 1 else 0
    second = max(second, 0)  # subspaces that are not candidates score 0
    if top_idx == len(scores) or top <= bottom:  # ⊥ on top (or tied with it): g = 0 for every subspace
        return ExactSelection(None, top, max(second, bottom), 0, bottom, len(scores), scores)
    gap = max(0, top - second - 1)
    return ExactSelection(masks[top_idx], top, second, gap, bottom, len(scores), scores)


def basis_of_rows(rows: np.ndarray, k: int) -> np.ndarray:
    """d×k orthonormal basis of the top-k right singular vectors of ``rows`` (their span when rank k).

    NOT for release: the singular vectors record how the rows spread inside their span (data-dependent).
    """
    _, _, Vt = np.linalg.svd(np.asarray(rows, dtype=float), full_matrices=False)
    return Vt[:k].T.copy()


def random_basis_of_span(rows: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """A d×k orthonormal basis of S = span(rows) that depends only on S and fresh randomness.

    Returns orth(Π_S G) with G a fresh d×k standard Gaussian: Haar-uniform over the orthonormal bases of S, and,
    for a fixed G, a function of the projector Π_S alone (identical, up to rounding, for any rows spanning S).
    Used for releases: the member rows' own singular vectors would leak how the points spread inside S.
    """
    Q = basis_of_rows(rows, k)
    P = Q @ Q.T
    P = 0.5 * (P + P.T)
    return orthonormalize(P @ rng.standard_normal((P.shape[0], k)))


# ==================================================================================================
# Approximate case (Algorithm 2) and boosting (Algorithm 3)
# ==================================================================================================

@dataclass
class ApproxPlan:
    """Every data-independent choice of one Algorithm-2 run (drawn before the data is touched)."""

    perm: np.ndarray  # row order; block j = perm[j·m:(j+1)·m]
    reference: np.ndarray  # d×q public Gaussian reference points
    offset: float  # grid offset λ ∈ [0, 1) (in units of ℓ, along the cell diagonal)
    t: int
    m: int
    q: int
    ell: float

    def fingerprint(self) -> str:
        """Short hash of the plan (lets tests and users check it did not depend on the data)."""
        h = hashlib.blake2b(digest_size=8)
        for a in (self.perm.astype(np.int64), self.reference, np.array([self.offset, self.ell, self.t, self.m])):
            h.update(np.ascontiguousarray(a).tobytes())
        return h.hexdigest()


def draw_approx_plan(n: int, d: int, k: int, t: int, q: int, ell: float, rng: np.random.Generator) -> ApproxPlan:
    """Partition, reference points and grid offset: functions of (n, d, t, q, ℓ, rng) only."""
    t = check_int(t, "t (number of blocks)", 1)
    m = n // t
    if m < k:
        raise InvalidParameterError(
            f"Algorithm 2 splits the n = {n} rows into t = {t} blocks of m = ⌊n/t⌋ = {m} rows, but each block needs "
            f"at least k = {k} rows for its PCA (the analysis wants m ≫ k). Use n ≥ {t * max(k, 2 * k)} rows or a "
            "smaller t."
        )
    perm = rng.permutation(n)
    reference = rng.standard_normal((d, q))
    offset = float(rng.random())
    return ApproxPlan(perm=perm, reference=reference, offset=offset, t=t, m=m, q=q, ell=float(ell))


def block_projections(X: np.ndarray, k: int, plan: ApproxPlan, deadline: Deadline = NO_DEADLINE) -> np.ndarray:
    """Non-private step: z_j = vec(Π_j P) for each block j (t × d·q), Π_j = projector onto the block's top-k PCA."""
    X = np.asarray(X, dtype=float)
    d = X.shape[1]
    Z = np.empty((plan.t, d * plan.q))
    for j in range(plan.t):
        deadline.check("the per-block PCA of Algorithm 2")
        B = X[plan.perm[j * plan.m:(j + 1) * plan.m]]
        if plan.m < d:  # eigen-decompose the small m×m Gram matrix
            _, U = np.linalg.eigh(B @ B.T)
            U = U[:, ::-1][:, :k]
            V = B.T @ U
            norms = np.linalg.norm(V, axis=0)
            V = V / np.where(norms > 0, norms, 1.0)
        else:
            _, V = np.linalg.eigh(B.T @ B)
            V = V[:, ::-1][:, :k]
        V, _ = np.linalg.qr(V)
        Z[j] = (V @ (V.T @ plan.reference)).ravel()
    return Z


def grid_cells(Z: np.ndarray, ell: float, offset: float) -> np.ndarray:
    """Integer cell index ⌊(z − λℓ)/ℓ⌋ of each row (int64), with an overflow check."""
    scaled = (Z - offset * ell) / ell
    if not np.all(np.isfinite(scaled)) or np.abs(scaled).max(initial=0.0) > 2.0**52:
        raise InvalidParameterError(
            f"the histogram cell side ℓ = {ell:.3g} is too small for exact integer cell indices; raise ell "
            "(or gamma_pub)."
        )
    return np.floor(scaled).astype(np.int64)


@dataclass
class ApproxResult:
    """One Algorithm-2 run: a d×k basis, or a ⊥ reason; diagnostics are NOT private unless said so."""

    basis: np.ndarray | None
    reason: str | None
    diagnostics: dict


def dpase(X: np.ndarray, k: int, epsilon: float, delta: float, plan: ApproxPlan, rng: np.random.Generator, *,
          point: str = "centre", deadline: Deadline = NO_DEADLINE) -> ApproxResult:
    """Algorithm 2 (DP approximate subspace estimator) with a pre-drawn data-independent ``plan``."""
    X = np.asarray(X, dtype=float)
    d = X.shape[1]
    tau = histogram_threshold(epsilon, delta)
    Z = block_projections(X, k, plan, deadline)
    cells = grid_cells(Z, plan.ell, plan.offset)
    uniq, counts = np.unique(cells, axis=0, return_counts=True)
    noisy, released = stability_histogram(counts, epsilon, delta, rng)
    diag = {"t": plan.t, "m": plan.m, "q": plan.q, "ell": plan.ell, "tau_h": tau, "offset": plan.offset,
            "plan_fingerprint": plan.fingerprint(),
            "nonprivate_largest_cell_count": int(counts.max()), "nonprivate_nonempty_cells": int(counts.size)}
    if not released.any():
        diag["bottom_detail"] = (
            f"largest cell count {int(counts.max())} of t={plan.t} blocks, {counts.size} non-empty cells (exact)")
        return ApproxResult(None, (
            f"no histogram cell passed the threshold τ_h={tau:.1f}: the t={plan.t} block subspaces did not agree at "
            f"the grid scale ℓ={plan.ell:.3g}. Raise ell/gamma_pub, use more data per block, or check that the "
            "data lies close to a k-dimensional subspace."), diag)
    best = int(np.argmax(np.where(released, noisy, -np.inf)))
    diag["noisy_top_count"] = float(noisy[best])  # a released noisy count, but kept with the diagnostics
    if noisy[best] < plan.t / 2:
        return ApproxResult(None, (
            f"the heaviest released histogram cell's noisy count is below t/2 = {plan.t / 2:g} "
            f"(τ_h={tau:.1f}): fewer than half of the t={plan.t} block subspaces agree at the grid scale "
            f"ℓ={plan.ell:.3g}. Raise ell/gamma_pub or use more data per block."), diag)
    inside = rng.random(d * plan.q) if point == "random" else np.full(d * plan.q, 0.5)
    z_hat = (uniq[best] + inside + plan.offset) * plan.ell
    P_hat = z_hat.reshape(d, plan.q)
    U, _, _ = np.linalg.svd(P_hat, full_matrices=False)
    return ApproxResult(U[:, :k].copy(), None, diag)


def projector_distance(V1: np.ndarray, V2: np.ndarray) -> float:
    """‖V1V1ᵀ − V2V2ᵀ‖₂ = sin θ_max = ‖(I − V1V1ᵀ)V2‖₂ for orthonormal d×k bases (accurate for tiny angles)."""
    resid = V2 - V1 @ (V1.T @ V2)
    return float(min(1.0, np.linalg.norm(resid, 2)))


def boost_select(bases: list[np.ndarray | None], alpha: float, fraction: float = 0.6) -> tuple[int | None, list[int]]:
    """Algorithm 3's selection: index of a non-⊥ output within 2α of ≥ fraction·r outputs (itself included).

    Returns (chosen index or None, support count per run, −1 for ⊥). Post-processing of the r releases.
    """
    r = len(bases)
    support: list[int] = []
    for Vi in bases:
        if Vi is None:
            support.append(-1)
            continue
        support.append(sum(1 for Vj in bases if Vj is not None and projector_distance(Vi, Vj) <= 2 * alpha))
    best = max(range(r), key=lambda i: (support[i], -i)) if r else None
    if best is None or support[best] < fraction * r:
        return None, support
    return best, support
