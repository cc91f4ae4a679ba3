"""Neighbouring datasets for audits: built-in constructions for both relations, and checked user pairs.

Under **replace-one** D and D′ have the same number of rows and differ in one row; under **add/remove** D′ has one
row more than D (n itself is then private). Every built-in construction exists for both relations.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core._validation import NEIGHBOURING_RELATIONS, check_choice, check_int, check_neighbouring
from ..data.prepared import PreparedData
from ..exceptions import DataError, InvalidParameterError
from ..vocabulary import Neighbouring

__all__ = [
    "ALL_CONSTRUCTION_NAMES",
    "CONSTRUCTIONS",
    "NEIGHBOUR_CONSTRUCTIONS",
    "Construction",
    "NeighbourPair",
    "default_base_rows",
    "make_neighbours",
]

_GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0


@dataclass(frozen=True, eq=False)
class NeighbourPair:
    """Two neighbouring datasets, their relation, and the unit direction ``canary`` in which their C differ most.

    For the canary constructions C(D′) − C(D) = uuᵀ with u = ``canary``. ``invariant`` names a released field that
    the construction keeps equal for a mechanism's private selection (``"projector"``: both datasets select the
    same subspace), which is what the determinism probe relies on; None when there is none.
    """

    name: str
    description: str
    D0: PreparedData
    D1: PreparedData
    neighbouring: str
    canary: np.ndarray
    invariant: str | None = None
    #: Per side, a refusal every release there is (e.g. the file failed to load in a pipeline audit), else None;
    #: a refused side's data is a stand-in (the other side's) that no release reads.
    refused: tuple = (None, None)
    #: False for a pair of user files: n is not shown (under add/remove it is private)
    public_n: bool = True

    def as_dict(self) -> dict:
        return {"name": self.name, "description": self.description, "neighbouring": self.neighbouring,
                "n": [D.n if r is None and self.public_n else None for D, r in zip((self.D0, self.D1), self.refused)],
                "d": self.D0.d, "canary": [float(x) for x in self.canary],
                "invariant": self.invariant}


@dataclass(frozen=True)
class Construction:
    """A built-in neighbour construction: ``build(d, n, relation)`` returns the rows (X₀ of D, X₁ of D′)."""

    name: str
    description: str
    default_relation: str
    build: Callable[[int, int, str], tuple[np.ndarray, np.ndarray]]
    invariant: str | None = None
    #: False for a targeted pair that "every construction" (``neighbours="all"``) leaves out: it is chosen by name.
    in_all: bool = True


def default_base_rows(d: int = 3, n: int = 30) -> np.ndarray:
    """The deterministic (n−1)×d base rows used by the canary constructions (the n-th row is the canary slot).

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


def _with_canary(base: np.ndarray, u: np.ndarray, relation: str) -> tuple[np.ndarray, np.ndarray]:
    """D′ = base + {u}; D = base + {0} (replace-one) or base alone (add/remove)."""
    X1 = np.vstack([base, u[None, :]])
    X0 = base if relation == Neighbouring.ADD_REMOVE else np.vstack([base, np.zeros((1, base.shape[1]))])
    return X0, X1


def _zero_vs_unit(d: int, n: int, relation: str) -> tuple[np.ndarray, np.ndarray]:
    return _with_canary(default_base_rows(d, n), np.eye(d)[0], relation)


def _eigvec(which: int) -> Callable[[int, int, str], tuple[np.ndarray, np.ndarray]]:
    def build(d: int, n: int, relation: str) -> tuple[np.ndarray, np.ndarray]:
        base = default_base_rows(d, n)
        u = np.linalg.eigh(base.T @ base)[1][:, which]
        return _with_canary(base, u / np.linalg.norm(u), relation)
    return build


def _unit_swap(d: int, n: int, relation: str) -> tuple[np.ndarray, np.ndarray]:
    """Replace-one: the last row is e₁ in D and e₂ in D′ (C changes by e₂e₂ᵀ − e₁e₁ᵀ, the full L2 sensitivity √2 of
    the upper triangle); add/remove: D′ adds e₂."""
    base = default_base_rows(d, n)
    e1, e2 = np.eye(d)[0], np.eye(d)[1]
    X1 = np.vstack([base, e2[None, :]])
    X0 = base if relation == Neighbouring.ADD_REMOVE else np.vstack([base, e1[None, :]])
    return X0, X1


def _unit_swap_zeros(d: int, n: int, relation: str) -> tuple[np.ndarray, np.ndarray]:
    """Replace-one: every row is 0 but the last, e₁ in D and e₂ in D′; add/remove: D′ adds e₂ to n − 1 zero rows.
    Whatever pairs the rows, the moved row's partner is a zero row: g-DPPCA's attaining pair (docs/g_dppca.md)."""
    d = check_int(d, "d (audit data dimension)", 2, 50)
    n = check_int(n, "n (audit data rows)", 2, 100_000)
    e1, e2 = np.eye(d)[0], np.eye(d)[1]
    base = np.zeros((n - 1, d))
    X1 = np.vstack([base, e2[None, :]])
    X0 = base if relation == Neighbouring.ADD_REMOVE else np.vstack([base, e1[None, :]])
    return X0, X1


