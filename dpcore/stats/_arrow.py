"""Files streamed in blocks of records: CSV (read with the declared file format by the one record parser,
:mod:`dpcore.data.records`, which the in-memory and Dask readers use too) and Parquet (pyarrow record batches; one
file, or a dataset folder). Memory holds one block at a time, whatever the file's size; each pass re-reads the file.
Every block goes through the per-record :class:`~dpcore.data.encode.RecordEncoder`, so every path reads and encodes
each record alike."""

from __future__ import annotations

import bz2
import gzip
import queue
import threading
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pyarrow as pa

from ..core.threads import single_threaded_blas
from ..data.preprocess import ChunkSource
from ..data.reading import READ_BLOCK_BYTES, FileFormat, _clean_header, _typed_frame, header_names
from ..data.records import block_records, is_sep_line, split_header, split_lines, utf8_blocks
from ..exceptions import DataError, InvalidParameterError
from ._encode import SchemaEncoder

#: Bytes per CSV block read at a time (1 MiB; the in-memory reader's block size too).
CSV_BLOCK_BYTES = READ_BLOCK_BYTES
#: Batches are grouped until their encoded features take about this many bytes, so that the per-batch work (one
#: BLAS call for C, the reservoir's keys) comes in efficient pieces.
ENCODE_BYTES = 8 * 2**20


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
    """How a CSV file is opened: .gz and .bz2 decompressed (COMPRESSED_SUFFIXES, as on Dask), anything else raw."""
    return {".gz": gzip.open, ".bz2": bz2.open}.get(path.suffix.lower(), open)


def raw_chunks(path: Path, block_bytes: int):
    """The file's bytes in chunks of ``block_bytes`` (``.gz``/``.bz2`` decompressed)."""
    with _opener(path)(path, "rb") as fh:
        while raw := fh.read(block_bytes):
            yield raw


def utf8_file_blocks(path: Path, fmt: FileFormat, block_bytes: int):
    """The file as clean UTF-8 blocks of whole lines (:func:`dpcore.data.records.utf8_blocks`)."""
    return utf8_blocks(raw_chunks(path, block_bytes), fmt.encoding)


def has_sep_line(path: str | Path, fmt: FileFormat) -> bool:
    """True when the file starts with Excel's "sep=;" line (which the readers skip when the format has a header)."""
    for block in utf8_file_blocks(Path(path), fmt, 4096):
        return is_sep_line(split_lines(block[:4096].decode("utf-8", errors="replace"))[0])
    return False


def csv_header(path: str | Path, fmt: FileFormat, column_names: Sequence[str] | None = None, *,
               block_bytes: int = CSV_BLOCK_BYTES) -> list[str]:
    """The column names of a CSV file read with its declared ``fmt``: the first non-blank line (after a "sep="
    line) through :func:`dpcore.data.reading.header_names`, as the in-memory reader reads it; ``column_names`` (the
    schema's columns, cleaned alike) for a format without a header row. Streamed and Dask reading use it."""
    if not fmt.header:
        if column_names is None:
            raise InvalidParameterError("a format without a header row needs the column names (the schema's "
                                        "columns, in order).")
        return _clean_header(list(column_names))
    fields, _ = split_header(utf8_file_blocks(Path(path), fmt, block_bytes), header=True, delimiter=fmt.delimiter)
    if not fields:
        raise DataError("the file is empty; a CSV with a header row is needed.")
    return header_names(fields)


def records_frame(arrays, names: Sequence[str]) -> pd.DataFrame:
    """A DataFrame of Arrow-backed text columns (null: missing) from :func:`dpcore.data.records.block_records`."""
    return pd.DataFrame({name: pd.arrays.ArrowExtensionArray(arr) for name, arr in zip(names, arrays)})


class CsvSource(ChunkSource):
    """A CSV file (optionally ``.gz``/``.bz2``) read block by block with the declared file format and the one record
    parser (:mod:`dpcore.data.records`) that the in-memory reader uses: one record per physical line, a line with the
    wrong number of fields is a record of missing cells, blank lines are not records (unless there is one column) —
    so no record can make the run fail or change how another is read."""

    def __init__(self, path: str | Path, encoder: SchemaEncoder, *, delimiter: str | None = None,
                 block_size: int = CSV_BLOCK_BYTES, piece_bytes: int = ENCODE_BYTES) -> None:
        self.path, self.encoder, self.block_size = Path(path), encoder, int(block_size)
        #: Records per encoded piece: the encoded rows stay near ``piece_bytes``.
        self.piece_rows = max(1, int(piece_bytes) // (8 * max(encoder.d, 1)))
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
        self.header = csv_header(self.path, fmt, [c.name for c in encoder.schema.columns], block_bytes=self.block_size)
        encoder.check_columns(self.header)
        self._index = [self.header.index(c) for c in encoder.columns]
        self.d = encoder.d

    def _blocks(self):
        """The record blocks: each block of lines after the header read by the one record parser."""
        _, rest = split_header(utf8_file_blocks(self.path, self.format, self.block_size), header=self.format.header,
                               delimiter=self.delimiter)
        width, missing = len(self.header), frozenset(self.format.missing)
        for block in rest:
            arrays, n, _ = block_records(block, delimiter=self.delimiter, width=width, take=self._index,
                                         missing=missing)
            if n:
                yield arrays, n

    def records(self):
        """DataFrames of the needed columns' cells (stripped text, null for missing; Arrow-backed), in file order,
        of about ``piece_rows`` records each."""
        names = self.encoder.columns
        pending: list = []
        count = 0
        for arrays, n in self._blocks():
            pending.append(arrays)
            count += n
            if count >= self.piece_rows:
                yield self._join(pending, names)
                pending, count = [], 0
        if pending:
            yield self._join(pending, names)

    @staticmethod
    def _join(pending: list, names: Sequence[str]) -> pd.DataFrame:
        if len(pending) == 1:
            return records_frame(pending[0], names)
        return records_frame([pa.concat_arrays([p[j] for p in pending]) for j in range(len(names))], names)

    def batches(self):
        return self.records()

    def map_reduce(self, fn, merge, *, positions=False):
        acc, start = None, 0
        with single_threaded_blas():
            for frame in prefetch(self.records()):  # Arrow parses the next block while this one is encoded
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
