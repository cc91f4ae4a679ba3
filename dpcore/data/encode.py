"""The per-record transform of a public schema: one record's cells → its encoded row (numbers as they are,
categories one-hot with the schema's list). One implementation, :class:`RecordEncoder`, serves the in-memory reader
(:func:`encode_table`), the streamed files and the Dask partitions of :mod:`dpcore.stats` — so the three paths are
identical in law: the same file gives the same rows, whichever path reads it.

Every rule looks at one cell of one record, never at the other records, so no record can make a run fail or change
how another record is encoded:

* a numeric cell is a number when it is one under the declared file format (decimal mark, thousands separator,
  missing tokens: :meth:`~dpcore.data.reading.FileFormat.parse_numbers`); anything else (text, a date) is
  **missing** and counted;
* a non-finite number ("inf", "-Infinity", or "1e400", which overflows) follows the declared
  :data:`NONFINITE_POLICIES` policy — ``"clamp"`` (default: ±inf becomes the declared upper/lower bound, like every
  other number outside the bounds) or ``"missing"``;
* a categorical cell outside the schema's list is an all-zero indicator row (counted).

The exact counts (values outside the bounds, non-finite, unseen categories, non-numeric and missing cells) are
non-private diagnostics; no error message ever quotes a cell or names a row.

**The public centre** (``centering='public'``, CLI ``--center public``) is a function of the schema alone,
:func:`public_center`, in the units after schema scaling (each numeric column mapped to [0, 1]):

* a numeric (or numeric binary) column: 0.5, the middle of its public range ((lower + upper)/2 in raw units);
* the m indicators of a one-hot column (categorical, or binary with categories): 1/m each.

The rule for both: the centre of the values the schema allows — the midpoint of an interval, the centroid of the
m indicator rows e₁ … eₘ (the mean under an even spread over the declared categories). 1/m rather than 0.5 for an
indicator because a group's row holds at most one 1: centred at 1/m its squared norm is at most 1 − 1/m (< 1, the
uncentred bound), centred at 0.5 it would be m/4, so the schema's norm bound B (and the noise scaled to it) would
grow with every category. Records never enter it: neighbouring files under one schema give the same centre.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..core._validation import check_choice
from ..exceptions import DataError
from .reading import FileFormat, RawTable, cell_text
from .schema import MISSING_LABEL, LabelRule, Schema, SchemaError

#: How a non-finite number is treated: clamped to the declared bounds, or counted as a missing cell.
NONFINITE_POLICIES = ("clamp", "missing")
#: The default policy (a declared, data-independent choice).
DEFAULT_NONFINITE = "clamp"
#: Plain numbers under each decimal mark: converted in one vectorised call (see :meth:`RecordEncoder._parse`).
PLAIN_NUMBER = {".": r"^-?[0-9]{1,18}(?:\.[0-9]{1,18})?(?:[eE][+-]?[0-9]{1,2})?$",
                ",": r"^-?[0-9]{1,18}(?:,[0-9]{1,18})?(?:[eE][+-]?[0-9]{1,2})?$"}
#: What the per-record rules do, for ledger notes and documentation (depends only on the policy).
RULES_NOTE = {"clamp": "a cell that is not a number under the declared format counts as missing, ±inf and "
                       "overflowing numbers are clamped to the declared bounds",
              "missing": "a cell that is not a number under the declared format, ±inf and overflowing numbers count "
                         "as missing"}


@dataclass(frozen=True, eq=False)
class EncodedTable:
    """Feature matrix of a table under a schema. ``X`` has NaN where a numeric cell is missing (or not a number);
    missing or unseen categories are all-zero indicators."""

    X: np.ndarray
    feature_names: tuple[str, ...]
    ranges: np.ndarray            #: (d, 2): the schema's bounds, [0, 1] for indicators
    missing: np.ndarray           #: (n,) rows with a missing cell in some feature column
    counts: dict = field(default_factory=dict)  #: {kind: {column: count}} — exact, NOT private
    groups: tuple[int, ...] = ()  #: the source column of each feature (one id per one-hot group): public


def declared_format(schema: Schema, fallback: FileFormat | None = None) -> FileFormat:
    """The file format a schema declares (its ``file_format``); ``fallback`` (or the default CSV format) for a
    schema that declares none. The one place every reader takes its cell rules from."""
    fmt = getattr(schema, "file_format", None)
    if isinstance(fmt, FileFormat):
        return fmt
    return fallback if fallback is not None else FileFormat()


def table_format(table: RawTable) -> FileFormat:
    """The format ``table``'s cells were read with."""
    fmt = getattr(table, "file_format", None)
    if isinstance(fmt, FileFormat):
        return fmt
    return FileFormat(kind=table.info.format, decimal=table.info.decimal)  # pragma: no cover - older RawTable


