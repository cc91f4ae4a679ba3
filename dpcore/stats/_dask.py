"""Dask backend: every pass maps over the partitions of a Dask DataFrame, or over line-aligned byte blocks of CSV
files (on whatever scheduler is active — a ``distributed.Client`` when one is connected), and sums the per-partition
results in a tree.

CSV files are never parsed by Dask's or pandas' reader: :class:`DaskCsvSource` cuts each file into byte ranges, and
each task reads the lines that *start* in its range and hands them to the one record parser
(:func:`dpcore.data.records.block_records`) that the in-memory and streamed readers use — so a record is read the
same way whichever block, worker or reader sees it (privacy review item 15).

Each partition is encoded with the public schema and reduced to O(d²) numbers (its clipped Gram matrix, Σx, the
count, and its candidates for the reservoir sample), so only those travel back, never the rows.
Needs the optional extra ``pip install 'dpcore[dask]'`` (dask + distributed).
"""

from __future__ import annotations

import codecs
from pathlib import Path
from typing import Any

import numpy as np

from ..core.threads import single_threaded_blas
from ..data.preprocess import CHUNK_BYTES, ChunkSource
from ..data.reading import FileFormat, _typed_frame
from ..data.records import (
    LINE_BREAK_BYTES,
    block_records,
    clean_utf8,
    is_blank,
    is_sep_line,
    is_utf8,
    line_fields,
    line_separable,
)
from ..exceptions import InvalidParameterError
from ._encode import SchemaEncoder


def _require_dask():
    try:
        import dask
        import dask.dataframe as dd
    except ImportError:  # pragma: no cover - exercised only without the extra
        raise InvalidParameterError("the Dask backend needs the optional extra: pip install 'dpcore[dask]' (dask "
                                    "and distributed).") from None
    return dask, dd


