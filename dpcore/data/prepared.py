"""The container every mechanism receives: preprocessed rows with ‖x‖ ≤ 1, plus sufficient statistics.

A :class:`PreparedData` holds the rows ``X`` (unit scale) and the sufficient statistics of those rows
(:class:`Moments`: C = Σ xᵢxᵢᵀ, Σ xᵢ, n). Covariance mechanisms and the utility metrics read only C, n, d and the
spectrum; the Singhal–Steinke family and the SVM metric read rows. Three kinds of row storage share one class:

* **rows in memory** — ``PreparedData(X)``: the array is copied and checked (‖x‖ ≤ 1, finite), C is formed on
  first use;
* **rows on demand** — what :func:`~dpcore.data.preprocess.preprocess` returns: C (and Σx) come from its one
  pass over the raw data, and the rows are recomputed from the raw array by the same per-record transform only
  when someone reads ``X`` or :meth:`PreparedData.take` (so a sweep of covariance mechanisms never holds a second
  copy of the data);
* **a sample of the rows** — built by :mod:`dpcore.stats` from streamed or distributed data: C and n describe every
  record, ``X`` holds a seeded reservoir sample of them (``sample`` says so). Every mechanism and metric runs
  unchanged; the rows they read are the sample's, and the output says so.
"""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from functools import cached_property
from typing import Protocol, runtime_checkable

import numpy as np

from ..core.privacy import Diagnostics, LedgerEntry, ledger_is_private
from ..exceptions import DataError
from ..vocabulary import Neighbouring

_NORM_SLACK = 1e-9


# ==================================================================================================
# What every preprocessed-data container offers
# ==================================================================================================

@runtime_checkable
class PreparedSummary(Protocol):
    """What :class:`PreparedData` and :class:`dpcore.stats.SufficientStats` both offer: the size and second moment
    of the unit rows (C = Σ uᵢuᵢᵀ, n, d), the bound B they were divided by, the names, what the data cost (the
    loading and preprocessing ``ledger``) and the exact, NOT private, ``diagnostics``. Type a function against it
    when it reads nothing else (e.g. a ledger report), so that it takes either container."""

    @property
    def n(self) -> int: ...

    @property
    def d(self) -> int: ...

    @property
    def C(self) -> np.ndarray: ...

    @property
    def norm_bound(self) -> float: ...

    @property
    def name(self) -> str: ...

    @property
    def feature_names(self) -> tuple[str, ...]: ...

    @property
    def ledger(self) -> tuple[LedgerEntry, ...]: ...

    @property
    def info(self) -> dict: ...

    @property
    def diagnostics(self) -> Diagnostics: ...

    @property
    def clip_fraction(self) -> float: ...

    @property
    def is_private(self) -> bool: ...


# ==================================================================================================
# Sufficient statistics of unit rows
# ==================================================================================================

@dataclass(frozen=True, eq=False)
class Moments:
    """Sufficient statistics of a set of rows: ``C`` = Σ xᵢxᵢᵀ (d × d), ``total`` = Σ xᵢ (d,) and the count ``n``.

    O(d²) memory however many rows there are; adding two gives the statistics of the union of the rows (how
    streamed batches and Dask partitions are combined), subtracting removes rows that are known exactly.
    """

    C: np.ndarray
    total: np.ndarray
    n: int

    @classmethod
    def zeros(cls, d: int) -> Moments:
        return cls(np.zeros((d, d)), np.zeros(d), 0)

    @classmethod
    def of_rows(cls, X: np.ndarray) -> Moments:
        """The statistics of the rows of ``X`` (BLAS: ``X.T @ X`` on one buffer is a ``syrk``; Σx a ``gemv``)."""
        X = np.asarray(X, dtype=np.float64)
        return cls(X.T @ X, np.ones(X.shape[0]) @ X, int(X.shape[0]))

    @property
    def d(self) -> int:
        return int(self.total.shape[0])

    def __add__(self, other: Moments) -> Moments:
        return Moments(self.C + other.C, self.total + other.total, self.n + other.n)

    def __sub__(self, other: Moments) -> Moments:
        return Moments(self.C - other.C, self.total - other.total, self.n - other.n)

    def frozen(self) -> Moments:
        """A read-only copy with C symmetrised exactly (what :class:`PreparedData` keeps)."""
        C = 0.5 * (self.C + self.C.T)
        total = np.array(self.total, dtype=np.float64)
        C.setflags(write=False)
        total.setflags(write=False)
        return Moments(C, total, int(self.n))


