"""Files streamed in blocks of records: CSV (read with the declared file format and the in-memory reader's per-line
rules) and Parquet (pyarrow record batches; one file, or a dataset folder). Memory holds one block at a time,
whatever the file's size; each pass re-reads the file. Every block goes through the cell rules of the in-memory
reader and the per-record :class:`~dpcore.data.encode.RecordEncoder`, so both paths are identical in law."""

from __future__ import annotations

import bz2
import codecs
import gzip
import io
import queue
import threading
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pyarrow as pa

from ..core.threads import single_threaded_blas
from ..data.preprocess import ChunkSource
from ..data.reading import (
    _LINE_BREAK,
    FileFormat,
    _blank,
    _clean_header,
    _parse_line,
    _parse_lines,
    _typed_frame,
    declared_codec,
    header_names,
    is_sep_line,
)
from ..exceptions import DataError, InvalidParameterError
from ._encode import SchemaEncoder

#: Bytes per CSV block that Arrow parses at a time (its default, 1 MiB: larger blocks parse no faster and make
#: Arrow's read-ahead hold several times more memory).
CSV_BLOCK_BYTES = 2**20
#: Batches are grouped until their encoded features take about this many bytes, so that the per-batch work (one
#: BLAS call for C, the reservoir's keys) comes in efficient pieces.
ENCODE_BYTES = 8 * 2**20
#: The ASCII characters Python's ``str.strip`` removes (Arrow trims exactly these on the fast path).
PYTHON_ASCII_SPACE = " \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f"
#: Cells of a CSV block held as Python text at a time (the per-line reader's memory: a few MB).
TEXT_CELLS = 65_536


