"""Hostile files cost what they weigh (issue 32, item 11): each small file that would inflate (a YAML alias bomb, a
zip-bomb workbook, a Parquet footer of 60 M rows, a CSV header of 300,000 fields) is refused by a cheap check before
the dear work — through the loaders the Data page calls (``read_table`` on the upload's bytes, ``load_schema`` on a
schema file's bytes), the workspace loader and the CLI — with a message that names the limit and the fix and never
formats the value whole.

Resources are measured with tracemalloc (Python allocations, numpy's included); time is bounded by the generous
timeout marker only (no wall-clock assert). Each file is built here, small on disk.
"""

from __future__ import annotations

import io
import tracemalloc
import zipfile
from contextlib import contextmanager

import pytest

from dpcore.cli import main
from dpcore.data import load_schema, read_table
from dpcore.data.limits import MAX_COLUMNS, MAX_INFLATED_BYTES, YamlTooLarge, shown
from dpcore.data.schema import SchemaError, load_yaml
from dpcore.exceptions import DataError

pytestmark = pytest.mark.timeout(60)

#: Peak Python allocation a refusal may take (the hostile inputs below take 1–3 GB to read).
PEAK = 40 * 2**20


@contextmanager
def peak_memory(limit: int = PEAK):
    tracemalloc.start()
    try:
        yield
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < limit, f"peak allocation {peak / 2**20:.0f} MiB"


# ==================================================================================================
# YAML: anchors nested 8 deep in a `lower:` field (≈ 350 bytes, 10^8 values when expanded)
# ==================================================================================================

def bomb_value(levels: int = 8) -> str:
    """A YAML flow list of anchors nested ``levels`` deep, each ten aliases of the one before: 10**levels values."""
    parts = ["&a [1,1,1,1,1,1,1,1,1,1]"]
    for i in range(1, levels):
        prev, name = chr(ord("a") + i - 1), chr(ord("a") + i)
        parts.append(f"&{name} [" + ",".join([f"*{prev}"] * 10) + "]")
    return f"[{', '.join(parts)}]"


def alias_bomb(levels: int = 8) -> str:
    return f"dpcore_schema: 1\ncolumns:\n- name: x\n  role: numeric\n  upper: 1\n  lower: {bomb_value(levels)}\n"


def test_an_alias_bomb_schema_is_refused_before_use():
    text = alias_bomb()
    assert len(text) < 500
    with peak_memory(), pytest.raises(SchemaError) as err:
        load_schema(text.encode())  # the Data page's "Load a schema" reads the file's bytes so
    message = str(err.value)
    assert "expands to more than 1,000,000 values" in message and "alias" in message
    assert len(message) < 400


def test_the_cli_refuses_an_alias_bomb_schema(tmp_path, capsys):
    path = tmp_path / "bomb.yaml"
    path.write_text(alias_bomb())
    with peak_memory():
        code = main(["schema", "check", "--schema", str(path)])
    err = capsys.readouterr().err
    assert code != 0 and "expands to more than" in err and len(err) < 600


def test_the_workspace_loader_refuses_an_alias_bomb():
    from pages.ui import workspace

    text = f"{workspace.FORMAT_KEY}: {workspace.VERSION}\nsettings:\n  dp_epsilon: {bomb_value()}\n"
    with peak_memory(), pytest.raises(workspace.WorkspaceError, match="expands to more than"):
        workspace.parse(text)


def test_a_value_below_the_node_limit_is_never_formatted_whole():
    text = alias_bomb(levels=5)  # 111,111 values as used: loads, but is no number
    with peak_memory(), pytest.raises(SchemaError) as err:
        load_schema(text)
    message = str(err.value)
    assert "field 'lower': expected a number" in message and len(message) < 300  # the old message: 300,000 chars


def test_recursive_and_deep_yaml_are_refused():
    with pytest.raises(YamlTooLarge, match="recursive"):
        load_yaml("a: &a [1, *a]")
    with pytest.raises(YamlTooLarge, match="levels deep"):
        load_yaml("[" * 5000 + "]" * 5000)
    with pytest.raises(SchemaError, match="nests"):
        load_schema("dpcore_schema: 1\ncolumns: " + "[" * 5000 + "]" * 5000)


