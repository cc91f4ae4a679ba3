"""Neighbouring-pair privacy checks for ``tests/privacy/test_privacy_regression.py``.

A *pair* is two neighbouring datasets D, D′ (under one relation) with a k, ε and δ. :func:`sample_release_table`
runs a mechanism R times on one side (fixed seeds) and turns every released field into

* **scalar features** (eigenvalues, trace and entries of ``covariance`` and ``covariance_post``, entries of
  ``eigenvalues``, of the projector V̂V̂ᵀ and of the basis V̂): NaN where the field is absent (⊥, or a subspace-only
  mechanism);
* **whole-field keys** (rounded bytes of each matrix / vector, the ``reason`` string, the status), for atoms;
* **fixed events**, specified before sampling: status = ⊥, and the support events {Ĉ − C(X) not positive definite}
  and {Ĉ − C(X) not negative definite} for X ∈ {D, D′} and Ĉ ∈ {covariance, covariance_post}.

:func:`detect` then looks for an event E with P_A(E) > e^ε·P_B(E) + δ, (A, B) = (D, D′) and (D′, D):

* fixed events are counted on every release;
* *selected* events — atoms (a value of a feature, or a whole field, that repeats exactly on one side) and
  one-sided thresholds on each feature — are chosen on the first ``n_select`` releases of each side and counted on
  the remaining, held-out releases, so the choice cannot bias the count;
* each probability gets an exact Clopper–Pearson interval at level 1 − α/(2m) (m = number of events of its family,
  α/2 per family, Bonferroni), and E is flagged when CP-lower(P_A) > e^ε·CP-upper(P_B) + δ.

For an (ε, δ)-DP mechanism a flag needs one of the intervals to miss its probability, so a test that asserts "no
flag" fails spuriously with probability at most α (1e-6) whatever the seeds. The helpers do not import
``dpcore.audit`` on purpose: they check the mechanisms independently of the project's own audit code.
"""

from __future__ import annotations

import hashlib
import math
import time
from dataclasses import dataclass, field
from functools import cache

import numpy as np
from scipy.stats import binomtest

from dpcore.exceptions import InvalidParameterError

ALPHA = 1e-6
#: Decimals kept when values are compared for atoms (float round-off in post-processing is ~1e-13).
ATOM_DECIMALS = 8
#: At most this many selected events per pair (the strongest on the selection half).
MAX_SELECTED_EVENTS = 40
#: Quantile levels of the pooled selection sample tried as thresholds.
THRESHOLD_LEVELS = np.linspace(0.02, 0.98, 25)
MATRIX_FIELDS = ("covariance", "covariance_post")


# ======================================================================================================
# Pairs
# ======================================================================================================

@dataclass(frozen=True)
class Pair:
    """Neighbouring datasets D (``X``) and D′ (``Y``) with the settings of the releases compared on them."""

    name: str
    relation: str  # "replace" | "add_remove"
    X: np.ndarray
    Y: np.ndarray
    k: int
    epsilon: float = 1.0
    delta: float = 1e-5
    releases: int = 600  # per side
    n_select: int = 200  # per side, used only to choose events
    only: tuple[str, ...] = ()  # mechanism ids this pair is for (empty: every mechanism)

    @property
    def d(self) -> int:
        return self.X.shape[1]


def _ball_rows(n: int, d: int, seed: int, radius: float = 0.8) -> np.ndarray:
    """n fixed rows, uniformly spread in directions, norms in [0.2, radius]."""
    rng = np.random.default_rng(seed)
    G = rng.standard_normal((n, d))
    G /= np.linalg.norm(G, axis=1, keepdims=True)
    return G * rng.uniform(0.2, radius, size=(n, 1))


def _plane_rows(n: int, seed: int) -> np.ndarray:
    """n points in the x–y plane of R³, in general position, norms in [0.3, 0.9]."""
    rng = np.random.default_rng(seed)
    angle = rng.uniform(0.0, 2.0 * np.pi, n)
    r = rng.uniform(0.3, 0.9, n)
    return np.c_[r * np.cos(angle), r * np.sin(angle), np.zeros(n)]


