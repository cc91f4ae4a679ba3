"""Privacy-aware preprocessing (spec §6.2): raw :class:`Dataset` → :class:`PreparedData` with ‖x‖ ≤ 1.

Pipeline, each step recorded in the ledger (``private=False`` steps also emit a :class:`PrivacyLeakWarning`):

1. **feature scaling** — ``"schema"``: clamp each feature to its PUBLIC range and map it affinely to [0, 1]
   (a per-record operation: free). A dataset without a public schema is used in its raw units (recorded).
   ``"minmax"``: ranges taken from the data — NOT private. ``"none"``: raw units.
2. **centring** — ``"none"``; ``"public"``: subtract a public ``center`` (default: the midpoint of the public
   ranges; free); ``"dp"``: subtract a DP mean
   (Gaussian mechanism on the mean of the B-clipped rows, replace-one L2 sensitivity 2B/n, analytic calibration,
   its own budget ``(centering_epsilon, centering_delta)``); ``"empirical"``: subtract the data mean — NOT private.
3. **norm bound** — ``"clip"``: x ← x·min(1, B/‖x‖) with a public B (per record: free; the clip fraction is a
   non-private diagnostic); ``"max_norm"``: B = maxᵢ‖xᵢ‖ — NOT private. Rows are finally divided by B.

Implementation: every step is one per-record :class:`~dpcore.data.transform.RowTransform` (the only clipping code
is :func:`~dpcore.data.transform.clip_rows`), applied by :func:`run_preprocessing` to any :class:`ChunkSource` — an
in-memory array here, a streamed file or a Dask DataFrame in :mod:`dpcore.stats`. One pass accumulates
C = Σ uᵢuᵢᵀ, Σ uᵢ and n of the unit rows; a data-derived choice (min–max ranges, an empirical or DP mean, the
largest norm) costs one more pass before it.
The clipping advisor's curves (non-private) are in :mod:`dpcore.data.norm_curves`.

Default B (``norm_bound=None`` with ``"clip"``): under a public schema whose encoding declares its one-hot groups
(``Dataset.feature_groups``), the largest norm the schema allows — √ of one per numeric column and one per one-hot
group (Adult: √14), with a public centre its exact maximum (:func:`~dpcore.data.datasets.schema_norm_bound`); else,
when the features were mapped to [0, 1] (schema/minmax), the largest possible norm — √d, or
maxₓ‖x − c‖ = ‖max(|c|, |1 − c|)‖ after a public centre c (√d/2 for the midpoint) — so nothing is clipped except
after DP/empirical centring; otherwise the dataset's public ``suggested_norm_bound`` (e.g. a generator's known
bound, or B = 1 for Chaudhuri et al.'s synthetic data); otherwise an error asks for an explicit bound.
"""

from __future__ import annotations

import math
import warnings
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from ..core._validation import check_choice, check_delta, check_epsilon, check_neighbouring, check_positive
from ..core.privacy import Diagnostics, LedgerEntry, gaussian_sigma
from ..core.seeding import RandomState, Stage, check_random_state, settings_key, stage_rng
from ..exceptions import DataError, InvalidParameterError, PrivacyLeakWarning
from ..vocabulary import Centering, FeatureScaling, Neighbouring, NormMode, values
from .datasets import Dataset, schema_norm_bound
from .encode import center_of_groups
from .prepared import Moments, PreparedData, RowSource
from .transform import RowTransform, clip_rows, clipped_row_sum  # noqa: F401 - clip_rows: its old import path

FEATURE_SCALINGS = values(FeatureScaling)
NORM_MODES = values(NormMode)
CENTERINGS = values(Centering)


def as_dataset(dataset: Dataset | np.ndarray) -> Dataset:
    """A Dataset as is, or a raw numeric array wrapped as one (no schema, no labels)."""
    if isinstance(dataset, Dataset):
        return dataset
    if isinstance(dataset, np.ndarray):
        return Dataset(id="array", name="array", X=dataset)
    raise InvalidParameterError(f"dataset must be a dpcore Dataset or a 2-D numpy array, got {type(dataset).__name__}.")