def test_ordinary_yaml_with_aliases_still_loads():
    assert load_yaml("a: &x [1, 2]\nb: *x") == {"a": [1, 2], "b": [1, 2]}
    assert load_yaml("c: [yes, no]") == {"c": ["yes", "no"]}  # a schema's reading: no implicit booleans
    assert load_yaml("c: [yes, no]", booleans=True) == {"c": [True, False]}  # the workspace's


def test_shown_is_bounded_whatever_the_value():
    deep: list = [1] * 10
    for _ in range(7):
        deep = [deep] * 10  # 10^8 values when expanded
    with peak_memory(2**20):
        text = shown(deep)
    assert len(text) <= 70 and len(shown("x" * 10_000)) <= 70


# ==================================================================================================
# .xlsx: a 1 MB workbook whose sheet inflates to ~300 MB of XML
# ==================================================================================================

_CT = (b'<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/'
       b'content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.'
       b'relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/'
       b'workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
       b'<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-'
       b'officedocument.spreadsheetml.worksheet+xml"/></Types>')
_RELS = (b'<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/'
         b'2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
         b'relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>')
_WB = (b'<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/'
       b'2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet '
       b'name="S" sheetId="1" r:id="rId1"/></sheets></workbook>')
_WB_RELS = (b'<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/'
            b'package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/'
            b'officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>')


