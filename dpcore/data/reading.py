"""Read an uploaded table into memory: CSV/TSV text (any common delimiter, decimal commas, UTF-8 with or without a
BOM, UTF-16), Parquet, and Excel ``.xlsx`` when openpyxl is installed. Nothing is written to disk.

The result is a :class:`RawTable`: the cells as stripped strings (``None`` for missing) — or typed columns for the
binary formats — plus a :class:`ReadInfo` saying how the file was read. Interpreting the columns (roles, encoding)
is done by :mod:`dpcore.data.roles` and :mod:`dpcore.data.encode`.

**The file format is part of the public schema** (:class:`FileFormat`: kind, encoding, delimiter, decimal mark,
thousands separator, header row, missing-value tokens). Guessing it from the cells lets one record change how every
other record is read (a single "3,5" turns 150 other "4.900" from 4900 into 4.9), so detection only *drafts* a
format (every detected field is marked ``from_data``); ``read_table(source, format=F)`` reads with exactly ``F``,
guessing nothing. Under a declared format every rule is per record: a line is a record (a quote never spans lines),
a line with the wrong number of fields becomes a record of missing cells, undecodable bytes become U+FFFD, and a
cell is a number only when it is one under the declared decimal mark and thousands separator. (So a quoted cell
that contains a line break is read as several records of missing cells: declare such tables as Parquet or Excel.)
"""

from __future__ import annotations

import codecs
import csv as _csv
import io
import os
import re
import zipfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any

import numpy as np
import pandas as pd

from ..core._validation import check_int
from ..exceptions import DataError, InvalidParameterError
from .records import (  # declared_codec and is_sep_line: re-exported
    block_records,
    declared_codec,  # noqa: F401
    is_sep_line,
    split_header,
    utf8_blocks,
)

#: File suffixes the streamed and Dask CSV readers decompress (gzip, bzip2); the in-memory reader refuses them.
COMPRESSED_SUFFIXES = (".gz", ".bz2")
#: Default cell values treated as missing (compared after stripping whitespace, case-insensitive).
DEFAULT_MISSING = ("", "?", "n/a", "na", "nan", "null")
MISSING_TOKENS = frozenset(DEFAULT_MISSING)
#: Delimiters tried by the detection, in order of preference on a tie.
DELIMITERS = (",", ";", "\t", "|")
DELIMITER_NAMES = {",": "comma", ";": "semicolon", "\t": "tab", "|": "pipe"}
DECIMALS = (".", ",")
#: Thousands separators a format may declare (None: numbers carry no grouping).
THOUSANDS = (",", ".", " ", "'")
#: Kinds of file: delimited text, or the typed binary formats.
FORMAT_KINDS = ("csv", "parquet", "excel")
#: Fields of a :class:`FileFormat` (``from_data`` names some of them); the typed kinds use only kind and missing.
FORMAT_FIELDS = ("kind", "encoding", "delimiter", "decimal", "thousands", "header", "missing")
_TYPED_FIELDS = ("kind", "missing")

CsvSource = bytes | bytearray | memoryview | str | os.PathLike | IO[bytes] | IO[str]

_SNIFF_BYTES = 65_536
_SNIFF_ROWS = 200
_DEC_COMMA = re.compile(r"^[+-]?(?:\d{1,3}(?:\.\d{3})+|\d+),\d+$")
_DEC_POINT = re.compile(r"^[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)\.\d+$")


def _format_error(fld: str, message: str) -> InvalidParameterError:
    return InvalidParameterError(f"file format, field {fld!r}: {message}")


def _as_bool(value: Any, fld: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "yes", "1"):
        return True
    if text in ("false", "no", "0"):
        return False
    raise _format_error(fld, f"expected true or false, got {value!r}.")


