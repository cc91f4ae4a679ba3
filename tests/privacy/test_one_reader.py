"""Issue 31: every path from bytes to release reads a record the same way (privacy review item 15).

The differential harness generates CSV files that a person or a broken export could write — fields up to 200,000
characters, non-ASCII anywhere (also in columns outside the schema), quotes at any position, CRLF / CR / LF, a BOM,
NUL, blank and ragged lines, one-class labels, sizes around the block boundaries — and asserts that the in-memory
reader, the streamed reader and Dask give the same records and the same C (to 1e-12), and that on a neighbouring
file (one record replaced, added or removed) every public output is the same. Hypothesis draws a new seed on every
run (no derandomisation); a failure prints the seed and the example (``print_blob``). The fast tier runs 40 examples,
the slow tier 500.
"""

from __future__ import annotations

import codecs
import warnings
from pathlib import Path

import dask
import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpcore import stats
from dpcore.data import load_csv, load_schema, preprocess
from dpcore.data import records as records_module
from dpcore.data.reading import read_table
from dpcore.data.records import line_separable
from dpcore.exceptions import DPCoreError, PrivacyLeakWarning
from dpcore.mechanisms import get_mechanism
from dpcore.stats._arrow import CsvSource
from dpcore.stats._dask import DaskCsvSource, _block_frame
from dpcore.stats._encode import SchemaEncoder

HEADER = ["x0", "t", "x1", "c", "y"]
CATEGORIES = ("red", "green", "blue")
#: Characters one record may hold anywhere: quotes, separators, NUL, BOM, non-ASCII, Unicode spaces and breaks.
NASTY = list('ab1 -.e,;\t"\'\x00\ufeffé漢\u00a0\u2028\u3000\x0b\x1c\x85NA?\r\n')
#: Declared encodings (UTF-16 streams and reads in memory; Dask refuses it up front, naming the fix).
ENCODINGS = ("utf-8", "utf-8", "utf-8", "utf-8-sig", "cp1252", "latin-1", "utf-16")
#: Block sizes in bytes for the streamed reader and for Dask's byte ranges (tiny ones cut every few lines).
BLOCKS = (1, 7, 64, 257, 4096, 2**20)


def _schema_map(delimiter: str, label: bool) -> dict:
    columns = [{"name": "x0", "role": "numeric", "lower": -10, "upper": 10},
               {"name": "x1", "role": "numeric", "lower": -10, "upper": 10},
               {"name": "c", "role": "categorical", "categories": list(CATEGORIES)}]
    if label:
        columns.append({"name": "y", "role": "label", "categories": ["a", "b"]})
    return {"dpcore_schema": 1, "label": "y" if label else None, "columns": columns,
            "format": {"kind": "csv", "encoding": "utf-8", "delimiter": delimiter, "decimal": ".",
                       "thousands": None, "header": True}}