def workbook(rows_of_40k: int) -> bytes:
    """An .xlsx with one sheet of ``rows_of_40k`` × 40,000 rows of one cell (26 bytes of XML each)."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        for name, data in (("[Content_Types].xml", _CT), ("_rels/.rels", _RELS), ("xl/workbook.xml", _WB),
                           ("xl/_rels/workbook.xml.rels", _WB_RELS)):
            zf.writestr(name, data)
        with zf.open("xl/worksheets/sheet1.xml", "w", force_zip64=True) as fh:
            fh.write(b'<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/'
                     b'spreadsheetml/2006/main"><sheetData><row><c t="inlineStr"><is><t>x</t></is></c></row>')
            chunk = b"<row><c><v>1</v></c></row>" * 40_000
            for _ in range(rows_of_40k):
                fh.write(chunk)
            fh.write(b"</sheetData></worksheet>")
    return out.getvalue()


@pytest.fixture(scope="module")
def xlsx_bomb() -> bytes:
    raw = workbook(300)  # 312 MB of XML
    assert len(raw) < 2 * 2**20
    return raw


def test_a_zip_bomb_workbook_is_refused_from_its_zip_directory(xlsx_bomb):
    with peak_memory(), pytest.raises(DataError) as err:
        read_table(xlsx_bomb)  # the Data page's reader of an upload
    message = str(err.value)
    assert "inflates to more XML than" in message and f"{MAX_INFLATED_BYTES / 2**20:,.0f} MB" in message
    assert "CSV" in message and "312" not in message  # no size read off the records


def test_the_cli_refuses_a_zip_bomb_workbook(xlsx_bomb, tmp_path, capsys):
    path = tmp_path / "bomb.xlsx"
    path.write_bytes(xlsx_bomb)
    with peak_memory():
        code = main(["schema", "infer", "--csv", str(path)])
    assert code != 0 and "inflates to" in capsys.readouterr().err


def test_a_member_that_inflates_hundreds_of_times_is_refused():
    raw = workbook(60)  # 62 MB of XML, under the total limit, ~400× its compressed size
    with peak_memory(), pytest.raises(DataError, match="more than 100 times its compressed size"):
        read_table(raw)


def test_a_small_workbook_still_reads():
    table = read_table(workbook(1))
    assert table.n_rows == 40_000 and table.columns == ["x"]


# ==================================================================================================
# Parquet: 60 M rows in a file of ~0.1 MB (its footer says so)
# ==================================================================================================

@pytest.fixture(scope="module")
def parquet_bomb() -> bytes:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    buf = io.BytesIO()
    pq.write_table(pa.table({"x": pa.nulls(60_000_000, pa.int8())}), buf, compression="zstd")
    assert len(buf.getvalue()) < 2**20
    return buf.getvalue()


def test_a_parquet_footer_over_max_rows_is_refused_before_reading(parquet_bomb):
    with peak_memory(), pytest.raises(DataError) as err:
        read_table(parquet_bomb)
    message = str(err.value)
    assert "more than max_rows = 1,000,000" in message and "footer" in message
    assert "60,000,000" not in message and "60000000" not in message  # n is not shown (it may be private)


def test_the_cli_refuses_a_parquet_footer_over_max_rows(parquet_bomb, tmp_path, capsys):
    path = tmp_path / "bomb.parquet"
    path.write_bytes(parquet_bomb)
    with peak_memory():
        code = main(["schema", "infer", "--csv", str(path)])
    assert code != 0 and "max_rows" in capsys.readouterr().err


def test_a_declared_parquet_format_checks_the_footer_too(parquet_bomb):
    from dpcore.data import FileFormat

    with peak_memory(), pytest.raises(DataError, match="max_rows"):
        read_table(parquet_bomb, format=FileFormat(kind="parquet"))


# ==================================================================================================
# CSV: 300,000 columns × 3 rows (4 MB)
# ==================================================================================================

def wide_csv(columns: int, rows: int = 3) -> bytes:
    return (",".join(f"c{i}" for i in range(columns)) + "\n"
            + "".join(",".join(["1"] * columns) + "\n" for _ in range(rows))).encode()


@pytest.fixture(scope="module")
def csv_bomb() -> bytes:
    return wide_csv(300_000)


def test_a_csv_header_over_the_column_cap_is_refused_before_parsing(csv_bomb):
    with peak_memory(), pytest.raises(DataError) as err:
        read_table(csv_bomb)
    message = str(err.value)
    assert "300,000 fields" in message and f"{MAX_COLUMNS:,} columns" in message


def test_a_declared_csv_format_checks_the_header_width_too(csv_bomb):
    from dpcore.data import FileFormat

    with peak_memory(), pytest.raises(DataError, match="10,000 columns"):
        read_table(csv_bomb, format=FileFormat())


def test_the_cli_schema_infer_refuses_a_csv_over_the_column_cap(csv_bomb, tmp_path, capsys):
    path = tmp_path / "wide.csv"
    path.write_bytes(csv_bomb)
    with peak_memory():
        code = main(["schema", "infer", "--csv", str(path)])
    assert code != 0 and f"{MAX_COLUMNS:,} columns" in capsys.readouterr().err


def test_the_column_cap_is_inclusive_and_counts_utf16_and_sep_lines():
    assert read_table(wide_csv(MAX_COLUMNS, rows=2)).frame.shape[1] == MAX_COLUMNS
    with pytest.raises(DataError, match="10,001 fields"):
        read_table(wide_csv(MAX_COLUMNS + 1, rows=2))
    with pytest.raises(DataError, match="10,001 fields"):
        read_table(wide_csv(MAX_COLUMNS + 1, rows=2).decode().encode("utf-16"))
    with pytest.raises(DataError, match="10,001 fields"):
        read_table(b"sep=,\n" + wide_csv(MAX_COLUMNS + 1, rows=2))


def test_old_mac_line_ends_are_line_ends():
    """A file whose lines end in \\r alone: its header is the first line, not the whole file."""
    raw = b"a,b,c\r" + b"1,2,3\r" * 6000  # 12,000 commas in all, 3 columns
    assert read_table(raw).frame.shape[1] == 3


def test_a_codebook_alias_bomb_is_refused():
    from dpcore.data.schema import read_codebook

    text = f"- column: x\n  lower: {bomb_value()}\n  upper: 1\n"
    with peak_memory(), pytest.raises(SchemaError, match="codebook is refused: the document expands"):
        read_codebook(text, "book.yaml")


def test_a_declared_headerless_format_never_refuses_a_record_for_its_width():
    """Without a header row the first line is a record: its commas (here inside quotes) decide nothing (privacy
    review 13: no single record may make a run under a public schema fail)."""
    from dpcore.data import FileFormat

    raw = b'"' + b"," * (MAX_COLUMNS + 5) + b'",1\n"x",2\n'
    table = read_table(raw, format=FileFormat(header=False), column_names=["note", "n"])
    assert table.columns == ["note", "n"] and table.n_rows == 2