def _rows_per_piece(d: int) -> int:
    return max(1024, ENCODE_BYTES // (8 * max(d, 1)))


def grouped(batches, rows: int):
    """Consecutive record batches joined (without copying) into tables of at least ``rows`` rows."""
    pending, count = [], 0
    for b in batches:
        if b.num_rows == 0:
            continue
        pending.append(b)
        count += b.num_rows
        if count >= rows:
            yield pa.Table.from_batches(pending)
            pending, count = [], 0
    if pending:
        yield pa.Table.from_batches(pending)


def prefetch(batches, depth: int = 2):
    """Iterate ``batches`` on a background thread, ``depth`` batches ahead: Arrow parses the next batch (without
    the GIL) while this thread encodes the last one and BLAS accumulates it — parsing and arithmetic overlap on two
    cores instead of taking turns."""
    q: queue.Queue = queue.Queue(maxsize=depth)
    done = object()
    stop = threading.Event()

    def run() -> None:
        try:
            for b in batches:
                if stop.is_set():
                    return
                q.put(b)
            q.put(done)
        except BaseException as exc:  # re-raised in the consumer
            q.put(exc)

    worker = threading.Thread(target=run, name="dpcore-prefetch", daemon=True)
    worker.start()
    try:
        while True:
            item = q.get()
            if item is done:
                return
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        while worker.is_alive():  # unblock a producer waiting on a full queue
            try:
                q.get_nowait()
            except queue.Empty:
                worker.join(timeout=0.05)


def _opener(path: Path):
    if path.suffix == ".gz":
        return gzip.open
    if path.suffix == ".bz2":
        return bz2.open
    return open


def text_blocks(path: Path, encoding: str, block_bytes: int):
    """The file's text in blocks, decoded as :func:`dpcore.data.reading.read_table` decodes a declared format
    (a UTF-8 BOM skipped, undecodable bytes and NUL as U+FFFD)."""
    decoder = codecs.getincrementaldecoder(declared_codec(encoding))(errors="replace")
    with _opener(path)(path, "rb") as fh:
        while True:
            raw = fh.read(block_bytes)
            text = decoder.decode(raw, final=not raw)
            if text:
                yield text.replace("\x00", "\ufffd")
            if not raw:
                return


def _split_lines(text: str) -> list[str]:
    """``_LINE_BREAK.split(text)``; ``str.split`` (several times faster) when the text has no \r."""
    return text.split("\n") if "\r" not in text else _LINE_BREAK.split(text)


def physical_lines(blocks):
    """Lists of physical lines (split at \\r\\n, \\r or \\n, as the in-memory reader splits them), block by block."""
    carry = ""
    for text in blocks:
        text = carry + text
        hold = text.endswith("\r")  # its \n may start the next block
        parts = _split_lines(text[:-1] if hold else text)
        carry = parts.pop() + ("\r" if hold else "")
        if parts:
            yield parts
    if carry:
        parts = _LINE_BREAK.split(carry)
        if parts[-1] == "":
            parts.pop()
        yield parts


def normalise_cells(cells, missing: frozenset[str]) -> list[str | None]:
    """Text cells as :func:`dpcore.data.reading._normalise_block` leaves them — stripped, None for a missing token
    (compared lower-case) — in one list comprehension (the per-cell rule, without a DataFrame round trip)."""
    return [None if c is None or (t := c.strip()).lower() in missing else t for c in cells]


def _first_record(lines: list[str], delimiter: str) -> int | None:
    """The index of the first line that is not blank (each line parsed alone, as :func:`_parse_lines` parses
    it), None when every line is blank."""
    return next((i for i, line in enumerate(lines) if not _blank(_parse_line(line, delimiter))), None)


def csv_lines(path: Path, fmt: FileFormat, block_bytes: int = CSV_BLOCK_BYTES):
    """Blocks of the file's physical lines under ``fmt`` (its encoding), Excel's leading "sep=;" line removed when the
    format has a header row (as the in-memory reader removes it)."""
    started = False
    for lines in physical_lines(text_blocks(path, fmt.encoding, block_bytes)):
        if not started:
            if fmt.header and lines and is_sep_line(lines[0]):
                lines = lines[1:]
            started = True
        yield lines


def has_sep_line(path: str | Path, fmt: FileFormat) -> bool:
    """True when the file starts with Excel's "sep=;" line (which :func:`csv_lines` skips)."""
    first = next(physical_lines(text_blocks(Path(path), fmt.encoding, 4096)), [])
    return bool(first) and is_sep_line(first[0])


def csv_header(path: str | Path, fmt: FileFormat, column_names: Sequence[str] | None = None, *,
               block_bytes: int = CSV_BLOCK_BYTES) -> list[str]:
    """The column names of a CSV file read with its declared ``fmt``: the first non-blank record (after a "sep="
    line) through :func:`dpcore.data.reading.header_names`, as the in-memory reader reads it; ``column_names`` (the
    schema's columns, cleaned alike) for a format without a header row. Streamed and Dask reading use it."""
    if not fmt.header:
        if column_names is None:
            raise InvalidParameterError("a format without a header row needs the column names (the schema's "
                                        "columns, in order).")
        return _clean_header(list(column_names))
    for lines in csv_lines(Path(path), fmt, block_bytes):
        first = _first_record(lines, fmt.delimiter)
        if first is not None:
            return header_names(_parse_line(lines[first], fmt.delimiter))
    raise DataError("the file is empty; a CSV with a header row is needed.")


class CsvSource(ChunkSource):
    """A CSV file (optionally ``.gz``/``.bz2``) read block by block with the declared file format and the
    in-memory reader's per-line rules (:func:`dpcore.data.reading.read_table` with ``format=``): one record per
    physical line, a line with the wrong number of fields is a record of missing cells, blank lines are not records
    (unless there is one column) — so no record can make the run fail or change how another is read."""

    def __init__(self, path: str | Path, encoder: SchemaEncoder, *, delimiter: str | None = None,
                 block_size: int = CSV_BLOCK_BYTES, piece_bytes: int = ENCODE_BYTES, text_cells: int = TEXT_CELLS,
                 memory_pool: pa.MemoryPool | None = None) -> None:
        self.path, self.encoder, self.block_size = Path(path), encoder, int(block_size)
        #: Records per block: the encoded piece stays near ``piece_bytes`` and the cells as Python text (about
        #: 60 bytes each) near ``text_cells`` per block.
        self.piece_rows = max(1, min(int(piece_bytes) // (8 * max(encoder.d, 1)),
                                     int(text_cells) // max(len(encoder.columns), 1)))
        #: Records per block on the Arrow fast path (no Python text per cell): the encoded piece near ``piece_bytes``.
        self.arrow_rows = max(1, int(piece_bytes) // (8 * max(encoder.d, 1)))
        self.memory_pool = memory_pool  # unused: kept for callers of the Arrow reader
        if not self.path.is_file():
            raise InvalidParameterError(f"CSV file not found: {self.path}.")
        fmt = encoder.file_format
        if fmt.kind != "csv":
            raise InvalidParameterError(f"the schema declares a {fmt.describe()} file, not a CSV; read it as such.")
        if delimiter is not None and delimiter != fmt.delimiter:
            if len(delimiter) != 1:
                raise InvalidParameterError(f"delimiter must be a single character; got {delimiter!r}.")
            fmt = replace(fmt, delimiter=delimiter)
        self.format, self.delimiter = fmt, fmt.delimiter
        self.header = self._header()
        encoder.check_columns(self.header)
        self._index = [self.header.index(c) for c in encoder.columns]
        self.d = encoder.d

    def _lines(self):
        """Blocks of physical lines (Excel's "sep=" line removed; the header row is still there)."""
        return csv_lines(self.path, self.format, self.block_size)

    def _header(self) -> list[str]:
        return csv_header(self.path, self.format, [c.name for c in self.encoder.schema.columns],
                          block_bytes=self.block_size)

    def records(self):
        """DataFrames of the needed columns' cells (stripped text, None for missing), in file order: Arrow-backed
        text columns of up to ``arrow_rows`` records from the fast path, object columns of about ``piece_rows``
        records from the per-line reader."""
        width, header_seen = len(self.header), not self.format.header
        pending: list[list[str | None]] = []
        for lines in self._lines():
            if not header_seen:
                first = _first_record(lines, self.delimiter)
                if first is None:
                    continue
                header_seen = True
                lines = lines[first + 1:]  # the rest of the block: records, read like every other block
            step = self.arrow_rows if width > 1 else self.piece_rows
            for a in range(0, len(lines), step):
                part = lines[a:a + step]
                frame = self._arrow_frame(part) if width > 1 else None
                if frame is not None:
                    if pending:
                        yield self._frame(pending)
                        pending = []
                    if len(frame):
                        yield frame
                    continue
                for b in range(0, len(part), self.piece_rows):  # the per-line reader, a few MB at a time
                    pending += self._kept(_parse_lines(part[b:b + self.piece_rows], self.delimiter))
                    if len(pending) >= self.piece_rows:
                        yield self._frame(pending)
                        pending = []
            if len(pending) >= self.piece_rows:
                yield self._frame(pending)
                pending = []
        if pending:
            yield self._frame(pending)

    def _kept(self, rows: list[list[str] | None]) -> list[list[str | None]]:
        """The records among parsed lines: blank lines are none (unless there is one column), a line with the wrong
        number of fields is a record of missing cells."""
        width = len(self.header)
        return [r if r is not None and len(r) == width else [None] * width
                for r in rows if not (width > 1 and _blank(r))]

    def _arrow_frame(self, lines: list[str]) -> pd.DataFrame | None:
        """The cells of ``lines`` parsed and normalised by Arrow in one call — only where that provably equals the
        per-line rules (ASCII text without quotes or the separators \\x1c–\\x1f: every line is then split at
        the delimiter alone, and Arrow's trim and lower-case are Python's); None otherwise, or when a line has the
        wrong number of fields (the per-line path then reads the block)."""
        text = "\n".join(lines)
        if not text.isascii() or any(ch in text for ch in '"\x1c\x1d\x1e\x1f'):  # str search, not a regex
            return None
        from pyarrow import csv as pacsv

        try:
            table = pacsv.read_csv(
                io.BytesIO(text.encode("ascii")),
                read_options=pacsv.ReadOptions(column_names=self.header, use_threads=False),
                parse_options=pacsv.ParseOptions(delimiter=self.delimiter, quote_char=False, escape_char=False,
                                                 ignore_empty_lines=True),
                convert_options=pacsv.ConvertOptions(include_columns=self.encoder.columns,
                                                     column_types={c: pa.string() for c in self.header},
                                                     null_values=[], strings_can_be_null=False,
                                                     quoted_strings_can_be_null=False))
        except pa.ArrowInvalid:
            return None
        import pyarrow.compute as pc

        missing = pa.array(sorted(self.format.missing), type=pa.string())
        names, n = self.encoder.columns, table.num_rows
        raw = pa.concat_arrays([c for name in names for c in table.column(name).chunks])  # one call for all columns
        trimmed = pc.ascii_trim(raw, characters=PYTHON_ASCII_SPACE)  # ASCII text: utf8_trim's and strip's result
        gone = pc.is_in(pc.ascii_lower(trimmed), value_set=missing)
        cells = pc.if_else(gone, pa.scalar(None, pa.string()), trimmed)
        return pd.DataFrame({name: pd.arrays.ArrowExtensionArray(cells.slice(i * n, n))
                             for i, name in enumerate(names)})

    def _frame(self, rows: list[list[str | None]]) -> pd.DataFrame:
        fields = list(zip(*rows))  # one tuple per field of the line (every row has the header's width)
        missing = frozenset(self.format.missing)
        return pd.DataFrame({name: normalise_cells(fields[i], missing)
                             for name, i in zip(self.encoder.columns, self._index)}, dtype=object)

    def batches(self):
        return self.records()

    def map_reduce(self, fn, merge, *, positions=False):
        acc, start = None, 0
        with single_threaded_blas():
            for frame in self.records():  # Python parsing holds the GIL: a reader thread would only contend
                part = fn(self.encoder.encode(frame, start))
                start += len(frame)
                acc = part if acc is None else merge(acc, part)
        return acc


class ParquetSource(ChunkSource):
    """A Parquet file, or a folder of Parquet files (read in the order of their sorted paths)."""

    def __init__(self, path: str | Path, encoder: SchemaEncoder, *, batch_rows: int | None = None) -> None:
        import pyarrow.dataset as pads

        self.path, self.encoder = Path(path), encoder
        self.batch_rows = int(batch_rows) if batch_rows is not None else _rows_per_piece(encoder.d)
        if not self.path.exists():
            raise InvalidParameterError(f"Parquet file or folder not found: {self.path}.")
        try:
            self.dataset = pads.dataset(str(self.path), format="parquet")
        except (pa.ArrowInvalid, OSError) as exc:
            raise DataError(f"{self.path.name}: not a readable Parquet file or folder ({exc}).") from None
        encoder.check_columns(list(self.dataset.schema.names))
        self.d = encoder.d

    def batches(self):
        for fragment in sorted(self.dataset.get_fragments(), key=lambda f: f.path):
            yield from fragment.to_batches(columns=self.encoder.columns, batch_size=self.batch_rows,
                                           use_threads=True)

    def map_reduce(self, fn, merge, *, positions=False):
        acc, start = None, 0
        with single_threaded_blas():
            for batch in prefetch(self.batches()):
                if batch.num_rows == 0:
                    continue
                frame = _typed_frame(batch.to_pandas(), self.encoder.file_format.missing)
                part = fn(self.encoder.encode(frame, start))
                start += batch.num_rows
                acc = part if acc is None else merge(acc, part)
        return acc
