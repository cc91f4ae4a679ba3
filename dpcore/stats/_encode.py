"""Blocks of records of a streamed file or a Dask partition → :class:`~dpcore.data.preprocess.Chunk` s, with the
same per-record transform as the in-memory reader (:class:`dpcore.data.encode.RecordEncoder`): the same columns,
names, ranges, cell rules and counts, so a file gives the same rows whichever path reads it. Every step is per
record; exact counts are non-private diagnostics.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..core.privacy import LedgerEntry
from ..data.csv import _FILL_NOTE, ROW_DROP_NOTE, _schema_entry
from ..data.encode import DEFAULT_NONFINITE, LabelEncoder, RecordEncoder, arrow_text, declared_format
from ..data.preprocess import Chunk
from ..data.reading import FileFormat, cell_text
from ..data.schema import Schema, SchemaError
from ..exceptions import InvalidParameterError
from ..vocabulary import MissingPolicy

STREAM_MISSING = (MissingPolicy.ZERO, MissingPolicy.DROP)


class SchemaEncoder:
    """Turns blocks of records (DataFrames of raw cells) into :class:`~dpcore.data.preprocess.Chunk` s of encoded
    features with the per-record :class:`~dpcore.data.encode.RecordEncoder`.

    ``missing``: ``"zero"`` (per record, free) or ``"drop"`` (rows with a missing value are left out: n then depends
    on the data — NOT private). ``label``: the label column (default: the schema's). ``file_format``: the cell rules
    (default: the schema's declared format).
    """

    def __init__(self, schema: Schema, *, label: str | None = None, missing: str = MissingPolicy.ZERO,
                 file_format: FileFormat | None = None, nonfinite: str = DEFAULT_NONFINITE) -> None:
        if missing not in STREAM_MISSING:
            raise InvalidParameterError(f"missing={missing!r} needs the whole table (e.g. column means); streamed "
                                        "data supports missing='zero' (private) or 'drop' (not private).")
        if label is not None and schema.label is not None and label != schema.label:
            raise InvalidParameterError(f"the schema's label is {schema.label!r} but label={label!r} was given; "
                                        "change one of them.")
        self.schema, self.missing = schema, missing
        self.label = label if label is not None else schema.label
        self.file_format = file_format if file_format is not None else declared_format(schema)
        self.records = RecordEncoder(schema, self.file_format, nonfinite=nonfinite)
        self.features = self.records.features
        self.feature_names = self.records.feature_names
        self.ranges = self.records.ranges
        self.d = self.records.d
        # a declared label (a rule such as income > 50000, or public classes): the in-memory loader's per-record rule
        self.label_encoder = LabelEncoder.for_schema(schema, self.file_format) if self.label == schema.label else None

    # --- what to read ------------------------------------------------------------------------------
    @property
    def columns(self) -> list[str]:
        """The source columns needed: the feature columns and the label."""
        return [c.name for c in self.features] + ([self.label] if self.label else [])

    def check_columns(self, available: list[str]) -> None:
        have = set(available)
        for name in self.columns:
            if name not in have:
                shown = ", ".join(map(repr, available[:20])) + (" …" if len(available) > 20 else "")
                what = "the label" if name == self.label else "schema column"
                raise SchemaError(f"{what} {name!r} is not in the data (its columns are: {shown}); fix the name in "
                                  "the schema or remove the column from it.")

    def load_ledger(self) -> tuple[LedgerEntry, ...]:
        """The loading steps, exactly as :func:`~dpcore.data.load_csv` records them for the same schema and options
        (the same functions write them)."""
        first = _schema_entry(self.schema)
        if self.missing == MissingPolicy.ZERO:
            return first, LedgerEntry("fill missing values with 0", note=_FILL_NOTE)
        return first, LedgerEntry("drop rows with missing values", private=False, note=ROW_DROP_NOTE)

    # --- encoding ----------------------------------------------------------------------------------
    def encode(self, frame: pd.DataFrame, start: int) -> Chunk:
        """Encode the records of ``frame`` (cells as the in-memory reader gives them), the first at position
        ``start`` of the whole data."""
        enc = self.records.encode(frame)
        X, missing = enc.X, enc.missing
        counts = dict(enc.counts)
        counts["rows_read"] = len(frame)
        labels = None
        if self.label_encoder is not None:
            labels, label_counts = self.label_encoder.encode(frame[self.label])
            counts.update({kind: {self.label: count} for kind, count in label_counts.items()})
        elif self.label:
            labels = label_text(frame[self.label])
        positions = None
        if missing.any():
            if self.missing == MissingPolicy.ZERO:
                np.nan_to_num(X, copy=False, nan=0.0)
            else:
                keep = ~missing
                counts["rows_with_missing_values"] = int(missing.sum())
                X = X[keep]
                labels = None if labels is None else labels[keep]
                positions = start + np.flatnonzero(keep)
        return Chunk(X, labels, start, counts, positions)


def label_text(cells: pd.Series) -> np.ndarray:
    """Labels as text (``cell_text``; a missing or empty cell is "(missing)"), vectorised for Arrow-backed text."""
    arrow = arrow_text(cells)
    if arrow is None:
        return np.array([cell_text(v) or "(missing)" for v in cells.to_numpy(dtype=object)], dtype=object).astype(str)
    import pyarrow.compute as pc

    filled = pc.fill_null(arrow, "")
    return np.asarray(pc.if_else(pc.equal(filled, ""), "(missing)", filled).to_numpy(zero_copy_only=False),
                      dtype=object).astype(str)
