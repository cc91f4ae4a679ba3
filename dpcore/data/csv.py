"""Load a user-uploaded table into a :class:`~dpcore.data.datasets.Dataset` — in memory only, never written to disk.

Two ways:

* **with a public schema** (``schema=``, see :mod:`dpcore.data.schema`): the file is read with the schema's declared
  file format (nothing is detected; a table read otherwise is read again from its bytes), and the schema's columns,
  roles, bounds and category lists are used as declared — the structure (d, column order, one-hot widths) comes
  from the schema alone. Every step is per record (numbers outside the bounds are clamped later by
  ``preprocess(feature_scaling="schema")``, unseen categories become all-zero indicators, missing values are filled),
  so the pipeline is private once the schema is public (format and structure confirmed included).
* **without a schema**: the format is detected, column roles are inferred (:mod:`dpcore.data.roles`), category
  lists are read off the data, and the ledger says so (``private=False``).

Either way the ledger's steps and text depend only on the options and the schema, never on the records (the
missing-value policy is always listed, not only when a cell was missing).

Every problem raises a :class:`~dpcore.exceptions.DataError` whose message names the problem and the fix. Exact
counts (dropped rows, clamped values, unseen categories) go only to ``Dataset.diagnostics`` — never to the ledger.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

import numpy as np

from ..core._validation import check_choice, check_int
from ..core.privacy import Diagnostics, LedgerEntry
from ..exceptions import DataError, InvalidParameterError
from ..vocabulary import CategoricalPolicy, ColumnRole, MissingPolicy, values
from .datasets import SAMPLE_DATA_DIR, Dataset
from .encode import EncodedTable, LabelEncoder, check_columns, encode_table, table_format, typed_labels
from .reading import MISSING_TOKENS, CsvSource, FileFormat, RawTable, file_kind, read_source, read_table
from .roles import MAX_CATEGORIES, ColumnDecision, RoleReport, check_label_kind, infer_roles
from .schema import ColumnSchema, LabelRule, Schema, SchemaError, draft_schema, load_schema

__all__ = ["CATEGORICAL_MODES", "DEFAULT_MAX_COLUMNS", "MISSING_MODES", "MISSING_TOKENS", "WIDE_COLUMNS",
           "WideDataWarning", "example_csv_bytes", "load_csv", "load_table"]

CATEGORICAL_MODES = values(CategoricalPolicy)
MISSING_MODES = values(MissingPolicy)
#: Default limit on the number of feature columns (a d × d covariance of 5,000 columns takes 200 MB).
DEFAULT_MAX_COLUMNS = 5000
#: From this many feature columns on, loading warns (slow mechanisms, noise growing with d).
WIDE_COLUMNS = 1000
#: Why dropping rows is recorded as non-private: replace-one treats n as public, and dropping makes it depend on
#: the data (how many rows had gaps). The exact counts are in ``Dataset.diagnostics``.
ROW_DROP_NOTE = ("the number of rows kept depends on the data, and replace-one DP treats n as public (not "
                 "private); use missing='zero' (a per-record fill) for a private pipeline")
_FILL_NOTE = ("per record: a missing number becomes 0 (then clamped to its declared bounds), a missing category "
              "all-zero indicators")
#: The first step of a load without a schema: the format, the roles and the vocabularies were read off the data.
STRUCTURE_STEP = "file format and column roles read off the data"
_STRUCTURE_NOTE = ("the file format was detected and which columns are features (and how wide) was inferred from the "
                   "cell values, so one record can change them; declare them in a public schema (draft one with "
                   "`dpcore schema infer`) for a private pipeline")
_LABEL_ROWS_NOTE = ("rows whose label is missing are left out: the number of rows kept depends on the data, and "
                    "replace-one DP treats n as public (not private); fill the labels or pick another label column")
_MEAN_NOTE = "column means computed from the data; use missing='zero' for a private pipeline"


class WideDataWarning(UserWarning):
    """Many feature columns: mechanisms work with d × d matrices and their noise grows with d."""


def _validate(categorical: str, missing: str | None, max_columns: int, k: int | None, label: object,
              label_rule: object = None) -> tuple[str, str | None, int, int | None]:
    categorical = check_choice(categorical, "categorical", CATEGORICAL_MODES)
    if missing is not None:
        missing = check_choice(missing, "missing", MISSING_MODES)
    max_columns = check_int(max_columns, "max_columns", 1)
    if k is not None:
        k = check_int(k, "k", 1)
    if label is not None and not isinstance(label, str):
        raise InvalidParameterError(f"label must be a column name (str) or None, got {label!r}.")
    if label_rule is not None and not isinstance(label_rule, LabelRule):
        raise InvalidParameterError(f"label_rule must be a LabelRule (e.g. LabelRule(above=50000)), got "
                                    f"{label_rule!r}.")
    if label_rule is not None and label is None:
        raise InvalidParameterError("label_rule needs the label column it applies to: give label=COLUMN too.")
    return categorical, missing, max_columns, k


def load_csv(source: CsvSource, *, label: str | None = None, categorical: str = CategoricalPolicy.ONEHOT,
             missing: str | None = None,
             max_columns: int = DEFAULT_MAX_COLUMNS, max_rows: int = 1_000_000, k: int | None = None,
             name: str = "uploaded", schema: Schema | Mapping | str | Path | bytes | None = None,
             roles: Mapping[str, object] | None = None, delimiter: str | None = None, decimal: str | None = None,
             encoding: str | None = None, max_categories: int = MAX_CATEGORIES,
             label_rule: LabelRule | None = None, thousands: str | None = None) -> Dataset:
    """Parse a table (CSV/TSV text, Parquet, or ``.xlsx`` with openpyxl) into a raw :class:`Dataset`, in memory.

    Parameters
    ----------
    source : bytes, CSV text (a str containing a newline), path, or file-like object
    label : name of a label column (kept out of the features; used only by evaluation metrics); default: the
        schema's label
    categorical : ``"onehot"`` (indicator columns) or ``"drop"`` (leave text columns out)
    missing : ``"drop"`` rows with missing values (NOT private: n depends on the data), ``"zero"``-fill (per record,
        free), or ``"mean"``-impute (NOT private). Default: ``"zero"`` with a schema, ``"drop"`` without. Missing
        tokens: empty, NA, N/A, NaN, null, ? (case-insensitive).
    max_columns : limit on the number of feature columns after encoding (from ``WIDE_COLUMNS`` on: a warning)
    max_rows : limit on the number of data rows
    k : number of components planned; an error is raised when there are fewer rows or columns than k
    name : display name
    schema : a public :class:`~dpcore.data.schema.Schema` (or a path/YAML text/mapping of one); without it the
        roles are inferred and the category lists read off the data (recorded as NOT private)
    roles : ``{column: role}`` overrides of the inferred roles (without a schema)
    delimiter, decimal, encoding : override the detected field separator, decimal mark and text encoding (without
        a schema; a schema declares its file format)
    thousands : the separator of digit groups (e.g. "." for 1.234,5), without a schema; never detected
    max_categories : text columns with more distinct values are left out by the inference
    label_rule : a binary label derived from the ``label`` column with a public threshold
        (:class:`~dpcore.data.schema.LabelRule`: ``label > above`` or ``label ≠ 0``); a schema declares it in its
        ``label:`` field instead
    """
    categorical, missing, max_columns, k = _validate(categorical, missing, max_columns, k, label, label_rule)
    if schema is not None:
        schema = load_schema(schema)
        if delimiter is not None or decimal is not None or encoding is not None or thousands is not None:
            raise InvalidParameterError("with a schema the file is read with the schema's declared format; drop the "
                                        "delimiter/decimal/encoding/thousands overrides, or change the schema's "
                                        "`format:`.")
        raw = read_source(source)
        fmt = schema.format if schema.format is not None else FileFormat(kind=file_kind(raw))
        table = read_table(raw, format=fmt, column_names=None if fmt.header else schema.names, max_rows=max_rows,
                           name=name)
    else:
        table = read_table(source, delimiter=delimiter, decimal=decimal, encoding=encoding, max_rows=max_rows,
                           name=name, thousands=thousands)
    return load_table(table, label=label, categorical=categorical, missing=missing, max_columns=max_columns, k=k,
                      schema=schema, roles=roles, max_categories=max_categories, label_rule=label_rule)


def load_table(table: RawTable, *, label: str | None = None, categorical: str = CategoricalPolicy.ONEHOT,
               missing: str | None = None,
               max_columns: int = DEFAULT_MAX_COLUMNS, k: int | None = None, name: str | None = None,
               schema: Schema | Mapping | str | Path | bytes | None = None,
               roles: Mapping[str, object] | None = None, max_categories: int = MAX_CATEGORIES,
               label_rule: LabelRule | None = None) -> Dataset:
    """A :class:`Dataset` from an already read :class:`RawTable` (see :func:`load_csv` for the parameters). With a
    schema, a table that was not read with the schema's file format is read again from its bytes with it."""
    categorical, missing, max_columns, k = _validate(categorical, missing, max_columns, k, label, label_rule)
    name = table.name if name is None else str(name)
    if schema is not None:
        if roles:
            raise InvalidParameterError("roles and schema were both given; with a schema, set the roles in it.")
        schema = _with_label(load_schema(schema), label, label_rule)
        return _load_with_schema(table, schema, categorical=categorical, missing=missing or MissingPolicy.ZERO.value,
                                 max_columns=max_columns, k=k, name=name)
    return _load_inferred(table, label=label, categorical=categorical, missing=missing or MissingPolicy.DROP.value,
                          max_columns=max_columns, k=k, name=name, roles=roles, max_categories=max_categories,
                          label_rule=label_rule)