class RecordEncoder:
    """Record cells → encoded rows under ``schema``, with the cell rules of ``file_format`` (see the module
    docstring). ``feature_names``, ``ranges`` (the declared bounds, [0, 1] for indicators) and ``d`` describe the
    output; :meth:`encode` maps a block of records (a DataFrame with the schema's columns, cells as the readers
    give them: stripped text or None, or typed numbers) to an :class:`EncodedTable`."""

    def __init__(self, schema: Schema, file_format: FileFormat | None = None, *,
                 nonfinite: str = DEFAULT_NONFINITE) -> None:
        self.schema = schema
        self.file_format = file_format if file_format is not None else declared_format(schema)
        self.nonfinite = check_choice(nonfinite, "nonfinite", NONFINITE_POLICIES)
        self.features = schema.features
        if not self.features:
            raise SchemaError("schema: no feature columns (every column is excluded or the label); set a column's "
                              "role to numeric, binary or categorical.")
        names: list[str] = []
        ranges: list[tuple[float, float]] = []
        for c in self.features:
            if c.is_categorical:
                names += [f"{c.name}={v}" for v in c.categories]
                ranges += [(0.0, 1.0)] * len(c.categories)
            else:
                names.append(c.name)
                ranges.append((c.lower, c.upper))
        self.feature_names = tuple(names)
        self.ranges = np.asarray(ranges, dtype=np.float64)
        self.groups = feature_groups(schema)
        self.d = len(names)
        self._categories = {c.name: pd.Index(list(c.categories), dtype=object)
                            for c in self.features if c.is_categorical}

    @property
    def rules_note(self) -> str:
        """The per-record cell rules in words (the same for every reader and every dataset)."""
        return RULES_NOTE[self.nonfinite]

    def numbers(self, cells: pd.Series, lower: float, upper: float,
                parsed: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray, int]:
        """(values with NaN where missing, mask of present cells that are not numbers, number of non-finite cells):
        one cell at a time, under the declared format and non-finite policy. ``parsed``: the cells' (values, bad)
        from :meth:`_parse` when already computed."""
        values, bad = self._parse(cells) if parsed is None else parsed
        infinite = np.isinf(values)
        n_inf = int(infinite.sum())
        if n_inf:
            if self.nonfinite == "clamp":
                values[infinite] = np.where(values[infinite] > 0, upper, lower)
            else:
                values[infinite] = np.nan
        values[bad] = np.nan
        return values, np.asarray(bad, dtype=bool), n_inf

    def _parse(self, cells: pd.Series, text=None) -> tuple[np.ndarray, np.ndarray]:
        """(values, bad) by the format's per-cell rule (:meth:`~dpcore.data.reading.FileFormat.parse_numbers`).
        Text cells that are plain numbers under the declared decimal mark (``PLAIN_NUMBER``: at most 18 digits on
        either side of the mark, an exponent of at most two digits) are converted by Arrow in one vectorised call
        — the same value the rule gives; every other cell goes through the rule itself."""
        import pyarrow as pa

        text = arrow_text(cells) if text is None else text
        if text is None:
            if cells.dtype != object:
                values, bad = self.file_format.parse_numbers(cells)
                return np.array(values, dtype=np.float64), np.asarray(bad, dtype=bool)
            try:
                text = pa.array(cells.to_numpy(dtype=object), type=pa.string(), from_pandas=True)
            except (pa.ArrowInvalid, pa.ArrowTypeError):  # cells that are not text: the rule handles them
                values, bad = self.file_format.parse_numbers(cells)
                return np.array(values, dtype=np.float64), np.asarray(bad, dtype=bool)
        return self._parse_text(text)

    def _parse_text(self, text) -> tuple[np.ndarray, np.ndarray]:
        """(values, bad) of a pyarrow string array of cells (null: missing), as :meth:`_parse` describes."""
        import pyarrow as pa
        import pyarrow.compute as pc

        decimal = self.file_format.number_decimal
        plain = pc.fill_null(pc.match_substring_regex(text, PLAIN_NUMBER[decimal]), False)
        plain_mask = plain.to_numpy(zero_copy_only=False)
        values = np.full(len(text), np.nan)
        bad = np.zeros(len(text), dtype=bool)
        if plain_mask.any():
            numbers = pc.filter(text, plain)
            if decimal != ".":
                numbers = pc.replace_substring(numbers, decimal, ".")
            values[plain_mask] = pc.cast(numbers, pa.float64()).to_numpy(zero_copy_only=False)
        rest = text.is_valid().to_numpy(zero_copy_only=False) & ~plain_mask
        if rest.any():
            v, b = self.file_format.parse_numbers(pd.Series(text.filter(pa.array(rest)).to_pylist(), dtype=object))
            values[rest], bad[rest] = v, b
        return values, bad

    def _parse_arrow_columns(self, columns: dict) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """(values, bad) of the numeric columns held as Arrow text (``columns``: name → pyarrow array or None),
        parsed in one call over their concatenated cells (the same per-cell rule as :meth:`_parse`; one call
        instead of one per column)."""
        import pyarrow as pa

        texts = {c.name: columns[c.name] for c in self.features
                 if not c.is_categorical and columns[c.name] is not None}
        if len(texts) < 2:
            return {}
        values, bad = self._parse_text(pa.concat_arrays(list(texts.values())))
        n = len(next(iter(texts.values())))
        return {name: (values[i * n:(i + 1) * n].copy(), bad[i * n:(i + 1) * n].copy())
                for i, name in enumerate(texts)}

    def encode(self, frame: pd.DataFrame) -> EncodedTable:
        """Encode the records of ``frame`` (its index is ignored; one row per record)."""
        n = len(frame)
        X = np.zeros((n, self.d), order="F")
        missing = np.zeros(n, dtype=bool)
        counts: dict[str, dict[str, int]] = {"values_outside_bounds": {}, "non_finite_values": {},
                                             "unseen_categories": {}, "non_numeric_values": {},
                                             "missing_values": {}}
        series = {col.name: frame[col.name] for col in self.features}
        arrows = {name: arrow_text(s) for name, s in series.items()}
        parsed = self._parse_arrow_columns(arrows)
        j = 0
        for col in self.features:
            s, arrow = series[col.name], arrows[col.name]
            present = s.notna().to_numpy() if arrow is None else arrow.is_valid().to_numpy(zero_copy_only=False)
            if col.is_categorical:
                text = (s.map(cell_text, na_action="ignore").to_numpy(dtype=object) if arrow is None
                        else arrow.to_numpy(zero_copy_only=False))  # Arrow text: already cell_text's strings
                codes = self._categories[col.name].get_indexer(text)
                ok = codes >= 0
                X[np.flatnonzero(ok), j + codes[ok]] = 1.0
                _count(counts, "unseen_categories", col.name, int((present & ~ok).sum()))
                miss = ~present
                j += len(col.categories)
            else:
                values, bad, n_inf = self.numbers(s, col.lower, col.upper,
                                                  parsed.get(col.name) or self._parse(s, arrow))
                _count(counts, "non_numeric_values", col.name, int(bad.sum()))
                _count(counts, "non_finite_values", col.name, n_inf)
                finite = values[~np.isnan(values)]
                _count(counts, "values_outside_bounds", col.name,
                       int(np.count_nonzero((finite < col.lower) | (finite > col.upper))))
                miss = np.isnan(values)
                X[:, j] = values
                j += 1
            _count(counts, "missing_values", col.name, int(miss.sum()))
            missing |= miss
        return EncodedTable(X=X, feature_names=self.feature_names, ranges=self.ranges, missing=missing,
                            counts={k: v for k, v in counts.items() if v}, groups=self.groups)


