"""Choosing an event on the selection half of the releases and counting it on the held-out half.

For each orientation (S likelier under D, or under D′) every column of the active event families proposes its best
event on the selection half; the candidates are ranked (events that already refute the claim first, by family
priority, then by strength) and the winner is counted once on the held-out half. Only that single count per
orientation enters the reported bounds, so the search itself cannot flatter the result.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .bounds import cp_lower, cp_one_sided, cp_upper, delta_from_bounds, epsilon_from_bounds
from .events import EVENT_FAMILIES, Column, Event, atom_tolerance, effective_threshold

__all__ = ["Candidate", "ColumnStore", "Finding", "best_event", "evaluate"]

SIDE_NAMES = ("D", "D′")
#: Thresholds tried per column: quantiles of the pooled selection values plus each side's extremes.
_QUANTILES = np.linspace(0.0, 1.0, 513)
#: Exact values tried per column: the most repeated ones.
_MAX_ATOMS = 16
_PROJECTOR_TOL = 1e-8


class ColumnStore:
    """Per-side values of every column (one number per release, in release order)."""

    def __init__(self) -> None:
        self.columns: dict[str, Column] = {}
        self._parts: tuple[dict[str, list[np.ndarray]], dict[str, list[np.ndarray]]] = ({}, {})
        self._values: tuple[dict[str, np.ndarray], dict[str, np.ndarray]] | None = None
        self.derived: list[ColumnStore] = []  # the same releases transformed into noise mutants' (power check)
        self.refusal: BaseException | None = None  # set when every release on both sides was the same refusal

    def add(self, side: int, extracted: list[tuple[Column, np.ndarray]]) -> None:
        for col, values in extracted:
            self.columns.setdefault(col.key, col)
            self._parts[side].setdefault(col.key, []).append(values)
        self._values = None

    def values(self, side: int, key: str, m: int | None = None) -> np.ndarray:
        if self._values is None:
            self._values = tuple({k: np.concatenate(v) for k, v in parts.items()} for parts in self._parts)
        v = self._values[side][key]
        return v if m is None else v[:m]

    def projectors(self, side: int, m: int) -> np.ndarray | None:
        """(m, entries) projector upper triangles, when the atom family collected them."""
        keys = sorted(k for k in self.columns if k.startswith("atom:projector:"))
        if not keys:
            return None
        return np.stack([self.values(side, k, m) for k in keys], axis=1)


@dataclass
class Candidate:
    """The best event of one column on the selection half, with its selection-half bounds."""

    event: Event
    hits: tuple[int, int]
    n: tuple[int, int]
    epsilon_lb: float
    delta_lb: float
    structural: bool
    violates: bool
    priority: int

    def key(self) -> tuple:
        strength = self.delta_lb if self.violates else self.epsilon_lb
        return (self.violates, -self.priority if self.violates else 0, strength, -self.priority,
                self.hits[0] / max(self.n[0], 1))


@dataclass
class Finding:
    """One orientation's event counted on the held-out half, with the bounds it gives."""

    event: Event
    candidate: Candidate
    held_out_hits: tuple[int, int]
    held_out_n: tuple[int, int]
    p_lower: float
    q_upper: float
    epsilon_lb: float
    epsilon_estimate: float
    delta_lb: float
    structural: bool
    violated: bool

    def as_dict(self) -> dict:
        o = self.event.orientation
        col = self.event.column
        return {
            "orientation": f"{SIDE_NAMES[o]} vs {SIDE_NAMES[1 - o]}", "numerator": SIDE_NAMES[o],
            "denominator": SIDE_NAMES[1 - o], "statistic": col.label, "family": col.family, "field": col.field,
            "direction": self.event.kind, "threshold": self.event.threshold,
            "selection_bound": self.candidate.epsilon_lb, "selection_hits": list(self.candidate.hits),
            "selection_n": list(self.candidate.n), "held_out_hits": list(self.held_out_hits),
            "held_out_n": list(self.held_out_n), "p_numerator_lower": self.p_lower,
            "p_denominator_upper": self.q_upper, "epsilon_lower_bound": self.epsilon_lb,
            "epsilon_estimate": self.epsilon_estimate, "delta_lower_bound": self.delta_lb,
            "structural": self.structural, "violated": self.violated,
        }