# ==================================================================================================
# shared steps
# ==================================================================================================

def _check_width(features: list[ColumnSchema], max_columns: int) -> int:
    """The number of feature columns; an error naming the real cause when it exceeds ``max_columns``."""
    d = sum(c.width for c in features)
    if d <= max_columns:
        return d
    cats = sorted((c for c in features if c.is_categorical), key=lambda c: -c.width)
    n_num = sum(1 for c in features if not c.is_categorical)
    if cats and n_num <= max_columns:
        detail = ", ".join(f"{c.name!r} ({c.width} distinct values)" for c in cats[:3])
        raise DataError(f"one-hot encoding gives {d} columns, more than max_columns = {max_columns} (largest "
                        f"categorical columns: {detail}); exclude those columns (role 'excluded'), use "
                        "categorical='drop', or raise max_columns.")
    extra = f" plus {d - n_num} one-hot columns" if cats else ""
    raise DataError(f"the table has {n_num} numeric feature columns{extra}, more than max_columns = {max_columns}; "
                    "exclude columns (role 'excluded') or raise max_columns.")


def _check_infinite(enc: EncodedTable) -> None:
    inf = np.isinf(enc.X)
    if not inf.any():
        return
    cols = [enc.feature_names[j] for j in np.flatnonzero(inf.any(axis=0))]
    raise DataError(f"column(s) {', '.join(map(repr, cols))} contain infinite values (which rows is not shown: they "
                    "belong to a record); replace them with finite numbers or leave the cells empty (missing), or "
                    "declare the column's public bounds in a schema (a value beyond them is clamped).")