def _resolve_center(center: object, d: int, unit_box: bool,
                    feature_groups: Sequence[int] | None = None) -> np.ndarray:
    """The public centre; None means the middle of the public ranges when features were mapped to [0, 1]: 0.5, and
    1/m for each indicator of a one-hot group of m (``feature_groups``; :func:`dpcore.data.encode.public_center`)."""
    if center is None:
        if unit_box:
            return np.full(d, 0.5) if feature_groups is None else center_of_groups(feature_groups)
        raise InvalidParameterError("centering='public' needs center=<array of length d> (a public centre in raw "
                                    "units): this dataset has no public ranges whose midpoint could serve.")
    c = np.asarray(center, dtype=np.float64)
    if c.ndim == 0:
        c = np.full(d, float(c))
    if c.shape != (d,) or not np.all(np.isfinite(c)):
        raise InvalidParameterError(f"center must be a finite array of length d = {d}; got shape {c.shape}.")
    return c


class TransformedRows(RowSource):
    """Rows on demand: ``transform`` applied to rows of a read-only raw array (what :func:`preprocess` returns)."""

    def __init__(self, raw: np.ndarray, transform: RowTransform) -> None:
        self.raw, self.transform = raw, transform
        self.n_rows, self.d = raw.shape

    def take(self, idx: np.ndarray) -> np.ndarray:
        return self.transform.unit(self.raw[np.asarray(idx, dtype=np.intp)])[0]

    def all(self) -> np.ndarray:
        out = np.empty(self.raw.shape)
        for a, b in _chunk_bounds(self.n_rows, self.d):
            out[a:b] = self.transform.unit(self.raw[a:b])[0]
        return out


# ==================================================================================================
# Passes over the data: arrays here, streamed files and Dask partitions in dpcore.stats
# ==================================================================================================

#: Rows per chunk of an in-memory pass: about 32 MB of float64 per chunk (BLAS stays efficient, memory O(chunk)).
CHUNK_BYTES = 32 * 2**20