def _same_projector(num_proj: np.ndarray | None, hit: np.ndarray, den_proj: np.ndarray | None) -> bool:
    """True when some release of the other side has the same projector as a hit release of this side."""
    if num_proj is None or den_proj is None or not hit.any():
        return False
    targets = np.unique(np.round(num_proj[hit], 10), axis=0)[:8]
    den = den_proj[np.all(np.isfinite(den_proj), axis=1)]
    return any(bool(np.any(np.max(np.abs(den - t), axis=1) <= _PROJECTOR_TOL)) for t in targets)


def _guard_ok(col: Column, event: Event, num: np.ndarray, num_proj: np.ndarray | None,
              den_proj: np.ndarray | None) -> bool:
    if col.guard is None:
        return True
    if col.guard == "same_projector":
        return _same_projector(num_proj, event.hits(num), den_proj)
    raise ValueError(f"unknown guard {col.guard!r}")  # pragma: no cover - programming error


def _threshold_candidate(col: Column, o: int, a: np.ndarray, b: np.ndarray, epsilon: float, delta: float,
                         level: float) -> Candidate:
    na, nb = a.size, b.size
    a = np.where(np.isnan(a), -np.inf, a)
    b = np.where(np.isnan(b), -np.inf, b)
    pooled = np.concatenate([a, b])
    finite = pooled[np.isfinite(pooled)]
    cands = [np.array([-np.inf])]
    if finite.size:
        cands.append(np.quantile(finite, _QUANTILES))
    for side in (a, b):
        f = side[np.isfinite(side)]
        if f.size:
            lo, hi = f.min(), f.max()
            cands.append(np.array([lo, hi, np.nextafter(lo, -np.inf), np.nextafter(hi, np.inf)]))
    t = np.unique(np.concatenate(cands))
    cut = effective_threshold(t)
    le_a = np.searchsorted(np.sort(a), cut, side="right")
    le_b = np.searchsorted(np.sort(b), cut, side="right")
    best: tuple | None = None
    for kind, ka, kb in (("<=", le_a, le_b), (">", na - le_a, nb - le_b)):
        eps = epsilon_from_bounds(cp_lower(ka, na, level), cp_upper(kb, nb, level), delta)
        score = eps + 1e-9 * ka / na  # prefer the larger P_a on ties (more robust on the held-out half)
        i = int(np.argmax(score))
        if best is None or score[i] > best[0]:
            best = (float(score[i]), kind, float(t[i]), int(ka[i]), int(kb[i]))
    _, kind, thr, ka, kb = best
    return _candidate(Event(col, o, kind, thr), (ka, kb), (na, nb), epsilon, delta, level, structural=False)


