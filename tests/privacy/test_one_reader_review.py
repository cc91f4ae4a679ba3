"""Adversarial review of the one record parser (issue 31, privacy review item 15): byte strings on which the
in-memory reader, the streamed reader and Dask do not give the same records for the same declared format.

Each test states the reader rule of docs/privacy.md: for any file bytes and a declared format, the three readers give
identical records (cells of the schema's columns, in order), whatever the block sizes — or, where a reader cannot
honour the declared format, it refuses up front with a clear :class:`~dpcore.exceptions.DPCoreError` naming the fix
(as Dask refuses UTF-16). A traceback or different records are both failures.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import dask
import numpy as np
import pandas as pd
import pytest

from dpcore import stats
from dpcore.data import load_schema
from dpcore.data.reading import FileFormat, read_table
from dpcore.exceptions import DPCoreError
from dpcore.stats._arrow import CsvSource
from dpcore.stats._dask import DaskCsvSource, _block_frame
from dpcore.stats._encode import SchemaEncoder


def _schema_map(encoding: str = "utf-8", names: tuple[str, ...] = ("x0", "x1")) -> dict:
    return {"dpcore_schema": 1, "label": None,
            "columns": [{"name": n, "role": "numeric", "lower": -10, "upper": 10} for n in names],
            "format": {"kind": "csv", "encoding": encoding, "delimiter": ",", "decimal": ".", "thousands": None,
                       "header": True}}


def _cells(frame: pd.DataFrame, columns: list[str]) -> list[list]:
    return [[None if pd.isna(v) else str(v) for v in frame[c].tolist()] for c in columns]


def _memory(schema_map: dict, data: bytes) -> list[list]:
    schema = load_schema(schema_map)
    table = read_table(data, format=schema.file_format, max_rows=10**6)
    return _cells(table.frame, SchemaEncoder(schema).columns)


def _streamed(schema_map: dict, path: Path, block: int) -> list[list]:
    encoder = SchemaEncoder(load_schema(schema_map))
    frames = list(CsvSource(path, encoder, block_size=block).records())
    return (_cells(pd.concat(frames, ignore_index=True), encoder.columns) if frames
            else [[] for _ in encoder.columns])


def _dask(schema_map: dict, path: Path, block: int) -> list[list] | None:
    """Dask's records, or None when Dask refuses the declared format up front with a DPCoreError (an honest
    refusal naming the fix, as for UTF-16)."""
    schema = load_schema(schema_map)
    encoder = SchemaEncoder(schema)
    header = CsvSource(path, encoder).header
    try:
        source = DaskCsvSource([str(path)], encoder, header, block_bytes=block)
    except DPCoreError:
        return None
    parts = [_block_frame(task, *source._args())[0] for task in source.tasks]
    parts = [p for p in parts if len(p)]
    return (_cells(pd.concat(parts, ignore_index=True), encoder.columns) if parts
            else [[] for _ in encoder.columns])


def _assert_one_reading(schema_map: dict, data: bytes, tmp_path: Path, blocks=(1, 3, 2**20)) -> list[list]:
    path = tmp_path / "data.csv"
    path.write_bytes(data)
    memory = _memory(schema_map, data)
    for block in blocks:
        assert _streamed(schema_map, path, block) == memory, f"streamed, block_size={block}"
    for block in blocks:
        distributed = _dask(schema_map, path, block)
        assert distributed is None or distributed == memory, f"Dask, block_bytes={block}: {distributed} != {memory}"
    return memory


def test_utf8_sig_dask_strips_a_bom_only_at_the_files_start(tmp_path):
    """Declared encoding "utf-8-sig" (codecs name "utf-8-sig", not "utf-8"): memory and streamed decode the file
    with one incremental decoder (a BOM is skipped at the file's start only), but Dask's ``_to_utf8`` decodes every
    task's bytes with "utf-8-sig" (``declared_codec`` is the identity for it), so a record that begins with U+FEFF
    loses it when its line starts a Dask task: "\\ufeff3" (not a number) in memory, "3" on Dask.
    Fix: treat "utf-8-sig" as UTF-8 everywhere (normalise the declared name, or test ``name in ("utf-8",
    "utf-8-sig")``), stripping a BOM only where ``file_start``."""
    data = b"x0,x1\n1,2\n\xef\xbb\xbf3,4\n5,6\n"
    records = _assert_one_reading(_schema_map("utf-8-sig"), data, tmp_path)
    assert records == [["1", "\ufeff3", "5"], ["2", "4", "6"]]


def test_ebcdic_dask_cuts_lines_where_the_code_page_has_none(tmp_path):
    """EBCDIC code pages (cp037, cp500, cp1140, cp273, cp424, cp875, cp1026) pass ``line_separable`` but encode
    "\\n" as byte 0x25; byte 0x0A is the character U+008E. Memory and streamed decode first and cut the text, so
    they read 3 records; Dask's ``header_end`` and ``owned_lines`` search the raw bytes for 0x0A: here there is none
    outside one record, so the header "line" runs into that record and Dask reads other records (or none).
    Fix: Dask cuts only where the declared codec encodes "\\n" as b"\\n" and "\\r" as b"\\r" and no other
    character contains those bytes — an allow-list (UTF-8, ASCII, the ASCII-compatible single-byte code pages),
    refusing the rest up front as UTF-16 is refused."""
    data = "x0,x1\n1,2\n3,\x8e\n5,6\n".encode("cp037")
    _assert_one_reading(_schema_map("cp037"), data, tmp_path)


@pytest.mark.parametrize(("encoding", "data"), [
    # euc_kr: "\xa4\xd4" opens an 8-byte KS X 1001 composition; decoded as the end of the input (final) it absorbs
    # ",4\n" into one U+FFFD, so on Dask the line "3\xa4\xd4,4" has one field: a record of missing cells
    ("euc_kr", b"x0,x1\n1,2\n3\xa4\xd4,4\n5,6\n"),
    # gb18030: "\x81\x30" opens a 4-byte sequence; at the end of the input "\x81\x30\n" is one U+FFFD, so the cell
    # is "4\ufffd" on Dask and "4\ufffd0" in memory
    ("gb18030", b"x0,x1\n1,2\n3,4\x810\n5,6\n"),
])
def test_multibyte_code_pages_dask_decodes_each_task_as_the_files_end(tmp_path, encoding, data):
    """``line_separable`` claims that decoding line by line equals decoding the whole file for every code page but
    UTF-16/32; for the CJK decoders (euc_kr, gb18030, euc_jp, euc_jis_2004, euc_jisx0213) this fails at the *end of
    the input*: an incomplete multi-byte sequence there swallows the following newline (and more). Memory and
    streamed decode the file once (one incremental decoder, final only at the file's end); Dask decodes every task's
    bytes with ``bytes.decode`` — final at every task boundary — so a record that ends a task is read differently.
    Fix: refuse these codecs on Dask (an allow-list, see the EBCDIC test), or decode a task with an incremental
    decoder that is final only at the file's end (and check, per codec, that a line's text never depends on the
    next line's bytes)."""
    _assert_one_reading(_schema_map(encoding), data, tmp_path)


def test_gzip_csv_reads_on_dask_as_it_streams(tmp_path):
    """``dpcore.stats.from_csv`` streams a ``.gz`` file (decompressed), but ``from_dask_csv`` raises an uncaught
    ``OverflowError: byte string is too large`` on every compressed file: DaskCsvSource gives a compressed file one
    task ending at 2**63 - 1 and ``owned_lines`` calls ``fh.read(end - start)`` with that size. (Also: ``.xz`` and
    ``.zst`` are decompressed by Dask's fsspec but read as raw bytes by the streamed reader, whose ``_opener`` knows
    only .gz and .bz2; and the in-memory ``--csv`` reads the compressed bytes as text.) Fix: read to the end
    (``fh.read()`` in chunks) when ``end`` is unbounded; one list of compressions for every reader."""
    path = tmp_path / "data.csv.gz"
    path.write_bytes(gzip.compress(b"x0,x1\n1,2\n3,4\n-5,6\n"))
    schema = load_schema(_schema_map())
    streamed = stats.from_csv(path, schema, seed=0)
    with dask.config.set(scheduler="synchronous"):
        distributed = stats.from_dask_csv([path], schema, seed=0)
    assert distributed.n == streamed.n == 3
    np.testing.assert_allclose(distributed.C, streamed.C, atol=1e-12, rtol=0)


@pytest.mark.parametrize("encoding", ["rot13", "hex", "base64", "zlib", "quopri"])
def test_a_codec_that_is_not_a_text_encoding_is_refused_by_the_format(encoding):
    """FileFormat accepts any name ``codecs.lookup`` knows, including codecs that are not text encodings
    (str→str like rot13, bytes→bytes like hex/base64/zlib/quopri); every reader then fails with a traceback
    (TypeError in memory and streamed, AssertionError for errors="replace", LookupError on Dask). Fix: refuse
    ``not codecs.lookup(enc)._is_text_encoding`` in ``FileFormat.__post_init__`` with a message naming utf-8."""
    with pytest.raises(DPCoreError, match="encoding"):
        FileFormat(encoding=encoding)


def _available_bytes() -> int:
    import os

    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 0


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.skipif(_available_bytes() < 10 * 2**30, reason="needs ~5 GB of free memory (one 2 GiB record)")
def test_a_record_longer_than_2_gib_is_read_not_a_traceback():
    """One record of 2**31 characters makes every reader fail with a traceback (privacy review item 13: no single
    record may make a run fail): ``_arrow_records`` passes ``block_size=len(data) + 1`` to
    ``pyarrow.csv.ReadOptions``, an int32 — ``OverflowError: value too large to convert to int32_t``, not caught
    (only ArrowInvalid/ArrowNotImplementedError are) — and the line-by-line path would raise ArrowCapacityError in
    ``pa.array(..., type=pa.string())`` (32-bit offsets). The in-memory, streamed and Dask readers all call
    ``block_records``, so the neighbour without the record releases and this file crashes. Measured: 8.5 s, 4.3 GB
    peak. Fix: no fast path for a block of 2**31 - 1 bytes or more, and ``pa.large_string()`` cells (or chunked
    arrays) on the line-by-line path, so the record is read like any other."""
    from dpcore.data.records import block_records

    data = b"".join([b"1,", b"a" * 2**31, b"\n3,4\n"])
    arrays, n, bad = block_records(data, delimiter=",", width=2, take=[0], missing=frozenset([""]))
    del data
    assert (n, bad) == (2, 0)
    assert arrays[0].to_pylist() == ["1", "3"]


def test_add_remove_the_reservoir_note_does_not_depend_on_n(tmp_path):
    """Under add/remove n is private (privacy review item 17: no message may depend on n), but the streamed/Dask
    statistics flag ``sample="reservoir"`` only when n exceeds the reservoir size (``sample_is_complete``), and
    that flag picks the words the CLI prints ("the reservoir holds them all (as in memory)" vs "metrics on a
    reservoir sample of m rows") and the sweep's message column: one added record (n = 3 → 4 with a 3-row
    reservoir) flips them. Fix: under add/remove, word the note from the public reservoir size alone (e.g. "a
    reservoir sample of at most m rows"), whatever n is."""
    schema = load_schema(_schema_map())
    outputs = []
    for rows in (3, 4):
        path = tmp_path / f"r{rows}.csv"
        path.write_bytes(b"x0,x1\n" + b"1,2\n" * rows)
        data = stats.from_csv(path, schema, seed=0, reservoir_size=3, neighbouring="add_remove").to_prepared()
        outputs.append((data.sample, data.sample_note))
    assert outputs[0] == outputs[1]
