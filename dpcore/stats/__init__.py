"""Sufficient statistics as a first-class object: C = Σ uᵢuᵢᵀ, Σ uᵢ and n of the clipped unit rows uᵢ, in O(d²)
memory however many rows there are — from an array, a file streamed in record batches, or a Dask DataFrame.

Every mechanism except the Singhal–Steinke family needs only these. The rows that something must still read — the
SVM metric's held-out rows, the projections plot, the Singhal–Steinke family — come from a seeded **reservoir
sample** of ``reservoir_size`` rows, chosen from row positions and the seed only (never from values), and labelled
as such wherever it is used (``PreparedData.sample_note``: "metrics on a reservoir sample of m rows").

Privacy: the statistics are computed with the same per-record transform as :func:`dpcore.data.preprocess` (one code
path: clamp to the public ranges, centre, clip to the public B, divide by B). Streaming needs public per-column
bounds — the public schema of :mod:`dpcore.data.schema`; a data-derived scaling (``feature_scaling="minmax"``) costs
an extra pass and is recorded as NOT private, like a schema whose values were read off the data. Exact counts (rows
read, rows skipped, clip fraction) are non-private diagnostics, never ledger notes. n is public only under
replace-one: the mechanisms handle that exactly as for in-memory data.

>>> stats = from_csv("big.csv", schema, norm_bound=None, reservoir_size=20_000, seed=0)   # doctest: +SKIP
>>> data = stats.to_prepared()          # C and n from every row, X = the reservoir sample   # doctest: +SKIP
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..core._validation import check_int
from ..core.privacy import Diagnostics, LedgerEntry, ledger_is_private
from ..core.seeding import RandomState
from ..data.datasets import Dataset
from ..data.prepared import Moments, PreparedData
from ..data.preprocess import ArrayChunks, ChunkSource, run_preprocessing, warn_non_private
from ..data.reading import FileFormat
from ..data.schema import Schema, load_schema
from ..exceptions import InvalidParameterError, PrivacyLeakWarning
from ..vocabulary import FeatureScaling, MissingPolicy, Neighbouring
from ._encode import SchemaEncoder
from ._reservoir import ReservoirCollector, position_keys, reservoir_seed

__all__ = [
    "DEFAULT_RESERVOIR",
    "Moments",
    "SchemaEncoder",
    "SufficientStats",
    "from_array",
    "from_csv",
    "from_dask",
    "from_dask_csv",
    "from_dataset",
    "from_parquet",
    "from_source",
    "position_keys",
    "reservoir_seed",
]

#: Default size of the reservoir sample (rows kept for the SVM metric, projections and Singhal–Steinke).
DEFAULT_RESERVOIR = 20_000


@dataclass(frozen=True, eq=False)
class SufficientStats:
    """The statistics of the preprocessed unit rows of a dataset (‖uᵢ‖ ≤ 1, in units of B), plus a reservoir sample.

    ``moments`` (C, Σu, n) describe every row; ``sample`` holds the unit rows of the reservoir (in file order) with
    their ``sample_labels`` and ``sample_positions``. ``ledger`` lists every loading and preprocessing step (what the
    result costs), ``diagnostics`` the exact counts (NOT private). Shares
    :class:`~dpcore.data.prepared.PreparedSummary` with :class:`PreparedData`.
    """

    moments: Moments
    norm_bound: float
    name: str
    feature_names: tuple[str, ...]
    ledger: tuple[LedgerEntry, ...]
    info: dict
    diagnostics: Diagnostics
    clip_fraction: float
    sample: np.ndarray
    sample_labels: np.ndarray | None
    sample_positions: np.ndarray
    reservoir_size: int

    @property
    def C(self) -> np.ndarray:
        return self.moments.C

    @property
    def total(self) -> np.ndarray:
        """Σ uᵢ (unit scale)."""
        return self.moments.total

    @property
    def n(self) -> int:
        return self.moments.n

    @property
    def d(self) -> int:
        return self.moments.d

    @property
    def is_private(self) -> bool:
        return ledger_is_private(self.ledger)

    @property
    def sample_is_complete(self) -> bool:
        """True when the reservoir holds every row (n ≤ reservoir size): the data then equals the in-memory data."""
        return self.sample.shape[0] == self.n

    def to_prepared(self, name: str | None = None) -> PreparedData:
        """A :class:`PreparedData` for the mechanisms and metrics: C and n from every row, ``X`` = the reservoir
        sample (flagged ``sample="reservoir"`` unless it holds every row)."""
        if self.sample.shape[0] == 0:
            raise InvalidParameterError("the reservoir is empty (reservoir_size=0): the mechanisms' input needs at "
                                        "least a few rows; use reservoir_size ≥ 2.")
        labels = self.sample_labels
        return PreparedData._trusted(
            self.sample, norm_bound=self.norm_bound, y=labels, name=name or self.name,
            feature_names=self.feature_names, ledger=self.ledger, clip_fraction=self.clip_fraction,
            info=dict(self.info), diagnostics=Diagnostics(self.diagnostics), stats=self.moments,
            sample=None if self.sample_is_complete and not self._n_private else "reservoir")

    @property
    def _n_private(self) -> bool:
        """Under add/remove n is private: whether the reservoir holds every row (n ≤ its size) is then not said."""
        return self.info.get("neighbouring") == Neighbouring.ADD_REMOVE and self.reservoir_size > 0


def _label_values(labels: np.ndarray | None) -> np.ndarray | None:
    """Text labels → int when every one is a whole number, float when numeric (the in-memory loader's rule)."""
    if labels is None or labels.size == 0 or labels.dtype.kind in "iufb":
        return labels
    try:
        values = np.asarray(labels, dtype=np.float64)
    except (TypeError, ValueError):
        return np.asarray(labels, dtype=str)
    if np.all(np.isfinite(values)):
        return values.astype(np.int64) if np.all(values == np.round(values)) else values
    return np.asarray(labels, dtype=str)


def from_source(source: ChunkSource, *, name: str = "data", feature_names: tuple[str, ...] = (),
                feature_ranges: np.ndarray | None = None, suggested_norm_bound: float | None = None,
                load_ledger: tuple[LedgerEntry, ...] = (), load_diagnostics: dict | None = None,
                reservoir_size: int = DEFAULT_RESERVOIR, seed: RandomState = None,
                **options: Any) -> SufficientStats:
    """Statistics of any :class:`~dpcore.data.preprocess.ChunkSource`; ``options`` as for
    :func:`~dpcore.data.preprocess` (``norm_bound``, ``centering``, ``feature_scaling``, …). ``seed`` seeds both
    the reservoir and the DP mean (independent child streams); None (the default) draws from OS entropy, an integer
    makes the run reproducible (opt-in: a fixed seed makes every noise draw a public constant)."""
    reservoir_size = check_int(reservoir_size, "reservoir_size", 0)
    collector = ReservoirCollector(reservoir_size, reservoir_seed(seed)) if reservoir_size > 0 else None
    options.setdefault("random_state", seed)
    res = run_preprocessing(source, feature_ranges=feature_ranges, suggested_norm_bound=suggested_norm_bound,
                            name=name, load_ledger=load_ledger, load_diagnostics=load_diagnostics,
                            collector=collector, **options)
    warn_non_private(name, res.ledger)
    if collector is not None and res.collected is not None:
        rows, labels, positions = res.collected.result(source.d)
    else:
        rows, labels, positions = np.empty((0, source.d)), None, np.empty(0, dtype=np.int64)
    rows.setflags(write=False)
    diagnostics = Diagnostics(res.diagnostics)
    diagnostics["reservoir_rows"] = int(rows.shape[0])
    info = {**res.info, "reservoir_size": reservoir_size,
            "rows": "every row" if rows.shape[0] == res.moments.n else f"reservoir sample of {rows.shape[0]:,} rows"}
    return SufficientStats(res.moments.frozen(), res.norm_bound, name,
                           tuple(feature_names) or tuple(f"x{i}" for i in range(source.d)), res.ledger, info,
                           diagnostics, res.clip_fraction, rows, _label_values(labels), positions, reservoir_size)


def from_array(X: np.ndarray, *, y: np.ndarray | None = None, name: str = "array",
               feature_names: tuple[str, ...] = (), feature_ranges: np.ndarray | None = None,
               reservoir_size: int = DEFAULT_RESERVOIR, seed: RandomState = None,
               **options: Any) -> SufficientStats:
    """Statistics of an in-memory array of raw rows (one pass in chunks; nothing is copied whole).

    ``feature_ranges`` ((d, 2) public per-column bounds) enable ``feature_scaling="schema"``; otherwise give a public
    ``norm_bound``. The reservoir holds the same rows as a streamed or Dask computation of the same data and seed.
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise InvalidParameterError(f"X must be a 2-D array (rows × features); got shape {X.shape}.")
    return from_source(ArrayChunks(X, None if y is None else np.asarray(y)), name=name, feature_names=feature_names,
                       feature_ranges=feature_ranges, reservoir_size=reservoir_size, seed=seed, **options)


def from_dataset(dataset: Dataset, *, reservoir_size: int = DEFAULT_RESERVOIR, seed: RandomState = None,
                 **options: Any) -> SufficientStats:
    """Statistics of a loaded :class:`~dpcore.data.Dataset` (its schema ranges, load ledger and diagnostics)."""
    return from_source(ArrayChunks(dataset.X, dataset.y), name=dataset.name, feature_names=dataset.feature_names,
                       feature_ranges=dataset.feature_ranges, suggested_norm_bound=dataset.suggested_norm_bound,
                       load_ledger=dataset.load_ledger, load_diagnostics=dataset.diagnostics,
                       feature_groups=dataset.feature_groups, reservoir_size=reservoir_size, seed=seed, **options)


def _schema_source(kind: str, path_or_frame, schema, label, missing, name, file_format=None, **source_options):
    schema = load_schema(schema) if not isinstance(schema, Schema) else schema
    encoder = SchemaEncoder(schema, label=label, missing=missing, file_format=file_format)
    if kind == "csv":
        from ._arrow import CsvSource

        source = CsvSource(path_or_frame, encoder, **source_options)
    elif kind == "parquet":
        from ._arrow import ParquetSource

        source = ParquetSource(path_or_frame, encoder, **source_options)
    else:
        from ._dask import DaskSource

        source = DaskSource(path_or_frame, encoder)
    return source, encoder


def _from_schema_source(source: ChunkSource, encoder: SchemaEncoder, name: str, reservoir_size: int,
                        seed: RandomState, options: dict) -> SufficientStats:
    if options.get("feature_scaling", FeatureScaling.SCHEMA) == FeatureScaling.MINMAX:
        warnings.warn(f"{name}: min–max scaling reads the ranges off the data in an extra pass (NOT private); the "
                      "schema's public bounds are the private choice.", PrivacyLeakWarning, stacklevel=3)
    return from_source(source, name=name, feature_names=encoder.feature_names, feature_ranges=encoder.ranges,
                       load_ledger=encoder.load_ledger(), feature_groups=encoder.records.groups,
                       reservoir_size=reservoir_size, seed=seed, **options)


def from_csv(path: str | Path, schema: Schema | str | Path, *, label: str | None = None,
             missing: str = MissingPolicy.ZERO,
             delimiter: str | None = None, block_size: int | None = None, reservoir_size: int = DEFAULT_RESERVOIR,
             seed: RandomState = None, name: str | None = None, file_format: FileFormat | None = None,
             **options: Any) -> SufficientStats:
    """Statistics of a CSV file streamed in blocks of records: memory holds one block, the O(d²) statistics and
    the reservoir, however large the file. The file is read with the schema's declared file format (``delimiter``
    overrides its delimiter; ``file_format`` replaces it for a schema that declares none) and the in-memory reader's
    per-line and per-cell rules, through the same per-record
    transform (:class:`~dpcore.data.encode.RecordEncoder`): the same rows as :func:`~dpcore.data.load_csv`.

    ``schema`` is the public schema (columns, bounds, category lists; a path or a :class:`Schema`); ``label`` the
    label column (default: the schema's). ``options`` as for :func:`~dpcore.data.preprocess` (e.g. ``norm_bound``,
    ``centering="public"``, ``centering="dp"`` — which reads the file twice).
    """
    extra = {} if block_size is None else {"block_size": block_size}
    source, encoder = _schema_source("csv", path, schema, label, missing, name, file_format, delimiter=delimiter,
                                     **extra)
    return _from_schema_source(source, encoder, name or Path(path).stem, reservoir_size, seed, options)


def from_parquet(path: str | Path, schema: Schema | str | Path, *, label: str | None = None,
                 missing: str = MissingPolicy.ZERO,
                 batch_rows: int | None = None, reservoir_size: int = DEFAULT_RESERVOIR, seed: RandomState = None,
                 name: str | None = None, **options: Any) -> SufficientStats:
    """Statistics of a Parquet file or dataset folder, read in record batches (see :func:`from_csv`)."""
    extra = {} if batch_rows is None else {"batch_rows": batch_rows}
    source, encoder = _schema_source("parquet", path, schema, label, missing, name, **extra)
    return _from_schema_source(source, encoder, name or Path(path).stem, reservoir_size, seed, options)


def from_dask(ddf, schema: Schema | str | Path, norm_bound: float | None = None, *, label: str | None = None,
              missing: str = MissingPolicy.ZERO, reservoir_size: int = DEFAULT_RESERVOIR, seed: RandomState = None,
              name: str = "dask", file_format: FileFormat | None = None, **options: Any) -> SufficientStats:
    """Statistics of a Dask DataFrame: per-partition clipped Gram matrices (and Σx, counts, reservoir candidates),
    summed in a tree on the active scheduler (a ``distributed.Client`` when one is connected).

    Equal to :func:`from_csv`/:func:`from_array` on the same rows up to float rounding, with the same reservoir for
    the same seed (the reservoir needs each partition's offset: one counting pass first; ``reservoir_size=0`` skips
    it).
    """
    source, encoder = _schema_source("dask", ddf, schema, label, missing, name, file_format)
    if norm_bound is not None:
        options["norm_bound"] = norm_bound
    return _from_schema_source(source, encoder, name, reservoir_size, seed, options)


def from_dask_csv(paths: str | Path | list, schema: Schema | str | Path, *, label: str | None = None,
                  missing: str = MissingPolicy.ZERO, block_bytes: int | None = None,
                  reservoir_size: int = DEFAULT_RESERVOIR, seed: RandomState = None, name: str | None = None,
                  file_format: FileFormat | None = None, **options: Any) -> SufficientStats:
    """Statistics of CSV files computed on the active Dask scheduler: each file is cut into line-aligned byte blocks
    and every block is read by the one record parser that :func:`from_csv` and the in-memory reader use, so the
    result equals theirs (C to rounding, the same reservoir for the same seed). ``paths``: a path, a glob or a list
    (read in order, each with its own header row when the format has one)."""
    import glob as _glob

    from ._arrow import csv_header
    from ._dask import DASK_BLOCK_BYTES, DaskCsvSource

    schema = load_schema(schema) if not isinstance(schema, Schema) else schema
    encoder = SchemaEncoder(schema, label=label, missing=missing, file_format=file_format)
    if isinstance(paths, (str, Path)):
        files = sorted(_glob.glob(str(paths))) or [str(paths)]
    else:
        files = [str(p) for p in paths]
    if not files or not Path(files[0]).is_file():
        raise InvalidParameterError(f"no CSV file matches {str(paths)!r}.")
    names = [c.name for c in schema.columns]
    header = csv_header(files[0], encoder.file_format, names)
    for other in files[1:]:
        if csv_header(other, encoder.file_format, names) != header:
            raise InvalidParameterError(f"{Path(other).name}: its header row differs from {Path(files[0]).name}'s; "
                                        "every file of a --dask glob must have the same columns.")
    source = DaskCsvSource(files, encoder, header, block_bytes=block_bytes or DASK_BLOCK_BYTES)
    stem = Path(files[0]).stem if len(files) == 1 else (Path(str(paths)).stem.replace("*", "") or "dask")
    return _from_schema_source(source, encoder, name or stem, reservoir_size, seed, options)