def _line_rows(n: int, seed: int) -> np.ndarray:
    """n points on the e₁ axis of R³, |coordinate| in [0.3, 1]."""
    rng = np.random.default_rng(seed)
    X = np.zeros((n, 3))
    X[:, 0] = rng.uniform(0.3, 1.0, n) * rng.choice([-1.0, 1.0], n)
    return X


def replace_pairs() -> list[Pair]:
    """Replace-one neighbours (same n)."""
    base = _ball_rows(7, 3, seed=11)
    zero, unit = np.zeros((1, 3)), np.array([[0.0, 0.0, 1.0]])
    plane = _plane_rows(30, seed=12)
    plane2 = plane.copy()
    plane2[-1] = [0.0, 0.85, 0.0]  # another point of the same plane
    line = _line_rows(120, seed=13)
    line2 = line.copy()
    line2[-1] = [0.0, 0.5, 0.0]  # one point leaves the line
    tilt = plane.copy()
    tilt[-1, 2] = 1e-7 * np.linalg.norm(tilt[-1])  # 1e-7 off the plane: a member at ss_exact's tolerance 1e-4
    big = _line_rows(150, seed=14)
    big2 = big.copy()
    big2[-1] = [0.0, 0.0, 0.7]  # one point leaves the line
    return [
        # Support witness: Ĉ − C(D′) = noise − uuᵀ; impossible to be non-PD under D′ for PSD-noise mechanisms.
        Pair("zero-vs-unit", "replace", np.r_[base, zero], np.r_[base, unit], k=1),
        # Exact-subspace case: same plane, points spread differently inside it (leak class 2).
        Pair("plane-swap", "replace", plane, plane2, k=2, releases=300, n_select=100),
        # Line data for the subsample-and-aggregate mechanisms: ε = 2, δ = 1e-3 keep their block count t (22), and
        # so n, small. An extreme-ε pair also shows that mechanisms with a bounded proof domain refuse it.
        Pair("line-swap", "replace", line, line2, k=1, epsilon=2.0, delta=1e-3, releases=250, n_select=50),
        # Subsample-and-aggregate at the default privacy level (ε = 1, δ = 1e-5): t = 61 blocks need n ≥ 122 rows
        # for k = 1 (the pairs above have n = 8 and 30, so ss_approx only ran at ε = 2 before). Slow: only for it.
        Pair("line-swap-150", "replace", big, big2, k=1, releases=200, n_select=60, only=("ss_approx",)),
        # Issue 18 item 2 (review of 40144d4): with a tolerance > 0, ss_exact fitted the released plane to the member
        # rows, so a row 1e-7 off the plane moves the projector by a fixed multiple of its offset (1 vs 0).
        Pair("plane-tilt", "replace", plane, tilt, k=2, releases=300, n_select=100, only=("ss_exact",)),
    ]


def add_remove_pairs() -> list[Pair]:
    """Add/remove-one neighbours (n differs by one: n is private)."""
    e1 = np.array([[1.0, 0.0, 0.0]])
    base = _ball_rows(7, 3, seed=21)
    plane = _plane_rows(31, seed=22)
    return [
        # Leak class 1: 20 vs 21 copies of e₁; k = d makes every mechanism release d eigen-directions.
        Pair("copies-20-21", "add_remove", np.repeat(e1, 20, axis=0), np.repeat(e1, 21, axis=0), k=3),
        Pair("add-unit", "add_remove", base, np.r_[base, [[0.0, 0.0, 1.0]]], k=1),
        Pair("plane-add", "add_remove", plane[:-1], plane, k=2, releases=300, n_select=100),
    ]


def pairs_for(relation: str) -> list[Pair]:
    return replace_pairs() if relation == "replace" else add_remove_pairs()


# ======================================================================================================
# Sampling
# ======================================================================================================

def effective_k(mech, k: int, d: int) -> int | None:
    """k for this mechanism: < d where it needs that, and 1 where k > 1 would make the guarantee heuristic (PPCA
    uses an exact sampler for k = 1). None when no k gives a non-heuristic guarantee."""
    if mech.strict_k and k >= d:
        k = d - 1
    opts = mech.default_options()
    if mech.guarantee_for(k, opts) == "heuristic-mcmc":
        k = 1
    if mech.guarantee_for(k, opts) == "heuristic-mcmc":
        return None
    return k


