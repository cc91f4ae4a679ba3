"""The registry of statistics and events an audit can look at.

An *event family* reads one or more released fields and turns every release into scalar *columns* (one number
per release, e.g. uᵀĈu or the largest released eigenvalue). The event search (:mod:`dpcore.audit.search`) then
picks, on the selection half of the releases, an event on one column: a threshold ("≤ t" or "> t"), an exact value
("= v", an *atom*), a fixed event (the support event), or a threshold on a trained classifier's score.

Events of a *structural* family can be impossible under one neighbour for a stated reason (an output outside the
support of M(D′), an exact value M(D′) never produces); they then bound δ directly instead of through a ratio of
frequencies, which is what refutes claims with a large ε.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..vocabulary import ReleaseStatus
from .neighbours import NeighbourPair

__all__ = [
    "AUTO_FAMILIES",
    "EVENT_FAMILIES",
    "FIELDS",
    "STATISTICS",
    "STATUS_CODES",
    "Column",
    "Event",
    "EventFamily",
    "ReleaseBatch",
    "atom_tolerance",
    "effective_threshold",
    "extract_columns",
    "released_text",
    "text_hash",
]

#: Released fields an audit can read, with what they are.
FIELDS: dict[str, str] = {
    "auto": "every field the mechanism releases",
    "covariance": "the raw released covariance Ĉ",
    "covariance_post": "the post-processed covariance (positive semi-definite, eigenvalues clipped)",
    "eigenvalues": "the released eigenvalue estimates",
    "subspace": "the released basis V̂ (d×k) and its projector V̂V̂ᵀ",
    "status": "whether the release is ⊥ (no output) or refused (an error), and every text it shows: the ⊥ reason, "
              "the refusal message, the ledger notes",
}

#: Fields a mechanism releases, by its declared output kind.
OUTPUT_FIELDS: dict[str, tuple[str, ...]] = {
    "covariance": ("covariance", "covariance_post", "eigenvalues", "subspace", "status"),
    "subspace": ("subspace", "status"),
}

#: Relative tolerance of an exact value (atom): |x − v| ≤ ATOM_RTOL·max(1, |v|) counts as x = v (float rounding).
ATOM_RTOL = 1e-9


def atom_tolerance(v: float | np.ndarray) -> np.ndarray:
    """Half-width of the "= v" event: float rounding of a value, never the width of a continuous law."""
    return ATOM_RTOL * np.maximum(1.0, np.abs(v))


def effective_threshold(t: float | np.ndarray) -> np.ndarray:
    """Where a threshold event "≤ t" really cuts: t + :func:`atom_tolerance`, so that no event separates values
    that differ only by float rounding (a data-dependent rounding pattern is not what the audit tests)."""
    t = np.asarray(t, dtype=float)
    with np.errstate(invalid="ignore"):
        return np.where(np.isfinite(t), t + atom_tolerance(np.where(np.isfinite(t), t, 0.0)), t)


#: Status codes of the ``status`` column: an output, ⊥, or a refusal (the release raised an error).
STATUS_CODES = {ReleaseStatus.OK: 0.0, ReleaseStatus.BOTTOM: 1.0, "refused": 2.0}


@functools.lru_cache(maxsize=4096)  # an audit hashes the same few texts thousands of times
def text_hash(text: str) -> float:
    """A released text as one number (48-bit BLAKE2b, exact in a float): equal texts give equal numbers."""
    return float(int.from_bytes(hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=6).digest(),
                                "big"))


def released_text(release: object) -> str:
    """Every text a release (or a refusal) shows: its status, its ⊥ reason or refusal message, its ledger notes."""
    ledger = getattr(release, "ledger", ()) or ()
    notes = "\x1e".join(f"{getattr(e, 'step', '')}\x1f{getattr(e, 'note', '')}" for e in ledger)
    return f"{getattr(release, 'status', '')}\x1d{getattr(release, 'reason', '')}\x1d{notes}"


@dataclass
class ReleaseBatch:
    """Stacked fields of a chunk of releases of one side; NaN marks ⊥, a refusal or a field the release lacks.

    ``status`` holds :data:`STATUS_CODES`; ``text`` the :func:`text_hash` of :func:`released_text`."""

    bottom: np.ndarray  # (b,) bool: ⊥ or refused
    covariance: np.ndarray | None = None  # (b, d, d)
    covariance_post: np.ndarray | None = None  # (b, d, d)
    eigenvalues: np.ndarray | None = None  # (b, d), NaN-padded
    subspace: np.ndarray | None = None  # (b, d, k)
    status: np.ndarray | None = None  # (b,) float codes
    text: np.ndarray | None = None  # (b,) float hashes

    @classmethod
    def from_releases(cls, releases: list, d: int, k: int, fields: tuple[str, ...]) -> ReleaseBatch:
        b = len(releases)
        status = np.array([STATUS_CODES.get(getattr(r, "status", ReleaseStatus.OK), 2.0) for r in releases],
                          dtype=float)
        bottom = status > 0
        out = cls(bottom=bottom, status=status, text=np.array([text_hash(released_text(r)) for r in releases]))
        for name in ("covariance", "covariance_post"):
            if name in fields:
                arr = np.full((b, d, d), np.nan)
                for i, r in enumerate(releases):
                    M = getattr(r, name, None)
                    if not bottom[i] and M is not None:
                        arr[i] = M
                setattr(out, name, arr)
        if "eigenvalues" in fields:
            arr = np.full((b, d), np.nan)
            for i, r in enumerate(releases):
                if not bottom[i] and r.eigenvalues is not None:
                    lam = np.asarray(r.eigenvalues, dtype=float).ravel()[:d]
                    arr[i, :lam.size] = lam
            out.eigenvalues = arr
        if "subspace" in fields:
            arr = np.full((b, d, k), np.nan)
            for i, r in enumerate(releases):
                if not bottom[i] and r.subspace is not None:
                    arr[i] = np.asarray(r.subspace, dtype=float)[:, :k]
            out.subspace = arr
        return out


@dataclass(frozen=True)
class Column:
    """One scalar per release. ``orientation`` 0/1 restricts it to "S likelier under D" / "under D′" (None: both).

    ``structural``: an exact value or fixed event on it that one side never produces is a structural witness (see
    the family's ``structural`` assumption). ``guard`` names an extra check that witness must pass
    (``"same_projector"``: the other side released the same subspace, only never with this basis).
    """

    key: str
    family: str
    field: str
    label: str
    orientation: int | None = None
    structural: bool = False
    guard: str | None = None


@dataclass(frozen=True)
class Event:
    """A chosen event on one column: ``kind`` is "<=", ">" or "==" (exact value within :func:`atom_tolerance`)."""

    column: Column
    orientation: int
    kind: str
    threshold: float
    bottom_hits: bool = True  # whether ⊥ / a missing value (NaN) counts as "≤ t"

    def hits(self, values: np.ndarray) -> np.ndarray:
        v = np.asarray(values, dtype=float)
        if self.kind == "==":
            with np.errstate(invalid="ignore"):
                return np.abs(v - self.threshold) <= atom_tolerance(self.threshold)
        v = np.where(np.isnan(v), -np.inf if self.bottom_hits else np.inf, v)  # ⊥ sorts below everything
        cut = effective_threshold(self.threshold)
        return v <= cut if self.kind == "<=" else v > cut

    def count(self, values: np.ndarray) -> int:
        return int(np.count_nonzero(self.hits(values)))

    def describe(self) -> str:
        sign = {"<=": "≤", ">": ">", "==": "="}[self.kind]
        return f"{self.column.label} {sign} {self.threshold:.6g}"


Extractor = Callable[[ReleaseBatch, NeighbourPair, str], list[tuple[Column, np.ndarray]]]


@dataclass(frozen=True)
class EventFamily:
    """A kind of statistic and how its events are chosen (``selection``: fixed, threshold, atom, classifier)."""

    id: str
    description: str
    fields: tuple[str, ...]
    selection: str
    priority: int  # among events that refute the claim on the selection half, the lowest number is reported
    extract: Extractor
    structural: str | None = None  # why its events can be impossible under one neighbour (plain words)


# ------------------------------------------------------------------------------------------------
# Vectorised scalar statistics
# ------------------------------------------------------------------------------------------------

_FIELD_WORDS = {"covariance": "raw covariance", "covariance_post": "post-processed covariance",
                "eigenvalues": "released eigenvalues", "subspace": "released basis"}


#: Most per-entry columns one field contributes (large d: the top and bottom eigenvalues, the first entries).
_MAX_ENTRY_COLUMNS = 64


def _indices(count: int) -> list[int]:
    """Eigenvalue positions to look at: all for small d, else the 8 largest and the 2 smallest."""
    return list(range(count)) if count <= 12 else [*range(8), count - 2, count - 1]


def _sym_eigvals(stack: np.ndarray) -> np.ndarray:
    """Eigenvalues (decreasing) of each symmetric matrix of a stack; NaN rows for NaN matrices."""
    out = np.full(stack.shape[:2], np.nan)
    ok = np.all(np.isfinite(stack), axis=(1, 2))
    if ok.any():
        M = stack[ok]
        out[ok] = np.linalg.eigvalsh(0.5 * (M + np.swapaxes(M, 1, 2)))[:, ::-1]
    return out


def _eigen_columns(batch: ReleaseBatch, field: str, family: str, structural: bool) -> list[tuple[Column, np.ndarray]]:
    if field == "eigenvalues":
        values = batch.eigenvalues
    elif field in ("covariance", "covariance_post"):
        stack = getattr(batch, field)
        values = None if stack is None else _sym_eigvals(stack)
    else:
        return []
    if values is None:
        return []
    cols = []
    for i in _indices(values.shape[1]):
        if field == "eigenvalues":
            label = "largest released eigenvalue" if i == 0 else f"released eigenvalue {i + 1}"
        else:
            label = ("largest eigenvalue" if i == 0 else f"eigenvalue {i + 1}") + f" of the {_FIELD_WORDS[field]}"
        cols.append((Column(f"{family}:{field}:{i}", family, field, label, structural=structural), values[:, i]))
    return cols


def _support(batch: ReleaseBatch, pair: NeighbourPair, field: str) -> list[tuple[Column, np.ndarray]]:
    if field != "covariance" or batch.covariance is None:
        return []
    cols = []
    for o, other, name in ((0, pair.D1.C, "C(D′)"), (1, pair.D0.C, "C(D)")):
        lam = _sym_eigvals(batch.covariance - other)[:, -1]
        cols.append((Column(f"support:{o}", "support", field, f"smallest eigenvalue of Ĉ − {name}", orientation=o,
                            structural=True), lam))
    return cols


def _quadratic(batch: ReleaseBatch, pair: NeighbourPair, field: str) -> list[tuple[Column, np.ndarray]]:
    stack = getattr(batch, field, None) if field in ("covariance", "covariance_post") else None
    if stack is None:
        return []
    u = pair.canary
    label = "uᵀĈu" if field == "covariance" else "uᵀĈu of the post-processed covariance"
    return [(Column(f"quadratic:{field}", "quadratic", field, label), np.einsum("i,nij,j->n", u, stack, u))]


def _difference(batch: ReleaseBatch, pair: NeighbourPair, field: str) -> list[tuple[Column, np.ndarray]]:
    """⟨Ĉ, C(D′) − C(D)⟩ over the upper triangle, normalised: the likelihood-ratio statistic of i.i.d. Gaussian
    noise on the upper triangle (the most powerful test against additive Gaussian mechanisms)."""
    stack = getattr(batch, field, None) if field in ("covariance", "covariance_post") else None
    if stack is None:
        return []
    iu = np.triu_indices(stack.shape[1])
    w = (pair.D1.C - pair.D0.C)[iu]
    norm = float(np.linalg.norm(w))
    if norm == 0.0:
        return []
    label = ("⟨Ĉ, ΔC⟩" if field == "covariance" else "⟨Ĉ, ΔC⟩ of the post-processed covariance") + \
        " (upper triangle, ΔC = C(D′) − C(D), normalised)"
    return [(Column(f"difference:{field}", "difference", field, label), stack[:, iu[0], iu[1]] @ (w / norm))]


def _alignment(batch: ReleaseBatch, pair: NeighbourPair, field: str) -> list[tuple[Column, np.ndarray]]:
    if field != "subspace" or batch.subspace is None:
        return []
    proj = np.einsum("nik,i->nk", batch.subspace, pair.canary)
    return [(Column("alignment:subspace", "alignment", field, "‖V̂ᵀu‖² (canary energy in the released subspace)"),
             np.sum(proj**2, axis=1))]


def _eigenvalue(batch: ReleaseBatch, pair: NeighbourPair, field: str) -> list[tuple[Column, np.ndarray]]:
    return _eigen_columns(batch, field, "eigenvalue", structural=False)


def _projector_entries(batch: ReleaseBatch, family: str) -> list[tuple[Column, np.ndarray]]:
    V = batch.subspace
    P = np.einsum("nik,njk->nij", V, V)
    d = V.shape[1]
    pairs = [(i, j) for i in range(d) for j in range(i, d)][:_MAX_ENTRY_COLUMNS]
    return [(Column(f"{family}:projector:{i}:{j}", family, "subspace", f"projector entry Π̂[{i + 1},{j + 1}]"),
             P[:, i, j]) for i, j in pairs]


def _entry_atoms(batch: ReleaseBatch, field: str) -> list[tuple[Column, np.ndarray]]:
    """Every upper-triangle entry of a released matrix, as an atom column (an entry released without noise)."""
    M = getattr(batch, field, None)
    if M is None:
        return []
    d = M.shape[1]
    pairs = [(i, j) for i in range(d) for j in range(i, d)][:_MAX_ENTRY_COLUMNS]
    return [(Column(f"atom:{field}:entry:{i}:{j}", "atom", field, f"{_FIELD_WORDS[field]} entry [{i + 1},{j + 1}]",
                    structural=True), M[:, i, j]) for i, j in pairs]


def _atom(batch: ReleaseBatch, pair: NeighbourPair, field: str) -> list[tuple[Column, np.ndarray]]:
    if field in ("covariance", "covariance_post"):
        return _eigen_columns(batch, field, "atom", structural=True) + _entry_atoms(batch, field)
    if field != "subspace":
        return _eigen_columns(batch, field, "atom", structural=True)
    if batch.subspace is None:
        return []
    V = batch.subspace
    pairs = [(i, j) for i in range(V.shape[1]) for j in range(V.shape[2])][:_MAX_ENTRY_COLUMNS]
    cols = [(Column(f"atom:basis:{i}:{j}", "atom", field, f"basis entry V̂[{i + 1},{j + 1}]", structural=True,
                    guard="same_projector"), V[:, i, j]) for i, j in pairs]
    return cols + _projector_entries(batch, "atom")


def _status(batch: ReleaseBatch, pair: NeighbourPair, field: str) -> list[tuple[Column, np.ndarray]]:
    if field != "status":
        return []
    codes = batch.status if batch.status is not None else batch.bottom.astype(float)
    return [(Column("status", "status", field, "release is refused (2), ⊥ (1) or an output (0)"), codes)]


def _text(batch: ReleaseBatch, pair: NeighbourPair, field: str) -> list[tuple[Column, np.ndarray]]:
    if field != "status" or batch.text is None:
        return []
    return [(Column("text:hash", "text", field, "the released text (status, ⊥ reason or refusal message, ledger "
                    "notes; as a hash)"), batch.text)]


def _classifier_inputs(batch: ReleaseBatch, pair: NeighbourPair, field: str) -> list[tuple[Column, np.ndarray]]:
    """Raw covariance entries, which the classifier sees besides every other family's columns."""
    if field not in ("covariance", "covariance_post") or getattr(batch, field) is None:
        return []
    M = getattr(batch, field)
    d = M.shape[1]
    words = _FIELD_WORDS[field]
    pairs = [(i, j) for i in range(d) for j in range(i, d)][:_MAX_ENTRY_COLUMNS]
    return [(Column(f"classifier:{field}:{i}:{j}", "classifier", field, f"{words} entry [{i + 1},{j + 1}]"),
             M[:, i, j]) for i, j in pairs]


_STRUCTURAL_SUPPORT = (
    "a mechanism that adds positive-definite noise to C (Wishart type) only outputs Ĉ with Ĉ − C ≻ 0, so under D′ "
    "the event {Ĉ − C(D′) not positive definite} is impossible")
_STRUCTURAL_ATOM = (
    "a value that one side outputs exactly, again and again, and the other side never outputs is a point mass "
    "that only one side has: continuous noise gives a single value probability 0 (for a basis entry, the other "
    "side must also release the same subspace, only never with this basis)")

_FAMILIES: tuple[EventFamily, ...] = (
    EventFamily("support", "is Ĉ − C_other positive definite? (smallest eigenvalue of the release minus the other "
                "neighbour's exact C; the event is 'not positive definite')", ("covariance",), "fixed", 1,
                _support, _STRUCTURAL_SUPPORT),
    EventFamily("quadratic", "uᵀĈu, the released covariance along the canary direction (raw and post-processed)",
                ("covariance", "covariance_post"), "threshold", 2, _quadratic),
    EventFamily("difference", "⟨Ĉ, C(D′) − C(D)⟩ on the upper triangle: the likelihood-ratio statistic against "
                "additive Gaussian noise", ("covariance", "covariance_post"), "threshold", 2, _difference),
    EventFamily("alignment", "‖V̂ᵀu‖², the canary's energy in the released subspace (|⟨v̂₁, u⟩|² for k = 1)",
                ("subspace",), "threshold", 3, _alignment),
    EventFamily("eigenvalue", "a released eigenvalue (raw, post-processed or the released estimates) above or below "
                "a threshold", ("eigenvalues", "covariance_post", "covariance"), "threshold", 4, _eigenvalue),
    EventFamily("atom", "a released number (an eigenvalue, a covariance, basis or projector entry) equal to one "
                "exact value that one side repeats", ("eigenvalues", "covariance_post", "covariance", "subspace"),
                "atom", 5, _atom, _STRUCTURAL_ATOM),
    EventFamily("status", "whether the release is ⊥ (no output) or refused (an error)", ("status",), "threshold", 6,
                _status),
    EventFamily("text", "the released text (⊥ reason, refusal message, ledger notes) equal to one exact text that "
                "one side repeats", ("status",), "atom", 6, _text),
    EventFamily("classifier", "a logistic regression trained to tell the two sides apart (DP-Sniper style)",
                ("covariance", "covariance_post", "eigenvalues", "subspace", "status"), "classifier", 7,
                _classifier_inputs),
)

#: Event families by id.
EVENT_FAMILIES: dict[str, EventFamily] = {f.id: f for f in _FAMILIES}
#: Families searched by ``statistic="auto"`` (the classifier only on request).
AUTO_FAMILIES: tuple[str, ...] = ("support", "quadratic", "difference", "alignment", "eigenvalue", "atom", "status",
                                  "text")
#: Statistic choices in plain words (CLI, dashboard).
STATISTICS: dict[str, str] = {
    "auto": "every event family below except the classifier, on every released field; the strongest event found "
            "on the selection half is counted on the held-out half",
    **{f.id: f.description for f in _FAMILIES},
}


def extract_columns(batch: ReleaseBatch, pair: NeighbourPair, families: tuple[str, ...],
                    fields: tuple[str, ...]) -> list[tuple[Column, np.ndarray]]:
    """Every column of the given families on the given fields for one batch (classifier: all families' columns)."""
    out: list[tuple[Column, np.ndarray]] = []
    wanted = set(families)
    if "classifier" in wanted:
        wanted |= set(AUTO_FAMILIES)
    seen: set[str] = set()
    for fam in _FAMILIES:
        if fam.id not in wanted:
            continue
        for field in fam.fields:
            if field not in fields:
                continue
            for col, values in fam.extract(batch, pair, field):
                if col.key not in seen:
                    seen.add(col.key)
                    out.append((col, np.asarray(values, dtype=float)))
    if "status" not in seen:  # always recorded (⊥ counts); searched only when the status family is active
        out.extend(_status(batch, pair, "status"))
    return out