@dataclass(frozen=True)
class FileFormat:
    """How a table file is read: part of the public schema (never guessed from the cells of a private run).

    ``kind`` is ``"csv"`` (delimited text), ``"parquet"`` or ``"excel"``; the text fields (``encoding``,
    ``delimiter``, ``decimal``, ``thousands``, ``header``) apply to CSV only. ``missing`` lists the cell values that
    mean "missing" (compared after stripping whitespace, case-insensitive). ``header=False``: the file has no header
    line and the schema's columns, in order, name its fields. ``from_data`` names the fields that were detected from
    a file and not yet confirmed: the format is public only when it is empty.
    """

    kind: str = "csv"
    encoding: str = "utf-8"
    delimiter: str = ","
    decimal: str = "."
    thousands: str | None = None
    header: bool = True
    missing: tuple[str, ...] = DEFAULT_MISSING
    from_data: frozenset[str] = field(default_factory=frozenset)

    def __post_init__(self) -> None:
        if self.kind not in FORMAT_KINDS:
            raise _format_error("kind", f"unknown kind {self.kind!r}; use one of {', '.join(FORMAT_KINDS)}.")
        enc = str(self.encoding).strip().lower()
        try:
            text_codec = codecs.lookup(enc)._is_text_encoding
        except LookupError:
            raise _format_error("encoding", f"unknown encoding {str(self.encoding)[:40]!r}; use e.g. utf-8, utf-16 "
                                            "or cp1252.") from None
        if not text_codec:
            raise _format_error("encoding", f"{enc[:40]!r} is not a text encoding; use e.g. utf-8, utf-16 or cp1252.")
        object.__setattr__(self, "encoding", enc)
        if self.delimiter in ("tab", "\\t"):
            object.__setattr__(self, "delimiter", "\t")
        if not isinstance(self.delimiter, str) or len(self.delimiter) != 1 or self.delimiter in "\"\r\n":
            raise _format_error("delimiter", f"expected one character such as ',', ';' or a tab, got "
                                             f"{self.delimiter!r}.")
        if self.decimal not in DECIMALS:
            raise _format_error("decimal", f"expected '.' or ',', got {self.decimal!r}.")
        if self.thousands is not None and (self.thousands not in THOUSANDS or self.thousands == self.decimal):
            raise _format_error("thousands", f"expected nothing (null) or one of {', '.join(map(repr, THOUSANDS))} "
                                             f"other than the decimal mark, got {self.thousands!r}.")
        object.__setattr__(self, "header", _as_bool(self.header, "header"))
        tokens = self.missing
        if isinstance(tokens, (str, bytes)) or not isinstance(tokens, Iterable):
            raise _format_error("missing", f"expected a list of cell values, got {tokens!r}.")
        object.__setattr__(self, "missing", tuple(sorted({"" if t is None else str(t).strip().lower()
                                                          for t in tokens})))
        fd = self.from_data
        if isinstance(fd, str) or not isinstance(fd, Iterable):
            raise _format_error("from_data", f"expected a list of field names, got {fd!r}.")
        fd = frozenset(str(f) for f in fd)
        unknown = sorted(fd - set(FORMAT_FIELDS))
        if unknown:
            raise _format_error("from_data", f"{unknown[0]!r} is not a format field; use some of "
                                             f"{', '.join(FORMAT_FIELDS)}.")
        object.__setattr__(self, "from_data", fd)

    # --- views ------------------------------------------------------------------------------------
    @property
    def fields(self) -> tuple[str, ...]:
        """The fields that apply to this kind of file."""
        return FORMAT_FIELDS if self.kind == "csv" else _TYPED_FIELDS

    @property
    def is_public(self) -> bool:
        """True when no field that applies was detected from the data and left unconfirmed."""
        return not (self.from_data & set(self.fields))

    @property
    def reading(self) -> tuple:
        """What decides the reading (every field but ``from_data``): equal readings read a file identically."""
        if self.kind != "csv":
            return (self.kind, self.missing)
        return (self.kind, codecs.lookup(self.encoding).name, self.delimiter, self.decimal, self.thousands,
                self.header, self.missing)

    @property
    def number_decimal(self) -> str:
        """The decimal mark of text cells ('.' in typed files, whose text cells are Python's number spelling)."""
        return self.decimal if self.kind == "csv" else "."

    @property
    def number_thousands(self) -> str | None:
        return self.thousands if self.kind == "csv" else None

    def confirmed(self) -> FileFormat:
        """This format declared public (the user checked every field)."""
        return replace(self, from_data=frozenset())

    def describe(self) -> str:
        """One line, e.g. "CSV, utf-16, tab-separated, decimal comma, thousands '.'"."""
        if self.kind != "csv":
            return {"parquet": "Parquet", "excel": "Excel workbook (first sheet)"}[self.kind]
        parts = ["CSV", self.encoding, f"{DELIMITER_NAMES.get(self.delimiter, repr(self.delimiter))}-separated",
                 "decimal comma" if self.decimal == "," else "decimal point"]
        if self.thousands is not None:
            parts.append(f"thousands {self.thousands!r}")
        if not self.header:
            parts.append("no header row")
        return ", ".join(parts)

    # --- the per-cell rules (one implementation for every reader) -----------------------------------
    def missing_mask(self, cells: pd.Series) -> np.ndarray:
        """True where a cell (any object, stripped text compared case-insensitively) is missing."""
        present = cells.notna().to_numpy()
        out = ~present
        if present.any():
            txt = cells[present].map(str).str.strip().str.lower()
            out[np.flatnonzero(present)] = txt.isin(self.missing).to_numpy()
        return out

    def parse_numbers(self, cells: pd.Series) -> tuple[np.ndarray, np.ndarray]:
        """(values, bad) of a column under this format: see :func:`parse_numbers`."""
        return parse_numbers(cells, self.number_decimal, self.number_thousands)

    def csv_options(self) -> dict:
        """The declared reading options for a streaming reader (e.g. pyarrow's CSV reader): ``encoding`` (a Python
        codec name; ``utf-8`` means "UTF-8, a BOM is skipped"), ``delimiter``, ``header`` (False: the schema's
        columns name the fields), ``missing`` (lower-case tokens, compared after stripping), ``decimal`` and
        ``thousands`` (for :meth:`parse_numbers`, the per-cell number rule), ``quote`` ('"'; a quoted field never
        spans lines) and ``records`` ('lines': one record per physical line; a line with the wrong number of fields
        is a record of missing cells)."""
        if self.kind != "csv":
            raise InvalidParameterError(f"the schema declares a {self.describe()} file, which has no CSV options.")
        return {"encoding": self.encoding, "delimiter": self.delimiter, "header": self.header,
                "missing": self.missing, "decimal": self.decimal, "thousands": self.thousands, "quote": '"',
                "records": "lines"}

    # --- serialisation ------------------------------------------------------------------------------
    def to_dict(self) -> dict:
        out: dict[str, Any] = {"kind": self.kind}
        if self.kind == "csv":
            out.update(encoding=self.encoding, delimiter=self.delimiter, decimal=self.decimal,
                       thousands=self.thousands, header=self.header)
        out["missing"] = list(self.missing)
        fd = [f for f in self.fields if f in self.from_data]
        if fd:
            out["from_data"] = fd
        return out

    @classmethod
    def from_dict(cls, data: Any) -> FileFormat:
        if not isinstance(data, dict):
            raise _format_error("format", f"expected a mapping such as {{kind: csv, delimiter: ';'}}, got {data!r}.")
        unknown = sorted(set(map(str, data)) - {*FORMAT_FIELDS, "from_data"})
        if unknown:
            raise _format_error(unknown[0], f"unknown field; the fields are {', '.join(FORMAT_FIELDS)} and from_data.")
        kw = {k: data[k] for k in FORMAT_FIELDS if k in data}
        if "missing" in kw and kw["missing"] is None:
            kw["missing"] = ()
        return cls(**kw, from_data=data.get("from_data") or ())


