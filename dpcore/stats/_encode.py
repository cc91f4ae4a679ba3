"""Encode Arrow record batches with a public schema: numbers as they are, categories one-hot with the schema's list.

The streamed counterpart of :mod:`dpcore.data.encode` (same columns, same names, same ranges, same counts), on
``pyarrow`` arrays so that a CSV/Parquet batch or a pandas partition of a Dask DataFrame is encoded without a
round trip through Python objects. Every step is per record; exact counts are non-private diagnostics.
"""

from __future__ import annotations

import itertools

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..data.csv import ROW_DROP_NOTE
from ..data.preprocess import Chunk
from ..data.reading import MISSING_TOKENS
from ..data.schema import Schema, SchemaError
from ..exceptions import DataError, InvalidParameterError
from ..privacy import LedgerEntry

_MISSING = pa.array(sorted(MISSING_TOKENS), type=pa.string())
#: Spellings of the missing tokens a CSV parser should read as null in number columns (every upper/lower mix).
NULL_SPELLINGS = sorted({"".join(v) for t in MISSING_TOKENS
                         for v in itertools.product(*[(ch.lower(), ch.upper()) for ch in t])})
STREAM_MISSING = ("zero", "drop")
_FILL_NOTE = ("per record: a missing number becomes 0 (then clamped to its declared bounds), a missing category "
              "all-zero indicators")


class SchemaEncoder:
    """Turns batches of a table into :class:`~dpcore.data.preprocess.Chunk` s of encoded features.

    ``missing``: ``"zero"`` (per record, free) or ``"drop"`` (rows with a missing value are left out: n then depends
    on the data — NOT private). ``label``: the label column (default: the schema's).
    """

    def __init__(self, schema: Schema, *, label: str | None = None, missing: str = "zero") -> None:
        if missing not in STREAM_MISSING:
            raise InvalidParameterError(f"missing={missing!r} needs the whole table (e.g. column means); streamed "
                                        "data supports missing='zero' (private) or 'drop' (not private).")
        if label is not None and schema.label is not None and label != schema.label:
            raise InvalidParameterError(f"the schema's label is {schema.label!r} but label={label!r} was given; "
                                        "change one of them.")
        self.schema, self.missing = schema, missing
        self.label = label if label is not None else schema.label
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
        self.d = len(names)
        self._categories = {c.name: pa.array(list(c.categories), type=pa.string())
                            for c in self.features if c.is_categorical}

    # --- what to read ------------------------------------------------------------------------------
    @property
    def columns(self) -> list[str]:
        """The source columns needed: the feature columns and the label."""
        return [c.name for c in self.features] + ([self.label] if self.label else [])

    def arrow_types(self) -> dict[str, pa.DataType]:
        """Column types for Arrow's CSV reader: numbers as float64, categories and the label as text."""
        return {c.name: (pa.string() if c.is_categorical else pa.float64()) for c in self.features} | (
            {self.label: pa.string()} if self.label else {})

    def check_columns(self, available: list[str]) -> None:
        have = set(available)
        for name in self.columns:
            if name not in have:
                shown = ", ".join(map(repr, available[:20])) + (" …" if len(available) > 20 else "")
                what = "the label" if name == self.label else "schema column"
                raise SchemaError(f"{what} {name!r} is not in the data (its columns are: {shown}); fix the name in "
                                  "the schema or remove the column from it.")

    def load_ledger(self) -> tuple[LedgerEntry, ...]:
        """The loading steps, as :func:`~dpcore.data.load_csv` records them for the same schema and options."""
        if self.schema.is_public:
            first = LedgerEntry("public schema: declared bounds and category lists",
                                note="per record: numbers are clamped to their declared bounds, unseen categories "
                                     "become all-zero indicators (free)")
        else:
            cols = self.schema.not_public
            first = LedgerEntry("schema values read off the data", private=False,
                                note=f"bounds/categories of {', '.join(cols[:10])}{' …' if len(cols) > 10 else ''}"
                                     " came from the data and are not confirmed as public; replace or confirm them")
        if self.missing == "zero":
            return first, LedgerEntry("fill missing values with 0", note=_FILL_NOTE)
        return first, LedgerEntry("drop rows with missing values", private=False, note=ROW_DROP_NOTE)

    # --- encoding ----------------------------------------------------------------------------------
    def encode(self, batch: pa.RecordBatch | pa.Table, start: int) -> Chunk:
        """Encode ``batch`` whose first record is at position ``start`` of the whole data."""
        r = batch.num_rows
        X = np.zeros((r, self.d), order="F")  # column by column: contiguous writes
        missing = np.zeros(r, dtype=bool)
        counts: dict[str, dict[str, int]] = {"values_outside_bounds": {}, "unseen_categories": {},
                                             "non_numeric_values": {}, "missing_values": {}}
        j = 0
        for col in self.features:
            arr = _column(batch, col.name)
            if col.is_categorical:
                text = _as_text(arr)
                present = text.is_valid().to_numpy(zero_copy_only=False)
                codes = pc.fill_null(pc.index_in(text, value_set=self._categories[col.name]), -1)
                codes = codes.to_numpy(zero_copy_only=False)
                ok = codes >= 0
                X[np.flatnonzero(ok), j + codes[ok]] = 1.0
                unseen = int((present & ~ok).sum())
                if unseen:
                    counts["unseen_categories"][col.name] = unseen
                miss = ~present
                j += len(col.categories)
            else:
                values, bad = _as_numbers(arr, col.name)
                if bad is not None and bad.any():
                    counts["non_numeric_values"][col.name] = int(bad.sum())
                miss = np.isnan(values)
                if np.isinf(values).any():
                    raise DataError(f"column {col.name!r} contains infinite values (near record "
                                    f"{start + int(np.argmax(np.isinf(values))) + 1}); replace them with finite "
                                    "numbers or leave the cells empty (missing).")
                outside = int(np.count_nonzero((values < col.lower) | (values > col.upper)))
                if outside:
                    counts["values_outside_bounds"][col.name] = outside
                X[:, j] = values
                j += 1
            if miss.any():
                counts["missing_values"][col.name] = int(miss.sum())
                missing |= miss
        labels = None
        if self.label:
            labels = _as_text(_column(batch, self.label)).fill_null("(missing)").to_numpy(zero_copy_only=False)
        counts = {k: v for k, v in counts.items() if v}
        counts["rows_read"] = r
        positions = None
        if missing.any():
            if self.missing == "zero":
                np.nan_to_num(X, copy=False, nan=0.0)
            else:
                keep = ~missing
                counts["rows_with_missing_values"] = int(missing.sum())
                X = X[keep]
                labels = None if labels is None else labels[keep]
                positions = start + np.flatnonzero(keep)
        return Chunk(X, labels, start, counts, positions)