def _label_vector(table: RawTable, label: str, rows: np.ndarray | None = None) -> np.ndarray:
    """Labels: whole numbers → int, other numbers → float, else text; missing labels → "(missing)" (as text)."""
    s = table.frame[label] if rows is None else table.frame[label][rows]
    values, bad = table.numbers(label)
    if rows is not None:
        values, bad = values[rows], bad[rows]
    present = s.notna().to_numpy()
    if present.all() and not bad.any() and np.all(np.isfinite(values)):
        return values.astype(np.int64) if np.all(values == np.round(values)) else values
    from .reading import cell_text

    return np.array([cell_text(v) or "(missing)" for v in s.to_numpy()], dtype=str)


def _declared_labels(table: RawTable, schema: Schema, diag: dict, notes: list[str],
                     rows: np.ndarray | None = None) -> np.ndarray:
    """The labels of a declared label (a rule or public classes), per record (:class:`LabelEncoder`); the counts
    of missing labels and labels outside the classes go to ``diag`` and, when some are outside, a note (exact
    counts: non-private diagnostics; no record is quoted)."""
    cells = table.frame[schema.label] if rows is None else table.frame[schema.label][rows]
    labels, counts = LabelEncoder(schema.label_rule, schema.label_classes, table_format(table)).encode(cells)
    for kind, count in counts.items():
        diag[kind] = {schema.label: count}
    outside = counts.get("labels_outside_classes", 0)
    if outside:
        notes.append(f"{outside:,} label value(s) of {schema.label!r} are not among the declared classes "
                     f"({', '.join(schema.label_classes)}): they count as missing labels (diagnostic, not private); "
                     "declare every class, or fix the file.")
    return typed_labels(labels)