@dataclass(frozen=True)
class ReadInfo:
    """How the file was read. ``file_format`` is the :class:`FileFormat` used: the declared one
    (``declared=True``), or a draft detected from the file (its detected fields marked ``from_data``: NOT public —
    the detection read the cells)."""

    format: str                 #: "csv", "parquet" or "excel"
    encoding: str | None = None  #: text encoding (CSV only), as shown
    delimiter: str | None = None  #: field separator (CSV only)
    decimal: str = "."          #: decimal mark used for numbers
    notes: tuple[str, ...] = ()  #: readable remarks, e.g. "semicolon-separated"
    file_format: FileFormat | None = None  #: the format the cells were read with
    declared: bool = False      #: True when ``file_format`` was given, not detected

    def describe(self) -> str:
        """One line for the UI and the CLI, e.g. "CSV, UTF-16, tab-separated, decimal comma"."""
        if self.format != "csv":
            return {"parquet": "Parquet", "excel": "Excel workbook (first sheet)"}.get(self.format, self.format)
        parts = ["CSV", self.encoding or "UTF-8", f"{DELIMITER_NAMES.get(self.delimiter or ',', 'custom')}-separated"]
        parts.append("decimal comma" if self.decimal == "," else "decimal point")
        fmt = self.file_format  # every field a confirmation of this format declares is shown
        if fmt is not None and fmt.thousands is not None:
            parts.append(f"thousands {fmt.thousands!r}")
        if fmt is not None and not fmt.header:
            parts.append("no header row")
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
    #: The file's bytes, so that a declared format can re-read them (:meth:`read_as`); None for a frame.
    source: bytes | None = field(default=None, repr=False)
    #: Exact counts of the reading (e.g. malformed lines read as missing): non-private diagnostics.
    counts: dict = field(default_factory=dict, repr=False)

    @property
    def file_format(self) -> FileFormat:
        """The format the cells were read with."""
        return self.info.file_format or FileFormat(kind=self.info.format)

    def read_as(self, fmt: FileFormat, column_names: Sequence[str] | None = None) -> RawTable:
        """This table as read with exactly the declared ``fmt``: itself when it was read with the same reading,
        else the file's bytes read again (nothing detected)."""
        if fmt.reading == self.file_format.reading and (self.info.declared or self.info.file_format is not None) \
                and (fmt.header or column_names is None or list(column_names) == self.columns):
            return self
        if self.source is None:
            raise DataError("this table cannot be read again with the schema's file format (its bytes were not "
                            "kept); read the file with read_table(source, format=schema.file_format).")
        return read_table(self.source, format=fmt, column_names=column_names, name=self.name,
                          max_rows=max(2, self.n_rows + 1, 1_000_000))

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
            self._cache["numbers"] = _parse_all(self.frame, self.file_format)
        return self._cache["numbers"][column]