class LabelEncoder:
    """Label cells → one label per record under the schema's label declaration, one cell at a time (the in-memory,
    streamed and Dask paths share it):

    * a derived label (:class:`~dpcore.data.schema.LabelRule`): "1" where the cell's number (under the declared file
      format) is > the threshold (or ≠ 0), else "0";
    * declared classes: the class the cell names (as text, or as the same number: "1.0" is class 1);
    * anything else — a missing cell, a cell that is not a number (derived label), a value outside the declared
      classes — is :data:`~dpcore.data.schema.MISSING_LABEL`, counted (a non-private diagnostic), never a refusal
      and never quoted (privacy review item 13).
    """

    def __init__(self, rule: LabelRule | None, classes: tuple[str, ...] | None,
                 file_format: FileFormat | None = None) -> None:
        if (rule is None) == (classes is None):
            raise SchemaError("a label encoder needs exactly one declaration: a rule (column > t, or ≠ 0) or the "
                              "label's classes.")
        self.rule, self.classes = rule, classes
        self.file_format = file_format if file_format is not None else FileFormat()
        self._numeric_classes: dict[float, str] = {}
        if classes is not None:
            values, bad = self.file_format.parse_numbers(pd.Series(list(classes), dtype=object))
            self._numeric_classes = {float(v): c for v, b, c in zip(values, bad, classes) if not b and np.isfinite(v)}

    @classmethod
    def for_schema(cls, schema: Schema, file_format: FileFormat | None = None) -> LabelEncoder | None:
        """The encoder of ``schema``'s label declaration, or None for a plain label (read as it is)."""
        if schema.label is None or not schema.label_declared:
            return None
        return cls(schema.label_rule, schema.label_classes, file_format or declared_format(schema))

    def encode(self, cells: pd.Series) -> tuple[np.ndarray, dict[str, int]]:
        """(labels as text, counts): counts ``labels_missing`` (missing cells, or not a number for a derived
        label) and ``labels_outside_classes`` — exact, NOT private."""
        raw = pd.Series(object_cells(cells), dtype=object)
        present = raw.notna().to_numpy()
        out = np.full(len(raw), MISSING_LABEL, dtype=object)
        counts: dict[str, int] = {}
        if self.rule is not None:
            values, bad = self.file_format.parse_numbers(raw)
            values = np.where(bad, np.nan, values)
            classes = self.rule.classes_of(values)
            ok = ~np.isnan(classes)
            out[ok] = np.where(classes[ok] > 0, "1", "0")
            counts["labels_missing"] = int((~ok).sum())
        else:
            text = raw.map(cell_text, na_action="ignore").to_numpy(dtype=object)
            ok = present & pd.Series(text, dtype=object).isin(self.classes).to_numpy()
            out[ok] = text[ok]
            rest = present & ~ok
            if rest.any() and self._numeric_classes:
                values, bad = self.file_format.parse_numbers(raw[rest])
                named = [None if b else self._numeric_classes.get(float(v)) for v, b in zip(values, bad)]
                found = np.array([c is not None for c in named], dtype=bool)
                hit = np.flatnonzero(rest)[found]
                out[hit] = [c for c in named if c is not None]
                ok[hit] = True
            counts["labels_missing"] = int((~present).sum())
            counts["labels_outside_classes"] = int((present & ~ok).sum())
        return out.astype(str), {k: v for k, v in counts.items() if v}


