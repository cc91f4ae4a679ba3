"""A seeded reservoir sample whose choice depends only on row positions and a seed, never on values.

Each row position p gets a key h(seed, p) (SplitMix64, a bijective 64-bit mixer): the sample is the ``capacity``
rows with the smallest keys — a uniformly random subset of the positions. Keys are computed per chunk and partial
samples merge by keeping the smallest keys, so a file streamed in any batch size, an array in memory and a Dask
DataFrame whose partitions know their offsets all give the same sample for the same seed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..core.seeding import RandomState, Stage, stage_seed
from ..data.preprocess import Chunk, Collector

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
#: Key of the reservoir's child stream under Stage.SUBSAMPLE (sweep subsamples use (size ≥ 2, trial)).
_RESERVOIR_KEY = (0, 0x5E5E)


def reservoir_seed(random_state: RandomState) -> int:
    """The 64-bit key of the reservoir's own child stream of ``random_state`` (:mod:`dpcore.core.seeding`)."""
    seed = stage_seed(random_state, Stage.SUBSAMPLE, *_RESERVOIR_KEY)
    if seed is None:
        seed = np.random.SeedSequence()
    if isinstance(seed, np.random.Generator):
        return int(seed.integers(0, 2**63, dtype=np.int64))
    return int(seed.generate_state(1, np.uint64)[0])


def position_keys(seed: int, positions: np.ndarray) -> np.ndarray:
    """SplitMix64 of (seed + (p + 1)·γ) for each position p: uint64 keys, uniform and independent of the data."""
    with np.errstate(over="ignore"):
        z = np.uint64(seed) + (np.asarray(positions, dtype=np.uint64) + np.uint64(1)) * _GOLDEN
        z = (z ^ (z >> np.uint64(30))) * _M1
        z = (z ^ (z >> np.uint64(27))) * _M2
        return z ^ (z >> np.uint64(31))


@dataclass
class _Block:
    """Candidates of one chunk: their keys and positions, and indices into the chunk's arrays (gathered lazily)."""

    keys: np.ndarray
    positions: np.ndarray
    rows: np.ndarray
    idx: np.ndarray | None = None  # None: every row of ``rows``
    labels: np.ndarray | None = None

    def subset(self, keep: np.ndarray) -> _Block:
        idx = np.flatnonzero(keep) if self.idx is None else self.idx[keep]
        return _Block(self.keys[keep], self.positions[keep], self.rows, idx, self.labels)

    def gathered(self) -> tuple[np.ndarray, np.ndarray | None]:
        if self.idx is None:
            return self.rows, self.labels
        return self.rows[self.idx], None if self.labels is None else self.labels[self.idx]


@dataclass
class ReservoirPart:
    """Candidate rows kept so far (keys, positions, unit rows, labels), compacted to ``capacity`` once they are 1.5
    times that. Rows are gathered from their chunks only when compacting (or pickling, for Dask)."""

    capacity: int
    blocks: list = field(default_factory=list)
    size: int = 0
    has_labels: bool = True
    threshold: int | None = None  # largest kept key once the reservoir is full: larger keys cannot enter

    def add(self, block: _Block) -> None:
        if self.threshold is not None:
            keep = block.keys <= np.uint64(self.threshold)
            if not keep.all():
                block = block.subset(keep)
        if block.keys.size == 0:
            return
        if block.idx is not None and 2 * block.idx.size < block.rows.shape[0]:  # a few rows: copy them, free the chunk
            rows, labels = block.gathered()
            block = _Block(block.keys, block.positions, rows, None, labels)
        self.has_labels = self.has_labels and block.labels is not None
        self.blocks.append(block)
        self.size += block.keys.size
        if self.size > self.capacity + max(self.capacity // 2, 1024):
            self.compact()

    def compact(self) -> None:
        if not self.blocks:
            return
        keys = np.concatenate([b.keys for b in self.blocks])
        pos = np.concatenate([b.positions for b in self.blocks])
        order = None
        if keys.size > self.capacity:
            order = np.lexsort((pos, keys))[: self.capacity]
            keys, pos = keys[order], pos[order]
            self.threshold = int(keys.max())
        gathered = [b.gathered() for b in self.blocks]
        rows = np.concatenate([g[0] for g in gathered])
        labels = np.concatenate([g[1] for g in gathered]) if self.has_labels else None
        if order is not None:
            rows = rows[order]
            labels = None if labels is None else labels[order]
        self.blocks = [_Block(keys, pos, rows, None, labels)]
        self.size = keys.size

    def __getstate__(self) -> dict:
        self.compact()  # a partition's result travels with its kept rows only, not with its whole chunks
        return dict(self.__dict__)

    def result(self, d: int) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
        """(unit rows, labels or None, positions), in position order."""
        self.compact()
        if not self.blocks:
            return np.empty((0, d)), None, np.empty(0, dtype=np.int64)
        b = self.blocks[0]
        order = np.argsort(b.positions, kind="stable")
        rows = np.ascontiguousarray(b.rows[order])
        labels = None if b.labels is None else b.labels[order]
        return rows, labels, b.positions[order].astype(np.int64)


class ReservoirCollector(Collector):
    """Collects a reservoir sample of the unit rows during the last pass of :func:`run_preprocessing`."""

    def __init__(self, capacity: int, seed: int) -> None:
        self.capacity, self.seed = int(capacity), int(seed)

    def part(self, chunk: Chunk, units: np.ndarray) -> ReservoirPart:
        positions = (chunk.start + np.arange(units.shape[0], dtype=np.int64) if chunk.positions is None
                     else np.asarray(chunk.positions, dtype=np.int64))
        keys = position_keys(self.seed, positions)
        labels = None if chunk.labels is None else np.asarray(chunk.labels)
        block = _Block(keys, positions, units, None, labels)
        if keys.size > self.capacity:
            keep = np.zeros(keys.size, dtype=bool)
            keep[np.argpartition(keys, self.capacity - 1)[: self.capacity]] = True
            block = block.subset(keep)
        part = ReservoirPart(self.capacity)
        part.add(block)
        return part

    def merge(self, a: ReservoirPart, b: ReservoirPart) -> ReservoirPart:
        out = ReservoirPart(self.capacity, list(a.blocks), a.size, a.has_labels, a.threshold)
        if b.threshold is not None:  # b holds `capacity` keys ≤ its threshold: larger keys can never be kept
            out.threshold = b.threshold if out.threshold is None else min(out.threshold, b.threshold)
            if out.threshold < (a.threshold if a.threshold is not None else 2**64):
                kept = [blk.subset(blk.keys <= np.uint64(out.threshold)) for blk in out.blocks]
                out.blocks, out.size = kept, sum(blk.keys.size for blk in kept)
        for blk in b.blocks:
            out.add(blk)
        return out