def claimed_delta(mech, delta: float) -> float:
    return delta if mech.uses_delta else 0.0


def release(mech, X: np.ndarray, pair: Pair, k: int, seed: int, **options):
    return mech.release(X, k, pair.epsilon, claimed_delta(mech, pair.delta), neighbouring=pair.relation,
                        random_state=seed, allow_invalid=True, **options)


def _key(a) -> bytes | None:
    if a is None:
        return None
    return (np.round(np.asarray(a, dtype=float), ATOM_DECIMALS) + 0.0).tobytes()


@dataclass
class Table:
    """The released fields of R releases on one side, as features (see the module docstring)."""

    scalars: dict[str, np.ndarray] = field(default_factory=dict)  # name -> (R,) float, NaN = absent
    keys: dict[str, list] = field(default_factory=dict)  # name -> R hashable values (None = absent)
    fixed: dict[str, np.ndarray] = field(default_factory=dict)  # name -> (R,) bool
    reasons: list[str] = field(default_factory=list)

    @property
    def size(self) -> int:
        return len(self.reasons)

    def head(self, m: int) -> Table:
        return Table({n: v[:m] for n, v in self.scalars.items()}, {n: v[:m] for n, v in self.keys.items()},
                     {n: v[:m] for n, v in self.fixed.items()}, self.reasons[:m])

    def tail(self, m: int) -> Table:
        return Table({n: v[m:] for n, v in self.scalars.items()}, {n: v[m:] for n, v in self.keys.items()},
                     {n: v[m:] for n, v in self.fixed.items()}, self.reasons[m:])


def sample_release_table(mech, pair: Pair, side: str, k: int, seeds, **options) -> Table:
    """Run ``mech`` once per seed on D (side "D") or D′ (side "D'") and tabulate every released field."""
    data = pair.X if side == "D" else pair.Y
    d = pair.d
    rels = [release(mech, data, pair, k, int(s), **options) for s in seeds]
    R = len(rels)
    nan_m = np.full((d, d), np.nan)
    mats = {f: np.array([nan_m if getattr(r, f) is None else getattr(r, f) for r in rels]) for f in MATRIX_FIELDS}
    eig = np.full((R, d), np.nan)
    basis = np.full((R, d, k), np.nan)
    for i, r in enumerate(rels):
        if r.eigenvalues is not None:
            e = np.asarray(r.eigenvalues, dtype=float).ravel()[:d]
            eig[i, :e.size] = e
        if r.subspace is not None:
            basis[i] = r.subspace
    proj = np.einsum("rik,rjk->rij", basis, basis)
    bottom = np.array([r.status != "ok" for r in rels])
    t = Table(reasons=[r.reason for r in rels])
    iu = np.triu_indices(d)
    Cs = {"D": pair.X.T @ pair.X, "D'": pair.Y.T @ pair.Y}
    for f, M in mats.items():
        present = ~np.isnan(M).any(axis=(1, 2))
        ev = np.full((R, d), np.nan)
        if present.any():
            ev[present] = np.linalg.eigvalsh(M[present])
        for j in range(d):
            t.scalars[f"{f}.eig[{j}]"] = ev[:, j]
        t.scalars[f"{f}.trace"] = np.trace(M, axis1=1, axis2=2)
        for i, j in zip(*iu):
            t.scalars[f"{f}[{i},{j}]"] = M[:, i, j]
        for name, C in Cs.items():
            diff = np.full((R, d), np.nan)
            if present.any():
                diff[present] = np.linalg.eigvalsh(M[present] - C)
            t.fixed[f"{f} − C({name}) not PD"] = present & (diff[:, 0] <= 0)
            t.fixed[f"{f} − C({name}) not ND"] = present & (diff[:, -1] >= 0)
        t.keys[f] = [_key(m) if p else None for m, p in zip(M, present)]
    for j in range(d):
        t.scalars[f"eigenvalues[{j}]"] = eig[:, j]
    for i, j in zip(*iu):
        t.scalars[f"projector[{i},{j}]"] = proj[:, i, j]
    for i in range(d):
        for j in range(k):
            t.scalars[f"basis[{i},{j}]"] = basis[:, i, j]
    t.keys["eigenvalues"] = [_key(r.eigenvalues) for r in rels]
    t.keys["projector"] = [None if r.subspace is None else _key(r.subspace @ r.subspace.T) for r in rels]
    t.keys["basis"] = [_key(r.subspace) for r in rels]
    t.keys["reason"] = [r.reason for r in rels]
    t.keys["status"] = [r.status for r in rels]
    t.fixed["status = ⊥"] = bottom
    return t