def _all_entries(d: int, n: int, relation: str) -> tuple[np.ndarray, np.ndarray]:
    return _with_canary(default_base_rows(d, n), np.full(d, 1.0 / math.sqrt(d)), relation)


def _copies(d: int, n: int, relation: str) -> tuple[np.ndarray, np.ndarray]:
    d = check_int(d, "d (audit data dimension)", 1, 50)
    n = check_int(n, "n (audit data rows)", 2, 100_000)
    e1 = np.eye(d)[0]
    return _with_canary(np.tile(e1, (n - 1, 1)), e1, relation)


def _in_plane(d: int, n: int, relation: str) -> tuple[np.ndarray, np.ndarray]:
    d = check_int(d, "d (audit data dimension)", 2, 50)
    n = check_int(n, "n (audit data rows)", 4, 100_000)

    def point(angle: float, radius: float) -> np.ndarray:
        x = np.zeros(d)
        x[0], x[1] = radius * math.cos(angle), radius * math.sin(angle)
        return x

    i = np.arange(n)
    radii = 0.5 + 0.5 * ((i * _GOLDEN) % 1.0)
    rows = np.array([point(math.pi * (j + 0.5) / (n + 1), radii[j]) for j in range(n)])
    new = point(math.pi * (n + 0.5) / (n + 1), 0.9)  # a new angle: no two points on one line through 0
    if relation == Neighbouring.ADD_REMOVE:
        return rows[:-1], np.vstack([rows[:-1], new[None, :]])
    X1 = rows.copy()
    X1[-1] = new
    return rows, X1


_CONSTRUCTIONS: tuple[Construction, ...] = (
    Construction("zero_vs_unit",
                 "The last row is 0 in D and a unit vector u = e₁ in D′; in the default data e₁ is the second "
                 "principal axis, just below the top one, so the extra row flips the top eigenvector.",
                 Neighbouring.REPLACE, _zero_vs_unit),
    Construction("top_eigvec", "The last row is 0 in D and a unit row along the top eigenvector of the other rows "
                 "in D′.", Neighbouring.REPLACE, _eigvec(-1)),
    Construction("smallest_eigvec", "The last row is 0 in D and a unit row along the smallest eigenvector of the "
                 "other rows in D′.", Neighbouring.REPLACE, _eigvec(0)),
    Construction("unit_swap",
                 "The last row is e₁ in D and e₂ in D′ (add/remove: D′ adds e₂): C changes by e₂e₂ᵀ − e₁e₁ᵀ, the "
                 "largest change one record can make to the upper triangle in L2 (√2), which is what additive "
                 "Gaussian mechanisms are calibrated to.", Neighbouring.REPLACE, _unit_swap),
    Construction("all_entries",
                 "The last row is 0 in D and u = (1, …, 1)/√d in D′: every entry of C changes (by 1/d), so an "
                 "entry released without noise, at any index, differs between the two.", Neighbouring.REPLACE,
                 _all_entries),
    Construction("copies_add_remove",
                 "D holds n − 1 copies of e₁ and D′ holds n copies (add/remove; under replace-one D has a zero row "
                 "instead). A release that uses the exact n, e.g. eigenvalues clipped to [0, n], shows a point mass "
                 "at n − 1 under D that D′ never produces.", Neighbouring.ADD_REMOVE, _copies),
    Construction("in_plane",
                 "n points of different directions in the plane span(e₁, e₂); D′ moves one point to a new direction "
                 "inside the same plane (add/remove: D′ adds it). An exact subspace selection picks the same plane "
                 "from both, so anything else the release shows about the points is a leak.",
                 Neighbouring.REPLACE, _in_plane, invariant="projector"),
    Construction("unit_swap_zeros",
                 "Every row is 0 except the last, which is e₁ in D and e₂ in D′ (add/remove: D′ adds e₂). Whatever "
                 "pairs the rows, the moved row is paired with a zero row, so a statistic of pairs (g-DPPCA's "
                 "Kendall's tau) moves by its full sensitivity √2/m: the pair that shows g-DPPCA's 2/n variant "
                 "under-noised. Chosen by name only (not one of every construction).",
                 Neighbouring.REPLACE, _unit_swap_zeros, in_all=False),
)

