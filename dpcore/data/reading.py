"""Read an uploaded table into memory: CSV/TSV text (any common delimiter, decimal commas, UTF-8 with or without a
BOM, UTF-16), Parquet, and Excel ``.xlsx`` when openpyxl is installed. Nothing is written to disk.

The result is a :class:`RawTable`: the cells as stripped strings (``None`` for missing) — or typed columns for the
binary formats — plus a :class:`ReadInfo` saying what was detected. Interpreting the columns (roles, encoding) is
done by :mod:`dpcore.data.roles` and :mod:`dpcore.data.encode`.
"""

from __future__ import annotations

import codecs
import csv as _csv
import io
import os
import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import numpy as np
import pandas as pd

from .._validation import check_int
from ..exceptions import DataError, InvalidParameterError

#: Cell values treated as missing (compared after stripping whitespace, case-insensitive).
MISSING_TOKENS = frozenset({"", "na", "n/a", "nan", "null", "?"})
#: Delimiters tried by the detection, in order of preference on a tie.
DELIMITERS = (",", ";", "\t", "|")
DELIMITER_NAMES = {",": "comma", ";": "semicolon", "\t": "tab", "|": "pipe"}
DECIMALS = (".", ",")

CsvSource = bytes | bytearray | memoryview | str | os.PathLike | IO[bytes] | IO[str]

_SNIFF_BYTES = 65_536
_SNIFF_ROWS = 200
_DEC_COMMA = re.compile(r"^[+-]?(?:\d{1,3}(?:\.\d{3})+|\d+),\d+$")
_DEC_POINT = re.compile(r"^[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)\.\d+$")
_THOUSANDS = {".": r"^[+-]?\d{1,3}(?:,\d{3})+(?:\.\d+)?$", ",": r"^[+-]?\d{1,3}(?:\.\d{3})+(?:,\d+)?$"}


@dataclass(frozen=True)
class ReadInfo:
    """What the reader detected (or was told). Public: it describes the file format, not the data."""

    format: str                 #: "csv", "parquet" or "excel"
    encoding: str | None = None  #: text encoding (CSV only)
    delimiter: str | None = None  #: field separator (CSV only)
    decimal: str = "."          #: decimal mark used for numbers
    notes: tuple[str, ...] = ()  #: readable remarks, e.g. "semicolon-separated"

    def describe(self) -> str:
        """One line for the UI and the CLI, e.g. "CSV, UTF-16, tab-separated, decimal comma"."""
        if self.format != "csv":
            return {"parquet": "Parquet", "excel": "Excel workbook (first sheet)"}.get(self.format, self.format)
        parts = ["CSV", self.encoding or "UTF-8", f"{DELIMITER_NAMES.get(self.delimiter or ',', 'custom')}-separated"]
        parts.append("decimal comma" if self.decimal == "," else "decimal point")
        return ", ".join(parts)


@dataclass(frozen=True, eq=False)
class RawTable:
    """Cells of an uploaded table, in memory only.

    ``frame`` holds one column per header name: ``object`` columns of stripped strings with ``None`` for missing
    cells (CSV), or typed ``float64``/``datetime64`` columns (Parquet, Excel). Use :meth:`numbers` for a column's
    numeric values and :meth:`present` for its non-missing cells (both computed once for all columns).
    """

    frame: pd.DataFrame
    info: ReadInfo
    name: str = "uploaded"
    _cache: dict = field(default_factory=dict, repr=False)

    @property
    def columns(self) -> list[str]:
        return [str(c) for c in self.frame.columns]

    @property
    def n_rows(self) -> int:
        return len(self.frame)

    def present(self, column: str) -> np.ndarray:
        """Boolean mask of the non-missing cells of ``column``."""
        if "present" not in self._cache:
            mask = self.frame.notna().to_numpy()
            self._cache["present"] = {c: mask[:, j] for j, c in enumerate(self.frame.columns)}
        return self._cache["present"][column]

    def missing(self, column: str) -> np.ndarray:
        """Boolean mask of the missing cells of ``column``."""
        return ~self.present(column)

    def numbers(self, column: str) -> tuple[np.ndarray, np.ndarray]:
        """(values, bad): float values of ``column`` (NaN where missing or not a number) and a mask of the cells
        that are present but not numbers."""
        if "numbers" not in self._cache:
            self._cache["numbers"] = _parse_all(self.frame, self.info.decimal)
        return self._cache["numbers"][column]