# ==================================================================================================
# Rows on demand
# ==================================================================================================

class RowSource(ABC):
    """Preprocessed unit rows computed on demand (see :class:`PreparedData`). ``take`` returns a new array."""

    n_rows: int
    d: int

    @abstractmethod
    def take(self, idx: np.ndarray) -> np.ndarray:
        """The unit rows at ``idx`` (integer positions in ``range(n_rows)``)."""

    def all(self) -> np.ndarray:
        return self.take(np.arange(self.n_rows))


class _SelectedRows(RowSource):
    """Rows ``rows`` of a parent :class:`PreparedData` (a subset that copies nothing until it is read)."""

    def __init__(self, parent: PreparedData, rows: np.ndarray) -> None:
        self.parent, self.rows = parent, rows
        self.n_rows, self.d = int(rows.shape[0]), parent.d

    def take(self, idx: np.ndarray) -> np.ndarray:
        return self.parent.take(self.rows[np.asarray(idx, dtype=np.intp)])


class _LocalRows(RowSource):
    """Rows that stay in this process when the data is pickled: worker processes that only need the statistics
    (covariance mechanisms and their metrics) receive C and its spectrum, not a copy of the data."""

    def __init__(self, data: PreparedData) -> None:
        self.data, self.n_rows, self.d = data, data.n_rows, data.d

    def take(self, idx: np.ndarray) -> np.ndarray:
        return self.data.take(idx)

    def __reduce__(self):
        return _RowsElsewhere, (self.n_rows, self.d)


class _RowsElsewhere(RowSource):
    """What a pickled :class:`_LocalRows` becomes: the statistics are here, the rows are not."""

    def __init__(self, n_rows: int, d: int) -> None:
        self.n_rows, self.d = n_rows, d

    def take(self, idx: np.ndarray) -> np.ndarray:
        raise DataError("the rows of this data stayed in the main process (only its statistics were sent to this "
                        "worker); run mechanisms that read rows (Singhal–Steinke) on data made without "
                        "keep_rows_local().")


@dataclass(frozen=True)
class _Trusted:
    """Unit rows built by dpcore itself (norms already checked): stored without the defensive copy."""

    X: np.ndarray


class _RowsField:
    """Data descriptor behind ``PreparedData.X``: stored rows, or rows materialised on first read."""

    def __get__(self, obj, owner=None):
        if obj is None:
            raise AttributeError("X")  # no dataclass default: X is required
        X = obj.__dict__.get("_X")
        if X is None:
            X = np.ascontiguousarray(obj.__dict__["_source"].all(), dtype=np.float64)
            X.setflags(write=False)
            obj.__dict__["_X"] = X
        return X

    def __set__(self, obj, value) -> None:
        obj.__dict__["_X_in"] = value  # checked and stored by __post_init__


# ==================================================================================================
# PreparedData
# ==================================================================================================