def eigh_seconds_estimate(d: int, probe: int = 600) -> float:
    """Seconds for one d × d symmetric eigendecomposition on this machine: a small one is timed and scaled by d³."""
    import time

    A = np.random.default_rng(0).standard_normal((probe, probe))
    A = A + A.T
    t0 = time.perf_counter()
    np.linalg.eigh(A)
    return (time.perf_counter() - t0) * (d / probe) ** 3


def _wide_notes(n: int, d: int, notes: list[str]) -> None:
    if d >= WIDE_COLUMNS:
        secs = eigh_seconds_estimate(d)
        msg = (f"{d:,} feature columns: mechanisms work with d × d matrices ({8 * d * d / 2**20:,.0f} MB each; one "
               f"eigendecomposition takes about {secs:.2g} s here, and every release needs at least one) and their "
               "noise grows with d, so runs are slow and utility is low unless n is large; consider leaving "
               "columns out.")
        warnings.warn(msg, WideDataWarning, stacklevel=4)
        notes.append(msg)
    if d > n:
        notes.append(f"more feature columns (d = {d:,}) than rows (n = {n:,}): at most n − 1 directions carry "
                     "variance.")


def _finish(table: RawTable, name: str, X: np.ndarray, names: tuple[str, ...], y: np.ndarray | None,
            label: str | None, k: int | None, ledger: list[LedgerEntry], diag: dict, notes: list[str],
            ranges: np.ndarray | None, options: dict, groups: tuple[int, ...] | None = None,
            label_text: str | None = None) -> Dataset:
    n, d = X.shape
    label_text = label if label_text is None else label_text
    if y is not None and len(np.unique(y)) < 2:  # a non-private diagnostic, never a refusal (one record decides it)
        notes.append(f"label column {label!r} has fewer than two classes in this data: the SVM accuracy metric is "
                     "not available (diagnostic, not private).")
    if k is not None:
        if n < k:
            raise DataError(f"the data has {n} rows, fewer than k = {k} components; use a smaller k or more rows.")
        if d < k:
            raise DataError(f"the data has {d} columns, fewer than k = {k} components; use a smaller k.")
    _wide_notes(n, d, notes)
    if notes:
        diag["notes"] = list(notes)
    return Dataset(
        id="uploaded", name=name, X=X, y=y, feature_names=names,
        source="user upload (kept in memory only, never stored)",
        description=f"{n:,} rows × {d} columns from an uploaded {table.info.describe()} file"
                    + (f"; label {label_text}" if label else ""),
        feature_ranges=ranges, suggested_k=k if k is not None else min(2, d),
        options={**options, "label": label, "label_text": label_text, "k": k, "read": table.info.describe()},
        load_ledger=tuple(ledger), diagnostics=Diagnostics(diag), feature_groups=groups,
    )


# ==================================================================================================
# without a schema: inferred roles, data-derived vocabularies (recorded as NOT private)
# ==================================================================================================

def _onehot(d: ColumnDecision) -> bool:
    return d.role == ColumnRole.CATEGORICAL or (d.role == ColumnRole.BINARY and not d.numeric)