# ======================================================================================================
# Detection
# ======================================================================================================

@cache
def cp_interval(successes: int, trials: int, alpha: float) -> tuple[float, float]:
    """Exact (Clopper–Pearson) two-sided interval at confidence 1 − alpha."""
    if trials == 0:
        return 0.0, 1.0
    ci = binomtest(successes, trials).proportion_ci(confidence_level=1.0 - alpha, method="exact")
    return float(ci.low), float(ci.high)


@dataclass(frozen=True)
class Event:
    """An event over one release: ``fn(table) -> (R,) bool``."""

    name: str
    fn: object  # Callable[[Table], np.ndarray]

    def __call__(self, t: Table) -> np.ndarray:
        return np.asarray(self.fn(t), dtype=bool)


@dataclass(frozen=True)
class Flag:
    event: str
    more_likely_under: str
    counts: tuple[int, int, int, int]  # (k_A, n_A, k_B, n_B)
    bound: float  # CP-lower(P_A) − e^ε·CP-upper(P_B) − δ > 0

    def __str__(self) -> str:
        kA, nA, kB, nB = self.counts
        other = "D'" if self.more_likely_under == "D" else "D"
        return (f"{self.event}: {kA}/{nA} under {self.more_likely_under} vs {kB}/{nB} under {other} "
                f"(CP margin {self.bound:.3g})")


@dataclass
class Report:
    flags: list[Flag]
    n_fixed: int
    n_selected: int

    @property
    def leak(self) -> bool:
        return bool(self.flags)

    def __str__(self) -> str:
        head = f"{len(self.flags)} flagged of {self.n_fixed} fixed + {self.n_selected} selected events"
        return head + "".join(f"\n    {f}" for f in self.flags[:8])


def _atom_value_event(feature: str, value: float) -> Event:
    return Event(f"{feature} == {value:.10g} (atom)",
                 lambda t: np.round(t.scalars[feature], ATOM_DECIMALS) == value)


def _atom_key_event(feature: str, value) -> Event:
    shown = value if isinstance(value, str) else f"<{feature} {hashlib.blake2b(value, digest_size=6).hexdigest()}>"
    if isinstance(shown, str) and len(shown) > 70:
        shown = shown[:67] + "..."
    return Event(f"{feature} == {shown!r} (atom)", lambda t: np.array([v == value for v in t.keys[feature]]))


def _threshold_event(feature: str, thr: float, upper: bool) -> Event:
    if upper:
        return Event(f"{feature} >= {thr:.6g}", lambda t: t.scalars[feature] >= thr)
    return Event(f"{feature} <= {thr:.6g}", lambda t: t.scalars[feature] <= thr)


def _repeats(values) -> dict:
    counts: dict = {}
    for v in values:
        if v is not None and not (isinstance(v, float) and math.isnan(v)):
            counts[v] = counts.get(v, 0) + 1
    return {v: c for v, c in counts.items() if c >= 2}


