"""Load a user-uploaded CSV into a :class:`~dpcore.data.datasets.Dataset` — in memory only, never written to disk.

Every problem raises a :class:`~dpcore.exceptions.DataError` whose message names the problem and the fix.
Data-dependent encoding choices (a one-hot vocabulary read off the data, mean imputation) are recorded in the
dataset's ``load_ledger`` with ``private=False``; :func:`dpcore.data.preprocess` copies them into the ledger of the
prepared data, so the dashboard shows them as non-private steps.
"""

from __future__ import annotations

import csv as _csv
import io
import os
from pathlib import Path
from typing import IO, Any

import numpy as np
import pandas as pd

from .._validation import check_choice, check_int
from ..exceptions import DataError, InvalidParameterError
from ..privacy import Diagnostics, LedgerEntry
from .datasets import SAMPLE_DATA_DIR, Dataset

CATEGORICAL_MODES = ("onehot", "drop")
#: Why dropping rows is recorded as non-private: replace-one treats n as public, and dropping makes it depend on
#: the data (how many rows had gaps). The exact counts are in ``Dataset.diagnostics``.
ROW_DROP_NOTE = ("the number of rows kept depends on the data, and replace-one DP treats n as public (not "
                 "private); use missing='zero' (a per-record fill) for a private pipeline")
MISSING_MODES = ("drop", "zero", "mean")
#: Cell values treated as missing (compared after stripping whitespace, case-insensitive).
MISSING_TOKENS = frozenset({"", "na", "n/a", "nan", "null", "?"})
_NA_VARIANTS = sorted({v for t in MISSING_TOKENS for v in (t, t.upper(), t.capitalize(), t.title())})

CsvSource = bytes | bytearray | memoryview | str | os.PathLike | IO[bytes] | IO[str]