def _load_inferred(table: RawTable, *, label: str | None, categorical: str, missing: str, max_columns: int,
                   k: int | None, name: str, roles: Mapping[str, object] | None, max_categories: int,
                   label_rule: LabelRule | None = None) -> Dataset:
    report = infer_roles(table, label=label, roles=roles, max_categories=max_categories)
    if label_rule is None:
        check_label_kind(table, label)
    # The ledger depends only on the options: the data decided the structure, so say that, whatever it decided.
    ledger: list[LedgerEntry] = [LedgerEntry(STRUCTURE_STEP, private=False, note=_STRUCTURE_NOTE)]
    diag: dict = dict(table.counts)  # exact counts: non-private diagnostics, never in the ledger
    notes = report.notes()
    text_cols = [d.name for d in report.features if _onehot(d)]
    if categorical == CategoricalPolicy.DROP:
        report = RoleReport(tuple(replace(d, role=ColumnRole.EXCLUDED, reason="categorical='drop'") if _onehot(d)
                                  else d for d in report.columns), report.label)
        ledger.append(LedgerEntry("drop non-numeric columns", private=False,
                                  note="the columns the inference reads as text are left out"))
        if text_cols:
            notes.append(f"non-numeric columns dropped: {', '.join(text_cols[:20])}")
    if not report.features:
        if categorical == CategoricalPolicy.DROP and text_cols:
            raise DataError(f"no numeric columns after encoding (non-numeric columns: {', '.join(text_cols)}); use "
                            "categorical='onehot' or upload numeric columns.")
        left = "; ".join(f"{d.name!r}: {d.role.value} ({d.reason})" for d in report.excluded[:6])
        raise DataError(f"no usable feature columns — {left}. Set a column's role to numeric, binary or "
                        "categorical to include it.")
    draft = draft_schema(table, report)
    if label_rule is not None:
        draft = replace(draft, label_rule=label_rule)
    _check_width(draft.features, max_columns)

    rows = None
    if label is not None:
        ledger.append(LedgerEntry("drop rows without a label", private=False, note=_LABEL_ROWS_NOTE))
        label_missing = table.missing(label)
        if label_rule is not None:  # a cell that is not a number has no derived label either
            label_missing = label_missing | table.numbers(label)[1]
        if label_missing.any():
            rows = ~label_missing
            diag["rows_without_label"] = int(label_missing.sum())
    enc = encode_table(table, draft, rows)
    _check_infinite(enc)
    X = enc.X
    if label_rule is not None:
        y = _declared_labels(table, draft, diag, notes, rows)
    else:
        y = None if label is None else _label_vector(table, label, rows)
    diag.update(enc.counts)

    X, y = _missing_policy(X, y, enc.missing, missing, ledger, diag)
    names = enc.feature_names
    const = np.ptp(X, axis=0) == 0
    if const.any():  # e.g. after rows were dropped
        dropped = [names[j] for j in np.flatnonzero(const)]
        if const.all():
            raise DataError(f"every feature column is constant ({', '.join(map(repr, dropped[:10]))}); PCA needs "
                            "columns that vary — upload more rows or other columns.")
        X, names = X[:, ~const], tuple(n for n, c in zip(names, const) if not c)
        shown = ", ".join(map(repr, dropped[:10])) + (" …" if len(dropped) > 10 else "")
        notes.append(f"constant feature column(s) {shown} dropped: they carry no information for PCA.")
    onehot_cols = [c.name for c in draft.features if c.is_categorical]
    if categorical == CategoricalPolicy.ONEHOT:
        ledger.append(LedgerEntry("one-hot encoding, vocabulary from the data", private=False,
                                  note="the categories of the text columns were read off the data; a public "
                                       "category list is needed for a private pipeline"))
    return _finish(table, name, X, names, y, label, k, ledger, diag, notes, None,
                   {"categorical": categorical, "missing": missing, "max_columns": max_columns,
                    "categorical_columns": tuple(onehot_cols), "roles": {d.name: d.role.value for d in report.columns}},
                   label_text=draft.label_text)


# ==================================================================================================
# with a public schema: per-record steps only
# ==================================================================================================

def _with_label(schema: Schema, label: str | None, label_rule: LabelRule | None) -> Schema:
    """``schema`` with the label (and its rule) given as arguments; refused where they contradict the schema."""
    if label is not None and label != schema.label:
        if schema.label is not None:
            raise SchemaError(f"schema, field 'label': the schema names {schema.label!r} but label={label!r} was "
                              "given; change one of them.")
        schema = replace(schema, label=label) if label in schema else replace(
            schema, columns=(*schema.columns, ColumnSchema(label, ColumnRole.LABEL)), label=label)
    if label_rule is not None and label_rule != schema.label_rule:
        if schema.label_rule is not None:
            raise SchemaError(f"schema, field 'label': the schema declares {schema.label_text} but the rule "
                              f"{label_rule.describe(schema.label)} was given; change one of them.")
        schema = replace(schema, label_rule=label_rule, label_classes=None)
    return schema