def _atom_values(a: np.ndarray) -> np.ndarray:
    """Values that occur at least twice in ``a`` (within rounding), most frequent first."""
    f = np.sort(a[np.isfinite(a)])
    if f.size < 2:
        return np.empty(0)
    same = np.diff(f) <= atom_tolerance(f[1:])
    starts = np.flatnonzero(np.r_[True, ~same])
    lengths = np.diff(np.r_[starts, f.size])
    order = np.argsort(-lengths, kind="stable")
    keep = order[lengths[order] >= 2][:_MAX_ATOMS]
    return f[starts[keep] + lengths[keep] // 2]


def _atom_candidates(col: Column, o: int, a: np.ndarray, b: np.ndarray, epsilon: float, delta: float, level: float,
                     num_proj: np.ndarray | None, den_proj: np.ndarray | None) -> list[Candidate]:
    """Exact-value events on the values that repeat on the numerator side.

    An atom counts as a structural witness only when the point mass has *moved*: the other side never shows this
    value but has a repeated value of its own that this side never shows (e.g. eigenvalues clipped at n − 1 under
    D and at n under D′). Point masses at a shared place (eigenvalues clipped at 0 on both sides) differ only in
    size, which a ratio of frequencies already measures, so they never count as structural.
    """
    values = _atom_values(a)
    if values.size == 0:
        return []
    moved = col.structural and any(Event(col, o, "==", float(w)).count(a) == 0 for w in _atom_values(b))
    out = []
    for v in values:
        ev = Event(col, o, "==", float(v))
        ka, kb = ev.count(a), ev.count(b)
        structural = moved and kb == 0 and _guard_ok(col, ev, a, num_proj, den_proj)
        out.append(_candidate(ev, (ka, kb), (a.size, b.size), epsilon, delta, level, structural))
    return out


def _candidate(ev: Event, hits: tuple[int, int], n: tuple[int, int], epsilon: float, delta: float, level: float,
               structural: bool) -> Candidate:
    p_lo = float(cp_lower(hits[0], n[0], level))
    q_hi = float(cp_upper(hits[1], n[1], level))
    eps_lb = float(epsilon_from_bounds(p_lo, q_hi, delta))
    delta_lb = p_lo if structural else float(delta_from_bounds(p_lo, q_hi, epsilon))
    violates = eps_lb > epsilon or delta_lb > delta
    return Candidate(ev, hits, n, eps_lb, delta_lb, structural, violates, EVENT_FAMILIES[ev.column.family].priority)


def best_event(store: ColumnStore, keys: list[str], o: int, half: int, epsilon: float, delta: float,
               level: float) -> Candidate | None:
    """The best candidate event for orientation ``o`` (numerator side o) on the first ``half`` releases."""
    num_proj, den_proj = store.projectors(o, half), store.projectors(1 - o, half)
    cands: list[Candidate] = []
    for key in keys:
        col = store.columns[key]
        if col.orientation is not None and col.orientation != o:
            continue
        a, b = store.values(o, key, half), store.values(1 - o, key, half)
        if not (np.isfinite(a).any() or np.isfinite(b).any()):
            continue
        selection = EVENT_FAMILIES[col.family].selection
        if selection == "fixed":
            if not np.isfinite(b).any():  # the other side never released this field: "impossible there" is vacuous
                continue
            ev = Event(col, o, "<=", 0.0, bottom_hits=False)
            ka, kb = ev.count(a), ev.count(b)
            cands.append(_candidate(ev, (ka, kb), (half, half), epsilon, delta, level, col.structural and kb == 0))
        elif selection == "atom":
            cands.extend(_atom_candidates(col, o, a, b, epsilon, delta, level, num_proj, den_proj))
        else:
            cands.append(_threshold_candidate(col, o, a, b, epsilon, delta, level))
    return choose(cands)


def choose(cands: list[Candidate]) -> Candidate | None:
    """The candidate to count on the held-out half.

    Among events that already refute the claim on the selection half, the family with the highest priority
    (support, quadratic, alignment, …) is preferred unless another family's event is more than twice as strong
    (δ bound at the claimed ε); otherwise the event with the largest ε bound wins.
    """
    if not cands:
        return None
    violating = [c for c in cands if c.violates]
    if violating:
        top = max(c.delta_lb for c in violating)
        strong = [c for c in violating if c.delta_lb >= 0.5 * top]
        return max(strong, key=lambda c: (-c.priority, c.delta_lb, c.epsilon_lb))
    return max(cands, key=lambda c: (c.epsilon_lb, -c.priority, c.hits[0] / max(c.n[0], 1)))


def evaluate(store: ColumnStore, cand: Candidate, half: int, m: int, epsilon: float, delta: float,
             level: float) -> Finding:
    """Count the chosen event on the held-out releases [half, m) of both sides and bound ε and δ."""
    ev = cand.event
    o = ev.orientation
    key = ev.column.key
    num, den = store.values(o, key, m)[half:], store.values(1 - o, key, m)[half:]
    kn, kd = ev.count(num), ev.count(den)
    nn, nd = num.size, den.size
    p_lo, _ = cp_one_sided(kn, nn, level)
    _, q_hi = cp_one_sided(kd, nd, level)
    eps_lb = float(epsilon_from_bounds(p_lo, q_hi, delta))
    structural = False
    if cand.structural and kd == 0:
        num_all, den_all = store.projectors(o, m), store.projectors(1 - o, m)
        structural = _guard_ok(ev.column, ev, store.values(o, key, m), num_all, den_all)
    delta_lb = p_lo if structural else float(delta_from_bounds(p_lo, q_hi, epsilon))
    est = math.log(kn / nn) - math.log(kd / nd) if kn > 0 and kd > 0 else (math.inf if kn > 0 else 0.0)
    return Finding(ev, cand, (kn, kd), (nn, nd), p_lo, q_hi, eps_lb, max(est, 0.0), delta_lb, structural,
                   eps_lb > epsilon or delta_lb > delta)