def _column(batch: pa.RecordBatch | pa.Table, name: str) -> pa.Array | pa.ChunkedArray:
    return batch.column(batch.schema.get_field_index(name))


def _as_text(arr: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """Cells as category text (stripped; missing tokens → null), with the in-memory reader's rules for typed cells:
    3.0 → "3", True → "True"."""
    t = arr.type
    if pa.types.is_dictionary(t):
        arr = pc.cast(arr, t.value_type)
        t = t.value_type
    if pa.types.is_boolean(t):
        arr = pc.if_else(arr, "True", "False")
    elif pa.types.is_floating(t):
        whole = pc.all(pc.or_kleene(pc.is_null(arr), pc.equal(arr, pc.round(arr)))).as_py()
        arr = pc.cast(pc.cast(arr, pa.int64()) if whole is not False else arr, pa.string())
    elif not (pa.types.is_string(t) or pa.types.is_large_string(t)):
        arr = pc.cast(arr, pa.string())
    text = pc.utf8_trim_whitespace(arr)
    return pc.if_else(pc.is_in(pc.utf8_lower(text), value_set=_MISSING), pa.scalar(None, pa.string()), text)


def _as_numbers(arr: pa.Array | pa.ChunkedArray, name: str) -> tuple[np.ndarray, np.ndarray | None]:
    """(float64 values with NaN where missing, mask of cells that are present but not numbers, or None)."""
    t = arr.type
    if pa.types.is_dictionary(t):
        arr, t = pc.cast(arr, t.value_type), t.value_type
    if pa.types.is_floating(t) or pa.types.is_integer(t) or pa.types.is_boolean(t) or pa.types.is_decimal(t):
        values = pc.cast(arr, pa.float64()).to_numpy(zero_copy_only=False)
        return np.asarray(values, dtype=np.float64), None
    if not (pa.types.is_string(t) or pa.types.is_large_string(t)):
        raise SchemaError(f"schema column {name!r}, field 'role': the column holds {t}, not numbers; set the role "
                          "to categorical (with a category list) or excluded.")
    import pandas as pd

    text = _as_text(arr)
    present = text.is_valid().to_numpy(zero_copy_only=False)
    values = pd.to_numeric(pd.Series(text.to_numpy(zero_copy_only=False), dtype=object), errors="coerce")
    values = values.to_numpy(dtype=np.float64, na_value=np.nan)
    return values, present & np.isnan(values)