def _read_source(source: Any) -> bytes:
    """Bytes of ``source``: raw bytes, CSV text (a str containing a newline), a path, or a file-like object."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        return bytes(source)
    if isinstance(source, str) and ("\n" in source or "\r" in source):
        return source.encode("utf-8")
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if not path.is_file():
            raise DataError(f"no file at {str(path)!r}; check the path, or pass the CSV contents as bytes.")
        return path.read_bytes()
    if hasattr(source, "read"):
        data = source.read()
        if isinstance(data, str):
            return data.encode("utf-8")
        if isinstance(data, (bytes, bytearray, memoryview)):
            return bytes(data)
        raise DataError(f"the file object returned {type(data).__name__} from read(); expected bytes or text.")
    raise InvalidParameterError(
        f"source must be bytes, CSV text, a path or a file-like object; got {type(source).__name__}."
    )


def _decode(raw: bytes) -> str:
    if not raw.strip():
        raise DataError("the file is empty; upload a CSV with a header row and at least two data rows.")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DataError(
            f"the file is not UTF-8 text (invalid byte 0x{raw[exc.start]:02x} at byte offset {exc.start}); "
            "re-save it as 'CSV UTF-8' (e.g. in Excel: Save As → CSV UTF-8) and upload again."
        ) from None
    if "\x00" in text:
        raise DataError("the file contains NUL bytes, so it is not a CSV text file (is it a spreadsheet such as "
                        ".xlsx?); export it as CSV (UTF-8) and upload again.")
    return text


def _scan(text: str, max_rows: int) -> tuple[list[str], int]:
    """Header and data-row count via the csv module, checking the field count of every line."""
    reader = _csv.reader(io.StringIO(text, newline=""))
    header: list[str] | None = None
    n_rows = 0
    try:
        for row in reader:
            if not row or (len(row) == 1 and not row[0].strip() and (header is None or len(header) > 1)):
                continue  # blank line
            if header is None:
                header = [h.strip() for h in row]
                continue
            if len(row) != len(header):
                raise DataError(
                    f"line {reader.line_num} has {len(row)} fields but the header has {len(header)}; fix that line "
                    "(quote values that contain commas, e.g. \"Smith, J\") and upload again."
                )
            n_rows += 1
            if n_rows > max_rows:
                raise DataError(f"the file has more than max_rows = {max_rows:,} data rows; upload a random sample "
                                "or raise max_rows.")
    except _csv.Error as exc:
        raise DataError(f"the CSV could not be parsed near line {reader.line_num} ({exc}); check quoting on that "
                        "line and upload again.") from None
    if header is None:
        raise DataError("the file is empty; upload a CSV with a header row and at least two data rows.")
    if len(header) == 1 and any(sep in header[0] for sep in (";", "\t", "|")):
        raise DataError("the header has a single column but contains ';', tab or '|'; dpcore reads comma-separated "
                        "files — re-export the file with commas as separators.")
    seen: set[str] = set()
    for i, h in enumerate(header):
        if not h:
            header[i] = h = f"column{i + 1}"
        if h in seen:
            raise DataError(f"the column name {h!r} appears twice in the header; rename one of them.")
        seen.add(h)
    if n_rows == 0:
        raise DataError("the file has a header but no data rows; add at least two data rows.")
    if n_rows == 1:
        raise DataError("the file has a single data row; PCA needs at least two rows (ideally hundreds).")
    return header, n_rows


def _slow_rows(text: str, width: int) -> list[list[str]]:
    """Data rows via the csv module (fallback when pandas' row count disagrees with the scan)."""
    rows = [r for r in _csv.reader(io.StringIO(text, newline="")) if r and not (len(r) == 1 and not r[0].strip()
                                                                             and width > 1)]
    return rows[1:]


def _parse_frame(text: str, header: list[str], n_rows: int) -> pd.DataFrame:
    """All cells, typed: numeric columns as float64, others as stripped str with NaN for missing tokens."""
    frame = pd.read_csv(io.StringIO(text), header=0, names=header, na_values=_NA_VARIANTS, keep_default_na=False,
                        skipinitialspace=True, skip_blank_lines=True, engine="c", low_memory=False)
    if len(frame) != n_rows:  # unusual blank/whitespace lines: use the csv module's reading
        frame = pd.DataFrame(_slow_rows(text, len(header)), columns=header, dtype=object)
    out = {}
    for col in header:
        s = frame[col]
        if pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s):
            out[col] = s.astype(np.float64)
            continue
        s = s.astype(object).where(s.notna(), None)
        s = pd.Series([None if v is None else str(v).strip() for v in s], dtype=object)
        s = s.where(~s.str.lower().isin(MISSING_TOKENS), None)
        parsed = pd.to_numeric(s, errors="coerce")
        out[col] = parsed.astype(np.float64) if parsed[s.notna()].notna().all() else s
    return pd.DataFrame(out)


def _label_vector(values: pd.Series) -> np.ndarray:
    if pd.api.types.is_float_dtype(values):
        arr = values.to_numpy(dtype=np.float64)
        return arr.astype(np.int64) if np.all(arr == np.round(arr)) else arr
    return values.to_numpy(dtype=str)