def _parse_all(frame: pd.DataFrame, fmt: FileFormat) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """:meth:`FileFormat.parse_numbers` of every column; the text columns in one vectorised pass."""
    out: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    text = [c for c in frame.columns if frame[c].dtype == object]
    for c in frame.columns:
        if c not in text:
            out[c] = fmt.parse_numbers(frame[c])
    if text:
        n = len(frame)
        flat = pd.Series(frame[text].to_numpy(dtype=object).ravel(order="F"), dtype=object)
        values, bad = fmt.parse_numbers(flat)
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
        if path.suffix.lower() in COMPRESSED_SUFFIXES:
            raise DataError(f"{path.name} is compressed; stream it (dpcore sweep --stream, dpcore.stats.from_csv: "
                            "they decompress as they read) or decompress it first.")
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
    text, label, _ = _decode(raw, encoding)
    return text, label


def _decode(raw: bytes, encoding: str | None = None) -> tuple[str, str, str]:
    """(text, label, codec) — see :func:`decode`; ``codec`` is what a :class:`FileFormat` declares."""
    if not raw.strip(b" \t\r\n\x00"):
        raise DataError("the file is empty; upload a CSV with a header row and at least two data rows.")
    if encoding:
        try:
            codec = codecs.lookup(encoding).name
        except LookupError:
            raise InvalidParameterError(f"unknown encoding {encoding!r}; use e.g. 'utf-8', 'utf-16' or "
                                        "'cp1252'.") from None
        declared = codec
        codec = "utf-8-sig" if codec == "utf-8" else codec
        try:
            return raw.decode(codec), encoding, declared
        except UnicodeDecodeError:
            raise DataError(f"the file is not valid {encoding} text (the bytes and their place are not shown: they "
                            "belong to a record); pick the encoding the file was saved with, or leave the encoding "
                            "on automatic.") from None
    for bom, codec, label, declared in (
            (codecs.BOM_UTF32_LE, "utf-32", "UTF-32", "utf-32"), (codecs.BOM_UTF32_BE, "utf-32", "UTF-32", "utf-32"),
            (codecs.BOM_UTF8, "utf-8-sig", "UTF-8 with BOM", "utf-8"),
            (codecs.BOM_UTF16_LE, "utf-16", "UTF-16", "utf-16"), (codecs.BOM_UTF16_BE, "utf-16", "UTF-16", "utf-16")):
        if raw.startswith(bom):
            try:
                return raw.decode(codec), label, declared
            except UnicodeDecodeError:
                raise DataError(f"the file starts with a {label} byte-order mark but is not valid {label} text; "
                                "re-save it as 'CSV UTF-8' and upload again.") from None
    head = raw[:4096]
    if len(head) >= 8:
        even, odd = head[0::2], head[1::2]
        for zeros, other, codec in ((odd, even, "utf-16-le"), (even, odd, "utf-16-be")):
            if zeros.count(0) >= 0.4 * len(zeros) and other.count(0) <= 0.05 * len(other):
                try:
                    return raw.decode(codec), "UTF-16", codec
                except UnicodeDecodeError:
                    break
    try:
        return raw.decode("utf-8"), "UTF-8", "utf-8"
    except UnicodeDecodeError:
        raise DataError(
            "the file is not UTF-8 text (the bytes and their place are not shown: they belong to a record); "
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


#: Bytes per block of the CSV readers (in memory and streamed alike): a block is cut at a line break.
READ_BLOCK_BYTES = 2**20


def _chunks(data: bytes, size: int = READ_BLOCK_BYTES) -> Iterator[bytes]:
    view = memoryview(data)
    for a in range(0, len(data), size):
        yield bytes(view[a:a + size])


def _line_blocks(data: bytes, size: int = READ_BLOCK_BYTES) -> Iterator[bytes]:
    """Clean UTF-8 ``data`` in blocks of whole lines (each cut just after a ``\\n``)."""
    start = 0
    while start < len(data):
        cut = data.find(b"\n", start + size - 1) + 1 or len(data)
        yield data[start:cut]
        start = cut


def read_blocks(blocks: Iterator[bytes], fmt: FileFormat, column_names: Sequence[str] | None = None, *,
                max_rows: int = 1_000_000, strict: bool = False) -> tuple[pd.DataFrame, dict]:
    """Cells of delimited text under ``fmt``, from clean UTF-8 ``blocks`` of whole lines
    (:func:`dpcore.data.records.utf8_blocks`), every line read by the one record parser
    (:mod:`dpcore.data.records`): a line is a record, a blank line is not (unless the table has one column), a line
    with the wrong number of fields is a record of missing cells (counted) — or, with ``strict`` (a format being
    detected), an error that names no line (it belongs to a record)."""
    import pyarrow as pa

    fields, rest = split_header(blocks, header=fmt.header, delimiter=fmt.delimiter)
    if fmt.header:
        if not fields:
            raise DataError("the file is empty; upload a CSV with a header row and at least two data rows.")
        header = header_names(fields)
    elif column_names is None:
        raise InvalidParameterError("a format without a header row needs the column names (the schema's columns, "
                                    "in order).")
    else:
        header = _clean_header(list(column_names))
    width, missing = len(header), frozenset(fmt.missing)
    parts: list[list] = [[] for _ in header]
    rows = malformed = 0
    for block in rest:
        arrays, n, bad = block_records(block, delimiter=fmt.delimiter, width=width, take=range(width),
                                       missing=missing)
        if strict and bad:  # the line and its count are not quoted: they belong to a record (privacy review R4-1)
            sep = DELIMITER_NAMES.get(fmt.delimiter, repr(fmt.delimiter))
            raise DataError(
                f"a line has another number of fields but the header has {width} ({sep}-separated; which line "
                "is not shown: it belongs to a record); quote values that contain the separator (e.g. "
                "\"Smith, J\") and upload again, or load a schema that declares the file format (it reads such "
                "a line as a record of missing cells)."
            )
        rows, malformed = rows + n, malformed + bad
        if rows > max_rows:
            raise DataError(f"the file has more than max_rows = {max_rows:,} data rows; upload a random sample or "
                            "raise max_rows.")
        for part, arr in zip(parts, arrays):
            part.append(arr)
    frame = pd.DataFrame({h: pa.chunked_array(p, type=pa.string()).to_numpy() if p else np.empty(0, dtype=object)
                          for h, p in zip(header, parts)}, dtype=object)
    frame.columns = header
    counts = {"malformed_lines": malformed} if malformed else {}
    return frame, counts


_QUOTES = "'\"`‘’“”"


def _strip_quotes(name: str) -> str:
    """A header cell without the quote characters around it ('popul', "popul", `popul` → popul)."""
    name = name.strip()
    while len(name) >= 2 and name[0] in _QUOTES and name[-1] in _QUOTES:
        name = name[1:-1].strip()
    return name


def _clean_header(header: list[str]) -> list[str]:
    """Column names: surrounding whitespace and quote characters stripped, blanks numbered, duplicates refused."""
    out: list[str] = []
    seen: set[str] = set()
    for i, h in enumerate(header):
        h = _strip_quotes(str(h))
        if not h or (h.lower().startswith("unnamed:") and h[8:].strip().isdigit()):
            h = f"column{i + 1}"
        if h in seen:
            raise DataError(f"the column name {h!r} appears twice in the header; rename one of them.")
        seen.add(h)
        out.append(h)
    return out


def header_names(fields: Sequence[str] | None) -> list[str]:
    """The column names of a header record's fields (None: an unparseable line): the one header rule of every CSV
    reader — in memory here, streamed and on Dask through :func:`dpcore.stats._arrow.csv_header`."""
    return _clean_header([h.strip() for h in (fields or [])])


def _check_rows(n_rows: int) -> None:
    if n_rows == 0:
        raise DataError("the file has a header but no data rows; add at least two data rows.")
    if n_rows == 1:
        raise DataError("the file has a single data row; PCA needs at least two rows (ideally hundreds).")


def _normalise_strings(s: pd.Series, missing: Iterable[str] = DEFAULT_MISSING) -> pd.Series:
    """Stripped strings, ``None`` for missing tokens (object dtype)."""
    return _normalise_block(pd.DataFrame({"c": s}), missing).iloc[:, 0]


def _normalise_block(frame: pd.DataFrame, missing: Iterable[str] = DEFAULT_MISSING) -> pd.DataFrame:
    """Every cell as a stripped string, ``None`` for missing tokens; one vectorised pass over all columns."""
    arr = frame.to_numpy(dtype=object)
    flat = pd.Series(arr.ravel(), dtype=object)
    present = flat.notna().to_numpy()
    out = np.full(flat.shape[0], None, dtype=object)
    if present.any():
        txt = flat[present].map(str).str.strip()
        keep = ~txt.str.lower().isin(frozenset(missing)).to_numpy()
        idx = np.flatnonzero(present)
        out[idx[keep]] = txt.to_numpy(dtype=object)[keep]
    return pd.DataFrame(out.reshape(arr.shape), columns=frame.columns, index=frame.index, dtype=object)


def detect_decimal(frame: pd.DataFrame, delimiter: str | None) -> str:
    """"," when the cells look like decimal-comma numbers (only possible without a comma separator), else ".".

    Reads the cells: a *draft* only (marked ``from_data``), never applied to a declared format."""
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


def _grouping(decimal: str, thousands: str) -> re.Pattern:
    t, d = re.escape(thousands), re.escape(decimal)
    return re.compile(rf"^[+-]?\d{{1,3}}(?:{t}\d{{3}})+(?:{d}\d*)?(?:[eE][+-]?\d+)?$")


def parse_numbers(s: pd.Series, decimal: str = ".", thousands: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(values, bad) for a column: float values (NaN where missing or not a number) and a mask of the cells that
    are present but not numbers. Per cell: with ``thousands``, a cell grouped in threes by it ("1,234.5") loses
    the separators; the ``decimal`` mark is the only one a number may contain (with decimal ",", "4.900" is not a
    number unless "." is the thousands separator). Infinite and overflowing cells ("inf", "1e400") parse as ±inf."""
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
    strs = pd.Series(s.to_numpy(dtype=object)[present], dtype=object).map(str).str.strip()
    if thousands is not None:
        grouped = strs.str.match(_grouping(decimal, thousands)).to_numpy(dtype=bool)
        if grouped.any():
            strs[grouped] = strs[grouped].str.replace(thousands, "", regex=False)
    other = "," if decimal == "." else "."
    invalid = strs.str.contains(other, regex=False).to_numpy(dtype=bool)
    if decimal == ",":
        strs = strs.str.replace(",", ".", regex=False)
    parsed = np.array(pd.to_numeric(strs, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan))
    parsed[invalid] = np.nan
    values[present] = parsed
    return values, present & np.isnan(values)


# ==================================================================================================
# binary formats
# ==================================================================================================

def _typed_frame(frame: pd.DataFrame, missing: Iterable[str] = DEFAULT_MISSING) -> pd.DataFrame:
    """Columns of a Parquet/Excel frame as float64, datetime64 or normalised strings (a number in a text column is
    spelled as :func:`cell_text` spells it, 3.0 → "3", whatever the column's other cells are)."""
    out = {}
    header = _clean_header([str(c) for c in frame.columns])
    for name, col in zip(header, frame.columns):
        s = frame[col]
        if pd.api.types.is_bool_dtype(s):
            out[name] = _normalise_strings(s.astype(object).where(s.notna(), None), missing)
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
                out[name] = _normalise_strings(s.map(cell_text, na_action="ignore"), missing)
    return pd.DataFrame(out)


def _read_parquet(raw: bytes) -> pd.DataFrame:
    from .limits import check_parquet

    check_parquet(raw)  # the footer's row and column counts, before any column is read
    try:
        return pd.read_parquet(io.BytesIO(raw))
    except ImportError:
        raise DataError("reading Parquet needs pyarrow (installed with Streamlit); install it, or export the "
                        "table as CSV.") from None
    except Exception as exc:  # pyarrow raises its own error types for damaged files
        raise DataError(f"the Parquet file could not be read ({type(exc).__name__}; the reader's message is not "
                        "shown: it may quote a record); export it again or upload a CSV.") from None


def _read_excel(raw: bytes, sheet: str | int | None) -> pd.DataFrame:
    import importlib.util

    if importlib.util.find_spec("openpyxl") is None:
        raise DataError("this is an Excel workbook (.xlsx); reading it needs the optional package openpyxl "
                        "(pip install openpyxl). Or save the sheet as 'CSV UTF-8' and upload that.")
    from .limits import check_xlsx

    check_xlsx(raw)  # the sizes the zip directory declares, before anything is inflated
    try:
        return pd.read_excel(io.BytesIO(raw), sheet_name=0 if sheet is None else sheet, dtype=object,
                             engine="openpyxl")
    except Exception as exc:  # openpyxl raises many types for damaged or unusual workbooks
        raise DataError(f"the Excel workbook could not be read ({type(exc).__name__}; the reader's message is not "
                        "shown: it may quote a record); save the sheet as 'CSV UTF-8' and upload that.") from None


# ==================================================================================================
# entry point
# ==================================================================================================

def file_kind(raw: bytes) -> str:
    """The kind of file its first bytes announce ("csv", "parquet", "excel"); a declared format is never sniffed."""
    if raw.startswith(b"PAR1"):
        return "parquet"
    if _is_xlsx(raw):
        return "excel"
    if raw.startswith(b"\xd0\xcf\x11\xe0"):
        raise DataError("this is a legacy Excel .xls (or another Office) file; save it as .xlsx or 'CSV UTF-8' and "
                        "upload that.")
    return "csv"


def _encoding_label(codec: str) -> str:
    name = codecs.lookup(codec).name
    return {"utf-8": "UTF-8", "utf-16": "UTF-16", "utf-16-le": "UTF-16", "utf-16-be": "UTF-16", "utf-32": "UTF-32",
            "utf-32-le": "UTF-32", "utf-32-be": "UTF-32"}.get(name, codec)


def _without_sep_line(text: str) -> tuple[str, str | None]:
    """The text without Excel's leading "sep=;" line, and the separator it names (None when there is none)."""
    first, _, rest = text.partition("\n")
    if is_sep_line(first):
        return rest, first.strip()[4]
    return text, None


def _read_typed(raw: bytes, fmt: FileFormat, sheet: str | int | None) -> pd.DataFrame:
    if fmt.kind == "parquet":
        return _typed_frame(_read_parquet(raw), fmt.missing)
    return _typed_frame(_read_excel(raw, sheet), fmt.missing)


def _read_declared(raw: bytes, fmt: FileFormat, column_names: Sequence[str] | None, sheet: str | int | None,
                   max_rows: int) -> tuple[pd.DataFrame, ReadInfo, dict]:
    """Read with exactly ``fmt``: nothing is sniffed or detected, and no record can make the reading fail."""
    if fmt.kind != "csv":
        return _read_typed(raw, fmt, sheet), ReadInfo(fmt.kind, file_format=fmt, declared=True), {}
    frame, counts = read_blocks(utf8_blocks(_chunks(raw), fmt.encoding), fmt, column_names, max_rows=max_rows)
    info = ReadInfo("csv", encoding=_encoding_label(fmt.encoding), delimiter=fmt.delimiter, decimal=fmt.decimal,
                    notes=("file format declared in the schema",), file_format=fmt, declared=True)
    return frame, info, counts


def _read_detected(raw: bytes, delimiter: str | None, decimal: str | None, encoding: str | None,
                   sheet: str | int | None, max_rows: int,
                   thousands: str | None = None) -> tuple[pd.DataFrame, ReadInfo, dict]:
    """Detect a draft format (its detected fields marked ``from_data``) and read with it. A thousands separator is
    never guessed (one record's cell would decide how every other record is read): None unless given."""
    from .limits import check_header_width

    check_header_width(raw)  # the header line's width on the raw bytes, before decoding and inference
    kind = file_kind(raw)
    if kind != "csv":
        fmt = FileFormat(kind=kind, from_data=frozenset({"kind"}))
        return _read_typed(raw, fmt, sheet), ReadInfo(kind, file_format=fmt), {}
    text, label, codec = _decode(raw, encoding)
    del raw
    if "\x00" in text:
        raise DataError("the file contains NUL bytes, so it is not a CSV text file (is it a spreadsheet or an "
                        "archive?); export it as CSV (UTF-8) and upload again.")
    text, sep = _without_sep_line(text)
    delim = delimiter or sep or detect_delimiter(text)
    frame, counts = read_blocks(_line_blocks(text.encode("utf-8")), FileFormat(encoding=codec, delimiter=delim),
                                max_rows=max_rows, strict=True)
    del text
    dec = decimal or detect_decimal(frame, delim)
    detected = {"kind"} | {f for f, given in (("encoding", encoding), ("delimiter", delimiter or sep),
                                                          ("decimal", decimal)) if given is None}
    fmt = FileFormat(encoding=codec, delimiter=delim, decimal=dec, thousands=thousands, from_data=frozenset(detected))
    notes = [f"{DELIMITER_NAMES.get(delim, repr(delim))}-separated"] if delim != "," else []
    notes += ["decimal comma"] if dec == "," else []
    notes += [f"encoding {label}"] if label != "UTF-8" else []
    info = ReadInfo("csv", encoding=label, delimiter=delim, decimal=dec, notes=tuple(notes), file_format=fmt)
    return frame, info, counts


def read_table(source: CsvSource, *, format: FileFormat | None = None, column_names: Sequence[str] | None = None,
               delimiter: str | None = None, decimal: str | None = None, encoding: str | None = None,
               sheet: str | int | None = None, max_rows: int = 1_000_000, name: str = "uploaded",
               thousands: str | None = None) -> RawTable:
    """Read a table (CSV/TSV text, Parquet or ``.xlsx``) into a :class:`RawTable`, entirely in memory.

    ``format``: the declared :class:`FileFormat` (a public schema's ``file_format``), used exactly — nothing is
    detected, and no single record can make the reading fail or change how another record is read.
    ``column_names``: the field names of a format without a header row. Without ``format`` the format is detected
    (a draft, ``info.file_format`` with its detected fields marked ``from_data``); ``delimiter``, ``decimal`` and
    ``encoding`` then override the detection; ``thousands`` (a separator of digit groups, e.g. "1.234,5") is
    never detected — None unless given here or declared in ``format``. Every problem raises a
    :class:`~dpcore.exceptions.DataError` whose message names the problem and the fix.
    """
    max_rows = check_int(max_rows, "max_rows", 2)
    from .limits import check_header_width, set_max_rows

    set_max_rows(max_rows)  # a Parquet footer's row count is checked against it before the file is read
    if isinstance(source, bytes) and (format is None or format.header):  # a header line, never a record
        check_header_width(source)  # declared or detected: the header's width before anything is parsed
    if format is not None:
        if not isinstance(format, FileFormat):
            raise InvalidParameterError(f"format must be a FileFormat (a schema's file_format), got "
                                        f"{type(format).__name__}.")
        if delimiter is not None or decimal is not None or encoding is not None or thousands is not None:
            raise InvalidParameterError("give the file format either as format= or as delimiter/decimal/encoding/"
                                        "thousands overrides, not both.")
    if delimiter is not None and (not isinstance(delimiter, str) or len(delimiter) != 1 or delimiter in "\"\r\n"):
        raise InvalidParameterError(f"delimiter must be a single character such as ',', ';' or a tab; got "
                                    f"{delimiter!r}.")
    if decimal is not None and decimal not in DECIMALS:
        raise InvalidParameterError(f"decimal must be '.' or ','; got {decimal!r}.")
    if thousands is not None and thousands not in THOUSANDS:
        raise InvalidParameterError(f"thousands must be None or one of {', '.join(map(repr, THOUSANDS))}; got "
                                    f"{thousands!r}.")
    raw = read_source(source)
    if format is not None:
        frame, info, counts = _read_declared(raw, format, column_names, sheet, max_rows)
    else:
        frame, info, counts = _read_detected(raw, delimiter, decimal, encoding, sheet, max_rows, thousands)
    if frame.shape[1] == 0:
        raise DataError("the table has no columns; upload a file with a header row.")
    if len(frame) > max_rows:
        raise DataError(f"the file has more than max_rows = {max_rows:,} data rows; upload a random sample or "
                        "raise max_rows.")
    if format is None:  # a draft read needs rows to draft from; a declared format reads any count (n may be private)
        _check_rows(len(frame))
    return RawTable(frame=frame.reset_index(drop=True), info=info, name=str(name), source=raw, counts=counts)