nasty_text = st.one_of(
    st.text(alphabet=st.sampled_from(NASTY), max_size=12),
    st.tuples(st.text(alphabet=st.sampled_from(NASTY[:20]), min_size=1, max_size=3),
              st.integers(1, 200_000)).map(lambda p: p[0] * (p[1] // len(p[0]) + 1)),
)


def _quote(cell: str) -> str:
    return '"' + cell.replace('"', '""') + '"'


@st.composite
def records(draw, delimiter: str, label_mode: str):
    """One physical line: a well-formed record (maybe quoted, maybe with nasty free text), or anything at all."""
    if draw(st.integers(0, 4)) == 0:
        return draw(nasty_text)  # anything at all (a line break in it makes several physical lines)
    number = st.one_of(st.floats(-20, 20, allow_nan=False).map(lambda x: f"{x:.3f}"),
                       st.sampled_from(["", "NA", " 1 ", "1e400", "inf", "-0", "x"]))
    text = draw(nasty_text)
    cells = [draw(number), text, draw(number), draw(st.sampled_from([*CATEGORIES, "", "zz"])),
             draw(st.sampled_from(["a", "b"])) if label_mode == "two" else "a"]
    if draw(st.booleans()) or '"' in text or delimiter in text:
        cells[1] = _quote(text)
    if draw(st.integers(0, 5)) == 0:
        cells = [_quote(c) for c in cells]
    return delimiter.join(cells)


@st.composite
def files(draw):
    """(schema mapping, file bytes, neighbour bytes, streamed block size, Dask block size)."""
    delimiter = draw(st.sampled_from([",", ";", "\t"]))
    label = draw(st.booleans())
    label_mode = draw(st.sampled_from(["two", "one"]))
    lines = [draw(records(delimiter, label_mode)) for _ in range(draw(st.integers(2, 25)))]
    if label_mode == "one" and label:  # one class but for one record, at any position
        at = draw(st.integers(0, len(lines) - 1))
        lines[at] = delimiter.join(["1.0", "z", "2.0", "red", "b"])
    if draw(st.booleans()):  # blank lines anywhere
        for _ in range(draw(st.integers(1, 3))):
            lines.insert(draw(st.integers(0, len(lines))), draw(st.sampled_from(["", "  ", "\t", "\u3000"])))
    # one plain record that no neighbour touches: a file with no record at all is refused (the one decision on
    # n left, at n = 0: an empty table has nothing to release on; docs/privacy.md)
    lines.insert(0, delimiter.join(["0.5", "keep", "0.5", "red", "a"]))
    neighbour = list(lines)
    op = draw(st.sampled_from(["replace", "add", "remove"]))
    where = draw(st.integers(1, len(lines) - 1))
    bad = draw(records(delimiter, "two"))
    if op == "replace":
        neighbour[where] = bad
    elif op == "add":
        neighbour.insert(where, bad)
    else:
        del neighbour[where]
    eols = st.sampled_from(["\n", "\r\n", "\r"])
    mixed = draw(st.booleans())
    eol = draw(eols)

    encoding = draw(st.sampled_from(ENCODINGS))
    garbage = draw(st.sampled_from([b"", b"\xff", b"\xe2\x82", b"\xc3", b"\x80\x80"]))

    def render(body: list[str]) -> bytes:
        out = [delimiter.join(HEADER), *body]
        text = "".join(line + (draw(eols) if mixed else eol) for line in out[:-1]) + out[-1]
        if draw(st.booleans()):
            text += eol
        if encoding.startswith("utf-8"):
            raw = text.encode("utf-8", errors="surrogatepass")
            if garbage and len(raw) > len(out[0]) + 1:  # bytes that are not UTF-8, inside some record
                at = draw(st.integers(len(out[0]) + 1, len(raw)))
                raw = raw[:at] + garbage + raw[at:]
            return (codecs.BOM_UTF8 + raw) if bom else raw
        return text.encode(encoding, errors="replace")

    bom = draw(st.booleans())
    schema_map = _schema_map(delimiter, label)
    schema_map["format"]["encoding"] = encoding
    return (schema_map, render(lines), render(neighbour),
            draw(st.sampled_from(BLOCKS)), draw(st.sampled_from(BLOCKS)))


# ---------------------------------------------------------------------------------------------------------------
# the three readers
# ---------------------------------------------------------------------------------------------------------------

def _cells(frame: pd.DataFrame, columns: list[str]) -> list[list]:
    return [[None if pd.isna(v) else str(v) for v in frame[c].tolist()] for c in columns]


def read_three_ways(schema_map: dict, data: bytes, folder: Path, stream_block: int, dask_block: int) -> dict:
    """The records of the schema's columns read in memory, streamed and on Dask (each must be equal)."""
    schema = load_schema(schema_map)
    path = folder / "data.csv"
    path.write_bytes(data)
    encoder = SchemaEncoder(schema)
    columns = encoder.columns
    table = read_table(data, format=schema.file_format, max_rows=10**6)
    memory = _cells(table.frame, columns)
    source = CsvSource(path, encoder, block_size=stream_block)
    frames = list(source.records())
    streamed = _cells(pd.concat(frames, ignore_index=True), columns) if frames else [[] for _ in columns]
    assert memory == streamed, "the streamed reader reads a record differently from the in-memory one"
    if not line_separable(schema.file_format.encoding):
        with pytest.raises(DPCoreError, match="UTF-8"):
            DaskCsvSource([str(path)], encoder, source.header, block_bytes=dask_block)
        return {"records": memory, "n": len(memory[0])}
    dsource = DaskCsvSource([str(path)], encoder, source.header, block_bytes=dask_block)
    parts = [_block_frame(t, *dsource._args())[0] for t in dsource.tasks]
    parts = [p for p in parts if len(p)]
    distributed = _cells(pd.concat(parts, ignore_index=True), columns) if parts else [[] for _ in columns]
    assert memory == distributed, "the Dask reader reads a record differently from the in-memory one"
    return {"records": memory, "n": len(memory[0])}


def _ledger(entries) -> list[tuple]:
    return [(e.step, e.note, e.private, e.epsilon, e.delta) for e in entries]


def public_outputs(schema_map: dict, data: bytes, folder: Path, stream_block: int, dask_block: int) -> dict:
    """Every public output of bytes → schema → preprocess → statistics (in memory, streamed, Dask) → release, or the
    kind of refusal; the three statistics must agree on C."""
    schema = load_schema(schema_map)
    path = folder / "data.csv"
    path.write_bytes(data)
    with warnings.catch_warnings(), dask.config.set(scheduler="synchronous"):
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        try:
            ds = load_csv(data, schema=schema)
            prepared = preprocess(ds)
            release = get_mechanism("analyze_gauss").release(prepared, 1, 1.0, 1e-5, random_state=0)
            streamed = stats.from_csv(path, schema, seed=0, block_size=stream_block)
            distributed = stats.from_dask_csv([path], schema, seed=0, block_bytes=dask_block) \
                if line_separable(schema.file_format.encoding) else streamed
        except DPCoreError as exc:
            return {"ok": False, "refusal": type(exc).__name__}
    np.testing.assert_allclose(streamed.C, prepared.C, atol=1e-12, rtol=0)
    np.testing.assert_allclose(distributed.C, prepared.C, atol=1e-12, rtol=0)
    assert streamed.n == distributed.n == prepared.n
    return {"ok": True, "d": prepared.d, "columns": tuple(ds.feature_names), "ledger": _ledger(release.ledger),
            "preprocessing": _ledger(release.preprocessing), "stream_ledger": _ledger(streamed.ledger),
            "dask_ledger": _ledger(distributed.ledger), "status": release.status, "guarantee": release.guarantee}


def check_file_pair(example, folder: Path) -> None:
    schema_map, data, neighbour, stream_block, dask_block = example
    dask_block = max(dask_block, len(data) // 12 + 1)  # at most a dozen Dask tasks (each opens the file)
    read_three_ways(schema_map, data, folder, stream_block, dask_block)
    read_three_ways(schema_map, neighbour, folder, stream_block, dask_block)
    a = public_outputs(schema_map, data, folder, stream_block, dask_block)
    b = public_outputs(schema_map, neighbour, folder, stream_block, dask_block)
    assert a == b
    assert a["ok"], a  # a file under a confirmed public schema is never refused


_SETTINGS = dict(deadline=None, print_blob=True,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                        HealthCheck.function_scoped_fixture])


@settings(max_examples=40, **_SETTINGS)
@given(example=files())
def test_every_reader_reads_every_record_alike(tmp_path_factory, example):
    check_file_pair(example, tmp_path_factory.mktemp("one-reader"))


@pytest.mark.slow
@pytest.mark.timeout(900)
@settings(max_examples=500, **_SETTINGS)
@given(example=files())
def test_every_reader_reads_every_record_alike_500_examples(tmp_path_factory, example):
    check_file_pair(example, tmp_path_factory.mktemp("one-reader"))


# ---------------------------------------------------------------------------------------------------------------
# the harness catches a reader that reads one record differently
# ---------------------------------------------------------------------------------------------------------------

def test_a_mutant_reader_that_reads_one_record_differently_is_caught(tmp_path, monkeypatch):
    """A streamed reader that drops a long field's record to missing cells (what the csv module's field-size limit
    did on the in-memory path at 563c1b2) must fail the harness."""
    schema_map = _schema_map(",", False)
    long_line = "1.0," + "a" * 200_000 + ",2.0,red,a"
    data = ("\n".join([",".join(HEADER), "0.5,x,0.5,blue,a", long_line, "3.0,é,1.0,green,b"]) + "\n").encode()
    check_file_pair((schema_map, data, data, 2**20, 2**20), tmp_path)  # the real readers agree

    real = records_module.lines_records

    def mutant(lines, **kw):
        return real([line if len(line) < 100_000 else "" for line in lines], **kw)

    import dpcore.stats._arrow as arrow

    def mutant_block(data, **kw):
        return mutant(records_module.split_lines(data.decode("utf-8")), **kw)

    monkeypatch.setattr(arrow, "block_records", mutant_block)
    with pytest.raises(AssertionError, match="streamed reader"):
        read_three_ways(schema_map, data, tmp_path, 2**20, 2**20)


def test_a_mutant_dask_reader_that_drops_a_range_boundary_line_is_caught(tmp_path, monkeypatch):
    """A Dask reader whose ranges lose the first line they own (an off-by-one at a range boundary in owned_lines)
    must fail the harness."""
    import dpcore.stats._dask as dask_module

    schema_map = _schema_map(",", False)
    lines = [",".join(HEADER)] + [f"{i}.0,t,{i}.5,red,a" for i in range(40)]
    data = ("\n".join(lines) + "\n").encode()
    real = dask_module.owned_lines

    def mutant(path, start, end, first):
        data = real(path, start, end, first)
        return data[data.find(b"\n") + 1:] if start > first else data



    monkeypatch.setattr(dask_module, "owned_lines", mutant)
    with pytest.raises(AssertionError, match="Dask reader"):
        read_three_ways(schema_map, data, tmp_path, 2**20, 50)


# ---------------------------------------------------------------------------------------------------------------
# issue 31 items 1, 3, 4 reproduced (each failed at 563c1b2)
# ---------------------------------------------------------------------------------------------------------------

def _public_csv(folder: Path, lines: list[str], name: str = "d.csv") -> tuple[Path, dict]:
    path = folder / name
    path.write_bytes(("\n".join(lines) + "\n").encode("utf-8"))
    return path, _schema_map(",", False)


def test_item4_one_records_characters_do_not_change_how_another_record_is_read(tmp_path):
    """At 563c1b2 the streamed reader parsed an all-ASCII block with Arrow and a block holding any non-ASCII
    character line by line with the csv module, whose 131,072-character field limit read a long free-text record as
    missing cells: one "é" in another record changed C. Now both readers, on both files, agree."""
    rows = [",".join(HEADER)] + [f"{i % 7 - 3}.5,note,{i % 5 - 2}.25,red,a" for i in range(40)]
    rows += [f"9.0,{'x' * 150_000},9.0,blue,b"] * 3
    plain, schema_map = _public_csv(tmp_path, rows, "plain.csv")
    accent, _ = _public_csv(tmp_path, [*rows[:5], "1.0,café,1.0,green,a", *rows[6:]], "accent.csv")
    schema = load_schema(schema_map)
    for path in (plain, accent):
        memory = preprocess(load_csv(path.read_bytes(), schema=schema))
        streamed = stats.from_csv(path, schema, seed=0)
        np.testing.assert_allclose(streamed.C, memory.C, atol=1e-12, rtol=0)
        assert memory.n == 43
    # the long records are read with their numbers (9.0 clamps to the range), not as missing cells
    table = read_table(plain.read_bytes(), format=schema.file_format)
    assert table.frame["x0"].tolist()[-3:] == ["9.0"] * 3


def test_item1_dask_reads_a_stray_quote_as_one_record(tmp_path):
    """At 563c1b2 `sweep --dask` parsed with pandas' RFC-4180 reader: a '"' at the start of one record's free-text
    cell opened a field that ran over line breaks to another record's '"', merging the records between (n = 200 vs
    400). Now Dask reads line-aligned blocks with the one record parser: n and C are the in-memory ones."""
    rows = [",".join(HEADER)] + [f"{i % 9 - 4}.0,t{i},{i % 4}.0,red,a" for i in range(200)]
    rows[10] = '1.0,"opens a quote,2.0,red,a'
    rows[150] = '1.0,closes" it,2.0,red,a'
    path, schema_map = _public_csv(tmp_path, rows)
    schema = load_schema(schema_map)
    memory = preprocess(load_csv(path.read_bytes(), schema=schema))
    with dask.config.set(scheduler="synchronous"):
        for block in (64, 1000, 2**20):
            distributed = stats.from_dask_csv([path], schema, seed=0, block_bytes=block)
            assert distributed.n == memory.n == 200
            np.testing.assert_allclose(distributed.C, memory.C, atol=1e-12, rtol=0)


def test_item1_the_cli_dask_path_uses_no_pandas_csv_reader():
    source = (Path(__file__).resolve().parents[2] / "dpcore" / "cli" / "dask_cluster.py").read_text()
    assert "read_csv" not in source


def test_dask_refuses_an_encoding_it_cannot_cut_at_line_breaks(tmp_path):
    path = tmp_path / "u16.csv"
    path.write_bytes("x0,t,x1,c,y\n1,a,2,red,a\n".encode("utf-16"))
    schema_map = _schema_map(",", False)
    schema_map["format"]["encoding"] = "utf-16"
    schema = load_schema(schema_map)
    with pytest.raises(DPCoreError, match="UTF-8"):
        stats.from_dask_csv([path], schema, seed=0)
    # in memory and streamed, UTF-16 reads as declared
    memory = preprocess(load_csv(path.read_bytes(), schema=schema))
    np.testing.assert_allclose(stats.from_csv(path, schema, seed=0).C, memory.C, atol=1e-12, rtol=0)


@pytest.mark.parametrize("encoding", ["utf-8", "cp1252", "utf-16"])
def test_every_declared_encoding_streams_as_it_reads_in_memory(tmp_path, encoding):
    text = "x0,t,x1,c,y\r\n" + "".join(f"{i}.5,{'é' * (i % 3)}\u00a0,{-i}.25,green,a\r\n" for i in range(-5, 6))
    path = tmp_path / "enc.csv"
    path.write_bytes(text.encode(encoding))
    schema_map = _schema_map(",", False)
    schema_map["format"]["encoding"] = encoding
    schema = load_schema(schema_map)
    memory = preprocess(load_csv(path.read_bytes(), schema=schema))
    for block in (1, 5, 2**20):
        np.testing.assert_allclose(stats.from_csv(path, schema, seed=0, block_size=block).C, memory.C,
                                   atol=1e-12, rtol=0)
