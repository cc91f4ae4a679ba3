"""Dask backend: every pass maps over the partitions of a Dask DataFrame (on whatever scheduler is active — a
``distributed.Client`` when one is connected) and sums the per-partition results in a tree.

Each partition is encoded with the public schema and reduced to O(d²) numbers (its clipped Gram matrix, Σx, the
count, and its candidates for the reservoir sample), so only those travel back, never the rows.
Needs the optional extra ``pip install 'dpcore[dask]'`` (dask + distributed).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.threads import single_threaded_blas
from ..data.preprocess import CHUNK_BYTES, ChunkSource
from ..data.reading import _typed_frame
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