def typed_labels(labels: np.ndarray) -> np.ndarray:
    """Text labels → int when every one is a whole number, float when every one is a finite number, else text (the
    rule of the in-memory loader and of :mod:`dpcore.stats`)."""
    try:
        values = np.asarray(labels, dtype=np.float64)
    except (TypeError, ValueError):
        return np.asarray(labels, dtype=str)
    if values.size and np.all(np.isfinite(values)):
        return values.astype(np.int64) if np.all(values == np.round(values)) else values
    return np.asarray(labels, dtype=str)


def feature_groups(schema: Schema) -> tuple[int, ...]:
    """One id per encoded feature: the position of its source column among the schema's features (the m indicators
    of a one-hot column share one id). Public: a function of the schema (``Dataset.feature_groups``)."""
    return tuple(i for i, c in enumerate(schema.features) for _ in range(c.width))


def center_of_groups(groups: tuple[int, ...] | list[int] | np.ndarray) -> np.ndarray:
    """The public centre after schema scaling, from the encoding's groups alone: 0.5 for a feature alone in its
    group (a numeric column in [0, 1]), 1/m for each of a group's m indicators (see the module docstring)."""
    ids = np.asarray(groups, dtype=np.int64)
    _, inverse, sizes = np.unique(ids, return_inverse=True, return_counts=True)
    size = sizes[inverse].astype(np.float64)
    return np.where(size == 1, 0.5, 1.0 / size)