def _load_with_schema(table: RawTable, schema: Schema, *, categorical: str, missing: str,
                      max_columns: int, k: int | None, name: str) -> Dataset:
    label = schema.label
    # exactly the declared format; without one, the default of the file's kind (not public either way)
    fmt = schema.format if schema.format is not None else FileFormat(kind=table.file_format.kind)
    table = table.read_as(fmt, None if fmt.header else schema.names)
    try:
        check_columns(table, schema)
    except SchemaError as exc:
        if schema.format is None:
            raise SchemaError(f"{exc} The schema declares no file format, so the file was read as "
                              f"{fmt.describe()}; declare its format in the schema (e.g. format: {{kind: csv, "
                              "delimiter: ';', decimal: ','}; `dpcore schema infer` drafts one).") from None
        raise
    if not schema.label_declared:  # a rule or declared classes say what the label is: nothing to read
        check_label_kind(table, label, schema_public=schema.structure_public)  # nor under a public schema
    ledger: list[LedgerEntry] = []
    notes = [f"{c!r} is not in the schema: left out." for c in table.columns if c not in schema][:50]
    onehot_cols = [c.name for c in schema.features if c.is_categorical]
    if categorical == CategoricalPolicy.DROP and onehot_cols:
        schema = replace(schema, columns=tuple(replace(c, role=ColumnRole.EXCLUDED, categories=None,
                                                       from_data=c.from_data & {"role"})
                                               if c.is_categorical else c for c in schema.columns))
        ledger.append(LedgerEntry("drop non-numeric columns", note=", ".join(onehot_cols[:20])))
        onehot_cols = []
    if not schema.features:
        raise SchemaError("schema: no feature columns (every column is excluded or the label); set a column's role "
                          "to numeric, binary or categorical.")
    _check_width(schema.features, max_columns)
    enc = encode_table(table, schema)
    _check_infinite(enc)
    diag: dict = {**table.counts, **enc.counts}
    X = enc.X
    if schema.label_declared:
        y = _declared_labels(table, schema, diag, notes)
    else:
        y = None if label is None else _label_vector(table, label)
    ledger.insert(0, _schema_entry(schema))
    # The ledger depends only on the schema and the options (never on whether this data had gaps).
    X, y = _missing_policy(X, y, enc.missing, missing, ledger, diag)
    return _finish(table, name, X, enc.feature_names, y, label, k, ledger, diag, notes, enc.ranges,
                   {"categorical": categorical, "missing": missing, "max_columns": max_columns,
                    "categorical_columns": tuple(onehot_cols), "schema_public": schema.is_public,
                    "roles": {c.name: c.role.value for c in schema.columns}}, groups=enc.groups,
                   label_text=schema.label_text)


def _schema_entry(schema: Schema) -> LedgerEntry:
    """The first ledger step of a schema-based load: a function of the schema alone."""
    if schema.is_public:
        return LedgerEntry("public schema: declared bounds and category lists",
                           note=f"declared file format ({schema.file_format.describe()}), roles and label; per "
                                "record: numbers are clamped to their declared bounds, unseen categories become "
                                "all-zero indicators (free)")
    open_items = schema.not_public
    shown = ", ".join(open_items[:10]) + (" …" if len(open_items) > 10 else "")
    how = ("the schema declares no file format, so the file was read as "
           f"{schema.file_format.describe()}; " if schema.format is None else "")
    return LedgerEntry("schema values read off the data", private=False,
                       note=f"{how}not confirmed as public: {shown} (read off the data: file format fields, roles, "
                            "the label, bounds or categories); replace or confirm them")


def _missing_policy(X: np.ndarray, y: np.ndarray | None, rows_missing: np.ndarray, missing: str,
                    ledger: list[LedgerEntry], diag: dict) -> tuple[np.ndarray, np.ndarray | None]:
    """Apply the missing-value policy; its ledger step is always listed (its text depends only on the policy)."""
    if missing == MissingPolicy.ZERO:
        ledger.append(LedgerEntry("fill missing values with 0", note=_FILL_NOTE))
        return np.where(np.isnan(X), 0.0, X), y
    if missing == MissingPolicy.DROP:
        ledger.append(LedgerEntry("drop rows with missing values", private=False, note=ROW_DROP_NOTE))
        keep = ~rows_missing
        if keep.sum() < 2:
            raise DataError(f"{int(rows_missing.sum())} of {len(keep)} rows have missing values, leaving fewer than "
                            "two complete rows; use missing='zero', or fill the gaps.")
        if rows_missing.any():
            diag["rows_with_missing_values"] = int(rows_missing.sum())
            X, y = X[keep], None if y is None else y[keep]
        return X, y
    ledger.append(LedgerEntry("mean imputation of missing values", private=False, note=_MEAN_NOTE))
    gaps = np.isnan(X)
    return np.where(gaps, np.nanmean(np.where(gaps.all(axis=0), 0.0, X), axis=0), X), y


def example_csv_bytes() -> bytes:
    """The committed classroom example (``sample_data/classroom_example.csv``) as bytes."""
    path = SAMPLE_DATA_DIR / "classroom_example.csv"
    if not path.is_file():
        raise DataError("sample_data/classroom_example.csv is missing; run sample_data/make_classroom_example.py.")
    return path.read_bytes()

