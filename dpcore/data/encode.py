"""Turn a :class:`RawTable` into a numeric matrix with a :class:`Schema`: numbers as they are, text columns one-hot
with the schema's category list. Every step is per record; the exact counts of what happened (values outside the
declared bounds, unseen categories, non-numeric cells, missing cells) are returned as non-private diagnostics.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..exceptions import DataError
from .reading import RawTable, cell_text
from .schema import Schema, SchemaError


@dataclass(frozen=True, eq=False)
class EncodedTable:
    """Feature matrix of a table under a schema. ``X`` has NaN where a numeric cell is missing (or not a number);
    missing or unseen categories are all-zero indicators."""

    X: np.ndarray
    feature_names: tuple[str, ...]
    ranges: np.ndarray            #: (d, 2): the schema's bounds, [0, 1] for indicators
    missing: np.ndarray           #: (n,) rows with a missing cell in some feature column
    counts: dict = field(default_factory=dict)  #: {kind: {column: count}} — exact, NOT private


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


def encode_table(table: RawTable, schema: Schema, rows: np.ndarray | None = None) -> EncodedTable:
    """Encode the schema's feature columns of ``table`` (optionally only ``rows``, a boolean mask)."""
    check_columns(table, schema)
    frame = table.frame if rows is None else table.frame[rows]
    n = len(frame)
    blocks: list[np.ndarray] = []
    names: list[str] = []
    ranges: list[tuple[float, float]] = []
    missing = np.zeros(n, dtype=bool)
    counts: dict[str, dict[str, int]] = {"values_outside_bounds": {}, "unseen_categories": {},
                                         "non_numeric_values": {}, "missing_values": {}}
    for col in schema.features:
        s = frame[col.name]
        present = table.present(col.name) if rows is None else table.present(col.name)[rows]
        miss = ~present
        if col.is_categorical:
            cats = list(col.categories)
            txt = pd.Series([cell_text(v) for v in s.to_numpy()], dtype=object)
            codes = pd.Index(cats, dtype=object).get_indexer(txt)
            M = np.zeros((n, len(cats)))
            ok = codes >= 0
            M[np.nonzero(ok)[0], codes[ok]] = 1.0
            unseen = int((present & ~ok).sum())
            if unseen:
                counts["unseen_categories"][col.name] = unseen
            blocks.append(M)
            names += [f"{col.name}={v}" for v in cats]
            ranges += [(0.0, 1.0)] * len(cats)
        else:
            values, bad = table.numbers(col.name)
            if rows is not None:
                values, bad = values[rows], bad[rows]
            if present.any() and bad[present].all():
                raise SchemaError(f"schema column {col.name!r}, field 'role': the column holds text, not numbers, so "
                                  "it cannot be numeric; set the role to categorical (with a category list) or "
                                  "excluded.")
            if bad.any():
                counts["non_numeric_values"][col.name] = int(bad.sum())
                miss = miss | bad
            finite = values[~np.isnan(values)]
            outside = int(((finite < col.lower) | (finite > col.upper)).sum())
            if outside:
                counts["values_outside_bounds"][col.name] = outside
            blocks.append(values[:, None])
            names.append(col.name)
            ranges.append((col.lower, col.upper))
        if miss.any():
            counts["missing_values"][col.name] = int(miss.sum())
            missing |= miss
    if not blocks:
        raise DataError("no feature columns: every column is excluded or the label; set a column's role to numeric, "
                        "binary or categorical.")
    return EncodedTable(X=np.hstack(blocks), feature_names=tuple(names), ranges=np.asarray(ranges, dtype=np.float64),
                        missing=missing, counts={k: v for k, v in counts.items() if v})