def public_center(schema: Schema, *, require_public: bool = True) -> np.ndarray:
    """The public centre of ``schema``'s encoded features (units after schema scaling; module docstring).

    With ``require_public`` (the default), a schema whose structure or used values were read off the data
    (``from_data``) is refused — a centre taken from them would be a function of the records too.
    """
    if require_public:
        open_items = [c.name for c in schema.features if not c.is_public]
        if open_items or not getattr(schema, "structure_public", True):
            shown = ", ".join(map(repr, open_items[:8])) + (" …" if len(open_items) > 8 else "")
            what = f"column(s) {shown} have" if open_items else "the roles or the label were"
            raise SchemaError(f"a public centre needs a public schema, but {what} values read off the data "
                              "(from_data); confirm or replace them (`dpcore schema check --require-public` lists "
                              "them), or centre otherwise (DP mean, or none).")
    if not schema.features:
        raise SchemaError("schema: no feature columns, so there is nothing to centre.")
    return center_of_groups(feature_groups(schema))


def arrow_text(cells: pd.Series):
    """The cells as a pyarrow string array when ``cells`` is an Arrow-backed text column (as the streamed CSV
    reader's fast path gives them: stripped text, null for missing), else None. Such cells are read without a
    round trip through Python objects; their values are the same text, so every rule gives the same result."""
    dtype = cells.dtype
    if not isinstance(dtype, pd.ArrowDtype):
        return None
    import pyarrow as pa

    if not (pa.types.is_string(dtype.pyarrow_dtype) or pa.types.is_large_string(dtype.pyarrow_dtype)):
        return None
    text = pa.array(cells.array)
    return text if text.type == pa.string() else text.cast(pa.string())


def object_cells(cells: pd.Series) -> np.ndarray:
    """The cells as a NumPy object array, None for a missing Arrow-backed cell."""
    arrow = arrow_text(cells)
    return cells.to_numpy(dtype=object) if arrow is None else arrow.to_numpy(zero_copy_only=False)


def _count(counts: dict, kind: str, column: str, value: int) -> None:
    if value:
        counts[kind][column] = counts[kind].get(column, 0) + value


def check_columns(table: RawTable, schema: Schema) -> None:
    """Every feature column and the label of ``schema`` must be in ``table``; the error names the column."""
    have = set(table.columns)
    for c in schema.features:
        if c.name not in have:
            shown = ", ".join(map(repr, table.columns[:20])) + (" …" if len(table.columns) > 20 else "")
            raise SchemaError(f"schema column {c.name!r} is not in the file (its columns are: {shown}); fix the name "
                              "in the schema or remove the column from it.")
    if schema.label is not None and schema.label not in have:
        raise SchemaError(f"schema, field 'label': column {schema.label!r} is not in the file; fix the name or "
                          "remove the label.")


def encode_table(table: RawTable, schema: Schema, rows: np.ndarray | None = None, *,
                 nonfinite: str = DEFAULT_NONFINITE) -> EncodedTable:
    """Encode the schema's feature columns of ``table`` (optionally only ``rows``, a boolean mask) with the
    per-record :class:`RecordEncoder` and the cell rules of the format the table was read with."""
    check_columns(table, schema)
    if not schema.features:
        raise DataError("no feature columns: every column is excluded or the label; set a column's role to numeric, "
                        "binary or categorical.")
    frame = table.frame if rows is None else table.frame[rows]
    return RecordEncoder(schema, table_format(table), nonfinite=nonfinite).encode(frame)