def _chunk_bounds(n: int, d: int, chunk_bytes: int = CHUNK_BYTES):
    step = max(256, chunk_bytes // (8 * max(d, 1)))
    for a in range(0, n, step):
        yield a, min(n, a + step)


@dataclass
class Chunk:
    """A block of records: encoded raw features, labels, the position of its first record in the whole data (or
    each record's position, when some were dropped), and exact encoding counts (non-private diagnostics)."""

    raw: np.ndarray
    labels: np.ndarray | None = None
    start: int = 0
    counts: dict = field(default_factory=dict)
    positions: np.ndarray | None = None


class ChunkSource(ABC):
    """Raw rows in a fixed order, visited in chunks. Each :meth:`map_reduce` is one pass over the data."""

    d: int

    @abstractmethod
    def map_reduce(self, fn: Callable[[Chunk], Any], merge: Callable[[Any, Any], Any], *,
                   positions: bool = False) -> Any:
        """``merge`` of ``fn(chunk)`` over every chunk (None when there is none). With ``positions``, each chunk's
        ``start`` is its position in the whole data (a Dask source then counts the rows of its partitions first)."""


class ArrayChunks(ChunkSource):
    """An in-memory array, in chunks of about :data:`CHUNK_BYTES` (views: nothing is copied)."""

    def __init__(self, X: np.ndarray, y: np.ndarray | None = None, chunk_bytes: int = CHUNK_BYTES) -> None:
        self.X, self.y, self.chunk_bytes = X, y, chunk_bytes
        self.d = X.shape[1]

    def map_reduce(self, fn, merge, *, positions=False):
        acc = None
        for a, b in _chunk_bounds(self.X.shape[0], self.d, self.chunk_bytes):
            part = fn(Chunk(self.X[a:b], None if self.y is None else self.y[a:b], a))
            acc = part if acc is None else merge(acc, part)
        return acc


def merge_counts(a: dict, b: dict) -> dict:
    """Sum nested count dictionaries ({kind: {column: count}} or {kind: count})."""
    out = {k: (dict(v) if isinstance(v, dict) else v) for k, v in a.items()}
    for k, v in b.items():
        if isinstance(v, dict):
            inner = out.setdefault(k, {})
            for col, c in v.items():
                inner[col] = inner.get(col, 0) + c
        else:
            out[k] = out.get(k, 0) + v
    return out


@dataclass
class FinalPass:
    """What the last pass returns: the statistics of the unit rows, exact counts, and whatever a collector kept
    (e.g. :mod:`dpcore.stats`' reservoir sample)."""

    moments: Moments
    clipped: int = 0
    clamped: int = 0
    counts: dict = field(default_factory=dict)
    collected: Any = None


class Collector(ABC):
    """Keeps something per chunk of the last pass (given the unit rows), mergeable across chunks."""

    @abstractmethod
    def part(self, chunk: Chunk, units: np.ndarray) -> Any: ...

    @abstractmethod
    def merge(self, a: Any, b: Any) -> Any: ...


@dataclass
class Preprocessed:
    """The outcome of :func:`run_preprocessing`: the transform, the statistics of the unit rows, ledger, info."""

    transform: RowTransform
    moments: Moments
    norm_bound: float
    ledger: tuple[LedgerEntry, ...]
    info: dict
    diagnostics: Diagnostics
    clip_fraction: float
    collected: Any = None


def _min_max(source: ChunkSource) -> tuple[np.ndarray, np.ndarray]:
    lo, hi = source.map_reduce(lambda c: (c.raw.min(axis=0), c.raw.max(axis=0)),
                               lambda a, b: (np.minimum(a[0], b[0]), np.maximum(a[1], b[1])))
    return lo, hi


def _sum_rows(source: ChunkSource, rows: Callable[[np.ndarray], np.ndarray]) -> tuple[np.ndarray, int]:
    total, n = source.map_reduce(lambda c: (rows(c.raw).sum(axis=0), c.raw.shape[0]),
                                 lambda a, b: (a[0] + b[0], a[1] + b[1]))
    return total, n


@dataclass(frozen=True)
class _Scaling:
    """Step 1's outcome: the affine map to [0, 1] (``lo``/``hi``/``width``; None in raw units) and whether it clamps."""

    lo: np.ndarray | None = None
    hi: np.ndarray | None = None
    width: np.ndarray | None = None
    clamp: bool = False

    @property
    def unit_box(self) -> bool:
        """True when the features were mapped to [0, 1] (schema or min–max scaling)."""
        return self.lo is not None

    def transform(self, bound: float = 1.0, **steps: Any) -> RowTransform:
        """A :class:`RowTransform` with this scaling and the given bound and later steps."""
        return RowTransform(bound=bound, lo=self.lo, hi=self.hi, width=self.width, clamp=self.clamp, **steps)


class _Options(NamedTuple):
    """:func:`run_preprocessing`'s options after validation (choices normalised, numbers checked)."""

    feature_scaling: str
    norm_mode: str
    centering: str
    neighbouring: str
    norm_bound: float | None
    centering_epsilon: float
    centering_delta: float


def _check_preprocessing_options(*, feature_scaling: str, norm_mode: str, centering: str, neighbouring: str,
                                 norm_bound: float | None, norm_bound_from_data: bool, center: object,
                                 centering_epsilon: float, centering_delta: float,
                                 random_state: RandomState) -> _Options:
    """Validate :func:`run_preprocessing`'s options once; returns the normalised ones."""
    feature_scaling = check_choice(feature_scaling, "feature_scaling", FEATURE_SCALINGS)
    norm_mode = check_choice(norm_mode, "norm_mode", NORM_MODES)
    centering = check_choice(centering, "centering", CENTERINGS)
    neighbouring = check_neighbouring(neighbouring)
    if norm_bound is not None:
        norm_bound = check_positive(norm_bound, "norm_bound")
        if norm_mode == NormMode.MAX_NORM:
            raise InvalidParameterError("norm_bound is set but norm_mode='max_norm' derives B from the data; "
                                        "use norm_mode='clip' with your public bound, or drop norm_bound.")
    if norm_bound_from_data and norm_bound is None:
        raise InvalidParameterError("norm_bound_from_data=True needs the norm_bound that was read off the data.")
    if center is not None and centering != Centering.PUBLIC:
        raise InvalidParameterError(f"center is only used with centering='public' (got centering={centering!r}).")
    if centering == Centering.DP:
        centering_epsilon = check_epsilon(centering_epsilon, "centering_epsilon")
        centering_delta = check_delta(centering_delta, "centering_delta", required=True)
        if norm_mode != NormMode.CLIP:
            raise InvalidParameterError("centering='dp' needs a public norm bound; use norm_mode='clip'.")
        if neighbouring != Neighbouring.REPLACE:
            raise InvalidParameterError("centering='dp' uses the replace-one sensitivity 2B/n (n public); under "
                                        "add/remove n is private — use a public centre or neighbouring='replace'.")
    check_random_state(random_state)
    return _Options(feature_scaling, norm_mode, centering, neighbouring, norm_bound, centering_epsilon,
                    centering_delta)


def _feature_scaling_step(source: ChunkSource, feature_scaling: str, feature_ranges: np.ndarray | None,
                          ledger: list[LedgerEntry], info: dict) -> _Scaling:
    """Step 1: public ranges (clamped), data ranges (min–max, one pass; not private) or raw units."""
    lo = hi = None
    clamp = False
    if feature_scaling == FeatureScaling.SCHEMA and feature_ranges is not None:
        lo, hi = np.array(feature_ranges[:, 0], dtype=np.float64), np.array(feature_ranges[:, 1], dtype=np.float64)
        clamp = True
        ledger.append(LedgerEntry("schema scaling", note="clamp each feature to its public range and map to [0, 1] "
                                  "(per record, free)"))
    elif feature_scaling == FeatureScaling.SCHEMA:
        ledger.append(LedgerEntry("no public schema", note="the dataset has no public feature ranges; features are "
                                  "used in their raw units"))
    elif feature_scaling == FeatureScaling.MINMAX:
        lo, hi = _min_max(source)
        ledger.append(LedgerEntry("min–max scaling from the data", private=False,
                                  note="per-feature min and max computed from the data (not private); use "
                                       "feature_scaling='schema' with public ranges for a private pipeline"))
    else:
        ledger.append(LedgerEntry("no feature scaling", note="raw units"))
    if lo is None:
        return _Scaling()
    raw_width = hi - lo
    info.update(scale_lo=lo.copy(), scale_width=raw_width.copy())
    return _Scaling(lo=lo, hi=hi, width=np.where(raw_width > 0, raw_width, 1.0), clamp=clamp)


def _public_norm_bound(scaling: _Scaling, *, d: int, name: str, norm_bound: float | None,
                       norm_bound_from_data: bool, public_c: np.ndarray | None,
                       suggested_norm_bound: float | None,
                       feature_groups: Sequence[int] | None) -> tuple[float, str]:
    """B for ``norm_mode='clip'`` and where it came from: the user's, else the default (module docstring)."""
    if norm_bound is not None:
        return norm_bound, ("read off this data (NOT private: choose B from public knowledge)"
                            if norm_bound_from_data else "given by the user (public)")
    if scaling.clamp and feature_groups is not None:
        return schema_norm_bound(feature_groups, public_c), (
            "default: the largest norm the public schema allows (one per numeric column and per one-hot group; "
            "no clipping)")
    if scaling.unit_box and public_c is not None:
        bound = float(np.linalg.norm(np.maximum(np.abs(public_c), np.abs(1.0 - public_c))))
        return bound, "default: largest ‖x − c‖ over [0, 1]^d (no clipping)"
    if scaling.unit_box:
        return math.sqrt(d), "default √d: features lie in [0, 1] (no clipping)"
    if suggested_norm_bound is not None:
        return float(suggested_norm_bound), "the dataset's public suggested bound"
    raise InvalidParameterError(
        f"dataset {name!r} has no public feature ranges, so there is no public default norm bound; "
        "load it with a public schema (load_csv(..., schema=S); CLI: --schema S, drafted by `dpcore schema "
        "infer`), pass norm_bound=B (a public bound on ‖x‖ in raw units), or use feature_scaling='minmax' / "
        "norm_mode='max_norm' (both not private)."
    )


def _centring_step(source: ChunkSource, scaling: _Scaling, *, centering: str, center: object,
                   public_c: np.ndarray | None, bound: float, centering_epsilon: float, centering_delta: float,
                   random_state: RandomState, ledger: list[LedgerEntry],
                   info: dict) -> tuple[np.ndarray | None, float | None]:
    """Step 2: the centre to subtract (None: none) and the pre-centring clip (B after a DP mean, else None).

    A DP mean draws its noise from the ``CENTERING`` stage of ``random_state`` (the only draw of preprocessing).
    """
    scaled = scaling.transform()
    pre_clip = c = None
    if centering == Centering.PUBLIC:
        c = public_c
        what = ("the midpoint of the public ranges (0.5 per scaled column; 1/m per indicator of a declared one-hot "
                "group of m)" if center is None else "a public centre")
        ledger.append(LedgerEntry("public centring", note=f"subtract {what} (free)"))
    elif centering == Centering.EMPIRICAL:
        total, n = _sum_rows(source, lambda raw: scaled.scaled(raw)[0])
        c = total / max(n, 1)
        ledger.append(LedgerEntry("empirical centring", private=False,
                                  note="the data mean was subtracted (not private); use centering='dp' or a "
                                       "public centre"))
    elif centering == Centering.DP:
        total, n = source.map_reduce(lambda c: (clipped_row_sum(scaled.scaled(c.raw)[0], bound), c.raw.shape[0]),
                                     lambda a, b: (a[0] + b[0], a[1] + b[1]))
        if n < 1:
            raise DataError("the data has no rows.")
        l2 = 2.0 * bound / n
        sigma = gaussian_sigma(centering_epsilon, centering_delta, l2, "analytic")
        # the stream is keyed by the DP mean's public settings (privacy review R4-10): one seed at two budgets, two
        # bounds B or two scalings would draw the same Z, and (σ₂μ̂₁ − σ₁μ̂₂)/(σ₂ − σ₁) gives the exact mean
        key = settings_key(centering_epsilon, centering_delta, bound, n, source.d, scaling.lo, scaling.hi,
                           scaling.clamp)
        c = total / n + stage_rng(random_state, Stage.CENTERING, key).normal(0.0, sigma, size=source.d)
        info["centering_stream_key"] = key
        pre_clip = bound
        ledger.append(LedgerEntry("DP mean for centring", centering_epsilon, centering_delta,
                                  note=f"Gaussian mechanism on the mean of B-clipped rows: Δ₂ = 2B/n = {l2:.4g}, "
                                       f"σ = {sigma:.4g} (analytic); rows re-clipped to B afterwards"))
        info["centering_sigma"] = sigma
    if c is not None:
        info["center"] = np.array(c, dtype=np.float64)
    return c, pre_clip


def _max_norm_step(source: ChunkSource, scaling: _Scaling, center: np.ndarray | None,
                   ledger: list[LedgerEntry]) -> float:
    """Step 3 with ``norm_mode='max_norm'``: B = the largest row norm after scaling and centring (not private)."""
    shifted = scaling.transform(center=center)

    def largest_norm(chunk: Chunk) -> float:
        Y = shifted.scaled(chunk.raw)[0]
        return float(np.sqrt(np.einsum("ij,ij->i", Y, Y).max(initial=0.0)))

    bound = float(source.map_reduce(largest_norm, max) or 0.0)
    if not bound > 0:
        raise DataError("every row is zero after preprocessing; there is nothing to analyse.")
    ledger.append(LedgerEntry("divide by the maximum row norm", private=False,
                              note=f"B = max‖x‖ = {bound:.6g} computed from the data (not private); use "
                                   "norm_mode='clip' with a public bound"))
    return bound


def _final_pass(source: ChunkSource, transform: RowTransform, collector: Collector | None) -> FinalPass:
    """The pass over the unit rows: C, Σu, n, exact counts (and what the collector keeps)."""

    def part(chunk: Chunk) -> FinalPass:
        if collector is None:  # the fused pass: the chunk's unit rows are never all held at once
            C, total, clipped, clamped = transform.unit_moments(chunk.raw)
            return FinalPass(Moments(C, total, int(chunk.raw.shape[0])), clipped, clamped, chunk.counts)
        U, hit, clamped = transform.unit(chunk.raw)
        return FinalPass(Moments.of_rows(U), int(hit.sum()), clamped, chunk.counts, collector.part(chunk, U))

    def merge(a: FinalPass, b: FinalPass) -> FinalPass:
        return FinalPass(a.moments + b.moments, a.clipped + b.clipped, a.clamped + b.clamped,
                         merge_counts(a.counts, b.counts),
                         None if collector is None else collector.merge(a.collected, b.collected))

    final = source.map_reduce(part, merge, positions=collector is not None)
    if final is None or final.moments.n < 1:
        raise DataError("the data has no rows.")
    return final


def run_preprocessing(source: ChunkSource, *, feature_ranges: np.ndarray | None = None,
                      suggested_norm_bound: float | None = None, name: str = "data",
                      load_ledger: Sequence[LedgerEntry] = (), load_diagnostics: dict | None = None,
                      feature_scaling: str = FeatureScaling.SCHEMA, norm_bound: float | None = None,
                      norm_mode: str = NormMode.CLIP, centering: str = Centering.NONE,
                      center: Sequence[float] | np.ndarray | None = None, centering_epsilon: float = 0.1,
                      centering_delta: float = 1e-6, neighbouring: str = Neighbouring.REPLACE,
                      norm_bound_from_data: bool = False, random_state: RandomState = None,
                      collector: Collector | None = None,
                      feature_groups: Sequence[int] | None = None) -> Preprocessed:
    """The preprocessing of :func:`preprocess` over any :class:`ChunkSource` (array, streamed file, Dask).

    One pass computes C = Σ uᵢuᵢᵀ, Σ uᵢ and n of the unit rows uᵢ; a data-derived choice (min–max ranges, an
    empirical or DP mean, the largest norm) costs one more pass each, before it. Arguments as for
    :func:`preprocess`; ``collector`` keeps extra per-chunk results of the last pass (a row sample);
    ``feature_groups`` (public: the one-hot groups of the encoding) gives the schema's default bound.
    """
    d = source.d
    opts = _check_preprocessing_options(
        feature_scaling=feature_scaling, norm_mode=norm_mode, centering=centering, neighbouring=neighbouring,
        norm_bound=norm_bound, norm_bound_from_data=norm_bound_from_data, center=center,
        centering_epsilon=centering_epsilon, centering_delta=centering_delta, random_state=random_state)
    feature_scaling, norm_mode, centering = opts.feature_scaling, opts.norm_mode, opts.centering
    neighbouring, norm_bound = opts.neighbouring, opts.norm_bound

    ledger: list[LedgerEntry] = list(load_ledger)
    info: dict = {}
    scaling = _feature_scaling_step(source, feature_scaling, feature_ranges, ledger, info)
    public_c = _resolve_center(center, d, scaling.unit_box, feature_groups) if centering == Centering.PUBLIC else None
    bound_public = not (norm_bound_from_data and norm_bound is not None)
    bound, bound_note = 1.0, ""
    if norm_mode == NormMode.CLIP:
        bound, bound_note = _public_norm_bound(
            scaling, d=d, name=name, norm_bound=norm_bound, norm_bound_from_data=norm_bound_from_data,
            public_c=public_c, suggested_norm_bound=suggested_norm_bound, feature_groups=feature_groups)
    c, pre_clip = _centring_step(
        source, scaling, centering=centering, center=center, public_c=public_c, bound=bound,
        centering_epsilon=opts.centering_epsilon, centering_delta=opts.centering_delta,
        random_state=random_state, ledger=ledger, info=info)
    if norm_mode == NormMode.MAX_NORM:
        bound = _max_norm_step(source, scaling, c, ledger)
    transform = scaling.transform(bound, pre_clip=pre_clip, center=c, clip=norm_mode == NormMode.CLIP)

    final = _final_pass(source, transform, collector)
    n = final.moments.n
    clip_fraction = final.clipped / n if norm_mode == NormMode.CLIP else 0.0
    if norm_mode == NormMode.CLIP:
        ledger.append(LedgerEntry("clip rows to ‖x‖ ≤ B", private=bound_public,
                                  note=f"B = {bound:.6g} ({bound_note}); per record, free"))
    info.update(feature_scaling=feature_scaling, norm_mode=norm_mode, centering=centering,
                neighbouring=neighbouring, norm_bound_source=bound_note or "max row norm (data)")
    diagnostics = Diagnostics(load_diagnostics or {})
    if final.counts:
        diagnostics.update(final.counts)
    diagnostics.update(n_rows=n, clip_fraction=clip_fraction)
    if scaling.clamp:
        info["clamped_fraction"] = diagnostics["clamped_fraction"] = final.clamped / (n * d)
    return Preprocessed(transform, final.moments, bound, tuple(ledger), info, diagnostics, clip_fraction,
                        final.collected)


def warn_non_private(name: str, ledger: Sequence[LedgerEntry], stacklevel: int = 3) -> None:
    """A :class:`PrivacyLeakWarning` for each ``private=False`` step of ``ledger``."""
    for e in ledger:
        if not e.private:
            warnings.warn(f"{name}: '{e.step}' is not differentially private — {e.note}", PrivacyLeakWarning,
                          stacklevel=stacklevel)


def preprocess(dataset: Dataset | np.ndarray, *, feature_scaling: str = FeatureScaling.SCHEMA,
               norm_bound: float | None = None, norm_mode: str = NormMode.CLIP, centering: str = Centering.NONE,
               center: Sequence[float] | np.ndarray | None = None, centering_epsilon: float = 0.1,
               centering_delta: float = 1e-6, neighbouring: str = Neighbouring.REPLACE,
               norm_bound_from_data: bool = False, random_state: RandomState = None) -> PreparedData:
    """Turn a raw dataset into :class:`PreparedData` (rows divided by B so ‖x‖ ≤ 1; ``norm_bound`` = B).

    See the module docstring for the steps and the default B. ``center`` is in the units after feature scaling;
    with ``centering='public'`` and no ``center``, the middle of the public ranges (0.5 after schema scaling;
    1/m per indicator of a one-hot group of m: :func:`dpcore.data.encode.public_center`).
    The DP mean (``centering='dp'``) needs ``norm_mode='clip'`` and ``neighbouring='replace'`` (n public); its
    (ε, δ) are recorded in the ledger and must be added to the mechanism's budget (basic composition).
    ``norm_bound_from_data=True`` says that ``norm_bound`` was read off this data (e.g. from the clipping advisor):
    the clip step is then recorded as NOT private. ``random_state`` seeds the DP mean's own child stream
    (:mod:`dpcore.core.seeding`), so the same integer may also be given to the mechanism.
    Exact counts (clipped rows, clamped entries, dropped rows) go to ``PreparedData.diagnostics`` (not private),
    never into the ledger.

    One pass over the raw rows computes C = Σ xᵢxᵢᵀ and Σ xᵢ (a data-derived choice adds a pass before it); the
    rows themselves are recomputed from the (read-only) raw array by the same transform when something reads
    ``X`` — nothing is copied for mechanisms that need only C.
    """
    ds = as_dataset(dataset)
    res = run_preprocessing(
        ArrayChunks(ds.X), feature_ranges=ds.feature_ranges, suggested_norm_bound=ds.suggested_norm_bound,
        name=ds.name, load_ledger=ds.load_ledger, load_diagnostics=ds.diagnostics, feature_scaling=feature_scaling,
        norm_bound=norm_bound, norm_mode=norm_mode, centering=centering, center=center,
        centering_epsilon=centering_epsilon, centering_delta=centering_delta, neighbouring=neighbouring,
        norm_bound_from_data=norm_bound_from_data, random_state=random_state, feature_groups=ds.feature_groups)
    warn_non_private(ds.name, res.ledger)
    res.info["dataset_id"] = ds.id
    return PreparedData._trusted(
        TransformedRows(ds.X, res.transform), norm_bound=res.norm_bound, y=ds.y, name=ds.name,
        feature_names=ds.feature_names, ledger=res.ledger, clip_fraction=res.clip_fraction, info=res.info,
        diagnostics=res.diagnostics, stats=res.moments)


def __getattr__(name: str):
    """The advisor curves' old import path (``dpcore.data.preprocess.suggest_norm_bounds``): they live in
    :mod:`dpcore.data.norm_curves`, imported on first use (that module imports this one)."""
    if name in ("clip_fraction_curve", "suggest_norm_bounds"):
        from . import norm_curves

        return getattr(norm_curves, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