def _parse_all(frame: pd.DataFrame, decimal: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """:func:`parse_numbers` of every column; the text columns in one vectorised pass."""
    out: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    text = [c for c in frame.columns if frame[c].dtype == object]
    for c in frame.columns:
        if c not in text:
            out[c] = parse_numbers(frame[c], decimal)
    if text:
        n = len(frame)
        flat = pd.Series(frame[text].to_numpy(dtype=object).ravel(order="F"), dtype=object)
        values, bad = parse_numbers(flat, decimal)
        for j, c in enumerate(text):
            out[c] = (values[j * n:(j + 1) * n], bad[j * n:(j + 1) * n])
    return out


def cell_text(value: object) -> str | None:
    """A cell as category text: strings as they are, 3.0 → "3" (typed Parquet/Excel cells), None for missing."""
    if value is None or (isinstance(value, float) and np.isnan(value)) or value is pd.NaT:
        return None
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    return str(value)


# ==================================================================================================
# bytes in
# ==================================================================================================

def read_source(source: Any) -> bytes:
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


def _is_xlsx(raw: bytes) -> bool:
    if not raw.startswith(b"PK\x03\x04"):
        return False
    try:
        with zipfile.ZipFile(io.BytesIO(raw)) as zf:
            return any(n.startswith("xl/") for n in zf.namelist())
    except (zipfile.BadZipFile, OSError, ValueError):
        return False


def decode(raw: bytes, encoding: str | None = None) -> tuple[str, str]:
    """(text, encoding name): a BOM decides (UTF-8, UTF-16, UTF-32); without one, UTF-16 is recognised by its
    zero bytes and anything else must be UTF-8 — unless ``encoding`` names the codec to use."""
    if not raw.strip(b" \t\r\n\x00"):
        raise DataError("the file is empty; upload a CSV with a header row and at least two data rows.")
    if encoding:
        try:
            codec = codecs.lookup(encoding).name
        except LookupError:
            raise InvalidParameterError(f"unknown encoding {encoding!r}; use e.g. 'utf-8', 'utf-16' or "
                                        "'cp1252'.") from None
        codec = "utf-8-sig" if codec == "utf-8" else codec
        try:
            return raw.decode(codec), encoding
        except UnicodeDecodeError as exc:
            raise DataError(f"the file is not valid {encoding} text (byte offset {exc.start}); pick the encoding "
                            "the file was saved with, or leave the encoding on automatic.") from None
    for bom, codec, label in ((codecs.BOM_UTF32_LE, "utf-32", "UTF-32"), (codecs.BOM_UTF32_BE, "utf-32", "UTF-32"),
                              (codecs.BOM_UTF8, "utf-8-sig", "UTF-8 with BOM"),
                              (codecs.BOM_UTF16_LE, "utf-16", "UTF-16"), (codecs.BOM_UTF16_BE, "utf-16", "UTF-16")):
        if raw.startswith(bom):
            try:
                return raw.decode(codec), label
            except UnicodeDecodeError:
                raise DataError(f"the file starts with a {label} byte-order mark but is not valid {label} text; "
                                "re-save it as 'CSV UTF-8' and upload again.") from None
    head = raw[:4096]
    if len(head) >= 8:
        even, odd = head[0::2], head[1::2]
        for zeros, other, codec in ((odd, even, "utf-16-le"), (even, odd, "utf-16-be")):
            if zeros.count(0) >= 0.4 * len(zeros) and other.count(0) <= 0.05 * len(other):
                try:
                    return raw.decode(codec), "UTF-16"
                except UnicodeDecodeError:
                    break
    try:
        return raw.decode("utf-8"), "UTF-8"
    except UnicodeDecodeError as exc:
        raise DataError(
            f"the file is not UTF-8 text (invalid byte 0x{raw[exc.start]:02x} at byte offset {exc.start}); "
            "re-save it as 'CSV UTF-8' (e.g. in Excel: Save As → CSV UTF-8) and upload again, or name its encoding "
            "(e.g. encoding='cp1252' for a Windows 'CSV (comma delimited)' export)."
        ) from None


# ==================================================================================================
# text tables
# ==================================================================================================

def _rows(text: str, delimiter: str, limit: int) -> list[list[str]]:
    out: list[list[str]] = []
    try:
        for row in _csv.reader(io.StringIO(text, newline=""), delimiter=delimiter):
            if row and any(c.strip() for c in row):
                out.append(row)
                if len(out) >= limit:
                    break
    except _csv.Error:
        pass
    return out


def detect_delimiter(text: str) -> str:
    """The separator whose header has the most fields and whose rows agree with the header (comma on a tie)."""
    sample = text[:_SNIFF_BYTES]
    if len(text) > _SNIFF_BYTES and "\n" in sample:
        sample = sample[: sample.rfind("\n")]  # drop a cut-off last line
    best, best_score = ",", (False, 0.0, 0)
    for delim in DELIMITERS:
        rows = _rows(sample, delim, _SNIFF_ROWS)
        if not rows or len(rows[0]) < 2:
            continue
        width = len(rows[0])
        agree = sum(len(r) == width for r in rows) / len(rows)
        score = (agree >= 0.9, agree, width)
        if score > best_score:
            best, best_score = delim, score
    return best


def _scan(text: str, delimiter: str, max_rows: int) -> tuple[list[str], int]:
    """Header and data-row count via the csv module, checking the field count of every line."""
    reader = _csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    header: list[str] | None = None
    n_rows = 0
    sep = DELIMITER_NAMES.get(delimiter, repr(delimiter))
    try:
        for row in reader:
            if not row or (len(row) == 1 and not row[0].strip() and (header is None or len(header) > 1)):
                continue  # blank line
            if header is None:
                header = [h.strip() for h in row]
                continue
            if len(row) != len(header):
                raise DataError(
                    f"line {reader.line_num} has {len(row)} fields but the header has {len(header)} ({sep}-"
                    "separated); fix that line (quote values that contain the separator, e.g. \"Smith, J\") and "
                    "upload again."
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
    return header, n_rows


def _clean_header(header: list[str]) -> list[str]:
    out: list[str] = []
    seen: set[str] = set()
    for i, h in enumerate(header):
        h = str(h).strip()
        if not h or (h.lower().startswith("unnamed:") and h[8:].strip().isdigit()):
            h = f"column{i + 1}"
        if h in seen:
            raise DataError(f"the column name {h!r} appears twice in the header; rename one of them.")
        seen.add(h)
        out.append(h)
    return out


def _check_rows(n_rows: int) -> None:
    if n_rows == 0:
        raise DataError("the file has a header but no data rows; add at least two data rows.")
    if n_rows == 1:
        raise DataError("the file has a single data row; PCA needs at least two rows (ideally hundreds).")


def _normalise_strings(s: pd.Series) -> pd.Series:
    """Stripped strings, ``None`` for missing tokens (object dtype)."""
    return _normalise_block(pd.DataFrame({"c": s})).iloc[:, 0]


def _normalise_block(frame: pd.DataFrame) -> pd.DataFrame:
    """Every cell as a stripped string, ``None`` for missing tokens; one vectorised pass over all columns."""
    arr = frame.to_numpy(dtype=object)
    flat = pd.Series(arr.ravel(), dtype=object)
    present = flat.notna().to_numpy()
    out = np.full(flat.shape[0], None, dtype=object)
    if present.any():
        txt = flat[present].map(str).str.strip()
        keep = ~txt.str.lower().isin(MISSING_TOKENS).to_numpy()
        idx = np.flatnonzero(present)
        out[idx[keep]] = txt.to_numpy(dtype=object)[keep]
    return pd.DataFrame(out.reshape(arr.shape), columns=frame.columns, index=frame.index, dtype=object)


def _slow_rows(text: str, delimiter: str, width: int) -> list[list[str]]:
    rows = [r for r in _csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
            if r and not (len(r) == 1 and not r[0].strip() and width > 1)]
    return rows[1:]


def _read_text(text: str, delimiter: str, max_rows: int) -> pd.DataFrame:
    header, n_rows = _scan(text, delimiter, max_rows)
    header = _clean_header(header)
    _check_rows(n_rows)
    frame = pd.read_csv(io.StringIO(text), sep=delimiter, header=0, names=header, dtype=object,
                        keep_default_na=False, na_filter=False, skip_blank_lines=True, engine="c",
                        low_memory=False, quotechar='"')
    if len(frame) != n_rows:  # unusual blank/whitespace lines: use the csv module's reading
        frame = pd.DataFrame(_slow_rows(text, delimiter, len(header)), columns=header, dtype=object)
    return _normalise_block(frame)


def detect_decimal(frame: pd.DataFrame, delimiter: str | None) -> str:
    """"," when the cells look like decimal-comma numbers (only possible without a comma separator), else "."."""
    if delimiter == ",":
        return "."
    comma = point = 0
    for c in frame.columns:
        s = frame[c]
        if s.dtype != object:
            continue
        cells = s.dropna().head(1000).astype(str)
        comma += int(cells.str.match(_DEC_COMMA).sum())
        point += int(cells.str.match(_DEC_POINT).sum())
    return "," if comma > point else "."


def parse_numbers(s: pd.Series, decimal: str = ".") -> tuple[np.ndarray, np.ndarray]:
    """(values, bad) for a column: float values (NaN where missing or not a number) and a mask of the cells that
    are present but not numbers. Thousands separators (1,234.5 or 1.234,5) are understood."""
    if decimal not in DECIMALS:
        raise InvalidParameterError(f"decimal must be '.' or ','; got {decimal!r}.")
    if pd.api.types.is_bool_dtype(s) or pd.api.types.is_datetime64_any_dtype(s):
        return np.full(len(s), np.nan), s.notna().to_numpy()
    if pd.api.types.is_numeric_dtype(s):
        return s.to_numpy(dtype=np.float64, na_value=np.nan), np.zeros(len(s), dtype=bool)
    present = s.notna().to_numpy()
    values = np.full(len(s), np.nan)
    if not present.any():
        return values, np.zeros(len(s), dtype=bool)
    strs = pd.Series(s.to_numpy(dtype=object)[present], dtype=object).map(str)
    if decimal == ",":
        thousands = strs.str.match(_THOUSANDS[","]).to_numpy(dtype=bool)
        if thousands.any():
            strs[thousands] = strs[thousands].str.replace(".", "", regex=False)
        strs = strs.str.replace(",", ".", regex=False)
    parsed = np.array(pd.to_numeric(strs, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan))
    if decimal == ".":
        retry = np.isnan(parsed)
        if retry.any():
            again = strs[retry]
            thousands = again.str.match(_THOUSANDS["."]).to_numpy(dtype=bool)
            if thousands.any():
                fixed = pd.to_numeric(again[thousands].str.replace(",", "", regex=False), errors="coerce")
                sub = parsed[retry]
                sub[thousands] = fixed.to_numpy(dtype=np.float64, na_value=np.nan)
                parsed[retry] = sub
    values[present] = parsed
    return values, present & np.isnan(values)


# ==================================================================================================
# binary formats
# ==================================================================================================

def _typed_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """Columns of a Parquet/Excel frame as float64, datetime64 or normalised strings."""
    out = {}
    header = _clean_header([str(c) for c in frame.columns])
    for name, col in zip(header, frame.columns):
        s = frame[col]
        if pd.api.types.is_bool_dtype(s):
            out[name] = _normalise_strings(s.astype(object).where(s.notna(), None))
        elif pd.api.types.is_numeric_dtype(s):
            out[name] = s.astype(np.float64)
        elif pd.api.types.is_datetime64_any_dtype(s):
            out[name] = s
        else:
            vals = s.dropna()
            if len(vals) and vals.map(lambda v: isinstance(v, (int, float)) and not isinstance(v, bool)).all():
                out[name] = pd.to_numeric(s, errors="coerce").astype(np.float64)
            elif len(vals) and vals.map(lambda v: hasattr(v, "year") and hasattr(v, "month")).all():
                out[name] = pd.to_datetime(s, errors="coerce")
            else:
                out[name] = _normalise_strings(s)
    return pd.DataFrame(out)


def _read_parquet(raw: bytes) -> pd.DataFrame:
    try:
        return pd.read_parquet(io.BytesIO(raw))
    except ImportError:
        raise DataError("reading Parquet needs pyarrow (installed with Streamlit); install it, or export the "
                        "table as CSV.") from None
    except Exception as exc:  # pyarrow raises its own error types for damaged files
        raise DataError(f"the Parquet file could not be read ({type(exc).__name__}: {exc}); export it again or "
                        "upload a CSV.") from None


def _read_excel(raw: bytes, sheet: str | int | None) -> pd.DataFrame:
    import importlib.util

    if importlib.util.find_spec("openpyxl") is None:
        raise DataError("this is an Excel workbook (.xlsx); reading it needs the optional package openpyxl "
                        "(pip install openpyxl). Or save the sheet as 'CSV UTF-8' and upload that.")
    try:
        return pd.read_excel(io.BytesIO(raw), sheet_name=0 if sheet is None else sheet, dtype=object,
                             engine="openpyxl")
    except Exception as exc:  # openpyxl raises many types for damaged or unusual workbooks
        raise DataError(f"the Excel workbook could not be read ({type(exc).__name__}: {exc}); save the sheet as "
                        "'CSV UTF-8' and upload that.") from None


# ==================================================================================================
# entry point
# ==================================================================================================

def read_table(source: CsvSource, *, delimiter: str | None = None, decimal: str | None = None,
               encoding: str | None = None, sheet: str | int | None = None, max_rows: int = 1_000_000,
               name: str = "uploaded") -> RawTable:
    """Read a table (CSV/TSV text, Parquet or ``.xlsx``) into a :class:`RawTable`, entirely in memory.

    ``delimiter``, ``decimal`` and ``encoding`` override the detection (None: detect). Every problem raises a
    :class:`~dpcore.exceptions.DataError` whose message names the problem and the fix.
    """
    max_rows = check_int(max_rows, "max_rows", 2)
    if delimiter is not None and (not isinstance(delimiter, str) or len(delimiter) != 1 or delimiter in "\"\r\n"):
        raise InvalidParameterError(f"delimiter must be a single character such as ',', ';' or a tab; got "
                                    f"{delimiter!r}.")
    if decimal is not None and decimal not in DECIMALS:
        raise InvalidParameterError(f"decimal must be '.' or ','; got {decimal!r}.")
    raw = read_source(source)
    notes: list[str] = []
    if raw.startswith(b"PAR1"):
        frame = _typed_frame(_read_parquet(raw))
        info = ReadInfo("parquet", decimal=".")
    elif _is_xlsx(raw):
        frame = _typed_frame(_read_excel(raw, sheet))
        info = ReadInfo("excel", decimal=".")
    elif raw.startswith(b"\xd0\xcf\x11\xe0"):
        raise DataError("this is a legacy Excel .xls (or another Office) file; save it as .xlsx or 'CSV UTF-8' and "
                        "upload that.")
    else:
        text, enc = decode(raw, encoding)
        del raw
        if "\x00" in text:
            raise DataError("the file contains NUL bytes, so it is not a CSV text file (is it a spreadsheet or an "
                            "archive?); export it as CSV (UTF-8) and upload again.")
        first, _, rest = text.partition("\n")
        if first.strip().lower().startswith("sep=") and len(first.strip()) == 5:  # Excel's "sep=;" line
            delimiter, text = delimiter or first.strip()[4], rest
        delim = delimiter or detect_delimiter(text)
        frame = _read_text(text, delim, max_rows)
        del text
        dec = decimal or detect_decimal(frame, delim)
        if delim != ",":
            notes.append(f"{DELIMITER_NAMES.get(delim, repr(delim))}-separated")
        if dec == ",":
            notes.append("decimal comma")
        if enc not in ("UTF-8",):
            notes.append(f"encoding {enc}")
        info = ReadInfo("csv", encoding=enc, delimiter=delim, decimal=dec, notes=tuple(notes))
    if frame.shape[1] == 0:
        raise DataError("the table has no columns; upload a file with a header row.")
    if len(frame) > max_rows:
        raise DataError(f"the file has more than max_rows = {max_rows:,} data rows; upload a random sample or "
                        "raise max_rows.")
    _check_rows(len(frame))
    return RawTable(frame=frame.reset_index(drop=True), info=info, name=str(name))
