"""Black-box privacy audits: an empirical lower bound on ε for any registered mechanism.

The recipe follows DP-Sniper (Bichsel et al., S&P 2021) and StatDP (Ding et al., CCS 2018); see
``docs/peers.md`` §5. For a pair of neighbouring datasets D, D′ and an event S on the output,

    ε ≥ ln((P[M(D) ∈ S] − δ) / P[M(D′) ∈ S])

for every (ε, δ)-DP mechanism. We run ``trials`` releases per side, choose the event (statistic, direction and
threshold) on one half of the samples, and estimate the two probabilities on the other half with Clopper–Pearson
intervals (lower bound of the numerator, upper bound of the denominator, union-bounded). Both orientations
(D vs D′ and D′ vs D) are tried and the confidence is split between them, so the reported bound holds with the
stated confidence. An audit only ever gives a *lower* bound: "consistent" does not mean "proven private".

Built-in events: the support event {Ĉ − C_other not PD} that breaks the Wishart mechanisms of Imtiaz–Sarwate and
Jiang et al. (spec §3.9–3.10), threshold events on uᵀĈu or on the canary's energy ‖V̂ᵀu‖² in the released
subspace, and a logistic-regression event in the style of DP-Sniper.

Because an ε audit only gives lower bounds, it can miss a broken sampler whose output law is *flatter* than the
target (OpenDP's "always accept" Bingham bug, opendp#2416). :func:`sampler_conformance` therefore tests the
Bingham sampler's output law itself against the exact law (Pearson chi-square on a 1-D statistic whose
distribution is computed by numerical integration).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import stats

from ._validation import (
    check_choice,
    check_delta,
    check_epsilon,
    check_fraction,
    check_int,
    check_positive,
    check_time_limit,
)
from .data.prepared import PreparedData
from .exceptions import DataError, InvalidParameterError, MechanismTimeout, SamplerError
from .mechanisms import get_mechanism
from .mechanisms.base import Mechanism
from .noise import RandomState, make_rng
from .timing import Deadline

__all__ = [
    "CONFORMANCE_ALPHA",
    "CONFORMANCE_CONCENTRATION",
    "CONFORMANCE_DRAWS",
    "CONFORMANCE_EIGENVALUES",
    "DEFAULT_TRIALS",
    "NEIGHBOUR_CONSTRUCTIONS",
    "STATISTICS",
    "AuditResult",
    "ConformanceResult",
    "NeighbourPair",
    "clopper_pearson",
    "conformance_target",
    "default_base_rows",
    "epsilon_lower_bound",
    "estimate_audit_seconds",
    "format_p_value",
    "make_neighbours",
    "projection_bin_probabilities",
    "run_audit",
    "sampler_conformance",
]

#: Releases per side run by default (≈ 2–4 s for the fast covariance mechanisms at d = 3).
DEFAULT_TRIALS = 10_000
#: Fewest completed releases per side for which a bound is reported after a time-out.
MIN_TRIALS = 20
DEFAULT_DELTA = 1e-5

NEIGHBOUR_CONSTRUCTIONS: dict[str, str] = {
    "zero_vs_unit": "The last row is 0 in D and a unit vector u = e₁ in D′; in the default data e₁ is the second "
                    "principal axis, just below the top one, so the extra row flips the top eigenvector.",
    "top_eigvec": "The last row is 0 in D and a unit row along the top eigenvector of the other rows in D′.",
    "smallest_eigvec": "The last row is 0 in D and a unit row along the smallest eigenvector of the other rows "
                       "in D′.",
}

STATISTICS: dict[str, str] = {
    "auto": "support event for Wishart-type mechanisms whose claim is invalid; uᵀĈu for other covariance "
            "outputs; the canary's energy in the released subspace for subspace outputs",
    "support": "is Ĉ − C_other positive definite? (smallest eigenvalue of the release minus the neighbour's exact C)",
    "quadratic": "uᵀĈu, the released covariance along the canary direction",
    "alignment": "‖V̂ᵀu‖², the canary's energy in the released subspace (|⟨v̂₁, u⟩|² for k = 1)",
    "classifier": "a logistic regression trained to tell the two sides apart (DP-Sniper style)",
}

SIDE_NAMES = ("D", "D′")

ProgressCallback = Callable[[int, int], None]


# ------------------------------------------------------------------------------------------------
# Clopper–Pearson intervals and the ε bound
# ------------------------------------------------------------------------------------------------

def clopper_pearson(k: int, n: int, alpha: float = 0.05) -> tuple[float, float]:
    """Exact two-sided (1 − α) Clopper–Pearson interval for a binomial proportion with k successes in n trials.

    Each one-sided bound alone holds with confidence 1 − α/2.
    """
    n = check_int(n, "n (number of trials)", 1)
    k = check_int(k, "k (number of successes)", 0, n)
    alpha = check_fraction(alpha, "alpha")
    lo = 0.0 if k == 0 else float(stats.beta.ppf(alpha / 2, k, n - k + 1))
    hi = 1.0 if k == n else float(stats.beta.ppf(1 - alpha / 2, k + 1, n - k))
    return lo, hi


def _cp_lower(k: np.ndarray, n: np.ndarray, a: float) -> np.ndarray:
    """Vectorised one-sided lower Clopper–Pearson bound at level 1 − a."""
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    with np.errstate(invalid="ignore"):
        lo = stats.beta.ppf(a, np.maximum(k, 1), n - k + 1)
    return np.where(k <= 0, 0.0, lo)


def _cp_upper(k: np.ndarray, n: np.ndarray, a: float) -> np.ndarray:
    """Vectorised one-sided upper Clopper–Pearson bound at level 1 − a."""
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    with np.errstate(invalid="ignore"):
        hi = stats.beta.ppf(1 - a, k + 1, np.maximum(n - k, 1))
    return np.where(k >= n, 1.0, hi)


def _bound_from_intervals(p_lo: np.ndarray, q_hi: np.ndarray, delta: float) -> np.ndarray:
    num = np.asarray(p_lo, dtype=float) - delta
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log(np.where(num > 0, num, 1.0) / q_hi)
    return np.where(num > 0, np.maximum(out, 0.0), 0.0)


def epsilon_lower_bound(k0: int, n0: int, k1: int, n1: int, delta: float = 0.0, alpha: float = 0.05) -> float:
    """Lower bound on ε from event counts: S occurred k0 of n0 times under D and k1 of n1 times under D′.

    ε_lb = ln((p₀_lower − δ) / p₁_upper) with one-sided Clopper–Pearson bounds at level 1 − α/2 each, so the
    bound holds with confidence 1 − α (union bound). Returns 0 when nothing can be concluded. The upper bound
    p₁_upper is never 0, so the result is always finite.
    """
    n0 = check_int(n0, "n0", 1)
    n1 = check_int(n1, "n1", 1)
    k0 = check_int(k0, "k0", 0, n0)
    k1 = check_int(k1, "k1", 0, n1)
    delta = check_delta(delta)
    alpha = check_fraction(alpha, "alpha")
    p_lo = _cp_lower(k0, n0, alpha / 2)
    q_hi = _cp_upper(k1, n1, alpha / 2)
    return float(_bound_from_intervals(p_lo, q_hi, delta))


# ------------------------------------------------------------------------------------------------
# Neighbouring datasets
# ------------------------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class NeighbourPair:
    """Two neighbouring datasets and the unit direction ``canary`` in which their C differ (C′ − C = uuᵀ)."""

    name: str
    description: str
    D0: PreparedData
    D1: PreparedData
    neighbouring: str
    canary: np.ndarray

    def as_dict(self) -> dict:
        return {"name": self.name, "description": self.description, "neighbouring": self.neighbouring,
                "n": [self.D0.n, self.D1.n], "d": self.D0.d, "canary": [float(x) for x in self.canary]}


def default_base_rows(d: int = 3, n: int = 30) -> np.ndarray:
    """The deterministic (n−1)×d base rows used by the built-in constructions (the n-th row is the canary slot).

    Rows lie on the coordinate axes with norm ≤ 0.6. Their C is diagonal with eigenvalues λ₁ (axis e₁),
    λ₁ + 0.5 (axis e₂, the top) and smaller ones after, so a unit row along e₁ flips the top eigenvector.
    """
    d = check_int(d, "d (audit data dimension)", 2, 50)
    n = check_int(n, "n (audit data rows)", 2 * d + 1, 100_000)
    m = n - 1
    counts = np.bincount(np.arange(m) % d, minlength=d)
    target = np.empty(d)
    target[0] = 0.25 * counts[0]
    target[1] = target[0] + 0.5
    for j in range(2, d):
        target[j] = 0.25 * counts[j] * 0.5 ** (j - 1)
    X = np.zeros((m, d))
    signs = np.where(np.arange(m) % 2 == 0, 1.0, -1.0)
    for j in range(d):
        rows = np.flatnonzero(np.arange(m) % d == j)
        X[rows, j] = signs[rows] * math.sqrt(target[j] / counts[j])
    return X


def _as_prepared(data: Any, label: str) -> PreparedData:
    if isinstance(data, PreparedData):
        return data
    try:
        return PreparedData.from_unit_rows(np.asarray(data, dtype=float), name=label)
    except (TypeError, ValueError) as exc:
        if isinstance(exc, DataError):
            raise
        raise DataError(f"{label} must be a PreparedData or a 2-D numeric array of rows; got {type(data).__name__}.") \
            from None


def _user_pair(pair: Any) -> NeighbourPair:
    if not (isinstance(pair, (tuple, list)) and len(pair) == 2):
        raise InvalidParameterError(
            "neighbours must be one of " + ", ".join(map(repr, NEIGHBOUR_CONSTRUCTIONS))
            + " or a pair (D, D′) of PreparedData."
        )
    D0, D1 = _as_prepared(pair[0], "D"), _as_prepared(pair[1], "D′")
    if D0.d != D1.d:
        raise DataError(f"the two datasets must have the same number of features; got {D0.d} and {D1.d}.")
    X0, X1 = D0.X, D1.X
    if D0.n == D1.n:
        differ = int(np.count_nonzero(np.any(X0 != X1, axis=1)))
        if differ > 1:
            raise DataError(f"D and D′ differ in {differ} rows; replace-one neighbours differ in exactly one row.")
        neighbouring = "replace"
    elif abs(D0.n - D1.n) == 1:
        small, big = (X0, X1) if D0.n < D1.n else (X1, X0)
        same = np.all(small == big[:-1], axis=1)
        first = int(np.argmin(same)) if not same.all() else small.shape[0]
        if not np.array_equal(small[first:], big[first + 1:]):
            raise DataError("D and D′ must differ by adding or removing one row (all other rows in the same order).")
        neighbouring = "add_remove"
    else:
        raise DataError(f"D has {D0.n} rows and D′ has {D1.n}; neighbours differ by at most one row.")
    diff = D1.C - D0.C
    w, V = np.linalg.eigh(diff)
    canary = V[:, int(np.argmax(np.abs(w)))] if np.abs(w).max() > 0 else np.eye(D0.d)[0]
    return NeighbourPair("custom", "user-supplied pair of neighbouring datasets", D0, D1, neighbouring,
                         np.asarray(canary, dtype=float))


def make_neighbours(
    neighbours: str | tuple = "zero_vs_unit",
    *,
    d: int = 3,
    n: int = 30,
    neighbouring: str = "replace",
) -> NeighbourPair:
    """A built-in canary construction (``NEIGHBOUR_CONSTRUCTIONS``) on the default base data, or a user pair.

    Built-ins: D has the base rows and a zero last row; D′ has a unit last row u. Under ``add_remove`` the zero row
    is dropped from D instead, so D′ = D + {u}. Either way C(D′) = C(D) + uuᵀ.
    """
    if not isinstance(neighbours, str):
        return _user_pair(neighbours)
    name = check_choice(neighbours, "neighbours", NEIGHBOUR_CONSTRUCTIONS)
    base = default_base_rows(d, n)
    _, V = np.linalg.eigh(base.T @ base)
    if name == "zero_vs_unit":
        u = np.eye(base.shape[1])[0]
    elif name == "top_eigvec":
        u = V[:, -1]
    else:
        u = V[:, 0]
    u = u / np.linalg.norm(u)
    X1 = np.vstack([base, u[None, :]])
    X0 = base if neighbouring == "add_remove" else np.vstack([base, np.zeros((1, base.shape[1]))])
    D0 = PreparedData.from_unit_rows(X0, name=f"audit D ({name})")
    D1 = PreparedData.from_unit_rows(X1, name=f"audit D′ ({name})")
    return NeighbourPair(name, NEIGHBOUR_CONSTRUCTIONS[name], D0, D1, neighbouring, u)


# ------------------------------------------------------------------------------------------------
# Collecting releases
# ------------------------------------------------------------------------------------------------

class _Samples:
    """Per-side record of the raw outputs needed by every statistic."""

    def __init__(self, d: int, k: int, capacity: int, want_cov: bool) -> None:
        self.limit = capacity
        capacity = min(capacity, 4096)  # grown by doubling, so a huge `trials` with a time cap costs no memory
        self.cov = np.full((capacity, d, d), np.nan) if want_cov else None
        self.sub = np.full((capacity, d, k), np.nan)
        self.bottom = np.zeros(capacity, dtype=bool)
        self.count = 0

    def _grow(self) -> None:
        extra = min(self.sub.shape[0], self.limit - self.sub.shape[0])
        self.sub = np.concatenate([self.sub, np.full((extra, *self.sub.shape[1:]), np.nan)])
        self.bottom = np.concatenate([self.bottom, np.zeros(extra, dtype=bool)])
        if self.cov is not None:
            self.cov = np.concatenate([self.cov, np.full((extra, *self.cov.shape[1:]), np.nan)])

    def add(self, release) -> None:
        i = self.count
        if i >= self.sub.shape[0]:
            self._grow()
        if release.is_bottom:
            self.bottom[i] = True
        else:
            self.sub[i] = release.subspace
            if self.cov is not None:
                if release.covariance is None:
                    raise InvalidParameterError(
                        f"{release.mechanism} releases no covariance matrix; use statistic 'alignment' instead."
                    )
                self.cov[i] = release.covariance
        self.count += 1

    def trim(self) -> None:
        c = self.count
        self.sub, self.bottom = self.sub[:c], self.bottom[:c]
        if self.cov is not None:
            self.cov = self.cov[:c]


def _lambda_min(stack: np.ndarray, C: np.ndarray) -> np.ndarray:
    out = np.full(stack.shape[0], -np.inf)
    ok = np.all(np.isfinite(stack), axis=(1, 2))
    if ok.any():
        M = stack[ok] - C
        out[ok] = np.linalg.eigvalsh(0.5 * (M + np.swapaxes(M, 1, 2)))[:, 0]
    return out


def _quadratic(stack: np.ndarray, u: np.ndarray) -> np.ndarray:
    out = np.einsum("i,nij,j->n", u, stack, u)
    return np.where(np.isfinite(out), out, -np.inf)


def _alignment(sub: np.ndarray, u: np.ndarray) -> np.ndarray:
    proj = np.einsum("nik,i->nk", sub, u)
    out = np.sum(proj**2, axis=1)
    return np.where(np.isfinite(out), out, -1.0)  # ⊥ → −1, an event of its own


def _features(s: _Samples, pair: NeighbourPair) -> np.ndarray:
    u = pair.canary
    d = pair.D0.d
    iu = np.triu_indices(d)
    sub = np.nan_to_num(s.sub)
    proj = np.einsum("nik,njk->nij", sub, sub)
    cols = [proj[:, iu[0], iu[1]], _alignment(s.sub, u)[:, None], s.bottom[:, None].astype(float)]
    if s.cov is not None:
        cov = np.nan_to_num(s.cov)
        cols += [cov[:, iu[0], iu[1]], _quadratic(cov, u)[:, None],
                 np.nan_to_num(_lambda_min(s.cov, pair.D0.C), neginf=-1e6)[:, None],
                 np.nan_to_num(_lambda_min(s.cov, pair.D1.C), neginf=-1e6)[:, None]]
    return np.hstack(cols)


# ------------------------------------------------------------------------------------------------
# Event selection
# ------------------------------------------------------------------------------------------------

@dataclass
class _Event:
    orientation: int  # 0: D vs D′ (S likelier under D); 1: D′ vs D
    direction: str  # "<=" or ">"
    threshold: float
    column: int  # index into the per-orientation statistic columns
    selection_bound: float

    def count(self, values: np.ndarray) -> int:
        v = np.asarray(values)
        return int(np.count_nonzero(v <= self.threshold if self.direction == "<=" else v > self.threshold))


def _best_event(a: np.ndarray, b: np.ndarray, delta: float, a_level: float, fixed: tuple | None,
                orientation: int, column: int) -> _Event:
    """The threshold event maximising the bound ln((P_a(S) − δ)/P_b(S)) on selection samples a and b."""
    na, nb = a.size, b.size
    if fixed is not None:
        direction, t = fixed
        ev = _Event(orientation, direction, float(t), column, 0.0)
        ka, kb = ev.count(a), ev.count(b)
        ev.selection_bound = float(_bound_from_intervals(_cp_lower(ka, na, a_level), _cp_upper(kb, nb, a_level),
                                                         delta))
        return ev
    pooled = np.concatenate([a, b])
    finite = pooled[np.isfinite(pooled)]
    cands = [np.quantile(finite, np.linspace(0, 1, 513))] if finite.size else []
    for side in (a, b):
        f = side[np.isfinite(side)]
        if f.size:
            lo, hi = f.min(), f.max()
            cands.append(np.array([lo, hi, np.nextafter(lo, -np.inf), np.nextafter(hi, np.inf)]))
    t = np.unique(np.concatenate([*cands, np.array([-np.inf])]))
    sa, sb = np.sort(a), np.sort(b)
    le_a = np.searchsorted(sa, t, side="right")
    le_b = np.searchsorted(sb, t, side="right")
    best = _Event(orientation, "<=", float(t[0]), column, -1.0)
    for direction, ka, kb in (("<=", le_a, le_b), (">", na - le_a, nb - le_b)):
        bound = _bound_from_intervals(_cp_lower(ka, na, a_level), _cp_upper(kb, nb, a_level), delta)
        # prefer larger bound, then larger P_a (more robust on the held-out half)
        score = bound + 1e-9 * ka / na
        i = int(np.argmax(score))
        if score[i] > best.selection_bound:
            best = _Event(orientation, direction, float(t[i]), column, float(score[i]))
    return best


# ------------------------------------------------------------------------------------------------
# Result
# ------------------------------------------------------------------------------------------------

def _jsonable(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return [_jsonable(v) for v in x.tolist()]
    if isinstance(x, (np.floating, float)):
        return float(x) if math.isfinite(x) else None
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.bool_):
        return bool(x)
    return x


@dataclass
class AuditResult:
    """The outcome of :func:`run_audit` (see ``as_dict`` for the JSON form)."""

    mechanism: str
    mechanism_name: str
    guarantee: str
    claimed_epsilon: float
    delta: float
    epsilon_lower_bound: float
    epsilon_estimate: float
    confidence: float
    trials: int
    completed: tuple[int, int]
    verdict: str
    counts: dict
    event: dict
    statistic: str
    samples: tuple[np.ndarray, np.ndarray]
    runtime_s: float
    neighbours: dict
    truncated: bool
    k: int
    seed: int | None
    orientations: list = field(default_factory=list)
    counterexample_delta: float | None = None
    delta_lower_bound: float = 0.0  # at the claimed ε: the δ the claim would need, at the same confidence

    @property
    def violated(self) -> bool:
        return self.verdict == "violated"

    def histogram(self, bins: int = 60) -> dict:
        """Common-bin histograms of the chosen statistic for both sides (⊥ and infinite values counted apart)."""
        bins = check_int(bins, "bins", 2, 1000)
        a, b = self.samples
        fa, fb = a[np.isfinite(a)], b[np.isfinite(b)]
        pooled = np.concatenate([fa, fb])
        if pooled.size == 0:
            edges = np.array([0.0, 1.0])
        else:
            lo, hi = float(pooled.min()), float(pooled.max())
            if hi <= lo:
                lo, hi = lo - 0.5, hi + 0.5
            edges = np.linspace(lo, hi, bins + 1)
        return {"edges": edges, "counts": (np.histogram(fa, edges)[0], np.histogram(fb, edges)[0]),
                "nonfinite": (int(a.size - fa.size), int(b.size - fb.size)), "labels": SIDE_NAMES}

    def summary(self) -> str:
        """A few plain-language lines (CLI output, dashboard verdict)."""
        conf = f"{100 * self.confidence:g}%"
        claim = f"({self.claimed_epsilon:g}, {self.delta:g})-DP" if self.delta > 0 else f"{self.claimed_epsilon:g}-DP"
        c = self.counts
        lines = [
            f"Audit of {self.mechanism} ({self.mechanism_name}); claimed {claim}; neighbours "
            f"{self.neighbours['name']}; statistic {self.statistic}.",
            f"Event: {self.event['description']}. Held-out counts: {c['held_out_hits'][0]}/{c['held_out_n'][0]} "
            f"under {c['numerator']}, {c['held_out_hits'][1]}/{c['held_out_n'][1]} under {c['denominator']}.",
        ]
        if self.violated:
            lines.append(
                f"VIOLATED: with {conf} confidence ε ≥ {self.epsilon_lower_bound:.3g}, larger than the claimed "
                f"{self.claimed_epsilon:g} — the audit proves this mechanism is NOT {claim}."
            )
        else:
            lines.append(
                f"CONSISTENT: the lower bound ε ≥ {self.epsilon_lower_bound:.3g} ({conf} confidence) does not exceed "
                f"the claimed {self.claimed_epsilon:g}. Audits only give lower bounds: this is not a proof of privacy."
            )
        if self.delta_lower_bound > self.delta:
            lines.append(f"At the claimed ε = {self.claimed_epsilon:g} the data also show δ ≥ "
                         f"{self.delta_lower_bound:.3g} ({conf} confidence).")
        lines.append(f"{self.completed[0]} + {self.completed[1]} releases in {self.runtime_s:.2f} s"
                     + (" (stopped early at the time limit)" if self.truncated else "") + ".")
        return "\n".join(lines)

    def as_dict(self, include_samples: bool = True) -> dict:
        out = {
            "mechanism": self.mechanism,
            "mechanism_name": self.mechanism_name,
            "guarantee": self.guarantee,
            "claimed_epsilon": self.claimed_epsilon,
            "delta": self.delta,
            "epsilon_lower_bound": self.epsilon_lower_bound,
            "epsilon_estimate": self.epsilon_estimate,
            "confidence": self.confidence,
            "trials": self.trials,
            "completed": list(self.completed),
            "verdict": self.verdict,
            "counts": self.counts,
            "event": self.event,
            "statistic": self.statistic,
            "runtime_s": self.runtime_s,
            "neighbours": self.neighbours,
            "truncated": self.truncated,
            "k": self.k,
            "seed": self.seed,
            "orientations": self.orientations,
            "counterexample_delta": self.counterexample_delta,
            "delta_lower_bound": self.delta_lower_bound,
        }
        if include_samples:
            out["samples"] = {"D": self.samples[0], "D′": self.samples[1]}
        return _jsonable(out)


# ------------------------------------------------------------------------------------------------
# The audit
# ------------------------------------------------------------------------------------------------

def _resolve_statistic(statistic: str, mech: Mechanism) -> str:
    statistic = check_choice(statistic, "statistic", STATISTICS)
    if statistic == "auto":
        if mech.output == "covariance":
            return "support" if mech.invalid else "quadratic"
        return "alignment"
    if statistic in ("support", "quadratic") and mech.output != "covariance":
        raise InvalidParameterError(
            f"statistic {statistic!r} needs a covariance output but {mech.id} releases a subspace; "
            "use 'alignment' or 'classifier'."
        )
    return statistic


def _resolve_delta(delta: float | None, mech: Mechanism) -> float:
    if delta is None:
        return DEFAULT_DELTA if mech.uses_delta else 0.0
    return check_delta(delta, required=mech.uses_delta)


def _prepare(mechanism_id: str | Mechanism, epsilon: float, delta: float | None, neighbours: Any, statistic: str,
             k: int, d: int, n: int, options: dict) -> tuple[Mechanism, float, float, NeighbourPair, str, dict]:
    mech = mechanism_id if isinstance(mechanism_id, Mechanism) else get_mechanism(mechanism_id)
    epsilon = check_epsilon(epsilon)
    delta = _resolve_delta(delta, mech)
    relation = "replace" if "replace" in mech.neighbourings else mech.neighbourings[0]
    pair = make_neighbours(neighbours, d=d, n=n, neighbouring=relation)
    if pair.neighbouring not in mech.neighbourings:
        raise InvalidParameterError(
            f"{mech.id} supports neighbouring {', '.join(mech.neighbourings)}; the supplied pair is "
            f"{pair.neighbouring!r}."
        )
    stat = _resolve_statistic(statistic, mech)
    opts = mech.validate_options(options)
    check_int(k, "k (number of components)", 1, pair.D0.d)
    return mech, epsilon, delta, pair, stat, opts


def estimate_audit_seconds(mechanism_id: str | Mechanism, epsilon: float, trials: int = DEFAULT_TRIALS, *,
                           delta: float | None = None, neighbours: Any = "zero_vs_unit", k: int = 1,
                           pilot: int = 30, max_seconds: float = 0.5, d: int = 3, n: int = 30,
                           **options: Any) -> float:
    """Rough wall time of an audit with ``trials`` releases per side, from a pilot of at most ``pilot`` releases
    (stopping after ``max_seconds`` once two are done)."""
    mech, epsilon, delta, pair, _, opts = _prepare(mechanism_id, epsilon, delta, neighbours, "auto", k, d, n,
                                                   options)
    trials = check_int(trials, "trials", 1)
    pilot = check_int(pilot, "pilot", 1, 10_000)
    rng = make_rng(None)
    t0 = time.perf_counter()
    done = 0
    while done < pilot and not (done >= 2 and time.perf_counter() - t0 > max_seconds):
        mech.release(pair.D1 if done % 2 else pair.D0, k, epsilon, delta, neighbouring=pair.neighbouring,
                     random_state=rng, allow_invalid=True, **opts)
        done += 1
    per = (time.perf_counter() - t0) / done
    return per * 2 * trials * 1.1 + 0.2


def run_audit(
    mechanism_id: str | Mechanism,
    epsilon: float,
    delta: float | None = None,
    neighbours: str | tuple = "zero_vs_unit",
    statistic: str = "auto",
    trials: int = DEFAULT_TRIALS,
    k: int = 1,
    confidence: float = 0.95,
    seed: RandomState = None,
    progress: ProgressCallback | None = None,
    time_limit: float | None = None,
    *,
    d: int = 3,
    n: int = 30,
    **options: Any,
) -> AuditResult:
    """Audit a mechanism's claim "(ε, δ)-DP" and return an empirical lower bound on ε.

    ``mechanism_id`` is a registered id or a :class:`Mechanism` instance (e.g. a test-only mechanism).

    ``trials`` releases are run on each of the two neighbours (built-in name from ``NEIGHBOUR_CONSTRUCTIONS``, on
    default base data with ``n`` rows and ``d`` features, or a pair of PreparedData). Half of each side chooses the
    event, the other half estimates it. ``delta`` defaults to 1e-5 for mechanisms that use δ and 0 otherwise.
    ``time_limit`` (seconds) stops the run gracefully and reports the bound from the releases so far
    (``truncated=True``). Extra keyword arguments are mechanism options.
    """
    started = time.perf_counter()
    mech, epsilon, delta, pair, stat, opts = _prepare(mechanism_id, epsilon, delta, neighbours, statistic, k, d,
                                                      n, options)
    trials = check_int(trials, "trials", MIN_TRIALS, 10_000_000)
    confidence = check_fraction(confidence, "confidence")
    deadline = Deadline(check_time_limit(time_limit))
    rng = make_rng(seed)
    if progress is not None and not callable(progress):
        raise InvalidParameterError("progress must be a callable progress(done, total) or None.")

    want_cov = stat in ("support", "quadratic") or (stat == "classifier" and mech.output == "covariance")
    sides = (_Samples(pair.D0.d, k, trials, want_cov), _Samples(pair.D0.d, k, trials, want_cov))
    datasets = (pair.D0, pair.D1)
    chunk = max(1, min(500, trials // 100))
    total = 2 * trials
    truncated = False
    try:
        while sides[1].count < trials and not truncated:
            for _ in range(min(chunk, trials - sides[1].count)):
                for side in (0, 1):
                    limit = None if deadline.seconds is None else max(deadline.remaining, 1e-3)
                    rel = mech.release(datasets[side], k, epsilon, delta, neighbouring=pair.neighbouring,
                                       random_state=rng, time_limit=limit, allow_invalid=True, **opts)
                    sides[side].add(rel)
                if deadline.expired and sides[1].count < trials:
                    truncated = True
                    break
            if progress is not None:
                progress(sides[0].count + sides[1].count, total)
    except MechanismTimeout:
        truncated = True
    m = min(sides[0].count, sides[1].count)
    sides[0].count = sides[1].count = m
    for s in sides:
        s.trim()
    if m < MIN_TRIALS:
        cap = "the time limit" if time_limit is None else f"the time limit of {float(time_limit):g} s"
        raise MechanismTimeout(
            f"the audit stopped at {cap} after only {m} releases per side (need at least {MIN_TRIALS}); "
            "raise the time limit or audit a faster setting (smaller ε, fewer features)."
        )

    # --- statistics: columns[orientation] = values used when S should be likelier under that side ------------
    half = m // 2
    if stat == "classifier":
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        F0, F1 = _features(sides[0], pair), _features(sides[1], pair)
        Xtr = np.vstack([F0[:half], F1[:half]])
        ytr = np.r_[np.zeros(half), np.ones(half)]
        clf = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))
        if np.ptp(Xtr, axis=0).max() == 0:
            s0, s1 = np.zeros(m), np.zeros(m)
        else:
            clf.fit(Xtr, ytr)
            s0, s1 = clf.decision_function(F0), clf.decision_function(F1)
        columns = [(s0, s1), (s0, s1)]
        names = ["classifier score (log-odds that the output came from D′)"] * 2
        fixed = [None, None]
    elif stat == "support":
        lm = [(_lambda_min(sides[0].cov, pair.D1.C), _lambda_min(sides[1].cov, pair.D1.C)),
              (_lambda_min(sides[0].cov, pair.D0.C), _lambda_min(sides[1].cov, pair.D0.C))]
        columns = lm
        names = ["smallest eigenvalue of Ĉ − C(D′)", "smallest eigenvalue of Ĉ − C(D)"]
        fixed = [("<=", 0.0), ("<=", 0.0)]
    elif stat == "quadratic":
        u = pair.canary
        q = (_quadratic(sides[0].cov, u), _quadratic(sides[1].cov, u))
        columns, names, fixed = [q, q], ["uᵀĈu"] * 2, [None, None]
    else:
        u = pair.canary
        al = (_alignment(sides[0].sub, u), _alignment(sides[1].sub, u))
        columns, names, fixed = [al, al], ["‖V̂ᵀu‖² (canary energy in the released subspace)"] * 2, [None, None]

    alpha = 1.0 - confidence
    a_level = alpha / 4  # two orientations × two one-sided intervals
    orient_results = []
    best = None
    for o in (0, 1):
        num, den = columns[o][o], columns[o][1 - o]
        ev = _best_event(num[:half], den[:half], delta, a_level, fixed[o], o, o)
        ho_num, ho_den = num[half:], den[half:]
        kn, kd = ev.count(ho_num), ev.count(ho_den)
        nn, nd = ho_num.size, ho_den.size
        p_lo, q_hi = float(_cp_lower(kn, nn, a_level)), float(_cp_upper(kd, nd, a_level))
        lb = float(_bound_from_intervals(p_lo, q_hi, delta))
        with np.errstate(divide="ignore"):
            est = math.log(kn / nn) - math.log(kd / nd) if kn > 0 and kd > 0 else (math.inf if kn > 0 else 0.0)
        rec = {
            "orientation": f"{SIDE_NAMES[o]} vs {SIDE_NAMES[1 - o]}",
            "numerator": SIDE_NAMES[o], "denominator": SIDE_NAMES[1 - o],
            "statistic": names[o], "direction": ev.direction, "threshold": ev.threshold,
            "selection_bound": ev.selection_bound,
            "held_out_hits": [kn, kd], "held_out_n": [nn, nd],
            "p_numerator_lower": p_lo, "p_denominator_upper": q_hi,
            "epsilon_lower_bound": lb, "epsilon_estimate": max(est, 0.0),
            "delta_lower_bound": max(0.0, p_lo - math.exp(min(epsilon, 700.0)) * q_hi),
        }
        orient_results.append(rec)
        if best is None or lb > best[0]["epsilon_lower_bound"] or (
                lb == best[0]["epsilon_lower_bound"] and ev.selection_bound > best[1].selection_bound):
            best = (rec, ev)
    rec, ev = best
    o = ev.orientation
    shown = columns[o]
    comparator = "≤" if ev.direction == "<=" else ">"
    if stat == "support":
        other = "C(D′)" if o == 0 else "C(D)"
        desc = (f"Ĉ − {other} is not positive definite (its smallest eigenvalue ≤ 0): an output that a Wishart "
                f"mechanism can never produce from {rec['denominator']}")
    else:
        desc = f"{rec['statistic']} {comparator} {ev.threshold:.4g}"
        if rec["epsilon_lower_bound"] <= 0:
            desc = f"no event separated the two sides (best candidate: {desc})"
    eps_lb = rec["epsilon_lower_bound"]
    counts = {
        "numerator": rec["numerator"], "denominator": rec["denominator"],
        "held_out_hits": rec["held_out_hits"], "held_out_n": rec["held_out_n"],
        "selection_hits": [ev.count(shown[o][:half]), ev.count(shown[1 - o][:half])],
        "selection_n": [half, half],
        "p_numerator_lower": rec["p_numerator_lower"], "p_denominator_upper": rec["p_denominator_upper"],
        "bottom": [int(sides[0].bottom.sum()), int(sides[1].bottom.sum())],
    }
    return AuditResult(
        mechanism=mech.id, mechanism_name=mech.name, guarantee=mech.guarantee_for(k, opts),
        claimed_epsilon=epsilon, delta=delta, epsilon_lower_bound=eps_lb,
        epsilon_estimate=rec["epsilon_estimate"], confidence=confidence, trials=trials, completed=(m, m),
        verdict="violated" if eps_lb > epsilon else "consistent", counts=counts,
        event={"statistic": stat, "orientation": rec["orientation"], "direction": ev.direction,
               "threshold": ev.threshold, "variable": rec["statistic"], "description": desc},
        statistic=stat, samples=(np.asarray(shown[0]), np.asarray(shown[1])),
        runtime_s=time.perf_counter() - started, neighbours=pair.as_dict(), truncated=truncated, k=k,
        seed=seed if isinstance(seed, int) else None, orientations=orient_results,
        counterexample_delta=mech.counterexample_delta(epsilon, opts),
        delta_lower_bound=max(r["delta_lower_bound"] for r in orient_results),
    )


# ------------------------------------------------------------------------------------------------
# Sampler conformance: does the Bingham sampler draw from the exact law?
# ------------------------------------------------------------------------------------------------

#: Default public target of the sampler self-test: C = R·diag(8, 2, 0, …)·Rᵀ with exponent c = 0.5.
CONFORMANCE_EIGENVALUES = (8.0, 2.0)
CONFORMANCE_CONCENTRATION = 0.5
CONFORMANCE_DRAWS = 20_000
CONFORMANCE_ALPHA = 1e-6
CONFORMANCE_STATISTIC = "|⟨x, v₁⟩|, the absolute projection of the sample on the top eigenvector v₁ of C"
#: Samples further than this from the unit sphere make the sampler fail the self-test outright.
_SPHERE_TOL = 1e-6

SamplerFactory = Callable[[np.ndarray, float], Any]


def conformance_target(q: int = 3, eigenvalues: tuple[float, float] = CONFORMANCE_EIGENVALUES
                       ) -> tuple[np.ndarray, np.ndarray]:
    """The public test matrix C = H·diag(λ₁, λ₂, 0, …, 0)·H and its top axis v₁ = H·e₁.

    H is the fixed Householder reflection taking e₁ to (1, …, 1)/√q, so C is not diagonal and a sampler that
    mishandles the eigenbasis fails too. Returns (C, v₁).
    """
    q = check_int(q, "q (sphere dimension)", 2, 50)
    lam = _check_eigenvalues(eigenvalues)
    a = np.full(q, 1.0 / math.sqrt(q))
    w = np.eye(q)[0] - a
    H = np.eye(q) - 2.0 * np.outer(w, w) / float(w @ w)
    D = np.zeros(q)
    D[:2] = lam
    C = (H * D) @ H.T
    return 0.5 * (C + C.T), H[:, 0].copy()


def _check_eigenvalues(eigenvalues: Any) -> tuple[float, float]:
    try:
        lam = tuple(float(v) for v in eigenvalues)
    except (TypeError, ValueError):
        lam = ()
    if len(lam) != 2 or not all(math.isfinite(v) and v >= 0 for v in lam):
        raise InvalidParameterError(
            f"eigenvalues must be two finite numbers >= 0 (λ₁, λ₂; the others are 0), got {eigenvalues!r}."
        )
    return lam


def _projection_weight(theta: np.ndarray | float, q: int, l1: float, l2: float, c: float) -> np.ndarray:
    """Unnormalised density of θ = arccos t on [0, π/2] for t = |⟨x, v₁⟩|, x ∝ exp(c·xᵀCx) on S^{q−1}.

    With x = (t, √(1−t²)·u), u uniform on S^{q−2}, the surface element is (1−t²)^{(q−3)/2} dt dσ(u) and the
    average of exp(c·λ₂(1−t²)u₁²) over u is ₁F₁(½; (q−1)/2; a) = e^a·₁F₁((q−2)/2; (q−1)/2; −a), a = cλ₂(1−t²)
    (Kummer's transformation keeps the special function in (0, 1]). In θ (dt = sin θ dθ) the density is
    sin^{q−2}θ · exp(cλ₁cos²θ + a) · ₁F₁((q−2)/2; (q−1)/2; −a), smooth on [0, π/2]. q = 2 gives the circle law
    exp(c(λ₁cos²θ + λ₂sin²θ)); q = 3 gives exp(cλ₁t² + a/2)·I₀(a/2) in t.
    """
    from scipy import special

    theta = np.asarray(theta, dtype=float)
    s2 = np.sin(theta) ** 2
    a = c * l2 * s2
    kummer = 1.0 if q == 2 else special.hyp1f1((q - 2) / 2.0, (q - 1) / 2.0, -a)
    return np.sin(theta) ** (q - 2) * np.exp(c * l1 * np.cos(theta) ** 2 + a - c * max(l1, l2)) * kummer


def projection_bin_probabilities(edges: Any, *, q: int = 3, eigenvalues: tuple[float, float] = CONFORMANCE_EIGENVALUES,
                                 concentration: float = CONFORMANCE_CONCENTRATION) -> np.ndarray:
    """Exact P(|⟨x, v₁⟩| ∈ [eᵢ, eᵢ₊₁)) for x ∝ exp(c·xᵀCx) on S^{q−1}, C with eigenvalues (λ₁, λ₂, 0, …, 0).

    One adaptive quadrature (scipy ``quad``, relative tolerance 1e-12) per bin of the 1-D marginal density; the
    edges must increase from 0 to 1. The result sums to 1.
    """
    from scipy import integrate

    q = check_int(q, "q (sphere dimension)", 2, 50)
    l1, l2 = _check_eigenvalues(eigenvalues)
    c = check_positive(concentration, "concentration", allow_zero=True)
    e = np.asarray(edges, dtype=float).ravel()
    if e.size < 2 or not np.all(np.isfinite(e)) or e[0] != 0.0 or e[-1] != 1.0 or np.any(np.diff(e) <= 0):
        raise InvalidParameterError("edges must increase strictly from 0 to 1 (the range of |⟨x, v₁⟩|).")
    th = np.arccos(e)
    mass = np.array([integrate.quad(_projection_weight, th[i + 1], th[i], args=(q, l1, l2, c), epsabs=0.0,
                                    epsrel=1e-12, limit=200)[0] for i in range(e.size - 1)])
    return mass / mass.sum()


def _equiprobable_edges(bins: int, q: int, lam: tuple[float, float], c: float) -> np.ndarray:
    """Bin edges on [0, 1] with (nearly) equal exact probability, from the CDF on a fine θ grid."""
    from scipy import integrate

    theta = np.linspace(0.0, 0.5 * math.pi, 8193)
    cum = integrate.cumulative_simpson(_projection_weight(theta, q, lam[0], lam[1], c), x=theta, initial=0.0)
    cum = np.maximum.accumulate(np.maximum(cum, 0.0))
    # P(t ≤ cos θ) = 1 − cum(θ)/cum(π/2); equal quantiles of t ↔ equal steps of cum from the θ = π/2 end.
    levels = cum[-1] * (1.0 - np.arange(1, bins) / bins)
    inner = np.cos(np.interp(levels, cum, theta))
    edges = np.concatenate([[0.0], np.sort(inner), [1.0]])
    if np.any(np.diff(edges) <= 0):  # degenerate targets: fall back to equal widths
        edges = np.linspace(0.0, 1.0, bins + 1)
    return edges


@dataclass
class ConformanceResult:
    """The outcome of :func:`sampler_conformance` (Pearson chi-square goodness of fit; ``as_dict`` for JSON)."""

    sampler: str
    statistic: str
    q: int
    eigenvalues: tuple[float, float]
    concentration: float
    draws: int
    alpha: float
    chi2: float
    dof: int
    p_value: float
    verdict: str
    edges: np.ndarray
    observed: np.ndarray
    expected: np.ndarray
    runtime_s: float
    seed: int | None = None
    acceptance_rate: float | None = None
    off_sphere: int = 0
    reason: str = ""

    @property
    def conforms(self) -> bool:
        return self.verdict == "conforms"

    def densities(self) -> dict:
        """Observed and exact densities per bin (count / (draws · width)) for plotting on the t axis."""
        widths = np.diff(self.edges)
        return {"centres": 0.5 * (self.edges[1:] + self.edges[:-1]), "widths": widths,
                "observed": self.observed / (self.draws * widths), "expected": self.expected / (self.draws * widths)}

    def summary(self) -> str:
        """A few plain-language lines (CLI output)."""
        target = (f"exp({self.concentration:g}·xᵀCx) on S^{self.q - 1}, C with eigenvalues "
                  f"({self.eigenvalues[0]:g}, {self.eigenvalues[1]:g}, 0, …)")
        lines = [f"Sampler self-test of {self.sampler}: {self.draws:,} draws from {target}.",
                 f"Statistic: {self.statistic}; Pearson chi-square = {self.chi2:.4g} on {self.dof} degrees of "
                 f"freedom, p-value {_p_relation(self.p_value)} (reject below α = {self.alpha:g})."]
        if self.conforms:
            lines.append("CONFORMS: the samples are consistent with the exact Bingham law (a test can only fail to "
                         "find a bug, not prove there is none).")
        else:
            lines.append(f"REJECTED: {self.reason}")
        lines.append(f"Run time {self.runtime_s:.2f} s"
                     + (f"; acceptance rate {self.acceptance_rate:.3f}" if self.acceptance_rate is not None else "")
                     + ".")
        return "\n".join(lines)

    def as_dict(self) -> dict:
        return _jsonable({
            "sampler": self.sampler, "statistic": self.statistic, "test": "Pearson chi-square goodness of fit",
            "q": self.q, "eigenvalues": list(self.eigenvalues), "concentration": self.concentration,
            "draws": self.draws, "alpha": self.alpha, "chi2": self.chi2, "dof": self.dof, "p_value": self.p_value,
            "verdict": self.verdict, "reason": self.reason, "edges": self.edges, "observed": self.observed,
            "expected": self.expected, "runtime_s": self.runtime_s, "seed": self.seed,
            "acceptance_rate": self.acceptance_rate, "off_sphere": self.off_sphere,
        })


def format_p_value(p: float) -> str:
    """A p-value for display; 0 (below the floating-point range) is shown as "< 1e-300"."""
    return "< 1e-300" if p < 1e-300 else f"{p:.3g}"


def _p_relation(p: float) -> str:
    text = format_p_value(p)
    return text if text.startswith("<") else f"= {text}"


def _factory_name(factory: Any) -> str:
    owner = getattr(factory, "__self__", None)
    if isinstance(owner, type):
        return f"{owner.__name__}.{getattr(factory, '__name__', 'factory')}"
    return getattr(factory, "__qualname__", None) or type(factory).__name__


def sampler_conformance(
    sampler_factory: SamplerFactory | None = None,
    *,
    q: int = 3,
    eigenvalues: tuple[float, float] = CONFORMANCE_EIGENVALUES,
    concentration: float = CONFORMANCE_CONCENTRATION,
    draws: int = CONFORMANCE_DRAWS,
    alpha: float = CONFORMANCE_ALPHA,
    seed: RandomState = None,
    bins: int | None = None,
    progress: ProgressCallback | None = None,
) -> ConformanceResult:
    """Test that a Bingham sampler draws from the exact law ∝ exp(c·xᵀCx) on S^{q−1} (c = ``concentration``).

    An ε audit only lower-bounds the privacy loss and can miss a broken sampler: OpenDP's "always accept" bug
    (opendp#2416) drew from the flatter ACG envelope, whose privacy loss stays *below* the claim. This test compares
    the law of t = |⟨x, v₁⟩| with its exact distribution (:func:`projection_bin_probabilities`) on the fixed public
    target of :func:`conformance_target`, using ``bins`` equal-probability bins (default: at most 40, ≥ 20 expected
    draws each) and Pearson's chi-square test; the verdict is "rejected" when p < ``alpha`` or when a sample is off
    the unit sphere. With a correct sampler a false rejection has probability ≈ ``alpha``.

    ``sampler_factory(C, c)`` must return an object with ``sample_many(n, rng)`` giving an (n, q) array; the
    default is the library's exact sampler :meth:`KentBinghamSampler.from_score`. ``progress(done, total)`` is
    called after each chunk of draws.
    """
    from .samplers.bingham import KentBinghamSampler

    started = time.perf_counter()
    factory = KentBinghamSampler.from_score if sampler_factory is None else sampler_factory
    if not callable(factory):
        raise InvalidParameterError("sampler_factory must be a callable factory(C, c) returning a sampler, or None.")
    q = check_int(q, "q (sphere dimension)", 2, 50)
    lam = _check_eigenvalues(eigenvalues)
    c = check_positive(concentration, "concentration", allow_zero=True)
    draws = check_int(draws, "draws", 100, 10_000_000)
    alpha = check_fraction(alpha, "alpha")
    bins = min(40, draws // 20) if bins is None else check_int(bins, "bins", 2, 10_000)
    if draws < 5 * bins:
        raise InvalidParameterError(f"{bins} bins need at least {5 * bins} draws (≥ 5 expected per bin); "
                                    "use fewer bins or more draws.")
    if progress is not None and not callable(progress):
        raise InvalidParameterError("progress must be a callable progress(done, total) or None.")
    rng = make_rng(seed)
    C, axis = conformance_target(q, lam)
    sampler = factory(C, c)
    if not callable(getattr(sampler, "sample_many", None)):
        raise InvalidParameterError("sampler_factory(C, c) must return an object with a sample_many(n, rng) method.")

    chunk = max(1, -(-draws // 10))
    parts = []
    done = 0
    while done < draws:
        m = min(chunk, draws - done)
        x = np.asarray(sampler.sample_many(m, rng), dtype=float)
        if x.shape != (m, q):
            raise SamplerError(f"the sampler returned an array of shape {x.shape}; expected ({m}, {q}).")
        parts.append(x)
        done += m
        if progress is not None:
            progress(done, draws)
    X = np.vstack(parts)
    norms = np.linalg.norm(X, axis=1)
    off = int(np.count_nonzero(~np.isfinite(norms) | (np.abs(norms - 1.0) > _SPHERE_TOL)))
    t = np.clip(np.abs(np.nan_to_num(X @ axis)), 0.0, 1.0)

    edges = _equiprobable_edges(bins, q, lam, c)
    p = projection_bin_probabilities(edges, q=q, eigenvalues=lam, concentration=c)
    observed = np.bincount(np.clip(np.searchsorted(edges, t, side="right") - 1, 0, bins - 1), minlength=bins)
    expected = draws * p
    chi2 = float(np.sum((observed - expected) ** 2 / expected))
    dof = bins - 1
    p_value = float(stats.chi2.sf(chi2, dof))
    if off:
        verdict, reason = "rejected", f"{off} of {draws:,} samples are not unit vectors (|‖x‖ − 1| > {_SPHERE_TOL:g})."
    elif p_value < alpha:
        verdict = "rejected"
        reason = (f"p {_p_relation(p_value)} < α = {alpha:g}: the samples do not follow the exact Bingham law, "
                  "so the sampler is broken (e.g. it accepts proposals it should reject) and its privacy proof "
                  "does not apply.")
    else:
        verdict, reason = "conforms", ""
    rate = getattr(getattr(sampler, "stats", None), "acceptance_rate", None)
    return ConformanceResult(
        sampler=_factory_name(factory), statistic=CONFORMANCE_STATISTIC, q=q, eigenvalues=lam, concentration=c,
        draws=draws, alpha=alpha, chi2=chi2, dof=dof, p_value=p_value, verdict=verdict, edges=edges,
        observed=observed, expected=expected, runtime_s=time.perf_counter() - started,
        seed=seed if isinstance(seed, int) else None,
        acceptance_rate=float(rate) if isinstance(rate, (int, float)) and math.isfinite(rate) else None,
        off_sphere=off, reason=reason,
    )