def select_events(a: Table, b: Table, epsilon: float, delta: float) -> list[Event]:
    """Atoms and thresholds that look distinguishing on the selection halves ``a`` (D) and ``b`` (D′)."""
    ee = math.exp(epsilon)
    candidates: list[tuple[float, Event]] = []

    def consider(ev: Event) -> None:
        pa, pb = ev(a).mean(), ev(b).mean()
        score = max(pa - ee * pb - delta, pb - ee * pa - delta)
        if score > 0:
            candidates.append((score, ev))

    for name, vals in a.scalars.items():
        va, vb = np.round(vals, ATOM_DECIMALS), np.round(b.scalars[name], ATOM_DECIMALS)
        for v in sorted(set(_repeats(va.tolist())) | set(_repeats(vb.tolist()))):
            consider(_atom_value_event(name, v))
        pooled = np.concatenate([vals, b.scalars[name]])
        pooled = pooled[~np.isnan(pooled)]
        if pooled.size < 10 or np.ptp(pooled) == 0:
            continue
        best: dict[int, tuple[float, Event]] = {}
        xa, xb = vals[~np.isnan(vals)], b.scalars[name][~np.isnan(b.scalars[name])]
        for thr in np.unique(np.quantile(pooled, THRESHOLD_LEVELS)):
            for upper in (True, False):
                pa = ((xa >= thr) if upper else (xa <= thr)).sum() / a.size
                pb = ((xb >= thr) if upper else (xb <= thr)).sum() / b.size
                for orient, s in ((0, pa - ee * pb - delta), (1, pb - ee * pa - delta)):
                    if s > 0 and s > best.get(orient, (0.0, None))[0]:
                        best[orient] = (s, _threshold_event(name, float(thr), upper))
        candidates.extend(best.values())
    for name, vals in a.keys.items():
        for v in sorted(set(_repeats(vals)) | set(_repeats(b.keys[name]))):
            consider(_atom_key_event(name, v))
    candidates.sort(key=lambda c: -c[0])
    seen: set[str] = set()
    out = []
    for _, ev in candidates:
        if ev.name not in seen:
            seen.add(ev.name)
            out.append(ev)
    return out[:MAX_SELECTED_EVENTS]


def _test(events: list[Event], a: Table, b: Table, epsilon: float, delta: float, alpha: float) -> list[Flag]:
    flags = []
    if not events:
        return flags
    level = alpha / (2 * len(events))
    ee = math.exp(epsilon)
    for ev in events:
        ka, kb = int(ev(a).sum()), int(ev(b).sum())
        na, nb = a.size, b.size
        for (k1, n1, k2, n2, under) in ((ka, na, kb, nb, "D"), (kb, nb, ka, na, "D'")):
            if k1 / n1 <= ee * k2 / n2 + delta:  # cannot be flagged: lower ≤ p̂₁, upper ≥ p̂₂
                continue
            lo = cp_interval(k1, n1, level)[0]
            hi = cp_interval(k2, n2, level)[1]
            margin = lo - (ee * hi + delta)
            if margin > 0:
                flags.append(Flag(ev.name, under, (k1, n1, k2, n2), margin))
    return flags


def detect(a: Table, b: Table, epsilon: float, delta: float, n_select: int, alpha: float = ALPHA) -> Report:
    """Flags of the fixed events (all releases) and of the selected events (held-out releases)."""
    fixed = [Event(name, (lambda t, name=name: t.fixed[name])) for name in a.fixed]
    flags = _test(fixed, a, b, epsilon, delta, alpha / 2)
    selected = select_events(a.head(n_select), b.head(n_select), epsilon, delta) if n_select > 0 else []
    flags += _test(selected, a.tail(n_select), b.tail(n_select), epsilon, delta, alpha / 2)
    flags.sort(key=lambda f: -f.bound)
    return Report(flags, len(fixed), len(selected))


@dataclass
class PairResult:
    pair: Pair
    k: int
    report: Report | None  # None: the pair does not apply (reason in ``skipped``)
    skipped: str = ""
    seconds: float = 0.0


def check_pair(mech, pair: Pair, **options) -> PairResult:
    """Sample both sides of ``pair`` and run the detector."""
    if pair.only and mech.id not in pair.only:
        return PairResult(pair, pair.k, None, f"pair only for {', '.join(pair.only)}")
    k = effective_k(mech, pair.k, pair.d)
    if k is None:
        return PairResult(pair, pair.k, None, "no k with a non-heuristic guarantee")
    t0 = time.perf_counter()
    seeds_a = np.arange(pair.releases)
    seeds_b = 1_000_000 + np.arange(pair.releases)
    try:
        a = sample_release_table(mech, pair, "D", k, seeds_a, **options)
    except InvalidParameterError as exc:  # settings outside what the mechanism accepts (size, domain)
        return PairResult(pair, k, None, f"not applicable: {exc}")
    b = sample_release_table(mech, pair, "D'", k, seeds_b, **options)
    eps = pair.epsilon
    report = detect(a, b, eps, claimed_delta(mech, pair.delta), pair.n_select)
    return PairResult(pair, k, report, seconds=time.perf_counter() - t0)