@dataclass(frozen=True, eq=False, repr=False)
class PreparedData:
    """Preprocessed data, ready for a mechanism.

    Attributes
    ----------
    X : (n_rows, d) array
        Rows after preprocessing, divided by the public norm bound so that every ‖xᵢ‖₂ ≤ 1. Normally every row
        (n_rows = n); a sample of them when ``sample`` is set.
    norm_bound : float
        B, in the units of the features after scaling/centring; covariances in those units are B²·C.
    y : (n_rows,) array or None
        Labels of the rows in ``X`` (used only by evaluation metrics such as SVM accuracy).
    ledger : tuple of LedgerEntry
        Every preprocessing step with its privacy cost or a ``private=False`` flag.
    clip_fraction : float
        Fraction of rows that were clipped to the norm bound (non-private diagnostic, also in ``diagnostics``).
    diagnostics : Diagnostics
        Exact, data-dependent counts from loading and preprocessing (clip and clamp fractions, dropped rows, the
        row count): NOT private — never part of a release.
    stats : Moments or None
        C, Σx and n of ALL the records (from the preprocessing pass or a stream); None: formed from ``X``.
    sample : str or None
        None when ``X`` holds every row behind ``stats``; otherwise the kind of sample it holds (``"reservoir"``:
        a seeded reservoir sample, chosen from positions only, never from values).
    """

    X: np.ndarray = _RowsField()  # type: ignore[assignment]
    norm_bound: float = 1.0
    y: np.ndarray | None = None
    name: str = "data"
    feature_names: tuple[str, ...] = ()
    ledger: tuple[LedgerEntry, ...] = ()
    clip_fraction: float = 0.0
    info: dict = field(default_factory=dict)
    diagnostics: Diagnostics = field(default_factory=Diagnostics)
    stats: Moments | None = None
    sample: str | None = None

    def __post_init__(self) -> None:
        given = self.__dict__.pop("_X_in")
        if isinstance(given, RowSource):
            self.__dict__.update(_X=None, _source=given)
            n_rows, d = int(given.n_rows), int(given.d)
        else:
            if isinstance(given, _Trusted):
                X = given.X
            else:
                X = np.array(given, dtype=np.float64, order="C", copy=True)  # own copy: caller's array stays writable
                _check_unit_rows(X)
            X.setflags(write=False)
            self.__dict__.update(_X=X, _source=None)
            n_rows, d = X.shape
        if n_rows < 1 or d < 1:
            raise DataError(f"data must be a non-empty 2-D array (rows × features); got shape {(n_rows, d)}.")
        self.__dict__["_n_rows"] = n_rows
        self.__dict__["_d"] = d
        if self.stats is not None:
            if self.stats.d != d or self.stats.n < n_rows:
                raise DataError(f"statistics of {self.stats.n} rows × {self.stats.d} columns do not fit rows of shape "
                                f"{(n_rows, d)}.")
            object.__setattr__(self, "stats", self.stats.frozen())
        if self.sample is not None and self.stats is None:
            raise DataError("a sample of the rows needs the statistics of all of them (stats=Moments).")
        if self.y is not None:
            y = np.asarray(self.y)
            if y.shape[0] != n_rows:
                raise DataError(f"labels have {y.shape[0]} entries but the data has {n_rows} rows.")
            object.__setattr__(self, "y", y)
        if not self.feature_names:
            object.__setattr__(self, "feature_names", tuple(f"x{i}" for i in range(d)))

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        if isinstance(state.get("_source"), _LocalRows):
            state["_X"] = None  # rows read in this process stay here too
            state.pop("fingerprint", None)
        return state

    def __repr__(self) -> str:
        rows = f"{self.n_rows} of {self.n} rows ({self.sample} sample)" if self.sample else f"{self.n} rows"
        return f"PreparedData(name={self.name!r}, {rows} × {self.d}, norm_bound={self.norm_bound:g})"

    # --- shape -------------------------------------------------------------------------------------
    @property
    def n(self) -> int:
        """Number of records behind the statistics (C, eigenvalues): what the mechanisms calibrate to."""
        return self.stats.n if self.stats is not None else self.__dict__["_n_rows"]

    @property
    def n_rows(self) -> int:
        """Number of rows held in ``X`` (= n, except for a sample)."""
        return self.__dict__["_n_rows"]

    @property
    def d(self) -> int:
        return self.__dict__["_d"]

    @property
    def has_labels(self) -> bool:
        return self.y is not None and len(np.unique(self.y)) >= 2

    @property
    def is_private(self) -> bool:
        """False when some preprocessing step was data-dependent and not private."""
        return ledger_is_private(self.ledger)

    @property
    def rows_materialised(self) -> bool:
        """True once ``X`` is held in memory (always for ``PreparedData(X)``; on first read for rows on demand)."""
        return self.__dict__.get("_X") is not None

    @property
    def sample_rows_text(self) -> str:
        """The sample's size as an output may print it: exact under replace-one; under add/remove "at most m" (the
        public reservoir size), since a reservoir holds min(n, m) rows and n is private (privacy review item 17)."""
        m = self.info.get("reservoir_size")
        if self.info.get("neighbouring") == Neighbouring.ADD_REMOVE and m:
            return f"at most {int(m):,}"
        return f"{self.n_rows:,}"

    @property
    def sample_note(self) -> str:
        """"" for all rows, else e.g. "metrics on a reservoir sample of 20,000 rows" (label for outputs)."""
        return f"metrics on a {self.sample} sample of {self.sample_rows_text} rows" if self.sample else ""

    # --- rows --------------------------------------------------------------------------------------
    def take(self, idx: np.ndarray) -> np.ndarray:
        """The rows at ``idx`` (positions in ``range(n_rows)``), without materialising ``X``."""
        idx = np.asarray(idx, dtype=np.intp)
        X = self.__dict__.get("_X")
        return X[idx] if X is not None else self.__dict__["_source"].take(idx)

    # --- sufficient statistics (computed once, reused by every mechanism and metric) ---------------
    @cached_property
    def C(self) -> np.ndarray:
        """Unnormalised, uncentred second-moment matrix C = Σ xᵢxᵢᵀ (unit norm bound)."""
        if self.stats is not None:
            return self.stats.C
        C = self.X.T @ self.X
        C = 0.5 * (C + C.T)
        C.setflags(write=False)
        return C

    @cached_property
    def spectrum(self) -> tuple[np.ndarray, np.ndarray]:
        """(eigenvalues in decreasing order, eigenvectors as columns) of C — non-private."""
        w, V = np.linalg.eigh(self.C)
        w, V = w[::-1].copy(), V[:, ::-1].copy()
        w.setflags(write=False)
        V.setflags(write=False)
        return w, V

    @property
    def eigenvalues(self) -> np.ndarray:
        return self.spectrum[0]

    @property
    def eigenvectors(self) -> np.ndarray:
        return self.spectrum[1]

    @cached_property
    def fingerprint(self) -> str:
        """A content hash of X, y, the norm bound (and the statistics of a sample) — cache key; never leaves the
        process."""
        h = hashlib.blake2b(digest_size=16)
        h.update(np.asarray(self.X.shape, dtype=np.int64).tobytes())
        h.update(self.X.tobytes())
        h.update(np.float64(self.norm_bound).tobytes())
        if self.y is not None:
            h.update(np.asarray(self.y).astype(str).astype("U").tobytes())
        if self.sample is not None:
            h.update(np.int64(self.n).tobytes())
            h.update(np.ascontiguousarray(self.C).tobytes())
        return h.hexdigest()

    # --- derived data ------------------------------------------------------------------------------
    def subset(self, rows: np.ndarray, name: str | None = None) -> PreparedData:
        """The same preprocessing applied to a subset of the rows (index array or boolean mask over ``X``).

        Nothing is copied until the subset's rows are read. C comes from the cheaper of the kept rows or the parent's
        C minus the left-out rows. For a sample (``sample`` set) the left-out sample rows are removed from the
        statistics of all the records (how the SVM metric's held-out rows are kept away from the mechanisms); its
        indices must lie in the sample.
        """
        rows = self._row_index(rows)
        keep = np.zeros(self.n_rows, dtype=bool)
        keep[rows] = True
        unique = int(keep.sum()) == rows.shape[0]
        stats = None
        if self.sample is not None or (self.stats is not None and unique and 2 * rows.shape[0] > self.n_rows):
            if not unique:
                raise DataError("a subset of a sample must not repeat rows.")
            stats = self.stats - Moments.of_rows(self.take(np.flatnonzero(~keep)))
        elif self.stats is not None:
            stats = Moments.of_rows(self.take(rows))
        X = self.__dict__.get("_X")
        given = _Trusted(X[rows]) if X is not None and self.stats is None else _SelectedRows(self, rows)
        return PreparedData(
            X=given, norm_bound=self.norm_bound, y=None if self.y is None else self.y[rows],
            name=name or self.name, feature_names=self.feature_names, ledger=self.ledger,
            clip_fraction=self.clip_fraction, info=dict(self.info),
            diagnostics=Diagnostics(self.diagnostics, n_rows=rows.shape[0] if stats is None else stats.n),
            stats=stats, sample=self.sample,
        )

    def sample_data(self, name: str | None = None) -> PreparedData:
        """The rows held in ``X`` as data of their own (n = n_rows): for the mechanisms that read rows
        (Singhal–Steinke), which then run on the sample. ``self`` when ``X`` holds every row."""
        if self.sample is None:
            return self
        info = {**self.info, "rows": f"{self.sample} sample of {self.n_rows:,} rows"}
        return PreparedData(
            X=_Trusted(self.X), norm_bound=self.norm_bound, y=self.y, name=name or self.name,
            feature_names=self.feature_names, ledger=self.ledger, clip_fraction=self.clip_fraction, info=info,
            diagnostics=Diagnostics(self.diagnostics, n_rows=self.n_rows, sample_of_rows=self.n),
        )

    def keep_rows_local(self) -> PreparedData:
        """The same data, whose rows stay in this process when it is pickled (for worker processes that need only
        the statistics: C, n and the spectrum travel, the rows do not). ``self`` when there are no statistics to send
        instead of the rows."""
        if self.stats is None or isinstance(self.__dict__.get("_source"), _LocalRows):
            return self
        out = PreparedData(
            X=_LocalRows(self), norm_bound=self.norm_bound, y=self.y, name=self.name, feature_names=self.feature_names,
            ledger=self.ledger, clip_fraction=self.clip_fraction, info=dict(self.info),
            diagnostics=Diagnostics(self.diagnostics), stats=self.stats, sample=self.sample)
        for cached in ("C", "spectrum"):
            if cached in self.__dict__:
                out.__dict__[cached] = self.__dict__[cached]
        return out

    def _row_index(self, rows: np.ndarray) -> np.ndarray:
        rows = np.asarray(rows)
        if rows.dtype == bool:
            if rows.shape != (self.n_rows,):
                raise DataError("a boolean row mask needs one entry per row (data.n_rows), got another length.")
            return np.flatnonzero(rows)
        rows = rows.astype(np.intp, copy=False).ravel()
        if rows.size and (rows.min() < 0 or rows.max() >= self.n_rows):
            # no count in the message: under add/remove n is private (privacy review item 17)
            where = (f"only the rows of the {self.sample} sample are held (not every record); subsample sizes and "
                     "row indices must stay within them (data.n_rows)") if self.sample else \
                "indices must lie in range(data.n_rows)"
            raise DataError(f"row index out of range: {where}.")
        return rows

    @classmethod
    def from_unit_rows(cls, X: np.ndarray, y: np.ndarray | None = None, **kwargs) -> PreparedData:
        """Wrap rows that already satisfy ‖x‖ ≤ 1 (no preprocessing recorded)."""
        return cls(X=np.asarray(X, dtype=float), y=y, **kwargs)

    @classmethod
    def _trusted(cls, rows: np.ndarray | RowSource, **kwargs) -> PreparedData:
        """Rows built by dpcore (unit norms guaranteed by construction): no defensive copy, no norm check."""
        return cls(X=rows if isinstance(rows, RowSource) else _Trusted(rows), **kwargs)


def _check_unit_rows(X: np.ndarray) -> None:
    if X.ndim != 2 or X.shape[0] < 1 or X.shape[1] < 1:
        raise DataError(f"data must be a non-empty 2-D array (rows × features); got shape {X.shape}.")
    sq = np.einsum("ij,ij->i", X, X)
    if not np.all(np.isfinite(sq)) and not np.all(np.isfinite(X)):
        raise DataError("data contains NaN or infinite values; impute or drop them first.")
    largest = float(np.sqrt(sq.max(initial=0.0)))
    if largest > 1.0 + _NORM_SLACK:
        raise DataError(
            f"rows must have norm ≤ 1 after preprocessing (largest is {largest:.4g}); "
            "clip rows with dpcore.data.preprocess or divide by the norm bound."
        )
