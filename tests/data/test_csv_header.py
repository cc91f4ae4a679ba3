"""One header rule for every CSV reader (issue 23, item 6): the in-memory reader, the streamed reader and the Dask
path read a file's column names through dpcore.data.reading.header_names (files: dpcore.stats._arrow.csv_header)."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest

from dpcore.data.reading import FileFormat, header_names, read_table
from dpcore.exceptions import DataError
from dpcore.stats._arrow import csv_header, has_sep_line

ROOT = Path(__file__).resolve().parents[2]

CASES = {
    "plain": (b"a,b,c\n1,2,3\n4,5,6\n", FileFormat()),
    "quoted and padded names": (b' "a" , \'b\',`c`\n1,2,3\n4,5,6\n', FileFormat()),
    "sep line, semicolons": (b"sep=;\na;b;c\n1;2;3\n4;5;6\n", FileFormat(delimiter=";")),
    "blank lines first": (b"\n  \na,b,c\n1,2,3\n4,5,6\n", FileFormat()),
    "utf-8 BOM, CRLF": ("\ufeffä,b,c\r\n1,2,3\r\n4,5,6\r\n".encode(), FileFormat()),
    "latin-1": ("é,b,c\n1,2,3\n4,5,6\n".encode("latin-1"), FileFormat(encoding="latin-1")),
    "blank and unnamed names": (b"a,,Unnamed: 2\n1,2,3\n4,5,6\n", FileFormat()),
}


@pytest.mark.parametrize("case", CASES)
def test_the_streamed_header_is_the_in_memory_header(case, tmp_path):
    raw, fmt = CASES[case]
    path = tmp_path / "t.csv"
    path.write_bytes(raw)
    in_memory = list(read_table(path, format=fmt).frame.columns)
    assert csv_header(path, fmt) == in_memory
    assert csv_header(path, fmt, block_bytes=3) == in_memory  # the header split across blocks
    gz = tmp_path / "t.csv.gz"
    gz.write_bytes(gzip.compress(raw))
    assert csv_header(gz, fmt) == in_memory


def test_header_names_cleans_a_header_record():
    assert header_names([' "x" ', "", "Unnamed: 5", "y"]) == ["x", "column2", "column3", "y"]
    assert header_names(None) == []
    with pytest.raises(DataError, match="appears twice"):
        header_names(["a", "'a'"])


def test_without_a_header_row_the_schema_names_the_columns(tmp_path):
    path = tmp_path / "t.csv"
    path.write_bytes(b"1,2\n3,4\n")
    assert csv_header(path, FileFormat(header=False), ["u", " v "]) == ["u", "v"]


def test_an_empty_file_and_the_sep_line(tmp_path):
    empty, sep = tmp_path / "e.csv", tmp_path / "s.csv"
    empty.write_bytes(b"\n\n")
    sep.write_bytes(b"sep=;\na;b\n1;2\n")
    with pytest.raises(DataError, match="empty"):
        csv_header(empty, FileFormat())
    assert has_sep_line(sep, FileFormat(delimiter=";")) and not has_sep_line(empty, FileFormat())


def test_no_reader_cleans_header_fields_itself():
    """Header cells are stripped and cleaned in header_names only (no second copy of the rule)."""
    pattern = re.compile(r"_clean_header\(\[h\.strip\(\)")
    sources = sorted(ROOT.joinpath("dpcore").rglob("*.py"))
    hits = [p.relative_to(ROOT).as_posix() for p in sources if pattern.search(p.read_text(encoding="utf-8"))]
    assert hits == ["dpcore/data/reading.py"]
    cli = (ROOT / "dpcore" / "cli" / "data.py").read_text(encoding="utf-8")
    assert "csv.reader" not in cli and "_read_header" not in cli


def test_the_sep_line_and_codec_rules_are_written_once():
    """Excel's "sep=" line and the BOM-skipping codec are decided in the one record parser only."""
    sources = sorted(ROOT.joinpath("dpcore").rglob("*.py"))
    texts = {p.relative_to(ROOT).as_posix(): p.read_text(encoding="utf-8") for p in sources}
    assert [p for p, t in texts.items() if 'startswith("sep=")' in t] == ["dpcore/data/records.py"]
    sig = re.compile(r'"utf-8-sig" if (codecs\.lookup|is_utf8)')
    assert [p for p, t in texts.items() if sig.search(t)] == ["dpcore/data/records.py"]
