"""Files streamed in record batches with pyarrow: CSV (``pyarrow.csv.open_csv``) and Parquet (one file, or a
dataset folder). Memory holds one batch at a time, whatever the file's size; each pass re-reads the file."""

from __future__ import annotations

import csv as _csv
import gzip
import io
import queue
import threading
from pathlib import Path

import pyarrow as pa

from ..data.preprocess import ChunkSource
from ..data.reading import DELIMITERS, detect_delimiter
from ..exceptions import DataError, InvalidParameterError
from ._encode import NULL_SPELLINGS, SchemaEncoder

#: Bytes per CSV block that Arrow parses at a time (its default, 1 MiB: larger blocks parse no faster and make
#: Arrow's read-ahead hold several times more memory).
CSV_BLOCK_BYTES = 2**20
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


def single_threaded_blas():
    """BLAS on one thread while Arrow's threads parse: a multi-threaded BLAS spinning against the parser threads
    on the same cores is several times slower than either alone."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1, user_api="blas")


def _open_text_head(path: Path, size: int = 65_536) -> str:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as fh:
        raw = fh.read(size)
    return raw.decode("utf-8-sig", errors="replace")


class CsvSource(ChunkSource):
    """A CSV file (optionally ``.gz``/``.bz2``) read batch by batch. Numbers must be plain (no thousands separators
    or decimal commas: the in-memory reader handles those)."""

    def __init__(self, path: str | Path, encoder: SchemaEncoder, *, delimiter: str | None = None,
                 block_size: int = CSV_BLOCK_BYTES, piece_bytes: int = ENCODE_BYTES,
                 memory_pool: pa.MemoryPool | None = None) -> None:
        self.path, self.encoder, self.block_size = Path(path), encoder, int(block_size)
        self.piece_rows = max(1, int(piece_bytes) // (8 * max(encoder.d, 1)))
        self.memory_pool = memory_pool  # Arrow pool of the reader (None: the default pool)
        if not self.path.is_file():
            raise InvalidParameterError(f"CSV file not found: {self.path}.")
        head = _open_text_head(self.path)
        if delimiter is None:
            delimiter = detect_delimiter(head)
        if delimiter not in DELIMITERS and len(delimiter) != 1:
            raise InvalidParameterError(f"delimiter must be a single character; got {delimiter!r}.")
        self.delimiter = delimiter
        try:
            header = next(_csv.reader(io.StringIO(head, newline=""), delimiter=delimiter))
        except StopIteration:
            raise DataError("the file is empty; a CSV with a header row is needed.") from None
        self.header = [h.strip() for h in header]
        encoder.check_columns(self.header)
        self.d = encoder.d

    def batches(self):
        from pyarrow import csv as pacsv

        types = self.encoder.arrow_types()
        read = pacsv.ReadOptions(column_names=self.header, skip_rows=1, block_size=self.block_size)
        parse = pacsv.ParseOptions(delimiter=self.delimiter)
        convert = pacsv.ConvertOptions(include_columns=self.encoder.columns, column_types=types,
                                       null_values=NULL_SPELLINGS, strings_can_be_null=False)
        try:
            reader = pacsv.open_csv(str(self.path), read_options=read, parse_options=parse, convert_options=convert,
                                    memory_pool=self.memory_pool)
            yield from grouped(reader, self.piece_rows)
        except pa.ArrowInvalid as exc:
            raise DataError(f"{self.path.name}: the CSV could not be streamed ({exc}); numeric columns must hold "
                            "plain numbers (or be declared categorical in the schema), and every line needs the "
                            "header's number of fields.") from None

    def map_reduce(self, fn, merge, *, positions=False):
        acc, start = None, 0
        with single_threaded_blas():  # Arrow's reader threads parse ahead while BLAS works on the last batch
            for batch in prefetch(self.batches()):
                part = fn(self.encoder.encode(batch, start))
                start += batch.num_rows
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
                part = fn(self.encoder.encode(batch, start))
                start += batch.num_rows
                acc = part if acc is None else merge(acc, part)
        return acc