#: Built-in constructions by name.
CONSTRUCTIONS: dict[str, Construction] = {c.name: c for c in _CONSTRUCTIONS}
#: The constructions "every construction" (``neighbours="all"``) audits: all but the targeted ones.
ALL_CONSTRUCTION_NAMES: tuple[str, ...] = tuple(c.name for c in _CONSTRUCTIONS if c.in_all)
#: Name → description in plain words (CLI choices, dashboard help).
NEIGHBOUR_CONSTRUCTIONS: dict[str, str] = {c.name: c.description for c in _CONSTRUCTIONS}


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


def _relation_of(D0: PreparedData, D1: PreparedData) -> str:
    """'replace' or 'add_remove', after checking that D and D′ really are neighbours."""
    if D0.d != D1.d:
        raise DataError(f"the two datasets must have the same number of features; got {D0.d} and {D1.d}.")
    X0, X1 = D0.X, D1.X
    if D0.n == D1.n:
        differ = int(np.count_nonzero(np.any(X0 != X1, axis=1)))
        if differ > 1:
            raise DataError(f"D and D′ differ in {differ} rows; replace-one neighbours differ in exactly one row.")
        return Neighbouring.REPLACE
    if abs(D0.n - D1.n) == 1:
        small, big = (X0, X1) if D0.n < D1.n else (X1, X0)
        same = np.all(small == big[:-1], axis=1)
        first = int(np.argmin(same)) if not same.all() else small.shape[0]
        if not np.array_equal(small[first:], big[first + 1:]):
            raise DataError("D and D′ must differ by adding or removing one row (all other rows in the same order).")
        return Neighbouring.ADD_REMOVE
    raise DataError(f"D has {D0.n} rows and D′ has {D1.n}; neighbours differ by at most one row.")


def _canary(D0: PreparedData, D1: PreparedData) -> np.ndarray:
    w, V = np.linalg.eigh(D1.C - D0.C)
    u = V[:, int(np.argmax(np.abs(w)))] if np.abs(w).max() > 0 else np.eye(D0.d)[0]
    return np.asarray(u, dtype=float)


def _user_pair(pair: Any, neighbouring: str | None, invariant: str | None) -> NeighbourPair:
    if not (isinstance(pair, (tuple, list)) and len(pair) == 2):
        raise InvalidParameterError(
            "neighbours must be one of " + ", ".join(map(repr, NEIGHBOUR_CONSTRUCTIONS))
            + " or a pair (D, D′) of PreparedData."
        )
    D0, D1 = _as_prepared(pair[0], "D"), _as_prepared(pair[1], "D′")
    relation = _relation_of(D0, D1)
    if neighbouring is not None and check_neighbouring(neighbouring) != relation:
        raise DataError(f"the supplied datasets are {relation!r} neighbours, not {neighbouring!r}.")
    return NeighbourPair("custom", "user-supplied pair of neighbouring datasets", D0, D1, relation, _canary(D0, D1),
                         invariant)


def make_neighbours(
    neighbours: str | tuple = "zero_vs_unit",
    *,
    d: int = 3,
    n: int = 30,
    neighbouring: str | None = None,
    invariant: str | None = None,
) -> NeighbourPair:
    """A built-in construction (:data:`NEIGHBOUR_CONSTRUCTIONS`) with D′ of ``n`` rows and ``d`` features, or a
    checked user pair (D, D′).

    ``neighbouring`` is "replace" or "add_remove"; None takes the construction's own relation (add/remove for
    ``copies_add_remove``, replace-one for the others) or, for a user pair, the relation the two datasets have.
    For the canary constructions C(D′) = C(D) + uuᵀ under both relations. ``invariant`` overrides the field a
    user pair keeps equal (see :class:`NeighbourPair`).
    """
    if isinstance(neighbours, NeighbourPair):  # e.g. a pair of files (dpcore.audit.files.file_pair)
        if neighbouring is not None and check_neighbouring(neighbouring) != neighbours.neighbouring:
            raise DataError(f"the supplied pair is {neighbours.neighbouring!r} neighbours, not {neighbouring!r}.")
        return neighbours
    if not isinstance(neighbours, str):
        return _user_pair(neighbours, neighbouring, invariant)
    name = check_choice(neighbours, "neighbours", NEIGHBOUR_CONSTRUCTIONS)
    spec = CONSTRUCTIONS[name]
    relation = spec.default_relation if neighbouring is None else check_neighbouring(neighbouring)
    if relation not in NEIGHBOURING_RELATIONS:  # pragma: no cover - constructions declare valid relations
        raise InvalidParameterError(f"unknown relation {relation!r}")
    X0, X1 = spec.build(d, n, relation)
    D0 = PreparedData.from_unit_rows(X0, name=f"audit D ({name})")
    D1 = PreparedData.from_unit_rows(X1, name=f"audit D′ ({name})")
    return NeighbourPair(name, spec.description, D0, D1, relation, _canary(D0, D1),
                         spec.invariant if invariant is None else invariant)