def _partition_pass(frame, encoder: SchemaEncoder, fn, merge, start: int) -> Any:
    """One partition: encode it in chunks of about CHUNK_BYTES and reduce them with ``fn``/``merge``."""
    # the cells as the in-memory reader gives a typed table (Parquet): the same per-cell rules on every path
    table = _typed_frame(frame[encoder.columns].reset_index(drop=True), encoder.file_format.missing)
    step = max(256, CHUNK_BYTES // (8 * max(encoder.d, 1)))
    acc = None
    with single_threaded_blas():  # one task per worker thread: BLAS threads would oversubscribe the cores
        for a in range(0, len(table), step):
            part = fn(encoder.encode(table.iloc[a:a + step], start + a))
            acc = part if acc is None else merge(acc, part)
    return acc


def _merge_maybe(merge, a, b):
    if a is None:
        return b
    if b is None:
        return a
    return merge(a, b)


class DaskSource(ChunkSource):
    """A Dask DataFrame whose columns include the schema's feature columns (and the label)."""

    def __init__(self, ddf, encoder: SchemaEncoder) -> None:
        _require_dask()
        self.ddf, self.encoder = ddf, encoder
        encoder.check_columns([str(c) for c in ddf.columns])
        self.d = encoder.d
        self._offsets: list[int] | None = None

    def offsets(self) -> list[int]:
        """Position of each partition's first row (one counting pass, computed once)."""
        if self._offsets is None:
            lengths = self.ddf.map_partitions(len).compute()
            self._offsets = [0, *np.cumsum(np.asarray(lengths, dtype=np.int64))[:-1].tolist()]
        return self._offsets

    def map_reduce(self, fn, merge, *, positions=False):
        dask, _ = _require_dask()
        parts = self.ddf[self.encoder.columns].to_delayed()
        starts = self.offsets() if positions else [0] * len(parts)
        level = [dask.delayed(_partition_pass)(p, self.encoder, fn, merge, int(s)) for p, s in zip(parts, starts)]
        while len(level) > 1:
            level = [dask.delayed(_merge_maybe)(merge, *level[i:i + 2]) if i + 1 < len(level) else level[i]
                     for i in range(0, len(level), 2)]
        return dask.compute(level[0])[0] if level else None


# ---------------------------------------------------------------------------------------------------------------
# CSV files in line-aligned byte blocks
# ---------------------------------------------------------------------------------------------------------------

#: Bytes per Dask task of a CSV file (each task reads the lines that start in its range).
DASK_BLOCK_BYTES = 64 * 2**20
_COMPRESSION = {".gz": "gzip", ".bz2": "bz2"}  # as the streamed reader (COMPRESSED_SUFFIXES); others read raw


def _compression(path: str) -> str | None:
    return _COMPRESSION.get(Path(path).suffix.lower())


def _open(path: str):
    import fsspec

    return fsspec.open(path, "rb", compression=_compression(path))


def _to_utf8(raw: bytes, encoding: str, file_start: bool) -> bytes:
    """Raw bytes of whole lines as clean UTF-8, decoded as the whole file is (a UTF-8 BOM skipped at the file's start
    only; ``encoding`` is line-separable, see :func:`dpcore.data.records.line_separable`)."""
    if is_utf8(encoding):
        if file_start and raw.startswith(codecs.BOM_UTF8):
            raw = raw[len(codecs.BOM_UTF8):]
        return clean_utf8(raw)
    return raw.decode(encoding, errors="replace").replace("\x00", "\ufffd").encode("utf-8")


def header_end(path: str, fmt: FileFormat, chunk: int = 2**16) -> int:
    """The byte offset just after the header line of a CSV file (0 without a header row): Excel's "sep=" first line
    and blank lines before the header are skipped, as :func:`dpcore.data.records.split_header` skips them."""
    if not fmt.header:
        return 0
    buf, eof, pos, first = b"", False, 0, True
    with _open(path) as fh:
        while True:
            m = LINE_BREAK_BYTES.search(buf, pos)
            if m is None or (m.group() == b"\r" and m.end() == len(buf) and not eof):
                if eof:
                    break
                more = fh.read(chunk)
                eof = not more
                buf += more
                continue
            line = _to_utf8(buf[pos:m.start()], fmt.encoding, pos == 0).decode("utf-8")
            pos = m.end()
            if first:
                first = False
                if is_sep_line(line):
                    continue
            if not is_blank(line_fields(line, fmt.delimiter)):
                return pos
        if pos < len(buf) and not is_blank(line_fields(_to_utf8(buf[pos:], fmt.encoding, pos == 0).decode(),
                                                        fmt.delimiter)):
            return len(buf)  # the header is the file's last line
    return len(buf)


def owned_lines(path: str, start: int, end: int | None, first: int) -> bytes:
    """The bytes of the lines that start in [start, end) of the file: a line starts at ``first`` (the header's end)
    or just after a ``\\n``. Consecutive ranges own every line exactly once, whatever the range boundaries."""
    with _open(path) as fh:
        if start > first:
            fh.seek(start - 1)
            if fh.read(1) != b"\n":  # inside a line that an earlier range owns: skip to the next line start
                while True:
                    piece = fh.read(2**16)
                    if not piece:
                        return b""
                    cut = piece.find(b"\n")
                    if cut >= 0:
                        start += cut + 1
                        break
                    start += len(piece)
        else:
            start = first
        if end is not None and start >= end:
            return b""
        fh.seek(start)
        if end is None:  # a compressed file: one range, to its end
            return b"".join(iter(lambda: fh.read(2**20), b""))
        data = fh.read(end - start)
        if data and not data.endswith(b"\n"):  # finish the last line begun in the range
            tail = []
            while True:
                piece = fh.read(2**16)
                if not piece:
                    break
                cut = piece.find(b"\n")
                if cut >= 0:
                    tail.append(piece[:cut + 1])
                    break
                tail.append(piece)
            data += b"".join(tail)
        return data


def _block_frame(task: tuple, encoder: SchemaEncoder, fmt: FileFormat, width: int, take: list[int]):
    import pandas as pd

    path, start, end, first = task
    raw = owned_lines(path, start, end, first)
    data = _to_utf8(raw, fmt.encoding, start == 0)
    arrays, n, _ = block_records(data, delimiter=fmt.delimiter, width=width, take=take,
                                 missing=frozenset(fmt.missing))
    return pd.DataFrame({name: pd.arrays.ArrowExtensionArray(arr) for name, arr in zip(encoder.columns, arrays)}), n


def _csv_block_count(task, encoder, fmt, width, take) -> int:
    return _block_frame(task, encoder, fmt, width, take)[1]


def _csv_block_pass(task, encoder: SchemaEncoder, fmt: FileFormat, width: int, take: list[int], fn, merge,
                    start: int) -> Any:
    frame, _ = _block_frame(task, encoder, fmt, width, take)
    step = max(256, CHUNK_BYTES // (8 * max(encoder.d, 1)))
    acc = None
    with single_threaded_blas():
        for a in range(0, len(frame), step):
            part = fn(encoder.encode(frame.iloc[a:a + step], start + a))
            acc = part if acc is None else merge(acc, part)
    return acc


class DaskCsvSource(ChunkSource):
    """CSV files read on a Dask cluster in line-aligned byte blocks by the one record parser (see the module
    docstring). ``paths`` are read in order (each with its own header row when the format has one); ``header`` is
    their column names (the schema's for a format without a header row)."""

    def __init__(self, paths: list[str], encoder: SchemaEncoder, header: list[str], *,
                 block_bytes: int = DASK_BLOCK_BYTES) -> None:
        import fsspec

        _require_dask()
        fmt = encoder.file_format
        if fmt.kind != "csv":
            raise InvalidParameterError(f"the schema declares a {fmt.describe()} file, not a CSV.")
        if not line_separable(fmt.encoding):
            raise InvalidParameterError(
                f"the schema declares the encoding {fmt.encoding}, in which a file cannot be cut into blocks at line "
                "breaks; convert the file to UTF-8 (e.g. iconv -f UTF-16 -t UTF-8) or read it with --stream.")
        self.encoder, self.format, self.header = encoder, fmt, list(header)
        encoder.check_columns(self.header)
        self.take = [self.header.index(c) for c in encoder.columns]
        self.d = encoder.d
        self.tasks: list[tuple[str, int, int | None, int]] = []
        step = max(1, int(block_bytes))
        for path in paths:
            size = fsspec.open(path, "rb").fs.size(path)
            first = header_end(path, fmt)
            if _compression(path):  # no random access: the whole file is one block
                self.tasks.append((path, first, None, first))
                continue
            a = first
            while a < size or a == first:
                self.tasks.append((path, a, min(a + step, size), first))
                a += step
                if a >= size:
                    break
        self._offsets: list[int] | None = None

    def _args(self):
        return self.encoder, self.format, len(self.header), self.take

    def offsets(self) -> list[int]:
        """Position of each block's first record (one counting pass, computed once)."""
        if self._offsets is None:
            dask, _ = _require_dask()
            counts = dask.compute(*[dask.delayed(_csv_block_count)(t, *self._args()) for t in self.tasks])
            self._offsets = [0, *np.cumsum(np.asarray(counts, dtype=np.int64))[:-1].tolist()]
        return self._offsets

    def map_reduce(self, fn, merge, *, positions=False):
        dask, _ = _require_dask()
        starts = self.offsets() if positions else [0] * len(self.tasks)
        level = [dask.delayed(_csv_block_pass)(t, *self._args(), fn, merge, int(s))
                 for t, s in zip(self.tasks, starts)]
        while len(level) > 1:
            level = [dask.delayed(_merge_maybe)(merge, *level[i:i + 2]) if i + 1 < len(level) else level[i]
                     for i in range(0, len(level), 2)]
        return dask.compute(level[0])[0] if level else None