def load_csv(source: CsvSource, *, label: str | None = None, categorical: str = "onehot", missing: str = "drop",
             max_columns: int = 500, max_rows: int = 1_000_000, k: int | None = None,
             name: str = "uploaded") -> Dataset:
    """Parse a CSV (with a header row) into a raw :class:`Dataset`, entirely in memory.

    Parameters
    ----------
    source : bytes, CSV text (a str containing a newline), path, or file-like object
    label : name of a label column (kept out of the features; used only by evaluation metrics)
    categorical : ``"onehot"`` (indicator columns, vocabulary read off the data — recorded as NOT private) or
        ``"drop"`` (drop non-numeric columns)
    missing : ``"drop"`` rows with missing values, ``"zero"``-fill (free, per record), or ``"mean"``-impute
        (data-dependent — recorded as NOT private). Missing tokens: empty, NA, N/A, NaN, null, ? (case-insensitive).
    max_columns : limit on the number of feature columns after encoding
    max_rows : limit on the number of data rows
    k : number of components planned; an error is raised when there are fewer rows or columns than k
    name : display name
    """
    categorical = check_choice(categorical, "categorical", CATEGORICAL_MODES)
    missing = check_choice(missing, "missing", MISSING_MODES)
    max_columns = check_int(max_columns, "max_columns", 1)
    max_rows = check_int(max_rows, "max_rows", 2)
    if k is not None:
        k = check_int(k, "k", 1)
    if label is not None and not isinstance(label, str):
        raise InvalidParameterError(f"label must be a column name (str) or None, got {label!r}.")

    text = _decode(_read_source(source))
    header, n_rows = _scan(text, max_rows)
    frame = _parse_frame(text, header, n_rows)
    del text
    ledger: list[LedgerEntry] = []
    dropped: dict[str, int] = {}  # exact counts: non-private diagnostics, never in the ledger

    # --- label ---------------------------------------------------------------------------------------
    y_raw: pd.Series | None = None
    if label is not None:
        if label not in frame.columns:
            cols = ", ".join(map(repr, header[:30])) + (" …" if len(header) > 30 else "")
            raise DataError(f"label column {label!r} not found; the columns are: {cols}. Pick one of them "
                            "(names are case-sensitive) or leave the label empty.")
        y_raw = frame.pop(label)
        label_missing = y_raw.isna().to_numpy()
        if label_missing.any():
            keep = ~label_missing
            frame, y_raw = frame[keep].reset_index(drop=True), y_raw[keep].reset_index(drop=True)
            dropped["rows_without_label"] = int((~keep).sum())
            ledger.append(LedgerEntry("drop rows without a label", private=False,
                                      note="the number of rows kept depends on the data, and replace-one DP treats "
                                           "n as public (not private); fill the labels or pick another label column"))
    if frame.shape[1] == 0:
        raise DataError("no feature columns: the only column is the label; upload at least one numeric column.")

    # --- column types ----------------------------------------------------------------------------------
    miss = frame.isna()
    empty_cols = [c for c in frame.columns if miss[c].all()]
    if empty_cols:
        raise DataError(f"column(s) {', '.join(map(repr, empty_cols))} have no values at all; delete them and "
                        "upload again.")
    numeric = {c: frame[c] for c in frame.columns if pd.api.types.is_float_dtype(frame[c])}
    categorical_cols = [c for c in frame.columns if c not in numeric]
    inf_cols = [c for c, s in numeric.items() if np.isinf(s.to_numpy()).any()]
    if inf_cols:
        first = int(np.argmax(np.isinf(numeric[inf_cols[0]].to_numpy()))) + 2
        raise DataError(f"column(s) {', '.join(map(repr, inf_cols))} contain infinite values (first at data row "
                        f"{first - 1}, line {first} if there are no blank lines); replace them with finite numbers "
                        "or leave the cells empty (missing).")

    # --- missing values ------------------------------------------------------------------------------
    used = list(numeric) + (categorical_cols if categorical == "onehot" else [])
    any_missing = miss[used].to_numpy().any(axis=1)
    if missing == "drop" and any_missing.any():
        keep = ~any_missing
        n_drop = int(any_missing.sum())
        if keep.sum() < 2:
            raise DataError(f"{n_drop} of {len(keep)} rows have missing values, leaving fewer than two complete "
                            "rows; use missing='zero' or missing='mean', or fill the gaps.")
        frame, miss = frame[keep].reset_index(drop=True), miss[keep].reset_index(drop=True)
        numeric = {c: s[keep].reset_index(drop=True) for c, s in numeric.items()}
        if y_raw is not None:
            y_raw = y_raw[keep].reset_index(drop=True)
        dropped["rows_with_missing_values"] = n_drop
        ledger.append(LedgerEntry("drop rows with missing values", private=False, note=ROW_DROP_NOTE))
    elif missing == "zero" and any_missing.any():
        numeric = {c: s.fillna(0.0) for c, s in numeric.items()}
        ledger.append(LedgerEntry("fill missing values with 0", note="per-record rule; missing categories → "
                                  "all-zero indicators"))
    elif missing == "mean" and any_missing.any():
        imputed = [c for c, s in numeric.items() if s.isna().any()]
        numeric = {c: s.fillna(s.mean()) for c, s in numeric.items()}
        if imputed:
            ledger.append(LedgerEntry("mean imputation of missing values", private=False,
                                      note=f"column means computed from the data ({', '.join(imputed[:10])}); "
                                           "use missing='zero' or 'drop' for a private pipeline"))

    # --- encoding ------------------------------------------------------------------------------------
    vocab: dict[str, list[str]] = {}
    if categorical == "onehot":
        for col in categorical_cols:
            vocab[col] = sorted(frame.loc[~miss[col], col].unique().tolist())
    n_cols = len(numeric) + sum(len(v) for v in vocab.values())
    if n_cols > max_columns:
        worst = sorted(vocab.items(), key=lambda kv: -len(kv[1]))[:3]
        detail = ", ".join(f"{c!r} ({len(v)} distinct values)" for c, v in worst)
        raise DataError(f"one-hot encoding gives {n_cols} columns, more than max_columns = {max_columns} "
                        f"(largest categorical columns: {detail}); drop those columns, use categorical='drop', "
                        "or raise max_columns.")
    blocks: list[np.ndarray] = []
    names: list[str] = []
    for col in frame.columns:
        if col in numeric:
            blocks.append(numeric[col].to_numpy(dtype=np.float64)[:, None])
            names.append(col)
        elif col in vocab:
            codes = pd.Categorical(frame[col].where(~miss[col]), categories=vocab[col]).codes
            M = np.zeros((len(codes), len(vocab[col])))
            ok = codes >= 0
            M[np.nonzero(ok)[0], codes[ok]] = 1.0
            blocks.append(M)
            names += [f"{col}={v}" for v in vocab[col]]
    if categorical_cols:
        if categorical == "onehot":
            ledger.append(LedgerEntry("one-hot encoding, vocabulary from the data", private=False,
                                      note=f"categories of {', '.join(categorical_cols[:10])} were read off the "
                                           "data; a public category list is needed for a private pipeline"))
        else:
            ledger.append(LedgerEntry("drop non-numeric columns", note=", ".join(categorical_cols[:20])))
    if not blocks:
        raise DataError(f"no numeric columns after encoding (non-numeric columns: {', '.join(categorical_cols)}); "
                        "use categorical='onehot' or upload numeric columns.")
    X = np.hstack(blocks)
    n, d = X.shape

    const = [names[j] for j in np.nonzero(np.ptp(X, axis=0) == 0)[0]]
    if const:
        shown = ", ".join(map(repr, const[:10])) + (" …" if len(const) > 10 else "")
        raise DataError(f"constant column(s) {shown} carry no information for PCA; drop them and upload again.")

    # --- label and k checks ----------------------------------------------------------------------------
    y = None
    if y_raw is not None:
        y = _label_vector(y_raw)
        if len(np.unique(y)) < 2:
            raise DataError(f"label column {label!r} has a single class ({y[0]!r}); a label needs at least two "
                            "classes — pick another column or leave the label empty.")
    if k is not None:
        if n < k:
            raise DataError(f"the data has {n} rows, fewer than k = {k} components; use a smaller k or more rows.")
        if d < k:
            raise DataError(f"the data has {d} columns, fewer than k = {k} components; use a smaller k.")

    return Dataset(
        id="uploaded", name=str(name), X=X, y=y, feature_names=tuple(names),
        source="user upload (kept in memory only, never stored)",
        description=f"{n:,} rows × {d} columns from an uploaded CSV" + (f"; label {label!r}" if label else ""),
        feature_ranges=None, suggested_k=k if k is not None else min(2, d),
        options={"label": label, "categorical": categorical, "missing": missing, "max_columns": max_columns,
                 "max_rows": max_rows, "k": k, "categorical_columns": tuple(categorical_cols)},
        load_ledger=tuple(ledger), diagnostics=Diagnostics(dropped),
    )


def example_csv_bytes() -> bytes:
    """The committed classroom example (``sample_data/classroom_example.csv``) as bytes."""
    path = SAMPLE_DATA_DIR / "classroom_example.csv"
    if not path.is_file():
        raise DataError("sample_data/classroom_example.csv is missing; run sample_data/make_classroom_example.py.")
    return path.read_bytes()
